// Prometheus metrics (platform/metrics.ts): the registry of a process served on a listener of its
// own, and the intelligence overrun gauges read from the ledger (docs/intelligence.md). Real Postgres.
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerDomainMetrics } from '../api/metrics/domain.ts';
import { completeReservation, markDispatched, reserve } from '../domain/intelligence/ledger.ts';
import { createMetricsRegistry, serveMetrics } from '../platform/metrics.ts';
import { useTestDatabase } from './support/harness.ts';
import { buildTestApp } from './support/app.ts';
import { observeQueries, registerPoolMetrics, statementOperation } from '../db/observability.ts';
import { createDatabasePool } from '../db/pool.ts';
import { interfaceOf } from '../api/metrics/http.ts';
import { setBudget } from './support/intelligence.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';

const db = useTestDatabase();
const hex = (s: string) => createHash('sha256').update(s).digest('hex');

async function settleWithReport(chain: { organizationId: string; installationId: string }, reserved: number, reported: number) {
  const workflowId = `metrics-${randomUUID()}`;
  await reserve(db.pool, {
    id: randomUUID(), organizationId: chain.organizationId, installationId: chain.installationId, operation: 'generate',
    keyHash: hex(workflowId), fingerprint: hex(workflowId), costMicrodollars: reserved, workflowId, ttlMs: 60_000, reserveBy: Date.now() + 30_000,
  });
  await markDispatched(db.pool, workflowId);
  await completeReservation(db.pool, workflowId, { kind: 'settle', costMicrodollars: reported, model: 'm', inputTokens: null, outputTokens: null, images: null });
}

describe('metrics', () => {
  it('serves the overrun gauges per organization in the Prometheus text format on a listener of their own', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const honest = await buildRuntimeChain(db.pool);
    await setBudget(db.pool, chain.organizationId, 1_000_000);
    await setBudget(db.pool, honest.organizationId, 1_000_000);
    await settleWithReport(chain, 1_000, 51_000);
    await settleWithReport(chain, 2_000, 3_500);
    await settleWithReport(honest, 2_000, 1_500);

    const registry = createMetricsRegistry({ process: 'api' });
    registerDomainMetrics(registry, db.pool);
    const listener = await serveMetrics(registry, '127.0.0.1', 0);
    try {
      const res = await fetch(listener.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      const text = await res.text();
      // 50,000 + 1,500 µ$ beyond the reservations, in dollars; two requests.
      expect(text).toContain(`hnp_intelligence_overrun_dollars{organization_id="${chain.organizationId}",process="api"} 0.0515`);
      expect(text).toContain(`hnp_intelligence_overrun_requests{organization_id="${chain.organizationId}",process="api"} 2`);
      // An organization whose provider reported honestly has no overrun series.
      expect(text.split('\n').filter((line) => line.startsWith('hnp_intelligence_overrun_') && line.includes(honest.organizationId))).toEqual([]);
      // The process's own metrics come along, under the same prefix.
      expect(text).toMatch(/^hnp_process_cpu_user_seconds_total\{process="api"\} /m);
      expect((await fetch(listener.url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await listener.close();
    }
  });
});

describe('HTTP and Postgres metrics', () => {
  it('counts responses by interface, route template, method and status class, and problems by code; never a raw path', async () => {
    const registry = createMetricsRegistry({ process: 'api' });
    const pool = await createDatabasePool(db.url, { maxPoolSize: 3, interceptors: [observeQueries({ registry })] });
    registerPoolMetrics(registry, pool);
    const app = await buildTestApp(pool, { metrics: registry });
    try {
      const id = randomUUID();
      for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: `/api/dev/automation/proposals/${id}` })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: `/api/dev/no-such-thing/${id}` })).statusCode).toBe(404);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      await pool.query(sql.type(z.object({ one: z.number() }))`SELECT 1 AS one`);
      const text = await registry.metrics();
      expect(text).toContain('hnp_http_requests_total{interface="automation",route="/api/dev/automation/proposals/:id",method="GET",status_class="4xx",process="api"} 3');
      expect(text).toContain('hnp_http_requests_total{interface="platform",route="unmatched",method="GET",status_class="4xx",process="api"} 1');
      expect(text).toContain('hnp_http_requests_total{interface="platform",route="/healthz",method="GET",status_class="2xx",process="api"} 1');
      expect(text).toContain('hnp_http_request_duration_seconds_count{process="api",interface="automation",route="/api/dev/automation/proposals/:id",method="GET",status_class="4xx"} 3');
      expect(text).toContain('hnp_http_problems_total{interface="automation",code="authentication_required",process="api"} 3');
      expect(text).toContain('hnp_http_problems_total{interface="platform",code="route_not_found",process="api"} 1');
      expect(text).not.toContain(id);
      expect(text).toMatch(/^hnp_db_query_duration_seconds_count\{process="api",operation="select"\} [1-9]/m);
      expect(text).toContain('hnp_db_pool_max_connections{process="api"} 3');
      expect(text).toMatch(/^hnp_db_pool_connections\{state="idle",process="api"\} [1-3]$/m);
    } finally {
      await app.close();
      await pool.end();
    }
  });

  it('names a statement by its command and a route by its interface', () => {
    expect(statementOperation('SELECT 1')).toBe('select');
    expect(statementOperation('  -- why\n  /* what */ with x as (select 1) select * from x')).toBe('with');
    expect(statementOperation('INSERT INTO t VALUES ($1)')).toBe('insert');
    expect(statementOperation('VACUUM t')).toBe('other');
    expect(interfaceOf('/api/dev/automation/proposals/:id')).toBe('automation');
    expect(interfaceOf('/api/dev/notes')).toBe('dev');
    expect(interfaceOf('/api/devices')).toBe('platform');
    expect(interfaceOf('/api/mcp')).toBe('mcp');
    expect(interfaceOf('/api/product/v1/capabilities')).toBe('product');
    expect(interfaceOf('/console/proposals/:id')).toBe('console');
  });
});
