// Killing the worker mid-execution (after the Forge write committed, before its receipt was kept or
// before the step reported) and starting a new one still gives exactly one execution: one write, one
// set of events, one receipt; and so it does when the mapping is revoked before the retry (the
// retried step finds its receipt, or replays its write from the write's idempotency record).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createMapping, createVault, revokeMapping } from '../domain/identity/vaults.ts';
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

/** Resolves once `line` has been printed `times` times. */
function waitForLine(proc: ChildProcess, line: string, timeoutMs: number, times = 1): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ${times} × ${line} within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split(line).length - 1 >= times) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** A proposal of its own workspace and vault, approved; `beforeRestart` runs after the crash. */
type Case = { name: string; path: string; beforeRestart: (mappingId: string) => Promise<void> };

/** The crashable worker stops notes under this after their write, before their receipt (test/support/crashable-worker.ts). */
const beforeReceipt = 'Crash/Before receipt, ';

async function approvedProposal(c: Case) {
  const proposer = await accountWithToken(db.pool, 'team');
  const reviewerAccount = await accountWithToken(db.pool, 'team');
  const ws = await createWorkspace(db.pool, { name: `Crash ${c.name}`, ownerAccountId: proposer.account.id });
  await addMember(db.pool, { workspaceId: ws.id, accountId: reviewerAccount.account.id, role: 'reviewer' });
  const vault = await createVault(db.pool, { name: 'V', ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(db.pool, { vaultId: vault.id });
  const p = devClient(app, proposer.token);
  const r = devClient(app, reviewerAccount.token);
  const created = await p.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId: ws.id, bridge: 'crash-test', action: { kind: 'note.write', mappingId, path: c.path, content: 'exactly once' } },
    headers: { 'idempotency-key': `crash-${c.name.replaceAll(' ', '-')}` },
  });
  expect(created.statusCode, JSON.stringify(created.data)).toBe(201);
  const id = created.data.id as string;
  for (let i = 0; i < 100 && (await p.request('GET', `/api/dev/automation/proposals/${id}`)).data.state !== 'pending_review'; i++) await new Promise((res) => setTimeout(res, 100));
  const approved = await r.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
  expect(approved.data, JSON.stringify(approved.data)).toMatchObject({ state: 'approved' });
  return { ...c, id, p, mappingId, vaultId: vault.id };
}

// One crash for all four cases: their steps wait out the dead worker's 10 s step timeout together.
it('gives exactly one execution and one receipt after a worker dies before or after keeping the receipt, also when the mapping is revoked before the retry', { timeout: 90_000 }, async () => {
  const revoke = async (mappingId: string) => void (await revokeMapping(db.pool, mappingId));
  const cases: Case[] = [
    { name: 'after the receipt', path: 'Crash/Once.md', beforeRestart: async () => {} },
    // The retried step must not need the mapping: its write is done and its receipt kept.
    { name: 'after the receipt, mapping revoked', path: 'Crash/Once.md', beforeRestart: revoke },
    // The retried step replays its committed write (nothing written twice) and keeps the receipt.
    { name: 'before the receipt', path: `${beforeReceipt}once.md`, beforeRestart: async () => {} },
    // ... from the write's idempotency record, the mapping gone: no failure reported for a write made.
    { name: 'before the receipt, mapping revoked', path: `${beforeReceipt}once.md`, beforeRestart: revoke },
  ];
  child = spawn(process.execPath, ['test/support/crashable-worker.ts'], {
    env: { ...process.env, DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_TASK_QUEUE: taskQueue, CRASH_BEFORE_RECEIPT_UNDER: beforeReceipt },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child, 'POLLING', 30_000);
  const crashed = waitForLine(child, 'CRASH-POINT', 30_000, cases.length);
  const proposals = await Promise.all(cases.map(approvedProposal));

  await crashed;
  child.kill('SIGKILL');
  for (const { name, id, p, mappingId, path, beforeRestart } of proposals) {
    // Each stopped where its case says: before the receipt (none kept, still executing) or after it.
    const stopped = await db.pool.one(sql.type(z.object({ kept: z.boolean(), state: z.string() }))`
      SELECT f.receipt IS NOT NULL AS kept, p.state FROM action_proposals p JOIN forge_executions f ON f.proposal_id = p.id AND f.kind = 'apply' WHERE p.id = ${id}`);
    expect({ name, ...stopped }).toEqual(path.startsWith(beforeReceipt) ? { name, kept: false, state: 'executing' } : { name, kept: true, state: 'executed' });
    // The write is committed; the step never reported back.
    const read = await p.read(mappingId, path);
    expect(read.data.content, JSON.stringify(read.data)).toBe('exactly once');
    await beforeRestart(mappingId);
  }

  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createPlatformWorker({ connection, namespace: 'default', taskQueue, deps: { db: db.pool }, shutdownGraceTime: '1s' });
  const running = worker.run();
  const clientConnection = lazyTemporalConnection(inject('temporalAddress'));
  try {
    const client = new Client({ connection: clientConnection });
    // The proposal reads executed once the first attempt's receipt landed; the review completes
    // only when the retried step, on the new worker, reports back.
    const reviews = await Promise.allSettled(proposals.map(({ id }) => client.workflow.getHandle(`proposal-review-${id}`).result()));
    expect(reviews.map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason)))).toEqual(cases.map(() => 'executed'));
  } finally {
    await clientConnection.close();
    worker.shutdown();
    await running;
    await connection.close();
  }

  for (const { name, id, p, path, vaultId } of proposals) {
    expect({ name, events: await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM note_events WHERE vault_id = ${vaultId}`) }).toEqual({ name, events: 1 });
    const executions = await db.pool.any(sql.type(z.object({ kind: z.string(), state: z.string(), attempts: z.number(), receipt: z.unknown() }))`
      SELECT kind, state, attempts, receipt FROM forge_executions WHERE proposal_id = ${id}`);
    expect(executions).toHaveLength(1);
    // Two attempts (the crashed one and its retry), one receipt: the first one kept.
    expect({ name, state: executions[0]!.state, attempts: executions[0]!.attempts }).toEqual({ name, state: 'succeeded', attempts: 2 });
    expect(executions[0]!.receipt).toMatchObject({ kind: 'apply', changes: [{ path, operation: 'create' }] });
    const proposal = (await p.request('GET', `/api/dev/automation/proposals/${id}`)).data as { state: string; history: Array<{ state: string }> };
    expect({ name, state: proposal.state, history: proposal.history.map((h) => h.state) }).toEqual({ name, state: 'executed', history: ['proposed', 'pending_review', 'approved', 'executing', 'executed'] });
  }
});
