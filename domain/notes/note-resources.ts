// The notes an account can read, across all its mappings, one page at a time: what MCP's
// resources/list offers. Ordered by mapping id, then path. Whether the account may read a mapping is
// decided by the one rule every vault call uses (resolveMappingForAccount); the query here only
// narrows the candidates to mappings of vaults the account owns or whose workspace it belongs to.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isAppError } from '../errors.ts';
import { resolveMappingForAccount } from '../identity/vaults.ts';
import { listNoteSummaries } from './store.ts';
import type { NoteSummary } from './store.ts';

type Db = CommonQueryMethods;

/** Where a page starts: after this path of this mapping (the first note of the mapping when path is ''). */
export type ResourcesPosition = { mappingId: string; path: string };
export type ReadableNotesPage = { notes: Array<NoteSummary & { mappingId: string }>; next: ResourcesPosition | null };

const candidateSchema = z.object({ mappingId: z.uuid() });

/** Live mappings of vaults the account owns or whose owning workspace it is a member of, from `fromMappingId` on. */
async function candidateMappings(db: Db, accountId: string, fromMappingId: string | null): Promise<readonly string[]> {
  const rows = await db.any(sql.type(candidateSchema)`
    SELECT mp.id AS "mappingId"
      FROM vault_mappings mp
      JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.revoked_at IS NULL
       AND (v.owner_account_id = ${accountId}
            OR v.owner_workspace_id IN (SELECT m.workspace_id FROM workspace_members m WHERE m.account_id = ${accountId}))
       ${fromMappingId === null ? sql.fragment`` : sql.fragment`AND mp.id >= ${fromMappingId}`}
     ORDER BY mp.id`);
  return rows.map((row) => row.mappingId);
}

/**
 * Up to `limit` notes the account may read, after `after` (or from the start). `next` is where the
 * following page starts, null when nothing can follow (it may lead to an empty page when the later
 * mappings hold no notes). A mapping whose workspace role lacks vault.read is skipped, as if absent.
 */
export async function readableNotesPage(db: Db, accountId: string, options: { limit: number; after: ResourcesPosition | null }): Promise<ReadableNotesPage> {
  const notes: ReadableNotesPage['notes'] = [];
  const candidates = await candidateMappings(db, accountId, options.after?.mappingId ?? null);
  for (const [index, mappingId] of candidates.entries()) {
    let vaultId: string;
    try {
      ({ vaultId } = await resolveMappingForAccount(db, mappingId, accountId, 'read'));
    } catch (error) {
      if (isAppError(error) && (error.code === 'permission_denied' || error.code === 'mapping_not_found')) continue;
      throw error;
    }
    const after = options.after?.mappingId === mappingId && options.after.path !== '' ? options.after.path : undefined;
    const room = options.limit - notes.length;
    // One row more than there is room for: whether this mapping holds more.
    const rows = await listNoteSummaries(db, vaultId, { limit: room + 1, ...(after === undefined ? {} : { after }) });
    for (const row of rows.slice(0, room)) notes.push({ ...row, mappingId });
    if (rows.length > room) return { notes, next: { mappingId, path: notes[notes.length - 1]!.path } };
    if (notes.length === options.limit) {
      const following = candidates[index + 1];
      return { notes, next: following === undefined ? null : { mappingId: following, path: '' } };
    }
  }
  return { notes, next: null };
}
