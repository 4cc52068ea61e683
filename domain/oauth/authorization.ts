// The service as its own OAuth 2.1 authorization server for the MCP endpoint (issue 47): dynamic
// client registration (RFC 7591), the grant a person consents to, authorization codes bound to a
// PKCE S256 challenge and the redirect URI, and opaque access and refresh tokens bound to the
// resource they were asked for (RFC 8707). Codes and tokens carry 256 bits behind a recognisable
// prefix and only their SHA-256 digests are stored, like personal access tokens (domain/secrets.ts).
// Refresh tokens rotate on every use; a refresh token or code presented twice revokes its grant.
import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { generateSecret, hashSecret, looksLikeSecret, secretPrefixes } from '../secrets.ts';

type Db = CommonQueryMethods;

/** The prefixes of the authorization server's values (beside domain/secrets.ts's). client ids are public. */
export const oauthPrefixes = {
  clientId: secretPrefixes.oauthClientId,
  code: secretPrefixes.oauthCode,
  accessToken: secretPrefixes.oauthAccessToken,
  refreshToken: secretPrefixes.oauthRefreshToken,
} as const;

/** What a grant may allow: reading notes, and writing them (create, append, transactions). */
export const oauthScopes = ['notes:read', 'notes:write'] as const;
export type OAuthScope = (typeof oauthScopes)[number];
export const isOAuthScope = (value: string): value is OAuthScope => (oauthScopes as readonly string[]).includes(value);

export const oauthLimits = {
  /** An access token lives 15 minutes: short enough that a revoked grant's stolen token dies soon anyway. */
  accessTokenSeconds: 15 * 60,
  refreshTokenSeconds: 30 * 24 * 60 * 60,
  codeSeconds: 60,
  redirectUris: 10,
  redirectUriLength: 512,
  clientNameLength: 100,
  /** A registration body; anything larger is refused before it is parsed. */
  registrationBytes: 8 * 1024,
  mappingsPerGrant: 100,
} as const;

/** A refusal in the terms of OAuth (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009): `error` is the wire code. */
export class OAuthProtocolError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A redirect URI a client may register: https with no fragment, or http on a loopback host (a
 * native client's, RFC 8252 §7.3: its port changes from run to run, so it is not compared). No
 * userinfo; at most `redirectUriLength` characters. A private-use scheme is not offered yet.
 */
export function redirectUriProblem(value: string): string | null {
  if (value.length > oauthLimits.redirectUriLength) return `at most ${oauthLimits.redirectUriLength} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.hash !== '' || value.includes('#')) return 'a redirect URI has no fragment';
  if (url.username !== '' || url.password !== '') return 'a redirect URI has no user information';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'https, or http on a loopback host (127.0.0.1, [::1], localhost)';
}

/** Whether a presented redirect URI is one the client registered: exactly, except a loopback one's port. */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let url: URL;
  try {
    url = new URL(presented);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return false;
  const portless = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((candidate) => {
    const r = new URL(candidate);
    return r.protocol === 'http:' && portless(r) === portless(url);
  });
}

const registrationSchema = z.object({
  redirect_uris: z.array(z.string()).min(1).max(oauthLimits.redirectUris),
  client_name: z.string().trim().min(1).max(oauthLimits.clientNameLength).optional(),
  client_uri: z.string().max(512).optional(),
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(100).optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).max(10).optional(),
  response_types: z.array(z.string()).max(10).optional(),
  scope: z.string().max(500).optional(),
});

export const clientSchema = z.object({
  id: z.uuid(),
  clientId: z.string(),
  clientName: z.string(),
  redirectUris: z.array(z.string()),
  clientUri: z.string().nullable(),
  createdAt: isoTimestamp,
});
export type OAuthClient = z.infer<typeof clientSchema>;

const clientColumns = sql.fragment`id, client_id AS "clientId", client_name AS "clientName", redirect_uris AS "redirectUris", client_uri AS "clientUri", created_at AS "createdAt"`;

/**
 * Registers a public client (RFC 7591): only `none` as the token endpoint's authentication, only
 * the authorization code and refresh token grants, redirect URIs as `redirectUriProblem` allows.
 * Returns the registration response's fields.
 */
export async function registerClient(db: Db, body: unknown) {
  const parsed = registrationSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'body';
    throw new OAuthProtocolError(field.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${field}: ${issue.message}`);
  }
  const input = parsed.data;
  for (const uri of input.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthProtocolError('invalid_redirect_uri', `redirect_uris: ${JSON.stringify(uri.slice(0, 100))}: ${problem}.`);
  }
  if (input.token_endpoint_auth_method !== undefined && input.token_endpoint_auth_method !== 'none') {
    throw new OAuthProtocolError('invalid_client_metadata', 'token_endpoint_auth_method: only "none" (public clients with PKCE) is supported.');
  }
  const grantTypes = input.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
    throw new OAuthProtocolError('invalid_client_metadata', 'grant_types: only authorization_code and refresh_token are supported.');
  }
  if (!(input.response_types ?? ['code']).every((r) => r === 'code')) {
    throw new OAuthProtocolError('invalid_client_metadata', 'response_types: only "code" is supported.');
  }
  if (input.client_uri !== undefined && redirectUriProblem(input.client_uri) !== null) {
    throw new OAuthProtocolError('invalid_client_metadata', 'client_uri: must be an https URL.');
  }
  const clientId = generateSecret(oauthPrefixes.clientId);
  const clientName = input.client_name ?? new URL(input.redirect_uris[0]!).host;
  const client = await db.one(sql.type(clientSchema)`
    INSERT INTO oauth_clients (client_id, client_name, redirect_uris, client_uri, software_id, software_version)
    VALUES (${clientId}, ${clientName}, ${sql.array(input.redirect_uris, 'text')}, ${input.client_uri ?? null},
            ${input.software_id ?? null}, ${input.software_version ?? null})
    RETURNING ${clientColumns}`);
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
    token_endpoint_auth_method: 'none',
    grant_types: grantTypes,
    response_types: ['code'],
  };
}

export async function findClient(db: Db, clientId: string): Promise<OAuthClient | null> {
  if (!looksLikeSecret(clientId, oauthPrefixes.clientId)) return null;
  return db.maybeOne(sql.type(clientSchema)`SELECT ${clientColumns} FROM oauth_clients WHERE client_id = ${clientId}`);
}

/** The S256 challenge of a PKCE verifier (RFC 7636 §4.2). */
export const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** A person's consent, as the consent page posts it, already checked against the client and the account. */
export type Consent = {
  client: OAuthClient;
  accountId: string;
  scopes: readonly OAuthScope[];
  mappingIds: readonly string[];
  resource: string;
  redirectUri: string;
  codeChallenge: string;
};

/** Records the grant and returns its authorization code (shown once, in the redirect). */
export async function grantAndIssueCode(db: DatabasePool, consent: Consent): Promise<string> {
  const code = generateSecret(oauthPrefixes.code);
  await db.transaction(async (tx) => {
    const grant = await tx.one(sql.type(idRow)`
      INSERT INTO oauth_grants (client_id, account_id, scopes, mapping_ids, resource)
      VALUES (${consent.client.id}, ${consent.accountId}, ${sql.array([...consent.scopes], 'text')}, ${sql.array([...consent.mappingIds], 'uuid')}, ${consent.resource})
      RETURNING id`);
    await tx.query(sql.type(emptyRow)`
      INSERT INTO oauth_authorization_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at)
      VALUES (${hashSecret(code)}, ${grant.id}, ${consent.redirectUri}, ${consent.codeChallenge}, now() + make_interval(secs => ${oauthLimits.codeSeconds}))`);
  });
  return code;
}

export type TokenResponse = { access_token: string; token_type: 'Bearer'; expires_in: number; refresh_token: string; scope: string };

async function issueTokens(tx: Db, grantId: string, scopes: readonly string[]): Promise<TokenResponse> {
  const access = generateSecret(oauthPrefixes.accessToken);
  const refresh = generateSecret(oauthPrefixes.refreshToken);
  await tx.query(sql.type(emptyRow)`
    INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at)
    VALUES (${hashSecret(access)}, ${grantId}, 'access', now() + make_interval(secs => ${oauthLimits.accessTokenSeconds})),
           (${hashSecret(refresh)}, ${grantId}, 'refresh', now() + make_interval(secs => ${oauthLimits.refreshTokenSeconds}))`);
  return { access_token: access, token_type: 'Bearer', expires_in: oauthLimits.accessTokenSeconds, refresh_token: refresh, scope: scopes.join(' ') };
}

/** Ends a grant: every code and token of it stops working on its next use. */
export async function revokeGrant(db: Db, grantId: string, reason: 'revoked' | 'refresh_token_reused' | 'code_reused'): Promise<void> {
  await db.query(sql.type(emptyRow)`
    UPDATE oauth_grants SET revoked_at = now(), revoked_reason = ${reason} WHERE id = ${grantId} AND revoked_at IS NULL`);
}

const invalidGrant = (why: string) => new OAuthProtocolError('invalid_grant', why);

/** What a code and a refresh token both say of themselves when presented: spent, expired, and their grant. */
const presentedSecretRowSchema = z.object({
  grantId: z.uuid(),
  expired: z.boolean(),
  used: z.boolean(),
  clientId: z.string(),
  resource: z.string(),
  scopes: z.array(z.string()),
  revoked: z.boolean(),
});

const codeRowSchema = presentedSecretRowSchema.extend({ redirectUri: z.string(), codeChallenge: z.string() });

/**
 * The authorization code grant (RFC 6749 §4.1.3 with PKCE): the code must be this client's, unused
 * and unexpired, the redirect URI the one it was issued for, the verifier's S256 the challenge, and
 * the resource the one consented to. A code presented a second time revokes its grant (§4.1.2).
 */
export async function exchangeCode(db: DatabasePool, input: { clientId: string; code: string; codeVerifier: string; redirectUri: string; resource: string | undefined }): Promise<TokenResponse> {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(input.codeVerifier)) throw new OAuthProtocolError('invalid_request', 'code_verifier must be 43-128 characters of [A-Za-z0-9._~-] (RFC 7636).');
  if (!looksLikeSecret(input.code, oauthPrefixes.code)) throw invalidGrant('The authorization code is not valid.');
  // Refusals are returned, not thrown, so what the transaction recorded (the code used up, a
  // replayed code's grant revoked) commits before the refusal is answered.
  const outcome = await db.transaction(async (tx): Promise<{ refused: OAuthProtocolError } | { tokens: TokenResponse }> => {
    const row = await tx.maybeOne(sql.type(codeRowSchema)`
      SELECT c.grant_id AS "grantId", c.redirect_uri AS "redirectUri", c.code_challenge AS "codeChallenge",
             c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used, cl.client_id AS "clientId",
             g.resource, g.scopes, g.revoked_at IS NOT NULL AS revoked
        FROM oauth_authorization_codes c
        JOIN oauth_grants g ON g.id = c.grant_id
        JOIN oauth_clients cl ON cl.id = g.client_id
       WHERE c.code_hash = ${hashSecret(input.code)}
       FOR UPDATE OF c`);
    if (!row || row.clientId !== input.clientId) return { refused: invalidGrant('The authorization code is not valid.') };
    if (row.used) {
      await revokeGrant(tx, row.grantId, 'code_reused');
      return { refused: invalidGrant('The authorization code was already used; the grant it issued is revoked.') };
    }
    // One attempt per code, whatever its outcome: a wrong verifier cannot be retried.
    await tx.query(sql.type(emptyRow)`UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = ${hashSecret(input.code)}`);
    if (row.expired || row.revoked) return { refused: invalidGrant('The authorization code expired.') };
    if (row.redirectUri !== input.redirectUri) return { refused: invalidGrant('redirect_uri is not the one the code was issued for.') };
    if (!equalText(s256(input.codeVerifier), row.codeChallenge)) return { refused: invalidGrant('code_verifier does not match the code_challenge.') };
    if (input.resource !== undefined && input.resource !== row.resource) return { refused: new OAuthProtocolError('invalid_target', 'resource is not the one consented to.') };
    return { tokens: await issueTokens(tx, row.grantId, row.scopes) };
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome.tokens;
}

const refreshRowSchema = presentedSecretRowSchema;

/**
 * The refresh token grant: the token is used up and a new pair issued (rotation). A refresh token
 * presented again after its use is taken as stolen: the whole grant is revoked (OAuth 2.1 §4.3.1).
 */
export async function refreshTokens(db: DatabasePool, input: { clientId: string; refreshToken: string; resource: string | undefined }): Promise<TokenResponse> {
  if (!looksLikeSecret(input.refreshToken, oauthPrefixes.refreshToken)) throw invalidGrant('The refresh token is not valid.');
  const outcome = await db.transaction(async (tx): Promise<{ refused: string } | { tokens: TokenResponse }> => {
    const row = await tx.maybeOne(sql.type(refreshRowSchema)`
      SELECT t.grant_id AS "grantId", t.expires_at <= now() AS expired, t.used_at IS NOT NULL AS used,
             cl.client_id AS "clientId", g.resource, g.scopes, g.revoked_at IS NOT NULL AS revoked
        FROM oauth_tokens t
        JOIN oauth_grants g ON g.id = t.grant_id
        JOIN oauth_clients cl ON cl.id = g.client_id
       WHERE t.token_hash = ${hashSecret(input.refreshToken)} AND t.kind = 'refresh'
       FOR UPDATE OF t`);
    if (!row || row.clientId !== input.clientId || row.revoked || row.expired) return { refused: 'The refresh token is not valid, expired or revoked.' };
    if (row.used) {
      await revokeGrant(tx, row.grantId, 'refresh_token_reused');
      return { refused: 'The refresh token was already used; the grant is revoked.' };
    }
    if (input.resource !== undefined && input.resource !== row.resource) throw new OAuthProtocolError('invalid_target', 'resource is not the one consented to.');
    await tx.query(sql.type(emptyRow)`UPDATE oauth_tokens SET used_at = now() WHERE token_hash = ${hashSecret(input.refreshToken)}`);
    return { tokens: await issueTokens(tx, row.grantId, row.scopes) };
  });
  // The revocation commits; only then is the refusal thrown.
  if ('refused' in outcome) throw invalidGrant(outcome.refused);
  return outcome.tokens;
}

/**
 * Token revocation (RFC 7009): an access or refresh token of this client revokes its whole grant
 * (a public client's refresh token is its grant). Unknown tokens are not an error (§2.2).
 */
export async function revokeByToken(db: Db, input: { clientId: string; token: string }): Promise<void> {
  if (!looksLikeSecret(input.token, oauthPrefixes.accessToken) && !looksLikeSecret(input.token, oauthPrefixes.refreshToken)) return;
  await db.query(sql.type(emptyRow)`
    UPDATE oauth_grants g SET revoked_at = now(), revoked_reason = 'revoked'
      FROM oauth_tokens t, oauth_clients cl
     WHERE t.token_hash = ${hashSecret(input.token)} AND g.id = t.grant_id AND cl.id = g.client_id
       AND cl.client_id = ${input.clientId} AND g.revoked_at IS NULL`);
}

function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const consentMappingSchema = z.object({ mappingId: z.uuid(), label: z.string(), vaultName: z.string() });
export type ConsentMapping = z.infer<typeof consentMappingSchema>;

/** The live mappings the account can reach (owned vaults, its workspaces' vaults): what a consent may grant. */
export async function consentableMappings(db: Db, accountId: string): Promise<readonly ConsentMapping[]> {
  return db.any(sql.type(consentMappingSchema)`
    SELECT mp.id AS "mappingId", mp.label, v.name AS "vaultName"
      FROM vault_mappings mp
      JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.revoked_at IS NULL
       AND (v.owner_account_id = ${accountId}
            OR v.owner_workspace_id IN (SELECT m.workspace_id FROM workspace_members m WHERE m.account_id = ${accountId}))
     ORDER BY v.name, mp.label, mp.id
     LIMIT ${oauthLimits.mappingsPerGrant}`);
}

const connectionSchema = z.object({
  grantId: z.uuid(),
  clientName: z.string(),
  redirectUris: z.array(z.string()),
  scopes: z.array(z.string()),
  vaults: z.array(z.string()),
  createdAt: isoTimestamp,
  lastUsedAt: isoTimestamp.nullable(),
});
export type Connection = z.infer<typeof connectionSchema>;

/**
 * The applications a person has connected and that can still act: live grants with a refresh token
 * not yet used or expired, or a code not yet exchanged. The vaults are named as the person sees them now.
 */
export async function listConnections(db: Db, accountId: string): Promise<readonly Connection[]> {
  return db.any(sql.type(connectionSchema)`
    SELECT g.id AS "grantId", cl.client_name AS "clientName", cl.redirect_uris AS "redirectUris", g.scopes,
           coalesce((SELECT array_agg(v.name ORDER BY v.name) FROM vault_mappings mp JOIN vaults v ON v.id = mp.vault_id
                      WHERE mp.id = ANY (g.mapping_ids)), '{}') AS vaults,
           g.created_at AS "createdAt", g.last_used_at AS "lastUsedAt"
      FROM oauth_grants g
      JOIN oauth_clients cl ON cl.id = g.client_id
     WHERE g.account_id = ${accountId} AND g.revoked_at IS NULL
       AND (EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.kind = 'refresh' AND t.used_at IS NULL AND t.expires_at > now())
            OR EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.grant_id = g.id AND c.used_at IS NULL AND c.expires_at > now()))
     ORDER BY g.created_at DESC, g.id`);
}

/** The person revokes a connection: every token of the grant stops working on its next use. Another person's grant is not found. */
export async function revokeConnection(db: Db, accountId: string, grantId: string): Promise<void> {
  const row = await db.maybeOne(sql.type(idRow)`
    UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()), revoked_reason = coalesce(revoked_reason, 'revoked')
     WHERE id = ${grantId} AND account_id = ${accountId}
    RETURNING id`);
  if (!row) throw new AppError('not_found', 'No connection with this id.');
}
