// Runs `temporal server start-dev` as a child process and waits until it answers gRPC.
// Used by `npm start` (persistent SQLite file, Web UI) and by the test harness (in memory, headless).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import { searchAttributeKeys } from '../../domain/automation/search-attributes.ts';
import { freePort } from './ports.ts';

/** How `temporal server start-dev --search-attribute Name=Type` spells each type. */
const cliTypeName: Record<SearchAttributeType, string> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** Search attributes the platform's workflows use (their one definition); the dev server must know them up front. */
export const searchAttributes: Record<string, string> = Object.fromEntries(searchAttributeKeys.map((key) => [key.name, cliTypeName[key.type]]));

/**
 * Dynamic config on top of the CLI's. The CLI turns `system.forceSearchAttributesCacheRefreshOnRead`
 * on so that a search attribute added while the server runs is usable at once. Ours are all
 * registered at start (`--search-attribute`), so each refresh re-read what could not have changed:
 * ~17 cluster-metadata and 6 namespace reads per proposal (7 per bare one-activity workflow), every
 * start, command and visibility write that touches a search attribute, all on the dev server's one
 * SQLite connection (decision 115).
 *
 * Two more throttles are sized for clusters and only add waiting to one small server (decision 116):
 * - Its one history shard reads each of its task queues at most `…MaxPollRPS` (20) times a second,
 *   so past 20 tasks a second a workflow task waited in history for the next read (~37 ms, twice
 *   per one-activity workflow: 22 → 95 ms one at a time), and a visibility write likewise.
 * - A task queue has 4 partitions, to spread it over matching hosts; the dev server is one. A task
 *   put on a partition with no poller waiting is forwarded to the root at most 10 a second, one at
 *   a time, and otherwise waits for a poll to land on its partition (p95 60 → 15 ms at 4 at once).
 *   Tasks are now written to the root alone; polls still read all 4 (a child forwards its polls to
 *   the root), so what a persistent dev database holds on the others from before still drains.
 */
const devServerDynamicConfig: Record<string, string | number | boolean> = {
  'system.forceSearchAttributesCacheRefreshOnRead': false,
  'history.transferProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
  'matching.numTaskqueueWritePartitions': 1,
};

/** metricsUrl: the server's own Prometheus endpoint (persistence, matching and history series). */
export type DevServer = { address: string; uiUrl: string | null; metricsUrl: string; process: ChildProcess; stop: () => Promise<void> };

export async function startTemporalDevServer(options: {
  cliPath: string;
  port?: number;
  uiPort?: number;
  dbFilename?: string;
  headless?: boolean;
  namespace?: string;
  readyTimeoutMs?: number;
  /** Own process group, so a terminal's Ctrl-C reaches only us and we stop the server last. */
  detached?: boolean;
  log?: (line: string) => void;
}): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  const uiPort = options.headless ? null : (options.uiPort ?? (await freePort()));
  const metricsPort = await freePort();
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', '--namespace', options.namespace ?? 'default'];
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (options.dbFilename) args.push('--db-filename', options.dbFilename);
  args.push('--metrics-port', String(metricsPort));
  for (const [name, type] of Object.entries(searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(devServerDynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);

  // The server reads the OTEL_* variables too (it traces itself, and refuses exporters it does not
  // know, such as `console`): they are our processes' settings (docs/observability.md), not its.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const child = spawn(options.cliPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  // Never outlive the parent, even when it exits without running its shutdown path.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  let output = '';
  // Its first lines and its last: a Go panic names its cause at the top, above a long stack.
  let head = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (head.length < 2_000) head = (head + text).slice(0, 2_000);
    output = (output + text).slice(-2_000);
    for (const line of text.split('\n')) if (line.trim()) options.log?.(line);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });

  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  // The gRPC port opens before the namespace is registered; wait for a real answer.
  for (;;) {
    if (exited !== undefined) {
      const said = head.length < 2_000 ? head : `${head}\n…\n${output}`;
      throw new Error(`temporal server start-dev exited with ${exited}:\n${said}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.withDeadline(Date.now() + 2_000, () =>
          connection.workflowService.describeNamespace({ namespace: options.namespace ?? 'default' }),
        );
        break;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`Temporal dev server did not become ready at ${address}: ${String(error)}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  const stop = async () => {
    if (exited !== undefined) return;
    const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(timer);
  };

  return { address, uiUrl: uiPort === null ? null : `http://127.0.0.1:${uiPort}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, process: child, stop };
}
