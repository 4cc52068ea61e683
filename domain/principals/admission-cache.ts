// What admitting a credential found, kept by the API process while the admission epoch stands still
// (decisions 111 and 112, migrations 0028 and 0029). Admission's statements read several rows (a
// personal access token's: the token, its account, the mapping, its vault, the caller's membership
// and role; a service credential's chain: the credential, its principal, installation, product,
// organization, the workspace assignment and the vault grant); on this 2-core machine those
// statements, not the HTTP work, held the hot reads to about half of a bare read. Every change to a
// row admission reads replaces `admission_epoch.epoch` (a random value) in the changing transaction
// (a deferred trigger, at its commit), so a statement that reads the epoch unchanged reads the same
// rows as the statement that filled the entry: the request then asks for its own work, the epoch
// and whether the credential is still unexpired, in one statement, and is judged, charged and
// touched exactly as admission does.
//
// One cache per kind of principal (api/app.ts): personal access tokens keyed by the token's hash and
// the mapping id (principals/mapping-admission.ts), service credentials by the credential's hash and
// the vault id (domain/product-runtime/chain.ts); never the secret itself. Only successful
// admissions are kept (an unknown credential or a refusal always runs the whole statement). Any
// change anywhere advances the one epoch, so every process's entries go stale together and each is
// refilled by the next request's full admission: the cost of a change is one ordinary admission per
// entry, never a wrong answer.
import { sql } from 'slonik';
import { touchDue } from '../identity/accounts.ts';
import type { AuthenticatedRow } from '../identity/accounts.ts';
import type { MappingAccess } from '../identity/vaults.ts';

export const admissionCacheLimits = {
  /** Entries per process and kind of principal (credential and mapping or vault pairs); the least recently used go first. */
  maxEntries: 10_000,
} as const;

/** What every kept admission holds: the epoch its rows were read at. */
export type KeptAdmission = { epoch: string };

/** A personal access token's kept admission: the token's row as resolved and the caller's access to the mapping. */
export type TokenAdmission = KeptAdmission & { row: AuthenticatedRow; mapping: MappingAccess };

/** How the cache has answered since the process started (hnp_admission_cache_lookups_total). */
export type AdmissionCacheCounts = { hit: number; miss: number; stale: number };

/** The epoch now, as a column of an admission or hot-read statement. */
export const admissionEpochColumn = sql.fragment`(SELECT epoch FROM admission_epoch)`;

/**
 * A credential's last use as admission's touch leaves it: now when a touch was due (admission just
 * touched it), else unchanged. A kept entry remembers it, so its next minute of requests does not
 * touch again.
 */
export function lastUseAfterTouch(lastUsedAt: string | null): string | null {
  return touchDue(lastUsedAt) ? new Date().toISOString() : lastUsedAt;
}

export class AdmissionCache<E extends KeptAdmission> {
  readonly #entries = new Map<string, E>();
  readonly #maxEntries: number;
  readonly counts: AdmissionCacheCounts = { hit: 0, miss: 0, stale: 0 };

  constructor(maxEntries: number = admissionCacheLimits.maxEntries) {
    this.#maxEntries = maxEntries;
  }

  /** The key of a credential (its hash) admitted to a mapping or vault ('' for none). */
  static key(secretHash: string, targetId: string): string {
    return `${secretHash} ${targetId}`;
  }

  /** The entry to try (counted a miss when there is none); its epoch is checked by the caller's statement. */
  get(key: string): E | undefined {
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

  set(key: string, entry: E): void {
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
