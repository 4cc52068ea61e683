// The authorization server's sweep (domain/oauth/sweep.ts) in rounds: at once while a round says
// more is waiting, else once every interval (a minute by default).
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { sweepOAuth } from '../../../domain/oauth/sweep.ts';
import { runInRounds } from '../../background-rounds.ts';
import type { Rounds } from '../../background-rounds.ts';

export type OAuthSweeperOptions = { intervalMs?: number; batch?: number };

export function startOAuthSweeper(db: DatabasePool, log: FastifyBaseLogger, options: OAuthSweeperOptions = {}): Rounds {
  const batch = options.batch ?? 500;
  return runInRounds(async () => ({ more: (await sweepOAuth(db, batch)).more }), {
    intervalMs: options.intervalMs ?? 60_000,
    failed: (error, firstOfRun) => {
      if (firstOfRun) log.warn({ reason: error instanceof Error ? error.name : 'unknown' }, 'oauth sweep round failed; retrying every round');
    },
  });
}
