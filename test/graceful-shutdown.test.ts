// Graceful shutdown of the API: in-flight requests finish, new ones are refused, connections that
// never sent a request are closed, then the process may release its pools.
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect, it } from 'vitest';
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
