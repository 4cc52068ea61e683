// GET /api/dev/workspaces: the caller's workspaces with the caller's role and permissions in each.
// Interim pagination (see docs/api.md): the domain lists all of an account's memberships in one
// query, ordered by (createdAt, id), and this route pages over that list, then reads the caller's
// role for the page's workspaces only. Workspaces are created by operators (npm run ops), so an
// account's list is short in practice, but nothing bounds it: a keyset query in
// domain/identity/workspaces.ts returning workspace, role and permissions in one statement should
// replace both steps.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { listMembers, listWorkspacesOfAccount } from '../../../domain/identity/workspaces.ts';
import type { Workspace } from '../../../domain/identity/workspaces.ts';
import { principalOf } from '../../auth.ts';
import { workspacesQuery, workspacesResponse } from './schemas.ts';

const cursorSchema = z.object({ createdAt: z.string(), id: z.uuid() });

/** Index of the first workspace after the cursor in the (createdAt, id) order of the domain list. */
function startAfter(workspaces: readonly Workspace[], cursor: z.infer<typeof cursorSchema>): number {
  const at = workspaces.findIndex((w) => w.id === cursor.id);
  if (at >= 0) return at + 1;
  // The cursor's workspace is gone (membership removed): continue after its position.
  const next = workspaces.findIndex((w) => w.createdAt > cursor.createdAt || (w.createdAt === cursor.createdAt && w.id > cursor.id));
  return next < 0 ? workspaces.length : next;
}

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
      const all = await listWorkspacesOfAccount(db, accountId);
      const start = cursor === undefined ? 0 : startAfter(all, decodeCursor(cursor, cursorSchema));
      const page = all.slice(start, start + limit);
      const hasMore = start + limit < all.length;
      const memberships = await Promise.all(
        page.map(async (workspace) => {
          const member = (await listMembers(db, workspace.id)).find((m) => m.accountId === accountId);
          return member ? { ...workspace, role: member.role, permissions: member.permissions } : null;
        }),
      );
      const last = page[page.length - 1];
      return {
        // A membership removed between the two reads is left out, never shown with a stale role.
        workspaces: memberships.filter((m) => m !== null),
        hasMore,
        nextCursor: hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
      };
    },
  );
};
