// The metrics as an operator sees them (issue 26): a real API process and a real worker process
// (api/main.ts, workers/main.ts) with METRICS_PORT set, scraped every second by a real Prometheus
// (Debian's, installed by scripts/ensure-prometheus.sh) that also loads the alert rules in
// observability/prometheus/alerts.yml. A proposal is made, approved and executed by the worker on
// the run's Temporal dev server, one REST route is read N times, and Prometheus' HTTP API must then
// answer the exact request count under the route's template, the worker's Temporal SDK metrics and
// the domain gauges.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { accountWithToken } from './support/fixtures.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const rulesFile = join(root, 'observability/prometheus/alerts.yml');
const prometheusBin = process.env['PROMETHEUS_PATH'] || '/usr/bin/prometheus';
const promtoolBin = process.env['PROMTOOL_PATH'] || '/usr/bin/promtool';

/** Reads of one route, counted exactly by Prometheus afterwards. */
const READS = 25;
const READ_ROUTE = '/api/dev/automation/proposals/:id';
// The Temporal Core SDK's names as its Prometheus exporter writes them on the worker's page
// (counters with `_total`, durations in seconds).
const TEMPORAL_WORKFLOWS_COMPLETED = 'temporal_workflow_completed_total';
const TEMPORAL_ACTIVITY_EXECUTIONS = 'temporal_activity_execution_latency_seconds_count';
const workflowsCompletedOnPage = new RegExp(`^${TEMPORAL_WORKFLOWS_COMPLETED}[{ ]`);

type Running = { name: string; child: ChildProcess; output: string[] };
const running: Running[] = [];
let db: TestDatabase;
let tempDir: string;
let api: string;
let apiMetrics: string;
let workerMetrics: string;
let prometheus: string;

function start(name: string, command: string, args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== ''));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const entry = { name, child, output };
  running.push(entry);
  return entry;
}

/** The last lines a process wrote, for a failure message. */
const tail = (p: Running) => `${p.name} (exit ${p.child.exitCode ?? 'none'}):\n${p.output.slice(-20).join('\n')}`;

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, explain: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what} did not happen within ${timeoutMs} ms${cause}\n${explain()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const ok = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status === 200;

type Sample = { metric: Record<string, string>; value: [number, string] };
/** An instant query against Prometheus' HTTP API. */
async function query(promql: string): Promise<Sample[]> {
  const res = await fetch(`${prometheus}/api/v1/query?${new URLSearchParams({ query: promql })}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Sample[] } };
  if (body.status !== 'success' || !body.data) throw new Error(`query ${promql} failed: ${body.error ?? res.status}`);
  return body.data.result;
}
/** The single value of a query that sums or selects one series; null when there is none. */
async function scalar(promql: string): Promise<number | null> {
  const result = await query(promql);
  if (result.length > 1) throw new Error(`${promql} answered ${result.length} series: ${JSON.stringify(result.map((r) => r.metric))}`);
  return result.length === 0 ? null : Number(result[0]!.value[1]);
}

/** Waits until Prometheus has scraped `job` at least once after `since` (ms since the epoch). */
async function scrapedAfter(job: string, since: number): Promise<void> {
  await waitUntil(`a scrape of the ${job} target after ${new Date(since).toISOString()}`, async () => {
    // timestamp() of a bare selector is the sample's (the scrape's start); of an expression it would be the query's.
    const at = await scalar(`timestamp(up{job="${job}"})`);
    return at !== null && at * 1000 > since && (await scalar(`up{job="${job}"}`)) === 1;
  }, 30_000, () => running.map(tail).join('\n\n'));
}

let lastPage = '';
/** The sum of the samples matching `series` on a /metrics page, read directly (not through Prometheus); null when none. */
async function pageValue(url: string, series: RegExp): Promise<number | null> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(5_000) })).text();
  lastPage = text.split('\n').filter((l) => !l.startsWith('#') && /^(hnp_http_requests_total|temporal_)/.test(l) && !/_bucket\{/.test(l)).slice(0, 200).join('\n');
  let total: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith('#') && series.test(line)) total = (total ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

beforeAll(async () => {
  // CI starts from a clean machine: install Debian's prometheus and promtool when they are missing.
  const ensured = spawnSync('bash', [join(root, 'scripts/ensure-prometheus.sh')], { encoding: 'utf8', timeout: 600_000 });
  if (ensured.status !== 0) {
    throw new Error(`scripts/ensure-prometheus.sh failed (${ensured.error?.message ?? `exit ${ensured.status ?? ensured.signal}`}):\n${ensured.stdout}${ensured.stderr}`);
  }

  db = await createTestDatabase();
  tempDir = mkdtempSync(join(tmpdir(), 'hnp-prometheus-'));
  const [apiPort, apiMetricsPort, workerMetricsPort, prometheusPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '6',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `prometheus-${process.pid}-${randomBytes(3).toString('hex')}`,
    HOST: '127.0.0.1',
    METRICS_HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    SECRETS_ENCRYPTION_KEYS: `prometheus:${randomBytes(32).toString('base64')}`,
    SHUTDOWN_GRACE_MS: '1000',
    REST_REQUESTS_PER_MINUTE: '100000',
  };
  const apiProcess = start('api', process.execPath, ['api/main.ts'], { ...env, PORT: String(apiPort), METRICS_PORT: String(apiMetricsPort) });
  const workerProcess = start('worker', process.execPath, ['workers/main.ts'], { ...env, METRICS_PORT: String(workerMetricsPort) });
  api = `http://127.0.0.1:${apiPort}`;
  apiMetrics = `http://127.0.0.1:${apiMetricsPort}/metrics`;
  workerMetrics = `http://127.0.0.1:${workerMetricsPort}/metrics`;

  // Prometheus scrapes both every second and loads the alert rules (it refuses to start on a bad file).
  const config = join(tempDir, 'prometheus.yml');
  writeFileSync(config, [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    'rule_files:',
    `  - ${JSON.stringify(rulesFile)}`,
    'scrape_configs:',
    '  - job_name: api',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${apiMetricsPort}']`,
    '  - job_name: worker',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${workerMetricsPort}']`,
    '',
  ].join('\n'));
  const prometheusProcess = start('prometheus', prometheusBin, [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(tempDir, 'tsdb')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`,
    '--log.level=warn',
  ]);
  prometheus = `http://127.0.0.1:${prometheusPort}`;

  await waitUntil('the API answering /readyz 200', () => ok(`${api}/readyz`), 60_000, () => tail(apiProcess));
  await waitUntil("the API's /metrics answering 200", () => ok(apiMetrics), 30_000, () => tail(apiProcess));
  await waitUntil("the worker's /metrics answering 200", () => ok(workerMetrics), 60_000, () => tail(workerProcess));
  await waitUntil('Prometheus answering /-/ready', () => ok(`${prometheus}/-/ready`), 30_000, () => tail(prometheusProcess));
}, 180_000);

afterAll(async () => {
  await Promise.all(
    running.map(({ child }) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    })),
  );
  await db?.drop();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
}, 60_000);

describe('Prometheus', () => {
  it('promtool accepts the alert rules', () => {
    const checked = spawnSync(promtoolBin, ['check', 'rules', rulesFile], { encoding: 'utf8', timeout: 60_000 });
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0);
    expect(checked.stdout).toContain('SUCCESS');
  });

  it('scrapes the API and the worker: exact route counts, Temporal worker metrics, domain gauges, and the rules loaded', async () => {
    // The accounts and the workspace, as an operator would create them.
    const proposer = await accountWithToken(db.pool, 'team');
    const reviewer = await accountWithToken(db.pool, 'developer_agent');
    const workspaceId = (await createWorkspace(db.pool, { name: 'Metrics', ownerAccountId: proposer.account.id })).id;
    await addMember(db.pool, { workspaceId, accountId: reviewer.account.id, role: 'reviewer' });
    const vault = await createVault(db.pool, { name: 'Metrics vault', ownerWorkspaceId: workspaceId });
    const { mappingId } = await createMapping(db.pool, { vaultId: vault.id });
    const call = async (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const stateOf = (id: string) => db.pool.oneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM action_proposals WHERE id = ${id}`);

    // A proposal the worker reviews and, once approved, executes (Temporal workflows on the worker).
    const proposed = await call(proposer.token, 'POST', '/api/dev/automation/proposals', {
      workspaceId, bridge: 'metrics', summary: 'Metrics', action: { kind: 'note.write', mappingId, path: 'Metrics/Scraped.md', content: '# Scraped\n' },
    }, { 'idempotency-key': `metrics-${randomUUID()}` });
    expect(proposed.status, JSON.stringify(proposed.json)).toBe(201);
    const proposalId = proposed.json['id'] as string;
    const explain = () => running.map(tail).join('\n\n');
    await waitUntil('the review open (pending_review)', async () => (await stateOf(proposalId)) === 'pending_review', 30_000, explain);
    const approved = await call(reviewer.token, 'POST', `/api/dev/automation/proposals/${proposalId}/approve`, {});
    expect(approved.status, JSON.stringify(approved.json)).toBeLessThan(300);
    await waitUntil('the proposal executed by the worker', async () => (await stateOf(proposalId)) === 'executed', 60_000, explain);
    await waitUntil('no workflow start pending', async () =>
      (await db.pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM workflow_start_intents WHERE started_at IS NULL`)) === 0, 30_000);

    // N reads of one parameterized route.
    for (let i = 0; i < READS; i++) {
      const read = await call(reviewer.token, 'GET', `/api/dev/automation/proposals/${proposalId}`);
      expect(read.status).toBe(200);
    }

    // The processes' own pages show the traffic (the counter moves when the response is done), and
    // only then must a later scrape of each target exist, so Prometheus' answer below is final.
    const readsOnPage = new RegExp(`^hnp_http_requests_total\\{(?=[^}]*route="${READ_ROUTE.replace(/[/:]/g, (c) => `\\${c}`)}")(?=[^}]*method="GET")`);
    await waitUntil(`${READS} reads on the API's own /metrics page`, async () => (await pageValue(apiMetrics, readsOnPage)) === READS, 10_000,
      () => `the page: ${lastPage}`);
    await waitUntil(`a completed workflow on the worker's own /metrics page`, async () => ((await pageValue(workerMetrics, workflowsCompletedOnPage)) ?? 0) >= 1, 30_000,
      () => `the page: ${lastPage}`);
    const settled = Date.now();
    await scrapedAfter('api', settled);
    await scrapedAfter('worker', settled);

    // (a) The exact count, under the route's template (never the requested path).
    expect(await scalar(`sum(hnp_http_requests_total{job="api",route="${READ_ROUTE}",method="GET"})`)).toBe(READS);
    expect(await scalar(`sum(hnp_http_requests_total{job="api",route="${READ_ROUTE}",method="GET",status_class="2xx"})`)).toBe(READS);
    expect(await query('hnp_http_requests_total{route=~".*[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-.*"}')).toEqual([]);
    expect(await scalar(`sum(hnp_http_request_duration_seconds_count{job="api",route="${READ_ROUTE}",method="GET"})`)).toBe(READS);
    // Every series says which process it came from.
    expect(await query('count by (job, __name__) ({__name__=~"(hnp|temporal)_.+", process!~"api|worker"})')).toEqual([]);

    // (b) The Temporal Core SDK's metrics, from the worker's page: the one review workflow completed,
    // having run Forge's execution once as an activity.
    expect(await scalar(`sum(${TEMPORAL_WORKFLOWS_COMPLETED}{job="worker",process="worker",workflow_type="proposalReview"})`)).toBe(1);
    expect(await scalar(`sum(${TEMPORAL_ACTIVITY_EXECUTIONS}{job="worker",activity_type="executeForge"})`)).toBe(1);
    expect(await scalar('sum(temporal_worker_task_slots_available{job="worker"})')).toBeGreaterThan(0);

    // (c) Domain gauges, read from the database at the scrape.
    expect(await scalar('hnp_proposals{job="api",state="executed"}')).toBe(1);
    expect(await scalar('hnp_workflow_starts_pending{job="api"}')).toBe(0);
    // The pool metrics of both processes.
    expect(await scalar('hnp_db_pool_max_connections{job="api"}')).toBe(6);
    expect(await scalar('count(hnp_db_pool_max_connections{job="worker"})')).toBe(1);

    // The alert rules are loaded, and none fires on a healthy stack.
    const rules = (await (await fetch(`${prometheus}/api/v1/rules?type=alert`)).json()) as { data: { groups: { rules: { name: string }[] }[] } };
    expect(rules.data.groups.flatMap((g) => g.rules.map((r) => r.name)).sort()).toEqual(
      ['BudgetAbove90Percent', 'High5xxRate', 'PostgresPoolSaturated', 'WebhookExhaustionRising', 'WorkflowStartsPendingTooOld'],
    );
    const alerts = (await (await fetch(`${prometheus}/api/v1/alerts`)).json()) as { data: { alerts: unknown[] } };
    expect(alerts.data.alerts).toEqual([]);
  }, 150_000);
});
