// Reviewer console sessions (domain/console/sessions.ts): a personal access token exchanged for a
// session, bound to that token, stored only as hashes.
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkCsrf, cookieAttributes, resumeSession, signIn, signOut } from '../domain/console/sessions.ts';
import { issueAccessToken, revokeAccessToken, rotateAccessToken, updateAccount } from '../domain/identity/accounts.ts';
import { useTestDatabase } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';

const db = useTestDatabase();

const sessionRow = z.object({ lastSeenAt: z.string(), expiresAt: z.string(), endedAt: z.string().nullable(), userAgent: z.string().nullable() });
const readSession = (id: string) =>
  db.pool.one(sql.type(sessionRow)`
    SELECT last_seen_at::text AS "lastSeenAt", expires_at::text AS "expiresAt", ended_at::text AS "endedAt", user_agent AS "userAgent"
      FROM console_sessions WHERE id = ${id}`);

describe('signing in', () => {
  it('exchanges a live personal access token for a session of its account', async () => {
    const { account, token, tokenId } = await accountWithToken(db.pool);
    const signedIn = await signIn(db.pool, { personalAccessToken: token, userAgent: 'Reviewer Browser/1.0' });
    expect(signedIn.sessionSecret).toMatch(/^hnp_ses_[A-Za-z0-9_-]{43}$/);
    expect(signedIn.csrfToken).toMatch(/^hnp_csrf_[A-Za-z0-9_-]{43}$/);
    expect(signedIn.session).toMatchObject({ accountId: account.id, tokenId });
    const hours = (Date.parse(signedIn.session.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(7.9);
    expect(hours).toBeLessThanOrEqual(8);
    expect(JSON.stringify(signedIn)).not.toContain(token);
    expect((await readSession(signedIn.session.id)).userAgent).toBe('Reviewer Browser/1.0');
  });

  it('refuses unknown, malformed, revoked, rotated-away and expired tokens as invalid_token', async () => {
    const revoked = await accountWithToken(db.pool);
    await revokeAccessToken(db.pool, revoked.tokenId);
    const rotated = await accountWithToken(db.pool);
    await rotateAccessToken(db.pool, rotated.tokenId);
    const expired = await issueAccessToken(db.pool, { accountId: revoked.account.id, name: 'old', expiresAt: '2020-01-01T00:00:00Z' });
    for (const personalAccessToken of [`hnp_pat_${'A'.repeat(43)}`, 'not-a-token', revoked.token, rotated.token, expired.token]) {
      await expect(signIn(db.pool, { personalAccessToken })).rejects.toMatchObject({ code: 'invalid_token' });
    }
  });

  it('refuses the token of an account that is not active with account_inactive', async () => {
    const { account, token } = await accountWithToken(db.pool);
    await updateAccount(db.pool, account.id, { status: 'suspended' });
    await expect(signIn(db.pool, { personalAccessToken: token })).rejects.toMatchObject({ code: 'account_inactive' });
  });

  it('ends the session no later than its token expires', async () => {
    const { account } = await accountWithToken(db.pool);
    const tokenExpiry = new Date(Date.now() + 3_600_000).toISOString();
    const issued = await issueAccessToken(db.pool, { accountId: account.id, name: 'one hour', expiresAt: tokenExpiry });
    const { session } = await signIn(db.pool, { personalAccessToken: issued.token });
    expect(session.expiresAt).toBe(tokenExpiry);
  });

  it('stores only hashes: the session secret, the CSRF token and the access token appear nowhere in the row', async () => {
    const { token } = await accountWithToken(db.pool);
    const { sessionSecret, csrfToken, session } = await signIn(db.pool, { personalAccessToken: token, userAgent: 'UA' });
    const row = await db.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT s::text AS row FROM console_sessions s WHERE id = ${session.id}`);
    expect(row).toContain(session.id);
    for (const secret of [sessionSecret, csrfToken, token]) {
      expect(row).not.toContain(secret);
      // The random part after the fixed prefix (base64url may itself contain '_', so cut the prefix, not at the last '_').
      expect(row).not.toContain(secret.replace(/^hnp_[a-z]+_/, ''));
    }
  });

  it('keeps the user agent to 256 characters', async () => {
    const { token } = await accountWithToken(db.pool);
    const { session } = await signIn(db.pool, { personalAccessToken: token, userAgent: 'x'.repeat(1000) });
    expect((await readSession(session.id)).userAgent).toBe('x'.repeat(256));
  });
});

describe('resuming a session', () => {
  it('resumes a live session with its account and records when it was last seen at most once a minute', async () => {
    const { account, token, tokenId } = await accountWithToken(db.pool);
    const { sessionSecret, session } = await signIn(db.pool, { personalAccessToken: token });
    expect(await resumeSession(db.pool, sessionSecret)).toEqual({ session, account });

    const firstSeen = (await readSession(session.id)).lastSeenAt;
    await resumeSession(db.pool, sessionSecret);
    expect((await readSession(session.id)).lastSeenAt).toBe(firstSeen);

    await db.pool.query(sql.unsafe`UPDATE console_sessions SET last_seen_at = now() - interval '2 minutes' WHERE id = ${session.id}`);
    const backdated = (await readSession(session.id)).lastSeenAt;
    await resumeSession(db.pool, sessionSecret);
    expect(Date.parse((await readSession(session.id)).lastSeenAt)).toBeGreaterThan(Date.parse(backdated));
    expect(tokenId).toBe(session.tokenId);
  });

  it('resumes nothing for an unknown or malformed secret', async () => {
    expect(await resumeSession(db.pool, `hnp_ses_${'A'.repeat(43)}`)).toBeNull();
    expect(await resumeSession(db.pool, 'garbage')).toBeNull();
  });

  it('resumes nothing once the session has expired', async () => {
    const { token } = await accountWithToken(db.pool);
    const { sessionSecret, session } = await signIn(db.pool, { personalAccessToken: token });
    await db.pool.query(sql.unsafe`UPDATE console_sessions SET expires_at = now() - interval '1 second', created_at = now() - interval '1 hour' WHERE id = ${session.id}`);
    expect(await resumeSession(db.pool, sessionSecret)).toBeNull();
  });

  it('resumes nothing after sign-out, and signing out again changes nothing', async () => {
    const { token } = await accountWithToken(db.pool);
    const { sessionSecret, session } = await signIn(db.pool, { personalAccessToken: token });
    const other = await signIn(db.pool, { personalAccessToken: token });
    await signOut(db.pool, sessionSecret);
    expect(await resumeSession(db.pool, sessionSecret)).toBeNull();
    const endedAt = (await readSession(session.id)).endedAt;
    expect(endedAt).not.toBeNull();
    await signOut(db.pool, sessionSecret);
    expect((await readSession(session.id)).endedAt).toBe(endedAt);
    // Only that session: another of the same token goes on.
    expect(await resumeSession(db.pool, other.sessionSecret)).not.toBeNull();
  });

  it('resumes nothing once its access token is revoked or rotated away', async () => {
    const revoked = await accountWithToken(db.pool);
    const revokedSession = await signIn(db.pool, { personalAccessToken: revoked.token });
    const rotated = await accountWithToken(db.pool);
    const rotatedSession = await signIn(db.pool, { personalAccessToken: rotated.token });
    await revokeAccessToken(db.pool, revoked.tokenId);
    await rotateAccessToken(db.pool, rotated.tokenId);
    expect(await resumeSession(db.pool, revokedSession.sessionSecret)).toBeNull();
    expect(await resumeSession(db.pool, rotatedSession.sessionSecret)).toBeNull();
  });

  it('resumes nothing while the account is not active', async () => {
    const { account, token } = await accountWithToken(db.pool);
    const { sessionSecret } = await signIn(db.pool, { personalAccessToken: token });
    await updateAccount(db.pool, account.id, { status: 'suspended' });
    expect(await resumeSession(db.pool, sessionSecret)).toBeNull();
  });
});

describe('CSRF tokens', () => {
  it("accepts only the session's own token, and nothing once the session has ended", async () => {
    const { token } = await accountWithToken(db.pool);
    const mine = await signIn(db.pool, { personalAccessToken: token });
    const another = await signIn(db.pool, { personalAccessToken: token });
    expect(await checkCsrf(db.pool, mine.sessionSecret, mine.csrfToken)).toBe(true);
    expect(await checkCsrf(db.pool, mine.sessionSecret, another.csrfToken)).toBe(false);
    expect(await checkCsrf(db.pool, another.sessionSecret, mine.csrfToken)).toBe(false);
    expect(await checkCsrf(db.pool, mine.sessionSecret, '')).toBe(false);
    expect(await checkCsrf(db.pool, mine.sessionSecret, mine.sessionSecret)).toBe(false);
    await signOut(db.pool, mine.sessionSecret);
    expect(await checkCsrf(db.pool, mine.sessionSecret, mine.csrfToken)).toBe(false);
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict and limited to /console, Secure only over HTTPS', () => {
    expect(cookieAttributes({ secure: false, maxAgeSeconds: 28_800 })).toBe('HttpOnly; SameSite=Strict; Path=/console; Max-Age=28800');
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 28_800 })).toBe('HttpOnly; SameSite=Strict; Path=/console; Secure; Max-Age=28800');
  });

  it('clears with Max-Age=0 and never gives a negative or fractional age', () => {
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 0 })).toMatch(/; Max-Age=0$/);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: -5 })).toMatch(/; Max-Age=0$/);
    expect(cookieAttributes({ secure: true, maxAgeSeconds: 59.9 })).toMatch(/; Max-Age=59$/);
  });
});
