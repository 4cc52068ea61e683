// What a proposal's note action would do to its vault right now: the knowledge core's transaction
// preview (the one `POST /api/dev/transactions` answers with dryRun), against the current revision
// of every target note, plus a verdict on whether Forge could apply it as it stands. Read by the
// automation gateway (`GET /proposals/:id/preview`) and the reviewer console; nothing is written.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { previewTransaction } from '../notes/knowledge.ts';
import { transactionPreviewSchema } from '../notes/result-schemas.ts';
import { actionSchema, isNoteAction, toTransaction } from './catalog.ts';
import type { Proposal } from './proposals.ts';

type Db = CommonQueryMethods;

export const proposalPreviewSchema = z
  .object({
    proposalId: z.uuid(),
    actionKind: z.string(),
    computedAt: z.string().describe('When the preview was computed: it is against the notes as they were then.'),
    verdict: z
      .enum(['applies', 'would_fail', 'not_a_note_action'])
      .describe(
        'applies: Forge could apply the action to the notes as they are now; would_fail: it could not (see problem), so approving it ends in failed; ' +
          'not_a_note_action: the action writes no notes (memory.promote), so there is nothing to diff.',
      ),
    transaction: transactionPreviewSchema.nullable().describe('The knowledge-core transaction preview: per target note its operation, revisions and unified diff. Null unless it could be computed.'),
    problem: z
      .object({ code: z.string(), detail: z.string(), errors: z.array(z.object({ pointer: z.string(), message: z.string() }).loose()) })
      .nullable()
      .describe('Why the action would fail as it stands (a stale expectedHash, a replace without one, a target no longer in the workspace).'),
  })
  .meta({ id: 'ProposalPreview' });
export type ProposalPreview = z.infer<typeof proposalPreviewSchema>;

/** The preview of a proposal's action against the notes as they are now. */
export async function previewProposal(db: Db, proposal: Proposal): Promise<ProposalPreview> {
  const base = { proposalId: proposal.id, actionKind: proposal.actionKind, computedAt: new Date().toISOString() };
  const parsed = actionSchema.safeParse(proposal.action);
  if (!parsed.success || !isNoteAction(parsed.data)) return { ...base, verdict: 'not_a_note_action', transaction: null, problem: null };
  const action = parsed.data;
  // Where Forge would write: the mapping, only while its vault is the workspace's (policy.ts's rule).
  const target = await db.maybeOne(sql.type(z.object({ vaultId: z.uuid() }))`
    SELECT mp.vault_id AS "vaultId" FROM vault_mappings mp JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.id = ${action.mappingId} AND mp.revoked_at IS NULL AND v.owner_workspace_id = ${proposal.workspaceId}`);
  if (!target) {
    return { ...base, verdict: 'would_fail', transaction: null, problem: { code: 'mapping_not_found', detail: 'The target mapping is not a live vault of this workspace.', errors: [] } };
  }
  try {
    const transaction = await previewTransaction(db, { vaultId: target.vaultId, mappingId: action.mappingId }, toTransaction(action));
    // Forge applies with revisions required: a replace that names none would be refused.
    const unnamed = transaction.results.filter((r) => r.revisionRequired);
    const problem = unnamed.length
      ? {
          code: 'revision_required',
          detail: `${unnamed.length} of ${transaction.results.length} target notes exist and the action names no expectedHash for them, so Forge would refuse to replace them.`,
          errors: unnamed.map((r) => ({ pointer: `/actions/${r.index}/expectedHash`, message: `required: ${r.path} exists (currently ${r.beforeRevision})` })),
        }
      : null;
    return { ...base, verdict: problem ? 'would_fail' : 'applies', transaction, problem };
  } catch (error) {
    // The core refuses the action as it stands (a stale expectedHash, a case collision, ...).
    if (!(error instanceof AppError)) throw error;
    const errors = (error.extensions['errors'] as Array<{ pointer: string; message: string }> | undefined) ?? [];
    return { ...base, verdict: 'would_fail', transaction: null, problem: { code: error.code, detail: error.message, errors } };
  }
}
