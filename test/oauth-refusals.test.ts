// Every refusal of the OAuth authorization server and of OAuth admission on /api/mcp: discovery
// without an issuer, registration's validation, the authorization endpoint (errors shown, never
// redirected, for an unknown client or redirect URI; redirected with state and iss otherwise),
// consent's CSRF and origin checks, the token endpoint's code and PKCE checks, revocation, a grant's
// mappings, and an MCP token refused on REST, automation and the Runtime.
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { emptyRow } from '../db/row-schemas.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { updateAccount } from '../domain/identity/accounts.ts';
import { exchangeCode, findClient, grantAndIssueCode } from '../domain/oauth/authorization.ts';
import { consoleSignIn, postSignIn, sessionCookieOf } from './support/console.ts';
import { csrfTokenFor, sessionCookieName } from '../domain/console/sessions.ts';
import type { ConsoleSession } from './support/console.ts';
import { newCaller, useCaller, useTestApp } from './support/harness.ts';
import { consentOver, pkcePair, redirectParams, registerPost, tokenPost } from './support/oauth.ts';

const caller = useCaller();
const BASE = 'http://localhost';
const RESOURCE = `${BASE}/api/mcp`;
const REDIRECT = 'http://127.0.0.1:5000/cb';
let session: ConsoleSession;
let clientId: string;
let otherMappingId: string;

beforeAll(async () => {
  session = await consoleSignIn(caller.app, caller.token);
  const registered = await registerPost(caller.app, { client_name: '<b>Notes</b> helper', redirect_uris: [REDIRECT] });
  expect(registered.statusCode).toBe(201);
  clientId = registered.json().client_id;
  const vault = await createVault(caller.db.pool, { name: 'Second vault', ownerAccountId: caller.accountId });
  otherMappingId = (await createMapping(caller.db.pool, { vaultId: vault.id, createdByAccountId: caller.accountId })).mappingId;
});

const get = (url: string, headers: Record<string, string> = {}) => caller.app.inject({ method: 'GET', url, headers: { host: 'localhost', ...headers } });

function authorizeUrl(overrides: Record<string, string | null> = {}, challenge = pkcePair().challenge) {
  const params: Record<string, string | null> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    scope: 'notes:read notes:write',
    resource: RESOURCE,
    ...overrides,
  };
  const url = new URL('/console/oauth/authorize', BASE);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url;
}

/** A code for the caller's first mapping (or `mappings`), its verifier, through the consent page. */
async function codeFor(options: { scopes?: string[]; mappings?: string[] } = {}) {
  const pkce = pkcePair();
  const { answer } = await consentOver(caller.app, session, authorizeUrl({}, pkce.challenge), { scopes: options.scopes ?? ['notes:read', 'notes:write'], mappings: options.mappings ?? [caller.mappingId] });
  expect(answer?.statusCode).toBe(303);
  return { code: redirectParams(answer!.headers.location as string).get('code')!, verifier: pkce.verifier };
}

async function accessToken(options: { scopes?: string[]; mappings?: string[] } = {}) {
  const { code, verifier } = await codeFor(options);
  const res = await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, resource: RESOURCE });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { access_token: string; refresh_token: string };
}

const mcp = (token: string, method: string, params: Record<string, unknown> = {}) =>
  caller.app.inject({ method: 'POST', url: '/api/mcp', headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method, params } });

describe('discovery', () => {
  it('answers a request without a token with 401 naming the resource metadata and the scopes', async () => {
    const res = await caller.app.inject({ method: 'POST', url: '/api/mcp', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/mcp", scope="notes:read notes:write"`);
  });

  it('publishes protected-resource metadata at the path RFC 9728 names and at the root, and the authorization server metadata', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/api/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await get(path);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ resource: RESOURCE, authorization_servers: [BASE], scopes_supported: ['notes:read', 'notes:write'], bearer_methods_supported: ['header'], resource_name: expect.any(String) });
    }
    const as = (await get('/.well-known/oauth-authorization-server')).json();
    expect(as).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/console/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('names no issuer for a non-loopback host without PUBLIC_BASE_URL: metadata 404, a bare challenge', async () => {
    const res = await get('/.well-known/oauth-authorization-server', { host: 'notes.example' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'oauth_unavailable' });
    expect((await get('/.well-known/oauth-protected-resource/api/mcp', { host: 'notes.example' })).statusCode).toBe(404);
    const mcpRes = await caller.app.inject({ method: 'POST', url: '/api/mcp', headers: { host: 'notes.example', 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(mcpRes.statusCode).toBe(401);
    expect(mcpRes.headers['www-authenticate']).toBe('Bearer realm="hnp"');
  });
});

describe('with PUBLIC_BASE_URL', () => {
  const configured = useTestApp({ overrides: { publicBaseUrl: 'https://notes.example' } });
  it('is the issuer whatever host the request reached', async () => {
    const as = (await configured.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: 'localhost' } })).json();
    expect(as).toMatchObject({ issuer: 'https://notes.example', token_endpoint: 'https://notes.example/oauth/token' });
    const prm = (await configured.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/api/mcp', headers: { host: 'evil.example' } })).json();
    expect(prm).toMatchObject({ resource: 'https://notes.example/api/mcp', authorization_servers: ['https://notes.example'] });
  });
});

describe('registration', () => {
  it.each([
    [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://user:pw@app.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: [`https://app.example/${'a'.repeat(600)}`] }, 'invalid_redirect_uri'],
    [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`) }, 'invalid_redirect_uri'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri'],
    [{}, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example/cb'], client_name: 'n'.repeat(101) }, 'invalid_client_metadata'],
  ])('refuses %j with %s', async (body, error) => {
    const res = await registerPost(caller.app, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error, error_description: expect.any(String) });
  });

  it('refuses a body over 8 KB and a body that is not JSON', async () => {
    const big = await registerPost(caller.app, { redirect_uris: ['https://app.example/cb'], software_id: 'x'.repeat(9000) });
    expect(big.statusCode).toBe(413);
    const form = await caller.app.inject({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'redirect_uris=https://a.example/cb' });
    expect(form.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it('registers https and loopback http redirect URIs as a public client', async () => {
    const res = await registerPost(caller.app, { redirect_uris: ['https://app.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:3000/cb', 'http://localhost/cb'] });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ client_id: expect.stringMatching(/^hnp_cid_/), token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], client_name: 'app.example' });
  });
});

describe('authorization endpoint and consent', () => {
  it('shows an unknown client or an unregistered redirect URI as an error page and never redirects', async () => {
    for (const url of [authorizeUrl({ client_id: 'hnp_cid_' + 'A'.repeat(43) }), authorizeUrl({ client_id: null }), authorizeUrl({ redirect_uri: 'https://evil.example/cb' }), authorizeUrl({ redirect_uri: 'http://127.0.0.1:5000/other' })]) {
      const res = await get(url.pathname + url.search, { cookie: session.cookie });
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toContain('text/html');
    }
  });

  it('takes a loopback redirect URI on any port (RFC 8252)', async () => {
    const url = authorizeUrl({ redirect_uri: 'http://127.0.0.1:61234/cb' });
    expect((await get(url.pathname + url.search, { cookie: session.cookie })).statusCode).toBe(200);
  });

  it.each([
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ code_challenge: null }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: 'short' }, 'invalid_request'],
    [{ resource: null }, 'invalid_target'],
    [{ resource: 'https://other.example/api/mcp' }, 'invalid_target'],
    [{ scope: 'notes:read admin' }, 'invalid_scope'],
  ])('redirects %j back with %s, the state and the issuer', async (overrides, error) => {
    const url = authorizeUrl(overrides);
    const res = await get(url.pathname + url.search, { cookie: session.cookie });
    expect(res.statusCode).toBe(303);
    const params = redirectParams(res.headers.location as string);
    expect(new URL(res.headers.location as string).origin + new URL(res.headers.location as string).pathname).toBe(REDIRECT);
    expect(params.get('error')).toBe(error);
    expect(params.get('state')).toBe('st-123');
    expect(params.get('iss')).toBe(BASE);
  });

  it('sends a visitor without a session to sign in and back', async () => {
    const url = authorizeUrl();
    const res = await get(url.pathname + url.search);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/console/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`);
  });

  it('shows the client as unverified, escaped, with its redirect host; may not be framed; forms may go only to us and the client', async () => {
    const url = authorizeUrl();
    const res = await get(url.pathname + url.search, { cookie: session.cookie });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('&lt;b&gt;Notes&lt;/b&gt; helper');
    expect(res.body).not.toContain('<b>Notes</b>');
    expect(res.body).toContain('Unverified');
    expect(res.body).toContain('127.0.0.1:5000');
    expect(res.body).toContain(caller.mappingId);
    expect(res.body).toContain(otherMappingId);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:5000;");
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('sends a denial back as access_denied and grants nothing', async () => {
    const { answer } = await consentOver(caller.app, session, authorizeUrl(), { decision: 'deny' });
    expect(answer?.statusCode).toBe(303);
    const params = redirectParams(answer!.headers.location as string);
    expect(Object.fromEntries(params)).toMatchObject({ error: 'access_denied', state: 'st-123', iss: BASE });
    expect(params.get('code')).toBeNull();
  });

  it("refuses a consent without this session's CSRF token or from another origin", async () => {
    const missing = await consentOver(caller.app, session, authorizeUrl(), { csrf: null, scopes: ['notes:read'], mappings: [caller.mappingId] });
    expect(missing.answer?.statusCode).toBe(403);
    const forged = await consentOver(caller.app, session, authorizeUrl(), { csrf: 'hnp_csrf_forged', scopes: ['notes:read'], mappings: [caller.mappingId] });
    expect(forged.answer?.statusCode).toBe(403);
    const foreign = await consentOver(caller.app, session, authorizeUrl(), { headers: { origin: 'https://evil.example' }, scopes: ['notes:read'], mappings: [caller.mappingId] });
    expect(foreign.answer?.statusCode).toBe(403);
    expect(foreign.answer?.headers.location).toBeUndefined();
  });

  it("asks again for a consent naming no scope, no mapping, or a mapping that is not the person's", async () => {
    const stranger = await newCaller(caller);
    for (const choice of [{ scopes: [], mappings: [caller.mappingId] }, { scopes: ['notes:read'], mappings: [] }, { scopes: ['notes:read'], mappings: [stranger.mappingId] }]) {
      const { answer } = await consentOver(caller.app, session, authorizeUrl(), choice);
      expect(answer?.statusCode).toBe(422);
      expect(answer?.headers.location).toBeUndefined();
    }
    // Never more than the client asked for: a read-only request offers, and takes, only notes:read.
    const readOnly = await consentOver(caller.app, session, authorizeUrl({ scope: 'notes:read' }), { scopes: ['notes:read', 'notes:write'], mappings: [caller.mappingId] });
    expect(readOnly.page.body).not.toContain('value="notes:write"');
    expect(readOnly.answer?.statusCode).toBe(422);
    for (const choice of [{ scopes: ['notes:read', 'notes:admin'], mappings: [caller.mappingId] }]) {
      const { answer } = await consentOver(caller.app, session, authorizeUrl(), choice);
      expect(answer?.statusCode).toBe(422);
      expect(answer?.headers.location).toBeUndefined();
    }
  });
});

describe('token endpoint', () => {
  it('refuses a wrong verifier, then the code is spent: presenting it again revokes the grant', async () => {
    const { code, verifier } = await codeFor();
    const wrong = await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: pkcePair().verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const again = await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(again.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
  });

  it('refuses a code for another redirect URI, another client or another resource, and other grant types', async () => {
    const other = (await registerPost(caller.app, { redirect_uris: [REDIRECT] })).json().client_id as string;
    const cases: Array<[Record<string, string>, string]> = [
      [{ redirect_uri: 'http://127.0.0.1:5000/elsewhere' }, 'invalid_grant'],
      [{ client_id: other }, 'invalid_grant'],
      [{ resource: 'https://other.example/api/mcp' }, 'invalid_target'],
    ];
    for (const [change, error] of cases) {
      const { code, verifier } = await codeFor();
      const res = await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId, ...change });
      expect(res.json(), JSON.stringify(change)).toMatchObject({ error });
    }
    expect((await tokenPost(caller.app, { grant_type: 'client_credentials', client_id: clientId })).json()).toMatchObject({ error: 'unsupported_grant_type' });
    const anonymous = await tokenPost(caller.app, { grant_type: 'authorization_code', code: 'x', code_verifier: 'y', redirect_uri: REDIRECT });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: 'invalid_client' });
    const json = await caller.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { grant_type: 'refresh_token' } });
    expect(json.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses an expired code', async () => {
    const { code, verifier } = await codeFor();
    await caller.db.pool.query(sql.type(emptyRow)`UPDATE oauth_authorization_codes SET expires_at = now() WHERE used_at IS NULL`);
    const res = await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(res.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes the grant of a revoked token (RFC 7009); an unknown token is no error', async () => {
    const tokens = await accessToken();
    expect((await mcp(tokens.access_token, 'tools/list')).statusCode).toBe(200);
    const revoked = await tokenPost(caller.app, { token: tokens.refresh_token, client_id: clientId }, 'localhost', '/oauth/revoke');
    expect(revoked.statusCode).toBe(200);
    expect((await mcp(tokens.access_token, 'tools/list')).statusCode).toBe(401);
    expect((await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })).json()).toMatchObject({ error: 'invalid_grant' });
    expect((await tokenPost(caller.app, { token: 'hnp_oat_unknown', client_id: clientId }, 'localhost', '/oauth/revoke')).statusCode).toBe(200);
  });
});

describe('admission on /api/mcp', () => {
  it("answers another mapping of the person's exactly like a missing one, in tools and resources", async () => {
    const { access_token: token } = await accessToken({ mappings: [caller.mappingId] });
    const call = async (mappingId: string) => (await mcp(token, 'tools/call', { name: 'get_vault_schema', arguments: { mappingId } })).json().result;
    const outside = await call(otherMappingId);
    const missing = await call('00000000-0000-4000-8000-000000000000');
    expect(outside).toMatchObject({ isError: true, structuredContent: { code: 'mapping_not_found' } });
    expect(outside.structuredContent.status).toBe(missing.structuredContent.status);
    // A personal access token of the same person reaches that mapping.
    const withPat = await caller.mcp.legacy('tools/call', { name: 'get_vault_schema', arguments: { mappingId: otherMappingId } });
    expect(withPat.json().result.isError).toBeFalsy();
    const read = (await mcp(token, 'resources/read', { uri: `note://${otherMappingId}/A.md` })).json();
    expect(read.error).toMatchObject({ code: -32002, data: { code: 'mapping_not_found' } });
  });

  it('lists as resources only the notes of the mappings granted', async () => {
    await caller.mcp.legacy('tools/call', { name: 'create_or_append_note', arguments: { mappingId: otherMappingId, path: 'Other.md', content: '# Other', dryRun: false, idempotencyKey: 'res-other' } });
    await caller.mcp.legacy('tools/call', { name: 'create_or_append_note', arguments: { mappingId: caller.mappingId, path: 'Mine.md', content: '# Mine', dryRun: false, idempotencyKey: 'res-mine' } });
    const { access_token: token } = await accessToken({ mappings: [caller.mappingId] });
    const listed = (await mcp(token, 'resources/list')).json().result.resources as Array<{ uri: string }>;
    expect(listed.map((r) => r.uri)).toContain(`note://${caller.mappingId}/Mine.md`);
    expect(listed.some((r) => r.uri.includes(otherMappingId))).toBe(false);
  });

  it('refuses an MCP token on REST, automation and the Runtime', async () => {
    const { access_token: token } = await accessToken();
    const auth = { host: 'localhost', authorization: `Bearer ${token}` };
    const rest = await caller.app.inject({ method: 'GET', url: '/api/dev/me', headers: auth });
    expect(rest.statusCode).toBe(401);
    expect(rest.json()).toMatchObject({ code: 'invalid_token' });
    const automation = await caller.app.inject({ method: 'GET', url: '/api/dev/automation/adapters/graph-provider', headers: auth });
    expect(automation.statusCode).toBe(401);
    const runtime = await caller.app.inject({ method: 'GET', url: '/api/product/v1/context', headers: auth });
    expect(runtime.statusCode).toBe(401);
    expect(runtime.json()).toMatchObject({ code: 'credential_invalid' });
  });

  it('refuses a token bound to another resource (RFC 8707)', async () => {
    const client = (await findClient(caller.db.pool, clientId))!;
    const pkce = pkcePair();
    const code = await grantAndIssueCode(caller.db.pool, { client, accountId: caller.accountId, scopes: ['notes:read'], mappingIds: [caller.mappingId], resource: 'https://other.example/api/mcp', redirectUri: REDIRECT, codeChallenge: pkce.challenge });
    const tokens = await exchangeCode(caller.db.pool, { clientId, code, codeVerifier: pkce.verifier, redirectUri: REDIRECT, resource: undefined });
    const res = await mcp(tokens.access_token, 'tools/list');
    expect(res.statusCode).toBe(401);
    expect(res.json().error.data).toMatchObject({ code: 'invalid_token' });
  });

  it("judges the account's status on every request, as for personal access tokens", async () => {
    const other = await newCaller(caller);
    const otherSession = await consoleSignIn(caller.app, other.token);
    const pkce = pkcePair();
    const { answer } = await consentOver(caller.app, otherSession, authorizeUrl({}, pkce.challenge), { scopes: ['notes:read'], mappings: [other.mappingId] });
    const code = redirectParams(answer!.headers.location as string).get('code')!;
    const tokens = (await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT, client_id: clientId })).json();
    expect((await mcp(tokens.access_token, 'tools/list')).statusCode).toBe(200);
    await updateAccount(caller.db.pool, other.accountId, { status: 'suspended' });
    const refused = await mcp(tokens.access_token, 'tools/list');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.data).toMatchObject({ code: 'account_inactive' });
  });
});

describe('browsers and batches', () => {
  it("answers a browser's preflight of the metadata and of registration, and lets it read the answers", async () => {
    for (const [url, method] of [['/.well-known/oauth-protected-resource/api/mcp', 'GET'], ['/.well-known/oauth-authorization-server', 'GET'], ['/oauth/register', 'POST'], ['/oauth/token', 'POST']] as const) {
      const res = await caller.app.inject({ method: 'OPTIONS', url, headers: { host: 'localhost', origin: 'https://app.example', 'access-control-request-method': method } });
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toBe(method);
      expect(String(res.headers['access-control-allow-headers'])).toContain('mcp-protocol-version');
    }
    expect((await get('/.well-known/oauth-authorization-server')).headers['access-control-allow-origin']).toBe('*');
  });

  it('admits an OAuth token in each message of a 2025-03-26 batch, with its grant', async () => {
    const { access_token: token } = await accessToken({ scopes: ['notes:read'], mappings: [caller.mappingId] });
    const res = await caller.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'mcp-protocol-version': '2025-03-26' },
      payload: [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_vault_schema', arguments: { mappingId: otherMappingId } } },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_or_append_note', arguments: { mappingId: caller.mappingId, path: 'B.md', content: 'x' } } },
      ],
    });
    expect(res.statusCode).toBe(200);
    const [list, outside, write] = res.json();
    expect(list.result.tools).toHaveLength(6);
    expect(outside.result).toMatchObject({ isError: true, structuredContent: { code: 'mapping_not_found' } });
    expect(write.error.data).toMatchObject({ code: 'insufficient_scope' });
  });
});

describe('consent for a plan with MCP but without the automation gateway', () => {
  it('signs a Professional account in on the way to consent, consents, and keeps the console\'s other pages refused', async () => {
    const pro = await newCaller(caller, { plan: 'professional' });
    // Without the consent page as its destination, sign-in is refused as before.
    expect((await postSignIn(caller.app, pro.token)).statusCode).toBe(403);
    const url = authorizeUrl();
    const signIn = await postSignIn(caller.app, pro.token, { next: url.pathname + url.search });
    expect(signIn.statusCode).toBe(303);
    expect(signIn.headers.location).toBe(url.pathname + url.search);
    const secret = sessionCookieOf(signIn)!.value;
    const proSession = { cookie: `${sessionCookieName}=${secret}`, secret, csrf: csrfTokenFor(secret) };
    const inbox = await get('/console', { cookie: proSession.cookie });
    expect(inbox.statusCode).toBe(403);
    const { page, answer } = await consentOver(caller.app, proSession, url, { scopes: ['notes:read'], mappings: [pro.mappingId] });
    expect(page.body).toContain(pro.mappingId);
    expect(page.body).not.toContain(caller.mappingId);
    expect(answer?.statusCode).toBe(303);
    expect(redirectParams(answer!.headers.location as string).get('code')).toMatch(/^hnp_oac_/);
    const forged = await consentOver(caller.app, proSession, url, { csrf: null, scopes: ['notes:read'], mappings: [pro.mappingId] });
    expect(forged.answer?.statusCode).toBe(403);
  });

  it('sends a visitor whose session ended back to sign-in, saying so', async () => {
    const url = authorizeUrl();
    const res = await get(url.pathname + url.search, { cookie: `${sessionCookieName}=hnp_ses_${'A'.repeat(43)}` });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/console/sign-in?next=${encodeURIComponent(url.pathname + url.search)}&expired=1`);
  });
});
