// When the store fails or a process stops half way: a failed upload whose absence the store confirms
// leaves no record and no quota at once (503 media_storage_unavailable, the key free again); one the
// store cannot confirm says so (503 media_upload_outcome_unknown), holds its size until a retry of
// its key or the sweep confirms; a read says the media exists but cannot be read now; a deletion the
// store could not finish is already a deletion for readers (503 media_deletion_pending); and the
// worker's sweep (sweepUnfinishedMedia) completes what a stopped process left. The real Postgres
// BlobStore underneath, with a gate in front of it that fails or holds an operation on demand.
// (The S3 store against a loopback S3 that refuses, dies mid-upload or freezes: media-s3-outages.test.ts.)
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BlobStoreError } from '../domain/media/blob-store.ts';
import type { BlobStore } from '../domain/media/blob-store.ts';
import { sweepUnfinishedMedia } from '../domain/media/library.ts';
import { createPostgresBlobStore } from '../domain/media/postgres-blob-store.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { audioFixture, blobCount, mediaClient, mediaLedger } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';

type Operation = 'put' | 'read' | 'delete';

/** The real store, with the next operations of a kind failing or held until released. */
class GatedStore implements BlobStore {
  readonly kind = 'postgres' as const;
  failing = new Set<Operation>();
  /** Operations that fail as if the store refused the connection: nothing was sent. */
  refusing = new Set<Operation>();
  calls: Operation[] = [];
  held: { operation: Operation; release: () => void } | null = null;
  private hold: Operation | null = null;
  private readonly inner: BlobStore;

  constructor(inner: BlobStore) {
    this.inner = inner;
  }
  holdNext(operation: Operation): Promise<void> {
    this.hold = operation;
    return new Promise((resolve) => {
      const check = setInterval(() => {
        if (this.held) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
  }
  private async gate(operation: Operation): Promise<void> {
    this.calls.push(operation);
    if (this.refusing.has(operation)) throw new BlobStoreError('postgres', operation, 'ECONNREFUSED', { notSent: true });
    if (this.failing.has(operation)) throw new BlobStoreError('postgres', operation, 'ScriptedOutage');
    if (this.hold === operation) {
      this.hold = null;
      await new Promise<void>((release) => (this.held = { operation, release }));
    }
  }
  async put(key: string, bytes: Uint8Array, meta: { contentType: string; sha256: string }) {
    await this.gate('put');
    return this.inner.put(key, bytes, meta);
  }
  async read(key: string, range?: { start: number; end: number }) {
    await this.gate('read');
    return this.inner.read(key, range);
  }
  async delete(key: string) {
    await this.gate('delete');
    return this.inner.delete(key);
  }
}

let db: TestDatabase;
let app: FastifyInstance;
let store: GatedStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new GatedStore(createPostgresBlobStore(db.pool));
  app = await buildTestApp(db.pool, { mediaStore: store });
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});
beforeEach(() => {
  store.failing.clear();
  store.refusing.clear();
  store.calls = [];
  store.held = null;
});

/** The organization's upload claims that failed and await confirmation (`deleting`, never stored). */
const unconfirmed = (organizationId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM media_objects WHERE organization_id = ${organizationId} AND state = 'deleting' AND stored_at IS NULL`);

const bytes = audioFixture('tone-3s.webm');
const upload = (secret: string, key = randomUUID()) => mediaClient(app, secret).upload(bytes, { key, reference: 'r', duration: '3', contentType: 'audio/webm' });

describe('a store that fails', () => {
  it('a failed put the store confirms left nothing: 503 media_storage_unavailable, no record, no quota; the same key then succeeds', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    store.failing.add('put');
    const failed = await upload(chain.secret, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers['retry-after']).toBe('5');
    expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', storageReason: 'ScriptedOutage', retryAfterSeconds: 5 });
    expect(failed.data['detail']).toMatch(/nothing is kept \(confirmed\)/);
    // The confirming delete ran, and was the store's word.
    expect(store.calls).toEqual(['put', 'delete']);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, blobs: 0, usedBytes: 0, storedBytes: 0 });
    store.failing.clear();
    const retried = await upload(chain.secret, key);
    expect(retried.statusCode).toBe(201);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length });
  });

  it('a put that never reached the store ends the claim without asking the store again', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    store.refusing.add('put');
    store.failing.add('delete');
    const failed = await upload(chain.secret, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', storageReason: 'ECONNREFUSED' });
    expect(store.calls).toEqual(['put']);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ storing: 0, usedBytes: 0, storedBytes: 0 });
    expect(await unconfirmed(chain.organizationId)).toBe(0);
    store.refusing.clear();
    store.failing.clear();
    expect((await upload(chain.secret, key)).statusCode).toBe(201);
  });

  it('when the store can neither put nor confirm, the answer says so and holds the size; a retry of the key re-checks, and succeeds once the store answers', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    store.failing.add('put');
    store.failing.add('delete');
    const failed = await upload(chain.secret, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers['retry-after']).toBe('5');
    expect(failed.data).toMatchObject({ code: 'media_upload_outcome_unknown', storageReason: 'ScriptedOutage', heldBytes: bytes.length, retryAfterSeconds: 5 });
    expect(failed.data['title']).toMatch(/could not confirm whether the bytes were kept/);
    expect(failed.data['detail']).toMatch(/Retry with the same Idempotency-Key/);
    // Bytes the store might hold still have a record pointing at them, and count.
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ storing: 0, stored: 0, usedBytes: bytes.length, storedBytes: bytes.length });
    expect(await unconfirmed(chain.organizationId)).toBe(1);

    // The same key while the store is still down: the same truthful 503, not 409 for ten minutes.
    store.calls = [];
    const again = await upload(chain.secret, key);
    expect(again.statusCode).toBe(503);
    expect(again.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: bytes.length });
    expect(store.calls).toEqual(['delete']);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ usedBytes: bytes.length });

    // The store answers again: the retry confirms the old claim away and stores afresh, counted once.
    store.failing.clear();
    store.calls = [];
    const retried = await upload(chain.secret, key);
    expect(retried.statusCode).toBe(201);
    expect(store.calls).toEqual(['delete', 'put']);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length, storedBytes: bytes.length });
    expect(await unconfirmed(chain.organizationId)).toBe(0);
    // And replays as any stored upload does.
    expect((await upload(chain.secret, key)).statusCode).toBe(200);
  });

  it('the sweep confirms unconfirmed uploads on its next run, without waiting for the grace period, and frees the key', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    store.failing.add('put');
    store.failing.add('delete');
    expect((await upload(chain.secret, key)).data).toMatchObject({ code: 'media_upload_outcome_unknown' });
    // Still down: the run stops at the first failure and leaves the row for the next one.
    expect(await sweepUnfinishedMedia(db.pool, store)).toEqual({ abandoned: 0, deleted: 0, pending: 1 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ usedBytes: bytes.length });
    store.failing.clear();
    expect(await sweepUnfinishedMedia(db.pool, store)).toEqual({ abandoned: 1, deleted: 0, pending: 0 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, blobs: 0, usedBytes: 0, storedBytes: 0 });
    expect((await upload(chain.secret, key)).statusCode).toBe(201);
  });

  it('a read the store cannot serve is 503 media_read_unavailable: the media exists, never a 404; HEAD answers from the record', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    store.failing.add('read');
    const res = await rt.read(id);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.data).toMatchObject({ code: 'media_read_unavailable', storageReason: 'ScriptedOutage' });
    expect(res.data['title']).toMatch(/^The media exists, but its bytes cannot be read/);
    const head = await rt.head(id);
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(bytes.length));
    expect(store.calls.filter((c) => c === 'read')).toHaveLength(1);
  });

  it('a record whose bytes the store no longer holds is 503 media_read_unavailable (ObjectMissing, Retry-After), never a 404', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    const blobKey = await db.pool.oneFirst(sql.type(z.object({ blobKey: z.string() }))`SELECT blob_key AS "blobKey" FROM media_objects WHERE id = ${id}`);
    // Removed behind the record's back (not through the gate): the store answers, with nothing.
    await createPostgresBlobStore(db.pool).delete(blobKey);
    const res = await rt.read(id);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.data).toMatchObject({ code: 'media_read_unavailable', storageReason: 'ObjectMissing', retryAfterSeconds: 5 });
  });

  it('a delete the store cannot finish is 503 media_deletion_pending: deleted for readers, still counted, until a retry or the sweep finishes it', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    store.failing.add('delete');
    const pending = await rt.remove(id);
    expect(pending.statusCode).toBe(503);
    expect(pending.headers['retry-after']).toBe('5');
    expect(pending.data).toMatchObject({ code: 'media_deletion_pending', heldBytes: bytes.length, storageReason: 'ScriptedOutage' });
    expect(pending.data['detail']).toMatch(/^The media is deleted/);
    expect((await rt.read(id)).statusCode).toBe(404);
    expect((await rt.head(id)).statusCode).toBe(404);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, blobs: 1, usedBytes: bytes.length });
    // A retried DELETE while the store still fails says the same.
    expect((await rt.remove(id)).data).toMatchObject({ code: 'media_deletion_pending' });
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 0, pending: 1 });
    store.failing.clear();
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 1, pending: 0 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ deleted: 1, blobs: 0, usedBytes: 0 });
    expect((await rt.remove(id)).statusCode).toBe(404);
  });

  it('a retried DELETE finishes a pending deletion once the store answers', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    store.failing.add('delete');
    expect((await rt.remove(id)).statusCode).toBe(503);
    store.failing.clear();
    const done = await rt.remove(id);
    expect(done.statusCode).toBe(200);
    expect(done.data['data']).toMatchObject({ deleted: true, freedBytes: bytes.length });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ deleted: 1, usedBytes: 0 });
  });
});

describe('a process that stops half way', () => {
  it('an upload stuck in its put is abandoned by the sweep; when the put finally lands, its bytes are removed', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const blobsBefore = await blobCount(db.pool);
    const holding = store.holdNext('put');
    const answer = upload(chain.secret);
    await holding;
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ storing: 1, usedBytes: bytes.length });
    // The worker's sweep, with no grace: the upload is judged abandoned and its size given back.
    expect(await sweepUnfinishedMedia(db.pool, store, 0)).toMatchObject({ abandoned: 1 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ storing: 0, usedBytes: 0 });
    store.held!.release();
    const res = await answer;
    expect(res.statusCode).toBe(503);
    expect(res.data).toMatchObject({ code: 'media_storage_unavailable' });
    expect(await blobCount(db.pool)).toBe(blobsBefore);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0 });
  });

  it('a stuck upload the sweep ended, whose late put the store then cannot confirm: 503 media_upload_outcome_unknown with nothing held (heldBytes 0)', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const holding = store.holdNext('put');
    const answer = upload(chain.secret);
    await holding;
    expect(await sweepUnfinishedMedia(db.pool, store, 0)).toMatchObject({ abandoned: 1 });
    store.failing.add('delete');
    store.held!.release();
    const res = await answer;
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: 0, retryAfterSeconds: 5 });
    expect(res.data['detail']).toMatch(/^The upload took too long to store and was abandoned\. The sweep had already ended/);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0 });
    expect(await unconfirmed(chain.organizationId)).toBe(0);
  });

  it('a stuck upload the sweep cannot confirm becomes unconfirmed: its put landing late is answered truthfully, and a retry of its key resolves it', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    const holding = store.holdNext('put');
    const answer = upload(chain.secret, key);
    await holding;
    store.failing.add('delete');
    expect(await sweepUnfinishedMedia(db.pool, store, 0)).toMatchObject({ abandoned: 0, pending: 1 });
    expect(await unconfirmed(chain.organizationId)).toBe(1);
    // The held put lands now, into a claim the sweep no longer lets become `stored`.
    store.held!.release();
    const res = await answer;
    expect(res.statusCode).toBe(503);
    expect(res.data).toMatchObject({ code: 'media_upload_outcome_unknown', heldBytes: bytes.length });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, blobs: 1, usedBytes: bytes.length, storedBytes: bytes.length });
    store.failing.clear();
    expect((await upload(chain.secret, key)).statusCode).toBe(201);
    // The late bytes were removed by the retry's check; the new upload's are the only ones.
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length, storedBytes: bytes.length });
  });

  it('the sweep leaves uploads younger than its grace period alone', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const holding = store.holdNext('put');
    const answer = upload(chain.secret);
    await holding;
    expect(await sweepUnfinishedMedia(db.pool, store)).toEqual({ abandoned: 0, deleted: 0, pending: 0 });
    store.held!.release();
    expect((await answer).statusCode).toBe(201);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, usedBytes: bytes.length });
  });
});
