// Events, triggers (event and Temporal-Schedule), runs and /process, on real Postgres and Temporal.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { insertProposal } from '../domain/automation/proposals.ts';
import { submitProposal } from '../domain/automation/policy.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';

const ctx = useTestAppWithWorker({ name: 'events' });
let db: TestDatabase;
let app: FastifyInstance;
let connection: Connection;
let manager: DevClient;
let other: DevClient;
let viewer: DevClient;
let workspaceId: string;
let mappingId: string;

beforeAll(async () => {
  ({ db, app, temporal: connection } = ctx);
  const m = await accountWithToken(db.pool, 'team');
  const o = await accountWithToken(db.pool, 'team');
  const v = await accountWithToken(db.pool, 'team');
  const ws = await createWorkspace(db.pool, { name: 'Events', ownerAccountId: m.account.id });
  workspaceId = ws.id;
  await addMember(db.pool, { workspaceId, accountId: v.account.id, role: 'viewer' });
  const vault = await createVault(db.pool, { name: 'V', ownerWorkspaceId: workspaceId });
  ({ mappingId } = await createMapping(db.pool, { vaultId: vault.id }));
  manager = devClient(app, m.token);
  other = devClient(app, o.token);
  viewer = devClient(app, v.token);
});

const proposal = () => ({ bridge: 'generic-webhook', action: { kind: 'note.write', mappingId, path: 'Inbox/Captured.md', content: 'captured' } });
const createTrigger = (api: DevClient, body: Record<string, unknown>) =>
  api.request('POST', '/api/dev/automation/triggers', { body: { workspaceId, proposal: proposal(), ...body } });
const postEvent = (api: DevClient, body: Record<string, unknown>, key?: string) =>
  api.request('POST', '/api/dev/automation/events', { body: { workspaceId, source: 'test', ...body }, headers: key ? { 'idempotency-key': key } : {} });

describe('events and event triggers', () => {
  it('normalises an event and creates one run per matching trigger, once per Idempotency-Key even in parallel', async () => {
    const any = await createTrigger(manager, { name: 'Any capture', kind: 'event', eventType: 'capture.created' });
    expect(any.statusCode).toBe(201);
    await createTrigger(manager, { name: 'Urgent only', kind: 'event', eventType: 'capture.created', filter: { priority: 'high' } });
    await createTrigger(manager, { name: 'Paused', kind: 'event', eventType: 'capture.created', status: 'paused' });
    await createTrigger(manager, { name: 'Other type', kind: 'event', eventType: 'directory.person.upserted' });

    const results = await Promise.all(Array.from({ length: 8 }, () => postEvent(manager, { type: 'capture.created', data: { text: 'hello', priority: 'low' } }, 'evt-1')));
    const created = results.filter((r) => r.statusCode === 201);
    expect(created).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    expect(created[0]!.data.event).toMatchObject({ contract: 'hnp.automation-event', version: 1, type: 'capture.created', workspaceId, data: { text: 'hello' } });
    expect(created[0]!.data.runIds).toHaveLength(1); // "Any capture" only: the filter, the pause and the type rule the others out
    for (const r of results) expect(r.data.runIds).toEqual(created[0]!.data.runIds);

    const urgent = await postEvent(manager, { type: 'capture.created', data: { text: 'now', priority: 'high' } }, 'evt-2');
    expect(urgent.data.runIds).toHaveLength(2);
    expect((await postEvent(manager, { type: 'capture.created', data: { text: 'other' } }, 'evt-1')).data.code).toBe('idempotency_key_reused');
    const runs = await manager.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}`);
    expect(runs.data.runs).toHaveLength(3);
  });

  it('scopes event Idempotency-Keys to the caller', async () => {
    const second = await accountWithToken(db.pool, 'team');
    await addMember(db.pool, { workspaceId, accountId: second.account.id, role: 'editor' });
    const mine = await postEvent(manager, { type: 'scope.check', data: { who: 'manager' } }, 'shared-key');
    const theirs = await postEvent(devClient(app, second.token), { type: 'scope.check', data: { who: 'second' } }, 'shared-key');
    expect(theirs.statusCode).toBe(201);
    expect(theirs.data.event.id).not.toBe(mine.data.event.id);
    expect((await postEvent(manager, { type: 'scope.check' }, 'has space')).data.code).toBe('invalid_idempotency_key');
  });

  it('validates triggers and events', async () => {
    expect((await createTrigger(manager, { name: 'x', kind: 'event' })).data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/body/eventType' }] });
    expect((await createTrigger(manager, { name: 'x', kind: 'schedule' })).data).toMatchObject({ errors: [{ pointer: '/body/schedule' }] });
    expect((await createTrigger(manager, { name: 'x', kind: 'schedule', schedule: { cron: 'every tuesday', timeZone: 'UTC' } })).statusCode).toBe(400);
    expect((await createTrigger(manager, { name: 'x', kind: 'schedule', schedule: { intervalSeconds: 3600, timeZone: 'Mars/Olympus' } })).statusCode).toBe(400);
    expect((await createTrigger(manager, { name: 'x', kind: 'schedule', schedule: { intervalSeconds: 5, timeZone: 'UTC' } })).statusCode).toBe(400);
    expect((await postEvent(manager, { type: 'Bad Type!' })).statusCode).toBe(400);
    expect((await postEvent(manager, { type: 'big.event', data: { blob: 'x'.repeat(300 * 1024) } })).statusCode).toBe(413);
  });

  it('bounds occurredAt to 1970 … 24 hours after receipt (a year 0 was a 500 from Postgres)', async () => {
    const hour = 3600 * 1000;
    for (const occurredAt of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '9999-12-31T23:59:59Z', new Date(Date.now() + 25 * hour).toISOString()]) {
      const res = await postEvent(manager, { type: 'clock.check', occurredAt });
      expect(res.statusCode, occurredAt).toBe(400);
      expect(res.data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/body/occurredAt' }] });
    }
    const skewed = new Date(Date.now() + 23 * hour).toISOString();
    for (const occurredAt of ['1970-01-01T00:00:00Z', '2026-03-02T10:12:00+01:00', skewed]) {
      const res = await postEvent(manager, { type: 'clock.check', occurredAt });
      expect(res.statusCode, occurredAt).toBe(201);
      expect(Date.parse(res.data.event.occurredAt)).toBe(Date.parse(occurredAt));
    }
  });

  it('answers 201 with the Location of the event and the trigger, which read back', async () => {
    const event = await postEvent(manager, { type: 'location.check', data: { n: 1 } }, 'location-event');
    expect(event.statusCode).toBe(201);
    expect(event.headers['location']).toBe(`/api/dev/automation/events/${event.data.event.id}`);
    const read = await manager.request('GET', event.headers['location'] as string);
    expect(read.statusCode).toBe(200);
    expect(read.data).toEqual(event.data.event);
    // A replay is not a creation: 200 and no Location.
    const replay = await postEvent(manager, { type: 'location.check', data: { n: 1 } }, 'location-event');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['location']).toBeUndefined();

    const trigger = await createTrigger(manager, { name: 'Located', kind: 'event', eventType: 'location.check' });
    expect(trigger.headers['location']).toBe(`/api/dev/automation/triggers/${trigger.data.id}`);
    expect((await manager.request('GET', trigger.headers['location'] as string)).data).toEqual(trigger.data);
  });
});

describe('/process', () => {
  it('turns pending runs into proposals; concurrent calls never process a run twice', async () => {
    for (let i = 0; i < 12; i++) await postEvent(manager, { type: 'capture.created', data: { n: i } }, `bulk-${i}`);
    const pending = (await manager.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}`)).data.runs.filter((r: { status: string }) => r.status === 'pending');
    const calls = await Promise.all(Array.from({ length: 4 }, () => manager.request('POST', '/api/dev/automation/process', { body: { workspaceId } })));
    const processed = calls.flatMap((c) => c.data.processed as Array<{ runId: string; proposalId: string }>);
    expect(processed.length).toBe(pending.length);
    expect(new Set(processed.map((p) => p.runId)).size).toBe(processed.length);
    expect(new Set(processed.map((p) => p.proposalId)).size).toBe(processed.length);
    const after = (await manager.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}&limit=500`)).data.runs as Array<{ status: string; proposalId: string | null }>;
    expect(after.every((r) => r.status === 'succeeded' && r.proposalId)).toBe(true);
    const proposals = await manager.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}&limit=200`);
    expect(proposals.data.proposals.length).toBeGreaterThanOrEqual(processed.length);
    // Proposals made in one transaction share a timestamp: paging must still see each exactly once.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await manager.request('GET', `/api/dev/automation/proposals?workspaceId=${workspaceId}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...(page.data.proposals as Array<{ id: string }>).map((p) => p.id));
      cursor = page.data.nextCursor as string | null;
    } while (cursor);
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged).toEqual(expect.arrayContaining(processed.map((p) => p.proposalId)));
    // Nothing a trigger does bypasses review: the notes are untouched.
    expect((await manager.read(mappingId, 'Inbox/Captured.md')).statusCode).toBe(404);
  });
});

describe('/process recovery', () => {
  it('starts the review of a proposal stranded between commit and workflow start', async () => {
    const stranded = await insertProposal(db.pool, {
      id: randomUUID(),
      workspaceId,
      proposer: { kind: 'account', id: (await manager.request('GET', '/api/dev/me')).data.account.id },
      actingForAccountId: null,
      bridge: 'test',
      action: { kind: 'note.write', mappingId, path: 'Inbox/Stranded.md', content: 's' },
      summary: '',
      expiresInSeconds: 3600,
    });
    await db.pool.query(sql.type(z.object({}))`UPDATE action_proposals SET created_at = now() - interval '1 minute' WHERE id = ${stranded.id}`);
    const res = await manager.request('POST', '/api/dev/automation/process', { body: { workspaceId } });
    expect(res.data.resumedReviews).toContain(stranded.id);
    let state = '';
    for (let i = 0; i < 100 && state !== 'pending_review'; i++) {
      state = (await manager.request('GET', `/api/dev/automation/proposals/${stranded.id}`)).data.state as string;
      if (state !== 'pending_review') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe('pending_review');
  });

  it('finds a review by its start still pending, whatever the state: an opened proposal whose start was never made is resumed, a started one is not', async () => {
    const accountId = (await manager.request('GET', '/api/dev/me')).data.account.id as string;
    const input = (path: string) => ({
      id: randomUUID(),
      workspaceId,
      proposer: { kind: 'account' as const, id: accountId },
      actingForAccountId: null,
      bridge: 'test',
      action: { kind: 'note.write' as const, mappingId, path, content: 's' },
      summary: '',
      expiresInSeconds: 3600,
    });
    // Opened with the proposal (decision 96) while Temporal was down: pending_review, its start recorded and not made.
    const unstarted = await db.pool.transaction((tx) => submitProposal(tx, input('Inbox/Unstarted.md')));
    expect(unstarted.state).toBe('pending_review');
    // Through the API: its review started in the request.
    const started = await manager.request('POST', '/api/dev/automation/proposals', { body: { workspaceId, ...proposal(), summary: 'started' }, headers: { 'idempotency-key': randomUUID() } });
    expect(started.statusCode).toBe(201);
    const startedId = started.data.id as string;
    await db.pool.query(sql.type(z.object({}))`UPDATE action_proposals SET created_at = now() - interval '1 minute' WHERE id = ANY (${sql.array([unstarted.id, startedId], 'uuid')})`);
    const res = await manager.request('POST', '/api/dev/automation/process', { body: { workspaceId } });
    expect(res.data.resumedReviews).toContain(unstarted.id);
    expect(res.data.resumedReviews).not.toContain(startedId);
    // Resumed once: the start is made now, so the next /process leaves it alone.
    expect((await manager.request('POST', '/api/dev/automation/process', { body: { workspaceId } })).data.resumedReviews).not.toContain(unstarted.id);
    const review = new Client({ connection, namespace: 'default' }).workflow.getHandle(`proposal-review-${unstarted.id}`);
    expect((await review.describe()).status.name).toBe('RUNNING');
  });
});

describe('schedule triggers', () => {
  it('keep a Temporal Schedule in step: fires into a run, pauses, resumes, deletes', async () => {
    const created = await createTrigger(manager, { name: 'Hourly', kind: 'schedule', schedule: { intervalSeconds: 3600, timeZone: 'Europe/Berlin' } });
    expect(created.statusCode).toBe(201);
    const id = created.data.id as string;
    const client = new Client({ connection, namespace: 'default' });
    const handle = client.schedule.getHandle(`trigger-${id}`);
    expect((await handle.describe()).state.paused).toBe(false);

    await handle.trigger();
    let runs: Array<{ triggerId: string }> = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      runs = ((await manager.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}&limit=500`)).data.runs as Array<{ triggerId: string }>).filter((r) => r.triggerId === id);
      if (runs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(runs).toHaveLength(1);

    expect((await manager.request('PATCH', `/api/dev/automation/triggers/${id}`, { body: { status: 'paused' } })).data.status).toBe('paused');
    expect((await handle.describe()).state.paused).toBe(true);
    await manager.request('PATCH', `/api/dev/automation/triggers/${id}`, { body: { status: 'active' } });
    expect((await handle.describe()).state.paused).toBe(false);
    expect((await manager.request('DELETE', `/api/dev/automation/triggers/${id}`)).statusCode).toBe(204);
    await expect(handle.describe()).rejects.toThrow();
    // Its runs go with it (as the route's description says).
    const left = (await manager.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}`)).data.runs as Array<{ triggerId: string }>;
    expect(left.filter((r) => r.triggerId === id)).toEqual([]);
  });
});

describe('tenancy', () => {
  it('refuses another account on every route, and a viewer on management', async () => {
    const t = await createTrigger(manager, { name: 'Mine', kind: 'event', eventType: 'x.y' });
    const id = t.data.id as string;
    expect((await postEvent(other, { type: 'capture.created' })).data.code).toBe('workspace_not_found');
    expect((await createTrigger(other, { name: 'x', kind: 'event', eventType: 'a.b' })).data.code).toBe('workspace_not_found');
    expect((await other.request('GET', `/api/dev/automation/triggers?workspaceId=${workspaceId}`)).data.code).toBe('workspace_not_found');
    expect((await other.request('PATCH', `/api/dev/automation/triggers/${id}`, { body: { name: 'stolen' } })).statusCode).toBe(404);
    expect((await other.request('DELETE', `/api/dev/automation/triggers/${id}`)).statusCode).toBe(404);
    expect((await other.request('GET', `/api/dev/automation/triggers/${id}`)).statusCode).toBe(404);
    const event = await postEvent(manager, { type: 'tenancy.check' });
    expect((await other.request('GET', `/api/dev/automation/events/${event.data.event.id}`)).data.code).toBe('not_found');
    expect((await viewer.request('GET', `/api/dev/automation/events/${event.data.event.id}`)).statusCode).toBe(200);
    expect((await other.request('GET', `/api/dev/automation/runs?workspaceId=${workspaceId}`)).data.code).toBe('workspace_not_found');
    expect((await other.request('POST', '/api/dev/automation/process', { body: { workspaceId } })).data.code).toBe('workspace_not_found');
    expect((await other.request('POST', '/api/dev/automation/process', { body: {} })).data.processed).toEqual([]);
    expect((await viewer.request('GET', `/api/dev/automation/triggers?workspaceId=${workspaceId}`)).statusCode).toBe(200);
    expect((await createTrigger(viewer, { name: 'x', kind: 'event', eventType: 'a.b' })).data.code).toBe('permission_denied');
    expect((await postEvent(viewer, { type: 'capture.created' })).data.code).toBe('permission_denied');
  });
});
