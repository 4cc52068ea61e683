// Builders for the identity records most tests need, through the same domain functions the
// operations CLI uses.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from '../../db/pool.ts';
import { createAccount, issueAccessToken } from '../../domain/identity/accounts.ts';
import type { Account } from '../../domain/identity/accounts.ts';
import type { Plan } from '../../domain/identity/plans.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../../domain/identity/workspaces.ts';
import { insertProposal } from '../../domain/automation/proposals.ts';

export type TestAccount = { account: Account; token: string; tokenId: string };

export async function accountWithToken(db: DatabasePool, plan: Plan = 'developer_agent'): Promise<TestAccount> {
  const account = await createAccount(db, { email: `${randomUUID()}@example.test`, displayName: 'Test Account', plan });
  const issued = await issueAccessToken(db, { accountId: account.id, name: 'test' });
  return { account, token: issued.token, tokenId: issued.record.id };
}

export async function personalMapping(db: DatabasePool, accountId: string): Promise<{ vaultId: string; mappingId: string }> {
  const vault = await createVault(db, { name: 'Test vault', ownerAccountId: accountId });
  const mapping = await createMapping(db, { vaultId: vault.id, createdByAccountId: accountId });
  return { vaultId: vault.id, mappingId: mapping.mappingId };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * The automation cast: a team account's workspace (the proposer owns it), a second account with the
 * reviewer role in it, and a workspace vault mapped for writes.
 */
export async function workspaceWithReviewer(db: DatabasePool, name: string) {
  const proposer = await accountWithToken(db, 'team');
  const reviewer = await accountWithToken(db, 'developer_agent');
  const workspaceId = (await createWorkspace(db, { name, ownerAccountId: proposer.account.id })).id;
  await addMember(db, { workspaceId, accountId: reviewer.account.id, role: 'reviewer' });
  const vault = await createVault(db, { name: `${name} vault`, ownerWorkspaceId: workspaceId });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });
  return { proposer, reviewer, workspaceId, vaultId: vault.id, mappingId };
}

/** A proposal stored straight through the domain (as the gateway's transaction stores one), `proposed`; its id. */
export async function storedProposal(db: DatabasePool, input: { workspaceId: string; mappingId: string; proposerAccountId: string; summary?: string }): Promise<string> {
  const id = randomUUID();
  const summary = input.summary ?? 'A note';
  await insertProposal(db, {
    id,
    workspaceId: input.workspaceId,
    proposer: { kind: 'account', id: input.proposerAccountId },
    actingForAccountId: null,
    bridge: 'generic-webhook',
    action: { kind: 'note.write', mappingId: input.mappingId, path: `Inbox/${summary} ${id.slice(0, 8)}.md`, content: '# Hi\n' },
    summary,
    expiresInSeconds: 3600,
  });
  return id;
}
