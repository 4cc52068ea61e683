// Row-level access to notes, trash and provenance events. Every statement is a typed slonik
// template; the knowledge-transaction core (knowledge.ts) composes them inside transactions.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import type { DerivedNote, NoteLink } from './markdown.ts';
import { basenameKey, pathKey } from './paths.ts';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';

type Db = CommonQueryMethods;

export const noteLinkSchema = z.object({
  kind: z.enum(['link', 'embed']),
  target: z.string(),
  heading: z.string().nullable(),
  block: z.string().nullable(),
  alias: z.string().nullable(),
});

export const noteRowSchema = z.object({
  path: z.string(),
  title: z.string(),
  content: z.string(),
  revision: z.string(),
  size: z.number(),
  frontmatter: z.record(z.string(), z.unknown()).nullable(),
  links: z.array(noteLinkSchema),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type NoteRow = z.infer<typeof noteRowSchema>;

export const noteSummarySchema = z.object({ path: z.string(), title: z.string(), revision: z.string(), size: z.number(), updatedAt: isoTimestamp });
export type NoteSummary = z.infer<typeof noteSummarySchema>;

/**
 * A note row of alias `n` as one JSON column (noteRowSchema's shape), for statements that read a note
 * beside columns of their own (the hot reads' fused and kept statements), so its names cannot clash
 * with theirs. Its JSON timestamps are Postgres text; noteRowSchema's isoTimestamp gives them the
 * bytes the other reads return.
 */
export const noteAsJson = sql.fragment`json_build_object('path', n.path, 'title', n.title, 'content', n.content, 'revision', n.revision,
                                 'size', n.size_bytes, 'frontmatter', n.frontmatter, 'links', n.links,
                                 'createdAt', n.created_at, 'updatedAt', n.updated_at)`;

const noteColumns = sql.fragment`n.path, n.title, n.content, n.revision, n.size_bytes AS size, n.frontmatter, n.links,
  n.created_at AS "createdAt", n.updated_at AS "updatedAt"`;

/** Serialises writers of one vault for the rest of the transaction (see note_events in 0002_notes.sql). */
export async function lockVault(tx: Db, vaultId: string): Promise<void> {
  await tx.one(sql.type(idRow)`SELECT id FROM vaults WHERE id = ${vaultId} FOR NO KEY UPDATE`);
}

export async function findNote(db: Db, vaultId: string, path: string): Promise<NoteRow | null> {
  return db.maybeOne(sql.prepared('find_note', noteRowSchema)`SELECT ${noteColumns} FROM notes n WHERE n.vault_id = ${vaultId} AND n.path = ${path}`);
}

// Look-ups of several paths go through path_key (the unique btree). Decision 40 chose it because the
// planner answered `path = ANY (…)` with the path trigram index (~3 ms a path); since migration 0027
// that index is on lower(path) and answers no equality (decision 110).
export async function findNotes(db: Db, vaultId: string, paths: readonly string[]): Promise<readonly NoteRow[]> {
  const wanted = new Set(paths);
  return [...(await findNotesByKey(db, vaultId, paths)).values()].filter((row) => wanted.has(row.path));
}

/** The live notes at the path keys of `paths`, by key: the note itself, or the one whose path differs only by case. */
export async function findNotesByKey(db: Db, vaultId: string, paths: readonly string[]): Promise<Map<string, NoteRow>> {
  if (paths.length === 0) return new Map();
  const rows = await db.any(sql.type(noteRowSchema)`
    SELECT ${noteColumns} FROM notes n WHERE n.vault_id = ${vaultId} AND n.path_key = ANY (${sql.array([...new Set(paths.map(pathKey))], 'text')})`);
  return new Map(rows.map((row) => [pathKey(row.path), row]));
}

const pathStateSchema = z.object({ key: z.string(), path: z.string(), revision: z.string() });
/** What a live note is, without its content: enough to judge a write. */
export type PathState = { path: string; revision: string };

/**
 * The live notes whose path key matches one of `paths`, by key: the same path (an existing note)
 * or another spelling of it (a case collision).
 */
export async function findPathStates(db: Db, vaultId: string, paths: readonly string[]): Promise<Map<string, PathState>> {
  if (paths.length === 0) return new Map();
  const rows = await db.any(sql.type(pathStateSchema)`
    SELECT n.path_key AS key, n.path, n.revision FROM notes n
     WHERE n.vault_id = ${vaultId} AND n.path_key = ANY (${sql.array([...new Set(paths.map(pathKey))], 'text')})`);
  return new Map(rows.map((r) => [r.key, { path: r.path, revision: r.revision }]));
}

export async function upsertNote(tx: Db, vaultId: string, path: string, content: string, derived: DerivedNote, createdAt?: string): Promise<void> {
  await tx.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, frontmatter, links, link_keys, created_at)
    VALUES (${vaultId}, ${path}, ${pathKey(path)}, ${basenameKey(path)}, ${derived.title}, ${content}, ${derived.revision}, ${derived.sizeBytes},
            ${derived.frontmatter ? sql.jsonb(derived.frontmatter as never) : null}, ${sql.jsonb(derived.links as NoteLink[] as never)},
            ${sql.array(linkKeysOf(derived), 'text')},
            coalesce(${createdAt ?? null}::timestamptz, now()))
    ON CONFLICT (vault_id, path) DO UPDATE SET
      title = excluded.title, content = excluded.content, revision = excluded.revision, size_bytes = excluded.size_bytes,
      frontmatter = excluded.frontmatter, links = excluded.links, link_keys = excluded.link_keys, updated_at = now()`);
}

const linkKeysOf = (derived: DerivedNote) => [...new Set(derived.links.filter((l) => l.target).map((l) => basenameKey(l.target)))];

/**
 * Creates or replaces many notes in one statement (the batched form of upsertNote, same columns and
 * derivations). Rows travel as one jsonb array; the search vector is the table's generated column.
 */
export async function upsertNotes(tx: Db, vaultId: string, notes: ReadonlyArray<{ path: string; content: string; derived: DerivedNote }>): Promise<void> {
  if (notes.length === 0) return;
  const rows = notes.map(({ path, content, derived }) => ({
    path,
    path_key: pathKey(path),
    basename_key: basenameKey(path),
    // JSON would carry a lone surrogate as \ud800, which jsonb refuses; as a text parameter (upsertNote)
    // it becomes U+FFFD, and so it does here. The revision is hashed from the same UTF-8 bytes.
    title: derived.title.toWellFormed(),
    content: content.toWellFormed(),
    revision: derived.revision,
    size_bytes: derived.sizeBytes,
    frontmatter: derived.frontmatter,
    links: derived.links,
    link_keys: linkKeysOf(derived),
  }));
  await tx.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes, frontmatter, links, link_keys)
    SELECT ${vaultId}, r.path, r.path_key, r.basename_key, r.title, r.content, r.revision, r.size_bytes, r.frontmatter, r.links, r.link_keys
      FROM jsonb_to_recordset(${sql.jsonb(rows as never)}) AS r(path text, path_key text, basename_key text, title text, content text, revision text,
                                                               size_bytes integer, frontmatter jsonb, links jsonb, link_keys text[])
    ON CONFLICT (vault_id, path) DO UPDATE SET
      title = excluded.title, content = excluded.content, revision = excluded.revision, size_bytes = excluded.size_bytes,
      frontmatter = excluded.frontmatter, links = excluded.links, link_keys = excluded.link_keys, updated_at = now()`);
}

// The GIN indexes of notes (search vector, path trigrams, link keys; and the substring index's
// content trigrams in note_substring_docs) take new entries into a pending list and merge it into
// the index whenever it passes gin_pending_list_limit (4 MB by default): for prose notes that is a
// merge every hundred notes or so, and the merges are most of what a bulk write costs. A bulk writer
// may instead collect a whole batch and merge once, sorted, at its end: about twice as fast. The
// merge (gin_clean_pending_list) needs the role that owns the indexes, as VACUUM does; a role that
// does not own them keeps the default. Nothing changes for readers: a pending entry is found too.
export type GinIndexedTable = 'notes' | 'note_substring_docs';
const ginIndexesOf = (table: GinIndexedTable) => sql.fragment`
  SELECT i.indexrelid AS oid, c.relowner FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
   WHERE i.indrelid = ${table}::regclass AND am.amname = 'gin'`;

/**
 * Defers this transaction's GIN merges to mergeDeferredIndexEntries when the role may merge
 * `table`'s indexes (false otherwise). The setting is the transaction's, not the table's: call it
 * only in a transaction whose GIN writes go to `table`, as the import and the substring indexer do.
 */
export async function deferIndexMerges(tx: Db, table: GinIndexedTable = 'notes'): Promise<boolean> {
  return tx.oneFirst(sql.type(z.object({ deferred: z.boolean() }))`
    SELECT CASE WHEN bool_and(pg_has_role(g.relowner, 'USAGE')) THEN set_config('gin_pending_list_limit', '1GB', true) IS NOT NULL ELSE false END AS deferred
      FROM (${ginIndexesOf(table)}) g`);
}

/** Merges the pending entries of `table`'s GIN indexes (every writer's, not only this transaction's). */
export async function mergeDeferredIndexEntries(tx: Db, table: GinIndexedTable = 'notes'): Promise<void> {
  await tx.query(sql.type(z.object({ merged: z.number() }))`SELECT count(gin_clean_pending_list(g.oid))::int AS merged FROM (${ginIndexesOf(table)}) g`);
}

/** Copies the live note into the trash, removes it, and returns the trash id (one transaction). */
export async function moveNoteToTrash(tx: Db, vaultId: string, path: string, accountId: string | null): Promise<string> {
  const trashId = await tx.oneFirst(sql.type(idRow)`
    INSERT INTO note_trash (vault_id, path, title, content, revision, size_bytes, frontmatter, links, note_created_at, deleted_by_account_id)
    SELECT vault_id, path, title, content, revision, size_bytes, frontmatter, links, created_at, ${accountId}
      FROM notes WHERE vault_id = ${vaultId} AND path = ${path}
    RETURNING id`);
  await tx.query(sql.type(emptyRow)`DELETE FROM notes WHERE vault_id = ${vaultId} AND path = ${path}`);
  return trashId;
}

export const trashItemSchema = z.object({
  trashId: z.uuid(),
  path: z.string(),
  title: z.string(),
  revision: z.string(),
  size: z.number(),
  deletedAt: isoTimestamp,
  restoredAt: isoTimestamp.nullable(),
});
export type TrashItem = z.infer<typeof trashItemSchema>;

const trashColumns = sql.fragment`t.id AS "trashId", t.path, t.title, t.revision, t.size_bytes AS size, t.deleted_at AS "deletedAt", t.restored_at AS "restoredAt"`;

export async function findTrashItem(db: Db, vaultId: string, trashId: string): Promise<(TrashItem & { content: string; noteCreatedAt: string }) | null> {
  return db.maybeOne(sql.type(trashItemSchema.extend({ content: z.string(), noteCreatedAt: isoTimestamp }))`
    SELECT ${trashColumns}, t.content, t.note_created_at AS "noteCreatedAt"
      FROM note_trash t WHERE t.vault_id = ${vaultId} AND t.id = ${trashId}`);
}

export async function markTrashRestored(tx: Db, trashId: string): Promise<void> {
  await tx.query(sql.type(emptyRow)`UPDATE note_trash SET restored_at = now() WHERE id = ${trashId}`);
}

/** Newest first; the cursor is the (deletedAt, id) of the last item returned. */
export async function listTrash(db: Db, vaultId: string, options: { limit: number; before?: { deletedAt: string; id: string } }): Promise<readonly TrashItem[]> {
  const before = options.before;
  return db.any(sql.type(trashItemSchema)`
    SELECT ${trashColumns} FROM note_trash t
     WHERE t.vault_id = ${vaultId} AND t.restored_at IS NULL
       ${before ? sql.fragment`AND (date_trunc('milliseconds', t.deleted_at), t.id) < (${before.deletedAt}::timestamptz, ${before.id}::uuid)` : sql.fragment``}
     -- Cursors carry milliseconds (what the API returns), so order at that precision too.
     ORDER BY date_trunc('milliseconds', t.deleted_at) DESC, t.id DESC
     LIMIT ${options.limit}`);
}

/** The columns of a NoteSummary, from `notes n`. */
export const noteSummaryColumns = sql.fragment`n.path, n.title, n.revision, n.size_bytes AS size, n.updated_at AS "updatedAt"`;

export async function listNoteSummaries(db: Db, vaultId: string, options: { limit: number; after?: string }): Promise<readonly NoteSummary[]> {
  if (options.after === undefined) {
    return db.any(sql.prepared('list_notes_first', noteSummarySchema)`
      SELECT ${noteSummaryColumns} FROM notes n WHERE n.vault_id = ${vaultId} ORDER BY n.path LIMIT ${options.limit}`);
  }
  return db.any(sql.prepared('list_notes_after', noteSummarySchema)`
    SELECT ${noteSummaryColumns} FROM notes n WHERE n.vault_id = ${vaultId} AND n.path > ${options.after} ORDER BY n.path LIMIT ${options.limit}`);
}

/** Makes the rest of the transaction read one snapshot (an export sees the vault at one instant). */
export async function readOneSnapshot(tx: Db): Promise<void> {
  await tx.query(sql.type(emptyRow)`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
}

export async function countNotes(db: Db, vaultId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM notes n WHERE n.vault_id = ${vaultId}`);
}

const noteFileSchema = z.object({ path: z.string(), content: z.string(), updatedAt: isoTimestamp });
export type NoteFile = z.infer<typeof noteFileSchema>;

/**
 * Notes with their content in path order after `after` (keyset paging for exports): at most `limit`
 * notes and, past the first, at most `maxBytes` of content, so a page of large notes stays small.
 */
export async function listNoteFiles(db: Db, vaultId: string, options: { limit: number; maxBytes: number; after: string | null }): Promise<readonly NoteFile[]> {
  const sizes = await db.any(sql.type(z.object({ path: z.string(), size: z.number() }))`
    SELECT n.path, n.size_bytes AS size FROM notes n
     WHERE n.vault_id = ${vaultId} AND n.path > ${options.after ?? ''}
     ORDER BY n.path LIMIT ${options.limit}`);
  if (sizes.length === 0) return [];
  let last = 0;
  for (let total = sizes[0]!.size; last + 1 < sizes.length && total + sizes[last + 1]!.size <= options.maxBytes; ) total += sizes[++last]!.size;
  return db.any(sql.type(noteFileSchema)`
    SELECT n.path, n.content, n.updated_at AS "updatedAt" FROM notes n
     WHERE n.vault_id = ${vaultId} AND n.path >= ${sizes[0]!.path} AND n.path <= ${sizes[last]!.path}
     ORDER BY n.path`);
}

export type EventType = 'note.created' | 'note.replaced' | 'note.deleted' | 'note.restored';
export type Actor = { type: 'account' | 'service_principal' | 'forge'; id: string | null };
/** Where a change came from: the REST API, an MCP tool (`mcp:<tool>`), the Forge executor, System Operations, or the Product Runtime. */
export type Source = 'rest' | `mcp:${string}` | 'forge' | 'ops' | 'runtime';

export type Provenance = { actor: Actor; source: Source; requestId: string | null; idempotencyKey: string | null };

export const noteEventSchema = z.object({
  id: z.string(),
  type: z.enum(['note.created', 'note.replaced', 'note.deleted', 'note.restored']),
  occurredAt: isoTimestamp,
  actor: z.object({ type: z.enum(['account', 'service_principal', 'forge']), id: z.uuid().nullable() }),
  /** The column the write came through: a mapping, or for a Product Runtime write its grant (grantId says so). */
  mappingId: z.uuid(),
  /**
   * The logical-vault grant a Product Runtime write came through (null for every other source). The
   * runtime records the grant in the mapping column (domain/product-runtime/runtime-notes.ts), so for
   * those events mappingId holds the same id; it stays there for clients that already read it.
   */
  grantId: z.uuid().nullable(),
  path: z.string(),
  beforeRevision: z.string().nullable(),
  afterRevision: z.string().nullable(),
  transactionId: z.uuid().nullable(),
  idempotencyKey: z.string().nullable(),
  requestId: z.string().nullable(),
  source: z.string(),
  trashId: z.uuid().nullable(),
});
export type NoteEvent = z.infer<typeof noteEventSchema>;

export async function recordEvent(
  tx: Db,
  event: {
    vaultId: string;
    mappingId: string;
    type: EventType;
    path: string;
    beforeRevision: string | null;
    afterRevision: string | null;
    transactionId: string | null;
    trashId?: string | null;
  },
  provenance: Provenance,
): Promise<string> {
  // The caller holds the vault lock (lockVault), so the per-vault number is taken in commit order.
  const [id] = await recordEventsOf(tx, event.vaultId, [{ ...event, provenance }]);
  return id!;
}

export type EventRecord = {
  type: EventType;
  path: string;
  beforeRevision: string | null;
  afterRevision: string | null;
  trashId?: string | null;
};

/**
 * Records several events of one vault, mapping and transaction in one statement, numbered in the
 * order given (the batched form of recordEvent; the caller holds the vault lock). Returns their ids.
 */
export async function recordEvents(
  tx: Db,
  target: { vaultId: string; mappingId: string; transactionId: string | null },
  events: readonly EventRecord[],
  provenance: Provenance,
): Promise<string[]> {
  return recordEventsOf(tx, target.vaultId, events.map((e) => ({ ...e, mappingId: target.mappingId, transactionId: target.transactionId, provenance })));
}

/**
 * Records events of one vault in one statement, numbered in the order given, each with its own
 * mapping, transaction and provenance (a group commit's writes come from different callers). The
 * caller holds the vault lock. Returns their ids.
 */
export async function recordEventsOf(
  tx: Db,
  vaultId: string,
  events: ReadonlyArray<EventRecord & { mappingId: string; transactionId: string | null; provenance: Provenance }>,
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e, i) => ({
    i: i + 1,
    mapping_id: e.mappingId,
    type: e.type,
    actor_type: e.provenance.actor.type,
    actor_id: e.provenance.actor.id,
    path: e.path,
    before_revision: e.beforeRevision,
    after_revision: e.afterRevision,
    transaction_id: e.transactionId,
    idempotency_key: e.provenance.idempotencyKey,
    request_id: e.provenance.requestId,
    source: e.provenance.source,
    trash_id: e.trashId ?? null,
  }));
  // Data-modifying CTEs run to completion whether or not the outer query reads them.
  const first = await tx.oneFirst(sql.type(z.object({ first: z.number() }))`
    WITH seq AS (UPDATE vaults SET last_event_seq = last_event_seq + ${events.length} WHERE id = ${vaultId} RETURNING last_event_seq - ${events.length} AS base),
    inserted AS (
      INSERT INTO note_events (vault_id, vault_seq, mapping_id, type, actor_type, actor_id, path, before_revision, after_revision,
                               transaction_id, idempotency_key, request_id, source, trash_id)
      SELECT ${vaultId}, seq.base + e.i, e.mapping_id, e.type, e.actor_type, e.actor_id, e.path,
             e.before_revision, e.after_revision, e.transaction_id, e.idempotency_key, e.request_id, e.source, e.trash_id
        FROM seq, jsonb_to_recordset(${sql.jsonb(rows as never)})
             AS e(i integer, mapping_id uuid, type text, actor_type text, actor_id uuid, path text, before_revision text, after_revision text,
                  transaction_id uuid, idempotency_key text, request_id text, source text, trash_id uuid)
    )
    SELECT base + 1 AS first FROM seq`);
  return events.map((_, i) => String(first + i));
}

const eventCursorSchema = z.object({ e: z.number().int().nonnegative() });

/** The cursor a client passes back to read the events after `eventId` (a per-vault number). */
export const eventCursorAfter = (eventId: string | number) => encodeCursor({ e: Number(eventId) });

export type EventsPage = { events: NoteEvent[]; nextCursor: string; hasMore: boolean };

/**
 * One page of a vault's provenance events, oldest first, after an opaque cursor (absent: from the
 * first event). nextCursor is always returned, so a client can poll with it for newer events.
 */
export async function listEventsPage(db: Db, vaultId: string, options: { cursor: string | undefined; limit: number; cursorPointer?: string }): Promise<EventsPage> {
  const after = options.cursor === undefined ? 0 : decodeCursor(options.cursor, eventCursorSchema, options.cursorPointer ?? '/querystring/since').e;
  const rows = await db.any(sql.type(noteEventSchema)`
    SELECT e.vault_seq::text AS id, e.type, e.occurred_at AS "occurredAt", json_build_object('type', e.actor_type, 'id', e.actor_id) AS actor,
           e.mapping_id AS "mappingId",
           CASE WHEN e.source = 'runtime' AND e.actor_type = 'service_principal' THEN e.mapping_id END AS "grantId", e.path, e.before_revision AS "beforeRevision", e.after_revision AS "afterRevision",
           e.transaction_id AS "transactionId", e.idempotency_key AS "idempotencyKey", e.request_id AS "requestId", e.source,
           e.trash_id AS "trashId"
      FROM note_events e
     WHERE e.vault_id = ${vaultId} AND e.vault_seq > ${after}
     ORDER BY e.vault_seq
     LIMIT ${options.limit + 1}`);
  const events = rows.slice(0, options.limit);
  const last = events[events.length - 1];
  return { events, hasMore: rows.length > options.limit, nextCursor: eventCursorAfter(last ? last.id : after) };
}
