// The pool parses every row with its query's schema (db/pool.ts): a mismatch fails loudly, names
// the column, and never carries the row's values (notes, hashes) into logs; overwrites run. A schema
// made by rowsAsDeclared is a type-only cast, and the hot read that uses one answers what a parse would.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ResultShapeError, rowsAsDeclared } from '../db/pool.ts';
import { isoTimestamp } from '../db/row-schemas.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { readNoteAsCaller } from '../domain/notes/read-as-caller.ts';
import { findNote, noteRowSchema } from '../domain/notes/store.ts';
import { AdmissionCache } from '../domain/principals/admission-cache.ts';
import type { TokenAdmission } from '../domain/principals/admission-cache.ts';
import { useAllowanceLeases, useTestDatabase } from './support/harness.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

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

it('takes the rows of a schema made by rowsAsDeclared as they arrive, and still parses the schema it was made from', async () => {
  const schema = z.object({ at: isoTimestamp });
  const declared = rowsAsDeclared(schema);
  const query = (s: typeof schema) => sql.type(s)`SELECT '2026-11-23 01:02:03.456789+00'::timestamptz::text AS at`;
  // Not parsed: the overwrite does not run (the pool's text is kept), and no mismatch is refused.
  expect((await db.pool.one(query(declared))).at).toBe('2026-11-23 01:02:03.456789+00');
  expect(await db.pool.one(sql.type(rowsAsDeclared(z.object({ n: z.string() })))`SELECT 1 AS n`)).toEqual({ n: 1 });
  // The schema it copied is parsed as before.
  expect((await db.pool.one(query(schema))).at).toBe('2026-11-23T01:02:03.456Z');
  await expect(db.pool.one(sql.type(z.object({ n: z.string() }))`SELECT 1 AS n`)).rejects.toBeInstanceOf(ResultShapeError);
});

describe('the hot read, whose kept statement is not parsed (domain/notes/read-as-caller.ts)', () => {
  const allowance = useAllowanceLeases(db);

  it('answers, through the whole admission and the kept one, the note findNote parses, byte for byte', async () => {
    const caller = await accountWithToken(db.pool, 'team');
    const target = await personalMapping(db.pool, caller.account.id);
    const content = '---\ntags: [a, b]\ntitle: Front\n---\n# Heading\n\nSee [[Other#Part|alias]] and ![[image.png]] and [link](Third.md).\n';
    const key = randomUUID();
    await applyTransaction(db.pool, target, [{ type: 'write-note', path: 'Notes/Read.md', content }], { actor: { type: 'account', id: caller.account.id }, source: 'ops', requestId: null, idempotencyKey: null }, {
      accountId: caller.account.id,
      route: 'test:db-result-parser',
      scope: target.mappingId,
      key,
      fingerprint: key,
    });
    // A timestamp with all six fractional digits, the case where truncation and rounding differ.
    await db.pool.query(sql.type(z.object({}))`UPDATE notes SET updated_at = '2026-11-23 01:02:03.999999+00' WHERE vault_id = ${target.vaultId}`);
    const cache = new AdmissionCache<TokenAdmission>();
    const read = () => readNoteAsCaller(db.pool, { rawToken: caller.token, iface: 'rest', leases: allowance.leases, admissions: cache, mappingId: target.mappingId, path: 'Notes/Read.md' });
    const whole = await read();
    const kept = await read();
    expect(cache.counts.hit).toBe(1);
    const parsed = await findNote(db.pool, target.vaultId, 'Notes/Read.md');
    expect(parsed?.updatedAt).toBe('2026-11-23T01:02:03.999Z');
    expect(parsed?.links.length).toBeGreaterThan(1);
    expect(parsed?.frontmatter).toEqual({ tags: ['a', 'b'], title: 'Front' });
    for (const answer of [whole, kept]) {
      expect(answer.note).toEqual(parsed);
      expect(noteRowSchema.parse(answer.note)).toEqual(answer.note);
    }
    const missing = await readNoteAsCaller(db.pool, { rawToken: caller.token, iface: 'rest', leases: allowance.leases, admissions: cache, mappingId: target.mappingId, path: 'Notes/None.md' });
    expect(missing.note).toBeNull();
  });
});
