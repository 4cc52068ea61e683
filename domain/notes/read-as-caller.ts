// The single-note read (REST, and MCP get_note_content) in ONE round trip: the note rides in the
// statement that admits the token to the mapping (principals/mapping-admission.ts), read from the
// mapping's vault; or, for a token and mapping this process admitted before, beside the admission
// epoch (decision 111). Only an admitted caller gets the note.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import type { Principal } from '../identity/accounts.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitToMapping, mappingWorkSchemas } from '../principals/mapping-admission.ts';
import type { MappingAdmissionInput } from '../principals/mapping-admission.ts';
import type { UsageSnapshot } from '../usage.ts';
import { noteAsJson, noteRowSchema } from './store.ts';
import type { NoteRow } from './store.ts';

const readSchemas = mappingWorkSchemas({ note: noteRowSchema.nullable() });

export type CallerRead = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; note: NoteRow | null };

export type CallerReadInput = MappingAdmissionInput & { path: string };

export async function readNoteAsCaller(db: CommonQueryMethods, input: CallerReadInput): Promise<CallerRead> {
  const { work, ...admitted } = await admitToMapping<{ note: NoteRow | null }>(db, input, {
    name: 'read_note_as_caller',
    schemas: readSchemas,
    columns: sql.fragment`(SELECT ${noteAsJson} FROM mapping JOIN notes n ON n.vault_id = mapping."vaultId" AND n.path = ${input.path}) AS note`,
    keptColumns: (vaultId) => sql.fragment`(SELECT ${noteAsJson} FROM notes n WHERE n.vault_id = ${vaultId} AND n.path = ${input.path}) AS note`,
  });
  return { ...admitted, note: work.note };
}
