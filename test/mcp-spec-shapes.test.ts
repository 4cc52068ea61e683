// The spec's request shapes and the edge's hostile-input rules on the MCP gateway: the version taken
// from MCP-Protocol-Version when the body has no _meta, header/body contradictions refused in every
// era, _meta 2024-11-05, 405 for every other method, client errors that are not -32603, U+0000 and
// over-deep JSON refused before Postgres, and every tool's outputSchema matching its real results.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LEGACY_VERSION, MODERN_VERSION, PROTOCOL_VERSION_META_KEY, rpcCodes, rpcErrorFromAppError } from '../api/routes/mcp/protocol.ts';
import { toolProblemOutput } from '../api/routes/mcp/outputs.ts';
import { toolsByName } from '../api/routes/mcp/tools.ts';
import { AppError, errorCatalog } from '../domain/errors.ts';
import type { ErrorCode } from '../domain/errors.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';
import { mcpRaw } from './support/mcp.ts';

let db: TestDatabase;
let app: FastifyInstance;
let token: string;
let accountId: string;
let mcp: ReturnType<typeof mcpRaw>;
let mappingId: string;

const caller = useCaller({ plan: 'developer_agent' });
beforeAll(() => ({ db, app, token, accountId, mcp, mappingId } = caller));

let nextId = 1000;
/** A request with the given headers and no _meta unless `meta` names a version. */
const request = (method: string, params: Record<string, unknown>, headers: Record<string, string>, meta?: string) =>
  mcp.post({ jsonrpc: '2.0', id: nextId++, method, params: meta === undefined ? params : { ...params, _meta: { [PROTOCOL_VERSION_META_KEY]: meta } } }, headers);
/** The spec's shape: the version in MCP-Protocol-Version, routing headers, no _meta. */
const specShaped = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  request(method, params, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...(method === 'tools/call' ? { 'mcp-name': String(params['name']) } : {}), ...headers });

const used = async (id: string) =>
  (await db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${id} AND interface = 'mcp'`)) ?? 0;

const noteAt = async (path: string) => (await mcp.call('get_note_content', { mappingId, path })).structuredContent as { code?: string; content?: string };

describe('the version from MCP-Protocol-Version when the body carries no _meta', () => {
  it('serves server/discover, tools/list and tools/call in the 2026-07-28 era, one operation each', async () => {
    const caller = await accountWithToken(db.pool, 'premium');
    const own = mcpRaw(app, caller.token);
    const { mappingId: ownMapping } = await personalMapping(db.pool, caller.account.id);
    const shaped = (method: string, params: Record<string, unknown> = {}) =>
      own.post({ jsonrpc: '2.0', id: nextId++, method, params }, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...(method === 'tools/call' ? { 'mcp-name': String(params['name']) } : {}) });

    const discover = await shaped('server/discover');
    expect(discover.statusCode).toBe(200);
    expect(discover.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    expect(discover.data.result).toMatchObject({ server: { protocolVersion: MODERN_VERSION }, supportedVersions: [MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', LEGACY_VERSION], ttlMs: 300_000, resultType: 'complete' });
    const list = await shaped('tools/list');
    expect(list.statusCode).toBe(200);
    expect(list.data.result).toMatchObject({ ttlMs: 300_000, cacheScope: 'public', resultType: 'complete' });
    expect(list.data.result.tools).toHaveLength(8);
    const call = await shaped('tools/call', { name: 'get_vault_schema', arguments: { mappingId: ownMapping } });
    expect(call.statusCode).toBe(200);
    expect(call.data.result).toMatchObject({ resultType: 'complete', structuredContent: { mappingId: ownMapping, scannedNotes: 0 } });
    expect(call.data.result.isError).toBeUndefined();
    // The fused read takes the same path.
    const read = await shaped('tools/call', { name: 'get_note_content', arguments: { mappingId: ownMapping, path: 'None/here.md' } });
    expect(read.data.result).toMatchObject({ isError: true, resultType: 'complete', structuredContent: { code: 'note_not_found' } });
    expect(await used(caller.account.id)).toBe(4);
  });

  it('still requires Mcp-Method (and Mcp-Name for tools/call) on 2026-07-28 requests', async () => {
    const noMethod = await request('tools/list', {}, { 'mcp-protocol-version': MODERN_VERSION });
    expect([noMethod.statusCode, noMethod.data.error.code]).toEqual([400, -32020]);
    const noName = await request('tools/call', { name: 'get_vault_schema', arguments: { mappingId } }, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call' });
    expect([noName.statusCode, noName.data.error.code]).toEqual([400, -32020]);
  });

  it('refuses a version it does not serve with -32022, but lets initialize negotiate in its body', async () => {
    const unsupported = await request('tools/list', {}, { 'mcp-protocol-version': '2031-01-01', 'mcp-method': 'tools/list' });
    expect(unsupported.statusCode).toBe(400);
    expect(unsupported.data.error).toMatchObject({ code: -32022, data: { supported: [MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', LEGACY_VERSION], requested: '2031-01-01' } });
    // An unknown revision, in the header and the body: the handshake answers the newest one it negotiates.
    const init = await request('initialize', { protocolVersion: '2031-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } }, { 'mcp-protocol-version': '2031-01-01' });
    expect(init.statusCode).toBe(200);
    expect(init.data.result.protocolVersion).toBe('2025-11-25');
  });
});

describe('header/body contradictions', () => {
  it('are refused with HTTP 400 and -32020 for method, name and version, with and without _meta, consuming nothing', async () => {
    const before = await used(accountId);
    const call = { name: 'get_vault_schema', arguments: { mappingId } };
    const cases: Array<[string, string, Record<string, unknown>, Record<string, string>, string | undefined]> = [
      // no _meta, version from the header
      ['method, header version', 'tools/list', {}, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' }, undefined],
      ['name, header version', 'tools/call', call, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'search_notes' }, undefined],
      ['name on a method that names nothing', 'tools/list', {}, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list', 'mcp-name': 'search_notes' }, undefined],
      // no _meta, legacy
      ['name, legacy header version', 'tools/call', call, { 'mcp-protocol-version': LEGACY_VERSION, 'mcp-name': 'search_notes' }, undefined],
      ['name, no version at all', 'tools/call', call, { 'mcp-name': 'search_notes' }, undefined],
      ['method, legacy header version', 'tools/list', {}, { 'mcp-protocol-version': LEGACY_VERSION, 'mcp-method': 'ping' }, undefined],
      // _meta 2026-07-28
      ['method, _meta', 'tools/list', {}, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'ping' }, MODERN_VERSION],
      ['name, _meta', 'tools/call', call, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'search_notes' }, MODERN_VERSION],
      ['version, _meta', 'tools/list', {}, { 'mcp-protocol-version': LEGACY_VERSION, 'mcp-method': 'tools/list' }, MODERN_VERSION],
      // _meta 2024-11-05
      ['version, _meta 2024-11-05', 'tools/list', {}, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' }, LEGACY_VERSION],
      ['method, _meta 2024-11-05', 'tools/list', {}, { 'mcp-method': 'ping' }, LEGACY_VERSION],
      ['name, _meta 2024-11-05', 'tools/call', call, { 'mcp-name': 'search_notes' }, LEGACY_VERSION],
    ];
    for (const [label, method, params, headers, meta] of cases) {
      const res = await request(method, params, headers, meta);
      expect({ label, status: res.statusCode, code: res.data.error?.code }).toEqual({ label, status: 400, code: -32020 });
      expect(res.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    }
    expect(await used(accountId)).toBe(before);
  });

  it('never runs the body’s tool when Mcp-Name names another', async () => {
    const res = await request(
      'tools/call',
      { name: 'create_or_append_note', arguments: { mappingId, path: 'Shapes/Smuggled.md', content: 'x', dryRun: false, idempotencyKey: 'smuggled' } },
      { 'mcp-name': 'get_vault_schema' },
    );
    expect([res.statusCode, res.data.error.code]).toEqual([400, -32020]);
    expect(res.data.error.data).toMatchObject({ header: 'Mcp-Name', headerValue: 'get_vault_schema', bodyValue: 'create_or_append_note' });
    expect((await noteAt('Shapes/Smuggled.md')).code).toBe('note_not_found');
  });
});

describe('_meta 2024-11-05', () => {
  it('is accepted and answered with the legacy era’s results', async () => {
    const list = await request('tools/list', {}, {}, LEGACY_VERSION);
    expect(list.statusCode).toBe(200);
    expect(list.data.result.tools).toHaveLength(8);
    expect(list.data.result.resultType).toBeUndefined();
    expect(list.data.result.ttlMs).toBeUndefined();
    const withHeaders = await request('tools/call', { name: 'get_vault_schema', arguments: { mappingId } }, { 'mcp-protocol-version': LEGACY_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'get_vault_schema' }, LEGACY_VERSION);
    expect(withHeaders.statusCode).toBe(200);
    expect(withHeaders.data.result).toMatchObject({ structuredContent: { mappingId } });
    expect(withHeaders.data.result.resultType).toBeUndefined();
    expect((await request('ping', {}, {}, LEGACY_VERSION)).data.result).toEqual({});
  });
});

describe('HTTP methods other than POST', () => {
  it('answer 405 with Allow: POST and the protocol version header', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'] as const) {
      const res = await app.inject({ method, url: '/api/mcp', headers: { 'content-type': 'application/json' }, ...(method === 'PUT' || method === 'PATCH' ? { payload: '{}' } : {}) });
      expect({ method, status: res.statusCode }).toEqual({ method, status: 405 });
      expect(res.headers['allow']).toBe('POST');
      expect(res.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
      expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'method_not_allowed' } } });
    }
  });
});

describe('client errors are never -32603', () => {
  it('415 for another content type, 413 for an over-large body: -32600 with the REST code', async () => {
    const badType = await app.inject({ method: 'POST', url: '/api/mcp', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, payload: 'ping' });
    expect(badType.statusCode).toBe(415);
    expect(JSON.parse(badType.body).error).toMatchObject({ code: -32600, data: { code: 'unsupported_media_type', status: 415 } });
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(17 * 1_048_576) } });
    const tooLarge = await mcp.post(huge);
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.data.error).toMatchObject({ code: -32600, data: { code: 'payload_too_large', status: 413 } });
  });

  it('maps every 4xx code of the catalog to a non-internal JSON-RPC code, and only 5xx to -32603', () => {
    for (const code of Object.keys(errorCatalog) as ErrorCode[]) {
      const rpc = rpcErrorFromAppError(new AppError(code), 'req-1');
      expect({ code, http: rpc.httpStatus, internal: rpc.rpcCode === rpcCodes.internalError }).toEqual({ code, http: errorCatalog[code].status, internal: errorCatalog[code].status >= 500 });
      expect(rpc.data).toMatchObject({ code, status: errorCatalog[code].status });
    }
  });
});

describe('U+0000 and over-deep JSON', () => {
  const nul = 'a\u0000b';

  it('refuses NUL in search_notes query and pathPrefix as an invalid argument (invalid_character), never a 500', async () => {
    for (const [field, args] of [
      ['query', { mappingId, query: nul }],
      ['pathPrefix', { mappingId, query: 'anything', pathPrefix: `Projects/${nul}` }],
    ] as const) {
      for (const send of [() => mcp.modern('tools/call', { name: 'search_notes', arguments: args }), () => specShaped('tools/call', { name: 'search_notes', arguments: args }), () => mcp.legacy('tools/call', { name: 'search_notes', arguments: args })]) {
        const res = await send();
        expect(res.statusCode).toBe(200);
        expect(res.data.result).toMatchObject({ isError: true, structuredContent: { code: 'invalid_character', status: 400, errors: [{ pointer: `/arguments/${field}` }] } });
        expect(res.data.result.content[0].text).toMatch(/^invalid_character: /);
      }
    }
  });

  it('writes nothing when create_or_append_note content or path holds a NUL', async () => {
    const content = await mcp.call('create_or_append_note', { mappingId, path: 'Shapes/Written.md', content: `# Title\n${nul}`, dryRun: false, idempotencyKey: 'nul-content' });
    expect(content).toMatchObject({ isError: true, structuredContent: { code: 'invalid_character', errors: [{ pointer: '/arguments/content' }] } });
    expect((await noteAt('Shapes/Written.md')).code).toBe('note_not_found');
    const path = await mcp.call('create_or_append_note', { mappingId, path: `Shapes/${nul}.md`, content: 'x', dryRun: false, idempotencyKey: 'nul-path' });
    expect(path).toMatchObject({ isError: true, structuredContent: { code: 'invalid_character', errors: [{ pointer: '/arguments/path' }] } });
    const tx = await mcp.call('apply_note_transaction', { mappingId, actions: [{ type: 'write-note', path: 'Shapes/Tx.md', content: nul }], dryRun: false, idempotencyKey: 'nul-tx' });
    expect(tx).toMatchObject({ isError: true, structuredContent: { code: 'invalid_character', errors: [{ pointer: '/arguments/actions/0/content' }] } });
    expect((await noteAt('Shapes/Tx.md')).code).toBe('note_not_found');
    // The fused read refuses it too, before Postgres.
    const read = await mcp.call('get_note_content', { mappingId, path: `Shapes/${nul}.md` });
    expect(read).toMatchObject({ isError: true, structuredContent: { code: 'invalid_character' } });
    const events = (await mcp.call('get_knowledge_events', { mappingId })).structuredContent as { events: Array<{ path: string }> };
    expect(events.events.filter((e) => e.path.startsWith('Shapes/'))).toEqual([]);
  });

  it('reserves one operation for a NUL in tool arguments (an invalid argument), none for one in the envelope', async () => {
    const caller = await accountWithToken(db.pool, 'team');
    const own = mcpRaw(app, caller.token);
    expect((await own.call('search_notes', { mappingId, query: nul })).structuredContent.code).toBe('invalid_character');
    expect(await used(caller.account.id)).toBe(1);
    const inName = await own.post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: `search_notes${nul}`, arguments: {} } });
    expect(inName.statusCode).toBe(400);
    expect(inName.data).toMatchObject({ id: 5, error: { code: -32602, data: { code: 'invalid_character', errors: [{ pointer: '/params/name' }] } } });
    const inMethod = await own.post({ jsonrpc: '2.0', id: 6, method: `ping${nul}` });
    expect(inMethod.statusCode).toBe(400);
    expect(inMethod.data).toMatchObject({ id: 6, error: { code: -32600, data: { code: 'invalid_character' } } });
    const inMeta = await own.post({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { [PROTOCOL_VERSION_META_KEY]: `${MODERN_VERSION}${nul}` } } });
    expect(inMeta.statusCode).toBe(400);
    expect(inMeta.data.error.data.code).toBe('invalid_character');
    expect(await used(caller.account.id)).toBe(1);
  });

  it('refuses 60,000-deep JSON (~300 KB) with HTTP 400 and json_too_deep, never a 500', async () => {
    const depth = 60_000;
    const deepArgs = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"translate_canvas","arguments":{"canvas":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}}`;
    expect(deepArgs.length).toBeGreaterThan(300_000);
    const res = await mcp.post(deepArgs, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'translate_canvas' });
    expect(res.statusCode).toBe(400);
    expect(res.data).toMatchObject({ id: 42, error: { code: -32600, data: { code: 'json_too_deep', maxDepth: 64 } } });
    const deepArray = await mcp.post(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(deepArray.statusCode).toBe(400);
    expect(deepArray.data).toMatchObject({ id: null, error: { code: -32600, data: { code: 'json_too_deep' } } });
    // Deep and NUL together: still one refusal, never a 500.
    const both = await mcp.post(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"search_notes","arguments":{"query":"\\u0000","x":${'['.repeat(depth)}${']'.repeat(depth)}}}}`);
    expect(both.statusCode).toBeLessThan(500);
  });
});

describe('outputSchema', () => {
  const validator = new AjvJsonSchemaValidator();

  it('is declared for all eight tools (type object), and every real result conforms to it and to the zod schema', async () => {
    const list = await mcp.modern('tools/list');
    const listed = list.data.result.tools as Array<{ name: string; outputSchema: Record<string, unknown> }>;
    expect(listed).toHaveLength(8);
    for (const t of listed) {
      expect({ name: t.name, type: t.outputSchema?.['type'] }).toEqual({ name: t.name, type: 'object' });
      expect(t.outputSchema['$schema']).toBeUndefined();
    }
    const published = new Map(listed.map((t) => [t.name, validator.getValidator(t.outputSchema)]));

    const { mappingId: vault } = await personalMapping(db.pool, accountId);
    const results: Array<[string, Record<string, unknown>]> = [];
    const run = async (name: string, args: Record<string, unknown>) => {
      const result = (await mcp.call(name, args)) as { isError?: boolean; structuredContent: Record<string, unknown>; content: Array<{ text: string }> };
      expect(result.isError, `${name}: ${result.content[0]?.text}`).toBeFalsy();
      results.push([name, result.structuredContent]);
      return result.structuredContent;
    };
    const actions = [
      { type: 'write-note', path: 'Out/Hub.md', content: '# Hub\n[[Leaf]] [[Twin]] [[nowhere]]' }, // resolved, ambiguous, unresolved
      { type: 'write-note', path: 'Out/Leaf.md', content: 'back to [[Hub]]' },
      { type: 'write-note', path: 'A/Twin.md', content: 'one' },
      { type: 'write-note', path: 'B/Twin.md', content: 'two' },
    ];
    await run('apply_note_transaction', { mappingId: vault, actions }); // preview
    const applied = await run('apply_note_transaction', { mappingId: vault, actions, dryRun: false, idempotencyKey: 'out-tx' });
    await run('apply_note_transaction', { mappingId: vault, actions, dryRun: false, idempotencyKey: 'out-tx' }); // replayed
    expect(applied['applied']).toBe(true);
    await run('create_or_append_note', { mappingId: vault, path: 'Out/New.md', content: '---\nstatus: x\n---\nnew' });
    const created = await run('create_or_append_note', { mappingId: vault, path: 'Out/New.md', content: '---\nstatus: x\n---\nnew', dryRun: false, idempotencyKey: 'out-1' });
    await run('create_or_append_note', { mappingId: vault, path: 'Out/New.md', content: 'more', mode: 'append', expectedHash: created['afterRevision'], dryRun: false, idempotencyKey: 'out-2' });
    await run('search_notes', { mappingId: vault, query: 'hub' });
    await run('search_notes', { mappingId: vault, query: 'Twin', limit: 1 });
    await run('get_note_content', { mappingId: vault, path: 'Out/New.md' });
    await run('get_note_content', { mappingId: vault, path: 'Out/Hub.md' });
    const graph = await run('query_graph_relations', { mappingId: vault, path: 'Out/Hub.md' });
    expect((graph['outgoing'] as Array<{ status: string }>).map((o) => o.status).sort()).toEqual(['ambiguous', 'resolved', 'unresolved']);
    await run('translate_canvas', { canvas: { nodes: [{ id: 'g', type: 'group', label: 'G', x: 0, y: 0, width: 300, height: 300 }, { id: 't', type: 'text', text: 'x', x: 10, y: 10, width: 20, height: 20 }], edges: [] } });
    await run('get_vault_schema', { mappingId: vault });
    const events = await run('get_knowledge_events', { mappingId: vault, limit: 2 });
    await run('get_knowledge_events', { mappingId: vault, since: events['nextCursor'] });

    expect(new Set(results.map(([name]) => name)).size).toBe(8);
    for (const [name, structured] of results) {
      const verdict = published.get(name)!(structured);
      expect({ name, valid: verdict.valid, error: verdict.errorMessage }).toEqual({ name, valid: true, error: undefined });
      // Parsing strips undeclared keys: equality means the schema declares every field.
      expect(toolsByName.get(name)!.output.parse(structured)).toEqual(structured);
    }

    // An isError result carries the problem, which the published schema admits as well.
    const failed = (await mcp.call('get_note_content', { mappingId: vault, path: 'Out/None.md' })) as { isError: boolean; structuredContent: Record<string, unknown> };
    expect(failed.isError).toBe(true);
    expect(toolProblemOutput.parse(failed.structuredContent)).toEqual(failed.structuredContent);
    expect(published.get('get_note_content')!(failed.structuredContent).valid).toBe(true);
  });
});
