// The MCP gateway's protocol: both eras, header/body agreement, JSON-RPC errors, auth.
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../api/routes/mcp/protocol.ts';
import { updateAccount } from '../domain/identity/accounts.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';
import { mcpRaw } from './support/mcp.ts';

let db: TestDatabase;
let app: FastifyInstance;
let mcp: ReturnType<typeof mcpRaw>;
let mappingId: string;

const caller = useCaller({ plan: 'premium' });
beforeAll(() => ({ db, app, mcp, mappingId } = caller));

describe('stateless 2026-07-28', () => {
  it('discovers, lists and calls, every result complete, every response echoing the version', async () => {
    const discover = await mcp.modern('server/discover');
    expect(discover.statusCode).toBe(200);
    expect(discover.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    expect(discover.headers['content-type']).toContain('application/json');
    expect(discover.headers['mcp-session-id']).toBeUndefined();
    expect(discover.data.result).toMatchObject({
      server: { name: expect.any(String), version: '1.0.0', protocolVersion: MODERN_VERSION },
      // The spec's two first, then the other revisions served.
      protocolVersions: ['2026-07-28', '2024-11-05', '2025-11-25', '2025-06-18', '2025-03-26'],
      capabilities: { tools: { listChanged: false } },
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
      ttlMs: expect.any(Number),
      cacheScope: expect.stringMatching(/^(public|private)$/),
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: expect.any(String), version: '1.0.0' } },
      resultType: 'complete',
    });

    const list = await mcp.modern('tools/list');
    const tools = list.data.result.tools as Array<{ name: string; title: string; description: string; inputSchema: { type: string }; annotations: Record<string, boolean> }>;
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['apply_note_transaction', 'create_or_append_note', 'get_knowledge_events', 'get_note_content', 'get_vault_schema', 'query_graph_relations', 'search_notes', 'translate_canvas'],
    );
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.title.length).toBeGreaterThan(0);
      expect(t.description.length).toBeGreaterThan(40);
      expect(Object.keys(t.annotations)).toEqual(expect.arrayContaining(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']));
    }
    expect(list.data.result.resultType).toBe('complete');

    const call = await mcp.modern('tools/call', { name: 'get_vault_schema', arguments: { mappingId } });
    expect(call.data.result).toMatchObject({ resultType: 'complete', structuredContent: { mappingId, scannedNotes: 0 } });
  });

  it('answers header/body disagreements with HTTP 400 and -32020', async () => {
    const cases: Array<[string, Promise<{ statusCode: number; data: { error: { code: number } } }>]> = [
      ['Mcp-Method differs', mcp.modern('tools/list', {}, { 'mcp-method': 'server/discover' })],
      ['Mcp-Name differs', mcp.modern('tools/call', { name: 'get_vault_schema', arguments: { mappingId } }, { 'mcp-name': 'search_notes' })],
      ['MCP-Protocol-Version differs', mcp.modern('tools/list', {}, { 'mcp-protocol-version': '2024-11-05' })],
      ['Mcp-Method without _meta', mcp.legacy('tools/list', {}, { 'mcp-method': 'tools/list' })],
      ['Mcp-Method missing', mcp.post({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION } } }, { 'mcp-protocol-version': MODERN_VERSION })],
    ];
    for (const [label, pending] of cases) {
      const res = await pending;
      expect({ label, status: res.statusCode, code: res.data.error.code }).toEqual({ label, status: 400, code: -32020 });
    }
  });

  it('decodes =?base64?…?= header values before comparing', async () => {
    const encoded = `=?base64?${Buffer.from('get_vault_schema').toString('base64')}?=`;
    const res = await mcp.modern('tools/call', { name: 'get_vault_schema', arguments: { mappingId } }, { 'mcp-name': encoded });
    expect(res.statusCode).toBe(200);
    expect(res.data.result.isError).toBeUndefined();
  });

  it('refuses an unsupported version with HTTP 400, -32022 and the supported list', async () => {
    const res = await mcp.post(
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [PROTOCOL_VERSION_META_KEY]: '2031-01-01' } } },
      { 'mcp-protocol-version': '2031-01-01', 'mcp-method': 'tools/list' },
    );
    expect(res.statusCode).toBe(400);
    expect(res.data.error).toMatchObject({ code: -32022, data: { supported: [MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: '2031-01-01' } });
  });
});

describe('legacy clients', () => {
  it('initialize, initialized notification (202), ping, tools/list; no session id', async () => {
    const init = await mcp.legacy('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    expect(init.data.result).toMatchObject({ protocolVersion: '2024-11-05', capabilities: { tools: { listChanged: false } }, serverInfo: { version: '1.0.0' } });
    expect(init.headers['mcp-session-id']).toBeUndefined();
    expect(init.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    const echo = await mcp.legacy('initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    expect(echo.data.result.protocolVersion).toBe('2026-07-28');
    const note = await mcp.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.statusCode).toBe(202);
    expect(note.body).toBe('');
    expect((await mcp.legacy('ping')).data.result).toEqual({});
    expect((await mcp.legacy('tools/list')).data.result.tools).toHaveLength(8);
  });

  it('answers GET and DELETE with 405', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/api/mcp' });
      expect(res.statusCode).toBe(405);
      expect(res.headers['allow']).toBe('POST');
      expect(res.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    }
  });
});

describe('JSON-RPC failures', () => {
  it('maps parse errors, invalid requests, unknown methods and tools', async () => {
    const parse = await mcp.post('{"jsonrpc": "2.0", ');
    expect(parse.statusCode).toBe(400);
    expect(parse.data).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((await mcp.post({ jsonrpc: '1.0', id: 1, method: 'ping' })).data.error.code).toBe(-32600);
    // Batches exist only in 2025-03-26 (test/mcp-transport.test.ts).
    expect((await mcp.post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': '2025-06-18' })).data.error.code).toBe(-32600);
    expect((await mcp.post({ jsonrpc: '2.0', id: 1 })).data.error.code).toBe(-32600);
    expect((await mcp.post({ jsonrpc: '2.0', id: null, method: 'ping' })).data.error.code).toBe(-32600);
    const unknownMethod = await mcp.legacy('prompts/list');
    expect(unknownMethod.data.error.code).toBe(-32601);
    const unknownTool = await mcp.modern('tools/call', { name: 'delete_everything', arguments: {} });
    expect(unknownTool.data.error.code).toBe(-32602);
    const badArgs = await mcp.legacy('tools/call', { name: 'search_notes', arguments: 'not an object' });
    expect(badArgs.data.error.code).toBe(-32602);
  });

  it("reports a tool's own failure as isError with the REST code", async () => {
    const invalid = await mcp.call('search_notes', { mappingId, query: '' });
    expect(invalid).toMatchObject({ isError: true, structuredContent: { code: 'invalid_request', errors: [{ pointer: '/arguments/query' }] } });
    const foreign = await mcp.call('get_note_content', { mappingId: '00000000-0000-4000-8000-000000000000', path: 'A/b.md' });
    expect(foreign).toMatchObject({ isError: true, structuredContent: { code: 'mapping_not_found', status: 404 } });
  });
});

describe('authentication', () => {
  it('requires a bearer token (401 with WWW-Authenticate: Bearer) and accepts all four plans', async () => {
    const none = await app.inject({ method: 'POST', url: '/api/mcp', headers: { 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(none.headers['content-type']).toContain('application/json');
    expect(JSON.parse(none.body)).toMatchObject({ error: { code: -32001, data: { code: 'authentication_required' } } });
    for (const plan of ['premium', 'professional', 'developer_agent', 'team'] as const) {
      const { token } = await accountWithToken(db.pool, plan);
      expect((await mcpRaw(app, token).legacy('ping')).statusCode).toBe(200);
    }
    // Body refusals come only after authentication too.
    const badType = await app.inject({ method: 'POST', url: '/api/mcp', headers: { authorization: `Bearer hnp_pat_${'B'.repeat(43)}`, 'content-type': 'text/plain' }, payload: 'ping' });
    expect(badType.statusCode).toBe(401);
    const goodTokenBadType = await app.inject({ method: 'POST', url: '/api/mcp', headers: { authorization: `Bearer ${(await accountWithToken(db.pool, 'team')).token}`, 'content-type': 'text/plain' }, payload: 'ping' });
    expect(goodTokenBadType.statusCode).toBe(415);
    const inactive = await accountWithToken(db.pool, 'team');
    await updateAccount(db.pool, inactive.account.id, { status: 'suspended' });
    const refused = await mcpRaw(app, inactive.token).legacy('ping');
    expect(refused.statusCode).toBe(403);
    expect(refused.data.error.data.code).toBe('account_inactive');
  });
});
