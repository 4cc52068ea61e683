// The OAuth sweep removes only what nothing can use any more: codes and tokens a day past expiry
// (a used refresh token stays until then, so its replay still revokes the grant), grants revoked 30
// days ago or left with nothing, clients a day old with no grant; live rows stay.
import { sql } from 'slonik';
import { expect, it } from 'vitest';
import { emptyRow } from '../db/row-schemas.ts';
import { sweepOAuth } from '../domain/oauth/sweep.ts';
import { consoleSignIn } from './support/console.ts';
import { useCaller } from './support/harness.ts';
import { consentOver, pkcePair, redirectParams, registerPost, tokenPost } from './support/oauth.ts';
import { z } from 'zod';

const caller = useCaller();
const REDIRECT = 'http://127.0.0.1:5000/cb';
const countRow = z.object({ codes: z.number(), tokens: z.number(), grants: z.number(), clients: z.number() });
const counts = () =>
  caller.db.pool.one(sql.type(countRow)`
    SELECT (SELECT count(*)::int FROM oauth_authorization_codes) AS codes, (SELECT count(*)::int FROM oauth_tokens) AS tokens,
           (SELECT count(*)::int FROM oauth_grants) AS grants, (SELECT count(*)::int FROM oauth_clients) AS clients`);

async function connected(clientId: string) {
  const session = await consoleSignIn(caller.app, caller.token);
  const pkce = pkcePair();
  const url = new URL('/console/oauth/authorize', 'http://localhost');
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce.challenge, code_challenge_method: 'S256', resource: 'http://localhost/api/mcp' })) url.searchParams.set(k, v);
  const { answer } = await consentOver(caller.app, session, url, { scopes: ['notes:read'], mappings: [caller.mappingId] });
  const code = redirectParams(answer!.headers.location as string).get('code')!;
  return (await tokenPost(caller.app, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT, client_id: clientId })).json() as { access_token: string; refresh_token: string };
}

it('removes only what nothing can use, in batches', async () => {
  const live = (await registerPost(caller.app, { redirect_uris: [REDIRECT] })).json().client_id as string;
  const unused = (await registerPost(caller.app, { redirect_uris: [REDIRECT] })).json().client_id as string;
  const tokens = await connected(live);
  const expiring = await connected(live);
  // One grant's code and tokens ran out two days ago; the unused client is two days old.
  await caller.db.pool.query(sql.type(emptyRow)`
    UPDATE oauth_tokens SET expires_at = now() - interval '2 days'
     WHERE grant_id = (SELECT grant_id FROM oauth_tokens ORDER BY created_at DESC LIMIT 1)`);
  await caller.db.pool.query(sql.type(emptyRow)`UPDATE oauth_authorization_codes SET expires_at = now() - interval '2 days'`);
  await caller.db.pool.query(sql.type(emptyRow)`UPDATE oauth_grants SET created_at = now() - interval '2 days'`);
  await caller.db.pool.query(sql.type(emptyRow)`UPDATE oauth_clients SET created_at = now() - interval '2 days' WHERE client_id = ${unused}`);
  expect(await counts()).toEqual({ codes: 2, tokens: 4, grants: 2, clients: 2 });

  // Batches of one: more is said while anything is left.
  expect(await sweepOAuth(caller.db.pool, 1)).toMatchObject({ more: true });
  let round = await sweepOAuth(caller.db.pool, 1);
  while (round.more) round = await sweepOAuth(caller.db.pool, 1);
  // Left: the live grant's two tokens; its spent code went with the others (2 days past expiry).
  expect(await counts()).toEqual({ codes: 0, tokens: 2, grants: 1, clients: 1 });
  const status = await caller.app.inject({ method: 'POST', url: '/api/mcp', headers: { host: 'localhost', authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
  expect(status.statusCode).toBe(200);
  expect(expiring.access_token).not.toBe(tokens.access_token);
});

it('keeps a used refresh token until it expires, so its replay still revokes the grant', async () => {
  const clientId = (await registerPost(caller.app, { redirect_uris: [REDIRECT] })).json().client_id as string;
  const first = await connected(clientId);
  const second = (await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId })).json();
  await sweepOAuth(caller.db.pool, 500);
  expect((await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId })).json()).toMatchObject({ error: 'invalid_grant' });
  expect((await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: second.refresh_token, client_id: clientId })).json()).toMatchObject({ error: 'invalid_grant' });
});
