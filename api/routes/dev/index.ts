// Developer REST API (/api/dev): personal access tokens of accounts with the Developer
// entitlement (developer_agent or team plan), checked on every request.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { accountSchema } from '../../../domain/identity/accounts.ts';
import { planIncludes } from '../../../domain/identity/plans.ts';
import type { Interface } from '../../../domain/identity/plans.ts';
import { principalOf, requireAccessToken } from '../../auth.ts';
import { problemSchema } from '../../problems.ts';

export const commonErrorResponses = {
  400: problemSchema,
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
  429: problemSchema,
};

const meSchema = z.object({
  account: accountSchema,
  tokenId: z.uuid(),
  entitlements: z.object({ rest: z.boolean(), mcp: z.boolean(), automation: z.boolean() }),
});

export const devApi: FastifyPluginAsyncZod<{ db: DatabasePool }> = async (app, { db }) => {
  app.addHook('onRequest', requireAccessToken(db, 'rest'));

  app.get(
    '/me',
    {
      schema: {
        tags: ['developer'],
        summary: 'The calling account, its plan and what the plan includes',
        security: [{ bearerAuth: [] }],
        response: { 200: meSchema, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { account, tokenId } = principalOf(request);
      const entitlements = {
        rest: planIncludes(account.plan, 'rest'),
        mcp: planIncludes(account.plan, 'mcp'),
        automation: planIncludes(account.plan, 'automation'),
      } satisfies Record<Interface, boolean>;
      return { account, tokenId, entitlements };
    },
  );
};
