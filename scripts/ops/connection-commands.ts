// System Operations for delegated Google connections (domain/connections/): what an installation has
// connected, as the runtime shows it (ids, services, scopes, state; never a token). Spread into the
// CLI by scripts/ops.ts.
import { z } from 'zod';
import { listConnections } from '../../domain/connections/connections.ts';
import { command } from './commands.ts';
import { installationCaller } from './installation-caller.ts';
import type { Command } from './commands.ts';

export const connectionCommands: Record<string, Record<string, Command>> = {
  connections: {
    list: command(
      "List an installation's delegated connections (active and revoked), newest first; no token is ever shown",
      z.object({
        installation: z.uuid().describe('installation id (UUID)'),
        limit: z.coerce.number().int().min(1).max(200).optional().describe('connections per page (default 50, at most 200)'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page'),
      }),
      async (db, o) => listConnections(db, await installationCaller(db, o.installation), { limit: o.limit ?? 50, cursor: o.cursor }),
    ),
  },
};
