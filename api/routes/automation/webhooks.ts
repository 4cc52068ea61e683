// Webhook endpoints (create/list/delete) and their execution records (one per request made to a
// receiver, repeats included). Creating an endpoint permits nothing else: it only subscribes a URL
// to event types of the workspace.
import type { Client } from '@temporalio/client';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { EgressPolicy } from '../../../domain/automation/network.ts';
import {
  createEndpoint,
  deleteEndpoint,
  endpointSchema,
  executionRecordSchema,
  getEndpoint,
  listEndpoints,
  listExecutions,
  MAX_DELIVERY_ATTEMPTS,
  requireSecretBox,
} from '../../../domain/automation/webhooks.ts';
import { decodeCursor, encodeCursor } from '../../../domain/cursor.ts';
import { AppError } from '../../../domain/errors.ts';
import { authorizeInWorkspace, requireWorkspacePermission } from '../../../domain/identity/workspaces.ts';
import type { SecretBox } from '../../../domain/secret-box.ts';
import { principalOf } from '../../auth.ts';

export type WebhookDeps = { db: DatabasePool; temporal: Client; taskQueue: string; secretBox: SecretBox | null; egress: EgressPolicy; retryBaseMs: number };

const tags = ['automation'];
const security = [{ bearerAuth: [] }];

export const webhookRoutes: FastifyPluginAsyncZod<WebhookDeps> = async (app, deps) => {
  const { db } = deps;

  app.post(
    '/endpoints',
    {
      schema: {
        tags,
        security,
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint (needs automation.manage); the whsec_ secret is shown once',
        description:
          'The URL must be https, without credentials, to a host whose every address is public unicast; checked now and again at connect time on every delivery. ' +
          'The one exception is a host named on the operator\'s WEBHOOK_EGRESS_ALLOWLIST (meant for local receivers): it is accepted over http or https and whatever it resolves to. ' +
          'Deliveries follow the Standard Webhooks spec ' +
          `(webhook-id, webhook-timestamp, webhook-signature v1); up to ${MAX_DELIVERY_ATTEMPTS} attempts with exponential backoff and jitter; 3xx is a failure; 410 disables the endpoint; repeated failure disables it with a reason. ` +
          'Answers 201 with Location (the endpoint). 503 not_ready when the server has no SECRETS_ENCRYPTION_KEYS.',
        body: z.strictObject({
          workspaceId: z.uuid(),
          url: z
            .string()
            .max(2048)
            .describe('https://… to a public host; http:// only to a host on WEBHOOK_EGRESS_ALLOWLIST. Refused URLs are 400 invalid_request with errors[0].code url_not_allowed at /body/url.'),
          eventTypes: z.array(z.string().regex(/^(\*|[a-z][a-z0-9_.-]{0,127})$/)).min(1).max(50),
          description: z.string().max(500).default(''),
        }),
        response: { 201: endpointSchema.extend({ secret: z.string().describe('Shown once; store it to verify signatures.') }) },
        problems: ['workspace_not_found', 'permission_denied', 'not_ready'],
      },
    },
    async (request, reply) => {
      const { account } = principalOf(request);
      const b = request.body;
      await requireWorkspacePermission(db, b.workspaceId, account.id, 'automation.manage');
      const { endpoint, secret } = await createEndpoint(db, requireSecretBox(deps.secretBox), deps.egress, { workspaceId: b.workspaceId, accountId: account.id, url: b.url, eventTypes: b.eventTypes, description: b.description });
      return reply.code(201).header('location', `${app.prefix}/endpoints/${endpoint.id}`).send({ ...endpoint, secret });
    },
  );

  app.get(
    '/endpoints',
    {
      schema: {
        tags,
        security,
        operationId: 'listWebhookEndpoints',
        summary: "A workspace's webhook endpoints (needs automation.view; secrets are never shown again)",
        description: 'Active and disabled endpoints (with the reason they were disabled); only the secret prefix is shown.',
        querystring: z.strictObject({ workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.') }),
        response: { 200: z.object({ endpoints: z.array(endpointSchema) }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      await requireWorkspacePermission(db, request.query.workspaceId, principalOf(request).account.id, 'automation.view');
      return { endpoints: [...(await listEndpoints(db, request.query.workspaceId))] };
    },
  );

  app.get(
    '/endpoints/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'readWebhookEndpoint',
        summary: 'One webhook endpoint (needs automation.view; the secret is never shown again)',
        description: "An endpoint of a workspace the caller is a member of; anyone else's is 404.",
        params: z.object({ id: z.uuid().describe('The endpoint id.') }),
        response: { 200: endpointSchema },
        problems: ['not_found', 'permission_denied'],
      },
    },
    async (request) =>
      (await authorizeInWorkspace(db, await getEndpoint(db, request.params.id), principalOf(request).account.id, 'automation.view', () => new AppError('not_found', `No endpoint ${request.params.id}.`)))
        .object,
  );

  app.delete(
    '/endpoints/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint (needs automation.manage)',
        description: 'No further deliveries start for it; its execution records are deleted with it.',
        params: z.object({ id: z.uuid().describe('The endpoint id.') }),
        response: { 204: z.null() },
        problems: ['not_found', 'permission_denied'],
      },
    },
    async (request, reply) => {
      const { object: endpoint } = await authorizeInWorkspace(db, await getEndpoint(db, request.params.id), principalOf(request).account.id, 'automation.manage', () =>
        new AppError('not_found', `No endpoint ${request.params.id}.`),
      );
      await deleteEndpoint(db, endpoint.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/executions',
    {
      schema: {
        tags,
        security,
        operationId: 'listWebhookExecutions',
        summary: 'Webhook delivery attempts of a workspace, newest first (needs automation.view)',
        description:
          'One record per request made to a receiver, repeats included: when the same attempt is sent again (a worker crash or a timeout retried the delivery), ' +
          'the receiver sees the same webhook-id again and the later record says repeat: true. An attempt that sent nothing (address refused, endpoint disabled) is one record. ' +
          'Status, duration, and a stable errorCode for attempts that got no response. Pass nextCursor back as cursor for the next page; it is null on the last page. Reading changes nothing.',
        querystring: z.strictObject({
          workspaceId: z.uuid().describe('The workspace (UUID); the caller must be a member.'),
          limit: z.coerce.number().int().min(1).max(500).default(100).describe('How many, at most 500.'),
          cursor: z.string().max(512).optional().describe('nextCursor of the previous page.'),
        }),
        response: { 200: z.object({ executions: z.array(executionRecordSchema), nextCursor: z.string().nullable().describe('The next page, or null on the last one. Opaque.') }) },
        problems: ['workspace_not_found', 'permission_denied'],
      },
    },
    async (request) => {
      const q = request.query;
      await requireWorkspacePermission(db, q.workspaceId, principalOf(request).account.id, 'automation.view');
      const before = q.cursor ? decodeCursor(q.cursor, z.object({ id: z.string().regex(/^[1-9]\d{0,18}$/) })).id : null;
      const rows = await listExecutions(db, q.workspaceId, q.limit + 1, before);
      const executions = rows.slice(0, q.limit);
      const last = executions[executions.length - 1];
      return { executions, nextCursor: rows.length > q.limit && last ? encodeCursor({ id: last.id }) : null };
    },
  );
};
