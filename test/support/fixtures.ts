// Builders for the identity records most tests need, through the same domain functions the
// operations CLI uses.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from '../../db/pool.ts';
import { createAccount, issueAccessToken } from '../../domain/identity/accounts.ts';
import type { Account } from '../../domain/identity/accounts.ts';
import type { Plan } from '../../domain/identity/plans.ts';
import { createMapping, createVault } from '../../domain/identity/vaults.ts';

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
