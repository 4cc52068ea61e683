// System Operations for metered intelligence (domain/intelligence/ledger.ts): an organization's
// usage receipts and an installation's budget as the runtime reports them. Budgets themselves are
// set with `org set-runtime` and `installation set-sublimit`. Spread into the CLI by scripts/ops.ts.
import { z } from 'zod';
import { getBudget, getReceipt, listOverruns, listReceipts } from '../../domain/intelligence/ledger.ts';
import { command } from './commands.ts';
import { installationCaller } from './installation-caller.ts';
import type { Command } from './commands.ts';

const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);

export const intelligenceCommands: Record<string, Record<string, Command>> = {
  usage: {
    list: command(
      "List an organization's usage receipts (service.product-intelligence-usage), newest first",
      z.object({
        org: id('organization'),
        installation: id('installation').optional(),
        limit: z.coerce.number().int().min(1).max(200).optional().describe('receipts per page (default 50, at most 200)'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page'),
      }),
      (db, o) => listReceipts(db, o.org, { limit: o.limit ?? 50, cursor: o.cursor, installationId: o.installation }),
    ),
    overruns: command(
      "List an organization's requests whose provider reported more usage than they reserved (charged at the reservation; the overrun absorbed), newest first, with this month's totals",
      z.object({
        org: id('organization'),
        limit: z.coerce.number().int().min(1).max(200).optional().describe('receipts per page (default 50, at most 200)'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page'),
      }),
      (db, o) => listOverruns(db, o.org, { limit: o.limit ?? 50, cursor: o.cursor }),
    ),
    get: command('Show one usage receipt', z.object({ org: id('organization'), id: id('receipt') }), (db, o) => getReceipt(db, o.org, o.id)),
    budget: command(
      "Show this month's intelligence budget, commitments and executions in flight for an installation and its organization",
      z.object({ installation: id('installation') }),
      async (db, o) => getBudget(db, (await installationCaller(db, o.installation)).organizationId, o.installation),
    ),
  },
};
