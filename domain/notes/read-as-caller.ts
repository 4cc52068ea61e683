// The single-note read (REST, and MCP get_note_content) in ONE round trip: the fused variant of
// admission (domain/principals/admission.ts). The mapping access check and the fetch ride in the
// statement that resolves the token; admission then judges, charges and touches as for any other
// request, and only an admitted caller's mapping is judged (judgeMappingAccess) and note returned.
// On this 2-core machine a Postgres round trip costs about as much as all the rest of a request,
// so the hot read keeps to one (bench/README.md has the figures).
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import type { Principal } from '../identity/accounts.ts';
import { judgeMappingAccess, mappingAccessQuery, mappingAccessSchema } from '../identity/vaults.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitAccessToken, fusedRowSchema } from '../principals/admission.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import type { UsageSnapshot } from '../usage.ts';
import { noteRowSchema } from './store.ts';
import type { NoteRow } from './store.ts';

// The note travels as one JSON column so its names cannot clash with the account's. Its JSON
// timestamps are Postgres text; noteRowSchema's isoTimestamp gives them the bytes the other reads return.
const rowSchema = fusedRowSchema({ mapping: mappingAccessSchema.nullable(), note: noteRowSchema.nullable() });

export type CallerRead = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; note: NoteRow | null };

export async function readNoteAsCaller(
  db: CommonQueryMethods,
  input: { rawToken: string; iface: 'rest' | 'mcp'; leases: AllowanceLeases; mappingId: string; path: string },
): Promise<CallerRead> {
  const { fused, ...admitted } = await admitAccessToken(
    db,
    { token: input.rawToken, iface: input.iface, leases: input.leases },
    {
      name: 'read_note_as_caller',
      schema: rowSchema,
      ctes: sql.fragment`mapping AS (${mappingAccessQuery(input.mappingId, sql.fragment`(SELECT id FROM principal)`)})`,
      columns: sql.fragment`
        (SELECT to_jsonb(mapping) FROM mapping) AS mapping,
        (SELECT json_build_object('path', n.path, 'title', n.title, 'content', n.content, 'revision', n.revision,
                                  'size', n.size_bytes, 'frontmatter', n.frontmatter, 'links', n.links,
                                  'createdAt', n.created_at, 'updatedAt', n.updated_at)
           FROM mapping JOIN notes n ON n.vault_id = mapping."vaultId" AND n.path = ${input.path}) AS note`,
    },
  );
  const mapping = judgeMappingAccess(input.mappingId, fused.mapping, 'read');
  return { ...admitted, mapping, note: fused.note };
}
