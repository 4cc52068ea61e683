// The official MCP Python SDK (pinned 2.3.0) against the real server over loopback HTTP: its Client
// in legacy mode negotiates 2025-11-25 by the initialize handshake, in auto mode 2026-07-28 through
// server/discover; each lists the tools, searches (with resource links), reads a note by tool and as
// a resource with its revision. Opt-in, not part of `npm test` (it needs the SDK installed into
// .tools/mcp-python by scripts/install-mcp-python.sh): `npm run test:mcp-python`.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { noteUri } from '../../api/routes/mcp/resources.ts';
import { useCaller } from '../support/harness.ts';
import { mcpRaw } from '../support/mcp.ts';

const PYTHON = resolve(process.env['MCP_PYTHON_BIN'] ?? '.tools/mcp-python/bin/python');
const CLIENT = resolve('test/external/mcp-python-client.py');
const PLAN = 'Python/Quarterly plan.md';
const OTHER = 'Python/Deeper/Ünïcode plan.md';

const caller = useCaller({ listen: true, plan: 'premium' });

beforeAll(async () => {
  const written = await mcpRaw(caller.app, caller.token).call('apply_note_transaction', {
    mappingId: caller.mappingId,
    dryRun: false,
    idempotencyKey: 'python-setup',
    actions: [
      { type: 'write-note', path: PLAN, content: '# Quarterly plan\n\nThe plan.\n' },
      { type: 'write-note', path: OTHER, content: '# Other plan\n\nAnother plan.\n' },
    ],
  });
  expect(written.structuredContent.applied).toBe(true);
});

type Seen = {
  protocolVersion: string;
  server: { name: string; version: string; description?: string } | null;
  tools: Array<{ name: string; title: string | null; hasOutputSchema: boolean }>;
  searchError: boolean;
  searchPaths: string[];
  searchLinks: string[];
  read: { path: string; revision: string };
  templates: string[];
  resource: { uri: string; contents: Array<{ uri: string; mimeType: string; text: string; _meta: { revision: string } }> };
};

async function runClient(mode: 'legacy' | 'auto'): Promise<Seen> {
  const { stdout } = await promisify(execFile)(PYTHON, [CLIENT, `${caller.url}/api/mcp`, caller.token, caller.mappingId, mode, 'plan', PLAN], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Seen;
}

describe('the official Python SDK Client', () => {
  for (const [mode, version] of [
    ['legacy', '2025-11-25'],
    ['auto', '2026-07-28'],
  ] as const) {
    it(`in ${mode} mode negotiates ${version}, lists, searches with resource links, and reads a note by tool and as a resource`, async () => {
      const seen = await runClient(mode);
      expect(seen.protocolVersion).toBe(version);
      expect(seen.server).toMatchObject({ name: 'hosted-notes-mcp', version: '1.0.0' });
      expect(seen.tools).toHaveLength(8);
      expect(seen.tools.every((t) => t.title && t.hasOutputSchema)).toBe(true);
      expect(seen.searchError).toBe(false);
      expect(seen.searchPaths).toEqual([OTHER, PLAN].sort());
      expect(seen.searchLinks).toEqual([noteUri(caller.mappingId, OTHER), noteUri(caller.mappingId, PLAN)].sort());
      expect(seen.templates).toEqual(['note://{mappingId}/{+path}']);
      expect(seen.resource.uri).toBe(noteUri(caller.mappingId, PLAN));
      expect(seen.resource.contents).toEqual([
        { uri: noteUri(caller.mappingId, PLAN), mimeType: 'text/markdown', text: '# Quarterly plan\n\nThe plan.\n', _meta: expect.objectContaining({ revision: seen.read.revision }) },
      ]);
    });
  }
});
