// Every path rule and every limit of the notes API, on every write path.
import { beforeAll, describe, expect, it } from 'vitest';
import { nonAsciiScans, noteLimits, pathProblem, PRINTABLE_ASCII } from '../domain/notes/paths.ts';
import { useCaller } from './support/harness.ts';
import type { DevClient } from './support/dev-client.ts';

let api: DevClient;
let mappingId: string;

const caller = useCaller({ plan: 'developer_agent' });
beforeAll(() => ({ api, mappingId } = caller));

const invalidPaths: Array<[string, string]> = [
  ['empty', ''],
  ['no .md', 'Notes/readme.txt'],
  ['upper-case extension only', 'Notes/README.MD'],
  ['leading slash', '/Notes/a.md'],
  ['backslash', 'Notes\\a.md'],
  ['empty segment', 'Notes//a.md'],
  ['trailing slash', 'Notes/a.md/'],
  ['dot segment', 'Notes/./a.md'],
  ['dot-dot segment', 'Notes/../a.md'],
  ['control character', 'Notes/a\u0007b.md'],
  ['newline', 'Notes/a\nb.md'],
  ['DEL', 'Notes/a\u007fb.md'],
  ['<', 'Notes/a<b.md'],
  ['>', 'Notes/a>b.md'],
  [':', 'Notes/a:b.md'],
  ['"', 'Notes/a"b.md'],
  ['|', 'Notes/a|b.md'],
  ['?', 'Notes/a?b.md'],
  ['*', 'Notes/a*b.md'],
  ['reserved CON', 'CON/a.md'],
  ['reserved con.md', 'Notes/con.md'],
  ['reserved NUL with extension', 'Notes/nul.txt.md'],
  ['reserved COM1', 'Notes/COM1.md'],
  ['reserved LPT9', 'lpt9/a.md'],
  ['reserved CONIN$', 'Notes/CONIN$.md'],
  ['an unpaired surrogate', 'Notes/a\ud800b.md'],
  ['trailing dot in a segment', 'Notes./a.md'],
  ['trailing space in a segment', 'Notes /a.md'],
  ['leading dot', '.obsidian/a.md'],
  ['hidden file', 'Notes/.hidden.md'],
  ['only an extension', 'Notes/.md'],
  ['segment over 255 bytes', `Notes/${'é'.repeat(127)}.md`],
  ['path over 1024 bytes', `${'abcdefgh/'.repeat(114)}x.md`],
];

describe('path rules', () => {
  it.each(invalidPaths)('refuses %s on preview, apply and transaction', async (_label, path) => {
    const preview = await api.preview({ mappingId, path, content: 'x' });
    expect(preview.statusCode).toBe(400);
    expect(preview.data).toMatchObject({ code: 'invalid_path', errors: [{ pointer: '/path', code: 'invalid_path' }] });
    expect((await api.apply({ mappingId, path, content: 'x' })).data.code).toBe('invalid_path');
    const tx = await api.transaction({ mappingId, actions: [{ type: 'write-note', path, content: 'x' }] });
    expect(tx.data).toMatchObject({ code: 'invalid_path', errors: [{ pointer: '/actions/0/path' }] });
  });

  it('refuses NUL in a path: at the edge over HTTP (invalid_character), and in the path rules for every other caller', async () => {
    const path = 'Notes/a\u0000b.md';
    expect(pathProblem(path)).toMatch(/NUL/);
    const preview = await api.preview({ mappingId, path, content: 'x' });
    expect(preview.data).toMatchObject({ code: 'invalid_character', errors: [{ pointer: '/body/path' }] });
    const tx = await api.transaction({ mappingId, actions: [{ type: 'write-note', path, content: 'x' }] });
    expect(tx.data).toMatchObject({ code: 'invalid_character', errors: [{ pointer: '/body/actions/0/path' }] });
  });

  it('a path of printable ASCII may skip the Unicode scans: none matches any printable ASCII, and such a path is its own NFC', () => {
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
    expect(printable).toHaveLength(95);
    const all = printable.join('');
    expect(PRINTABLE_ASCII.test(all)).toBe(true);
    expect(PRINTABLE_ASCII.test(`${all}\u007f`)).toBe(false);
    expect(all.normalize('NFC')).toBe(all);
    // Every character alone, every pair (the joiner scan looks at neighbours) and all together.
    const samples = [all, ...printable, ...printable.flatMap((a) => printable.map((b) => a + b))];
    for (const { pattern } of nonAsciiScans) expect(samples.filter((sample) => pattern.test(sample)), String(pattern)).toEqual([]);
    // And each scan still refuses what it is for, on a path that is not ASCII.
    const refused = ['Notes/a\u0085b.md', 'Notes/a\u202eb.md', 'Notes/a\u200bb.md', 'Notes/a\u200db.md'];
    expect(nonAsciiScans).toHaveLength(refused.length);
    nonAsciiScans.forEach(({ pattern, problem }, i) => {
      expect(pattern.test(refused[i]!), problem).toBe(true);
      expect(pathProblem(refused[i]!)).toBe(problem);
    });
  });

  it('accepts the limits exactly: a 255-byte segment and a 1024-byte path', () => {
    expect(pathProblem(`Notes/${'a'.repeat(252)}.md`)).toBeNull();
    expect(pathProblem(`Notes/${'a'.repeat(253)}.md`)).not.toBeNull();
    const path = `${'a'.repeat(200)}/`.repeat(5) + 'a'.repeat(16) + '.md';
    expect(Buffer.byteLength(path)).toBe(noteLimits.maxPathBytes);
    expect(pathProblem(path)).toBeNull();
    expect(pathProblem(`a${path}`)).toMatch(/longer than 1024 bytes/);
  });

  it('stores paths in NFC: a decomposed é finds the composed note', async () => {
    const composed = 'Caf\u00e9/Men\u00fc.md';
    const decomposed = 'Cafe\u0301/Menu\u0308.md';
    const created = await api.apply({ mappingId, path: decomposed, content: 'nfc' });
    expect(created.data.path).toBe(composed);
    expect((await api.read(mappingId, composed)).data.content).toBe('nfc');
    expect((await api.read(mappingId, decomposed)).data.content).toBe('nfc');
  });

  it('refuses a path that differs from an existing note only by case', async () => {
    await api.apply({ mappingId, path: 'Case/Note.md', content: 'a' });
    const res = await api.apply({ mappingId, path: 'case/NOTE.md', content: 'b' });
    expect(res.statusCode).toBe(409);
    expect(res.data).toMatchObject({ code: 'path_case_conflict', existingPath: 'Case/Note.md' });
    expect((await api.preview({ mappingId, path: 'CASE/note.md', content: 'b' })).data.code).toBe('path_case_conflict');
    expect((await api.transaction({ mappingId, actions: [{ type: 'write-note', path: 'Case/NOTE.md', content: 'b' }] })).data.code).toBe('path_case_conflict');
    expect((await api.apply({ mappingId, path: 'Straße/Groß.md', content: 'ß' })).statusCode).toBe(201);
    expect((await api.apply({ mappingId, path: 'STRASSE/GROSS.md', content: 'ss' })).statusCode).toBe(201);
    expect((await api.apply({ mappingId, path: 'straße/groß.md', content: 'dup' })).data.code).toBe('path_case_conflict');
    // Greek final sigma: "ΟΔΟΣ" and "οδος" are the same name on a case-insensitive file system.
    expect((await api.apply({ mappingId, path: 'Greek/ΟΔΟΣ.md', content: 'a' })).statusCode).toBe(201);
    expect((await api.apply({ mappingId, path: 'Greek/οδος.md', content: 'b' })).data.code).toBe('path_case_conflict');
  });
});

describe('limits and field validation', () => {
  it('accepts content of exactly 1 MiB and answers 413 note_too_large past it', async () => {
    const limit = noteLimits.maxContentBytes;
    expect((await api.preview({ mappingId, path: 'Size/Max.md', content: 'a'.repeat(limit) })).statusCode).toBe(200);
    const tooBig = await api.preview({ mappingId, path: 'Size/Big.md', content: 'a'.repeat(limit - 1) + 'é' });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.data).toMatchObject({ code: 'note_too_large', limit, size: limit + 1 });
    expect((await api.apply({ mappingId, path: 'Size/Big.md', content: 'a'.repeat(limit + 1) })).statusCode).toBe(413);
  });

  it('answers 413 payload_too_large for a body past the route limit', async () => {
    const res = await api.preview({ mappingId, path: 'Size/Huge.md', content: 'a'.repeat(5 * 1_048_576) });
    expect(res.statusCode).toBe(413);
    expect(res.data.code).toBe('payload_too_large');
  });

  it.each([
    ['path missing', { content: 'x' }, '/body/path'],
    ['content missing', { path: 'A/b.md' }, '/body/content'],
    ['path not a string', { path: 7, content: 'x' }, '/body/path'],
    ['content not a string', { path: 'A/b.md', content: ['x'] }, '/body/content'],
    ['dryRun not a boolean', { path: 'A/b.md', content: 'x', dryRun: 'false' }, '/body/dryRun'],
    ['expectedHash not a string', { path: 'A/b.md', content: 'x', expectedHash: 1 }, '/body/expectedHash'],
    ['unknown field', { path: 'A/b.md', content: 'x', overwrite: true }, '/body/overwrite'],
    ['mappingId not a UUID', { path: 'A/b.md', content: 'x', mappingId: 'vault-1' }, '/body/mappingId'],
  ])('refuses a write with %s (400 invalid_request at %s)', async (_label, body, pointer) => {
    const res = await api.request('POST', '/api/dev/notes', { body: { mappingId, ...body } });
    expect(res.statusCode).toBe(400);
    expect(res.data.code).toBe('invalid_request');
    expect((res.data.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
  });

  it('refuses malformed revisions and mapping headers', async () => {
    expect((await api.preview({ mappingId, path: 'A/b.md', content: 'x', expectedHash: 'abc' })).data).toMatchObject({ code: 'invalid_revision', errors: [{ pointer: '/body/expectedHash' }] });
    expect((await api.preview({ mappingId, path: 'A/b.md', content: 'x' }, { 'if-match': 'W/"sha256:abc"' })).data.code).toBe('invalid_revision');
    expect((await api.preview({ path: 'A/b.md', content: 'x' }, { 'x-service-mapping': 'nope' })).data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/headers/x-service-mapping' }] });
  });

  it('refuses malformed query parameters', async () => {
    expect((await api.request('GET', '/api/dev/notes?mappingId=not-a-uuid')).data).toMatchObject({ code: 'invalid_request', errors: [{ pointer: '/querystring/mappingId' }] });
    expect((await api.request('GET', '/api/dev/notes')).statusCode).toBe(400);
    expect((await api.request('GET', `/api/dev/notes?mappingId=${mappingId}&colour=blue`)).statusCode).toBe(400);
    expect((await api.request('DELETE', `/api/dev/notes/A/b.md?mappingId=${mappingId}&dryRun=maybe`)).statusCode).toBe(400);
  });
});
