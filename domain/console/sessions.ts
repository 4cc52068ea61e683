// Reviewer console sessions (issue 16): a personal access token is exchanged once for a session
// cookie, so the token itself never lives in the browser. The session stays bound to the token it
// came from: a revoked, rotated-away or expired token, or an account no longer `active`, ends it on
// the next request. Only SHA-256 digests of the session secret and the CSRF token are stored
// (db/migrations/0017_console_sessions.sql); like access tokens they carry 256 bits, so a slow
// hash buys nothing.
import { timingSafeEqual } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { accountSchema, authenticateAccessToken, touchToken } from '../identity/accounts.ts';
import type { Account } from '../identity/accounts.ts';
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
  /** Sent back with every state-changing request; only its hash is stored. */
  csrfToken: string;
  session: ConsoleSession;
};

/**
 * Exchanges a personal access token for a console session. The token is judged as the API judges
 * it: unknown, expired, revoked and rotated-away tokens are `invalid_token`, an account not
 * `active` is `account_inactive`. The session expires after `ttlSeconds`, or with the token if
 * that comes first.
 */
export async function signIn(
  db: Db,
  input: { personalAccessToken: string; userAgent?: string | null },
  options: { ttlSeconds?: number } = {},
): Promise<SignedIn> {
  const ttlSeconds = options.ttlSeconds ?? defaultSessionTtlSeconds;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new RangeError('ttlSeconds must be a positive integer.');
  const principal = await authenticateAccessToken(db, input.personalAccessToken);
  if (principal.account.status !== 'active') {
    throw new AppError('account_inactive', `The account is ${principal.account.status}.`);
  }
  const sessionSecret = generateSecret(consoleSecretPrefixes.session);
  const csrfToken = generateSecret(consoleSecretPrefixes.csrf);
  // From the token's row, so a token revoked since it was authenticated gives no session.
  const session = await db.maybeOne(sql.type(consoleSessionSchema)`
    INSERT INTO console_sessions (account_id, token_id, session_hash, csrf_hash, user_agent, expires_at)
    SELECT t.account_id, t.id, ${hashSecret(sessionSecret)}, ${hashSecret(csrfToken)}, ${boundedUserAgent(input.userAgent)},
           least(now() + make_interval(secs => ${ttlSeconds}), t.expires_at)
      FROM access_tokens t
     WHERE t.id = ${principal.tokenId} AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
    RETURNING id, account_id AS "accountId", token_id AS "tokenId", expires_at AS "expiresAt"`);
  if (!session) throw new AppError('invalid_token');
  return { sessionSecret, csrfToken, session };
}

const liveSessionRow = consoleSessionSchema.extend({
  lastSeenAt: isoTimestamp,
  tokenLastUsedAt: isoTimestamp.nullable(),
  csrfHash: z.string(),
  account: accountSchema,
});

/** The live session with this secret: not ended or expired, its token live, its account active. */
async function findLiveSession(db: Db, sessionSecret: string): Promise<z.infer<typeof liveSessionRow> | null> {
  if (!looksLikeSecret(sessionSecret, consoleSecretPrefixes.session)) return null;
  return db.maybeOne(sql.type(liveSessionRow)`
    SELECT s.id, s.account_id AS "accountId", s.token_id AS "tokenId", s.expires_at AS "expiresAt",
           s.last_seen_at AS "lastSeenAt", s.csrf_hash AS "csrfHash", t.last_used_at AS "tokenLastUsedAt",
           json_build_object('id', a.id, 'email', a.email, 'displayName', a.display_name, 'plan', a.plan,
                             'status', a.status, 'createdAt', a.created_at, 'updatedAt', a.updated_at) AS account
      FROM console_sessions s
      JOIN access_tokens t ON t.id = s.token_id
      JOIN accounts a ON a.id = s.account_id
     WHERE s.session_hash = ${hashSecret(sessionSecret)}
       AND s.ended_at IS NULL AND s.expires_at > now()
       AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
       AND a.status = 'active'`);
}

/**
 * The session this cookie value names and its account, or null when there is none to resume:
 * unknown, expired, signed out, its token revoked, rotated away or expired, or the account not
 * `active`. Records the session's and the token's last use, each at most once a minute.
 */
export async function resumeSession(db: Db, sessionSecret: string): Promise<{ session: ConsoleSession; account: Account } | null> {
  const row = await findLiveSession(db, sessionSecret);
  if (!row) return null;
  const { id, accountId, tokenId, expiresAt, lastSeenAt, tokenLastUsedAt, account } = row;
  if (Date.now() - Date.parse(lastSeenAt) > 60_000) {
    await db.query(sql.type(emptyRow)`
      UPDATE console_sessions SET last_seen_at = now()
       WHERE id = ${id} AND last_seen_at < now() - interval '60 seconds'`);
  }
  // Using the console is using the token: its last use shows in the token listing.
  await touchToken(db, tokenId, tokenLastUsedAt);
  return { session: { id, accountId, tokenId, expiresAt }, account };
}

/** Whether `presentedCsrfToken` is the CSRF token of this live session (digests compared in constant time). */
export async function checkCsrf(db: Db, sessionSecret: string, presentedCsrfToken: string): Promise<boolean> {
  if (!looksLikeSecret(presentedCsrfToken, consoleSecretPrefixes.csrf)) return false;
  const row = await findLiveSession(db, sessionSecret);
  if (!row) return false;
  return timingSafeEqual(Buffer.from(hashSecret(presentedCsrfToken), 'hex'), Buffer.from(row.csrfHash, 'hex'));
}

/** Ends the session this cookie value names; an unknown or already ended session is left as it is. */
export async function signOut(db: Db, sessionSecret: string): Promise<void> {
  if (!looksLikeSecret(sessionSecret, consoleSecretPrefixes.session)) return;
  await db.query(sql.type(emptyRow)`
    UPDATE console_sessions SET ended_at = now()
     WHERE session_hash = ${hashSecret(sessionSecret)} AND ended_at IS NULL`);
}

/**
 * The attributes of the session cookie (after `name=value; `): script cannot read it, no other site
 * sends it, it goes only to the console's paths, only over TLS when the console is served over
 * HTTPS, and the browser drops it at `maxAgeSeconds` (0 clears it on sign-out).
 */
export function cookieAttributes(options: { secure: boolean; maxAgeSeconds: number }): string {
  const maxAge = Math.max(0, Math.floor(options.maxAgeSeconds));
  if (!Number.isFinite(maxAge)) throw new RangeError('maxAgeSeconds must be a finite number.');
  return ['HttpOnly', 'SameSite=Strict', 'Path=/console', ...(options.secure ? ['Secure'] : []), `Max-Age=${maxAge}`].join('; ');
}

/** The user agent as stored: at most 256 characters (code points, as Postgres counts them). */
function boundedUserAgent(userAgent: string | null | undefined): string | null {
  if (!userAgent) return null;
  return Array.from(userAgent).slice(0, userAgentMaxLength).join('');
}
