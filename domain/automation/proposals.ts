// Action proposals, stored: a proposal names a bounded action from the catalog (catalog.ts) for a
// reviewer to approve or reject. This module reads and creates them; where a proposal is and how it
// moves is proposal-states.ts, policy.ts opens the review, forge.ts executes and undoes.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { admitToWorkspaceObject, memberPermissionsOf, memberPermissionsSchema } from '../identity/workspaces.ts';
import type { Permission } from '../identity/workspaces.ts';
import type { ProposedAction } from './catalog.ts';
import { proposalStateSchema } from './proposal-states.ts';
import type { ProposalState } from './proposal-states.ts';
import { reviewStart, reviewWorkflowId } from './workflow-ids.ts';
import { recordStartIntents } from '../workflow-intents.ts';

type Db = CommonQueryMethods;

/** A bridge's name: the external system proposing (e.g. "graph-provider", "zapier"). */
export const bridgeNameSchema = z.string().regex(/^[a-z][a-z0-9-]{1,62}$/);

export const proposalSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  /** The account that proposed it; null when a Product Runtime service principal did (proposerPrincipalId). */
  proposerAccountId: z.uuid().nullable(),
  proposerPrincipalId: z.uuid().nullable(),
  actingForAccountId: z.uuid().nullable(),
  bridge: z.string(),
  actionKind: z.string(),
  action: z.record(z.string(), z.unknown()),
  summary: z.string(),
  state: proposalStateSchema,
  reviewerAccountId: z.uuid().nullable(),
  decisionReason: z.string().nullable(),
  expiresAt: isoTimestamp,
  workflowId: z.string(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Proposal = z.infer<typeof proposalSchema>;

/** The columns of `proposalSchema`, from `action_proposals p`: for a reader that adds its own beside them. */
export const proposalColumns = sql.fragment`p.id, p.workspace_id AS "workspaceId", p.proposer_account_id AS "proposerAccountId", p.proposer_principal_id AS "proposerPrincipalId",
  p.acting_for_account_id AS "actingForAccountId", p.bridge, p.action_kind AS "actionKind", p.action, p.summary, p.state,
  p.reviewer_account_id AS "reviewerAccountId", p.decision_reason AS "decisionReason", p.expires_at AS "expiresAt",
  p.workflow_id AS "workflowId", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

/** Who proposes: an account (the automation gateway) or a Product Runtime service principal (a memory candidate). */
export type Proposer = { kind: 'account'; id: string } | { kind: 'service_principal'; id: string };

export type NewProposal = { id: string; workspaceId: string; proposer: Proposer; actingForAccountId: string | null; bridge: string; action: ProposedAction; summary: string; expiresInSeconds: number };

/**
 * Stores a proposal, `proposed`, with its review's start recorded. Interfaces submit proposals with
 * their review opened (policy.ts submitProposal); this alone leaves opening to the review workflow.
 */
export async function insertProposal(tx: Db, input: NewProposal): Promise<Proposal> {
  const accountId = input.proposer.kind === 'account' ? input.proposer.id : null;
  const principalId = input.proposer.kind === 'service_principal' ? input.proposer.id : null;
  const proposal = await tx.one(sql.type(proposalSchema)`
    WITH inserted AS (
      INSERT INTO action_proposals AS p (id, workspace_id, proposer_account_id, proposer_principal_id, acting_for_account_id, bridge, action_kind, action, summary, expires_at, workflow_id)
      VALUES (${input.id}, ${input.workspaceId}, ${accountId}, ${principalId}, ${input.actingForAccountId}, ${input.bridge}, ${input.action.kind},
              ${sql.jsonb(input.action as never)}, ${input.summary}, now() + make_interval(secs => ${input.expiresInSeconds}), ${reviewWorkflowId(input.id)})
      RETURNING *
    ), history AS (
      INSERT INTO action_proposal_history (proposal_id, state, actor_account_id, detail)
      SELECT id, 'proposed', ${accountId}::uuid,
             jsonb_build_object('bridge', ${input.bridge}::text) || CASE WHEN ${principalId}::uuid IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('proposerPrincipalId', ${principalId}::uuid) END
        FROM inserted
    )
    SELECT ${proposalColumns} FROM inserted p`);
  // Every proposal enters review: its start is recorded with it (the outbox), so a review can never
  // be lost between this commit and Temporal, whoever inserted the proposal.
  await recordStartIntents(tx, [reviewStart(proposal.id)]);
  return proposal;
}

export async function getProposal(db: Db, id: string): Promise<Proposal | null> {
  return db.maybeOne(sql.type(proposalSchema)`SELECT ${proposalColumns} FROM action_proposals p WHERE p.id = ${id}`);
}

/**
 * The proposal, if the account's role in its workspace has `permission`; a stranger's or a missing
 * one is 404 `proposal_not_found`. One statement: the proposal and the reader's permissions.
 */
export async function visibleProposal(db: Db, id: string, accountId: string, permission: Permission): Promise<{ object: Proposal; permissions: Permission[] }> {
  return readVisible(db, proposalSchema, sql.fragment``, id, accountId, permission);
}

/** One proposal read with `columns` beside its own, and the reader's permissions, admitted as visibleProposal says. */
async function readVisible<T extends Proposal>(db: Db, schema: z.ZodType<T>, columns: ReturnType<typeof sql.fragment>, id: string, accountId: string, permission: Permission) {
  const row = await db.maybeOne(sql.type(z.intersection(schema, z.object({ permissions: memberPermissionsSchema })))`
    SELECT ${proposalColumns}${columns}, ${memberPermissionsOf(sql.fragment`p.workspace_id`, accountId)} AS permissions FROM action_proposals p WHERE p.id = ${id}`);
  const { permissions = null, ...object } = row ?? {};
  return admitToWorkspaceObject(row ? (object as T) : null, permissions, permission, () => new AppError('proposal_not_found', undefined, { extensions: { proposalId: id } }));
}

/** The orders proposals are listed in: newest or oldest first, or the soonest to expire first. */
export const proposalOrders = ['newest', 'oldest', 'expiring'] as const;
export type ProposalOrder = (typeof proposalOrders)[number];

/** Where a page of proposals ends: the last one's sort key (to the millisecond) and id. */
export type ProposalKeyset = { at: string; id: string };

/**
 * Proposals of the given workspaces, in `order` (newest first unless said), optionally in one
 * state and from one bridge; the caller has checked that its account may see every workspace
 * listed. `before` is the keyset of the previous page's last proposal (`keysetOf`).
 */
export async function listProposals(
  db: Db,
  input: {
    workspaceIds: readonly string[];
    state?: ProposalState | undefined;
    bridge?: string | undefined;
    limit: number;
    order?: ProposalOrder | undefined;
    before?: ProposalKeyset | undefined;
  },
) {
  if (input.workspaceIds.length === 0) return [];
  const order = input.order ?? 'newest';
  // Cursors carry milliseconds (what the API returns), so order at that precision too.
  const key = order === 'expiring' ? sql.fragment`date_trunc('milliseconds', p.expires_at)` : sql.fragment`date_trunc('milliseconds', p.created_at)`;
  const after = input.before
    ? order === 'newest'
      ? sql.fragment`AND (${key}, p.id) < (${input.before.at}::timestamptz, ${input.before.id}::uuid)`
      : sql.fragment`AND (${key}, p.id) > (${input.before.at}::timestamptz, ${input.before.id}::uuid)`
    : sql.fragment``;
  const direction = order === 'newest' ? sql.fragment`DESC` : sql.fragment`ASC`;
  return db.any(sql.type(proposalSchema)`
    SELECT ${proposalColumns} FROM action_proposals p
     WHERE p.workspace_id = ANY (${sql.array([...input.workspaceIds], 'uuid')})
       ${input.state ? sql.fragment`AND p.state = ${input.state}` : sql.fragment``}
       ${input.bridge ? sql.fragment`AND p.bridge = ${input.bridge}` : sql.fragment``}
       ${after}
     ORDER BY ${key} ${direction}, p.id ${direction}
     LIMIT ${input.limit}`);
}

/** The keyset a page in `order` ends at, for the next page's `before`. */
export function keysetOf(proposal: Proposal, order: ProposalOrder): ProposalKeyset {
  return { at: order === 'expiring' ? proposal.expiresAt : proposal.createdAt, id: proposal.id };
}

export const historyEntrySchema = z.object({ state: z.string(), occurredAt: isoTimestamp, actorAccountId: z.uuid().nullable(), detail: z.record(z.string(), z.unknown()) });
const historyColumns = sql.fragment`h.state, h.occurred_at AS "occurredAt", h.actor_account_id AS "actorAccountId", h.detail`;

/** The proposal's audit trail: every state it entered, oldest first. */
export async function proposalHistory(db: Db, id: string) {
  return db.any(sql.type(historyEntrySchema)`SELECT ${historyColumns} FROM action_proposal_history h WHERE h.proposal_id = ${id} ORDER BY h.id`);
}

/** A Forge execution of the proposal (forge.ts) as readers see it: its undo plan, receipt or error. */
export const executionSchema = z.object({
  kind: z.enum(['apply', 'undo']),
  state: z.enum(['running', 'succeeded', 'failed']),
  undoPlan: z.unknown(),
  receipt: z.unknown(),
  error: z.unknown(),
  attempts: z.number(),
  startedAt: isoTimestamp,
  finishedAt: isoTimestamp.nullable(),
});
const executionColumns = sql.fragment`f.kind, f.state, f.undo_plan AS "undoPlan", f.receipt, f.error, f.attempts, f.started_at AS "startedAt", f.finished_at AS "finishedAt"`;

/** The proposal's Forge executions, oldest first. */
export async function proposalExecutions(db: Db, proposalId: string) {
  return db.any(sql.type(executionSchema)`SELECT ${executionColumns} FROM forge_executions f WHERE f.proposal_id = ${proposalId} ORDER BY f.started_at`);
}

export const proposalRecordSchema = proposalSchema.extend({ history: z.array(historyEntrySchema), executions: z.array(executionSchema) });
/** A proposal with its audit trail (every state, oldest first) and its Forge executions (oldest first). */
export type ProposalRecord = z.infer<typeof proposalRecordSchema>;

/**
 * visibleProposal with the proposal's history and executions, the whole record a reader is shown,
 * in one statement (the automation gateway's GET, each read of a blocking read, the console's page).
 */
export async function visibleProposalRecord(db: Db, id: string, accountId: string, permission: Permission): Promise<{ object: ProposalRecord; permissions: Permission[] }> {
  return readVisible(
    db,
    proposalRecordSchema,
    sql.fragment`,
           (SELECT coalesce(jsonb_agg(to_jsonb(e) - 'seq' ORDER BY e.seq), '[]') FROM (SELECT h.id AS seq, ${historyColumns} FROM action_proposal_history h WHERE h.proposal_id = p.id) e) AS history,
           (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e."startedAt"), '[]') FROM (SELECT ${executionColumns} FROM forge_executions f WHERE f.proposal_id = p.id) e) AS executions`,
    id,
    accountId,
    permission,
  );
}
