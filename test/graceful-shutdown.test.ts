// Graceful shutdown of the API: in-flight requests finish, new ones are refused, connections that
// never sent a request are closed, then the process may release its pools.
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect, inject, it } from 'vitest';
import { startApi } from '../api/compose.ts';
import { loadConfig } from '../platform/config.ts';
import { buildTestApp } from './support/app.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

it('lets an in-flight request finish when the server closes, and refuses new connections', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const app = await buildTestApp(db.pool, {}, (probe) => {
    probe.get('/__probe/slow', async () => {
      entered();
      await gate;
      return { finished: true };
    });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const inFlight = fetch(`${base}/__probe/slow`);
  await inside;
  const closing = app.close();
  // The listener stops accepting at once; the in-flight request is still being served.
  await expect(fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  release();
  const res = await inFlight;
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ finished: true });
  await closing;
});

it('closes a connection that never sent a request (a browser preconnect) at once instead of waiting for its headers timeout', async () => {
  const app = await buildTestApp(db.pool);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const silent = connect({ host: '127.0.0.1', port });
  await once(silent, 'connect');
  const closedByServer = once(silent, 'close');
  // Node counts such a connection as busy until headersTimeout (60 s): close() would wait that long,
  // far past this test's timeout, without the app's preClose rule.
  await app.close();
  await closedByServer;
  expect(silent.bytesWritten).toBe(0);
});

it('drains before closing when SHUTDOWN_DRAIN_MS is set: /readyz answers 503 `draining` while requests are still served, then the listener closes', async () => {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', SHUTDOWN_DRAIN_MS: '1500' });
  const api = await startApi(config, db.url, inject('temporalAddress'));
  expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
  expect((await fetch(`${api.url}/readyz/process`)).status).toBe(200);
  const closing = api.close();
  // A second signal (or caller) joins the shutdown under way instead of closing twice.
  expect(api.close()).toBe(closing);
  const closed = closing.then(() => performance.now());
  const drainingAt = performance.now();
  const ready = await fetch(`${api.url}/readyz`);
  expect(ready.status).toBe(503);
  expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await ready.json()).toMatchObject({ code: 'not_ready', checks: { draining: { ok: false } } });
  // What the balancer checks says the same.
  const processReady = await fetch(`${api.url}/readyz/process`);
  expect(processReady.status).toBe(503);
  expect(await processReady.json()).toMatchObject({ code: 'not_ready', checks: { draining: { ok: false } } });
  // Still serving: liveness, and a route that reaches Postgres.
  expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  const unauthenticated = await fetch(`${api.url}/api/dev/workspaces`);
  expect(unauthenticated.status).toBe(401);
  // The listener closes only after the drain.
  expect((await closed) - drainingAt).toBeGreaterThan(1_000);
  await expect(fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
});
