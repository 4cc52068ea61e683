// Developer REST API: reads, previews, applies, conditional requests, delete → trash → restore.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inventoryResponse } from '../api/routes/dev/schemas.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import { listNoteSummaries } from '../domain/notes/store.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

let db: TestDatabase;
let api: DevClient;
let mappingId: string;
let accountId: string;

const caller = useCaller({ plan: 'developer_agent' });
beforeAll(() => ({ db, api, mappingId, accountId } = caller));

const noteCount = () => db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM notes`);
const eventCount = () => db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM note_events`);

describe('write: preview by default', () => {
  it('previews a create with a diff and writes nothing', async () => {
    const before = await noteCount();
    const res = await api.preview({ mappingId, path: 'Inbox/First.md', content: '# First\n\nHello.\n' });
    expect(res.statusCode).toBe(200);
    expect(res.data).toMatchObject({
      applied: false,
      dryRun: true,
      operation: 'create',
      path: 'Inbox/First.md',
      title: 'First',
      beforeRevision: null,
      afterRevision: revisionOf('# First\n\nHello.\n'),
      revisionRequired: false,
    });
    expect(res.data.diff).toContain('+++ b/Inbox/First.md');
    expect(res.data.diff).toContain('+Hello.');
    expect(await noteCount()).toBe(before);
  });

  it('previews without an Idempotency-Key, and with the mapping in X-Service-Mapping', async () => {
    const res = await api.preview({ path: 'Inbox/Header.md', content: 'x' }, { 'x-service-mapping': mappingId });
    expect(res.statusCode).toBe(200);
    expect(res.data.mappingId).toBe(mappingId);
  });

  it('refuses a body mappingId that disagrees with X-Service-Mapping, and a missing mapping', async () => {
    const other = '00000000-0000-4000-8000-000000000001';
    expect((await api.preview({ mappingId, path: 'Inbox/A.md', content: 'x' }, { 'x-service-mapping': other })).data.code).toBe('mapping_mismatch');
    expect((await api.preview({ path: 'Inbox/A.md', content: 'x' })).data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/body/mappingId' }] });
  });
});

describe('write: apply', () => {
  it('needs an Idempotency-Key', async () => {
    const res = await api.request('POST', '/api/dev/notes', { body: { mappingId, path: 'Inbox/Key.md', content: 'x', dryRun: false } });
    expect(res.statusCode).toBe(400);
    expect(res.data.code).toBe('idempotency_key_required');
    const bad = await api.apply({ mappingId, path: 'Inbox/Key.md', content: 'x' }, {}, 'has space');
    expect(bad.data.code).toBe('invalid_idempotency_key');
  });

  it('creates (201, ETag, event), then replaces only with the current revision', async () => {
    const created = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v1' });
    expect(created.statusCode).toBe(201);
    expect(created.data).toMatchObject({ applied: true, operation: 'create', afterRevision: revisionOf('v1'), eventId: expect.any(String) });
    expect(created.headers['etag']).toBe(`"${revisionOf('v1')}"`);

    const noRevision = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v2' });
    expect(noRevision.statusCode).toBe(428);
    expect(noRevision.data).toMatchObject({ code: 'revision_required', currentRevision: revisionOf('v1') });

    const stale = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v2', expectedHash: revisionOf('v0') });
    expect(stale.statusCode).toBe(409);
    expect(stale.data).toMatchObject({ code: 'revision_conflict', currentRevision: revisionOf('v1') });

    const replaced = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v2', expectedHash: `"${revisionOf('v1')}"` });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.data).toMatchObject({ operation: 'replace', beforeRevision: revisionOf('v1'), afterRevision: revisionOf('v2') });

    const viaIfMatch = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v3' }, { 'if-match': `"${revisionOf('v2')}"` });
    expect(viaIfMatch.statusCode).toBe(200);
    const failedIfMatch = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v4' }, { 'if-match': `"${revisionOf('v2')}"` });
    expect(failedIfMatch.statusCode).toBe(412);
    expect(failedIfMatch.data.code).toBe('precondition_failed');

    const disagree = await api.apply({ mappingId, path: 'Projects/Plan.md', content: 'v4', expectedHash: revisionOf('v3') }, { 'if-match': revisionOf('v2') });
    expect(disagree.statusCode).toBe(400);
  });

  it('treats identical content as a no-op: no write, no event', async () => {
    await api.apply({ mappingId, path: 'Projects/Same.md', content: 'same' });
    const events = await eventCount();
    const noop = await api.apply({ mappingId, path: 'Projects/Same.md', content: 'same', expectedHash: revisionOf('same') });
    expect(noop.statusCode).toBe(200);
    expect(noop.data).toMatchObject({ operation: 'noop', eventId: null });
    expect(await eventCount()).toBe(events);
  });

  it('makes a write create-only with If-None-Match: *', async () => {
    expect((await api.apply({ mappingId, path: 'Projects/Once.md', content: 'a' }, { 'if-none-match': '*' })).statusCode).toBe(201);
    const again = await api.apply({ mappingId, path: 'Projects/Once.md', content: 'b' }, { 'if-none-match': '*' });
    expect(again.statusCode).toBe(412);
    expect(again.data.code).toBe('precondition_failed');
    expect((await api.apply({ mappingId, path: 'Projects/Once.md', content: 'b' }, { 'if-none-match': '"x"' })).statusCode).toBe(400);
  });

  it('treats If-Match: * as "a note must exist": replaces whatever is current, 412 when there is none', async () => {
    const missing = await api.apply({ mappingId, path: 'Star/Missing.md', content: 'x' }, { 'if-match': '*' });
    expect(missing.statusCode).toBe(412);
    expect(missing.data).toMatchObject({ code: 'precondition_failed', currentRevision: null, detail: 'If-Match: * — no note exists at this path.' });
    expect((await api.preview({ mappingId, path: 'Star/Missing.md', content: 'x' }, { 'if-match': '*' })).statusCode).toBe(412);
    expect((await api.inventory(mappingId)).data.notes.some((n: { path: string }) => n.path === 'Star/Missing.md')).toBe(false);

    await api.apply({ mappingId, path: 'Star/Any.md', content: 'one' });
    const preview = await api.preview({ mappingId, path: 'Star/Any.md', content: 'two' }, { 'if-match': '*' });
    expect(preview.data).toMatchObject({ operation: 'replace', revisionRequired: false, beforeRevision: revisionOf('one') });
    // No revision needed: * stands for whatever is current (and satisfies "replacing needs a revision").
    const replaced = await api.apply({ mappingId, path: 'Star/Any.md', content: 'two' }, { 'if-match': ' * ' }, 'star-replace');
    expect(replaced.statusCode).toBe(200);
    expect(replaced.data).toMatchObject({ operation: 'replace', beforeRevision: revisionOf('one'), afterRevision: revisionOf('two') });
    // The same key replays, although the note's revision (what * stood for) has changed since.
    const replay = await api.apply({ mappingId, path: 'Star/Any.md', content: 'two' }, { 'if-match': '*' }, 'star-replace');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // expectedHash still counts beside it: a stale one is 409.
    const stale = await api.apply({ mappingId, path: 'Star/Any.md', content: 'three', expectedHash: revisionOf('one') }, { 'if-match': '*' });
    expect(stale.data.code).toBe('revision_conflict');
    // If-None-Match: * with If-Match: * can never hold.
    expect((await api.apply({ mappingId, path: 'Star/Any.md', content: 'three' }, { 'if-match': '*', 'if-none-match': '*' })).statusCode).toBe(412);
    expect((await api.apply({ mappingId, path: 'Star/Any.md', content: 'three' }, { 'if-match': '"*"' })).data.code).toBe('invalid_revision');
    // Even once the note is gone, the key still replays its stored answer instead of a 412.
    await api.remove(mappingId, 'Star/Any.md', { dryRun: false, headers: { 'if-match': revisionOf('two'), 'idempotency-key': 'star-gone' } });
    const late = await api.apply({ mappingId, path: 'Star/Any.md', content: 'two' }, { 'if-match': '*' }, 'star-replace');
    expect(late.statusCode).toBe(200);
    expect(late.headers['idempotent-replayed']).toBe('true');
  });

  it('answers an applied create with the Location of the note (category/filename paths only)', async () => {
    const created = await api.apply({ mappingId, path: 'Located/Plan one.md', content: 'here' });
    expect(created.statusCode).toBe(201);
    expect(created.headers['location']).toBe(`/api/dev/notes/Located/Plan%20one.md?mappingId=${mappingId}`);
    const read = await api.request('GET', created.headers['location'] as string);
    expect(read.statusCode).toBe(200);
    expect(read.data.content).toBe('here');
    // No single-note URL reaches other depths, so no Location there; replaces are 200 without one.
    const deep = await api.apply({ mappingId, path: 'Located/Deeper/Plan.md', content: 'deep' });
    expect(deep.statusCode).toBe(201);
    expect(deep.headers['location']).toBeUndefined();
    const replaced = await api.apply({ mappingId, path: 'Located/Plan one.md', content: 'there', expectedHash: revisionOf('here') });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.headers['location']).toBeUndefined();
    expect((await api.preview({ mappingId, path: 'Located/Preview.md', content: 'p' })).headers['location']).toBeUndefined();
  });

  it('refuses a stale expectedHash in a preview too, and reports revisionRequired', async () => {
    await api.apply({ mappingId, path: 'Projects/Preview.md', content: 'one' });
    expect((await api.preview({ mappingId, path: 'Projects/Preview.md', content: 'two' })).data).toMatchObject({ operation: 'replace', revisionRequired: true });
    expect((await api.preview({ mappingId, path: 'Projects/Preview.md', content: 'two', expectedHash: revisionOf('zero') })).statusCode).toBe(409);
  });

  it('derives the title from frontmatter, then the first heading, then the file name', async () => {
    await api.apply({ mappingId, path: 'Titles/Fm.md', content: '---\ntitle: From Frontmatter\n---\n# Heading\n' });
    await api.apply({ mappingId, path: 'Titles/Heading.md', content: '```\n# not this\n```\n# The Heading\n' });
    await api.apply({ mappingId, path: 'Titles/File name.md', content: 'no heading here' });
    const titles = Object.fromEntries(((await api.inventory(mappingId)).data.notes as Array<{ path: string; title: string }>).map((n) => [n.path, n.title]));
    expect(titles['Titles/Fm.md']).toBe('From Frontmatter');
    expect(titles['Titles/Heading.md']).toBe('The Heading');
    expect(titles['Titles/File name.md']).toBe('File name');
  });
});

describe('read', () => {
  it('returns content, revision and ETag; Accept: text/markdown returns the raw Markdown; If-None-Match gives 304', async () => {
    const content = '---\ntags: [a, b]\n---\n# Read me\n\nSee [[Other note|other]] and ![[Pic.png]].\n';
    await api.apply({ mappingId, path: 'Reading/Read me.md', content });
    const json = await api.read(mappingId, 'Reading/Read me.md');
    expect(json.statusCode).toBe(200);
    expect(json.headers['etag']).toBe(`"${revisionOf(content)}"`);
    expect(json.data).toMatchObject({
      path: 'Reading/Read me.md',
      title: 'Read me',
      content,
      revision: revisionOf(content),
      size: Buffer.byteLength(content),
      frontmatter: { tags: ['a', 'b'] },
      links: [
        { kind: 'link', target: 'Other note', alias: 'other', heading: null, block: null },
        { kind: 'embed', target: 'Pic.png', alias: null, heading: null, block: null },
      ],
    });
    const markdown = await api.read(mappingId, 'Reading/Read me.md', { accept: 'text/markdown' });
    expect(markdown.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(markdown.body).toBe(content);
    const preferJson = await api.read(mappingId, 'Reading/Read me.md', { accept: 'text/markdown;q=0.5, application/json' });
    expect(preferJson.headers['content-type']).toContain('application/json');
    const cached = await api.read(mappingId, 'Reading/Read me.md', { 'if-none-match': `"${revisionOf(content)}"` });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');
    expect((await api.read(mappingId, 'Reading/Read me.md', { 'if-none-match': '"sha256:other"' })).statusCode).toBe(200);
  });

  it('answers 404 note_not_found for a missing note', async () => {
    const res = await api.read(mappingId, 'Reading/Missing.md');
    expect(res.statusCode).toBe(404);
    expect(res.data.code).toBe('note_not_found');
  });

  it('does not reach notes at other depths or through an encoded slash', async () => {
    await api.apply({ mappingId, path: 'Deep/er/Note.md', content: 'deep' });
    await api.apply({ mappingId, path: 'Root.md', content: 'root' });
    for (const url of [`/api/dev/notes/Deep/er/Note.md?mappingId=${mappingId}`, `/api/dev/notes/Root.md?mappingId=${mappingId}`, `/api/dev/notes/Deep%2Fer/Note.md?mappingId=${mappingId}`]) {
      const res = await api.request('GET', url);
      expect(res.statusCode).toBe(400);
      expect(res.data.code).toBe('path_not_addressable');
    }
    const inventory = (await api.inventory(mappingId)).data.notes as Array<{ path: string }>;
    expect(inventory.map((n) => n.path)).toEqual(expect.arrayContaining(['Deep/er/Note.md', 'Root.md']));
  });
});

describe('inventory', () => {
  it('lists every note of a large vault through cursors, in a stable order, at most 1,000 per page', async () => {
    const { mappingId: bigMapping, vaultId } = await personalMapping(db.pool, accountId);
    // 2,345 notes inserted directly: the inventory is under test here, not the write path.
    await db.pool.query(sql.type(z.object({}))`
      INSERT INTO notes (vault_id, path, path_key, title, content, revision, size_bytes, links)
      SELECT ${vaultId}, 'Bulk/' || lpad(i::text, 5, '0') || '.md', 'bulk/' || lpad(i::text, 5, '0') || '.md', 'n' || i, 'x',
             'sha256:' || encode(sha256('x'::bytea), 'hex'), 1, '[]'
        FROM generate_series(1, 2345) i`);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await api.inventory(bigMapping, cursor ? `&cursor=${cursor}` : '');
      expect(res.statusCode).toBe(200);
      expect(res.data.notes.length).toBeLessThanOrEqual(1000);
      seen.push(...(res.data.notes as Array<{ path: string }>).map((n) => n.path));
      cursor = res.data.nextCursor as string | null;
      expect(res.data.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(2345);
    expect(new Set(seen).size).toBe(2345);
    expect([...seen].sort()).toEqual(seen);
    const small = await api.inventory(bigMapping, '&limit=10');
    expect(small.data.notes).toHaveLength(10);
    expect((await api.inventory(bigMapping, '&limit=1001')).statusCode).toBe(400);
    expect((await api.inventory(bigMapping, '&limit=0')).statusCode).toBe(400);
    expect((await api.inventory(bigMapping, '&cursor=not-a-cursor')).data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/querystring/cursor' }] });
  });
});

describe('the inventory page sent as text', () => {
  it('is the page the rows give, as the schema says: every field, escaped titles, ISO timestamps; an empty vault is an empty page', async () => {
    const { mappingId: pageMapping, vaultId } = await personalMapping(db.pool, accountId);
    const empty = await api.inventory(pageMapping);
    expect(empty.data).toEqual({ mappingId: pageMapping, notes: [], nextCursor: null, hasMore: false });
    for (const [path, title] of [
      ['A/Quote.md', 'He said "fractions" \\ then left'],
      ['A/Ünïcødé 🚀.md', 'Équivalent fractions — 分数 🚀'],
      ['B/Tab.md', 'tab\there'],
    ]) {
      expect((await api.apply({ mappingId: pageMapping, path, content: `# ${title}\n\nbody` })).statusCode, path).toBe(201);
    }
    const first = await api.inventory(pageMapping, '&limit=2');
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    const parsed = inventoryResponse.strict().parse(first.data);
    const rows = await listNoteSummaries(db.pool, vaultId, { limit: 3 });
    expect(parsed.notes).toEqual(rows.slice(0, 2));
    expect(parsed.hasMore).toBe(true);
    for (const note of parsed.notes) expect(note.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const rest = await api.inventory(pageMapping, `&limit=2&cursor=${parsed.nextCursor}`);
    expect(rest.data).toEqual({ mappingId: pageMapping, notes: rows.slice(2), nextCursor: null, hasMore: false });
  });
});

describe('the inventory page Postgres writes', () => {
  // listNotesAsCaller writes the page's JSON in SQL; each member must be, byte for byte, what
  // JSON.stringify makes of the row as the pool reads it (escapes, key order, timestamps).
  it('has the bytes JSON.stringify gives the same rows: control characters, quotes, non-ASCII, truncated milliseconds, every page', async () => {
    const { mappingId: pageMapping, vaultId } = await personalMapping(db.pool, accountId);
    const titles = ['quote " and \\ backslash', 'bell \u0007 del \u007f nul-free', 'line\u2028separator and \u00e9 and 🚀', 'tab\tand\rreturn', 'plain'];
    for (const [i, title] of titles.entries()) {
      expect((await api.apply({ mappingId: pageMapping, path: `P/${i} ${title.slice(0, 5).replace(/[^A-Za-z ]/g, '')}.md`, content: `---\ntitle: ${JSON.stringify(title)}\n---\nbody ${i}` })).statusCode, title).toBe(201);
    }
    // A timestamp whose microseconds would round up: the page truncates to milliseconds, as the pool's parser does.
    await db.pool.query(sql.type(z.object({}))`UPDATE notes SET updated_at = '2026-01-02 03:04:05.678999+00' WHERE vault_id = ${vaultId} AND path LIKE 'P/0 %'`);
    const rows = await listNoteSummaries(db.pool, vaultId, { limit: 100 });
    expect(rows.map((r) => r.title)).toEqual(expect.arrayContaining(titles));
    expect(rows.find((r) => r.path.startsWith('P/0 '))!.updatedAt).toBe('2026-01-02T03:04:05.678Z');
    let cursor = '';
    for (let page = 0, seen = 0; ; page++) {
      const res = await api.inventory(pageMapping, `&limit=2${cursor}`);
      const expected = rows.slice(seen, seen + 2);
      seen += expected.length;
      const hasMore = seen < rows.length;
      const nextCursor = (res.data as { nextCursor: string | null }).nextCursor;
      expect(res.body, `page ${page}`).toBe(JSON.stringify({ mappingId: pageMapping, notes: expected, nextCursor: hasMore ? nextCursor : null, hasMore }));
      if (!hasMore) break;
      expect(nextCursor).toEqual(expect.any(String));
      cursor = `&cursor=${nextCursor}`;
    }
  });

  it('answers a caller refused the mapping exactly as a missing mapping, and shows nothing of it', async () => {
    const other = await accountWithToken(db.pool);
    const { mappingId: foreign } = await personalMapping(db.pool, other.account.id);
    await api.apply({ mappingId: foreign, path: 'Secret/Note.md', content: '# secret' }, { authorization: `Bearer ${other.token}` });
    const refused = await api.inventory(foreign);
    const missing = await api.inventory(randomUUID());
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain('Secret');
    const same = (data: unknown) => ({ ...(data as Record<string, unknown>), instance: null, requestId: null, mappingId: null });
    expect(same(refused.data)).toEqual(same(missing.data));
    expect(refused.data).toMatchObject({ code: 'mapping_not_found', mappingId: foreign });
  });
});

describe('delete → trash → restore', () => {
  it('previews, then deletes with If-Match into the trash, and restores the same content and revision', async () => {
    const content = '# Keep me\n\nimportant';
    const created = await api.apply({ mappingId, path: 'Trash/Keep me.md', content });
    const revision = created.data.afterRevision as string;

    const preview = await api.remove(mappingId, 'Trash/Keep me.md');
    expect(preview.data).toMatchObject({ applied: false, operation: 'delete', beforeRevision: revision, revisionRequired: true });
    expect((await api.read(mappingId, 'Trash/Keep me.md')).statusCode).toBe(200);

    const noIfMatch = await api.remove(mappingId, 'Trash/Keep me.md', { dryRun: false, headers: { 'idempotency-key': 'del-1' } });
    expect(noIfMatch.statusCode).toBe(428);
    const noKey = await api.remove(mappingId, 'Trash/Keep me.md', { dryRun: false, headers: { 'if-match': `"${revision}"` } });
    expect(noKey.data.code).toBe('idempotency_key_required');
    const wrong = await api.remove(mappingId, 'Trash/Keep me.md', { dryRun: false, headers: { 'if-match': revisionOf('nope'), 'idempotency-key': 'del-2' } });
    expect(wrong.statusCode).toBe(412);

    const deleted = await api.remove(mappingId, 'Trash/Keep me.md', { dryRun: false, headers: { 'if-match': `"${revision}"`, 'idempotency-key': 'del-3' } });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.data).toMatchObject({ applied: true, operation: 'delete', beforeRevision: revision, trashId: expect.any(String), eventId: expect.any(String) });
    expect((await api.read(mappingId, 'Trash/Keep me.md')).statusCode).toBe(404);
    const trashId = deleted.data.trashId as string;

    const listed = await api.trash(mappingId);
    expect(listed.data.items).toEqual(expect.arrayContaining([expect.objectContaining({ trashId, path: 'Trash/Keep me.md', revision })]));

    expect((await api.restore(mappingId, trashId, true)).data).toMatchObject({ applied: false, operation: 'restore', afterRevision: revision });
    expect((await api.restore(mappingId, trashId, false)).data.code).toBe('idempotency_key_required');
    const restored = await api.restore(mappingId, trashId, false, 'restore-1');
    expect(restored.data).toMatchObject({ applied: true, path: 'Trash/Keep me.md', afterRevision: revision });
    const back = await api.read(mappingId, 'Trash/Keep me.md');
    expect(back.data).toMatchObject({ content, revision });
    expect((await api.restore(mappingId, trashId, false, 'restore-2')).data.code).toBe('trash_item_restored');
    expect((await api.restore(mappingId, '00000000-0000-4000-8000-000000000000', true)).data.code).toBe('trash_item_not_found');

    const types = ((await api.events(mappingId, '&limit=1000')).data.events as Array<{ type: string; path: string }>).filter((e) => e.path === 'Trash/Keep me.md').map((e) => e.type);
    expect(types).toEqual(['note.created', 'note.deleted', 'note.restored']);
  });

  it('refuses to restore over a live note at the same path', async () => {
    const a = await api.apply({ mappingId, path: 'Trash/Twice.md', content: 'first' });
    const del = await api.remove(mappingId, 'Trash/Twice.md', { dryRun: false, headers: { 'if-match': a.data.afterRevision as string, 'idempotency-key': 'twice-del' } });
    await api.apply({ mappingId, path: 'Trash/Twice.md', content: 'second' });
    const res = await api.restore(mappingId, del.data.trashId as string, false, 'twice-restore');
    expect(res.statusCode).toBe(409);
    expect(res.data.code).toBe('note_exists');
  });

  it('pages through the trash without skipping items deleted in the same millisecond', async () => {
    const { mappingId: m, vaultId } = await personalMapping(db.pool, accountId);
    for (let i = 0; i < 5; i++) await api.apply({ mappingId: m, path: `Bin/N${i}.md`, content: `${i}` });
    for (let i = 0; i < 5; i++) {
      const rev = (await api.read(m, `Bin/N${i}.md`)).data.revision as string;
      await api.remove(m, `Bin/N${i}.md`, { dryRun: false, headers: { 'if-match': rev, 'idempotency-key': `bin-${i}` } });
    }
    // Same microsecond-level timestamps in one millisecond: the cursor must still not skip.
    await db.pool.query(sql.type(z.object({}))`UPDATE note_trash SET deleted_at = date_trunc('milliseconds', now()) + (random() * interval '900 microseconds') WHERE vault_id = ${vaultId}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await api.trash(m, `&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...(page.data.items as Array<{ path: string }>).map((it) => it.path));
      cursor = page.data.nextCursor as string | null;
    } while (cursor);
    expect(seen.sort()).toEqual(['Bin/N0.md', 'Bin/N1.md', 'Bin/N2.md', 'Bin/N3.md', 'Bin/N4.md']);
  });

  it('deletes with If-Match: * whatever is current; a missing note stays 404, and a retry replays', async () => {
    await api.apply({ mappingId, path: 'Trash/Star.md', content: 'any revision' });
    const preview = await api.remove(mappingId, 'Trash/Star.md', { headers: { 'if-match': '*' } });
    expect(preview.data).toMatchObject({ operation: 'delete', revisionRequired: false, beforeRevision: revisionOf('any revision') });
    const headers = { 'if-match': '*', 'idempotency-key': 'star-delete' };
    const deleted = await api.remove(mappingId, 'Trash/Star.md', { dryRun: false, headers });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.data).toMatchObject({ applied: true, operation: 'delete', trashId: expect.any(String) });
    // The note is gone now; the same request again replays the delete rather than failing.
    const replay = await api.remove(mappingId, 'Trash/Star.md', { dryRun: false, headers });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data.trashId).toBe(deleted.data.trashId);
    // RFC 9110 §13.2.1: without the condition this is 404, so it is 404 with it too.
    const missing = await api.remove(mappingId, 'Trash/Star.md', { dryRun: false, headers: { 'if-match': '*', 'idempotency-key': 'star-delete-2' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.data.code).toBe('note_not_found');
  });

  it('answers note_not_found when deleting a missing note', async () => {
    expect((await api.remove(mappingId, 'Trash/Never.md')).data.code).toBe('note_not_found');
  });
});

describe('events', () => {
  it('pages with an exclusive since cursor and carries full provenance', async () => {
    const { mappingId: m } = await personalMapping(db.pool, accountId);
    for (let i = 0; i < 5; i++) await api.apply({ mappingId: m, path: `Events/N${i}.md`, content: `n${i}` }, { 'x-request-id': `req-${i}` }, `evt-key-${i}`);
    const first = await api.events(m, '&limit=2');
    expect(first.data.events).toHaveLength(2);
    expect(first.data.hasMore).toBe(true);
    expect(first.data.events[0]).toMatchObject({
      type: 'note.created',
      actor: { type: 'account', id: accountId },
      mappingId: m,
      path: 'Events/N0.md',
      beforeRevision: null,
      afterRevision: revisionOf('n0'),
      transactionId: null,
      idempotencyKey: 'evt-key-0',
      requestId: 'req-0',
      source: 'rest',
      occurredAt: expect.any(String),
    });
    const rest = await api.events(m, `&since=${first.data.nextCursor}&limit=100`);
    expect((rest.data.events as Array<{ path: string }>).map((e) => e.path)).toEqual(['Events/N2.md', 'Events/N3.md', 'Events/N4.md']);
    expect(rest.data.hasMore).toBe(false);
    const empty = await api.events(m, `&since=${rest.data.nextCursor}`);
    expect(empty.data).toMatchObject({ events: [], hasMore: false, nextCursor: rest.data.nextCursor });
    for (const bad of ['&since=-1', '&since=abc', '&since=999999999999999999', '&limit=0', '&limit=1001']) expect((await api.events(m, bad)).statusCode).toBe(400);
  });

  it('numbers events per vault, so ids and cursors say nothing about other tenants', async () => {
    const { mappingId: busy } = await personalMapping(db.pool, accountId);
    for (let i = 0; i < 3; i++) await api.apply({ mappingId: busy, path: `Busy/N${i}.md`, content: `n${i}` });
    const { mappingId: fresh } = await personalMapping(db.pool, accountId);
    await api.apply({ mappingId: fresh, path: 'Fresh/First.md', content: 'first' });
    const page = await api.events(fresh, '');
    expect((page.data.events as Array<{ id: string }>).map((e) => e.id)).toEqual(['1']);
    expect(page.data.nextCursor).not.toMatch(/^\d+$/); // opaque, not a number to do arithmetic on
    // A cursor taken at the end of one vault reads the next events of any vault it is given to:
    // positions are per vault, nothing global leaks through them.
    const busyEnd = (await api.events(busy, '')).data.nextCursor as string;
    expect((await api.events(fresh, `&since=${busyEnd}`)).data.events).toEqual([]);
  });
});
