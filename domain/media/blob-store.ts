// Where the bytes of private media live. The media records (domain/media/library.ts) own identity,
// tenancy, quota and idempotency in Postgres; a BlobStore only keeps opaque bytes under an opaque
// key that is never shown to anyone (no URL, no path, no signed link ever leaves the service).
//
// Two backends: Postgres bytea (postgres-blob-store.ts, the default: nothing to configure, works
// with any number of API replicas) and S3-compatible object storage (s3-blob-store.ts, for scale).
import type { Readable } from 'node:stream';

/** An inclusive byte range, as HTTP Range speaks it: bytes start..end of the object. */
export type BlobRange = { start: number; end: number };

export type BlobStoreKind = 'postgres' | 's3';

export interface BlobStore {
  readonly kind: BlobStoreKind;
  /**
   * Stores the bytes under the key, replacing any object there. Resolves once the bytes are
   * durable; rejects with BlobStoreError (nothing is left behind that a later `delete` cannot remove).
   */
  put(key: string, bytes: Uint8Array, meta: { contentType: string; sha256: string }): Promise<void>;
  /** The object's bytes, whole or one inclusive range of them; null when no object has this key. */
  read(key: string, range?: BlobRange): Promise<Readable | null>;
  /** Removes the object; removing an absent key is not an error. */
  delete(key: string): Promise<void>;
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

  constructor(backend: BlobStoreKind, operation: 'put' | 'read' | 'delete', reason: string) {
    super(`media storage ${operation} failed (${backend}: ${reason})`);
    this.name = 'BlobStoreError';
    this.backend = backend;
    this.operation = operation;
    this.reason = reason;
  }
}
