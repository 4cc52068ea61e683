// The authorization endpoint of the OAuth server (issue 47), a console page because consent needs
// the person: signed in with the console's session (an unsigned visitor is sent to sign-in and
// back), they see which client asks (its name and redirect host, marked unverified: dynamic
// registration lets anyone choose a name), choose the scopes and which vault mappings it may use,
// and allow or deny. The answer goes back to the client's redirect URI with `state` echoed and `iss`
// (RFC 9207). A request naming an unknown client or a redirect URI the client did not register is
// answered here, never redirected (RFC 6749 §4.1.2.1). The form carries the session's CSRF token and
// comes from our own origin like every console form; the page may not be framed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import { csrfTokenFor } from '../../../domain/console/sessions.ts';
import { AppError } from '../../../domain/errors.ts';
import { admitConsentSession } from '../../../domain/oauth/admission.ts';
import { consentableMappings, findClient, grantAndIssueCode, isOAuthScope, listConnections, oauthScopes, redirectUriMatches, revokeConnection } from '../../../domain/oauth/authorization.ts';
import type { Connection, ConsentMapping, OAuthClient, OAuthScope } from '../../../domain/oauth/authorization.ts';
import { oauthBaseUrl, oauthEndpoints } from '../oauth/issuer.ts';
import { time } from './fragments.ts';
import { html } from './html.ts';
import { sessionSecretOf } from './session.ts';
import type { Html } from './html.ts';

export type ConsentDeps = {
  db: DatabasePool;
  leases: AllowanceLeases;
  publicBaseUrl: string | undefined;
  sendPage: (request: FastifyRequest, reply: FastifyReply, title: string, body: Html, status?: number) => FastifyReply;
};

const param = z.string().max(2048).optional();
const authorizeQuery = z.object({
  response_type: param,
  client_id: param,
  redirect_uri: param,
  code_challenge: param,
  code_challenge_method: param,
  state: param,
  scope: param,
  resource: param,
});
type AuthorizeParams = z.infer<typeof authorizeQuery>;

const oneOrMany = z.union([z.string().max(100), z.array(z.string().max(100)).max(200)]).optional();
const consentForm = authorizeQuery.extend({
  csrf: z.string().max(200),
  decision: z.enum(['allow', 'deny']),
  granted_scope: oneOrMany,
  mapping: oneOrMany,
});

const scopeText: Record<OAuthScope, string> = {
  'notes:read': 'Read notes: search, read notes and their links, list them as resources',
  'notes:write': 'Write notes: create, append to and change notes (every write is recorded as the client’s)',
};

/** A request that names its client and a redirect URI the client registered: errors may now go back to the client. */
type Checked = { client: OAuthClient; redirectUri: string; state: string | undefined; issuer: string };
type Valid = Checked & { codeChallenge: string; resource: string; requested: OAuthScope[] };

/** The client's redirect URI with OAuth's response parameters added (state and iss on every answer). */
export function redirectWith(checked: Checked, fields: Record<string, string>): string {
  const url = new URL(checked.redirectUri);
  for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
  if (checked.state !== undefined) url.searchParams.set('state', checked.state);
  url.searchParams.set('iss', checked.issuer);
  return url.toString();
}

export const oauthConsent: FastifyPluginAsyncZod<ConsentDeps> = async (app, deps) => {
  const { db, publicBaseUrl, sendPage } = deps;

  // These pages are public to the console's own hook (its sessions are judged for the automation
  // gateway) and admit the session here, judged for MCP (domain/oauth/admission.ts). The console's
  // Origin check has already run, and its CSRF check (preValidation) applies to the session set here.
  app.addHook('onRequest', async (request) => {
    const secret = sessionSecretOf(request);
    if (!secret) throw new AppError('session_invalid', 'Sign in to connect an application.');
    const admitted = await admitConsentSession(db, { sessionSecret: secret, leases: deps.leases });
    request.principal = { tokenId: admitted.tokenId, account: admitted.account };
    request.consoleSession = { secret, id: admitted.sessionId, expiresAt: admitted.sessionExpiresAt, csrfToken: csrfTokenFor(secret) };
  });

  /** The client and redirect URI first (an error page when either is wrong), then the rest (an error for the client). */
  async function check(request: FastifyRequest, params: AuthorizeParams): Promise<Checked & ({ valid: Valid } | { error: string; description: string })> {
    const base = oauthBaseUrl(request, publicBaseUrl);
    if (!base) throw new AppError('oauth_unavailable');
    const endpoints = oauthEndpoints(base);
    const client = params.client_id ? await findClient(db, params.client_id) : null;
    if (!client) throw new AppError('invalid_request', 'The application that sent you here is not registered with this service (unknown client_id). Nothing was authorized.');
    if (!params.redirect_uri || !redirectUriMatches(client.redirectUris, params.redirect_uri)) {
      throw new AppError('invalid_request', 'The application asked to send you to an address it did not register (redirect_uri). Nothing was authorized.');
    }
    const checked: Checked = { client, redirectUri: params.redirect_uri, state: params.state, issuer: endpoints.issuer };
    const refuse = (error: string, description: string) => ({ ...checked, error, description });
    if (params.response_type !== 'code') return refuse('unsupported_response_type', 'response_type must be code.');
    if (params.code_challenge_method !== 'S256' || !params.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) {
      return refuse('invalid_request', 'PKCE is required: code_challenge (43 characters, base64url) with code_challenge_method S256.');
    }
    if (params.resource !== endpoints.resource) return refuse('invalid_target', `resource is required and must be ${endpoints.resource}.`);
    const requested = params.scope === undefined || params.scope.trim() === '' ? [...oauthScopes] : params.scope.trim().split(/\s+/);
    if (!requested.every(isOAuthScope)) return refuse('invalid_scope', `scope may name only ${oauthScopes.join(', ')}.`);
    return { ...checked, valid: { ...checked, codeChallenge: params.code_challenge, resource: params.resource, requested: [...new Set(requested)] as OAuthScope[] } };
  }

  /** The page's CSP is the console's, with the client's redirect origin allowed as a form's destination (browsers check it on the redirect). */
  function consentCsp(reply: FastifyReply, redirectUri: string) {
    reply.header(
      'content-security-policy',
      `default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';form-action 'self' ${new URL(redirectUri).origin};frame-ancestors 'none';base-uri 'none';object-src 'none'`,
    );
  }

  function renderConsent(request: FastifyRequest, reply: FastifyReply, valid: Valid, mappings: readonly ConsentMapping[], problem?: string) {
    consentCsp(reply, valid.redirectUri);
    return sendPage(request, reply, `Connect ${valid.client.clientName}`, consentBody(valid, mappings, request.consoleSession!.csrfToken, problem), problem ? 422 : 200);
  }

  app.get('/oauth/authorize', { schema: { hide: true, querystring: authorizeQuery }, config: { consolePublic: true } }, async (request, reply) => {
    const checked = await check(request, request.query);
    if ('error' in checked) return reply.redirect(redirectWith(checked, { error: checked.error, error_description: checked.description }), 303);
    const mappings = await consentableMappings(db, request.principal!.account.id);
    return renderConsent(request, reply, checked.valid, mappings);
  });

  app.post('/oauth/authorize', { schema: { hide: true, body: consentForm }, config: { consolePublic: true } }, async (request, reply) => {
    const { decision, granted_scope: grantedScope, mapping, csrf: _csrf, ...params } = request.body;
    const checked = await check(request, params);
    if ('error' in checked) return reply.redirect(redirectWith(checked, { error: checked.error, error_description: checked.description }), 303);
    const { valid } = checked;
    if (decision === 'deny') return reply.redirect(redirectWith(valid, { error: 'access_denied', error_description: 'The person denied the request.' }), 303);
    const accountId = request.principal!.account.id;
    const mappings = await consentableMappings(db, accountId);
    const scopes = [...new Set(grantedScope === undefined ? [] : [grantedScope].flat())];
    const mappingIds = [...new Set(mapping === undefined ? [] : [mapping].flat())];
    // What the client asked for, or less: never more than the client asked for.
    if (scopes.length === 0 || !scopes.every((scope) => isOAuthScope(scope) && valid.requested.includes(scope))) {
      return renderConsent(request, reply, valid, mappings, 'Choose at least one of the permissions asked for.');
    }
    // Only mappings this person can reach now; anything else in the form is refused, not dropped.
    const reachable = new Set(mappings.map((m) => m.mappingId));
    if (mappingIds.length === 0 || !mappingIds.every((id) => reachable.has(id))) return renderConsent(request, reply, valid, mappings, 'Choose at least one of your vaults.');
    const code = await grantAndIssueCode(db, {
      client: valid.client,
      accountId,
      scopes: scopes as OAuthScope[],
      mappingIds,
      resource: valid.resource,
      redirectUri: valid.redirectUri,
      codeChallenge: valid.codeChallenge,
    });
    return reply.redirect(redirectWith(valid, { code }), 303);
  });

  // The person's connected applications, each revocable at once (Settings → AI Connections; the
  // personal access tokens' part of that page is a later step).
  app.get('/connections', { schema: { hide: true, querystring: z.object({ revoked: z.literal('1').optional() }) }, config: { consolePublic: true } }, async (request, reply) => {
    const connections = await listConnections(db, request.principal!.account.id);
    return sendPage(request, reply, 'Connected applications', connectionsBody(connections, request.consoleSession!.csrfToken, request.query.revoked === '1'));
  });

  app.post(
    '/connections/:id/revoke',
    { schema: { hide: true, params: z.object({ id: z.uuid() }), body: z.strictObject({ csrf: z.string().max(200) }) }, config: { consolePublic: true } },
    async (request, reply) => {
      await revokeConnection(db, request.principal!.account.id, request.params.id);
      return reply.redirect('/console/connections?revoked=1', 303);
    },
  );
};

function connectionsBody(connections: readonly Connection[], csrfToken: string, revoked: boolean): Html {
  return html`<section class="card" aria-labelledby="connections-title">
  <h1 id="connections-title">Connected applications</h1>
  ${revoked ? html`<p class="notice" role="status">Revoked: the application’s tokens stop working on their next request.</p>` : null}
  ${connections.length === 0 ? html`<p>No application is connected to your vaults.</p>` : null}
  ${connections.map(
    (c) => html`<article class="connection" aria-labelledby="connection-${c.grantId}">
    <h2 id="connection-${c.grantId}"><span class="client-name">${c.clientName}</span> <span class="badge">Unverified</span></h2>
    <dl class="facts">
      <dt>Sends you to</dt><dd>${c.redirectUris.map((uri) => new URL(uri).host).join(', ')}</dd>
      <dt>May</dt><dd>${c.scopes.map((scope) => html`<code>${scope}</code> `)}</dd>
      <dt>In</dt><dd>${c.vaults.join(', ') || 'no vault it can still reach'}</dd>
      <dt>Connected</dt><dd>${time(c.createdAt)}</dd>
      <dt>Last used</dt><dd>${c.lastUsedAt ? time(c.lastUsedAt) : 'never'}</dd>
    </dl>
    <form method="post" action="/console/connections/${c.grantId}/revoke">
      <input type="hidden" name="csrf" value="${csrfToken}">
      <button type="submit" class="button secondary">Revoke ${c.clientName}</button>
    </form>
  </article>`,
  )}
</section>`;
}

function consentBody(valid: Valid, mappings: readonly ConsentMapping[], csrfToken: string, problem: string | undefined): Html {
  const host = new URL(valid.redirectUri).host;
  const hidden = (name: string, value: string | undefined) => (value === undefined ? null : html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<section class="card narrow" aria-labelledby="consent-title">
  <h1 id="consent-title">Connect <span class="client-name">${valid.client.clientName}</span>?</h1>
  <p><span class="badge">Unverified</span> The name was chosen by the application itself; nothing here verified it. After you answer, you are sent to <strong class="redirect-host">${host}</strong>.</p>
  ${problem ? html`<div class="alert" role="alert"><p>${problem}</p></div>` : null}
  <form method="post" action="/console/oauth/authorize" class="stack">
    <input type="hidden" name="csrf" value="${csrfToken}">
    ${hidden('response_type', 'code')}${hidden('client_id', valid.client.clientId)}${hidden('redirect_uri', valid.redirectUri)}
    ${hidden('code_challenge', valid.codeChallenge)}${hidden('code_challenge_method', 'S256')}${hidden('state', valid.state)}
    ${hidden('resource', valid.resource)}${hidden('scope', valid.requested.join(' '))}
    <fieldset>
      <legend>It may</legend>
      ${valid.requested.map((scope) => html`<label><input type="checkbox" name="granted_scope" value="${scope}" checked> ${scopeText[scope]} <code>${scope}</code></label><br>`)}
    </fieldset>
    <fieldset>
      <legend>In these vaults only</legend>
      ${mappings.length === 0 ? html`<p>You have no hosted vault mapped yet: there is nothing to connect.</p>` : null}
      ${mappings.map((m) => html`<label><input type="checkbox" name="mapping" value="${m.mappingId}"> ${m.vaultName} <span class="help">(${m.label || m.mappingId})</span></label><br>`)}
    </fieldset>
    <p class="help">Each access token the application gets lasts 15 minutes; it keeps access while it renews them at least every 30 days, until the application revokes it.</p>
    <button type="submit" name="decision" value="allow" class="button primary">Allow</button>
    <button type="submit" name="decision" value="deny" class="button secondary">Deny</button>
  </form>
</section>`;
}
