// The embedded BlobStore: bytes in Postgres (`media_blobs`, bytea stored EXTERNAL so a range read
// fetches only the chunks it needs). Nothing to configure, backed up with everything else, and
// shared by any number of API replicas. At most 3 MiB per object keeps it well inside what bytea
// handles comfortably; S3-compatible storage (s3-blob-store.ts) is the choice at scale.
import { Readable } from 'node:stream';
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';
import { BlobStoreError } from './blob-store.ts';
import type { BlobRange, BlobStore, SameDatabasePut } from './blob-store.ts';

const bytesRow = z.object({ bytes: z.instanceof(Buffer) });
const keyRow = z.object({ blob_key: z.string() });

/** A storage failure without the database's own message (it could quote the key). */
function failure(operation: 'put' | 'read' | 'delete', error: unknown): BlobStoreError {
  const code = (error as { code?: unknown } | null)?.code;
  const name = error instanceof Error ? error.name : 'Error';
  return new BlobStoreError('postgres', operation, typeof code === 'string' ? `${name} ${code}` : name);
}

const binary = (bytes: Uint8Array) => sql.binary(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
/** Replacing an object gives it the new bytes (a retried put of the same key). */
const replace = sql.fragment`ON CONFLICT (blob_key) DO UPDATE SET bytes = excluded.bytes, created_at = now() RETURNING blob_key`;

export function createPostgresBlobStore(db: DatabasePool): BlobStore {
  const sameDatabasePut: SameDatabasePut = {
    db,
    statement: (keys, bytes) => sql.fragment`INSERT INTO media_blobs (blob_key, bytes) SELECT blob_key, ${binary(bytes)} FROM ${keys} ${replace}`,
    statementForRows: (rows) => sql.fragment`INSERT INTO media_blobs (blob_key, bytes) SELECT blob_key, bytes FROM ${rows} ${replace}`,
    failure: (error) => failure('put', error),
  };
  return {
    kind: 'postgres',
    sameDatabasePut,
    async put(key, bytes) {
      await db.query(sql.type(keyRow)`INSERT INTO media_blobs (blob_key, bytes) VALUES (${key}, ${binary(bytes)}) ${replace}`).catch((error: unknown) => {
        throw failure('put', error);
      });
    },
    async read(key, range?: BlobRange) {
      // substring() on bytea is 1-based; an EXTERNAL value is sliced without reading all of it.
      const slice = range
        ? sql.fragment`substring(bytes FROM ${range.start + 1}::int FOR ${range.end - range.start + 1}::int)`
        : sql.fragment`bytes`;
      const row = await db.maybeOne(sql.type(bytesRow)`SELECT ${slice} AS bytes FROM media_blobs WHERE blob_key = ${key}`).catch((error: unknown) => {
        throw failure('read', error);
      });
      return row ? Readable.from([row.bytes]) : null;
    },
    async delete(key) {
      await db.query(sql.type(emptyRow)`DELETE FROM media_blobs WHERE blob_key = ${key}`).catch((error: unknown) => {
        throw failure('delete', error);
      });
    },
  };
}
