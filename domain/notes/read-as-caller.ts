// The single-note read (REST, and MCP get_note_content) in ONE round trip: the note rides in the
// statement that admits the token to the mapping (principals/mapping-admission.ts), read from the
// mapping's vault; or, for a token and mapping this process admitted before, beside the admission
// epoch (decision 111). Only an admitted caller gets the note.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { rowsAsDeclared } from '../../db/pool.ts';
import type { Principal } from '../identity/accounts.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitToMapping, mappingWorkSchemas } from '../principals/mapping-admission.ts';
import type { MappingAdmissionInput } from '../principals/mapping-admission.ts';
import type { UsageSnapshot } from '../usage.ts';
import { noteRowSchema } from './store.ts';
import type { NoteRow } from './store.ts';

/** A timestamptz column as `isoTimestamp` prints it (UTC, milliseconds truncated as the pool's parser does). */
const isoMillis = (column: 'created_at' | 'updated_at') => sql.fragment`to_char(${sql.identifier(['n', column])} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The note row of alias `n` as one JSON column in noteRowSchema's shape (store.ts's `noteAsJson`),
 * its timestamps already in their final form, so the hot statement's row needs no parse.
 */
const noteJson = sql.fragment`json_build_object('path', n.path, 'title', n.title, 'revision', n.revision, 'size', n.size_bytes,
                              'createdAt', ${isoMillis('created_at')}, 'updatedAt', ${isoMillis('updated_at')},
                              'frontmatter', n.frontmatter, 'links', n.links, 'content', n.content)`;

const { whole, kept } = mappingWorkSchemas({ note: noteRowSchema.nullable() });
/**
 * The whole admission's row is parsed: it runs once per token, mapping and admission epoch, and its
 * principal columns are what admission judges. The kept statement's row, the hot read's, is not
 * (`rowsAsDeclared`): the epoch is a uuid column, `tokenLive` a boolean expression, and the note is
 * built above from NOT NULL columns of its types, timestamps included; its `frontmatter` and `links`
 * are the writer's (markdown.ts derives them from the content on every write). Parsing it cost
 * ~10 µs a read (isoTimestamp's two regex tests a timestamp, the uuid's) for nothing a column can
 * hold (perf figures: decision entry of issue 49).
 */
const readSchemas = { whole, kept: rowsAsDeclared(kept) };

export type CallerRead = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; note: NoteRow | null };

export type CallerReadInput = MappingAdmissionInput & { path: string };

export async function readNoteAsCaller(db: CommonQueryMethods, input: CallerReadInput): Promise<CallerRead> {
  const { work, ...admitted } = await admitToMapping<{ note: NoteRow | null }>(db, input, {
    name: 'read_note_as_caller',
    schemas: readSchemas,
    columns: sql.fragment`(SELECT ${noteJson} FROM mapping JOIN notes n ON n.vault_id = mapping."vaultId" AND n.path = ${input.path}) AS note`,
    keptColumns: (vaultId) => sql.fragment`(SELECT ${noteJson} FROM notes n WHERE n.vault_id = ${vaultId} AND n.path = ${input.path}) AS note`,
  });
  return { ...admitted, note: work.note };
}
