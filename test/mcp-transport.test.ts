// The transport rules of 2026-07-28 beside the legacy ones: no ping and no handshake on the modern
// path, "method not found" as HTTP 404 there, an invalid tools/list cursor as -32602, and the Origin
// allow-list (MCP_ALLOWED_ORIGINS) against DNS rebinding, which requests without Origin never meet.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../api/routes/mcp/protocol.ts';
import { allowedOriginsFromEnvironment, parseAllowedOrigins } from '../api/routes/mcp/origins.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import { accountWithToken } from './support/fixtures.ts';
import { mcpRaw } from './support/mcp.ts';

// One allowed browser origin (and the MCP Inspector's), as api/compose.ts reads them from MCP_ALLOWED_ORIGINS.
const ALLOWED = 'https://agents.example.com';

let db: TestDatabase;
let app: FastifyInstance;
let mappingId: string;

const caller = useCaller({ plan: 'team', overrides: { mcpAllowedOrigins: allowedOriginsFromEnvironment({ MCP_ALLOWED_ORIGINS: `${ALLOWED}, http://localhost:6274` }) } });
beforeAll(() => ({ db, app, mappingId } = caller));

const used = async (accountId: string) =>
  (await db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'mcp'`)) ?? 0;

/** A fresh account, so that what it consumed can be counted from zero. */
async function freshCaller() {
  const { account, token } = await accountWithToken(db.pool, 'premium');
  return { accountId: account.id, token, mcp: mcpRaw(app, token) };
}

describe('methods of the 2026-07-28 path', () => {
  it('answers ping and initialize as unknown methods there (HTTP 404, -32601), consuming nothing; the legacy path keeps both', async () => {
    const { accountId, mcp } = await freshCaller();
    for (const method of ['ping', 'initialize']) {
      const res = await mcp.modern(method, method === 'initialize' ? { protocolVersion: MODERN_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } } : {});
      expect({ method, status: res.statusCode, code: res.data.error?.code }).toEqual({ method, status: 404, code: -32601 });
      expect(res.data.id).toBeTypeOf('number');
      expect(res.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
    }
    expect(await used(accountId)).toBe(0);
    expect((await mcp.legacy('ping')).data.result).toEqual({});
    expect((await mcp.legacy('ping', {}, { 'mcp-protocol-version': '2025-11-25' })).data.result).toEqual({});
    expect(await used(accountId)).toBe(2);
  });

  it('pairs an unknown method with HTTP 404 on the modern path and 200 on the legacy ones', async () => {
    const { accountId, mcp } = await freshCaller();
    const modern = await mcp.modern('prompts/list');
    expect([modern.statusCode, modern.data.error.code]).toEqual([404, -32601]);
    const specShaped = await mcp.post({ jsonrpc: '2.0', id: 'x', method: 'logging/setLevel', params: { level: 'info' } }, { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'logging/setLevel' });
    expect([specShaped.statusCode, specShaped.data.id, specShaped.data.error.code]).toEqual([404, 'x', -32601]);
    for (const headers of [{}, { 'mcp-protocol-version': '2025-06-18' }, { 'mcp-protocol-version': '2024-11-05' }] as Array<Record<string, string>>) {
      const legacy = await mcp.legacy('prompts/list', {}, headers);
      expect([legacy.statusCode, legacy.data.error.code]).toEqual([200, -32601]);
    }
    expect(await used(accountId)).toBe(0);
  });
});

describe('tools/list cursor', () => {
  it('refuses any cursor (none is ever handed out) with -32602 in every era, as one operation like any recognized one; no cursor lists the page', async () => {
    const { accountId, mcp } = await freshCaller();
    for (const cursor of ['bogus', '', 'eyJwYWdlIjogMn0=']) {
      const modern = await mcp.modern('tools/list', { cursor });
      expect({ cursor, status: modern.statusCode, code: modern.data.error?.code }).toEqual({ cursor, status: 200, code: -32602 });
      const legacy = await mcp.legacy('tools/list', { cursor }, { 'mcp-protocol-version': '2025-11-25' });
      expect({ cursor, code: legacy.data.error?.code }).toEqual({ cursor, code: -32602 });
    }
    expect(await used(accountId)).toBe(6);
    const page = await mcp.modern('tools/list');
    expect(page.data.result.tools).toHaveLength(8);
    expect(page.data.result.nextCursor).toBeUndefined();
    expect(await used(accountId)).toBe(7);
  });
});

describe('Origin', () => {
  it('serves requests without Origin and from an allowed origin', async () => {
    const { mcp } = await freshCaller();
    expect((await mcp.modern('tools/list')).statusCode).toBe(200);
    const allowed = await mcp.modern('tools/list', {}, { origin: ALLOWED });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.data.result.tools).toHaveLength(8);
    expect((await mcp.legacy('ping', {}, { origin: 'http://localhost:6274' })).statusCode).toBe(200);
  });

  it('refuses a foreign origin with 403, a JSON-RPC error without id and origin_not_allowed, before authentication, consuming nothing', async () => {
    const { accountId, mcp } = await freshCaller();
    for (const origin of ['https://evil.example', 'https://agents.example.com:8443', 'http://agents.example.com', 'null', 'https://agents.example.com.evil.example']) {
      const res = await mcp.modern('tools/call', { name: 'get_note_content', arguments: { mappingId, path: 'A/b.md' } }, { origin });
      expect({ origin, status: res.statusCode }).toEqual({ origin, status: 403 });
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.headers['mcp-protocol-version']).toBe(MODERN_VERSION);
      expect(res.data).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32003, data: { code: 'origin_not_allowed', status: 403, requestId: expect.any(String) } } });
    }
    expect(await used(accountId)).toBe(0);
    // Before the token is looked at, and for every HTTP method: a rebound page learns nothing else.
    const anonymous = await app.inject({ method: 'POST', url: '/api/mcp', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    expect(anonymous.statusCode).toBe(403);
    expect(anonymous.headers['www-authenticate']).toBeUndefined();
    const get = await app.inject({ method: 'GET', url: '/api/mcp', headers: { origin: 'https://evil.example' } });
    expect(get.statusCode).toBe(403);
    // A DNS-rebound name: the Host header says the same as Origin and proves nothing.
    const rebound = await mcp.modern('tools/list', {}, { origin: 'http://rebound.example:3000', host: 'rebound.example:3000' });
    expect(rebound.statusCode).toBe(403);
  });

  it('lets a page of an allowed origin read the answers (CORS) and answers its preflight; no CORS for anyone else', async () => {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/mcp',
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({ 'access-control-allow-origin': ALLOWED, 'access-control-allow-methods': 'POST', vary: 'Origin' });
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase().split(', ')).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']),
    );
    const { mcp } = await freshCaller();
    const answered = await mcp.modern('tools/list', {}, { origin: ALLOWED });
    expect(answered.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(answered.headers['access-control-expose-headers'])).toContain('MCP-Protocol-Version');
    // A browser client without a token can read the 401 and its WWW-Authenticate.
    const anonymous = await app.inject({ method: 'POST', url: '/api/mcp', headers: { origin: ALLOWED, 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    expect([anonymous.statusCode, anonymous.headers['access-control-allow-origin']]).toEqual([401, ALLOWED]);
    expect(String(anonymous.headers['access-control-expose-headers'])).toContain('WWW-Authenticate');
    // No Origin: no CORS headers, and OPTIONS stays 405. A foreign origin's preflight is refused.
    const plain = await mcp.modern('tools/list');
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    expect((await app.inject({ method: 'OPTIONS', url: '/api/mcp' })).statusCode).toBe(405);
    const foreign = await app.inject({ method: 'OPTIONS', url: '/api/mcp', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads its allow-list from MCP_ALLOWED_ORIGINS and PUBLIC_BASE_URL, refusing entries that are not origins', () => {
    expect(allowedOriginsFromEnvironment({ PUBLIC_BASE_URL: 'https://notes.example.com/base/', MCP_ALLOWED_ORIGINS: 'https://A.example.com:443/, http://localhost:6274' })).toEqual([
      'https://notes.example.com',
      'https://a.example.com',
      'http://localhost:6274',
    ]);
    expect(allowedOriginsFromEnvironment({})).toEqual([]);
    for (const bad of ['https://*.example.com', 'https://example.com/path', 'example.com', 'ftp://example.com', 'https://user@example.com']) {
      expect(() => parseAllowedOrigins(bad), bad).toThrow(/MCP_ALLOWED_ORIGINS/);
    }
  });
});

describe('2025-03-26 batches', () => {
  it('answers each message as if sent alone, in order, notifications adding nothing, each recognized one charged', async () => {
    const { accountId, mcp } = await freshCaller();
    for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }] as Array<Record<string, string>>) {
      const before = await used(accountId);
      const res = await mcp.post(
        [
          { jsonrpc: '2.0', id: 'a', method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
          { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'translate_canvas', arguments: { canvas: { nodes: [] } } } },
          { jsonrpc: '2.0', id: 'd', method: 'prompts/list' },
          [{ jsonrpc: '2.0', id: 'nested', method: 'ping' }],
        ],
        headers,
      );
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeDefined();
      const answers = res.data as Array<{ id: unknown; result?: Record<string, unknown>; error?: { code: number } }>;
      expect(answers.map((a) => [a.id, a.error?.code ?? 'result'])).toEqual([
        ['a', 'result'],
        ['b', 'result'],
        ['c', 'result'],
        ['d', -32601],
        [null, -32600],
      ]);
      expect(answers[1]!.result!['tools']).toHaveLength(8);
      expect(answers[2]!.result!['structuredContent']).toMatchObject({ markdown: expect.any(String) });
      expect(await used(accountId)).toBe(before + 3);
    }
  });

  it('answers a batch of notifications with 202, refuses an empty or over-long one, and refuses batches in every other revision, consuming nothing', async () => {
    const { accountId, mcp } = await freshCaller();
    const notes = await mcp.post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }]);
    expect([notes.statusCode, notes.body]).toEqual([202, '']);
    const empty = await mcp.post([]);
    expect([empty.statusCode, empty.data.error.code]).toEqual([400, -32600]);
    const long = await mcp.post(Array.from({ length: 51 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
    expect([long.statusCode, long.data.error.code, long.data.error.data.limit]).toEqual([400, -32600, 50]);
    for (const version of ['2025-06-18', '2025-11-25', '2024-11-05', MODERN_VERSION]) {
      const refused = await mcp.post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': version });
      expect({ version, status: refused.statusCode, code: refused.data.error?.code }).toEqual({ version, status: 400, code: -32600 });
    }
    expect(await used(accountId)).toBe(0);
  });

  it('answers a batch with a bad token once, as one 401 error', async () => {
    const res = await mcpRaw(app, `hnp_pat_${'Z'.repeat(43)}`).post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
    expect(res.statusCode).toBe(401);
    expect(res.data).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
  });
});

describe('revisions on later requests', () => {
  it('serves a request carrying any revision a handshake negotiated, in the header or _meta, and refuses an unknown one with -32022', async () => {
    const { mcp } = await freshCaller();
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      const byHeader = await mcp.legacy('tools/call', { name: 'get_vault_schema', arguments: { mappingId } }, { 'mcp-protocol-version': version });
      expect({ version, status: byHeader.statusCode }).toEqual({ version, status: 200 });
      expect(byHeader.data.result.resultType).toBeUndefined();
      const byMeta = await mcp.post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [PROTOCOL_VERSION_META_KEY]: version } } });
      expect(byMeta.data.result.tools).toHaveLength(8);
    }
    const unknown = await mcp.legacy('tools/list', {}, { 'mcp-protocol-version': '2025-01-01' });
    expect([unknown.statusCode, unknown.data.error.code, unknown.data.error.data.requested]).toEqual([400, -32022, '2025-01-01']);
  });
});
