// Delegated Google connections over HTTP (api/routes/product/connections/): the real app on real
// Postgres, its OAuth attempt workflows on a real platform worker and the run's Temporal dev
// server, and Google as the scripted loopback double (test/support/scripted-google.ts) reached
// through the production clients. Every log line at trace goes to a sink, every answer is kept:
// neither may carry a token, a code or an e-mail address, nor may the database in the clear.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import { scopesFor } from '../domain/connections/provider.ts';
import type { OAuthProvider } from '../domain/connections/provider.ts';
import { setProductReturnTargets } from '../domain/product-runtime/entities.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { buildTestApp } from './support/app.ts';
import { CALLBACK_PATH, connectionsClient, everyStoredRow, storedForms } from './support/connections.ts';
import type { ConnectionsClient, ConnectionsResponse } from './support/connections.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { GOOGLE_DOC_MIME, ScriptedGoogle } from './support/scripted-google.ts';

const PUBLIC_BASE = 'https://notes.example.test';
const CALLBACK_URL = `${PUBLIC_BASE}${CALLBACK_PATH}`;
const STUDIO_ORIGIN = 'https://studio.example';
const EXACT_RETURN = 'https://app.example/oauth/done';
/** Under the registered origin, with a query of the product's own that must survive. */
const RETURN_TARGET = `${STUDIO_ORIGIN}/connections/done?from=settings`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BOTH = scopesFor(['drive', 'classroom']);

// ---- the stack ---------------------------------------------------------------------------------

const google = new ScriptedGoogle({ redirectUris: [CALLBACK_URL] });
const secretBox = createSecretBox(`k1:${randomBytes(32).toString('base64')}`)!;
let provider: OAuthProvider;
// Read by the harness when its beforeAll builds the worker (after ours below started the double).
const workerDeps: { secretBox: SecretBox; oauthProvider: OAuthProvider | null } = { secretBox, oauthProvider: null };
const logLines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(chunk.toString());
    done();
  },
});
/** Every answer of the app, to look for secrets in all of them at the end. */
const answers: ConnectionsResponse[] = [];
/** The state and code of every consent redirect (secrets for the database and the logs). */
const callbackSecrets: string[] = [];

beforeAll(async () => {
  await google.start();
  provider = createGoogleOAuthProvider(google.settings());
  workerDeps.oauthProvider = provider;
  google
    .addCourse({ id: '7001', name: 'Biology 7B', section: 'Period 2', room: 'Lab 3', courseState: 'ACTIVE', taughtByMe: true })
    .addCourse({ id: '7002', name: 'Chemistry 8A', courseState: 'ACTIVE', taughtByMe: true })
    .addCourse({ id: '7003', name: 'Physics (archived)', courseState: 'ARCHIVED', taughtByMe: true })
    .addCourse({ id: '7004', name: 'Someone else’s course', courseState: 'ACTIVE', taughtByMe: false })
    .addStudents('7001', [
      { userId: 's-101', givenName: 'Ada', familyName: 'Park', emailAddress: 'ada.park@school.example', photoUrl: 'https://lh3.googleusercontent.com/a/ada' },
      { userId: 's-102', givenName: 'Ben', familyName: 'Ruiz', emailAddress: 'ben.ruiz@school.example', photoUrl: 'https://lh3.googleusercontent.com/a/ben' },
    ]);
});
afterAll(async () => {
  await google.close();
});

const ctx = useTestAppWithWorker({
  name: 'connections-routes',
  overrides: () => ({
    secretBox,
    connections: { provider, settings: google.settings(), publicBaseUrl: PUBLIC_BASE },
    logger: pino({ level: 'trace' }, sink),
  }),
  workerDeps,
});

let chain: RuntimeChain;
let rt: ConnectionsClient;

beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  await setProductReturnTargets(ctx.db.pool, chain.productId, [STUDIO_ORIGIN, EXACT_RETURN]);
  rt = client(chain);
});

const client = (c: RuntimeChain) => connectionsClient(ctx.app, c.secret, (res) => answers.push(res));

// ---- helpers -----------------------------------------------------------------------------------

/** The person's browser at Google's consent screen: where Google sends them back (our callback). */
async function consent(authorizationUrl: string): Promise<URL> {
  const visit = await google.visit(authorizationUrl);
  expect(visit.status).toBe(302);
  const back = visit.redirect!;
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK_URL);
  for (const name of ['state', 'code']) {
    const value = back.searchParams.get(name);
    if (value) callbackSecrets.push(value);
  }
  return back;
}

async function startAttempt(c: ConnectionsClient, services: string[] = ['drive', 'classroom'], returnTarget = RETURN_TARGET) {
  const started = await c.start({ services, returnTarget });
  expect(started.statusCode, started.body).toBe(201);
  return started.data['data'] as { attemptId: string; authorizationUrl: string; services: string[]; scopes: string[]; expiresAt: string };
}

/** A whole round trip; the connection id the callback's redirect carries. */
async function connect(c: ConnectionsClient = rt, services: string[] = ['drive', 'classroom']): Promise<string> {
  const attempt = await startAttempt(c, services);
  const res = await c.callback(await consent(attempt.authorizationUrl));
  expect(res.statusCode, res.body).toBe(303);
  const connectionId = new URL(String(res.headers['location'])).searchParams.get('connectionId');
  expect(connectionId).toMatch(UUID);
  return connectionId!;
}

const location = (res: ConnectionsResponse) => new URL(String(res.headers['location']));

/** Where a redirect goes, without its query; and its query. */
function redirectOf(res: ConnectionsResponse): { target: string; query: Record<string, string> } {
  const to = location(res);
  return { target: `${to.origin}${to.pathname}`, query: Object.fromEntries(to.searchParams) };
}

const count = (table: 'provider_connections' | 'oauth_attempts' | 'connection_write_intents') =>
  ctx.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`);
const attemptRow = (attemptId: string) =>
  ctx.db.pool.one(sql.type(z.object({ status: z.string(), failureCode: z.string().nullable(), connectionId: z.string().nullable() }))`
    SELECT status, failure_code AS "failureCode", connection_id AS "connectionId" FROM oauth_attempts WHERE id = ${attemptId}`);
const connectionRow = (connectionId: string) =>
  ctx.db.pool.one(sql.type(z.object({ state: z.string(), access: z.string().nullable(), refresh: z.string().nullable() }))`
    SELECT state, access_token_sealed AS access, refresh_token_sealed AS refresh FROM provider_connections WHERE id = ${connectionId}`);
const tokenCalls = () => google.requestsTo('token').length;

/** A refusal as the product sees it, without what differs per request (its id). */
const refusal = (res: ConnectionsResponse) => ({
  statusCode: res.statusCode,
  type: res.data['type'],
  title: res.data['title'],
  code: res.data['code'],
  detail: res.data['detail'],
});

const newDocument = (name: string, markdown: string) => ({ name, markdown });

/**
 * N answers to concurrent creates with one Idempotency-Key: exactly one says it created the object
 * (201, replayed: false, no Idempotent-Replayed), every other replays it (200, replayed: true,
 * Idempotent-Replayed: true), and all of them name the same object. Returns its id.
 */
function expectOneCreated(answers: ConnectionsResponse[], idField: 'fileId' | 'courseWorkId'): string {
  const statuses = answers.map((a) => a.statusCode);
  expect(statuses.filter((s) => s === 201), `statuses: ${statuses.join(', ')}`).toHaveLength(1);
  expect(statuses.filter((s) => s === 200), `statuses: ${statuses.join(', ')}`).toHaveLength(answers.length - 1);
  const data = answers.map((a) => a.data['data'] as Record<string, unknown>);
  for (const [i, answer] of answers.entries()) {
    const created = answer.statusCode === 201;
    expect(data[i]!['replayed'], answer.body).toBe(!created);
    expect(answer.headers['idempotent-replayed']).toBe(created ? undefined : 'true');
  }
  const ids = new Set(data.map((d) => d[idField]));
  expect(ids.size).toBe(1);
  return String([...ids][0]);
}

async function createDocument(connectionId: string, body = newDocument(`Plan ${randomUUID().slice(0, 6)}`, '# Plan\n\nSteps.\n')) {
  const res = await rt.createDocument(connectionId, body, randomUUID());
  expect(res.statusCode, res.body).toBe(201);
  return res.data['data'] as { fileId: string; version: string; name: string };
}

// ---- the OAuth round trip ----------------------------------------------------------------------

describe('the OAuth round trip', () => {
  it('start, consent at Google, our callback: 303 to the return target with the connection id only; the connection reads back', async () => {
    const exchangesBefore = tokenCalls();
    const started = await rt.start({ services: ['classroom', 'drive'], returnTarget: RETURN_TARGET });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.data).toMatchObject({ runtimeVersion: '1', kind: 'service.connection-attempt', status: 'complete', missing: [] });
    const attempt = started.data['data'] as { attemptId: string; authorizationUrl: string };
    expect(attempt).toEqual({ attemptId: expect.stringMatching(UUID), authorizationUrl: expect.any(String), services: ['drive', 'classroom'], scopes: BOTH, expiresAt: expect.any(String) });
    // Google's consent screen: code flow with PKCE S256 and offline access, to our public callback.
    const asked = new URL(attempt.authorizationUrl);
    expect(`${asked.origin}${asked.pathname}`).toBe(google.settings().endpoints.authorizeUrl);
    expect(Object.fromEntries(asked.searchParams)).toMatchObject({ response_type: 'code', redirect_uri: CALLBACK_URL, code_challenge_method: 'S256', access_type: 'offline', scope: BOTH.join(' ') });

    const back = await consent(attempt.authorizationUrl);
    const res = await rt.callback(back);
    expect(res.statusCode, res.body).toBe(303);
    expect(String(res.headers['cache-control'])).toContain('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const { target, query } = redirectOf(res);
    expect(target).toBe(`${STUDIO_ORIGIN}/connections/done`);
    // The product's own query kept; the connection id added; nothing else (no code, no state, no token).
    expect(query).toEqual({ from: 'settings', connectionId: expect.stringMatching(UUID) });
    const connectionId = query['connectionId']!;
    expect(tokenCalls()).toBe(exchangesBefore + 1);
    expect(await attemptRow(attempt.attemptId)).toEqual({ status: 'completed', failureCode: null, connectionId });

    const read = await rt.get(connectionId);
    expect(read.statusCode).toBe(200);
    expect(read.data).toEqual({
      runtimeVersion: '1',
      kind: 'service.connection',
      status: 'complete',
      missing: [],
      data: { connectionId, provider: 'google', services: ['drive', 'classroom'], grantedScopes: BOTH, state: 'active', createdAt: expect.any(String), revokedAt: null },
    });
    const listed = await rt.list();
    expect(listed.data).toMatchObject({ kind: 'service.connection-list', status: 'complete' });
    expect((listed.data['data'] as { connections: { connectionId: string }[] }).connections.map((c) => c.connectionId)).toContain(connectionId);
  });

  it('an exact registered redirect URI is a return target too', async () => {
    const attempt = await startAttempt(rt, ['drive'], EXACT_RETURN);
    const res = await rt.callback(await consent(attempt.authorizationUrl));
    expect(res.statusCode).toBe(303);
    expect(redirectOf(res)).toEqual({ target: EXACT_RETURN, query: { connectionId: expect.stringMatching(UUID) } });
  });

  it('the same callback twice: the second is a replay (303 with error=oauth_state_replayed), with no second exchange or connection', async () => {
    const attempt = await startAttempt(rt);
    const back = await consent(attempt.authorizationUrl);
    const first = await rt.callback(back);
    expect(first.statusCode).toBe(303);
    const connectionId = redirectOf(first).query['connectionId'];
    const [exchanges, connections] = [tokenCalls(), await count('provider_connections')];

    const again = await rt.callback(back);
    expect(again.statusCode).toBe(303);
    expect(String(again.headers['cache-control'])).toContain('no-store');
    expect(redirectOf(again)).toEqual({ target: `${STUDIO_ORIGIN}/connections/done`, query: { from: 'settings', error: 'oauth_state_replayed' } });
    expect([tokenCalls(), await count('provider_connections')]).toEqual([exchanges, connections]);
    expect(await attemptRow(attempt.attemptId)).toMatchObject({ status: 'completed', connectionId });
  });

  it('a callback after the attempt expired: 303 with error=oauth_state_expired, no exchange, nothing stored', async () => {
    const attempt = await startAttempt(rt);
    const back = await consent(attempt.authorizationUrl);
    // The route takes no lifetime (10 minutes by default): the attempt's end is moved into the past.
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE oauth_attempts SET expires_at = now() - interval '1 second' WHERE id = ${attempt.attemptId}`);
    const [exchanges, connections] = [tokenCalls(), await count('provider_connections')];

    const res = await rt.callback(back);
    expect(res.statusCode).toBe(303);
    expect(redirectOf(res)).toEqual({ target: `${STUDIO_ORIGIN}/connections/done`, query: { from: 'settings', error: 'oauth_state_expired' } });
    expect(await attemptRow(attempt.attemptId)).toEqual({ status: 'expired', failureCode: 'oauth_state_expired', connectionId: null });
    // Once expired, always expired.
    expect(redirectOf(await rt.callback(back)).query).toEqual({ from: 'settings', error: 'oauth_state_expired' });
    expect([tokenCalls(), await count('provider_connections')]).toEqual([exchanges, connections]);
  });

  it('a return target not registered on the product definition: 400 oauth_return_target_mismatch at the start, nothing stored, Google never asked', async () => {
    const [attempts, authorizes] = [await count('oauth_attempts'), google.requestsTo('authorize').length];
    for (const returnTarget of [
      'https://evil.example/connections/done',
      'https://studio.example.evil.example/connections/done',
      `${EXACT_RETURN}/more`,
      'https://app.example/oauth/other',
    ]) {
      const res = await rt.start({ services: ['drive'], returnTarget });
      expect(res.statusCode, returnTarget).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.data, returnTarget).toMatchObject({ code: 'oauth_return_target_mismatch' });
    }
    expect([await count('oauth_attempts'), google.requestsTo('authorize').length]).toEqual([attempts, authorizes]);
  });

  it('a denied consent: 303 with error=oauth_consent_denied, no exchange, nothing stored', async () => {
    google.scriptConsent({ kind: 'deny' });
    const attempt = await startAttempt(rt);
    const [exchanges, connections] = [tokenCalls(), await count('provider_connections')];
    const back = await consent(attempt.authorizationUrl);
    expect(back.searchParams.get('error')).toBe('access_denied');

    const res = await rt.callback(back);
    expect(res.statusCode).toBe(303);
    expect(redirectOf(res)).toEqual({ target: `${STUDIO_ORIGIN}/connections/done`, query: { from: 'settings', error: 'oauth_consent_denied' } });
    expect(await attemptRow(attempt.attemptId)).toEqual({ status: 'failed', failureCode: 'oauth_consent_denied', connectionId: null });
    expect([tokenCalls(), await count('provider_connections')]).toEqual([exchanges, connections]);
  });

  it('a provider error at the code exchange: 303 with error=oauth_provider_error, nothing stored', async () => {
    google.fail('token', { kind: 'status', status: 503 });
    const attempt = await startAttempt(rt);
    const connections = await count('provider_connections');
    const res = await rt.callback(await consent(attempt.authorizationUrl));
    expect(res.statusCode).toBe(303);
    expect(redirectOf(res).query).toEqual({ from: 'settings', error: 'oauth_provider_error' });
    expect(await attemptRow(attempt.attemptId)).toMatchObject({ status: 'failed', failureCode: 'oauth_provider_error', connectionId: null });
    expect(await count('provider_connections')).toBe(connections);
  });

  it('a state this service never issued, or none: 400 oauth_state_invalid (no return target to send anyone to)', async () => {
    const [exchanges, attempts] = [tokenCalls(), await count('oauth_attempts')];
    for (const search of [`?state=${randomBytes(32).toString('base64url')}&code=4/not-ours`, '?code=4/not-ours', '?error=access_denied', '?state=short&code=x']) {
      const res = await rt.callback(new URL(`${CALLBACK_URL}${search}`));
      expect(res.statusCode, search).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.headers['location']).toBeUndefined();
      expect(res.data, search).toMatchObject({ code: 'oauth_state_invalid' });
    }
    expect([tokenCalls(), await count('oauth_attempts')]).toEqual([exchanges, attempts]);
  });
});

// ---- who may use a connection ------------------------------------------------------------------

describe('isolation', () => {
  it('a connection of installation A answers 404 connection_not_found to installation B and to another organization, exactly like a missing id', async () => {
    const connectionId = await connect();
    const { fileId } = await createDocument(connectionId);
    const sibling = await buildRuntimeChain(ctx.db.pool, { organization: { id: chain.organizationId, workspaceId: chain.workspaceId } });
    const stranger = await buildRuntimeChain(ctx.db.pool);
    const [googleRequests, revocations, intents] = [google.requests.length, google.revocations.length, await count('connection_write_intents')];

    for (const other of [sibling, stranger]) {
      const c = client(other);
      const operations: [string, (id: string) => Promise<ConnectionsResponse>][] = [
        ['get', (id) => c.get(id)],
        ['revoke', (id) => c.revoke(id)],
        ['drive create', (id) => c.createDocument(id, newDocument('Theirs', '# Theirs\n'), randomUUID())],
        ['drive read', (id) => c.getDocument(id, fileId)],
        ['drive update', (id) => c.updateDocument(id, fileId, { expectedVersion: '1', markdown: '# Overwritten\n' })],
        ['drive import', (id) => c.importDrive(other.vaultId, { connectionId: id, fileId, path: 'Imported/Theirs.md', mode: 'apply' }, randomUUID())],
        ['classroom courses', (id) => c.courses(id)],
        ['classroom roster', (id) => c.roster(id, '7001')],
        ['classroom assignment', (id) => c.createAssignment(id, '7001', { title: 'Not yours' }, randomUUID())],
        ['classroom attachments', (id) => c.attachments(id, '7001', '123')],
      ];
      for (const [name, operation] of operations) {
        const missing = await operation(randomUUID());
        expect(missing.statusCode, `${name}: ${missing.body}`).toBe(404);
        expect(missing.data['code'], name).toBe('connection_not_found');
        expect(refusal(await operation(connectionId)), name).toEqual(refusal(missing));
      }
      expect((await c.list()).data['data']).toEqual({ connections: [], nextCursor: null });
      expect((await c.readNote(other.vaultId, 'Imported/Theirs.md')).statusCode).toBe(404);
    }
    // Nothing reached Google, nothing was revoked or recorded, and A's connection is intact.
    expect([google.requests.length, google.revocations.length, await count('connection_write_intents')]).toEqual([googleRequests, revocations, intents]);
    expect((await rt.get(connectionId)).data['data']).toMatchObject({ state: 'active' });
    expect((await rt.getDocument(connectionId, fileId)).statusCode).toBe(200);
  });

  it('the scopes: connections.manage for the lifecycle, connections.execute for the round trips', async () => {
    const connectionId = await connect();
    // The scope is checked before the connection is looked up: 403 scope_missing, not 404.
    const manageOnly = await buildRuntimeChain(ctx.db.pool, { scopes: ['connections.manage', 'runtime.read'] });
    const executeOnly = await buildRuntimeChain(ctx.db.pool, { scopes: ['connections.execute', 'runtime.read'] });
    const start = await client(executeOnly).start({ services: ['drive'], returnTarget: RETURN_TARGET });
    expect([start.statusCode, start.data['code']]).toEqual([403, 'scope_missing']);
    expect((await client(executeOnly).list()).statusCode).toBe(403);
    const drive = await client(manageOnly).createDocument(connectionId, newDocument('x', '# x\n'), randomUUID());
    expect([drive.statusCode, drive.data['code']]).toEqual([403, 'scope_missing']);
    expect((await client(manageOnly).courses(connectionId)).statusCode).toBe(403);
  });
});

// ---- Drive ---------------------------------------------------------------------------------------

describe('Drive', () => {
  let connectionId: string;
  beforeAll(async () => {
    connectionId = await connect();
  });

  it.each([5, 20])(
    '%i concurrent creates with one key against a slow Drive: one file, exactly one answer says it created it, the rest replay it',
    async (n) => {
      const files = google.fileCount();
      const key = randomUUID();
      // Every create waits at Google: all n reach Drive with the reserved id while the first is being made.
      google.slow('drive.create', 250);
      let answers: ConnectionsResponse[];
      try {
        answers = await Promise.all(Array.from({ length: n }, () => rt.createDocument(connectionId, newDocument(`Unit ${n}: decimals`, '# Decimals\n'), key)));
      } finally {
        google.slow('drive.create', null);
      }
      const fileId = expectOneCreated(answers, 'fileId');
      expect(google.fileCount()).toBe(files + 1);
      expect(google.file(fileId)).toMatchObject({ name: `Unit ${n}: decimals` });
      // Every successful answer carries the same lineage (the one recorded), not each its own read.
      expect(new Set(answers.map((a) => JSON.stringify({ ...(a.data['data'] as object), replayed: null }))).size).toBe(1);
    },
  );

  it('a retried create with the same Idempotency-Key answers the same file, and only one exists at Google', async () => {
    const body = newDocument('Unit 3: fractions', '# Unit 3\n\nEquivalent fractions.\n');
    const files = google.fileCount();
    const key = randomUUID();
    expect(await rt.createDocument(connectionId, body)).toMatchObject({ statusCode: 400, data: { code: 'idempotency_key_required' } });
    expect(google.fileCount()).toBe(files);

    const first = await rt.createDocument(connectionId, body, key);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.data).toMatchObject({ kind: 'service.drive-document', status: 'complete' });
    const created = first.data['data'] as { fileId: string; version: string };
    expect(created).toEqual({ connectionId, fileId: expect.any(String), name: body.name, mimeType: GOOGLE_DOC_MIME, version: expect.stringMatching(/^\d+$/), modifiedTime: expect.any(String), replayed: false });

    const again = await rt.createDocument(connectionId, body, key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.data['data']).toEqual({ ...created, replayed: true });
    expect(google.fileCount()).toBe(files + 1);
    expect(google.file(created.fileId)).toMatchObject({ name: body.name, content: body.markdown });

    // The key names that write: another body with it is refused, and writes nothing.
    const other = await rt.createDocument(connectionId, newDocument('Unit 4', '# Unit 4\n'), key);
    expect([other.statusCode, other.data['code']]).toEqual([422, 'idempotency_key_reused']);
    expect(google.fileCount()).toBe(files + 1);
  });

  it('a create whose answer Google lost, retried with the same key, finds its own file: still one file', async () => {
    const body = newDocument('Unit 5: ratios', '# Unit 5\n\nRatios.\n');
    const files = google.fileCount();
    const key = randomUUID();
    google.fail('drive.create', { kind: 'ambiguous' });
    const lost = await rt.createDocument(connectionId, body, key);
    expect(lost.statusCode, lost.body).toBe(502);
    expect(lost.data['code']).toBe('connection_provider_error');
    // Google made the file before the connection was cut.
    expect(google.fileCount()).toBe(files + 1);

    const retried = await rt.createDocument(connectionId, body, key);
    expect(retried.statusCode, retried.body).toBe(201);
    const fileId = (retried.data['data'] as { fileId: string }).fileId;
    expect(google.file(fileId)).toMatchObject({ name: body.name, content: body.markdown });
    const replay = await rt.createDocument(connectionId, body, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.data['data']).toMatchObject({ fileId, replayed: true });
    expect(google.fileCount()).toBe(files + 1);
  });

  it('an update over a stale version is a 409 drive_version_conflict with the current lineage; the remote work is untouched', async () => {
    const created = await createDocument(connectionId, newDocument('Shared lesson', '# Shared lesson\n\nOurs.\n'));
    const read = await rt.getDocument(connectionId, created.fileId);
    expect(read.statusCode).toBe(200);
    expect(read.data).toMatchObject({ kind: 'service.drive-document', data: { fileId: created.fileId, version: created.version, replayed: false } });

    // A colleague edits the file in Drive.
    google.editRemotely(created.fileId, '# Shared lesson\n\nTheirs.\n');
    const remote = google.file(created.fileId)!;
    const updates = google.requestsTo('drive.update').length;
    const stale = await rt.updateDocument(connectionId, created.fileId, { expectedVersion: created.version, markdown: '# Shared lesson\n\nOurs, again.\n' });
    expect(stale.statusCode, stale.body).toBe(409);
    expect(stale.headers['content-type']).toContain('application/problem+json');
    expect(stale.data).toMatchObject({
      code: 'drive_version_conflict',
      current: { fileId: created.fileId, name: 'Shared lesson', mimeType: GOOGLE_DOC_MIME, version: String(remote.version), modifiedTime: remote.modifiedTime },
    });
    expect(String(remote.version)).not.toBe(created.version);
    // Never written: the same content and version at Google, and no update request sent.
    expect(google.file(created.fileId)).toEqual(remote);
    expect(google.requestsTo('drive.update').length).toBe(updates);

    // Over the current version, the write goes through.
    const current = (stale.data['current'] as { version: string }).version;
    const fresh = await rt.updateDocument(connectionId, created.fileId, { expectedVersion: current, markdown: '# Shared lesson\n\nMerged.\n' });
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(fresh.data).toMatchObject({ kind: 'service.drive-document', data: { fileId: created.fileId, replayed: false } });
    expect(google.file(created.fileId)!.content).toBe('# Shared lesson\n\nMerged.\n');
    expect(Number((fresh.data['data'] as { version: string }).version)).toBeGreaterThan(Number(current));
  });

  it('imports a Drive document into a granted vault: the preview writes nothing, the apply writes the note through the knowledge core', async () => {
    const markdown = '# Photosynthesis\n\nLight becomes sugar.\n';
    const { fileId } = await createDocument(connectionId, newDocument('Photosynthesis', markdown));
    const path = 'Imports/Photosynthesis.md';
    const body = { connectionId, fileId, path, mode: 'preview' };

    const preview = await rt.importDrive(chain.vaultId, body);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.data).toMatchObject({
      kind: 'service.drive-import',
      status: 'complete',
      data: { document: { connectionId, fileId, name: 'Photosynthesis', mimeType: GOOGLE_DOC_MIME }, publication: { mode: 'preview', applied: false, operation: 'create', path } },
    });
    expect((await rt.readNote(chain.vaultId, path)).statusCode).toBe(404);

    const apply = { ...body, mode: 'apply' };
    expect(await rt.importDrive(chain.vaultId, apply)).toMatchObject({ statusCode: 400, data: { code: 'idempotency_key_required' } });
    const key = randomUUID();
    // 201 like publishNote's apply (the spec said 200; the route keeps the knowledge core's status).
    const applied = await rt.importDrive(chain.vaultId, apply, key);
    expect(applied.statusCode, applied.body).toBe(201);
    expect(applied.data).toMatchObject({ kind: 'service.drive-import', data: { document: { fileId }, publication: { mode: 'apply', applied: true, operation: 'create', path, replayed: false } } });
    const note = await rt.readNote(chain.vaultId, path);
    expect(note.data).toMatchObject({ kind: 'runtime.note', data: { content: markdown, title: 'Photosynthesis' } });
    const afterRevision = (applied.data['data'] as { publication: { afterRevision: string } }).publication.afterRevision;
    expect((note.data['data'] as { revision: string }).revision).toBe(afterRevision);
  });
});

// ---- Classroom -----------------------------------------------------------------------------------

describe('Classroom', () => {
  let connectionId: string;
  beforeAll(async () => {
    connectionId = await connect();
  });

  it("lists the teacher's active courses, picked fields only", async () => {
    const res = await rt.courses(connectionId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.data).toEqual({
      runtimeVersion: '1',
      kind: 'service.classroom-courses',
      status: 'complete',
      missing: [],
      data: {
        courses: [
          { id: '7001', name: 'Biology 7B', section: 'Period 2', room: 'Lab 3', alternateLink: 'https://classroom.google.com/c/7001' },
          { id: '7002', name: 'Chemistry 8A', section: null, room: null, alternateLink: 'https://classroom.google.com/c/7002' },
        ],
        nextPageToken: null,
      },
    });
    // Google sends group e-mail addresses and enrollment codes with every course.
    expect(res.body).not.toContain('@');
    expect(res.body).not.toContain('abc123x');
  });

  it('a roster has user ids and names only, even when Google sends e-mails and photos it was not asked for', async () => {
    google.sendProfileExtrasRegardless = true;
    try {
      const res = await rt.roster(connectionId, '7001');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.data).toMatchObject({ kind: 'service.classroom-roster', status: 'complete' });
      expect(res.data['data']).toEqual({
        students: [
          { userId: 's-101', fullName: 'Ada Park' },
          { userId: 's-102', fullName: 'Ben Ruiz' },
        ],
        nextPageToken: null,
      });
      expect(res.body).not.toContain('@');
      expect(res.body).not.toContain('googleusercontent');
      // Google did send them: the route dropped them.
      expect(google.requestsTo('classroom.students').at(-1)!.status).toBe(200);
    } finally {
      google.sendProfileExtrasRegardless = false;
    }
  });

  it('ten parallel assignment creates with one key make one assignment: the others wait for it, then replay it', async () => {
    const courseWork = google.courseWorkCount('7002');
    const body = { title: 'Exit ticket: osmosis', description: 'Two sentences on what you saw.' };
    const key = randomUUID();
    // A slow create at Google: the other nine arrive while the first is still being made.
    google.fail('classroom.courseWork.create', { kind: 'delay', ms: 300 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => rt.createAssignment(connectionId, '7002', body, key)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => (a.data['data'] as { courseWorkId: string }).courseWorkId)).size).toBe(1);
    expect(google.courseWorkCount('7002')).toBe(courseWork + 1);
  });

  it.each([5, 20])(
    '%i concurrent assignment creates with one key against a slow Classroom: one assignment, exactly one answer says it created it, the rest replay it',
    async (n) => {
      const courseWork = google.courseWorkCount('7002');
      const key = randomUUID();
      google.slow('classroom.courseWork.create', 250);
      let answers: ConnectionsResponse[];
      try {
        answers = await Promise.all(Array.from({ length: n }, () => rt.createAssignment(connectionId, '7002', { title: `Exit ticket ${n}: diffusion` }, key)));
      } finally {
        google.slow('classroom.courseWork.create', null);
      }
      const courseWorkId = expectOneCreated(answers, 'courseWorkId');
      expect(google.courseWorkCount('7002')).toBe(courseWork + 1);
      expect(google.courseWorkOf('7002').at(-1)).toMatchObject({ id: courseWorkId, title: `Exit ticket ${n}: diffusion` });
    },
  );

  it('a retried assignment create with the same Idempotency-Key answers the same assignment; one exists at Google', async () => {
    const courseWork = google.courseWorkCount('7002');
    const body = { title: 'Lab report: osmosis', description: 'Write up the osmosis lab.', materials: [{ url: 'https://example.org/osmosis' }], dueDate: '2026-12-01', dueTime: '15:00' };
    const key = randomUUID();
    expect(await rt.createAssignment(connectionId, '7002', body)).toMatchObject({ statusCode: 400, data: { code: 'idempotency_key_required' } });

    const first = await rt.createAssignment(connectionId, '7002', body, key);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.data).toMatchObject({ kind: 'service.classroom-assignment', status: 'complete' });
    const created = first.data['data'] as { courseWorkId: string };
    expect(created).toEqual({ connectionId, courseId: '7002', courseWorkId: expect.any(String), title: body.title, state: expect.any(String), alternateLink: expect.any(String), replayed: false });

    const again = await rt.createAssignment(connectionId, '7002', body, key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.data['data']).toEqual({ ...created, replayed: true });
    expect(google.courseWorkCount('7002')).toBe(courseWork + 1);
    expect(google.courseWorkOf('7002').at(-1)).toMatchObject({ id: created.courseWorkId, title: body.title, workType: 'ASSIGNMENT' });

    const other = await rt.createAssignment(connectionId, '7002', { ...body, title: 'Another' }, key);
    expect([other.statusCode, other.data['code']]).toEqual([422, 'idempotency_key_reused']);
    expect(google.courseWorkCount('7002')).toBe(courseWork + 1);
  });

  it('an assignment create whose answer Google lost, retried with the same key, finds the one it made: never a second', async () => {
    const courseWork = google.courseWorkCount('7001');
    const body = { title: 'Reading: cell membranes' };
    const key = randomUUID();
    google.fail('classroom.courseWork.create', { kind: 'ambiguous' });
    const lost = await rt.createAssignment(connectionId, '7001', body, key);
    expect(lost.statusCode, lost.body).toBe(502);
    expect(lost.data['code']).toBe('connection_provider_error');
    expect(google.courseWorkCount('7001')).toBe(courseWork + 1);
    const made = google.courseWorkOf('7001').at(-1)!;

    const retried = await rt.createAssignment(connectionId, '7001', body, key);
    expect([200, 201], retried.body).toContain(retried.statusCode);
    expect(retried.data['data']).toMatchObject({ courseId: '7001', courseWorkId: made.id, title: body.title });
    const replay = await rt.createAssignment(connectionId, '7001', body, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.data['data']).toMatchObject({ courseWorkId: made.id, replayed: true });
    expect(google.courseWorkCount('7001')).toBe(courseWork + 1);
  });

  it('submission attachments carry no grade of any kind', async () => {
    google.addSubmissions('7001', '55501', [
      {
        id: 'sub-1',
        userId: 's-101',
        state: 'TURNED_IN',
        assignedGrade: 87.5,
        draftGrade: 91.25,
        attachments: [
          { driveFile: { id: 'drv-essay-1', title: 'Essay draft', alternateLink: 'https://drive.google.com/file/d/drv-essay-1/view' } },
          { link: { url: 'https://example.org/lab-photos', title: 'Lab photos' } },
        ],
      },
      { id: 'sub-2', userId: 's-102', state: 'CREATED', attachments: [] },
    ]);
    const res = await rt.attachments(connectionId, '7001', '55501');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.data).toMatchObject({ kind: 'service.classroom-attachments', status: 'complete' });
    expect(res.data['data']).toEqual({
      submissions: [
        {
          submissionId: 'sub-1',
          userId: 's-101',
          state: 'TURNED_IN',
          attachments: [
            { kind: 'driveFile', title: 'Essay draft', driveFileId: 'drv-essay-1', url: 'https://drive.google.com/file/d/drv-essay-1/view' },
            { kind: 'link', title: 'Lab photos', url: 'https://example.org/lab-photos' },
          ],
        },
        { submissionId: 'sub-2', userId: 's-102', state: 'CREATED', attachments: [] },
      ],
      nextPageToken: null,
    });
    expect(res.body).not.toMatch(/grade/i);
    expect(res.body).not.toMatch(/87\.5|91\.25|pointsEarned/);
  });

  it("Google's failures answer stable codes without Google's text", async () => {
    const driveOnly = await connect(rt, ['drive']);
    const cases: [string, () => Promise<ConnectionsResponse>, number, string][] = [
      ['a service the connection was not granted', () => rt.courses(driveOnly), 403, 'connection_provider_forbidden'],
      ['a course Google does not have', () => rt.roster(connectionId, '9999'), 404, 'connection_provider_not_found'],
      [
        'an outage',
        () => {
          google.fail('classroom.courses', { kind: 'status', status: 503 });
          return rt.courses(connectionId);
        },
        502,
        'connection_provider_error',
      ],
      [
        'a refusal',
        () => {
          google.fail('classroom.courses', { kind: 'status', status: 403 });
          return rt.courses(connectionId);
        },
        403,
        'connection_provider_forbidden',
      ],
    ];
    for (const [name, call, status, code] of cases) {
      const res = await call();
      expect([res.statusCode, res.data['code']], `${name}: ${res.body}`).toEqual([status, code]);
      expect(res.body, name).not.toMatch(/Backend Error|Requested entity|insufficient/);
    }
  });

  it('an access token Google stopped accepting is refreshed once and the call goes through', async () => {
    google.expireAccessTokens();
    const refreshes = tokenCalls();
    const res = await rt.courses(connectionId);
    expect(res.statusCode, res.body).toBe(200);
    expect(tokenCalls()).toBe(refreshes + 1);
    expect(google.requestsTo('token').at(-1)!.status).toBe(200);
  });
});

// ---- revoke --------------------------------------------------------------------------------------

describe('revoke', () => {
  it('revokes the grant at Google and deletes both tokens; the connection is then refused for Drive and Classroom', async () => {
    const connectionId = await connect();
    const { fileId } = await createDocument(connectionId);
    const revocations = google.revocations.length;

    const res = await rt.revoke(connectionId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.data).toMatchObject({
      kind: 'service.connection-revocation',
      status: 'complete',
      data: { connection: { connectionId, state: 'revoked', revokedAt: expect.any(String) }, providerRevocation: 'revoked' },
    });
    expect(google.revocations.slice(revocations)).toEqual([{ tokenIn: 'body', known: true }]);
    expect(await connectionRow(connectionId)).toEqual({ state: 'revoked', access: null, refresh: null });
    expect((await rt.get(connectionId)).data['data']).toMatchObject({ connectionId, state: 'revoked' });

    const googleRequests = google.requests.length;
    for (const [name, call] of [
      ['drive create', () => rt.createDocument(connectionId, newDocument('After', '# After\n'), randomUUID())],
      ['drive read', () => rt.getDocument(connectionId, fileId)],
      ['drive update', () => rt.updateDocument(connectionId, fileId, { expectedVersion: '1', markdown: '# After\n' })],
      ['drive import', () => rt.importDrive(chain.vaultId, { connectionId, fileId, path: 'Imports/After.md', mode: 'preview' })],
      ['classroom courses', () => rt.courses(connectionId)],
      ['classroom assignment', () => rt.createAssignment(connectionId, '7001', { title: 'After' }, randomUUID())],
    ] as const) {
      const refused = await call();
      expect([refused.statusCode, refused.data['code']], `${name}: ${refused.body}`).toEqual([409, 'connection_reauthorization_required']);
    }
    expect(google.requests.length).toBe(googleRequests);

    // Revoking again asks Google nothing.
    const again = await rt.revoke(connectionId);
    expect(again.statusCode).toBe(200);
    expect(again.data['data']).toMatchObject({ providerRevocation: 'already_revoked' });
    expect(google.revocations.length).toBe(revocations + 1);
  });
});

// ---- capabilities --------------------------------------------------------------------------------

type CapabilityList = { data: { capabilities: { id: string; available: boolean; reason: string | null; requiredScopes: string[] }[] } };
const capabilityOf = (res: ConnectionsResponse) => (res.data as unknown as CapabilityList).data.capabilities.find((c) => c.id === 'connections.google');

describe('capabilities', () => {
  it('connections.google is available with its scopes when Google is configured', async () => {
    expect(capabilityOf(await rt.capabilities())).toMatchObject({ available: true, reason: null, requiredScopes: ['connections.manage', 'connections.execute'] });
    const without = await buildRuntimeChain(ctx.db.pool, { scopes: ['runtime.read'] });
    expect(capabilityOf(await client(without).capabilities())).toMatchObject({ available: false, reason: 'scope_missing' });
  });

  it('without a Google client, or without the secret box, every route answers the unavailable envelope and nothing is stored', async () => {
    const attempts = await count('oauth_attempts');
    const connectionId = await connect();
    for (const overrides of [{}, { secretBox: null, connections: { provider, settings: google.settings(), publicBaseUrl: PUBLIC_BASE } }]) {
      const app = await buildTestApp(ctx.db.pool, overrides);
      try {
        const c = connectionsClient(app, chain.secret, (res) => answers.push(res));
        expect(capabilityOf(await c.capabilities())).toMatchObject({ available: false, reason: 'capability_not_configured' });
        const routes: [string, () => Promise<ConnectionsResponse>][] = [
          ['service.connection-attempt', () => c.start({ services: ['drive'], returnTarget: RETURN_TARGET })],
          ['service.connection-list', () => c.list()],
          ['service.connection', () => c.get(connectionId)],
          ['service.connection-revocation', () => c.revoke(connectionId)],
          ['service.drive-document', () => c.createDocument(connectionId, newDocument('x', '# x\n'), randomUUID())],
          ['service.drive-import', () => c.importDrive(chain.vaultId, { connectionId, fileId: 'abc', path: 'Imports/x.md', mode: 'preview' })],
          ['service.classroom-courses', () => c.courses(connectionId)],
          ['service.classroom-roster', () => c.roster(connectionId, '7001')],
          ['service.classroom-assignment', () => c.createAssignment(connectionId, '7001', { title: 'x' }, randomUUID())],
          ['service.classroom-attachments', () => c.attachments(connectionId, '7001', '55501')],
        ];
        for (const [kind, call] of routes) {
          const res = await call();
          expect(res.statusCode, `${kind}: ${res.body}`).toBe(200);
          expect(res.data, kind).toEqual({ runtimeVersion: '1', kind, status: 'unavailable', data: null, missing: [{ part: 'connections.google', reason: 'capability_not_configured', detail: expect.any(String) }] });
        }
      } finally {
        await app.close();
      }
    }
    // Only the connection this test made; the revoke was not carried out.
    expect(await count('oauth_attempts')).toBe(attempts + 1);
    expect((await connectionRow(connectionId)).state).toBe('active');
  });
});

// ---- secrets -------------------------------------------------------------------------------------

describe('secrets', () => {
  const emails = ['ada.park@school.example', 'ben.ruiz@school.example', 'teacher.one@school.example', '@school.example'];

  /** One of everything again, failures included, so their answers and log lines are there too. */
  async function exercise(): Promise<string> {
    const connectionId = await connect();
    google.scriptConsent({ kind: 'deny' });
    await rt.callback(await consent((await startAttempt(rt)).authorizationUrl));
    await createDocument(connectionId);
    google.sendProfileExtrasRegardless = true;
    await rt.roster(connectionId, '7001');
    google.sendProfileExtrasRegardless = false;
    google.fail('classroom.courses', { kind: 'status', status: 500 });
    await rt.courses(connectionId);
    google.accessTokenLifetimeSeconds = 30; // under the refresh margin: the next call refreshes
    const refreshed = await connect();
    google.accessTokenLifetimeSeconds = 3599;
    await rt.courses(refreshed);
    await rt.revoke(connectionId);
    return connectionId;
  }

  it('no token, code, state, client secret or e-mail address is in the database in the clear, or in any answer', async () => {
    const connectionId = await exercise();
    const tokens = google.secrets();
    // The client secret and at least one code, refresh token and access token (one refreshed).
    expect(tokens.length).toBeGreaterThanOrEqual(5);
    const stored = await everyStoredRow(ctx.db.pool);
    expect(stored).toContain(connectionId);
    for (const secret of [...tokens, ...callbackSecrets, ...emails]) {
      for (const form of storedForms(secret)) expect(stored.includes(form), `stored: ${secret.slice(0, 6)}…`).toBe(false);
    }

    // Answers carry the authorization URL (with its state, by design) and redirects; never a token, a code or an e-mail.
    expect(answers.length).toBeGreaterThan(5);
    for (const answer of answers) {
      const text = `${JSON.stringify(answer.headers)}\n${answer.body}`;
      for (const secret of [...tokens, ...emails]) {
        for (const form of [secret, encodeURIComponent(secret)]) expect(text.includes(form), `answered: ${secret.slice(0, 6)}…`).toBe(false);
      }
    }
  });

  it('no token, code, state, client secret or e-mail address is in any log line (every logger at trace)', async () => {
    await exercise();
    const log = logLines.join('');
    expect(log).toContain('/api/product/v1/connections');
    for (const secret of [...google.secrets(), ...callbackSecrets, ...emails]) {
      // In a logged URL a code's slash is percent-encoded.
      for (const form of [secret, encodeURIComponent(secret)]) expect(log.includes(form), `logged: ${secret.slice(0, 6)}…`).toBe(false);
    }
  });
});
