// The person's connected applications (/console/connections): each live grant with its client
// (unverified, escaped), redirect host, scopes, vaults and last use; revoking one stops its access
// and refresh tokens on their next use; another person's connection is not found; the revoke form
// needs this session's CSRF token.
import { beforeAll, expect, it } from 'vitest';
import { consoleSignIn } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import { newCaller, useCaller } from './support/harness.ts';
import { consentOver, pkcePair, redirectParams, registerPost, tokenPost } from './support/oauth.ts';

const caller = useCaller();
const REDIRECT = 'http://127.0.0.1:5000/cb';
let session: ConsoleSession;
let clientId: string;

beforeAll(async () => {
  session = await consoleSignIn(caller.app, caller.token);
  clientId = (await registerPost(caller.app, { client_name: 'Notes <i>agent</i>', redirect_uris: [REDIRECT] })).json().client_id;
});

async function connect(who: { session: ConsoleSession; mappingId: string }) {
  const pkce = pkcePair();
  const url = new URL('/console/oauth/authorize', 'http://localhost');
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce.challenge, code_challenge_method: 'S256', resource: 'http://localhost/api/mcp', scope: 'notes:read' })) {
    url.searchParams.set(k, v);
  }
  const { answer } = await consentOver(caller.app, who.session, url, { scopes: ['notes:read'], mappings: [who.mappingId] });
  const code = redirectParams(answer!.headers.location as string).get('code')!;
  return (await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT, client_id: clientId })).json() as { access_token: string; refresh_token: string };
}

const mcpStatus = async (token: string) =>
  (await caller.app.inject({ method: 'POST', url: '/api/mcp', headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).statusCode;

const page = (s: ConsoleSession) => caller.app.inject({ method: 'GET', url: '/console/connections', headers: { cookie: s.cookie } });
const revoke = (s: ConsoleSession, grantId: string, csrf: string | null = s.csrf) =>
  caller.app.inject({
    method: 'POST',
    url: `/console/connections/${grantId}/revoke`,
    headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: csrf === null ? '' : new URLSearchParams({ csrf }).toString(),
  });

it('lists a connected application and revokes it at once', async () => {
  expect((await page(session)).body).toContain('No application is connected');
  const tokens = await connect({ session, mappingId: caller.mappingId });
  expect(await mcpStatus(tokens.access_token)).toBe(200);
  const listed = await page(session);
  expect(listed.statusCode).toBe(200);
  expect(listed.body).toContain('Notes &lt;i&gt;agent&lt;/i&gt;');
  expect(listed.body).toContain('127.0.0.1:5000');
  expect(listed.body).toContain('<code>notes:read</code>');
  expect(listed.body).toContain('Test vault');
  const grantId = /\/console\/connections\/([0-9a-f-]{36})\/revoke/.exec(listed.body)![1]!;

  expect((await revoke(session, grantId, null)).statusCode).toBe(403);
  const stranger = await newCaller(caller);
  const strangerSession = await consoleSignIn(caller.app, stranger.token);
  expect((await revoke(strangerSession, grantId)).statusCode).toBe(404);
  expect(await mcpStatus(tokens.access_token)).toBe(200);

  const done = await revoke(session, grantId);
  expect(done.statusCode).toBe(303);
  expect(done.headers.location).toBe('/console/connections?revoked=1');
  expect(await mcpStatus(tokens.access_token)).toBe(401);
  expect((await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })).json()).toMatchObject({ error: 'invalid_grant' });
  expect((await page(session)).body).toContain('No application is connected');
});

it("shows only the person's own connections", async () => {
  const other = await newCaller(caller);
  const otherSession = await consoleSignIn(caller.app, other.token);
  await connect({ session: otherSession, mappingId: other.mappingId });
  expect((await page(otherSession)).body).toContain('Revoke Notes');
  expect((await page(session)).body).toContain('No application is connected');
});
