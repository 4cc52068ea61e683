// Reviewer console sessions (domain/console/sessions.ts) and the console branch of admission
// (admitConsoleSession, domain/principals/admission.ts). Proves: a session is opened only for a
// still-live token of an admitted principal, stores only the hash of its secret and lives at most
// 8 h or as long as its token; the CSRF token is derived from the session secret and accepted only
// for that session; a session is admitted like the automation gateway (live session and token,
// active account, automation entitlement, one REST request charged, even under 200 parallel
// requests) and a refusal counts and touches nothing; sign-out ends only that session; the cookie
// attributes are the strict ones.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AllowanceLeases } from '../domain/allowance-lease.ts';
import { checkCsrf, cookieAttributes, csrfTokenFor, openSession, signOut } from '../domain/console/sessions.ts';
import { issueAccessToken, revokeAccessToken, rotateAccessToken, updateAccount } from '../domain/identity/accounts.ts';
import type { Principal } from '../domain/identity/accounts.ts';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import type { Plan } from '../domain/identity/plans.ts';
import { admitAccessToken, admitConsoleSession } from '../domain/principals/admission.ts';
import { hashSecret } from '../domain/secrets.ts';
import { defaultAllowances } from '../domain/usage.ts';
import { useAllowanceLeases, useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';
import { clearOfMinuteEnd } from './support/minute-window.ts';

const db = useTestDatabase();
const allowance = useAllowanceLeases(db);

const sessionSecretFormat = /^hnp_ses_[A-Za-z0-9_-]{43}$/;
const csrfTokenFormat = /^hnp_csrf_[A-Za-z0-9_-]{43}$/;

const sessionRow = z.object({
  accountId: z.string(),
  tokenId: z.string(),
  sessionHash: z.string(),
  lastSeenAt: z.string(),
  expiresAt: z.string(),
  endedAt: z.string().nullable(),
  userAgent: z.string().nullable(),
});
const readSession = (id: string) =>
  db.pool.one(sql.type(sessionRow)`
    SELECT account_id AS "accountId", token_id AS "tokenId", session_hash AS "sessionHash", last_seen_at::text AS "lastSeenAt",
           expires_at::text AS "expiresAt", ended_at::text AS "endedAt", user_agent AS "userAgent"
      FROM console_sessions WHERE id = ${id}`);
const sessionsOfToken = (tokenId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM console_sessions WHERE token_id = ${tokenId}`);
const counters = (accountId: string) =>
  db.pool.any(sql.type(z.object({ interface: z.string(), month: z.number(), minute: z.number() }))`
    SELECT interface, month_count AS month, minute_count AS minute FROM usage_counters WHERE account_id = ${accountId} ORDER BY interface`);
const tokenLastUsed = (tokenId: string) =>
  db.pool.oneFirst(sql.type(z.object({ at: z.string().nullable() }))`SELECT last_used_at::text AS at FROM access_tokens WHERE id = ${tokenId}`);
const backdateLastSeen = (sessionId: string) =>
  db.pool.query(sql.type(z.object({}))`UPDATE console_sessions SET last_seen_at = now() - interval '2 minutes' WHERE id = ${sessionId}`);

/** An account and token admitted the way the console's sign-in admits them, before a session is opened. */
async function admittedPrincipal(plan: Plan = 'developer_agent') {
  const { account, token, tokenId } = await accountWithToken(db.pool, plan);
  const principal: Principal = await admitAccessToken(db.pool, { token, iface: 'automation', leases: allowance.leases, charge: false });
  return { account, token, tokenId, principal };
}

/** A signed-in reviewer: the principal, its PAT and an open session; its token has been touched by sign-in. */
async function signedIn(plan: Plan = 'developer_agent', userAgent?: string) {
  const admitted = await admittedPrincipal(plan);
  const opened = await openSession(db.pool, { principal: admitted.principal, userAgent });
  return { ...admitted, ...opened };
}

/** Replaces one character of a token's random part with another base64url character. */
function changeOneChar(value: string, index: number): string {
  const at = value.length - 1 - index;
  const replacement = value[at] === 'A' ? 'B' : 'A';
  return value.slice(0, at) + replacement + value.slice(at + 1);
}

describe('openSession', () => {
  it("opens a session of the principal's account and token with a fresh secret and its derived CSRF token", async () => {
    const { account, tokenId, principal } = await admittedPrincipal();
    const opened = await openSession(db.pool, { principal, userAgent: 'Reviewer Browser/1.0' });
    expect(opened.sessionSecret).toMatch(sessionSecretFormat);
    expect(opened.csrfToken).toMatch(csrfTokenFormat);
    expect(opened.csrfToken).toBe(csrfTokenFor(opened.sessionSecret));
    expect(opened.session).toMatchObject({ accountId: account.id, tokenId });
    const row = await readSession(opened.session.id);
    expect(row).toMatchObject({ accountId: account.id, tokenId, endedAt: null, userAgent: 'Reviewer Browser/1.0' });
    // A second session of the same principal has its own secret.
    const second = await openSession(db.pool, { principal });
    expect(second.sessionSecret).not.toBe(opened.sessionSecret);
    expect(second.session.id).not.toBe(opened.session.id);
    expect((await readSession(second.session.id)).userAgent).toBeNull();
  });

  it('expires after 8 hours by default, or after ttlSeconds', async () => {
    const { principal } = await admittedPrincipal();
    const before = Date.now();
    const { session } = await openSession(db.pool, { principal });
    const after = Date.now();
    // Postgres's now() and the test's clock agree to within a second on the same machine.
    expect(Date.parse(session.expiresAt)).toBeGreaterThanOrEqual(before + 8 * 3_600_000 - 1_000);
    expect(Date.parse(session.expiresAt)).toBeLessThanOrEqual(after + 8 * 3_600_000 + 1_000);

    const short = await openSession(db.pool, { principal }, { ttlSeconds: 600 });
    const left = Date.parse(short.session.expiresAt) - Date.now();
    expect(left).toBeGreaterThan(590_000);
    expect(left).toBeLessThanOrEqual(601_000);
  });

  it('expires with its token when the token expires first', async () => {
    const { account } = await accountWithToken(db.pool);
    const tokenExpiry = new Date(Date.now() + 3_600_000).toISOString();
    const issued = await issueAccessToken(db.pool, { accountId: account.id, name: 'one hour', expiresAt: tokenExpiry });
    const principal = await admitAccessToken(db.pool, { token: issued.token, iface: 'automation', leases: allowance.leases, charge: false });
    const { session } = await openSession(db.pool, { principal });
    expect(session.expiresAt).toBe(tokenExpiry);
    // A token that outlives the session does not lengthen it.
    const later = new Date(Date.now() + 30 * 24 * 3_600_000).toISOString();
    const longLived = await issueAccessToken(db.pool, { accountId: account.id, name: 'a month', expiresAt: later });
    const opened = await openSession(db.pool, { principal: { tokenId: longLived.record.id, account } });
    expect(Date.parse(opened.session.expiresAt)).toBeLessThan(Date.now() + 8 * 3_600_000 + 1_000);
  });

  it('refuses with invalid_token, opening nothing, when the token was revoked, rotated away or expired after it was admitted', async () => {
    const revoked = await admittedPrincipal();
    await revokeAccessToken(db.pool, revoked.tokenId);
    await expect(openSession(db.pool, { principal: revoked.principal })).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await sessionsOfToken(revoked.tokenId)).toBe(0);

    const rotated = await admittedPrincipal();
    await rotateAccessToken(db.pool, rotated.tokenId);
    await expect(openSession(db.pool, { principal: rotated.principal })).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await sessionsOfToken(rotated.tokenId)).toBe(0);

    const expired = await admittedPrincipal();
    await db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE id = ${expired.tokenId}`);
    await expect(openSession(db.pool, { principal: expired.principal })).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await sessionsOfToken(expired.tokenId)).toBe(0);
  });

  it('keeps the user agent to 256 code points, never splitting a character', async () => {
    const ascii = await signedIn('developer_agent', 'x'.repeat(1000));
    expect((await readSession(ascii.session.id)).userAgent).toBe('x'.repeat(256));
    // Astral characters are two UTF-16 units each: cutting units would keep 128 of them, or half of one.
    const astral = await signedIn('developer_agent', '😀'.repeat(300));
    expect((await readSession(astral.session.id)).userAgent).toBe('😀'.repeat(256));
  });

  it('stores only the hash of the session secret: the secret, the CSRF token and the access token appear nowhere in the row', async () => {
    const { token, sessionSecret, csrfToken, session } = await signedIn('developer_agent', 'UA');
    expect((await readSession(session.id)).sessionHash).toBe(hashSecret(sessionSecret));
    const row = await db.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT s::text AS row FROM console_sessions s WHERE id = ${session.id}`);
    expect(row).toContain(session.id);
    for (const secret of [sessionSecret, csrfToken, token]) {
      expect(row).not.toContain(secret);
      // The random part after the fixed prefix (base64url may itself contain '_', so cut the prefix, not at the last '_').
      expect(row).not.toContain(secret.replace(/^hnp_[a-z]+_/, ''));
    }
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses ttlSeconds %s with a RangeError, opening nothing', async (ttlSeconds) => {
    const { tokenId, principal } = await admittedPrincipal();
    await expect(openSession(db.pool, { principal }, { ttlSeconds })).rejects.toBeInstanceOf(RangeError);
    expect(await sessionsOfToken(tokenId)).toBe(0);
  });
});

describe('CSRF tokens', () => {
  it('are derived deterministically from the session secret and differ between sessions', async () => {
    const { principal } = await admittedPrincipal();
    const mine = await openSession(db.pool, { principal });
    const another = await openSession(db.pool, { principal });
    expect(csrfTokenFor(mine.sessionSecret)).toBe(mine.csrfToken);
    expect(csrfTokenFor(mine.sessionSecret)).toBe(csrfTokenFor(mine.sessionSecret));
    expect(csrfTokenFor(another.sessionSecret)).toMatch(csrfTokenFormat);
    expect(another.csrfToken).not.toBe(mine.csrfToken);
    // Not the secret with another prefix: the cookie's value cannot be read off a rendered form.
    expect(mine.csrfToken.slice('hnp_csrf_'.length)).not.toBe(mine.sessionSecret.slice('hnp_ses_'.length));
  });

  it("checkCsrf accepts only the session's own token", async () => {
    const { principal } = await admittedPrincipal();
    const mine = await openSession(db.pool, { principal });
    const another = await openSession(db.pool, { principal });
    expect(checkCsrf(mine.sessionSecret, mine.csrfToken)).toBe(true);
    expect(checkCsrf(another.sessionSecret, another.csrfToken)).toBe(true);
    expect(checkCsrf(mine.sessionSecret, another.csrfToken)).toBe(false);
    expect(checkCsrf(another.sessionSecret, mine.csrfToken)).toBe(false);
  });

  it('checkCsrf refuses empty, missing, malformed and altered values without throwing', async () => {
    const { sessionSecret, csrfToken } = await signedIn();
    const body = csrfToken.slice('hnp_csrf_'.length);
    const refused: (string | null | undefined)[] = [
      '',
      undefined,
      null,
      'garbage',
      sessionSecret,
      `hnp_ses_${body}`,
      body,
      csrfToken.toUpperCase(),
      `${csrfToken}A`,
      csrfToken.slice(0, -1),
      ` ${csrfToken}`,
      changeOneChar(csrfToken, 0),
      changeOneChar(csrfToken, 20),
      changeOneChar(csrfToken, 42),
    ];
    for (const presented of refused) expect(checkCsrf(sessionSecret, presented), String(presented)).toBe(false);
    expect(checkCsrf(sessionSecret, csrfToken)).toBe(true);
  });
});

describe('admitConsoleSession', () => {
  it('admits a live session with its principal, session and expiry, charging one REST request', async () => {
    const { account, tokenId, sessionSecret, session } = await signedIn('team');
    const admitted = await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    expect(admitted).toEqual({
      tokenId,
      account: expect.objectContaining({ id: account.id, plan: 'team', status: 'active' }),
      sessionId: session.id,
      sessionExpiresAt: session.expiresAt,
      usage: { monthLimit: defaultAllowances.rest.perMonth.team, monthUsed: 1, minuteLimit: defaultAllowances.rest.perMinute, minuteUsed: 1 },
    });
    expect(await counters(account.id)).toEqual([{ interface: 'rest', month: 1, minute: 1 }]);
    const again = await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    expect(again.usage).toMatchObject({ monthUsed: 2, minuteUsed: 2 });
    expect(await counters(account.id)).toEqual([{ interface: 'rest', month: 2, minute: 2 }]);
  });

  it('with charge: false, admits and counts nothing', async () => {
    const { account, tokenId, sessionSecret, session } = await signedIn();
    const admitted = await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases, charge: false });
    expect(admitted).toMatchObject({ tokenId, sessionId: session.id, account: { id: account.id }, usage: null });
    expect(await counters(account.id)).toEqual([]);
  });

  it.each([
    ['a malformed secret', 'garbage'],
    ['an empty secret', ''],
    ['a well-formed unknown secret', `hnp_ses_${'A'.repeat(43)}`],
  ])('refuses %s with session_invalid', async (_label, sessionSecret) => {
    await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases })).rejects.toMatchObject({ code: 'session_invalid' });
  });

  it('refuses the personal access token or the CSRF token presented as the session secret', async () => {
    const { token, csrfToken, account } = await signedIn();
    for (const sessionSecret of [token, csrfToken]) {
      await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases })).rejects.toMatchObject({ code: 'session_invalid' });
    }
    expect(await counters(account.id)).toEqual([]);
  });

  // Each case ends a live session one way; the session and its account are otherwise fine.
  const endings: [string, (s: Awaited<ReturnType<typeof signedIn>>) => Promise<unknown>][] = [
    [
      'an expired session',
      (s) => db.pool.query(sql.type(z.object({}))`UPDATE console_sessions SET created_at = now() - interval '9 hours', expires_at = now() - interval '1 second' WHERE id = ${s.session.id}`),
    ],
    ['a signed-out session', (s) => signOut(db.pool, s.sessionSecret)],
    ['a session whose token was revoked', (s) => revokeAccessToken(db.pool, s.tokenId)],
    ['a session whose token was rotated away', (s) => rotateAccessToken(db.pool, s.tokenId)],
    ['a session whose token expired', (s) => db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE id = ${s.tokenId}`)],
  ];
  it.each(endings)('refuses %s with session_invalid, counting and touching nothing', async (_label, end) => {
    const s = await signedIn();
    await admitConsoleSession(db.pool, { sessionSecret: s.sessionSecret, leases: allowance.leases });
    await backdateLastSeen(s.session.id);
    const seen = (await readSession(s.session.id)).lastSeenAt;
    await end(s);
    await expect(admitConsoleSession(db.pool, { sessionSecret: s.sessionSecret, leases: allowance.leases })).rejects.toMatchObject({ code: 'session_invalid' });
    expect(await counters(s.account.id)).toEqual([{ interface: 'rest', month: 1, minute: 1 }]);
    expect((await readSession(s.session.id)).lastSeenAt).toBe(seen);
  });

  it('refuses a suspended account with account_inactive, counting and touching nothing', async () => {
    const { account, tokenId, sessionSecret, session } = await signedIn();
    await updateAccount(db.pool, account.id, { status: 'suspended' });
    await backdateLastSeen(session.id);
    await db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET last_used_at = NULL WHERE id = ${tokenId}`);
    const seen = (await readSession(session.id)).lastSeenAt;
    await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases })).rejects.toMatchObject({ code: 'account_inactive' });
    await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases, charge: false })).rejects.toMatchObject({ code: 'account_inactive' });
    expect(await counters(account.id)).toEqual([]);
    expect((await readSession(session.id)).lastSeenAt).toBe(seen);
    expect(await tokenLastUsed(tokenId)).toBeNull();
    // The session was not ended: it is the account's status that refuses, and reactivation lets it in again.
    await updateAccount(db.pool, account.id, { status: 'active' });
    await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases })).resolves.toMatchObject({ sessionId: session.id });
  });

  it('refuses an account moved to a plan without the automation interface with entitlement_required, charging nothing', async () => {
    const { account, sessionSecret } = await signedIn();
    await updateAccount(db.pool, account.id, { plan: 'premium' });
    await expect(admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases })).rejects.toMatchObject({
      code: 'entitlement_required',
      extensions: { plan: 'premium', requiredPlans: [...interfaceEntitlements.automation] },
    });
    expect(await counters(account.id)).toEqual([]);
  });

  it('records when the session and its token were last used, at most once a minute', async () => {
    const { tokenId, sessionSecret, session } = await signedIn();
    await db.pool.query(sql.type(z.object({}))`UPDATE access_tokens SET last_used_at = NULL WHERE id = ${tokenId}`);
    const opened = (await readSession(session.id)).lastSeenAt;

    // Just opened: the session was seen now; the token (cleared above) gets its first use.
    await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    expect((await readSession(session.id)).lastSeenAt).toBe(opened);
    const tokenUsed = await tokenLastUsed(tokenId);
    expect(tokenUsed).not.toBeNull();
    await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    expect(await tokenLastUsed(tokenId)).toBe(tokenUsed);

    // Two minutes later: touched once, then not again within the minute.
    await backdateLastSeen(session.id);
    const backdated = (await readSession(session.id)).lastSeenAt;
    await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    const touched = (await readSession(session.id)).lastSeenAt;
    expect(Date.parse(touched)).toBeGreaterThan(Date.parse(backdated));
    await admitConsoleSession(db.pool, { sessionSecret, leases: allowance.leases });
    expect((await readSession(session.id)).lastSeenAt).toBe(touched);
  });

  describe('200 parallel requests of one session with a per-minute allowance of 50', () => {
    const PER_MINUTE = 50;
    const CALLERS = 200;
    let tight: AllowanceLeases;

    beforeAll(() => {
      // Monthly allowance far above the load, so only the minute can refuse.
      tight = new AllowanceLeases(db.pool, { ...defaultAllowances, rest: { perMinute: PER_MINUTE, perMonth: { developer_agent: 100_000, team: 100_000 } } }, interfaceEntitlements);
    });
    afterAll(async () => {
      await tight.releaseAll();
    });

    it(`admits exactly ${PER_MINUTE}, refuses the rest with rate_limited, and counts ${PER_MINUTE}`, async () => {
      const { account, sessionSecret, session } = await signedIn();
      // The minute counter starts again at a minute boundary: 200 admissions start well inside a minute.
      await clearOfMinuteEnd(db.pool, 15);

      const results = await Promise.allSettled(Array.from({ length: CALLERS }, () => admitConsoleSession(db.pool, { sessionSecret, leases: tight })));
      const admitted = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
      const refused = results.filter((r) => r.status === 'rejected').map((r) => r.reason as unknown);
      expect(admitted).toHaveLength(PER_MINUTE);
      for (const a of admitted) expect(a).toMatchObject({ sessionId: session.id, usage: { minuteLimit: PER_MINUTE } });
      // Each admitted request had its own place in the minute.
      expect(new Set(admitted.map((a) => a.usage?.minuteUsed))).toEqual(new Set(Array.from({ length: PER_MINUTE }, (_, i) => i + 1)));
      expect(refused).toHaveLength(CALLERS - PER_MINUTE);
      for (const reason of refused) expect(reason).toMatchObject({ code: 'rate_limited', extensions: { minuteLimit: PER_MINUTE, interface: 'rest' } });
      expect(await counters(account.id)).toEqual([{ interface: 'rest', month: PER_MINUTE, minute: PER_MINUTE }]);
    });
  });
});

describe('signOut', () => {
  it('ends only that session, once: signing out again changes nothing', async () => {
    const { principal } = await admittedPrincipal();
    const mine = await openSession(db.pool, { principal });
    const other = await openSession(db.pool, { principal });
    await signOut(db.pool, mine.sessionSecret);
    const endedAt = (await readSession(mine.session.id)).endedAt;
    expect(endedAt).not.toBeNull();
    await expect(admitConsoleSession(db.pool, { sessionSecret: mine.sessionSecret, leases: allowance.leases })).rejects.toMatchObject({ code: 'session_invalid' });

    await signOut(db.pool, mine.sessionSecret);
    expect((await readSession(mine.session.id)).endedAt).toBe(endedAt);
    // Another session of the same token goes on.
    expect((await readSession(other.session.id)).endedAt).toBeNull();
    await expect(admitConsoleSession(db.pool, { sessionSecret: other.sessionSecret, leases: allowance.leases })).resolves.toMatchObject({ sessionId: other.session.id });
  });

  it('ignores malformed and unknown values, ending nothing', async () => {
    const { sessionSecret, session, csrfToken, token } = await signedIn();
    for (const value of ['', 'garbage', `hnp_ses_${'A'.repeat(43)}`, csrfToken, token, `${sessionSecret}A`]) {
      await expect(signOut(db.pool, value)).resolves.toBeUndefined();
    }
    expect((await readSession(session.id)).endedAt).toBeNull();
  });
});

describe('cookieAttributes', () => {
  it('is HttpOnly, SameSite=Strict and limited to /console; Secure follows the option', () => {
    expect(cookieAttributes({ secure: false, maxAgeSeconds: 28_800 })).toEqual({ httpOnly: true, sameSite: 'strict', path: '/console', secure: false, maxAge: 28_800 });
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 28_800 })).toEqual({ httpOnly: true, sameSite: 'strict', path: '/console', secure: true, maxAge: 28_800 });
  });

  it('floors the age and never makes it negative (0 clears the cookie)', () => {
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 0 }).maxAge).toBe(0);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: -5 }).maxAge).toBe(0);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: -0.5 }).maxAge).toBe(0);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 59.9 }).maxAge).toBe(59);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('refuses a maxAgeSeconds of %s with a RangeError', (maxAgeSeconds) => {
    expect(() => cookieAttributes({ secure: true, maxAgeSeconds })).toThrow(RangeError);
  });
});
