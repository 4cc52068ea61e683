// `npm run bench -- --suite observability`: what metrics and tracing cost, measured in the same run
// against a baseline with both off (docs/observability.md describes what each one records).
// 1. Hot read: the default suite's REST read (GET /api/dev/notes/:category/:filename on the seeded
//    10,000-note vault), the API in a child process (bench/serve.ts app), autocannon from this one.
// 2. Generate: whole JSON generate requests end to end, 50 concurrent callers of one organization,
//    with the intelligence suite's machinery (bench/intelligence.ts): one Temporal dev server and
//    one scripted provider for the whole suite, and for each measurement a fresh worker process
//    and API process (a task queue of their own) against them and the same database.
// Each is measured in three configurations of the processes under test:
//   off      no METRICS_PORT, no OTEL_* variables;
//   metrics  METRICS_PORT=0 (the API prints its metrics URL; the worker's is a free port chosen
//            here, so it can be scraped too), and this process scrapes every metrics page every
//            5 s during the measurement (3× the example config's 15 s), so the scrape's own cost is counted;
//   tracing  OTEL_EXPORTER_OTLP_ENDPOINT of a loopback sink in this process (it answers 200 to
//            POST /v1/traces and counts requests, bytes and spans) and OTEL_TRACES_SAMPLER=always_on.
// The configurations are interleaved (off, metrics, tracing, off, …) for `rounds` rounds; the table
// shows each configuration's median over the rounds and its ratio to off's. No timed assertions: the
// metrics target (≤ 5 % of throughput) is stated beside the figures.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { Connection } from '@temporalio/client';
import { createDatabasePool } from '../db/pool.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { closedLoop, generateEnv, generateJson, meteredCaller, startProvider } from './intelligence.ts';
import type { LoadResult } from './intelligence.ts';
import { cpuSeconds } from './proc-cpu.ts';

const CONFIGURATIONS = ['off', 'metrics', 'tracing'] as const;
type Configuration = (typeof CONFIGURATIONS)[number];

export type ObservabilitySuiteInput = {
  databaseUrl: string;
  /** The API's environment (allowances raised), without METRICS_PORT or OTEL_*. */
  env: NodeJS.ProcessEnv;
  /** Seconds per measurement. */
  duration: number;
  /** autocannon connections for the hot read. */
  connections: number;
  /** Rounds of the three configurations (at least 2). */
  rounds: number;
  /** Which workloads to run (`--only read` or `--only generate`); both by default. */
  workloads?: ReadonlySet<'read' | 'generate'>;
  /** The hot read against an API at `base` (bench/run.ts's `read:` scenario, its token and vault). */
  read: (base: string) => autocannon.Options;
  printTable: (header: string[], rows: string[][]) => void;
};

/** One measurement: throughput, latency, and what the observability side of it saw. */
type Sample = {
  perSecond: number;
  p50: number;
  p99: number;
  /** Requests completed, warm-up included (what the spans are divided by). */
  requests: number;
  errors: number;
  scrapes: ScrapeStats | null;
  spans: SinkCounts | null;
  /** CPU time the processes under test used per request in the measured window (null: not on Linux). */
  cpuMicros: number | null;
};
type ScrapeStats = { count: number; failed: number; bytes: number; meanMs: number };
type SinkCounts = { requests: number; bytes: number; spans: number };

/**
 * Concurrent generate callers. Fewer than the intelligence suite's 200: generate is bound by the
 * usage workflow (~35–55/s here), so 200 callers only queue, a request then takes ~6 s, and a 10 s
 * window would be mostly ramp-up after the warm-up's drain; at 50 a request takes ~1–2 s.
 */
const GENERATE_CALLERS = 50;

const serveScript = fileURLToPath(new URL('./serve.ts', import.meta.url));
const workerScript = fileURLToPath(new URL('../workers/main.ts', import.meta.url));

/** The parent's environment without any observability setting, then `env` on top. */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_') && key !== 'METRICS_PORT'));
  return { ...clean, ...env };
}

/** bench/serve.ts app: resolves once it prints its URL (and its metrics URL when METRICS_PORT is set). */
async function startApp(env: NodeJS.ProcessEnv): Promise<{ url: string; metricsUrl: string | null; child: ChildProcess }> {
  // BENCH_CPU_PROF_DIR: each API process writes a V8 CPU profile there (named by its configuration) on exit.
  const profileDir = process.env['BENCH_CPU_PROF_DIR'];
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=api-${env['METRICS_PORT'] !== undefined ? 'metrics' : env['OTEL_EXPORTER_OTLP_ENDPOINT'] ? 'tracing' : 'off'}-${Date.now()}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, serveScript, 'app'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'inherit'] });
  const wantMetrics = env['METRICS_PORT'] !== undefined;
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)/.exec(out)?.[1];
      const metricsUrl = /metrics (\S+)/.exec(out)?.[1] ?? null;
      if (url && (!wantMetrics || metricsUrl)) resolve({ url, metricsUrl, child });
    });
    child.once('exit', (code) => reject(new Error(`API process exited with ${code}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * How often the bench scrapes while metrics are on: three times as often as the example
 * configuration's 15 s (observability/prometheus/prometheus.yml), so each 10 s window includes
 * scrapes. Once a second overstated the cost: a scrape (~40 ms of the API's CPU and a dozen domain
 * queries) every second is 4 % of a core by itself.
 */
const SCRAPE_INTERVAL_MS = 5_000;

/** The hot read's fixed rate for measuring CPU per request: below what every configuration serves here. */
const CPU_RATE = 1_000;

/** GETs every page every SCRAPE_INTERVAL_MS until stopped; a scrape's time and size are recorded, its body discarded. */
function scrapeRegularly(urls: string[]): { stop: () => Promise<ScrapeStats> } {
  const result = { count: 0, failed: 0, bytes: 0, totalMs: 0 };
  let running = Promise.resolve();
  const scrape = async () => {
    await Promise.all(
      urls.map(async (url) => {
        const started = performance.now();
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
          const text = await res.text();
          if (!res.ok) throw new Error(String(res.status));
          result.count++;
          result.bytes += text.length;
          result.totalMs += performance.now() - started;
        } catch {
          result.failed++;
        }
      }),
    );
  };
  const timer = setInterval(() => {
    running = running.then(scrape);
  }, SCRAPE_INTERVAL_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      return { count: result.count, failed: result.failed, bytes: result.count ? result.bytes / result.count : 0, meanMs: result.count ? result.totalMs / result.count : 0 };
    },
  };
}

/**
 * The OTLP/HTTP sink: 200 to every POST /v1/traces, counting requests, bytes and spans (the
 * exporter sends JSON; a span is one `"spanId"` key, which `"parentSpanId"` does not match).
 */
async function startTraceSink(): Promise<{ endpoint: string; counts: () => SinkCounts; close: () => Promise<void> }> {
  const counts: SinkCounts = { requests: 0, bytes: 0, spans: 0 };
  const needle = Buffer.from('"spanId"');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      counts.requests++;
      counts.bytes += body.length;
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.method === 'POST' && req.url === '/v1/traces') {
        for (let at = body.indexOf(needle); at >= 0; at = body.indexOf(needle, at + needle.length)) counts.spans++;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}


const cpuOf = (pids: (number | undefined)[]) => {
  const values = pids.map(cpuSeconds);
  return values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + v!, 0);
};

const minus = (a: SinkCounts, b: SinkCounts): SinkCounts => ({ requests: a.requests - b.requests, bytes: a.bytes - b.bytes, spans: a.spans - b.spans });

function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function configurationEnv(configuration: Configuration, sinkEndpoint: string): NodeJS.ProcessEnv {
  if (configuration === 'metrics') return { METRICS_PORT: '0' };
  if (configuration === 'tracing') return { OTEL_EXPORTER_OTLP_ENDPOINT: sinkEndpoint, OTEL_TRACES_SAMPLER: 'always_on' };
  return {};
}

/** The hot read in one configuration: a fresh API process, 2 s of warm-up, `duration` s measured. */
async function hotRead(input: ObservabilitySuiteInput, configuration: Configuration, sink: Awaited<ReturnType<typeof startTraceSink>>): Promise<Sample> {
  const before = sink.counts();
  const server = await startApp({ ...input.env, ...configurationEnv(configuration, sink.endpoint) });
  let warm: autocannon.Result;
  let result: autocannon.Result;
  let scrapes: ScrapeStats | null = null;
  let cpuBefore: number | null = null;
  let cpuAfter: number | null = null;
  let fixedRequests = 0;
  try {
    const options = input.read(server.url);
    warm = await load({ ...options, connections: input.connections, duration: 2 });
    const scraper = server.metricsUrl ? scrapeRegularly([server.metricsUrl]) : null;
    result = await load({ ...options, connections: input.connections, duration: input.duration });
    // CPU per request at one fixed rate for every configuration: at full speed a slower
    // configuration also batches less per event-loop turn, which would blur what it costs.
    cpuBefore = cpuOf([server.child.pid]);
    const fixed = await load({ ...options, connections: input.connections, duration: input.duration, overallRate: CPU_RATE });
    cpuAfter = cpuOf([server.child.pid]);
    fixedRequests = fixed.requests.total;
    scrapes = (await scraper?.stop()) ?? null;
  } finally {
    // Shutting down flushes the spans still buffered, so they are counted with this measurement.
    await stop(server.child);
  }
  return {
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: warm.requests.total + result.requests.total + fixedRequests,
    errors: result.errors + result.timeouts + result.non2xx,
    scrapes,
    spans: configuration === 'tracing' ? minus(sink.counts(), before) : null,
    cpuMicros: cpuBefore !== null && cpuAfter !== null && fixedRequests > 0 ? ((cpuAfter - cpuBefore) * 1e6) / fixedRequests : null,
  };
}

type GenerateStack = {
  databaseUrl: string;
  env: NodeJS.ProcessEnv;
  temporalAddress: string;
  providerUrl: string;
  connection: Connection;
  secret: string;
  duration: number;
};

/** Until the worker polling `taskQueue` shows up in Temporal's view of it (its workflows would otherwise wait). */
async function waitForPoller(connection: Connection, taskQueue: string): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const { pollers } = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 });
    if (pollers && pollers.length > 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no worker polled ${taskQueue} within 120 s`);
}

/** Generate in one configuration: a fresh worker and API process on a task queue of their own. */
async function generate(stack: GenerateStack, configuration: Configuration, sink: Awaited<ReturnType<typeof startTraceSink>>): Promise<Sample> {
  const taskQueue = `bench-observability-${process.pid}-${randomUUID().slice(0, 8)}`;
  const base = generateEnv(stack.env, { temporalAddress: stack.temporalAddress, taskQueue, providerUrl: stack.providerUrl });
  const extra = configurationEnv(configuration, sink.endpoint);
  // The worker logs nothing at LOG_LEVEL=warn, so it is given a free port rather than 0 to be scrapable.
  const workerMetricsPort = configuration === 'metrics' ? String(await freePort()) : null;
  const before = sink.counts();
  const worker = spawn(process.execPath, [workerScript], {
    env: childEnv({ ...base, ...extra, ...(workerMetricsPort ? { METRICS_PORT: workerMetricsPort } : {}) }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let api: Awaited<ReturnType<typeof startApp>> | null = null;
  let measured: LoadResult;
  let scrapes: ScrapeStats | null = null;
  let requests = 0;
  let cpuBefore: number | null = null;
  let cpuMicros: number | null = null;
  try {
    api = await startApp({ ...base, ...extra });
    await waitForPoller(stack.connection, taskQueue);
    const url = `${api.url}/api/product/v1/intelligence/education/generate`;
    const call = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.secret}`, 'x-service-runtime-version': '1', 'idempotency-key': randomUUID(), accept: 'application/json', 'content-type': 'application/json' },
        body: generateJson,
      });
      const body = (await res.json()) as { code?: string; data?: { content?: string } };
      requests++;
      if (!res.ok || typeof body.data?.content !== 'string') throw new Error(`HTTP ${res.status} ${body.code ?? ''}`.trim());
    };
    // 5 s: both processes are fresh (JIT, the worker's first workflow tasks).
    await closedLoop('warm-up', GENERATE_CALLERS, 5, call);
    const pages = api.metricsUrl && workerMetricsPort ? [api.metricsUrl, `http://127.0.0.1:${workerMetricsPort}/metrics`] : [];
    const scraper = pages.length ? scrapeRegularly(pages) : null;
    cpuBefore = cpuOf([api.child.pid, worker.pid]);
    const counted = requests;
    measured = await closedLoop(`generate, ${configuration}`, GENERATE_CALLERS, stack.duration, call);
    const cpuAfter = cpuOf([api.child.pid, worker.pid]);
    if (cpuBefore !== null && cpuAfter !== null) cpuMicros = ((cpuAfter - cpuBefore) * 1e6) / (requests - counted);
    scrapes = (await scraper?.stop()) ?? null;
  } finally {
    // Both shut down before the sink is read: their last spans are flushed on the way out.
    if (api) await stop(api.child);
    await stop(worker);
  }
  return {
    perSecond: measured.perSecond,
    p50: measured.stats.p50,
    p99: measured.stats.p99,
    requests,
    errors: [...measured.errors.values()].reduce((a, b) => a + b, 0),
    scrapes,
    spans: configuration === 'tracing' ? minus(sink.counts(), before) : null,
    cpuMicros,
  };
}

export async function runObservabilitySuite(input: ObservabilitySuiteInput): Promise<void> {
  const rounds = Math.max(2, input.rounds);
  const sink = await startTraceSink();
  const readSamples = new Map<Configuration, Sample[]>(CONFIGURATIONS.map((c) => [c, []]));
  const generateSamples = new Map<Configuration, Sample[]>(CONFIGURATIONS.map((c) => [c, []]));
  try {
    const runs = (workload: 'read' | 'generate') => !input.workloads || input.workloads.has(workload);
    for (let round = 1; runs('read') && round <= rounds; round++) {
      for (const configuration of CONFIGURATIONS) {
        readSamples.get(configuration)!.push(await hotRead(input, configuration, sink));
        console.log(`  measured hot read, ${configuration}, round ${round}`);
      }
    }

    if (!runs('generate')) return printResults(input, rounds, readSamples, generateSamples);
    const provider = await startProvider();
    const temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true });
    const connection = await Connection.connect({ address: temporal.address });
    const db = await createDatabasePool(input.databaseUrl, { maxPoolSize: 4 });
    try {
      const account = await createAccount(db, { email: `bench-observability-${randomUUID()}@example.test`, displayName: 'Bench', plan: 'team' });
      const caller = await meteredCaller(db, account.id, 'observability');
      const stack: GenerateStack = {
        databaseUrl: input.databaseUrl,
        env: input.env,
        temporalAddress: temporal.address,
        providerUrl: provider.providerUrl,
        connection,
        secret: caller.secret,
        duration: input.duration,
      };
      for (let round = 1; round <= rounds; round++) {
        for (const configuration of CONFIGURATIONS) {
          generateSamples.get(configuration)!.push(await generate(stack, configuration, sink));
          console.log(`  measured generate, ${configuration}, round ${round}`);
        }
      }
    } finally {
      await db.end();
      await connection.close();
      await stop(provider.child);
      await temporal.stop();
    }
  } finally {
    await sink.close();
  }
  printResults(input, rounds, readSamples, generateSamples);
}

function printResults(input: ObservabilitySuiteInput, rounds: number, readSamples: Map<Configuration, Sample[]>, generateSamples: Map<Configuration, Sample[]>): void {
  const rows: string[][] = [];
  const ratios = new Map<string, number>();
  for (const [workload, samples] of [
    [`hot read (${input.connections} connections)`, readSamples],
    [`generate, JSON (${GENERATE_CALLERS} callers)`, generateSamples],
  ] as const) {
    if (samples.get('off')!.length === 0) continue;
    const off = median(samples.get('off')!.map((s) => s.perSecond));
    const cpuMedian = (list: Sample[]) => (list.every((s) => s.cpuMicros !== null) ? median(list.map((s) => s.cpuMicros!)) : null);
    const offCpu = cpuMedian(samples.get('off')!);
    for (const configuration of CONFIGURATIONS) {
      const list = samples.get(configuration)!;
      const perSecond = median(list.map((s) => s.perSecond));
      const ratio = perSecond / off;
      const cpu = cpuMedian(list);
      ratios.set(`${workload}/${configuration}`, ratio);
      rows.push([
        `${workload}: ${configuration}`,
        list.map((s) => s.perSecond.toFixed(0)).join(' / '),
        perSecond.toFixed(0),
        median(list.map((s) => s.p50)).toFixed(1),
        median(list.map((s) => s.p99)).toFixed(1),
        ratio.toFixed(3),
        cpu === null ? 'n/a' : `${list.map((s) => s.cpuMicros!.toFixed(0)).join(' / ')} → ${cpu.toFixed(0)}`,
        cpu === null || offCpu === null ? 'n/a' : (cpu / offCpu).toFixed(3),
        configuration === 'metrics'
          ? `≥ 0.95: ${ratio >= 0.95 ? 'met' : 'not met'} by req/s${cpu !== null && offCpu !== null ? `, ${offCpu / cpu >= 0.95 ? 'met' : 'not met'} by CPU` : ''}`
          : configuration === 'tracing'
            ? `cost ${((1 - ratio) * 100).toFixed(1)} % req/s${cpu !== null && offCpu !== null ? `, +${((cpu / offCpu - 1) * 100).toFixed(1)} % CPU` : ''}`
            : '',
        String(list.reduce((a, s) => a + s.errors, 0)),
        observed(list),
      ]);
    }
  }
  input.printTable(['observability cost, ' + `${input.duration} s × ${rounds} rounds each`, 'req/s per round', 'median req/s', 'p50 ms', 'p99 ms', 'x off', 'CPU µs/req', 'CPU x off', 'target', 'errors', 'observed'], rows);
  console.log(
    'req/s per round: each measurement in the order run (configurations interleaved); p50/p99: medians over the rounds; ' +
      `CPU µs/req: user + system time of the processes under test per request, median over the rounds (hot read: the API, at a fixed ${CPU_RATE} req/s after the throughput run; generate: the API and the worker, in the measured window); ` +
      'observed: metrics = scrapes during the measured window (mean page size, mean scrape time), tracing = spans the sink received per request served (warm-up included) and OTLP requests',
  );
}

function observed(list: Sample[]): string {
  const scrapes = list.map((s) => s.scrapes).filter((s): s is ScrapeStats => s !== null);
  if (scrapes.length > 0) {
    const count = scrapes.reduce((a, s) => a + s.count, 0);
    const failed = scrapes.reduce((a, s) => a + s.failed, 0);
    return `${count} scrapes${failed ? ` (${failed} failed)` : ''}, ${(median(scrapes.map((s) => s.bytes)) / 1024).toFixed(0)} KiB, ${median(scrapes.map((s) => s.meanMs)).toFixed(1)} ms`;
  }
  const traced = list.filter((s) => s.spans !== null);
  if (traced.length > 0) {
    const spans = traced.reduce((a, s) => a + s.spans!.spans, 0);
    const requests = traced.reduce((a, s) => a + s.requests, 0);
    const posts = traced.reduce((a, s) => a + s.spans!.requests, 0);
    const bytes = traced.reduce((a, s) => a + s.spans!.bytes, 0);
    return `${(spans / requests).toFixed(1)} spans/request (${spans} spans in ${posts} OTLP requests, ${(bytes / 1024 / 1024).toFixed(0)} MiB)`;
  }
  return '';
}
