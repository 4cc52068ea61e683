// Hosted vaults and the explicit mappings the gateways address them by. A vault that is only
// local to a browser has no row here, so no gateway can reach it.
import { sql } from 'slonik';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { isoTimestamp } from '../../db/row-schemas.ts';

export const vaultSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  ownerAccountId: z.uuid().nullable(),
  ownerWorkspaceId: z.uuid().nullable(),
  createdAt: isoTimestamp,
});
export type Vault = z.infer<typeof vaultSchema>;

export const mappingSchema = z.object({
  mappingId: z.uuid(),
  vaultId: z.uuid(),
  label: z.string(),
  createdAt: isoTimestamp,
  revokedAt: isoTimestamp.nullable(),
});
export type Mapping = z.infer<typeof mappingSchema>;

type Db = CommonQueryMethods;

const vaultColumns = sql.fragment`v.id, v.name, v.owner_account_id AS "ownerAccountId", v.owner_workspace_id AS "ownerWorkspaceId", v.created_at AS "createdAt"`;
const mappingColumns = sql.fragment`mp.id AS "mappingId", mp.vault_id AS "vaultId", mp.label, mp.created_at AS "createdAt", mp.revoked_at AS "revokedAt"`;

export async function createVault(
  db: Db,
  input: { name: string } & ({ ownerAccountId: string; ownerWorkspaceId?: undefined } | { ownerWorkspaceId: string; ownerAccountId?: undefined }),
): Promise<Vault> {
  return db.one(sql.type(vaultSchema)`
    INSERT INTO vaults AS v (name, owner_account_id, owner_workspace_id)
    VALUES (${input.name}, ${input.ownerAccountId ?? null}, ${input.ownerWorkspaceId ?? null})
    RETURNING ${vaultColumns}`);
}

export async function getVault(db: Db, id: string): Promise<Vault> {
  const vault = await db.maybeOne(sql.type(vaultSchema)`SELECT ${vaultColumns} FROM vaults v WHERE v.id = ${id}`);
  if (!vault) throw new AppError('not_found', `No vault ${id}.`);
  return vault;
}

export async function listVaultsOfAccount(db: Db, accountId: string): Promise<readonly Vault[]> {
  return db.any(sql.type(vaultSchema)`
    SELECT ${vaultColumns} FROM vaults v
     WHERE v.owner_account_id = ${accountId}
        OR v.owner_workspace_id IN (SELECT workspace_id FROM workspace_members WHERE account_id = ${accountId})
     ORDER BY v.created_at, v.id`);
}

export async function createMapping(db: Db, input: { vaultId: string; label?: string; createdByAccountId?: string | null }): Promise<Mapping> {
  return db.one(sql.type(mappingSchema)`
    INSERT INTO vault_mappings AS mp (vault_id, label, created_by_account_id)
    VALUES (${input.vaultId}, ${input.label ?? ''}, ${input.createdByAccountId ?? null})
    RETURNING ${mappingColumns}`);
}

export async function listMappings(db: Db, vaultId: string): Promise<readonly Mapping[]> {
  return db.any(sql.type(mappingSchema)`SELECT ${mappingColumns} FROM vault_mappings mp WHERE mp.vault_id = ${vaultId} ORDER BY mp.created_at, mp.id`);
}

export async function revokeMapping(db: Db, mappingId: string): Promise<Mapping> {
  const mapping = await db.maybeOne(sql.type(mappingSchema)`
    UPDATE vault_mappings mp SET revoked_at = coalesce(mp.revoked_at, now()) WHERE mp.id = ${mappingId}
    RETURNING ${mappingColumns}`);
  if (!mapping) throw new AppError('not_found', `No mapping ${mappingId}.`);
  return mapping;
}

export type VaultAccess = 'read' | 'write';

export type ResolvedMapping = { mappingId: string; vaultId: string; ownerWorkspaceId: string | null };

export const mappingAccessSchema = z.object({
  mappingId: z.uuid(),
  vaultId: z.uuid(),
  ownerWorkspaceId: z.uuid().nullable(),
  permissions: z.array(z.string()),
});
export type MappingAccess = z.infer<typeof mappingAccessSchema>;

/**
 * The live mapping with this id as the account sees it (columns of mappingAccessSchema): the
 * vault's owner gets vault.read and vault.write, a member of the owning workspace gets their
 * role's permissions, anyone else gets no row. Composable as a CTE so hot paths can join on it;
 * `accountId` may be a fragment such as `(SELECT id FROM principal)`.
 */
export function mappingAccessQuery(mappingId: string, accountId: string | FragmentSqlToken) {
  return sql.fragment`
    SELECT mp.id AS "mappingId", v.id AS "vaultId", v.owner_workspace_id AS "ownerWorkspaceId",
           CASE WHEN v.owner_account_id = ${accountId} THEN ARRAY['vault.read', 'vault.write'] ELSE r.permissions END AS permissions
      FROM vault_mappings mp
      JOIN vaults v ON v.id = mp.vault_id
      LEFT JOIN workspace_members m ON m.workspace_id = v.owner_workspace_id AND m.account_id = ${accountId}
      LEFT JOIN workspace_roles r ON r.id = m.role_id
     WHERE mp.id = ${mappingId}
       AND mp.revoked_at IS NULL
       AND (v.owner_account_id = ${accountId} OR m.account_id IS NOT NULL)`;
}

/**
 * A mapping the account cannot see at all (missing, revoked, foreign) is `mapping_not_found`, so a
 * caller cannot probe for other tenants' mappings; a workspace member whose role lacks
 * vault.read / vault.write gets `permission_denied`.
 */
export function judgeMappingAccess(mappingId: string, row: MappingAccess | null, access: VaultAccess): ResolvedMapping {
  if (!row) throw new AppError('mapping_not_found', undefined, { extensions: { mappingId } });
  const permission = access === 'write' ? 'vault.write' : 'vault.read';
  if (!row.permissions.includes(permission)) {
    throw new AppError('permission_denied', `Your role in the vault's workspace lacks ${permission}.`, { extensions: { requiredPermission: permission } });
  }
  return { mappingId: row.mappingId, vaultId: row.vaultId, ownerWorkspaceId: row.ownerWorkspaceId };
}

/** Resolves a mappingId for an account and the access it needs (see judgeMappingAccess). */
export async function resolveMappingForAccount(db: Db, mappingId: string, accountId: string, access: VaultAccess): Promise<ResolvedMapping> {
  const row = await db.maybeOne(sql.prepared('resolve_mapping', mappingAccessSchema)`${mappingAccessQuery(mappingId, accountId)}`);
  return judgeMappingAccess(mappingId, row, access);
}
