// `npm run bench -- --suite scale`: throughput through the production topology's load balancer
// (platform/topology/: HAProxy, PgBouncer in transaction mode, the real API entry points) with one
// API process and with two, on the same data in the same run. The baseline is one API behind the
// same balancer and pooler; one API reached directly (no HAProxy) says what the balancer costs.
//
// What this can show on the 2-core development machine is limited, and the table says so: autocannon,
// HAProxy, PgBouncer, Postgres and the APIs share two cores that one API already keeps ~90 % busy, so
// a second API cannot add throughput here; each row carries the machine's busy share and CPU per
// request so the reader sees why. What it does show: the balancer's hop (direct vs behind HAProxy)
// and that both APIs take half the load. docs/capacity.md turns measured per-request costs into
// machine counts.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { DatabasePool } from '../db/pool.ts';
import { createAccount, issueAccessToken } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { startTopology } from '../platform/topology/topology.ts';
import { machineCpuSeconds } from './proc-cpu.ts';

type Row = { setup: string; workload: string; rps: number; p50: number; p99: number; failed: number; servedBy: string; busy: number; cpuMsPerRequest: number };


function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

export async function runScaleSuite(input: {
  databaseUrl: string;
  db: DatabasePool;
  duration: number;
  connections: number;
  printTable: (header: string[], rows: string[][]) => void;
}): Promise<void> {
  const { db } = input;
  const tag = randomUUID().slice(0, 8);
  const account = await createAccount(db, { email: `bench-scale-${tag}@example.test`, displayName: 'Bench Scale', plan: 'team' });
  const { token } = await issueAccessToken(db, { accountId: account.id, name: 'bench-scale' });
  const workspace = await createWorkspace(db, { name: `Bench scale ${tag}`, ownerAccountId: account.id });
  const vault = await createVault(db, { name: `Bench scale ${tag}`, ownerWorkspaceId: workspace.id });
  const { mappingId } = await createMapping(db, { vaultId: vault.id });
  // One note to read, and one vault per writing connection (writes to one vault share its lock: a
  // property of the data, not of the process count, which is what this suite is about).
  await applyTransaction(db, { vaultId: vault.id, mappingId }, [{ type: 'write-note', path: 'Scale/Read.md', content: '# Read\n\nThe hot note.\n' }], {
    actor: { type: 'account', id: account.id },
    source: 'ops',
    requestId: null,
    idempotencyKey: `seed-${tag}`,
  }, { accountId: account.id, route: 'bench', scope: mappingId, key: `seed-${tag}`, fingerprint: `seed-${tag}` });
  const writeMappings: string[] = [];
  for (let i = 0; i < input.connections; i++) {
    const v = await createVault(db, { name: `Bench scale write ${tag} ${i}`, ownerWorkspaceId: workspace.id });
    writeMappings.push((await createMapping(db, { vaultId: v.id })).mappingId);
  }
  const headers = { authorization: `Bearer ${token}` };
  const workloads: { name: string; options: (base: string) => autocannon.Options }[] = [
    { name: 'hot read (GET one note)', options: (base) => ({ url: `${base}/api/dev/notes/Scale/Read.md?mappingId=${mappingId}`, headers }) },
    {
      name: 'write (one note, own vault per connection)',
      options: (base) => {
        let n = 0;
        return {
          url: `${base}/api/dev/notes`,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          setupClient: (client: autocannon.Client) => {
            const mapping = writeMappings[n++ % writeMappings.length]!;
            // A new note under a new key every time: a create, never a conflict or a replay.
            const next = () => {
              const id = randomUUID();
              client.setHeadersAndBody(
                { ...headers, 'content-type': 'application/json', 'idempotency-key': `scale-${id}` },
                JSON.stringify({ mappingId: mapping, path: `Scale/Write ${id}.md`, content: `# Write ${id}\n`, dryRun: false }),
              );
            };
            next();
            client.on('response', next);
          },
        };
      },
    },
  ];

  const temporal = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true });
  const rows: Row[] = [];
  try {
    for (const apis of [1, 2]) {
      const topology = await startTopology({
        databaseUrl: input.databaseUrl,
        temporalAddress: temporal.address,
        apis,
        workers: 0,
        plaintextTemporal: true,
        // As many server connections as two APIs' pools, in both runs: the pooler is not the limit, nor what differs.
        poolerServerConnections: 40,
        env: { LOG_LEVEL: 'warn', REST_REQUESTS_PER_MINUTE: '100000000', TEMPORAL_TASK_QUEUE: `bench-scale-${tag}` },
      });
      try {
        const targets: { setup: string; base: string }[] = [{ setup: `${apis} API${apis === 1 ? '' : 's'} behind HAProxy`, base: topology.url }];
        if (apis === 1) targets.unshift({ setup: '1 API, direct (no balancer)', base: topology.apis[0]!.url });
        for (const workload of workloads) {
          for (const target of targets) {
            await load({ ...workload.options(target.base), connections: input.connections, duration: 2 }); // warm-up
            const before = new Map((await topology.balancer.servers()).map((s) => [s.name, s.requests]));
            const cpuBefore = machineCpuSeconds();
            const result = await load({ ...workload.options(target.base), connections: input.connections, duration: input.duration });
            const cpuAfter = machineCpuSeconds();
            const after = await topology.balancer.servers();
            const served = after.map((s) => s.requests - (before.get(s.name) ?? 0));
            const total = served.reduce((a, b) => a + b, 0);
            rows.push({
              setup: target.setup,
              workload: workload.name,
              rps: result.requests.average,
              p50: result.latency.p50,
              p99: result.latency.p99,
              failed: result.errors + result.timeouts + result.non2xx,
              busy: (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total),
              cpuMsPerRequest: ((cpuAfter.busy - cpuBefore.busy) * 1000) / Math.max(1, result.requests.total),
              servedBy: target.base === topology.url ? after.map((s, i) => `${s.name} ${((100 * served[i]!) / Math.max(1, total)).toFixed(0)} %`).join(', ') : 'api-1 (direct)',
            });
          }
        }
      } finally {
        await topology.stop();
      }
    }
  } finally {
    await temporal.stop();
  }

  const baseline = (workload: string) => rows.find((r) => r.workload === workload && r.setup === '1 API behind HAProxy')!.rps;
  input.printTable(
    ['scale (HAProxy + PgBouncer, real entry points)', 'workload', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'x 1 API behind HAProxy', 'machine CPU busy', 'CPU ms/req (all processes)', 'served by'],
    rows.map((r) => [
      r.setup,
      r.workload,
      r.rps.toFixed(0),
      r.p50.toFixed(1),
      r.p99.toFixed(1),
      String(r.failed),
      (r.rps / baseline(r.workload)).toFixed(2),
      `${(100 * r.busy).toFixed(0)} %`,
      r.cpuMsPerRequest.toFixed(2),
      r.servedBy,
    ]),
  );
  console.log(
    `scale: ${input.connections} connections, ${input.duration} s per row, on ${(await import('node:os')).availableParallelism()} cores shared by the load generator, HAProxy, PgBouncer, Postgres and the APIs; ` +
      'with the cores already busy under one API, a second cannot add throughput; compare the CPU per request (whole machine: anything else running counts) to see what the extra process costs. Not the machine count docs/capacity.md derives.',
  );
}
