// Per-minute allowances count in the database clock's minute: a burst that straddles its end is
// counted in two windows (a request meant to be the 11th of one minute is the 1st of the next; it
// failed CI once so). Tests of an exact per-minute boundary start clear of the minute's end.
import { sql } from 'slonik';
import { z } from 'zod';
import type { DatabasePool } from '../../db/pool.ts';

/** Waits, at most `marginSeconds`, until a burst has at least that much of the database's minute to itself. */
export async function clearOfMinuteEnd(db: DatabasePool, marginSeconds = 5): Promise<void> {
  const second = await db.oneFirst(sql.type(z.object({ s: z.number() }))`SELECT extract(second FROM now())::float8 AS s`);
  if (second > 60 - marginSeconds) await new Promise((resolve) => setTimeout(resolve, (60 - second) * 1000 + 50));
}
