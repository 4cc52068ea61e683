// `npm run bench`: load-tests the Developer REST API against a seeded 10,000-note vault and, in the
// same run, a baseline (bare Fastify + pg pool, same single-row SELECT, no auth). Prints req/s, p50,
// p99 and each scenario's throughput as a ratio of the baseline. Each server runs in its own child
// process; autocannon drives it from this one.
//   npm run bench -- [--duration 10] [--connections 32] [--only read,inventory]
//   npm run bench -- --suite import [--notes 10000] [--import-sample 500]   (bench/import.ts)
//   npm run bench -- --suite intelligence [--duration 10]   (bench/intelligence.ts)
//   BENCH_INTELLIGENCE=reserve npm run bench -- --suite intelligence   (only reserve() against its baseline)
//   npm run bench -- --suite education   (bench/education.ts)
//   npm run bench -- --suite media   (bench/media.ts)
//   npm run bench -- --suite console   (bench/console.ts)
//   npm run bench -- --suite starts [--proposals 200]   (bench/durable-starts.ts)
//   npm run bench -- --suite observability [--duration 10] [--rounds 2] [--only read|generate]   (bench/observability.ts)
//   npm run bench -- --suite capacity   (bench/capacity.ts; docs/capacity.md)
//   npm run bench -- --suite scale [--duration 10] [--connections 32]   (bench/scale.ts; docs/topology.md)
//   npm run bench -- --suite mcp [--mcp-notes 100000]   (bench/mcp.ts: a large vault, then a platform with an imported prose vault)
//   npm run bench -- --suite search   (bench/mcp.ts: only the platform with an imported prose vault)
//   npm run bench -- --suite rest [--only 'read:,runtime read,mcp read']   (only the REST table below; the three reads of one note)
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'slonik';
import { createDatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { migrate } from '../db/migrate.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  grantVault,
  issueServiceCredential,
  setProductRuntimeSettings,
} from '../domain/product-runtime/entities.ts';
import { encodeCursor } from '../domain/cursor.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { indexAllQueuedNotes } from '../domain/notes/substring-index.ts';
import { createDatabase, dropDatabase, withDatabase } from '../platform/local-stack/databases.ts';
import { findOrStartPostgres } from '../platform/local-stack/postgres-server.ts';
import { mcpToolRequest, runMcpSuite } from './mcp.ts';
import { runAutomationSuite } from './automation.ts';
import { drainTime, pileUp, requestPathCost, seedStartsWorkspace } from './durable-starts.ts';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../platform/local-stack/ports.ts';
import { importSuite } from './import.ts';
import { runIntelligenceSuite } from './intelligence.ts';
import { runEducationSuite } from './education.ts';
import { runMediaSuite } from './media.ts';
import { runConsoleSuite } from './console.ts';
import { runObservabilitySuite } from './observability.ts';
import { runScaleSuite } from './scale.ts';
import { runCapacitySuite } from './capacity.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    notes: { type: 'string', default: '10000' },
    'mcp-notes': { type: 'string', default: '100000' },
    suite: { type: 'string', default: 'all' },
    proposals: { type: 'string', default: '200' },
    'import-sample': { type: 'string', default: '500' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '2' },
  },
});
const suites = ['all', 'rest', 'import', 'capacity', 'education', 'media', 'console', 'intelligence', 'observability', 'automation', 'starts', 'mcp', 'search', 'scale'];
if (!suites.includes(args.suite)) {
  console.error(`--suite ${args.suite}: unknown; one of ${suites.join(', ')}`);
  process.exit(2);
}
const duration = Number(args.duration);
const connections = Number(args.connections);
const noteCount = Number(args.notes);

type ServerKind = 'app' | 'app-unparsed' | 'baseline';

type Scenario = {
  name: string;
  server: ServerKind;
  request: (base: string) => autocannon.Options;
  /**
   * Text the answer's body must hold, checked on one request before the scenario is measured: a 200
   * is not always the answer (an MCP tool's error is a 200 too), and a bench of errors measures nothing.
   */
  answers?: string;
};

/** One request of the scenario, whose body must hold `scenario.answers`. */
async function checkAnswer(scenario: Scenario, base: string): Promise<void> {
  const { url, method, headers, body } = scenario.request(base);
  const res = await fetch(url, { method: method ?? 'GET', headers: headers as Record<string, string>, body: body as string | undefined });
  const text = await res.text();
  if (!res.ok || !text.includes(scenario.answers!)) throw new Error(`${scenario.name}: answered ${res.status} without "${scenario.answers}": ${text.slice(0, 300)}`);
}

type Result = { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number; statuses: string };

const serveScript = fileURLToPath(new URL('./serve.ts', import.meta.url));

async function startServer(kind: ServerKind, env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  // BENCH_NODE_ARGS (e.g. --cpu-prof) lets a profiler run inside the server process.
  const nodeArgs = process.env['BENCH_NODE_ARGS']?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, serveScript, kind], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      // BENCH_SERVER_LOG=1: the server's own log lines (warnings and up) on stderr, labelled.
      if (process.env['BENCH_SERVER_LOG']) process.stderr.write(`[${kind}] ${chunk.toString()}`);
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { url, child };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function measure(scenario: Scenario, base: string): Promise<Result> {
  const options = scenario.request(base);
  await load({ ...options, connections, duration: 2 }); // warm-up: JIT, pools, caches
  const result = await load({ ...options, connections, duration });
  return {
    name: scenario.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statuses: Object.entries(result.statusCodeStats ?? {})
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, stat]) => `${code}×${(stat as { count: number }).count}`)
      .join(' '),
  };
}

function serverEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: databaseUrl,
    REST_REQUESTS_PER_MINUTE: '100000000',
    REST_MONTHLY_REQUESTS_TEAM: '1000000000',
    MCP_REQUESTS_PER_MINUTE: '100000000',
    MCP_MONTHLY_REQUESTS_TEAM: '1000000000',
  };
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(['', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n'));
}

/**
 * Durable workflow starts (bench/durable-starts.ts): the request path with the outbox, and the time
 * from Temporal's return until the API's relay has made every start recorded while it was away.
 */
async function runStartsSuite(databaseUrl: string) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-starts-'));
  const port = await freePort();
  const devServer = () => startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true, port, dbFilename: join(dir, 'temporal.sqlite') });
  let temporal = await devServer();
  let delivered = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/bench`;
  const taskQueue = `bench-starts-${process.pid}`;
  const env = {
    ...serverEnv(databaseUrl),
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'error',
    SECRETS_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    WEBHOOK_EGRESS_ALLOWLIST: '127.0.0.1',
  };
  const worker = spawn(process.execPath, [fileURLToPath(new URL('../workers/main.ts', import.meta.url))], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const server = await startServer('app', env);
  const db = await createDatabasePool(databaseUrl, { maxPoolSize: 4 });
  try {
    const setup = { db, baseUrl: server.url, receiverUrl };
    const seeded = await seedStartsWorkspace(setup);
    const cost = await requestPathCost(setup, seeded, Number(args.proposals));
    printTable(['durable starts: request path (one at a time)', 'n', 'p50 ms', 'p95 ms'], cost.map((c) => [c.name, String(c.stats.n), c.stats.p50.toFixed(2), c.stats.p95.toFixed(2)]));
    await temporal.stop();
    const piled = await pileUp(db, seeded, 200, 200);
    const restarted = performance.now();
    temporal = await devServer();
    const serverUp = performance.now() - restarted;
    const drained = await drainTime(db);
    console.log(
      `drain: ${piled} starts recorded while Temporal was down (200 reviews, 200 deliveries); Temporal's dev server took ${(serverUp / 1000).toFixed(1)} s to answer again, ` +
        `then every pending start was made in ${(drained / 1000).toFixed(2)} s by the API's relay (${((piled / drained) * 1000).toFixed(0)} starts/s); ${delivered} webhooks received so far`,
    );
  } finally {
    await db.end();
    await stopServer(server.child);
    await stopServer(worker);
    await temporal.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Vault import/export against one-note-per-transaction and API-transaction baselines, per note. */
async function runImportSuite(db: Awaited<ReturnType<typeof createDatabasePool>>, accountId: string) {
  const result = await importSuite({ db, accountId, notes: noteCount, sample: Number(args['import-sample']) });
  const table = (title: string, rows: typeof result.rows, baselineMsPerNote: number) =>
    printTable(
      [title, 'notes', 's', 'ms/note', 'notes/s', 'x baseline speed', 'events'],
      rows.map((r) => {
        const perNote = (r.seconds * 1000) / r.notes;
        return [r.name, String(r.notes), r.seconds.toFixed(2), perNote.toFixed(3), (r.notes / r.seconds).toFixed(0), (baselineMsPerNote / perNote).toFixed(1), String(r.events)];
      }),
    );
  table('import scenario (the seed notes, ~90 B)', result.rows, result.baselineMsPerNote);
  table('import scenario (prose notes, ~2.2 KB)', result.prose.rows, result.prose.baselineMsPerNote);
  const imported = result.rows[2]!;
  const prose = result.prose.rows[1]!;
  console.log(
    `vault import of ${noteCount} notes: ${imported.seconds.toFixed(2)} s with ${imported.events} events (target <= 5 s for 10,000: ${imported.seconds <= 5 ? 'met' : 'not met'}); ` +
      `the baseline's per-note cost would take ${((result.baselineMsPerNote * noteCount) / 1000).toFixed(1)} s`,
  );
  console.log(`prose: ${prose.seconds.toFixed(2)} s for ${noteCount} notes; the baseline's per-note cost would take ${((result.prose.baselineMsPerNote * noteCount) / 1000).toFixed(1)} s`);
}

async function main() {
  const { adminUrl, embedded } = await findOrStartPostgres(process.env, 'bench-postgres');
  const dbName = `hnp_bench_${process.pid}`;
  await createDatabase(adminUrl, dbName);
  const databaseUrl = withDatabase(adminUrl, dbName);
  try {
    await migrate(databaseUrl);
    const db = await createDatabasePool(databaseUrl, { maxPoolSize: 4 });
    const account = await createAccount(db, { email: `bench-${process.pid}@example.test`, displayName: 'Bench', plan: 'team' });
    const { token } = await issueAccessToken(db, { accountId: account.id, name: 'bench' });
    if (args.suite === 'all' || args.suite === 'mcp' || args.suite === 'search') {
      await runMcpSuite({ adminUrl, duration, notes: Number(args['mcp-notes']), parts: args.suite === 'search' ? 'platform' : 'all', startServer, stopServer, serverEnv, printTable });
    }
    if (args.suite === 'mcp' || args.suite === 'search') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'import') await runImportSuite(db, account.id);
    if (args.suite === 'import') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'capacity') {
      await runCapacitySuite({ databaseUrl, db, accountId: account.id, token, env: serverEnv(databaseUrl), startServer, stopServer, printTable });
    }
    if (args.suite === 'capacity') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'scale') await runScaleSuite({ databaseUrl, db, duration, connections, printTable });
    if (args.suite === 'scale') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'education') await runEducationSuite({ db, printTable });
    if (args.suite === 'education') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'media') {
      // The API's own pool size (DATABASE_POOL_SIZE's default) for the app and the baseline alike.
      const mediaDb = await createDatabasePool(databaseUrl, { maxPoolSize: 20 });
      await runMediaSuite({ db: mediaDb, printTable }).finally(() => mediaDb.end());
    }
    if (args.suite === 'media') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'console') await runConsoleSuite({ db, printTable });
    if (args.suite === 'console') {
      await db.end();
      return;
    }
    if (args.suite === 'all' || args.suite === 'intelligence') {
      await runIntelligenceSuite({ databaseUrl, env: serverEnv(databaseUrl), duration, startServer, stopServer, printTable });
    }
    if (args.suite === 'intelligence') {
      await db.end();
      return;
    }
    // A workspace vault, so the Product Runtime reads the same notes through an installation's grant.
    const workspace = await createWorkspace(db, { name: 'Bench workspace', ownerAccountId: account.id });
    const vault = await createVault(db, { name: 'Bench vault', ownerWorkspaceId: workspace.id });
    const { mappingId } = await createMapping(db, { vaultId: vault.id });
    const org = await createOrganization(db, { name: 'Bench organization' });
    await assignWorkspace(db, { organizationId: org.id, workspaceId: workspace.id });
    await setProductRuntimeSettings(db, org.id, { apiOperationsPerMonth: 1_000_000_000 });
    const product = await createProductDefinition(db, { slug: `bench-${process.pid}`, name: 'Bench product' });
    const installation = await createInstallation(db, { organizationId: org.id, productDefinitionId: product.id, workspaceId: workspace.id });
    const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'bench' });
    const { secret: serviceCredential } = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes: ['notes.read'] });
    await grantVault(db, { installationId: installation.id, vaultId: vault.id, access: 'read' });
    const target = { vaultId: vault.id, mappingId };
    // Earlier suites' notes still queued for the substring index are indexed first: not this seed's time.
    await indexAllQueuedNotes(db);
    const seedStarted = performance.now();
    // Seeded through the knowledge core, 100 notes per API transaction.
    for (let batch = 0; batch < noteCount / 100; batch++) {
      const actions = Array.from({ length: 100 }, (_, i) => {
        const n = batch * 100 + i;
        return {
          type: 'write-note' as const,
          path: `Folder ${String(n % 50).padStart(2, '0')}/Note ${String(n).padStart(5, '0')}.md`,
          content: `---\ntags: [bench, t${n % 7}]\n---\n# Note ${n}\n\nSome text about topic ${n % 97} linking [[Note ${(n + 1) % noteCount}]].\n`,
        };
      });
      await applyTransaction(db, target, actions, { actor: { type: 'account', id: account.id }, source: 'ops', requestId: null, idempotencyKey: null }, {
        accountId: account.id,
        route: 'bench:seed',
        scope: mappingId,
        key: `seed-${batch}`,
        fingerprint: String(batch),
      });
    }
    // Indexed for substring search before any server starts (as the API processes' indexers would
    // have by now), so no scenario measures the catch-up (decision 106).
    await indexAllQueuedNotes(db);
    await db.end();
    console.log(`seeded ${noteCount} notes in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s; ${connections} connections, ${duration} s per scenario`);

    const auth = { authorization: `Bearer ${token}` };
    const n = Math.floor(noteCount * 0.42);
    const readPath = `Folder ${String(n % 50).padStart(2, '0')}/Note ${String(n).padStart(5, '0')}.md`;
    // The heading of that note's content (benchNote): what each read of it must answer.
    const readNote = `# Note ${n}`;
    const encoded = readPath.split('/').map(encodeURIComponent).join('/');
    const scenarios: Scenario[] = [
      { name: 'baseline: bare Fastify + pg, same SELECT, no auth', server: 'baseline', request: (b) => ({ url: `${b}/baseline/${vault.id}/${encoded}` }) },
      { name: 'healthz: GET /healthz (no auth, no database)', server: 'app', request: (b) => ({ url: `${b}/healthz` }) },
      { name: 'read: GET /api/dev/notes/:category/:filename', server: 'app', answers: readNote, request: (b) => ({ url: `${b}/api/dev/notes/${encoded}?mappingId=${mappingId}`, headers: auth }) },
      // The same note through the Product Runtime: version header, the whole chain, the organization's month, an envelope.
      {
        name: 'runtime read: GET /api/product/v1/vaults/:vaultId/note',
        server: 'app',
        answers: readNote,
        request: (b) => ({
          url: `${b}/api/product/v1/vaults/${vault.id}/note?path=${encodeURIComponent(readPath)}`,
          headers: { authorization: `Bearer ${serviceCredential}`, 'x-service-runtime-version': '1' },
        }),
      },
      // The same note through MCP get_note_content (JSON-RPC over one POST), driven as the REST read is.
      {
        name: 'mcp read: POST /api/mcp tools/call get_note_content',
        server: 'app',
        answers: readNote,
        request: (b) => ({ url: `${b}/api/mcp`, method: 'POST', ...mcpToolRequest(token, 'get_note_content', { mappingId, path: readPath }) }),
      },
      // The same read with the pool's result parser off: what parsing every row with its zod schema costs.
      {
        name: 'read, rows not parsed (pool without the result parser)',
        server: 'app-unparsed',
        request: (b) => ({ url: `${b}/api/dev/notes/${encoded}?mappingId=${mappingId}`, headers: auth }),
      },
      { name: 'inventory: GET /api/dev/notes (1,000 per page)', server: 'app', request: (b) => ({ url: `${b}/api/dev/notes?mappingId=${mappingId}`, headers: auth }) },
      // The same page size, never one the process holds (decision 95): each request starts at a new
      // cursor before the first path, so every page is read and built again.
      {
        name: 'inventory, every page read (a new cursor each request)',
        server: 'app',
        request: (b) => ({
          url: `${b}/api/dev/notes?mappingId=${mappingId}`,
          headers: auth,
          requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, path: `/api/dev/notes?mappingId=${mappingId}&cursor=${encodeCursor({ after: `!${randomUUID()}` })}` }) }],
        }),
      },
      {
        name: 'preview: POST /api/dev/notes (dryRun, replace)',
        server: 'app',
        request: (b) => ({
          url: `${b}/api/dev/notes`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ mappingId, path: readPath, content: '# Changed\n\nNew text.\n' }),
        }),
      },
      {
        name: 'apply: POST /api/dev/notes (dryRun false, create)',
        server: 'app',
        request: (b) => ({
          url: `${b}/api/dev/notes`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          // A new note and a new Idempotency-Key for every request.
          requests: [
            {
              setupRequest: (req: autocannon.Request) => {
                const id = randomUUID();
                return { ...req, headers: { ...req.headers, 'idempotency-key': id }, body: JSON.stringify({ mappingId, path: `Bench/${id}.md`, content: `# ${id}\n`, dryRun: false }) };
              },
            },
          ],
        }),
      },
    ];

    if (args.suite === 'all' || args.suite === 'observability') {
      const read = scenarios.find((s) => s.name.startsWith('read: '))!.request;
      // `--only read` or `--only generate` picks one workload of this suite.
      const workloads = args.suite === 'observability' && args.only ? new Set(args.only.split(',').filter((w): w is 'read' | 'generate' => w === 'read' || w === 'generate')) : undefined;
      await runObservabilitySuite({ databaseUrl, env: serverEnv(databaseUrl), duration, connections, rounds: Number(args.rounds), read, printTable, ...(workloads ? { workloads } : {}) });
    }
    if (args.suite === 'observability') return;
    if (args.suite === 'all' || args.suite === 'automation') {
      await runAutomationSuite({ databaseUrl, env: serverEnv(databaseUrl), proposals: Number(args.proposals), startServer, stopServer, printTable });
    }
    if (args.suite === 'automation') return;
    if (args.suite === 'all' || args.suite === 'starts') await runStartsSuite(databaseUrl);
    if (args.suite === 'starts') return;

    const wanted = args.only?.split(',');
    const selected = scenarios.filter((s) => s.server === 'baseline' || !wanted || wanted.some((w) => s.name.startsWith(w)));
    const env = serverEnv(databaseUrl);
    if (args.suite === 'all' || process.env['BENCH_SETTLE']) {
      // After every other suite's writes on this database (tens of thousands of rows since the last
      // ANALYZE), the table is measured on what autovacuum would soon leave, not on stale statistics
      // and its own run landing inside a scenario: the all-suites run's baseline read 5,100–5,700 req/s
      // instead of ~16,000 (2026-11-28). BENCH_SETTLE=1 does the same in `--suite rest`. It was this
      // ANALYZE that let the hot read's generic plan take the path trigram index (426–944 req/s,
      // 0.09x), until migration 0027 took equality away from that index (decision 110).
      const settle = await createDatabasePool(databaseUrl, { maxPoolSize: 1 });
      await indexAllQueuedNotes(settle);
      await settle.query(sql.type(emptyRow)`VACUUM (ANALYZE)`);
      await settle.query(sql.type(emptyRow)`CHECKPOINT`).catch(() => undefined); // needs pg_checkpoint: not every bench role has it
      await settle.end();
    }
    const results: Result[] = [];
    for (const kind of ['baseline', 'app', 'app-unparsed'] as const) {
      if (!selected.some((s) => s.server === kind)) continue;
      const server = await startServer(kind, env);
      try {
        for (const scenario of selected.filter((s) => s.server === kind)) {
          if (scenario.answers !== undefined) await checkAnswer(scenario, server.url);
          results.push(await measure(scenario, server.url));
          console.log(`  measured ${scenario.name}`);
        }
      } finally {
        await stopServer(server.child);
      }
    }

    const baseline = results[0]!;
    const rows = results.map((r) => [r.name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), (r.rps / baseline.rps).toFixed(2), `${r.errors + r.non2xx}${r.statuses ? ` (${r.statuses})` : ''}`]);
    const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'x baseline', 'errors'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
    console.log(['', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n'));
    const rest = results.find((r) => r.name.startsWith('read: '));
    // The other interfaces' reads of the same note, against the REST read in the same run.
    for (const [label, prefix] of [['runtime readNote', 'runtime read'], ['MCP get_note_content', 'mcp read']] as const) {
      const other = results.find((r) => r.name.startsWith(prefix));
      if (!rest || !other) continue;
      const ratio = rest.rps / other.rps;
      console.log(
        `${label} vs REST read: throughput ${ratio.toFixed(2)}x (target within 1.3x: ${ratio <= 1.3 ? 'met' : 'not met'}), ` +
          `p99 ${other.p99.toFixed(2)} ms vs ${rest.p99.toFixed(2)} ms`,
      );
    }
  } finally {
    await dropDatabase(adminUrl, dbName);
    await embedded?.stop();
  }
}

await main();
