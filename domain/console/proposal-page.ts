// One proposal as a reviewer sees it: what the automation gateway's GET /proposals/:id answers
// (the proposal, its history, its executions with undo plan and receipt), the preview
// GET /proposals/:id/preview answers, the names of the people involved, what this account may do
// with it (the domain's decision rule) and the ids of its workflows. Authorized exactly as the API
// authorizes: another workspace's proposal is `proposal_not_found`, like a missing one.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { receiptSchema } from '../automation/forge.ts';
import { previewProposal, proposalPreviewSchema } from '../automation/preview.ts';
import type { ProposalPreview } from '../automation/preview.ts';
import { executionSchema, historyEntrySchema, proposalSchema, visibleProposalRecord } from '../automation/proposals.ts';
import type { ProposalState } from '../automation/proposal-states.ts';
import { undoWorkflowId } from '../automation/workflow-ids.ts';
import { nextToReview, nextToReviewSchema, standingOf, standingSchema } from './inbox.ts';

type Db = CommonQueryMethods;

/** States in which the diff against the current notes says what a decision would do; afterwards the receipt says what was done. */
const previewStates: readonly ProposalState[] = ['proposed', 'pending_review', 'approved'];

/** States a proposal leaves by itself (a worker is acting): the page follows them without a reload. */
export const movingStates: readonly ProposalState[] = ['proposed', 'approved', 'executing', 'undoing'];

/** Totals of what approving would change, and each note's share: the summary a reviewer reads before the diffs. */
export const changeSummarySchema = z.object({
  notes: z.number().int(),
  created: z.number().int(),
  replaced: z.number().int(),
  unchanged: z.number().int(),
  linesAdded: z.number().int(),
  linesRemoved: z.number().int(),
  /** Per target note, in the action's order (index as in the preview's results). */
  perNote: z.array(z.object({ index: z.number().int(), path: z.string(), operation: z.string(), linesAdded: z.number().int(), linesRemoved: z.number().int() })),
});
export type ChangeSummary = z.infer<typeof changeSummarySchema>;

/** Lines added and removed by a unified diff (its file headers are not lines of the note). */
export function diffLineCounts(diff: string): { linesAdded: number; linesRemoved: number } {
  let linesAdded = 0;
  let linesRemoved = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    // The file headers (--- / +++) come before the first hunk; inside one, "---" is a removed "--".
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) linesAdded++;
    else if (inHunk && line.startsWith('-')) linesRemoved++;
  }
  return { linesAdded, linesRemoved };
}

/** The summary of a preview's transaction, or null when there is none (nothing to diff, or it would fail before one). */
export function summarizeChange(preview: ProposalPreview | null): ChangeSummary | null {
  const results = preview?.transaction?.results;
  if (!results) return null;
  const perNote = results.map((r) => ({ index: r.index, path: r.path, operation: r.operation, ...diffLineCounts(r.diff) }));
  const count = (operation: string) => perNote.filter((n) => n.operation === operation).length;
  return {
    notes: perNote.length,
    created: count('create'),
    replaced: count('replace'),
    unchanged: perNote.length - count('create') - count('replace'),
    linesAdded: perNote.reduce((sum, n) => sum + n.linesAdded, 0),
    linesRemoved: perNote.reduce((sum, n) => sum + n.linesRemoved, 0),
    perNote,
  };
}

export const proposalPageSchema = z.object({
  proposal: proposalSchema,
  workspaceName: z.string(),
  /** Display names of the accounts the page mentions (proposer, the person acted for, reviewer, history actors). */
  people: z.record(z.string(), z.string()),
  history: z.array(historyEntrySchema),
  executions: z.array(executionSchema.extend({ receipt: receiptSchema.nullable() })),
  preview: proposalPreviewSchema.nullable(),
  /** The preview's totals (notes created / replaced, lines added / removed), null without a transaction preview. */
  change: changeSummarySchema.nullable(),
  /** Why there is no preview: the state (the receipt tells), or the role cannot read notes. */
  previewWithheld: z.enum(['decided', 'needs_vault_read']).nullable(),
  standing: standingSchema,
  canUndo: z.boolean(),
  /** The proposal's workflows, oldest first: its review (which runs Forge's apply) and each undo. */
  workflows: z.array(z.object({ workflowId: z.string(), purpose: z.enum(['review', 'undo']) })),
  /** The proposal this reviewer would review next (the newest other one waiting that it may decide). */
  next: nextToReviewSchema,
});
export type ProposalPage = z.infer<typeof proposalPageSchema>;

export async function readProposalPage(db: Db, accountId: string, proposalId: string): Promise<ProposalPage> {
  const { object: record, permissions } = await visibleProposalRecord(db, proposalId, accountId, 'automation.view');
  const { history, executions, ...proposal } = record;
  const [workspaceName, next] = await Promise.all([
    db.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM workspaces WHERE id = ${proposal.workspaceId}`),
    nextToReview(db, accountId, proposal.id),
  ]);
  const decided = !previewStates.includes(proposal.state);
  const canRead = permissions.includes('vault.read');
  const preview = !decided && canRead ? await previewProposal(db, proposal) : null;
  const standing = standingOf(proposal, accountId, permissions);
  const mentioned = [proposal.proposerAccountId, proposal.actingForAccountId, proposal.reviewerAccountId, ...history.map((h) => h.actorAccountId)];
  let undoAttempt = 0;
  return {
    proposal,
    workspaceName,
    people: await displayNames(db, proposal.workspaceId, mentioned),
    history: [...history],
    executions: executions.map((e) => ({ ...e, receipt: e.receipt ? receiptSchema.parse(e.receipt) : null })),
    preview,
    change: summarizeChange(preview),
    previewWithheld: preview ? null : decided ? 'decided' : 'needs_vault_read',
    standing,
    canUndo: standing.canDecide && proposal.state === 'executed',
    workflows: [
      { workflowId: proposal.workflowId, purpose: 'review' },
      // Each claimed undo ran as its own workflow, numbered in claim order (proposal-states.ts).
      ...history.filter((h) => h.state === 'undoing').map(() => ({ workflowId: undoWorkflowId(proposal.id, ++undoAttempt), purpose: 'undo' as const })),
    ],
    next,
  };
}

/** Display names of the given accounts that are members of the workspace (nobody else is named to its reviewers). */
async function displayNames(db: Db, workspaceId: string, ids: ReadonlyArray<string | null>): Promise<Record<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (wanted.length === 0) return {};
  const rows = await db.any(sql.type(z.object({ id: z.uuid(), displayName: z.string() }))`
    SELECT a.id, a.display_name AS "displayName" FROM accounts a
      JOIN workspace_members m ON m.account_id = a.id AND m.workspace_id = ${workspaceId}
     WHERE a.id = ANY (${sql.array(wanted, 'uuid')})`);
  return Object.fromEntries(rows.map((r) => [r.id, r.displayName]));
}
