// The single-note read (REST, and MCP get_note_content) in ONE round trip: authenticate the token, charge the allowance, check the
// caller's access to the mapping and fetch the note, as one statement composed from the same
// fragments the separate steps use (principalCtes, mappingAccessQuery) and judged by the same
// functions, in the same order. On this 2-core machine a Postgres round trip costs about as much
// as all the rest of a request, so the hot read keeps to one (bench/README.md has the figures).
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { AppError } from '../errors.ts';
import { authenticatedSchema } from '../identity/accounts.ts';
import type { Principal } from '../identity/accounts.ts';
import { judgeMappingAccess, mappingAccessSchema } from '../identity/vaults.ts';
import { mappingAccessQuery } from '../identity/vaults.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { looksLikeSecret, secretPrefixes } from '../secrets.ts';
import { settleWithLease } from '../allowance-lease.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import { principalCtes } from '../usage.ts';
import type { UsageSnapshot } from '../usage.ts';
import { noteRowSchema } from './store.ts';
import type { NoteRow } from './store.ts';

// The note travels as one JSON column so its names cannot clash with the account's. Its JSON
// timestamps are Postgres text; noteRowSchema's isoTimestamp gives them the bytes the other reads return.
const rowSchema = authenticatedSchema.extend({
  mapping: mappingAccessSchema.nullable(),
  note: noteRowSchema.nullable(),
});

export type CallerRead = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; note: NoteRow | null };

/** The request is counted through the process's allowance leases once the caller is judged. */
export async function readNoteAsCaller(
  db: CommonQueryMethods,
  input: { rawToken: string; iface: 'rest' | 'mcp'; leases: AllowanceLeases; mappingId: string; path: string },
): Promise<CallerRead> {
  if (!looksLikeSecret(input.rawToken, secretPrefixes.accessToken)) throw new AppError('invalid_token');
  const row = await db.maybeOne(sql.prepared('read_note_as_caller', rowSchema)`
    WITH ${principalCtes(input.rawToken, input.iface, input.leases.entitlements)},
    mapping AS (${mappingAccessQuery(input.mappingId, sql.fragment`(SELECT account_id FROM chargeable)`)})
    SELECT p.*,
           (SELECT to_jsonb(mapping) FROM mapping) AS mapping,
           (SELECT json_build_object('path', n.path, 'title', n.title, 'content', n.content, 'revision', n.revision,
                                     'size', n.size_bytes, 'frontmatter', n.frontmatter, 'links', n.links,
                                     'createdAt', n.created_at, 'updatedAt', n.updated_at)
              FROM mapping JOIN notes n ON n.vault_id = mapping."vaultId" AND n.path = ${input.path}) AS note
      FROM principal p`);
  const principal = await settleWithLease(db, row, input.iface, input.leases);
  const mapping = judgeMappingAccess(input.mappingId, row!.mapping, 'read');
  return { ...principal, mapping, note: row!.note };
}
