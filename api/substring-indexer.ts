// Each API process indexes the substring queue (domain/notes/substring-index.ts, decision 106):
// rounds of one batch while there is work, then a look every `intervalMs`. Several processes share
// the queue (SKIP LOCKED). Searches are exact without it; it keeps them fast.
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { indexQueuedNotes } from '../domain/notes/substring-index.ts';

export type SubstringIndexerOptions = { intervalMs?: number; batch?: number };

export function startSubstringIndexer(db: DatabasePool, log: FastifyBaseLogger, options: SubstringIndexerOptions = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 1_000;
  const batch = options.batch ?? 500;
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    let failing = false;
    while (!stopped) {
      let full = false;
      try {
        full = (await indexQueuedNotes(db, batch)).taken >= batch;
        failing = false;
      } catch (error) {
        // Postgres unreachable, most likely (the pool logs the outage): one line per run of failures.
        if (!failing) log.warn({ reason: error instanceof Error ? error.name : 'unknown' }, 'substring index round failed; retrying every round');
        failing = true;
      }
      // A full batch means more is queued: go again at once.
      if (!full && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, intervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
