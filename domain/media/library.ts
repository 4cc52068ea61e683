// Private audio media: upload, read, list and delete for one installation of a product
// organization. Postgres holds identity, tenancy, idempotency and the organization's storage
// quota; the bytes go to a BlobStore under a random key that never leaves the service.
//
// An upload is three short steps, so no transaction is held open while bytes travel:
//   1. claim: insert the record (`storing`) under (installation, Idempotency-Key) and add its size
//      to the organization's storage with one conditional upsert, in one statement (one round trip
//      and one commit: the storage row is locked from the upsert to that commit only). A concurrent
//      upload with the same key waits on the unique index, then sees ours; a concurrent upload of
//      the same organization can never take the storage past `mediaStorageBytes`.
//   2. put the bytes in the BlobStore.
//   3. mark the record `stored`.
// With the Postgres store (same database), the three are one statement: the claim's statement
// writes the bytes and inserts the record `stored`, all or nothing; the bytes arrive with the
// statement, before it runs. A failed statement stored nothing (503 media_storage_unavailable), and
// such an upload never leaves a `storing` row for the sweep. What follows is the S3 store's path.
// A refused claim leaves nothing. A failed put is taken back by what the store can confirm:
//   - no request reached the store (every attempt was refused before connecting), or the store
//     confirms the key is empty (a DELETE it answered: S3's DELETE is idempotent): the claim ends at
//     once, in one transaction (record removed, size given back). 503 media_storage_unavailable:
//     nothing stored, no quota used; the same Idempotency-Key can be retried at once.
//   - the store cannot be reached to confirm: the claim becomes unconfirmed (`deleting` with no
//     `stored_at`), holding its size, and the answer says so (503 media_upload_outcome_unknown, with
//     Retry-After and the held bytes). A retry with the same key re-checks the store first: when it
//     confirms, the old claim ends and the retry is a new upload; otherwise the same 503 again. The
//     sweep confirms unconfirmed claims on each run, without a grace period.
// The upload's storage steps share one deadline: the store's (`timeoutMs`, MEDIA_S3_TIMEOUT_MS for
// S3), plus a short slice for the confirming delete when the put used all of it (confirmSliceMs).
// A process that dies between the steps leaves a `storing` row; the sweep (sweepUnfinishedMedia)
// takes it back the same way once it is older than the grace period.
//
// Reads and deletions say what is true when the store fails: a read is 503 media_read_unavailable
// (the media exists, its bytes cannot be read now), a deletion is 503 media_deletion_pending (the
// media is already deleted for readers; its bytes' removal, and so its size, awaits confirmation).
import { createHash, randomUUID } from 'node:crypto';
import { CheckIntegrityConstraintViolationError, sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { DatabaseUnavailableError } from '../../db/availability.ts';
import { emptyRow, isoTimestamp } from '../../db/row-schemas.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { AppError } from '../errors.ts';
import { inspectAudio } from './audio-inspection.ts';
import { checkDuration } from './upload-rules.ts';
import { BlobStoreError } from './blob-store.ts';
import type { BlobOperationOptions, BlobRange, BlobStore } from './blob-store.ts';
import type { UploadClaims } from './upload-claims.ts';
import { storageLimit } from './upload-input.ts';
import type { AudioUploadRequest, ClaimInput, MediaCaller } from './upload-input.ts';

// The terms one upload and a statement of many (upload-claims.ts) share live in upload-input.ts;
// the caller and the request are re-exported here, with the functions that take them.
export type { AudioUploadRequest, MediaCaller } from './upload-input.ts';



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

/** How long a `storing` row may sit before the sweep treats its process as gone. */
export const UNFINISHED_MEDIA_GRACE_SECONDS = 600;

/** Retry-After (and `retryAfterSeconds`) of every storage failure: the store is failing right now. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/**
 * The time the confirming delete after a failed put gets when the put used the whole deadline: a
 * tenth of the store's timeout, between 50 ms and 1 s (a DELETE is one short round trip). A put that
 * failed early leaves the delete the rest of the deadline instead, if that is longer.
 */
export function confirmSliceMs(timeoutMs: number): number {
  return Math.min(1_000, Math.max(50, Math.ceil(timeoutMs / 10)));
}

/** One upload's deadline over its storage steps (none when the store bounds its own calls). */
function storageDeadline(store: BlobStore) {
  const timeoutMs = store.timeoutMs;
  const endsAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const within = (ms: number) => ({ signal: AbortSignal.timeout(Math.max(1, ms)) });
  return {
    /** What is left of the deadline. */
    main: () => (endsAt === undefined ? {} : within(endsAt - Date.now())),
    /** What is left, but at least the confirmation slice. */
    confirm: () => (endsAt === undefined || timeoutMs === undefined ? {} : within(Math.max(confirmSliceMs(timeoutMs), endsAt - Date.now()))),
  };
}

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


export async function getMediaStorage(db: CommonQueryMethods, organizationId: string): Promise<MediaStorage> {
  const row = await db.one(sql.type(storageRow)`
    SELECT ${storageLimit(organizationId)} AS "limitBytes",
           coalesce((SELECT s.used_bytes FROM organization_media_storage s WHERE s.organization_id = ${organizationId}), 0) AS "usedBytes"`);
  return { ...row, availableBytes: Math.max(0, row.limitBytes - row.usedBytes) };
}

const storedRow = mediaRow.extend(storageRow.shape);
const existingRow = z.object({ id: z.uuid(), state: z.string(), fingerprint: z.string(), everStored: z.boolean(), blobKey: z.string(), size: z.number() });

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
  /** The process's group claims (upload-claims.ts); without them each upload is claimed alone. */
  claims?: UploadClaims,
): Promise<{ media: AudioMediaRecord; replayed: boolean; storage: MediaStorage }> {
  const sha256 = sha256Hex(upload.bytes);
  const keyHash = sha256Hex(upload.idempotencyKey);
  const fingerprint = sha256Hex(JSON.stringify([sha256, upload.bytes.byteLength, upload.reference, upload.declaredDurationMs]));
  const size = upload.bytes.byteLength;
  const inspection = await inspectAudio(upload.bytes);
  checkDuration(upload.declaredDurationMs, inspection);
  const containerMs = inspection.containerDurationSeconds === null ? null : Math.round(inspection.containerDurationSeconds * 1000);

  const deadline = storageDeadline(store);
  // A store in this database (Postgres) writes the bytes in the claim's own statement.
  const sameDatabase = store.sameDatabasePut?.db === db ? store.sameDatabasePut : undefined;
  const input: ClaimInput = { keyHash, fingerprint, sha256, size, inspection, containerMs, backend: store.kind, put: sameDatabase };

  // 1. claim the key and the storage, or find what the key already did. At most twice: a key whose
  // earlier upload is unconfirmed is re-checked, and once the store confirms, claimed afresh.
  // The key its bytes are stored under, if this upload is the one its Idempotency-Key stores.
  const newBlobKey = randomUUID();
  const { put } = input;
  let claimed =
    claims && put
      ? await claims.claim(caller, upload, { ...input, put }, newBlobKey, () => claim(db, caller, upload, input, newBlobKey))
      : await claim(db, caller, upload, input, newBlobKey);
  if (claimed.kind === 'existing' && claimed.existing.fingerprint === fingerprint && isUnconfirmed(claimed.existing)) {
    const { existing } = claimed;
    const confirmed = await store.delete(existing.blobKey, deadline.main()).then(
      () => true,
      (error: unknown) => error,
    );
    if (confirmed !== true) throw outcomeUnknown(confirmed, existing.size);
    await releaseClaim(db, existing.id);
    claimed = await claim(db, caller, upload, input, randomUUID());
  }

  if (claimed.kind === 'existing') {
    const { existing } = claimed;
    if (existing.fingerprint !== fingerprint) throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another upload (other bytes, reference or duration).');
    if (existing.state === 'storing') throw new AppError('idempotency_in_flight', 'An upload with this Idempotency-Key is still being stored.', { headers: { 'retry-after': '1' } });
    // Only after a concurrent retry made it unconfirmed again between our two claims.
    if (isUnconfirmed(existing)) throw outcomeUnknown(undefined, existing.size);
    if (existing.state !== 'stored') throw new AppError('idempotency_key_reused', 'The upload of this Idempotency-Key was deleted; upload again with a new key.');
    const media = await getAudio(db, caller, existing.id);
    return { media, replayed: true, storage: await getMediaStorage(db, caller.organizationId) };
  }
  if (claimed.kind === 'stored') {
    const { row } = claimed;
    const media = toRecord({
      mediaId: row.id,
      reference: upload.reference,
      mediaType: inspection.mediaType,
      container: inspection.container,
      codec: inspection.codec,
      sizeBytes: size,
      sha256,
      declaredDurationMs: upload.declaredDurationMs,
      containerDurationMs: containerMs,
      durationSource: inspection.durationSource,
      createdAt: row.createdAt,
    });
    return { media, replayed: false, storage: { limitBytes: row.limitBytes, usedBytes: row.usedBytes, availableBytes: Math.max(0, row.limitBytes - row.usedBytes) } };
  }

  // 2. the bytes; 3. stored. The organization's storage figures come back with the commit: one
  // round trip fewer per upload.
  const { id, blobKey } = claimed.row;
  try {
    await store.put(blobKey, upload.bytes, { contentType: inspection.mediaType, sha256 }, deadline.main());
  } catch (error) {
    throw answerTakeBack(await takeBackUpload(db, store, id, blobKey, error, deadline.confirm()), error, size);
  }
  const stored = await db.maybeOne(sql.type(storedRow)`
    UPDATE media_objects m SET state = 'stored', stored_at = now() WHERE m.id = ${id} AND m.state = 'storing'
    RETURNING ${mediaColumns}, ${storageLimit(caller.organizationId)} AS "limitBytes",
              (SELECT s.used_bytes FROM organization_media_storage s WHERE s.organization_id = m.organization_id) AS "usedBytes"`);
  if (!stored) {
    // The sweep judged this upload abandoned (it outlived the grace period) and took the claim back,
    // or could not confirm and left it unconfirmed: the bytes that landed since are ours to remove.
    throw answerTakeBack(await takeBackUpload(db, store, id, blobKey, undefined, deadline.confirm()), undefined, size, 'The upload took too long to store and was abandoned. ');
  }
  const { limitBytes, usedBytes, ...row } = stored;
  return { media: toRecord(row), replayed: false, storage: { limitBytes, usedBytes, availableBytes: Math.max(0, limitBytes - usedBytes) } };
}


const claimRow = existingRow.extend({
  claimed: z.boolean(),
  // Only of a record the statement inserted (null for one the key already had).
  createdAt: isoTimestamp.nullable(),
  limitBytes: z.number().nullable(),
  usedBytes: z.number().nullable(),
});

/** The constraint a refused reservation trips (used_bytes >= 0), which undoes the whole claim statement. */
const STORAGE_COUNTER_CHECK = 'organization_media_storage_used_bytes_check';

/**
 * Step 1, one statement (one snapshot, one round trip, one commit: the organization's storage row
 * stays locked only from its upsert to that commit, never across a round trip): the record is
 * inserted under its key, or the key's earlier record is found. Only an inserted record reserves its
 * size: the reservation reads the rows the insert returned, so it runs after it. A reservation past
 * the limit writes -1, which the counter's CHECK (used_bytes >= 0) refuses: the statement fails as a
 * whole and leaves nothing, the record included (no other part of the statement could see the
 * inserted row to delete it). A record of the key committed after the statement's snapshot (a
 * concurrent upload with the same key, whose commit our insert waited for) is not in the snapshot: a
 * second statement reads it.
 *
 * With a store in this database (`put`), the same statement writes the bytes (for the inserted record
 * only, before the reservation takes the storage row) and the record is inserted `stored`: steps 2
 * and 3 are part of step 1, all or nothing. No transaction waits on bytes in flight: they arrive
 * with the statement, before it runs.
 */
async function claim(db: DatabasePool, caller: MediaCaller, upload: AudioUploadRequest, c: ClaimInput, blobKey: string) {
  const limit = storageLimit(caller.organizationId);
  const stored = c.put !== undefined;
  // The bytes' write runs before the reservation: the reservation reads its result.
  const putStep = c.put ? sql.fragment`put AS (${c.put.statement(sql.fragment`claimed`, upload.bytes)}),` : sql.fragment``;
  const afterPut = c.put ? sql.fragment`JOIN put ON put.blob_key = claimed.blob_key` : sql.fragment``;
  for (let attempt = 0; ; attempt++) {
    // Prepared (one name per shape): planning this statement costs more than running it.
    const rows = await db
      .any(sql.prepared(stored ? 'media_claim_stored' : 'media_claim', claimRow)`
        WITH claimed AS (
          INSERT INTO media_objects (organization_id, installation_id, idempotency_key_hash, request_fingerprint, reference, storage_backend, blob_key,
                                     media_type, container, codec, size_bytes, sha256, declared_duration_ms, container_duration_ms, duration_source,
                                     created_by_principal_id, created_request_id, state, stored_at)
          VALUES (${caller.organizationId}, ${caller.installationId}, ${c.keyHash}, ${c.fingerprint}, ${upload.reference}, ${c.backend}, ${blobKey},
                  ${c.inspection.mediaType}, ${c.inspection.container}, ${c.inspection.codec}, ${c.size}, ${c.sha256}, ${upload.declaredDurationMs}, ${c.containerMs},
                  ${c.inspection.durationSource}, ${caller.servicePrincipalId}, ${caller.requestId},
                  ${stored ? 'stored' : 'storing'}, ${stored ? sql.fragment`now()` : sql.fragment`NULL`})
          ON CONFLICT (installation_id, idempotency_key_hash) DO NOTHING
          RETURNING id, state, blob_key, size_bytes, created_at
        ), ${putStep} reserved AS (
          INSERT INTO organization_media_storage AS s (organization_id, used_bytes)
          SELECT ${caller.organizationId}, CASE WHEN claimed.size_bytes <= ${limit} THEN claimed.size_bytes ELSE -1 END FROM claimed ${afterPut}
          ON CONFLICT (organization_id) DO UPDATE
            SET used_bytes = CASE WHEN s.used_bytes + ${c.size} <= ${limit} THEN s.used_bytes + ${c.size} ELSE -1 END
          RETURNING used_bytes
        )
        SELECT true AS claimed, id, state, ${c.fingerprint} AS fingerprint, ${stored ? sql.fragment`true` : sql.fragment`false`} AS "everStored", blob_key AS "blobKey", size_bytes AS size,
               created_at AS "createdAt", ${limit} AS "limitBytes", (SELECT used_bytes FROM reserved) AS "usedBytes"
          FROM claimed
        UNION ALL
        SELECT false, id, state, request_fingerprint, stored_at IS NOT NULL, blob_key, size_bytes, NULL, NULL, NULL
          FROM media_objects
         WHERE installation_id = ${caller.installationId} AND idempotency_key_hash = ${c.keyHash}`)
      .catch(async (error: unknown) => {
        if (error instanceof CheckIntegrityConstraintViolationError && error.constraint === STORAGE_COUNTER_CHECK) {
          const storage = await getMediaStorage(db, caller.organizationId);
          throw new AppError('media_storage_exhausted', `This upload needs ${c.size} bytes; the organization has ${storage.availableBytes} of ${storage.limitBytes} left.`, {
            extensions: { limitBytes: storage.limitBytes, usedBytes: storage.usedBytes, requiredBytes: c.size },
          });
        }
        // A statement Postgres failed stored nothing: it is the put that failed. Only a lost
        // connection leaves it unknown whether the statement committed (a retry of the key tells).
        if (c.put && !(error instanceof DatabaseUnavailableError)) throw nothingStored(c.put.failure(error));
        throw error;
      });
    const claimed = rows.find((r) => r.claimed);
    if (claimed) {
      const { id, blobKey, createdAt, limitBytes, usedBytes } = claimed;
      if (!stored) return { kind: 'claimed' as const, row: { id, blobKey } };
      if (createdAt === null || limitBytes === null || usedBytes === null) throw new Error('a stored claim returns its figures');
      return { kind: 'stored' as const, row: { id, createdAt, limitBytes, usedBytes } };
    }
    const [seen] = rows;
    if (seen) {
      const { claimed: _inserted, createdAt: _c, limitBytes: _l, usedBytes: _u, ...existing } = seen;
      return { kind: 'existing' as const, existing };
    }
    // The key's record was committed after our snapshot: read it now. Gone again (its claim ended
    // meanwhile): the key is free, claim again.
    const existing = await db.maybeOne(sql.type(existingRow)`
      SELECT id, state, request_fingerprint AS fingerprint, stored_at IS NOT NULL AS "everStored", blob_key AS "blobKey", size_bytes AS size
        FROM media_objects
       WHERE installation_id = ${caller.installationId} AND idempotency_key_hash = ${c.keyHash}`);
    if (existing) return { kind: 'existing' as const, existing };
    if (attempt >= 2) throw new AppError('idempotency_in_flight', 'An upload with this Idempotency-Key is still being stored.', { headers: { 'retry-after': '1' } });
  }
}

/** An upload whose put failed and whose bytes' absence the store has not confirmed yet. */
const isUnconfirmed = (row: { state: string; everStored: boolean }) => row.state === 'deleting' && !row.everStored;

/** The reason, Retry-After and any further extensions of a storage failure (never a backend message). */
function storageFailure(error: unknown, extensions: Record<string, unknown> = {}) {
  const reason = error instanceof BlobStoreError ? error.reason : 'unknown';
  return {
    extensions: { storageReason: reason, retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS, ...extensions },
    headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
  };
}

/** The put failed and the claim is over: nothing was stored, nothing is held; retry at once. */
function nothingStored(error: unknown, prefix = ''): AppError {
  return new AppError(
    'media_storage_unavailable',
    `${prefix}The store failed the upload and nothing is kept (confirmed): no bytes are stored and no quota is used. Retry with the same Idempotency-Key.`,
    storageFailure(error),
  );
}

/** The put failed and the store could not confirm what it holds: the size stays held. */
function outcomeUnknown(error: unknown, heldBytes: number, prefix = ''): AppError {
  return new AppError(
    'media_upload_outcome_unknown',
    `${prefix}The store failed the upload and could not be reached to confirm whether the bytes were kept; ${heldBytes} bytes stay held against the organization's ` +
      `storage until that is confirmed. Retry with the same Idempotency-Key after ${STORAGE_RETRY_AFTER_SECONDS} s: the retry checks the store again.`,
    storageFailure(error, { heldBytes }),
  );
}

type TakeBack = 'released' | 'unconfirmed' | 'untracked';

function answerTakeBack(outcome: TakeBack, error: unknown, size: number, prefix = ''): AppError {
  if (outcome === 'released') return nothingStored(error, prefix);
  if (outcome === 'unconfirmed') return outcomeUnknown(error, size, prefix);
  // Only a put slower than the sweep's grace period gets here (an S3 put ends at its deadline).
  return new AppError(
    'media_upload_outcome_unknown',
    `${prefix}The sweep had already ended this upload's claim, and the store could not be reached to confirm whether the bytes were kept; they are not counted ` +
      'against the storage. Retry with the same Idempotency-Key.',
    storageFailure(error, { heldBytes: 0 }),
  );
}

/**
 * Takes back a claim whose bytes did not get stored. Nothing sent: the claim ends. Otherwise the
 * object is deleted first (best effort, within `confirm`): the store's answer confirms the key is
 * empty and the claim ends in one transaction. No answer: the claim is (or stays) unconfirmed,
 * holding its size, for a retry of its key or the sweep: bytes the store may still hold are never
 * left without a record pointing at them, except when the sweep had already ended the claim.
 */
async function takeBackUpload(db: DatabasePool, store: BlobStore, id: string, blobKey: string, putError: unknown, confirm: BlobOperationOptions): Promise<TakeBack> {
  const notSent = putError instanceof BlobStoreError && putError.notSent;
  const confirmed =
    notSent ||
    (await store.delete(blobKey, confirm).then(
      () => true,
      () => false,
    ));
  if (confirmed) {
    // Ended here, or already by the sweep (which confirmed too): either way nothing is held.
    await releaseClaim(db, id);
    return 'released';
  }
  const marked = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    UPDATE media_objects SET state = 'deleting' WHERE id = ${id} AND state IN ('storing', 'deleting') AND stored_at IS NULL RETURNING id`);
  return marked ? 'unconfirmed' : 'untracked';
}

/** Ends a claim that never became `stored`: the record goes and its size is given back, once. */
async function releaseClaim(db: DatabasePool, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const gone = await tx.maybeOne(sql.type(z.object({ organizationId: z.uuid(), size: z.number() }))`
      DELETE FROM media_objects WHERE id = ${id} AND state IN ('storing', 'deleting') AND stored_at IS NULL
      RETURNING organization_id AS "organizationId", size_bytes AS size`);
    if (gone) await releaseStorage(tx, gone.organizationId, gone.size);
    return gone !== null;
  });
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
        throw new AppError('media_read_unavailable', 'The media exists, but the store failed to serve its bytes; nothing changed. Retry later.', storageFailure(error));
      });
      // A record whose bytes are gone is a storage fault, not a missing media: never a 404.
      if (!body) {
        throw new AppError('media_read_unavailable', 'The media exists, but the store holds no bytes for it.', storageFailure(undefined, { storageReason: 'ObjectMissing' }));
      }
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
 * fails, the media stays deleted for every reader, its size stays counted, and the answer says
 * so (503 media_deletion_pending); a retried DELETE (or the sweep) finishes it.
 */
export async function deleteAudio(db: DatabasePool, store: BlobStore, caller: MediaCaller, mediaId: string): Promise<{ mediaId: string; freedBytes: number; storage: MediaStorage }> {
  if (!UUID.test(mediaId)) throw new AppError('media_not_found');
  // A deletion in progress may be retried; an unconfirmed upload (never stored) is no media at all.
  const row = await db.maybeOne(sql.type(z.object({ blobKey: z.string(), size: z.number() }))`
    UPDATE media_objects m SET state = 'deleting', deleted_by_principal_id = ${caller.servicePrincipalId}, deleted_request_id = ${caller.requestId}
     WHERE m.id = ${mediaId} AND m.organization_id = ${caller.organizationId} AND m.installation_id = ${caller.installationId}
       AND (m.state = 'stored' OR (m.state = 'deleting' AND m.stored_at IS NOT NULL))
    RETURNING m.blob_key AS "blobKey", m.size_bytes AS size`);
  if (!row) throw new AppError('media_not_found');
  await store.delete(row.blobKey).catch((error: unknown) => {
    throw new AppError(
      'media_deletion_pending',
      `The media is deleted: it can no longer be read or listed. The store failed to confirm the removal of its bytes, so its ${row.size} bytes stay counted ` +
        "against the organization's storage until a retried DELETE or the service's sweep confirms it.",
      storageFailure(error, { heldBytes: row.size }),
    );
  });
  const freedBytes = await finishDeletion(db, mediaId);
  return { mediaId: mediaId.toLowerCase(), freedBytes, storage: await getMediaStorage(db, caller.organizationId) };
}

/** The tombstone and the size given back, once (a concurrent finisher frees nothing twice). */
async function finishDeletion(db: DatabasePool, mediaId: string): Promise<number> {
  return db.transaction(async (tx) => {
    const done = await tx.maybeOne(sql.type(z.object({ organizationId: z.uuid(), size: z.number() }))`
      UPDATE media_objects SET state = 'deleted', deleted_at = now() WHERE id = ${mediaId} AND state = 'deleting' AND stored_at IS NOT NULL
      RETURNING organization_id AS "organizationId", size_bytes AS size`);
    if (!done) return 0;
    await releaseStorage(tx, done.organizationId, done.size);
    return done.size;
  });
}

/** What one sweep did: claims ended, deletions finished, rows left for the next run. */
export type MediaSweep = { abandoned: number; deleted: number; pending: number };

/**
 * Finishes what a failing store or a dead process left, confirming with the store each time:
 * - unconfirmed uploads (a failed put the store could not confirm; `deleting`, never stored) and
 *   `storing` rows older than the grace period (their process is gone): the object is deleted and,
 *   the store having confirmed, the claim ends (record removed, size given back: `abandoned`). A
 *   `storing` row the store cannot confirm becomes unconfirmed, so a retry of its key re-checks too.
 * - deletions (`deleting`, once stored): the object is deleted, then the tombstone and the size
 *   given back (`deleted`; finishing twice is harmless: the size is given back once).
 * The first store failure ends the run (the store is down: every other row would only wait for its
 * deadline too); what is left is `pending`, for the next run. Run by the worker every 10 minutes.
 */
export async function sweepUnfinishedMedia(db: DatabasePool, store: BlobStore, graceSeconds = UNFINISHED_MEDIA_GRACE_SECONDS): Promise<MediaSweep> {
  const rows = await db.any(sql.type(z.object({ id: z.uuid(), blobKey: z.string(), state: z.enum(['storing', 'deleting']), everStored: z.boolean() }))`
    SELECT id, blob_key AS "blobKey", state, stored_at IS NOT NULL AS "everStored" FROM media_objects
     WHERE (state = 'storing' AND created_at < now() - make_interval(secs => ${graceSeconds})) OR state = 'deleting'
     ORDER BY created_at LIMIT 500`);
  const sweep: MediaSweep = { abandoned: 0, deleted: 0, pending: 0 };
  for (const [index, row] of rows.entries()) {
    const confirmed = await store.delete(row.blobKey).then(
      () => true,
      () => false,
    );
    if (!confirmed) {
      if (row.state === 'storing') {
        await db.query(sql.type(emptyRow)`UPDATE media_objects SET state = 'deleting' WHERE id = ${row.id} AND state = 'storing'`);
      }
      sweep.pending = rows.length - index;
      break;
    }
    if (row.everStored) {
      if ((await finishDeletion(db, row.id)) > 0) sweep.deleted += 1;
    } else if (await releaseClaim(db, row.id)) sweep.abandoned += 1;
  }
  return sweep;
}
