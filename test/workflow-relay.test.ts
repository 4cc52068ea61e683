// Durable workflow starts (issue 25): a write records the starts it needs in its own transaction;
// the request tries them at once (bounded) and the relay makes whatever is left. Real Postgres and
// Temporal: a second app over the same database talks to a Temporal address where nothing listens,
// as every API process does while Temporal is down; the relay then runs against the real server and
// the platform worker finishes the work.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import pino from 'pino';
import { createWorkflowRelay } from '../api/workflow-relay.ts';
import { startIntent } from '../api/routes/shared/workflow-starts.ts';
import type { WorkflowStarter } from '../api/routes/shared/workflow-starts.ts';
import { reviewStart } from '../domain/automation/workflow-ids.ts';
import { attemptWorkflowId, OAUTH_ATTEMPT_START_KIND } from '../domain/connections/attempts.ts';
import { backoffMs, claimDueIntents, markAttemptFailed, pendingIntents, pruneStartedIntents, recordStartIntents } from '../domain/workflow-intents.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { buildTestApp } from './support/app.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';
import { waitForProposalState } from './support/console.ts';
import { runOps } from './support/ops.ts';

const secretBox = createSecretBox(`test:${randomBytes(32).toString('base64')}`)!;
const egress = { allowList: ['127.0.0.1'] };
const ctx = useTestAppWithWorker({ name: 'relay', overrides: { secretBox, egress, webhookRetryBaseMs: 40 }, workerDeps: { secretBox, egress } });
const silent = pino({ level: 'silent' });

// Temporal "down": a port where nothing listens.
const deadConnection = lazyTemporalConnection('127.0.0.1:1');
let down: FastifyInstance;
let temporal: Client;
let starter: WorkflowStarter;
let proposer: DevClient;
let reviewer: DevClient;
let proposerDown: DevClient;
let reviewerDown: DevClient;
let workspaceId: string;
let mappingId: string;

const received: { webhookId: string }[] = [];
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  temporal = new Client({ connection: ctx.temporal, namespace: 'default' });
  starter = { db: ctx.db.pool, temporal, taskQueue: ctx.taskQueue, webhookRetryBaseMs: 40 };
  down = await buildTestApp(ctx.db.pool, { temporal: { connection: deadConnection, namespace: 'default', taskQueue: ctx.taskQueue }, secretBox, egress });
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ webhookId: String(req.headers['webhook-id']) });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  const p = await accountWithToken(ctx.db.pool, 'team');
  const r = await accountWithToken(ctx.db.pool, 'developer_agent');
  workspaceId = (await createWorkspace(ctx.db.pool, { name: 'Relay', ownerAccountId: p.account.id })).id;
  await addMember(ctx.db.pool, { workspaceId, accountId: r.account.id, role: 'reviewer' });
  const vault = await createVault(ctx.db.pool, { name: 'Relay vault', ownerWorkspaceId: workspaceId });
  ({ mappingId } = await createMapping(ctx.db.pool, { vaultId: vault.id }));
  proposer = devClient(ctx.app, p.token);
  reviewer = devClient(ctx.app, r.token);
  proposerDown = devClient(down, p.token);
  reviewerDown = devClient(down, r.token);
});
afterAll(async () => {
  await down?.close();
  await deadConnection.close();
  await new Promise((r) => receiver?.close(r));
});

const pendingIds = async () => (await pendingIntents(ctx.db.pool, 1_000)).oldest.map((i) => i.workflowId);

const proposalState = async (id: string) => (await proposer.request('GET', `/api/dev/automation/proposals/${id}`)).data.state as string;
const propose = (client: DevClient, path: string) =>
  client.request('POST', '/api/dev/automation/proposals', {
    body: { workspaceId, bridge: 'relay-test', summary: 'relay', action: { kind: 'note.write', mappingId, path, content: '# Relayed\n' } },
    headers: { 'idempotency-key': randomUUID() },
  });

/** Makes every pending intent due now (instead of waiting out a backoff). */
const dueNow = () => ctx.db.pool.query(sql.type(z.object({}))`UPDATE workflow_start_intents SET next_attempt_at = now() WHERE started_at IS NULL`);

describe('while Temporal is down, acknowledged work is recorded and made later', () => {
  it('a proposal is 201 at once; its review starts when the relay runs; approval is then executed once', async () => {
    const started = performance.now();
    const created = await propose(proposerDown, 'Relay/One.md');
    expect(created.statusCode, created.body).toBe(201);
    // Bounded: the request waited REQUEST_START_WAIT_MS (2 s) at most, not Temporal's ~20 s of retries.
    expect(performance.now() - started).toBeLessThan(10_000);
    const id = created.data.id as string;
    expect(await pendingIds()).toContain(`proposal-review-${id}`);
    // Reviewable at once (decision 96); its review workflow is not there yet.
    expect(await proposalState(id)).toBe('pending_review');

    const relay = createWorkflowRelay(starter, silent);
    await dueNow();
    expect((await relay.runOnce()).started).toBeGreaterThanOrEqual(1);
    expect(await pendingIds()).not.toContain(`proposal-review-${id}`);
    await waitForProposalState(proposer, id, ['pending_review']);
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} })).statusCode).toBe(200);
    await waitForProposalState(proposer, id, ['executed']);
  });

  it('an approval that comes before the relay started the review starts it and is executed once; the relay then finds it started', async () => {
    const created = await propose(proposerDown, 'Relay/Early.md');
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    expect(created.data.state).toBe('pending_review');
    expect(await pendingIds()).toContain(`proposal-review-${id}`);
    // Temporal is back for this API; the relay has not come round.
    const approved = await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.data.state).toBe('approved');
    expect(await pendingIds()).not.toContain(`proposal-review-${id}`);
    const done = await waitForProposalState(proposer, id, ['executed']);
    expect(done.executions).toHaveLength(1);
    // A second decision is refused like any late one.
    expect((await reviewer.request('POST', `/api/dev/automation/proposals/${id}/reject`, { body: {} })).data.code).toBe('proposal_not_pending');
  });

  it('an approval while Temporal is down is 503 workflow_service_unavailable with Retry-After, and nothing is decided', async () => {
    const created = await propose(proposer, 'Relay/Two.md');
    const id = created.data.id as string;
    await waitForProposalState(proposer, id, ['pending_review']);
    const res = await reviewerDown.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.data.code).toBe('workflow_service_unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect(await proposalState(id)).toBe('pending_review');
  });

  it('a schedule trigger needs Temporal now: creating or pausing one while it is down is 503 with Retry-After, and nothing changes', async () => {
    const trigger = (name: string) => ({
      workspaceId,
      name,
      kind: 'schedule',
      schedule: { intervalSeconds: 3600, timeZone: 'UTC' },
      proposal: { bridge: 'relay-test', action: { kind: 'note.write', mappingId, path: 'Relay/Scheduled.md', content: 'x' } },
    });
    const refused = await proposerDown.request('POST', '/api/dev/automation/triggers', { body: trigger('Down hourly') });
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.data.code).toBe('workflow_service_unavailable');
    expect(refused.headers['retry-after']).toBe('5');
    const listed = (await proposer.request('GET', `/api/dev/automation/triggers?workspaceId=${workspaceId}`)).data.triggers as { name: string }[];
    expect(listed.map((t) => t.name)).not.toContain('Down hourly');

    const created = await proposer.request('POST', '/api/dev/automation/triggers', { body: trigger('Up hourly') });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    const paused = await proposerDown.request('PATCH', `/api/dev/automation/triggers/${id}`, { body: { status: 'paused' } });
    expect(paused.statusCode, paused.body).toBe(503);
    expect(paused.data.code).toBe('workflow_service_unavailable');
    expect((await proposer.request('GET', `/api/dev/automation/triggers/${id}`)).data.status).toBe('active');
    expect((await temporal.schedule.getHandle(`trigger-${id}`).describe()).state.paused).toBe(false);
    expect((await proposer.request('DELETE', `/api/dev/automation/triggers/${id}`)).statusCode).toBe(204);
  });

  it('an ingested event is 201; its deliveries are made by the relay, once each', async () => {
    const endpoint = await proposer.request('POST', '/api/dev/automation/endpoints', { body: { workspaceId, url: receiverUrl, eventTypes: ['relay.test'] } });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const ingested = await proposerDown.request('POST', '/api/dev/automation/events', {
      body: { workspaceId, type: 'relay.test', source: 'test', data: { n: 1 } },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(ingested.statusCode, ingested.body).toBe(201);
    const pending = (await pendingIds()).filter((w) => w.startsWith('webhook-msg_'));
    expect(pending).toHaveLength(1);
    // A replay of the request changes nothing and sends nothing itself; the relay does.
    expect(received).toHaveLength(0);

    // Two relays racing over the same queue: each intent is taken by one of them.
    const a = createWorkflowRelay(starter, silent);
    const b = createWorkflowRelay(starter, silent);
    await dueNow();
    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(ra.failed + rb.failed).toBe(0);
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.map((r) => r.webhookId)).toEqual([pending[0]!.replace(/^webhook-/, '')]);
    expect(await pendingIds()).not.toContain(pending[0]);
  });

  it('an undo while Temporal is down is claimed (202 undoing) and run by the relay', async () => {
    const created = await propose(proposer, 'Relay/Three.md');
    const id = created.data.id as string;
    await waitForProposalState(proposer, id, ['pending_review']);
    await reviewer.request('POST', `/api/dev/automation/proposals/${id}/approve`, { body: {} });
    await waitForProposalState(proposer, id, ['executed']);
    const undo = await reviewerDown.request('POST', `/api/dev/automation/proposals/${id}/undo`);
    expect(undo.statusCode, undo.body).toBe(202);
    expect(undo.data.state).toBe('undoing');
    await dueNow();
    await createWorkflowRelay(starter, silent).runOnce();
    await waitForProposalState(proposer, id, ['undone']);
  });
});

describe('the relay', () => {
  it('backs off when Temporal refuses, keeps the reason, and starts once Temporal answers', async () => {
    const proposal = await propose(proposerDown, 'Relay/Four.md');
    const workflowId = `proposal-review-${proposal.data.id as string}`;
    const deadStarter: WorkflowStarter = { ...starter, temporal: new Client({ connection: deadConnection, namespace: 'default' }) };
    await dueNow();
    const failed = await createWorkflowRelay(deadStarter, silent, { startTimeoutMs: 500 }).runOnce();
    expect(failed.started).toBe(0);
    const row = (await pendingIntents(ctx.db.pool, 1_000)).oldest.find((i) => i.workflowId === workflowId)!;
    expect(row.attempts).toBeGreaterThanOrEqual(1);
    expect(row.lastError).toBeTruthy();
    expect(Date.parse(row.nextAttemptAt)).toBeGreaterThan(Date.now());
    // Not due yet: a relay round takes nothing.
    expect((await claimDueIntents(ctx.db.pool, 100, 1_000)).map((i) => i.workflowId)).not.toContain(workflowId);
    await dueNow();
    await createWorkflowRelay(starter, silent).runOnce();
    expect(await pendingIds()).not.toContain(workflowId);
  });

  it('treats a workflow already started as done, and a proposal that is gone as nothing to start', async () => {
    const created = await propose(proposer, 'Relay/Five.md');
    const id = created.data.id as string;
    await waitForProposalState(proposer, id, ['pending_review']);
    await expect(startIntent(starter, reviewStart(id))).resolves.toBeUndefined();
    await expect(startIntent(starter, reviewStart(randomUUID()))).resolves.toBeUndefined();
    await expect(temporal.workflow.getHandle(`proposal-review-${randomUUID()}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('starts a recorded OAuth attempt workflow, once (a second start finds it running)', async () => {
    const attemptId = randomUUID();
    const intent = { workflowId: attemptWorkflowId(attemptId), kind: OAUTH_ATTEMPT_START_KIND, input: { attemptId, stateHash: 'test-state-hash', ttlMs: 60_000 } };
    await startIntent(starter, intent);
    await expect(startIntent(starter, intent)).resolves.toBeUndefined();
    const handle = temporal.workflow.getHandle(intent.workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test over');
  });

  it('two relays claiming 40 intents at once take each exactly once', async () => {
    const ids = Array.from({ length: 40 }, () => `relay-claim-${randomUUID()}`);
    await recordStartIntents(ctx.db.pool, ids.map((workflowId) => ({ workflowId, kind: 'test-kind', input: {} })));
    const [a, b] = await Promise.all([claimDueIntents(ctx.db.pool, 25, 60_000), claimDueIntents(ctx.db.pool, 25, 60_000)]);
    const claimed = [...a, ...b].map((i) => i.workflowId).filter((w) => ids.includes(w));
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.length).toBe(40);
    // Leased: nothing is due again until the lease ends.
    expect((await claimDueIntents(ctx.db.pool, 100, 60_000)).filter((i) => ids.includes(i.workflowId))).toHaveLength(0);
    await ctx.db.pool.query(sql.type(z.object({}))`DELETE FROM workflow_start_intents WHERE kind = 'test-kind'`);
  });

  it('once Temporal answers again, a round with nothing due asks it and makes the whole backed-off backlog due at once', async () => {
    const proposal = await propose(proposerDown, 'Relay/Six.md');
    const workflowId = `proposal-review-${proposal.data.id as string}`;
    // One relay through an outage: its starter's Temporal is away, then back.
    const flaky: WorkflowStarter = { ...starter, temporal: new Client({ connection: deadConnection, namespace: 'default' }) };
    const relay = createWorkflowRelay(flaky, silent, { startTimeoutMs: 500 });
    await dueNow();
    expect((await relay.runOnce()).started).toBe(0);
    // A long backoff: without the relay asking Temporal, nothing would be due for an hour.
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE workflow_start_intents SET next_attempt_at = now() + interval '1 hour' WHERE started_at IS NULL`);
    flaky.temporal = temporal;
    expect(await relay.runOnce()).toEqual({ started: 0, failed: 0 });
    const row = (await pendingIntents(ctx.db.pool, 1_000)).oldest.find((i) => i.workflowId === workflowId)!;
    expect(Date.parse(row.nextAttemptAt)).toBeLessThanOrEqual(Date.now());
    expect((await relay.runOnce()).started).toBeGreaterThanOrEqual(1);
    expect(await pendingIds()).not.toContain(workflowId);
  });

  it('prunes started intents after a day, never pending or recent ones', async () => {
    const [old, recent, pending] = ['old', 'recent', 'pending'].map((n) => `relay-prune-${n}-${randomUUID()}`) as [string, string, string];
    await recordStartIntents(ctx.db.pool, [old, recent, pending].map((workflowId) => ({ workflowId, kind: 'test-kind', input: {} })));
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE workflow_start_intents SET started_at = now() WHERE workflow_id IN (${old}, ${recent})`);
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE workflow_start_intents SET started_at = now() - interval '25 hours' WHERE workflow_id = ${old}`);
    await ctx.db.pool.query(sql.type(z.object({}))`UPDATE workflow_start_intents SET created_at = now() - interval '3 days' WHERE workflow_id = ${pending}`);
    expect(await pruneStartedIntents(ctx.db.pool)).toBeGreaterThanOrEqual(1);
    const left = await ctx.db.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT workflow_id AS id FROM workflow_start_intents WHERE workflow_id IN (${old}, ${recent}, ${pending}) ORDER BY workflow_id`);
    expect([...left].sort()).toEqual([pending, recent].sort());
    await ctx.db.pool.query(sql.type(z.object({}))`DELETE FROM workflow_start_intents WHERE kind = 'test-kind'`);
  });

  it('`npm run ops -- starts pending` lists what is left, by kind, with the last error', async () => {
    const workflowId = `relay-ops-${randomUUID()}`;
    await recordStartIntents(ctx.db.pool, [{ workflowId, kind: 'test-kind', input: {} }]);
    await markAttemptFailed(ctx.db.pool, workflowId, 'GrpcError (code 14)', 60_000);
    const run = await runOps({ DATABASE_URL: ctx.db.url }, 'starts', 'pending', '--limit', '1000');
    expect(run.code, run.stderr).toBe(0);
    const out = run.json();
    expect(out.summary.pending).toBeGreaterThanOrEqual(1);
    expect(out.byKind['test-kind']).toBe(1);
    expect(out.oldest.find((i: { workflowId: string }) => i.workflowId === workflowId)).toMatchObject({ kind: 'test-kind', lastError: 'GrpcError (code 14)' });
    await ctx.db.pool.query(sql.type(z.object({}))`DELETE FROM workflow_start_intents WHERE kind = 'test-kind'`);
  });

  it('backs off exponentially with jitter, from about a second to at most a minute', () => {
    expect(backoffMs(1, () => 0)).toBe(500);
    expect(backoffMs(1, () => 1)).toBe(1_000);
    expect(backoffMs(4, () => 1)).toBe(8_000);
    expect(backoffMs(30, () => 1)).toBe(60_000);
    expect(backoffMs(30, () => 0)).toBe(30_000);
  });
});
