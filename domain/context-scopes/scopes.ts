// Context scopes (spec, Product Runtime rule 6): a caller supplies a stable scope id; the server
// resolves everything else (the audience, the workspace and vault authority, the explicit grants,
// the inherited policy), so nothing of it is ever taken from a caller. Scopes are defined by people
// through System Operations; an installation sees a scope only through an explicit grant, and a
// scope of another workspace or without a grant answers exactly like one that does not exist.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { MissingPart } from '@hosted-notes/runtime-sdk';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';

type Db = CommonQueryMethods;

export const scopeKinds = ['workspace', 'course', 'team', 'project'] as const;
export const audienceKinds = ['workspace_members', 'course_educators', 'team_members', 'named_group'] as const;

/** How deep a scope may sit under its root: bounds the inheritance walk. */
export const MAX_SCOPE_DEPTH = 8;
export const SCOPE_KEY_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/**
 * A scope's own policy; unset keys inherit from the parent, then the service defaults below.
 * memory.candidates: whether products may propose shared memory here (review is always required,
 * whatever this says); intelligence.use: whether intelligence may run on this scope's context.
 */
export const scopePolicyInputSchema = z.strictObject({
  memory: z.strictObject({ candidates: z.enum(['allowed', 'forbidden']).optional(), maxEntries: z.number().int().min(1).max(10_000).optional() }).optional(),
  intelligence: z.strictObject({ use: z.enum(['allowed', 'forbidden']).optional() }).optional(),
  retentionDays: z.number().int().min(1).max(3650).optional(),
});
export type ScopePolicyInput = z.infer<typeof scopePolicyInputSchema>;

/** The flattened settings and their service defaults (null: none). */
export const policyDefaults = { 'memory.candidates': 'allowed', 'memory.maxEntries': 1000, 'intelligence.use': 'allowed', retentionDays: null } as const;
export type PolicyKey = keyof typeof policyDefaults;

function flatten(policy: ScopePolicyInput): Partial<Record<PolicyKey, unknown>> {
  const out: Partial<Record<PolicyKey, unknown>> = {};
  if (policy.memory?.candidates !== undefined) out['memory.candidates'] = policy.memory.candidates;
  if (policy.memory?.maxEntries !== undefined) out['memory.maxEntries'] = policy.memory.maxEntries;
  if (policy.intelligence?.use !== undefined) out['intelligence.use'] = policy.intelligence.use;
  if (policy.retentionDays !== undefined) out.retentionDays = policy.retentionDays;
  return out;
}

export const scopeRowSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  scopeKey: z.string(),
  name: z.string(),
  kind: z.enum(scopeKinds),
  parentId: z.uuid().nullable(),
  audienceKind: z.enum(audienceKinds),
  audienceDescription: z.string(),
  vaultId: z.uuid().nullable(),
  policy: z.record(z.string(), z.unknown()),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type ScopeRow = z.infer<typeof scopeRowSchema>;

const scopeColumns = sql.fragment`s.id, s.workspace_id AS "workspaceId", s.scope_key AS "scopeKey", s.name, s.kind, s.parent_id AS "parentId",
  s.audience_kind AS "audienceKind", s.audience_description AS "audienceDescription", s.vault_id AS "vaultId", s.policy,
  s.created_at AS "createdAt", s.updated_at AS "updatedAt"`;

/** What a caller-facing summary shows of a scope (its stable key, never the internal id). */
export function scopeSummary(scope: ScopeRow, parentKey: string | null) {
  return { scopeId: scope.scopeKey, name: scope.name, kind: scope.kind, parentScopeId: parentKey };
}

// ---- System Operations ---------------------------------------------------------------------------

export type NewScope = {
  workspaceId: string;
  scopeKey: string;
  name: string;
  kind: (typeof scopeKinds)[number];
  parentKey?: string | undefined;
  audienceKind: (typeof audienceKinds)[number];
  audienceDescription: string;
  vaultId?: string | undefined;
  policy?: ScopePolicyInput | undefined;
};

/** Creates a scope. The parent (same workspace) is fixed at creation, so no cycle can form; depth is bounded. */
export async function createScope(db: Db, input: NewScope): Promise<ScopeRow> {
  if (!SCOPE_KEY_PATTERN.test(input.scopeKey)) throw new AppError('invalid_request', 'A scope id is 1–100 of a-z, 0-9, ".", "_", "-", starting with a letter or digit.');
  const policy = scopePolicyInputSchema.parse(input.policy ?? {});
  return db.transaction(async (tx) => {
    let parentId: string | null = null;
    if (input.parentKey !== undefined) {
      const parent = await tx.maybeOne(sql.type(z.object({ id: z.uuid(), depth: z.number() }))`
        WITH RECURSIVE up AS (
          SELECT s.id, s.parent_id, 1 AS depth FROM context_scopes s WHERE s.workspace_id = ${input.workspaceId} AND s.scope_key = ${input.parentKey}
          UNION ALL SELECT p.id, p.parent_id, up.depth + 1 FROM context_scopes p JOIN up ON p.id = up.parent_id WHERE up.depth < ${MAX_SCOPE_DEPTH + 1}
        )
        SELECT (SELECT id FROM up WHERE depth = 1) AS id, max(depth)::int AS depth FROM up HAVING count(*) > 0`);
      if (!parent) throw new AppError('context_scope_not_found', `No scope ${input.parentKey} in this workspace to be the parent.`);
      if (parent.depth >= MAX_SCOPE_DEPTH) throw new AppError('invalid_request', `Scopes nest at most ${MAX_SCOPE_DEPTH} deep.`);
      parentId = parent.id;
    }
    if (input.vaultId !== undefined) {
      const inWorkspace = await tx.exists(sql.type(z.object({ id: z.uuid() }))`
        SELECT v.id FROM vaults v WHERE v.id = ${input.vaultId} AND v.owner_workspace_id = ${input.workspaceId}`);
      if (!inWorkspace) throw new AppError('vault_not_found', "A scope's vault must be a hosted vault of its workspace.");
    }
    const created = await tx.maybeOne(sql.type(scopeRowSchema)`
      INSERT INTO context_scopes AS s (workspace_id, scope_key, name, kind, parent_id, audience_kind, audience_description, vault_id, policy)
      VALUES (${input.workspaceId}, ${input.scopeKey}, ${input.name}, ${input.kind}, ${parentId}, ${input.audienceKind}, ${input.audienceDescription},
              ${input.vaultId ?? null}, ${sql.jsonb(policy)})
      ON CONFLICT (workspace_id, scope_key) DO NOTHING
      RETURNING ${scopeColumns}`);
    if (!created) throw new AppError('conflict', `The workspace already has a scope ${input.scopeKey}.`);
    return created;
  });
}

export async function listWorkspaceScopes(db: Db, workspaceId: string): Promise<readonly ScopeRow[]> {
  return db.any(sql.type(scopeRowSchema)`SELECT ${scopeColumns} FROM context_scopes s WHERE s.workspace_id = ${workspaceId} ORDER BY s.scope_key`);
}

/** Replaces a scope's own policy (inherited values are not copied in). */
export async function setScopePolicy(db: Db, input: { workspaceId: string; scopeKey: string; policy: ScopePolicyInput }): Promise<ScopeRow> {
  const policy = scopePolicyInputSchema.parse(input.policy);
  const row = await db.maybeOne(sql.type(scopeRowSchema)`
    UPDATE context_scopes s SET policy = ${sql.jsonb(policy)}, updated_at = now()
     WHERE s.workspace_id = ${input.workspaceId} AND s.scope_key = ${input.scopeKey}
    RETURNING ${scopeColumns}`);
  if (!row) throw new AppError('context_scope_not_found');
  return row;
}

const grantRowSchema = z.object({ id: z.uuid(), scopeId: z.uuid(), installationId: z.uuid(), createdAt: isoTimestamp, revokedAt: isoTimestamp.nullable() });

/** Grants an installation of the scope's workspace sight of the scope; granting twice answers the live grant. */
export async function grantScope(db: Db, input: { workspaceId: string; scopeKey: string; installationId: string }) {
  return db.transaction(async (tx) => {
    const scope = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
      SELECT s.id FROM context_scopes s JOIN product_installations i ON i.workspace_id = s.workspace_id AND i.id = ${input.installationId}
       WHERE s.workspace_id = ${input.workspaceId} AND s.scope_key = ${input.scopeKey}`);
    if (!scope) throw new AppError('context_scope_not_found', 'No such scope, or the installation is not in its workspace.');
    const inserted = await tx.maybeOne(sql.type(grantRowSchema)`
      INSERT INTO context_scope_grants AS g (scope_id, installation_id) VALUES (${scope.id}, ${input.installationId})
      ON CONFLICT (scope_id, installation_id) WHERE revoked_at IS NULL DO NOTHING
      RETURNING g.id, g.scope_id AS "scopeId", g.installation_id AS "installationId", g.created_at AS "createdAt", g.revoked_at AS "revokedAt"`);
    return (
      inserted ??
      (await tx.one(sql.type(grantRowSchema)`
        SELECT g.id, g.scope_id AS "scopeId", g.installation_id AS "installationId", g.created_at AS "createdAt", g.revoked_at AS "revokedAt"
          FROM context_scope_grants g WHERE g.scope_id = ${scope.id} AND g.installation_id = ${input.installationId} AND g.revoked_at IS NULL`))
    );
  });
}

export async function revokeScopeGrant(db: Db, grantId: string) {
  const grant = await db.maybeOne(sql.type(grantRowSchema)`
    UPDATE context_scope_grants g SET revoked_at = coalesce(g.revoked_at, now()) WHERE g.id = ${grantId}
    RETURNING g.id, g.scope_id AS "scopeId", g.installation_id AS "installationId", g.created_at AS "createdAt", g.revoked_at AS "revokedAt"`);
  if (!grant) throw new AppError('not_found', `No scope grant ${grantId}.`);
  return grant;
}

// ---- what an installation sees -------------------------------------------------------------------

/** The caller's ids the scope reads are bounded by. */
export type ScopeCaller = { installationId: string; workspaceId: string };

const notFound = (scopeKey: string) => new AppError('context_scope_not_found', `No context scope ${scopeKey} is visible to this installation.`);

/**
 * The scope `scopeKey` of the caller's workspace that its installation holds a live grant on, with
 * its ancestry from the root down; anything else is context_scope_not_found.
 */
export async function resolveScope(db: Db, caller: ScopeCaller, scopeKey: string): Promise<{ scope: ScopeRow; ancestry: ScopeRow[] }> {
  if (!SCOPE_KEY_PATTERN.test(scopeKey)) throw notFound(scopeKey.slice(0, 100));
  const rows = await db.any(sql.type(scopeRowSchema.extend({ depth: z.number() }))`
    WITH RECURSIVE visible AS (
      SELECT s.* FROM context_scopes s
       WHERE s.workspace_id = ${caller.workspaceId} AND s.scope_key = ${scopeKey}
         AND EXISTS (SELECT 1 FROM context_scope_grants g WHERE g.scope_id = s.id AND g.installation_id = ${caller.installationId} AND g.revoked_at IS NULL)
    ), up AS (
      SELECT v.*, 0 AS depth FROM visible v
      UNION ALL
      SELECT p.*, up.depth + 1 FROM context_scopes p JOIN up ON p.id = up.parent_id WHERE up.depth < ${MAX_SCOPE_DEPTH}
    )
    SELECT ${scopeColumns}, s.depth FROM up s ORDER BY s.depth DESC`);
  const scope = rows[rows.length - 1];
  if (!scope) throw notFound(scopeKey);
  return { scope, ancestry: rows.slice(0, -1) };
}

/** A scope of `workspaceId` by its internal id, with its ancestry from the root down (null: none). */
export async function scopeChainById(db: Db, input: { workspaceId: string; scopeId: string }): Promise<{ scope: ScopeRow; ancestry: ScopeRow[] } | null> {
  const rows = await db.any(sql.type(scopeRowSchema.extend({ depth: z.number() }))`
    WITH RECURSIVE up AS (
      SELECT s.*, 0 AS depth FROM context_scopes s WHERE s.id = ${input.scopeId} AND s.workspace_id = ${input.workspaceId}
      UNION ALL SELECT p.*, up.depth + 1 FROM context_scopes p JOIN up ON p.id = up.parent_id WHERE up.depth < ${MAX_SCOPE_DEPTH}
    )
    SELECT ${scopeColumns}, s.depth FROM up s ORDER BY s.depth DESC`);
  const scope = rows[rows.length - 1];
  return scope ? { scope, ancestry: rows.slice(0, -1) } : null;
}

/** The scopes the installation may see in its workspace, by key, one keyset page at a time. */
export async function listVisibleScopes(db: Db, caller: ScopeCaller, page: { limit: number; cursor?: string | undefined }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, z.object({ after: z.string() })).after;
  const rows = await db.any(sql.type(scopeRowSchema.extend({ parentKey: z.string().nullable() }))`
    SELECT ${scopeColumns}, p.scope_key AS "parentKey"
      FROM context_scopes s LEFT JOIN context_scopes p ON p.id = s.parent_id
     WHERE s.workspace_id = ${caller.workspaceId}
       AND EXISTS (SELECT 1 FROM context_scope_grants g WHERE g.scope_id = s.id AND g.installation_id = ${caller.installationId} AND g.revoked_at IS NULL)
       AND (${after}::text IS NULL OR s.scope_key > ${after}::text)
     ORDER BY s.scope_key COLLATE "C" LIMIT ${page.limit + 1}`);
  const scopes = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  return {
    scopes: scopes.map((s) => scopeSummary(s, s.parentKey)),
    hasMore,
    nextCursor: hasMore ? encodeCursor({ after: scopes[scopes.length - 1]!.scopeKey }) : null,
  };
}

/** The effective policy: every setting, the value that wins walking root → leaf, and where it came from (null: the service default). */
export function effectivePolicy(scope: ScopeRow, ancestry: readonly ScopeRow[]) {
  const settings = new Map<PolicyKey, { value: unknown; sourceScopeId: string | null }>(
    (Object.entries(policyDefaults) as Array<[PolicyKey, unknown]>).map(([key, value]) => [key, { value, sourceScopeId: null }]),
  );
  for (const level of [...ancestry, scope]) {
    const own = scopePolicyInputSchema.safeParse(level.policy);
    if (!own.success) continue;
    for (const [key, value] of Object.entries(flatten(own.data)) as Array<[PolicyKey, unknown]>) settings.set(key, { value, sourceScopeId: level.scopeKey });
  }
  return [...settings].map(([key, setting]) => ({ key, ...setting }));
}

export function policyValue(settings: ReturnType<typeof effectivePolicy>, key: PolicyKey): unknown {
  return settings.find((s) => s.key === key)?.value;
}

const vaultAccessSchema = z.object({ access: z.enum(['read', 'write']).nullable(), workspaceName: z.string() });

/**
 * The scope's context as the server resolves it: the audience, the workspace, and the scope's vault
 * with this installation's grant on it (null when it holds none; the vault's notes stay reachable
 * only through a logical-vault grant).
 */
export async function scopeContext(db: Db, caller: ScopeCaller, scopeKey: string) {
  const { scope, ancestry } = await resolveScope(db, caller, scopeKey);
  const row = await db.one(sql.type(vaultAccessSchema)`
    SELECT w.name AS "workspaceName",
           (SELECT g.access FROM logical_vault_grants g
             WHERE g.vault_id = ${scope.vaultId}::uuid AND g.installation_id = ${caller.installationId} AND g.revoked_at IS NULL) AS access
      FROM workspaces w WHERE w.id = ${caller.workspaceId}`);
  const keyOf = new Map([...ancestry, scope].map((s) => [s.id, s.scopeKey]));
  return {
    scope: scopeSummary(scope, scope.parentId ? (keyOf.get(scope.parentId) ?? null) : null),
    ancestry: ancestry.map((s) => scopeSummary(s, s.parentId ? (keyOf.get(s.parentId) ?? null) : null)),
    audience: { kind: scope.audienceKind, description: scope.audienceDescription },
    workspace: { id: caller.workspaceId, name: row.workspaceName },
    vault: scope.vaultId ? { vaultId: scope.vaultId, access: row.access } : null,
  };
}

/**
 * Whether intelligence may run on a scope's context, and if the answer is not there, why: the
 * service has no model provider, or the credential lacks intelligence.execute (unavailable); else
 * the scope's effective `intelligence.use` decides.
 */
export function scopeIntelligence(
  scope: ScopeRow,
  ancestry: readonly ScopeRow[],
  input: { providerConfigured: boolean; credentialScopes: readonly string[] },
): { unavailable: MissingPart } | { data: { scopeId: string; allowed: boolean; reason: string | null } } {
  if (!input.providerConfigured) return { unavailable: { part: 'intelligence', reason: 'capability_not_configured', detail: 'No model provider is configured on this service.' } };
  if (!input.credentialScopes.includes('intelligence.execute')) {
    return { unavailable: { part: 'intelligence', reason: 'scope_missing', detail: 'The credential lacks intelligence.execute.', scope: 'intelligence.execute' } };
  }
  const allowed = policyValue(effectivePolicy(scope, ancestry), 'intelligence.use') === 'allowed';
  return { data: { scopeId: scope.scopeKey, allowed, reason: allowed ? null : "The scope's policy forbids intelligence (intelligence.use: forbidden)." } };
}
