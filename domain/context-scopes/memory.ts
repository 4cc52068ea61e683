// Shared memory of a context scope. "Unreviewed model output is never promoted to trusted shared
// memory": a product proposes a candidate, which is an action proposal of kind `memory.promote`
// (the existing review workflow, Forge execution, receipt and undo); the memory exists only once a
// person other than its proposer approved it and Forge executed it, and reads return nothing else.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import type { MemoryPromotion } from '../automation/catalog.ts';
import { proposalSchema } from '../automation/proposals.ts';
import { submitProposal } from '../automation/policy.ts';
import type { Proposal } from '../automation/proposals.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import { claimIdempotencyKey, storeIdempotentResponse } from '../idempotency.ts';
import type { IdempotencyScope } from '../idempotency.ts';
import { effectivePolicy, policyValue } from './scopes.ts';
import type { ScopeRow } from './scopes.ts';

type Db = CommonQueryMethods;

export const memoryLimits = { maxContentChars: 10_000, maxRationaleChars: 2_000, maxPage: 100 } as const;

/** The bridge name a product's proposals carry (what reviewers see as "proposed through"). */
export const RUNTIME_BRIDGE = 'product-runtime';

const memoryRowSchema = z.object({ memoryId: z.uuid(), content: z.string(), proposalId: z.uuid(), reviewedAt: isoTimestamp, createdAt: isoTimestamp });

/** Reviewed memory of a scope, newest first; removed (undone) memory is not returned. */
export async function listScopeMemory(db: Db, scope: ScopeRow, page: { limit: number; cursor?: string | undefined }) {
  const before = page.cursor === undefined ? null : decodeCursor(page.cursor, z.object({ createdAt: z.string(), id: z.uuid() }));
  const rows = await db.any(sql.type(memoryRowSchema)`
    SELECT m.id AS "memoryId", m.content, m.proposal_id AS "proposalId", m.reviewed_at AS "reviewedAt", m.created_at AS "createdAt"
      FROM scope_memories m
     WHERE m.scope_id = ${scope.id} AND m.removed_at IS NULL
       ${before ? sql.fragment`AND (date_trunc('milliseconds', m.created_at), m.id) < (${before.createdAt}::timestamptz, ${before.id}::uuid)` : sql.fragment``}
     ORDER BY date_trunc('milliseconds', m.created_at) DESC, m.id DESC
     LIMIT ${Math.min(page.limit, memoryLimits.maxPage) + 1}`);
  const limit = Math.min(page.limit, memoryLimits.maxPage);
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = items[items.length - 1];
  return {
    scopeId: scope.scopeKey,
    items: items.map((m) => ({ ...m, scopeId: scope.scopeKey })),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.memoryId }) : null,
  };
}

/** Whether the scope's effective policy lets products propose memory (review is required either way). */
export function candidatesAllowed(scope: ScopeRow, ancestry: readonly ScopeRow[]): boolean {
  return policyValue(effectivePolicy(scope, ancestry), 'memory.candidates') === 'allowed';
}

export type CandidateInput = { content: string; rationale: string };

/**
 * Records a candidate as a `memory.promote` proposal by the installation's service principal, under
 * its Idempotency-Key (the same key and body replay the proposal; another body is 422). The caller
 * starts the review workflow after this commits (and again on a replay, which is a no-op once it runs).
 */
export async function proposeMemoryCandidate(
  db: DatabasePool,
  input: { scope: ScopeRow; ancestry: readonly ScopeRow[]; servicePrincipalId: string; candidate: CandidateInput; idempotency: IdempotencyScope; expiresInSeconds: number },
): Promise<{ proposal: Proposal; replayed: boolean }> {
  if (!candidatesAllowed(input.scope, input.ancestry)) {
    throw new AppError('permission_denied', "This scope's policy does not accept shared memory candidates (memory.candidates: forbidden).", {
      extensions: { policy: 'memory.candidates' },
    });
  }
  const action: MemoryPromotion = { kind: 'memory.promote', scopeId: input.scope.id, content: input.candidate.content, rationale: input.candidate.rationale };
  return db.transaction(async (tx) => {
    const stored = await claimIdempotencyKey(tx, input.idempotency);
    if (stored) return { proposal: proposalSchema.parse(stored.body), replayed: true };
    const proposal = await submitProposal(tx, {
      id: randomUUID(),
      workspaceId: input.scope.workspaceId,
      proposer: { kind: 'service_principal', id: input.servicePrincipalId },
      actingForAccountId: null,
      bridge: RUNTIME_BRIDGE,
      action,
      summary: `Shared memory for scope ${input.scope.scopeKey}${input.candidate.rationale ? `: ${input.candidate.rationale}` : ''}`.slice(0, 2000),
      expiresInSeconds: input.expiresInSeconds,
    });
    await storeIdempotentResponse(tx, input.idempotency, { status: 201, body: proposal, etag: null });
    return { proposal, replayed: false };
  });
}

const candidateRowSchema = z.object({
  proposalId: z.uuid(),
  state: z.string(),
  decisionReason: z.string().nullable(),
  decidedAt: isoTimestamp.nullable(),
  decidedState: z.enum(['approved', 'rejected']).nullable(),
  expiresAt: isoTimestamp,
  createdAt: isoTimestamp,
  shared: z.boolean(),
  receipts: z.array(z.object({ kind: z.enum(['apply', 'undo']), completedAt: z.string(), changes: z.array(z.object({ path: z.string(), operation: z.string() })) })),
});

/**
 * A candidate of this installation in this scope, followed through review: the proposal's state,
 * the decision, Forge's receipts and whether the memory is shared now. Another installation's
 * candidate, or one of another scope, is proposal_not_found like a missing one.
 */
export async function memoryCandidateStatus(db: Db, input: { installationId: string; scope: ScopeRow; candidateId: string }) {
  const row = await db.maybeOne(sql.type(candidateRowSchema)`
    SELECT p.id AS "proposalId", p.state, p.decision_reason AS "decisionReason", p.expires_at AS "expiresAt", p.created_at AS "createdAt",
           d.occurred_at AS "decidedAt", d.state AS "decidedState",
           EXISTS (SELECT 1 FROM scope_memories m WHERE m.proposal_id = p.id AND m.removed_at IS NULL) AS shared,
           coalesce((SELECT json_agg(json_build_object('kind', f.kind, 'completedAt', f.receipt ->> 'completedAt',
                                                       'changes', (SELECT coalesce(json_agg(json_build_object('path', c ->> 'path', 'operation', c ->> 'operation')), '[]')
                                                                     FROM jsonb_array_elements(f.receipt -> 'changes') c))
                                     ORDER BY f.kind)
                       FROM forge_executions f WHERE f.proposal_id = p.id AND f.receipt IS NOT NULL), '[]') AS receipts
      FROM action_proposals p
      JOIN service_principals sp ON sp.id = p.proposer_principal_id AND sp.installation_id = ${input.installationId}
      LEFT JOIN LATERAL (
        SELECT h.occurred_at, h.state FROM action_proposal_history h
         WHERE h.proposal_id = p.id AND h.state IN ('approved', 'rejected') AND h.actor_account_id IS NOT NULL
         ORDER BY h.id LIMIT 1) d ON true
     WHERE p.id = ${input.candidateId} AND p.action_kind = 'memory.promote' AND p.action ->> 'scopeId' = ${input.scope.id}`);
  if (!row) throw new AppError('proposal_not_found', 'No memory candidate with this id in this scope is visible to this installation.');
  return {
    candidateId: row.proposalId,
    scopeId: input.scope.scopeKey,
    proposalId: row.proposalId,
    state: row.state,
    shared: row.shared,
    decision: row.decidedState && row.decidedAt ? { decision: row.decidedState, reason: row.decisionReason, decidedAt: row.decidedAt } : null,
    expiresAt: row.expiresAt,
    receipts: row.receipts,
    createdAt: row.createdAt,
  };
}

// ---- Forge's side (domain/automation/forge.ts) -----------------------------------------------------

/** What a memory promotion changed (the receipt's entry): the memory id is the proposal's. */
export const memoryChangePath = (scopeKey: string, memoryId: string) => `scope-memory/${scopeKey}/${memoryId}`;

const scopeKeySchema = z.object({ scopeKey: z.string() });

/**
 * Applies an approved promotion: the memory row, keyed by the proposal (a retried step inserts
 * nothing twice). Returns the receipt entry.
 */
export async function promoteMemory(db: Db, proposal: Proposal, action: MemoryPromotion) {
  const scope = await db.maybeOne(sql.type(scopeKeySchema)`
    SELECT s.scope_key AS "scopeKey" FROM context_scopes s WHERE s.id = ${action.scopeId} AND s.workspace_id = ${proposal.workspaceId}`);
  if (!scope) throw new AppError('context_scope_not_found', 'The scope of this memory no longer exists.');
  await db.query(sql.type(emptyRow)`
    INSERT INTO scope_memories (id, scope_id, proposal_id, content, reviewed_by_account_id, reviewed_at)
    VALUES (${proposal.id}, ${action.scopeId}, ${proposal.id}, ${action.content}, ${proposal.reviewerAccountId}, now())
    ON CONFLICT (proposal_id) DO NOTHING`);
  return { path: memoryChangePath(scope.scopeKey, proposal.id), operation: 'create', beforeRevision: null, afterRevision: null, eventId: null };
}

/** Undoes a promotion: the memory is marked removed (kept for the audit), so reads no longer return it. */
export async function removePromotedMemory(db: Db, proposal: Proposal, action: MemoryPromotion) {
  const row = await db.maybeOne(sql.type(scopeKeySchema)`
    UPDATE scope_memories m SET removed_at = coalesce(m.removed_at, now())
      FROM context_scopes s
     WHERE m.proposal_id = ${proposal.id} AND s.id = m.scope_id AND s.id = ${action.scopeId}
    RETURNING s.scope_key AS "scopeKey"`);
  if (!row) throw new AppError('conflict', 'Nothing was promoted, so there is nothing to undo.');
  return { path: memoryChangePath(row.scopeKey, proposal.id), operation: 'remove', beforeRevision: null, afterRevision: null, eventId: null };
}
