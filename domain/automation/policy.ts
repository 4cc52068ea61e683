// Policy before review: a proposal may be reviewed only if its kind is in the catalog, its targets
// lie in the workspace's vaults and its sizes are within the note limits. Opening the review applies
// it: pending_review, or rejected by policy before anyone reviews. A proposal is opened in the
// transaction that stores it (submitProposal, decision 96); the review workflow's first step
// (openReview) only confirms it, and opens one that is still proposed.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { idRow } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { contentBytes, noteLimits, validateNotePath } from '../notes/paths.ts';
import { actionKinds, actionSchema, toTransaction } from './catalog.ts';
import type { MemoryPromotion } from './catalog.ts';
import { memoryPromotionVerdict } from '../context-scopes/policy.ts';
import { transitionProposal } from './proposal-states.ts';
import { getProposal, insertProposal } from './proposals.ts';
import type { NewProposal, Proposal } from './proposals.ts';

type Db = CommonQueryMethods;

/**
 * Stores a proposal with its review opened, in the caller's transaction: policy first, so a refused
 * proposal is answered rejected (with the reason) and never reviewed; otherwise it is pending review
 * as soon as it is acknowledged. Its review workflow's start is recorded with it (insertProposal).
 */
export async function submitProposal(tx: Db, input: NewProposal): Promise<Proposal> {
  const proposal = await insertProposal(tx, input);
  const opened = await applyPolicy(tx, proposal);
  // One transaction: now() and so updated_at are the insert's, and nobody else saw `proposed`.
  return { ...proposal, state: opened.state, decisionReason: opened.state === 'rejected' ? opened.reason : proposal.decisionReason };
}

export type OpenedReview = { state: 'pending_review' } | { state: 'rejected'; reason: string };

/**
 * The review workflow's first step: the proposal as it was opened, or, for one still proposed (stored
 * before decision 96, or by insertProposal alone), opened now. One short step (a local activity).
 */
export async function openReview(db: DatabasePool, proposalId: string): Promise<OpenedReview> {
  const proposal = await getProposal(db, proposalId);
  // Nothing to write for a proposal that is gone: its review just closes.
  if (!proposal) return { state: 'rejected', reason: 'The proposal no longer exists.' };
  if (proposal.state === 'proposed') return applyPolicy(db, proposal);
  if (proposal.state === 'rejected') return { state: 'rejected', reason: proposal.decisionReason ?? '' };
  return { state: 'pending_review' };
}

/** Applies the policy to a proposed proposal: rejected with the reason, or pending review. */
async function applyPolicy(db: Db, proposal: Proposal): Promise<OpenedReview> {
  const verdict = await checkPolicy(db, proposal);
  if (!verdict.ok) {
    await transitionProposal(db, { proposalId: proposal.id, state: 'rejected', detail: { by: 'policy', reason: verdict.reason }, reason: verdict.reason });
    return { state: 'rejected', reason: verdict.reason };
  }
  await transitionProposal(db, { proposalId: proposal.id, state: 'pending_review' });
  return { state: 'pending_review' };
}

export type PolicyVerdict = { ok: true } | { ok: false; reason: string };

export async function checkPolicy(db: Db, proposal: Proposal): Promise<PolicyVerdict> {
  const parsed = actionSchema.safeParse(proposal.action);
  if (!parsed.success || !(actionKinds as readonly string[]).includes(proposal.actionKind)) return { ok: false, reason: `Action kind ${proposal.actionKind} is not in the catalog.` };
  const action = parsed.data;
  if (action.kind === 'memory.promote') return memoryPolicy(db, proposal, action);
  const inWorkspace = await db.exists(sql.type(idRow)`
    SELECT mp.id FROM vault_mappings mp JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.id = ${action.mappingId} AND mp.revoked_at IS NULL AND v.owner_workspace_id = ${proposal.workspaceId}`);
  if (!inWorkspace) return { ok: false, reason: 'The target mapping is not a vault of this workspace.' };
  try {
    const writes = toTransaction(action);
    let total = 0;
    for (const w of writes) {
      validateNotePath(w.path);
      total += contentBytes(w.content);
      if (contentBytes(w.content) > noteLimits.maxContentBytes) return { ok: false, reason: `${w.path} is larger than ${noteLimits.maxContentBytes} bytes.` };
    }
    if (total > noteLimits.maxTransactionContentBytes) return { ok: false, reason: 'The action carries too much content.' };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true };
}

/** A memory candidate: its scope still in the proposal's workspace, accepting candidates, with room left. */
async function memoryPolicy(db: Db, proposal: Proposal, action: MemoryPromotion): Promise<PolicyVerdict> {
  if (proposal.proposerPrincipalId === null) return { ok: false, reason: 'Shared memory is proposed only by a product, through the Product Runtime.' };
  return memoryPromotionVerdict(db, { workspaceId: proposal.workspaceId, scopeId: action.scopeId });
}
