// Automation benchmark: proposals through the API, the review workflow and the Forge execution
// (create → pending_review, approve → executed receipt: the pipeline's two halves, each against the
// bare cost of starting and completing a one-activity workflow, scheduledTriggerFire, with the
// Temporal client; targets: the first half within 1.5×, the second within 2× at p50), and the CPU
// each costs by process (Temporal's dev server, the worker, the API, this database's Postgres
// backends, this client) beside a bare workflow plus a bare authenticated write (one REST note
// apply): what the same work costs with no review in between. The end-to-end comparison with a bare
// workflow is retired (issue 49; bench/README.md "Automation" says why): at 4 concurrent on two
// shared cores it measured CPU per item, which the CPU table now shows directly, by process.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { cpuSeconds, databaseBackendsCpuSeconds } from './proc-cpu.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { scheduledTriggerFire } from '../workflows/scheduled-trigger.ts';

export type Percentiles = { name: string; count: number; p50: number; p95: number; mean: number };

function percentiles(name: string, samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { name, count: sorted.length, p50: at(50), p95: at(95), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/**
 * The suite, whole: a Temporal dev server, a worker process and the API process (`startServer`),
 * a warm-up, then 4 at a time the halves, the bare workflows and the bare writes, each with the CPU
 * it cost by process, and one at a time the halves again (the pipeline's own latency, where the
 * 4-concurrent figures also measure how much work each proposal is for two shared cores).
 */
export type AutomationSuiteInput = {
  databaseUrl: string;
  /** The API's and the worker's environment (bench/run.ts's serverEnv: allowances raised). */
  env: NodeJS.ProcessEnv;
  proposals: number;
  startServer: (kind: 'app', env: NodeJS.ProcessEnv) => Promise<{ url: string; child: ChildProcess }>;
  stopServer: (child: ChildProcess) => Promise<void>;
  printTable: (header: string[], rows: string[][]) => void;
};

export async function runAutomationSuite(input: AutomationSuiteInput): Promise<void> {
  const temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true });
  const taskQueue = `bench-${process.pid}`;
  const env = { ...input.env, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn' };
  const worker = spawn(process.execPath, [fileURLToPath(new URL('../workers/main.ts', import.meta.url))], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const server = await input.startServer('app', env);
  const db = await createDatabasePool(input.databaseUrl, { maxPoolSize: 4 });
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const client = new Client({ connection });
    const setup = await setUp(db, server.url);
    const processes = { temporal: temporal.process, worker, api: server.child, databaseName: new URL(input.databaseUrl).pathname.slice(1) };
    const count = input.proposals;
    // Warm-up: JIT, pools, the worker's first tasks.
    await runProposals(setup, Math.min(10, count), 4);
    await runBareWorkflows(client, taskQueue, Math.min(10, count), 4);
    await runBareWrites(setup, Math.min(10, count), 4);

    const proposals = await withCpu(processes, count, () => runProposals(setup, count, 4));
    const bare = await withCpu(processes, count, () => runBareWorkflows(client, taskQueue, count, 4));
    const writes = await withCpu(processes, count, () => runBareWrites(setup, count, 4));
    // Read after the timing: how long the bare workflows' tasks waited in the server between being
    // scheduled and reaching the worker (a throttled history queue shows here first, decision 116).
    const waits = await workflowTaskWaits(client, bare.result.ids);
    const baseline = percentiles('bare one-activity workflow (start → result)', bare.result.samples);
    const halves = [percentiles('proposal create → pending_review', proposals.result.toPending), percentiles('proposal approve → executed receipt', proposals.result.toReceipt)];
    const row = (s: Percentiles) => [s.name, String(s.count), s.p50.toFixed(1), s.p95.toFixed(1), s.mean.toFixed(1)];
    input.printTable(
      ['automation scenario (4 concurrent)', 'n', 'p50 ms', 'p95 ms', 'mean ms'],
      [...halves, baseline, percentiles('bare authenticated write: REST note apply', writes.result), percentiles('bare workflow: a workflow task, scheduled → picked up', waits)].map(row),
    );
    console.log(halvesAgainst(halves, baseline, '4 concurrent'));

    const sum = (a: CpuPerItem, b: CpuPerItem): CpuPerItem => Object.fromEntries(cpuColumns.map((k) => [k, a[k] + b[k]])) as CpuPerItem;
    const bareBoth = sum(bare.cpu, writes.cpu);
    const cpuRows: [string, CpuPerItem][] = [
      ['proposal: create → approve → executed receipt', proposals.cpu],
      ['bare one-activity workflow', bare.cpu],
      ['bare authenticated write (REST note apply)', writes.cpu],
      ['bare workflow + bare write', bareBoth],
    ];
    input.printTable(
      ['CPU ms per item (4 concurrent)', ...cpuColumns],
      cpuRows.map(([name, cpu]) => [name, ...cpuColumns.map((k) => cpu[k].toFixed(1))]),
    );
    console.log(`CPU per proposal: ${proposals.cpu.total.toFixed(1)} ms, ${(proposals.cpu.total / bareBoth.total).toFixed(2)}x a bare workflow plus a bare write (${bareBoth.total.toFixed(1)} ms); no target (bench/README.md)`);

    const alone = await runProposals(setup, Math.max(10, Math.floor(count / 4)), 1);
    const bareAlone = await runBareWorkflows(client, taskQueue, Math.max(10, Math.floor(count / 4)), 1);
    const baselineAlone = percentiles('bare one-activity workflow (start → result)', bareAlone.samples);
    const halvesAlone = [percentiles('proposal create → pending_review', alone.toPending), percentiles('proposal approve → executed receipt', alone.toReceipt)];
    input.printTable(['automation scenario (one at a time)', 'n', 'p50 ms', 'p95 ms', 'mean ms'], [...halvesAlone, baselineAlone].map(row));
    console.log(halvesAgainst(halvesAlone, baselineAlone, 'one at a time'));
  } finally {
    await connection.close();
    await db.end();
    await input.stopServer(server.child);
    await input.stopServer(worker);
    await temporal.stop();
  }
}

function halvesAgainst([pending, receipt]: Percentiles[], base: Percentiles, how: string): string {
  const ratio = (of: Percentiles, key: 'p50' | 'p95') => (of[key] / base[key]).toFixed(2);
  return (
    `automation halves vs bare workflow (${how}): create → pending_review p50 ${ratio(pending!, 'p50')}x, p95 ${ratio(pending!, 'p95')}x (target 1.5x at p50); ` +
    `approve → receipt p50 ${ratio(receipt!, 'p50')}x, p95 ${ratio(receipt!, 'p95')}x (target 2x at p50)`
  );
}

const cpuColumns = ['temporal', 'worker', 'api', 'postgres', 'client', 'total'] as const;
type CpuPerItem = Record<(typeof cpuColumns)[number], number>;
type Processes = { temporal: ChildProcess; worker: ChildProcess; api: ChildProcess; databaseName: string };

/**
 * `run`, and the CPU milliseconds per item (`items` of them) each process spent meanwhile, from /proc
 * (bench/proc-cpu.ts): on two shared cores the CPU a process uses per item moves far less with what
 * else has the cores than wall time does. Postgres is this database's backends (the API's and the
 * worker's pools, this client's), not the server's background processes nor other databases' work.
 */
async function withCpu<T>(processes: Processes, items: number, run: () => Promise<T>): Promise<{ result: T; cpu: CpuPerItem }> {
  const read = () => ({
    temporal: cpuSeconds(processes.temporal.pid) ?? 0,
    worker: cpuSeconds(processes.worker.pid) ?? 0,
    api: cpuSeconds(processes.api.pid) ?? 0,
    postgres: databaseBackendsCpuSeconds(processes.databaseName),
    client: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  });
  const before = read();
  const result = await run();
  const after = read();
  const per = (k: keyof typeof before) => ((after[k] - before[k]) * 1000) / items;
  const cpu = { temporal: per('temporal'), worker: per('worker'), api: per('api'), postgres: per('postgres'), client: per('client') };
  return { result, cpu: { ...cpu, total: cpu.temporal + cpu.worker + cpu.api + cpu.postgres + cpu.client } };
}

type Setup = { baseUrl: string; proposerToken: string; reviewerToken: string; workspaceId: string; mappingId: string };

/** A workspace with a proposer (its owner) and a reviewer, and a vault mapping the proposals and the bare writes write to. */
async function setUp(db: DatabasePool, baseUrl: string): Promise<Setup> {
  const proposer = await createAccount(db, { email: `bench-proposer-${randomUUID()}@example.test`, displayName: 'Proposer', plan: 'team' });
  const reviewer = await createAccount(db, { email: `bench-reviewer-${randomUUID()}@example.test`, displayName: 'Reviewer', plan: 'team' });
  const proposerToken = (await issueAccessToken(db, { accountId: proposer.id, name: 'bench' })).token;
  const reviewerToken = (await issueAccessToken(db, { accountId: reviewer.id, name: 'bench' })).token;
  const ws = await createWorkspace(db, { name: 'Bench automation', ownerAccountId: proposer.id });
  await addMember(db, { workspaceId: ws.id, accountId: reviewer.id, role: 'reviewer' });
  const vault = await createVault(db, { name: 'Bench automation vault', ownerWorkspaceId: ws.id });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });
  return { baseUrl, proposerToken, reviewerToken, workspaceId: ws.id, mappingId };
}

const authorized = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

/** `count` proposals, `concurrency` at a time, each created, followed to pending_review, approved and followed to its executed receipt: each half's milliseconds. */
async function runProposals(setup: Setup, count: number, concurrency: number): Promise<{ toPending: number[]; toReceipt: number[]; endToEnd: number[] }> {
  const proposalUrl = (id: string) => `${setup.baseUrl}/api/dev/automation/proposals/${id}`;
  // Follows the proposal as a client would: blocking reads that wait out the states it passes
  // through on the way to the ones awaited (decisions 103 and 119).
  const wait = async (id: string, seen: string, states: string[], passing: string[]) => {
    for (let state = seen; ; ) {
      if (states.includes(state)) return state;
      const waitedOut = [...new Set([state, ...passing])].join(',');
      state = (await json(await fetch(`${proposalUrl(id)}?changedFrom=${waitedOut}&wait=20`, { headers: authorized(setup.proposerToken) })))['state'] as string;
    }
  };
  const toPending: number[] = [];
  const toReceipt: number[] = [];
  const endToEnd: number[] = [];
  const one = async (i: number) => {
    const started = performance.now();
    const created = await json(
      await fetch(`${setup.baseUrl}/api/dev/automation/proposals`, {
        method: 'POST',
        headers: { ...authorized(setup.proposerToken), 'idempotency-key': `bench-${i}-${randomUUID()}` },
        body: JSON.stringify({ workspaceId: setup.workspaceId, bridge: 'bench', action: { kind: 'note.write', mappingId: setup.mappingId, path: `Bench/Proposal ${randomUUID()}.md`, content: `# ${i}\n` } }),
      }),
    );
    const id = created['id'] as string;
    // The 201 says pending_review (the review is opened with the proposal, decision 96).
    await wait(id, created['state'] as string, ['pending_review'], []);
    const reviewable = performance.now();
    toPending.push(reviewable - started);
    const approved = await json(await fetch(`${proposalUrl(id)}/approve`, { method: 'POST', headers: authorized(setup.reviewerToken), body: '{}' }));
    const done = await wait(id, approved['state'] as string, ['executed', 'failed'], ['approved', 'executing']);
    if (done !== 'executed') throw new Error(`proposal ${id} ${done}`);
    const finished = performance.now();
    toReceipt.push(finished - reviewable);
    endToEnd.push(finished - started);
  };
  await inParallel(count, concurrency, one);
  return { toPending, toReceipt, endToEnd };
}

/** `count` one-activity workflows started and awaited with the Temporal client, `concurrency` at a time. */
async function runBareWorkflows(client: Client, taskQueue: string, count: number, concurrency: number): Promise<{ samples: number[]; ids: string[] }> {
  const samples: number[] = [];
  const ids: string[] = [];
  await inParallel(count, concurrency, async () => {
    const started = performance.now();
    const workflowId = `bench-bare-${randomUUID()}`;
    await client.workflow.execute(scheduledTriggerFire, { taskQueue, workflowId, args: [{ triggerId: randomUUID() }] });
    samples.push(performance.now() - started);
    ids.push(workflowId);
  });
  return { samples, ids };
}

/** `count` bare authenticated writes, `concurrency` at a time: one REST note apply each, a new note and Idempotency-Key every time. */
async function runBareWrites(setup: Setup, count: number, concurrency: number): Promise<number[]> {
  const samples: number[] = [];
  await inParallel(count, concurrency, async () => {
    const started = performance.now();
    const body = await json(
      await fetch(`${setup.baseUrl}/api/dev/notes`, {
        method: 'POST',
        headers: { ...authorized(setup.proposerToken), 'idempotency-key': randomUUID() },
        body: JSON.stringify({ mappingId: setup.mappingId, path: `Bench/Write ${randomUUID()}.md`, content: '# Written\n', dryRun: false }),
      }),
    );
    if (body['applied'] !== true) throw new Error(`write not applied: ${JSON.stringify(body).slice(0, 200)}`);
    samples.push(performance.now() - started);
  });
  return samples;
}

async function inParallel(count: number, concurrency: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

/** Each workflow task's wait between WorkflowTaskScheduled and WorkflowTaskStarted, from the workflows' histories. */
async function workflowTaskWaits(client: Client, workflowIds: readonly string[]): Promise<number[]> {
  const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  const waits: number[] = [];
  for (const workflowId of workflowIds) {
    let scheduledAt: number | null = null;
    for (const event of (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []) {
      if (event.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) scheduledAt = millis(event.eventTime);
      else if (event.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED && scheduledAt !== null) waits.push(millis(event.eventTime) - scheduledAt);
    }
  }
  return waits;
}
