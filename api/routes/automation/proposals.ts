// Action proposals: propose, list, read with history, approve/reject (a Workflow Update), undo.
// Proposal state lives in Postgres and is written only through domain/automation/proposal-states.ts
// (by the workflows' activities, and the undo claim here); decisions go to the proposal's review
// workflow, whose validator applies the same rule as the pre-check here (review-rules.ts).
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { noteActionSchema } from '../../../domain/automation/catalog.ts';
import { executionSchema, proposalExecutions } from '../../../domain/automation/forge.ts';
import { claimUndo, proposalStateSchema, releaseUndo } from '../../../domain/automation/proposal-states.ts';
import { getProposal, historyEntrySchema, insertProposal, listProposals, proposalHistory, proposalSchema } from '../../../domain/automation/proposals.ts';
import { decisionRefusal } from '../../../domain/automation/review-rules.ts';
import { AppError } from '../../../domain/errors.ts';
import { claimIdempotencyKey, storeIdempotentResponse } from '../../../domain/idempotency.ts';
import { authorizeInWorkspace, memberPermissions, requireWorkspacePermission } from '../../../domain/identity/workspaces.ts';
import type { Permission } from '../../../domain/identity/workspaces.ts';
import { decideUpdate } from '../../../workflows/proposal-review.ts';
import { principalOf } from '../../auth.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import { startReview, startUndo } from './workflow-starts.ts';
import { idempotencyScope, restCaller } from '../shared/vault-calls.ts';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';

export type ProposalDeps = { db: DatabasePool; temporal: Client; taskQueue: string; defaultExpirySeconds: number };

const MAX_EXPIRY_SECONDS = 30 * 24 * 3600;
const security = [{ bearerAuth: [] }];
const tags = ['automation'];

const proposalBody = z.strictObject({
  workspaceId: z.uuid(),
  bridge: z.string().regex(/^[a-z][a-z0-9-]{1,62}$/).describe('The external bridge proposing, e.g. "graph-provider" or "zapier".'),
  action: noteActionSchema.describe('A bounded note action from GET /api/dev/automation/catalog (memory.promote is proposed only by products, through the Product Runtime).'),
  summary: z.string().max(2000).default(''),
  actingForAccountId: z.uuid().optional().describe('The person an agent proposes on behalf of; they cannot approve it either.'),
  expiresInSeconds: z.number().int().min(1).max(MAX_EXPIRY_SECONDS).optional().describe('Unreviewed proposals expire (default 7 days).'),
});

const proposalView = proposalSchema.extend({ history: z.array(historyEntrySchema).optional(), executions: z.array(executionSchema).optional() }).meta({ id: 'ActionProposal' });

/** The proposal, if the caller's role in its workspace has `permission`; a stranger gets 404. */
function visibleProposal(db: DatabasePool, id: string, accountId: string, permission: Permission) {
  return getProposal(db, id).then((proposal) =>
    authorizeInWorkspace(db, proposal, accountId, permission, () => new AppError('proposal_not_found', undefined, { extensions: { proposalId: id } })),
  );
}

export const proposalRoutes: FastifyPluginAsyncZod<ProposalDeps> = async (app, deps) => {
  const { db, temporal, taskQueue } = deps;

  app.post(
    '/proposals',
    {
      schema: {
        tags,
        security,
        operationId: 'createProposal',
        summary: 'Propose a bounded action (needs automation.manage; Idempotency-Key required)',
        description:
          'Stores the proposal and starts its review workflow. A proposal is never approval or execution. Answers 201 with Location (the proposal); ' +
          'the same Idempotency-Key with the same body replays the first answer (Idempotent-Replayed: true).',
        body: proposalBody,
        response: { 201: proposalView },
        problems: ['workspace_not_found', 'permission_denied', 'idempotency_key_required', 'invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_in_flight'],
      },
    },
    async (request, reply) => {
      const { account } = principalOf(request);
      const body = request.body;
      await requireWorkspacePermission(db, body.workspaceId, account.id, 'automation.manage');
      if (body.actingForAccountId && !(await memberPermissions(db, body.workspaceId, body.actingForAccountId))) {
        throw new AppError('invalid_request', 'actingForAccountId must be a member of the workspace.', { extensions: { errors: [{ pointer: '/body/actingForAccountId', message: 'not a member' }] } });
      }
      const idempotency = idempotencyScope(restCaller(request), 'POST /api/dev/automation/proposals', body.workspaceId, idempotencyKeyHeader(request), body);
      const result = await db.transaction(async (tx) => {
        const stored = await claimIdempotencyKey(tx, idempotency);
        if (stored) return { proposal: proposalSchema.parse(stored.body), replayed: true };
        const proposal = await insertProposal(tx, {
          id: randomUUID(),
          workspaceId: body.workspaceId,
          proposer: { kind: 'account', id: account.id },
          actingForAccountId: body.actingForAccountId ?? null,
          bridge: body.bridge,
          action: body.action,
          summary: body.summary,
          expiresInSeconds: body.expiresInSeconds ?? deps.defaultExpirySeconds,
        });
        await storeIdempotentResponse(tx, idempotency, { status: 201, body: proposal, etag: null });
        return { proposal, replayed: false };
      });
      // A replay only (re)starts the review while the proposal has not entered it yet.
      const current = result.replayed ? await getProposal(db, result.proposal.id) : result.proposal;
      if (current?.state === 'proposed') await startReview(temporal, taskQueue, current);
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).header('location', `${app.prefix}/proposals/${result.proposal.id}`).send(result.proposal);
    },
  );

  app.get(
    '/proposals',
    {
      schema: {
        tags,
        security,
        operationId: 'listProposals',
        summary: "A workspace's proposals, newest first, filtered by state (needs automation.view)",
        description: 'Pass nextCursor back as cursor for the next page; it is null on the last page. Cursors are opaque.',
        querystring: z.strictObject({
          workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.'),
          state: proposalStateSchema.optional().describe('Only proposals in this state.'),
          limit: z.coerce.number().int().min(1).max(200).default(50).describe('Proposals per page, at most 200.'),
          cursor: z.string().max(512).optional().describe('nextCursor of the previous page.'),
        }),
        response: { 200: z.object({ proposals: z.array(proposalSchema), nextCursor: z.string().nullable() }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const q = request.query;
      await requireWorkspacePermission(db, q.workspaceId, principalOf(request).account.id, 'automation.view');
      let before: { createdAt: string; id: string } | undefined;
      if (q.cursor) before = decodeCursor(q.cursor, z.object({ createdAt: z.string(), id: z.uuid() }));
      const rows = await listProposals(db, { workspaceId: q.workspaceId, state: q.state, limit: q.limit + 1, before });
      const proposals = rows.slice(0, q.limit);
      const last = proposals[proposals.length - 1];
      return { proposals, nextCursor: rows.length > q.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
    },
  );

  app.get(
    '/proposals/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'readProposal',
        summary: 'One proposal with its history, undo plan and receipts (needs automation.view)',
        description: 'history is the audit trail (every state with actor and detail); executions hold the undo plan, the receipt and any error of each Forge execution.',
        params: z.object({ id: z.uuid().describe('The proposal id.') }),
        response: { 200: proposalView },
        problems: ['proposal_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { object: proposal } = await visibleProposal(db, request.params.id, principalOf(request).account.id, 'automation.view');
      return { ...proposal, history: [...(await proposalHistory(db, proposal.id))], executions: [...(await proposalExecutions(db, proposal.id))] };
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/proposals/:id/${decision}`,
      {
        schema: {
          tags,
          security,
          operationId: decision === 'approve' ? 'approveProposal' : 'rejectProposal',
          summary: `${decision === 'approve' ? 'Approve' : 'Reject'} a pending proposal (needs automation.review; never the proposer)`,
          description:
            decision === 'approve'
              ? 'Approval starts the Forge execution; read the proposal to follow it to executed and its receipt. The proposer, the person it acts for, and anyone acting for either are refused (403 self_approval_forbidden).'
              : 'A rejected proposal is never executed. The proposer, the person it acts for, and anyone acting for either are refused (403 self_approval_forbidden).',
          params: z.object({ id: z.uuid().describe('The proposal id.') }),
          body: z.strictObject({ reason: z.string().max(2000).optional(), actingForAccountId: z.uuid().optional() }).default({}),
          response: { 200: z.object({ id: z.uuid(), state: z.enum(['approved', 'rejected']) }) },
          problems: ['proposal_not_found', 'permission_denied', 'self_approval_forbidden', 'proposal_not_pending'],
        },
      },
      async (request) => {
        const { account } = principalOf(request);
        const { object: proposal, permissions } = await visibleProposal(db, request.params.id, account.id, 'automation.view');
        const reviewer = { accountId: account.id, actingForAccountId: request.body.actingForAccountId ?? null, permissions };
        const refusal = decisionRefusal(proposal, reviewer);
        if (refusal) throw new AppError(refusal.code, refusal.message);
        if (proposal.state !== 'pending_review') throw new AppError('proposal_not_pending', `The proposal is ${proposal.state}.`, { extensions: { state: proposal.state } });
        try {
          const outcome = await temporal.workflow
            .getHandle(proposal.workflowId)
            .executeUpdate(decideUpdate, { args: [{ decision, reviewer, reason: request.body.reason ?? null }] });
          return { id: proposal.id, state: outcome.state };
        } catch (error) {
          // The validator is the second line: it refuses the same things, and a late decision.
          if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
            const code = error.cause.type === 'self_approval_forbidden' || error.cause.type === 'permission_denied' ? error.cause.type : 'proposal_not_pending';
            throw new AppError(code, error.cause.message);
          }
          throw error;
        }
      },
    );
  }

  app.post(
    '/proposals/:id/undo',
    {
      schema: {
        tags,
        security,
        operationId: 'undoProposal',
        summary: 'Undo an executed proposal: a new compensating Forge execution (needs automation.review)',
        description:
          'Restores the revisions recorded in the undo plan through the knowledge core, on condition that the notes are still what Forge left. Answers 202: the undo runs on Temporal; ' +
          'read the proposal to follow it to undone (a failed undo returns it to executed).',
        params: z.object({ id: z.uuid().describe('The proposal id.') }),
        response: { 202: z.object({ id: z.uuid(), state: z.literal('undoing'), workflowId: z.string() }) },
        problems: ['proposal_not_found', 'permission_denied', 'self_approval_forbidden', 'proposal_not_executed'],
      },
    },
    async (request, reply) => {
      const { account } = principalOf(request);
      const { object: proposal, permissions } = await visibleProposal(db, request.params.id, account.id, 'automation.review');
      // Undoing is a decision too: never the proposer or anyone acting for them.
      const refusal = decisionRefusal(proposal, { accountId: account.id, actingForAccountId: null, permissions });
      if (refusal) throw new AppError(refusal.code, refusal.message);
      // Claimed in Postgres first (the domain's compare-and-set), so two undo requests cannot both
      // start one, and readers see undoing at once; each claim names its own undo workflow.
      const workflowId = await claimUndo(db, proposal.id, account.id);
      if (!workflowId) throw new AppError('proposal_not_executed', `The proposal is ${proposal.state}.`, { extensions: { state: proposal.state } });
      try {
        await startUndo(temporal, taskQueue, proposal, workflowId, account.id);
      } catch (error) {
        await releaseUndo(db, proposal.id);
        throw error;
      }
      return reply.code(202).send({ id: proposal.id, state: 'undoing' as const, workflowId });
    },
  );
};
