// The domain's own figures as Prometheus metrics (issue 26), read from Postgres when scraped
// (domain/operations-metrics.ts): pending workflow starts and the oldest one's age, notes waiting for
// the substring index and the oldest one's age, proposals by
// state, Forge executions and webhook requests by outcome, intelligence reservations by state, and
// per organization (its id, never a name; only organizations with activity this month, or stored
// media) the share used of the intelligence budget, the monthly operation quota and the media storage
// cap, and the intelligence overrun (docs/intelligence.md); then OAuth attempts by outcome and live
// reviewer console sessions.
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

type Series = [labels: Record<string, string>, value: number][];
type DomainMetric = { name: string; help: string; type: 'gauge' | 'counter'; labelNames?: string[]; series: (snapshot: OperationsSnapshot) => Series };

const byLabel = (label: string, counts: Map<string, number>): Series => [...counts].map(([value, n]) => [{ [label]: value }, n]);
const perOrganization = <T extends { organizationId: string }>(rows: readonly T[], value: (row: T) => number): Series =>
  rows.map((row) => [{ organization_id: row.organizationId }, value(row)]);

/** Each metric: its name, help and type, and how its series come out of one snapshot. */
const domainMetrics: DomainMetric[] = [
  {
    name: 'hnp_workflow_starts_pending',
    help: 'Workflow starts recorded (the outbox) but not yet made in Temporal.',
    type: 'gauge',
    series: ({ starts }) => [[{}, starts.pending]],
  },
  {
    name: 'hnp_workflow_starts_oldest_pending_age_seconds',
    help: 'How long the oldest pending workflow start has waited, in seconds (0 when none is pending).',
    type: 'gauge',
    series: ({ starts }) => [[{}, starts.oldestAgeSeconds]],
  },
  {
    name: 'hnp_substring_index_queued_notes',
    help: 'Notes written but not yet in search\'s trigram and word indexes (searches read them directly meanwhile).',
    type: 'gauge',
    series: ({ substringQueue }) => [[{}, substringQueue.queued]],
  },
  {
    name: 'hnp_substring_index_oldest_queued_age_seconds',
    help: 'How long the oldest note waiting for search\'s indexes has waited, in seconds (0 when none).',
    type: 'gauge',
    series: ({ substringQueue }) => [[{}, substringQueue.oldestAgeSeconds]],
  },
  {
    name: 'hnp_proposals',
    help: 'Automation action proposals by state.',
    type: 'gauge',
    labelNames: ['state'],
    series: ({ proposals }) => byLabel('state', countsOf(proposalStates, proposals.map((r) => ({ key: r.state, n: r.n })))),
  },
  {
    name: 'hnp_forge_executions_total',
    help: 'Forge executions (apply and undo) that ended, by outcome.',
    type: 'counter',
    labelNames: ['outcome'],
    series: ({ forgeExecutions }) => byLabel('outcome', countsOf(forgeOutcomes, forgeExecutions.map((r) => ({ key: r.outcome, n: r.n })))),
  },
  {
    name: 'hnp_webhook_deliveries_total',
    help: `Webhook delivery requests by outcome and delivery attempt (1 to ${MAX_DELIVERY_ATTEMPTS}); a request still in flight is counted when it ends, one whose worker stopped as unknown.`,
    type: 'counter',
    labelNames: ['outcome', 'attempt'],
    series: ({ webhookDeliveries }) => {
      const counts = new Map<string, number>(webhookOutcomes.flatMap((outcome) => webhookAttempts.map((attempt) => [`${outcome} ${attempt}`, 0] as const)));
      for (const row of webhookDeliveries) counts.set(`${row.outcome} ${row.attempt}`, (counts.get(`${row.outcome} ${row.attempt}`) ?? 0) + row.n);
      return [...counts].map(([key, n]) => {
        const [outcome = '', attempt = ''] = key.split(' ');
        return [{ outcome, attempt }, n];
      });
    },
  },
  {
    name: 'hnp_intelligence_reservations',
    help: 'Intelligence reservations by state (reserved and dispatched are in flight).',
    type: 'gauge',
    labelNames: ['state'],
    series: ({ reservations }) => byLabel('state', countsOf(reservationStates, reservations.map((r) => ({ key: r.state, n: r.n })))),
  },
  {
    name: 'hnp_intelligence_budget_used_ratio',
    help: "This month's committed intelligence spend (requests in flight included at their reservation) over the organization's monthly budget, per organization with a budget and spend this month.",
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ intelligenceBudget }) => perOrganization(intelligenceBudget, (row) => row.ratio),
  },
  {
    name: 'hnp_operation_quota_used_ratio',
    help: "This month's Product Runtime operations over the organization's apiOperationsPerMonth, per organization with operations this month.",
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ operationQuota }) => perOrganization(operationQuota, (row) => row.ratio),
  },
  {
    name: 'hnp_media_storage_used_bytes',
    help: 'Media bytes the organization holds (uploads in progress included), per organization holding any.',
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ mediaStorage }) => perOrganization(mediaStorage, (row) => row.used),
  },
  {
    name: 'hnp_media_storage_used_ratio',
    help: 'Media bytes the organization holds over its mediaStorageBytes cap, per organization holding any.',
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ mediaStorage }) => perOrganization(mediaStorage, (row) => row.ratio),
  },
  {
    name: 'hnp_oauth_attempts_total',
    help: 'OAuth connection attempts that ended, by outcome (completed, failed, expired).',
    type: 'counter',
    labelNames: ['outcome'],
    series: ({ oauthAttempts }) => byLabel('outcome', countsOf(oauthOutcomes, oauthAttempts.map((r) => ({ key: r.outcome, n: r.n })))),
  },
  {
    name: 'hnp_intelligence_overrun_dollars',
    help: 'What providers reported beyond the reservations this month, in US dollars, per organization: absorbed by the service, never charged to the budget.',
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ intelligenceOverruns }) => perOrganization(intelligenceOverruns, (row) => row.overrunMicrodollars / 1_000_000),
  },
  {
    name: 'hnp_intelligence_overrun_requests',
    help: 'Requests this month whose provider reported more usage than they reserved (charged at the reservation; the rest absorbed), per organization.',
    type: 'gauge',
    labelNames: ['organization_id'],
    series: ({ intelligenceOverruns }) => perOrganization(intelligenceOverruns, (row) => row.requests),
  },
  {
    name: 'hnp_console_sessions',
    help: 'Live reviewer console sessions (not ended or expired, their token neither revoked nor expired).',
    type: 'gauge',
    series: ({ consoleSessions }) => [[{}, consoleSessions]],
  },
];

export function registerDomainMetrics(registry: Registry, db: DatabasePool): void {
  // The registry collects every metric at once: they all share one snapshot (one connection, each
  // statement once) per scrape.
  let scrape: Promise<OperationsSnapshot> | null = null;
  const snapshot = () =>
    (scrape ??= db.connect((connection) => readOperationsSnapshot(connection)).finally(() => {
      setTimeout(() => (scrape = null), 0);
    }));
  for (const metric of domainMetrics) {
    const options = { name: metric.name, help: metric.help, labelNames: metric.labelNames ?? [], registers: [registry] };
    // Counters are counts of rows: reset, then set by incrementing from zero (prom-client counters have no set()).
    if (metric.type === 'counter') {
      new Counter({
        ...options,
        async collect() {
          const series = metric.series(await snapshot());
          this.reset();
          for (const [labels, value] of series) this.inc(labels, value);
        },
      });
    } else {
      new Gauge({
        ...options,
        async collect() {
          const series = metric.series(await snapshot());
          this.reset();
          for (const [labels, value] of series) this.set(labels, value);
        },
      });
    }
  }
}
