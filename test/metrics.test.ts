// Prometheus metrics (platform/metrics.ts): the registry of a process served on a listener of its
// own, and the intelligence overrun gauges read from the ledger (docs/intelligence.md). Real Postgres.
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { registerIntelligenceMetrics } from '../api/metrics/intelligence.ts';
import { completeReservation, markDispatched, reserve } from '../domain/intelligence/ledger.ts';
import { createMetricsRegistry, serveMetrics } from '../platform/metrics.ts';
import { useTestDatabase } from './support/harness.ts';
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
    registerIntelligenceMetrics(registry, db.pool);
    const listener = await serveMetrics(registry, '127.0.0.1', 0);
    try {
      const res = await fetch(listener.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      const text = await res.text();
      // 50,000 + 1,500 µ$ beyond the reservations, in dollars; two requests.
      expect(text).toContain(`hnp_intelligence_overrun_dollars{organization_id="${chain.organizationId}",process="api"} 0.0515`);
      expect(text).toContain(`hnp_intelligence_overrun_requests{organization_id="${chain.organizationId}",process="api"} 2`);
      // An organization whose provider reported honestly has no series.
      expect(text).not.toContain(honest.organizationId);
      // The process's own metrics come along, under the same prefix.
      expect(text).toMatch(/^hnp_process_cpu_user_seconds_total\{process="api"\} /m);
      expect((await fetch(listener.url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await listener.close();
    }
  });
});
