// Reviewer console sessions (issue 16): a personal access token is exchanged once for a session
// cookie, so the token itself never lives in the browser. The session stays bound to the token it
// came from: a revoked, rotated-away or expired token, or an account no longer `active`, ends it on
// the next request (domain/principals/admission.ts resolves sessions with `liveSessionQuery`). Only
// the SHA-256 digest of the session secret is stored (db/migrations/0017_console_sessions.sql);
// like access tokens it carries 256 bits, so a slow hash buys nothing.
//
// The CSRF token is derived from the session secret (an HMAC keyed by it), not stored: the server
// can put it into every form it renders without keeping a second secret, and a page of another
// site, which can neither read the cookie nor our pages, cannot produce it (decisions.md 64).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { accountSchema } from '../identity/accounts.ts';
import type { Principal } from '../identity/accounts.ts';
import { generateSecret, hashSecret, looksLikeSecret, secretPrefixes } from '../secrets.ts';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';

type Db = CommonQueryMethods;

/** The prefixes of the console's secrets (domain/secrets.ts holds every prefix). */
export const consoleSecretPrefixes = { session: secretPrefixes.consoleSession, csrf: secretPrefixes.consoleCsrf } as const;

/** The cookie that carries the session secret; its attributes are `cookieAttributes`'. */
export const sessionCookieName = 'hnp_console_session';

/** Eight hours: a reviewer's working day, after which they sign in again. */
export const defaultSessionTtlSeconds = 8 * 60 * 60;

const userAgentMaxLength = 256;

export const consoleSessionSchema = z.object({
  id: z.uuid(),
  accountId: z.uuid(),
  /** The access token the session was exchanged from; with the account, the session's Principal. */
  tokenId: z.uuid(),
  expiresAt: isoTimestamp,
});
export type ConsoleSession = z.infer<typeof consoleSessionSchema>;

export type SignedIn = {
  /** The cookie's value: shown once, only its hash is stored. */
  sessionSecret: string;
  /** Sent back with every state-changing request (`csrfTokenFor(sessionSecret)`). */
  csrfToken: string;
  session: ConsoleSession;
};

/**
 * Opens a console session for a principal the caller has just admitted with its personal access
 * token (the console's sign-in admits it to the `automation` interface first, so an account whose
 * plan lacks it never gets a session). The session expires after `ttlSeconds`, or with the token if
 * that comes first; a token revoked since it was admitted gives `invalid_token`.
 */
export async function openSession(db: Db, input: { principal: Principal; userAgent?: string | null | undefined }, options: { ttlSeconds?: number } = {}): Promise<SignedIn> {
  const ttlSeconds = options.ttlSeconds ?? defaultSessionTtlSeconds;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new RangeError('ttlSeconds must be a positive integer.');
  const sessionSecret = generateSecret(consoleSecretPrefixes.session);
  // From the token's row, so a token revoked since it was authenticated gives no session.
  const session = await db.maybeOne(sql.type(consoleSessionSchema)`
    INSERT INTO console_sessions (account_id, token_id, session_hash, user_agent, expires_at)
    SELECT t.account_id, t.id, ${hashSecret(sessionSecret)}, ${boundedUserAgent(input.userAgent)},
           least(now() + make_interval(secs => ${ttlSeconds}), t.expires_at)
      FROM access_tokens t
     WHERE t.id = ${input.principal.tokenId} AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
    RETURNING id, account_id AS "accountId", token_id AS "tokenId", expires_at AS "expiresAt"`);
  if (!session) throw new AppError('invalid_token');
  return { sessionSecret, csrfToken: csrfTokenFor(sessionSecret), session };
}

/** A live session's row as admission reads it: the session, when it was last seen, its token's last use and its account. */
export const liveSessionSchema = consoleSessionSchema.extend({
  lastSeenAt: isoTimestamp,
  tokenLastUsedAt: isoTimestamp.nullable(),
  account: accountSchema,
});
export type LiveSession = z.infer<typeof liveSessionSchema>;

/**
 * The live session with this secret: not ended or expired, its token neither revoked, rotated away
 * nor expired. The account's status is returned, not filtered, so admission can say
 * `account_inactive` as it does for tokens.
 */
export function liveSessionQuery(sessionSecret: string) {
  return sql.type(liveSessionSchema)`
    SELECT s.id, s.account_id AS "accountId", s.token_id AS "tokenId", s.expires_at AS "expiresAt",
           s.last_seen_at AS "lastSeenAt", t.last_used_at AS "tokenLastUsedAt",
           json_build_object('id', a.id, 'email', a.email, 'displayName', a.display_name, 'plan', a.plan,
                             'status', a.status, 'createdAt', a.created_at, 'updatedAt', a.updated_at) AS account
      FROM console_sessions s
      JOIN access_tokens t ON t.id = s.token_id
      JOIN accounts a ON a.id = s.account_id
     WHERE s.session_hash = ${hashSecret(sessionSecret)}
       AND s.ended_at IS NULL AND s.expires_at > now()
       AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`;
}

/** Whether a cookie value can be a session secret at all (anything else is not looked up). */
export const looksLikeSessionSecret = (value: string) => looksLikeSecret(value, consoleSecretPrefixes.session);

/** Records the session's last use at most once a minute (the token's is admission's step 4). */
export async function touchSession(db: Db, session: { id: string; lastSeenAt: string }): Promise<void> {
  if (Date.now() - Date.parse(session.lastSeenAt) <= 60_000) return;
  await db.query(sql.type(emptyRow)`
    UPDATE console_sessions SET last_seen_at = now()
     WHERE id = ${session.id} AND last_seen_at < now() - interval '60 seconds'`);
}

const csrfLabel = 'hnp console csrf v1';

/** The CSRF token of a session: `hnp_csrf_` and an HMAC-SHA256 of a fixed label keyed by the session secret. */
export function csrfTokenFor(sessionSecret: string): string {
  return consoleSecretPrefixes.csrf + createHmac('sha256', sessionSecret).update(csrfLabel).digest('base64url');
}

/** Whether `presented` is this session's CSRF token (compared in constant time). */
export function checkCsrf(sessionSecret: string, presented: string | undefined | null): boolean {
  if (typeof presented !== 'string' || !looksLikeSecret(presented, consoleSecretPrefixes.csrf)) return false;
  return timingSafeEqual(Buffer.from(csrfTokenFor(sessionSecret)), Buffer.from(presented));
}

/** Ends the session this cookie value names; an unknown or already ended session is left as it is. */
export async function signOut(db: Db, sessionSecret: string): Promise<void> {
  if (!looksLikeSessionSecret(sessionSecret)) return;
  await db.query(sql.type(emptyRow)`
    UPDATE console_sessions SET ended_at = now()
     WHERE session_hash = ${hashSecret(sessionSecret)} AND ended_at IS NULL`);
}

/**
 * The attributes of the session cookie: script cannot read it, no other site sends it, it goes only
 * to the console's paths, only over TLS when the console is served over HTTPS, and the browser
 * drops it at `maxAgeSeconds` (0 clears it on sign-out). In @fastify/cookie's option form.
 */
export function cookieAttributes(options: { secure: boolean; maxAgeSeconds: number }) {
  if (!Number.isFinite(options.maxAgeSeconds)) throw new RangeError('maxAgeSeconds must be a finite number.');
  const maxAge = Math.max(0, Math.floor(options.maxAgeSeconds));
  return { httpOnly: true, sameSite: 'strict', path: '/console', secure: options.secure, maxAge } as const;
}

/** The user agent as stored: at most 256 characters (code points, as Postgres counts them). */
function boundedUserAgent(userAgent: string | null | undefined): string | null {
  if (!userAgent) return null;
  return Array.from(userAgent).slice(0, userAgentMaxLength).join('');
}

/** A session as an operator lists it: never its secret. */
export const sessionListingSchema = z.object({
  id: z.uuid(),
  tokenId: z.uuid(),
  userAgent: z.string().nullable(),
  createdAt: isoTimestamp,
  lastSeenAt: isoTimestamp,
  expiresAt: isoTimestamp,
});

/** An account's live sessions (not ended, not expired), newest first. */
export async function listLiveSessions(db: Db, accountId: string) {
  return db.any(sql.type(sessionListingSchema)`
    SELECT id, token_id AS "tokenId", user_agent AS "userAgent", created_at AS "createdAt", last_seen_at AS "lastSeenAt", expires_at AS "expiresAt"
      FROM console_sessions
     WHERE account_id = ${accountId} AND ended_at IS NULL AND expires_at > now()
     ORDER BY created_at DESC, id DESC`);
}

/** Ends every live session of an account, or the one named; the number ended. */
export async function endSessions(db: Db, input: { accountId: string; sessionId?: string | undefined }): Promise<number> {
  const ended = await db.any(sql.type(z.object({ id: z.uuid() }))`
    UPDATE console_sessions SET ended_at = now()
     WHERE account_id = ${input.accountId} AND ended_at IS NULL
       ${input.sessionId ? sql.fragment`AND id = ${input.sessionId}` : sql.fragment``}
    RETURNING id`);
  return ended.length;
}
