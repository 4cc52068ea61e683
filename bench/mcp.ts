// MCP benchmark: a vault of 100,000 notes (bulk-inserted in SQL: the write path is measured by the
// REST suite), then search_notes latency for a rare word, a common word and a substring, and
// get_note_content through MCP against the REST single-note read in the same run.
import { sql } from 'slonik';
import { MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../api/routes/mcp/protocol.ts';
import type { DatabasePool } from '../db/pool.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { mergeDeferredIndexEntries } from '../domain/notes/store.ts';

export async function seedLargeVault(db: DatabasePool, vaultId: string, count: number): Promise<void> {
  // Every note has the common word "project" (twice); one in a thousand has the rare word
  // "zygomorphic"; each carries a unique reference REF-<n> for substring search; every fifth links
  // to a neighbour. So that ranking a common word means something (and a bounded ranking can miss),
  // the notes differ as real ones do: one in 499 has "Project review" in its title (weight A), one
  // in 17 a paragraph that repeats "project plan … review … delivery" 1–4 times (longer notes, more
  // occurrences), and one in 997 is a short list that names "project" five times (dense but short:
  // what a candidate set chosen by length misses).
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
                           'Note ' || lpad(i::text, 6, '0') AS base,
                           CASE WHEN i % 499 = 0 THEN 'Project review ' || i ELSE 'Note ' || i END AS title, a.area) p,
           LATERAL (SELECT CASE WHEN i % 997 = 5
                           THEN '# Projects ' || i || E'\n\n- project Alpha\n- project Beta\n- project Gamma\n- project Delta\n- project Epsilon\n'
                           ELSE '# Note ' || i || E'\n\nThis project note discusses topic ' || (i % 700) || ' in ' || a.area ||
                           CASE WHEN i % 1000 = 7 THEN ' with a zygomorphic flower' ELSE '' END ||
                           E'. Reference REF-' || i || E'.\n\nMore text about planning, review and delivery for the project.\n' ||
                           CASE WHEN i % 17 = 0 THEN repeat('The project plan needs a review before delivery. ', 1 + i % 4) ELSE '' END
                           END AS content) c`);
  await db.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, links)
    SELECT ${vaultId}, 'Compare/Reference note.md', 'compare/reference note.md', 'reference note', 'Reference note', c,
           'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'), octet_length(c), '[]'
      FROM (SELECT E'# Reference note\n\nThe note both the REST and the MCP read fetch.\n' AS c) x`);
  // Indexed for substring and word search as the API processes' indexers leave it (decisions 106,
  // 114), in bulk: the corpus is inserted in SQL, so its queue is taken in SQL too.
  await db.query(sql.type(emptyRow)`
    INSERT INTO note_substring_docs (vault_id, path, revision, content, search) SELECT vault_id, path, revision, content, search FROM notes WHERE vault_id = ${vaultId}`);
  await db.query(sql.type(emptyRow)`DELETE FROM note_substring_pending WHERE vault_id = ${vaultId}`);
  // As an import leaves a vault (domain/notes/knowledge.ts applyImportBatch): the GIN indexes'
  // pending entries merged, not left for every search to scan until autovacuum gets to them; and
  // vacuumed as autovacuum would soon (else its run on 100,000 new rows lands inside the first
  // measurement: the rare word measured p95 196 ms instead of ~30).
  await mergeDeferredIndexEntries(db);
  await db.query(sql.type(emptyRow)`VACUUM (ANALYZE) notes`);
  await db.query(sql.type(emptyRow)`VACUUM (ANALYZE) note_substring_docs, note_substring_pending`);
}

/** Common-word queries whose bounded ranking is compared with the full one (every match ranked). */
export const COMMON_WORD_QUERIES = ['project', 'review', 'delivery', 'project plan', '"project plan"', 'project -zygomorphic'] as const;

export type RankingOverlap = { query: string; ranking: string; overlap: number; sameOrder: boolean; boundedMs: number; fullMs: number };

/**
 * For each common-word query: search_notes' answer (bounded past `searchLimits.rankAllUpTo`
 * matches) against the same function ranking every match, as top-20 sets (overlap, of 20) and as
 * ordered lists. Run on one connection, each best of three.
 */
export async function rankingOverlap(db: DatabasePool, vaultId: string): Promise<RankingOverlap[]> {
  const rows: RankingOverlap[] = [];
  for (const query of COMMON_WORD_QUERIES) {
    const timedSearch = async (rankAllUpTo?: number) => {
      let best = Infinity;
      let result!: Awaited<ReturnType<typeof searchNotes>>;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        result = await searchNotes(db, vaultId, { query }, rankAllUpTo === undefined ? {} : { rankAllUpTo });
        best = Math.min(best, performance.now() - t0);
      }
      return { result, ms: best };
    };
    const bounded = await timedSearch();
    const full = await timedSearch(Infinity);
    const b = bounded.result.results.map((r) => r.path);
    const f = full.result.results.map((r) => r.path);
    rows.push({
      query,
      ranking: bounded.result.ranking,
      overlap: b.filter((path) => f.includes(path)).length / Math.max(1, f.length),
      sameOrder: JSON.stringify(b) === JSON.stringify(f),
      boundedMs: bounded.ms,
      fullMs: full.ms,
    });
  }
  return rows;
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

/** The headers and body of one MCP `tools/call` (what a client sends), for fetch and for autocannon alike. */
export function mcpToolRequest(token: string, name: string, args: Record<string, unknown>): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_VERSION } } });
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  };
  return { headers, body };
}

export function mcpToolCall(base: string, token: string, name: string, args: Record<string, unknown>): () => Promise<Response> {
  const { headers, body } = mcpToolRequest(token, name, args);
  return () => fetch(`${base}/api/mcp`, { method: 'POST', headers, body });
}
