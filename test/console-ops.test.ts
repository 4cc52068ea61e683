// `npm run ops -- console sessions|sign-out` as an operator runs it (a child process, JSON out): an
// account's live console sessions are listed without any secret, and ending them (one or all) makes
// their cookies useless at once.
import { describe, expect, it } from 'vitest';
import { openSession } from '../domain/console/sessions.ts';
import { AllowanceLeases } from '../domain/allowance-lease.ts';
import { defaultAllowances } from '../domain/usage.ts';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import { admitConsoleSession } from '../domain/principals/admission.ts';
import { useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';
import { runOps } from './support/ops.ts';

const db = useTestDatabase();

const ops = (...args: string[]) => runOps({ DATABASE_URL: db.url }, ...args);

describe('npm run ops -- console', () => {
  it('lists live sessions without secrets, ends one, then all, and ended sessions admit nothing', async () => {
    const { account, token, tokenId } = await accountWithToken(db.pool);
    const principal = { tokenId, account };
    const first = await openSession(db.pool, { principal, userAgent: 'Laptop' });
    const second = await openSession(db.pool, { principal, userAgent: 'Phone' });
    const leases = new AllowanceLeases(db.pool, defaultAllowances, interfaceEntitlements);
    const admit = (secret: string) => admitConsoleSession(db.pool, { sessionSecret: secret, leases, charge: false });

    const listed = await ops('console', 'sessions', '--account', account.id);
    expect(listed.code).toBe(0);
    const sessions = listed.json();
    expect(sessions.map((s: { userAgent: string }) => s.userAgent)).toEqual(['Phone', 'Laptop']);
    for (const secret of [first.sessionSecret, second.sessionSecret, first.csrfToken, token]) expect(listed.stdout).not.toContain(secret);

    const one = await ops('console', 'sign-out', '--account', account.id, '--session', first.session.id);
    expect(one.json()).toEqual({ ended: 1 });
    await expect(admit(first.sessionSecret)).rejects.toMatchObject({ code: 'session_invalid' });
    await expect(admit(second.sessionSecret)).resolves.toMatchObject({ sessionId: second.session.id });

    expect((await ops('console', 'sign-out', '--account', account.id)).json()).toEqual({ ended: 1 });
    await expect(admit(second.sessionSecret)).rejects.toMatchObject({ code: 'session_invalid' });
    expect((await ops('console', 'sessions', '--account', account.id)).json()).toEqual([]);
    await leases.releaseAll();
  });

  it('refuses an unknown account and a malformed id with a non-zero exit', async () => {
    const unknown = await ops('console', 'sessions', '--account', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('not_found');
    const malformed = await ops('console', 'sign-out', '--account', 'nope');
    expect(malformed.code).not.toBe(0);
  });
});
