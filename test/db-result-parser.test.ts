// The pool parses every row with its query's schema (db/pool.ts): a mismatch fails loudly, names
// the column, and never carries the row's values (notes, hashes) into logs; overwrites run.
import { sql } from 'slonik';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { ResultShapeError } from '../db/pool.ts';
import { isoTimestamp } from '../db/row-schemas.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

it('refuses a row that does not match its schema, naming the column but not the value', async () => {
  const error = await db.pool.one(sql.type(z.object({ secret: z.number() }))`SELECT ${'hnp_pat_not-for-logs'}::text AS secret`).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ResultShapeError);
  expect((error as Error).message).toContain('secret:');
  expect((error as Error).message).not.toContain('hnp_pat_not-for-logs');
  expect(JSON.stringify(error)).not.toContain('hnp_pat_not-for-logs');
});

it('runs the schema on JSON built in SQL, so timestamps there print like column timestamps', async () => {
  const row = await db.pool.one(sql.type(z.object({ column: isoTimestamp, built: z.object({ at: isoTimestamp }) }))`
    SELECT t AS column, json_build_object('at', t) AS built FROM (SELECT '2026-11-23 01:02:03.456789+00'::timestamptz AS t) s`);
  expect(row.column).toBe('2026-11-23T01:02:03.456Z');
  expect(row.built.at).toBe(row.column);
});
