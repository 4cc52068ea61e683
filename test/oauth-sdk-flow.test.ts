// OAuth 2.1 for /api/mcp driven by the official MCP TypeScript SDK's own client code
// (StreamableHTTPClientTransport with an OAuthClientProvider): discovery from the bare 401,
// dynamic registration, PKCE, consent through the console page (over HTTP with the person's
// console session), the code exchange, tool calls, a refresh, and a replayed refresh token
// revoking the grant. Personal access tokens keep working beside it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from 'slonik';
import { beforeAll, expect, it } from 'vitest';
import { emptyRow } from '../db/row-schemas.ts';
import { consoleSignIn } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import { useCaller } from './support/harness.ts';
import { consentOver, MemoryOAuthProvider, redirectParams, tokenPost } from './support/oauth.ts';

const caller = useCaller({ listen: true });
let mcpUrl: URL;
let session: ConsoleSession;

beforeAll(async () => {
  mcpUrl = new URL('/api/mcp', caller.url);
  session = await consoleSignIn(caller.app, caller.token);
});

function structured(result: unknown): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = result as { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ text: string }> };
  expect(r.isError, r.content?.[0]?.text).toBeFalsy();
  return r.structuredContent!;
}

/** Runs the SDK's authorization up to the redirect, consents as the person, and finishes with the code. */
async function authorize(provider: MemoryOAuthProvider, choice: { scopes: string[]; mappings: string[] }) {
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrl!;
  const { answer } = await consentOver(caller.app, session, authorizationUrl, choice);
  expect(answer?.statusCode).toBe(303);
  const params = redirectParams(answer!.headers.location as string);
  expect(params.get('state')).toBe(provider.lastState);
  expect(params.get('iss')).toBe(caller.url);
  await transport.finishAuth(params.get('code')!);
  return { authorizationUrl, code: params.get('code')! };
}

async function connected(provider: MemoryOAuthProvider) {
  const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return client;
}

it('discovers from the bare 401, registers, consents, exchanges, calls tools, refreshes; a replayed refresh token revokes the grant', async () => {
  const provider = new MemoryOAuthProvider();
  const { authorizationUrl } = await authorize(provider, { scopes: ['notes:read', 'notes:write'], mappings: [caller.mappingId] });

  // What the SDK found and sent: registered dynamically, PKCE S256, the resource bound.
  expect(provider.info?.client_id).toMatch(/^hnp_cid_/);
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${caller.url}/console/oauth/authorize`);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorizationUrl.searchParams.get('resource')).toBe(`${caller.url}/api/mcp`);
  expect(authorizationUrl.searchParams.get('scope')).toBe('notes:read notes:write');
  expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'notes:read notes:write' });
  expect(provider.saved!.access_token).toMatch(/^hnp_oat_/);

  const client = await connected(provider);
  try {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(8);
    const created = structured(await client.callTool({ name: 'create_or_append_note', arguments: { mappingId: caller.mappingId, path: 'OAuth/Start.md', content: '# Start\n', dryRun: false, idempotencyKey: 'oauth-1' } }));
    expect(created).toMatchObject({ applied: true, operation: 'create' });
    expect(structured(await client.callTool({ name: 'get_note_content', arguments: { mappingId: caller.mappingId, path: 'OAuth/Start.md' } }))).toMatchObject({ title: 'Start' });

    // The access token runs out (as after 15 minutes): the SDK refreshes on the 401 and carries on.
    const first = provider.saved!;
    await caller.db.pool.query(sql.type(emptyRow)`UPDATE oauth_tokens SET expires_at = now() WHERE kind = 'access'`);
    expect(structured(await client.callTool({ name: 'get_note_content', arguments: { mappingId: caller.mappingId, path: 'OAuth/Start.md' } }))).toMatchObject({ title: 'Start' });
    const second = provider.saved!;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);

    // The first refresh token, used once already, presented again: taken as stolen, the grant ends.
    const replay = await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: provider.info!.client_id, resource: `${caller.url}/api/mcp` }, new URL(caller.url).host);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ error: 'invalid_grant' });
    const after = await fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${second.access_token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${caller.url}/.well-known/oauth-protected-resource/api/mcp", scope="notes:read notes:write"`);
    const refreshAfter = await tokenPost(caller.app, { grant_type: 'refresh_token', refresh_token: second.refresh_token!, client_id: provider.info!.client_id }, new URL(caller.url).host);
    expect(refreshAfter.json()).toMatchObject({ error: 'invalid_grant' });
  } finally {
    await client.close();
  }
});

it('a read-only grant lists only the reading tools, and a write asks for notes:write (403 insufficient_scope) without charging', async () => {
  const provider = new MemoryOAuthProvider('http://127.0.0.1:8977/callback');
  await authorize(provider, { scopes: ['notes:read'], mappings: [caller.mappingId] });
  const client = await connected(provider);
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_knowledge_events', 'get_note_content', 'get_vault_schema', 'query_graph_relations', 'search_notes', 'translate_canvas']);
  } finally {
    await client.close();
  }
  const call = (name: string, args: Record<string, unknown>) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
    });
  const monthLeft = (res: Response) => Number(/"month";r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')![1]);
  const before = await call('search_notes', { mappingId: caller.mappingId, query: 'start' });
  expect(before.status).toBe(200);
  const refused = await call('create_or_append_note', { mappingId: caller.mappingId, path: 'OAuth/No.md', content: 'x', dryRun: false, idempotencyKey: 'no' });
  expect(refused.status).toBe(403);
  expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${caller.url}/.well-known/oauth-protected-resource/api/mcp"`);
  expect(refused.headers.get('ratelimit')).toBeNull();
  expect(await refused.json()).toMatchObject({ id: 7, error: { code: -32003, data: { code: 'insufficient_scope', status: 403, requiredScope: 'notes:write' } } });
  const next = await call('search_notes', { mappingId: caller.mappingId, query: 'start' });
  expect(monthLeft(next)).toBe(monthLeft(before) - 1);
});

it('personal access tokens keep working unchanged beside OAuth', async () => {
  const client = new Client({ name: 'pat', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${caller.token}` } } }));
  try {
    expect((await client.listTools()).tools).toHaveLength(8);
    expect(structured(await client.callTool({ name: 'get_note_content', arguments: { mappingId: caller.mappingId, path: 'OAuth/Start.md' } }))).toMatchObject({ title: 'Start' });
  } finally {
    await client.close();
  }
});
