// The media routes on the S3-compatible backend: the real @aws-sdk/client-s3 against a scripted S3
// server on loopback (test/support/scripted-s3.ts: Signature V4 checked, S3 XML errors). Uploads land
// privately under the key prefix, reads are ranged GETs, a failed PUT leaves no object and no quota,
// and no answer or log line (every logger at trace) carries the bucket, the endpoint, an object key,
// the key prefix or the secret.
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { sql } from 'slonik';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createS3BlobStore } from '../domain/media/s3-blob-store.ts';
import { sweepUnfinishedMedia } from '../domain/media/library.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { audioFixture, mediaClient, mediaLedger } from './support/media.ts';
import type { MediaResponse } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import { SCRIPTED_S3_SECRET, ScriptedS3 } from './support/scripted-s3.ts';

const s3 = new ScriptedS3({ bucket: 'district9-private-recordings' });
const KEY_PREFIX = 'tenant-media-prefix/';
const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString());
    done();
  },
});
let db: TestDatabase;
let app: FastifyInstance;
let store: ReturnType<typeof createS3BlobStore>;
const answers: MediaResponse[] = [];

beforeAll(async () => {
  await s3.start();
  db = await createTestDatabase();
  store = createS3BlobStore(s3.storeSettings({ keyPrefix: KEY_PREFIX }));
  app = await buildTestApp(db.pool, { mediaStore: store, logger: pino({ level: 'trace' }, sink) });
});
afterAll(async () => {
  await app?.close();
  store?.close();
  await db?.drop();
  await s3.stop();
});
beforeEach(() => {
  s3.reset();
});

/** Every answer is kept, to look for storage details in all of them at the end. */
const keep = (res: MediaResponse) => {
  answers.push(res);
  return res;
};
const bytes = audioFixture('tone-3s.ogg');

it('stores the object privately under the prefix, with its SHA-256 checked by the store, and reads ranges from it', async () => {
  const chain = await buildRuntimeChain(db.pool);
  const rt = mediaClient(app, chain.secret);
  const up = keep(await rt.upload(bytes, { key: randomUUID(), reference: 's3', duration: '3', contentType: 'audio/ogg' }));
  expect(up.statusCode).toBe(201);
  const mediaId = (up.data['data'] as { mediaId: string }).mediaId;
  const [key] = [...s3.objects.keys()];
  expect(key).toMatch(new RegExp(`^${KEY_PREFIX}[0-9a-f-]{36}$`));
  expect(s3.objects.get(key!)!.equals(bytes)).toBe(true);
  expect(s3.objectInfo.get(key!)).toMatchObject({ contentType: 'audio/ogg', cacheControl: 'private, no-store' });
  const put = s3.requests.find((r) => r.method === 'PUT')!;
  expect(put.headers['x-amz-checksum-sha256']).toBe(createHash('sha256').update(bytes).digest('base64'));
  expect(put.headers['x-amz-acl']).toBeUndefined();

  const ranged = keep(await rt.read(mediaId, { range: 'bytes=10-99' }));
  expect(ranged.statusCode).toBe(206);
  expect(ranged.raw.equals(bytes.subarray(10, 100))).toBe(true);
  expect(s3.requests.filter((r) => r.method === 'GET').at(-1)).toMatchObject({ range: 'bytes=10-99' });
  const whole = keep(await rt.read(mediaId));
  expect(whole.raw.equals(bytes)).toBe(true);
  // A HEAD and a 304 never reach the store.
  const gets = s3.requests.filter((r) => r.method === 'GET').length;
  keep(await rt.head(mediaId));
  keep(await rt.read(mediaId, { 'if-none-match': whole.headers['etag'] as string }));
  expect(s3.requests.filter((r) => r.method === 'GET')).toHaveLength(gets);

  const removed = keep(await rt.remove(mediaId));
  expect(removed.statusCode).toBe(200);
  expect(s3.objects.size).toBe(0);
  expect(s3.requests.at(-1)).toMatchObject({ method: 'DELETE' });
});

it.each([
  ['a 503 from the store', 503],
  ['a dropped connection', 'drop' as const],
])('%s on PUT: the DELETE confirms the key is empty, 503 media_storage_unavailable, no object, no quota; the same key then succeeds', async (_name, outcome) => {
  const chain = await buildRuntimeChain(db.pool);
  const rt = mediaClient(app, chain.secret);
  const key = randomUUID();
  // The SDK retries once (maxAttempts 2): both attempts fail.
  s3.failNext('put', outcome, 2);
  const failed = keep(await rt.upload(bytes, { key, reference: 's3-fail', duration: '3' }));
  expect(failed.statusCode).toBe(503);
  expect(failed.data).toMatchObject({ code: 'media_storage_unavailable' });
  expect(s3.requests.map((r) => r.operation)).toEqual(['put', 'put', 'delete']);
  expect(s3.requests.at(-1)!.status).toBe(204);
  expect(s3.objects.size).toBe(0);
  expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0 });
  const retried = keep(await rt.upload(bytes, { key, reference: 's3-fail', duration: '3' }));
  expect(retried.statusCode).toBe(201);
  expect(s3.objects.size).toBe(1);
});

it('a deletion the store refuses keeps the media unreadable until the sweep removes the object', async () => {
  const chain = await buildRuntimeChain(db.pool);
  const rt = mediaClient(app, chain.secret);
  const mediaId = ((await rt.upload(bytes, { key: randomUUID(), reference: 's3-del', duration: '3' })).data['data'] as { mediaId: string }).mediaId;
  s3.failNext('delete', 500, 2);
  const pending = keep(await rt.remove(mediaId));
  expect(pending.statusCode).toBe(503);
  expect(pending.data).toMatchObject({ code: 'media_deletion_pending', storageReason: 'InternalError 500' });
  expect(keep(await rt.read(mediaId)).statusCode).toBe(404);
  expect(s3.objects.size).toBe(1);
  expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 1 });
  expect(s3.objects.size).toBe(0);
  expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ deleted: 1, usedBytes: 0 });
});

it('no answer and no log line names the bucket, the endpoint, an object key, the prefix or the secret', async () => {
  const chain = await buildRuntimeChain(db.pool);
  const rt = mediaClient(app, chain.secret);
  // One of everything, failures included, so their log lines are in the sink too.
  const id = ((await rt.upload(bytes, { key: randomUUID(), reference: 'leak-check', duration: '3' })).data['data'] as { mediaId: string }).mediaId;
  keep(await rt.read(id, { range: 'bytes=0-9' }));
  s3.failNext('get', 'drop', 2);
  keep(await rt.read(id));
  keep(await rt.list());
  keep(await rt.metadata(id));
  s3.failNext('put', 500, 2);
  keep(await rt.upload(bytes, { key: randomUUID(), reference: 'leak-check-2', duration: '3' }));
  keep(await rt.remove(id));

  const blobKeys = await db.pool.anyFirst(sql.type(z.object({ k: z.string() }))`SELECT blob_key AS k FROM media_objects`);
  expect(blobKeys.length).toBeGreaterThan(0);
  const { host } = new URL(s3.endpoint);
  const forbidden = [s3.bucket, s3.endpoint, host, KEY_PREFIX, SCRIPTED_S3_SECRET, 'amazonaws', ...blobKeys];
  const log = lines.join('');
  expect(log).toContain('/api/product/v1/intelligence/education/media');
  for (const answer of answers) {
    const text = `${JSON.stringify(answer.headers)}\n${answer.raw.toString('latin1')}`;
    for (const secret of forbidden) expect(text).not.toContain(secret);
  }
  for (const secret of [...forbidden, chain.secret]) expect(log).not.toContain(secret);
});
