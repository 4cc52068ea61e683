// Reviewer console sessions (domain/console/sessions.ts) and their admission
// (admitConsoleSession in domain/principals/admission.ts): a session opened for an admitted
// personal access token, bound to that token, stored only as a hash; its CSRF token derived from
// its secret; every request resolving, judging (the automation interface) and charging (the REST
// allowance) like the automation gateway.
import { sql } from 'slonik';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AllowanceLeases } from '../domain/allowance-lease.ts';
import { checkCsrf, cookieAttributes, csrfTokenFor, openSession, signOut } from '../domain/console/sessions.ts';
import { issueAccessToken, revokeAccessToken, rotateAccessToken, updateAccount } from '../domain/identity/accounts.ts';
import type { Principal } from '../domain/identity/accounts.ts';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import { admitConsoleSession } from '../domain/principals/admission.ts';
import { defaultAllowances } from '../domain/usage.ts';
import { useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';

const db = useTestDatabase();
const leasesMade: AllowanceLeases[] = [];
function leasesWith(allowances = defaultAllowances) {
  const leases = new AllowanceLeases(db.pool, allowances, interfaceEntitlements);
  leasesMade.push(leases);
  return leases;
}
afterAll(async () => {
  for (const leases of leasesMade) await leases.releaseAll();
});

const sessionRow = z.object({ lastSeenAt: z.string(), expiresAt: z.string(), endedAt: z.string().nullable(), userAgent: z.string().nullable() });
const readSession = (id: string) =>
  db.pool.one(sql.type(sessionRow)`
    SELECT last_seen_at::text AS "lastSeenAt", expires_at::text AS "expiresAt", ended_at::text AS "endedAt", user_agent AS "userAgent"
      FROM console_sessions WHERE id = ${id}`);
const restUsed = (accountId: string) =>
  db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count::int AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'rest'`);

async function principalWithToken(plan: Parameters<typeof accountWithToken>[1] = 'developer_agent'): Promise<{ principal: Principal; token: string }> {
  const { account, token, tokenId } = await accountWithToken(db.pool, plan);
  return { principal: { tokenId, account }, token };
}

describe('opening a session', () => {
  it("gives a session of the principal's account and token, with a secret and its derived CSRF token", async () => {
    const { principal } = await principalWithToken();
    const opened = await openSession(db.pool, { principal, userAgent: 'Reviewer Browser/1.0' });
    expect(opened.sessionSecret).toMatch(/^hnp_ses_[A-Za-z0-9_-]{43}$/);
    expect(opened.csrfToken).toMatch(/^hnp_csrf_[A-Za-z0-9_-]{43}$/);
    expect(opened.csrfToken).toBe(csrfTokenFor(opened.sessionSecret));
    expect(opened.session).toMatchObject({ accountId: principal.account.id, tokenId: principal.tokenId });
    const hours = (Date.parse(opened.session.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(7.9);
    expect(hours).toBeLessThanOrEqual(8);
    expect((await readSession(opened.session.id)).userAgent).toBe('Reviewer Browser/1.0');
  });

  it('ends no later than its token expires, and takes its own ttl', async () => {
    const { principal } = await principalWithToken();
    const tokenExpiry = new Date(Date.now() + 3_600_000).toISOString();
    const issued = await issueAccessToken(db.pool, { accountId: principal.account.id, name: 'one hour', expiresAt: tokenExpiry });
    const { session } = await openSession(db.pool, { principal: { tokenId: issued.record.id, account: principal.account } });
    expect(session.expiresAt).toBe(tokenExpiry);
    const short = await openSession(db.pool, { principal }, { ttlSeconds: 60 });
    expect(Date.parse(short.session.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    for (const ttlSeconds of [0, -1, 1.5]) await expect(openSession(db.pool, { principal }, { ttlSeconds })).rejects.toThrow(RangeError);
  });

  it('refuses a token revoked since it was admitted, leaving no row', async () => {
    const { principal } = await principalWithToken();
    await revokeAccessToken(db.pool, principal.tokenId);
    await expect(openSession(db.pool, { principal })).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await db.pool.exists(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM console_sessions WHERE token_id = ${principal.tokenId}`)).toBe(false);
  });

  it('stores only a hash: neither the secret, the CSRF token nor the access token appear in the row', async () => {
    const { principal, token } = await principalWithToken();
    const { sessionSecret, csrfToken, session } = await openSession(db.pool, { principal, userAgent: 'UA' });
    const row = await db.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT s::text AS row FROM console_sessions s WHERE id = ${session.id}`);
    expect(row).toContain(session.id);
    for (const secret of [sessionSecret, csrfToken, token]) {
      expect(row).not.toContain(secret);
      // The random part after the fixed prefix (base64url may itself contain '_', so cut the prefix, not at the last '_').
      expect(row).not.toContain(secret.replace(/^hnp_[a-z]+_/, ''));
    }
  });

  it('keeps the user agent to 256 characters (code points)', async () => {
    const { principal } = await principalWithToken();
    const { session } = await openSession(db.pool, { principal, userAgent: '🙂'.repeat(1000) });
    expect((await readSession(session.id)).userAgent).toBe('🙂'.repeat(256));
  });
});

describe('CSRF tokens', () => {
  it("are the session's own: deterministic, different per session, compared whole", async () => {
    const { principal } = await principalWithToken();
    const mine = await openSession(db.pool, { principal });
    const another = await openSession(db.pool, { principal });
    expect(csrfTokenFor(mine.sessionSecret)).toBe(mine.csrfToken);
    expect(mine.csrfToken).not.toBe(another.csrfToken);
    expect(checkCsrf(mine.sessionSecret, mine.csrfToken)).toBe(true);
    expect(checkCsrf(mine.sessionSecret, another.csrfToken)).toBe(false);
    expect(checkCsrf(another.sessionSecret, mine.csrfToken)).toBe(false);
    const last = mine.csrfToken.at(-1)!;
    const changed = mine.csrfToken.slice(0, -1) + (last === 'A' ? 'B' : 'A');
    for (const presented of ['', undefined, null, mine.sessionSecret, changed, `${mine.csrfToken}x`, mine.csrfToken.slice(0, -1)]) {
      expect(checkCsrf(mine.sessionSecret, presented)).toBe(false);
    }
  });
});

describe('admitting a session', () => {
  it('admits a live session with its principal, charging one REST request (none with charge: false)', async () => {
    const { principal } = await principalWithToken();
    const leases = leasesWith();
    const { sessionSecret, session } = await openSession(db.pool, { principal });
    const admitted = await admitConsoleSession(db.pool, { sessionSecret, leases });
    expect(admitted).toMatchObject({ tokenId: principal.tokenId, account: { id: principal.account.id }, sessionId: session.id, sessionExpiresAt: session.expiresAt });
    expect(admitted.usage).toMatchObject({ monthUsed: 1 });
    await leases.releaseAll();
    expect(await restUsed(principal.account.id)).toBe(1);
    const uncharged = await admitConsoleSession(db.pool, { sessionSecret, leases, charge: false });
    expect(uncharged.usage).toBeNull();
    await leases.releaseAll();
    expect(await restUsed(principal.account.id)).toBe(1);
  });

  it('refuses unknown, malformed, expired, signed-out, revoked, rotated-away and expired-token sessions as session_invalid', async () => {
    const leases = leasesWith();
    const open = async () => {
      const { principal } = await principalWithToken();
      return { principal, ...(await openSession(db.pool, { principal })) };
    };
    const expired = await open();
    await db.pool.query(sql.unsafe`UPDATE console_sessions SET expires_at = now() - interval '1 second', created_at = now() - interval '1 hour' WHERE id = ${expired.session.id}`);
    const signedOut = await open();
    await signOut(db.pool, signedOut.sessionSecret);
    const revoked = await open();
    await revokeAccessToken(db.pool, revoked.principal.tokenId);
    const rotated = await open();
    await rotateAccessToken(db.pool, rotated.principal.tokenId);
    const tokenExpired = await open();
    await db.pool.query(sql.unsafe`UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE id = ${tokenExpired.principal.tokenId}`);
    const secrets = [`hnp_ses_${'A'.repeat(43)}`, 'garbage', '', expired.sessionSecret, signedOut.sessionSecret, revoked.sessionSecret, rotated.sessionSecret, tokenExpired.sessionSecret];
    for (const sessionSecret of secrets) {
      await expect(admitConsoleSession(db.pool, { sessionSecret, leases }), sessionSecret).rejects.toMatchObject({ code: 'session_invalid' });
    }
  });

  it("judges the account on the automation interface: suspended is account_inactive, a plan without it entitlement_required, nothing charged", async () => {
    const leases = leasesWith();
    const suspended = await principalWithToken();
    const s1 = await openSession(db.pool, { principal: suspended.principal });
    await updateAccount(db.pool, suspended.principal.account.id, { status: 'suspended' });
    await expect(admitConsoleSession(db.pool, { sessionSecret: s1.sessionSecret, leases })).rejects.toMatchObject({ code: 'account_inactive' });
    const downgraded = await principalWithToken();
    const s2 = await openSession(db.pool, { principal: downgraded.principal });
    await updateAccount(db.pool, downgraded.principal.account.id, { plan: 'premium' });
    await expect(admitConsoleSession(db.pool, { sessionSecret: s2.sessionSecret, leases })).rejects.toMatchObject({ code: 'entitlement_required' });
    await leases.releaseAll();
    expect(await restUsed(suspended.principal.account.id)).toBeNull();
    expect(await restUsed(downgraded.principal.account.id)).toBeNull();
  });

  it('records when the session was last seen at most once a minute', async () => {
    const { principal } = await principalWithToken();
    const leases = leasesWith();
    const { sessionSecret, session } = await openSession(db.pool, { principal });
    const firstSeen = (await readSession(session.id)).lastSeenAt;
    await admitConsoleSession(db.pool, { sessionSecret, leases, charge: false });
    expect((await readSession(session.id)).lastSeenAt).toBe(firstSeen);
    await db.pool.query(sql.unsafe`UPDATE console_sessions SET last_seen_at = now() - interval '2 minutes' WHERE id = ${session.id}`);
    const backdated = (await readSession(session.id)).lastSeenAt;
    await admitConsoleSession(db.pool, { sessionSecret, leases, charge: false });
    expect(Date.parse((await readSession(session.id)).lastSeenAt)).toBeGreaterThan(Date.parse(backdated));
  });

  it('charges exactly the per-minute allowance under 200 concurrent requests of one session', async () => {
    const { principal } = await principalWithToken();
    const leases = leasesWith({ ...defaultAllowances, rest: { perMinute: 50, perMonth: { developer_agent: 100_000 } } });
    const { sessionSecret } = await openSession(db.pool, { principal });
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => admitConsoleSession(db.pool, { sessionSecret, leases })));
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code as string);
    expect(admitted).toBe(50);
    expect(new Set(refused)).toEqual(new Set(['rate_limited']));
    await leases.releaseAll();
    expect(await restUsed(principal.account.id)).toBe(50);
  });
});

describe('signing out', () => {
  it('ends only that session, once; malformed values are ignored', async () => {
    const { principal } = await principalWithToken();
    const leases = leasesWith();
    const mine = await openSession(db.pool, { principal });
    const other = await openSession(db.pool, { principal });
    await signOut(db.pool, mine.sessionSecret);
    const endedAt = (await readSession(mine.session.id)).endedAt;
    expect(endedAt).not.toBeNull();
    await signOut(db.pool, mine.sessionSecret);
    expect((await readSession(mine.session.id)).endedAt).toBe(endedAt);
    await signOut(db.pool, 'garbage');
    await expect(admitConsoleSession(db.pool, { sessionSecret: other.sessionSecret, leases, charge: false })).resolves.toMatchObject({ sessionId: other.session.id });
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict and limited to /console, Secure only over HTTPS', () => {
    expect(cookieAttributes({ secure: false, maxAgeSeconds: 28_800 })).toEqual({ httpOnly: true, sameSite: 'strict', path: '/console', secure: false, maxAge: 28_800 });
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 28_800 })).toMatchObject({ secure: true });
  });

  it('clears with Max-Age 0 and never gives a negative, fractional or infinite age', () => {
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 0 }).maxAge).toBe(0);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: -5 }).maxAge).toBe(0);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 59.9 }).maxAge).toBe(59);
    expect(() => cookieAttributes({ secure: true, maxAgeSeconds: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});
