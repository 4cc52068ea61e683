// The demo reviewer `npm start` seeds beside the demo account: a second person, member of the demo
// workspace with the built-in `reviewer` role, and a personal access token to sign in to the
// reviewer console with. The demo account proposes; it cannot approve its own proposals (nobody
// can), so trying the console needs this second account. Like the demo token, the raw token exists
// only in the git-ignored state file (.data/demo-reviewer.json, 0600).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { authenticateAccessToken, createAccount, findAccountByEmail, issueAccessToken } from '../../domain/identity/accounts.ts';
import { addMember, memberPermissions } from '../../domain/identity/workspaces.ts';

export const DEMO_REVIEWER_EMAIL = 'reviewer@notes.localhost';

const stateSchema = z.object({ accountId: z.uuid(), workspaceId: z.uuid(), token: z.string() });
export type DemoReviewer = z.infer<typeof stateSchema>;

export async function ensureDemoReviewer(db: DatabasePool, demo: { workspaceId: string }, stateFile: string): Promise<DemoReviewer> {
  if (existsSync(stateFile)) {
    const parsed = stateSchema.safeParse(JSON.parse(readFileSync(stateFile, 'utf8')));
    if (parsed.success && parsed.data.workspaceId === demo.workspaceId) {
      const live = await authenticateAccessToken(db, parsed.data.token).catch(() => null);
      const permissions = live ? await memberPermissions(db, demo.workspaceId, live.account.id) : null;
      if (live && permissions?.includes('automation.review')) return parsed.data;
    }
  }
  const state = await db.transaction(async (tx) => {
    const account =
      (await findAccountByEmail(tx, DEMO_REVIEWER_EMAIL)) ?? (await createAccount(tx, { email: DEMO_REVIEWER_EMAIL, displayName: 'Demo Reviewer', plan: 'developer_agent' }));
    if (!(await memberPermissions(tx, demo.workspaceId, account.id))) await addMember(tx, { workspaceId: demo.workspaceId, accountId: account.id, role: 'reviewer' });
    const issued = await issueAccessToken(tx, { accountId: account.id, name: 'demo reviewer (npm start)' });
    return { accountId: account.id, workspaceId: demo.workspaceId, token: issued.token };
  });
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  return state;
}
