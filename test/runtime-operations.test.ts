// One declaration per operation: the SDK's operation table (packages/runtime-sdk/src/operations.ts)
// is what the service's routes, its OpenAPI document, the education pack's composition and both SDK
// adapters say about every Product Runtime operation. Each is compared with the table, operation by
// operation; the list of operations is the table's own, so a new one is covered by being declared.
import { readFileSync } from 'node:fs';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostedRuntime, operationIdOf, RUNTIME_MOUNT, runtimeByteOperations, runtimeOperations, RuntimeError } from '@hosted-notes/runtime-sdk';
import type { IdempotencyRule, RuntimeAdapter, RuntimeByteOperationName, RuntimeOperationName } from '@hosted-notes/runtime-sdk';
import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
import { buildApp } from '../api/app.ts';
import { completeOperationRoute, meteredProblems, operationKey, operationRoute } from '../api/routes/product/operation-route.ts';
import { AppError } from '../domain/errors.ts';
import { findPack } from '../domain/product-runtime/packs/index.ts';
import { lazyTemporalConnection } from '../platform/temporal.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Name = RuntimeOperationName | RuntimeByteOperationName;

const MOUNT = RUNTIME_MOUNT;
const every: Array<[Name, { method: string; path: string; scope: string | null; vault: boolean; idempotency: IdempotencyRule; metered: string | false; kind?: string }]> = [
  ...Object.entries(runtimeOperations),
  ...Object.entries(runtimeByteOperations),
] as never;

// The document is built as the export script builds it: no database, Temporal never reached.
let app: FastifyInstance;
let doc: { paths: Record<string, Record<string, Json>>; components: Record<string, Record<string, Json>> };
beforeAll(async () => {
  const db = new Proxy({} as DatabasePool, {
    get(_target, property) {
      throw new Error(`the database was used (${String(property)}) while building the document`);
    },
  });
  app = await buildApp({ db, temporal: { connection: lazyTemporalConnection('127.0.0.1:7233'), namespace: 'default', taskQueue: 'runtime-operations' }, logger: pino({ level: 'silent' }) });
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await app?.close();
});

const openApiPath = (path: string) => `${MOUNT}${path.replace(/:(\w+)/g, '{$1}')}`;
const resolve = (value: Json): Json => {
  const ref = value['$ref'] as string | undefined;
  if (!ref) return value;
  const [, , kind, name] = ref.split('/');
  return doc.components[kind!]![name!]!;
};
const problemCodes = (op: Json) =>
  new Set(
    Object.entries(op['responses'] as Record<string, Json>)
      .filter(([status]) => Number(status) >= 400)
      .flatMap(([, response]) => Object.keys(resolve(response)['content']?.['application/problem+json']?.['examples'] ?? {})),
  );
const envelopeName = (kind: string) => `${kind.split(/[.-]/).map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}Envelope`;

describe('the OpenAPI document says what the table says', () => {
  it.each(every)('%s', (name, facts) => {
    const op = doc.paths[openApiPath(facts.path)]?.[facts.method.toLowerCase()];
    expect(op, `${facts.method} ${facts.path}`).toBeDefined();
    expect(op!['operationId']).toBe(operationIdOf(name));
    expect(op!['summary']).toBe(`${name}: ${(facts as { summary?: string }).summary}`);
    const headers = (op!['parameters'] as Json[]).map((p) => p['$ref'] as string | undefined);
    expect(headers.find((ref) => ref?.startsWith('#/components/parameters/RuntimeIdempotencyKey')), 'Idempotency-Key header').toBe(facts.idempotency === 'none' ? undefined : facts.idempotency === 'apply' ? '#/components/parameters/RuntimeIdempotencyKeyToApply' : '#/components/parameters/RuntimeIdempotencyKey');
    const codes = problemCodes(op!);
    expect(codes.has('scope_missing'), 'scope_missing').toBe(facts.scope !== null);
    expect(codes.has('idempotency_key_reused'), 'keyed refusals').toBe(facts.idempotency !== 'none');
    for (const code of meteredProblems) expect(codes.has(code), code).toBe(facts.metered !== false);
    expect(facts.path.includes(':vaultId')).toBe(facts.vault);
    const success = Object.keys(op!['responses'] as Json).filter((status) => status.startsWith('2')).sort()[0]!;
    if (facts.kind) expect(op!['responses'][success]['content']['application/json']['schema']['$ref']).toBe(`#/components/schemas/${envelopeName(facts.kind)}`);
  });

  it('has no runtime operation the table does not declare, but the public presentation', () => {
    const declared = new Set(every.map(([, facts]) => `${facts.method} ${openApiPath(facts.path)}`));
    const published = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(`${MOUNT}/`))
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, id: op['operationId'] as string })));
    expect(published.filter((p) => !declared.has(p.at)).map((p) => p.id).sort()).toEqual(['getPublicPresentation']);
  });
});

describe("the education pack's composition says what the table says", () => {
  const listed = findPack('education', 1)!.vertical.operations;
  const marked = every.filter(([, facts]) => (facts as { pack?: string }).pack === 'education');

  it('lists exactly the operations the table marks for it', () => {
    expect(listed.map((op) => op.operation)).toEqual(marked.map(([name]) => name));
  });

  it.each(marked)('%s', (name, facts) => {
    const op = listed.find((o) => o.operation === name)!;
    expect(op).toEqual({
      id: facts.path.replace('/intelligence/education/', ''),
      operation: name,
      method: facts.method,
      requiredScope: facts.scope,
      deterministic: facts.metered === false,
      metered: facts.metered !== false,
      idempotencyKeyRequired: facts.idempotency === 'required' || facts.idempotency === 'caller',
      resultKind: facts.kind,
      summary: expect.any(String),
    });
  });
});

// How each operation is called through the SDK, with the arguments its signature takes. The map must
// name every operation of the table (checked below), so none is left uncalled.
const vaultId = '7e4a2c1b-9d8f-4e3a-b5c6-0a1b2c3d4e5f';
const key = { idempotencyKey: 'caller-key-1' };
const calls: Record<Name, (r: RuntimeAdapter) => Promise<unknown>> = {
  getRuntimeContext: (r) => r.getRuntimeContext(),
  getCapabilities: (r) => r.getCapabilities(),
  getWorkspace: (r) => r.getWorkspace(),
  getDomainComposition: (r) => r.getDomainComposition(),
  listNotes: (r) => r.listNotes(vaultId),
  readNote: (r) => r.readNote(vaultId, 'A.md'),
  publishNote: (r) => r.publishNote(vaultId, { path: 'A.md', content: '# A\n', mode: 'apply' }),
  bindHostedVault: (r) => r.bindHostedVault({ access: 'read', reason: 'r' }),
  listVaultBindings: (r) => r.listVaultBindings(),
  listAvailableScopes: (r) => r.listAvailableScopes(),
  getScopeContext: (r) => r.getScopeContext('s'),
  getEffectiveScopePolicy: (r) => r.getEffectiveScopePolicy('s'),
  getScopeIntelligence: (r) => r.getScopeIntelligence('s'),
  getScopeMemory: (r) => r.getScopeMemory('s'),
  createSharedMemoryCandidate: (r) => r.createSharedMemoryCandidate('s', {} as never),
  getMemoryCandidate: (r) => r.getMemoryCandidate('s', 'c'),
  generate: (r) => r.generate({} as never),
  generateImage: (r) => r.generateImage({} as never),
  listUsageReceipts: (r) => r.listUsageReceipts(),
  getUsageReceipt: (r) => r.getUsageReceipt('u'),
  getIntelligenceBudget: (r) => r.getIntelligenceBudget(),
  getGeneration: (r) => r.getGeneration('g'),
  cancelGeneration: (r) => r.cancelGeneration('g'),
  streamGeneration: (r) => r.streamGeneration('g', { after: 3 }).next(),
  educationProjection: (r) => r.educationProjection({} as never),
  recommendArtifacts: (r) => r.recommendArtifacts({} as never),
  crosswalkStandards: (r) => r.crosswalkStandards({} as never),
  studentGuidance: (r) => r.studentGuidance({} as never),
  educationQualityReview: (r) => r.educationQualityReview({} as never),
  educationPracticeReview: (r) => r.educationPracticeReview({} as never),
  assessmentDraft: (r) => r.assessmentDraft({} as never),
  rubricDraft: (r) => r.rubricDraft({} as never),
  uploadAudio: (r) => r.uploadAudio({ ...key, reference: 'ref', declaredDurationSeconds: 1, bytes: new Uint8Array([1]) }),
  readAudio: (r) => r.readAudio('m'),
  listAudio: (r) => r.listAudio(),
  getAudioMetadata: (r) => r.getAudioMetadata('m'),
  deleteAudio: (r) => r.deleteAudio('m'),
  startGoogleConnection: (r) => r.startGoogleConnection({} as never),
  listConnections: (r) => r.listConnections(),
  getConnection: (r) => r.getConnection('c'),
  revokeConnection: (r) => r.revokeConnection('c'),
  createDriveDocument: (r) => r.createDriveDocument('c', {} as never, key),
  getDriveDocument: (r) => r.getDriveDocument('c', 'f'),
  updateDriveDocument: (r) => r.updateDriveDocument('c', 'f', {} as never),
  importDriveDocument: (r) => r.importDriveDocument(vaultId, { mode: 'apply' } as never),
  listClassroomCourses: (r) => r.listClassroomCourses('c'),
  listClassroomRoster: (r) => r.listClassroomRoster('c', 'k'),
  createClassroomAssignment: (r) => r.createClassroomAssignment('c', 'k', {} as never, key),
  listAssignmentAttachments: (r) => r.listAssignmentAttachments('c', 'k', 'w'),
};

describe('the SDK adapters say what the table says', () => {
  it('the call map names every operation of the table', () => {
    expect(Object.keys(calls).sort()).toEqual(every.map(([name]) => name).sort());
  });

  it.each(every)('%s: the hosted adapter sends it where the table puts it, keyed by its rule', async (name, facts) => {
    const sent: Array<{ method: string; path: string; key: string | null }> = [];
    const runtime = createHostedRuntime({
      baseUrl: 'http://runtime.test',
      credential: 'hnp_svc_test',
      fetch: async (input, init) => {
        const url = new URL(String(input));
        sent.push({ method: init?.method ?? 'GET', path: url.pathname, key: new Headers(init?.headers).get('idempotency-key') });
        return new Response(JSON.stringify({ type: 'about:blank', title: 'Refused', status: 400, code: 'invalid_request' }), { status: 400, headers: { 'content-type': 'application/problem+json' } });
      },
    });
    await expect(calls[name](runtime)).rejects.toBeInstanceOf(RuntimeError);
    expect(sent).toHaveLength(1);
    const pattern = new RegExp(`^${MOUNT}${facts.path.replace(/:\w+/g, '[^/]+')}$`);
    expect(sent[0]!.method).toBe(facts.method);
    expect(sent[0]!.path).toMatch(pattern);
    expect(sent[0]!.key !== null, 'Idempotency-Key sent').toBe(facts.idempotency !== 'none');
    if (facts.idempotency === 'caller') expect(sent[0]!.key).toBe(key.idempotencyKey);
  });

  it.each(every)('%s: the local adapter answers it', async (name) => {
    const local = createLocalRuntime({ root: '/nonexistent-vault-for-the-operation-table-test' });
    expect(typeof (local as unknown as Record<string, unknown>)[name]).toBe('function');
  });
});

// docs/runtime-sdk.md's operations table is what a partner reads first: each row says what the table says.
describe("docs/runtime-sdk.md's operations table says what the table says", () => {
  const section = readFileSync(new URL('../docs/runtime-sdk.md', import.meta.url), 'utf8').split(/^## Operations$/m)[1]!.split(/^## /m)[0]!;
  const rows = new Map(
    section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| /, '')))
      .map((cells) => [/^`(\w+)/.exec(cells[0]!)![1]!, cells] as const),
  );

  it.each(every)('%s', (name, facts) => {
    const cells = rows.get(name);
    expect(cells, `a row for ${name}`).toBeDefined();
    expect(cells![1]).toMatch(new RegExp(`^\`${facts.method} ${facts.path.replace(/[/.]/g, '\\$&')}(\\?[^\`]*)?\``));
    if (facts.kind) expect(cells![2]).toBe(`\`${facts.kind}\``);
    expect(cells![3]!.startsWith(facts.scope === null ? 'none' : `\`${facts.scope}\``), cells![3]).toBe(true);
  });
});

// The registration guard and the key guard: what keeps a route from drifting off the table.
describe('a route cannot restate the table', () => {
  const route = (overrides: Record<string, unknown> = {}, schema: Record<string, unknown> = {}) =>
    ({ ...operationRoute('rubricDraft'), url: `${MOUNT}${runtimeOperations.rubricDraft.path}`, handler: () => undefined, schema, ...overrides }) as never;

  it('completes a declared route from the table', () => {
    const declared = route() as { schema: Record<string, unknown> };
    completeOperationRoute(declared as never, MOUNT);
    expect(declared.schema).toMatchObject({ operationId: 'rubricDraft', summary: `rubricDraft: ${runtimeOperations.rubricDraft.summary}`, tags: ['product-runtime'] });
    expect(declared.schema['problems']).toEqual(expect.arrayContaining([...meteredProblems, 'idempotency_key_required']));
  });

  it.each([
    ['another path', route({ url: `${MOUNT}/intelligence/education/rubric-drafts` }), /not at POST/],
    ['another method', route({ method: 'PUT' }), /not at POST/],
    ['another operationId', route({}, { operationId: 'educationRubricDraft' }), /names operationId educationRubricDraft/],
    ['its own summary', route({}, { summary: 'mine' }), /states its own summary/],
    ['no operation', route({ config: {} }), /not declared through operationRoute/],
  ])('refuses %s at registration', (_what, declared, message) => {
    expect(() => completeOperationRoute(declared, MOUNT)).toThrow(message);
  });
});

describe('a handler reads its Idempotency-Key only as the table allows', () => {
  const request = (operation: Name, key?: string) => ({ routeOptions: { config: { operation } }, headers: key === undefined ? {} : { 'idempotency-key': key } }) as never;

  it('answers the key of a keyed operation, and refuses a missing one', () => {
    expect(operationKey(request('generate', 'k-1'))).toBe('k-1');
    expect(() => operationKey(request('generate'))).toThrow(expect.objectContaining({ code: 'idempotency_key_required' }));
  });

  it('refuses to read a key for an operation the table declares unkeyed', () => {
    const error = (() => {
      try {
        operationKey(request('getWorkspace', 'k-1'));
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'internal_error' });
  });
});
