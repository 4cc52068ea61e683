// Group commit of single-note writes, per vault (decision 93). Writers of one vault take turns on its
// lock, and an apply costs about ten statements, each a round trip the process pays in CPU (the
// socket writes alone were a quarter of an apply's profile) while the vault stays locked. So one API
// process runs at most one write transaction per vault at a time: writes that arrive while it runs
// wait, and the next transaction takes all of them (up to a count and a size), each with the outcome
// it would have had alone (knowledge.ts applyWriteBatch). A write alone costs what it did; thirty-two
// concurrent writes of one vault share one transaction's statements and one commit.
//
// The queue lives only as long as the requests waiting in it (nothing a later request needs is
// kept here), and other API processes write the same vault in their own turns on its lock.
import type { DatabasePool } from 'slonik';
import { unreachableReason } from '../../db/availability.ts';
import { applyWriteBatch, writeJob } from './knowledge.ts';
import type { ApplyResult, Preconditions, Target, WriteApplied, WriteJob } from './knowledge.ts';
import type { IdempotencyScope } from '../idempotency.ts';
import type { Provenance } from './store.ts';
import { contentBytes } from './paths.ts';

export const groupCommitLimits = {
  /** Writes in one transaction. */
  maxWrites: 100,
  /** Their content in one transaction (a single larger write still goes, alone). */
  maxContentBytes: 4 * 1024 * 1024,
} as const;

type Waiting = { job: WriteJob; bytes: number; resolve: (result: ApplyResult<WriteApplied>) => void; reject: (error: unknown) => void };

export class GroupCommit {
  readonly #db: DatabasePool;
  /** Per vault: the writes waiting for the transaction after the running one. */
  readonly #waiting = new Map<string, Waiting[]>();

  constructor(db: DatabasePool) {
    this.#db = db;
  }

  /** knowledge.ts applyWrite, in the vault's next transaction. */
  async applyWrite(target: Target, rawInput: { path: string; content: string } & Preconditions, provenance: Provenance, idempotency: IdempotencyScope): Promise<ApplyResult<WriteApplied>> {
    return this.#enqueue(writeJob(target, rawInput, provenance, idempotency));
  }

  #enqueue(job: WriteJob): Promise<ApplyResult<WriteApplied>> {
    const vaultId = job.target.vaultId;
    return new Promise((resolve, reject) => {
      const entry: Waiting = { job, bytes: contentBytes(job.input.content), resolve, reject };
      const queue = this.#waiting.get(vaultId);
      if (queue) return void queue.push(entry);
      // Nothing running for this vault: this write starts a transaction now.
      this.#waiting.set(vaultId, []);
      void this.#run(vaultId, [entry]);
    });
  }

  async #run(vaultId: string, batch: Waiting[]): Promise<void> {
    for (;;) {
      await this.#transaction(vaultId, batch).catch(async (error: unknown) => {
        // The transaction failed as a whole (nothing of it committed, or its keys replay it). One
        // write's failure is not the others': each runs again alone and answers what it would have
        // alone. Not when the database is unreachable: alone, each would only fail the same way.
        if (batch.length === 1 || unreachableReason(error) !== null) return void batch.forEach((w) => w.reject(error));
        for (const w of batch) await this.#transaction(vaultId, [w]).catch((alone: unknown) => w.reject(alone));
      });
      const queue = this.#waiting.get(vaultId)!;
      if (queue.length === 0) {
        this.#waiting.delete(vaultId);
        return;
      }
      batch = takeBatch(queue);
    }
  }

  async #transaction(vaultId: string, batch: Waiting[]): Promise<void> {
    const outcomes = await applyWriteBatch(this.#db, vaultId, batch.map((w) => w.job));
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.result) : batch[i]!.reject(outcome.error)));
  }
}

/** Takes the first writes of the queue that fit one transaction (at least one) out of it. */
export function takeBatch<W extends { bytes: number }>(queue: W[]): W[] {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < groupCommitLimits.maxWrites && (n === 0 || bytes + queue[n]!.bytes <= groupCommitLimits.maxContentBytes)) {
    bytes += queue[n]!.bytes;
    n++;
  }
  return queue.splice(0, n);
}
