// Google not answering in time, over HTTP (api/routes/product/connections/): the real app on real
// Postgres with GOOGLE_TIMEOUT_MS short (read through platform/config.ts as in production), and the
// scripted Google double hanging a call — before doing the work, or after it (`stall`: the file or
// assignment exists, the answer never comes). Every such call answers 504 connection_provider_timeout
// (not 502 connection_provider_error), within the timeout, for Drive creates, reads, updates and
// imports, Classroom lists and assignment creates, and a token refresh inside a round trip; and a
// write retried with the same key once Google recovers makes exactly one file or assignment. A
// request waiting on another with the same key for longer than one Google call is told 409
// idempotency_in_flight rather than held (or cut by the database's statement timeout).
// Classroom's client (gaxios 7 via googleapis-common 8) signals a timeout differently from Drive's
// and OAuth's (gaxios 8): both are covered here at the HTTP edge, and in
// connections-google-client.test.ts at the client.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import type { OAuthProvider } from '../domain/connections/provider.ts';
import { setProductReturnTargets } from '../domain/product-runtime/entities.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { googleFrom, loadConfig } from '../platform/config.ts';
import { CALLBACK_PATH, connectionsClient } from './support/connections.ts';
import type { ConnectionsClient, ConnectionsResponse } from './support/connections.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { ScriptedGoogle } from './support/scripted-google.ts';
import type { GoogleRoute } from './support/scripted-google.ts';

const PUBLIC_BASE = 'https://notes.example.test';
const CALLBACK_URL = `${PUBLIC_BASE}${CALLBACK_PATH}`;
const RETURN_TARGET = 'https://studio.example/connections/done';
/** GOOGLE_TIMEOUT_MS here: short, so a hang costs little; long enough for a loaded machine's normal calls. */
const TIMEOUT_MS = 600;
/** A round trip makes at most three calls (reserve, create, read back) and a refresh: an answer past this did not honour the timeout. */
const ANSWER_WITHIN_MS = 4 * TIMEOUT_MS + 1_500;

const google = new ScriptedGoogle({ redirectUris: [CALLBACK_URL] });
const keys = `k1:${randomBytes(32).toString('base64')}`;
const secretBox = createSecretBox(keys)!;
const workerDeps: { secretBox: SecretBox; oauthProvider: OAuthProvider | null } = { secretBox, oauthProvider: null };
let settings: NonNullable<ReturnType<typeof googleFrom>>;

beforeAll(async () => {
  await google.start();
  // The settings production builds from its environment, GOOGLE_TIMEOUT_MS included.
  settings = googleFrom(
    loadConfig({
      GOOGLE_OAUTH_CLIENT_ID: google.clientId,
      GOOGLE_OAUTH_CLIENT_SECRET: google.clientSecret,
      PUBLIC_BASE_URL: PUBLIC_BASE,
      SECRETS_ENCRYPTION_KEYS: keys,
      GOOGLE_OAUTH_AUTHORIZE_URL: `${google.url}/o/oauth2/v2/auth`,
      GOOGLE_OAUTH_TOKEN_URL: `${google.url}/token`,
      GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
      GOOGLE_DRIVE_ROOT_URL: `${google.url}/`,
      GOOGLE_CLASSROOM_ROOT_URL: `${google.url}/`,
      GOOGLE_TIMEOUT_MS: String(TIMEOUT_MS),
    }),
  )!;
  expect(settings.timeoutMs).toBe(TIMEOUT_MS);
  workerDeps.oauthProvider = createGoogleOAuthProvider(settings);
  google.addCourse({ id: '8001', name: 'Geography 9', courseState: 'ACTIVE', taughtByMe: true });
});
afterAll(async () => {
  await google.close();
});

const ctx = useTestAppWithWorker({
  name: 'connections-timeouts',
  overrides: () => ({ secretBox, connections: { provider: workerDeps.oauthProvider!, settings, publicBaseUrl: settings.publicBaseUrl } }),
  workerDeps,
});

let chain: RuntimeChain;
let rt: ConnectionsClient;
let connectionId: string;

beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  await setProductReturnTargets(ctx.db.pool, chain.productId, ['https://studio.example']);
  rt = connectionsClient(ctx.app, chain.secret);
  const started = await rt.start({ services: ['drive', 'classroom'], returnTarget: RETURN_TARGET });
  expect(started.statusCode, started.body).toBe(201);
  const visit = await google.visit((started.data['data'] as { authorizationUrl: string }).authorizationUrl);
  const back = await rt.callback(visit.redirect!);
  expect(back.statusCode, back.body).toBe(303);
  connectionId = new URL(String(back.headers['location'])).searchParams.get('connectionId')!;
});

/** Runs a request with `route` hanging (or stalling) once at Google; the answer and how long it took. */
async function withGoogleHanging(route: GoogleRoute, kind: 'hang' | 'stall', call: () => Promise<ConnectionsResponse>) {
  google.fail(route, { kind });
  const started = performance.now();
  const res = await call();
  const elapsedMs = performance.now() - started;
  // The scripted failure was played (the call reached Google and was left unanswered).
  expect(google.requestsTo(route).at(-1)!.status).toBe(kind === 'hang' ? 'hung' : 'stalled');
  return { res, elapsedMs };
}

function expectTimeout(res: ConnectionsResponse, elapsedMs: number) {
  expect([res.statusCode, res.data['code']], res.body).toEqual([504, 'connection_provider_timeout']);
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
}

const intents = () => ctx.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM connection_write_intents`);
const doc = (name: string) => ({ name, markdown: `# ${name}\n\nBody.\n` });

describe('Drive, Google past GOOGLE_TIMEOUT_MS', () => {
  it('a create Google never answers (nothing made): 504 connection_provider_timeout; the same key after Google recovers makes the one file', async () => {
    const files = google.fileCount();
    const key = randomUUID();
    const body = doc('Rivers');
    const { res, elapsedMs } = await withGoogleHanging('drive.create', 'hang', () => rt.createDocument(connectionId, body, key));
    expectTimeout(res, elapsedMs);
    expect(google.fileCount()).toBe(files);

    const retried = await rt.createDocument(connectionId, body, key);
    expect(retried.statusCode, retried.body).toBe(201);
    const created = retried.data['data'] as { fileId: string; replayed: boolean };
    expect(created.replayed).toBe(false);
    const again = await rt.createDocument(connectionId, body, key);
    expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(again.data['data']).toMatchObject({ fileId: created.fileId, replayed: true });
    expect(google.fileCount()).toBe(files + 1);
    expect(google.file(created.fileId)).toMatchObject({ name: body.name, content: body.markdown });
  });

  it('a create Google made but never answered: 504; the retry meets that file (Drive refuses the reserved id twice), still one file', async () => {
    const files = google.fileCount();
    const key = randomUUID();
    const body = doc('Deltas');
    const { res, elapsedMs } = await withGoogleHanging('drive.create', 'stall', () => rt.createDocument(connectionId, body, key));
    expectTimeout(res, elapsedMs);
    // Google applied it: the timeout is ambiguous, which is why the answer says to retry with the key.
    expect(google.fileCount()).toBe(files + 1);

    const retried = await rt.createDocument(connectionId, body, key);
    expect(retried.statusCode, retried.body).toBe(201);
    const fileId = (retried.data['data'] as { fileId: string }).fileId;
    expect(google.file(fileId)).toMatchObject({ name: body.name, content: body.markdown });
    expect((await rt.createDocument(connectionId, body, key)).data['data']).toMatchObject({ fileId, replayed: true });
    expect(google.fileCount()).toBe(files + 1);
  });

  it('reserving the file id times out: 504, nothing recorded under the key; the retry makes the one file', async () => {
    const files = google.fileCount();
    const before = await intents();
    const key = randomUUID();
    const { res, elapsedMs } = await withGoogleHanging('drive.generateIds', 'hang', () => rt.createDocument(connectionId, doc('Lakes'), key));
    expectTimeout(res, elapsedMs);
    expect(await intents()).toBe(before);
    expect((await rt.createDocument(connectionId, doc('Lakes'), key)).statusCode).toBe(201);
    expect(google.fileCount()).toBe(files + 1);
  });

  it('a read, an update and an import Google never answers: 504 each; the file is unchanged', async () => {
    const created = await rt.createDocument(connectionId, doc('Glaciers'), randomUUID());
    expect(created.statusCode, created.body).toBe(201);
    const { fileId, version } = created.data['data'] as { fileId: string; version: string };
    const original = google.file(fileId)!;

    const read = await withGoogleHanging('drive.get', 'hang', () => rt.getDocument(connectionId, fileId));
    expectTimeout(read.res, read.elapsedMs);

    const update = await withGoogleHanging('drive.update', 'hang', () => rt.updateDocument(connectionId, fileId, { expectedVersion: version, markdown: '# Glaciers\n\nRewritten.\n' }));
    expectTimeout(update.res, update.elapsedMs);
    expect(google.file(fileId)).toEqual(original);

    const imported = await withGoogleHanging('drive.export', 'hang', () => rt.importDrive(chain.vaultId, { connectionId, fileId, path: 'Imports/Glaciers.md', mode: 'preview' }));
    expectTimeout(imported.res, imported.elapsedMs);

    // Google answers again: so does the connection.
    const after = await rt.getDocument(connectionId, fileId);
    expect(after.statusCode, after.body).toBe(200);
    expect(after.data['data']).toMatchObject({ fileId, version });
  });

  it('a token refresh Google never answers, inside a round trip: 504 too', async () => {
    // Google stops accepting the access token: the round trip refreshes it, and the refresh hangs.
    google.expireAccessTokens();
    const created = await withGoogleHanging('token', 'hang', () => rt.getDocument(connectionId, 'a-file-id-that-is-long-enough'));
    expectTimeout(created.res, created.elapsedMs);
    // Recovered: the next call refreshes and goes through.
    expect((await rt.courses(connectionId)).statusCode).toBe(200);
  });
});

describe('Classroom, Google past GOOGLE_TIMEOUT_MS', () => {
  it('a course list and a roster Google never answers: 504 each', async () => {
    const courses = await withGoogleHanging('classroom.courses', 'hang', () => rt.courses(connectionId));
    expectTimeout(courses.res, courses.elapsedMs);
    const roster = await withGoogleHanging('classroom.students', 'hang', () => rt.roster(connectionId, '8001'));
    expectTimeout(roster.res, roster.elapsedMs);
    expect((await rt.courses(connectionId)).statusCode).toBe(200);
  });

  it('an assignment create Google never answers (nothing made): 504; the same key after Google recovers makes the one assignment', async () => {
    const before = google.courseWorkCount('8001');
    const key = randomUUID();
    const body = { title: 'Map the watershed' };
    const { res, elapsedMs } = await withGoogleHanging('classroom.courseWork.create', 'hang', () => rt.createAssignment(connectionId, '8001', body, key));
    expectTimeout(res, elapsedMs);
    expect(google.courseWorkCount('8001')).toBe(before);

    const retried = await rt.createAssignment(connectionId, '8001', body, key);
    expect(retried.statusCode, retried.body).toBe(201);
    const made = google.courseWorkOf('8001').at(-1)!;
    expect(retried.data['data']).toMatchObject({ courseWorkId: made.id, title: body.title, replayed: false });
    expect((await rt.createAssignment(connectionId, '8001', body, key)).data['data']).toMatchObject({ courseWorkId: made.id, replayed: true });
    expect(google.courseWorkCount('8001')).toBe(before + 1);
  });

  it('an assignment create Classroom made but never answered: 504; the retry finds it by its marker, never a second one', async () => {
    const before = google.courseWorkCount('8001');
    const key = randomUUID();
    const body = { title: 'Erosion field notes', description: 'Three photos and a caption each.' };
    const { res, elapsedMs } = await withGoogleHanging('classroom.courseWork.create', 'stall', () => rt.createAssignment(connectionId, '8001', body, key));
    expectTimeout(res, elapsedMs);
    expect(google.courseWorkCount('8001')).toBe(before + 1);
    const made = google.courseWorkOf('8001').at(-1)!;

    // Not made by this request: the retry answers it as a replay (no answer ever said "created").
    const retried = await rt.createAssignment(connectionId, '8001', body, key);
    expect([retried.statusCode, retried.headers['idempotent-replayed']], retried.body).toEqual([200, 'true']);
    expect(retried.data['data']).toMatchObject({ courseWorkId: made.id, title: body.title, replayed: true });
    expect(google.courseWorkCount('8001')).toBe(before + 1);
  });
});

describe('Classroom, a concurrent request waiting on a slow one', () => {
  it('waits for the key\'s intent at most one Google call: past that, 409 idempotency_in_flight (Retry-After: 1); the retry replays the one assignment', async () => {
    const before = google.courseWorkCount('8001');
    const key = randomUUID();
    const body = { title: 'Contour lines' };
    // A first attempt fails cleanly: the intent stays pending, so the next requests reconcile first.
    google.fail('classroom.courseWork.create', { kind: 'status', status: 500 });
    expect((await rt.createAssignment(connectionId, '8001', body, key)).statusCode).toBe(502);

    // Reconcile (list) and create each take 400 ms, within GOOGLE_TIMEOUT_MS, but together longer than it:
    // the request holding the intent outlasts the other's wait.
    google.slow('classroom.courseWork.list', 400).slow('classroom.courseWork.create', 400);
    let answers: ConnectionsResponse[];
    try {
      answers = await Promise.all([1, 2].map(() => rt.createAssignment(connectionId, '8001', body, key)));
    } finally {
      google.slow('classroom.courseWork.list', null).slow('classroom.courseWork.create', null);
    }
    const created = answers.find((a) => a.statusCode === 201);
    const waiting = answers.find((a) => a.statusCode === 409);
    expect(answers.map((a) => a.statusCode).sort(), answers.map((a) => a.body).join('\n')).toEqual([201, 409]);
    expect(waiting!.data['code']).toBe('idempotency_in_flight');
    expect(waiting!.headers['retry-after']).toBe('1');
    const made = google.courseWorkOf('8001').at(-1)!;
    expect(created!.data['data']).toMatchObject({ courseWorkId: made.id, replayed: false });

    const retried = await rt.createAssignment(connectionId, '8001', body, key);
    expect([retried.statusCode, retried.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(retried.data['data']).toMatchObject({ courseWorkId: made.id, replayed: true });
    expect(google.courseWorkCount('8001')).toBe(before + 1);
  });
});

describe('still a provider error, not a timeout', () => {
  it('Google answering 5xx, or cutting the connection before the deadline, is 502 connection_provider_error', async () => {
    google.fail('classroom.courses', { kind: 'status', status: 500 });
    const outage = await rt.courses(connectionId);
    expect([outage.statusCode, outage.data['code']], outage.body).toEqual([502, 'connection_provider_error']);
    google.fail('drive.get', { kind: 'drop' });
    const cut = await rt.getDocument(connectionId, 'a-file-id-that-is-long-enough');
    expect([cut.statusCode, cut.data['code']], cut.body).toEqual([502, 'connection_provider_error']);
  });
});
