// Group claims of uploads (domain/media/upload-claims.ts, decision 108): concurrent uploads of one
// organization share statements, and each keeps the outcome it would have had alone: its own
// record, bytes and reservation; a key already stored replays; a key given twice in one statement
// stores once; a sum past the quota stores exactly what fits; organizations never share a statement.
// A statement's records share its transaction's timestamp (created_at = now()), which is how these
// tests see which uploads were claimed together. Real Postgres, the Postgres BlobStore.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { uploadAudio } from '../domain/media/library.ts';
import type { MediaCaller } from '../domain/media/library.ts';
import { createPostgresBlobStore } from '../domain/media/postgres-blob-store.ts';
import { UploadClaims } from '../domain/media/upload-claims.ts';
import { setProductRuntimeSettings } from '../domain/product-runtime/entities.ts';
import { useTestDatabase } from './support/harness.ts';
import { audioFixture, mediaLedger } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';

const db = useTestDatabase();
const bytes = audioFixture('tone-3s.webm');

async function callerOf(organization?: { id: string; workspaceId: string }): Promise<MediaCaller> {
  const chain = await buildRuntimeChain(db.pool, organization ? { organization } : {});
  return { organizationId: chain.organizationId, installationId: chain.installationId, servicePrincipalId: chain.principalId, requestId: `req-${randomUUID()}` };
}

/** Each upload's outcome: its mediaId and whether it replayed, or the code it was refused with. */
const settle = (uploads: Array<Promise<{ media: { mediaId: string }; replayed: boolean }>>) =>
  Promise.all(uploads.map((u) => u.then((r) => ({ mediaId: r.media.mediaId, replayed: r.replayed }), (error: unknown) => ({ refused: error instanceof AppError ? error.code : String(error) }))));

/** How many statements (transactions) created the organization's records. */
const statementsOf = (organizationId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(DISTINCT created_at)::int AS n FROM media_objects WHERE organization_id = ${organizationId}`);

describe('group claims of uploads', () => {
  it('concurrent uploads of one organization share statements; each is stored once, with its own record, bytes and reservation', async () => {
    const caller = await callerOf();
    const claims = new UploadClaims(db.pool);
    const store = createPostgresBlobStore(db.pool);
    const n = 40;
    const results = await Promise.all(
      Array.from({ length: n }, () => uploadAudio(db.pool, store, caller, { idempotencyKey: randomUUID(), reference: 'r', declaredDurationMs: 3000, bytes }, claims)),
    );
    expect(new Set(results.map((r) => r.media.mediaId)).size).toBe(n);
    expect(results.every((r) => !r.replayed)).toBe(true);
    expect(await mediaLedger(db.pool, caller.organizationId)).toMatchObject({ stored: n, storing: 0, blobs: n, usedBytes: n * bytes.length, storedBytes: n * bytes.length });
    // The first alone, the others together (up to the statement's bounds): fewer statements than uploads.
    const statements = await statementsOf(caller.organizationId);
    expect(statements).toBeGreaterThanOrEqual(2);
    expect(statements).toBeLessThan(n / 4);
    // Each answer's figures are the organization's after its statement: the last one's are all of them.
    expect(Math.max(...results.map((r) => r.storage.usedBytes))).toBe(n * bytes.length);
  });

  it('in one statement: a stored key replays, a key given twice stores once, a key reused with other content is refused, the rest are stored', async () => {
    const caller = await callerOf();
    const claims = new UploadClaims(db.pool);
    const store = createPostgresBlobStore(db.pool);
    const upload = (idempotencyKey: string, reference = 'r') => uploadAudio(db.pool, store, caller, { idempotencyKey, reference, declaredDurationMs: 3000, bytes }, claims);
    const stored = await upload('key-stored');
    const [opener, ...rest] = await settle([
      upload(randomUUID()), // claimed alone: the others wait for its statement, then share the next
      upload('key-stored'),
      upload('key-twice'),
      upload('key-twice'),
      upload('key-reused', 'first'),
      upload('key-reused', 'other'),
      upload(randomUUID()),
      upload(randomUUID()),
    ]);
    expect(opener).toMatchObject({ replayed: false });
    const [storedAgain, twiceA, twiceB, reusedA, reusedB, freshA, freshB] = rest as Array<{ mediaId?: string; replayed?: boolean; refused?: string }>;
    expect(storedAgain).toEqual({ mediaId: stored.media.mediaId, replayed: true });
    expect([twiceA!.replayed, twiceB!.replayed].sort()).toEqual([false, true]);
    expect(twiceA!.mediaId).toBe(twiceB!.mediaId);
    expect([reusedA, reusedB].filter((r) => r!.refused === 'idempotency_key_reused')).toHaveLength(1);
    expect([reusedA, reusedB].filter((r) => r!.replayed === false)).toHaveLength(1);
    expect(freshA).toMatchObject({ replayed: false });
    expect(freshB).toMatchObject({ replayed: false });
    // Stored: the first, the opener, one of each key given twice or reused, two fresh: 6, each reserved once.
    expect(await mediaLedger(db.pool, caller.organizationId)).toMatchObject({ stored: 6, storing: 0, blobs: 6, usedBytes: 6 * bytes.length, storedBytes: 6 * bytes.length });
    // The first upload's statement, the opener's, and one statement for the five new records after it.
    expect(await statementsOf(caller.organizationId)).toBe(3);
  });

  it('a statement whose sum passes the quota stores nothing; each upload is then claimed alone, and exactly what fits is stored', async () => {
    const caller = await callerOf();
    const fits = 5;
    await setProductRuntimeSettings(db.pool, caller.organizationId, { mediaStorageBytes: fits * bytes.length + Math.floor(bytes.length / 2) });
    const claims = new UploadClaims(db.pool);
    const store = createPostgresBlobStore(db.pool);
    const outcomes = await settle(
      Array.from({ length: 20 }, () => uploadAudio(db.pool, store, caller, { idempotencyKey: randomUUID(), reference: 'r', declaredDurationMs: 3000, bytes }, claims)),
    );
    expect(outcomes.filter((o) => 'mediaId' in o)).toHaveLength(fits);
    expect(outcomes.filter((o) => 'refused' in o && o.refused === 'media_storage_exhausted')).toHaveLength(20 - fits);
    expect(await mediaLedger(db.pool, caller.organizationId)).toMatchObject({ stored: fits, storing: 0, blobs: fits, usedBytes: fits * bytes.length, storedBytes: fits * bytes.length });
  });

  it("organizations are claimed apart: one's uploads never share a statement or a reservation with another's", async () => {
    const [a, b] = [await callerOf(), await callerOf()];
    const claims = new UploadClaims(db.pool);
    const store = createPostgresBlobStore(db.pool);
    const n = 20;
    await Promise.all(
      Array.from({ length: 2 * n }, (_, i) => uploadAudio(db.pool, store, i % 2 ? a : b, { idempotencyKey: randomUUID(), reference: 'r', declaredDurationMs: 3000, bytes }, claims)),
    );
    for (const caller of [a, b]) expect(await mediaLedger(db.pool, caller.organizationId)).toMatchObject({ stored: n, blobs: n, usedBytes: n * bytes.length });
    const shared = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM (SELECT created_at FROM media_objects WHERE organization_id = ${a.organizationId}
                                      INTERSECT SELECT created_at FROM media_objects WHERE organization_id = ${b.organizationId}) s`);
    expect(shared).toBe(0);
  });
});
