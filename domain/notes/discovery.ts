// Read-only discovery over a vault: ranked search and the frontmatter schema. Both are bounded in
// results and in time (a statement timeout inside their own transaction).
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';

export const searchLimits = { defaultResults: 20, maxResults: 50, maxQueryLength: 200, minSubstringLength: 3, timeoutMs: 2_000 } as const;
export const SCHEMA_SCAN_NOTES = 2_000;
export const SCHEMA_MAX_KEYS = 500;
/** Frontmatter larger than this (as JSON) is skipped by the schema scan, so one huge note cannot dominate. */
export const SCHEMA_MAX_FRONTMATTER_BYTES = 16_384;

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

const hitSchema = z.object({
  path: z.string(),
  title: z.string(),
  revision: z.string(),
  score: z.number(),
  matchedBy: z.array(z.enum(['words', 'path', 'substring'])),
  snippet: z.string(),
});
export type SearchHit = z.infer<typeof hitSchema>;

export type SearchResult = { query: string; results: SearchHit[]; truncated: boolean; limit: number };

/**
 * Ranked word search (tsvector, `websearch` syntax) plus path and substring matches (trigram
 * indexes; queries shorter than 3 characters match words only). Score: word rank, +1 for a path
 * match, +0.5 for a substring match. Snippets: ts_headline around words, else the text around the
 * first substring match.
 */
export async function searchNotes(
  db: DatabasePool,
  vaultId: string,
  input: { query: string; pathPrefix?: string | undefined; limit?: number | undefined },
): Promise<SearchResult> {
  const query = input.query.trim();
  const limit = Math.min(input.limit ?? searchLimits.defaultResults, searchLimits.maxResults);
  const like = `%${escapeLike(query)}%`;
  const prefix = input.pathPrefix ? `${escapeLike(input.pathPrefix.normalize('NFC'))}%` : '%';
  const substrings = query.length >= searchLimits.minSubstringLength;
  return db.transaction(async (tx) => {
    await tx.query(sql.type(emptyRow)`SELECT set_config('statement_timeout', ${String(searchLimits.timeoutMs)}, true)`);
    const rows = await tx.any(sql.type(hitSchema)`
      WITH q AS (SELECT websearch_to_tsquery('simple', ${query}) AS tsq),
      words AS (
        SELECT n.path, ts_rank_cd(n.search, q.tsq) AS rank FROM notes n, q
         WHERE n.vault_id = ${vaultId} AND n.search @@ q.tsq AND n.path LIKE ${prefix}
         ORDER BY rank DESC, n.path LIMIT ${limit + 1}
      ),
      paths AS (
        SELECT n.path FROM notes n
         WHERE ${substrings} AND n.vault_id = ${vaultId} AND n.path ILIKE ${like} AND n.path LIKE ${prefix}
         ORDER BY length(n.path), n.path LIMIT ${limit + 1}
      ),
      substrings AS (
        SELECT n.path FROM notes n
         WHERE ${substrings} AND n.vault_id = ${vaultId} AND n.content ILIKE ${like} AND n.path LIKE ${prefix}
         LIMIT ${limit + 1}
      ),
      hits AS (
        SELECT path, sum(rank) AS score, array_agg(DISTINCT kind ORDER BY kind) AS kinds FROM (
          SELECT path, rank, 'words' AS kind FROM words
          UNION ALL SELECT path, 1.0, 'path' FROM paths
          UNION ALL SELECT path, 0.5, 'substring' FROM substrings
        ) all_hits GROUP BY path
        ORDER BY score DESC, path LIMIT ${limit + 1}
      )
      SELECT n.path, n.title, n.revision, h.score::float8 AS score, h.kinds AS "matchedBy",
             CASE WHEN 'words' = ANY (h.kinds)
                  THEN ts_headline('simple', n.content, q.tsq, 'MaxFragments=1, MaxWords=30, MinWords=10, StartSel=**, StopSel=**')
                  WHEN strpos(lower(n.content), lower(${query})) > 0
                  THEN substr(n.content, greatest(1, strpos(lower(n.content), lower(${query})) - 80), length(${query}) + 160)
                  ELSE n.title END AS snippet
        FROM hits h JOIN notes n ON n.vault_id = ${vaultId} AND n.path = h.path, q
       ORDER BY h.score DESC, n.path`);
    return { query, results: rows.slice(0, limit), truncated: rows.length > limit, limit };
  });
}

const keySchema = z.object({
  key: z.string(),
  notes: z.number(),
  types: z.array(z.string()),
  examples: z.array(z.unknown()),
});

export type VaultSchema = {
  scannedNotes: number;
  notesWithFrontmatter: number;
  keys: Array<z.infer<typeof keySchema>>;
  truncated: boolean;
  limits: { notes: number; keys: number; frontmatterBytes: number };
};

/**
 * Frontmatter keys over the first 2,000 notes (by path): value types, how many notes use each key,
 * up to three example values. `truncated` when the vault has more notes or more keys than scanned;
 * a truncated schema is not proof that no other key exists.
 */
export async function vaultSchema(db: CommonQueryMethods, vaultId: string): Promise<VaultSchema> {
  const totals = await db.one(sql.type(z.object({ total: z.number(), withFrontmatter: z.number() }))`
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE s.frontmatter IS NOT NULL)::int AS "withFrontmatter"
      FROM (SELECT n.frontmatter FROM notes n WHERE n.vault_id = ${vaultId} ORDER BY n.path LIMIT ${SCHEMA_SCAN_NOTES}) s`);
  const more = await db.exists(sql.type(z.object({ path: z.string() }))`
    SELECT n.path FROM notes n WHERE n.vault_id = ${vaultId} ORDER BY n.path OFFSET ${SCHEMA_SCAN_NOTES} LIMIT 1`);
  const keys = await db.any(sql.type(keySchema)`
    WITH scanned AS (
      SELECT n.path, n.frontmatter FROM notes n
       WHERE n.vault_id = ${vaultId} ORDER BY n.path LIMIT ${SCHEMA_SCAN_NOTES}
    ),
    pairs AS (
      SELECT s.path, e.key, e.value FROM scanned s, jsonb_each(s.frontmatter) e
       WHERE s.frontmatter IS NOT NULL AND octet_length(s.frontmatter::text) <= ${SCHEMA_MAX_FRONTMATTER_BYTES}
    )
    SELECT key, count(*)::int AS notes,
           array_agg(DISTINCT jsonb_typeof(value) ORDER BY jsonb_typeof(value)) AS types,
           (array_agg(value ORDER BY path))[1:3] AS examples
      FROM pairs GROUP BY key
     ORDER BY count(*) DESC, key
     LIMIT ${SCHEMA_MAX_KEYS + 1}`);
  return {
    scannedNotes: totals.total,
    notesWithFrontmatter: totals.withFrontmatter,
    keys: keys.slice(0, SCHEMA_MAX_KEYS),
    truncated: more || keys.length > SCHEMA_MAX_KEYS,
    limits: { notes: SCHEMA_SCAN_NOTES, keys: SCHEMA_MAX_KEYS, frontmatterBytes: SCHEMA_MAX_FRONTMATTER_BYTES },
  };
}
