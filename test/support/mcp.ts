// Raw MCP requests over app.inject, for protocol-level tests.
import type { FastifyInstance } from 'fastify';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../../api/routes/mcp/protocol.ts';

let nextId = 1;

export function mcpRaw(app: FastifyInstance, token: string) {
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return Object.assign(res, { data: res.body ? (JSON.parse(res.body) as any) : null }); // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  /** A stateless 2026-07-28 request with consistent headers. */
  const modern = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    post(
      { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION } } },
      {
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': method,
        ...(method === 'tools/call' ? { 'mcp-name': String(params['name']) } : {}),
        ...headers,
      },
    );
  /** A legacy request (no _meta, no Mcp-Method). */
  const legacy = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    post({ jsonrpc: '2.0', id: nextId++, method, params }, headers);
  /** tools/call through the modern path, returning the tool result. */
  const call = async (name: string, args: Record<string, unknown>) => (await modern('tools/call', { name, arguments: args })).data.result;
  return { post, modern, legacy, call };
}

export type McpRaw = ReturnType<typeof mcpRaw>;
