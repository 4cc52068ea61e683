// A generated client is usable: TypeScript types are generated with openapi-typescript from the
// live /openapi.json of a listening app, a small client over openapi-fetch calls operations by
// their operationId types (listNotes, writeNote, readNote, deleteNote, listWorkspaces), the
// TypeScript compiler accepts it and refuses misuse, and the calls work against the app.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCaller } from './support/harness.ts';

const root = join(import.meta.dirname, '..');
// Inside the checkout (git-ignored .data/), so `openapi-fetch` resolves from node_modules.
const dir = join(root, '.data', `openapi-client-${process.pid}`);

const clientSource = `
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './api.ts';

type Query<Id extends keyof operations> = NonNullable<operations[Id]['parameters']['query']>;
type Header<Id extends keyof operations> = NonNullable<operations[Id]['parameters']['header']>;
type Path<Id extends keyof operations> = operations[Id]['parameters']['path'];
// JSON bodies only: some operations take raw bytes (uploadAudio), which have no application/json member.
type Body<Id extends keyof operations> = NonNullable<operations[Id]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
export type Problem = components['schemas']['Problem'];

/** Operations of the description, by operationId. */
export function notesClient(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  return {
    listWorkspaces: (query: Query<'listWorkspaces'> = {}) => client.GET('/api/dev/workspaces', { params: { query } }),
    listNotes: (query: Query<'listNotes'>) => client.GET('/api/dev/notes', { params: { query } }),
    writeNote: (body: Body<'writeNote'>, header: Header<'writeNote'> = {}) => client.POST('/api/dev/notes', { body, params: { header } }),
    readNote: (path: Path<'readNote'>, query: Query<'readNote'>, header: Header<'readNote'> = {}) =>
      client.GET('/api/dev/notes/{category}/{filename}', { params: { path, query, header } }),
    deleteNote: (path: Path<'deleteNote'>, query: Query<'deleteNote'>, header: Header<'deleteNote'>) =>
      client.DELETE('/api/dev/notes/{category}/{filename}', { params: { path, query, header } }),
  };
}

export async function scenario(baseUrl: string, token: string, mappingId: string) {
  const api = notesClient(baseUrl, token);
  const created = await api.writeNote({ mappingId, path: 'Client/Typed.md', content: '# Typed\\n\\nWritten by a generated client.\\n', dryRun: false }, { 'Idempotency-Key': 'client-create' });
  if (!created.data?.applied) throw new Error(\`create failed: \${created.response.status}\`);
  const revision: string = created.data.afterRevision;
  const operation: 'create' | 'replace' | 'noop' = created.data.operation;

  const listed = await api.listNotes({ mappingId, limit: 10 });
  const notes: string[] = (listed.data?.notes ?? []).map((note) => note.path);

  const read = await api.readNote({ category: 'Client', filename: 'Typed.md' }, { mappingId });
  const cached = await api.readNote({ category: 'Client', filename: 'Typed.md' }, { mappingId }, { 'If-None-Match': \`"\${revision}"\` });

  const stale = await api.writeNote(
    { mappingId, path: 'Client/Typed.md', content: 'stale', dryRun: false, expectedHash: \`sha256:\${'0'.repeat(64)}\` },
    { 'Idempotency-Key': 'client-stale' },
  );
  const problem: Problem | undefined = stale.error;

  const removed = await api.deleteNote({ category: 'Client', filename: 'Typed.md' }, { mappingId, dryRun: 'false' }, { 'If-Match': '*', 'Idempotency-Key': 'client-delete' });
  const trashId: string | undefined = removed.data?.applied ? removed.data.trashId : undefined;

  const workspaces = await api.listWorkspaces({ limit: 5 });
  return {
    created: { status: created.response.status, operation, revision, location: created.response.headers.get('location'), etag: created.response.headers.get('etag') },
    notes,
    read: { title: read.data && typeof read.data === 'object' ? read.data.title : undefined, etag: read.response.headers.get('etag') },
    cached: cached.response.status,
    stale: { status: stale.response.status, code: problem?.code, currentRevision: problem?.['currentRevision'], contentType: stale.response.headers.get('content-type') },
    deleted: { status: removed.response.status, trashId },
    workspaces: workspaces.data?.workspaces.length,
  };
}
`;

// Every line under @ts-expect-error must fail to compile; if the generated types were loose
// (any), the directive itself would be the error and the check below would fail.
const misuseSource = `
import type { operations } from './api.ts';
import { notesClient } from './client.ts';

const api = notesClient('http://127.0.0.1:1', 'hnp_pat_x');
export async function misuse(mappingId: string) {
  // @ts-expect-error content is a string
  await api.writeNote({ mappingId, path: 'A/B.md', content: 42 });
  // @ts-expect-error mappingId is required by listNotes
  await api.listNotes({ limit: 10 });
  // @ts-expect-error limit is a number
  await api.listNotes({ mappingId, limit: 'ten' });
  // @ts-expect-error a note route takes category and filename
  await api.readNote({ category: 'A' }, { mappingId });
  const stale = await api.writeNote({ mappingId, path: 'A/B.md', content: 'x' });
  // @ts-expect-error problem codes are a closed set
  const code: 'no_such_code' = stale.error!.code;
  // @ts-expect-error there is no such operation
  type Missing = operations['noSuchOperation'];
  return code as unknown as Missing;
}
`;

const ctx = useCaller({ listen: true, plan: 'developer_agent' });
let token: string;
let mappingId: string;

beforeAll(async () => {
  ({ token, mappingId } = ctx);
  const live = (await (await fetch(`${ctx.url}/openapi.json`)).json()) as Parameters<typeof openapiTS>[0];
  mkdirSync(dir, { recursive: true });
  // defaultNonNullable off: a request field with a default (dryRun) stays optional, as the document
  // says (it is not in `required`); the option's default would make callers send it.
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(live, { defaultNonNullable: false })));
  writeFileSync(join(dir, 'client.ts'), clientSource);
  writeFileSync(join(dir, 'misuse.ts'), misuseSource);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a client generated from /openapi.json', () => {
  it('has named operations, and type-checks: usage compiles, misuse does not', () => {
    const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), (file) => ts.sys.readFile(file));
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
    const program = ts.createProgram({ rootNames: [join(dir, 'client.ts'), join(dir, 'misuse.ts')], options });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
    const generated = program.getSourceFile(join(dir, 'api.ts'))!.text;
    for (const id of ['listNotes', 'readNote', 'writeNote', 'deleteNote', 'applyTransaction', 'listEvents', 'createProposal', 'listWorkspaces']) expect(generated).toContain(`    ${id}: {`);
  }, 60_000);

  it('calls the operations against a listening app', async () => {
    const { scenario } = (await import(join(dir, 'client.ts'))) as { scenario: (baseUrl: string, token: string, mappingId: string) => Promise<Record<string, unknown>> };
    const result = await scenario(ctx.url, token, mappingId);
    expect(result).toMatchObject({
      created: { status: 201, operation: 'create', location: `/api/dev/notes/Client/Typed.md?mappingId=${mappingId}` },
      notes: ['Client/Typed.md'],
      read: { title: 'Typed' },
      cached: 304,
      stale: { status: 409, code: 'revision_conflict', contentType: 'application/problem+json; charset=utf-8' },
      deleted: { status: 200, trashId: expect.any(String) },
      workspaces: 0,
    });
    const created = result['created'] as { revision: string; etag: string };
    expect(created.etag).toBe(`"${created.revision}"`);
    expect((result['read'] as { etag: string }).etag).toBe(created.etag);
    expect((result['stale'] as { currentRevision: string }).currentRevision).toBe(created.revision);
  });
});
