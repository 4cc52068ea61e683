// Delegated provider connections of a product installation: the records a completed OAuth round
// trip leaves (domain/connections/attempts.ts), read, revoked and used through here. The tokens are
// sealed with the secret box, bound to their row and kind (`connection:<id>:access`,
// `connection:<id>:refresh`), and opened only inside withAccessToken and revokeConnection: no
// listing, record, error or log line carries a token.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import type { SecretBox } from '../secret-box.ts';
import { GOOGLE_SCOPES, OAuthProviderError, googleServices } from './provider.ts';
import type { GoogleService, OAuthProvider, OAuthTokens } from './provider.ts';

/** Who acts: the admitted runtime caller (the API's RuntimeCaller has these fields). */
export type ConnectionCaller = { organizationId: string; installationId: string; servicePrincipalId: string; requestId: string };

/** What the lifecycle needs; null secret box or provider: connections are not configured. */
export type ConnectionDeps = { db: DatabasePool; secretBox: SecretBox | null; oauthProvider: OAuthProvider | null };

/** The error codes this lifecycle answers with (docs/connections.md). */
export type ConnectionErrorCode =
  | 'connection_not_found'
  | 'connection_reauthorization_required'
  | 'oauth_return_target_mismatch'
  | 'connections_not_configured';

export function connectionError(code: ConnectionErrorCode, detail?: string): AppError {
  return new AppError(code, detail);
}

/** The configured secret box and provider, or 503 connections_not_configured. */
export function requireConfigured(deps: ConnectionDeps): { db: DatabasePool; secretBox: SecretBox; oauthProvider: OAuthProvider } {
  if (!deps.secretBox || !deps.oauthProvider) throw connectionError('connections_not_configured', 'Delegated connections are not configured on this service.');
  return { db: deps.db, secretBox: deps.secretBox, oauthProvider: deps.oauthProvider };
}

/** A connection as the product sees it: no token, no e-mail address, no provider account id. */
export type ConnectionRecord = {
  connectionId: string;
  provider: 'google';
  services: GoogleService[];
  grantedScopes: string[];
  state: 'active' | 'revoked';
  createdAt: string;
  revokedAt: string | null;
};

export const sealContext = {
  access: (connectionId: string) => `connection:${connectionId}:access`,
  refresh: (connectionId: string) => `connection:${connectionId}:refresh`,
};

const serviceSchema = z.enum(googleServices);
const connectionRow = z.object({
  connectionId: z.uuid(),
  provider: z.literal('google'),
  services: z.array(serviceSchema),
  grantedScopes: z.array(z.string()),
  state: z.enum(['active', 'revoked']),
  createdAt: isoTimestamp,
  revokedAt: isoTimestamp.nullable(),
});
const connectionColumns = sql.fragment`c.id AS "connectionId", c.provider, c.services, c.granted_scopes AS "grantedScopes", c.state,
  c.created_at AS "createdAt", c.revoked_at AS "revokedAt"`;
const sealedRow = connectionRow.extend({
  accessSealed: z.string().nullable(),
  refreshSealed: z.string().nullable(),
  accessExpiresAt: isoTimestamp.nullable(),
});
const sealedColumns = sql.fragment`${connectionColumns}, c.access_token_sealed AS "accessSealed", c.refresh_token_sealed AS "refreshSealed",
  c.access_expires_at AS "accessExpiresAt"`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller's own rows only: another installation's or organization's connection reads exactly like a missing one. */
const visibleTo = (caller: ConnectionCaller) => sql.fragment`c.organization_id = ${caller.organizationId} AND c.installation_id = ${caller.installationId}`;

/** The services whose every scope was granted (a person may untick scopes on Google's consent screen). */
export function grantedServices(requested: readonly GoogleService[], grantedScopes: readonly string[]): GoogleService[] {
  return googleServices.filter((s) => requested.includes(s) && GOOGLE_SCOPES[s].every((scope) => grantedScopes.includes(scope)));
}

/**
 * Stores the tokens of a completed attempt as a new connection (inside the attempt's transaction,
 * see attempts.ts). The id is made here so the tokens can be sealed to it before the insert.
 */
export async function insertConnection(
  tx: CommonQueryMethods,
  secretBox: SecretBox,
  input: { attemptId: string; organizationId: string; installationId: string; services: readonly GoogleService[]; tokens: OAuthTokens; createdByPrincipalId: string; createdRequestId: string },
): Promise<string> {
  const id = randomUUID();
  const { tokens } = input;
  const refreshSealed = tokens.refreshToken === null ? null : secretBox.seal(tokens.refreshToken, sealContext.refresh(id));
  await tx.one(sql.type(z.object({ id: z.uuid() }))`
    INSERT INTO provider_connections (id, organization_id, installation_id, attempt_id, services, granted_scopes, access_token_sealed, refresh_token_sealed,
                                      access_expires_at, created_by_principal_id, created_request_id)
    VALUES (${id}, ${input.organizationId}, ${input.installationId}, ${input.attemptId}, ${sql.array([...input.services], 'text')},
            ${sql.array(tokens.grantedScopes, 'text')}, ${secretBox.seal(tokens.accessToken, sealContext.access(id))}, ${refreshSealed},
            ${tokens.expiresAt}, ${input.createdByPrincipalId}, ${input.createdRequestId})
    RETURNING id`);
  return id;
}

const listCursor = z.object({ createdAt: z.string(), id: z.uuid() });

/** The installation's connections, newest first, active and revoked (a revoked one is its provenance). */
export async function listConnections(
  db: CommonQueryMethods,
  caller: ConnectionCaller,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ connections: ConnectionRecord[]; nextCursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor, listCursor) : null;
  const rows = await db.any(sql.type(connectionRow)`
    SELECT ${connectionColumns} FROM provider_connections c
     WHERE ${visibleTo(caller)}
       AND (${after?.createdAt ?? null}::timestamptz IS NULL OR (c.created_at, c.id) < (${after?.createdAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT ${page.limit + 1}`);
  const connections = rows.slice(0, page.limit);
  const last = connections.at(-1);
  return { connections, nextCursor: rows.length > page.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.connectionId }) : null };
}

export async function getConnection(db: CommonQueryMethods, caller: ConnectionCaller, connectionId: string): Promise<ConnectionRecord> {
  const { accessSealed: _a, refreshSealed: _r, accessExpiresAt: _e, ...record } = await findSealed(db, caller, connectionId);
  return record;
}

async function findSealed(db: CommonQueryMethods, caller: ConnectionCaller, connectionId: string) {
  if (!UUID.test(connectionId)) throw connectionError('connection_not_found');
  const row = await db.maybeOne(sql.type(sealedRow)`SELECT ${sealedColumns} FROM provider_connections c WHERE c.id = ${connectionId} AND ${visibleTo(caller)}`);
  if (!row) throw connectionError('connection_not_found');
  return row;
}

/** How the provider's revocation went: `failed` means our tokens are deleted all the same. */
export type ProviderRevocation = 'revoked' | 'failed' | 'already_revoked';

/**
 * Revokes the grant at the provider (the refresh token revokes the whole grant; the access token
 * when there is none), then deletes both sealed tokens and marks the connection revoked. A provider
 * failure does not keep our tokens: they are deleted and the answer says the provider's revocation
 * failed (the person can still remove the access in their Google account). Revoking twice answers
 * the revoked record.
 */
export async function revokeConnection(
  deps: ConnectionDeps,
  caller: ConnectionCaller,
  connectionId: string,
): Promise<{ connection: ConnectionRecord; providerRevocation: ProviderRevocation }> {
  const { db, secretBox, oauthProvider } = requireConfigured(deps);
  const row = await findSealed(db, caller, connectionId);
  if (row.state === 'revoked') return { connection: await getConnection(db, caller, connectionId), providerRevocation: 'already_revoked' };
  let providerRevocation: ProviderRevocation = 'revoked';
  try {
    const token = row.refreshSealed ? secretBox.open(row.refreshSealed, sealContext.refresh(row.connectionId)) : secretBox.open(row.accessSealed!, sealContext.access(row.connectionId));
    await oauthProvider.revoke(token);
  } catch (error) {
    // A provider refusal or a token that no longer opens (its key was retired): delete ours anyway.
    if (!(error instanceof OAuthProviderError) && !(error instanceof AppError)) throw error;
    providerRevocation = 'failed';
  }
  await db.query(sql.type(z.object({}))`
    UPDATE provider_connections c
       SET state = 'revoked', access_token_sealed = NULL, refresh_token_sealed = NULL, revoked_at = now(),
           revoked_by_principal_id = ${caller.servicePrincipalId}, revoked_request_id = ${caller.requestId}
     WHERE c.id = ${row.connectionId} AND ${visibleTo(caller)} AND c.state = 'active'`);
  return { connection: await getConnection(db, caller, connectionId), providerRevocation };
}

/** An access token this close to its expiry is refreshed before use. */
export const ACCESS_TOKEN_REFRESH_MARGIN_MS = 60_000;

/** What a round trip gets: the access token (for its request only; never stored or logged) and the connection. */
export type AccessGrant = { accessToken: string; connection: ConnectionRecord };

/**
 * Runs `fn` with a working access token of the caller's connection. An expired (or nearly expired)
 * token is refreshed first and the new one sealed and stored; a refresh without a new refresh token
 * keeps the old one. A revoked connection, or a grant the provider no longer honours (the person
 * removed the access, the refresh token expired), answers connection_reauthorization_required.
 * Two concurrent refreshes both succeed (Google does not rotate refresh tokens); the last stored wins.
 * `refresh: true` refreshes whatever the stored expiry says (Google refused the token early).
 */
export async function withAccessToken<T>(
  deps: ConnectionDeps,
  connectionId: string,
  caller: ConnectionCaller,
  fn: (grant: AccessGrant) => Promise<T>,
  options: { refresh?: boolean } = {},
): Promise<T> {
  const { db, secretBox, oauthProvider } = requireConfigured(deps);
  const row = await findSealed(db, caller, connectionId);
  const { accessSealed, refreshSealed, accessExpiresAt, ...connection } = row;
  if (row.state !== 'active' || !accessSealed || !accessExpiresAt) throw connectionError('connection_reauthorization_required', 'This connection was revoked; start a new connection.');
  if (!options.refresh && Date.parse(accessExpiresAt) - Date.now() > ACCESS_TOKEN_REFRESH_MARGIN_MS) {
    return fn({ accessToken: secretBox.open(accessSealed, sealContext.access(row.connectionId)), connection });
  }
  if (!refreshSealed) throw connectionError('connection_reauthorization_required', 'The access of this connection expired and it holds no refresh token; start a new connection.');
  let tokens: OAuthTokens;
  try {
    tokens = await oauthProvider.refresh(secretBox.open(refreshSealed, sealContext.refresh(row.connectionId)));
  } catch (error) {
    if (error instanceof OAuthProviderError && error.code === 'provider_invalid_grant') {
      throw connectionError('connection_reauthorization_required', 'The provider no longer honours this connection; start a new connection.');
    }
    throw error;
  }
  const stored = await db.maybeOne(sql.type(connectionRow)`
    UPDATE provider_connections c
       SET access_token_sealed = ${secretBox.seal(tokens.accessToken, sealContext.access(row.connectionId))},
           refresh_token_sealed = coalesce(${tokens.refreshToken === null ? null : secretBox.seal(tokens.refreshToken, sealContext.refresh(row.connectionId))}, c.refresh_token_sealed),
           access_expires_at = ${tokens.expiresAt},
           granted_scopes = CASE WHEN cardinality(${sql.array(tokens.grantedScopes, 'text')}) > 0 THEN ${sql.array(tokens.grantedScopes, 'text')} ELSE c.granted_scopes END,
           refreshed_at = now()
     WHERE c.id = ${row.connectionId} AND ${visibleTo(caller)} AND c.state = 'active'
    RETURNING ${connectionColumns}`);
  // Revoked while the refresh was in flight: the revocation wins, the fresh token is not used.
  if (!stored) throw connectionError('connection_reauthorization_required', 'This connection was revoked; start a new connection.');
  return fn({ accessToken: tokens.accessToken, connection: stored });
}
