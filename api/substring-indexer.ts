// Each API process indexes the substring queue (domain/notes/substring-index.ts, decision 106):
// rounds of one batch while there is work, then a look every `intervalMs`. Several processes share
// the queue (SKIP LOCKED). Searches are exact without it; it keeps them fast.
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { indexQueuedNotes } from '../domain/notes/substring-index.ts';
import { runInRounds } from './background-rounds.ts';
import type { Rounds } from './background-rounds.ts';

export type SubstringIndexerOptions = { intervalMs?: number; batch?: number };

export function startSubstringIndexer(db: DatabasePool, log: FastifyBaseLogger, options: SubstringIndexerOptions = {}): Rounds {
  const batch = options.batch ?? 500;
  return runInRounds(async () => ({ more: (await indexQueuedNotes(db, batch)).taken >= batch }), {
    intervalMs: options.intervalMs ?? 1_000,
    // Postgres unreachable, most likely (the pool logs the outage): one line per run of failures.
    failed: (error, firstOfRun) => {
      if (firstOfRun) log.warn({ reason: error instanceof Error ? error.name : 'unknown' }, 'substring index round failed; retrying every round');
    },
  });
}
