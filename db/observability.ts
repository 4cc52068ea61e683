// What the pool shows operators (docs/observability.md): a span per SQL statement and the query
// duration histogram, from one slonik interceptor (slonik's documented extension point), and the
// pool's connections as gauges. The statement is identified by its SQL template: slonik sends every
// value as a bind parameter ($1, $2…), so the text never holds one; parameters are not recorded.
//
// Why not @opentelemetry/instrumentation-pg: it patches `pg` when it is first required, which our
// ESM entry points (`node api/main.ts`) would have to arrange with a preloaded --import hook; the
// interceptor sees the same statements, with slonik's query id and no load-order trap.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { DatabasePool, Interceptor } from 'slonik';

/** The statement's command, lower case (select, insert, update, delete, with, begin…): a low-cardinality label. */
export function statementOperation(sqlText: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(sqlText);
  const word = match?.[1]?.toLowerCase() ?? 'other';
  return knownOperations.has(word) ? word : 'other';
}
const knownOperations = new Set(['select', 'insert', 'update', 'delete', 'with', 'begin', 'commit', 'rollback', 'savepoint', 'release', 'set', 'copy', 'lock', 'notify', 'listen', 'unlisten', 'refresh', 'analyze']);

// Long statements are cut: a span attribute is not the place for a 20 KB migration.
const STATEMENT_LIMIT = 2_000;

const tracer = trace.getTracer('hosted-notes-platform/db');

/** One interceptor for the statement span (when `traces`) and the duration histogram (when `registry`). */
export function observeQueries(options: { registry?: Registry | null; traces?: boolean }): Interceptor {
  const histogram = options.registry
    ? new Histogram({
        name: 'hnp_db_query_duration_seconds',
        help: 'Time from sending a SQL statement to its result (connection acquisition excluded), by statement command.',
        labelNames: ['operation'],
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
        registers: [options.registry],
      })
    : null;
  // Label children cached per operation: an observation is then a map look-up, not a label hash.
  const byOperation = new Map<string, ReturnType<Histogram['labels']>>();
  const traces = options.traces === true;
  const started = (sandbox: Record<string, unknown>) => sandbox['observeStartedAt'] as bigint | undefined;
  const finish = (sandbox: Record<string, unknown>, error: Error | null) => {
    const at = started(sandbox);
    if (histogram && at !== undefined) {
      const operation = sandbox['observeOperation'] as string;
      let child = byOperation.get(operation);
      if (!child) byOperation.set(operation, (child = histogram.labels({ operation })));
      child.observe(Number(process.hrtime.bigint() - at) / 1e9);
    }
    const span = sandbox['observeSpan'] as Span | undefined;
    if (span) {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.name });
      span.end();
    }
  };
  return {
    name: 'observe-queries',
    beforeQueryExecution: (queryContext, query) => {
      const operation = statementOperation(query.sql);
      queryContext.sandbox['observeOperation'] = operation;
      queryContext.sandbox['observeStartedAt'] = process.hrtime.bigint();
      // Only inside a trace (as instrumentation-pg's requireParentSpan): the relay's and the sweeps'
      // background polls would otherwise be a one-span trace each, every few seconds.
      const parent = traces ? trace.getSpan(context.active()) : undefined;
      if (parent) {
        queryContext.sandbox['observeSpan'] = tracer.startSpan(
          `pg ${operation}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'db.system': 'postgresql',
              'db.operation': operation,
              'db.statement': query.sql.length > STATEMENT_LIMIT ? `${query.sql.slice(0, STATEMENT_LIMIT)}…` : query.sql,
            },
          },
          context.active(),
        );
      }
      return null;
    },
    afterQueryExecution: (queryContext) => {
      finish(queryContext.sandbox, null);
      return null;
    },
    queryExecutionError: (queryContext, _query, error) => {
      finish(queryContext.sandbox, error);
      return null;
    },
  };
}

/** The pool's connections (in use, idle), callers waiting for one, and its size, read when scraped. */
export function registerPoolMetrics(registry: Registry, pool: DatabasePool): void {
  new Gauge({
    name: 'hnp_db_pool_connections',
    help: 'Connections of this process\'s Postgres pool by state: in_use (checked out by a query or transaction) or idle.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const state = pool.state();
      this.set({ state: 'in_use' }, state.acquiredConnections);
      this.set({ state: 'idle' }, state.idleConnections);
    },
  });
  new Gauge({
    name: 'hnp_db_pool_waiting_requests',
    help: 'Callers waiting for a connection of this process\'s Postgres pool (above 0 for long: the pool is saturated).',
    registers: [registry],
    collect() {
      this.set(pool.state().waitingClients);
    },
  });
  new Gauge({
    name: 'hnp_db_pool_max_connections',
    help: 'The size of this process\'s Postgres pool (DATABASE_POOL_SIZE).',
    registers: [registry],
    collect() {
      this.set(pool.configuration.maxPoolSize ?? 10); // slonik's default size
    },
  });
}
