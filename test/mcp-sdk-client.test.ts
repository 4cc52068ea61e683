// The official MCP SDK v1 Client with StreamableHTTPClientTransport, against the running server:
// connect (initialize), list, and call every tool.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, expect, it } from 'vitest';
import { useCaller } from './support/harness.ts';

const caller = useCaller({ listen: true, plan: 'professional' });
let url: URL;
let token: string;
let mappingId: string;

beforeAll(() => {
  url = new URL('/api/mcp', caller.url);
  ({ token, mappingId } = caller);
});

function structured(result: unknown): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = result as { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ text: string }> };
  expect(r.isError, r.content?.[0]?.text).toBeFalsy();
  expect(JSON.parse(r.content[0]!.text)).toEqual(r.structuredContent);
  return r.structuredContent!;
}

it('connects, lists the eight tools and calls every one', async () => {
  const client = new Client({ name: 'sdk-v1-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  try {
    expect(client.getServerVersion()).toMatchObject({ version: '1.0.0' });
    expect(transport.sessionId).toBeUndefined();
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(8);

    const created = structured(
      await client.callTool({ name: 'create_or_append_note', arguments: { mappingId, path: 'SDK/Start.md', content: '---\nstatus: draft\n---\n# Start\n\nSee [[Other]].\n', dryRun: false, idempotencyKey: 'sdk-1' } }),
    );
    expect(created).toMatchObject({ applied: true, operation: 'create' });
    const tx = structured(
      await client.callTool({
        name: 'apply_note_transaction',
        arguments: { mappingId, dryRun: false, idempotencyKey: 'sdk-2', actions: [{ type: 'write-note', path: 'SDK/Other.md', content: '# Other\n\nBack to [[Start]].\n' }] },
      }),
    );
    expect(tx).toMatchObject({ applied: true, transactionId: expect.any(String) });
    const read = structured(await client.callTool({ name: 'get_note_content', arguments: { mappingId, path: 'SDK/Start.md' } }));
    expect(read).toMatchObject({ title: 'Start', revision: created['afterRevision'] });
    const appended = structured(
      await client.callTool({ name: 'create_or_append_note', arguments: { mappingId, path: 'SDK/Start.md', content: 'More.', mode: 'append', expectedHash: read['revision'], dryRun: false, idempotencyKey: 'sdk-3' } }),
    );
    expect(appended).toMatchObject({ operation: 'replace', beforeRevision: read['revision'] });
    const search = structured(await client.callTool({ name: 'search_notes', arguments: { mappingId, query: 'other' } }));
    expect((search['results'] as Array<{ path: string }>).map((r) => r.path)).toContain('SDK/Other.md');
    const graph = structured(await client.callTool({ name: 'query_graph_relations', arguments: { mappingId, path: 'SDK/Start.md' } }));
    expect(graph).toMatchObject({ outgoing: [{ target: 'Other', status: 'resolved', path: 'SDK/Other.md' }], incoming: [{ sourcePath: 'SDK/Other.md' }] });
    const canvas = structured(
      await client.callTool({ name: 'translate_canvas', arguments: { canvas: { nodes: [{ id: 'a', type: 'text', text: 'Hello', x: 0, y: 0, width: 100, height: 50 }], edges: [] } } }),
    );
    expect(canvas['markdown']).toContain('- Hello');
    const schema = structured(await client.callTool({ name: 'get_vault_schema', arguments: { mappingId } }));
    expect(schema['keys']).toEqual([expect.objectContaining({ key: 'status', notes: 1, types: ['string'] })]);
    const events = structured(await client.callTool({ name: 'get_knowledge_events', arguments: { mappingId } }));
    expect((events['events'] as Array<{ source: string }>).map((e) => e.source)).toEqual([
      'mcp:create_or_append_note',
      'mcp:apply_note_transaction',
      'mcp:create_or_append_note',
    ]);

    const failed = (await client.callTool({ name: 'get_note_content', arguments: { mappingId, path: 'SDK/Missing.md' } })) as unknown as { isError: boolean; structuredContent: { code: string } };
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent.code).toBe('note_not_found');
  } finally {
    await client.close();
  }
});
