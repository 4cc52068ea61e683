// Policy before review: a proposal may be reviewed only if its kind is in the catalog, its targets
// lie in the workspace's vaults and its sizes are within the note limits. Opening the review applies
// it: pending_review, or rejected by policy before anyone reviews.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { idRow } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { contentBytes, noteLimits, validateNotePath } from '../notes/paths.ts';
import { actionKinds, actionSchema, toTransaction } from './catalog.ts';
import type { MemoryPromotion } from './catalog.ts';
import { memoryPromotionVerdict } from '../context-scopes/policy.ts';
import { transitionProposal } from './proposal-states.ts';
import { getProposal } from './proposals.ts';
import type { Proposal } from './proposals.ts';

type Db = CommonQueryMethods;

/**
 * Opens the review of a proposal: policy first, so a refused proposal is rejected before anyone
 * reviews it; otherwise it is pending review. One short step (the review runs it as a local activity).
 */
export async function openReview(db: DatabasePool, proposalId: string): Promise<{ state: 'pending_review' } | { state: 'rejected'; reason: string }> {
  const proposal = await getProposal(db, proposalId);
  const verdict: PolicyVerdict = proposal ? await checkPolicy(db, proposal) : { ok: false, reason: 'The proposal no longer exists.' };
  if (!verdict.ok) {
    await transitionProposal(db, { proposalId, state: 'rejected', detail: { by: 'policy', reason: verdict.reason }, reason: verdict.reason });
    return { state: 'rejected', reason: verdict.reason };
  }
  await transitionProposal(db, { proposalId, state: 'pending_review' });
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
