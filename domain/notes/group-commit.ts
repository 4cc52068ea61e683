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
import { Turns } from '../turns.ts';
import type { TurnItem, TurnLimits } from '../turns.ts';

export const groupCommitLimits = {
  /** Writes in one transaction. */
  maxItems: 100,
  /** Their content in one transaction (a single larger write still goes, alone). */
  maxBytes: 4 * 1024 * 1024,
} as const satisfies TurnLimits;

type Waiting = TurnItem & { job: WriteJob; resolve: (result: ApplyResult<WriteApplied>) => void };

export class GroupCommit {
  readonly #db: DatabasePool;
  /** Per vault: one transaction at a time (domain/turns.ts). */
  readonly #turns: Turns<Waiting>;

  constructor(db: DatabasePool) {
    this.#db = db;
    this.#turns = new Turns(groupCommitLimits, (vaultId, batch) => this.#commit(vaultId, batch));
  }

  /** knowledge.ts applyWrite, in the vault's next transaction. */
  async applyWrite(target: Target, rawInput: { path: string; content: string } & Preconditions, provenance: Provenance, idempotency: IdempotencyScope): Promise<ApplyResult<WriteApplied>> {
    const job = writeJob(target, rawInput, provenance, idempotency);
    return new Promise((resolve, reject) => this.#turns.add(job.target.vaultId, { job, bytes: contentBytes(job.input.content), resolve, reject }));
  }

  async #commit(vaultId: string, batch: Waiting[]): Promise<void> {
    await this.#transaction(vaultId, batch).catch(async (error: unknown) => {
      // The transaction failed as a whole (nothing of it committed, or its keys replay it). One
      // write's failure is not the others': each runs again alone and answers what it would have
      // alone. Not when the database is unreachable: alone, each would only fail the same way.
      if (batch.length === 1 || unreachableReason(error) !== null) return void batch.forEach((w) => w.reject(error));
      for (const w of batch) await this.#transaction(vaultId, [w]).catch((alone: unknown) => w.reject(alone));
    });
  }

  async #transaction(vaultId: string, batch: Waiting[]): Promise<void> {
    const outcomes = await applyWriteBatch(this.#db, vaultId, batch.map((w) => w.job));
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.result) : batch[i]!.reject(outcome.error)));
  }
}
