// The delegated-connection lifecycle end to end on real Postgres and the run's real Temporal dev
// server: attempts (domain/connections/attempts.ts), the attempt's workflow
// (workflows/oauth-connection.ts) on a worker of this file's own with the connection activities,
// and connections (domain/connections/connections.ts). Google is the scripted loopback double
// (test/support/scripted-google.ts: consent redirect, PKCE S256, single-use codes, refresh,
// revocation of the whole grant), reached through the production provider
// (domain/connections/google-oauth.ts, google-auth-library's OAuth2Client).
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createConnectionActivities } from '../activities/connections.ts';
import { exchangeAndStore, receiveCallback, startAttempt } from '../domain/connections/attempts.ts';
import type { CallbackQuery, CallbackResult, DeliverCallback, StartedAttempt } from '../domain/connections/attempts.ts';
import { getConnection, listConnections, revokeConnection, sealContext, withAccessToken } from '../domain/connections/connections.ts';
import type { ConnectionCaller, ConnectionDeps } from '../domain/connections/connections.ts';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import { GOOGLE_SCOPES, scopesFor } from '../domain/connections/provider.ts';
import { setProductReturnTargets } from '../domain/product-runtime/entities.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { callbackUpdate, oauthConnection } from '../workflows/oauth-connection.ts';
import { useTestDatabase } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import { ScriptedGoogle, SCRIPTED_CLIENT_ID } from './support/scripted-google.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const CALLBACK_URL = 'https://notes.example/api/product/v1/connections/provider/oauth/callback';

// ---- the stack: Postgres, Temporal, a worker with the connection activities --------------------

const db = useTestDatabase();
const google = new ScriptedGoogle({ redirectUris: [CALLBACK_URL] });
const secretBox = createSecretBox(`k1:${randomBytes(32).toString('base64')}`)!;
const taskQueue = `connections-lifecycle-${process.pid}-${Date.now()}`;
let deps: ConnectionDeps;
let client: Client;
let clientConnection: Connection;
let workerConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let chain: RuntimeChain;
let caller: ConnectionCaller;

const STUDIO_ORIGIN = 'https://studio.example';
const EXACT_RETURN = 'https://app.example/oauth/done';

beforeAll(async () => {
  await google.start();
  deps = { db: db.pool, secretBox, oauthProvider: createGoogleOAuthProvider(google.settings()) };
  workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../workflows/oauth-connection.ts', import.meta.url)),
    activities: createConnectionActivities(deps),
    shutdownGraceTime: '1s',
  });
  running = worker.run();
  clientConnection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection: clientConnection });
  chain = await buildRuntimeChain(db.pool);
  await setProductReturnTargets(db.pool, chain.productId, [STUDIO_ORIGIN, EXACT_RETURN]);
  caller = callerOf(chain);
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await workerConnection?.close();
  await clientConnection?.close();
  await google.close();
});

const callerOf = (c: RuntimeChain): ConnectionCaller => ({ organizationId: c.organizationId, installationId: c.installationId, servicePrincipalId: c.principalId, requestId: `req-${randomUUID()}` });

/** What the callback route does with the Temporal client (the lead's route should do the same). */
const deliver: DeliverCallback = async (workflowId, callback) => {
  try {
    return await client.workflow.getHandle(workflowId).executeUpdate(callbackUpdate, { args: [callback] });
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) return { status: 'refused' };
    if (error instanceof WorkflowNotFoundError) return { status: 'closed' };
    throw error;
  }
};

/** The start route: record the attempt, then start its workflow. */
async function start(who: ConnectionCaller, request: { services?: string[]; returnTarget?: string; ttlMs?: number } = {}): Promise<StartedAttempt> {
  const started = await startAttempt(deps, who, {
    services: request.services ?? ['drive'],
    returnTarget: request.returnTarget ?? `${STUDIO_ORIGIN}/connections/done`,
    redirectUri: CALLBACK_URL,
    ...(request.ttlMs ? { ttlMs: request.ttlMs } : {}),
  });
  await client.workflow.start(oauthConnection, { workflowId: started.workflowId, taskQueue, args: [started.workflowInput] });
  return started;
}

/** The person's browser: the authorization URL, the consent screen's redirect back to our callback. */
async function consent(started: StartedAttempt): Promise<CallbackQuery> {
  const res = await fetch(started.authorizationUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK_URL);
  const q = back.searchParams;
  return { state: q.get('state') ?? undefined, code: q.get('code') ?? undefined, error: q.get('error') ?? undefined };
}

async function roundTrip(who: ConnectionCaller, request: Parameters<typeof start>[1] = {}): Promise<{ started: StartedAttempt; query: CallbackQuery; result: CallbackResult }> {
  const started = await start(who, request);
  const query = await consent(started);
  return { started, query, result: await receiveCallback(deps, query, deliver) };
}

async function connected(who: ConnectionCaller = caller, request: Parameters<typeof start>[1] = {}): Promise<string> {
  const { result } = await roundTrip(who, request);
  if (result.status !== 'connected') throw new Error(`round trip failed: ${result.code}`);
  return result.connectionId;
}

const attemptRow = z.object({ status: z.string(), failureCode: z.string().nullable(), connectionId: z.string().nullable(), verifier: z.string().nullable() });
const readAttempt = (attemptId: string) =>
  db.pool.one(sql.type(attemptRow)`
    SELECT status, failure_code AS "failureCode", connection_id AS "connectionId", code_verifier_sealed AS verifier FROM oauth_attempts WHERE id = ${attemptId}`);
const connectionRow = z.object({
  state: z.string(),
  access: z.string().nullable(),
  refresh: z.string().nullable(),
  revokedBy: z.string().nullable(),
  revokedRequest: z.string().nullable(),
  services: z.array(z.string()),
});
const readConnection = (connectionId: string) =>
  db.pool.one(sql.type(connectionRow)`
    SELECT state, access_token_sealed AS access, refresh_token_sealed AS refresh, revoked_by_principal_id AS "revokedBy",
           revoked_request_id AS "revokedRequest", services
      FROM provider_connections WHERE id = ${connectionId}`);
const countConnections = () => db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM provider_connections`);
const countAttempts = () => db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM oauth_attempts`);
/** Calls of the token endpoint (code exchanges and refreshes). */
const tokenCalls = () => google.requestsTo('token').length;

/** Every value of every column of both tables, as text. */
async function everyStoredValue(): Promise<string> {
  const rows = await db.pool.any(sql.type(z.object({ row: z.string() }))`
    SELECT row_to_json(a)::text AS row FROM oauth_attempts a UNION ALL SELECT row_to_json(c)::text FROM provider_connections c`);
  return rows.map((r) => r.row).join('\n');
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return { code: (error as { code: string }).code, message: (error as Error).message };
}

describe('the OAuth round trip', () => {
  it('stores the tokens sealed to their row; no token, code, verifier or state is anywhere in the database', async () => {
    const before = tokenCalls();
    const { started, query, result } = await roundTrip(caller, { services: ['classroom', 'drive'], returnTarget: EXACT_RETURN });
    expect(result).toEqual({ status: 'connected', connectionId: expect.any(String), returnTarget: EXACT_RETURN });
    const connectionId = (result as { connectionId: string }).connectionId;

    // The authorization request: code flow, offline, consent, PKCE S256, our state, least-privilege scopes.
    const asked = new URL(started.authorizationUrl).searchParams;
    expect(Object.fromEntries(asked)).toMatchObject({
      response_type: 'code',
      client_id: SCRIPTED_CLIENT_ID,
      redirect_uri: CALLBACK_URL,
      access_type: 'offline',
      prompt: 'consent',
      code_challenge_method: 'S256',
      scope: scopesFor(['drive', 'classroom']).join(' '),
    });
    expect(asked.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asked.get('state')).toBe(query.state);
    // One exchange (the double checked the verifier against the challenge, and the client secret).
    expect(tokenCalls()).toBe(before + 1);
    expect(google.requestsTo('token').at(-1)!.status).toBe(200);
    const secrets = [...google.secrets(), query.state!, query.code!];

    expect(await readAttempt(started.attemptId)).toEqual({ status: 'completed', failureCode: null, connectionId, verifier: null });
    const row = await readConnection(connectionId);
    expect(row).toMatchObject({ state: 'active', services: ['drive', 'classroom'] });
    // Sealed, and only for this row and kind.
    const access = secretBox.open(row.access!, sealContext.access(connectionId));
    const refresh = secretBox.open(row.refresh!, sealContext.refresh(connectionId));
    expect([secrets.includes(access), secrets.includes(refresh)]).toEqual([true, true]);
    expect(() => secretBox.open(row.access!, sealContext.access(randomUUID()))).toThrow();
    expect(() => secretBox.open(row.refresh!, sealContext.access(connectionId))).toThrow();

    const stored = await everyStoredValue();
    expect(stored).toContain(connectionId);
    for (const secret of secrets) expect(stored).not.toContain(secret);

    // The workflow ended with the connection; its history holds no token and no code.
    const handle = client.workflow.getHandle(started.workflowId);
    expect(await handle.result()).toMatchObject({ stage: 'connected', connectionId });
    const history = JSON.stringify(await handle.fetchHistory());
    for (const secret of secrets) expect(history).not.toContain(secret);

    // What the product can read: the id, services and scopes; never a token.
    const record = await getConnection(db.pool, caller, connectionId);
    expect(record).toEqual({
      connectionId,
      provider: 'google',
      services: ['drive', 'classroom'],
      grantedScopes: scopesFor(['drive', 'classroom']),
      state: 'active',
      createdAt: expect.any(String),
      revokedAt: null,
    });
    expect((await listConnections(db.pool, caller, { limit: 50 })).connections.map((c) => c.connectionId)).toContain(connectionId);
  });

  it('keeps only the services whose scopes were all granted', async () => {
    google.scriptConsent({ kind: 'consent', grant: [...GOOGLE_SCOPES.drive, GOOGLE_SCOPES.classroom[0]!] });
    const connectionId = await connected(caller, { services: ['drive', 'classroom'] });
    expect(await getConnection(db.pool, caller, connectionId)).toMatchObject({ services: ['drive'], grantedScopes: [...GOOGLE_SCOPES.drive, GOOGLE_SCOPES.classroom[0]!] });

    // Nothing usable granted: the attempt ends as a denied consent, and the grant is given back.
    google.scriptConsent({ kind: 'consent', grant: [GOOGLE_SCOPES.classroom[0]!] });
    const [connectionsBefore, revocationsBefore] = [await countConnections(), google.revocations.length];
    const { started, result } = await roundTrip(caller, { services: ['classroom'] });
    expect(result).toMatchObject({ status: 'failed', code: 'oauth_consent_denied' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'failed', failureCode: 'oauth_consent_denied', connectionId: null, verifier: null });
    expect([await countConnections(), google.revocations.slice(revocationsBefore)]).toEqual([connectionsBefore, [{ tokenIn: 'body', known: true }]]);
  });

  it('a replayed state is refused without a second exchange; an unknown state is invalid', async () => {
    const { started, query, result } = await roundTrip(caller);
    expect(result.status).toBe('connected');
    const [connectionsBefore, exchangesBefore] = [await countConnections(), tokenCalls()];
    // Refused on the record: the replay never reaches a workflow.
    const delivered: string[] = [];
    const counting: DeliverCallback = async (workflowId, callback) => {
      delivered.push(workflowId);
      return deliver(workflowId, callback);
    };
    expect(await receiveCallback(deps, query, counting)).toEqual({ status: 'failed', code: 'oauth_state_replayed', returnTarget: `${STUDIO_ORIGIN}/connections/done` });
    expect([await countConnections(), tokenCalls(), delivered]).toEqual([connectionsBefore, exchangesBefore, []]);
    expect((await readAttempt(started.attemptId)).status).toBe('completed');

    expect(await receiveCallback(deps, { ...query, state: randomBytes(32).toString('base64url') }, deliver)).toEqual({ status: 'failed', code: 'oauth_state_invalid', returnTarget: null });
    expect(await receiveCallback(deps, { code: query.code }, deliver)).toEqual({ status: 'failed', code: 'oauth_state_invalid', returnTarget: null });
  });

  it("expires when the workflow's timer fires first; a callback afterwards stores nothing", async () => {
    const started = await start(caller, { ttlMs: 1_000 });
    const query = await consent(started);
    // The workflow's own timer ends it.
    expect(await client.workflow.getHandle(started.workflowId).result()).toMatchObject({ stage: 'expired', failureCode: 'oauth_state_expired' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'expired', failureCode: 'oauth_state_expired', connectionId: null, verifier: null });
    const [connectionsBefore, exchangesBefore] = [await countConnections(), tokenCalls()];
    expect(await receiveCallback(deps, query, deliver)).toMatchObject({ status: 'failed', code: 'oauth_state_expired' });
    expect([await countConnections(), tokenCalls()]).toEqual([connectionsBefore, exchangesBefore]);
  });

  it('a callback past the expiry is refused as expired even before the timer fires', async () => {
    const started = await start(caller);
    const query = await consent(started);
    await db.pool.query(sql.type(z.object({}))`UPDATE oauth_attempts SET expires_at = now() - interval '1 second' WHERE id = ${started.attemptId}`);
    const exchangesBefore = tokenCalls();
    expect(await receiveCallback(deps, query, deliver)).toMatchObject({ status: 'failed', code: 'oauth_state_expired' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'expired', failureCode: 'oauth_state_expired', connectionId: null, verifier: null });
    expect(tokenCalls()).toBe(exchangesBefore);
    // The workflow's timer later finds the attempt ended and changes nothing.
    await client.workflow.getHandle(started.workflowId).terminate('test cleanup');
  });

  it('an attempt whose workflow is gone (never started, or terminated) ends as internal_error on its callback', async () => {
    const started = await startAttempt(deps, caller, { services: ['drive'], returnTarget: STUDIO_ORIGIN, redirectUri: CALLBACK_URL });
    const query = await consent(started);
    expect(await receiveCallback(deps, query, deliver)).toMatchObject({ status: 'failed', code: 'internal_error' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'failed', failureCode: 'internal_error', connectionId: null, verifier: null });
    expect(await receiveCallback(deps, query, deliver)).toMatchObject({ status: 'failed', code: 'oauth_state_replayed' });
  });

  it('a return target the product did not register is refused at the start, and nothing is stored', async () => {
    const attemptsBefore = await countAttempts();
    for (const target of ['https://evil.example/cb', 'http://studio.example/cb', 'https://studio.example.evil.example/', 'https://app.example/oauth/done/more', 'https://app.example/', 'not a url']) {
      expect(await failure(start(caller, { returnTarget: target })), target).toMatchObject({ code: 'oauth_return_target_mismatch' });
    }
    expect(await countAttempts()).toBe(attemptsBefore);
    // Under the registered origin, any path; the exact URI, exactly.
    await connected(caller, { returnTarget: `${STUDIO_ORIGIN}/deep/path?tab=1` });
    await connected(caller, { returnTarget: EXACT_RETURN });
  });

  it('a return target the product removed before the callback ends the attempt with return-target mismatch', async () => {
    const product = await buildRuntimeChain(db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
    await setProductReturnTargets(db.pool, product.productId, [STUDIO_ORIGIN]);
    const who = callerOf(product);
    const started = await start(who);
    const query = await consent(started);
    await setProductReturnTargets(db.pool, product.productId, ['https://other.example']);
    const exchangesBefore = tokenCalls();
    expect(await receiveCallback(deps, query, deliver)).toMatchObject({ status: 'failed', code: 'oauth_return_target_mismatch' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'failed', failureCode: 'oauth_return_target_mismatch', connectionId: null, verifier: null });
    expect(tokenCalls()).toBe(exchangesBefore);
    expect((await listConnections(db.pool, who, { limit: 10 })).connections).toEqual([]);
  });

  it('a denied consent ends the attempt with oauth_consent_denied, without an exchange', async () => {
    google.scriptConsent({ kind: 'deny' });
    const exchangesBefore = tokenCalls();
    const connectionsBefore = await countConnections();
    const { started, query, result } = await roundTrip(caller);
    expect(query.error).toBe('access_denied');
    expect(result).toMatchObject({ status: 'failed', code: 'oauth_consent_denied' });
    expect(await readAttempt(started.attemptId)).toEqual({ status: 'failed', failureCode: 'oauth_consent_denied', connectionId: null, verifier: null });
    expect([tokenCalls(), await countConnections()]).toEqual([exchangesBefore, connectionsBefore]);
  });

  it('an error the consent screen sends back ends the attempt with oauth_provider_error, without an exchange', async () => {
    google.scriptConsent({ kind: 'error' });
    const [exchangesBefore, connectionsBefore] = [tokenCalls(), await countConnections()];
    const { started, query, result } = await roundTrip(caller);
    expect(query.error).toBe('server_error');
    expect(result).toMatchObject({ status: 'failed', code: 'oauth_provider_error' });
    expect(await readAttempt(started.attemptId)).toMatchObject({ status: 'failed', failureCode: 'oauth_provider_error', verifier: null });
    expect([tokenCalls(), await countConnections()]).toEqual([exchangesBefore, connectionsBefore]);
  });

  it('a provider error at the exchange ends the attempt with oauth_provider_error and stores nothing', async () => {
    // An outage, and an exchange whose answer is lost after Google used the code.
    for (const failure of [{ kind: 'status', status: 503 }, { kind: 'ambiguous' }] as const) {
      google.fail('token', failure);
      const connectionsBefore = await countConnections();
      const { started, result } = await roundTrip(caller);
      expect(result, failure.kind).toMatchObject({ status: 'failed', code: 'oauth_provider_error' });
      expect(await readAttempt(started.attemptId)).toEqual({ status: 'failed', failureCode: 'oauth_provider_error', connectionId: null, verifier: null });
      expect(await countConnections()).toBe(connectionsBefore);
    }
  });

  it('a retried exchange of an attempt that already stored its connection answers that connection (no second exchange)', async () => {
    const { started, query, result } = await roundTrip(caller);
    const exchangesBefore = tokenCalls();
    // What a retried activity would do after its first run stored the connection.
    const again = await exchangeAndStore(deps, { attemptId: started.attemptId, sealedCode: secretBox.seal(query.code!, `attempt:${started.attemptId}:code`) });
    expect(again).toEqual({ status: 'connected', connectionId: (result as { connectionId: string }).connectionId });
    expect(tokenCalls()).toBe(exchangesBefore);
  });
});

describe('connections', () => {
  it("a connection of installation A answers exactly like a missing one to installation B and to another organization", async () => {
    const connectionId = await connected(caller);
    const revocationsBefore = google.revocations.length;
    const sibling = callerOf(await buildRuntimeChain(db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } }));
    const stranger = callerOf(await buildRuntimeChain(db.pool));
    const missing = await failure(getConnection(db.pool, caller, randomUUID()));
    expect(missing.code).toBe('connection_not_found');
    let used = false;
    const use = async () => {
      used = true;
    };
    for (const other of [sibling, stranger]) {
      expect(await failure(getConnection(db.pool, other, connectionId))).toEqual(missing);
      expect(await failure(withAccessToken(deps, connectionId, other, use))).toEqual(missing);
      expect(await failure(revokeConnection(deps, other, connectionId))).toEqual(missing);
      expect((await listConnections(db.pool, other, { limit: 50 })).connections).toEqual([]);
    }
    expect(used).toBe(false);
    expect((await readConnection(connectionId)).state).toBe('active');
    expect(google.revocations.length).toBe(revocationsBefore);
  });

  it('revoke revokes the grant at the provider, then deletes both tokens', async () => {
    const connectionId = await connected(caller);
    const refresh = secretBox.open((await readConnection(connectionId)).refresh!, sealContext.refresh(connectionId));
    const revoker = { ...caller, requestId: 'req-revoke-1' };
    const revocationsBefore = google.revocations.length;
    const revoked = await revokeConnection(deps, revoker, connectionId);
    expect(revoked).toEqual({ connection: expect.objectContaining({ connectionId, state: 'revoked', revokedAt: expect.any(String) }), providerRevocation: 'revoked' });
    expect(google.revocations.slice(revocationsBefore)).toEqual([{ tokenIn: 'body', known: true }]);
    expect(await readConnection(connectionId)).toMatchObject({ state: 'revoked', access: null, refresh: null, revokedBy: caller.servicePrincipalId, revokedRequest: 'req-revoke-1' });
    // The grant is gone at the provider too: its refresh token no longer refreshes.
    await expect(deps.oauthProvider!.refresh(refresh)).rejects.toMatchObject({ code: 'provider_invalid_grant' });
    // Revoked is final: not usable, and revoking again asks the provider nothing.
    const revocations = google.revocations.length;
    expect((await failure(withAccessToken(deps, connectionId, caller, async () => undefined))).code).toBe('connection_reauthorization_required');
    expect((await revokeConnection(deps, caller, connectionId)).providerRevocation).toBe('already_revoked');
    expect(google.revocations.length).toBe(revocations);
  });

  it('a provider failure during revoke still deletes our tokens, and says so', async () => {
    const connectionId = await connected(caller);
    google.fail('revoke', { kind: 'status', status: 503 });
    const revoked = await revokeConnection(deps, caller, connectionId);
    expect(revoked.providerRevocation).toBe('failed');
    expect(await readConnection(connectionId)).toMatchObject({ state: 'revoked', access: null, refresh: null });
  });

  it('an expiring access token is refreshed inside withAccessToken, resealed and stored; a fresh one is used as is', async () => {
    google.accessTokenLifetimeSeconds = 30; // under the refresh margin
    const connectionId = await connected(caller);
    google.accessTokenLifetimeSeconds = 3599;
    const before = await readConnection(connectionId);
    const oldAccess = secretBox.open(before.access!, sealContext.access(connectionId));
    const refresh = secretBox.open(before.refresh!, sealContext.refresh(connectionId));
    const refreshesBefore = tokenCalls();

    const seen = await withAccessToken(deps, connectionId, caller, async ({ accessToken, connection }) => ({ accessToken, connection }));
    expect(seen.accessToken).not.toBe(oldAccess);
    expect(google.secrets()).toContain(seen.accessToken);
    expect(seen.connection).toMatchObject({ connectionId, state: 'active' });
    expect(tokenCalls()).toBe(refreshesBefore + 1);

    const after = await readConnection(connectionId);
    expect(after.access).not.toBe(before.access);
    expect(secretBox.open(after.access!, sealContext.access(connectionId))).toBe(seen.accessToken);
    // The refresh answer carried no refresh token: the old one is kept.
    expect(secretBox.open(after.refresh!, sealContext.refresh(connectionId))).toBe(refresh);
    expect(await everyStoredValue()).not.toContain(seen.accessToken);

    // Now fresh for an hour: used without another refresh.
    expect(await withAccessToken(deps, connectionId, caller, async ({ accessToken }) => accessToken)).toBe(seen.accessToken);
    expect(tokenCalls()).toBe(refreshesBefore + 1);
  });

  it('a refresh the provider refuses (grant revoked at Google) answers reauthorization required', async () => {
    google.accessTokenLifetimeSeconds = 30;
    const connectionId = await connected(caller);
    google.accessTokenLifetimeSeconds = 3599;
    // The person removed the access in their Google account.
    await deps.oauthProvider!.revoke(secretBox.open((await readConnection(connectionId)).refresh!, sealContext.refresh(connectionId)));
    let used = false;
    const refused = await failure(
      withAccessToken(deps, connectionId, caller, async () => {
        used = true;
      }),
    );
    expect(refused.code).toBe('connection_reauthorization_required');
    expect(used).toBe(false);
  });

  it('without a secret box or provider, starting answers connections_not_configured and stores nothing', async () => {
    const attemptsBefore = await countAttempts();
    for (const partial of [{ ...deps, secretBox: null }, { ...deps, oauthProvider: null }]) {
      const refused = await failure(startAttempt(partial, caller, { services: ['drive'], returnTarget: STUDIO_ORIGIN, redirectUri: CALLBACK_URL }));
      expect(refused.code).toBe('connections_not_configured');
    }
    expect(await countAttempts()).toBe(attemptsBefore);
  });

  it('refuses services outside drive and classroom, and an empty list', async () => {
    for (const services of [[], ['gmail'], ['drive', 'calendar']]) {
      expect((await failure(startAttempt(deps, caller, { services, returnTarget: STUDIO_ORIGIN, redirectUri: CALLBACK_URL }))).code).toBe('invalid_request');
    }
  });
});
