// The inventory page (REST GET /api/dev/notes), read as the caller (decision 95). Agents list a vault
// far more often than it changes, and a page of 1,000 rows costs the API ~2.5 ms of CPU to read,
// parse and stringify on this machine, where admission and the round trip cost a tenth of that. So
// each API process keeps the pages it built, as JSON text, under the vault's event sequence
// (vaults.last_event_seq: every change to a note records an event in the same transaction, which
// advances it). Admission is one statement, fused like the hot read's: the token, the caller's access
// to the mapping and the vault's sequence. When the process holds the page at that sequence it is the
// page that snapshot would read, and the request needs nothing more; otherwise the page is read with
// its sequence in one statement and kept. Nothing a request needs lives only here: a miss reads it.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Principal } from '../identity/accounts.ts';
import type { ResolvedMapping } from '../identity/vaults.ts';
import { admitToMapping, mappingWorkSchemas } from '../principals/mapping-admission.ts';
import type { MappingAdmissionInput } from '../principals/mapping-admission.ts';
import type { UsageSnapshot } from '../usage.ts';
import { noteSummaryColumns, noteSummarySchema } from './store.ts';

/** A page: its notes as JSON text (the array's members, comma-separated), the last path, and whether more follow. */
export type InventoryPage = { notes: string; lastPath: string | null; hasMore: boolean };

export const inventoryPageLimits = {
  /** Text kept per process, all vaults together, counted in characters (one or two bytes each in memory); the least recently used pages go first. */
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

const admissionSchemas = mappingWorkSchemas({ vaultSeq: z.number().nullable() });
const pageRowSchema = noteSummarySchema.extend({ seq: z.number() });

/** An admitted inventory request: who, the mapping it may read, and the vault's event sequence now. */
export type InventoryCaller = Principal & { usage: UsageSnapshot; mapping: ResolvedMapping; vaultSeq: number };

/**
 * Admission (token, allowance) and the caller's read access to the mapping, with the vault's
 * sequence: one statement (principals/mapping-admission.ts; a kept admission's, while the admission
 * epoch stands still, reads the sequence and the epoch only).
 */
export async function admitInventory(db: CommonQueryMethods, input: Omit<MappingAdmissionInput, 'iface'>): Promise<InventoryCaller> {
  const { work, ...admitted } = await admitToMapping<{ vaultSeq: number | null }>(db, { ...input, iface: 'rest' }, {
    name: 'inventory_as_caller',
    schemas: admissionSchemas,
    columns: sql.fragment`(SELECT v.last_event_seq FROM mapping JOIN vaults v ON v.id = mapping."vaultId") AS "vaultSeq"`,
    keptColumns: (vaultId) => sql.fragment`(SELECT v.last_event_seq FROM vaults v WHERE v.id = ${vaultId}) AS "vaultSeq"`,
  });
  return { ...admitted, vaultSeq: work.vaultSeq ?? 0 };
}

/**
 * The page after `after` of the vault as it is at `vaultSeq` (admitInventory's): the one this process
 * holds, or else read with the sequence it is the page of, in one statement (one snapshot), and kept.
 */
export async function inventoryPage(db: CommonQueryMethods, pages: InventoryPages, vault: { vaultId: string; vaultSeq: number }, after: string, limit: number): Promise<InventoryPage> {
  const held = pages.get(InventoryPages.key(vault.vaultId, vault.vaultSeq, after, limit));
  if (held) return held;
  const rows = await db.any(sql.prepared('inventory_page', pageRowSchema)`
    SELECT ${noteSummaryColumns}, v.last_event_seq AS seq
      FROM vaults v JOIN notes n ON n.vault_id = v.id
     WHERE v.id = ${vault.vaultId} AND n.path > ${after}
     ORDER BY n.path LIMIT ${limit + 1}`);
  const shown = rows.slice(0, limit);
  const page: InventoryPage = {
    notes: shown.map(({ path, title, revision, size, updatedAt }) => JSON.stringify({ path, title, revision, size, updatedAt })).join(','),
    lastPath: shown.at(-1)?.path ?? null,
    hasMore: rows.length > limit,
  };
  // An empty page carries no sequence to keep it under; it is one cheap statement anyway.
  if (rows.length > 0) pages.set(InventoryPages.key(vault.vaultId, rows[0]!.seq, after, limit), page);
  return page;
}
