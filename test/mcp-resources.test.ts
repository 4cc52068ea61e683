// Notes as MCP resources, raw: resources/list pages through every note the caller may read (two
// mappings, 120 notes: 100 then 20), resources/read returns the revision, another account's note
// answers exactly like a missing mapping, "not found" is -32002 before 2026-07-28 and -32602 on it,
// bad URIs and cursors are -32602, Mcp-Name carries the URI on the modern path, and every request is
// one operation of the caller's MCP allowance.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { noteUri } from '../api/routes/mcp/resources.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestApp } from './support/harness.ts';
import { addMember, createRole } from '../domain/identity/workspaces.ts';
import { accountWithToken, personalMapping, workspaceWithReviewer } from './support/fixtures.ts';
import { mcpRaw } from './support/mcp.ts';
import type { McpRaw } from './support/mcp.ts';

const ctx = useTestApp();
let db: TestDatabase;
let app: FastifyInstance;
let owner: { accountId: string; mcp: McpRaw; mappings: string[] };
let stranger: { accountId: string; mcp: McpRaw; mappingId: string };

const used = async (accountId: string) =>
  (await db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'mcp'`)) ?? 0;

const pathOf = (i: number) => `Folder ${i % 3}/Note ${String(i).padStart(3, '0')}.md`;

beforeAll(async () => {
  ({ db, app } = ctx);
  const a = await accountWithToken(db.pool, 'premium');
  const mappings = [(await personalMapping(db.pool, a.account.id)).mappingId, (await personalMapping(db.pool, a.account.id)).mappingId].sort();
  owner = { accountId: a.account.id, mcp: mcpRaw(app, a.token), mappings };
  for (const [m, mappingId] of mappings.entries()) {
    const actions = Array.from({ length: 60 }, (_, i) => ({ type: 'write-note', path: pathOf(i), content: `# Note ${m}-${i}\n\nbody ${i}\n` }));
    const written = await owner.mcp.call('apply_note_transaction', { mappingId, actions, dryRun: false, idempotencyKey: `resources-${m}` });
    expect(written.structuredContent.applied).toBe(true);
  }
  const b = await accountWithToken(db.pool, 'team');
  const { mappingId } = await personalMapping(db.pool, b.account.id);
  stranger = { accountId: b.account.id, mcp: mcpRaw(app, b.token), mappingId };
  await stranger.mcp.call('create_or_append_note', { mappingId, path: 'Private/Secret.md', content: '# Secret\n', dryRun: false, idempotencyKey: 'secret' });
});

describe('resources/list', () => {
  it('pages through the notes of every mapping the caller may read, by mapping then path, one operation a page', async () => {
    const before = await used(owner.accountId);
    const first = await owner.mcp.modern('resources/list');
    expect(first.statusCode).toBe(200);
    expect(first.data.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private', nextCursor: expect.any(String) });
    const second = await owner.mcp.legacy('resources/list', { cursor: first.data.result.nextCursor }, { 'mcp-protocol-version': '2025-11-25' });
    expect(second.data.result.nextCursor).toBeUndefined();
    const listed = [...first.data.result.resources, ...second.data.result.resources] as Array<{ uri: string; name: string; title: string; mimeType: string; size: number; _meta: { revision: string } }>;
    expect([first.data.result.resources.length, second.data.result.resources.length]).toEqual([100, 20]);
    const expected = owner.mappings.flatMap((mappingId) => Array.from({ length: 60 }, (_, i) => pathOf(i)).sort().map((path) => noteUri(mappingId, path)));
    expect(listed.map((r) => r.uri)).toEqual(expected);
    expect(listed[0]).toMatchObject({ name: 'Folder 0/Note 000.md', title: 'Note 0-0', mimeType: 'text/markdown', size: expect.any(Number), _meta: { revision: expect.stringMatching(/^sha256:/) } });
    expect(await used(owner.accountId)).toBe(before + 2);
    // Another account lists only its own note.
    const theirs = await stranger.mcp.modern('resources/list');
    expect(theirs.data.result.resources.map((r: { uri: string }) => r.uri)).toEqual([noteUri(stranger.mappingId, 'Private/Secret.md')]);
  });

  it('refuses a cursor it did not hand out with -32602', async () => {
    for (const cursor of ['nonsense', '', Buffer.from(JSON.stringify(['not-a-uuid', 'x'])).toString('base64url'), 42]) {
      const res = await owner.mcp.modern('resources/list', { cursor });
      expect({ cursor, code: res.data.error?.code }).toEqual({ cursor, code: -32602 });
    }
  });

  it('lists the note template in every era', async () => {
    const modern = await owner.mcp.modern('resources/templates/list');
    expect(modern.data.result).toMatchObject({ resourceTemplates: [{ uriTemplate: 'note://{mappingId}/{+path}', name: 'note', mimeType: 'text/markdown' }], ttlMs: 300_000, cacheScope: 'public' });
    const legacy = await owner.mcp.legacy('resources/templates/list');
    expect(legacy.data.result.resourceTemplates).toHaveLength(1);
  });
});

describe('workspace vaults', () => {
  it('are listed and read by a member whose role has vault.read, and skipped (list) or refused (read) for one whose role lacks it', async () => {
    const cast = await workspaceWithReviewer(db.pool, 'Resources workspace');
    const written = await mcpRaw(app, cast.proposer.token).call('create_or_append_note', { mappingId: cast.mappingId, path: 'Team/Charter.md', content: '# Charter\n', dryRun: false, idempotencyKey: 'charter' });
    expect(written.structuredContent.applied).toBe(true);
    const uri = noteUri(cast.mappingId, 'Team/Charter.md');

    const reviewer = mcpRaw(app, cast.reviewer.token);
    const listed = await reviewer.modern('resources/list');
    expect(listed.data.result.resources.map((r: { uri: string }) => r.uri)).toContain(uri);
    expect((await reviewer.legacy('resources/read', { uri })).data.result.contents[0].text).toBe('# Charter\n');

    await createRole(db.pool, { workspaceId: cast.workspaceId, name: 'automation-only', permissions: ['automation.view'] });
    const outsider = await accountWithToken(db.pool, 'premium');
    await addMember(db.pool, { workspaceId: cast.workspaceId, accountId: outsider.account.id, role: 'automation-only' });
    const theirs = mcpRaw(app, outsider.token);
    expect((await theirs.modern('resources/list')).data.result.resources).toEqual([]);
    const refused = await theirs.legacy('resources/read', { uri });
    expect(refused.data.error).toMatchObject({ code: -32602, data: { code: 'permission_denied', uri } });
    expect(JSON.stringify(refused.data)).not.toContain('# Charter');
  });
});

describe('resources/read', () => {
  it('returns the Markdown with its revision, the same one get_note_content reports', async () => {
    const [mappingId] = owner.mappings;
    const uri = noteUri(mappingId!, pathOf(7));
    expect(uri).toBe(`note://${mappingId}/Folder%201/Note%20007.md`);
    const res = await owner.mcp.modern('resources/read', { uri }, { 'mcp-name': uri });
    const tool = await owner.mcp.call('get_note_content', { mappingId, path: pathOf(7) });
    expect(res.data.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'private',
      contents: [{ uri, mimeType: 'text/markdown', text: '# Note 0-7\n\nbody 7\n', _meta: { revision: tool.structuredContent.revision, title: 'Note 0-7' } }],
    });
    // The same URI with the mapping id upper-cased reads the same note and answers its canonical URI.
    const upper = await owner.mcp.legacy('resources/read', { uri: uri.replace(mappingId!, mappingId!.toUpperCase()) });
    expect(upper.data.result.contents[0].uri).toBe(uri);
  });

  it("answers another account's note exactly like a note of a mapping that does not exist", async () => {
    const foreign = noteUri(stranger.mappingId, 'Private/Secret.md');
    const missing = noteUri('00000000-0000-4000-8000-000000000000', 'Private/Secret.md');
    for (const send of [(uri: string) => owner.mcp.modern('resources/read', { uri }, { 'mcp-name': uri }), (uri: string) => owner.mcp.legacy('resources/read', { uri }, { 'mcp-protocol-version': '2025-06-18' })]) {
      const [a, b] = [await send(foreign), await send(missing)];
      expect(a.statusCode).toBe(b.statusCode);
      const shape = (r: typeof a) => ({ code: r.data.error.code, message: r.data.error.message, dataCode: r.data.error.data.code, status: r.data.error.data.status });
      expect(shape(a)).toEqual(shape(b));
      expect(shape(a).dataCode).toBe('mapping_not_found');
      expect(JSON.stringify(a.data)).not.toContain('Secret\\n');
    }
  });

  it('says "not found" with -32002 before 2026-07-28 and -32602 on it; a bad URI is -32602', async () => {
    const uri = noteUri(owner.mappings[0]!, 'No/Such note.md');
    const modern = await owner.mcp.modern('resources/read', { uri }, { 'mcp-name': uri });
    expect(modern.data.error).toMatchObject({ code: -32602, message: 'Resource not found', data: { uri, code: 'note_not_found', status: 404 } });
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      const legacy = await owner.mcp.legacy('resources/read', { uri }, { 'mcp-protocol-version': version });
      expect({ version, code: legacy.data.error.code, dataCode: legacy.data.error.data.code }).toEqual({ version, code: -32002, dataCode: 'note_not_found' });
    }
    for (const bad of ['https://example.com/a.md', 'note://not-a-uuid/a.md', `note://${owner.mappings[0]}/a.md?x=1`, `note://${owner.mappings[0]}/%E0%A4%A.md`, `note://${owner.mappings[0]}/../escape.md`, 7]) {
      const res = await owner.mcp.legacy('resources/read', { uri: bad });
      expect({ bad, code: res.data.error?.code }).toEqual({ bad, code: -32602 });
    }
  });

  it('needs Mcp-Name equal to the URI on the 2026-07-28 path', async () => {
    const uri = noteUri(owner.mappings[0]!, pathOf(1));
    const missing = await owner.mcp.modern('resources/read', { uri });
    expect([missing.statusCode, missing.data.error.code, missing.data.error.data.header]).toEqual([400, -32020, 'Mcp-Name']);
    const other = await owner.mcp.modern('resources/read', { uri }, { 'mcp-name': noteUri(owner.mappings[0]!, pathOf(2)) });
    expect([other.statusCode, other.data.error.code]).toEqual([400, -32020]);
  });

  it('charges one operation per read, found or not', async () => {
    const before = await used(owner.accountId);
    await owner.mcp.legacy('resources/read', { uri: noteUri(owner.mappings[0]!, pathOf(3)) });
    await owner.mcp.legacy('resources/read', { uri: noteUri(owner.mappings[0]!, 'No/Such.md') });
    expect(await used(owner.accountId)).toBe(before + 2);
  });
});
