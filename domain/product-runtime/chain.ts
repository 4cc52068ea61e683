// The Product Runtime authorization chain. A partner product acts only when every link holds:
// credential → service principal → customer installation → product definition → organization →
// credential scope → organization workspace assignment → logical-vault grant.
// One query reads the whole chain; the links are then judged in order so the refusal names the
// first link that failed. Presentation inputs (host, brand, audience) are not inputs here at all.
//
// A credential and vault this process admitted before are resolved from its admission cache while
// the admission epoch stands still (decision 112, migration 0029, principals/admission-cache.ts):
// the statement then reads the epoch, whether the credential is still unexpired and a fusion's own
// work only, and the kept chain is judged link by link as a fresh one. An epoch that moved on, or an
// expired credential, sends the request through the whole statement, in a second round trip.
import { sql } from 'slonik';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import { AdmissionCache, admissionEpochColumn, lastUseAfterTouch } from '../principals/admission-cache.ts';
import type { KeptAdmission } from '../principals/admission-cache.ts';
import { touchDue } from '../identity/accounts.ts';
import { hashSecret, looksLikeSecret, secretPrefixes } from '../secrets.ts';
import type { ErrorCode } from '../errors.ts';
import { AppError } from '../errors.ts';
import { scopeSchema } from './entities.ts';
import type { Scope } from './entities.ts';

export const chainLinks = [
  'credential',
  'service_principal',
  'installation',
  'product_definition',
  'organization',
  'credential_scope',
  'workspace_assignment',
  'vault_grant',
] as const;
export type ChainLink = (typeof chainLinks)[number];

const linkErrorCode: Record<ChainLink, ErrorCode> = {
  credential: 'credential_invalid',
  service_principal: 'service_principal_inactive',
  installation: 'installation_inactive',
  product_definition: 'product_definition_inactive',
  organization: 'organization_inactive',
  credential_scope: 'scope_missing',
  workspace_assignment: 'workspace_not_assigned',
  vault_grant: 'vault_not_granted',
};

export type RuntimeContext = {
  credentialId: string;
  servicePrincipalId: string;
  installationId: string;
  productDefinitionId: string;
  organizationId: string;
  workspaceId: string;
  scopes: Scope[];
  /** The granted vault the operation named, with the grant it holds (its id names the grant in provenance). */
  vault: { vaultId: string; access: 'read' | 'write'; grantId: string } | null;
};

export type ChainResult<T = unknown> =
  | { ok: true; context: RuntimeContext; operationsLimit: number; fused: T }
  | { ok: false; link: ChainLink; code: ErrorCode; detail: string };

/** `apiOperationsPerMonth` when the organization's settings name none (the spec leaves the default to us). */
export const DEFAULT_API_OPERATIONS_PER_MONTH = 100_000;

const chainRowSchema = z.object({
  credentialId: z.uuid(),
  credentialLive: z.boolean(),
  credentialExpiresAt: isoTimestamp.nullable(),
  credentialLastUsedAt: isoTimestamp.nullable(),
  scopes: z.array(scopeSchema),
  servicePrincipalId: z.uuid(),
  principalStatus: z.string(),
  installationId: z.uuid(),
  installationStatus: z.string(),
  workspaceId: z.uuid(),
  productDefinitionId: z.uuid(),
  productStatus: z.string(),
  organizationId: z.uuid(),
  organizationStatus: z.string(),
  workspaceAssigned: z.boolean(),
  grantId: z.uuid().nullable(),
  grantAccess: z.enum(['read', 'write']).nullable(),
  admitted: z.boolean(),
  operationsLimit: z.number(),
  admissionEpoch: z.uuid(),
});
type ChainRow = z.infer<typeof chainRowSchema>;

/** The chain as resolved, without the statement's own judgement (`admitted`, made for one request's scope and access). */
type ResolvedChain = Omit<ChainRow, 'admitted' | 'admissionEpoch'>;

/** A service credential's kept admission (the admission cache's entry): its chain as resolved for one vault (or none). */
export type ChainAdmission = KeptAdmission & { row: ResolvedChain };

/** What the kept statement reads besides a fusion's columns. */
const keptChainRowSchema = z.object({ admissionEpoch: z.uuid(), credentialLive: z.boolean() });
type KeptChainRow = z.infer<typeof keptChainRowSchema>;

/**
 * Work fused into the chain's statement, as a mapping's work is into a token's admission
 * (principals/mapping-admission.ts): `ctes` follow the chain's (they read the judged row as
 * `judged j` and must read nothing unless `j.admitted`) and `columns` are selected beside it;
 * `keptColumns` are the same work beside a kept chain's statement, given the vault the request
 * names. The hot readNote costs one round trip either way.
 */
export type ChainFusion<T> = {
  /** Names the prepared statements: `name` (the whole chain) and `${name}_kept`. */
  name: string;
  /** chainFusionSchemas(the work's shape). */
  schemas: { whole: z.ZodType<ChainRow & T>; kept: z.ZodType<KeptChainRow & T> };
  ctes: FragmentSqlToken;
  columns: FragmentSqlToken;
  keptColumns: (vaultId: string | null) => FragmentSqlToken;
};

/** The row schemas of a chain fusion's two statements, each with the work's columns (`shape`). Build once, at module level. */
export function chainFusionSchemas<S extends z.ZodRawShape>(shape: S) {
  return { whole: chainRowSchema.extend(shape), kept: keptChainRowSchema.extend(shape) };
}

export type ChainRequest = {
  /** The raw secret presented by the product. */
  credential: string;
  /** The scope the operation needs; null for the operations that describe the credential itself. */
  scope: Scope | null;
  /** The logical vault the operation touches, if any, and the access it needs. */
  vault?: { vaultId: string; access: 'read' | 'write' } | undefined;
};

/**
 * The whole chain in one statement: the links' rows (`chain`), whether every one of them holds
 * (`admitted`, the same judgement checkProductRuntimeChain makes below, link by link, to name the
 * first that failed), and the credential's last use touched at most once a minute when admitted.
 */
function chainStatement<T>(request: ChainRequest, secretHash: string, fusion?: ChainFusion<T>) {
  const scope = request.scope;
  const vaultId = request.vault?.vaultId ?? null;
  const needsWrite = request.vault?.access === 'write';
  const chain = sql.fragment`
    SELECT c.id AS "credentialId",
           (c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())) AS "credentialLive",
           c.expires_at AS "credentialExpiresAt", c.last_used_at AS "credentialLastUsedAt",
           c.scopes,
           sp.id AS "servicePrincipalId", sp.status AS "principalStatus",
           i.id AS "installationId", i.status AS "installationStatus", i.workspace_id AS "workspaceId",
           pd.id AS "productDefinitionId", pd.status AS "productStatus",
           o.id AS "organizationId", o.status AS "organizationStatus",
           coalesce((o.settings #>> '{productRuntime,apiOperationsPerMonth}')::bigint, ${DEFAULT_API_OPERATIONS_PER_MONTH}) AS "operationsLimit",
           EXISTS (SELECT 1 FROM organization_workspaces ow
                    WHERE ow.organization_id = o.id AND ow.workspace_id = i.workspace_id AND ow.revoked_at IS NULL) AS "workspaceAssigned",
           g.id AS "grantId", g.access AS "grantAccess"
      FROM service_credentials c
      JOIN service_principals sp ON sp.id = c.service_principal_id
      JOIN product_installations i ON i.id = sp.installation_id
      JOIN product_definitions pd ON pd.id = i.product_definition_id
      JOIN organizations o ON o.id = i.organization_id
      LEFT JOIN LATERAL (
        SELECT g.id, g.access FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
         WHERE g.installation_id = i.id AND g.revoked_at IS NULL AND g.vault_id = ${vaultId}::uuid AND v.owner_workspace_id = i.workspace_id
      ) g ON true
     WHERE c.secret_hash = ${secretHash}`;
  const judged = sql.fragment`
    SELECT ch.*, (ch."credentialLive" AND ch."principalStatus" = 'active' AND ch."installationStatus" = 'active'
                  AND ch."productStatus" = 'active' AND ch."organizationStatus" = 'active'
                  AND (${scope}::text IS NULL OR ${scope}::text = ANY (ch.scopes)) AND ch."workspaceAssigned"
                  AND (${vaultId}::uuid IS NULL OR coalesce(ch."grantAccess" = 'write' OR (ch."grantAccess" = 'read' AND NOT ${needsWrite}::boolean), false))) AS admitted
      FROM chain ch`;
  // Prepared: the statement's text is the same for every request (its inputs are parameters).
  return sql.prepared(fusion?.name ?? 'runtime_chain', (fusion?.schemas.whole ?? chainRowSchema) as z.ZodType<ChainRow & T>)`
    WITH chain AS (${chain}),
         judged AS (${judged}),
         touched AS (
           UPDATE service_credentials SET last_used_at = now()
            WHERE id = (SELECT j."credentialId" FROM judged j WHERE j.admitted)
              AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
           RETURNING id)
           ${fusion ? sql.fragment`, ${fusion.ctes}` : sql.fragment``}
    SELECT ${fusion ? sql.fragment`${fusion.columns},` : sql.fragment``} j."credentialId", j."credentialLive", j."credentialExpiresAt", j."credentialLastUsedAt",
           j.scopes, j."servicePrincipalId", j."principalStatus", j."installationId",
           j."installationStatus", j."workspaceId", j."productDefinitionId", j."productStatus", j."organizationId", j."organizationStatus",
           j."workspaceAssigned", j."grantId", j."grantAccess", j.admitted, j."operationsLimit"::integer AS "operationsLimit",
           ${admissionEpochColumn} AS "admissionEpoch"
      FROM judged j`;
}

/**
 * The kept chain's statement: the epoch, whether the credential is still unexpired (its revocation
 * moves the epoch), and a fusion's columns. Judged and touched by the caller.
 */
function keptStatement<T>(row: ResolvedChain, request: ChainRequest, fusion?: ChainFusion<T>) {
  const expiresAt = row.credentialExpiresAt;
  const columns = sql.fragment`${admissionEpochColumn} AS "admissionEpoch",
           (${expiresAt}::timestamptz IS NULL OR ${expiresAt}::timestamptz > now()) AS "credentialLive"`;
  if (fusion) return sql.prepared(`${fusion.name}_kept`, fusion.schemas.kept)`SELECT ${columns}, ${fusion.keptColumns(request.vault?.vaultId ?? null)}`;
  // Without a fusion there are no further columns: T is then the empty row.
  return sql.prepared('runtime_chain_kept', keptChainRowSchema as unknown as z.ZodType<KeptChainRow & T>)`SELECT ${columns}`;
}

/** The credential's last use, at most once a minute (the chain's statement does it in its `touched` step). */
async function touchCredential(db: CommonQueryMethods, row: ResolvedChain): Promise<void> {
  if (!touchDue(row.credentialLastUsedAt)) return;
  await db.query(sql.type(emptyRow)`
    UPDATE service_credentials SET last_used_at = now()
     WHERE id = ${row.credentialId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`);
}

/**
 * The chain for a presented credential, judged link by link. With `admissions` (the process's
 * cache), a chain admitted before for the same credential and vault is taken from it while the
 * admission epoch stands still; a fresh one that is admitted is kept.
 */
export async function checkProductRuntimeChain<T = unknown>(
  db: CommonQueryMethods,
  request: ChainRequest,
  fusion?: ChainFusion<T>,
  admissions?: AdmissionCache<ChainAdmission>,
): Promise<ChainResult<T>> {
  if (!looksLikeSecret(request.credential, secretPrefixes.serviceCredential)) return refuseAt('credential', 'Unknown credential.');
  const secretHash = hashSecret(request.credential);
  const key = admissions ? AdmissionCache.key(secretHash, request.vault?.vaultId ?? '') : '';
  const entry = admissions?.get(key);
  if (admissions && entry) {
    const kept = await db.one(keptStatement(entry.row, request, fusion));
    if (kept.admissionEpoch === entry.epoch && kept.credentialLive) {
      admissions.hit();
      const result = judgeChain<T>(entry.row, request, fusion ? kept : undefined);
      if (result.ok) {
        await touchCredential(db, entry.row);
        entry.row = { ...entry.row, credentialLastUsedAt: lastUseAfterTouch(entry.row.credentialLastUsedAt) };
      }
      return result;
    }
    admissions.stale(key);
  }

  const row = await db.maybeOne(chainStatement(request, secretHash, fusion));
  if (!row) return refuseAt('credential', 'The credential is unknown, expired or revoked.');
  const result = judgeChain<T>(row, request, fusion ? row : undefined);
  // The statement judged the same links; if it disagrees, the two judgements drifted apart.
  if (result.ok !== row.admitted) throw new Error('chain statement and judgement disagree');
  if (admissions && result.ok) {
    // The statement touched the credential when it was due (its `touched` step).
    const { admitted: _admitted, admissionEpoch, ...resolved } = row;
    admissions.set(key, { epoch: admissionEpoch, row: { ...resolved, credentialLastUsedAt: lastUseAfterTouch(resolved.credentialLastUsedAt) } });
  }
  return result;
}

function refuseAt<T>(link: ChainLink, detail: string): ChainResult<T> {
  return { ok: false, link, code: linkErrorCode[link], detail };
}

/** Every link of a resolved chain, in order, for the request's scope and vault; `fused` rides on an admitted result. */
function judgeChain<T>(row: ResolvedChain, request: ChainRequest, fused: unknown): ChainResult<T> {
  const refuse = refuseAt<T>;
  if (!row.credentialLive) return refuse('credential', 'The credential is unknown, expired or revoked.');
  if (row.principalStatus !== 'active') return refuse('service_principal', `The service principal is ${row.principalStatus}.`);
  if (row.installationStatus !== 'active') return refuse('installation', `The installation is ${row.installationStatus}.`);
  if (row.productStatus !== 'active') return refuse('product_definition', `The product definition is ${row.productStatus}.`);
  if (row.organizationStatus !== 'active') return refuse('organization', `The organization is ${row.organizationStatus}.`);
  if (request.scope !== null && !row.scopes.includes(request.scope)) return refuse('credential_scope', `The credential lacks scope ${request.scope}.`);
  if (!row.workspaceAssigned) return refuse('workspace_assignment', "The installation's workspace is not assigned to its organization.");
  if (request.vault) {
    const granted = row.grantAccess === 'write' || (row.grantAccess === 'read' && request.vault.access === 'read');
    if (!granted) return refuse('vault_grant', `The installation holds no ${request.vault.access} grant on this vault.`);
  }

  return {
    ok: true,
    operationsLimit: row.operationsLimit,
    // The fused columns ride on the statement's row (the chain's, or the kept statement's); without a fusion there are none.
    fused: fused as T,
    context: {
      credentialId: row.credentialId,
      servicePrincipalId: row.servicePrincipalId,
      installationId: row.installationId,
      productDefinitionId: row.productDefinitionId,
      organizationId: row.organizationId,
      workspaceId: row.workspaceId,
      scopes: row.scopes,
      vault: request.vault && row.grantAccess && row.grantId ? { vaultId: request.vault.vaultId, access: row.grantAccess, grantId: row.grantId } : null,
    },
  };
}

/** The same check for callers that want an exception: the error code names the failed link. */
export async function authorizeProductRuntime(db: CommonQueryMethods, request: ChainRequest): Promise<RuntimeContext & { operationsLimit: number }> {
  const result = await checkProductRuntimeChain(db, request);
  if (!result.ok) throw new AppError(result.code, result.detail, { extensions: { failedLink: result.link } });
  return { ...result.context, operationsLimit: result.operationsLimit };
}
