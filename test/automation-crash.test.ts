// Killing the worker mid-execution (after the Forge write committed, before the step reported)
// and starting a new one still gives exactly one execution: one write, one set of events, one receipt.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { createPlatformWorker } from '../workers/worker.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { devClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';

const taskQueue = `crash-${process.pid}-${Date.now()}`;
let db: TestDatabase;
let app: FastifyInstance;
let child: ChildProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  app = await buildTestApp(db.pool, { temporal: { connection: lazyTemporalConnection(inject('temporalAddress')), namespace: 'default', taskQueue } });
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await app?.close();
  await db?.drop();
});

function waitForLine(proc: ChildProcess, line: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${line} within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

it('gives exactly one execution and one receipt after a worker dies mid-step', { timeout: 90_000 }, async () => {
  const proposer = await accountWithToken(db.pool, 'team');
  const reviewerAccount = await accountWithToken(db.pool, 'team');
  const ws = await createWorkspace(db.pool, { name: 'Crash', ownerAccountId: proposer.account.id });
  await addMember(db.pool, { workspaceId: ws.id, accountId: reviewerAccount.account.id, role: 'reviewer' });
  const vault = await createVault(db.pool, { name: 'V', ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(db.pool, { vaultId: vault.id });
  const p = devClient(app, proposer.token);
  const r = devClient(app, reviewerAccount.token);

  child = spawn(process.execPath, ['test/support/crashable-worker.ts'], {
    env: { ...process.env, DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child, 'POLLING', 30_000);
  const crashed = waitForLine(child, 'CRASH-POINT', 30_000);

  const created = await p.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId: ws.id, bridge: 'crash-test', action: { kind: 'note.write', mappingId, path: 'Crash/Once.md', content: 'exactly once' } },
    headers: { 'idempotency-key': 'crash-1' },
  });
  const id = created.data.id as string;
  for (let i = 0; i < 100 && (await p.request('GET', `/api/dev/automation/proposals/${id}`)).data.state !== 'pending_review'; i++) await new Promise((res) => setTimeout(res, 100));
  expect((await r.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} })).data.state).toBe('approved');

  await crashed;
  child.kill('SIGKILL');
  // The write is committed; the step never reported back.
  expect((await p.read(mappingId, 'Crash/Once.md')).data.content).toBe('exactly once');

  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createPlatformWorker({ connection, namespace: 'default', taskQueue, deps: { db: db.pool }, shutdownGraceTime: '1s' });
  const running = worker.run();
  try {
    let state = '';
    for (let i = 0; i < 400 && state !== 'executed' && state !== 'failed'; i++) {
      state = (await p.request('GET', `/api/dev/automation/proposals/${id}`)).data.state as string;
      if (state !== 'executed') await new Promise((res) => setTimeout(res, 100));
    }
    expect(state).toBe('executed');
    // The proposal reads executed once the first attempt's receipt landed; the review completes
    // only when the retried step, on the new worker, reports back.
    const clientConnection = lazyTemporalConnection(inject('temporalAddress'));
    try {
      expect(await new Client({ connection: clientConnection }).workflow.getHandle(`proposal-review-${id}`).result()).toBe('executed');
    } finally {
      await clientConnection.close();
    }
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }

  expect(await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM note_events WHERE vault_id = ${vault.id}`)).toBe(1);
  const executions = await db.pool.any(sql.type(z.object({ kind: z.string(), attempts: z.number(), receipt: z.unknown() }))`
    SELECT kind, attempts, receipt FROM forge_executions WHERE proposal_id = ${id}`);
  expect(executions).toHaveLength(1);
  // Two attempts (the crashed one and its retry), one receipt: the first one kept.
  expect(executions[0]!.attempts).toBe(2);
  expect(executions[0]!.receipt).toMatchObject({ kind: 'apply', changes: [{ path: 'Crash/Once.md', operation: 'create' }] });
  const history = (await p.request('GET', `/api/dev/automation/proposals/${id}`)).data.history as Array<{ state: string }>;
  expect(history.map((h) => h.state)).toEqual(['proposed', 'pending_review', 'approved', 'executing', 'executed']);
});
