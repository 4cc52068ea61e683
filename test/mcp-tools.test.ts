// MCP tools against real data: graph resolution, vault schema truncation, search, mutations.
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { revisionOf } from '../domain/notes/markdown.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import { personalMapping } from './support/fixtures.ts';
import type { McpRaw } from './support/mcp.ts';

let db: TestDatabase;
let mcp: McpRaw;
let accountId: string;

const caller = useCaller({ plan: 'team', mapping: false });
beforeAll(() => ({ db, mcp, accountId } = caller));

async function seed(mappingId: string, notes: Record<string, string>) {
  const actions = Object.entries(notes).map(([path, content]) => ({ type: 'write-note', path, content }));
  const result = await mcp.call('apply_note_transaction', { mappingId, actions, dryRun: false, idempotencyKey: `seed-${mappingId}` });
  expect(result.isError).toBeFalsy();
}

describe('query_graph_relations', () => {
  it('resolves every link form the Obsidian way and reports unresolved and ambiguous links', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await seed(mappingId, {
      'Projects/Hub.md': [
        '[[Plan]]', // unique file name elsewhere
        '[[Projects/Sub/Deep|an alias]]', // exact path without .md
        '[[Sub/Deep.md#Section]]', // relative to Projects/, with .md and heading
        '[[../Root note#^block-1]]', // relative upwards, block reference
        '![[Diagram]]', // embed of a note
        '![[picture.png]]', // embed of a non-note file
        '[[Readme]]', // ambiguous: two Readme notes in other folders
        '[[nothing here]]', // unresolved
        '[[#Local heading]]', // a heading of this note
        '`[[in code]]`',
      ].join('\n'),
      'Archive/Plan.md': 'plan',
      'Projects/Sub/Deep.md': 'deep',
      'Root note.md': 'root',
      'Assets/Diagram.md': 'diagram',
      'Docs/Readme.md': 'readme in docs',
      'Other/Readme.md': 'readme elsewhere',
      'Other/Fan.md': 'Links to [[Hub]] and [[projects/hub|HUB]] and [[Archive/Plan]], [[Readme]] and [[readme]].',
    });
    const graph = (await mcp.call('query_graph_relations', { mappingId, path: 'Projects/Hub.md' })).structuredContent;
    const byTarget = Object.fromEntries((graph.outgoing as Array<{ target: string; heading: string | null }>).map((o) => [o.target || `#${o.heading}`, o]));
    expect(byTarget['Plan']).toMatchObject({ status: 'resolved', path: 'Archive/Plan.md', kind: 'link' });
    expect(byTarget['Projects/Sub/Deep']).toMatchObject({ status: 'resolved', path: 'Projects/Sub/Deep.md', alias: 'an alias' });
    expect(byTarget['Sub/Deep.md']).toMatchObject({ status: 'resolved', path: 'Projects/Sub/Deep.md', heading: 'Section' });
    expect(byTarget['../Root note']).toMatchObject({ status: 'resolved', path: 'Root note.md', block: 'block-1' });
    expect(byTarget['Diagram']).toMatchObject({ status: 'resolved', path: 'Assets/Diagram.md', kind: 'embed' });
    expect(byTarget['picture.png']).toMatchObject({ status: 'unresolved', path: null, kind: 'embed' });
    // Tie-break: same folder (none here), then the shortest path.
    expect(byTarget['Readme']).toMatchObject({ status: 'ambiguous', path: 'Docs/Readme.md', candidates: ['Docs/Readme.md', 'Other/Readme.md'] });
    expect(byTarget['nothing here']).toMatchObject({ status: 'unresolved' });
    expect(byTarget['#Local heading']).toMatchObject({ status: 'resolved', path: 'Projects/Hub.md' });
    expect(byTarget['in code']).toBeUndefined();
    expect(graph.counts).toEqual({ outgoing: 9, incoming: 2, unresolved: 2, ambiguous: 1 });
    expect(graph.incoming).toEqual([
      expect.objectContaining({ sourcePath: 'Other/Fan.md', target: 'Hub' }),
      expect.objectContaining({ sourcePath: 'Other/Fan.md', target: 'projects/hub', alias: 'HUB' }),
    ]);
    expect(graph.truncated).toBe(false);

    const plan = (await mcp.call('query_graph_relations', { mappingId, path: 'Archive/Plan.md' })).structuredContent;
    expect((plan.incoming as Array<{ sourcePath: string }>).map((i) => i.sourcePath).sort()).toEqual(['Other/Fan.md', 'Projects/Hub.md']);
    const fan = (await mcp.call('query_graph_relations', { mappingId, path: 'Other/Fan.md' })).structuredContent;
    expect(fan.outgoing[0]).toMatchObject({ target: 'Hub', status: 'resolved', path: 'Projects/Hub.md' });
    // [[Readme]] from Other/ is the relative path Other/Readme.md (rule 1); [[readme]] matches no
    // exact path, so file names decide, and the note in the linking folder wins the tie.
    expect(fan.outgoing[3]).toMatchObject({ target: 'Readme', status: 'resolved', path: 'Other/Readme.md' });
    expect(fan.outgoing[4]).toMatchObject({ target: 'readme', status: 'ambiguous', path: 'Other/Readme.md', candidates: ['Other/Readme.md', 'Docs/Readme.md'] });
  });

  it('bounds relations and says truncated', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    const many = Array.from({ length: 205 }, (_, i) => `[[Target ${i}]]`).join(' ');
    await seed(mappingId, { 'Big/Many.md': many });
    const graph = (await mcp.call('query_graph_relations', { mappingId, path: 'Big/Many.md' })).structuredContent;
    expect(graph.outgoing).toHaveLength(200);
    expect(graph.truncated).toBe(true);
    expect((await mcp.call('query_graph_relations', { mappingId, path: 'Big/None.md' })).structuredContent.code).toBe('note_not_found');
  });
});

describe('get_vault_schema', () => {
  it('reports keys, types, counts and examples, and truncates at 2,000 notes', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    await seed(mappingId, {
      'A/One.md': '---\ntitle: One\ntags: [a, b]\npriority: 1\ndone: false\n---\nbody',
      'A/Two.md': '---\ntitle: Two\npriority: high\ndue: 2026-12-01\n---\nbody',
      'A/Three.md': 'no frontmatter',
      'A/Broken.md': '---\n: : not yaml [\n---\nbody',
    });
    const small = (await mcp.call('get_vault_schema', { mappingId })).structuredContent;
    expect(small).toMatchObject({ scannedNotes: 4, notesWithFrontmatter: 2, truncated: false });
    const keys = Object.fromEntries((small.keys as Array<{ key: string }>).map((k) => [k.key, k]));
    expect(keys['priority']).toEqual({ key: 'priority', notes: 2, types: ['number', 'string'], examples: [1, 'high'] });
    expect(keys['tags']).toMatchObject({ notes: 1, types: ['array'], examples: [['a', 'b']] });
    expect(keys['due']).toMatchObject({ types: ['string'], examples: ['2026-12-01'] }); // YAML 1.2: dates stay strings
    expect(keys['done']).toMatchObject({ types: ['boolean'] });

    // 2,000 more notes with frontmatter (bulk-inserted: the scan is under test, not the write path).
    await db.pool.query(sql.type(z.object({}))`
      INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, frontmatter, links)
      SELECT ${vaultId}, 'B/' || lpad(i::text, 5, '0') || '.md', 'b/' || lpad(i::text, 5, '0') || '.md', lpad(i::text, 5, '0'), 'n', 'x',
             'sha256:' || encode(sha256('x'::bytea), 'hex'), 1, jsonb_build_object('bulk', i), '[]'
        FROM generate_series(1, 2000) i`);
    const big = (await mcp.call('get_vault_schema', { mappingId })).structuredContent;
    expect(big).toMatchObject({ scannedNotes: 2000, truncated: true, limits: { notes: 2000 } });
  });
});

describe('search_notes', () => {
  it('ranks words, matches paths and substrings, honours prefix and limit', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await seed(mappingId, {
      'Research/Quantum notes.md': '# Quantum\n\nEntanglement and superposition explained.',
      'Research/Classical.md': '# Classical\n\nNewton and quantum contrasts; mostly classical mechanics.',
      'Journal/2026-11-20.md': 'Met Ana about the entanglement paper.',
      'Journal/Misc.md': 'serial number ABX-4471-Q in the log',
    });
    const words = (await mcp.call('search_notes', { mappingId, query: 'entanglement' })).structuredContent;
    expect((words.results as Array<{ path: string }>).map((r) => r.path).sort()).toEqual(['Journal/2026-11-20.md', 'Research/Quantum notes.md']);
    expect((words.results as Array<{ snippet: string }>).some((r) => r.snippet.includes('**Entanglement**'))).toBe(true);
    // A word in the title outranks the same word in the body.
    const titled = (await mcp.call('search_notes', { mappingId, query: 'quantum' })).structuredContent;
    expect((titled.results as Array<{ path: string }>).map((r) => r.path)).toEqual(['Research/Quantum notes.md', 'Research/Classical.md']);
    const path = (await mcp.call('search_notes', { mappingId, query: 'Quantum not' })).structuredContent;
    expect(path.results[0]).toMatchObject({ path: 'Research/Quantum notes.md', matchedBy: expect.arrayContaining(['path']) });
    const substring = (await mcp.call('search_notes', { mappingId, query: 'X-4471' })).structuredContent;
    expect(substring.results).toEqual([expect.objectContaining({ path: 'Journal/Misc.md', matchedBy: ['substring'], snippet: expect.stringContaining('ABX-4471-Q') })]);
    const prefixed = (await mcp.call('search_notes', { mappingId, query: 'quantum', pathPrefix: 'Research/Cl' })).structuredContent;
    expect((prefixed.results as Array<{ path: string }>).map((r) => r.path)).toEqual(['Research/Classical.md']);
    const limited = (await mcp.call('search_notes', { mappingId, query: 'quantum', limit: 1 })).structuredContent;
    expect(limited).toMatchObject({ limit: 1, truncated: true });
    expect(limited.results).toHaveLength(1);
    expect((await mcp.call('search_notes', { mappingId, query: 'x', limit: 51 })).structuredContent.code).toBe('invalid_request');
    expect((await mcp.call('search_notes', { mappingId, query: '100%_' })).isError).toBeFalsy();
  });
});

describe('mutation tools', () => {
  it('preview by default, need an idempotency key and the current revision, replay on retry', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    const preview = (await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'one' })).structuredContent;
    expect(preview).toMatchObject({ applied: false, operation: 'create', mode: 'create' });
    expect((await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'one', dryRun: false })).structuredContent.code).toBe('idempotency_key_required');
    const created = (await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'one', dryRun: false, idempotencyKey: 'k1' })).structuredContent;
    expect(created).toMatchObject({ applied: true, replayed: false });
    const replay = (await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'one', dryRun: false, idempotencyKey: 'k1' })).structuredContent;
    expect(replay).toMatchObject({ applied: true, replayed: true, eventId: created.eventId });
    expect((await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'two', dryRun: false, idempotencyKey: 'k1' })).structuredContent.code).toBe('idempotency_key_reused');
    expect((await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'again', dryRun: false, idempotencyKey: 'k2' })).structuredContent.code).toBe('precondition_failed');
    expect((await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'x', mode: 'replace', dryRun: false, idempotencyKey: 'k3' })).structuredContent.code).toBe('revision_required');
    const stale = (await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'x', mode: 'replace', expectedHash: revisionOf('zero'), dryRun: false, idempotencyKey: 'k4' })).structuredContent;
    expect(stale).toMatchObject({ code: 'revision_conflict', currentRevision: revisionOf('one') });
    const appended = (await mcp.call('create_or_append_note', { mappingId, path: 'M/A.md', content: 'two', mode: 'append', expectedHash: revisionOf('one'), dryRun: false, idempotencyKey: 'k5' })).structuredContent;
    expect(appended).toMatchObject({ afterRevision: revisionOf('one\ntwo') });
    expect((await mcp.call('create_or_append_note', { mappingId, path: 'M/None.md', content: 'x', mode: 'append', expectedHash: revisionOf('one') })).structuredContent.code).toBe('note_not_found');
    expect((await mcp.call('create_or_append_note', { mappingId, path: '../evil.md', content: 'x' })).structuredContent.code).toBe('invalid_path');
    const tx = (await mcp.call('apply_note_transaction', { mappingId, actions: Array.from({ length: 101 }, (_, i) => ({ type: 'write-note', path: `M/N${i}.md`, content: 'x' })) })).structuredContent;
    expect(tx.code).toBe('transaction_too_large');
    const events = (await mcp.call('get_knowledge_events', { mappingId })).structuredContent;
    expect((events.events as Array<{ source: string; idempotencyKey: string }>).map((e) => [e.source, e.idempotencyKey])).toEqual([
      ['mcp:create_or_append_note', 'k1'],
      ['mcp:create_or_append_note', 'k5'],
    ]);
  });
});
