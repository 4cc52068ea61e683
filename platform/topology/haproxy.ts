// Debian's HAProxy in front of the API processes: round robin over the servers /readyz calls ready
// (checked every second, out after two failures, back after two passes), so an API that drains on
// SIGTERM (SHUTDOWN_DRAIN_MS) is out of rotation before its listener closes; a connection that
// cannot be made is retried on another server (`retry-on conn-failure` + `redispatch`: the request
// was never sent, so this is safe for any method). Nothing else is retried: a write whose answer was
// lost is the client's to replay with its Idempotency-Key. A stats page (read and admin: drain or
// disable a server by hand) listens on loopback.
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from '../local-stack/ports.ts';
import { spawnOwned, stopChild } from './processes.ts';
import { ensureTool } from './tools.ts';

/** A server of the backend: by name and address, or (docker-compose) a `server-template` line's arguments resolved by DNS. */
export type BalancedServer = { name: string; address: string } | { template: string };

/** One server's line of the stats page: HAProxy's state (UP, DOWN, NOLB, MAINT, DRAIN…) and what it served. */
export type ServerStats = { name: string; status: string; requests: number; responses5xx: number; sessions: number };

export type Balancer = {
  url: string;
  statsUrl: string;
  process: ChildProcess;
  /** The backend's servers as HAProxy sees them now. */
  servers: () => Promise<ServerStats[]>;
  /** Requests the frontend answered, by status class, and what it failed to answer. */
  frontend: () => Promise<{ requests: number; responses5xx: number; errors: number }>;
  stop: () => Promise<void>;
};

export const HEALTH_CHECK = { intervalMs: 1_000, fall: 2, rise: 2 } as const;

/**
 * haproxy.cfg for `servers`: the topology's, and docker-compose's deploy/haproxy.cfg (generated from
 * this by `npm run topology -- --write-compose-config`; a test holds the file to it).
 */
export function haproxyConfig(options: { bind: string; statsBind: string; servers: BalancedServer[]; resolvers?: string[] }): string {
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
    // Above the console stream's 20 s heartbeat and a generation's longest silence.
    '  timeout client 65s',
    '  timeout server 65s',
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
    '  option httpchk',
    '  http-check send meth GET uri /readyz',
    '  http-check expect status 200',
    `  default-server inter ${HEALTH_CHECK.intervalMs} fall ${HEALTH_CHECK.fall} rise ${HEALTH_CHECK.rise}`,
    ...options.servers.map((s) => ('template' in s ? `  server-template ${s.template} check resolvers dns init-addr none` : `  server ${s.name} ${s.address} check`)),
    ...(options.resolvers ? ['resolvers dns', ...options.resolvers.map((r, i) => `  nameserver ns${i + 1} ${r}`), '  hold valid 5s'] : []),
    'listen stats',
    `  bind ${options.statsBind}`,
    '  stats enable',
    '  stats uri /',
    '  stats refresh 5s',
    // Loopback only: the page's buttons drain or disable a server.
    '  stats admin if TRUE',
    '',
  ].join('\n');
}

export async function startBalancer(options: { servers: BalancedServer[]; port?: number; statsPort?: number }): Promise<Balancer> {
  const binary = ensureTool('haproxy');
  const port = options.port ?? (await freePort());
  const statsPort = options.statsPort ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'hnp-haproxy-'));
  const configFile = join(dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig({ bind: `127.0.0.1:${port}`, statsBind: `127.0.0.1:${statsPort}`, servers: options.servers }));
  const check = spawnSync(binary, ['-c', '-q', '-f', configFile]);
  if (check.status !== 0) throw new Error(`haproxy refused its configuration:\n${check.stderr.toString()}`);
  // -db: stay in the foreground, as a child of ours.
  const child = spawnOwned(binary, ['-db', '-f', configFile]);
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
    process: child,
    servers: async () =>
      (await rows())
        .filter((r) => r['pxname'] === 'apis' && r['svname'] !== 'BACKEND')
        .map((r) => ({ name: r['svname']!, status: r['status']!, requests: Number(r['req_tot'] || 0), responses5xx: Number(r['hrsp_5xx'] || 0), sessions: Number(r['stot'] || 0) })),
    frontend: async () => {
      const row = (await rows()).find((r) => r['pxname'] === 'api' && r['svname'] === 'FRONTEND');
      return { requests: Number(row?.['req_tot'] || 0), responses5xx: Number(row?.['hrsp_5xx'] || 0), errors: Number(row?.['ereq'] || 0) };
    },
    stop,
  };
}

/** HAProxy's CSV stats: a `# `-prefixed header line, then one row per proxy and server. */
export function parseStatsCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split('\n');
  const names = header!.replace(/^# /, '').split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i] ?? String(i), value])));
}
