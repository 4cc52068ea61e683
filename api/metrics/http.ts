// HTTP server metrics (docs/observability.md), recorded once per response at the root of the app so
// every interface is covered: request count and duration by interface, route template, method and
// status class, and problem+json answers by code. Labels are bounded: the route is Fastify's
// template (`/api/dev/automation/proposals/:id`), never the raw path; a request no route matched is
// `unmatched`. Label children are cached per label set, so a response costs two map look-ups and
// two increments (bench/README.md: metrics on vs off).
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { RUNTIME_MOUNT } from '@hosted-notes/runtime-sdk';
import type { AdmissionCacheCounts } from '../../domain/principals/admission-cache.ts';
import type { PrincipalKind } from '../../domain/principals/admission.ts';

/** The kinds of principal whose admissions a process keeps (console sessions are not kept). */
type CachedPrincipal = Exclude<PrincipalKind, 'console_session'>;

/** The interface a route template belongs to (longest prefix first: automation lives under /api/dev). */
const interfaces: [prefix: string, name: string][] = [
  ['/api/dev/automation', 'automation'],
  ['/api/dev', 'dev'],
  ['/api/mcp', 'mcp'],
  [RUNTIME_MOUNT, 'product'],
  ['/console', 'console'],
];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A response that stays open (Server-Sent Events): kept out of the duration histogram (its life is no response time). */
    longLived?: boolean;
  }
}

/** Open live streams and whether their notifications are flowing (api/routes/console/live.ts). */
export function registerLiveStreamMetrics(registry: Registry, source: { streams: () => number; listening: () => boolean }): void {
  new Gauge({ name: 'hnp_console_live_streams', help: "Reviewer console live streams (SSE) this process holds open.", registers: [registry], collect() { this.set(source.streams()); } });
  new Gauge({
    name: 'hnp_console_live_listening',
    help: "1 while this process's LISTEN connection for proposal changes is up (or not needed yet: no stream opened), 0 while it is being made again.",
    registers: [registry],
    collect() { this.set(source.listening() ? 1 : 0); },
  });
}

/**
 * How the admission caches answered (decisions 111 and 112), by kind of principal: kept admissions
 * used, none kept, and kept ones gone stale.
 */
export function registerAdmissionCacheMetrics(registry: Registry, caches: Record<CachedPrincipal, { counts: AdmissionCacheCounts; size: number }>): void {
  const kinds = Object.entries(caches) as [CachedPrincipal, (typeof caches)[CachedPrincipal]][];
  new Counter({
    name: 'hnp_admission_cache_lookups_total',
    help:
      'Admission cache look-ups by kind of principal and outcome: hit (a kept admission answered), miss (none kept), stale (the admission epoch had moved on or the ' +
      'credential had expired; admitted in full). personal_access_token: the hot note read (REST, MCP get_note_content) and the REST inventory; service_principal: every Product Runtime request.',
    labelNames: ['principal', 'outcome'],
    registers: [registry],
    collect() {
      // A Counter collected from counts the caches keep: reset, then set to the running totals.
      this.reset();
      for (const [principal, cache] of kinds) for (const outcome of ['hit', 'miss', 'stale'] as const) this.inc({ principal, outcome }, cache.counts[outcome]);
    },
  });
  new Gauge({
    name: 'hnp_admission_cache_entries',
    help: 'Admissions this process keeps, by kind of principal (a token and mapping, or a service credential and vault).',
    labelNames: ['principal'],
    registers: [registry],
    collect() {
      for (const [principal, cache] of kinds) this.set({ principal }, cache.size);
    },
  });
}

export function interfaceOf(route: string): string {
  for (const [prefix, name] of interfaces) if (route === prefix || route.startsWith(`${prefix}/`)) return name;
  return 'platform';
}

export function registerHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'hnp_http_requests_total',
    help: 'HTTP requests answered, by interface, route template, method and status class (2xx, 4xx…).',
    labelNames: ['interface', 'route', 'method', 'status_class'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'hnp_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by interface, route template, method and status class.',
    labelNames: ['interface', 'route', 'method', 'status_class'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const problems = new Counter({
    name: 'hnp_http_problems_total',
    help: 'problem+json answers by interface and stable problem code (docs/api.md, "Errors").',
    labelNames: ['interface', 'code'],
    registers: [registry],
  });
  type Children = { count: ReturnType<Counter['labels']>; duration: ReturnType<Histogram['labels']> };
  const children = new Map<string, Children>();
  // A callback hook, not an async one: no promise per response.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const statusClass = `${Math.floor(reply.statusCode / 100)}xx`;
    const key = `${request.method} ${statusClass} ${route}`;
    let child = children.get(key);
    if (!child) {
      const labels = { interface: interfaceOf(route), route, method: request.method, status_class: statusClass };
      child = { count: requests.labels(labels), duration: duration.labels(labels) };
      children.set(key, child);
    }
    child.count.inc();
    // A stream's life (the console's live updates) is not a response time.
    if (!request.routeOptions.config.longLived) child.duration.observe(reply.elapsedTime / 1000);
    if (reply.problemCode) problems.inc({ interface: interfaceOf(route), code: reply.problemCode });
    done();
  });
}
