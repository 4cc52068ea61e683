// The single-note read (REST, and MCP get_note_content) in ONE round trip: the fused variant of
// admission (domain/principals/admission.ts). The mapping access check and the fetch ride in the
// statement that resolves the token; admission then judges, charges and touches as for any other
// request, and only an admitted caller's mapping is judged (judgeMappingAccess) and note returned.
// On this 2-core machine a Postgres round trip costs about as much as all the rest of a request,
// so the hot read keeps to one (bench/README.md has the figures).
//
// A token and mapping this process admitted before are admitted from its admission cache while the
// admission epoch stands still (decision 111, domain/principals/admission-cache.ts): the statement
// then reads the note, the epoch and the token's expiry only, and steps 2-4 and the mapping's
// judgement run on the kept rows as they would on fresh ones. An epoch that moved on, or an expired
// token, sends the request through the whole statement, in a second round trip.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { AuthenticatedRow, Principal } from '../identity/accounts.ts';
import { judgeMappingAccess, mappingAccessQuery, mappingAccessSchema } from '../identity/vaults.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitAccessToken, admitResolvedAccessToken, fusedRowSchema } from '../principals/admission.ts';
import { AdmissionCache, admissionEpochColumn, lastUseAfterTouch } from '../principals/admission-cache.ts';
import type { TokenAdmission } from '../principals/admission-cache.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import type { UsageSnapshot } from '../usage.ts';
import { hashSecret } from '../secrets.ts';
import { noteAsJson, noteRowSchema } from './store.ts';
import type { NoteRow } from './store.ts';

const rowSchema = fusedRowSchema({ mapping: mappingAccessSchema.nullable(), note: noteRowSchema.nullable(), admissionEpoch: z.uuid() });
const keptRowSchema = z.object({ admissionEpoch: z.uuid(), tokenLive: z.boolean(), note: noteRowSchema.nullable() });

export type CallerRead = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; note: NoteRow | null };

export type CallerReadInput = {
  rawToken: string;
  iface: 'rest' | 'mcp';
  leases: AllowanceLeases;
  /** The process's admission cache; without one every read is admitted in full. */
  admissions?: AdmissionCache<TokenAdmission> | undefined;
  mappingId: string;
  path: string;
};

export async function readNoteAsCaller(db: CommonQueryMethods, input: CallerReadInput): Promise<CallerRead> {
  const { admissions } = input;
  const key = admissions ? AdmissionCache.key(hashSecret(input.rawToken), input.mappingId) : '';
  const entry = admissions?.get(key);
  if (admissions && entry) {
    const kept = await readWithKeptAdmission(db, input, entry);
    if (kept) {
      admissions.hit();
      return kept;
    }
    admissions.stale(key);
  }
  const { fused, ...admitted } = await admitAccessToken(
    db,
    { token: input.rawToken, iface: input.iface, leases: input.leases },
    {
      name: 'read_note_as_caller',
      schema: rowSchema,
      ctes: sql.fragment`mapping AS (${mappingAccessQuery(input.mappingId, sql.fragment`(SELECT id FROM principal)`)})`,
      columns: sql.fragment`
        (SELECT to_jsonb(mapping) FROM mapping) AS mapping,
        (SELECT ${noteAsJson} FROM mapping JOIN notes n ON n.vault_id = mapping."vaultId" AND n.path = ${input.path}) AS note,
        ${admissionEpochColumn} AS "admissionEpoch"`,
    },
  );
  const mapping = judgeMappingAccess(input.mappingId, fused.mapping, 'read');
  if (admissions && fused.mapping) {
    const { mapping: access, note: _note, admissionEpoch, ...row } = fused;
    admissions.set(key, { epoch: admissionEpoch, row: afterTouch(row), mapping: access });
  }
  return { ...admitted, mapping, note: fused.note };
}

/** The read with a kept admission, or null when the epoch has moved on or the token has expired since. */
async function readWithKeptAdmission(db: CommonQueryMethods, input: CallerReadInput, entry: TokenAdmission): Promise<CallerRead | null> {
  const expiresAt = entry.row.tokenExpiresAt;
  const kept = await db.one(sql.prepared('read_note_admitted', keptRowSchema)`
    SELECT ${admissionEpochColumn} AS "admissionEpoch",
           (${expiresAt}::timestamptz IS NULL OR ${expiresAt}::timestamptz > now()) AS "tokenLive",
           (SELECT ${noteAsJson} FROM notes n WHERE n.vault_id = ${entry.mapping.vaultId} AND n.path = ${input.path}) AS note`);
  if (kept.admissionEpoch !== entry.epoch || !kept.tokenLive) return null;
  const admitted = await admitResolvedAccessToken(db, entry.row, { iface: input.iface, leases: input.leases, charge: true });
  entry.row = afterTouch(entry.row);
  const mapping = judgeMappingAccess(input.mappingId, entry.mapping, 'read');
  return { ...admitted, mapping, note: kept.note };
}

/** The row as admission's step 4 left it (lastUseAfterTouch). */
function afterTouch(row: AuthenticatedRow): AuthenticatedRow {
  return { ...row, tokenLastUsedAt: lastUseAfterTouch(row.tokenLastUsedAt) };
}
