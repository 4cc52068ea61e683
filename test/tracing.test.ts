// OpenTelemetry traces end to end (docs/observability.md): one console approval is one trace that
// runs HTTP → Temporal client → workflow → activity → SQL with correct parent links, joined to the
// caller's W3C traceparent; the trace id is in problem+json and in the request's log lines; and no
// span carries a token, a session secret or note content. Real Postgres, the run's Temporal dev
// server, a real platform worker with the Temporal OpenTelemetry plugin, the SDK's in-memory exporter.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { observeQueries } from '../db/observability.ts';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { startTracing, tracesExporterFrom } from '../platform/tracing.ts';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Tracing } from '../platform/tracing.ts';
import { createPlatformWorker } from '../workers/worker.ts';
import { buildTestApp } from './support/app.ts';
import { consolePost, consoleSignIn, proposeViaApi, waitForProposalState } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';
import { generateBody, setBudget } from './support/intelligence.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeClient } from './support/product-runtime.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const exporter = new InMemorySpanExporter();
const taskQueue = `tracing-${process.pid}-${Date.now()}`;
const logLines: Record<string, unknown>[] = [];
let tracing: Tracing;
let db: TestDatabase;
let pool: DatabasePool;
let temporal: Connection;
let workerConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let app: FastifyInstance;
let owner: { token: string; api: DevClient };
let reviewerToken: string;
let reviewerSession: ConsoleSession;
let workspaceId: string;
let mappingId: string;
let rt: RuntimeClient;

beforeAll(async () => {
  tracing = startTracing({ serviceName: 'tracing-test', spanProcessor: new SimpleSpanProcessor(exporter) });
  db = await createTestDatabase();
  // The pool as the entry points build it when tracing: a span per statement.
  pool = await createDatabasePool(db.url, { maxPoolSize: 6, interceptors: [observeQueries({ traces: true })] });
  temporal = lazyTemporalConnection(inject('temporalAddress'));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  app = await buildTestApp(pool, { temporal: { connection: temporal, namespace: 'default', taskQueue }, tracing: true, logger: pino({ level: 'info' }, sink), intelligence: provider.intelligence() });
  workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  // No prebuilt bundle: the plugin's workflow interceptors are bundled with the workflows here.
  worker = await createPlatformWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps: { db: pool }, shutdownGraceTime: '1s', tracing });
  running = worker.run();

  const proposer = await accountWithToken(pool, 'team');
  const reviewer = await accountWithToken(pool, 'developer_agent');
  owner = { token: proposer.token, api: devClient(app, proposer.token) };
  reviewerToken = reviewer.token;
  workspaceId = (await createWorkspace(pool, { name: 'Traced', ownerAccountId: proposer.account.id })).id;
  await addMember(pool, { workspaceId, accountId: reviewer.account.id, role: 'reviewer' });
  ({ mappingId } = await createMapping(pool, { vaultId: (await createVault(pool, { name: 'Traced vault', ownerWorkspaceId: workspaceId })).id }));
  reviewerSession = await consoleSignIn(app, reviewer.token);
  const chain = await buildRuntimeChain(pool);
  await setBudget(pool, chain.organizationId, 1_000_000);
  rt = runtimeClient(app, chain.secret);
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await workerConnection?.close();
  await app?.close();
  await temporal?.close();
  await pool?.end();
  await db?.drop();
  await tracing?.shutdown();
});

/** A W3C traceparent for a caller's span: the trace id and the parent span id the service must join. */
function callerContext() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);

async function waitForSpans(traceId: string, done: (spans: ReadableSpan[]) => boolean, what: string): Promise<ReadableSpan[]> {
  const until = Date.now() + 15_000;
  for (;;) {
    const spans = spansOf(traceId);
    if (done(spans)) return spans;
    if (Date.now() > until) throw new Error(`${what}: only ${spans.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The chain of names from a span up to the trace's root (the span the caller's traceparent named). */
function ancestry(span: ReadableSpan, spans: ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const names = [span.name];
  for (let parent = span.parentSpanId; parent && byId.has(parent); parent = byId.get(parent)!.parentSpanId) names.push(byId.get(parent)!.name);
  return names;
}

describe('traces', () => {
  it('follows one console approval in one trace: HTTP → Temporal update → workflow → activity → SQL, joined to the caller\'s traceparent', async () => {
    const content = `# Traced\n\nsecret-ish note body ${randomUUID()}\n`;
    const id = await proposeViaApi(owner.api, { workspaceId, action: { kind: 'note.write', mappingId, path: 'Traced/Approved.md', content } });
    await waitForProposalState(owner.api, id, ['pending_review']);

    const caller = callerContext();
    const res = await consolePost(app, reviewerSession, `/console/proposals/${id}/decision`, { decision: 'approve' }, { traceparent: caller.traceparent });
    expect(res.statusCode).toBe(303);
    await waitForProposalState(owner.api, id, ['executed']);
    // Forge's receipt is written by an activity: its SQL is the end of the chain. Workflow spans
    // reach the processor when their activation completes, so wait until every chain is whole.
    const requestSpan = 'POST /console/proposals/:id/decision';
    const spans = await waitForSpans(
      caller.traceId,
      (found) =>
        found.some((s) => s.name.startsWith('pg ') && ancestry(s, found).includes('RunActivity:executeForge')) &&
        found.every((s) => ancestry(s, found).at(-1) === requestSpan),
      'the approval\'s trace has no SQL span under Forge\'s activity, or a span whose parents do not reach the request',
    );

    // The request's span is the child of the caller's span (W3C traceparent in).
    const http = spans.find((s) => s.name === requestSpan);
    expect(http, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(http!.parentSpanId).toBe(caller.spanId);
    // Every span of the approval, across the API, Temporal and the worker, is in this one trace and
    // reaches the request's span through its parents.
    const chains = spans.filter((s) => s !== http).map((s) => ancestry(s, spans));
    for (const chain of chains) expect(chain, chain.join(' ← ')).toContain(http!.name);
    // Bottom-up, from the SQL of Forge's execution (it writes the receipt) to the request.
    const forgeSql = chains.find((c) => c[0]!.startsWith('pg ') && c[1] === 'RunActivity:executeForge');
    expect(forgeSql, chains.map((c) => c.join(' ← ')).join('\n')).toBeDefined();
    const [, ...above] = forgeSql!;
    expect(above.filter((n) => !n.startsWith('handler - '))).toEqual([
      'RunActivity:executeForge', // the worker's activity
      'StartActivity:executeForge', // the workflow scheduling it, in the decision's context
      'HandleUpdate:decide', // the workflow's update handler
      'UpdateWithStartWorkflow:decide', // the API's Temporal client (a decision is an update-with-start, decision 104)
      requestSpan, // the HTTP request
    ]);
    const receipt = spans.filter((s) => s.parentSpanId === spans.find((p) => p.name === 'RunActivity:executeForge')!.spanContext().spanId);
    expect(receipt.some((s) => String(s.attributes['db.statement']).includes('forge_executions'))).toBe(true);
    // SQL spans carry the statement's template, never a value.
    const statements = spans.filter((s) => s.name.startsWith('pg ')).map((s) => String(s.attributes['db.statement']));
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.some((text) => /\$1/.test(text))).toBe(true);

    // Nothing secret or private in any attribute of any span of the run.
    const everything = JSON.stringify(exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    for (const secret of [owner.token, reviewerToken, reviewerSession.secret, reviewerSession.csrf, 'secret-ish note body']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('follows a metered generate request to its settlement in one trace, with no prompt or output text in any span', async () => {
    const task = `A warm-up on equivalent fractions for pupil ${randomUUID()}`;
    provider.fallback = { kind: 'chat', chunks: ['Fold a strip ', 'in half, privately.'], usage: { prompt_tokens: 60, completion_tokens: 8 } };
    const caller = callerContext();
    const res = await rt.request('POST', '/intelligence/education/generate', { body: generateBody(task), headers: { 'idempotency-key': randomUUID(), traceparent: caller.traceparent } });
    expect(res.statusCode, res.body).toBe(200);
    const requestSpan = 'POST /api/product/v1/intelligence/education/generate';
    // The settlement (decision 91): the request's own compare-and-set on the reservation, then the
    // `recorded` signal, which the workflow handles and ends on.
    const settles = (s: ReadableSpan) => s.name.startsWith('pg ') && /finished_at = now\(\)/.test(String(s.attributes['db.statement']));
    const spans = await waitForSpans(
      caller.traceId,
      (found) =>
        found.some((s) => s.name === 'RunWorkflow:intelligenceUsage') &&
        found.some((s) => s.name === 'HandleSignal:recorded') &&
        found.some(settles) &&
        found.every((s) => ancestry(s, found).at(-1) === requestSpan),
      'the generate request\'s trace has no settlement SQL or signal, or a span whose parents do not reach the request',
    );
    const named = (chain: string[]) => chain.filter((n) => !n.startsWith('handler - '));
    // The metering workflow, started by the request…
    expect(named(ancestry(spans.find((s) => s.name === 'RunWorkflow:intelligenceUsage')!, spans))).toEqual(['RunWorkflow:intelligenceUsage', 'StartWorkflow:intelligenceUsage', requestSpan]);
    // …the settlement, in the request itself…
    expect(named(ancestry(spans.find(settles)!, spans)).slice(1)).toEqual([requestSpan]);
    // …and the signal that tells the workflow, handled in the request's trace.
    expect(named(ancestry(spans.find((s) => s.name === 'HandleSignal:recorded')!, spans))).toEqual(['HandleSignal:recorded', 'SignalWorkflow:recorded', requestSpan]);
    // The workflow records nothing itself: no ledger activity ran for this request.
    expect(spans.some((s) => s.name === 'RunActivity:completeIntelligenceReservation')).toBe(false);
    const everything = JSON.stringify(exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    for (const text of [task, 'Fold a strip', 'privately']) expect(everything).not.toContain(text);
  });

  it('puts the trace id beside requestId in problem+json and in every log line of the request', async () => {
    const caller = callerContext();
    const res = await app.inject({ method: 'GET', url: '/api/dev/notes?mappingId=nope&token=should-not-be-kept', headers: { traceparent: caller.traceparent } });
    expect(res.statusCode).toBe(401);
    const body = res.json<{ requestId: string; traceId: string }>();
    expect(body.traceId).toBe(caller.traceId);
    const lines = logLines.filter((l) => l['requestId'] === body.requestId);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line['traceId'], JSON.stringify(line)).toBe(caller.traceId);
    expect(lines.map((l) => l['msg'])).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    // The span's path has no query string (a callback's code and state stay out of the collector).
    const [span] = await waitForSpans(caller.traceId, (found) => found.some((s) => s.name.startsWith('GET ')), 'no request span');
    expect(span!.attributes['url.path']).toBe('/api/dev/notes');
    expect(span!.attributes['http.route']).toBe('/api/dev/notes');
  });

  it('makes no SQL span outside a trace (the relay\'s and the sweeps\' polls stay out of the collector)', async () => {
    const before = exporter.getFinishedSpans().length;
    await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT 42 AS n`);
    expect(exporter.getFinishedSpans().slice(before).filter((s) => String(s.attributes['db.statement']).includes('42'))).toEqual([]);
  });
});

describe('tracing configuration', () => {
  it('is off unless the OTEL_* variables ask, and refuses an exporter it does not have', () => {
    expect(tracesExporterFrom({})).toBeNull();
    expect(tracesExporterFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe('otlp');
    expect(tracesExporterFrom({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe('otlp');
    expect(tracesExporterFrom({ OTEL_TRACES_EXPORTER: 'console' })).toBe('console');
    expect(tracesExporterFrom({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBeNull();
    expect(tracesExporterFrom({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
    expect(() => tracesExporterFrom({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/zipkin/);
  });
});
