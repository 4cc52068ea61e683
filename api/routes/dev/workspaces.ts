// GET /api/dev/workspaces: the caller's workspaces with the caller's role and permissions in each.
// One keyset query per page (domain/identity/workspaces.ts listMembershipsOfAccount); cursors are opaque.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { listMembershipsOfAccount } from '../../../domain/identity/workspaces.ts';
import { principalOf } from '../../auth.ts';
import { workspacesQuery, workspacesResponse } from './schemas.ts';

const cursorSchema = z.object({ after: z.uuid() });

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
      const afterWorkspaceId = cursor === undefined ? undefined : decodeCursor(cursor, cursorSchema).after;
      const rows = await listMembershipsOfAccount(db, accountId, { limit: limit + 1, afterWorkspaceId });
      const workspaces = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return { workspaces, hasMore, nextCursor: hasMore ? encodeCursor({ after: workspaces[workspaces.length - 1]!.id }) : null };
    },
  );
};
