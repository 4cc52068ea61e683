// /healthz and /readyz against real dependencies, and with each dependency unreachable.
import { sql } from 'slonik';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createDatabasePool } from '../db/pool.ts';
import { withAdminPool } from '../platform/local-stack/databases.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';
import { buildTestApp } from './support/app.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

describe('readiness', () => {
  it('is live and ready when Postgres and Temporal answer', async () => {
    const app = await buildTestApp(db.pool);
    try {
      expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'ready', checks: { postgres: { ok: true }, temporal: { ok: true } } });
    } finally {
      await app.close();
    }
  });

  it('turns unready with 503 not_ready when Postgres becomes unreachable, and ready again once it is back', async () => {
    const pool = await createDatabasePool(db.url, { maxPoolSize: 2, connectionTimeoutMs: 500 });
    const app = await buildTestApp(pool);
    const setConnections = (allow: boolean) =>
      withAdminPool(inject('pgAdminUrl'), async (admin) => {
        const database = sql.identifier([db.name]);
        await admin.query(
          allow
            ? sql.type(z.object({}))`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`
            : sql.type(z.object({}))`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`,
        );
      });
    try {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      // A real outage for this pool: new connections are refused and the open ones are cut.
      await setConnections(false);
      await withAdminPool(inject('pgAdminUrl'), (admin) =>
        admin.query(sql.type(z.object({ ok: z.boolean() }))`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = ${db.name}`),
      );
      const down = await app.inject({ method: 'GET', url: '/readyz' });
      expect(down.statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/readyz/process' })).statusCode).toBe(200);
      expect(down.headers['content-type']).toContain('application/problem+json');
      expect(down.json()).toMatchObject({ code: 'not_ready', checks: { postgres: { ok: false }, temporal: { ok: true } } });
      // liveness does not depend on the database
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      await setConnections(true);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await setConnections(true);
      await app.close();
      await pool.end();
    }
  });

  it('turns unready with 503 not_ready when Temporal is unreachable', async () => {
    const connection = lazyTemporalConnection(`127.0.0.1:${await freePort()}`);
    const app = await buildTestApp(db.pool, { temporal: { connection, namespace: 'default', taskQueue: 'unused' } });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'not_ready', checks: { postgres: { ok: true }, temporal: { ok: false } } });
      // The balancer's check is this process's alone: an outage every API shares does not take them all out.
      const processReady = await app.inject({ method: 'GET', url: '/readyz/process' });
      expect(processReady.statusCode).toBe(200);
      expect(processReady.json()).toEqual({ status: 'ready', checks: { process: { ok: true, latencyMs: 0 } } });
    } finally {
      await app.close();
      // The probe answered at the readiness timeout, but the client's gRPC retries of the check run
      // on until its own 2 s deadline; closing the channel under a pending retry throws from a timer.
      await new Promise((resolve) => setTimeout(resolve, 2_200));
      await connection.close().catch(() => undefined);
    }
  });
});
