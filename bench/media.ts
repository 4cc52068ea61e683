// `npm run bench -- --suite media`: private audio through the real app (admission through the
// Product Runtime chain, header checks, the container inspection, the claim/put/commit of
// domain/media/library.ts, the Postgres BlobStore) with app.inject, against a baseline measured in
// the same run on the same bytes: a bare Fastify route that takes the same raw body and INSERTs it
// into a bare bytea table (what storing bytes in Postgres costs at all), and the same ranged SELECT.
//   - upload of a 1 MiB MP4, one at a time;
//   - bursts of 200 concurrent uploads of a small WebM on one organization (the storage quota's
//     upsert is the shared row every upload passes through), the median of five after a warm-up;
//   - a 64 KiB Range read out of a 3 MiB media, and a whole 1 MiB read.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { buildApp } from '../api/app.ts';
import type { DatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';
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
import { timed } from './timing.ts';
import type { Stats } from './timing.ts';
import { audioFixture, grownMp4 } from '../test/support/media.ts';

const MEDIA = '/api/product/v1/intelligence/education/media';

/** Wall time of `n` concurrent sends; every answer must be one of `ok`. */
async function burst(n: number, send: (i: number) => Promise<{ statusCode: number; body: string }>, ok: number[]): Promise<number> {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const ms = performance.now() - started;
  const bad = answers.find((a) => !ok.includes(a.statusCode));
  if (bad) throw new Error(`HTTP ${bad.statusCode}: ${bad.body.slice(0, 300)}`);
  return ms;
}

export async function runMediaSuite(input: { db: DatabasePool; samples?: number; printTable: (header: string[], rows: string[][]) => void }): Promise<void> {
  const { db } = input;
  const samples = input.samples ?? 40;
  const owner = await db.one(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM accounts ORDER BY created_at LIMIT 1`);
  const workspace = await createWorkspace(db, { name: 'Bench media', ownerAccountId: owner.id });
  const org = await createOrganization(db, { name: 'Bench media organization' });
  await assignWorkspace(db, { organizationId: org.id, workspaceId: workspace.id });
  await setProductRuntimeSettings(db, org.id, { apiOperationsPerMonth: 1_000_000_000, mediaStorageBytes: 20 * 1024 * 1024 * 1024 });
  const product = await createProductDefinition(db, { slug: `bench-media-${randomUUID().slice(0, 8)}`, name: 'Bench media product' });
  const installation = await createInstallation(db, { organizationId: org.id, productDefinitionId: product.id, workspaceId: workspace.id });
  const principal = await createServicePrincipal(db, { installationId: installation.id, name: 'bench' });
  const { secret } = await issueServiceCredential(db, { servicePrincipalId: principal.id, scopes: ['media.write', 'media.read'] });

  const connection = lazyTemporalConnection('127.0.0.1:7233');
  const app = await buildApp({ db, temporal: { connection, namespace: 'default', taskQueue: 'bench-media' }, logger: pino({ level: 'warn' }) });
  // The baseline: the same raw body into a bare bytea table, and the same slice out of it.
  await db.query(sql.type(emptyRow)`CREATE TABLE IF NOT EXISTS bench_media_baseline (id uuid PRIMARY KEY, bytes bytea NOT NULL)`);
  await db.query(sql.type(emptyRow)`ALTER TABLE bench_media_baseline ALTER COLUMN bytes SET STORAGE EXTERNAL`);
  const bare = Fastify({ bodyLimit: 4 * 1024 * 1024 });
  bare.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  bare.post('/store', async (request) => {
    const id = randomUUID();
    await db.query(sql.type(emptyRow)`INSERT INTO bench_media_baseline (id, bytes) VALUES (${id}, ${sql.binary(request.body as Buffer)})`);
    return { id };
  });
  bare.get('/read/:id', async (request, reply) => {
    const { id } = request.params as { id: string };
    const range = request.headers.range ? /bytes=(\d+)-(\d+)/.exec(request.headers.range) : null;
    const slice = range ? sql.fragment`substring(bytes FROM ${Number(range[1]) + 1}::int FOR ${Number(range[2]) - Number(range[1]) + 1}::int)` : sql.fragment`bytes`;
    const row = await db.one(sql.type(z.object({ bytes: z.instanceof(Buffer) }))`SELECT ${slice} AS bytes FROM bench_media_baseline WHERE id = ${id}`);
    return reply.code(range ? 206 : 200).type('audio/mp4').send(row.bytes);
  });
  await Promise.all([app.ready(), bare.ready()]);

  const auth = { authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1' };
  const uploadHeaders = (duration: string) => ({ ...auth, 'content-type': 'application/octet-stream', 'x-media-reference': 'bench', 'x-media-duration-seconds': duration });
  const upload = (bytes: Buffer, duration: string) => app.inject({ method: 'POST', url: `${MEDIA}/audio`, headers: { ...uploadHeaders(duration), 'idempotency-key': randomUUID() }, payload: bytes });
  const bareStore = (bytes: Buffer) => bare.inject({ method: 'POST', url: '/store', headers: { 'content-type': 'application/octet-stream' }, payload: bytes });

  const rows: string[][] = [];
  const row = (name: string, s: Stats, baseline: Stats | null) =>
    rows.push([name, String(s.n), s.p50.toFixed(1), s.p95.toFixed(1), s.p99.toFixed(1), baseline ? (s.p50 / baseline.p50).toFixed(1) : '-']);
  try {
    const oneMiB = grownMp4(1024 * 1024);
    const baseUpload = await timed(() => bareStore(oneMiB), samples, [200]);
    const mediaUpload = await timed(() => upload(oneMiB, '3'), samples, [201]);
    row('baseline: INSERT the same 1 MiB body into a bytea table', baseUpload, null);
    row('uploadAudio, 1 MiB MP4 (inspect, claim, put, commit)', mediaUpload, baseUpload);

    const threeMiB = grownMp4(3 * 1024 * 1024);
    const stored = await upload(threeMiB, '3');
    const mediaId = (JSON.parse(stored.body) as { data: { mediaId: string } }).data.mediaId;
    const bareId = (JSON.parse((await bareStore(threeMiB)).body) as { id: string }).id;
    const range = { range: 'bytes=1048576-1114111' };
    const baseRange = await timed(() => bare.inject({ method: 'GET', url: `/read/${bareId}`, headers: range }), samples, [206]);
    const mediaRange = await timed(() => app.inject({ method: 'GET', url: `${MEDIA}/${mediaId}`, headers: { ...auth, ...range } }), samples, [206]);
    row('baseline: SELECT substring (64 KiB) of a 3 MiB bytea', baseRange, null);
    row('readAudio, Range 64 KiB of 3 MiB (authorized, ETag)', mediaRange, baseRange);

    const small = grownMp4(1024 * 1024);
    const smallId = (JSON.parse((await upload(small, '3')).body) as { data: { mediaId: string } }).data.mediaId;
    const smallBareId = (JSON.parse((await bareStore(small)).body) as { id: string }).id;
    const baseWhole = await timed(() => bare.inject({ method: 'GET', url: `/read/${smallBareId}` }), samples, [200]);
    const mediaWhole = await timed(() => app.inject({ method: 'GET', url: `${MEDIA}/${smallId}`, headers: auth }), samples, [200]);
    row('baseline: SELECT a whole 1 MiB bytea', baseWhole, null);
    row('readAudio, whole 1 MiB', mediaWhole, baseWhole);

    // Bursts of 200 at once, alternating baseline and uploads: one of each first to warm both paths
    // (JIT, pool connections), then `rounds` of each; the median burst of each side is compared.
    const webm = audioFixture('tone-3s.webm');
    const n = 200;
    const rounds = 5;
    const baseBursts: number[] = [];
    const mediaBursts: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      const base = await burst(n, () => bareStore(webm), [200]);
      const media = await burst(n, () => upload(webm, '3'), [201]);
      if (round === 0) continue;
      baseBursts.push(base);
      mediaBursts.push(media);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const rate = (ms: number) => `${Math.round((n / ms) * 1000)}/s`;
    const spread = (values: number[]) => `${rate(Math.max(...values))}–${rate(Math.min(...values))}`;
    rows.push([`baseline: ${n} concurrent INSERTs of a ${Math.round(webm.length / 1024)} KiB body (median of ${rounds} bursts)`, String(n), rate(median(baseBursts)), spread(baseBursts), '', '-']);
    rows.push([`uploadAudio × ${n} concurrent, one organization (quota row shared)`, String(n), rate(median(mediaBursts)), spread(mediaBursts), '', (median(baseBursts) / median(mediaBursts)).toFixed(2)]);
  } finally {
    await db.query(sql.type(emptyRow)`DROP TABLE IF EXISTS bench_media_baseline`);
    await app.close();
    await bare.close();
    await connection.close().catch(() => undefined);
  }
  input.printTable(['media (app.inject; Postgres BlobStore)', 'n', 'p50 ms (or rate)', 'p95 ms (or rates seen)', 'p99 ms', 'p50 × baseline (rate: ×)'], rows);
}
