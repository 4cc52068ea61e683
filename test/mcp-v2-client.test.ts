// The official MCP SDK v2 client: in auto mode it probes server/discover and talks 2026-07-28;
// in its default (legacy) mode it runs the initialize handshake. Both reach every tool.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { useCaller } from './support/harness.ts';

const caller = useCaller({ listen: true, plan: 'developer_agent' });
let url: URL;
let token: string;
let mappingId: string;

beforeAll(() => {
  url = new URL('/api/mcp', caller.url);
  ({ token, mappingId } = caller);
});

async function session(mode: 'auto' | 'legacy', run: (client: Client) => Promise<void>) {
  const client = new Client({ name: `v2-${mode}`, version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    await run(client);
  } finally {
    await client.close();
  }
}

describe('official v2 client', () => {
  it('auto mode negotiates 2026-07-28 through server/discover, lists and calls tools', async () => {
    await session('auto', async (client) => {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(8);
      const written = (await client.callTool({
        name: 'create_or_append_note',
        arguments: { mappingId, path: 'V2/Modern.md', content: '# Modern\n', dryRun: false, idempotencyKey: 'v2-modern' },
      })) as { structuredContent: { applied: boolean } };
      expect(written.structuredContent.applied).toBe(true);
      const read = (await client.callTool({ name: 'get_note_content', arguments: { mappingId, path: 'V2/Modern.md' } })) as { structuredContent: { title: string } };
      expect(read.structuredContent.title).toBe('Modern');
      // A non-ASCII tool argument travels in the body; the Mcp-Name header stays ASCII.
      const search = (await client.callTool({ name: 'search_notes', arguments: { mappingId, query: 'modern' } })) as { structuredContent: { results: unknown[] } };
      expect(search.structuredContent.results).toHaveLength(1);
    });
  });

  it('default (legacy) mode runs the initialize handshake and works the same', async () => {
    await session('legacy', async (client) => {
      expect(client.getProtocolEra()).toBe('legacy');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('translate_canvas');
      const canvas = (await client.callTool({
        name: 'translate_canvas',
        arguments: { canvas: { nodes: [{ id: 'g', type: 'group', label: 'Plan', x: 0, y: 0, width: 500, height: 500 }, { id: 't', type: 'text', text: 'Step', x: 10, y: 10, width: 50, height: 20 }] } },
      })) as { structuredContent: { markdown: string } };
      expect(canvas.structuredContent.markdown).toBe('# Canvas\n\n## Plan\n\n- Step\n');
    });
  });
});
