// The domain's own figures as Prometheus metrics (issue 26), read from Postgres when scraped
// (domain/operations-metrics.ts): pending workflow starts and the oldest one's age, proposals by
// state, Forge executions and webhook requests by outcome, intelligence reservations by state, and
// per organization (its id, never a name; only organizations with activity this month, or stored
// media) the share used of the intelligence budget, the monthly operation quota and the media storage
// cap; then OAuth attempts by outcome and live reviewer console sessions.
//
// The figures are the database's, not the process's: every API process reports the same values, so
// aggregate across processes with max() (or pick one instance), never sum(). The `_total` counters
// are counts of rows that only grow in normal operation; deleting a workspace, an endpoint or an
// organization removes its rows, which Prometheus reads as a counter reset (a spike in rate()).
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { MAX_DELIVERY_ATTEMPTS } from '../../domain/automation/webhooks.ts';
import { proposalStates } from '../../domain/automation/proposal-states.ts';
import { reservationStates } from '../../domain/intelligence/ledger.ts';
import { readOperationsSnapshot } from '../../domain/operations-metrics.ts';
import type { OperationsSnapshot } from '../../domain/operations-metrics.ts';

/** Label values emitted even at zero, so an alert sees 0 rather than an absent series. */
const forgeOutcomes = ['succeeded', 'failed'] as const;
const webhookOutcomes = ['delivered', 'failed', 'refused', 'gone', 'skipped', 'unknown'] as const;
const webhookAttempts = Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (_, i) => String(i + 1));
const oauthOutcomes = ['completed', 'failed', 'expired'] as const;

/** Counts by one label: every known value (0 when absent), plus any the database has beyond them. */
function countsOf(known: readonly string[], rows: readonly { key: string; n: number }[]): Map<string, number> {
  const counts = new Map<string, number>(known.map((k) => [k, 0]));
  for (const row of rows) counts.set(row.key, (counts.get(row.key) ?? 0) + row.n);
  return counts;
}

export function registerDomainMetrics(registry: Registry, db: DatabasePool): void {
  // The registry collects every metric at once: they all share one snapshot (one connection, each
  // statement once) per scrape.
  let scrape: Promise<OperationsSnapshot> | null = null;
  const snapshot = () =>
    (scrape ??= db.connect((connection) => readOperationsSnapshot(connection)).finally(() => {
      setTimeout(() => (scrape = null), 0);
    }));

  new Gauge({
    name: 'hnp_workflow_starts_pending',
    help: 'Workflow starts recorded (the outbox) but not yet made in Temporal.',
    registers: [registry],
    async collect() {
      const { starts } = await snapshot();
      this.reset();
      this.set(starts.pending);
    },
  });
  new Gauge({
    name: 'hnp_workflow_starts_oldest_pending_age_seconds',
    help: 'How long the oldest pending workflow start has waited, in seconds (0 when none is pending).',
    registers: [registry],
    async collect() {
      const { starts } = await snapshot();
      this.reset();
      this.set(starts.oldestAgeSeconds);
    },
  });
  new Gauge({
    name: 'hnp_proposals',
    help: 'Automation action proposals by state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { proposals } = await snapshot();
      this.reset();
      for (const [state, n] of countsOf(proposalStates, proposals.map((r) => ({ key: r.state, n: r.n })))) this.set({ state }, n);
    },
  });
  new Counter({
    name: 'hnp_forge_executions_total',
    help: 'Forge executions (apply and undo) that ended, by outcome.',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      const { forgeExecutions } = await snapshot();
      this.reset();
      for (const [outcome, n] of countsOf(forgeOutcomes, forgeExecutions.map((r) => ({ key: r.outcome, n: r.n })))) this.inc({ outcome }, n);
    },
  });
  new Counter({
    name: 'hnp_webhook_deliveries_total',
    help: `Webhook delivery requests by outcome and delivery attempt (1 to ${MAX_DELIVERY_ATTEMPTS}); a request still in flight is counted when it ends, one whose worker stopped as unknown.`,
    labelNames: ['outcome', 'attempt'],
    registers: [registry],
    async collect() {
      const { webhookDeliveries } = await snapshot();
      this.reset();
      for (const outcome of webhookOutcomes) for (const attempt of webhookAttempts) this.inc({ outcome, attempt }, 0);
      for (const row of webhookDeliveries) this.inc({ outcome: row.outcome, attempt: String(row.attempt) }, row.n);
    },
  });
  new Gauge({
    name: 'hnp_intelligence_reservations',
    help: 'Intelligence reservations by state (reserved and dispatched are in flight).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { reservations } = await snapshot();
      this.reset();
      for (const [state, n] of countsOf(reservationStates, reservations.map((r) => ({ key: r.state, n: r.n })))) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'hnp_intelligence_budget_used_ratio',
    help: "This month's committed intelligence spend (requests in flight included at their reservation) over the organization's monthly budget, per organization with a budget and spend this month.",
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const { intelligenceBudget } = await snapshot();
      this.reset();
      for (const row of intelligenceBudget) this.set({ organization_id: row.organizationId }, row.ratio);
    },
  });
  new Gauge({
    name: 'hnp_operation_quota_used_ratio',
    help: "This month's Product Runtime operations over the organization's apiOperationsPerMonth, per organization with operations this month.",
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const { operationQuota } = await snapshot();
      this.reset();
      for (const row of operationQuota) this.set({ organization_id: row.organizationId }, row.ratio);
    },
  });
  new Gauge({
    name: 'hnp_media_storage_used_bytes',
    help: 'Media bytes the organization holds (uploads in progress included), per organization holding any.',
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const { mediaStorage } = await snapshot();
      this.reset();
      for (const row of mediaStorage) this.set({ organization_id: row.organizationId }, row.used);
    },
  });
  new Gauge({
    name: 'hnp_media_storage_used_ratio',
    help: "Media bytes the organization holds over its mediaStorageBytes cap, per organization holding any.",
    labelNames: ['organization_id'],
    registers: [registry],
    async collect() {
      const { mediaStorage } = await snapshot();
      this.reset();
      for (const row of mediaStorage) this.set({ organization_id: row.organizationId }, row.ratio);
    },
  });
  new Counter({
    name: 'hnp_oauth_attempts_total',
    help: 'OAuth connection attempts that ended, by outcome (completed, failed, expired).',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      const { oauthAttempts } = await snapshot();
      this.reset();
      for (const [outcome, n] of countsOf(oauthOutcomes, oauthAttempts.map((r) => ({ key: r.outcome, n: r.n })))) this.inc({ outcome }, n);
    },
  });
  new Gauge({
    name: 'hnp_console_sessions',
    help: 'Live reviewer console sessions (not ended or expired, their token neither revoked nor expired).',
    registers: [registry],
    async collect() {
      const { consoleSessions } = await snapshot();
      this.reset();
      this.set(consoleSessions);
    },
  });
}
