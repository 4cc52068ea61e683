// POST /api/dev/transactions: validated before applying, all or nothing, errors point at the action.
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { revisionOf } from '../domain/notes/markdown.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import type { DevClient } from './support/dev-client.ts';
import { personalMapping } from './support/fixtures.ts';

let db: TestDatabase;
let api: DevClient;
let accountId: string;

const caller = useCaller({ plan: 'developer_agent', mapping: false });
beforeAll(() => ({ db, api, accountId } = caller));

const write = (i: number, content: string, expectedHash?: string) => ({ type: 'write-note', path: `Batch/N${String(i).padStart(3, '0')}.md`, content, ...(expectedHash ? { expectedHash } : {}) });

describe('transactions', () => {
  it('previews by default, then applies 100 actions with one transactionId on every event', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const actions = Array.from({ length: 100 }, (_, i) => write(i, `v1 ${i}`));
    const preview = await api.transaction({ mappingId, actions });
    expect(preview.data).toMatchObject({ applied: false, transactionId: null });
    expect(preview.data.results).toHaveLength(100);
    expect(preview.data.results[3]).toMatchObject({ index: 3, operation: 'create', diff: expect.stringContaining('+v1 3') });

    expect((await api.transaction({ mappingId, dryRun: false, actions })).data.code).toBe('idempotency_key_required');
    const applied = await api.transaction({ mappingId, dryRun: false, actions }, 'batch-1');
    expect(applied.statusCode).toBe(200);
    expect(applied.data).toMatchObject({ applied: true, transactionId: expect.any(String) });
    const txIds = await db.pool.anyFirst(sql.type(z.object({ t: z.string().nullable() }))`SELECT DISTINCT transaction_id::text AS t FROM note_events WHERE vault_id = ${vaultId}`);
    expect(txIds).toEqual([applied.data.transactionId]);

    const replay = await api.transaction({ mappingId, dryRun: false, actions }, 'batch-1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data).toEqual(applied.data);
  });

  it('writes nothing at all when action 57 is stale, and points at it', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const v1 = Array.from({ length: 100 }, (_, i) => write(i, `v1 ${i}`));
    await api.transaction({ mappingId, dryRun: false, actions: v1 }, 'seed');
    const before = await db.pool.any(sql.type(z.object({ path: z.string(), revision: z.string() }))`SELECT path, revision FROM notes WHERE vault_id = ${vaultId} ORDER BY path`);
    const eventsBefore = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM note_events WHERE vault_id = ${vaultId}`);

    const v2 = Array.from({ length: 100 }, (_, i) => write(i, `v2 ${i}`, i === 57 ? revisionOf('something older') : revisionOf(`v1 ${i}`)));
    const res = await api.transaction({ mappingId, dryRun: false, actions: v2 }, 'stale-57');
    expect(res.statusCode).toBe(409);
    expect(res.data).toMatchObject({ code: 'revision_conflict', errors: [{ pointer: '/actions/57/expectedHash', code: 'revision_conflict', currentRevision: revisionOf('v1 57') }] });
    const after = await db.pool.any(sql.type(z.object({ path: z.string(), revision: z.string() }))`SELECT path, revision FROM notes WHERE vault_id = ${vaultId} ORDER BY path`);
    expect(after).toEqual(before);
    expect(await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM note_events WHERE vault_id = ${vaultId}`)).toBe(eventsBefore);
    // The preview reports the same failure.
    expect((await api.transaction({ mappingId, actions: v2 })).data.errors[0].pointer).toBe('/actions/57/expectedHash');
  });

  it('lists every failing action, and needs expectedHash for replaced notes', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await api.transaction({ mappingId, dryRun: false, actions: [write(1, 'a'), write(2, 'b')] }, 'two');
    const res = await api.transaction({ mappingId, dryRun: false, actions: [write(1, 'a2'), write(2, 'b2', revisionOf('x')), write(3, 'c')] }, 'mixed');
    expect(res.statusCode).toBe(428);
    expect(res.data.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/actions/0/expectedHash', '/actions/1/expectedHash']);
  });

  it.each([
    ['no actions', { actions: [] }, 400, 'invalid_request', '/actions'],
    ['101 actions', { actions: Array.from({ length: 101 }, (_, i) => write(i, 'x')) }, 413, 'transaction_too_large', '/actions'],
    ['a bad path in action 4', { actions: [0, 1, 2, 3, 4].map((i) => (i === 4 ? { type: 'write-note', path: 'Batch/../x.md', content: 'x' } : write(i, 'x'))) }, 400, 'invalid_path', '/actions/4/path'],
    ['the same path twice', { actions: [write(1, 'x'), write(1, 'y')] }, 400, 'duplicate_path', '/actions/1/path'],
    ['paths differing only by case', { actions: [{ type: 'write-note', path: 'Batch/Case.md', content: 'x' }, { type: 'write-note', path: 'batch/case.md', content: 'y' }] }, 400, 'duplicate_path', '/actions/1/path'],
    ['a malformed expectedHash', { actions: [write(1, 'x', 'md5:abc')] }, 400, 'invalid_revision', '/actions/0/expectedHash'],
    ['an unknown action type', { actions: [{ type: 'delete-note', path: 'Batch/A.md', content: '' }] }, 400, 'invalid_request', '/body/actions/0/type'],
    ['an unknown field', { actions: [{ ...write(1, 'x'), mode: 'append' }] }, 400, 'invalid_request', '/body/actions/0/mode'],
    ['an oversized note in action 2', { actions: [write(0, 'x'), write(1, 'y'), write(2, 'z'.repeat(1_048_577))] }, 413, 'note_too_large', '/actions/2/content'],
  ])('refuses %s before touching the database', async (_label, body, status, code, pointer) => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    const res = await api.transaction({ mappingId, dryRun: false, ...body }, `bad-${code}`);
    expect(res.statusCode).toBe(status);
    expect(res.data.code).toBe(code);
    expect((res.data.errors as Array<{ pointer: string }>)[0]!.pointer).toBe(pointer);
  });

  it('refuses more than 8 MiB of content in one transaction', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    const big = 'b'.repeat(1_000_000);
    const res = await api.transaction({ mappingId, actions: Array.from({ length: 9 }, (_, i) => write(i, big)) });
    expect(res.statusCode).toBe(413);
    expect(res.data.code).toBe('transaction_too_large');
  });
});
