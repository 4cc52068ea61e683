// Workspaces, their members and roles. A role is a named set of permissions; docs/identity.md
// explains each permission. Every workspace starts with the built-in roles below; more can be added.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import { isoTimestamp } from '../../db/row-schemas.ts';

export const permissions = [
  'workspace.manage', // rename, manage roles and members
  'vault.read', // read notes in the workspace's vaults
  'vault.write', // preview and apply note changes in the workspace's vaults
  'automation.view', // read triggers, runs, proposals, endpoints, executions
  'automation.manage', // create/update/delete triggers, endpoints; propose actions; run /process
  'automation.events.ingest', // post external events
  'automation.review', // approve or reject action proposals proposed by someone else
] as const;
export const permissionSchema = z.enum(permissions);
export type Permission = z.infer<typeof permissionSchema>;

export const builtinRoles: Record<string, readonly Permission[]> = {
  owner: permissions,
  admin: permissions,
  editor: ['vault.read', 'vault.write', 'automation.view', 'automation.manage', 'automation.events.ingest'],
  reviewer: ['vault.read', 'automation.view', 'automation.review'],
  viewer: ['vault.read', 'automation.view'],
};

export const workspaceSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  ownerAccountId: z.uuid(),
  createdAt: isoTimestamp,
});
export type Workspace = z.infer<typeof workspaceSchema>;

export const roleSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  name: z.string(),
  permissions: z.array(permissionSchema),
  builtin: z.boolean(),
});
export type Role = z.infer<typeof roleSchema>;

export const memberSchema = z.object({
  workspaceId: z.uuid(),
  accountId: z.uuid(),
  role: z.string(),
  permissions: z.array(permissionSchema),
  createdAt: isoTimestamp,
});
export type Member = z.infer<typeof memberSchema>;

type Db = CommonQueryMethods;

const workspaceColumns = sql.fragment`w.id, w.name, w.owner_account_id AS "ownerAccountId", w.created_at AS "createdAt"`;
const roleColumns = sql.fragment`r.id, r.workspace_id AS "workspaceId", r.name, r.permissions, r.builtin`;

/** Creates the workspace, its built-in roles, and makes the owner a member with role `owner`. */
export async function createWorkspace(db: Db, input: { name: string; ownerAccountId: string }): Promise<Workspace> {
  return db.transaction(async (tx) => {
    const workspace = await tx.one(sql.type(workspaceSchema)`
      INSERT INTO workspaces AS w (name, owner_account_id) VALUES (${input.name}, ${input.ownerAccountId})
      RETURNING ${workspaceColumns}`);
    for (const [name, perms] of Object.entries(builtinRoles)) {
      await tx.one(sql.type(roleSchema)`
        INSERT INTO workspace_roles AS r (workspace_id, name, permissions, builtin)
        VALUES (${workspace.id}, ${name}, ${sql.array([...perms], 'text')}, true)
        RETURNING ${roleColumns}`);
    }
    await addMember(tx, { workspaceId: workspace.id, accountId: input.ownerAccountId, role: 'owner' });
    return workspace;
  });
}

export async function getWorkspace(db: Db, id: string): Promise<Workspace> {
  const ws = await db.maybeOne(sql.type(workspaceSchema)`SELECT ${workspaceColumns} FROM workspaces w WHERE w.id = ${id}`);
  if (!ws) throw new AppError('not_found', `No workspace ${id}.`);
  return ws;
}

export async function listWorkspacesOfAccount(db: Db, accountId: string): Promise<readonly Workspace[]> {
  return db.any(sql.type(workspaceSchema)`
    SELECT ${workspaceColumns} FROM workspaces w
      JOIN workspace_members m ON m.workspace_id = w.id
     WHERE m.account_id = ${accountId}
     ORDER BY w.created_at, w.id`);
}

export const membershipSchema = workspaceSchema.extend({ role: z.string(), permissions: z.array(permissionSchema) });
export type Membership = z.infer<typeof membershipSchema>;

const membershipRowSchema = membershipSchema.extend({ createdAtMicros: z.number() });
const membershipCursorSchema = z.object({ t: z.number().int(), id: z.uuid() });

export type MembershipsPage = { workspaces: Membership[]; hasMore: boolean; nextCursor: string | null };

/**
 * One page of the account's workspaces with its role and permissions in each, oldest first. Keyset
 * on (created_at, id) carried in the opaque cursor to the microsecond, so rows created in the same
 * instant are neither skipped nor repeated, and a workspace deleted meanwhile cannot end the list.
 */
export async function listMembershipsPage(db: Db, accountId: string, page: { limit: number; cursor: string | undefined }): Promise<MembershipsPage> {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, membershipCursorSchema);
  const keyset = after
    ? sql.fragment`AND (w.created_at, w.id) > (timestamptz 'epoch' + ${after.t} * interval '1 microsecond', ${after.id}::uuid)`
    : sql.fragment``;
  const rows = await db.any(sql.type(membershipRowSchema)`
    SELECT ${workspaceColumns}, r.name AS role, r.permissions,
           (extract(epoch FROM w.created_at) * 1000000)::bigint AS "createdAtMicros"
      FROM workspace_members m
      JOIN workspaces w ON w.id = m.workspace_id
      JOIN workspace_roles r ON r.id = m.role_id
     WHERE m.account_id = ${accountId} ${keyset}
     ORDER BY w.created_at, w.id
     LIMIT ${page.limit + 1}`);
  const hasMore = rows.length > page.limit;
  const workspaces = rows.slice(0, page.limit).map(({ createdAtMicros: _t, ...membership }) => membership);
  const last = rows[page.limit - 1];
  return { workspaces, hasMore, nextCursor: hasMore && last ? encodeCursor({ t: last.createdAtMicros, id: last.id }) : null };
}

export async function createRole(db: Db, input: { workspaceId: string; name: string; permissions: Permission[] }): Promise<Role> {
  return db.one(sql.type(roleSchema)`
    INSERT INTO workspace_roles AS r (workspace_id, name, permissions)
    VALUES (${input.workspaceId}, ${input.name}, ${sql.array(input.permissions, 'text')})
    RETURNING ${roleColumns}`);
}

export async function setRolePermissions(db: Db, input: { workspaceId: string; name: string; permissions: Permission[] }): Promise<Role> {
  const role = await db.maybeOne(sql.type(roleSchema)`
    UPDATE workspace_roles r SET permissions = ${sql.array(input.permissions, 'text')}
     WHERE r.workspace_id = ${input.workspaceId} AND r.name = ${input.name} AND NOT r.builtin
    RETURNING ${roleColumns}`);
  if (!role) throw new AppError('not_found', `No custom role ${input.name} in workspace ${input.workspaceId} (built-in roles are fixed).`);
  return role;
}

export async function listRoles(db: Db, workspaceId: string): Promise<readonly Role[]> {
  return db.any(sql.type(roleSchema)`SELECT ${roleColumns} FROM workspace_roles r WHERE r.workspace_id = ${workspaceId} ORDER BY r.builtin DESC, r.name`);
}

const memberColumns = sql.fragment`m.workspace_id AS "workspaceId", m.account_id AS "accountId", r.name AS role, r.permissions, m.created_at AS "createdAt"`;

/** Adds a member, or changes the role of an existing one. */
export async function addMember(db: Db, input: { workspaceId: string; accountId: string; role: string }): Promise<Member> {
  const member = await db.maybeOne(sql.type(memberSchema)`
    WITH upserted AS (
      INSERT INTO workspace_members (workspace_id, account_id, role_id)
      SELECT ${input.workspaceId}, ${input.accountId}, r.id FROM workspace_roles r
       WHERE r.workspace_id = ${input.workspaceId} AND r.name = ${input.role}
      ON CONFLICT (workspace_id, account_id) DO UPDATE SET role_id = excluded.role_id
      RETURNING *
    )
    SELECT ${memberColumns} FROM upserted m JOIN workspace_roles r ON r.id = m.role_id`);
  if (!member) throw new AppError('not_found', `No role ${input.role} in workspace ${input.workspaceId}.`);
  return member;
}

export async function removeMember(db: Db, input: { workspaceId: string; accountId: string }): Promise<void> {
  const removed = await db.maybeOne(sql.type(z.object({ accountId: z.uuid() }))`
    DELETE FROM workspace_members WHERE workspace_id = ${input.workspaceId} AND account_id = ${input.accountId}
    RETURNING account_id AS "accountId"`);
  if (!removed) throw new AppError('not_found', 'No such member.');
}

export async function listMembers(db: Db, workspaceId: string): Promise<readonly Member[]> {
  return db.any(sql.type(memberSchema)`
    SELECT ${memberColumns} FROM workspace_members m JOIN workspace_roles r ON r.id = m.role_id
     WHERE m.workspace_id = ${workspaceId} ORDER BY m.created_at, m.account_id`);
}

/** The caller's permissions in a workspace; null when the caller is not a member (answer 404, not 403). */
export async function memberPermissions(db: Db, workspaceId: string, accountId: string): Promise<Permission[] | null> {
  return db.oneFirst(sql.type(z.object({ permissions: memberPermissionsSchema }))`SELECT ${memberPermissionsOf(sql.fragment`${workspaceId}::uuid`, accountId)} AS permissions`);
}

/** What memberPermissionsOf reads: the permissions, or null for a stranger. */
export const memberPermissionsSchema = z.array(permissionSchema).nullable();

/**
 * The account's permissions in the workspace `workspaceId` names (a column of the caller's query,
 * or a parameter), or NULL when it is not a member: a scalar subquery, so that reading an object
 * and whether its reader may see it is one statement.
 */
export function memberPermissionsOf(workspaceId: ReturnType<typeof sql.fragment>, accountId: string) {
  return sql.fragment`(SELECT r.permissions FROM workspace_members m JOIN workspace_roles r ON r.id = m.role_id
     WHERE m.workspace_id = ${workspaceId} AND m.account_id = ${accountId})`;
}

/**
 * Throws `workspace_not_found` when the account is not a member (a foreign workspace must not be
 * distinguishable from a missing one) and `permission_denied` when the role lacks `permission`.
 */
export async function requireWorkspacePermission(db: Db, workspaceId: string, accountId: string, permission: Permission): Promise<void> {
  const perms = await memberPermissions(db, workspaceId, accountId);
  if (!perms) throw new AppError('workspace_not_found', undefined, { extensions: { workspaceId } });
  if (!perms.includes(permission)) {
    throw new AppError('permission_denied', `Your role in this workspace lacks the ${permission} permission.`, {
      extensions: { requiredPermission: permission },
    });
  }
}

/**
 * For an object that lives in a workspace (a proposal, a trigger, an endpoint): the object and the
 * caller's permissions there. A missing object and a stranger's are the same `notFound` (existence
 * is never revealed); a member whose role lacks `permission` gets permission_denied.
 */
export async function authorizeInWorkspace<T extends { workspaceId: string }>(
  db: Db,
  object: T | null,
  accountId: string,
  permission: Permission,
  notFound: () => AppError,
): Promise<{ object: T; permissions: Permission[] }> {
  return admitToWorkspaceObject(object, object ? await memberPermissions(db, object.workspaceId, accountId) : null, permission, notFound);
}

/** authorizeInWorkspace's rule, for a caller that read the object and the reader's permissions together (memberPermissionsOf). */
export function admitToWorkspaceObject<T>(object: T | null, permissions: Permission[] | null, permission: Permission, notFound: () => AppError): { object: T; permissions: Permission[] } {
  if (!object || !permissions) throw notFound();
  if (!permissions.includes(permission)) {
    throw new AppError('permission_denied', `Your role in this workspace lacks the ${permission} permission.`, { extensions: { requiredPermission: permission } });
  }
  return { object, permissions };
}
