// `npm run bench -- --suite education`: the deterministic education operations at their bounds,
// through the real app (admission through the Product Runtime chain, zod validation, the operation,
// serialization) with app.inject, one request at a time:
//   - artifacts/recommend with 250 candidates (realistic text, excerpts of ~1,500 characters);
//   - standards/crosswalk with two 1,000-item slices (statements of ~20 words over one vocabulary).
// Baseline, measured in the same run on the same payloads: a bare Fastify route that parses the same
// JSON body and answers {"ok":true}: what any JSON API pays for a body of that size.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { buildApp } from '../api/app.ts';
import type { DatabasePool } from '../db/pool.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import {
  assignWorkspace,
  createInstallation,
  createOrganization,
  createProductDefinition,
  createServicePrincipal,
  issueServiceCredential,
  setProductRuntimeSettings,
} from '../domain/product-runtime/entities.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';

type Stats = { n: number; p50: number; p95: number; p99: number; bytes: number };

// A small deterministic PRNG (mulberry32): the same data every run.
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const vocabulary = (
  'fraction equivalent numerator denominator compare order decimal place value multiply divide area perimeter angle measure ' +
  'model strip number line reason explain represent solve problem word unit whole part equal share group array factor multiple ' +
  'pattern rule graph data line plot scale estimate round sum difference product quotient remainder shape polygon symmetry volume'
).split(' ');

function words(random: () => number, count: number): string {
  return Array.from({ length: count }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
}

function recommendBody() {
  const random = rng(12);
  const formats = ['lesson-plan', 'worksheet', 'slide-deck', 'quiz', 'rubric', 'video', 'reading', 'activity'];
  return {
    goal: { description: words(random, 60), standardIds: ['4.NF.A.1', '4.NF.A.2', '4.NF.B.3'], courseId: 'math-4', gradeLevels: ['4'], format: 'worksheet', locale: 'en-US' },
    candidates: Array.from({ length: 250 }, (_, i) => ({
      id: `artifact-${i}`,
      title: words(random, 8),
      summary: words(random, 40),
      excerpt: words(random, 200).slice(0, 2_000),
      standardIds: [`4.NF.${'AB'[i % 2]}.${1 + (i % 4)}`],
      courseId: i % 3 === 0 ? 'math-4' : `course-${i % 7}`,
      gradeLevels: [String(3 + (i % 3))],
      format: formats[i % formats.length],
      locale: i % 5 === 0 ? 'es-MX' : 'en-US',
      educatorAccepted: i % 4 === 0,
    })),
    limit: 50,
  };
}

function crosswalkBody() {
  const random = rng(34);
  const slice = (prefix: string, framework: string) => ({
    framework: { identifier: `${framework}-${prefix}`, title: `${framework} mathematics` },
    items: Array.from({ length: 1_000 }, (_, i) => ({
      identifier: `${prefix}-${i}`,
      humanCodingScheme: `${1 + (i % 8)}.${['NF', 'OA', 'MD', 'G'][i % 4]}.${'ABC'[i % 3]}.${1 + (i % 5)}`,
      fullStatement: words(random, 20),
      educationLevel: [String(1 + (i % 8)).padStart(2, '0')],
      subject: ['Mathematics'],
      domain: ['Fractions', 'Operations', 'Measurement', 'Geometry'][i % 4],
    })),
  });
  return { source: slice('src', 'state-a'), target: slice('tgt', 'state-b') };
}

function stats(samples: number[], bytes: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { n: samples.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), bytes };
}

async function measure(send: () => Promise<{ statusCode: number; body: string }>, samples: number, warmup = 5): Promise<Stats> {
  let bytes = 0;
  for (let i = 0; i < warmup; i++) await send();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const res = await send();
    times.push(performance.now() - started);
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body.slice(0, 300)}`);
    bytes = res.body.length;
  }
  return stats(times, bytes);
}

export async function runEducationSuite(input: { db: DatabasePool; samples?: number; printTable: (header: string[], rows: string[][]) => void }): Promise<void> {
  const { db } = input;
  const samples = input.samples ?? 50;
  // The bench's account (bench/run.ts creates it) owns the workspace the installation lives in.
  const owner = await db.one(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM accounts ORDER BY created_at LIMIT 1`);
  const workspace = await createWorkspace(db, { name: 'Bench education', ownerAccountId: owner.id });
  const org = await createOrganization(db, { name: 'Bench education organization' });
  await assignWorkspace(db, { organizationId: org.id, workspaceId: workspace.id });
  await setProductRuntimeSettings(db, org.id, { apiOperationsPerMonth: 1_000_000_000 });
  const product = await createProductDefinition(db, { slug: `bench-edu-${randomUUID().slice(0, 8)}`, name: 'Bench education product' });
  const installation = await createInstallation(db, { organizationId: org.id, productDefinitionId: product.id, workspaceId: workspace.id });
  const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'bench' });
  const { secret } = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes: ['intelligence.execute'] });

  // Deterministic operations touch neither Temporal nor a provider: the connection is never dialled.
  const connection = lazyTemporalConnection('127.0.0.1:7233');
  const app = await buildApp({ db, temporal: { connection, namespace: 'default', taskQueue: 'bench-education' }, logger: pino({ level: 'warn' }) });
  const bare = Fastify({ bodyLimit: 64 * 1_048_576 });
  bare.post('/echo', async () => ({ ok: true }));
  await Promise.all([app.ready(), bare.ready()]);

  const rows: string[][] = [];
  const scenarios = [
    { name: 'artifacts/recommend, 250 candidates', path: '/api/product/v1/intelligence/education/artifacts/recommend', body: recommendBody() },
    { name: 'standards/crosswalk, 1,000 × 1,000 items', path: '/api/product/v1/intelligence/education/standards/crosswalk', body: crosswalkBody() },
  ];
  try {
    for (const scenario of scenarios) {
      const payload = JSON.stringify(scenario.body);
      const headers = { authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', 'content-type': 'application/json' };
      const baseline = await measure(() => bare.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload }), samples);
      const operation = await measure(() => app.inject({ method: 'POST', url: scenario.path, headers, payload }), samples);
      const kb = (n: number) => `${Math.round(n / 1024)} KB`;
      rows.push([`baseline: parse the same ${kb(payload.length)} body`, String(baseline.n), baseline.p50.toFixed(1), baseline.p95.toFixed(1), baseline.p99.toFixed(1), '-']);
      rows.push([`${scenario.name} (${kb(payload.length)} in, ${kb(operation.bytes)} out)`, String(operation.n), operation.p50.toFixed(1), operation.p95.toFixed(1), operation.p99.toFixed(1), (operation.p50 / baseline.p50).toFixed(1)]);
    }
  } finally {
    await app.close();
    await bare.close();
    await connection.close().catch(() => undefined);
  }
  input.printTable(['education operation (one request at a time, app.inject)', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'p50 × baseline'], rows);
}
