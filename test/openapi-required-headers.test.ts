// Every header the server requires is `required: true` in the OpenAPI documents, and no other is
// (issue 49). Two sides, for every operation of every interface the documents publish:
// - the Product Runtime's Idempotency-Key against the SDK's operation table, the rule the server
//   enforces (operationKey refuses a request to a `required` or `caller` operation without one;
//   `apply` ones only when applying; `none` take none);
// - every header a document marks required, refused by the real server when it is left out of an
//   otherwise complete request, with the code the operation documents for it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf, runtimeByteOperations, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { IdempotencyRule } from '@hosted-notes/runtime-sdk';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import { createScope, grantScope } from '../domain/context-scopes/scopes.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { CALLBACK_PATH } from './support/connections.ts';
import { bearer, workspaceWithReviewer } from './support/fixtures.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { setBudget } from './support/intelligence.ts';
import { audioFixture } from './support/media.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { ScriptedGoogle } from './support/scripted-google.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Doc = { paths: Record<string, Record<string, Json>>; components: Record<string, Record<string, Json>> };

// Every capability configured (a scripted model provider, scripted Google), so no operation answers
// "unavailable" before it reads its headers.
const PUBLIC_BASE = 'https://notes.example.test';
const provider = useScriptedProvider();
const google = new ScriptedGoogle({ redirectUris: [`${PUBLIC_BASE}${CALLBACK_PATH}`] });
beforeAll(() => google.start());
afterAll(() => google.close());
const ctx = useTestAppWithWorker({
  name: 'openapi-required-headers',
  overrides: () => ({
    intelligence: provider.intelligence(),
    secretBox: createSecretBox(`k1:${randomBytes(32).toString('base64')}`)!,
    connections: { provider: createGoogleOAuthProvider(google.settings()), settings: google.settings(), publicBaseUrl: PUBLIC_BASE },
  }),
});
let doc: Doc;
let automation: Doc;
let chain: RuntimeChain;
let proposer: { token: string; workspaceId: string; mappingId: string };
const SCOPE = 'district';

beforeAll(async () => {
  doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
  automation = (await ctx.app.inject({ method: 'GET', url: '/api/dev/automation/openapi.json' })).json() as Doc;
  chain = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000);
  await createScope(ctx.db.pool, {
    workspaceId: chain.workspaceId,
    scopeKey: SCOPE,
    name: 'District',
    kind: 'workspace',
    audienceKind: 'workspace_members',
    audienceDescription: 'Every member of the district workspace',
    policy: { retentionDays: 365 },
  });
  await grantScope(ctx.db.pool, { workspaceId: chain.workspaceId, scopeKey: SCOPE, installationId: chain.installationId });
  const workspace = await workspaceWithReviewer(ctx.db.pool, 'Required headers');
  proposer = { token: workspace.proposer.token, workspaceId: workspace.workspaceId, mappingId: workspace.mappingId };
}, 120_000);

const RUNTIME = '/api/product/v1';
const operationsOf = (d: Doc) => Object.entries(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
const resolve = (d: Doc, value: Json): Json => {
  const ref = value['$ref'] as string | undefined;
  if (!ref) return value;
  const [, , kind, name] = ref.split('/');
  return d.components[kind!]![name!]!;
};
const headerParameters = (d: Doc, op: Json) => ((op['parameters'] ?? []) as Json[]).map((p) => resolve(d, p)).filter((p) => p['in'] === 'header');
const requiredHeaders = (d: Doc, op: Json) => headerParameters(d, op).filter((p) => p['required'] === true).map((p) => p['name'] as string).sort();

/** The table's rule as the server enforces it: which requests are refused without an Idempotency-Key. */
const keyRequiredOnEveryRequest = (rule: IdempotencyRule) => rule === 'required' || rule === 'caller';

const table = Object.entries({ ...runtimeOperations, ...runtimeByteOperations }) as Array<[keyof typeof runtimeOperations, { method: string; path: string; idempotency: IdempotencyRule }]>;
const openApiPath = (path: string) => `${RUNTIME}${path.replace(/:([A-Za-z]+)/g, '{$1}')}`;

describe('the Product Runtime: Idempotency-Key as the operation table says the server enforces it', () => {
  it.each(table)('%s', (name, facts) => {
    for (const d of [doc]) {
      const op = d.paths[openApiPath(facts.path)]?.[facts.method.toLowerCase()];
      expect(op?.['operationId'], `${facts.method} ${facts.path}`).toBe(operationIdOf(name));
      const keys = headerParameters(d, op!).filter((p) => p['name'] === 'Idempotency-Key');
      if (facts.idempotency === 'none') {
        expect(keys, 'takes no Idempotency-Key').toEqual([]);
        continue;
      }
      expect(keys, 'one Idempotency-Key parameter').toHaveLength(1);
      expect({ rule: facts.idempotency, required: keys[0]!['required'] }).toEqual({ rule: facts.idempotency, required: keyRequiredOnEveryRequest(facts.idempotency) });
    }
  });
});

/** The code each header's absence is refused with (the operation must document it). */
const refusalOf: Record<string, string> = {
  'Idempotency-Key': 'idempotency_key_required',
  'X-Media-Reference': 'media_reference_invalid',
  'X-Media-Duration-Seconds': 'media_duration_invalid',
};

/** Path parameters of an otherwise complete request: the chain's own where the server looks them up before the header. */
function fillPath(path: string): string {
  const values: Record<string, string> = { vaultId: chain.vaultId, scopeId: SCOPE, connectionId: '6a1f0e2d-3c4b-4a59-8e7f-1d2c3b4a5e6f', courseId: '7001' };
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x'));
}

/** A createProposal example with the proposer's workspace and mapping in place of the example's. */
function withProposerIds(payload: string): string {
  const example = JSON.parse(payload) as Json;
  return JSON.stringify({ ...example, workspaceId: proposer.workspaceId, action: { ...example['action'], mappingId: proposer.mappingId } });
}

/** The operation's own request example: what a client following the document sends. */
function exampleBody(op: Json): { payload?: string | Buffer; contentType?: string } {
  const content = op['requestBody']?.['content'] as Record<string, Json> | undefined;
  if (!content) return {};
  const json = content['application/json'];
  if (json) {
    const example = json['example'] ?? (Object.values(json['examples'] ?? {})[0] as Json | undefined)?.['value'];
    expect(example, `${op['operationId']} has a request example`).toBeDefined();
    return { payload: JSON.stringify(example), contentType: 'application/json' };
  }
  // Raw audio (uploadAudio): real bytes of a recognized type.
  return { payload: audioFixture('tone-3s.m4a'), contentType: 'audio/mp4' };
}

describe('every operation that documents a refusal for a missing header', () => {
  it('declares the header (required, or optional where only some requests need it)', () => {
    const undeclared: string[] = [];
    for (const { op } of operationsOf(doc)) {
      const documented = new Set(Object.values(op['responses'] as Record<string, Json>).flatMap((r) => Object.keys(resolve(doc, r)['content']?.['application/problem+json']?.['examples'] ?? {})));
      const declared = headerParameters(doc, op).map((p) => p['name'] as string);
      for (const [header, code] of Object.entries(refusalOf)) if (documented.has(code) && !declared.includes(header)) undeclared.push(`${op['operationId']}: ${code} without ${header}`);
    }
    expect(undeclared).toEqual([]);
  });
});

describe('every header a document requires is refused when it is missing', () => {
  // The automation document is a subset of the whole: its operations require what the whole says.
  const required = () => operationsOf(doc).flatMap(({ path, method, op }) => requiredHeaders(doc, op).map((header) => ({ d: doc, path, method, op, header })));

  it('the automation document requires what the whole one does', () => {
    for (const { path, method, op } of operationsOf(automation)) expect(requiredHeaders(automation, op), op['operationId']).toEqual(requiredHeaders(doc, doc.paths[path]![method]!));
  });

  it('the documents require headers (the probe below has something to drive)', () => {
    expect(required().map(({ op, header }) => `${op['operationId']} ${header}`)).toEqual(expect.arrayContaining(['createProposal Idempotency-Key', 'generate Idempotency-Key', 'uploadAudio X-Media-Reference']));
  });

  it('by the real server, with the code the operation documents', { timeout: 120_000 }, async () => {
    const answers: string[] = [];
    const expected: string[] = [];
    for (const { d, path, method, op, header } of required()) {
      const code = refusalOf[header];
      expect(code, `a refusal code known for ${header}`).toBeDefined();
      const documented = Object.values(op['responses'] as Record<string, Json>).flatMap((r) => Object.keys(resolve(d, r)['content']?.['application/problem+json']?.['examples'] ?? {}));
      expect(documented, `${op['operationId']} documents ${code}`).toContain(code);
      const { payload, contentType } = exampleBody(op);
      const headers: Record<string, string> = path.startsWith(RUNTIME) ? { authorization: `Bearer ${chain.secret}` } : bearer(proposer.token);
      if (contentType) headers['content-type'] = contentType;
      // Every other required header with its documented example, so only `header` is missing.
      for (const other of headerParameters(d, op)) if (other['required'] === true && other['name'] !== header) headers[String(other['name']).toLowerCase()] = String(other['example']);
      // The example's workspace and mapping become the proposer's own.
      const body = op['operationId'] === 'createProposal' && typeof payload === 'string' ? withProposerIds(payload) : payload;
      const res = await ctx.app.inject({ method: method.toUpperCase() as 'POST', url: fillPath(path), headers, ...(body !== undefined ? { payload: body } : {}) });
      const problem = res.headers['content-type']?.toString().startsWith('application/problem+json') ? (res.json() as Json) : undefined;
      const answered = problem?.['code'] === code ? code : `${String(problem?.['code'] ?? 'no problem')} (${res.body.slice(0, 300)})`;
      answers.push(`${op['operationId']} without ${header}: ${res.statusCode} ${answered}`);
      expected.push(`${op['operationId']} without ${header}: 400 ${code}`);
    }
    expect(answers).toEqual(expected);
    expect(provider.calls, 'nothing reached the model').toHaveLength(0);
  });
});
