// The production topology on one machine (issue 30, docs/topology.md): HAProxy in front of N API
// processes, M workers, PgBouncer in transaction mode between all of them and Postgres, Temporal at
// TEMPORAL_ADDRESS. Every process is the real entry point with the configuration a deployment gives
// it; nothing a request needs lives in one API's memory, so any API may answer any request.
// Used by `npm run topology` (scripts/topology.ts), its test and `npm run bench -- --suite scale`.
import { freePort } from '../local-stack/ports.ts';
import { temporalTlsSettings } from '../temporal.ts';
import { DRAIN_MS, startBalancer } from './haproxy.ts';
import type { Balancer } from './haproxy.ts';
import { startPgBouncer } from './pgbouncer.ts';
import type { PgBouncer } from './pgbouncer.ts';
import { spawnPlatformProcess, waitFor } from './processes.ts';
import type { PlatformProcess } from './processes.ts';

export type ApiProcess = PlatformProcess & { url: string; metricsUrl: string };
export type WorkerProcess = PlatformProcess & { metricsUrl: string };

export type Topology = {
  /** The load balancer: where clients send every request. */
  url: string;
  balancer: Balancer;
  pooler: PgBouncer;
  apis: ApiProcess[];
  workers: WorkerProcess[];
  /** Stops everything: the balancer, the APIs (drained), the workers, the pooler. */
  stop: () => Promise<void>;
};

export type TopologyOptions = {
  /** Postgres, reached directly (migrations, LISTEN); the processes' pool goes through PgBouncer. */
  databaseUrl: string;
  temporalAddress: string;
  apis: number;
  workers: number;
  /** More environment for every process (secrets, providers, allowances, TEMPORAL_* TLS…). */
  env?: Record<string, string>;
  port?: number;
  /** PgBouncer's server connections (default 20: below the processes' pools together, as in a deployment). */
  poolerServerConnections?: number;
  /** Each API's drain on SIGTERM (default DRAIN_MS: one check more than the balancer needs to mark it down). */
  drainMs?: number;
  onLine?: (process: string, line: string) => void;
  /**
   * Temporal is a server the caller started (a dev server, plaintext): the TEMPORAL_* TLS settings of
   * the caller's environment are not passed on (they are for the deployment's Temporal).
   */
  plaintextTemporal?: boolean;
  /** Every process in its own process group (scripts/topology.ts: a terminal's Ctrl-C reaches only the script, which stops them in order). */
  detached?: boolean;
};

export async function startTopology(options: TopologyOptions): Promise<Topology> {
  let balancer: Balancer | undefined;
  let pooler: PgBouncer | undefined;
  const apis: ApiProcess[] = [];
  const workers: WorkerProcess[] = [];
  // The balancer first (no new request reaches an API about to drain), then the APIs (drained, in
  // parallel), then the workers (their activities finish or are handed back), then the pooler.
  const stopAll = async () => {
    await balancer?.stop().catch(() => undefined);
    await Promise.all(apis.map((api) => api.stop()));
    await Promise.all(workers.map((worker) => worker.stop()));
    await pooler?.stop().catch(() => undefined);
  };
  try {
    const detached = options.detached ?? false;
    pooler = await startPgBouncer({ targetUrl: options.databaseUrl, poolSize: options.poolerServerConnections ?? 20, detached });
    const common: Record<string, string> = {
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      ...(options.plaintextTemporal ? Object.fromEntries(temporalTlsSettings.map((name) => [name, ''])) : {}),
      ...options.env,
      DATABASE_URL: pooler.url,
      DATABASE_POOLER: 'transaction',
      DATABASE_SESSION_URL: options.databaseUrl,
      TEMPORAL_ADDRESS: options.temporalAddress,
      METRICS_HOST: '127.0.0.1',
    };
    // Ports are picked free, but another process may take one before the child binds it: a child
    // that exits on EADDRINUSE is started again on other ports (the pick is the race, not the child).
    const spawnWorker = async (i: number): Promise<WorkerProcess> => {
      const metricsPort = await freePort();
      const worker = spawnPlatformProcess(`worker-${i}`, 'workers/main.ts', { ...common, METRICS_PORT: String(metricsPort) }, { onLine: options.onLine, detached });
      return { ...worker, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
    };
    const spawnApi = async (i: number): Promise<ApiProcess> => {
      const [port, metricsPort] = [await freePort(), await freePort()];
      const api = spawnPlatformProcess(
        `api-${i}`,
        'api/main.ts',
        { ...common, PORT: String(port), METRICS_PORT: String(metricsPort), SHUTDOWN_DRAIN_MS: String(options.drainMs ?? DRAIN_MS) },
        { onLine: options.onLine, detached },
      );
      return { ...api, url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
    };
    // A worker is up once the Temporal Core SDK reports its workflow-task pollers (its own metrics, served on the worker's page).
    const polling = async (worker: WorkerProcess) => /^temporal_num_pollers\{[^}]*poller_type="workflow_task"[^}]*\} [1-9]/m.test(await (await fetch(worker.metricsUrl)).text());
    const ready = async (api: ApiProcess) => (await fetch(`${api.url}/readyz`)).ok;
    for (let i = 1; i <= options.workers; i++) workers.push(await spawnWorker(i));
    for (let i = 1; i <= options.apis; i++) apis.push(await spawnApi(i));
    const untilUp = async <P extends PlatformProcess>(list: P[], index: number, what: string, up: (p: P) => Promise<boolean>, respawn: (i: number) => Promise<P>) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await waitFor(`${list[index]!.name} ${what}`, () => up(list[index]!), 90_000, list[index]!);
        } catch (error) {
          if (list[index]!.child.exitCode === null) throw error;
          await list[index]!.closed;
          const lost = list[index]!.output.some((line) => line.includes('EADDRINUSE'));
          if (!lost || attempt === 3) throw error;
          list[index] = await respawn(index + 1);
        }
      }
    };
    for (let i = 0; i < apis.length; i++) await untilUp(apis, i, 'ready', ready, spawnApi);
    for (let i = 0; i < workers.length; i++) await untilUp(workers, i, 'polling', polling, spawnWorker);
    balancer = await startBalancer({
      servers: apis.map((api) => ({ name: api.name, address: new URL(api.url).host })),
      ...(options.port !== undefined ? { port: options.port } : {}),
      detached,
    });
    const running = balancer;
    await waitFor('every API in rotation', async () => (await running.servers()).every((s) => s.status === 'UP'), 30_000);
    return {
      url: balancer.url,
      balancer,
      pooler,
      apis,
      workers,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
