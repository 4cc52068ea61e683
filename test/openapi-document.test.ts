// The OpenAPI documents are complete: every operation named, described, with its headers, its
// problem codes as application/problem+json and realistic examples; the automation document is a
// closed subset; servers default to a relative URL. (redocly lints them in .ci/run.)
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCatalog } from '../domain/errors.ts';
import type { ErrorCode } from '../domain/errors.ts';
import { documentationGaps, documentedOperationIds } from '../api/openapi.ts';
import { buildTestApp } from './support/app.ts';
import { useTestApp } from './support/harness.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Doc = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, Json>>; components: Record<string, Record<string, Json>>; tags: Array<{ name: string }> };

const ctx = useTestApp();
let app: FastifyInstance;
let doc: Doc;
let automation: Doc;

beforeAll(async () => {
  app = ctx.app;
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
  automation = (await app.inject({ method: 'GET', url: '/api/dev/automation/openapi.json' })).json() as Doc;
});

const operationsOf = (d: Doc) => Object.entries(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
const byId = (id: string) => operationsOf(doc).find((o) => o.op['operationId'] === id)!.op;
const resolve = (d: Doc, value: Json): Json => {
  const ref = value['$ref'] as string | undefined;
  if (!ref) return value;
  const [, , kind, name] = ref.split('/');
  return d.components[kind!]![name!]!;
};
const headerNames = (op: Json) => (op['parameters'] as Json[]).map((p) => resolve(doc, p)).filter((p) => p['in'] === 'header').map((p) => p['name']);

describe('operations', () => {
  it('are all named, described and known, with stable camelCase operationIds', () => {
    expect(documentationGaps(doc as never)).toEqual([]);
    const ids = operationsOf(doc).map((o) => o.op['operationId'] as string);
    // The Product Runtime's operations are documented beside their routes, from the SDK's table (test/runtime-operations.test.ts);
    // MCP's endpoint in its contribution (api/routes/mcp/openapi-docs.ts).
    const outsideRuntime = operationsOf(doc).filter((o) => !o.path.startsWith('/api/product/v1/')).map((o) => o.op['operationId'] as string);
    expect(outsideRuntime.sort()).toEqual([...documentedOperationIds, 'callMcp'].sort());
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z]+$/);
    for (const id of ['listNotes', 'readNote', 'writeNote', 'deleteNote', 'applyTransaction', 'listEvents', 'createProposal', 'listWorkspaces', 'callMcp', 'ingestEvent']) {
      expect(ids).toContain(id);
    }
    for (const { op } of operationsOf(doc)) {
      expect(op['summary'], op['operationId']).toEqual(expect.any(String));
      expect(op['description'], op['operationId']).toEqual(expect.any(String));
    }
  });

  it('declare the request headers the routes read', () => {
    expect(headerNames(byId('writeNote'))).toEqual(['Idempotency-Key', 'X-Service-Mapping', 'If-Match', 'If-None-Match']);
    expect(headerNames(byId('deleteNote'))).toEqual(['Idempotency-Key', 'X-Service-Mapping', 'If-Match']);
    expect(headerNames(byId('readNote'))).toEqual(['X-Service-Mapping', 'If-None-Match']);
    expect(headerNames(byId('createProposal'))).toEqual(['Idempotency-Key']);
    expect(resolve(doc, byId('createProposal')['parameters'].find((p: Json) => resolve(doc, p)['name'] === 'Idempotency-Key'))['required']).toBe(true);
    expect(headerNames(byId('callMcp'))).toEqual(['MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name']);
    // Accept: text/markdown is content negotiation: the read offers both media types.
    expect(Object.keys(byId('readNote')['responses']['200']['content'])).toEqual(['application/json', 'text/markdown']);
  });

  it("state the form of a list parameter: changedFrom's comma-separated states as a pattern", () => {
    const changedFrom = resolve(doc, byId('readProposal')['parameters'].find((p: Json) => resolve(doc, p)['name'] === 'changedFrom'));
    const pattern = new RegExp(changedFrom['schema']['pattern'] as string);
    expect(['approved', 'approved,executing'].map((v) => pattern.test(v))).toEqual([true, true]);
    expect(['', 'approved,', 'approved,,executing', 'pondering'].map((v) => pattern.test(v))).toEqual([false, false, false, false]);
  });

  it('declare the response headers the routes send', () => {
    const headers = (id: string, status: string) => Object.keys(byId(id)['responses'][status]['headers'] ?? {});
    for (const { op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries(op['responses'] as Record<string, Json>)) expect(Object.keys(response['headers'] ?? {}), `${op['operationId']} ${status}`).toContain('X-Request-Id');
    }
    expect(headers('writeNote', '201')).toEqual(['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'ETag', 'Location', 'Idempotent-Replayed']);
    expect(headers('readNote', '304')).toEqual(expect.arrayContaining(['ETag']));
    expect(headers('listNotes', '429')).toEqual(['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy']);
    expect(headers('listNotes', '401')).toContain('WWW-Authenticate');
    expect(headers('writeNote', '409')).toContain('Retry-After'); // idempotency_in_flight
    for (const id of ['createProposal', 'createTrigger', 'createWebhookEndpoint', 'ingestEvent']) expect(headers(id, '201'), id).toContain('Location');
    expect(headers('checkLiveness', '200')).toEqual(['X-Request-Id']); // public: nothing counted
    expect(headers('callMcp', '200')).toContain('MCP-Protocol-Version');
  });

  it('answer every 4xx/5xx as application/problem+json with its codes, one example per code (MCP answers JSON-RPC)', () => {
    for (const { op } of operationsOf(doc)) {
      const id = op['operationId'] as string;
      const errors = Object.entries(op['responses'] as Record<string, Json>).filter(([status]) => Number(status) >= 400);
      expect(errors.length, id).toBeGreaterThan(0);
      for (const [status, response] of errors) {
        if (id === 'callMcp') {
          expect(Object.keys(response['content'])).toEqual(['application/json']);
          continue;
        }
        expect(Object.keys(response['content']), `${id} ${status}`).toEqual(['application/problem+json']);
        const media = response['content']['application/problem+json'];
        expect(media['schema']).toEqual({ $ref: '#/components/schemas/Problem' });
        const codes = Object.keys(media['examples']) as ErrorCode[];
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) {
          expect(errorCatalog[code].status, `${id} ${code}`).toBe(Number(status));
          expect(response['description']).toContain(`\`${code}\``);
          expect(media['examples'][code]['value']).toMatchObject({ code, status: Number(status), type: `/problems/${code}`, instance: expect.stringMatching(/^\/[^{}]*$/) });
        }
      }
    }
    const codesOf = (id: string, status: string) => Object.keys(byId(id)['responses'][status]['content']['application/problem+json']['examples']);
    expect(codesOf('writeNote', '409')).toEqual(['revision_conflict', 'path_case_conflict', 'idempotency_in_flight']);
    expect(codesOf('writeNote', '412')).toEqual(['precondition_failed']);
    expect(codesOf('writeNote', '428')).toEqual(['revision_required']);
    expect(codesOf('listNotes', '401')).toEqual(['authentication_required', 'invalid_token']);
    expect(codesOf('checkReadiness', '503')).toEqual(['not_ready']);
    expect(byId('checkLiveness')['responses']['401']).toBeUndefined();
  });

  it('carry realistic examples: a request and a response example per operation, no generated extremes', () => {
    for (const { op } of operationsOf(doc)) {
      const id = op['operationId'] as string;
      const body = op['requestBody']?.['content']?.['application/json'];
      if (body) expect(body['example'] ?? body['examples'], `${id} request`).toBeDefined();
      for (const [status, response] of Object.entries(op['responses'] as Record<string, Json>)) {
        const json = response['content']?.['application/json'] ?? response['content']?.['application/problem+json'];
        if (json) expect(json['example'] ?? json['examples'], `${id} ${status}`).toBeDefined();
      }
    }
    const text = JSON.stringify(doc);
    expect(text).not.toContain('9007199254740991'); // zod's safe-integer bounds, which sample generators showed
    expect(byId('readNote')['responses']['200']['content']['text/markdown']['example']).toContain('# Q3 plan');
  });

  it('describe the MCP endpoint as JSON-RPC, not an empty body', () => {
    const body = resolve(doc, byId('callMcp')['requestBody']['content']['application/json']['schema']);
    expect(body['properties']).toMatchObject({ jsonrpc: { const: '2.0' }, method: { type: 'string' } });
    expect(body['required']).toEqual(expect.arrayContaining(['jsonrpc', 'method']));
    expect(Object.keys(byId('callMcp')['requestBody']['content']['application/json']['examples'])).toContain('searchModern');
  });
});

describe('documents', () => {
  it('resolve every $ref, in the whole document and in the automation subset', () => {
    for (const d of [doc, automation]) {
      const refs = JSON.stringify(d).match(/"\$ref":"[^"]+"/g) ?? [];
      for (const ref of new Set(refs)) {
        const [, , kind, name] = ref.slice(8, -1).split('/');
        expect(d.components[kind!]?.[name!], ref).toBeDefined();
      }
    }
  });

  it('keep the automation document to its paths and the components they use', () => {
    expect(Object.keys(automation.paths).length).toBeGreaterThan(15);
    expect(Object.keys(automation.paths).every((p) => p.startsWith('/api/dev/automation/'))).toBe(true);
    expect(automation.components['schemas']).not.toHaveProperty('Note');
    expect(automation.components['schemas']).toHaveProperty('Problem');
    expect(automation.tags.map((t) => t.name).sort()).toEqual(['automation', 'documentation']);
  });

  it('publish a relative server by default, PUBLIC_BASE_URL when set', async () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const configured = await buildTestApp(ctx.db.pool, { publicBaseUrl: 'https://notes.example.com' });
    try {
      const published = (await configured.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
      expect(published.servers).toEqual([expect.objectContaining({ url: 'https://notes.example.com' })]);
      expect(Object.keys(published.paths)).toContain('/api/dev/notes');
    } finally {
      await configured.close();
    }
  });
});
