// System Operations for durable workflow starts (domain/workflow-intents.ts): what the relay still
// has to start, by kind, how old the oldest is and why the last attempt failed. Spread into the CLI
// by scripts/ops.ts.
import { z } from 'zod';
import { pendingIntents } from '../../domain/workflow-intents.ts';
import { command } from './commands.ts';
import type { Command } from './commands.ts';

export const workflowStartCommands: Record<string, Record<string, Command>> = {
  starts: {
    pending: command(
      'Workflow starts recorded but not yet made (the relay makes them once Temporal answers): count, by kind, the oldest with their attempts and last error',
      z.object({ limit: z.coerce.number().int().min(1).max(1_000).optional().describe('oldest intents listed (default 50)') }),
      (db, o) => pendingIntents(db, o.limit ?? 50),
    ),
  },
};
