// Metered intelligence as metrics (docs/intelligence.md, "The bounded cost"): what providers
// reported beyond the reservations this month, per organization (ids, never names). Read from the
// ledger when scraped, so every API process reports the same figures: aggregate with max(), not sum().
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { overrunsThisMonth } from '../../domain/intelligence/ledger.ts';

export function registerIntelligenceMetrics(registry: Registry, db: DatabasePool): void {
  // The registry collects every metric at once: both gauges share one query per scrape.
  let scrape: ReturnType<typeof overrunsThisMonth> | null = null;
  const rows = () =>
    (scrape ??= overrunsThisMonth(db).finally(() => {
      setTimeout(() => (scrape = null), 0);
    }));
  new Gauge({
    name: 'hnp_intelligence_overrun_dollars',
    help: 'What providers reported beyond the reservations this month, in US dollars, per organization: absorbed by the service, never charged to the budget.',
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const found = await rows();
      this.reset();
      for (const row of found) this.set({ organization_id: row.organizationId }, row.overrunMicrodollars / 1_000_000);
    },
  });
  new Gauge({
    name: 'hnp_intelligence_overrun_requests',
    help: 'Requests this month whose provider reported more usage than they reserved (charged at the reservation; the rest absorbed), per organization.',
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const found = await rows();
      this.reset();
      for (const row of found) this.set({ organization_id: row.organizationId }, row.requests);
    },
  });
}
