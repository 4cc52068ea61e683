// Group claims of concurrent uploads, per organization (decision 108). Every upload of an
// organization reserves its size on the organization's one storage row (the quota is a ceiling, so
// the reservations take turns on it), and each holds that row from its upsert to its commit, flush
// to disk included: 200 concurrent uploads of one organization ran at a third of what the same
// uploads spread over 200 organizations did. So one API process claims at most one statement's
// uploads per organization at a time: uploads that arrive while it runs wait, and the next statement
// claims all of them (up to a count and a size), their bytes and one reservation of their sum
// together, in one commit. An upload alone costs what it did (library.ts `claim`).
//
// Each upload keeps the outcome it would have had alone: one whose key an earlier upload already
// used (or another of the same statement) is not claimed by it and is then claimed alone (replay,
// in flight, or key reused, as library.ts decides); a statement refused as a whole (the sum passes
// the quota, a put failed) claims nothing, and each of its uploads is then claimed alone, so only
// the ones that do not fit are refused. Only a database that cannot be reached fails them all, as
// alone each would fail the same way.
//
// Only for a store in this database (the Postgres BlobStore), where the claim writes the bytes and
// the upload is done when it commits; an S3 upload's put runs between its claim and its commit.
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { unreachableReason } from '../../db/availability.ts';
import { isoTimestamp } from '../../db/row-schemas.ts';
import type { AudioUploadRequest, ClaimInput, MediaCaller } from './upload-input.ts';
import { storageLimit } from './upload-input.ts';
import type { SameDatabasePut } from './blob-store.ts';
import { Turns } from '../turns.ts';
import type { TurnItem, TurnLimits } from '../turns.ts';

export const uploadClaimLimits = {
  /** Uploads in one statement. */
  maxItems: 100,
  /** Their bytes in one statement (a single larger upload still goes, alone). */
  maxBytes: 8 * 1024 * 1024,
} as const satisfies TurnLimits;

/** What a group claim gives an upload it stored: library.ts's `stored` claim. */
export type StoredClaim = { kind: 'stored'; row: { id: string; createdAt: string; limitBytes: number; usedBytes: number } };

type Waiting = TurnItem & {
  caller: MediaCaller;
  upload: AudioUploadRequest;
  input: ClaimInput & { put: SameDatabasePut };
  blobKey: string;
  /** The claim of this upload alone (library.ts `claim`). */
  alone: () => Promise<unknown>;
  resolve: (claim: unknown) => void;
};

export class UploadClaims {
  readonly #db: DatabasePool;
  /** Per organization: one claim statement at a time (domain/turns.ts, shared with the notes' group commit). */
  readonly #turns: Turns<Waiting>;

  constructor(db: DatabasePool) {
    this.#db = db;
    this.#turns = new Turns(uploadClaimLimits, (organizationId, batch) => this.#claimBatch(organizationId, batch));
  }

  /** Claims the upload in its organization's next statement; `alone` when that statement is its alone. */
  claim<R>(caller: MediaCaller, upload: AudioUploadRequest, input: ClaimInput & { put: SameDatabasePut }, blobKey: string, alone: () => Promise<R>): Promise<R | StoredClaim> {
    return new Promise((resolve, reject) =>
      this.#turns.add(caller.organizationId, { caller, upload, input, blobKey, bytes: input.size, alone, resolve: resolve as (claim: unknown) => void, reject }),
    );
  }

  async #claimBatch(organizationId: string, batch: Waiting[]): Promise<void> {
    const alone = async (w: Waiting) => w.alone().then(w.resolve, w.reject);
    if (batch.length === 1) return alone(batch[0]!);
    let stored: Map<string, StoredClaim['row']>;
    try {
      stored = await claimMany(this.#db, organizationId, batch);
    } catch (error) {
      if (unreachableReason(error) !== null) return void batch.forEach((w) => w.reject(error));
      // Refused as a whole: nothing of it is stored; each upload is claimed alone, one at a time.
      for (const w of batch) await alone(w);
      return;
    }
    const left: Waiting[] = [];
    for (const w of batch) {
      const row = stored.get(w.blobKey);
      if (row) w.resolve({ kind: 'stored', row } satisfies StoredClaim);
      else left.push(w);
    }
    // Their keys were taken (by an earlier upload, or one of this statement): alone, each finds what.
    for (const w of left) await alone(w);
  }
}

const storedRow = z.object({ blobKey: z.string(), id: z.uuid(), createdAt: isoTimestamp, limitBytes: z.number(), usedBytes: z.number() });

/**
 * One statement for many uploads of one organization, as library.ts `claim` is for one: each record
 * inserted under its key (a key already used, or used earlier in the list, inserts nothing), the
 * bytes of each inserted record, then one reservation of their sum (the bytes first: the reservation
 * reads the put's rows, so the storage row is locked only from there to the commit). A sum past the
 * limit writes -1, which the counter's CHECK refuses: the statement fails and stores nothing. Returns
 * the stored uploads by blob key.
 */
async function claimMany(db: DatabasePool, organizationId: string, batch: readonly Waiting[]): Promise<Map<string, StoredClaim['row']>> {
  const limit = storageLimit(organizationId);
  const column = <T extends string | number | Buffer | null>(of: (w: Waiting) => T) => batch.map(of);
  const put = batch[0]!.input.put;
  // Every upload's bytes in one binary parameter, each sliced out by its offset: sent as they are,
  // where an array of bytea would travel hex-encoded (twice the bytes, encoded and decoded).
  const bytes = Buffer.concat(batch.map((w) => w.upload.bytes));
  const offsets: number[] = [];
  batch.reduce((offset, w) => (offsets.push(offset), offset + w.upload.bytes.byteLength), 0);
  const rows = await db.any(sql.type(storedRow)`
    WITH input AS (
      SELECT * FROM unnest(
        ${sql.array(column((w) => w.caller.installationId), 'uuid')}, ${sql.array(column((w) => w.input.keyHash), 'text')},
        ${sql.array(column((w) => w.input.fingerprint), 'text')}, ${sql.array(column((w) => w.upload.reference), 'text')},
        ${sql.array(column((w) => w.blobKey), 'text')}, ${sql.array(column((w) => w.input.inspection.mediaType), 'text')},
        ${sql.array(column((w) => w.input.inspection.container), 'text')}, ${sql.array(column((w) => w.input.inspection.codec), 'text')},
        ${sql.array(column((w) => w.input.size), 'int4')}, ${sql.array(column((w) => w.input.sha256), 'text')},
        ${sql.array(column((w) => w.upload.declaredDurationMs), 'int4')}, ${sql.array(column((w) => w.input.containerMs), 'int4')},
        ${sql.array(column((w) => w.input.inspection.durationSource), 'text')}, ${sql.array(column((w) => w.caller.servicePrincipalId), 'uuid')},
        ${sql.array(column((w) => w.caller.requestId), 'text')}, ${sql.array(offsets, 'int4')}
      ) WITH ORDINALITY AS i(installation_id, key_hash, fingerprint, reference, blob_key, media_type, container, codec, size_bytes, sha256,
                             declared_ms, container_ms, duration_source, principal_id, request_id, byte_offset, ord)
    ),
    claimed AS (
      INSERT INTO media_objects (organization_id, installation_id, idempotency_key_hash, request_fingerprint, reference, storage_backend, blob_key,
                                 media_type, container, codec, size_bytes, sha256, declared_duration_ms, container_duration_ms, duration_source,
                                 created_by_principal_id, created_request_id, state, stored_at)
      SELECT ${organizationId}, i.installation_id, i.key_hash, i.fingerprint, i.reference, ${batch[0]!.input.backend}, i.blob_key,
             i.media_type, i.container, i.codec, i.size_bytes, i.sha256, i.declared_ms, i.container_ms, i.duration_source,
             i.principal_id, i.request_id, 'stored', now()
        FROM input i ORDER BY i.ord
      ON CONFLICT (installation_id, idempotency_key_hash) DO NOTHING
      RETURNING id, blob_key, size_bytes, created_at
    ),
    put AS (${put.statementForRows(sql.fragment`(SELECT c.blob_key, substring(${sql.binary(bytes)}::bytea FROM i.byte_offset + 1 FOR i.size_bytes) AS bytes
                                                    FROM claimed c JOIN input i ON i.blob_key = c.blob_key) AS r`)}),
    total AS (
      SELECT count(*) AS uploads, coalesce(sum(c.size_bytes), 0)::bigint AS bytes FROM claimed c JOIN put ON put.blob_key = c.blob_key
    ),
    reserved AS (
      INSERT INTO organization_media_storage AS s (organization_id, used_bytes)
      SELECT ${organizationId}, CASE WHEN t.bytes <= ${limit} THEN t.bytes ELSE -1 END FROM total t WHERE t.uploads > 0
      ON CONFLICT (organization_id) DO UPDATE
        SET used_bytes = CASE WHEN s.used_bytes + (SELECT bytes FROM total) <= ${limit} THEN s.used_bytes + (SELECT bytes FROM total) ELSE -1 END
      RETURNING used_bytes
    )
    SELECT c.blob_key AS "blobKey", c.id, c.created_at AS "createdAt", ${limit} AS "limitBytes", (SELECT used_bytes FROM reserved) AS "usedBytes"
      FROM claimed c`);
  return new Map(rows.map(({ blobKey, ...row }) => [blobKey, row]));
}
