// The reviewer's inbox: proposals across every workspace where the account may see them
// (automation.view), filtered by workspace, state and bridge, newest first, a keyset page at a
// time. Each proposal says whether this account may decide it and, if not, why: the domain's own
// rule (review-rules.ts), never a second one. The zod schemas here are the page's JSON.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { proposalStateSchema } from '../automation/proposal-states.ts';
import { bridgeNameSchema, listProposals, proposalSchema } from '../automation/proposals.ts';
import { decisionRefusal } from '../automation/review-rules.ts';
import { permissionSchema } from '../identity/workspaces.ts';

type Db = CommonQueryMethods;

export const inboxPageSize = 25;

/** What the inbox's filter form sends; every field optional, empty strings meaning "any". */
export const inboxQuerySchema = z.strictObject({
  workspaceId: z.preprocess((v) => (v === '' ? undefined : v), z.uuid().optional()),
  state: z.preprocess((v) => (v === '' ? undefined : v), z.union([proposalStateSchema, z.literal('any')]).default('pending_review')),
  bridge: z.preprocess((v) => (v === '' ? undefined : v), bridgeNameSchema.optional()),
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

export const inboxItemSchema = proposalSchema.extend({ workspaceName: z.string(), standing: standingSchema });
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const inboxSchema = z.object({
  filters: z.object({ workspaceId: z.uuid().nullable(), state: z.union([proposalStateSchema, z.literal('any')]), bridge: z.string().nullable() }),
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

const cursorSchema = z.object({ createdAt: z.string(), id: z.uuid() });

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
    limit: limit + 1,
    before,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const byId = new Map(workspaces.map((w) => [w.id, w]));
  const proposals = page.map((proposal) => {
    const workspace = byId.get(proposal.workspaceId)!;
    return { ...proposal, workspaceName: workspace.name, standing: standingOf(proposal, accountId, workspace.permissions) };
  });
  return {
    filters: { workspaceId: query.workspaceId ?? null, state: query.state, bridge: query.bridge ?? null },
    workspaces,
    bridges: await bridgesOf(db, workspaces.map((w) => w.id)),
    proposals,
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
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
