// Every revision a current client asks for, through the official TypeScript SDK clients over real
// HTTP: SDK v1 (asks for 2025-11-25), the v2 client offering 2025-06-18 or 2025-03-26 in its
// handshake, and the v2 client in auto mode (2026-07-28 through server/discover). Each negotiates its
// revision, sends it on every later request, lists the tools, searches and reads, and reads notes as
// resources, getting what its revision defines (resource links from 2025-06-18 on).
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { noteUri } from '../api/routes/mcp/resources.ts';
import { useCaller } from './support/harness.ts';
import { mcpRaw } from './support/mcp.ts';

const caller = useCaller({ listen: true, plan: 'professional' });
let url: URL;
let token: string;
let mappingId: string;

const PLAN = 'Revisions/Plan.md';
const DEEP = 'Revisions/Deep/Ünïcode plan #2.md';

beforeAll(async () => {
  url = new URL('/api/mcp', caller.url);
  ({ token, mappingId } = caller);
  const written = await mcpRaw(caller.app, token).call('apply_note_transaction', {
    mappingId,
    dryRun: false,
    idempotencyKey: 'revisions-setup',
    actions: [
      { type: 'write-note', path: PLAN, content: '# Plan\n\nThe quarterly plan links [[Ünïcode plan #2]].\n' },
      { type: 'write-note', path: DEEP, content: '# Deep plan\n\nAnother plan, deeper.\n' },
    ],
  });
  expect(written.structuredContent.applied).toBe(true);
});

/** A fetch that records the MCP-Protocol-Version header of every request the client sends. */
function recordingFetch() {
  const sent: Array<string | null> = [];
  const fetchWithRecord = async (input: string | URL | Request, init?: RequestInit) => {
    sent.push(new Headers(init?.headers).get('mcp-protocol-version'));
    return fetch(input, init);
  };
  return { sent, fetch: fetchWithRecord };
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string; uri?: string; name?: string; title?: string; mimeType?: string }>; structuredContent?: Record<string, unknown> };
type Listed = { name: string; title?: string; annotations?: Record<string, unknown>; outputSchema?: Record<string, unknown> };

/** What every revision must get from the same calls; `links` says whether its results carry resource links. */
async function exercise(client: { listTools: () => Promise<{ tools: unknown[] }>; callTool: (p: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> }, links: boolean) {
  const { tools } = (await client.listTools()) as { tools: Listed[] };
  expect(tools).toHaveLength(8);
  for (const t of tools) {
    expect(t.title, t.name).toEqual(expect.any(String));
    expect(t.annotations, t.name).toMatchObject({ readOnlyHint: expect.any(Boolean) });
    expect(t.outputSchema?.['type'], t.name).toBe('object');
  }

  const search = (await client.callTool({ name: 'search_notes', arguments: { mappingId, query: 'plan' } })) as ToolResult;
  expect(search.isError).toBeFalsy();
  const hits = (search.structuredContent!['results'] as Array<{ path: string }>).map((r) => r.path).sort();
  expect(hits).toEqual([DEEP, PLAN]);
  const resourceLinks = search.content.filter((c) => c.type === 'resource_link');
  if (links) {
    expect(resourceLinks.map((l) => l.uri).sort()).toEqual([noteUri(mappingId, DEEP), noteUri(mappingId, PLAN)].sort());
    expect(resourceLinks.find((l) => l.name === PLAN)).toMatchObject({ title: 'Plan', mimeType: 'text/markdown' });
  } else {
    expect(search.content.map((c) => c.type)).toEqual(['text']);
  }

  const read = (await client.callTool({ name: 'get_note_content', arguments: { mappingId, path: DEEP } })) as ToolResult;
  expect(read.structuredContent).toMatchObject({ path: DEEP, title: 'Deep plan', revision: expect.stringMatching(/^sha256:/) });
  expect(read.content.filter((c) => c.type === 'resource_link').map((l) => l.uri)).toEqual(links ? [noteUri(mappingId, DEEP)] : []);
  return { revision: read.structuredContent!['revision'] as string };
}

type ResourceClient = {
  listResourceTemplates: () => Promise<{ resourceTemplates: Array<{ uriTemplate: string }> }>;
  listResources: () => Promise<{ resources: Array<{ uri: string; name: string }> }>;
  readResource: (p: { uri: string }) => Promise<{ contents: Array<{ uri: string; text?: string; mimeType?: string; _meta?: Record<string, unknown> }> }>;
};

async function readAsResource(client: ResourceClient, revision: string) {
  const { resourceTemplates } = await client.listResourceTemplates();
  expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['note://{mappingId}/{+path}']);
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.name)).toEqual(expect.arrayContaining([PLAN, DEEP]));
  const deep = resources.find((r) => r.name === DEEP)!;
  expect(deep.uri).toBe(noteUri(mappingId, DEEP));
  const { contents } = await client.readResource({ uri: deep.uri });
  expect(contents).toEqual([{ uri: deep.uri, mimeType: 'text/markdown', text: '# Deep plan\n\nAnother plan, deeper.\n', _meta: expect.objectContaining({ revision, title: 'Deep plan' }) }]);
}

describe('SDK v1 Client', () => {
  it('negotiates 2025-11-25, sends it on every later request, and gets its features', async () => {
    const recorder = recordingFetch();
    const client = new ClientV1({ name: 'revisions-v1', version: '1.0.0' });
    const transport = new TransportV1(url, { fetch: recorder.fetch, requestInit: { headers: { authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      // 2025-11-25 adds the Implementation's description.
      expect(client.getServerVersion()).toMatchObject({ name: 'hosted-notes-mcp', version: '1.0.0', description: expect.any(String) });
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false }, resources: { listChanged: false } });
      const { revision } = await exercise(client, true);
      await readAsResource(client, revision);
      // initialize carries no version header; every request after it carries the negotiated one.
      expect(recorder.sent[0]).toBeNull();
      expect(new Set(recorder.sent.slice(1))).toEqual(new Set(['2025-11-25']));
    } finally {
      await client.close();
    }
  });
});

describe('v2 client', () => {
  async function legacySession(versions: string[]) {
    const recorder = recordingFetch();
    const client = new Client({ name: `revisions-${versions[0]}`, version: '1.0.0' }, { supportedProtocolVersions: versions, versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: recorder.fetch, requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return { client, recorder };
  }

  it('offering 2025-06-18 negotiates it: structured output, titles, annotations and resource links; no 2025-11-25 description', async () => {
    const { client, recorder } = await legacySession(['2025-06-18']);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-06-18');
      expect(client.getServerVersion()).toMatchObject({ name: 'hosted-notes-mcp', title: 'Hosted Notes Platform' });
      expect(client.getServerVersion()?.description).toBeUndefined();
      const { revision } = await exercise(client, true);
      await readAsResource(client, revision);
      expect(new Set(recorder.sent.filter((v) => v !== null))).toEqual(new Set(['2025-06-18']));
    } finally {
      await client.close();
    }
  });

  it('offering 2025-03-26 negotiates it and gets no resource_link blocks (that revision has none)', async () => {
    const { client, recorder } = await legacySession(['2025-03-26']);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-03-26');
      const { revision } = await exercise(client, false);
      await readAsResource(client, revision);
      expect(new Set(recorder.sent.filter((v) => v !== null))).toEqual(new Set(['2025-03-26']));
    } finally {
      await client.close();
    }
  });

  it('in auto mode talks 2026-07-28 through server/discover, with resource links and resources', async () => {
    const recorder = recordingFetch();
    const client = new Client({ name: 'revisions-auto', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: recorder.fetch, requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const { revision } = await exercise(client, true);
      await readAsResource(client, revision);
      expect(new Set(recorder.sent)).toEqual(new Set(['2026-07-28']));
    } finally {
      await client.close();
    }
  });
});
