// Admission of an OAuth access token to the MCP endpoint: the same steps as a personal access
// token's (domain/principals/admission.ts: resolve, judge the account and plan, charge one MCP
// operation, touch), with what the grant adds between resolve and charge: the token must have been
// minted for this resource (RFC 8707; any other audience is `invalid_token`), and the operation's
// scope must be granted (else 403 `insufficient_scope`, charging nothing). Steps 2-4 are
// admission.ts's own (`admitResolvedAccessToken`), so plan, allowance and refusals cannot drift.
// Until OAuth is a principal kind of admission.ts, the grant's last use is touched here and the
// principal's tokenId is the grant's id.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { accountSchema, touchDue } from '../identity/accounts.ts';
import type { Principal } from '../identity/accounts.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import { admitResolvedAccessToken } from '../principals/admission.ts';
import type { Admitted } from '../principals/admission.ts';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import { liveSessionQuery, looksLikeSessionSecret, touchSession } from '../console/sessions.ts';
import { hashSecret, looksLikeSecret } from '../secrets.ts';
import { oauthPrefixes } from './authorization.ts';
import type { OAuthScope } from './authorization.ts';

/** What a request admitted with an OAuth access token may reach. */
export type GrantLimits = { grantId: string; scopes: readonly string[]; mappingIds: readonly string[] };

export const isOAuthAccessToken = (token: string) => token.startsWith(oauthPrefixes.accessToken);

const grantRowSchema = accountSchema.extend({
  grantId: z.uuid(),
  scopes: z.array(z.string()),
  mappingIds: z.array(z.uuid()),
  resource: z.string(),
  grantLastUsedAt: isoTimestamp.nullable(),
});

export type OAuthAdmissionRequest = {
  token: string;
  /** This endpoint's resource identifier: a token bound to another is refused. */
  resource: string;
  leases: AllowanceLeases;
  /** The scope the operation needs, if any (checked after the account is judged, before the charge). */
  scope?: OAuthScope | undefined;
  charge?: boolean;
};

/** Thrown when the grant lacks the operation's scope: the challenge names what to ask for. */
export function insufficientScope(scope: OAuthScope, granted: readonly string[]): AppError {
  return new AppError('insufficient_scope', `This authorization does not include ${scope}; authorize again asking for it.`, {
    extensions: { requiredScope: scope, grantedScopes: [...granted] },
  });
}

export async function admitOAuthAccessToken(db: CommonQueryMethods, request: OAuthAdmissionRequest & { charge: false }): Promise<Principal & { grant: GrantLimits }>;
export async function admitOAuthAccessToken(db: CommonQueryMethods, request: OAuthAdmissionRequest & { charge?: true }): Promise<Admitted & { grant: GrantLimits }>;
export async function admitOAuthAccessToken(db: CommonQueryMethods, request: OAuthAdmissionRequest): Promise<(Principal | Admitted) & { grant: GrantLimits }> {
  // 1. resolve: a live access token of a live grant, and its account
  if (!looksLikeSecret(request.token, oauthPrefixes.accessToken)) throw new AppError('invalid_token');
  const row = await db.maybeOne(sql.prepared('admit_oauth_access_token', grantRowSchema)`
    SELECT g.id AS "grantId", g.scopes, g.mapping_ids AS "mappingIds", g.resource, g.last_used_at AS "grantLastUsedAt",
           a.id, a.email, a.display_name AS "displayName", a.plan, a.status, a.created_at AS "createdAt", a.updated_at AS "updatedAt"
      FROM oauth_tokens t
      JOIN oauth_grants g ON g.id = t.grant_id
      JOIN accounts a ON a.id = g.account_id
     WHERE t.token_hash = ${hashSecret(request.token)} AND t.kind = 'access'
       AND t.expires_at > now() AND g.revoked_at IS NULL`);
  // A token minted for another resource is as good as none here (the confused-deputy rule).
  if (!row || row.resource !== request.resource) throw new AppError('invalid_token');
  const { grantId, scopes, mappingIds, resource: _resource, grantLastUsedAt, ...account } = row;
  const grant = { grantId, scopes, mappingIds };
  // Admission's steps 2-4 take a token's row; the grant has no access_tokens row to touch, so its
  // last use is given as now (no touch there) and touched below instead.
  const resolved = { ...account, tokenId: grantId, tokenLastUsedAt: new Date().toISOString(), tokenExpiresAt: null };
  const base = { iface: 'mcp' as const, leases: request.leases };
  let admitted: Principal | Admitted;
  if (request.scope !== undefined && !scopes.includes(request.scope)) {
    // 2. judged first, so an inactive account or a plan without MCP is said as for any token; then refused uncharged.
    await admitResolvedAccessToken(db, resolved, { ...base, charge: false });
    throw insufficientScope(request.scope, scopes);
  }
  if (request.charge === false) admitted = await admitResolvedAccessToken(db, resolved, { ...base, charge: false });
  else admitted = await admitResolvedAccessToken(db, resolved, { ...base, charge: true });
  // 4. touch the grant, at most once a minute
  if (touchDue(grantLastUsedAt)) {
    await db.query(sql.type(emptyRow)`
      UPDATE oauth_grants SET last_used_at = now() WHERE id = ${grantId} AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')`);
  }
  return { ...admitted, grant };
}

/** A console session admitted to consent: who, and the session (for its CSRF token). */
export type ConsentSession = Principal & { sessionId: string; sessionExpiresAt: string };

/**
 * The console session of a person on the consent page. Consent is about MCP, so the session's
 * account is judged for the `mcp` interface (a Premium or Professional plan may connect a client
 * though the console's other pages, which are the automation gateway's, refuse it); nothing is
 * charged, as a person's own page views are not MCP operations. An unknown, ended or expired
 * session, or one whose token was revoked, is `session_invalid` (the console then offers sign-in).
 */
export async function admitConsentSession(db: CommonQueryMethods, request: { sessionSecret: string; leases: AllowanceLeases }): Promise<ConsentSession> {
  if (!looksLikeSessionSecret(request.sessionSecret)) throw new AppError('session_invalid');
  const row = await db.maybeOne(liveSessionQuery(request.sessionSecret));
  if (!row) throw new AppError('session_invalid');
  const resolved = { ...row.account, tokenId: row.tokenId, tokenLastUsedAt: row.tokenLastUsedAt, tokenExpiresAt: null };
  const principal = await admitResolvedAccessToken(db, resolved, { iface: 'mcp', leases: request.leases, charge: false });
  await touchSession(db, row);
  return { ...principal, sessionId: row.id, sessionExpiresAt: row.expiresAt };
}
