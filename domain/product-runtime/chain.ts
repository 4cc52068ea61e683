// The Product Runtime authorization chain. A partner product acts only when every link holds:
// credential → service principal → customer installation → product definition → organization →
// credential scope → organization workspace assignment → logical-vault grant.
// One query reads the whole chain; the links are then judged in order so the refusal names the
// first link that failed. Presentation inputs (host, brand, audience) are not inputs here at all.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
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
  vault: { vaultId: string; access: 'read' | 'write' } | null;
};

export type ChainResult = { ok: true; context: RuntimeContext } | { ok: false; link: ChainLink; code: ErrorCode; detail: string };

const chainRowSchema = z.object({
  credentialId: z.uuid(),
  credentialLive: z.boolean(),
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
  grantAccess: z.enum(['read', 'write']).nullable(),
});

export type ChainRequest = {
  /** The raw secret presented by the product. */
  credential: string;
  /** The scope the operation needs. */
  scope: Scope;
  /** The logical vault the operation touches, if any, and the access it needs. */
  vault?: { vaultId: string; access: 'read' | 'write' };
};

export async function checkProductRuntimeChain(db: CommonQueryMethods, request: ChainRequest): Promise<ChainResult> {
  const refuse = (link: ChainLink, detail: string): ChainResult => ({ ok: false, link, code: linkErrorCode[link], detail });
  if (!looksLikeSecret(request.credential, secretPrefixes.serviceCredential)) return refuse('credential', 'Unknown credential.');

  const row = await db.maybeOne(sql.type(chainRowSchema)`
    SELECT c.id AS "credentialId",
           (c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())) AS "credentialLive",
           c.scopes,
           sp.id AS "servicePrincipalId", sp.status AS "principalStatus",
           i.id AS "installationId", i.status AS "installationStatus", i.workspace_id AS "workspaceId",
           pd.id AS "productDefinitionId", pd.status AS "productStatus",
           o.id AS "organizationId", o.status AS "organizationStatus",
           EXISTS (SELECT 1 FROM organization_workspaces ow
                    WHERE ow.organization_id = o.id AND ow.workspace_id = i.workspace_id AND ow.revoked_at IS NULL) AS "workspaceAssigned",
           (SELECT g.access FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
             WHERE g.installation_id = i.id AND g.revoked_at IS NULL
               AND g.vault_id = ${request.vault?.vaultId ?? null}::uuid
               AND v.owner_workspace_id = i.workspace_id) AS "grantAccess"
      FROM service_credentials c
      JOIN service_principals sp ON sp.id = c.service_principal_id
      JOIN product_installations i ON i.id = sp.installation_id
      JOIN product_definitions pd ON pd.id = i.product_definition_id
      JOIN organizations o ON o.id = i.organization_id
     WHERE c.secret_hash = ${hashSecret(request.credential)}`);

  if (!row || !row.credentialLive) return refuse('credential', 'The credential is unknown, expired or revoked.');
  if (row.principalStatus !== 'active') return refuse('service_principal', `The service principal is ${row.principalStatus}.`);
  if (row.installationStatus !== 'active') return refuse('installation', `The installation is ${row.installationStatus}.`);
  if (row.productStatus !== 'active') return refuse('product_definition', `The product definition is ${row.productStatus}.`);
  if (row.organizationStatus !== 'active') return refuse('organization', `The organization is ${row.organizationStatus}.`);
  if (!row.scopes.includes(request.scope)) return refuse('credential_scope', `The credential lacks scope ${request.scope}.`);
  if (!row.workspaceAssigned) return refuse('workspace_assignment', "The installation's workspace is not assigned to its organization.");
  if (request.vault) {
    const granted = row.grantAccess === 'write' || (row.grantAccess === 'read' && request.vault.access === 'read');
    if (!granted) return refuse('vault_grant', `The installation holds no ${request.vault.access} grant on this vault.`);
  }

  return {
    ok: true,
    context: {
      credentialId: row.credentialId,
      servicePrincipalId: row.servicePrincipalId,
      installationId: row.installationId,
      productDefinitionId: row.productDefinitionId,
      organizationId: row.organizationId,
      workspaceId: row.workspaceId,
      scopes: row.scopes,
      vault: request.vault && row.grantAccess ? { vaultId: request.vault.vaultId, access: row.grantAccess } : null,
    },
  };
}

/** The same check for callers that want an exception: the error code names the failed link. */
export async function authorizeProductRuntime(db: CommonQueryMethods, request: ChainRequest): Promise<RuntimeContext> {
  const result = await checkProductRuntimeChain(db, request);
  if (!result.ok) throw new AppError(result.code, result.detail, { extensions: { failedLink: result.link } });
  return result.context;
}
