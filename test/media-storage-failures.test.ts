// When the store fails or a process stops half way: a failed upload leaves no bytes and no quota,
// a deletion the store could not finish keeps the media unreadable until it is finished, and the
// worker's sweep (sweepUnfinishedMedia) completes what a stopped process left. The real Postgres
// BlobStore underneath, with a gate in front of it that fails or holds an operation on demand.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
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
  store.held = null;
});

const bytes = audioFixture('tone-3s.webm');
const upload = (secret: string, key = randomUUID()) => mediaClient(app, secret).upload(bytes, { key, reference: 'r', duration: '3', contentType: 'audio/webm' });

describe('a store that fails', () => {
  it('a failed put is 503 with nothing stored and no quota used; the same key then succeeds', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const key = randomUUID();
    store.failing.add('put');
    const failed = await upload(chain.secret, key);
    expect(failed.statusCode).toBe(503);
    expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', storageReason: 'ScriptedOutage' });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, blobs: 0, usedBytes: 0 });
    store.failing.clear();
    const retried = await upload(chain.secret, key);
    expect(retried.statusCode).toBe(201);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length });
  });

  it('when the store can neither put nor delete, the claim keeps its size until the sweep can finish it', async () => {
    const chain = await buildRuntimeChain(db.pool);
    store.failing.add('put');
    store.failing.add('delete');
    expect((await upload(chain.secret)).statusCode).toBe(503);
    // Bytes the store might hold still have a record pointing at them, and count.
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ storing: 1, usedBytes: bytes.length });
    expect(await sweepUnfinishedMedia(db.pool, store, 0)).toEqual({ abandoned: 0, deleted: 0 });
    store.failing.clear();
    expect(await sweepUnfinishedMedia(db.pool, store, 0)).toMatchObject({ abandoned: 1 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, blobs: 0, usedBytes: 0 });
  });

  it('a read the store cannot serve is 503, never a 404 that would say the media is gone', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    store.failing.add('read');
    const res = await mediaClient(app, chain.secret).read(id);
    expect(res.statusCode).toBe(503);
    expect(res.data).toMatchObject({ code: 'media_storage_unavailable' });
  });

  it('a delete the store cannot finish leaves the media unreadable, still counted, until a retry or the sweep finishes it', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const rt = mediaClient(app, chain.secret);
    const id = ((await upload(chain.secret)).data['data'] as { mediaId: string }).mediaId;
    store.failing.add('delete');
    expect((await rt.remove(id)).statusCode).toBe(503);
    expect((await rt.read(id)).statusCode).toBe(404);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 0, blobs: 1, usedBytes: bytes.length });
    store.failing.clear();
    expect(await sweepUnfinishedMedia(db.pool, store)).toMatchObject({ deleted: 1 });
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ deleted: 1, blobs: 0, usedBytes: 0 });
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

  it('the sweep leaves uploads younger than its grace period alone', async () => {
    const chain = await buildRuntimeChain(db.pool);
    const holding = store.holdNext('put');
    const answer = upload(chain.secret);
    await holding;
    expect(await sweepUnfinishedMedia(db.pool, store)).toEqual({ abandoned: 0, deleted: 0 });
    store.held!.release();
    expect((await answer).statusCode).toBe(201);
    expect(await mediaLedger(db.pool, chain.organizationId)).toMatchObject({ stored: 1, usedBytes: bytes.length });
  });
});
