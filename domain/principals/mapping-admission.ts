// A personal access token admitted to read a mapping, with the request's own work read in the same
// statement: the hot note read (notes/read-as-caller.ts) and the inventory's admission
// (notes/inventory.ts). The fused variant of admission (admission.ts): the mapping access check and
// the work ride in the statement that resolves the token; admission then judges, charges and touches
// as for any other request, and only an admitted caller's mapping is judged (judgeMappingAccess).
// On this 2-core machine a Postgres round trip costs about as much as all the rest of a request, so
// these requests keep to one.
//
// A token and mapping this process admitted before are admitted from its admission cache while the
// admission epoch stands still (decision 111, admission-cache.ts): the statement then reads the work,
// the epoch and whether the token is still unexpired, and steps 2-4 and the mapping's judgement run
// on the kept rows as they would on fresh ones. An epoch that moved on, or an expired token, sends
// the request through the whole statement, in a second round trip.
import { sql } from 'slonik';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { authenticatedSchema } from '../identity/accounts.ts';
import type { AuthenticatedRow } from '../identity/accounts.ts';
import { judgeMappingAccess, mappingAccessQuery, mappingAccessSchema } from '../identity/vaults.ts';
import type { MappingAccess, ResolvedMapping } from '../identity/vaults.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import { hashSecret } from '../secrets.ts';
import { admitAccessToken, admitResolvedAccessToken, fusedRowSchema } from './admission.ts';
import type { Admitted } from './admission.ts';
import { AdmissionCache, admissionEpochColumn, lastUseAfterTouch } from './admission-cache.ts';
import type { TokenAdmission } from './admission-cache.ts';

/** The row schemas of a work's two statements: the whole admission's and the kept one's, each with the work's columns (`shape`). Build once, at module level. */
export function mappingWorkSchemas<S extends z.ZodRawShape>(shape: S) {
  return {
    whole: fusedRowSchema({ ...shape, mapping: mappingAccessSchema.nullable(), admissionEpoch: z.uuid() }),
    kept: z.object({ ...shape, admissionEpoch: z.uuid(), tokenLive: z.boolean() }),
  };
}

/** The columns a whole admission's row has besides the principal's and the work's. */
type WholeColumns = { mapping: MappingAccess | null; admissionEpoch: string };
/** The columns a kept admission's row has besides the work's. */
type KeptColumns = { admissionEpoch: string; tokenLive: boolean };

/** A request's own work (its columns parse to T), read beside its admission to the mapping. */
export type MappingWork<T> = {
  /** Names the prepared statements: `name` (the whole admission) and `${name}_kept`. */
  name: string;
  /** mappingWorkSchemas(the work's shape). */
  schemas: { whole: z.ZodType<AuthenticatedRow & WholeColumns & T>; kept: z.ZodType<KeptColumns & T> };
  /** The work's columns beside the whole admission; they read the caller's mapping as the CTE `mapping` ("vaultId" …). */
  columns: FragmentSqlToken;
  /** The same columns beside a kept admission, given the mapping's vault. */
  keptColumns: (vaultId: string) => FragmentSqlToken;
};

export type MappingAdmissionInput = {
  rawToken: string;
  iface: 'rest' | 'mcp';
  leases: AllowanceLeases;
  /** The process's admission cache; without one every request is admitted in full. */
  admissions?: AdmissionCache<TokenAdmission> | undefined;
  mappingId: string;
};

/** An admitted, charged request to read a mapping, and its work's columns. */
export type AdmittedToMapping<T> = Admitted & { mapping: ResolvedMapping; work: T };

const authenticatedKeys = Object.keys(authenticatedSchema.shape) as (keyof AuthenticatedRow)[];

export async function admitToMapping<T>(db: CommonQueryMethods, input: MappingAdmissionInput, work: MappingWork<T>): Promise<AdmittedToMapping<T>> {
  const { admissions } = input;
  const key = admissions ? AdmissionCache.key(hashSecret(input.rawToken), input.mappingId) : '';
  const entry = admissions?.get(key);
  if (admissions && entry) {
    const kept = await admitWithKeptAdmission(db, input, entry, work);
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
      name: work.name,
      schema: work.schemas.whole,
      ctes: sql.fragment`mapping AS (${mappingAccessQuery(input.mappingId, sql.fragment`(SELECT id FROM principal)`)})`,
      columns: sql.fragment`(SELECT to_jsonb(mapping) FROM mapping) AS mapping, ${admissionEpochColumn} AS "admissionEpoch", ${work.columns}`,
    },
  );
  const mapping = judgeMappingAccess(input.mappingId, fused.mapping, 'read');
  if (admissions && fused.mapping) {
    // Step 1's row alone (the fused row is the principal's columns, the mapping's and the work's).
    const row = Object.fromEntries(authenticatedKeys.map((k) => [k, fused[k]])) as AuthenticatedRow;
    admissions.set(key, { epoch: fused.admissionEpoch, row: afterTouch(row), mapping: fused.mapping });
  }
  return { ...admitted, mapping, work: fused };
}

/** The request with a kept admission, or null when the epoch has moved on or the token has expired since. */
async function admitWithKeptAdmission<T>(db: CommonQueryMethods, input: MappingAdmissionInput, entry: TokenAdmission, work: MappingWork<T>): Promise<AdmittedToMapping<T> | null> {
  const expiresAt = entry.row.tokenExpiresAt;
  const kept = await db.one(sql.prepared(`${work.name}_kept`, work.schemas.kept)`
    SELECT ${admissionEpochColumn} AS "admissionEpoch",
           (${expiresAt}::timestamptz IS NULL OR ${expiresAt}::timestamptz > now()) AS "tokenLive",
           ${work.keptColumns(entry.mapping.vaultId)}`);
  if (kept.admissionEpoch !== entry.epoch || !kept.tokenLive) return null;
  const admitted = await admitResolvedAccessToken(db, entry.row, { iface: input.iface, leases: input.leases, charge: true });
  entry.row = afterTouch(entry.row);
  const mapping = judgeMappingAccess(input.mappingId, entry.mapping, 'read');
  return { ...admitted, mapping, work: kept };
}

/** The row as admission's step 4 left it (lastUseAfterTouch). */
function afterTouch(row: AuthenticatedRow): AuthenticatedRow {
  return { ...row, tokenLastUsedAt: lastUseAfterTouch(row.tokenLastUsedAt) };
}
