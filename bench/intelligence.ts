// `npm run bench -- --suite intelligence`: metered generation end to end, with a real Temporal dev
// server, a worker process, the API process and a scripted OpenAI-compatible provider in a process
// of its own (bench/scripted-provider.ts). Baselines are measured in the same run:
// 1. time to the first delta through POST /api/product/v1/intelligence/education/generate (NDJSON)
//    against the same SSE chat request sent straight to the provider, interleaved sample by sample;
//    target: the platform adds ≤ 30 ms at p50;
// 2. client disconnect → upstream abort: the bench aborts its fetch after the first delta of a slow
//    generation and the provider reports when it saw that request's socket close (both clocks are
//    performance.timeOrigin + performance.now() on this machine); target ≤ 250 ms;
// 3. throughput under contention, 200 concurrent callers of one organization: whole JSON generate
//    requests (baselines: the provider alone, and the request's Temporal part alone: start the
//    usage workflow and complete it with an update), and ledger.reserve alone against one
//    organization's rows (baseline: a one-row counter increment per transaction, a hot row's floor),
//    two rounds, each baseline just before its reserve. BENCH_INTELLIGENCE=reserve runs this part alone.
// The two steps before the provider call that cost most, the workflow start and the reserve, are
// also timed one at a time, to show where the first delta's overhead goes.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { generateInputSchema } from '@hosted-notes/runtime-sdk';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { reserve } from '../domain/intelligence/ledger.ts';
import { chatCostBound, inputTokenBound } from '../domain/intelligence/pricing.ts';
import { generateMessages } from '../domain/intelligence/prompts.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  issueServiceCredential,
  setProductRuntimeSettings,
} from '../domain/product-runtime/entities.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { completeUpdate, intelligenceUsage } from '../workflows/intelligence-usage.ts';

const TEXT_MODEL = 'bench-model';
const PROVIDER_KEY = 'sk-bench-scripted';
const MAX_OUTPUT_TOKENS = 1_000;
const LATENCY_SAMPLES = 200;
const ABORT_SAMPLES = 100;
const CALLERS = 200;

const generateBody = {
  intent: { context: 'plan', task: 'Write a five-minute warm-up on equivalent fractions.' },
  standards: [{ id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b).' }],
  course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
  sources: [{ id: 'src-1', title: 'Fraction strips lesson', excerpt: 'Students fold paper strips into halves, quarters and eighths.' }],
};
export const generateJson = JSON.stringify(generateBody);
// What the platform sends the provider for that body (domain/intelligence/provider.ts), sent straight to it.
const messages = generateMessages(generateInputSchema.parse(generateBody));
const directJson = JSON.stringify({ model: TEXT_MODEL, messages, max_completion_tokens: MAX_OUTPUT_TOKENS, stream: true, stream_options: { include_usage: true } });

export type Stats = { name: string; count: number; p50: number; p90: number; p99: number; mean: number };

function stats(name: string, samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  return { name, count: sorted.length, p50: at(50), p90: at(90), p99: at(99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/** Epoch milliseconds at sub-millisecond resolution: the clock bench/scripted-provider.ts stamps aborts with. */
const epochNow = () => performance.timeOrigin + performance.now();

/** `headers` is called per request (the platform's carry a fresh Idempotency-Key each time). */
type Endpoint = { url: string; headers: () => Record<string, string>; body: string };
type StreamTiming = { firstDeltaMs: number; abortedAt: number | null };

const ndjsonDelta = (record: string) => (JSON.parse(record) as { type: string }).type === 'delta';
const sseDelta = (record: string) => {
  const data = record.replace(/^data: /, '');
  if (data === '[DONE]') return false;
  const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
  return Boolean(chunk.choices?.[0]?.delta?.content);
};

/**
 * One streamed request, timed to its first delta; read to the end (checked with `complete`), or
 * aborted right after the first delta when `abort` is set.
 */
async function timeStream(endpoint: Endpoint, format: 'ndjson' | 'sse', options: { abort?: boolean } = {}): Promise<StreamTiming> {
  const controller = new AbortController();
  const started = performance.now();
  const res = await fetch(endpoint.url, { method: 'POST', headers: endpoint.headers(), body: endpoint.body, signal: controller.signal });
  if (!res.ok || !res.body) throw new Error(`${endpoint.url}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  const separator = format === 'ndjson' ? '\n' : '\n\n';
  const isDelta = format === 'ndjson' ? ndjsonDelta : sseDelta;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let firstDeltaMs: number | null = null;
  let last = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf(separator)) >= 0) {
      const record = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + separator.length);
      if (record === '') continue;
      last = record;
      if (firstDeltaMs === null && isDelta(record)) {
        firstDeltaMs = performance.now() - started;
        if (options.abort) {
          const abortedAt = epochNow();
          controller.abort();
          await reader.closed.catch(() => undefined);
          return { firstDeltaMs, abortedAt };
        }
      }
    }
  }
  if (firstDeltaMs === null) throw new Error(`${endpoint.url}: no delta`);
  // A platform stream must end with a completed generation, the provider's with [DONE].
  const completed = format === 'ndjson' ? (JSON.parse(last) as { type: string; generation?: unknown }).generation != null : last === 'data: [DONE]';
  if (!completed) throw new Error(`${endpoint.url}: the stream did not complete (${last.slice(0, 200)})`);
  return { firstDeltaMs, abortedAt: null };
}

export type LoadResult = { stats: Stats; perSecond: number; errors: Map<string, number> };

/**
 * Closed loop: `callers` concurrent callers for `seconds`, every completed call timed, failures
 * counted by message. The rate counts the calls completed within the window only: when a call takes
 * seconds, the drain after it (fewer and fewer callers left) would otherwise understate the rate.
 */
export async function closedLoop(name: string, callers: number, seconds: number, call: () => Promise<void>): Promise<LoadResult> {
  const latencies: number[] = [];
  let completedInWindow = 0;
  const errors = new Map<string, number>();
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await call();
          const t1 = performance.now();
          latencies.push(t1 - t0);
          if (t1 <= until) completedInWindow++;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          errors.set(message, (errors.get(message) ?? 0) + 1);
        }
      }
    }),
  );
  return { stats: stats(name, latencies), perSecond: completedInWindow / seconds, errors };
}

export async function startProvider(): Promise<{ child: ChildProcess; providerUrl: string; controlUrl: string }> {
  const script = fileURLToPath(new URL('./scripted-provider.ts', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [providerUrl, controlUrl] = await new Promise<[string, string]>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+) (\S+)/.exec(out);
      if (match) resolve([match[1]!, match[2]!]);
    });
    child.once('exit', (code) => reject(new Error(`scripted provider exited with ${code}`)));
  });
  return { child, providerUrl, controlUrl };
}

async function getJson<T>(url: string, schema: z.ZodType<T>, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return schema.parse(await res.json());
}

/** The provider's clock minus ours, from the round trip with the smallest delay (±half of it). */
async function clockOffset(controlUrl: string): Promise<{ offsetMs: number; roundTripMs: number }> {
  let best = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 50; i++) {
    const sent = epochNow();
    const { now } = await getJson(`${controlUrl}/clock`, z.object({ now: z.number() }));
    const received = epochNow();
    if (received - sent < best.roundTripMs) best = { offsetMs: now - (sent + received) / 2, roundTripMs: received - sent };
  }
  return best;
}

/** An organization with a budget far above what the run spends, one installation and a credential that may generate. */
export async function meteredCaller(db: DatabasePool, accountId: string, label: string) {
  const workspace = await createWorkspace(db, { name: `Bench ${label}`, ownerAccountId: accountId });
  const org = await createOrganization(db, { name: `Bench ${label}` });
  await assignWorkspace(db, { organizationId: org.id, workspaceId: workspace.id });
  // Concurrency far above the callers: the bench measures the ledger's rows, not the refusal.
  await setProductRuntimeSettings(db, org.id, { apiOperationsPerMonth: 1_000_000_000, intelligenceBudgetMicrodollarsMonthly: 1_000_000_000_000_000, maxConcurrentIntelligence: 1_000_000_000 });
  const product = await createProductDefinition(db, { slug: `bench-${label}-${randomUUID().slice(0, 8)}`, name: `Bench ${label}` });
  const installation = await createInstallation(db, { organizationId: org.id, productDefinitionId: product.id, workspaceId: workspace.id });
  const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'bench' });
  const { secret } = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes: ['intelligence.execute'] });
  return { organizationId: org.id, installationId: installation.id, secret };
}

const ledgerSchema = z.object({ state: z.string(), count: z.number() });

/** The API's and the worker's environment for metered generation against the scripted provider. */
export function generateEnv(base: NodeJS.ProcessEnv, target: { temporalAddress: string; taskQueue: string; providerUrl: string }): NodeJS.ProcessEnv {
  return {
    ...base,
    TEMPORAL_ADDRESS: target.temporalAddress,
    TEMPORAL_TASK_QUEUE: target.taskQueue,
    LOG_LEVEL: 'warn',
    INTELLIGENCE_PROVIDER_BASE_URL: target.providerUrl,
    INTELLIGENCE_PROVIDER_API_KEY: PROVIDER_KEY,
    INTELLIGENCE_TEXT_MODEL: TEXT_MODEL,
    INTELLIGENCE_TEXT_INPUT_MICRODOLLARS_PER_MTOK: '1000000',
    INTELLIGENCE_TEXT_OUTPUT_MICRODOLLARS_PER_MTOK: '4000000',
    INTELLIGENCE_TEXT_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT_TOKENS),
  };
}

export type IntelligenceSuiteInput = {
  databaseUrl: string;
  /** The API's environment without Temporal and the provider (allowances raised). */
  env: NodeJS.ProcessEnv;
  /** Seconds per throughput scenario. */
  duration: number;
  startServer: (kind: 'app', env: NodeJS.ProcessEnv) => Promise<{ url: string; child: ChildProcess }>;
  stopServer: (child: ChildProcess) => Promise<void>;
  printTable: (header: string[], rows: string[][]) => void;
};

/** reserve() for a fresh key each call, on an organization of its own whose limits are far above the load (the bench measures the ledger's rows, not refusals). */
async function reserveCaller(db: DatabasePool, accountId: string): Promise<() => Promise<void>> {
  const reserver = await meteredCaller(db, accountId, 'reserve');
  const cost = chatCostBound({ name: TEXT_MODEL, inputMicrodollarsPerMillionTokens: 1_000_000, outputMicrodollarsPerMillionTokens: 4_000_000, maxOutputTokens: MAX_OUTPUT_TOKENS }, inputTokenBound(messages), MAX_OUTPUT_TOKENS);
  const fingerprint = createHash('sha256').update(generateJson).digest('hex');
  return async () => {
    const outcome = await reserve(db, {
      id: randomUUID(),
      organizationId: reserver.organizationId,
      installationId: reserver.installationId,
      operation: 'generate',
      keyHash: createHash('sha256').update(randomUUID()).digest('hex'),
      fingerprint,
      costMicrodollars: cost,
      // No workflow behind it: the reserve itself only records the id (these rows stay reserved in the throwaway database).
      workflowId: `bench-reserve-${randomUUID()}`,
      ttlMs: 60_000,
      reserveBy: Date.now() + 30_000,
    });
    if (outcome.kind !== 'reserved') throw new Error(outcome.kind);
  };
}

type ReserveRound = { counter: LoadResult; reserve: LoadResult };

/**
 * reserve() alone, 200 concurrent promises against one organization's spend, slot and sublimit rows,
 * and its baseline, a one-row counter increment per transaction (a hot row's floor through the same
 * pool): two rounds, each baseline measured just before its reserve, so each ratio is of one moment
 * of this shared machine.
 */
async function reserveAgainstCounter(db: DatabasePool, reserveCall: () => Promise<void>, duration: number): Promise<ReserveRound[]> {
  await db.query(sql.type(emptyRow)`CREATE TABLE IF NOT EXISTS bench_hot_counter (id integer PRIMARY KEY, n bigint NOT NULL)`);
  const counterCall = async () => {
    await db.transaction(async (tx) => {
      await tx.query(sql.type(emptyRow)`INSERT INTO bench_hot_counter AS c (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = c.n + 1`);
    });
  };
  await closedLoop('warm-up', CALLERS, 1, counterCall);
  await closedLoop('warm-up', CALLERS, 1, reserveCall);
  const rounds: ReserveRound[] = [];
  for (const round of [1, 2]) {
    const counter = await closedLoop(`one-row counter increment per transaction (baseline), round ${round}`, CALLERS, duration, counterCall);
    const reserved = await closedLoop(`ledger reserve() alone, one organization, round ${round}`, CALLERS, duration, reserveCall);
    rounds.push({ counter, reserve: reserved });
  }
  return rounds;
}

const reserveSummary = (rounds: ReserveRound[]) =>
  `reserve alone: ${rounds.map((r) => `${r.reserve.perSecond.toFixed(0)}/s (${(r.reserve.perSecond / r.counter.perSecond).toFixed(2)}x one hot-row increment per transaction)`).join(', ')} ` +
  `(target >= 0.6x: ${rounds.every((r) => r.reserve.perSecond / r.counter.perSecond >= 0.6) ? 'met' : 'not met'})`;

/** BENCH_INTELLIGENCE=reserve: 3b alone, on the suite's database. */
async function reserveOnly(input: IntelligenceSuiteInput): Promise<void> {
  const db = await createDatabasePool(input.databaseUrl, { maxPoolSize: 20 });
  try {
    const account = await createAccount(db, { email: `bench-reserve-${randomUUID()}@example.test`, displayName: 'Bench', plan: 'team' });
    const rounds = await reserveAgainstCounter(db, await reserveCaller(db, account.id), input.duration);
    const ms = (v: number) => v.toFixed(1);
    input.printTable(
      [`throughput, ${CALLERS} concurrent callers, ${input.duration} s`, 'completed', 'per s in window', 'p50 ms', 'p90 ms', 'p99 ms', 'errors'],
      rounds.flatMap((r) => [r.counter, r.reserve]).map((l) => [l.stats.name, String(l.stats.count), l.perSecond.toFixed(0), ms(l.stats.p50), ms(l.stats.p90), ms(l.stats.p99), String([...l.errors.values()].reduce((a, b) => a + b, 0))]),
    );
    console.log(reserveSummary(rounds));
  } finally {
    await db.end();
  }
}

export async function runIntelligenceSuite(input: IntelligenceSuiteInput): Promise<void> {
  const { duration, printTable } = input;
  // BENCH_INTELLIGENCE=reserve: only 3b, without the provider, Temporal, the worker or the API (seconds instead of minutes).
  if (process.env['BENCH_INTELLIGENCE'] === 'reserve') return reserveOnly(input);
  const provider = await startProvider();
  const temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true });
  const taskQueue = `bench-intelligence-${process.pid}`;
  const env = generateEnv(input.env, { temporalAddress: temporal.address, taskQueue, providerUrl: provider.providerUrl });
  const worker = spawn(process.execPath, [fileURLToPath(new URL('../workers/main.ts', import.meta.url))], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const server = await input.startServer('app', env);
  // The API's pool size (DATABASE_POOL_SIZE default), so reserve alone competes for as many connections.
  const db = await createDatabasePool(input.databaseUrl, { maxPoolSize: 20 });
  const connection = await Connection.connect({ address: temporal.address });
  const setMode = (mode: 'fast' | 'slow') =>
    getJson(`${provider.controlUrl}/mode`, z.object({ mode: z.string() }), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode }) });
  try {
    const account = await createAccount(db, { email: `bench-intelligence-${randomUUID()}@example.test`, displayName: 'Bench', plan: 'team' });
    const caller = await meteredCaller(db, account.id, 'generate');
    const platform = (accept: string): Endpoint => ({
      url: `${server.url}/api/product/v1/intelligence/education/generate`,
      // A fresh key for every request: each one is reserved, dispatched and settled, never replayed.
      headers: () => ({
        authorization: `Bearer ${caller.secret}`,
        'x-service-runtime-version': '1',
        'idempotency-key': randomUUID(),
        accept,
        'content-type': 'application/json',
      }),
      body: generateJson,
    });
    const streamed = platform('application/x-ndjson');
    const direct: Endpoint = {
      url: `${provider.providerUrl}/chat/completions`,
      headers: () => ({ authorization: `Bearer ${PROVIDER_KEY}`, accept: 'text/event-stream', 'content-type': 'application/json' }),
      body: directJson,
    };

    // 1. Time to the first delta, the provider answering at once; platform and direct interleaved.
    await setMode('fast');
    const viaPlatform: number[] = [];
    const viaDirect: number[] = [];
    for (let i = 0; i < 20 + LATENCY_SAMPLES; i++) {
      const p = await timeStream(streamed, 'ndjson');
      const d = await timeStream(direct, 'sse');
      if (i < 20) continue; // warm-up: JIT, pools, the worker's first tasks
      viaPlatform.push(p.firstDeltaMs);
      viaDirect.push(d.firstDeltaMs);
    }
    console.log(`  measured time to first delta (${LATENCY_SAMPLES} each)`);

    // 2. Disconnect → upstream abort, on a generation that streams a chunk every 100 ms.
    await setMode('slow');
    const clock = await clockOffset(provider.controlUrl);
    const abortLatencies: number[] = [];
    let missing = 0;
    let seen = 0;
    for (let i = 0; i < 5 + ABORT_SAMPLES; i++) {
      const timing = await timeStream(streamed, 'ndjson', { abort: true });
      const { aborts } = await getJson(`${provider.controlUrl}/aborts?count=${seen + 1}`, z.object({ aborts: z.array(z.number()) }));
      if (aborts.length <= seen) {
        missing++;
        continue;
      }
      seen = aborts.length;
      if (i >= 5) abortLatencies.push(aborts[seen - 1]! - timing.abortedAt!);
    }
    console.log(`  measured disconnect → upstream abort (${ABORT_SAMPLES})`);

    // Components of that overhead, one at a time: the usage workflow's start (the API's client
    // options and timings) and the reserve transaction (3b's organization, so 3a's ledger is untouched).
    const temporalClient = new Client({ connection });
    const usageArgs = { reservationTtlMs: 60_000, completionDeadlineMs: 180_000 };
    const startUsage = () => temporalClient.workflow.start(intelligenceUsage, { workflowId: `bench-usage-${randomUUID()}`, taskQueue, args: [usageArgs] });
    const reserveCall = await reserveCaller(db, account.id);
    const starts: number[] = [];
    const reserves: number[] = [];
    for (let i = 0; i < 20 + LATENCY_SAMPLES; i++) {
      const t0 = performance.now();
      const handle = await startUsage();
      const t1 = performance.now();
      await reserveCall();
      const t2 = performance.now();
      // Not timed: end the workflow at once, as a refused request's does.
      await handle.executeUpdate(completeUpdate, { args: [{ kind: 'release', code: 'bench' }] });
      if (i < 20) continue;
      starts.push(t1 - t0);
      reserves.push(t2 - t1);
    }

    // 3a. Whole JSON generate requests, 200 callers of one organization; the provider alone first.
    await setMode('fast');
    const directCall = async () => {
      const res = await fetch(direct.url, { method: 'POST', headers: direct.headers(), body: direct.body });
      const text = await res.text();
      if (!res.ok || !text.endsWith('data: [DONE]\n\n')) throw new Error(`provider HTTP ${res.status}`);
    };
    const json = platform('application/json');
    const platformCall = async () => {
      const res = await fetch(json.url, { method: 'POST', headers: json.headers(), body: json.body });
      const body = (await res.json()) as { code?: string; data?: { content?: string } };
      if (!res.ok || typeof body.data?.content !== 'string') throw new Error(`HTTP ${res.status} ${body.code ?? ''}`.trim());
    };
    await closedLoop('warm-up', CALLERS, 2, directCall);
    const directLoad = await closedLoop(`provider alone, SSE chat request (baseline)`, CALLERS, duration, directCall);
    console.log(`  measured ${directLoad.stats.name}`);
    // The request's Temporal part alone: the workflow started and completed by an update (no reservation behind it).
    const temporalCall = async () => {
      const handle = await startUsage();
      await handle.executeUpdate(completeUpdate, { args: [{ kind: 'release', code: 'bench' }] });
    };
    await closedLoop('warm-up', CALLERS, 2, temporalCall);
    const temporalLoad = await closedLoop('usage workflow alone: start + complete update (baseline)', CALLERS, duration, temporalCall);
    console.log(`  measured ${temporalLoad.stats.name}`);
    await closedLoop('warm-up', CALLERS, 2, platformCall);
    const platformLoad = await closedLoop(`generate, JSON answer, end to end`, CALLERS, duration, platformCall);
    console.log(`  measured ${platformLoad.stats.name}`);

    // 3b. reserve() alone against one hot-row increment per transaction, alternating (reserveAgainstCounter).
    const reserveRounds = await reserveAgainstCounter(db, reserveCall, duration);
    console.log('  measured ledger reserve() alone');

    // What the ledger holds for the generate organization once every report has landed.
    await new Promise((r) => setTimeout(r, 2_000));
    const ledger = await db.any(sql.type(ledgerSchema)`
      SELECT state, count(*)::int AS count FROM intelligence_reservations WHERE organization_id = ${caller.organizationId} GROUP BY state ORDER BY state`);
    const inFlight = await db.maybeOneFirst(sql.type(z.object({ inFlight: z.number() }))`
      SELECT in_flight AS "inFlight" FROM organization_intelligence_slots WHERE organization_id = ${caller.organizationId}`);

    const ttfd = [stats('first delta, provider directly (baseline)', viaDirect), stats('first delta, through the platform', viaPlatform)];
    const abort = stats('client disconnect → provider sees its socket close', abortLatencies);
    const components = [stats('  of which: usage workflow start', starts), stats('  of which: reserve() transaction', reserves)];
    const ms = (v: number) => v.toFixed(1);
    printTable(
      ['intelligence latency (one request at a time)', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms'],
      [...ttfd, ...components, abort].map((s) => [s.name, String(s.count), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.mean)]),
    );
    const overhead = ttfd[1]!.p50 - ttfd[0]!.p50;
    console.log(
      `time to first delta, platform − direct: p50 ${ms(overhead)} ms (target ≤ 30 ms: ${overhead <= 30 ? 'met' : 'not met'}), ` +
        `p90 ${ms(ttfd[1]!.p90 - ttfd[0]!.p90)} ms, p99 ${ms(ttfd[1]!.p99 - ttfd[0]!.p99)} ms`,
    );
    console.log(
      `disconnect → upstream abort: p50 ${ms(abort.p50)} ms, p99 ${ms(abort.p99)} ms (target ≤ 250 ms: ${abort.p99 <= 250 ? 'met at p99' : abort.p50 <= 250 ? 'met at p50, not at p99' : 'not met'}); ` +
        `${missing} abort(s) not seen within 5 s; provider clock − bench clock ${ms(clock.offsetMs)} ms ± ${ms(clock.roundTripMs / 2)} ms`,
    );
    const loads = [directLoad, temporalLoad, platformLoad, ...reserveRounds.flatMap((r) => [r.counter, r.reserve])];
    const errorsOf = (l: LoadResult) => {
      const total = [...l.errors.values()].reduce((a, b) => a + b, 0);
      return total === 0 ? '0' : `${total} (${[...l.errors].map(([m, c]) => `${m}×${c}`).join(', ')})`;
    };
    printTable(
      [`throughput, ${CALLERS} concurrent callers, ${duration} s`, 'completed', 'per s in window', 'p50 ms', 'p90 ms', 'p99 ms', 'errors'],
      loads.map((l) => [l.stats.name, String(l.stats.count), l.perSecond.toFixed(0), ms(l.stats.p50), ms(l.stats.p90), ms(l.stats.p99), errorsOf(l)]),
    );
    console.log(
      `generate end to end: ${platformLoad.perSecond.toFixed(0)}/s (${(platformLoad.perSecond / directLoad.perSecond).toFixed(2)}x the provider alone); ` +
        `${(platformLoad.perSecond / temporalLoad.perSecond).toFixed(2)}x the usage workflow alone; ${reserveSummary(reserveRounds)}`,
    );
    console.log(`ledger of the generate organization after the run: ${ledger.map((r) => `${r.state} ${r.count}`).join(', ')}; in flight ${inFlight ?? 0}`);
  } finally {
    await connection.close();
    await db.end();
    await input.stopServer(server.child);
    await input.stopServer(worker);
    await input.stopServer(provider.child);
    await temporal.stop();
  }
}
