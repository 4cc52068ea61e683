// Webhook endpoints and deliveries against a real local receiver that verifies signatures with the
// `standardwebhooks` library; retries, 410, disabling, SSRF refusals, and repeats of one attempt
// (every request is an execution record).
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../activities/index.ts';
import { getEvent } from '../domain/automation/events.ts';
import { addressProblem, checkWebhookUrl, postJson } from '../domain/automation/network.ts';
import { attemptDelivery, deliveryMessageId, disableEndpoint } from '../domain/automation/webhooks.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { buildTestApp } from './support/app.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';

const secretBox = createSecretBox(`test:${randomBytes(32).toString('base64')}`)!;
const egress = { allowList: ['127.0.0.1'] };
const ctx = useTestAppWithWorker({ name: 'webhooks', overrides: { secretBox, egress, webhookRetryBaseMs: 40 }, workerDeps: { secretBox, egress } });
let db: TestDatabase;
let app: FastifyInstance;
let api: DevClient;
let workspaceId: string;

type Received = { path: string; headers: Record<string, string>; body: string };
const received: Received[] = [];
/** Status to answer per path, in order; the last one repeats. */
const script = new Map<string, number[]>();
/** A path whose answer waits for this promise (a request held open). */
const holds = new Map<string, Promise<void>>();
let receiver: Server;
let base: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers as Record<string, string>, body });
      const plan = script.get(path) ?? [200];
      const status = plan.length > 1 ? plan.shift()! : plan[0]!;
      void (holds.get(path) ?? Promise.resolve()).then(() => {
        res.writeHead(status, status === 302 ? { location: 'http://169.254.169.254/' } : {});
        res.end('ok');
      });
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const address = receiver.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  ({ db, app } = ctx);
  const owner = await accountWithToken(db.pool, 'team');
  workspaceId = (await createWorkspace(db.pool, { name: 'Hooks', ownerAccountId: owner.account.id })).id;
  api = devClient(app, owner.token);
});
afterAll(() => {
  receiver?.close();
});

const createEndpoint = (path: string, eventTypes: string[] = ['order.paid']) =>
  api.request('POST', '/api/dev/automation/endpoints', { body: { workspaceId, url: `${base}${path}`, eventTypes } });
const postEvent = (type: string, data: Record<string, unknown>) => api.request('POST', '/api/dev/automation/events', { body: { workspaceId, type, source: 'test', data } });

async function executionsFor(endpointId: string, until: (rows: Array<{ outcome: string }>) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = ((await api.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}&limit=500`)).data.executions as Array<{ endpointId: string; outcome: string; attempt: number; statusCode: number | null }>)
      .filter((r) => r.endpointId === endpointId)
      .reverse();
    if (until(rows) || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhook endpoints', () => {
  it('shows the whsec_ secret once, stores it encrypted, and deliveries verify with standardwebhooks', async () => {
    const created = await createEndpoint('/ok');
    expect(created.statusCode).toBe(201);
    const secret = created.data.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const listed = await api.request('GET', `/api/dev/automation/endpoints?workspaceId=${workspaceId}`);
    expect(JSON.stringify(listed.data)).not.toContain(secret.slice(6));
    expect(created.headers['location']).toBe(`/api/dev/automation/endpoints/${created.data.id}`);
    const read = await api.request('GET', created.headers['location'] as string);
    expect(read.data).toEqual(listed.data.endpoints.find((e: { id: string }) => e.id === created.data.id));
    expect(JSON.stringify(read.data)).not.toContain(secret.slice(6));
    const stored = await db.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT w::text AS row FROM webhook_endpoints w WHERE id = ${created.data.id}`);
    expect(stored).not.toContain(secret.slice(6));

    await postEvent('order.paid', { amount: 42 });
    const rows = await executionsFor(created.data.id, (r) => r.some((x) => x.outcome === 'delivered'));
    expect(rows.map((r) => r.outcome)).toEqual(['delivered']);
    const delivery = received.find((r) => r.path === '/ok')!;
    const verified = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; data: { data: { amount: number } } };
    expect(verified.type).toBe('order.paid');
    expect(verified.data.data.amount).toBe(42);
    expect(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(delivery.body, delivery.headers)).toThrow();
  });

  it('retries 500s and 3xx with backoff until success, recording every attempt', async () => {
    script.set('/flaky', [500, 302, 200]);
    const created = await createEndpoint('/flaky');
    await postEvent('order.paid', { amount: 1 });
    const rows = await executionsFor(created.data.id, (r) => r.some((x) => x.outcome === 'delivered'));
    expect(rows.map((r) => [r.attempt, r.outcome, r.statusCode])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', 302],
      [3, 'delivered', 200],
    ]);
  });

  it('stops on 410 and disables the endpoint', async () => {
    script.set('/gone', [410]);
    const created = await createEndpoint('/gone');
    await postEvent('order.paid', { amount: 2 });
    const rows = await executionsFor(created.data.id, (r) => r.some((x) => x.outcome === 'gone'));
    expect(rows.map((r) => r.outcome)).toEqual(['gone']);
    const endpoint = ((await api.request('GET', `/api/dev/automation/endpoints?workspaceId=${workspaceId}`)).data.endpoints as Array<{ id: string; status: string; disabledReason: string }>).find((e) => e.id === created.data.id)!;
    expect(endpoint).toMatchObject({ status: 'disabled', disabledReason: expect.stringContaining('410') });
    // Deleting the endpoint deletes its execution records too (as the route's description says).
    expect((await api.request('DELETE', `/api/dev/automation/endpoints/${created.data.id}`)).statusCode).toBe(204);
    const executions = (await api.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}`)).data.executions as Array<{ endpointId: string }>;
    expect(executions.filter((x) => x.endpointId === created.data.id)).toEqual([]);
  });

  it('disables an endpoint after repeated failed deliveries, with a reason', async () => {
    script.set('/down', [500]);
    const created = await createEndpoint('/down', ['service.down']);
    for (let i = 0; i < 3; i++) await postEvent('service.down', { i });
    const deadline = Date.now() + 25_000;
    let endpoint: { status: string; disabledReason: string | null } | undefined;
    while (Date.now() < deadline) {
      endpoint = ((await api.request('GET', `/api/dev/automation/endpoints?workspaceId=${workspaceId}`)).data.endpoints as Array<{ id: string; status: string; disabledReason: string | null }>).find((e) => e.id === created.data.id);
      if (endpoint?.status === 'disabled') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(endpoint).toMatchObject({ status: 'disabled', disabledReason: expect.stringContaining('in a row failed') });
    // Each exhausted delivery is Failed in the workflow history, found through the visibility API.
    const client = new Client({ connection: ctx.temporal, namespace: 'default' });
    let failed = 0;
    for (let i = 0; i < 100 && failed < 3; i++) {
      failed = 0;
      for await (const wf of client.workflow.list({ query: `WorkflowType = "webhookDelivery" AND WorkspaceId = "${workspaceId}" AND ExecutionStatus = "Failed"` })) {
        const outcome = await client.workflow.getHandle(wf.workflowId).result().catch((error: unknown) => error);
        if ((outcome as { cause?: { type?: string } }).cause?.type === 'webhook_delivery_failed') failed++;
      }
      if (failed < 3) await new Promise((r) => setTimeout(r, 100));
    }
    expect(failed).toBe(3);
  });
});

describe('a worker without a secret box', () => {
  it('fails the delivery attempt as final (not_ready), not as a transient error to retry', async () => {
    const posted = await postEvent('box.missing', {});
    const activities = createActivities({ db: db.pool, secretBox: null });
    const error = await activities.deliverWebhook({ endpointId: randomUUID(), messageId: `msg_${randomUUID()}`, eventId: posted.data.event.id as string, attempt: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'not_ready', nonRetryable: true });
  });
});

type Execution = { id: string; endpointId: string; messageId: string; attempt: number; activityAttempt: number | null; repeat: boolean; outcome: string; statusCode: number | null; errorCode: string | null };

describe('repeats of one delivery attempt', () => {
  const listAll = async () => (await api.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}&limit=500`)).data as { executions: Execution[]; nextCursor: string | null };
  const rowsOf = async (endpointId: string) => (await listAll()).executions.filter((x) => x.endpointId === endpointId).reverse();
  /** An endpoint and an event it is not subscribed to, so no delivery workflow runs: the test drives the activity itself. */
  async function endpointAndEvent(path: string) {
    const endpoint = (await createEndpoint(path, ['repeat.subscribed'])).data as { id: string; secret: string };
    const eventId = (await postEvent('repeat.unsubscribed', { path })).data.event.id as string;
    return { endpoint, eventId, input: { endpointId: endpoint.id, messageId: deliveryMessageId(eventId, endpoint.id), eventId, attempt: 1 } };
  }

  it('records both requests when the delivery activity runs twice for one attempt (a worker crash after the POST)', async () => {
    const { endpoint, eventId, input } = await endpointAndEvent('/repeat');
    const activities = createActivities({ db: db.pool, secretBox, egress });
    expect(await activities.deliverWebhook(input)).toBe('delivered');
    expect(await activities.deliverWebhook(input)).toBe('delivered'); // Temporal retrying the activity after the worker died

    const receptions = received.filter((r) => r.path === '/repeat');
    expect(receptions.map((r) => r.headers['webhook-id'])).toEqual([input.messageId, input.messageId]);
    for (const r of receptions) expect(() => new Webhook(endpoint.secret).verify(r.body, r.headers)).not.toThrow();

    const rows = await rowsOf(endpoint.id);
    expect(rows.map((r) => [r.messageId, r.attempt, r.outcome, r.statusCode, r.repeat])).toEqual([
      [input.messageId, 1, 'delivered', 200, false],
      [input.messageId, 1, 'delivered', 200, true],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    // Reading is idempotent: the same records, however often they are read.
    expect(await rowsOf(endpoint.id)).toEqual(rows);

    // The activity's own attempt number is kept when the caller supplies it.
    const event = (await getEvent(db.pool, eventId))!;
    expect(await attemptDelivery(db.pool, secretBox, egress, { ...input, activityAttempt: 3, event })).toBe('delivered');
    const third = (await rowsOf(endpoint.id))[2]!;
    expect(third).toMatchObject({ attempt: 1, activityAttempt: 3, repeat: true, outcome: 'delivered' });
    expect(received.filter((r) => r.path === '/repeat')).toHaveLength(3);
  });

  it('records a run that sent nothing once, never as a repeat (refused address, disabled endpoint)', async () => {
    // Refused at connect by a worker whose egress policy does not allow the receiver's address.
    const refused = await endpointAndEvent('/refused-repeat');
    const strict = createActivities({ db: db.pool, secretBox, egress: { allowList: [] } });
    expect(await strict.deliverWebhook(refused.input)).toBe('refused');
    expect(await strict.deliverWebhook(refused.input)).toBe('refused');
    expect(received.filter((r) => r.path === '/refused-repeat')).toEqual([]);
    expect((await rowsOf(refused.endpoint.id)).map((r) => [r.attempt, r.outcome, r.errorCode, r.repeat])).toEqual([[1, 'refused', 'egress_refused', false]]);

    // Sent once, then the endpoint was disabled before the retried activity ran (twice).
    const disabled = await endpointAndEvent('/disabled-repeat');
    const activities = createActivities({ db: db.pool, secretBox, egress });
    expect(await activities.deliverWebhook(disabled.input)).toBe('delivered');
    await disableEndpoint(db.pool, disabled.endpoint.id, 'test');
    expect(await activities.deliverWebhook(disabled.input)).toBe('skipped');
    expect(await activities.deliverWebhook(disabled.input)).toBe('skipped');
    expect(received.filter((r) => r.path === '/disabled-repeat')).toHaveLength(1);
    expect((await rowsOf(disabled.endpoint.id)).map((r) => [r.attempt, r.outcome, r.errorCode, r.repeat])).toEqual([
      [1, 'delivered', null, false],
      [1, 'skipped', 'endpoint_disabled', false],
    ]);
  });

  it('records a request before it is sent; one whose worker stopped mid-request reads as unknown', async () => {
    let release!: () => void;
    holds.set('/held', new Promise<void>((resolve) => (release = resolve)));
    const { endpoint, input } = await endpointAndEvent('/held');
    const delivering = createActivities({ db: db.pool, secretBox, egress }).deliverWebhook(input);
    for (let i = 0; i < 100 && !received.some((r) => r.path === '/held'); i++) await new Promise((r) => setTimeout(r, 20));
    expect((await rowsOf(endpoint.id)).map((r) => [r.outcome, r.errorCode, r.repeat])).toEqual([['sending', null, false]]);
    // As if the worker had died: the row stays 'sending', and is read as unknown once no request can still be running.
    await db.pool.query(sql.type(z.object({}))`UPDATE webhook_executions SET created_at = now() - interval '2 minutes' WHERE message_id = ${input.messageId}`);
    expect((await rowsOf(endpoint.id)).map((r) => [r.outcome, r.errorCode])).toEqual([['unknown', 'outcome_unknown']]);
    release();
    expect(await delivering).toBe('delivered');
    expect((await rowsOf(endpoint.id)).map((r) => [r.outcome, r.statusCode])).toEqual([['delivered', 200]]);
  });

  it('pages through the records newest first with an opaque cursor', async () => {
    const all = (await listAll()).executions;
    expect(all.length).toBeGreaterThan(3);
    const paged: Execution[] = [];
    let cursor: string | null = null;
    do {
      const page = (await api.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)).data as { executions: Execution[]; nextCursor: string | null };
      expect(page.executions.length).toBeLessThanOrEqual(2);
      paged.push(...page.executions);
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged.map((x) => x.id)).toEqual(all.map((x) => x.id));
    expect(all.map((x) => BigInt(x.id))).toEqual(all.map((x) => BigInt(x.id)).toSorted((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    const bad = await api.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}&cursor=not-one-of-ours`);
    expect(bad.statusCode).toBe(400);
  });
});

describe('tenancy', () => {
  it("refuses another account's workspace and endpoints", async () => {
    const created = await createEndpoint('/ok', ['tenancy.check']);
    const stranger = devClient(app, (await accountWithToken(db.pool, 'team')).token);
    expect((await stranger.request('GET', `/api/dev/automation/endpoints?workspaceId=${workspaceId}`)).data.code).toBe('workspace_not_found');
    expect((await stranger.request('GET', `/api/dev/automation/executions?workspaceId=${workspaceId}`)).data.code).toBe('workspace_not_found');
    expect((await stranger.request('DELETE', `/api/dev/automation/endpoints/${created.data.id}`)).statusCode).toBe(404);
    expect((await stranger.request('GET', `/api/dev/automation/endpoints/${created.data.id}`)).statusCode).toBe(404);
    expect((await stranger.request('POST', '/api/dev/automation/endpoints', { body: { workspaceId, url: `${base}/x`, eventTypes: ['*'] } })).data.code).toBe('workspace_not_found');
    expect((await api.request('DELETE', `/api/dev/automation/endpoints/${created.data.id}`)).statusCode).toBe(204);
  });
});

describe('SSRF', () => {
  const none = { allowList: [] as string[] };
  it.each([
    ['the metadata service', 'http://169.254.169.254/latest/meta-data'],
    ['a private address', 'https://10.0.0.1/hook'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]:8443/hook'],
    ['a hostname resolving to loopback', 'https://localhost/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['IPv4-compatible IPv6 loopback', 'https://[::7f00:1]/hook'],
    ['6to4 of a private address', 'https://[2002:a00:1::1]/hook'],
    ['plain http to a public name', 'http://example.com/hook'],
    ['credentials in the URL', 'https://user:pass@example.com/hook'],
  ])('refuses %s at creation when not allow-listed', async (_label, url) => {
    await expect(checkWebhookUrl(url, none)).rejects.toMatchObject({ code: 'invalid_request', extensions: { errors: [{ code: 'url_not_allowed' }] } });
  });

  it('refuses through the API too', async () => {
    const app2 = await buildTestApp(db.pool, { secretBox });
    try {
      const owner = await accountWithToken(db.pool, 'team');
      const ws = await createWorkspace(db.pool, { name: 'No egress', ownerAccountId: owner.account.id });
      const res = await devClient(app2, owner.token).request('POST', '/api/dev/automation/endpoints', { body: { workspaceId: ws.id, url: `${base}/x`, eventTypes: ['*'] } });
      expect(res.statusCode).toBe(400);
      expect(res.data.errors[0]).toMatchObject({ pointer: '/body/url', code: 'url_not_allowed' });
    } finally {
      await app2.close();
    }
  });

  it('checks again at connect time, so an address that is not allowed now is refused on delivery', async () => {
    await expect(postJson(new URL(`${base}/ok`), '{}', {}, none)).rejects.toMatchObject({ code: 'EGRESS_REFUSED' });
    await expect(postJson(new URL(`${base.replace('127.0.0.1', 'localhost')}/ok`), '{}', {}, none)).rejects.toMatchObject({ code: 'EGRESS_REFUSED' });
    expect((await postJson(new URL(`${base}/ok`), '{}', {}, egress)).status).toBe(200);
  });

  it('bounds a delivery: an absolute deadline against a trickling receiver, and a capped response body', async () => {
    const slow = createServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 50); // never idle for long, never finished
      res.on('close', () => clearInterval(timer));
    });
    const big = createServer((_req, res) => {
      res.writeHead(200);
      res.end('x'.repeat(1_000_000));
    });
    await Promise.all([slow, big].map((srv) => new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))));
    const url = (srv: Server) => new URL(`http://127.0.0.1:${(srv.address() as { port: number }).port}/`);
    try {
      const started = performance.now();
      await expect(postJson(url(slow), '{}', {}, egress, { timeoutMs: 400 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
      expect(performance.now() - started).toBeLessThan(3_000);
      const capped = await postJson(url(big), '{}', {}, egress, { maxResponseBytes: 1024 });
      expect(capped.body.length).toBeLessThanOrEqual(1024);
    } finally {
      slow.closeAllConnections();
      slow.close();
      big.close();
    }
  });

  it('binds a sealed secret to its record', () => {
    const sealed = secretBox.seal('whsec_abc', 'webhook_endpoint:1');
    expect(secretBox.open(sealed, 'webhook_endpoint:1')).toBe('whsec_abc');
    expect(() => secretBox.open(sealed, 'webhook_endpoint:2')).toThrow();
  });

  it('classifies addresses', () => {
    for (const blocked of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:10.0.0.1', '224.0.0.1']) {
      expect(addressProblem(blocked, none), blocked).not.toBeNull();
    }
    for (const open of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(addressProblem(open, none), open).toBeNull();
  });
});
