// The outage drill (issue 25), as production runs the platform: two API processes and two workers
// (the real entry points, api/main.ts and workers/main.ts) on one Postgres and one Temporal server.
// Events, proposals, approvals and single-note writes (four at a time, so the APIs group-commit them)
// flow through both APIs while Temporal is stopped and restarted
// (the dev server on the same port and SQLite file) and then Postgres is cut for 5 s (a loopback
// proxy between every process and the test database refuses and resets connections). Clients behave
// like bridges: they retry what was not acknowledged with the same Idempotency-Key after Retry-After.
// Beside them, a partner's backend asks for metered generations (Product Runtime, JSON answers) as
// its SDK would: one Idempotency-Key per logical request, the same key again after a 503 or a network
// error and on the other API, and sometimes again after a 200 (an answer it lost); the model provider
// is a scripted OpenAI-compatible server on loopback.
// A partner also uploads audio, four at a time on one organization, retrying with the same key.
// An agent reads one note through both APIs all along (the hot read, its admissions kept by each API
// process, decision 111), and a partner's reader one note of its vault through the Product Runtime
// (its chain kept by each API process, decision 112); once the drill is over the token and the
// credential are revoked, and both APIs refuse them at once.
// Afterwards every acknowledged event reached every subscribed endpoint, every proposal was reviewed
// and executed once with one receipt, every acknowledged write is there once (one event), every
// acknowledged upload is stored once and the organization's storage counts exactly those, every
// generation settled once (one reservation, one model call,
// replays for the rest) and the organization's committed spend is exactly its receipts, nothing is
// left pending or running, every refusal was a 503 with Retry-After, never a 500, and a reviewer
// console open on each API was told of the Postgres cut and of its end, and left no change unshown.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { sql } from 'slonik';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deliveryMessageId } from '../domain/automation/webhooks.ts';
import { reviewWorkflowId } from '../domain/automation/workflow-ids.ts';
import { hashSecret } from '../domain/secrets.ts';
import { issueAccessToken, revokeAccessToken } from '../domain/identity/accounts.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import { spawnPlatformProcess, waitFor } from '../platform/topology/processes.ts';
import type { PlatformProcess } from '../platform/topology/processes.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { openConsoleStream } from './support/console.ts';
import { workspaceWithReviewer } from './support/fixtures.ts';
import { generateBody, orgLedger, setBudget } from './support/intelligence.ts';
import { audioFixture } from './support/media.ts';
import { issueServiceCredential, revokeServiceCredential } from '../domain/product-runtime/entities.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { ScriptedProvider, scriptedProviderEnv } from './support/scripted-provider.ts';
import { startOutageStack } from './support/outage-stack.ts';
import type { OutageStack } from './support/outage-stack.ts';

const TEMPORAL_OUTAGE_MS = 10_000;
const POSTGRES_OUTAGE_MS = 5_000;

let db: TestDatabase;
let stack: OutageStack;
const processes: PlatformProcess[] = [];
const apis: string[] = [];
let receiver: Server;
let receiverUrl: string;
const receivedIds: string[] = [];

let proposerToken: string;
let reviewerToken: string;
let workspaceId: string;
let mappingId: string;
let endpointId: string;
let readerToken: string;
let readerTokenId: string;
let runtimeReader: { secret: string; credentialId: string };
const provider = new ScriptedProvider();
let runtime: RuntimeChain;

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startOutageStack(db.url, 'drill');

  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receivedIds.push(String(req.headers['webhook-id']));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/drill`;
  // Each answer streams in three chunks over ~120 ms, so some generations are in flight when an outage begins.
  await provider.start();
  provider.fallback = { kind: 'chat', chunks: ['Fold ', 'a strip ', 'in half.'], chunkDelayMs: 40 };

  const env = {
    DATABASE_URL: stack.databaseUrl,
    DATABASE_POOL_SIZE: '6',
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: `drill-${process.pid}`,
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    SECRETS_ENCRYPTION_KEYS: `drill:${randomBytes(32).toString('base64')}`,
    WEBHOOK_EGRESS_ALLOWLIST: '127.0.0.1',
    WEBHOOK_RETRY_BASE_MS: '200',
    SHUTDOWN_GRACE_MS: '1000',
    REST_REQUESTS_PER_MINUTE: '100000',
    // The metered model: the scripted provider.
    ...scriptedProviderEnv(provider),
    // Short timers, so that whatever an outage left behind is recorded within the drill: an
    // undispatched reservation (or a workflow that never reserved) ends after 15 s, an unreported
    // dispatched one after 10 s + 60 s (the production defaults are 60 s and 120 s + 60 s).
    INTELLIGENCE_RESERVATION_TTL_MS: '15000',
    INTELLIGENCE_PROVIDER_TIMEOUT_MS: '10000',
  };
  for (const i of [1, 2]) {
    const port = await freePort();
    // Every line kept: the drill checks them all (JSON only) and quotes a stuck proposal's.
    processes.push(spawnPlatformProcess(`api-${i}`, 'api/main.ts', { ...env, PORT: String(port) }, { keepLines: Infinity }));
    apis.push(`http://127.0.0.1:${port}`);
    processes.push(spawnPlatformProcess(`worker-${i}`, 'workers/main.ts', env, { keepLines: Infinity }));
  }
  for (const api of apis) await waitFor(`${api} ready`, async () => (await fetch(`${api}/readyz`)).ok, 60_000);

  const cast = await workspaceWithReviewer(db.pool, 'Drill');
  ({ workspaceId, mappingId } = cast);
  proposerToken = cast.proposer.token;
  reviewerToken = cast.reviewer.token;
  const endpoint = await fetch(`${apis[0]}/api/dev/automation/endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proposerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspaceId, url: receiverUrl, eventTypes: ['drill.tick'] }),
  });
  expect(endpoint.status).toBe(201);
  endpointId = ((await endpoint.json()) as { id: string }).id;
  // The agent's own token for the proposer's account, and the note it reads.
  ({ token: readerToken, record: { id: readerTokenId } } = await issueAccessToken(db.pool, { accountId: cast.proposer.account.id, name: 'drill reader' }));
  const readNote = await fetch(`${apis[0]}/api/dev/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proposerToken}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ mappingId, path: 'Drill/Read.md', content: '# Read all along\n', dryRun: false }),
  });
  expect(readNote.status).toBe(201);

  // The partner: an installation with a service credential, its organization's budget far above the
  // drill's requests (~5,000 µ$ reserved each) and room for every one of them in flight at once.
  runtime = await buildRuntimeChain(db.pool);
  await setBudget(db.pool, runtime.organizationId, 1_000_000_000, 1_000);
  // The partner's reader: a credential of its own (revoked at the end) and a note of the granted vault.
  const readerCredential = await issueServiceCredential(db.pool, { servicePrincipalId: runtime.principalId, scopes: ['notes.read'] });
  runtimeReader = { secret: readerCredential.secret, credentialId: readerCredential.record.id };
  const runtimeNote = await fetch(`${apis[0]}/api/dev/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runtime.owner.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ mappingId: runtime.mappingId, path: 'Drill/Runtime.md', content: '# Read through the runtime\n', dryRun: false }),
  });
  expect(runtimeNote.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop(10_000)));
  await stack?.close();
  await new Promise((r) => receiver?.close(r));
  await provider.close();
  await db?.drop();
}, 60_000);

// ---- clients that behave like bridges -----------------------------------------------------------

type Answer = { status: number; code: string | null; retryAfter: string | null; phase: string };
const answers: Answer[] = [];
let phase = 'healthy';
let turn = 0;

/** One request to one of the APIs (round robin); a refused connection is recorded as status 0. */
async function call(token: string, method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const api = apis[turn++ % apis.length]!;
  try {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const answer = { status: res.status, code: typeof json['code'] === 'string' ? json['code'] : null, retryAfter: res.headers.get('retry-after'), phase };
    answers.push(answer);
    return { status: res.status, json, retryAfter: answer.retryAfter };
  } catch {
    answers.push({ status: 0, code: null, retryAfter: null, phase });
    return { status: 0, json: {}, retryAfter: null };
  }
}

/** Retries with the same key until the request is acknowledged, waiting Retry-After (capped at 2 s: a patient bridge, a quick test). */
async function untilAcknowledged(token: string, method: string, path: string, body?: unknown, key?: string, done: (status: number, json: Record<string, unknown>) => boolean = (s) => s >= 200 && s < 300) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await call(token, method, path, body, key);
    if (done(res.status, res.json)) return res.json;
    if (res.status >= 400 && res.status < 500 && res.json['code'] !== 'idempotency_in_flight' && res.json['code'] !== 'proposal_not_pending') {
      throw new Error(`${method} ${path} answered ${res.status} ${JSON.stringify(res.json)}`);
    }
    if (Date.now() > deadline) throw new Error(`${method} ${path} never acknowledged (last ${res.status})`);
    await new Promise((r) => setTimeout(r, Math.min(2_000, 1_000 * (Number(res.retryAfter) || 1))));
  }
}

/** The reads of Drill/Read.md (REST) and Drill/Runtime.md (Product Runtime), by phase (call() records them among the answers too). */
const readAnswers: { via: 'rest' | 'runtime'; phase: string; status: number }[] = [];
const readPath = () => `/api/dev/notes/Drill/Read.md?mappingId=${mappingId}`;
const runtimeReadPath = () => `/api/product/v1/vaults/${runtime.vaultId}/note?path=Drill%2FRuntime.md`;

async function readAlong(reading: () => boolean) {
  // A read starts every 100 ms whether or not the ones before have answered, as independent readers
  // do: a read begun just before the Postgres cut can wait the whole cut for a connection (the
  // pool's 5 s), and in a loop that awaited it no read began in the cut at all.
  const reads: Promise<void>[] = [];
  const failures: unknown[] = [];
  while (reading()) {
    const at = phase;
    reads.push(
      Promise.all([call(readerToken, 'GET', readPath()), call(runtimeReader.secret, 'GET', runtimeReadPath())]).then(
        ([rest, partner]) => void readAnswers.push({ via: 'rest', phase: at, status: rest.status }, { via: 'runtime', phase: at, status: partner.status }),
        (error: unknown) => void failures.push(error),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
  }
  await Promise.all(reads);
  if (failures.length > 0) throw failures[0];
}

const eventIds: string[] = [];
const proposalIds: string[] = [];

async function ingestEvent(n: number) {
  const json = await untilAcknowledged(proposerToken, 'POST', '/api/dev/automation/events', { workspaceId, type: 'drill.tick', source: 'drill', data: { n } }, `drill-event-${n}-${randomUUID()}`);
  eventIds.push((json['event'] as { id: string }).id);
}

async function proposeAndApprove(n: number) {
  const body = { workspaceId, bridge: 'drill', summary: `Drill ${n}`, action: { kind: 'note.write', mappingId, path: `Drill/Note ${n}.md`, content: `# Drill ${n}\n` } };
  const proposal = await untilAcknowledged(proposerToken, 'POST', '/api/dev/automation/proposals', body, `drill-proposal-${n}-${randomUUID()}`);
  const id = proposal['id'] as string;
  proposalIds.push(id);
  // The reviewer approves once the review is open; a 503 is retried, and a retry that finds the
  // decision already recorded (409 proposal_not_pending after it landed) is done too.
  await untilAcknowledged(reviewerToken, 'GET', `/api/dev/automation/proposals/${id}`, undefined, undefined, (s, json) => s === 200 && json['state'] !== 'proposed');
  await untilAcknowledged(reviewerToken, 'POST', `/api/dev/automation/proposals/${id}/approve`, {}, undefined, (s, json) => (s >= 200 && s < 300) || json['code'] === 'proposal_not_pending');
}

/** Single-note writes acknowledged (their paths): four at a time, so the API group-commits them. */
const writtenPaths: string[] = [];

async function writeNotes(n: number) {
  await Promise.all(
    Array.from({ length: 4 }, async (_, j) => {
      const path = `Group/Tick ${n}-${j}.md`;
      await untilAcknowledged(proposerToken, 'POST', '/api/dev/notes', { mappingId, path, content: `# Tick ${n}-${j}\n`, dryRun: false }, `drill-write-${n}-${j}-${randomUUID()}`);
      writtenPaths.push(path);
    }),
  );
}

// ---- a partner's backend uploading audio (Product Runtime media) -------------------------------

const audio = audioFixture('tone-3s.webm');
/** Acknowledged uploads: the mediaId each key was answered with (every answer of a key must agree). */
const uploaded = new Map<string, string>();
const uploadConflicts: string[] = [];
const uploadAnswers: Answer[] = [];

/** Four uploads at a time on the partner's organization, so each API claims them together (decision 108). */
async function uploadAudios(n: number) {
  await Promise.all(
    Array.from({ length: 4 }, async (_, j) => {
      const key = `drill-upload-${n}-${j}-${randomUUID()}`;
      // A tick's first tries go to one API (so they wait for each other's statement there), retries to the other.
      for (let attempt = 0, deadline = Date.now() + 120_000; ; attempt++) {
        const api = apis[(n + attempt) % apis.length]!;
        let status = 0;
        let json: Record<string, unknown> = {};
        let retryAfter: string | null = null;
        try {
          const res = await fetch(`${api}/api/product/v1/intelligence/education/media/audio`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${runtime.secret}`,
              'x-service-runtime-version': '1',
              'content-type': 'application/octet-stream',
              'idempotency-key': key,
              'x-media-reference': `drill ${n}-${j}`,
              'x-media-duration-seconds': '3',
            },
            body: audio,
            signal: AbortSignal.timeout(30_000),
          });
          status = res.status;
          retryAfter = res.headers.get('retry-after');
          json = (await res.json()) as Record<string, unknown>;
        } catch {
          status = 0;
        }
        const answer = { status, code: typeof json['code'] === 'string' ? json['code'] : null, retryAfter, phase };
        answers.push(answer);
        uploadAnswers.push(answer);
        if (status === 200 || status === 201) {
          const mediaId = (json['data'] as { mediaId: string }).mediaId;
          if (uploaded.has(key) && uploaded.get(key) !== mediaId) uploadConflicts.push(`${key}: ${uploaded.get(key)} then ${mediaId}`);
          uploaded.set(key, mediaId);
          return;
        }
        if (status !== 0 && status !== 503 && json['code'] !== 'idempotency_in_flight') throw new Error(`upload ${key} answered ${status} ${JSON.stringify(json)}`);
        if (Date.now() > deadline) throw new Error(`upload ${key} never acknowledged (last ${status})`);
        await new Promise((r) => setTimeout(r, Math.min(2_000, 1_000 * (Number(retryAfter) || 1))));
      }
    }),
  );
}

// ---- clients that behave like a partner SDK (metered generations) -------------------------------

type GenerateAnswer = Answer & { key: string; replayed: boolean | null; generationId: string | null; outcome: string | null; cost: number | null };
const generateAnswers: GenerateAnswer[] = [];
const generateKeys: string[] = [];
/** Keys sent once more after their 200 (a partner that lost the answer): each must replay. */
type Generated = { generationId: string; replayed: boolean; receipt: { outcome: string; costMicrodollars: number } };

/** One generate to the API `attempt` points at (the next attempt goes to the other one); a network error is status 0. */
async function callGenerate(key: string, n: number, attempt: number): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const api = apis[(n + attempt) % apis.length]!;
  const record = (status: number, json: Record<string, unknown>, retryAfter: string | null) => {
    const g = (json['data'] ?? null) as Generated | null;
    generateAnswers.push({
      key,
      status,
      code: typeof json['code'] === 'string' ? json['code'] : null,
      retryAfter,
      phase,
      replayed: status === 200 ? (g?.replayed ?? null) : null,
      generationId: status === 200 ? (g?.generationId ?? null) : null,
      outcome: status === 200 ? (g?.receipt.outcome ?? null) : null,
      cost: status === 200 ? (g?.receipt.costMicrodollars ?? null) : null,
    });
    return { status, json, retryAfter };
  };
  try {
    const res = await fetch(`${api}/api/product/v1/intelligence/education/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runtime.secret}`, 'x-service-runtime-version': '1', 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(generateBody(`Drill warm-up ${n}: equivalent fractions with strips.`)),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return record(res.status, (text ? JSON.parse(text) : {}) as Record<string, unknown>, res.headers.get('retry-after'));
  } catch {
    return record(0, {}, null);
  }
}

/** Sends the key until it is answered 200: again after a 503 (Retry-After, capped at 2 s), a network error or a retryable 409, on the other API. */
async function untilGenerated(key: string, n: number, firstAttempt: number): Promise<{ attempts: number; generation: Generated }> {
  const deadline = Date.now() + 120_000;
  for (let attempt = firstAttempt; ; attempt++) {
    const res = await callGenerate(key, n, attempt);
    if (res.status === 200) return { attempts: attempt + 1, generation: res.json['data'] as Generated };
    // What the runtime's docs say to send again: a 503, an in-flight key, a reservation that expired before dispatch.
    const retryable = res.status === 0 || res.status === 503 || ['idempotency_in_flight', 'intelligence_reservation_expired'].includes(String(res.json['code']));
    if (!retryable) throw new Error(`generate ${key} answered ${res.status} ${JSON.stringify(res.json)}; its answers: ${answersOf(n)}`);
    if (Date.now() > deadline) throw new Error(`generate ${key} never answered 200; its answers: ${answersOf(n)}`);
    await new Promise((r) => setTimeout(r, Math.min(2_000, 1_000 * (Number(res.retryAfter) || 1))));
  }
}

let nextGenerate = 0;
const generations: Promise<void>[] = [];
/** Logical requests that did not end in a 200 (each with its answers), asserted empty after the drill. */
const generateFailures: string[] = [];

async function generateOnce(n: number) {
  const key = `drill-generate-${n}-${randomUUID()}`;
  generateKeys.push(key);
  try {
    const { attempts } = await untilGenerated(key, n, 0);
    // Every other partner lost the answer and sends the request again, to the other API: a replay
    // (checked below: every 200 after a key's first is one).
    if (n % 2 === 0) {
      await untilGenerated(key, n, attempts);
    }
  } catch (error) {
    generateFailures.push((error as Error).message);
  }
}

/** The answers to logical request `n`, in order, repeats counted ("recovered 409 idempotency_in_flight ×12"). */
function answersOf(n: number): string {
  const runs: { what: string; times: number }[] = [];
  for (const a of generateAnswers.filter((a) => a.key.startsWith(`drill-generate-${n}-`))) {
    const what = `${a.phase} ${a.status} ${a.code ?? (a.replayed ? 'replayed' : '')}`.trim();
    if (runs.at(-1)?.what === what) runs.at(-1)!.times++;
    else runs.push({ what, times: 1 });
  }
  return runs.map((r) => (r.times > 1 ? `${r.what} ×${r.times}` : r.what)).join(', ');
}

/**
 * One generation the provider holds across the start of an outage: once it is dispatched (the
 * provider has it), the outage begins; the provider answers once it has (`release`), so the request
 * settles, or fails to, during the outage.
 */
function generationAcrossOutage(): { dispatched: Promise<{ n: number; answered: number }>; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const index = provider.calls.length;
  // Answers the logical request the provider holds (its task names it), and how many answers were
  // recorded when it got there: that request's next answer is the held attempt's (a logical
  // request's attempts are sequential). It may be a retry of a request begun earlier, even one
  // refused during the previous outage; its earlier answers say nothing about this one.
  const dispatched = Promise.race([
    provider.waitForCalls(index + 1).then(() => ({
      n: Number(/Drill warm-up (\d+):/.exec(JSON.stringify(provider.calls[index]!.body))?.[1]),
      answered: generateAnswers.length,
    })),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the held generation never reached the provider in 30 s')), 30_000).unref()),
  ]);
  // The next provider call takes this turn, whichever request it is.
  provider.script({ kind: 'chat', chunks: ['Held ', 'across ', 'the outage.'], holdUntil: held });
  generations.push(generateOnce(nextGenerate++));
  return { dispatched, release };
}

const reservationByKey = z.object({ keyHash: z.string(), id: z.uuid(), state: z.string(), charged: z.coerce.number().nullable(), workflowId: z.string() });

describe('the outage drill: two APIs, two workers, Temporal and then Postgres stopped under load', () => {
  it('loses nothing acknowledged, duplicates no execution, and refuses only with 503 + Retry-After', async () => {
    let n = 0;
    let loading = true;
    const load = async () => {
      const work: Promise<void>[] = [];
      while (loading) {
        const i = n++;
        work.push(i % 3 === 0 ? proposeAndApprove(i) : ingestEvent(i), writeNotes(i), uploadAudios(i));
        await new Promise((r) => setTimeout(r, 250));
      }
      await Promise.all(work);
    };
    const generating = async () => {
      while (loading) {
        generations.push(generateOnce(nextGenerate++));
        await new Promise((r) => setTimeout(r, 600));
      }
      await Promise.all(generations);
    };
    // A reviewer's console open on each API: its live stream must come through both outages.
    const consoles = await Promise.all(apis.map(async (api) => {
      const signedIn = await fetch(`${api}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: reviewerToken }).toString(),
      });
      expect(signedIn.status).toBe(303);
      const stream = await openConsoleStream(api, signedIn.headers.getSetCookie()[0]!.split(';')[0]!);
      await stream.next('ready');
      return { api, stream, resyncedAt: 0 };
    }));
    const running = Promise.all([load(), generating(), readAlong(() => loading)]);

    await new Promise((r) => setTimeout(r, 3_000));
    const acrossTemporal = generationAcrossOutage();
    const heldAcrossTemporal = await acrossTemporal.dispatched;
    phase = 'temporal-down';
    await stack.stopTemporal();
    acrossTemporal.release();
    await new Promise((r) => setTimeout(r, TEMPORAL_OUTAGE_MS));
    await stack.startTemporal();
    phase = 'healthy-again';
    await new Promise((r) => setTimeout(r, 3_000));
    const acrossPostgres = generationAcrossOutage();
    const heldAcrossPostgres = await acrossPostgres.dispatched;
    phase = 'postgres-down';
    await stack.pg.stop('reset');
    acrossPostgres.release();
    await new Promise((r) => setTimeout(r, POSTGRES_OUTAGE_MS));
    await stack.pg.start();
    phase = 'recovered';
    // Each stream was told its server heard nothing during the cut (its page polls), then that it hears again.
    for (const c of consoles) {
      await c.stream.next('paused', 10_000);
      await c.stream.next('resync', 30_000);
      c.resyncedAt = Date.now();
    }
    await new Promise((r) => setTimeout(r, 2_000));
    loading = false;
    await running;

    // Drain budgets are generous: on a loaded 2-core machine (other test files beside it) the backlog
    // after the outages took well over a minute once; the drill measures loss, not speed.
    // Every acknowledged event is delivered to the subscribed endpoint (at least once, by webhook-id).
    const drained = Date.now();
    const expected = eventIds.map((id) => deliveryMessageId(id, endpointId));
    await waitFor('every delivery', async () => expected.every((id) => receivedIds.includes(id)), 150_000);
    // Every proposal is executed, once, with one receipt.
    const executed = z.object({ id: z.uuid(), state: z.string(), applies: z.coerce.number(), receipts: z.coerce.number() });
    const readProposals = () =>
      db.pool.any(sql.type(executed)`
        SELECT p.id, p.state,
               (SELECT count(*) FROM forge_executions f WHERE f.proposal_id = p.id AND f.kind = 'apply') AS applies,
               (SELECT count(*) FROM forge_executions f WHERE f.proposal_id = p.id AND f.kind = 'apply' AND f.receipt IS NOT NULL) AS receipts
          FROM action_proposals p WHERE p.id = ANY(${sql.array(proposalIds, 'uuid')})`);
    await waitFor('every proposal executed', async () => (await readProposals()).every((p) => p.state === 'executed'), 150_000).catch(async (error: Error) => {
      // Which proposals did not get there, and what the workers said about them.
      const stuck = (await readProposals()).filter((p) => p.state !== 'executed');
      const said = processes.flatMap(({ name, output }) => output.filter((line) => stuck.some((p) => line.includes(p.id))).slice(-20).map((line) => `${name}: ${line.slice(0, 600)}`));
      // Where each review workflow stands: its status and the last of its history.
      const connection = await Connection.connect({ address: stack.temporalAddress });
      const reviews = await Promise.all(stuck.map(async (p) => {
        const handle = new Client({ connection }).workflow.getHandle(reviewWorkflowId(p.id));
        const described = await handle.describe().catch((e: Error) => e);
        if (described instanceof Error) return `${p.id}: ${described.message}`;
        const events = ((await handle.fetchHistory()).events ?? []).map((e) => String(e.eventType)).slice(-12);
        return `${p.id}: ${described.status.name}; pending activities ${JSON.stringify(described.raw.pendingActivities?.map((a) => [a.activityType?.name, a.attempt, a.lastFailure?.message]))}; last events ${events.join(' ')}`;
      }));
      await connection.close();
      throw new Error(`${error.message}: ${JSON.stringify(stuck)}\n${reviews.join('\n')}\n${said.join('\n')}`);
    });
    for (const p of await readProposals()) expect(p, p.id).toMatchObject({ state: 'executed', applies: 1, receipts: 1 });
    expect((await readProposals()).length).toBe(proposalIds.length);
    // No open console is left stale: every proposal's last change was announced on each stream, or
    // came before the stream's resync (after which the page refreshed).
    const lastChanges = await db.pool.any(sql.type(z.object({ id: z.uuid(), at: z.string() }))`
      SELECT id, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM action_proposals WHERE id = ANY(${sql.array(proposalIds, 'uuid')})`);
    for (const c of consoles) {
      const announced = new Set(c.stream.events.filter((e) => e.event === 'proposal').map((e) => (e.data as { id: string }).id));
      for (const p of lastChanges) expect(announced.has(p.id) || Date.parse(p.at) <= c.resyncedAt, `${c.api}: ${p.id} changed at ${p.at}`).toBe(true);
      expect(announced.size, c.api).toBeGreaterThan(0);
      c.stream.close();
    }
    // Every acknowledged single-note write is there, written once (one event), whatever transaction it shared.
    const writes = await db.pool.any(sql.type(z.object({ path: z.string(), events: z.coerce.number(), content: z.string().nullable() }))`
      SELECT e.path, count(*) AS events, (SELECT n.content FROM notes n WHERE n.vault_id = e.vault_id AND n.path = e.path) AS content
        FROM note_events e WHERE e.path LIKE 'Group/%' GROUP BY e.vault_id, e.path`);
    expect(writes.map((w) => w.path).sort()).toEqual([...writtenPaths].sort());
    for (const w of writes) expect(w, w.path).toMatchObject({ events: 1, content: `# ${w.path.slice('Group/'.length, -'.md'.length)}\n` });
    expect(writtenPaths.length).toBeGreaterThan(40);
    // Every acknowledged upload is stored once, under the mediaId every answer of its key gave, and
    // the organization's storage counts exactly the stored uploads, whichever statement claimed them.
    expect(uploadConflicts).toEqual([]);
    expect(uploaded.size).toBeGreaterThan(40);
    expect(uploadAnswers.filter((a) => a.phase === 'postgres-down' && a.status === 503).length).toBeGreaterThan(0);
    const media = await db.pool.any(sql.type(z.object({ id: z.uuid(), reference: z.string(), state: z.string() }))`
      SELECT id, reference, state FROM media_objects WHERE organization_id = ${runtime.organizationId}`);
    expect(media.filter((m) => m.state !== 'stored')).toEqual([]);
    // Some were claimed together (one statement's records share its timestamp).
    expect(await db.pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT count(DISTINCT created_at) AS n FROM media_objects WHERE organization_id = ${runtime.organizationId}`)).toBeLessThan(uploaded.size);
    expect(media.map((m) => m.id).sort()).toEqual([...uploaded.values()].sort());
    expect(await db.pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT used_bytes AS n FROM organization_media_storage WHERE organization_id = ${runtime.organizationId}`)).toBe(uploaded.size * audio.length);
    // Nothing is left for the relay.
    await waitFor('no pending start', async () => (await db.pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM workflow_start_intents WHERE started_at IS NULL`)) === 0, 30_000);
    // The APIs' substring indexers came through the Postgres outage: every note written is indexed at its revision (decision 106).
    await waitFor('every note in the substring index', async () =>
      (await db.pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
        SELECT (SELECT count(*) FROM note_substring_pending) + (SELECT count(*) FROM notes n
          WHERE NOT EXISTS (SELECT 1 FROM note_substring_docs d WHERE d.vault_id = n.vault_id AND d.path = n.path AND d.revision = n.revision)) AS n`)) === 0, 30_000);

    // The agent read in every phase and was answered: with the note in every phase but the Postgres
    // cut; a read begun in the cut was answered 503 or, having waited for a connection until Postgres
    // was back, with the note (every refusal is held to 503 + Retry-After above). And now a revocation
    // ends the admission each API keeps for its token, at once.
    for (const via of ['rest', 'runtime'] as const) {
      for (const p of ['healthy', 'temporal-down', 'healthy-again', 'postgres-down', 'recovered']) {
        const inPhase = readAnswers.filter((a) => a.via === via && a.phase === p);
        expect(inPhase.length, `${via} ${p}`).toBeGreaterThan(0);
        if (p === 'postgres-down') expect(inPhase.filter((a) => a.status !== 200 && a.status !== 503), `${via} ${p}`).toEqual([]);
        else expect(inPhase.filter((a) => a.status === 200).length, `${via} ${p}`).toBeGreaterThan(0);
      }
    }
    await revokeAccessToken(db.pool, readerTokenId);
    await revokeServiceCredential(db.pool, runtimeReader.credentialId);
    for (const api of apis) {
      const refused = await fetch(`${api}${readPath()}`, { headers: { authorization: `Bearer ${readerToken}` } });
      expect(refused.status, api).toBe(401);
      expect(((await refused.json()) as { code: string }).code, api).toBe('invalid_token');
      const runtimeRefused = await fetch(`${api}${runtimeReadPath()}`, { headers: { authorization: `Bearer ${runtimeReader.secret}` } });
      expect(runtimeRefused.status, api).toBe(401);
      expect(((await runtimeRefused.json()) as { code: string }).code, api).toBe('credential_invalid');
    }

    // The drill did what it says: work was acknowledged in every phase, and the outages were met.
    expect(eventIds.length).toBeGreaterThan(20);
    expect(proposalIds.length).toBeGreaterThan(8);
    const refusals = answers.filter((a) => a.status >= 300 || a.status === 0);
    expect(answers.filter((a) => a.phase === 'postgres-down' && a.status === 503).length).toBeGreaterThan(0);
    // Every refusal was an honest, retryable one: a 503 or an in-flight 409 with Retry-After, or an
    // approval found already decided by its own earlier try. Never a 500, never a dropped connection.
    for (const a of refusals) {
      if (a.status === 409 && a.code === 'proposal_not_pending') continue;
      expect(a, JSON.stringify(a)).toMatchObject({ status: expect.toSatisfy((s: number) => s === 503 || s === 409) });
      expect(a.retryAfter, JSON.stringify(a)).not.toBeNull();
    }

    // Metered generations: every logical request was answered 200 with a settled generation, under
    // exactly one reservation of its key, settled; the model was called once per logical request.
    const metered = Date.now();
    // The figures, before the checks (a failing run shows them too).
    const answered = new Map<string, number>();
    for (const a of generateAnswers) {
      const what = `${a.status}${a.code ? ` ${a.code}` : a.replayed ? ' replayed' : ''}`;
      answered.set(what, (answered.get(what) ?? 0) + 1);
    }
    // What the generate traffic met, said by any failure below.
    const summary = (
      `drill generations: ${generateKeys.length} logical, ${generateAnswers.length} answers (${[...answered].map(([what, count]) => `${what}: ${count}`).join(', ')}), ` +
        `${provider.calls.length} provider calls, ledger ${JSON.stringify(await orgLedger(db.pool, runtime.organizationId))}; ` +
        `from the end of the load to the other checks done ${metered - drained} ms.\n` +
        `Held across the Temporal stop, #${heldAcrossTemporal.n}: ${answersOf(heldAcrossTemporal.n)}.\nHeld across the Postgres cut, #${heldAcrossPostgres.n}: ${answersOf(heldAcrossPostgres.n)}.`
    );
    expect(generateFailures, summary).toEqual([]);
    expect(generateKeys.length).toBeGreaterThan(20);
    const ok = generateAnswers.filter((a) => a.status === 200);
    for (const key of generateKeys) {
      const mine = ok.filter((a) => a.key === key);
      expect(mine.length, key).toBeGreaterThan(0);
      for (const a of mine) expect(a, JSON.stringify(a)).toMatchObject({ outcome: 'settled', generationId: mine[0]!.generationId });
      // The first 200 may be a replay (an earlier try settled but its answer was a refusal); every later one is.
      expect(mine.slice(1).every((a) => a.replayed === true), key).toBe(true);
    }
    // The two held at the provider were in flight when their outage began: the held attempt's answer
    // came during it or after, and they settled (every key did, above).
    for (const [{ n, answered }, outage, after] of [
      [heldAcrossTemporal, 'temporal-down', ['temporal-down', 'healthy-again', 'postgres-down', 'recovered']],
      [heldAcrossPostgres, 'postgres-down', ['postgres-down', 'recovered']],
    ] as const) {
      const held = generateAnswers.slice(answered).find((a) => a.key.startsWith(`drill-generate-${n}-`));
      expect(held?.phase, `#${n} held across ${outage}: ${answersOf(n)}`).toBeOneOf([...after]);
    }
    const rows = await db.pool.any(sql.type(reservationByKey)`
      SELECT idempotency_key_hash AS "keyHash", id, state, charged_microdollars AS charged, workflow_id AS "workflowId"
        FROM intelligence_reservations WHERE organization_id = ${runtime.organizationId}`);
    expect(rows.length).toBe(generateKeys.length);
    for (const key of generateKeys) {
      const mine = rows.filter((r) => r.keyHash === hashSecret(key));
      expect(mine, key).toHaveLength(1);
      expect(mine[0], key).toMatchObject({ state: 'settled', id: ok.find((a) => a.key === key)!.generationId });
    }
    // Replays made no second model call.
    expect(provider.calls.length).toBe(generateKeys.length);
    // The organization's committed spend is exactly its settled receipts, nothing is held.
    const receipts = new Map(ok.map((a) => [a.generationId!, a.cost!]));
    expect(receipts.size).toBe(generateKeys.length);
    const receiptTotal = [...receipts.values()].reduce((sum, cost) => sum + cost, 0);
    expect(receiptTotal).toBeGreaterThan(0);
    expect(rows.reduce((sum, r) => sum + (r.charged ?? 0), 0)).toBe(receiptTotal);
    expect(await orgLedger(db.pool, runtime.organizationId)).toEqual({ committed: receiptTotal, inFlight: 0 });
    // No metering workflow is left running once the drill settles (attempts refused before they
    // reserved end at their 15 s timer at the latest), and every settled one completed as settled.
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      const client = new Client({ connection, namespace: 'default' });
      const listed = async (query: string) => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query: `WorkflowType = 'intelligenceUsage'${query}` })) ids.push(wf.workflowId);
        return ids;
      };
      await waitFor('no metering workflow running', async () => (await listed(` AND ExecutionStatus = 'Running'`)).length === 0, 60_000);
      // The listing sees them (one per attempt that got as far as Temporal, so at least one per key).
      expect((await listed('')).length).toBeGreaterThanOrEqual(generateKeys.length);
      for (const r of rows) expect(await client.workflow.getHandle(r.workflowId).result(), r.workflowId).toBe('settled');
    } finally {
      await connection.close();
    }
    // The outages were met by this traffic too, and every refusal was retryable with Retry-After: a
    // 503, or an in-flight 409 for a retry that arrived while its first attempt was still settling;
    // never a 500 or a failed request.
    expect(generateAnswers.filter((a) => a.phase === 'temporal-down' && a.code === 'workflow_service_unavailable').length).toBeGreaterThan(0);
    expect(generateAnswers.filter((a) => a.phase === 'postgres-down' && a.status === 503).length).toBeGreaterThan(0);
    for (const a of generateAnswers.filter((a) => a.status !== 200)) {
      expect(a.status === 503 || (a.status === 409 && ['idempotency_in_flight', 'intelligence_reservation_expired'].includes(a.code ?? '')), JSON.stringify(a)).toBe(true);
      expect(a.retryAfter, JSON.stringify(a)).not.toBeNull();
    }

    // The processes logged JSON only.
    for (const p of processes) for (const line of p.output) expect(() => JSON.parse(line), `${p.name}: ${line}`).not.toThrow();
  }, 420_000);
});
