// Developer REST API (/api/dev): every request is admitted to `rest` (domain/principals/admission.ts:
// a personal access token of an active account whose plan has the Developer entitlement, then one
// request of the REST allowance), then served.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import type { GroupCommit } from '../../../domain/notes/group-commit.ts';
import { z } from 'zod';
import { accountSchema } from '../../../domain/identity/accounts.ts';
import { planIncludes } from '../../../domain/identity/plans.ts';
import type { Interface } from '../../../domain/identity/plans.ts';
import type { AllowanceLeases } from '../../../domain/allowance-lease.ts';
import type { AdmissionCache, TokenAdmission } from '../../../domain/principals/admission-cache.ts';
import { admitEveryRequest, principalOf } from '../../auth.ts';
import { notesRoutes } from './notes.ts';
import { productInstallationRoutes } from './product-installations.ts';
import { workspacesRoutes } from './workspaces.ts';

const meSchema = z
  .object({
    account: accountSchema,
    tokenId: z.uuid(),
    entitlements: z.object({ rest: z.boolean(), mcp: z.boolean(), automation: z.boolean() }),
  })
  .meta({ id: 'CurrentAccount' });

export const devApi: FastifyPluginAsyncZod<{ db: DatabasePool; leases: AllowanceLeases; admissions: AdmissionCache<TokenAdmission>; notes: GroupCommit }> = async (app, { db, leases, admissions, notes }) => {
  app.addHook('onRequest', admitEveryRequest({ db, leases }, 'rest'));

  app.get(
    '/me',
    {
      schema: {
        tags: ['developer'],
        operationId: 'readCurrentAccount',
        summary: 'The calling account, its plan and what the plan includes',
        description: 'Who the bearer token belongs to: the account, the token id and which interfaces its plan includes (REST, MCP, automation).',
        security: [{ bearerAuth: [] }],
        response: { 200: meSchema },
      },
    },
    async (request) => {
      const { account, tokenId } = principalOf(request);
      const entitlements = {
        rest: planIncludes(account.plan, 'rest', leases.entitlements),
        mcp: planIncludes(account.plan, 'mcp', leases.entitlements),
        automation: planIncludes(account.plan, 'automation', leases.entitlements),
      } satisfies Record<Interface, boolean>;
      return { account, tokenId, entitlements };
    },
  );

  await app.register(notesRoutes, { db, leases, admissions, notes });
  await app.register(workspacesRoutes, { db });
  await app.register(productInstallationRoutes, { db });
};
