// Postgres-backed idempotency for applied writes, shared by REST, MCP and Forge.
//
// Inside the apply's own transaction: a non-blocking advisory lock on the key (held → 409
// idempotency_in_flight), then a look-up of a stored record (other fingerprint → 422; same →
// replay). The write and the new record commit together, so a crash never leaves a half-done
// key behind and a retry after a failed apply simply runs again.
import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { emptyRow } from '../db/row-schemas.ts';

export const IDEMPOTENCY_RETENTION_HOURS = 24;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type IdempotencyScope = {
  accountId: string;
  /** e.g. `POST /api/dev/notes`, `mcp:create_or_append_note` */
  route: string;
  /** The mapping the request acts on. */
  scope: string;
  key: string;
  /** A digest of everything that determines the outcome. */
  fingerprint: string;
};

export type StoredResponse = { status: number; body: unknown; etag: string | null };

export function requireIdempotencyKey(raw: string | undefined): string {
  if (raw === undefined || raw === '') throw new AppError('idempotency_key_required');
  if (!KEY_PATTERN.test(raw)) throw new AppError('invalid_idempotency_key');
  return raw;
}

/** A stable digest of a JSON value: object keys are sorted before hashing. */
export function fingerprintOf(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
        : v;
  return createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex');
}

const recordSchema = z.object({ fingerprint: z.string(), status: z.number(), body: z.unknown(), etag: z.string().nullable() });

/**
 * Claims the key for this transaction. Returns a stored response to replay, or null when the
 * caller should do the work and then call `storeIdempotentResponse` in the same transaction.
 */
export async function claimIdempotencyKey(tx: DatabaseTransactionConnection, id: IdempotencyScope): Promise<StoredResponse | null> {
  const lockKey = JSON.stringify([id.accountId, id.route, id.scope, id.key]);
  const locked = await tx.oneFirst(sql.type(z.object({ locked: z.boolean() }))`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${lockKey}, 0)) AS locked`);
  if (!locked) throw new AppError('idempotency_in_flight', undefined, { headers: { 'retry-after': '1' } });
  const record = await tx.maybeOne(sql.type(recordSchema)`
    SELECT fingerprint, response_status AS status, response_body AS body, response_etag AS etag
      FROM idempotency_records
     WHERE account_id = ${id.accountId} AND route = ${id.route} AND scope = ${id.scope} AND key = ${id.key}
       AND expires_at > now()`);
  if (!record) return null;
  if (record.fingerprint !== id.fingerprint) throw new AppError('idempotency_key_reused');
  return { status: record.status, body: record.body, etag: record.etag };
}

export async function storeIdempotentResponse(tx: DatabaseTransactionConnection, id: IdempotencyScope, response: StoredResponse): Promise<void> {
  await tx.query(sql.type(emptyRow)`
    INSERT INTO idempotency_records (account_id, route, scope, key, fingerprint, response_status, response_body, response_etag, expires_at)
    VALUES (${id.accountId}, ${id.route}, ${id.scope}, ${id.key}, ${id.fingerprint}, ${response.status}, ${sql.jsonb(response.body as never)},
            ${response.etag}, now() + make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS}))
    ON CONFLICT (account_id, route, scope, key) DO UPDATE
      SET fingerprint = excluded.fingerprint, response_status = excluded.response_status, response_body = excluded.response_body,
          response_etag = excluded.response_etag, created_at = now(), expires_at = excluded.expires_at`);
}

/** Deletes expired records; returns how many. Run periodically by the worker. */
export async function purgeExpiredIdempotencyRecords(db: { query: DatabaseTransactionConnection['query'] }): Promise<number> {
  const result = await db.query(sql.type(emptyRow)`DELETE FROM idempotency_records WHERE expires_at <= now()`);
  return result.rowCount;
}
