// What the reviewer console's live stream may tell a reviewer (decision 98): a proposal changed, in
// a workspace where the reviewer may see proposals (automation.view), and nothing of any other
// workspace. The database announces every change of a proposal row on `proposalChangesChannel`
// (migration 0023); the event carries only ids, and the page reads what changed through the same
// admitted, authorized routes as any page request.
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { reviewerWorkspaces } from './inbox.ts';

/** The Postgres channel of migration 0023's trigger. */
export const proposalChangesChannel = 'proposal_changes';

export const proposalChangeSchema = z.object({ id: z.uuid(), workspaceId: z.uuid() });
export type ProposalChange = z.infer<typeof proposalChangeSchema>;

/** A notification's payload as the trigger sends it; null for anything else (never trusted further). */
export function parseProposalChange(payload: string): ProposalChange | null {
  try {
    const parsed = proposalChangeSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The workspaces whose proposal changes this account's stream carries: those where it may see proposals. */
export async function liveAudience(db: CommonQueryMethods, accountId: string): Promise<ReadonlySet<string>> {
  return new Set((await reviewerWorkspaces(db, accountId)).map((w) => w.id));
}
