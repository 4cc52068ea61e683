// The inventory page (REST GET /api/dev/notes), read as the caller (decision 95). Agents list a vault
// far more often than it changes, and a page of 1,000 rows costs the API ~2.5 ms of CPU to read,
// parse and stringify on this machine, where admission and the round trip cost a tenth of that. So
// each API process keeps the pages it built, as JSON text, under the vault's event sequence
// (vaults.last_event_seq: every change to a note records an event in the same transaction, which
// advances it). Each request is one statement, fused with admission like the hot read: the token,
// the caller's access to the mapping and the vault's sequence. When the process holds the page at
// that sequence it is the page the request's snapshot would read; otherwise the page is read with the
// sequence in one statement and kept. Nothing a request needs lives only here: a miss reads it.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';
import type { AllowanceLeases } from '../allowance-lease.ts';
import type { Principal } from '../identity/accounts.ts';
import { judgeMappingAccess, mappingAccessQuery, mappingAccessSchema } from '../identity/vaults.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitAccessToken, fusedRowSchema } from '../principals/admission.ts';
import type { UsageSnapshot } from '../usage.ts';

/** A page: its notes as JSON text (the array's members, comma-separated), the last path, and whether more follow. */
export type InventoryPage = { notes: string; lastPath: string | null; hasMore: boolean };

export const inventoryPageLimits = {
  /** Text kept per process, all vaults together; the least recently used pages go first. */
  maxCachedBytes: 64 * 1024 * 1024,
} as const;

/** Pages by vault, sequence, cursor and size; bounded by their text's length, least recently used evicted. */
export class InventoryPages {
  readonly #pages = new Map<string, InventoryPage>();
  #bytes = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number = inventoryPageLimits.maxCachedBytes) {
    this.#maxBytes = maxBytes;
  }

  static key(vaultId: string, seq: number, after: string, limit: number): string {
    return JSON.stringify([vaultId, seq, after, limit]);
  }

  get(key: string): InventoryPage | undefined {
    const page = this.#pages.get(key);
    if (page) {
      // Most recently used last: Map keeps insertion order.
      this.#pages.delete(key);
      this.#pages.set(key, page);
    }
    return page;
  }

  set(key: string, page: InventoryPage): void {
    if (page.notes.length > this.#maxBytes) return;
    const old = this.#pages.get(key);
    if (old) this.#bytes -= old.notes.length;
    this.#pages.delete(key);
    this.#pages.set(key, page);
    this.#bytes += page.notes.length;
    for (const [oldest, evicted] of this.#pages) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#pages.delete(oldest);
      this.#bytes -= evicted.notes.length;
    }
  }

  get size(): number {
    return this.#pages.size;
  }
}

const admittedRowSchema = fusedRowSchema({ mapping: mappingAccessSchema.nullable(), vaultSeq: z.number().nullable() });
const pageRowSchema = z.object({ path: z.string(), title: z.string(), revision: z.string(), size: z.number(), updatedAt: isoTimestamp, seq: z.number() });

export type CallerInventory = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; page: InventoryPage };

export async function listInventoryAsCaller(
  db: CommonQueryMethods,
  pages: InventoryPages,
  input: { rawToken: string; leases: AllowanceLeases; mappingId: string; limit: number; after: string | undefined },
): Promise<CallerInventory> {
  const { fused, ...admitted } = await admitAccessToken(
    db,
    { token: input.rawToken, iface: 'rest', leases: input.leases },
    {
      name: 'inventory_as_caller',
      schema: admittedRowSchema,
      ctes: sql.fragment`mapping AS (${mappingAccessQuery(input.mappingId, sql.fragment`(SELECT id FROM principal)`)})`,
      columns: sql.fragment`
        (SELECT to_jsonb(mapping) FROM mapping) AS mapping,
        (SELECT v.last_event_seq FROM mapping JOIN vaults v ON v.id = mapping."vaultId") AS "vaultSeq"`,
    },
  );
  const mapping = judgeMappingAccess(input.mappingId, fused.mapping, 'read');
  const after = input.after ?? '';
  const held = pages.get(InventoryPages.key(mapping.vaultId, fused.vaultSeq ?? 0, after, input.limit));
  return { ...admitted, mapping, page: held ?? (await readPage(db, pages, mapping.vaultId, after, input.limit)) };
}

/** Reads a page and the sequence it is the page of, in one statement (one snapshot), and keeps it. */
async function readPage(db: CommonQueryMethods, pages: InventoryPages, vaultId: string, after: string, limit: number): Promise<InventoryPage> {
  const rows = await db.any(sql.prepared('inventory_page', pageRowSchema)`
    SELECT n.path, n.title, n.revision, n.size_bytes AS size, n.updated_at AS "updatedAt", v.last_event_seq AS seq
      FROM vaults v JOIN notes n ON n.vault_id = v.id
     WHERE v.id = ${vaultId} AND n.path > ${after}
     ORDER BY n.path LIMIT ${limit + 1}`);
  const shown = rows.slice(0, limit);
  const page: InventoryPage = {
    notes: shown.map(({ path, title, revision, size, updatedAt }) => JSON.stringify({ path, title, revision, size, updatedAt })).join(','),
    lastPath: shown.at(-1)?.path ?? null,
    hasMore: rows.length > limit,
  };
  // An empty page carries no sequence to keep it under; it is one cheap statement anyway.
  if (rows.length > 0) pages.set(InventoryPages.key(vaultId, rows[0]!.seq, after, limit), page);
  return page;
}
