// The app through Debian's PgBouncer in transaction mode (issue 30; installed by
// scripts/ensure-pgbouncer.sh), as a deployment behind a connection pooler runs it: consecutive
// transactions of one client connection land on different server connections. With
// DATABASE_POOLER=transaction (PoolOptions.transactionPooler) the hot paths' named prepared
// statements are made unnamed and no session setting is sent at connect; the console's LISTEN goes
// to a session connection (DATABASE_SESSION_URL). Without the setting the pool cannot even connect
// (the pooler refuses its session settings); with them left out, the named statements break under
// concurrency ("prepared statement … already exists": 3,690 of 4,438 hot reads in a trial by hand).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { startPgBouncer } from '../platform/topology/pgbouncer.ts';
import type { PgBouncer } from '../platform/topology/pgbouncer.ts';
import { buildTestApp } from './support/app.ts';
import { devClient } from './support/dev-client.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();
let pooler: PgBouncer | undefined;
let poolerUrl: string;

beforeAll(async () => {
  // Fewer server connections than the app's pool holds: transactions must share them.
  pooler = await startPgBouncer({ targetUrl: db.url, poolSize: 4, maxClientConnections: 200 });
  poolerUrl = pooler.url;
}, 120_000);

afterAll(async () => {
  await pooler?.stop();
});

/** 32 callers reading one note through the app, 200 reads in all; the statuses they got. */
async function readConcurrently(app: FastifyInstance, pool: DatabasePool): Promise<number[]> {
  const caller = await accountWithToken(pool, 'developer_agent');
  const { mappingId } = await personalMapping(pool, caller.account.id);
  const api = devClient(app, caller.token);
  const written = await api.apply({ mappingId, path: 'Pooled/Read.md', content: '# Read\n' });
  expect(written.statusCode, written.body).toBe(201);
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < 200) statuses.push((await api.request('GET', `/api/dev/notes/Pooled/Read.md?mappingId=${mappingId}`)).statusCode);
    }),
  );
  return statuses;
}

describe('through PgBouncer in transaction mode', () => {
  describe('with DATABASE_POOLER=transaction', () => {
    let pool: DatabasePool;
    let app: FastifyInstance;
    beforeAll(async () => {
      pool = await createDatabasePool(poolerUrl, { maxPoolSize: 10, transactionPooler: true });
      app = await buildTestApp(pool, { consoleLive: { databaseUrl: db.url } });
    });
    afterAll(async () => {
      await app?.close();
      await pool?.end();
    });

    it('serves 200 concurrent hot reads (the named-statement paths) without an error', async () => {
      const statuses = await readConcurrently(app, pool);
      expect(statuses).toHaveLength(200);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    });

    it('applies concurrent writes to one vault (group commit, advisory transaction locks) and idempotent replays', async () => {
      const caller = await accountWithToken(pool, 'developer_agent');
      const { mappingId } = await personalMapping(pool, caller.account.id);
      const api = devClient(app, caller.token);
      const keys = Array.from({ length: 40 }, () => randomUUID());
      const first = await Promise.all(keys.map((key, i) => api.apply({ mappingId, path: `Pooled/W${i}.md`, content: `# ${i}\n` }, { 'idempotency-key': key })));
      expect(first.map((r) => r.statusCode)).toEqual(keys.map(() => 201));
      const replays = await Promise.all(keys.map((key, i) => api.apply({ mappingId, path: `Pooled/W${i}.md`, content: `# ${i}\n` }, { 'idempotency-key': key })));
      expect(replays.map((r) => r.headers['idempotent-replayed'])).toEqual(keys.map(() => 'true'));
      const listed = await api.request('GET', `/api/dev/notes?mappingId=${mappingId}`);
      expect(listed.statusCode).toBe(200);
      expect((listed.data['notes'] as unknown[]).length).toBe(40);
    });

    it('answers MCP search and reads', async () => {
      const caller = await accountWithToken(pool, 'developer_agent');
      const { mappingId } = await personalMapping(pool, caller.account.id);
      const api = devClient(app, caller.token);
      expect((await api.apply({ mappingId, path: 'Pooled/Searchable.md', content: '# Searchable\n\nzygomorphic flowers\n' })).statusCode).toBe(201);
      const calls = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          app.inject({
            method: 'POST',
            url: '/api/mcp',
            headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json' },
            payload: { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: i % 2 ? 'search_notes' : 'get_note_content', arguments: i % 2 ? { mappingId, query: 'zygomorphic' } : { mappingId, path: 'Pooled/Searchable.md' } } },
          }),
        ),
      );
      for (const call of calls) {
        expect(call.statusCode, call.body).toBe(200);
        expect(call.json().result?.isError ?? false, call.body).toBe(false);
      }
    });
  });

  it('without the setting the pool cannot even connect: the pooler refuses the session settings it would send', async () => {
    await expect(createDatabasePool(poolerUrl, { maxPoolSize: 1 })).rejects.toThrow(/unsupported startup parameter/);
  });
});
