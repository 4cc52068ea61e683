// Accounts and their personal access tokens.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { displayPrefix, generateSecret, hashSecret, looksLikeSecret, secretPrefixes } from '../secrets.ts';
import { accountStatusSchema, planSchema } from './plans.ts';
import type { AccountStatus, Plan } from './plans.ts';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';

export const accountSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  displayName: z.string(),
  plan: planSchema,
  status: accountStatusSchema,
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Account = z.infer<typeof accountSchema>;

// Every account query aliases the table as `a`, so this column list serves them all.
const accountColumns = sql.fragment`a.id, a.email, a.display_name AS "displayName", a.plan, a.status,
  a.created_at AS "createdAt", a.updated_at AS "updatedAt"`;

export const accessTokenSchema = z.object({
  id: z.uuid(),
  accountId: z.uuid(),
  name: z.string(),
  displayPrefix: z.string(),
  createdAt: isoTimestamp,
  lastUsedAt: isoTimestamp.nullable(),
  expiresAt: isoTimestamp.nullable(),
  revokedAt: isoTimestamp.nullable(),
  replacedBy: z.uuid().nullable(),
});
export type AccessToken = z.infer<typeof accessTokenSchema>;

const tokenColumns = sql.fragment`id, account_id AS "accountId", name, display_prefix AS "displayPrefix",
  created_at AS "createdAt", last_used_at AS "lastUsedAt", expires_at AS "expiresAt", revoked_at AS "revokedAt",
  replaced_by AS "replacedBy"`;

type Db = CommonQueryMethods;

export async function createAccount(db: Db, input: { email: string; displayName: string; plan: Plan }): Promise<Account> {
  return db.one(sql.type(accountSchema)`
    INSERT INTO accounts AS a (email, display_name, plan)
    VALUES (${input.email}, ${input.displayName}, ${input.plan})
    RETURNING ${accountColumns}`);
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  const account = await db.maybeOne(sql.type(accountSchema)`SELECT ${accountColumns} FROM accounts a WHERE a.id = ${id}`);
  if (!account) throw new AppError('not_found', `No account ${id}.`);
  return account;
}

export async function findAccountByEmail(db: Db, email: string): Promise<Account | null> {
  return db.maybeOne(sql.type(accountSchema)`SELECT ${accountColumns} FROM accounts a WHERE lower(a.email) = lower(${email})`);
}

export async function listAccounts(db: Db): Promise<readonly Account[]> {
  return db.any(sql.type(accountSchema)`SELECT ${accountColumns} FROM accounts a ORDER BY a.created_at, a.id`);
}

export async function updateAccount(db: Db, id: string, change: { plan?: Plan; status?: AccountStatus }): Promise<Account> {
  const account = await db.maybeOne(sql.type(accountSchema)`
    UPDATE accounts a
       SET plan = coalesce(${change.plan ?? null}, a.plan),
           status = coalesce(${change.status ?? null}, a.status),
           updated_at = now()
     WHERE a.id = ${id}
    RETURNING ${accountColumns}`);
  if (!account) throw new AppError('not_found', `No account ${id}.`);
  return account;
}

export type IssuedToken = { token: string; record: AccessToken };

export async function issueAccessToken(
  db: Db,
  input: { accountId: string; name: string; expiresAt?: string | null },
): Promise<IssuedToken> {
  const token = generateSecret(secretPrefixes.accessToken);
  const record = await db.one(sql.type(accessTokenSchema)`
    INSERT INTO access_tokens (account_id, name, token_hash, display_prefix, expires_at)
    VALUES (${input.accountId}, ${input.name}, ${hashSecret(token)}, ${displayPrefix(token, secretPrefixes.accessToken)},
            ${input.expiresAt ?? null})
    RETURNING ${tokenColumns}`);
  return { token, record };
}

export async function listAccessTokens(db: Db, accountId: string): Promise<readonly AccessToken[]> {
  return db.any(sql.type(accessTokenSchema)`
    SELECT ${tokenColumns} FROM access_tokens WHERE account_id = ${accountId} ORDER BY created_at, id`);
}

export async function revokeAccessToken(db: Db, tokenId: string): Promise<AccessToken> {
  const record = await db.maybeOne(sql.type(accessTokenSchema)`
    UPDATE access_tokens SET revoked_at = coalesce(revoked_at, now())
     WHERE id = ${tokenId}
    RETURNING ${tokenColumns}`);
  if (!record) throw new AppError('not_found', `No access token ${tokenId}.`);
  return record;
}

/** Issues a replacement with the same name and expiry, then revokes the old token, atomically. */
export async function rotateAccessToken(db: Db, tokenId: string): Promise<IssuedToken> {
  return db.transaction(async (tx) => {
    const old = await tx.maybeOne(sql.type(accessTokenSchema)`
      SELECT ${tokenColumns} FROM access_tokens WHERE id = ${tokenId} FOR UPDATE`);
    if (!old) throw new AppError('not_found', `No access token ${tokenId}.`);
    if (old.revokedAt) throw new AppError('conflict', 'A revoked token cannot be rotated.');
    const issued = await issueAccessToken(tx, { accountId: old.accountId, name: old.name, expiresAt: old.expiresAt });
    await tx.one(sql.type(idRow)`
      UPDATE access_tokens SET revoked_at = now(), replaced_by = ${issued.record.id} WHERE id = ${tokenId} RETURNING id`);
    return issued;
  });
}

// What a presented token resolves to. Requests are admitted by domain/principals/admission.ts,
// which composes these (resolve, then judge, charge and touch); they live here, with the tables.

/** A live token's row: its account's columns, the token id, when the token was last used and when it expires. */
export const authenticatedSchema = accountSchema.extend({ tokenId: z.uuid(), tokenLastUsedAt: isoTimestamp.nullable(), tokenExpiresAt: isoTimestamp.nullable() });
export type AuthenticatedRow = z.infer<typeof authenticatedSchema>;

/** A personal access token's principal: the account acting through one of its tokens. */
export type Principal = { tokenId: string; account: Account };

/**
 * The live token with this hash and its account (columns of authenticatedSchema), usable alone or
 * as the CTE `principal`. Unknown, expired, revoked and rotated-away tokens give no row.
 */
export function livePrincipalQuery(rawToken: string) {
  return sql.fragment`
    SELECT t.id AS "tokenId", t.last_used_at AS "tokenLastUsedAt", t.expires_at AS "tokenExpiresAt", ${accountColumns}
      FROM access_tokens t
      JOIN accounts a ON a.id = t.account_id
     WHERE t.token_hash = ${hashSecret(rawToken)}
       AND t.revoked_at IS NULL
       AND (t.expires_at IS NULL OR t.expires_at > now())`;
}

/** Whether a token last used then is touched now: at most once a minute, so a hot token does not turn every read into a write. */
export function touchDue(lastUsedAt: string | null): boolean {
  return !lastUsedAt || Date.now() - Date.parse(lastUsedAt) > 60_000;
}

/** Refreshes last-used when it is due (touchDue). */
export async function touchToken(db: Db, tokenId: string, lastUsedAt: string | null): Promise<void> {
  if (!touchDue(lastUsedAt)) return;
  await db.query(sql.type(emptyRow)`
    UPDATE access_tokens SET last_used_at = now()
     WHERE id = ${tokenId} AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')`);
}

/**
 * Whose live token this is, outside any request (the local stack checks its saved demo token with
 * it): no interface, so nothing is judged or charged. Unknown, expired, revoked and rotated-away
 * tokens are all `invalid_token`.
 */
export async function authenticateAccessToken(db: Db, rawToken: string): Promise<Principal> {
  if (!looksLikeSecret(rawToken, secretPrefixes.accessToken)) throw new AppError('invalid_token');
  const row = await db.maybeOne(sql.type(authenticatedSchema)`${livePrincipalQuery(rawToken)}`);
  if (!row) throw new AppError('invalid_token');
  const { tokenId, tokenLastUsedAt, ...account } = row;
  await touchToken(db, tokenId, tokenLastUsedAt);
  return { tokenId, account };
}
