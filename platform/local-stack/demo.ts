// The demo account `npm start` seeds: Developer & Agent plan, a workspace, a hosted vault with a
// few linked notes, its mapping and a personal access token. The raw token exists only in the
// git-ignored state file (.data/demo.json) so a second start prints the same credentials; the
// database holds its hash like any other token.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { authenticateAccessToken, createAccount, findAccountByEmail, issueAccessToken } from '../../domain/identity/accounts.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';
import { createWorkspace } from '../../domain/identity/workspaces.ts';
import { idRow } from '../../db/row-schemas.ts';
import { seedDemoNotes } from './demo-notes.ts';

export const DEMO_EMAIL = 'demo@notes.localhost';

const demoStateSchema = z.object({
  accountId: z.uuid(),
  workspaceId: z.uuid(),
  vaultId: z.uuid(),
  mappingId: z.uuid(),
  token: z.string(),
});
export type DemoState = z.infer<typeof demoStateSchema>;

function readState(stateFile: string): DemoState | null {
  if (!existsSync(stateFile)) return null;
  const parsed = demoStateSchema.safeParse(JSON.parse(readFileSync(stateFile, 'utf8')));
  return parsed.success ? parsed.data : null;
}

async function stillValid(db: DatabasePool, state: DemoState): Promise<boolean> {
  try {
    const principal = await authenticateAccessToken(db, state.token);
    const mappingLive = await db.exists(sql.type(idRow)`
      SELECT id FROM vault_mappings WHERE id = ${state.mappingId} AND vault_id = ${state.vaultId} AND revoked_at IS NULL`);
    return principal.account.id === state.accountId && mappingLive;
  } catch {
    return false;
  }
}

export async function ensureDemo(db: DatabasePool, stateFile: string): Promise<DemoState & { reused: boolean }> {
  const previous = readState(stateFile);
  if (previous && (await stillValid(db, previous))) {
    await seedDemoNotes(db, previous);
    return { ...previous, reused: true };
  }
  const state = await db.transaction(async (tx) => {
    const account = (await findAccountByEmail(tx, DEMO_EMAIL)) ?? (await createAccount(tx, { email: DEMO_EMAIL, displayName: 'Demo Developer', plan: 'developer_agent' }));
    const existing = await tx.maybeOne(sql.type(z.object({ workspaceId: z.uuid(), vaultId: z.uuid(), mappingId: z.uuid() }))`
      SELECT w.id AS "workspaceId", v.id AS "vaultId", mp.id AS "mappingId"
        FROM workspaces w JOIN vaults v ON v.owner_workspace_id = w.id JOIN vault_mappings mp ON mp.vault_id = v.id
       WHERE w.owner_account_id = ${account.id} AND mp.revoked_at IS NULL
       ORDER BY mp.created_at LIMIT 1`);
    let ids = existing;
    if (!ids) {
      const workspace = await createWorkspace(tx, { name: 'Demo workspace', ownerAccountId: account.id });
      const vault = await createVault(tx, { name: 'Demo vault', ownerWorkspaceId: workspace.id });
      const mapping = await createMapping(tx, { vaultId: vault.id, label: 'demo', createdByAccountId: account.id });
      ids = { workspaceId: workspace.id, vaultId: vault.id, mappingId: mapping.mappingId };
    }
    const issued = await issueAccessToken(tx, { accountId: account.id, name: 'demo (npm start)' });
    return { accountId: account.id, ...ids, token: issued.token };
  });
  await seedDemoNotes(db, state);
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  return { ...state, reused: false };
}
