// Read-only discovery over a vault: ranked search and the frontmatter schema. Both are bounded in
// results and in time (a statement timeout inside their own transaction).
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';

export const searchLimits = {
  defaultResults: 20,
  maxResults: 50,
  maxQueryLength: 200,
  minSubstringLength: 3,
  timeoutMs: 2_000,
  /** Word matches up to this many are all ranked; past it the ranking is bounded (below). */
  rankAllUpTo: 2_000,
  /** A bounded ranking's candidates from each source: the title matches, the longest notes. */
  boundedCandidates: 500,
  /** Notes a substring search reads first, in path order, before it walks on or turns to the trigram index (decision 138). */
  substringProbe: 100,
  /** Matches in the probe from which the text is common enough to walk on for, not to ask the index (decision 138). */
  substringWalkFrom: 3,
  /** Notes more it then reads in path order, at most, stopping at a page of matches (decision 138). */
  substringWalk: 1_000,
} as const;
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
  bounded: z.boolean(),
});
export type SearchHit = Omit<z.infer<typeof hitSchema>, 'bounded'>;

/**
 * `complete`: every note the words match was ranked. `bounded`: they matched more than
 * `searchLimits.rankAllUpTo` notes, and the ranking covered the candidates most likely to rank
 * highest: the title matches and the longest notes (see searchNotes).
 */
export type SearchRanking = 'complete' | 'bounded';
export type SearchResult = { query: string; results: SearchHit[]; truncated: boolean; limit: number; ranking: SearchRanking };

export type SearchInput = { query: string; pathPrefix?: string | undefined; limit?: number | undefined };
export type SearchRankingOptions = { rankAllUpTo?: number; boundedCandidates?: number };
/** One node of an `EXPLAIN (FORMAT JSON)` plan: its type, the relation and index it reads, its children. */
export type SearchPlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: SearchPlanNode[]; [key: string]: unknown };
const planNodeSchema: z.ZodType<SearchPlanNode> = z.looseObject({
  'Node Type': z.string(),
  'Relation Name': z.string().optional(),
  'Index Name': z.string().optional(),
  Plans: z.array(z.lazy(() => planNodeSchema)).optional(),
});

/**
 * Ranked word search (tsvector, `websearch` syntax) plus path and substring matches (trigram
 * indexes; queries shorter than 3 characters match words only). Score: word rank, +1 for a path
 * match, +0.5 for a substring match (the first notes by path that contain it). Equal word ranks: the longer note first, then by path (the
 * order a bounded ranking can reproduce, below); equal scores are listed by path. Snippets:
 * ts_headline around words, else the text around the first substring match.
 *
 * Ranking every match of a word in most notes costs a heap visit and a ts_rank_cd per match (~240 ms
 * for 100,000 notes on two cores). Past `rankAllUpTo` matches the words part ranks a bounded
 * candidate set instead, each source read in an index's order and stopped at `boundedCandidates`:
 * notes whose title matches (weight A: one title match outranks two body matches) and the longest
 * notes, in the full ranking's tie order (size, then path): more occurrences rank higher, and equal
 * ranks go to the longer note, so a word spread evenly gives exactly the full ranking. What it can
 * miss is a short note dense with the word. The answer says `ranking: "bounded"`; bench/mcp.ts
 * measures its overlap with the full ranking (`rankAllUpTo: Infinity`) on a fixed query set.
 * The tsquery is written inline, not read from a CTE, so the planner sees it (the driver's unnamed
 * statements are planned with their values) and picks an index walk or a bitmap scan by its
 * statistics of the word.
 *
 * No plan hinges on the statistics of this vault (decision 137, issue 50): a vault that arrived by
 * a bulk import after the last ANALYZE is estimated at about one row, and plans built on that walked
 * every note of it (a rare word 0.6-1 s on 5,000 prose notes). The words part, and the substring
 * part past a short walk, find their notes through the one index that holds the vault with its
 * words and trigrams (migration 0031), by a condition nothing else can answer; every other part
 * names the vault through a parameter the planner cannot look up (`vault` below), so it plans for
 * the table's average vault, not for this one's estimate.
 */
export async function searchNotes(db: DatabasePool, vaultId: string, input: SearchInput, ranking: SearchRankingOptions = {}): Promise<SearchResult> {
  const statement = searchStatement(vaultId, input, ranking);
  return db.transaction(async (tx) => {
    await configureSearch(tx);
    const rows = await tx.any(sql.type(hitSchema)`${statement.sql}`);
    // No hit at all: nothing was common enough to bound.
    const bounded = rows[0]?.bounded ?? false;
    const results = rows.slice(0, statement.limit).map(({ bounded: _, ...hit }) => hit);
    return { query: statement.query, results, truncated: rows.length > statement.limit, limit: statement.limit, ranking: bounded ? 'bounded' : 'complete' };
  });
}

/**
 * The plan Postgres chooses for a search, as `EXPLAIN (FORMAT JSON)` gives it (not run): what
 * test/search-plans.test.ts checks enters through the indexes whatever the statistics say.
 */
export async function explainSearch(db: DatabasePool, vaultId: string, input: SearchInput, options: { analyze?: boolean } = {}): Promise<SearchPlanNode> {
  const statement = searchStatement(vaultId, input, {});
  const explain = options.analyze ? sql.fragment`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` : sql.fragment`EXPLAIN (FORMAT JSON)`;
  return db.transaction(async (tx) => {
    await configureSearch(tx);
    const [plan] = await tx.oneFirst(sql.type(z.object({ 'QUERY PLAN': z.array(z.object({ Plan: planNodeSchema })) }))`${explain} ${statement.sql}`);
    return plan!.Plan;
  });
}

async function configureSearch(tx: CommonQueryMethods): Promise<void> {
  // A scan that stops at a limit starts at the table's first block, not wherever a concurrent scan
  // of the table is (a synchronized scan could begin among other vaults' notes). No parallel
  // workers: a search is one caller's few milliseconds, and a Gather starts its workers even for a
  // branch its one-time filter skips (~7 ms for a rare word here, decision 114). No scan of a whole
  // table: every part reads one vault, and a scan of every tenant's notes, however cheap the
  // planner thinks a stop at a LIMIT, costs what the other tenants hold (decision 137).
  await tx.query(sql.type(emptyRow)`
    SELECT set_config('statement_timeout', ${String(searchLimits.timeoutMs)}, true), set_config('synchronize_seqscans', 'off', true),
           set_config('max_parallel_workers_per_gather', '0', true), set_config('enable_seqscan', 'off', true)`);
}

function searchStatement(vaultId: string, input: SearchInput, ranking: SearchRankingOptions) {
  const query = input.query.trim();
  const limit = Math.min(input.limit ?? searchLimits.defaultResults, searchLimits.maxResults);
  const like = `%${escapeLike(query)}%`;
  const prefix = input.pathPrefix ? `${escapeLike(input.pathPrefix.normalize('NFC'))}%` : '%';
  const substrings = query.length >= searchLimits.minSubstringLength;
  const rankAllUpTo = ranking.rankAllUpTo ?? searchLimits.rankAllUpTo;
  // Infinity (rank every match, as the benchmark's reference does) is "no count at all".
  const countUpTo = Number.isFinite(rankAllUpTo) ? rankAllUpTo + 1 : null;
  // Each source yields at least the words part's own limit.
  const candidates = Math.max(ranking.boundedCandidates ?? searchLimits.boundedCandidates, limit + 1);
  // The vault as an InitPlan's value, unknown when the statement is planned: its rows are estimated
  // as the table's average vault, never as a new vault's "one row" (decision 137).
  const vault = sql.fragment`(SELECT ${vaultId}::uuid)`;
  const tsq = sql.fragment`websearch_to_tsquery('simple', ${query})`;
  // A note's live words match: its vector as its write computed it (no index on notes: decision 114).
  const matches = sql.fragment`n.vault_id = ${vault} AND n.search @@ ${tsq} AND n.path LIKE ${prefix}`;
  const statement = sql.fragment`
    WITH q AS (SELECT ${tsq} AS tsq),
    -- The notes the words match (decision 114): from the word index's table for every note not
    -- queued (its entry then holds the note's live vector: every change queues the note, in the
    -- write's transaction), and from the live vector of each queued note. In one snapshot a
    -- note is in exactly one part. Read as far as a consumer pulls (the count stops at its limit).
    -- The vault as text: only the index of the vault with its words and trigrams answers it
    -- (migration 0031), never the primary key's walk over the vault nor a scan of the table.
    word_matches AS (
      SELECT d.path FROM note_substring_docs d
       WHERE d.vault_id::text = ${vaultId}::uuid::text AND d.search @@ ${tsq} AND d.path LIKE ${prefix}
         -- One hashed look-up a note, not an index probe: a common word counts 2,001 of them.
         AND d.path NOT IN (SELECT q.path FROM note_substring_pending q WHERE q.vault_id = ${vault})
      UNION ALL
      SELECT n.path FROM note_substring_pending q JOIN notes n ON n.vault_id = q.vault_id AND n.path = q.path
       WHERE q.vault_id = ${vault} AND ${matches}
    ),
    common AS (
      SELECT ${countUpTo}::int IS NOT NULL AND count(*) >= ${countUpTo}::int AS bounded
        FROM (SELECT 1 FROM word_matches WHERE ${countUpTo}::int IS NOT NULL LIMIT ${countUpTo}::int) m
    ),
    paths AS (
      -- ILIKE as it is computed on this C-collated column, in the form the path trigram index
      -- has (migration 0027: an index on the bare column would answer path equality too).
      SELECT n.path FROM notes n
       WHERE ${substrings} AND n.vault_id = ${vault} AND lower(n.path) LIKE lower(${like} COLLATE "C") AND n.path LIKE ${prefix}
       ORDER BY length(n.path), n.path LIMIT ${limit + 1}
    ),
    -- Substring matches (decision 106): from the trigram index's table for every note not queued
    -- (its entry is then the note's live content: every change queues the note, in the write's
    -- transaction), and from the live content of the vault's queued notes, each part in path order
    -- with its own limit.
    queued AS (SELECT ARRAY(SELECT q.path FROM note_substring_pending q WHERE ${substrings} AND q.vault_id = ${vault}) AS paths),
    -- The indexed part, decided by this vault's notes, not by an estimate (decision 138). A probe
    -- reads the vault's first notes by path (substringProbe of them): more than a page of matches
    -- there, or a vault that small, is the answer (the first matches by path). A few matches
    -- (substringWalkFrom or more: the text is in some 3 % of the notes) and the walk goes on in path
    -- order, up to substringWalk notes more, stopping at a page of matches; past those notes (if it
    -- did not stop) the index takes over. Fewer: the index of the vault with its trigrams (migration
    -- 0031, the vault as text: nothing else answers it) finds every note that may hold it, each then
    -- checked (a rare text; or one whose trigrams are everywhere, which costs a check of each). Before, the planner chose between a walk of the whole vault and the index by the
    -- table's statistics of the text (other tenants'), and a phrase common nowhere but estimated
    -- common read every note of the vault (0.4 s on 5,000 prose notes).
    probe AS (
      SELECT w.path, w.content ILIKE ${like} AND w.path <> ALL (queued.paths) AS hit
        FROM (SELECT d.path, d.content FROM note_substring_docs d
               WHERE ${substrings} AND d.vault_id = ${vault} AND d.path LIKE ${prefix} ORDER BY d.path LIMIT ${searchLimits.substringProbe}) w, queued
    ),
    probed AS (
      SELECT count(*) < ${searchLimits.substringProbe} OR count(*) FILTER (WHERE hit) > ${limit} AS enough,
             count(*) FILTER (WHERE hit) >= ${searchLimits.substringWalkFrom} AS found, coalesce(max(path), '') AS last
        FROM probe
    ),
    -- The last note the walk may read: past it, the index (none: the walk reads to the vault's end).
    -- (The probe's figures as InitPlan values: a one-time filter and a bound of the key's range.)
    walk_end AS (
      SELECT d.path FROM note_substring_docs d
       WHERE ${substrings} AND NOT (SELECT enough FROM probed) AND (SELECT found FROM probed)
         AND d.vault_id = ${vault} AND d.path LIKE ${prefix} AND d.path > (SELECT last FROM probed)
       ORDER BY d.path OFFSET ${searchLimits.substringWalk - 1} LIMIT 1
    ),
    walk AS (
      SELECT w.path FROM (SELECT d.path, d.content FROM note_substring_docs d
                           WHERE ${substrings} AND NOT (SELECT enough FROM probed) AND (SELECT found FROM probed)
                             AND d.vault_id = ${vault} AND d.path LIKE ${prefix} AND d.path > (SELECT last FROM probed)
                           ORDER BY d.path LIMIT ${searchLimits.substringWalk}) w, queued
       WHERE w.content ILIKE ${like} AND w.path <> ALL (queued.paths)
       ORDER BY w.path LIMIT ${limit + 1}
    ),
    -- Where the index starts: every path when the probe found nothing, past the walk's end when the
    -- walk did not fill a page, nowhere otherwise (NULL: the index part's one-time filter skips it).
    indexed_from AS (
      SELECT CASE WHEN NOT p.found THEN '' WHEN (SELECT count(*) FROM walk) <= ${limit} THEN (SELECT path FROM walk_end) END AS path
        FROM probed p WHERE NOT p.enough
    ),
    substrings AS (
      SELECT path FROM (
        (SELECT path FROM probe WHERE hit ORDER BY path LIMIT ${limit + 1})
        UNION ALL
        (SELECT path FROM walk)
        UNION ALL
        (SELECT d.path FROM note_substring_docs d, queued
          WHERE ${substrings} AND (SELECT path FROM indexed_from) IS NOT NULL
            AND d.vault_id::text = ${vaultId}::uuid::text AND d.path > (SELECT path FROM indexed_from)
            AND d.content ILIKE ${like} AND d.path LIKE ${prefix} AND d.path <> ALL (queued.paths)
          ORDER BY d.path LIMIT ${limit + 1})
        UNION
        (SELECT n.path FROM notes n, queued
          WHERE ${substrings} AND n.vault_id = ${vault} AND n.path = ANY (queued.paths) AND n.path LIKE ${prefix} AND n.content ILIKE ${like}
          ORDER BY n.path LIMIT ${limit + 1})
      ) matched ORDER BY path LIMIT ${limit + 1}
    ),
    -- Each candidate ranked where it is found: no candidate is looked up again to be ranked, and
    -- the union compares no vectors (on 2 KB prose notes, with the hashed look-up above, the words
    -- part reads 4,900 buffers instead of 10,900 for a word in every note; decision 139).
    candidates AS (
      SELECT n.path, n.size_bytes, ts_rank_cd(n.search, ${tsq}) AS rank FROM word_matches w JOIN notes n ON n.vault_id = ${vault} AND n.path = w.path
       WHERE NOT (SELECT bounded FROM common) AND ${matches}
      UNION (SELECT n.path, n.size_bytes, ts_rank_cd(n.search, ${tsq}) FROM notes n WHERE (SELECT bounded FROM common) AND ${matches}
              AND to_tsvector('simple', n.title) @@ ${tsq} LIMIT ${candidates})
      UNION (SELECT n.path, n.size_bytes, ts_rank_cd(n.search, ${tsq}) FROM notes n WHERE (SELECT bounded FROM common) AND ${matches}
              ORDER BY n.size_bytes DESC, n.path LIMIT ${candidates})
    ),
    words AS (
      SELECT path, rank FROM candidates ORDER BY rank DESC, size_bytes DESC, path LIMIT ${limit + 1}
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
                ELSE n.title END AS snippet,
           (SELECT bounded FROM common) AS bounded
      -- Each hit looked up by its key, as the candidates are.
      FROM hits h CROSS JOIN LATERAL (SELECT * FROM notes n WHERE n.vault_id = ${vault} AND n.path = h.path OFFSET 0) n, q
     ORDER BY h.score DESC, n.path`;
  return { sql: statement, query, limit };
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
