// GET /api/dev/workspaces: the caller's workspaces with the caller's role and permissions in each.
// One keyset query per page (domain/identity/workspaces.ts listMembershipsPage); cursors are opaque.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { listMembershipsPage } from '../../../domain/identity/workspaces.ts';
import { principalOf } from '../../auth.ts';
import { workspacesQuery, workspacesResponse } from './schemas.ts';

export const workspacesRoutes: FastifyPluginAsyncZod<{ db: DatabasePool }> = async (app, { db }) => {
  app.get(
    '/workspaces',
    {
      schema: {
        tags: ['workspaces'],
        security: [{ bearerAuth: [] }],
        operationId: 'listWorkspaces',
        summary: "The caller's workspaces, with the caller's role and permissions in each",
        description:
          'Only workspaces the calling account is a member of, oldest first. Follow nextCursor until hasMore is false; cursors are opaque. ' +
          'The workspaceId of each is what the automation gateway and workspace vaults are addressed by.',
        querystring: workspacesQuery,
        response: { 200: workspacesResponse },
      },
    },
    async (request) => {
      const accountId = principalOf(request).account.id;
      const { limit, cursor } = request.query;
      return listMembershipsPage(db, accountId, { limit, cursor });
    },
  );
};
