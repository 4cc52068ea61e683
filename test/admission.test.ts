// The admission path (domain/principals/admission.ts) on its own: resolve → judge → charge → touch,
// each refusal ending the request having counted and touched nothing, the uncharged and fused
// variants of the same steps, and the plans table travelling with the allowance.leases.
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AllowanceLeases } from '../domain/allowance-lease.ts';
import { updateAccount } from '../domain/identity/accounts.ts';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import { createVault } from '../domain/identity/vaults.ts';
import { admitAccessToken, fusedRowSchema } from '../domain/principals/admission.ts';
import { generateSecret, secretPrefixes } from '../domain/secrets.ts';
import { defaultAllowances } from '../domain/usage.ts';
import { useAllowanceLeases, useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';

const db = useTestDatabase();
const allowance = useAllowanceLeases(db);

const counters = (accountId: string) =>
  db.pool.any(sql.type(z.object({ interface: z.string(), n: z.number() }))`
    SELECT interface, month_count AS n FROM usage_counters WHERE account_id = ${accountId} ORDER BY interface`);
const lastUsed = (tokenId: string) =>
  db.pool.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`SELECT last_used_at::text AS at FROM access_tokens WHERE id = ${tokenId}`);

// A fusion that reads something only the principal's account id can reach: its vault count.
const vaultCountRow = fusedRowSchema({ vaults: z.number() });
const vaultCount = {
  name: 'test_admission_vault_count',
  schema: vaultCountRow,
  ctes: sql.fragment`owned AS (SELECT count(*)::int AS n FROM vaults WHERE owner_account_id = (SELECT id FROM principal))`,
  columns: sql.fragment`(SELECT n FROM owned) AS vaults`,
};

describe('admission: resolve', () => {
  it.each([
    ['a malformed token', 'not-a-token'],
    ['a well-formed unknown token', `hnp_pat_${'A'.repeat(43)}`],
    ['another kind of principal’s credential (a service credential)', generateSecret(secretPrefixes.serviceCredential)],
  ])('refuses %s with invalid_token', async (_label, token) => {
    await expect(admitAccessToken(db.pool, { token, iface: 'mcp', leases: allowance.leases })).rejects.toMatchObject({ code: 'invalid_token' });
  });
});

describe('admission: judge before charge, and a refusal counts and touches nothing', () => {
  it('judges the account’s status before its plan', async () => {
    const { token, tokenId, account } = await accountWithToken(db.pool, 'premium');
    await updateAccount(db.pool, account.id, { status: 'suspended' });
    await expect(admitAccessToken(db.pool, { token, iface: 'rest', leases: allowance.leases })).rejects.toMatchObject({ code: 'account_inactive' });
    await updateAccount(db.pool, account.id, { status: 'active' });
    await expect(admitAccessToken(db.pool, { token, iface: 'rest', leases: allowance.leases })).rejects.toMatchObject({ code: 'entitlement_required', extensions: { requiredPlans: ['developer_agent', 'team'] } });
    expect(await counters(account.id)).toEqual([]);
    expect(await lastUsed(tokenId)).toBeNull();
  });

  it('refuses past the allowance with 429, counting nothing more and not touching the token', async () => {
    const { token, tokenId, account } = await accountWithToken(db.pool, 'premium');
    const tight = new AllowanceLeases(db.pool, { ...defaultAllowances, mcp: { perMinute: 100, perMonth: { premium: 1 } } }, interfaceEntitlements);
    await admitAccessToken(db.pool, { token, iface: 'mcp', leases: tight });
    await db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET last_used_at = NULL WHERE id = ${tokenId}`);
    await expect(admitAccessToken(db.pool, { token, iface: 'mcp', leases: tight })).rejects.toMatchObject({ code: 'monthly_limit_exceeded', extensions: { monthLimit: 1 } });
    expect(await counters(account.id)).toEqual([{ interface: 'mcp', n: 1 }]);
    expect(await lastUsed(tokenId)).toBeNull();
  });
});

describe('admission: charge', () => {
  it('charges one request against the interface’s allowance and says what is left', async () => {
    const { token, tokenId, account } = await accountWithToken(db.pool, 'team');
    const admitted = await admitAccessToken(db.pool, { token, iface: 'mcp', leases: allowance.leases });
    expect(admitted).toMatchObject({ tokenId, account: { id: account.id, plan: 'team' } });
    expect(admitted.usage).toEqual({ monthLimit: defaultAllowances.mcp.perMonth.team, monthUsed: 1, minuteLimit: defaultAllowances.mcp.perMinute, minuteUsed: 1 });
    expect(await counters(account.id)).toEqual([{ interface: 'mcp', n: 1 }]);
    expect(await lastUsed(tokenId)).not.toBeNull();
  });

  it('counts the automation interface against the REST allowance', async () => {
    const { token, account } = await accountWithToken(db.pool, 'developer_agent');
    await admitAccessToken(db.pool, { token, iface: 'automation', leases: allowance.leases });
    await admitAccessToken(db.pool, { token, iface: 'rest', leases: allowance.leases });
    expect(await counters(account.id)).toEqual([{ interface: 'rest', n: 2 }]);
  });

  it('with charge: false, admits after judging, counts nothing and touches the token', async () => {
    const { token, tokenId, account } = await accountWithToken(db.pool, 'professional');
    const admitted = await admitAccessToken(db.pool, { token, iface: 'mcp', leases: allowance.leases, charge: false });
    expect(admitted).toEqual({ tokenId, account: expect.objectContaining({ id: account.id }) });
    await expect(admitAccessToken(db.pool, { token, iface: 'rest', leases: allowance.leases, charge: false })).rejects.toMatchObject({ code: 'entitlement_required' });
    expect(await counters(account.id)).toEqual([]);
    expect(await lastUsed(tokenId)).not.toBeNull();
  });
});

describe('admission: the fused variant', () => {
  it('reads the fused columns in the same statement and returns them once the request is admitted and charged', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    for (const name of ['a', 'b']) await createVault(db.pool, { name, ownerAccountId: account.id });
    const admitted = await admitAccessToken(db.pool, { token, iface: 'rest', leases: allowance.leases }, vaultCount);
    expect(admitted.fused.vaults).toBe(2);
    expect(admitted.account.id).toBe(account.id);
    expect(admitted.account).not.toHaveProperty('vaults');
    expect(admitted.usage.monthUsed).toBe(1);
  });

  it('takes the same refusals, in the same order, before anything fused is returned', async () => {
    const premium = await accountWithToken(db.pool, 'premium');
    await expect(admitAccessToken(db.pool, { token: premium.token, iface: 'rest', leases: allowance.leases }, vaultCount)).rejects.toMatchObject({ code: 'entitlement_required' });
    await expect(admitAccessToken(db.pool, { token: `hnp_pat_${'B'.repeat(43)}`, iface: 'rest', leases: allowance.leases }, vaultCount)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await counters(premium.account.id)).toEqual([]);
  });
});

describe('admission: the plans table travels with the leases', () => {
  it('judges every interface by the table the leases were built with', async () => {
    const narrowed = new AllowanceLeases(db.pool, defaultAllowances, { ...interfaceEntitlements, automation: ['team'] });
    const { token } = await accountWithToken(db.pool, 'developer_agent');
    await expect(admitAccessToken(db.pool, { token, iface: 'automation', leases: narrowed })).rejects.toMatchObject({
      code: 'entitlement_required',
      extensions: { plan: 'developer_agent', requiredPlans: ['team'] },
    });
    await expect(admitAccessToken(db.pool, { token, iface: 'rest', leases: narrowed })).resolves.toMatchObject({ account: { plan: 'developer_agent' } });
    await narrowed.releaseAll();
  });
});
