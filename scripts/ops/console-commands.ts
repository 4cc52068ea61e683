// System Operations for the reviewer console (docs/console.md): an account's live console sessions
// (never a secret), and ending them, one or all (revoking the token they came from ends them too).
// Spread into the CLI by scripts/ops.ts.
import { z } from 'zod';
import { endSessions, listLiveSessions } from '../../domain/console/sessions.ts';
import { getAccount } from '../../domain/identity/accounts.ts';
import { command } from './commands.ts';
import type { Command } from './commands.ts';

export const consoleCommands: Record<string, Record<string, Command>> = {
  console: {
    sessions: command(
      "List an account's live reviewer console sessions, newest first (id, token, user agent, created, last seen, expiry)",
      z.object({ account: z.uuid().describe('account id (UUID)') }),
      async (db, o) => {
        await getAccount(db, o.account);
        return listLiveSessions(db, o.account);
      },
    ),
    'sign-out': command(
      "End an account's console sessions: all of them, or the one --session names",
      z.object({ account: z.uuid().describe('account id (UUID)'), session: z.uuid().optional().describe('one session id (UUID); default: every live session') }),
      async (db, o) => {
        await getAccount(db, o.account);
        return { ended: await endSessions(db, { accountId: o.account, sessionId: o.session }) };
      },
    ),
  },
};
