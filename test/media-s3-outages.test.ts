// The media routes on the S3 backend when the store goes away, with the real @aws-sdk/client-s3
// against the loopback S3 double (test/support/scripted-s3.ts) in the three ways a store fails:
//   - connection refused: the double stopped, its port closed (nothing of a put is ever sent);
//   - killed mid-upload: the double destroys the connection after part of the body, and either
//     stays up (it can confirm the key is empty) or dies with it (nothing can be confirmed);
//   - frozen: the double accepts TCP connections and never reads or answers a byte.
// Each asserts the organization's used bytes, the record's state, the same Idempotency-Key retried,
// and the code and wording of upload, GET, HEAD and DELETE (docs/media.md, "When the store fails").
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createS3BlobStore } from '../domain/media/s3-blob-store.ts';
import { sweepUnfinishedMedia } from '../domain/media/library.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { audioFixture, grownMp4, mediaClient } from './support/media.ts';
import type { MediaClient } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import { ScriptedS3 } from './support/scripted-s3.ts';

// MEDIA_S3_TIMEOUT_MS for these tests: short, so a frozen store costs each test half a second.
const TIMEOUT_MS = 500;

const s3 = new ScriptedS3();
let db: TestDatabase;
let app: FastifyInstance;
let store: ReturnType<typeof createS3BlobStore>;

beforeAll(async () => {
  await s3.start();
  db = await createTestDatabase();
  store = createS3BlobStore(s3.storeSettings({ requestTimeoutMs: TIMEOUT_MS }));
  app = await buildTestApp(db.pool, { mediaStore: store });
});
afterAll(async () => {
  await app?.close();
  store?.close();
  await db?.drop();
  await s3.stop();
});
beforeEach(async () => {
  // Every test starts with the store up (on its one port), empty and answering.
  await s3.start();
  s3.reset();
});

const bytes = audioFixture('tone-3s.ogg');
const SIZE = bytes.length;
const send = (rt: MediaClient, key: string) => rt.upload(bytes, { key, reference: 'outage', duration: '3', contentType: 'audio/ogg' });
// 1 MiB, so a body arrives in many chunks and a connection killed mid-upload dies with part of it received.
const large = grownMp4(1024 * 1024);
const sendLarge = (rt: MediaClient, key: string) => rt.upload(large, { key, reference: 'outage-large', duration: '3', contentType: 'audio/mp4' });

/** The organization's used bytes, and its media records by state (`unconfirmed`: a failed put awaiting the store's word). */
async function ledger(organizationId: string) {
  const row = await db.pool.one(sql.type(z.object({ usedBytes: z.number(), states: z.array(z.string()) }))`
    SELECT coalesce((SELECT used_bytes FROM organization_media_storage WHERE organization_id = ${organizationId}), 0)::int AS "usedBytes",
           coalesce((SELECT array_agg(CASE WHEN state = 'deleting' AND stored_at IS NULL THEN 'unconfirmed' ELSE state END ORDER BY created_at)
                       FROM media_objects WHERE organization_id = ${organizationId}), '{}') AS states`);
  return row;
}

/** A stored media of a fresh organization, uploaded while the store is up. */
async function withStoredMedia() {
  const chain = await buildRuntimeChain(db.pool);
  const rt = mediaClient(app, chain.secret);
  const stored = await send(rt, randomUUID());
  expect(stored.statusCode).toBe(201);
  return { chain, rt, mediaId: (stored.data['data'] as { mediaId: string }).mediaId };
}

/** GET, HEAD and DELETE of a stored media while the store is down, and what each must say. */
async function expectReadAndDeleteWhileDown(rt: MediaClient, mediaId: string) {
  const read = await rt.read(mediaId);
  expect(read.statusCode).toBe(503);
  expect(read.headers['retry-after']).toBe('5');
  expect(read.data).toMatchObject({ code: 'media_read_unavailable', retryAfterSeconds: 5 });
  expect(read.data['title']).toMatch(/^The media exists, but its bytes cannot be read from storage right now/);
  expect(JSON.stringify(read.data)).not.toMatch(/nothing was stored|no quota/);
  // HEAD answers from the record and never reaches the store: the media exists, with its length.
  const head = await rt.head(mediaId);
  expect(head.statusCode).toBe(200);
  expect(head.headers['content-length']).toBe(String(SIZE));
  const removed = await rt.remove(mediaId);
  expect(removed.statusCode).toBe(503);
  expect(removed.headers['retry-after']).toBe('5');
  expect(removed.data).toMatchObject({ code: 'media_deletion_pending', heldBytes: SIZE, retryAfterSeconds: 5 });
  expect(removed.data['detail']).toMatch(/^The media is deleted: it can no longer be read or listed/);
  expect(JSON.stringify(removed.data)).not.toMatch(/nothing was stored|no quota/);
  // Deleted for readers at once; its bytes and size wait for the store.
  expect((await rt.read(mediaId)).statusCode).toBe(404);
  expect((await rt.head(mediaId)).statusCode).toBe(404);
}

describe('connection refused (the store is down, its port closed)', () => {
  it('an upload is 503 media_storage_unavailable with nothing held, the key retries at once, and reads and deletes say what is true', async () => {
    const { chain, rt, mediaId } = await withStoredMedia();
    await s3.stop();
    const key = randomUUID();

    const failed = await send(rt, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers['retry-after']).toBe('5');
    expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', storageReason: 'ECONNREFUSED', retryAfterSeconds: 5 });
    expect(failed.data['title']).toBe('Media storage is unavailable; nothing was stored and no quota was used.');
    // Every attempt was refused before connecting: nothing was sent, so nothing is held, no record.
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE, states: ['stored'] });

    // The same key at once: the same answer (not 409 idempotency_in_flight), still nothing held.
    const again = await send(rt, key);
    expect(again.statusCode).toBe(503);
    expect(again.data).toMatchObject({ code: 'media_storage_unavailable' });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE, states: ['stored'] });

    await expectReadAndDeleteWhileDown(rt, mediaId);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE, states: ['deleting'] });

    // The store comes back on its port: the key uploads, the retried DELETE finishes and frees.
    await s3.start();
    expect((await send(rt, key)).statusCode).toBe(201);
    const removed = await rt.remove(mediaId);
    expect(removed.statusCode).toBe(200);
    expect(removed.data['data']).toMatchObject({ deleted: true, freedBytes: SIZE });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE, states: ['deleted', 'stored'] });
    expect(s3.objects.size).toBe(1);
  });
});

describe('killed mid-upload', () => {
  it('the connection killed, the store up: the DELETE confirms the key is empty, the claim ends at once, the same key succeeds', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const key = randomUUID();
    // Both attempts of the put (the SDK retries a reset once) lose their connection mid-body.
    s3.failNext('put', 'kill-mid-body', 2);
    const failed = await sendLarge(rt, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', retryAfterSeconds: 5 });
    expect(failed.data['detail']).toMatch(/nothing is kept \(confirmed\)/);
    expect(s3.requests.map((r) => [r.operation, r.status])).toEqual([
      ['put', 'killed'],
      ['put', 'killed'],
      ['delete', 204],
    ]);
    expect(s3.requests.slice(0, 2).every((r) => r.receivedBytes! > 0 && r.receivedBytes! < large.length)).toBe(true);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: 0, states: [] });
    expect((await sendLarge(rt, key)).statusCode).toBe(201);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: large.length, states: ['stored'] });
  });

  it('the store dies with the connection: nothing can be confirmed, the answer says so, holds the size, and the key resolves once the store is back', async () => {
    const { chain, rt, mediaId } = await withStoredMedia();
    const key = randomUUID();
    // The first attempt is killed part-way through its body and the store stops with it; the retry is refused.
    s3.failNext('put', 'crash-mid-body');
    const failed = await sendLarge(rt, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers['retry-after']).toBe('5');
    expect(failed.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: large.length, retryAfterSeconds: 5 });
    expect(s3.requests.at(-1)).toMatchObject({ operation: 'put', status: 'killed' });
    expect(s3.requests.at(-1)!.receivedBytes).toBeLessThan(large.length);
    expect(failed.data['title']).toMatch(/could not confirm whether the bytes were kept; the upload's size stays held/);
    expect(failed.data['detail']).toMatch(/Retry with the same Idempotency-Key after 5 s/);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE + large.length, states: ['stored', 'unconfirmed'] });

    // The same key while the store is still down: the same 503 (the retry asked the store again), never 409.
    const again = await sendLarge(rt, key);
    expect(again.statusCode).toBe(503);
    expect(again.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: large.length, storageReason: 'ECONNREFUSED' });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE + large.length, states: ['stored', 'unconfirmed'] });

    await expectReadAndDeleteWhileDown(rt, mediaId);
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ abandoned: 0, deleted: 0 });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE + large.length, states: ['deleting', 'unconfirmed'] });

    // Back up: the retry confirms the old claim away and uploads afresh, counted once.
    await s3.start();
    const retried = await sendLarge(rt, key);
    expect(retried.statusCode).toBe(201);
    expect(s3.requests.slice(-2).map((r) => [r.operation, r.status])).toEqual([
      ['delete', 204],
      ['put', 200],
    ]);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE + large.length, states: ['deleting', 'stored'] });
    // And the sweep finishes the pending deletion.
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 1, pending: 0 });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: large.length, states: ['deleted', 'stored'] });
  });

  it('the sweep confirms an unconfirmed upload once the store is back, frees its size and its key', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const key = randomUUID();
    s3.failNext('put', 'crash-mid-body');
    expect((await sendLarge(rt, key)).data).toMatchObject({ code: 'media_upload_outcome_unknown' });
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ abandoned: 0, pending: 1 });
    await s3.start();
    expect(await sweepUnfinishedMedia(db.pool, store)).toEqual({ abandoned: 1, deleted: 0, pending: 0 });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: 0, states: [] });
    expect((await sendLarge(rt, key)).statusCode).toBe(201);
  });
});

// Timing: the frozen store never answers, so each operation ends at its deadline. An upload is its
// put (the deadline: TIMEOUT_MS, counted from the start of its storage steps) plus the confirming
// DELETE's slice (a tenth of it, at least 50 ms): ~1.1× TIMEOUT_MS. Before one deadline bounded the
// whole operation it was 4× (the put's two attempts and the DELETE's two, each the full timeout).
// The bounds are deliberately generous so that a loaded CI machine cannot make them flaky: at least
// the timeout (a timer never fires early), and under 3× it, which the old 4× could never meet.
describe('frozen (accepts the connection, never answers)', () => {
  const timed = async <T>(run: () => Promise<T>) => {
    const started = performance.now();
    const result = await run();
    return { result, ms: performance.now() - started };
  };

  it('an upload fails within the configured timeout, not 4× it, says the outcome is unknown, and the same key resolves after the store thaws', async () => {
    const { chain, rt, mediaId } = await withStoredMedia();
    const key = randomUUID();
    s3.freeze();
    const { result: failed, ms } = await timed(() => send(rt, key));
    expect(failed.statusCode).toBe(503);
    expect(failed.data).toMatchObject({ code: 'media_upload_outcome_unknown', storageReason: 'TimeoutError ETIMEDOUT', heldBytes: SIZE });
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(ms).toBeLessThan(3 * TIMEOUT_MS);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: 2 * SIZE, states: ['stored', 'unconfirmed'] });

    // The same key while frozen: 503 again after one deadline (its check of the store), never 409.
    const { result: again, ms: againMs } = await timed(() => send(rt, key));
    expect(again.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: SIZE });
    expect(againMs).toBeLessThan(3 * TIMEOUT_MS);

    // GET and DELETE end at their deadline too, each with its own truth; HEAD never waits on the store.
    const { ms: readAndDeleteMs } = await timed(() => expectReadAndDeleteWhileDown(rt, mediaId));
    expect(readAndDeleteMs).toBeLessThan(2 * 3 * TIMEOUT_MS);
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: 2 * SIZE, states: ['deleting', 'unconfirmed'] });

    s3.thaw();
    expect((await send(rt, key)).statusCode).toBe(201);
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 1, pending: 0 });
    expect(await ledger(chain.organizationId)).toEqual({ usedBytes: SIZE, states: ['deleted', 'stored'] });
  });
});
