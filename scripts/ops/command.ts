// One System Operations command: a zod-described option set plus a call into the domain. The CLI
// (scripts/ops.ts) derives flags, --help and validation from these definitions. Its own module so
// that per-area command modules (context-scope-commands.ts, …) and commands.ts share it without a cycle.
import type { DatabasePool } from 'slonik';
import type { z } from 'zod';

export type Command = {
  summary: string;
  options: z.ZodObject;
  /** Options given by position instead of by flag, in order (e.g. `vault import <folder>`). */
  positional?: readonly string[];
  run: (db: DatabasePool, options: never) => Promise<unknown>;
};

export function command<S extends z.ZodObject>(
  summary: string,
  options: S,
  run: (db: DatabasePool, options: z.infer<S>) => Promise<unknown>,
  extra: { positional?: ReadonlyArray<keyof z.infer<S> & string> } = {},
): Command {
  return { summary, options, run: run as Command['run'], ...extra };
}

