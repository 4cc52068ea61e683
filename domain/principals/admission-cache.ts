// What admitting a token to a mapping found, kept by the API process while the admission epoch
// stands still (decision 111, migration 0028). Admission's statement reads seven rows (the token,
// its account, the mapping, its vault, the caller's membership and role, and the note); on this
// 2-core machine that statement, not the HTTP work, held the hot read to about half of a bare
// read. Every change to a row admission reads replaces `admission_epoch.epoch` (a random value) in
// the changing transaction (a deferred trigger, at its commit), so a statement that reads the epoch unchanged
// reads the same tokens, accounts, mappings, vaults, memberships and roles as the statement that
// filled the entry: the hot read then asks for the note, the epoch and whether the token is still
// unexpired, in one statement, and judges, charges and touches exactly as admission does.
//
// Only successful admissions are kept (an unknown token, a refusal or a mapping the caller cannot
// read always runs the whole statement), under the token's hash and the mapping id, never the token.
// Any change anywhere advances the one epoch, so every process's entries go stale together and each
// is refilled by the next request's full admission: the cost of a change is one ordinary admission
// per entry, never a wrong answer.
import { sql } from 'slonik';
import type { AuthenticatedRow } from '../identity/accounts.ts';
import type { MappingAccess } from '../identity/vaults.ts';

export const admissionCacheLimits = {
  /** Entries per process (token and mapping pairs); the least recently used go first. */
  maxEntries: 10_000,
} as const;

/** One kept admission: the token's row as resolved, the caller's access to the mapping, and the epoch they were read at. */
export type AdmissionEntry = { epoch: string; row: AuthenticatedRow; mapping: MappingAccess };

/** How the cache has answered since the process started (hnp_admission_cache_lookups_total). */
export type AdmissionCacheCounts = { hit: number; miss: number; stale: number };

/** The epoch now, as a column of an admission or hot-read statement. */
export const admissionEpochColumn = sql.fragment`(SELECT epoch FROM admission_epoch)`;

export class AdmissionCache {
  readonly #entries = new Map<string, AdmissionEntry>();
  readonly #maxEntries: number;
  readonly counts: AdmissionCacheCounts = { hit: 0, miss: 0, stale: 0 };

  constructor(maxEntries: number = admissionCacheLimits.maxEntries) {
    this.#maxEntries = maxEntries;
  }

  static key(tokenHash: string, mappingId: string): string {
    return `${tokenHash} ${mappingId}`;
  }

  /** The entry to try (counted a miss when there is none); its epoch is checked by the caller's statement. */
  get(key: string): AdmissionEntry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) {
      this.counts.miss++;
      return undefined;
    }
    // Most recently used last: Map keeps insertion order.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  /** The entry's epoch held: it answered. */
  hit(): void {
    this.counts.hit++;
  }

  /** The entry's epoch had moved on (or its token had expired): gone, and the request admitted in full. */
  stale(key: string): void {
    this.counts.stale++;
    this.#entries.delete(key);
  }

  set(key: string, entry: AdmissionEntry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
