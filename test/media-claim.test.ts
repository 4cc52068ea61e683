// With the Postgres BlobStore, an upload is one statement (domain/media/library.ts, claim): the
// record, its bytes and its reservation are written together or not at all. A statement that fails
// after the record's insert (here: the bytes' write, refused by a trigger) leaves no record, no
// byte and no quota, answers 503 media_storage_unavailable, and the same key then succeeds.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { emptyRow } from '../db/row-schemas.ts';
import { useTestApp } from './support/harness.ts';
import { audioFixture, blobCount, mediaClient, mediaLedger } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';

const ctx = useTestApp();

describe('an upload through the Postgres store is one statement', () => {
  it('a failed write of the bytes leaves nothing and frees the key at once', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    const rt = mediaClient(ctx.app, chain.secret);
    const bytes = audioFixture('tone-3s.webm');
    const key = randomUUID();
    await ctx.db.pool.query(sql.type(emptyRow)`
      CREATE FUNCTION test_refuse_blob() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    await ctx.db.pool.query(sql.type(emptyRow)`CREATE TRIGGER test_refuse_blob BEFORE INSERT ON media_blobs FOR EACH ROW EXECUTE FUNCTION test_refuse_blob()`);
    const blobsBefore = await blobCount(ctx.db.pool);
    try {
      const failed = await rt.upload(bytes, { key, reference: 'r', duration: '3' });
      expect(failed.statusCode).toBe(503);
      expect(failed.data).toMatchObject({ code: 'media_storage_unavailable', retryAfterSeconds: 5 });
      expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 0, storing: 0, usedBytes: 0, storedBytes: 0 });
      expect(await blobCount(ctx.db.pool)).toBe(blobsBefore);
    } finally {
      await ctx.db.pool.query(sql.type(emptyRow)`DROP TRIGGER test_refuse_blob ON media_blobs`);
    }
    const retried = await rt.upload(bytes, { key, reference: 'r', duration: '3' });
    expect(retried.statusCode).toBe(201);
    expect(await mediaLedger(ctx.db.pool, chain.organizationId)).toMatchObject({ stored: 1, blobs: 1, usedBytes: bytes.length, storedBytes: bytes.length });
    const replayed = await rt.upload(bytes, { key, reference: 'r', duration: '3' });
    expect(replayed.statusCode).toBe(200);
  });
});
