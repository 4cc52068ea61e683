// Processes dying mid-request leave nothing held forever and nothing charged twice:
// - the worker killed while a request is dispatched: the API settles the request itself and answers;
//   the next worker ends the workflow as settled, charging nothing again (one model call);
// - the API process killed mid-stream: the provider sees its request end, and the workflow's
//   timers record the dispatched request as a billable failure at its bound, once.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { createPlatformWorker } from '../workers/worker.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { ScriptedProvider } from './support/scripted-provider.ts';
import { expectedCommitted, generateBody, orgLedger, reservations, setBudget } from './support/intelligence.ts';

const taskQueue = `intelligence-crash-${process.pid}-${Date.now()}`;
const provider = new ScriptedProvider();
let db: TestDatabase;
let app: FastifyInstance;
const children: ChildProcess[] = [];
const workers: { worker: Worker; running: Promise<void>; connection: NativeConnection }[] = [];

beforeAll(async () => {
  await provider.start();
  db = await createTestDatabase();
  app = await buildTestApp(db.pool, {
    temporal: { connection: lazyTemporalConnection(inject('temporalAddress')), namespace: 'default', taskQueue },
    intelligence: provider.intelligence(),
  });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const w of workers) {
    w.worker.shutdown();
    await w.running;
    await w.connection.close();
  }
  await app?.close();
  await db?.drop();
  await provider.close();
});

function waitForLine(proc: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${prefix} within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith(prefix));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    });
  });
}

async function inProcessWorker(): Promise<void> {
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createPlatformWorker({ connection, namespace: 'default', taskQueue, deps: { db: db.pool }, shutdownGraceTime: '1s' });
  workers.push({ worker, running: worker.run(), connection });
}

it('a worker killed while a request is dispatched: the API settles it once, and the next worker ends the workflow as settled', { timeout: 90_000 }, async () => {
  const chain = await buildRuntimeChain(db.pool);
  await setBudget(db.pool, chain.organizationId, 10_000_000);
  const child = spawn(process.execPath, ['test/support/crashable-worker.ts'], {
    env: { ...process.env, DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await waitForLine(child, 'POLLING', 30_000);

  let release!: () => void;
  provider.script({ kind: 'chat', chunks: ['survives'], usage: { prompt_tokens: 10, completion_tokens: 5 }, holdUntil: new Promise<void>((r) => (release = r)) });
  const answer = runtimeClient(app, chain.secret).request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': randomUUID() } });
  await provider.waitForCalls(1);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  // The provider answers with no worker alive: the API settles the reservation itself and answers;
  // its `recorded` signal waits in Temporal for the next worker.
  release();
  const res = await answer;
  expect(res.statusCode, res.body).toBe(200);
  expect((res.data as { data: { receipt: { outcome: string; costMicrodollars: number } } }).data.receipt).toMatchObject({ outcome: 'settled', costMicrodollars: 30 });
  expect(provider.calls).toHaveLength(1);
  const rows = await reservations(db.pool, chain.installationId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ state: 'settled', charged: 30 });
  // The next worker ends the workflow as settled, charging nothing again.
  await inProcessWorker();
  const client = new Client({ connection: lazyTemporalConnection(inject('temporalAddress')), namespace: 'default' });
  expect(await client.workflow.getHandle(rows[0]!.workflowId).result()).toBe('settled');
  expect(await orgLedger(db.pool, chain.organizationId)).toEqual({ committed: 30, inFlight: 0 });
});

it('the API process killed mid-stream: the provider request ends and the timers record one billable failure at the bound', { timeout: 90_000 }, async () => {
  if (workers.length === 0) await inProcessWorker();
  provider.reset();
  const chain = await buildRuntimeChain(db.pool);
  await setBudget(db.pool, chain.organizationId, 10_000_000);
  const api = spawn(process.execPath, ['test/support/intelligence-api-process.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      // The reservation must be dispatched within its TTL: 5 s, not 1 s, as the request is this fresh
      // process's first (cold) beside another test file (a 1 s TTL answered 409
      // intelligence_reservation_expired under CI load); the completion deadline is what this test waits out.
      INTELLIGENCE_SETTINGS: JSON.stringify(provider.settings({ timing: { reservationTtlMs: 5_000, completionDeadlineMs: 6_000 } })),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(api);
  const url = (await waitForLine(api, 'LISTENING ', 30_000)).slice('LISTENING '.length).trim();
  provider.script({ kind: 'stall', chunks: ['first words '] });
  const res = await fetch(`${url}/api/product/v1/intelligence/education/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${chain.secret}`, 'content-type': 'application/json', 'idempotency-key': randomUUID(), accept: 'application/x-ndjson' },
    body: JSON.stringify(generateBody()),
  });
  expect(res.status, res.status === 200 ? '' : await res.clone().text()).toBe(200);
  const reader = res.body!.getReader();
  let seen = '';
  while (!seen.includes('"delta"')) {
    const chunk = await reader.read();
    // A stream that ends without a delta fails here with what it said (it used to spin forever).
    if (chunk.done) throw new Error(`the stream ended before its first delta: ${seen}`);
    seen += new TextDecoder().decode(chunk.value);
  }
  api.kill('SIGKILL');
  await provider.waitForAborts(1);

  const [row] = await reservations(db.pool, chain.installationId);
  const client = new Client({ connection: lazyTemporalConnection(inject('temporalAddress')), namespace: 'default' });
  expect(await client.workflow.getHandle(row!.workflowId).result()).toBe('billable_failure');
  const rows = await reservations(db.pool, chain.installationId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ state: 'billable_failure', outcomeCode: 'completion_lost' });
  expect(rows[0]!.charged).toBe(rows[0]!.reserved);
  expect(await orgLedger(db.pool, chain.organizationId)).toEqual({ committed: rows[0]!.reserved, inFlight: 0 });
  expect(await expectedCommitted(db.pool, chain.organizationId)).toBe(rows[0]!.reserved);
  expect(provider.calls).toHaveLength(1);
  await client.connection.close();
});
