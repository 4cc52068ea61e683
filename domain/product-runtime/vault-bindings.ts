// Binding a hosted vault to a product installation. A service principal can never grant itself a
// vault: bindHostedVault only records a request; a person with workspace.manage in the vault's
// workspace grants it (or declines), and can revoke the grant later. Revocation removes authority
// only: the vault and its notes stay untouched. Only hosted vaults of the installation's own
// workspace can be bound; a vault that exists only locally has no id here, so it cannot be named.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { requireWorkspacePermission } from '../identity/workspaces.ts';
import type { RuntimeContext } from './chain.ts';

type Db = CommonQueryMethods;

export const bindingSchema = z.object({
  bindingId: z.uuid(),
  vaultId: z.uuid().nullable(),
  access: z.enum(['read', 'write']),
  reason: z.string(),
  state: z.enum(['pending', 'granted', 'declined']),
  grantId: z.uuid().nullable(),
  createdAt: isoTimestamp,
  decidedAt: isoTimestamp.nullable(),
});
export type Binding = z.infer<typeof bindingSchema>;

const bindingColumns = sql.fragment`b.id AS "bindingId", b.vault_id AS "vaultId", b.access, b.reason, b.state, b.grant_id AS "grantId",
  b.created_at AS "createdAt", b.decided_at AS "decidedAt"`;

export const MAX_BINDINGS_PAGE = 100;

/**
 * bindHostedVault: asks a person for a grant. Idempotent by nature: while a request for the same
 * vault (or for "any vault", vaultId null) is open, asking again answers that request
 * (`created: false`). A vault the installation already holds a sufficient grant on answers that
 * grant instead of a request. A vault that is not a hosted vault of the installation's workspace
 * is vault_not_found, whether it is missing or someone else's.
 */
export async function requestBinding(
  db: Db,
  caller: RuntimeContext,
  input: { vaultId: string | null; access: 'read' | 'write'; reason: string },
): Promise<{ binding: Binding; created: boolean } | { grant: { grantId: string; vaultId: string; access: 'read' | 'write' } }> {
  return db.transaction(async (tx) => {
    if (input.vaultId !== null) {
      const vault = await tx.maybeOne(sql.type(z.object({ grantId: z.uuid().nullable(), access: z.enum(['read', 'write']).nullable() }))`
        SELECT g.id AS "grantId", g.access FROM vaults v
          LEFT JOIN logical_vault_grants g ON g.vault_id = v.id AND g.installation_id = ${caller.installationId} AND g.revoked_at IS NULL
         WHERE v.id = ${input.vaultId} AND v.owner_workspace_id = ${caller.workspaceId}`);
      if (!vault) throw new AppError('vault_not_found', 'No hosted vault with this id in the installation\'s workspace.');
      if (vault.grantId && vault.access && (vault.access === 'write' || input.access === 'read')) {
        return { grant: { grantId: vault.grantId, vaultId: input.vaultId, access: vault.access } };
      }
    }
    const inserted = await tx.maybeOne(sql.type(bindingSchema)`
      INSERT INTO vault_binding_requests AS b (installation_id, vault_id, access, reason, requested_by_principal_id)
      VALUES (${caller.installationId}, ${input.vaultId}, ${input.access}, ${input.reason}, ${caller.servicePrincipalId})
      ON CONFLICT (installation_id, vault_id) WHERE state = 'pending' DO NOTHING
      RETURNING ${bindingColumns}`);
    if (inserted) return { binding: inserted, created: true };
    const open = await tx.one(sql.type(bindingSchema)`
      SELECT ${bindingColumns} FROM vault_binding_requests b
       WHERE b.installation_id = ${caller.installationId} AND b.vault_id IS NOT DISTINCT FROM ${input.vaultId}::uuid AND b.state = 'pending'`);
    return { binding: open, created: false };
  });
}

/** The installation's binding requests, newest first. */
export async function listBindings(db: Db, caller: Pick<RuntimeContext, 'installationId'>, page: { limit: number }): Promise<Binding[]> {
  const rows = await db.any(sql.type(bindingSchema)`
    SELECT ${bindingColumns} FROM vault_binding_requests b
     WHERE b.installation_id = ${caller.installationId}
     ORDER BY b.created_at DESC, b.id DESC LIMIT ${Math.min(page.limit, MAX_BINDINGS_PAGE)}`);
  return [...rows];
}

// ---- the person's side (/api/dev/workspaces/:workspaceId/product-installations) -------------------

export const installationGrantsSchema = z.object({
  installationId: z.uuid(),
  organization: z.object({ id: z.uuid(), name: z.string() }),
  product: z.object({ id: z.uuid(), slug: z.string(), name: z.string() }),
  status: z.string(),
  grants: z.array(z.object({ grantId: z.uuid(), vaultId: z.uuid(), vaultName: z.string(), access: z.enum(['read', 'write']), grantedAt: z.string(), grantedByAccountId: z.uuid().nullable() })),
  pendingBindings: z.array(bindingSchema),
});
export type InstallationGrants = z.infer<typeof installationGrantsSchema>;

/** The product installations of a workspace with their live grants and open requests (workspace.manage). */
export async function listWorkspaceInstallations(db: Db, workspaceId: string, accountId: string): Promise<InstallationGrants[]> {
  await requireWorkspacePermission(db, workspaceId, accountId, 'workspace.manage');
  const rows = await db.any(sql.type(installationGrantsSchema)`
    SELECT i.id AS "installationId", json_build_object('id', o.id, 'name', o.name) AS organization,
           json_build_object('id', pd.id, 'slug', pd.slug, 'name', pd.name) AS product, i.status,
           coalesce((SELECT json_agg(json_build_object('grantId', g.id, 'vaultId', v.id, 'vaultName', v.name, 'access', g.access,
                                                        'grantedAt', to_char(g.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                        'grantedByAccountId', g.granted_by_account_id) ORDER BY v.name, g.id)
                       FROM logical_vault_grants g JOIN vaults v ON v.id = g.vault_id
                      WHERE g.installation_id = i.id AND g.revoked_at IS NULL), '[]') AS grants,
           coalesce((SELECT json_agg(json_build_object('bindingId', b.id, 'vaultId', b.vault_id, 'access', b.access, 'reason', b.reason, 'state', b.state,
                                                        'grantId', b.grant_id, 'createdAt', to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                        'decidedAt', NULL) ORDER BY b.created_at DESC, b.id)
                       FROM vault_binding_requests b WHERE b.installation_id = i.id AND b.state = 'pending'), '[]') AS "pendingBindings"
      FROM product_installations i
      JOIN organizations o ON o.id = i.organization_id
      JOIN product_definitions pd ON pd.id = i.product_definition_id
     WHERE i.workspace_id = ${workspaceId}
     ORDER BY pd.name, i.created_at, i.id`);
  return [...rows];
}

const personGrantSchema = z.object({
  grantId: z.uuid(),
  installationId: z.uuid(),
  vaultId: z.uuid(),
  access: z.enum(['read', 'write']),
  grantedAt: isoTimestamp,
  grantedByAccountId: z.uuid().nullable(),
  revokedAt: isoTimestamp.nullable(),
});
export type PersonGrant = z.infer<typeof personGrantSchema>;

const grantColumns = sql.fragment`g.id AS "grantId", g.installation_id AS "installationId", g.vault_id AS "vaultId", g.access,
  g.created_at AS "grantedAt", g.granted_by_account_id AS "grantedByAccountId", g.revoked_at AS "revokedAt"`;

/**
 * A person grants an installation of their workspace access to a vault of the same workspace.
 * Granting what is already granted answers the live grant (`created: false`); a different access
 * replaces it. An open request for this vault (or for any vault) is marked granted.
 */
export async function grantVaultAsPerson(
  db: Db,
  input: { workspaceId: string; accountId: string; installationId: string; vaultId: string; access: 'read' | 'write'; bindingId?: string | undefined },
): Promise<{ grant: PersonGrant; created: boolean }> {
  await requireWorkspacePermission(db, input.workspaceId, input.accountId, 'workspace.manage');
  return db.transaction(async (tx) => {
    const installation = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
      SELECT i.id FROM product_installations i WHERE i.id = ${input.installationId} AND i.workspace_id = ${input.workspaceId} FOR UPDATE`);
    if (!installation) throw new AppError('installation_not_found');
    const vault = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`SELECT v.id FROM vaults v WHERE v.id = ${input.vaultId} AND v.owner_workspace_id = ${input.workspaceId}`);
    if (!vault) throw new AppError('vault_not_found', 'No hosted vault with this id in this workspace.');
    if (input.bindingId !== undefined) {
      const binding = await tx.maybeOne(sql.type(z.object({ vaultId: z.uuid().nullable() }))`
        SELECT b.vault_id AS "vaultId" FROM vault_binding_requests b
         WHERE b.id = ${input.bindingId} AND b.installation_id = ${input.installationId} AND b.state = 'pending'`);
      if (!binding) throw new AppError('binding_request_not_found');
      if (binding.vaultId !== null && binding.vaultId !== input.vaultId) throw new AppError('invalid_request', 'The binding request names another vault.');
    }
    const live = await tx.maybeOne(sql.type(personGrantSchema)`
      SELECT ${grantColumns} FROM logical_vault_grants g WHERE g.installation_id = ${input.installationId} AND g.vault_id = ${input.vaultId} AND g.revoked_at IS NULL`);
    let grant: PersonGrant;
    let created = false;
    if (live && live.access === input.access) grant = live;
    else {
      if (live) {
        await tx.query(sql.type(z.object({}))`
          UPDATE logical_vault_grants SET revoked_at = now(), revoked_by_account_id = ${input.accountId} WHERE id = ${live.grantId}`);
      }
      grant = await tx.one(sql.type(personGrantSchema)`
        INSERT INTO logical_vault_grants AS g (installation_id, vault_id, access, granted_by_account_id)
        VALUES (${input.installationId}, ${input.vaultId}, ${input.access}, ${input.accountId})
        RETURNING ${grantColumns}`);
      created = true;
    }
    // Answer the open requests this grant satisfies: the one named, or those for this vault or any vault.
    await tx.query(sql.type(z.object({}))`
      UPDATE vault_binding_requests b
         SET state = 'granted', grant_id = ${grant.grantId}, decided_by_account_id = ${input.accountId}, decided_at = now(),
             vault_id = coalesce(b.vault_id, ${input.vaultId}::uuid)
       WHERE b.installation_id = ${input.installationId} AND b.state = 'pending'
         AND ${input.bindingId === undefined
           ? sql.fragment`b.vault_id = ${input.vaultId}::uuid AND (b.access = 'read' OR ${input.access} = 'write')`
           : sql.fragment`b.id = ${input.bindingId}::uuid`}`);
    return { grant, created };
  });
}

/** A person revokes a grant of their workspace. Authority only: the vault's notes stay. Revoking twice answers the revoked grant. */
export async function revokeGrantAsPerson(db: Db, input: { workspaceId: string; accountId: string; grantId: string }): Promise<PersonGrant> {
  await requireWorkspacePermission(db, input.workspaceId, input.accountId, 'workspace.manage');
  const grant = await db.maybeOne(sql.type(personGrantSchema)`
    UPDATE logical_vault_grants g
       SET revoked_at = coalesce(g.revoked_at, now()), revoked_by_account_id = coalesce(g.revoked_by_account_id, ${input.accountId})
      FROM product_installations i
     WHERE g.id = ${input.grantId} AND i.id = g.installation_id AND i.workspace_id = ${input.workspaceId}
    RETURNING ${grantColumns}`);
  if (!grant) throw new AppError('vault_grant_not_found');
  return grant;
}

/** A person declines an open binding request. Declining a declined request answers it again. */
export async function declineBinding(db: Db, input: { workspaceId: string; accountId: string; bindingId: string }): Promise<Binding> {
  await requireWorkspacePermission(db, input.workspaceId, input.accountId, 'workspace.manage');
  const binding = await db.maybeOne(sql.type(bindingSchema)`
    UPDATE vault_binding_requests b
       SET state = CASE WHEN b.state = 'pending' THEN 'declined' ELSE b.state END,
           decided_by_account_id = coalesce(b.decided_by_account_id, ${input.accountId}), decided_at = coalesce(b.decided_at, now())
      FROM product_installations i
     WHERE b.id = ${input.bindingId} AND i.id = b.installation_id AND i.workspace_id = ${input.workspaceId}
    RETURNING ${bindingColumns}`);
  if (!binding) throw new AppError('binding_request_not_found');
  if (binding.state === 'granted') throw new AppError('conflict', 'This binding request was already granted; revoke the grant instead.');
  return binding;
}
