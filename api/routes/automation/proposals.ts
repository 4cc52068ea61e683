// Action proposals: propose, list, read with history, approve/reject (a Workflow Update), undo.
// Proposal state lives in Postgres and is written only through domain/automation/proposal-states.ts
// (by the workflows' activities, and the undo claim here); decisions go to the proposal's review
// workflow, whose validator applies the same rule as the pre-check here (review-rules.ts).
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { noteActionSchema } from '../../../domain/automation/catalog.ts';
import { proposalStates, proposalStateSchema } from '../../../domain/automation/proposal-states.ts';
import { bridgeNameSchema, executionSchema, getProposal, visibleProposal, visibleProposalRecord, historyEntrySchema, listProposals, proposalSchema } from '../../../domain/automation/proposals.ts';
import { previewProposal, proposalPreviewSchema } from '../../../domain/automation/preview.ts';
import { AppError } from '../../../domain/errors.ts';
import { claimIdempotencyKey, storeIdempotentResponse } from '../../../domain/idempotency.ts';
import { memberPermissions, requireWorkspacePermission } from '../../../domain/identity/workspaces.ts';
import { principalOf } from '../../auth.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import { startSubmittedReview } from '../shared/workflow-starts.ts';
import { submitProposal } from '../../../domain/automation/policy.ts';
import { decisionReasonMaxChars } from '../../../domain/automation/review-rules.ts';
import type { WorkflowStarter } from '../shared/workflow-starts.ts';
import { decideProposal, undoProposal } from '../shared/proposal-decisions.ts';
import { idempotencyScope, restCaller } from '../shared/vault-calls.ts';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { PROPOSAL_WAIT_MAX_SECONDS } from '../../../domain/automation/proposal-waits.ts';
import type { ProposalWaits } from '../../../domain/automation/proposal-waits.ts';

export type ProposalDeps = { db: DatabasePool; starter: WorkflowStarter; defaultExpirySeconds: number; waits: ProposalWaits };

const MAX_EXPIRY_SECONDS = 30 * 24 * 3600;
const security = [{ bearerAuth: [] }];
const tags = ['automation'];

/**
 * The states a follower waits out: the one last seen, or several comma-separated (`approved,executing`
 * follows an approval to its outcome in one request).
 */
const anyState = `(${proposalStates.join('|')})`;
const statesWaitedOut = z
  .string()
  .regex(new RegExp(`^${anyState}(,${anyState})*$`), `one or more of ${proposalStates.join(', ')}, comma-separated`)
  .transform((list) => list.split(','))
  // Cannot fail after the pattern; it gives the members their type.
  .pipe(z.array(proposalStateSchema));

const proposalBody = z.strictObject({
  workspaceId: z.uuid(),
  bridge: bridgeNameSchema.describe('The external bridge proposing, e.g. "graph-provider" or "zapier".'),
  action: noteActionSchema.describe('A bounded note action from GET /api/dev/automation/catalog (memory.promote is proposed only by products, through the Product Runtime).'),
  summary: z.string().max(2000).default(''),
  actingForAccountId: z.uuid().optional().describe('The person an agent proposes on behalf of; they cannot approve it either.'),
  expiresInSeconds: z.number().int().min(1).max(MAX_EXPIRY_SECONDS).optional().describe('Unreviewed proposals expire (default 7 days).'),
});

const proposalView = proposalSchema.extend({ history: z.array(historyEntrySchema).optional(), executions: z.array(executionSchema).optional() }).meta({ id: 'ActionProposal' });

export const proposalRoutes: FastifyPluginAsyncZod<ProposalDeps> = async (app, deps) => {
  const { db } = deps;

  app.post(
    '/proposals',
    {
      schema: {
        tags,
        security,
        operationId: 'createProposal',
        summary: 'Propose a bounded action (needs automation.manage; Idempotency-Key required)',
        description:
          'Stores the proposal with its review opened and starts its review workflow. Policy is applied first: the answer is pending_review, or rejected ' +
          'with the reason in decisionReason (a kind outside the catalog, a target outside the workspace, content over the limits). ' +
          'A proposal is never approval or execution. Answers 201 with Location (the proposal); ' +
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
        const proposal = await submitProposal(tx, {
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
      // The review was recorded with the proposal: tried now, else started by the relay.
      const current = result.replayed ? await getProposal(db, result.proposal.id) : result.proposal;
      if (current) await startSubmittedReview(deps.starter, current, result.replayed, request.log);
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
        summary: "A workspace's proposals, newest first, filtered by state and bridge (needs automation.view)",
        description: 'Pass nextCursor back as cursor for the next page; it is null on the last page. Cursors are opaque.',
        querystring: z.strictObject({
          workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.'),
          state: proposalStateSchema.optional().describe('Only proposals in this state.'),
          bridge: bridgeNameSchema.optional().describe('Only proposals from this bridge.'),
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
      let before: { at: string; id: string } | undefined;
      if (q.cursor) {
        const cursor = decodeCursor(q.cursor, z.object({ createdAt: z.string(), id: z.uuid() }));
        before = { at: cursor.createdAt, id: cursor.id };
      }
      const rows = await listProposals(db, { workspaceIds: [q.workspaceId], state: q.state, bridge: q.bridge, limit: q.limit + 1, before });
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
        summary: 'One proposal with its history, undo plan and receipts (needs automation.view); with changedFrom, a blocking read',
        description:
          'history is the audit trail (every state with actor and detail); executions hold the undo plan, the receipt and any error of each Forge execution. ' +
          'To follow a proposal without polling, pass the state you last saw as changedFrom: the answer comes as soon as the proposal is in another state, or ' +
          `after wait seconds (default 20, at most ${PROPOSAL_WAIT_MAX_SECONDS}) with the state unchanged. It may come earlier (the server is busy or shutting down), ` +
          'so compare the state and ask again. changedFrom may list several states, comma-separated, to wait them all out: changedFrom=approved,executing ' +
          'answers with the outcome of an approval (executed or failed). One request, charged once, however long it waits.',
        params: z.object({ id: z.uuid().describe('The proposal id.') }),
        querystring: z
          .strictObject({
            changedFrom: statesWaitedOut
              .optional()
              .describe('Answer once the proposal is in none of these states: the state you last saw, or several comma-separated (e.g. approved,executing).'),
            wait: z.coerce.number().int().min(1).max(PROPOSAL_WAIT_MAX_SECONDS).optional().describe(`Seconds to wait for the change, 1–${PROPOSAL_WAIT_MAX_SECONDS} (default 20); only with changedFrom.`),
          })
          .refine((q) => q.wait === undefined || q.changedFrom !== undefined, { message: 'wait needs changedFrom', path: ['wait'] }),
        response: { 200: proposalView },
        problems: ['proposal_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const accountId = principalOf(request).account.id;
      // Every read is authorized: a member who loses access while waiting is refused, not answered.
      const read = async () => (await visibleProposalRecord(db, request.params.id, accountId, 'automation.view')).object;
      const { changedFrom, wait = 20 } = request.query;
      if (changedFrom === undefined) return read();
      // Announcements name a proposal as Postgres spells its id.
      return deps.waits.follow(request.params.id.toLowerCase(), wait * 1000, read, (record) => !changedFrom.includes(record.state));
    },
  );

  app.get(
    '/proposals/:id/preview',
    {
      schema: {
        tags,
        security,
        operationId: 'previewProposal',
        summary: "What a proposal's note action would do now: the knowledge core's diff against every target note (needs automation.view and vault.read)",
        description:
          'The transaction preview POST /api/dev/transactions answers with dryRun, computed against the current revision of every target note, and a verdict: ' +
          'applies, would_fail (with the problem: a stale expectedHash, a replace without one, a target no longer in the workspace) or not_a_note_action. Nothing is written. ' +
          'The reviewer console shows the same preview.',
        params: z.object({ id: z.uuid().describe('The proposal id.') }),
        response: { 200: proposalPreviewSchema },
        problems: ['proposal_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const { object: proposal, permissions } = await visibleProposal(db, request.params.id, principalOf(request).account.id, 'automation.view');
      // The diff shows the notes' current content: it needs what reading them needs.
      if (!permissions.includes('vault.read')) throw new AppError('permission_denied', 'The preview shows current note content: it needs the vault.read permission.', { extensions: { requiredPermission: 'vault.read' } });
      return previewProposal(db, proposal);
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
          body: z.strictObject({ reason: z.string().max(decisionReasonMaxChars).optional(), actingForAccountId: z.uuid().optional() }).default({}),
          response: { 200: z.object({ id: z.uuid(), state: z.enum(['approved', 'rejected']) }) },
          problems: ['proposal_not_found', 'permission_denied', 'self_approval_forbidden', 'proposal_not_pending', 'workflow_service_unavailable'],
        },
      },
      async (request) =>
        decideProposal(deps.starter, {
          proposalId: request.params.id,
          accountId: principalOf(request).account.id,
          actingForAccountId: request.body.actingForAccountId ?? null,
          decision,
          reason: request.body.reason ?? null,
        }),
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
    async (request, reply) => reply.code(202).send(await undoProposal(db, deps.starter, request.log, { proposalId: request.params.id, accountId: principalOf(request).account.id })),
  );
};
