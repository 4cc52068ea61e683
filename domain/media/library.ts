// Private audio media: upload, read, list and delete for one installation of a product
// organization. Postgres holds identity, tenancy, idempotency and the organization's storage
// quota; the bytes go to a BlobStore under a random key that never leaves the service.
//
// An upload is three short steps, so no transaction is held open while bytes travel:
//   1. claim: insert the record (`storing`) under (installation, Idempotency-Key) and add its size
//      to the organization's storage with one conditional upsert, in one transaction. A concurrent
//      upload with the same key waits on the unique index, then sees ours; a concurrent upload of
//      the same organization can never take the storage past `mediaStorageBytes`.
//   2. put the bytes in the BlobStore.
//   3. mark the record `stored`.
// A refused claim leaves nothing; a failed put removes the record, gives the size back and deletes
// whatever the store may hold; a process that dies in between leaves a `storing` row that the
// worker's sweep (sweepUnfinishedMedia) finishes the same way.
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import { DEFAULT_MEDIA_STORAGE_BYTES } from '../product-runtime/entities.ts';
import { inspectAudio } from './audio-inspection.ts';
import { checkDuration } from './upload-rules.ts';
import { BlobStoreError } from './blob-store.ts';
import type { BlobRange, BlobStore } from './blob-store.ts';

/** Who acts: the admitted runtime caller. */
export type MediaCaller = { organizationId: string; installationId: string; servicePrincipalId: string; requestId: string };

export type AudioUploadRequest = {
  idempotencyKey: string;
  reference: string;
  declaredDurationMs: number;
  bytes: Uint8Array;
};

export type MediaStorage = { limitBytes: number; usedBytes: number; availableBytes: number };

export type AudioMediaRecord = {
  mediaId: string;
  reference: string;
  mediaType: 'audio/webm' | 'audio/ogg' | 'audio/mp4';
  container: 'webm' | 'ogg' | 'mp4';
  codec: string | null;
  sizeBytes: number;
  sha256: string;
  declaredDurationSeconds: number;
  containerDurationSeconds: number | null;
  durationSource: 'container-header' | 'cluster-walk' | 'granule-position' | 'none';
  createdAt: string;
};

/** How long a `storing`/`deleting` row may sit before the sweep treats its process as gone. */
export const UNFINISHED_MEDIA_GRACE_SECONDS = 600;

const storageRow = z.object({ limitBytes: z.number(), usedBytes: z.number() });
const mediaRow = z.object({
  mediaId: z.uuid(),
  reference: z.string(),
  mediaType: z.enum(['audio/webm', 'audio/ogg', 'audio/mp4']),
  container: z.enum(['webm', 'ogg', 'mp4']),
  codec: z.string().nullable(),
  sizeBytes: z.number(),
  sha256: z.string(),
  declaredDurationMs: z.number(),
  containerDurationMs: z.number().nullable(),
  durationSource: z.enum(['container-header', 'cluster-walk', 'granule-position', 'none']),
  createdAt: isoTimestamp,
});
type MediaRow = z.infer<typeof mediaRow>;

const mediaColumns = sql.fragment`m.id AS "mediaId", m.reference, m.media_type AS "mediaType", m.container, m.codec, m.size_bytes AS "sizeBytes",
  m.sha256, m.declared_duration_ms AS "declaredDurationMs", m.container_duration_ms AS "containerDurationMs",
  m.duration_source AS "durationSource", m.created_at AS "createdAt"`;

function toRecord(row: MediaRow): AudioMediaRecord {
  const { declaredDurationMs, containerDurationMs, ...rest } = row;
  return { ...rest, declaredDurationSeconds: declaredDurationMs / 1000, containerDurationSeconds: containerDurationMs === null ? null : containerDurationMs / 1000 };
}

const sha256Hex = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/** The organization's `mediaStorageBytes` (default 500 MiB), read where it is enforced. */
const storageLimit = (organizationId: string) => sql.fragment`
  (SELECT coalesce((o.settings #>> '{productRuntime,mediaStorageBytes}')::bigint, ${DEFAULT_MEDIA_STORAGE_BYTES}::bigint)
     FROM organizations o WHERE o.id = ${organizationId})`;

export async function getMediaStorage(db: CommonQueryMethods, organizationId: string): Promise<MediaStorage> {
  const row = await db.one(sql.type(storageRow)`
    SELECT ${storageLimit(organizationId)} AS "limitBytes",
           coalesce((SELECT s.used_bytes FROM organization_media_storage s WHERE s.organization_id = ${organizationId}), 0) AS "usedBytes"`);
  return { ...row, availableBytes: Math.max(0, row.limitBytes - row.usedBytes) };
}

const claimedRow = z.object({ id: z.uuid(), blobKey: z.string() });
const existingRow = z.object({ id: z.uuid(), state: z.string(), fingerprint: z.string() });

/**
 * Stores one upload, or replays the upload its Idempotency-Key already made. What the bytes are is
 * decided here, from the bytes (inspectAudio), and the declared duration judged against what the
 * container states (checkDuration), before anything is claimed. Same key and same
 * bytes, reference and declared duration: the same mediaId, nothing stored twice. Same key, anything
 * else different: 422 idempotency_key_reused.
 */
export async function uploadAudio(
  db: DatabasePool,
  store: BlobStore,
  caller: MediaCaller,
  upload: AudioUploadRequest,
): Promise<{ media: AudioMediaRecord; replayed: boolean; storage: MediaStorage }> {
  const sha256 = sha256Hex(upload.bytes);
  const keyHash = sha256Hex(upload.idempotencyKey);
  const fingerprint = sha256Hex(JSON.stringify([sha256, upload.bytes.byteLength, upload.reference, upload.declaredDurationMs]));
  const size = upload.bytes.byteLength;
  const inspection = await inspectAudio(upload.bytes);
  checkDuration(upload.declaredDurationMs, inspection);
  const containerMs = inspection.containerDurationSeconds === null ? null : Math.round(inspection.containerDurationSeconds * 1000);

  // 1. claim the key and the storage, or find what the key already did.
  const claimed = await db.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(claimedRow)`
      INSERT INTO media_objects (organization_id, installation_id, idempotency_key_hash, request_fingerprint, reference, storage_backend, blob_key,
                                 media_type, container, codec, size_bytes, sha256, declared_duration_ms, container_duration_ms, duration_source,
                                 created_by_principal_id, created_request_id)
      VALUES (${caller.organizationId}, ${caller.installationId}, ${keyHash}, ${fingerprint}, ${upload.reference}, ${store.kind}, ${randomUUID()},
              ${inspection.mediaType}, ${inspection.container}, ${inspection.codec}, ${size}, ${sha256}, ${upload.declaredDurationMs}, ${containerMs},
              ${inspection.durationSource}, ${caller.servicePrincipalId}, ${caller.requestId})
      ON CONFLICT (installation_id, idempotency_key_hash) DO NOTHING
      RETURNING id, blob_key AS "blobKey"`);
    if (!row) {
      const existing = await tx.one(sql.type(existingRow)`
        SELECT id, state, request_fingerprint AS fingerprint FROM media_objects
         WHERE installation_id = ${caller.installationId} AND idempotency_key_hash = ${keyHash}`);
      return { kind: 'existing' as const, existing };
    }
    const reserved = await tx.maybeOne(sql.type(z.object({ usedBytes: z.number() }))`
      INSERT INTO organization_media_storage AS s (organization_id, used_bytes)
      SELECT ${caller.organizationId}, ${size} WHERE ${size} <= ${storageLimit(caller.organizationId)}
      ON CONFLICT (organization_id) DO UPDATE SET used_bytes = s.used_bytes + excluded.used_bytes
        WHERE s.used_bytes + excluded.used_bytes <= ${storageLimit(caller.organizationId)}
      RETURNING used_bytes AS "usedBytes"`);
    if (!reserved) {
      const storage = await getMediaStorage(tx, caller.organizationId);
      // Thrown inside the transaction: the record goes with it, nothing was reserved.
      throw new AppError('media_storage_exhausted', `This upload needs ${size} bytes; the organization has ${storage.availableBytes} of ${storage.limitBytes} left.`, {
        extensions: { limitBytes: storage.limitBytes, usedBytes: storage.usedBytes, requiredBytes: size },
      });
    }
    return { kind: 'claimed' as const, row };
  });

  if (claimed.kind === 'existing') {
    const { existing } = claimed;
    if (existing.fingerprint !== fingerprint) throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another upload (other bytes, reference or duration).');
    if (existing.state === 'storing') throw new AppError('idempotency_in_flight', 'An upload with this Idempotency-Key is still being stored.', { headers: { 'retry-after': '1' } });
    if (existing.state !== 'stored') throw new AppError('idempotency_key_reused', 'The upload of this Idempotency-Key was deleted; upload again with a new key.');
    const media = await getAudio(db, caller, existing.id);
    return { media, replayed: true, storage: await getMediaStorage(db, caller.organizationId) };
  }

  // 2. the bytes; 3. stored.
  const { id, blobKey } = claimed.row;
  try {
    await store.put(blobKey, upload.bytes, { contentType: inspection.mediaType, sha256 });
  } catch (error) {
    await abandonUpload(db, store, id, blobKey);
    throw storageUnavailable(error);
  }
  // The organization's storage figures come back with the commit: one round trip fewer per upload.
  const stored = await db.maybeOne(sql.type(mediaRow.extend(storageRow.shape))`
    UPDATE media_objects m SET state = 'stored', stored_at = now() WHERE m.id = ${id} AND m.state = 'storing'
    RETURNING ${mediaColumns}, ${storageLimit(caller.organizationId)} AS "limitBytes",
              (SELECT s.used_bytes FROM organization_media_storage s WHERE s.organization_id = m.organization_id) AS "usedBytes"`);
  if (!stored) {
    // The sweep judged this upload abandoned (it outlived the grace period) and took it back.
    await store.delete(blobKey).catch(() => undefined);
    throw new AppError('media_storage_unavailable', 'The upload took too long to store and was abandoned; nothing was kept.');
  }
  const { limitBytes, usedBytes, ...row } = stored;
  return { media: toRecord(row), replayed: false, storage: { limitBytes, usedBytes, availableBytes: Math.max(0, limitBytes - usedBytes) } };
}

/** A storage failure as the client sees it: no backend message (it could carry a key or an endpoint). */
function storageUnavailable(error: unknown): AppError {
  const reason = error instanceof BlobStoreError ? error.reason : 'unknown';
  return new AppError('media_storage_unavailable', undefined, { extensions: { storageReason: reason } });
}

/**
 * Takes back a claim whose bytes did not get stored: any partial object first, then the record and
 * its size. If the store cannot even delete, the claim stays (`storing`, its size held) for the
 * sweep to retry: bytes the store may still hold are never left without a record pointing at them.
 */
async function abandonUpload(db: DatabasePool, store: BlobStore, id: string, blobKey: string): Promise<boolean> {
  try {
    await store.delete(blobKey);
  } catch {
    return false;
  }
  await db.transaction(async (tx) => {
    const gone = await tx.maybeOne(sql.type(z.object({ organizationId: z.uuid(), size: z.number() }))`
      DELETE FROM media_objects WHERE id = ${id} AND state = 'storing' RETURNING organization_id AS "organizationId", size_bytes AS size`);
    if (gone) await releaseStorage(tx, gone.organizationId, gone.size);
  });
  return true;
}

async function releaseStorage(tx: CommonQueryMethods, organizationId: string, size: number): Promise<void> {
  await tx.query(sql.type(emptyRow)`
    UPDATE organization_media_storage SET used_bytes = greatest(0, used_bytes - ${size}) WHERE organization_id = ${organizationId}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller's stored media: same organization and installation, or 404 exactly like a missing id. */
async function findStored(db: CommonQueryMethods, caller: MediaCaller, mediaId: string) {
  if (!UUID.test(mediaId)) throw new AppError('media_not_found');
  const row = await db.maybeOne(sql.type(mediaRow.extend({ blobKey: z.string() }))`
    SELECT ${mediaColumns}, m.blob_key AS "blobKey" FROM media_objects m
     WHERE m.id = ${mediaId} AND m.organization_id = ${caller.organizationId} AND m.installation_id = ${caller.installationId} AND m.state = 'stored'`);
  if (!row) throw new AppError('media_not_found');
  return row;
}

export async function getAudio(db: CommonQueryMethods, caller: MediaCaller, mediaId: string): Promise<AudioMediaRecord> {
  const { blobKey: _key, ...row } = await findStored(db, caller, mediaId);
  return toRecord(row);
}

/**
 * The caller's stored media and a way to read its bytes (whole, or one inclusive range the caller
 * checked against the size). The storage key stays in here: only `open` can use it.
 */
export async function findAudio(db: CommonQueryMethods, store: BlobStore, caller: MediaCaller, mediaId: string) {
  const { blobKey, ...row } = await findStored(db, caller, mediaId);
  return {
    media: toRecord(row),
    open: async (range?: BlobRange) => {
      const body = await store.read(blobKey, range).catch((error: unknown) => {
        throw storageUnavailable(error);
      });
      // A record whose bytes are gone is a storage fault, not a missing media: never a 404.
      if (!body) throw new AppError('media_storage_unavailable', 'The stored bytes of this media could not be found.');
      return body;
    },
  };
}

const listCursor = z.object({ createdAt: z.string(), id: z.uuid() });

export async function listAudio(
  db: CommonQueryMethods,
  caller: MediaCaller,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ media: AudioMediaRecord[]; nextCursor: string | null; storage: MediaStorage }> {
  const after = page.cursor ? decodeCursor(page.cursor, listCursor) : null;
  const rows = await db.any(sql.type(mediaRow)`
    SELECT ${mediaColumns} FROM media_objects m
     WHERE m.installation_id = ${caller.installationId} AND m.organization_id = ${caller.organizationId} AND m.state = 'stored'
       AND (${after?.createdAt ?? null}::timestamptz IS NULL OR (m.created_at, m.id) < (${after?.createdAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
     ORDER BY m.created_at DESC, m.id DESC
     LIMIT ${page.limit + 1}`);
  const more = rows.length > page.limit;
  const media = rows.slice(0, page.limit).map(toRecord);
  const last = media.at(-1);
  return {
    media,
    nextCursor: more && last ? encodeCursor({ createdAt: last.createdAt, id: last.mediaId }) : null,
    storage: await getMediaStorage(db, caller.organizationId),
  };
}

/**
 * Deletes the caller's media: it stops being readable at once (`deleting`), its bytes are removed,
 * then the record becomes a tombstone and its size goes back to the organization. If the store
 * fails, the media stays unreadable and a retry (or the sweep) finishes the deletion.
 */
export async function deleteAudio(db: DatabasePool, store: BlobStore, caller: MediaCaller, mediaId: string): Promise<{ mediaId: string; freedBytes: number; storage: MediaStorage }> {
  if (!UUID.test(mediaId)) throw new AppError('media_not_found');
  const row = await db.maybeOne(sql.type(z.object({ blobKey: z.string() }))`
    UPDATE media_objects m SET state = 'deleting', deleted_by_principal_id = ${caller.servicePrincipalId}, deleted_request_id = ${caller.requestId}
     WHERE m.id = ${mediaId} AND m.organization_id = ${caller.organizationId} AND m.installation_id = ${caller.installationId}
       AND m.state IN ('stored', 'deleting')
    RETURNING m.blob_key AS "blobKey"`);
  if (!row) throw new AppError('media_not_found');
  await store.delete(row.blobKey).catch((error: unknown) => {
    throw storageUnavailable(error);
  });
  const freedBytes = await finishDeletion(db, mediaId);
  return { mediaId: mediaId.toLowerCase(), freedBytes, storage: await getMediaStorage(db, caller.organizationId) };
}

/** The tombstone and the size given back, once (a concurrent finisher frees nothing twice). */
async function finishDeletion(db: DatabasePool, mediaId: string): Promise<number> {
  return db.transaction(async (tx) => {
    const done = await tx.maybeOne(sql.type(z.object({ organizationId: z.uuid(), size: z.number() }))`
      UPDATE media_objects SET state = 'deleted', deleted_at = now() WHERE id = ${mediaId} AND state = 'deleting'
      RETURNING organization_id AS "organizationId", size_bytes AS size`);
    if (!done) return 0;
    await releaseStorage(tx, done.organizationId, done.size);
    return done.size;
  });
}

/**
 * Finishes what a dead process or a failing store left: `storing` rows older than the grace period
 * are abandoned (bytes deleted, size given back); `deleting` rows are deleted (finishing twice is
 * harmless: the size is given back once). Run by the worker; returns counts.
 */
export async function sweepUnfinishedMedia(
  db: DatabasePool,
  store: BlobStore,
  graceSeconds = UNFINISHED_MEDIA_GRACE_SECONDS,
): Promise<{ abandoned: number; deleted: number }> {
  const rows = await db.any(sql.type(z.object({ id: z.uuid(), blobKey: z.string(), state: z.enum(['storing', 'deleting']) }))`
    SELECT id, blob_key AS "blobKey", state FROM media_objects
     WHERE (state = 'storing' AND created_at < now() - make_interval(secs => ${graceSeconds})) OR state = 'deleting'
     ORDER BY created_at LIMIT 500`);
  let abandoned = 0;
  let deleted = 0;
  for (const row of rows) {
    try {
      if (row.state === 'storing') {
        if (await abandonUpload(db, store, row.id, row.blobKey)) abandoned += 1;
      } else {
        await store.delete(row.blobKey);
        if ((await finishDeletion(db, row.id)) > 0) deleted += 1;
      }
    } catch {
      // The store is down: the row stays for the next sweep.
    }
  }
  return { abandoned, deleted };
}
