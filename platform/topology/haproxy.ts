// Debian's HAProxy in front of the API processes; its rules and why are docs/topology.md's "The load
// balancer" (decision 100). In short: round robin over the processes /readyz/process calls ready
// (this process only: never a dependency every process shares), so an API that drains on SIGTERM is
// out of rotation before its listener closes; only a connection that could not be made is retried,
// on another server. Every answer names the server that gave it (X-Served-By).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { canConnect, freePort } from '../local-stack/ports.ts';
import { spawnOwned, stopChild } from './processes.ts';
import { ensureTool } from './tools.ts';

/** A server of the backend: by name and address, or (docker-compose) a `server-template` line's arguments resolved by DNS. */
export type BalancedServer = { name: string; address: string } | { template: string };

/** One server's line of the stats page: HAProxy's state (UP, DOWN, NOLB, MAINT, DRAIN…) and what it served. */
export type ServerStats = { name: string; status: string; requests: number; responses5xx: number };

export type Balancer = {
  url: string;
  statsUrl: string;
  /** The backend's servers as HAProxy sees them now. */
  servers: () => Promise<ServerStats[]>;
  /** Requests the frontend took, and the 5xx answers it gave (its own 502/503/504 included). */
  frontend: () => Promise<{ requests: number; responses5xx: number }>;
  /** Connections to a server that failed, and the retries and redispatches they caused. */
  backend: () => Promise<{ connectionErrors: number; retries: number; redispatches: number }>;
  stop: () => Promise<void>;
};

export const HEALTH_CHECK = { path: '/readyz/process', intervalMs: 1_000, timeoutMs: 2_000, fall: 2, rise: 2 } as const;

/**
 * How long an API answers 503 on its check before closing (SHUTDOWN_DRAIN_MS): one check more than
 * it takes the balancer to mark it down, so no request reaches a closed listener.
 */
export const DRAIN_MS = HEALTH_CHECK.intervalMs * (HEALTH_CHECK.fall + 1);

/**
 * The longest an API may stay silent on a request: a generation answers (JSON, or NDJSON's first
 * line) only once the model provider has, within INTELLIGENCE_PROVIDER_TIMEOUT_MS (default 120 s).
 */
export const SERVER_TIMEOUT_MS = loadConfig({}).INTELLIGENCE_PROVIDER_TIMEOUT_MS + 10_000;

/**
 * haproxy.cfg for `servers`: the topology's, and docker-compose's deploy/haproxy.cfg (generated from
 * this by `npm run topology -- --write-compose-config`; a test holds the file to it).
 */
export function haproxyConfig(options: {
  bind: string;
  statsBind: string;
  servers: BalancedServer[];
  resolvers?: string[];
  /** The stats page's buttons (drain, disable): only where the page is reachable from loopback alone. */
  statsAdmin: boolean;
}): string {
  return [
    'global',
    '  maxconn 4096',
    // A reload or stop never waits on a long-lived stream (console live, NDJSON generate) past this.
    '  hard-stop-after 30s',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  timeout connect 2s',
    '  timeout http-request 10s',
    '  timeout queue 10s',
    `  timeout check ${HEALTH_CHECK.timeoutMs / 1000}s`,
    // Above a generation's longest silence (and the console stream's 20 s heartbeat).
    `  timeout client ${SERVER_TIMEOUT_MS / 1000}s`,
    `  timeout server ${SERVER_TIMEOUT_MS / 1000}s`,
    '  timeout http-keep-alive 10s',
    '  retries 2',
    '  option redispatch 1',
    '  retry-on conn-failure',
    'frontend api',
    `  bind ${options.bind}`,
    '  option forwardfor',
    '  default_backend apis',
    'backend apis',
    '  balance roundrobin',
    '  http-response set-header X-Served-By %s',
    '  option httpchk',
    `  http-check send meth GET uri ${HEALTH_CHECK.path}`,
    '  http-check expect status 200',
    `  default-server inter ${HEALTH_CHECK.intervalMs} fall ${HEALTH_CHECK.fall} rise ${HEALTH_CHECK.rise}`,
    ...options.servers.map((s) => ('template' in s ? `  server-template ${s.template} check resolvers dns init-addr none` : `  server ${s.name} ${s.address} check`)),
    ...(options.resolvers ? ['resolvers dns', ...options.resolvers.map((r, i) => `  nameserver ns${i + 1} ${r}`), '  hold valid 5s'] : []),
    'listen stats',
    `  bind ${options.statsBind}`,
    '  stats enable',
    '  stats uri /',
    '  stats refresh 5s',
    ...(options.statsAdmin ? ['  stats admin if TRUE'] : []),
    '',
  ].join('\n');
}

export async function startBalancer(options: { servers: BalancedServer[]; port?: number; detached?: boolean }): Promise<Balancer> {
  const binary = ensureTool('haproxy');
  const port = options.port ?? (await freePort());
  const statsPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hnp-haproxy-'));
  const configFile = join(dir, 'haproxy.cfg');
  // The stats page listens on loopback only here: its buttons may drain or disable a server.
  writeFileSync(configFile, haproxyConfig({ bind: `127.0.0.1:${port}`, statsBind: `127.0.0.1:${statsPort}`, servers: options.servers, statsAdmin: true }));
  const check = spawnSync(binary, ['-c', '-q', '-f', configFile]);
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`haproxy refused its configuration:\n${check.stderr.toString()}`);
  }
  // -db: stay in the foreground, as a child of ours.
  const child = spawnOwned(binary, ['-db', '-f', configFile], { detached: options.detached ?? false });
  let said = '';
  child.stdout!.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-4_000)));
  child.stderr!.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-4_000)));
  const stop = async () => {
    // SIGUSR1: soft stop (finish what is in flight); hard-stop-after bounds it.
    await stopChild(child, 'SIGUSR1', 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const statsUrl = `http://127.0.0.1:${statsPort}/`;
  const rows = async () => parseStatsCsv(await (await fetch(`${statsUrl};csv`)).text());
  const until = Date.now() + 10_000;
  while (!(await canConnect('127.0.0.1', port, 300))) {
    if (Date.now() > until || child.exitCode !== null) {
      await stop();
      throw new Error(`haproxy did not start:\n${said}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    statsUrl,
    servers: async () =>
      (await rows())
        .filter((r) => r['pxname'] === 'apis' && r['svname'] !== 'BACKEND')
        .map((r) => ({ name: r['svname']!, status: r['status']!, requests: Number(r['req_tot'] || 0), responses5xx: Number(r['hrsp_5xx'] || 0) })),
    frontend: async () => {
      const row = (await rows()).find((r) => r['pxname'] === 'api' && r['svname'] === 'FRONTEND');
      return { requests: Number(row?.['req_tot'] || 0), responses5xx: Number(row?.['hrsp_5xx'] || 0) };
    },
    backend: async () => {
      const row = (await rows()).find((r) => r['pxname'] === 'apis' && r['svname'] === 'BACKEND');
      return { connectionErrors: Number(row?.['econ'] || 0), retries: Number(row?.['wretr'] || 0), redispatches: Number(row?.['wredis'] || 0) };
    },
    stop,
  };
}

/** HAProxy's CSV stats: a `# `-prefixed header line, then one row per proxy and server. */
function parseStatsCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split('\n');
  const names = header!.replace(/^# /, '').split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i] ?? String(i), value])));
}
