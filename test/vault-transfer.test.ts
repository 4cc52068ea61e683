// Vault import and export (domain/notes/vault-transfer.ts) against a real database and real folders:
// the byte-exact round trip, idempotent re-runs, refusals with their codes and nothing partial,
// provenance events, the same derived columns as an API write, and tenancy.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { addMember, createWorkspace } from '../domain/identity/workspaces.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { queryGraphRelations } from '../domain/notes/graph.ts';
import { applyImportBatch, applyWrite } from '../domain/notes/knowledge.ts';
import { listNoteFiles } from '../domain/notes/store.ts';
import type { Provenance } from '../domain/notes/store.ts';
import { exportVault, importVault, TransferError } from '../domain/notes/vault-transfer.ts';
import type { ImportReport } from '../domain/notes/vault-transfer.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

let db: TestDatabase;
let scratch: string;
let accountId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'hnp-vault-transfer-'));
  accountId = (await accountWithToken(db.pool, 'team')).account.id;
});
afterAll(async () => {
  await db?.drop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

type Files = Record<string, string | Buffer>;

async function makeFolder(files: Files): Promise<string> {
  const root = join(scratch, randomUUID());
  await mkdir(root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

/** Every regular file under `root`, relative, with its bytes. */
async function readTree(root: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    out.set(full.slice(root.length + 1), await readFile(full));
  }
  return out;
}

const count = (table: 'notes' | 'note_events', vaultId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE vault_id = ${vaultId}`);

const eventSchema = z.object({
  type: z.string(),
  path: z.string(),
  source: z.string(),
  actorType: z.string(),
  actorId: z.uuid().nullable(),
  requestId: z.string().nullable(),
  transactionId: z.uuid().nullable(),
  beforeRevision: z.string().nullable(),
  afterRevision: z.string().nullable(),
  seq: z.number(),
});
const eventsOf = (vaultId: string) =>
  db.pool.any(sql.type(eventSchema)`
    SELECT type, path, source, actor_type AS "actorType", actor_id AS "actorId", request_id AS "requestId", transaction_id AS "transactionId",
           before_revision AS "beforeRevision", after_revision AS "afterRevision", vault_seq AS seq
      FROM note_events WHERE vault_id = ${vaultId} ORDER BY vault_seq`);

async function refusal(work: Promise<unknown>): Promise<TransferError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TransferError);
  return error as TransferError;
}

const vaultFiles: Files = {
  'Inbox/Welcome.md': '---\ntitle: Welcome home\ntags: [start, import]\ncreated: 2024-01-05\n---\n# Ignored heading\n\nSee [[Plan]], [[Projects/2026/Plan#Goals|the goals]] and ![[diagram.png]].\n',
  'Projects/2026/Plan.md': '# Plan\n\n## Goals\n\nShip the zygomorphic importer. Back to [[Welcome]].\n',
  'Ünïcode/Ärger — 東京 📝.md': '# Überschrift\n\nKanji 東京 and emoji 📝 in a path; links to [[Plan]].\n',
  'Empty.md': '',
  'Windows/CRLF.md': '---\r\nkind: crlf\r\n---\r\n# Carriage returns\r\n\r\nLine one\r\nLine two\r\n',
  'BOM.md': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Starts with a byte order mark\n')]),
  'Deep/a/b/c/d/Leaf.md': 'No trailing newline, no heading',
  // not notes
  '.obsidian/app.json': '{"legacyEditor":false}',
  '.trash/Deleted.md': '# in the trash\n',
  'attachments/diagram.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  'Board.canvas': '{"nodes":[],"edges":[]}',
};
const noteFiles = Object.keys(vaultFiles).filter((p) => p.endsWith('.md') && !p.startsWith('.'));

describe('vault import and export', () => {
  let folder: string;
  let target: { vaultId: string; mappingId: string };
  let first: ImportReport;

  beforeAll(async () => {
    folder = await makeFolder(vaultFiles);
    await symlink(join(folder, 'Projects/2026/Plan.md'), join(folder, 'Linked plan.md'));
    target = await personalMapping(db.pool, accountId);
    first = await importVault(db.pool, { folder, mappingId: target.mappingId, accountId, batchSize: 3 });
  });

  it('imports every note, reports what it skipped and why, and writes one ops event per note', async () => {
    expect(first.notes).toEqual({ found: noteFiles.length, created: noteFiles.length, replaced: 0, unchanged: 0, kept: 0, invalid: 0 });
    expect(first.batches).toBe(Math.ceil(noteFiles.length / 3));
    expect(first.skipped).toEqual([
      { path: '.obsidian', code: 'hidden', message: expect.any(String) },
      { path: '.trash', code: 'hidden', message: expect.any(String) },
      { path: 'Board.canvas', code: 'not_markdown', message: expect.any(String) },
      { path: 'Linked plan.md', code: 'symlink', message: expect.any(String) },
      { path: 'attachments/diagram.png', code: 'not_markdown', message: expect.any(String) },
    ]);
    expect(await count('notes', target.vaultId)).toBe(noteFiles.length);

    const events = await eventsOf(target.vaultId);
    expect(events).toHaveLength(noteFiles.length);
    expect(events.map((e) => e.seq)).toEqual(noteFiles.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.path))).toEqual(new Set(noteFiles));
    for (const event of events) {
      expect(event).toMatchObject({ type: 'note.created', source: 'ops', actorType: 'account', actorId: accountId, requestId: first.requestId, beforeRevision: null });
      expect(event.transactionId).not.toBeNull();
    }
    // One transaction id per batch, like an API transaction's.
    expect(new Set(events.map((e) => e.transactionId)).size).toBe(first.batches);
    expect(first.events).toBe(noteFiles.length);
  });

  it('answers with no index entry pending: each batch merges its GIN entries after its commit, the last before the import answers', async () => {
    // gin_clean_pending_list says how many pending-list pages it merged: none are left to merge.
    const left = await db.pool.anyFirst(sql.type(z.object({ pages: z.number() }))`
      SELECT gin_clean_pending_list(i.indexrelid)::int AS pages FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
       WHERE i.indrelid = 'notes'::regclass AND am.amname = 'gin'`);
    console.error('LEFT', left);
    expect(left.length).toBeGreaterThan(0);
    expect(left).toEqual(left.map(() => 0));
    // And the entries are in the index: a word of the last batch is found.
    expect(first.batches).toBeGreaterThan(2);
    expect((await searchNotes(db.pool, target.vaultId, { query: 'Überschrift' })).results.map((r) => r.path)).toEqual(['Ünïcode/Ärger — 東京 📝.md']);
  });

  it('exports the exact bytes of every note, file by file', async () => {
    const out = join(scratch, randomUUID(), 'export');
    const report = await exportVault(db.pool, { folder: out, mappingId: target.mappingId, accountId });
    const source = await readTree(folder);
    const exported = await readTree(out);
    expect([...exported.keys()].sort()).toEqual([...noteFiles].sort());
    for (const path of noteFiles) expect(exported.get(path)!.equals(source.get(path)!), path).toBe(true);
    expect(report).toMatchObject({ notes: noteFiles.length, bytes: [...exported.values()].reduce((sum, b) => sum + b.length, 0) });
  });

  it('maintains search, frontmatter and the link graph as the write happens', async () => {
    const found = await searchNotes(db.pool, target.vaultId, { query: 'zygomorphic' });
    expect(found.results.map((r) => r.path)).toEqual(['Projects/2026/Plan.md']);
    const graph = await queryGraphRelations(db.pool, target.vaultId, 'Inbox/Welcome.md');
    expect(graph.outgoing.map((o) => [o.target, o.status, o.path])).toEqual([
      ['Plan', 'resolved', 'Projects/2026/Plan.md'],
      ['Projects/2026/Plan', 'resolved', 'Projects/2026/Plan.md'],
      ['diagram.png', 'unresolved', null],
    ]);
    expect(graph.incoming.map((i) => i.sourcePath)).toEqual(['Projects/2026/Plan.md']);
    const plan = await queryGraphRelations(db.pool, target.vaultId, 'Projects/2026/Plan.md');
    expect(plan.incoming.map((i) => i.sourcePath)).toEqual(['Inbox/Welcome.md', 'Inbox/Welcome.md', 'Ünïcode/Ärger — 東京 📝.md']);
  });

  it('stores every derived column exactly as an API write of the same content does', async () => {
    const api = await personalMapping(db.pool, accountId);
    const provenance: Provenance = { actor: { type: 'account', id: accountId }, source: 'rest', requestId: null, idempotencyKey: null };
    for (const path of noteFiles) {
      const content = new TextDecoder('utf-8', { ignoreBOM: true }).decode(Buffer.from(vaultFiles[path]!));
      await applyWrite(db.pool, api, { path, content }, provenance, { accountId, route: 'test', scope: api.mappingId, key: randomUUID(), fingerprint: path });
    }
    const columns = (vaultId: string) =>
      db.pool.any(sql.type(z.object({ row: z.string() }))`
        SELECT json_build_array(path, path_key, basename_key, title, content, revision, size_bytes, frontmatter, links, link_keys, search::text)::text AS row
          FROM notes WHERE vault_id = ${vaultId} ORDER BY path`);
    const imported = await columns(target.vaultId);
    expect(imported).toHaveLength(noteFiles.length);
    expect(imported).toEqual(await columns(api.vaultId));
    // A note without frontmatter stores SQL NULL, not a JSON null.
    const nulls = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM notes WHERE vault_id = ${target.vaultId} AND frontmatter IS NULL`);
    expect(nulls).toBe(noteFiles.length - 2);
  });

  it('is idempotent: importing the same folder again writes no note and no event', async () => {
    const again = await importVault(db.pool, { folder, mappingId: target.mappingId, accountId });
    expect(again.notes).toMatchObject({ created: 0, replaced: 0, unchanged: noteFiles.length });
    expect(again.events).toBe(0);
    expect(again.batches).toBe(0);
    expect(await count('notes', target.vaultId)).toBe(noteFiles.length);
    expect(await count('note_events', target.vaultId)).toBe(noteFiles.length);
  });

  it('refuses other content at a stored path unless told to skip or replace it', async () => {
    const changed = await makeFolder({ 'Projects/2026/Plan.md': '# Plan, edited on disk\n', 'New.md': '# New\n', 'Empty.md': '' });
    const before = await count('note_events', target.vaultId);
    const refused = await refusal(importVault(db.pool, { folder: changed, mappingId: target.mappingId, accountId }));
    expect(refused.code).toBe('note_exists');
    expect(refused.details['problems']).toEqual([{ path: 'Projects/2026/Plan.md', code: 'note_exists', message: expect.any(String) }]);
    // Nothing at all was written, not even the new note.
    expect(await count('note_events', target.vaultId)).toBe(before);
    expect(await count('notes', target.vaultId)).toBe(noteFiles.length);

    const dry = await importVault(db.pool, { folder: changed, mappingId: target.mappingId, accountId, existing: 'replace', dryRun: true });
    expect(dry.notes).toMatchObject({ created: 1, replaced: 1, unchanged: 1 });
    expect(await count('note_events', target.vaultId)).toBe(before);

    const skipped = await importVault(db.pool, { folder: changed, mappingId: target.mappingId, accountId, existing: 'skip' });
    expect(skipped.notes).toMatchObject({ created: 1, replaced: 0, unchanged: 1, kept: 1 });

    const replaced = await importVault(db.pool, { folder: changed, mappingId: target.mappingId, accountId, existing: 'replace' });
    expect(replaced.notes).toMatchObject({ created: 0, replaced: 1, unchanged: 2 });
    const events = await eventsOf(target.vaultId);
    expect(events.slice(before)).toEqual([
      expect.objectContaining({ type: 'note.created', path: 'New.md', requestId: skipped.requestId }),
      expect.objectContaining({ type: 'note.replaced', path: 'Projects/2026/Plan.md', requestId: replaced.requestId, beforeRevision: expect.stringMatching(/^sha256:/) }),
    ]);
  });
});

describe('refusals', () => {
  const badFiles: Files = {
    'Good.md': '# Good\n',
    'Also good/Fine.md': '# Fine\n',
    'bad:colon.md': '# colon\n',
    'CON.md': '# reserved device name\n',
    'Trailing dot./Note.md': '# folder ends with a dot\n',
    'Huge.md': Buffer.alloc(1_048_577, 0x61),
    'Latin1.md': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    'Zero byte.md': 'a\u0000b',
    'Twin.md': '# one\n',
    'twin.md': '# other\n',
    'Upper.MD': '# extension in capitals\n',
  };
  const expected = [
    { path: 'CON.md', code: 'invalid_path' },
    { path: 'Huge.md', code: 'note_too_large' },
    { path: 'Latin1.md', code: 'invalid_utf8' },
    { path: 'Trailing dot./Note.md', code: 'invalid_path' },
    { path: 'Upper.MD', code: 'invalid_path' },
    { path: 'Zero byte.md', code: 'invalid_character' },
    { path: 'bad:colon.md', code: 'invalid_path' },
    { path: 'twin.md', code: 'duplicate_path' },
  ];

  it('names every file that cannot be imported with its code, and writes nothing', async () => {
    const folder = await makeFolder(badFiles);
    const target = await personalMapping(db.pool, accountId);
    const refused = await refusal(importVault(db.pool, { folder, mappingId: target.mappingId, accountId }));
    expect(refused.code).toBe('invalid_path');
    expect((refused.details['problems'] as Array<{ path: string; code: string }>).map(({ path, code }) => ({ path, code }))).toEqual(expected);
    expect(await count('notes', target.vaultId)).toBe(0);
    expect(await count('note_events', target.vaultId)).toBe(0);
  });

  it('imports the valid notes and lists the others with --skip-invalid', async () => {
    const folder = await makeFolder(badFiles);
    const target = await personalMapping(db.pool, accountId);
    const report = await importVault(db.pool, { folder, mappingId: target.mappingId, accountId, skipInvalid: true });
    expect(report.invalid.map(({ path, code }) => ({ path, code }))).toEqual(expected);
    expect(report.notes).toMatchObject({ found: 11, created: 3, invalid: expected.length });
    const paths = await db.pool.anyFirst(sql.type(z.object({ path: z.string() }))`SELECT path FROM notes WHERE vault_id = ${target.vaultId} ORDER BY path`);
    expect(paths).toEqual(['Also good/Fine.md', 'Good.md', 'Twin.md']);
  });

  it('refuses a path that differs from a stored note only by case', async () => {
    const target = await personalMapping(db.pool, accountId);
    await importVault(db.pool, { folder: await makeFolder({ 'Journal/Today.md': '# today\n' }), mappingId: target.mappingId, accountId });
    const refused = await refusal(importVault(db.pool, { folder: await makeFolder({ 'journal/today.md': '# today\n' }), mappingId: target.mappingId, accountId }));
    expect(refused.code).toBe('path_case_conflict');
    expect(await count('notes', target.vaultId)).toBe(1);
  });

  it('a batch is the unit of atomicity: a refused note keeps every note of its batch out', async () => {
    const target = await personalMapping(db.pool, accountId);
    const provenance: Provenance = { actor: { type: 'account', id: accountId }, source: 'ops', requestId: 'test', idempotencyKey: null };
    await applyImportBatch(db.pool, target, [{ path: 'Taken.md', content: '# stored\n' }], provenance, 'refuse');
    const batch = [
      { path: 'One.md', content: '# one\n' },
      { path: 'Two.md', content: '# two\n' },
      { path: 'Taken.md', content: '# other content\n' },
    ];
    const error = await applyImportBatch(db.pool, target, batch, provenance, 'refuse').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'note_exists', extensions: { errors: [{ pointer: '/notes/2', path: 'Taken.md', code: 'note_exists' }] } });
    expect(await count('notes', target.vaultId)).toBe(1);
    expect(await count('note_events', target.vaultId)).toBe(1);

    const invalid = await applyImportBatch(db.pool, target, [batch[0]!, { path: '../escape.md', content: '' }], provenance, 'refuse').catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: 'invalid_path', extensions: { errors: [{ pointer: '/notes/1', code: 'invalid_path' }] } });
    expect(await count('notes', target.vaultId)).toBe(1);

    const applied = await applyImportBatch(db.pool, target, batch, provenance, 'replace');
    expect(applied.results.map((r) => r.operation)).toEqual(['create', 'create', 'replace']);
    expect(await count('note_events', target.vaultId)).toBe(4);
  });

  it('a file that changes after the check refuses its batch; committed batches stay and a re-run completes', async () => {
    const target = await personalMapping(db.pool, accountId);
    const folder = await makeFolder({ 'A.md': '# a\n', 'B.md': '# b\n', 'C.md': '# c\n', 'D.md': '# d\n' });
    // Between the check and the writing, D becomes Latin-1 on disk (written synchronously, so before
    // any batch re-reads its files; the second batch is read while the first is written).
    const refused = await refusal(
      importVault(db.pool, { folder, mappingId: target.mappingId, accountId, batchSize: 2 }, ({ phase, done }) => {
        if (phase === 'write' && done === 0) writeFileSync(join(folder, 'D.md'), Buffer.from([0x64, 0xe9]));
      }),
    );
    expect(refused.code).toBe('invalid_utf8');
    expect(refused.details).toMatchObject({ committedBatches: 1, committedNotes: 2 });
    const paths = () => db.pool.anyFirst(sql.type(z.object({ path: z.string() }))`SELECT path FROM notes WHERE vault_id = ${target.vaultId} ORDER BY path`);
    // A and B stay; C, in the refused batch with D, is not there.
    expect(await paths()).toEqual(['A.md', 'B.md']);
    await writeFile(join(folder, 'D.md'), '# d again\n');
    const again = await importVault(db.pool, { folder, mappingId: target.mappingId, accountId });
    expect(again.notes).toMatchObject({ created: 2, unchanged: 2 });
    expect(await paths()).toEqual(['A.md', 'B.md', 'C.md', 'D.md']);
  });

  it('refuses a missing folder, and an export into a folder that is not empty', async () => {
    const target = await personalMapping(db.pool, accountId);
    expect((await refusal(importVault(db.pool, { folder: join(scratch, 'nowhere'), mappingId: target.mappingId, accountId }))).code).toBe('folder_not_found');
    const full = await makeFolder({ 'keep.txt': 'mine' });
    expect((await refusal(exportVault(db.pool, { folder: full, mappingId: target.mappingId, accountId }))).code).toBe('folder_not_empty');
    expect(await readFile(join(full, 'keep.txt'), 'utf8')).toBe('mine');
  });
});

describe('export paging', () => {
  it('bounds a page by notes and by content bytes, always taking at least one note', async () => {
    const target = await personalMapping(db.pool, accountId);
    const sizes = { 'a.md': 10, 'b.md': 30, 'c.md': 5, 'd.md': 50, 'e.md': 1 };
    await importVault(db.pool, { folder: await makeFolder(Object.fromEntries(Object.entries(sizes).map(([p, n]) => [p, 'x'.repeat(n)]))), mappingId: target.mappingId, accountId });
    const pages: string[][] = [];
    for (let after: string | null = null; ; ) {
      const page = await listNoteFiles(db.pool, target.vaultId, { limit: 3, maxBytes: 40, after });
      if (page.length === 0) break;
      pages.push(page.map((n) => n.path));
      after = page.at(-1)!.path;
    }
    expect(pages).toEqual([['a.md', 'b.md'], ['c.md'], ['d.md'], ['e.md']]);
  });
});

describe('tenancy', () => {
  it("refuses another account's mapping, an unknown or revoked one, and a role without vault.write", async () => {
    const other = (await accountWithToken(db.pool, 'team')).account.id;
    const theirs = await personalMapping(db.pool, other);
    const folder = await makeFolder({ 'Note.md': '# mine\n' });
    const code = (work: Promise<unknown>) => work.then(() => 'ok', (e: unknown) => (e as AppError).code);

    expect(await code(importVault(db.pool, { folder, mappingId: theirs.mappingId, accountId }))).toBe('mapping_not_found');
    expect(await code(exportVault(db.pool, { folder: join(scratch, randomUUID()), mappingId: theirs.mappingId, accountId }))).toBe('mapping_not_found');
    expect(await code(importVault(db.pool, { folder, mappingId: randomUUID(), accountId }))).toBe('mapping_not_found');
    expect(await count('notes', theirs.vaultId)).toBe(0);

    const workspace = await createWorkspace(db.pool, { name: 'Shared', ownerAccountId: other });
    await addMember(db.pool, { workspaceId: workspace.id, accountId, role: 'viewer' });
    const vault = await createVault(db.pool, { name: 'Team vault', ownerWorkspaceId: workspace.id });
    const mapping = await createMapping(db.pool, { vaultId: vault.id });
    expect(await code(importVault(db.pool, { folder, mappingId: mapping.mappingId, accountId }))).toBe('permission_denied');
    // Reading is enough to export.
    expect(await code(exportVault(db.pool, { folder: join(scratch, randomUUID()), mappingId: mapping.mappingId, accountId }))).toBe('ok');
  });
});
