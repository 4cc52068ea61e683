// The reviewer's inbox: proposals across every workspace where the account may see them
// (automation.view), filtered by workspace, state and bridge, newest or oldest first or the soonest
// to expire first, a keyset page at a time. Each row says who proposed it, what it touches (the
// first path and how many more), how big it is, and whether this account may decide it and, if
// not, why: the domain's own rule (review-rules.ts), never a second one. The zod schemas here are
// the page's JSON.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { proposalStateSchema } from '../automation/proposal-states.ts';
import { bridgeNameSchema, keysetOf, listProposals, proposalOrders, proposalSchema } from '../automation/proposals.ts';
import type { Proposal } from '../automation/proposals.ts';
import { actionSchema, isNoteAction, toTransaction } from '../automation/catalog.ts';
import { contentBytes } from '../notes/paths.ts';
import { decisionRefusal } from '../automation/review-rules.ts';
import { permissionSchema } from '../identity/workspaces.ts';

type Db = CommonQueryMethods;

export const inboxPageSize = 25;

/** What the inbox's filter form sends; every field optional, empty strings meaning "any". */
export const inboxQuerySchema = z.strictObject({
  workspaceId: z.preprocess((v) => (v === '' ? undefined : v), z.uuid().optional()),
  state: z.preprocess((v) => (v === '' ? undefined : v), z.union([proposalStateSchema, z.literal('any')]).default('pending_review')),
  bridge: z.preprocess((v) => (v === '' ? undefined : v), bridgeNameSchema.optional()),
  sort: z.preprocess((v) => (v === '' ? undefined : v), z.enum(proposalOrders).default('newest')),
  cursor: z.string().max(512).optional(),
});
export type InboxQuery = z.infer<typeof inboxQuerySchema>;

export const reviewerWorkspaceSchema = z.object({ id: z.uuid(), name: z.string(), role: z.string(), permissions: z.array(permissionSchema) });
export type ReviewerWorkspace = z.infer<typeof reviewerWorkspaceSchema>;

/** Why this account cannot decide a proposal (the domain rule's refusal), or null when it can. */
export const standingSchema = z.object({
  canDecide: z.boolean(),
  refusal: z.object({ code: z.enum(['self_approval_forbidden', 'permission_denied']), message: z.string() }).nullable(),
});

/** What a proposal touches: its first target and how many more (a transaction's), and its size. */
export const changeScopeSchema = z.object({
  firstTarget: z.string().nullable().describe('The first note path it writes, the memory scope it promotes into, or null.'),
  moreTargets: z.number().int(),
  notes: z.number().int().describe('Notes it writes (0 for shared memory).'),
  bytes: z.number().int().describe('UTF-8 bytes of the content it carries.'),
});

export const inboxItemSchema = proposalSchema.extend({
  workspaceName: z.string(),
  /** The proposer's display name in the workspace; null for a Product Runtime installation or a former member. */
  proposerName: z.string().nullable(),
  scope: changeScopeSchema,
  standing: standingSchema,
});
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const inboxSchema = z.object({
  filters: z.object({ workspaceId: z.uuid().nullable(), state: z.union([proposalStateSchema, z.literal('any')]), bridge: z.string().nullable(), sort: z.enum(proposalOrders) }),
  workspaces: z.array(reviewerWorkspaceSchema),
  bridges: z.array(z.string()).describe('Bridges that proposed anything in these workspaces, for the filter.'),
  proposals: z.array(inboxItemSchema),
  nextCursor: z.string().nullable(),
});
export type Inbox = z.infer<typeof inboxSchema>;

/** The account's workspaces where it may see proposals, by name. */
export async function reviewerWorkspaces(db: Db, accountId: string): Promise<readonly ReviewerWorkspace[]> {
  return db.any(sql.type(reviewerWorkspaceSchema)`
    SELECT w.id, w.name, r.name AS role, r.permissions
      FROM workspace_members m
      JOIN workspaces w ON w.id = m.workspace_id
      JOIN workspace_roles r ON r.id = m.role_id
     WHERE m.account_id = ${accountId} AND 'automation.view' = ANY (r.permissions)
     ORDER BY lower(w.name), w.id`);
}

const cursorSchema = z.object({ at: z.string(), id: z.uuid() });

/**
 * One page of the inbox. A workspace filter naming a workspace the account cannot see gives an
 * empty page, exactly like a workspace without proposals (existence is never revealed).
 */
export async function readInbox(db: Db, accountId: string, query: InboxQuery, limit = inboxPageSize): Promise<Inbox> {
  const workspaces = [...(await reviewerWorkspaces(db, accountId))];
  const visible = query.workspaceId ? workspaces.filter((w) => w.id === query.workspaceId) : workspaces;
  const before = query.cursor ? decodeCursor(query.cursor, cursorSchema) : undefined;
  const rows = await listProposals(db, {
    workspaceIds: visible.map((w) => w.id),
    state: query.state === 'any' ? undefined : query.state,
    bridge: query.bridge,
    order: query.sort,
    limit: limit + 1,
    before,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const byId = new Map(workspaces.map((w) => [w.id, w]));
  const [names, bridges] = await Promise.all([proposerNames(db, page), bridgesOf(db, workspaces.map((w) => w.id))]);
  const proposals = page.map((proposal) => {
    const workspace = byId.get(proposal.workspaceId)!;
    return {
      ...proposal,
      workspaceName: workspace.name,
      proposerName: (proposal.proposerAccountId && names.get(`${proposal.workspaceId}:${proposal.proposerAccountId}`)) ?? null,
      scope: changeScope(proposal),
      standing: standingOf(proposal, accountId, workspace.permissions),
    };
  });
  return {
    filters: { workspaceId: query.workspaceId ?? null, state: query.state, bridge: query.bridge ?? null, sort: query.sort },
    workspaces,
    bridges,
    proposals,
    nextCursor: rows.length > limit && last ? encodeCursor(keysetOf(last, query.sort)) : null,
  };
}

/** What a proposal touches and how big it is, from its action (the catalog's reading of it). */
export function changeScope(proposal: Pick<Proposal, 'action'>): z.infer<typeof changeScopeSchema> {
  const parsed = actionSchema.safeParse(proposal.action);
  if (!parsed.success) return { firstTarget: null, moreTargets: 0, notes: 0, bytes: 0 };
  const action = parsed.data;
  if (!isNoteAction(action)) return { firstTarget: action.scopeId, moreTargets: 0, notes: 0, bytes: contentBytes(action.content) };
  const writes = toTransaction(action);
  return { firstTarget: writes[0]?.path ?? null, moreTargets: Math.max(0, writes.length - 1), notes: writes.length, bytes: writes.reduce((sum, w) => sum + contentBytes(w.content), 0) };
}

/** Display names of the page's proposers who are members of the proposal's workspace, by "workspace:account". */
async function proposerNames(db: Db, proposals: readonly Proposal[]): Promise<Map<string, string>> {
  const pairs = proposals.filter((p) => p.proposerAccountId);
  if (pairs.length === 0) return new Map();
  const rows = await db.any(sql.type(z.object({ workspaceId: z.uuid(), accountId: z.uuid(), displayName: z.string() }))`
    SELECT m.workspace_id AS "workspaceId", a.id AS "accountId", a.display_name AS "displayName"
      FROM unnest(${sql.array(pairs.map((p) => p.workspaceId), 'uuid')}::uuid[], ${sql.array(pairs.map((p) => p.proposerAccountId!), 'uuid')}::uuid[]) AS w(workspace_id, account_id)
      JOIN workspace_members m ON m.workspace_id = w.workspace_id AND m.account_id = w.account_id
      JOIN accounts a ON a.id = m.account_id`);
  return new Map(rows.map((r) => [`${r.workspaceId}:${r.accountId}`, r.displayName]));
}

/** Whether the account may decide (approve, reject, undo) a proposal: `decisionRefusal`, as the API applies it. */
export function standingOf(proposal: { proposerAccountId: string | null; actingForAccountId: string | null }, accountId: string, permissions: readonly string[]) {
  const refusal = decisionRefusal(proposal, { accountId, actingForAccountId: null, permissions });
  return { canDecide: refusal === null, refusal };
}

async function bridgesOf(db: Db, workspaceIds: readonly string[]): Promise<string[]> {
  if (workspaceIds.length === 0) return [];
  const rows = await db.any(sql.type(z.object({ bridge: z.string() }))`
    SELECT DISTINCT p.bridge FROM action_proposals p WHERE p.workspace_id = ANY (${sql.array([...workspaceIds], 'uuid')}) ORDER BY p.bridge LIMIT 100`);
  return rows.map((r) => r.bridge);
}

export const nextToReviewSchema = z.object({ id: z.uuid(), summary: z.string(), actionKind: z.string(), bridge: z.string() }).nullable();

/**
 * The proposal this account would review next: the newest waiting for review, other than `exceptId`,
 * that it may decide (the domain's rule, as the inbox shows it), or null when none is left.
 */
export async function nextToReview(db: Db, accountId: string, exceptId: string): Promise<z.infer<typeof nextToReviewSchema>> {
  const workspaces = (await reviewerWorkspaces(db, accountId)).filter((w) => w.permissions.includes('automation.review'));
  const permissionsOf = new Map(workspaces.map((w) => [w.id, w.permissions]));
  let before: { at: string; id: string } | undefined;
  // A few pages at most: proposals this account may not decide (its own) are skipped.
  for (let page = 0; page < 5; page++) {
    const rows = await listProposals(db, { workspaceIds: workspaces.map((w) => w.id), state: 'pending_review', limit: 50, before });
    const next = rows.find((p) => p.id !== exceptId && standingOf(p, accountId, permissionsOf.get(p.workspaceId) ?? []).canDecide);
    if (next) return { id: next.id, summary: next.summary, actionKind: next.actionKind, bridge: next.bridge };
    const last = rows[rows.length - 1];
    if (rows.length < 50 || !last) return null;
    before = keysetOf(last, 'newest');
  }
  return null;
}
