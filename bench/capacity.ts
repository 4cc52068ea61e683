// `npm run bench -- --suite capacity`: what one request of each kind costs, measured on the real
// entry points (docs/capacity.md turns the figures into a capacity model). As production runs them:
// one API process (`node api/main.ts`) and one worker (`node workers/main.ts`), a Temporal dev server
// started here (headless, its own SQLite file in a temporary directory), the scripted
// OpenAI-compatible provider (bench/scripted-provider.ts) and the scripted Google
// (test/support/scripted-google.ts: consent, PKCE, code exchange on the real wire protocol), on the
// fresh database bench/run.ts made. For each request kind, after a warm-up, N requests (a few at a
// time, the concurrency shown) and, from before to after them:
//   - Postgres statements and round trips at the wire: each process reaches Postgres through its
//     own counting proxy (bench/pg-wire-counter.ts): statements = simple queries + Executes, round
//     trips = simple queries + Syncs;
//   - CPU: user + system time of the API and the worker processes from /proc/<pid>/stat (clock ticks
//     of `getconf CLK_TCK`), and of the Postgres backends serving each of them (pg_stat_activity's
//     client_port is the proxy's upstream port, so a backend is attributed to its process), sampled
//     every 250 ms;
//   - Temporal actions: the history of every workflow started in the window (listed by start time
//     once none is running), counted as Temporal Cloud bills them (docs.temporal.io/cloud/actions;
//     `billableActions` below says which events count and how).
// The processes' idle rates (the API's workflow-start relay polls once a second, Temporal Core
// polls, …) are measured before the first phase and after the last, and the lower of the two is
// taken off each phase in proportion to its duration. Each concurrent caller is an account and an
// organization of its own (many tenants: no allowance lease is shared). The baseline of the same
// run is bench/serve.ts's bare Fastify + pg route doing the hot read's single-row SELECT, through a
// proxy of its own, at the hot read's N and concurrency. BENCH_CAPACITY_STATEMENTS=1 also lists,
// per phase, the statements each process ran (their text, per request).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import type { DatabasePool } from '../db/pool.ts';
import { encodeCursor } from '../domain/cursor.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { setProductReturnTargets, setProductRuntimeSettings } from '../domain/product-runtime/entities.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { MEDIA_PATH, grownMp4 } from '../test/support/media.ts';
import { buildRuntimeChain } from '../test/support/product-runtime.ts';
import { ScriptedGoogle } from '../test/support/scripted-google.ts';
import { generateEnv, generateJson, startProvider } from './intelligence.ts';
import { mcpToolCall, seedLargeVault } from './mcp.ts';
import { PgWireCounter, roundTripsOf, statementsOf } from './pg-wire-counter.ts';
import type { WireCounts } from './pg-wire-counter.ts';
import { CLOCK_TICKS, cpuSeconds } from './proc-cpu.ts';

const NOTES = 10_000;
const IDLE_SECONDS = 5;
const CALLBACK_PATH = '/api/product/v1/connections/provider/oauth/callback';
const RETURN_ORIGIN = 'https://studio.example';
/** Concurrent callers at most, each an account and an organization of its own. */
const LANES = 8;

type Lane = { token: string; runtimeSecret: string };

export type CapacitySuiteInput = {
  databaseUrl: string;
  /** The bench's own pool (not counted: it does not go through a proxy). */
  db: DatabasePool;
  /** A team-plan account and its token (bench/run.ts made them). */
  accountId: string;
  token: string;
  /** The API's environment with allowances raised (bench/run.ts serverEnv). */
  env: NodeJS.ProcessEnv;
  startServer: (kind: 'baseline', env: NodeJS.ProcessEnv) => Promise<{ url: string; child: ChildProcess }>;
  stopServer: (child: ChildProcess) => Promise<void>;
  printTable: (header: string[], rows: string[][]) => void;
};

// ---- CPU time from /proc: bench/proc-cpu.ts ------------------------------------------------------

type Owner = 'api' | 'worker' | 'baseline';
const OWNERS: Owner[] = ['api', 'worker', 'baseline'];

/**
 * CPU of the Postgres backends serving each proxy's connections. Every 250 ms (and at each
 * snapshot) it lists this database's client backends with their client_port, attributes each to the
 * proxy that opened that port, and adds what each used since it was last seen (all of it, the first
 * time). A backend that exits between two samples loses its last quarter second (the pools keep
 * their connections 30 s idle, so hardly any does but the baseline server's, which it stops).
 * Null totals: Postgres is not on this machine.
 */
class BackendCpu {
  readonly totals: Record<Owner, number> = { api: 0, worker: 0, baseline: 0 };
  available = true;
  readonly #client: pg.Client;
  readonly #proxies: Record<Owner, PgWireCounter>;
  readonly #seen = new Map<number, { owner: Owner; cpu: number }>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> = Promise.resolve();
  #everRead = false;

  constructor(databaseUrl: string, proxies: Record<Owner, PgWireCounter>) {
    this.#client = new pg.Client({ connectionString: databaseUrl });
    this.#proxies = proxies;
  }

  async start(): Promise<void> {
    await this.#client.connect();
    await this.sample();
    this.#timer = setInterval(() => void this.sample(), 250);
  }

  sample(): Promise<void> {
    this.#running = this.#running.then(async () => {
      const { rows } = await this.#client.query<{ pid: number; port: number | null }>(
        `SELECT pid, client_port AS port FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      let read = 0;
      let unreadable = 0;
      for (const { pid, port } of rows) {
        const owner = port === null ? undefined : OWNERS.find((o) => this.#proxies[o].upstreamPorts.has(port));
        if (!owner) continue;
        const cpu = cpuSeconds(pid);
        // Gone since the listing (a pool closed it), or not on this machine.
        if (cpu === null) {
          unreadable++;
          continue;
        }
        read++;
        const previous = this.#seen.get(pid);
        this.totals[owner] += previous && previous.owner === owner ? cpu - previous.cpu : cpu;
        this.#seen.set(pid, { owner, cpu });
      }
      // Never one backend readable: Postgres runs elsewhere (another machine, a container).
      if (read > 0) this.#everRead = true;
      else if (unreadable > 0 && !this.#everRead) this.available = false;
    });
    return this.#running;
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#running.catch(() => undefined);
    await this.#client.end();
  }
}

// ---- Temporal actions, from histories ------------------------------------------------------------

// A CommonJS module: its namespaces come through the default export.
const EventType = protos.temporal.api.enums.v1.EventType;
type History = protos.temporal.api.history.v1.IHistory;

/**
 * What Temporal Cloud bills as actions (docs.temporal.io/cloud/actions), read from one history:
 *   - workflow started (1; a child's own start is counted at its parent, below);
 *   - signal received (1 each; a signal-with-start is one action in all: none here, the platform sends none);
 *   - update accepted (1 each; rejected updates count too but leave no event: none are sent here);
 *   - activity started or retried (the attempt number of its started event; 1 if it never started);
 *   - local activities: all of one workflow task count once (core_local_activity markers grouped by
 *     the task that recorded them);
 *   - timer started (1 each, the implicit timers of `condition(…, timeout)` included);
 *   - search-attribute upsert (1 each, unless it sets only TemporalChangeVersion, which is exempt);
 *   - child workflow started (2: the start and the execution);
 *   - workflow execution options updated (1);
 *   - side effects: the TypeScript SDK has none.
 * Not in a history, and not counted here: queries (neither the API nor the worker sends one),
 * activity heartbeats (no activity heartbeats), schedules (none), rejected updates.
 */
export function billableActions(history: History): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (name: string, n = 1) => counts.set(name, (counts.get(name) ?? 0) + n);
  const attempts = new Map<string, number>();
  const localActivityTasks = new Set<string>();
  for (const event of history.events ?? []) {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        if (!event.workflowExecutionStartedEventAttributes?.parentWorkflowExecution) add('start');
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        add('signal');
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        add('update');
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        attempts.set(String(event.eventId), 1);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attributes = event.activityTaskStartedEventAttributes;
        attempts.set(String(attributes?.scheduledEventId), Math.max(1, attributes?.attempt ?? 1));
        break;
      }
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        const attributes = event.markerRecordedEventAttributes;
        if (attributes?.markerName === 'core_local_activity') localActivityTasks.add(String(attributes.workflowTaskCompletedEventId));
        break;
      }
      case EventType.EVENT_TYPE_TIMER_STARTED:
        add('timer');
        break;
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const fields = Object.keys(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
        if (fields.some((name) => name !== 'TemporalChangeVersion')) add('search-attribute upsert');
        break;
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        add('child workflow', 2);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
        add('options updated');
        break;
      default:
        break;
    }
  }
  const activities = [...attempts.values()].reduce((a, b) => a + b, 0);
  if (activities > 0) add('activity', activities);
  if (localActivityTasks.size > 0) add('local-activity task', localActivityTasks.size);
  return counts;
}

const eventNames = new Map(Object.entries(EventType).map(([name, value]) => [value, name.replace('EVENT_TYPE_', '')]));
function eventName(event: protos.temporal.api.history.v1.IHistoryEvent): string {
  const name = eventNames.get(event.eventType ?? 0) ?? String(event.eventType);
  const marker = event.markerRecordedEventAttributes?.markerName;
  return marker ? `${name}(${marker})` : name;
}

// ---- the stack -----------------------------------------------------------------------------------

type Child = { name: string; child: ChildProcess };

/** An entry point as production runs it; its log lines (LOG_LEVEL=warn) are echoed with its name. */
function spawnEntry(name: string, entry: string, env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [fileURLToPath(new URL(entry, import.meta.url))], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const echo = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) console.log(`  [${name}] ${line.slice(0, 400)}`);
  };
  child.stdout!.on('data', echo);
  child.stderr!.on('data', echo);
  return { name, child };
}

async function stopChild({ child }: Child): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, children: Child[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    const dead = children.find((c) => c.child.exitCode !== null);
    if (dead) throw new Error(`${dead.name} exited with ${dead.child.exitCode} while waiting for ${what}`);
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** `n` calls of `send`, `concurrency` at a time; each of the concurrent callers is a lane (0 … concurrency − 1). */
async function drive(n: number, concurrency: number, send: (i: number, lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async (_, lane) => {
      while (next < n) await send(next++, lane);
    }),
  );
}

/** The response's body, or an error naming the request when its status is not one of `ok`. */
async function expectStatus(what: string, res: Response, ok: number[]): Promise<string> {
  const body = await res.text();
  if (!ok.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${body.slice(0, 300)}`);
  if (body.includes('"isError":true')) throw new Error(`${what}: tool error ${body.slice(0, 300)}`);
  return body;
}

// ---- phases --------------------------------------------------------------------------------------

type Snapshot = {
  at: number;
  wire: Record<Owner, WireCounts>;
  cpu: { api: number; worker: number; temporal: number; baseline: number };
  pgCpu: Record<Owner, number> | null;
  walBytes: number | null;
};

type Phase = {
  kind: string;
  n: number;
  concurrency: number;
  warmUp: number;
  send: (i: number, lane: number) => Promise<void>;
  /** The baseline server's phase: its process and proxy instead of the API's. */
  baseline?: boolean;
};

/** Per request, idle rates taken off; actions from the histories of the workflows the phase started. */
export type PhaseResult = {
  kind: string;
  n: number;
  concurrency: number;
  seconds: number;
  statements: { api: number; worker: number };
  roundTrips: { api: number; worker: number };
  parses: number;
  kibToServer: number;
  kibFromServer: number;
  connections: number;
  cpuMs: { api: number; worker: number; temporal: number };
  pgCpuMs: { api: number; worker: number } | null;
  walKib: number | null;
  actions: number;
  actionKinds: Map<string, number>;
  workflows: Map<string, number>;
};

type Rates = { seconds: number; delta: Snapshot };
type Measured = { phase: Phase; delta: Snapshot; kinds: Map<string, number>; workflows: Map<string, number> };

/** `fn` of every number of `a` and the same number of `b` (null where either is null). */
function combine<T>(a: T, b: T, fn: (x: number, y: number) => number): T {
  if (typeof a === 'number') return fn(a, b as number) as T;
  if (a === null || b === null || typeof a !== 'object') return null as T;
  return Object.fromEntries(Object.entries(a).map(([key, value]) => [key, combine(value, (b as Record<string, unknown>)[key], fn)])) as T;
}

const minusSnapshot = (a: Snapshot, b: Snapshot): Snapshot => combine(a, b, (x, y) => x - y);

/**
 * The idle rates taken off the phases: per metric, the lower of the two idle measurements (at the
 * start, after a rest from starting up, and at the end, every process warm). A process still busy
 * from its start (compiling, collecting) shows in the first and would otherwise be taken off as if
 * it were the background of every request.
 */
function lowerRates(a: Rates, b: Rates): Rates {
  const perSecond = (r: Rates) => combine(r.delta, r.delta, (x) => x / r.seconds);
  return { seconds: 1, delta: combine(perSecond(a), perSecond(b), Math.min) };
}

export async function runCapacitySuite(input: CapacitySuiteInput): Promise<PhaseResult[]> {
  const { db, databaseUrl } = input;
  const pgTarget = { host: new URL(databaseUrl).hostname, port: Number(new URL(databaseUrl).port || 5432) };
  const started = performance.now();

  // The data: a 10,000-note vault in a workspace the token's account owns (notes bulk-inserted as
  // the MCP suite does, so search has a rare and a common word). Callers as a platform with many
  // tenants has them: each concurrent caller ("lane") is an account of its own, an admin of the
  // workspace (it reads, writes, proposes and reviews its neighbour's proposals), and a Product
  // Runtime chain of its own (an organization that may generate, store media and connect Google).
  // So no two requests in flight share an allowance lease (domain/allowance-lease.ts reserves for
  // the requests of one account waiting at that moment), as with many tenants; one row shows the
  // hot read with every caller on one account, the leases shared.
  const workspace = await createWorkspace(db, { name: 'Bench capacity', ownerAccountId: input.accountId });
  const vault = await createVault(db, { name: 'Bench capacity vault', ownerWorkspaceId: workspace.id });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });
  await seedLargeVault(db, vault.id, NOTES);
  const lanes: Lane[] = [];
  for (let i = 0; i < LANES; i++) {
    const account = await createAccount(db, { email: `bench-capacity-${i}-${randomUUID()}@example.test`, displayName: `Caller ${i}`, plan: 'team' });
    const token = (await issueAccessToken(db, { accountId: account.id, name: 'bench' })).token;
    await addMember(db, { workspaceId: workspace.id, accountId: account.id, role: 'admin' });
    const chain = await buildRuntimeChain(db);
    await setProductRuntimeSettings(db, chain.organizationId, {
      apiOperationsPerMonth: 1_000_000_000,
      intelligenceBudgetMicrodollarsMonthly: 1_000_000_000_000_000,
      maxConcurrentIntelligence: 1_000_000_000,
      mediaStorageBytes: 20 * 1024 * 1024 * 1024,
    });
    await setProductReturnTargets(db, chain.productId, [RETURN_ORIGIN]);
    lanes.push({ token, runtimeSecret: chain.secret });
  }

  // The stack.
  const dir = mkdtempSync(join(tmpdir(), 'bench-capacity-'));
  const temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true, dbFilename: join(dir, 'temporal.sqlite') });
  const provider = await startProvider();
  const apiPort = await freePort();
  const publicBase = `http://127.0.0.1:${apiPort}`;
  const google = await new ScriptedGoogle({ redirectUris: [`${publicBase}${CALLBACK_PATH}`] }).start();
  const proxies: Record<Owner, PgWireCounter> = {
    api: await new PgWireCounter(pgTarget).start(),
    worker: await new PgWireCounter(pgTarget).start(),
    baseline: await new PgWireCounter(pgTarget).start(),
  };
  // BENCH_CAPACITY_STATEMENTS=1: each phase also lists the statements each process ran, per request.
  const listStatements = Boolean(process.env['BENCH_CAPACITY_STATEMENTS']);
  if (listStatements) for (const owner of OWNERS) proxies[owner].captureStatements();
  const backends = new BackendCpu(databaseUrl, proxies);
  await backends.start();
  const wal = new pg.Client({ connectionString: databaseUrl });
  await wal.connect();
  const listener = new pg.Client({ connectionString: databaseUrl });
  await listener.connect();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const taskQueue = `bench-capacity-${process.pid}`;
  const env: NodeJS.ProcessEnv = {
    ...generateEnv(input.env, { temporalAddress: temporal.address, taskQueue, providerUrl: provider.providerUrl }),
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    SECRETS_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    WEBHOOK_EGRESS_ALLOWLIST: '127.0.0.1',
    PUBLIC_BASE_URL: publicBase,
    GOOGLE_OAUTH_CLIENT_ID: google.clientId,
    GOOGLE_OAUTH_CLIENT_SECRET: google.clientSecret,
    GOOGLE_OAUTH_AUTHORIZE_URL: `${google.url}/o/oauth2/v2/auth`,
    GOOGLE_OAUTH_TOKEN_URL: `${google.url}/token`,
    GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
    GOOGLE_DRIVE_ROOT_URL: `${google.url}/`,
    GOOGLE_CLASSROOM_ROOT_URL: `${google.url}/`,
  };
  const children: Child[] = [];
  const proposalWaits = new Map<string, (state: string) => void>();
  let baselineChild: ChildProcess | null = null;
  try {
    const worker = spawnEntry('worker', '../workers/main.ts', { ...env, DATABASE_URL: proxies.worker.urlThrough(databaseUrl) });
    children.push(worker);
    const api = spawnEntry('api', '../api/main.ts', { ...env, PORT: String(apiPort), DATABASE_URL: proxies.api.urlThrough(databaseUrl) });
    children.push(api);
    await waitUntil('the API answering /readyz', async () => (await fetch(`${publicBase}/readyz`)).ok, 120_000, children);
    await waitUntil(
      'the worker polling its task queue',
      async () => {
        const { pollers } = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 });
        return (pollers?.length ?? 0) > 0;
      },
      120_000,
      children,
    );
    console.log(
      `capacity: stack up ${((performance.now() - started) / 1000).toFixed(1)} s after the start (${NOTES} notes seeded, Temporal on ${temporal.address}, CLK_TCK ${CLOCK_TICKS}); ` +
        `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min)`,
    );

    // Proposals are followed through the table's NOTIFY (no polling through the API, which would be counted).
    await listener.query('LISTEN proposal_changes');
    listener.on('notification', (message) => {
      const id = (JSON.parse(message.payload ?? '{}') as { id?: string }).id;
      const resolve = id ? proposalWaits.get(id) : undefined;
      if (!resolve) return;
      void db
        .oneFirst(sqlState(id!))
        .then((state) => {
          if (state === 'executed' || state === 'failed') resolve(state);
        })
        .catch(() => undefined);
    });

    const snapshot = async (): Promise<Snapshot> => {
      await backends.sample();
      const lsn = await wal.query<{ bytes: number }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS bytes`).catch(() => null);
      return {
        at: performance.now(),
        wire: { api: proxies.api.counts(), worker: proxies.worker.counts(), baseline: proxies.baseline.counts() },
        cpu: {
          api: cpuSeconds(api.child.pid) ?? 0,
          worker: cpuSeconds(worker.child.pid) ?? 0,
          temporal: cpuSeconds(temporal.process.pid) ?? 0,
          baseline: baselineChild ? (cpuSeconds(baselineChild.pid) ?? 0) : 0,
        },
        pgCpu: backends.available ? { ...backends.totals } : null,
        walBytes: lsn?.rows[0]?.bytes ?? null,
      };
    };

    /** Workflows started at or after `from`, once none of them is running and their number held still for 250 ms. */
    const settle = async (from: Date) => {
      const deadline = Date.now() + 60_000;
      let previous = -1;
      for (;;) {
        let count = 0;
        let running = 0;
        for await (const wf of client.workflow.list({ query: `StartTime >= "${from.toISOString()}"` })) {
          count++;
          if (wf.status.name === 'RUNNING') running++;
        }
        if (running === 0 && count === previous) break;
        previous = running === 0 ? count : -1;
        if (Date.now() > deadline) {
          console.log(`  capacity: ${running} workflow(s) still running 60 s after the phase; measured as they are`);
          break;
        }
        await sleep(running > 0 ? 100 : 250);
      }
      // The processes' last statements after the last workflow closed.
      await sleep(200);
    };

    const actionsSince = async (from: Date, to: Date) => {
      const kinds = new Map<string, number>();
      const workflows = new Map<string, number>();
      for await (const wf of client.workflow.list({ query: `StartTime >= "${from.toISOString()}" AND StartTime <= "${to.toISOString()}"` })) {
        const first = !workflows.has(wf.type);
        workflows.set(wf.type, (workflows.get(wf.type) ?? 0) + 1);
        const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
        // With the statements listed, one history of each workflow type too (its events, in order).
        if (listStatements && first) console.log(`    ${wf.type}: ${(history.events ?? []).map((e) => eventName(e)).join(' ')}`);
        for (const [name, n] of billableActions(history)) kinds.set(name, (kinds.get(name) ?? 0) + n);
      }
      return { kinds, workflows };
    };

    // Idle: what the processes do with no request (the relay's poll, Temporal Core's, timers): after
    // a few seconds' rest from starting up, and again after the last phase.
    const measureIdle = async (): Promise<Rates> => {
      await settle(new Date(Date.now() - 3_600_000));
      const before = await snapshot();
      await sleep(IDLE_SECONDS * 1000);
      const delta = minusSnapshot(await snapshot(), before);
      return { seconds: delta.at / 1000, delta };
    };
    // Until the processes are done starting (compiling, collecting): each under 10 CPU ms in a second, 30 s at most.
    for (let waited = 0; waited < 30; waited++) {
      const cpu = [cpuSeconds(api.child.pid) ?? 0, cpuSeconds(worker.child.pid) ?? 0];
      await sleep(1_000);
      const used = [(cpuSeconds(api.child.pid) ?? 0) - cpu[0]!, (cpuSeconds(worker.child.pid) ?? 0) - cpu[1]!];
      if (used.every((seconds) => seconds < 0.01)) break;
    }
    const idleAtStart = await measureIdle();

    const measure = async (phase: Phase): Promise<Measured> => {
      if (phase.warmUp > 0) {
        const warmFrom = new Date();
        await drive(phase.warmUp, phase.concurrency, (i, lane) => phase.send(phase.n + i, lane));
        await settle(warmFrom);
      }
      const from = new Date();
      const owners: Owner[] = phase.baseline ? ['baseline'] : ['api', 'worker'];
      const ran = new Map(owners.map((o) => [o, new Map(proxies[o].statements)]));
      const before = await snapshot();
      await drive(phase.n, phase.concurrency, phase.send);
      await settle(from);
      const delta = minusSnapshot(await snapshot(), before);
      const to = new Date();
      const { kinds, workflows } = await actionsSince(from, to);
      console.log(`  measured ${phase.kind} (${phase.n} in ${(delta.at / 1000).toFixed(1)} s)`);
      if (listStatements) {
        for (const owner of owners) {
          const earlier = ran.get(owner)!;
          const rows = [...proxies[owner].statements]
            .map(([text, count]) => [text, (count - (earlier.get(text) ?? 0)) / phase.n] as const)
            .filter(([, perReq]) => perReq > 0)
            .sort((a, b) => b[1] - a[1]);
          for (const [text, perReq] of rows.slice(0, 25)) console.log(`    ${owner} ${perReq.toFixed(2)}/req  ${text}`);
        }
      }
      return { phase, delta, kinds, workflows };
    };

    // ---- the request kinds ----
    const json = { 'content-type': 'application/json' };
    const auth = (lane: number) => ({ authorization: `Bearer ${lanes[lane]!.token}` });
    const runtime = (lane: number) => ({ authorization: `Bearer ${lanes[lane]!.runtimeSecret}`, 'x-service-runtime-version': '1' });
    const readPath = `Compare/${encodeURIComponent('Reference note.md')}`;
    const measured: Measured[] = [];

    // The baseline first, alone with the idle stack: bench/serve.ts's bare route, its own proxy.
    const baseline = await input.startServer('baseline', { ...input.env, DATABASE_URL: proxies.baseline.urlThrough(databaseUrl) });
    baselineChild = baseline.child;
    try {
      measured.push(
        await measure({
          kind: 'baseline: bare Fastify + pg, the same SELECT, no auth',
          baseline: true,
          n: 3_000,
          concurrency: 8,
          warmUp: 500,
          send: async () => void (await expectStatus('baseline read', await fetch(`${baseline.url}/baseline/${vault.id}/${readPath}`), [200])),
        }),
      );
    } finally {
      await input.stopServer(baseline.child);
      baselineChild = null;
    }

    const read = (token: string) => async () =>
      void (await expectStatus('read', await fetch(`${publicBase}/api/dev/notes/${readPath}?mappingId=${mappingId}`, { headers: { authorization: `Bearer ${token}` } }), [200]));
    const readAs = lanes.map((lane) => read(lane.token));
    const mcp = (name: string, args: Record<string, unknown>) => {
      const calls = lanes.map((lane) => mcpToolCall(publicBase, lane.token, name, args));
      return async (_: number, lane: number) => void (await expectStatus(name, await calls[lane]!(), [200]));
    };
    const applyOne = async (_: number, lane: number) => {
      const id = randomUUID();
      const res = await fetch(`${publicBase}/api/dev/notes`, {
        method: 'POST',
        headers: { ...auth(lane), ...json, 'idempotency-key': id },
        body: JSON.stringify({ mappingId, path: `Bench/${id}.md`, content: `# ${id}\n\nWritten by the capacity bench.\n`, dryRun: false }),
      });
      await expectStatus('apply', res, [200, 201]);
    };
    const transaction = async (_: number, lane: number) => {
      const id = randomUUID();
      const actions = Array.from({ length: 100 }, (_, k) => ({ type: 'write-note', path: `Transactions/${id}/Note ${String(k).padStart(3, '0')}.md`, content: `# Note ${k}\n\nPart of transaction ${id}, about topic ${k % 7}.\n` }));
      const res = await fetch(`${publicBase}/api/dev/transactions`, { method: 'POST', headers: { ...auth(lane), ...json, 'idempotency-key': id }, body: JSON.stringify({ mappingId, dryRun: false, actions }) });
      await expectStatus('transaction', res, [200, 201]);
    };
    // Proposed by a lane's account, approved by the next lane's (no one may approve their own).
    const proposal = async (i: number, lane: number) => {
      const res = await fetch(`${publicBase}/api/dev/automation/proposals`, {
        method: 'POST',
        headers: { ...auth(lane), ...json, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ workspaceId: workspace.id, bridge: 'bench', action: { kind: 'note.write', mappingId, path: `Proposals/Proposal ${i}-${randomUUID().slice(0, 8)}.md`, content: `# Proposal ${i}\n` } }),
      });
      const id = (JSON.parse(await expectStatus('proposal create', res, [201])) as { id: string }).id;
      const done = new Promise<string>((resolve) => proposalWaits.set(id, resolve));
      const approved = await fetch(`${publicBase}/api/dev/automation/proposals/${id}/approve`, { method: 'POST', headers: { ...auth((lane + 1) % LANES), ...json }, body: '{}' });
      await expectStatus('proposal approve', approved, [200]);
      // The NOTIFY may have come before the wait was registered: look once, then wait.
      const now = await db.oneFirst(sqlState(id));
      const state = now === 'executed' || now === 'failed' ? now : await Promise.race([done, sleep(30_000).then(() => 'timed out')]);
      proposalWaits.delete(id);
      if (state !== 'executed') throw new Error(`proposal ${id}: ${state}`);
    };
    const generate = async (_: number, lane: number) => {
      const res = await fetch(`${publicBase}/api/product/v1/intelligence/education/generate`, {
        method: 'POST',
        headers: { ...runtime(lane), ...json, accept: 'application/json', 'idempotency-key': randomUUID() },
        body: generateJson,
      });
      await expectStatus('generate', res, [200]);
    };
    const audio = grownMp4(1024 * 1024);
    const upload = async (_: number, lane: number) => {
      const res = await fetch(`${publicBase}${MEDIA_PATH}/audio`, {
        method: 'POST',
        headers: { ...runtime(lane), 'content-type': 'application/octet-stream', 'x-media-reference': 'bench', 'x-media-duration-seconds': '3', 'idempotency-key': randomUUID() },
        body: audio,
      });
      await expectStatus('media upload', res, [201]);
    };
    const oauth = async (_: number, lane: number) => {
      const startRes = await fetch(`${publicBase}/api/product/v1/connections/google`, {
        method: 'POST',
        headers: { ...runtime(lane), ...json },
        body: JSON.stringify({ services: ['drive'], returnTarget: `${RETURN_ORIGIN}/connections/done` }),
      });
      const { data } = JSON.parse(await expectStatus('connection start', startRes, [201])) as { data: { authorizationUrl: string } };
      // The person's browser: Google's consent screen (the scripted double), then back to our callback.
      const consent = await google.visit(data.authorizationUrl);
      if (!consent.redirect) throw new Error(`consent: HTTP ${consent.status}, no redirect`);
      const back = await fetch(`${publicBase}${consent.redirect.pathname}${consent.redirect.search}`, { redirect: 'manual' });
      await expectStatus('oauth callback', back, [303]);
      const location = new URL(back.headers.get('location') ?? '');
      if (!location.searchParams.get('connectionId')) throw new Error(`oauth callback: ${location.href}`);
    };

    const phases: Phase[] = [
      { kind: 'hot read: GET /api/dev/notes/:category/:filename', n: 3_000, concurrency: 8, warmUp: 500, send: (_, lane) => readAs[lane]!() },
      { kind: 'hot read, 8 callers of one account (leases shared)', n: 3_000, concurrency: 8, warmUp: 200, send: read(input.token) },
      {
        kind: 'inventory page (1,000 notes), held by the process',
        n: 300,
        concurrency: 4,
        warmUp: 20,
        send: async (_, lane) => void (await expectStatus('inventory', await fetch(`${publicBase}/api/dev/notes?mappingId=${mappingId}`, { headers: auth(lane) }), [200])),
      },
      {
        kind: 'inventory page (1,000 notes), read (new cursor)',
        n: 150,
        concurrency: 4,
        warmUp: 10,
        send: async (_, lane) => {
          const cursor = encodeCursor({ after: `!${randomUUID()}` });
          await expectStatus('inventory', await fetch(`${publicBase}/api/dev/notes?mappingId=${mappingId}&cursor=${cursor}`, { headers: auth(lane) }), [200]);
        },
      },
      { kind: 'search_notes (MCP), rare word (0.1% of notes)', n: 300, concurrency: 4, warmUp: 20, send: mcp('search_notes', { mappingId, query: 'zygomorphic' }) },
      { kind: 'search_notes (MCP), common word (every note)', n: 150, concurrency: 4, warmUp: 10, send: mcp('search_notes', { mappingId, query: 'project' }) },
      { kind: 'MCP call: get_note_content', n: 2_000, concurrency: 8, warmUp: 300, send: mcp('get_note_content', { mappingId, path: 'Compare/Reference note.md' }) },
      { kind: 'apply: POST /api/dev/notes (create), one writer', n: 300, concurrency: 1, warmUp: 20, send: applyOne },
      { kind: 'apply, 8 writers of one vault (group commit)', n: 400, concurrency: 8, warmUp: 40, send: applyOne },
      { kind: 'transaction of 100 writes: POST /api/dev/transactions', n: 40, concurrency: 2, warmUp: 4, send: transaction },
      { kind: 'search_notes (MCP), rare word, after the writes above', n: 150, concurrency: 4, warmUp: 5, send: mcp('search_notes', { mappingId, query: 'zygomorphic' }) },
      { kind: 'proposal → approve → executed receipt', n: 80, concurrency: 4, warmUp: 8, send: proposal },
      { kind: 'generate (Product Runtime, JSON, scripted provider)', n: 150, concurrency: 8, warmUp: 20, send: generate },
      { kind: 'media upload, 1 MiB MP4 (Postgres blob store)', n: 80, concurrency: 2, warmUp: 5, send: upload },
      { kind: 'OAuth round trip: start → Google → callback → connected', n: 60, concurrency: 2, warmUp: 5, send: oauth },
    ];
    for (const phase of phases) measured.push(await measure(phase));

    const idleAtEnd = await measureIdle();
    const idle = lowerRates(idleAtStart, idleAtEnd);
    const results = measured.map((m) => perRequest(m.phase, m.delta, idle, m.kinds, m.workflows));
    printResults(input, results, [idleAtStart, idleAtEnd, idle]);
    console.log(`capacity: suite wall time ${((performance.now() - started) / 1000).toFixed(0)} s; load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min)`);
    return results;
  } finally {
    for (const c of children.reverse()) await stopChild(c);
    await connection.close().catch(() => undefined);
    await listener.end().catch(() => undefined);
    await wal.end().catch(() => undefined);
    await backends.close().catch(() => undefined);
    for (const proxy of Object.values(proxies)) await proxy.close();
    await google.close();
    await input.stopServer(provider.child);
    await temporal.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A proposal's state (read by the bench's own pool, not counted). */
const sqlState = (id: string) => sql.type(z.object({ state: z.string() }))`SELECT state FROM action_proposals WHERE id = ${id}`;

// ---- per request, and the tables -----------------------------------------------------------------

function perRequest(phase: Phase, delta: Snapshot, idle: Rates, kinds: Map<string, number>, workflows: Map<string, number>): PhaseResult {
  const seconds = delta.at / 1000;
  const share = seconds / idle.seconds;
  const n = phase.n;
  // What the idle processes would have done in as long, taken off; never below zero.
  const less = (measured: number, idleMeasured: number) => Math.max(0, measured - idleMeasured * share) / n;
  const apiOwner: Owner = phase.baseline ? 'baseline' : 'api';
  const wire = delta.wire[apiOwner];
  const idleWire = idle.delta.wire[apiOwner];
  const idleApiCpu = phase.baseline ? 0 : idle.delta.cpu.api;
  return {
    kind: phase.kind,
    n,
    concurrency: phase.concurrency,
    seconds,
    statements: { api: less(statementsOf(wire), statementsOf(idleWire)), worker: less(statementsOf(delta.wire.worker), statementsOf(idle.delta.wire.worker)) },
    roundTrips: { api: less(roundTripsOf(wire), roundTripsOf(idleWire)), worker: less(roundTripsOf(delta.wire.worker), roundTripsOf(idle.delta.wire.worker)) },
    parses: less(wire.parses + delta.wire.worker.parses, idleWire.parses + idle.delta.wire.worker.parses),
    kibToServer: less(wire.bytesToServer + delta.wire.worker.bytesToServer, idleWire.bytesToServer + idle.delta.wire.worker.bytesToServer) / 1024,
    kibFromServer: less(wire.bytesFromServer + delta.wire.worker.bytesFromServer, idleWire.bytesFromServer + idle.delta.wire.worker.bytesFromServer) / 1024,
    connections: wire.connections + delta.wire.worker.connections,
    cpuMs: {
      api: less(phase.baseline ? delta.cpu.baseline : delta.cpu.api, idleApiCpu) * 1000,
      worker: less(delta.cpu.worker, idle.delta.cpu.worker) * 1000,
      temporal: less(delta.cpu.temporal, idle.delta.cpu.temporal) * 1000,
    },
    pgCpuMs:
      delta.pgCpu && idle.delta.pgCpu
        ? { api: less(delta.pgCpu[apiOwner], idle.delta.pgCpu[apiOwner]) * 1000, worker: less(delta.pgCpu.worker, idle.delta.pgCpu.worker) * 1000 }
        : null,
    // Server-wide (pg_current_wal_lsn): not taken off, since the idle processes write none; any
    // other database's writes in the window would be counted (the idle line shows whether there were).
    walKib: delta.walBytes !== null ? delta.walBytes / n / 1024 : null,
    actions: [...kinds.values()].reduce((a, b) => a + b, 0) / n,
    actionKinds: kinds,
    workflows,
  };
}

const f = (v: number, digits = 2) => (v === 0 ? '0' : v.toFixed(digits));

export function describeActions(r: PhaseResult): string {
  if (r.actions === 0) return '0';
  const parts = [...r.actionKinds].map(([name, count]) => `${name} ${f(count / r.n)}`);
  return `${f(r.actions)} (${parts.join(', ')})`;
}

function printResults(input: CapacitySuiteInput, results: PhaseResult[], idle: [Rates, Rates, Rates]): void {
  input.printTable(
    ['request kind', 'N', 'conc', 'statements/req API', 'worker', 'round trips/req API', 'worker', 'Temporal actions/req (which)', 'CPU ms/req API', 'worker', 'Postgres CPU ms/req'],
    results.map((r) => [
      r.kind,
      String(r.n),
      String(r.concurrency),
      f(r.statements.api),
      r.kind.startsWith('baseline') ? '-' : f(r.statements.worker),
      f(r.roundTrips.api),
      r.kind.startsWith('baseline') ? '-' : f(r.roundTrips.worker),
      describeActions(r),
      f(r.cpuMs.api, 3),
      r.kind.startsWith('baseline') ? '-' : f(r.cpuMs.worker, 3),
      r.pgCpuMs ? f(r.pgCpuMs.api + (r.kind.startsWith('baseline') ? 0 : r.pgCpuMs.worker), 3) : 'n/a',
    ]),
  );
  input.printTable(
    ['request kind', 'parses/req', 'KiB to PG/req', 'KiB from PG/req', 'PG connections opened', 'WAL KiB/req (server)', 'Temporal server CPU ms/req', 'workflows (type × n)', 'wall s', 'req/s'],
    results.map((r) => [
      r.kind,
      f(r.parses),
      f(r.kibToServer),
      f(r.kibFromServer),
      String(r.connections),
      r.walKib === null ? 'n/a' : f(r.walKib, 1),
      f(r.cpuMs.temporal, 2),
      [...r.workflows].map(([type, n]) => `${type} × ${n}`).join(', ') || '-',
      r.seconds.toFixed(1),
      (r.n / r.seconds).toFixed(0),
    ]),
  );
  const idleLine = (r: Rates) => {
    const perSecond = (v: number) => (v / r.seconds).toFixed(1);
    const d = r.delta;
    return (
      `API ${perSecond(statementsOf(d.wire.api))} statements, ${perSecond(d.cpu.api * 1000)} CPU ms; worker ${perSecond(statementsOf(d.wire.worker))} statements, ${perSecond(d.cpu.worker * 1000)} CPU ms; ` +
      `Temporal dev server ${perSecond(d.cpu.temporal * 1000)} CPU ms` +
      (d.pgCpu ? `; their Postgres backends ${perSecond((d.pgCpu.api + d.pgCpu.worker) * 1000)} CPU ms` : '') +
      (d.walBytes !== null ? `; WAL on the server ${perSecond(d.walBytes / 1024)} KiB` : '')
    );
  };
  const [atStart, atEnd, used] = idle;
  console.log(`idle, per second: at the start ${idleLine(atStart)}`);
  console.log(`                  at the end   ${idleLine(atEnd)}`);
  console.log(`                  taken off every phase in proportion to its duration (the lower of the two, per figure; WAL is not taken off): ${idleLine(used)}`);
  const base = results.find((r) => r.kind.startsWith('baseline'));
  const read = results.find((r) => r.kind.startsWith('hot read'));
  if (base && read) {
    console.log(
      `hot read vs the baseline (same N, same concurrency): API CPU ${f(read.cpuMs.api, 3)} ms/req against ${f(base.cpuMs.api, 3)} (${(read.cpuMs.api / base.cpuMs.api).toFixed(2)}x the floor); ` +
        `statements ${f(read.statements.api)} against ${f(base.statements.api)}` +
        (read.pgCpuMs && base.pgCpuMs ? `; Postgres CPU ${f(read.pgCpuMs.api, 3)} ms/req against ${f(base.pgCpuMs.api, 3)} (${(read.pgCpuMs.api / base.pgCpuMs.api).toFixed(2)}x)` : ''),
    );
  }
  printModel(input, results);
}

// ---- the capacity model (docs/capacity.md explains the mix and the assumptions) ------------------

/** The request mix of docs/capacity.md: shares of requests, by the kind whose figures stand for them. */
export const MIX: Array<{ share: number; kinds: string[]; label: string }> = [
  { share: 0.61, kinds: ['hot read'], label: 'hot read' },
  { share: 0.1, kinds: ['inventory page (1,000 notes), read'], label: 'inventory page (every page read)' },
  { share: 0.1, kinds: ['apply: POST'], label: 'apply (one writer per vault)' },
  { share: 0.05, kinds: ['search_notes (MCP), rare word (0.1%', 'search_notes (MCP), common'], label: 'search (half rare, half common word)' },
  { share: 0.05, kinds: ['MCP call'], label: 'MCP call' },
  { share: 0.03, kinds: ['generate'], label: 'generate' },
  { share: 0.03, kinds: ['proposal'], label: 'proposal → receipt' },
  { share: 0.02, kinds: ['media upload'], label: 'media upload (1 MiB)' },
  { share: 0.005, kinds: ['transaction'], label: 'transaction of 100' },
  { share: 0.005, kinds: ['OAuth'], label: 'OAuth round trip' },
];

const SECONDS_PER_MONTH = 30 * 24 * 3600;

/**
 * Actions as production would have them: every workflow of the platform waits once with a timeout
 * (the review's expiry, the reservation's TTL, the OAuth attempt's TTL), so each starts one timer;
 * here the bench's answer (an approval, the provider's, Google's) often arrives before the
 * workflow's first task and no timer is started. A person or a real model takes longer.
 */
export const productionActions = (r: PhaseResult): number => {
  const workflows = [...r.workflows.values()].reduce((a, b) => a + b, 0) / r.n;
  return r.actions - (r.actionKinds.get('timer') ?? 0) / r.n + workflows;
};

function printModel(input: CapacitySuiteInput, results: PhaseResult[]): void {
  const pick = (prefix: string) => results.find((r) => r.kind.startsWith(prefix));
  type Weighted = { api: number; worker: number; pg: number; statements: number; roundTrips: number; actions: number; walKib: number };
  const zero = (): Weighted => ({ api: 0, worker: 0, pg: 0, statements: 0, roundTrips: 0, actions: 0, walKib: 0 });
  const mixed = zero();
  const contributions: string[][] = [];
  const pgMeasured = results.every((r) => r.pgCpuMs !== null);
  const pgCell = (v: number) => (pgMeasured ? v.toFixed(3) : 'n/a');
  for (const entry of MIX) {
    const found = entry.kinds.map(pick).filter((r): r is PhaseResult => r !== undefined);
    if (found.length === 0) continue;
    const each = entry.share / found.length;
    const part = zero();
    for (const r of found) {
      part.api += each * r.cpuMs.api;
      part.worker += each * r.cpuMs.worker;
      part.pg += each * (r.pgCpuMs ? r.pgCpuMs.api + r.pgCpuMs.worker : 0);
      part.statements += each * (r.statements.api + r.statements.worker);
      part.roundTrips += each * (r.roundTrips.api + r.roundTrips.worker);
      part.actions += each * productionActions(r);
      part.walKib += each * (r.walKib ?? 0);
    }
    for (const key of Object.keys(mixed) as (keyof Weighted)[]) mixed[key] += part[key];
    contributions.push([entry.label, `${(entry.share * 100).toFixed(1)} %`, part.api.toFixed(3), part.worker.toFixed(3), pgCell(part.pg), part.statements.toFixed(2), part.actions.toFixed(3), part.walKib.toFixed(1)]);
  }
  contributions.push(['per request of the mix', '100 %', mixed.api.toFixed(3), mixed.worker.toFixed(3), pgCell(mixed.pg), mixed.statements.toFixed(2), mixed.actions.toFixed(3), mixed.walKib.toFixed(1)]);
  input.printTable(['mix (docs/capacity.md): share × per-request figure', 'share', 'API CPU ms', 'worker CPU ms', 'Postgres CPU ms', 'statements', 'Temporal actions*', 'WAL KiB'], contributions);
  const rows: string[][] = [];
  const line = (name: string, perRequest: number, unit: (rate: number) => string, digits = 3) => rows.push([name, perRequest.toFixed(digits), unit(1_000), unit(10_000)]);
  line('API CPU ms per request → cores busy', mixed.api, (rate) => ((rate * mixed.api) / 1000).toFixed(1));
  line('worker CPU ms per request → cores busy', mixed.worker, (rate) => ((rate * mixed.worker) / 1000).toFixed(1));
  if (pgMeasured) line('Postgres backend CPU ms per request → cores busy', mixed.pg, (rate) => ((rate * mixed.pg) / 1000).toFixed(1));
  line('Postgres statements per request → per second', mixed.statements, (rate) => Math.round(rate * mixed.statements).toLocaleString('en-US'), 2);
  line('Postgres round trips per request → per second', mixed.roundTrips, (rate) => Math.round(rate * mixed.roundTrips).toLocaleString('en-US'), 2);
  line('WAL KiB per request → MiB per second', mixed.walKib, (rate) => ((rate * mixed.walKib) / 1024).toFixed(1), 1);
  line('Temporal actions* per request → per second', mixed.actions, (rate) => Math.round(rate * mixed.actions).toLocaleString('en-US'));
  line('Temporal actions* per month (30 days)', mixed.actions, (rate) => `${((rate * mixed.actions * SECONDS_PER_MONTH) / 1e6).toFixed(0)} M`);
  input.printTable(['capacity model, this run', 'per request', 'at 1,000 req/s', 'at 10,000 req/s'], rows);
  console.log('* Temporal actions with one wait timer per workflow, as in production (productionActions in bench/capacity.ts); the first table shows them as measured.');
}
