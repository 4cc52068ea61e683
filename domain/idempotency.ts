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

const recordSchema = z.object({ i: z.number(), fingerprint: z.string(), status: z.number(), body: z.unknown(), etag: z.string().nullable() });

/** What claiming a key found: the work is this transaction's to do, a response to replay, or a refusal. */
export type KeyClaim = { kind: 'claimed' } | { kind: 'replay'; stored: StoredResponse } | { kind: 'refused'; error: AppError };

const inFlight = () => new AppError('idempotency_in_flight', undefined, { headers: { 'retry-after': '1' } });

/**
 * Claims the key for this transaction. Returns a stored response to replay, or null when the
 * caller should do the work and then call `storeIdempotentResponse` in the same transaction.
 */
export async function claimIdempotencyKey(tx: DatabaseTransactionConnection, id: IdempotencyScope): Promise<StoredResponse | null> {
  const [claim] = await claimIdempotencyKeys(tx, [id]);
  if (claim!.kind === 'refused') throw claim!.error;
  return claim!.kind === 'replay' ? claim!.stored : null;
}

/**
 * claimIdempotencyKey for several keys (a group commit's writes) in two statements, whatever their
 * number: the locks first, then the records, so the look-up's snapshot is taken after the locks are
 * held (one statement would read with a snapshot from before them). A key repeated in `ids` is in
 * flight for its later occurrences, as a concurrent request with it would be.
 */
export async function claimIdempotencyKeys(tx: DatabaseTransactionConnection, ids: readonly IdempotencyScope[]): Promise<KeyClaim[]> {
  const lockKeys = ids.map((id) => JSON.stringify([id.accountId, id.route, id.scope, id.key]));
  const firstOf = new Map<string, number>();
  lockKeys.forEach((k, i) => firstOf.has(k) || firstOf.set(k, i));
  const unique = [...firstOf.keys()];
  const locked = await tx.any(sql.type(z.object({ i: z.number(), locked: z.boolean() }))`
    SELECT (k.i - 1)::int AS i, pg_try_advisory_xact_lock(hashtextextended(k.lock, 0)) AS locked
      FROM unnest(${sql.array(unique, 'text')}::text[]) WITH ORDINALITY AS k(lock, i)`);
  const held = new Set(locked.filter((l) => l.locked).map((l) => firstOf.get(unique[l.i]!)!));
  const wanted = [...held].map((i) => ({ i, account_id: ids[i]!.accountId, route: ids[i]!.route, scope: ids[i]!.scope, key: ids[i]!.key }));
  const records = wanted.length === 0 ? [] : await tx.any(sql.type(recordSchema)`
    SELECT w.i, r.fingerprint, r.response_status AS status, r.response_body AS body, r.response_etag AS etag
      FROM jsonb_to_recordset(${sql.jsonb(wanted as never)}) AS w(i integer, account_id uuid, route text, scope text, key text)
      JOIN idempotency_records r ON r.account_id = w.account_id AND r.route = w.route AND r.scope = w.scope AND r.key = w.key
     WHERE r.expires_at > now()`);
  const recordOf = new Map(records.map((r) => [r.i, r]));
  return ids.map((id, i): KeyClaim => {
    if (!held.has(i)) return { kind: 'refused', error: inFlight() };
    const record = recordOf.get(i);
    if (!record) return { kind: 'claimed' };
    if (record.fingerprint !== id.fingerprint) return { kind: 'refused', error: new AppError('idempotency_key_reused') };
    return { kind: 'replay', stored: { status: record.status, body: record.body, etag: record.etag } };
  });
}

export async function storeIdempotentResponse(tx: DatabaseTransactionConnection, id: IdempotencyScope, response: StoredResponse): Promise<void> {
  await storeIdempotentResponses(tx, [{ id, response }]);
}

/** Stores several keys' responses in one statement (their keys are distinct: claimIdempotencyKeys held each once). */
export async function storeIdempotentResponses(tx: DatabaseTransactionConnection, entries: ReadonlyArray<{ id: IdempotencyScope; response: StoredResponse }>): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map(({ id, response }) => ({
    account_id: id.accountId,
    route: id.route,
    scope: id.scope,
    key: id.key,
    fingerprint: id.fingerprint,
    status: response.status,
    body: response.body,
    etag: response.etag,
  }));
  await tx.query(sql.type(emptyRow)`
    INSERT INTO idempotency_records (account_id, route, scope, key, fingerprint, response_status, response_body, response_etag, expires_at)
    SELECT r.account_id, r.route, r.scope, r.key, r.fingerprint, r.status, r.body, r.etag, now() + make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})
      FROM jsonb_to_recordset(${sql.jsonb(rows as never)}) AS r(account_id uuid, route text, scope text, key text, fingerprint text, status integer, body jsonb, etag text)
    ON CONFLICT (account_id, route, scope, key) DO UPDATE
      SET fingerprint = excluded.fingerprint, response_status = excluded.response_status, response_body = excluded.response_body,
          response_etag = excluded.response_etag, created_at = now(), expires_at = excluded.expires_at`);
}

/** Deletes expired records; returns how many. Run periodically by the worker. */
export async function purgeExpiredIdempotencyRecords(db: { query: DatabaseTransactionConnection['query'] }): Promise<number> {
  const result = await db.query(sql.type(emptyRow)`DELETE FROM idempotency_records WHERE expires_at <= now()`);
  return result.rowCount;
}
