// MCP benchmark: a vault of 100,000 notes (bulk-inserted in SQL: the write path is measured by the
// REST suite), then search_notes latency for a rare word, a common word and a substring, and
// get_note_content through MCP against the REST single-note read in the same run.
import { sql } from 'slonik';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../api/routes/mcp/protocol.ts';
import type { DatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';

export async function seedLargeVault(db: DatabasePool, vaultId: string, count: number): Promise<void> {
  // Every note has the common word "project"; one in a thousand has the rare word "zygomorphic";
  // each carries a unique reference REF-<n> for substring search; every fifth links to a neighbour.
  await db.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, frontmatter, links, link_keys)
    SELECT ${vaultId}, p.path, lower(p.path), lower(p.base), p.title, c.content,
           'sha256:' || encode(sha256(convert_to(c.content, 'UTF8')), 'hex'), octet_length(c.content),
           jsonb_build_object('area', p.area, 'n', i),
           CASE WHEN i % 5 = 0 THEN jsonb_build_array(jsonb_build_object('kind', 'link', 'target', 'Note ' || lpad(((i + 1) % ${count})::text, 6, '0'), 'heading', null, 'block', null, 'alias', null)) ELSE '[]'::jsonb END,
           CASE WHEN i % 5 = 0 THEN ARRAY[lower('Note ' || lpad(((i + 1) % ${count})::text, 6, '0'))] ELSE '{}'::text[] END
      FROM generate_series(0, ${count - 1}) i,
           LATERAL (SELECT 'Area ' || lpad((i % 40)::text, 2, '0') AS area) a,
           LATERAL (SELECT a.area || '/Topic ' || lpad((i % 700)::text, 3, '0') || '/Note ' || lpad(i::text, 6, '0') || '.md' AS path,
                           'Note ' || lpad(i::text, 6, '0') AS base, 'Note ' || i AS title, a.area) p,
           LATERAL (SELECT '# Note ' || i || E'\n\nThis project note discusses topic ' || (i % 700) || ' in ' || a.area ||
                           CASE WHEN i % 1000 = 7 THEN ' with a zygomorphic flower' ELSE '' END ||
                           E'. Reference REF-' || i || E'.\n\nMore text about planning, review and delivery for the project.\n' AS content) c`);
  await db.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, links)
    SELECT ${vaultId}, 'Compare/Reference note.md', 'compare/reference note.md', 'reference note', 'Reference note', c,
           'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'), octet_length(c), '[]'
      FROM (SELECT E'# Reference note\n\nThe note both the REST and the MCP read fetch.\n' AS c) x`);
  await db.query(sql.type(emptyRow)`ANALYZE notes`);
}

export type LatencyStats = { name: string; requests: number; p50: number; p95: number; p99: number; rps: number };

/** Closed-loop load: `workers` concurrent callers for `seconds`, every latency recorded. */
export async function measureLatency(name: string, seconds: number, workers: number, call: () => Promise<Response>): Promise<LatencyStats> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const res = await call();
        const body = await res.text();
        if (!res.ok || body.includes('"isError":true')) throw new Error(`${name}: ${res.status} ${body.slice(0, 300)}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { name, requests: latencies.length, p50: pct(50), p95: pct(95), p99: pct(99), rps: latencies.length / elapsed };
}

export function mcpToolCall(base: string, token: string, name: string, args: Record<string, unknown>): () => Promise<Response> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION } } });
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  };
  return () => fetch(`${base}/api/mcp`, { method: 'POST', headers, body });
}
