// Where the bytes of private media live. The media records (domain/media/library.ts) own identity,
// tenancy, quota and idempotency in Postgres; a BlobStore only keeps opaque bytes under an opaque
// key that is never shown to anyone (no URL, no path, no signed link ever leaves the service).
//
// Two backends: Postgres bytea (postgres-blob-store.ts, the default: nothing to configure, works
// with any number of API replicas) and S3-compatible object storage (s3-blob-store.ts, for scale).
//
// What a failure tells the caller (library.ts decides what to answer from it):
// - a `delete` that resolves is the store's confirmation that nothing is kept under the key (S3's
//   DELETE is idempotent: 204 for an absent key too), which is how a failed put is taken back;
// - `notSent` on a failure says that no request of the operation ever reached the store (every
//   attempt failed to connect), so a failed put certainly stored nothing, confirmation or not;
// - an S3 operation ends by its deadline (`timeoutMs`, retries included) or by the caller's
//   `signal`, whichever comes first: a store that accepts a connection and never answers is given
//   up on then, not after every retry has used its own timeout. The Postgres store has no
//   `timeoutMs` and ignores the signal: the pool's statement timeout bounds its queries.
import type { Readable } from 'node:stream';
import type { DatabasePool, FragmentSqlToken } from 'slonik';

/** An inclusive byte range, as HTTP Range speaks it: bytes start..end of the object. */
export type BlobRange = { start: number; end: number };

export type BlobStoreKind = 'postgres' | 's3';

/** A caller's bound on one operation: aborting it ends the operation with a BlobStoreError. */
export type BlobOperationOptions = { signal?: AbortSignal | undefined };

/**
 * A store whose bytes live in the database of the media records (the Postgres store) offers its put
 * as part of a statement, so the library claims the upload, writes its bytes and records it `stored`
 * in one statement: one round trip and one commit, all or nothing. Used only when `db` is the
 * library's own pool.
 */
export type SameDatabasePut = {
  readonly db: DatabasePool;
  /**
   * The put as a data-modifying statement for a CTE of the caller's statement: the bytes under the
   * `blob_key` of each row of `keys` (a relation of that statement; none for none), RETURNING blob_key.
   */
  statement(keys: FragmentSqlToken, bytes: Uint8Array): FragmentSqlToken;
  /** The same for many objects: `rows` is a relation of the caller's statement with `blob_key` and `bytes`. */
  statementForRows(rows: FragmentSqlToken): FragmentSqlToken;
  /** A failure of the caller's statement as this store's put would have reported it. */
  failure(error: unknown): BlobStoreError;
};

export interface BlobStore {
  readonly kind: BlobStoreKind;
  /**
   * The deadline of one operation, retries included, in ms; undefined when the backend bounds its
   * own calls (Postgres: the pool's statement timeout, 15 s by default). The library sizes what follows a failed put
   * (the confirming delete) from it, so one upload ends within one deadline plus a short slice.
   */
  readonly timeoutMs?: number | undefined;
  /** Only the Postgres store: see SameDatabasePut. A store without it is written with `put`. */
  readonly sameDatabasePut?: SameDatabasePut | undefined;
  /**
   * Stores the bytes under the key, replacing any object there. Resolves once the bytes are
   * durable; rejects with BlobStoreError (nothing is left behind that a later `delete` cannot remove).
   */
  put(key: string, bytes: Uint8Array, meta: { contentType: string; sha256: string }, options?: BlobOperationOptions): Promise<void>;
  /** The object's bytes, whole or one inclusive range of them; null when no object has this key. */
  read(key: string, range?: BlobRange, options?: BlobOperationOptions): Promise<Readable | null>;
  /**
   * Removes the object; removing an absent key is not an error. Resolving is the store's word that
   * nothing is kept under the key any more.
   */
  delete(key: string, options?: BlobOperationOptions): Promise<void>;
}

/**
 * A storage failure, safe to log: it names the operation and the backend's error class or status,
 * never the key, bucket, endpoint, URL or credential (the message of a backend's own error may).
 */
export class BlobStoreError extends Error {
  readonly operation: 'put' | 'read' | 'delete';
  readonly backend: BlobStoreKind;
  /** The backend's error name or code (e.g. `NoSuchBucket`, `ECONNREFUSED`), or its HTTP status. */
  readonly reason: string;
  /**
   * True only when no request of this operation reached the store (each attempt failed to connect:
   * refused, unresolvable, unreachable): a put that failed so stored nothing. False when unknown.
   */
  readonly notSent: boolean;

  constructor(backend: BlobStoreKind, operation: 'put' | 'read' | 'delete', reason: string, options: { notSent?: boolean } = {}) {
    super(`media storage ${operation} failed (${backend}: ${reason})`);
    this.name = 'BlobStoreError';
    this.backend = backend;
    this.operation = operation;
    this.reason = reason;
    this.notSent = options.notSent ?? false;
  }
}
