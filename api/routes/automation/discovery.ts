// Discovery: adapters, templates (and their download) and the gateway's own OpenAPI description.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { adapters, templates } from '../../../domain/automation/catalog.ts';
import { AppError } from '../../../domain/errors.ts';
import { problemSchema } from '../../problems.ts';

const tags = ['automation'];
const security = [{ bearerAuth: [] }];
const templateSummary = z.object({ id: z.string(), version: z.number().int(), title: z.string(), description: z.string() });
const template = templateSummary.extend({ configuration: z.record(z.string(), z.unknown()) });

export const discoveryRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/adapters/:bridge',
    {
      schema: {
        tags,
        security,
        summary: 'One adapter (bridge): what it may send and how it authenticates',
        params: z.object({ bridge: z.string().max(64) }),
        response: {
          200: z.object({
            bridge: z.string(),
            title: z.string(),
            description: z.string(),
            direction: z.string(),
            eventTypes: z.array(z.string()),
            actionKinds: z.array(z.string()),
            credentials: z.string(),
          }),
          404: problemSchema,
        },
      },
    },
    async (request) => {
      const adapter = adapters.find((a) => a.bridge === request.params.bridge);
      if (!adapter) throw new AppError('not_found', `No adapter ${request.params.bridge}.`, { extensions: { adapters: adapters.map((a) => a.bridge) } });
      return adapter;
    },
  );

  app.get('/templates', { schema: { tags, security, summary: 'Automation templates', response: { 200: z.object({ templates: z.array(templateSummary) }) } } }, async () => ({
    templates: templates.map(({ configuration: _c, ...summary }) => summary),
  }));

  const find = (id: string) => {
    const found = templates.find((t) => t.id === id);
    if (!found) throw new AppError('not_found', `No template ${id}.`);
    return found;
  };

  app.get(
    '/templates/:id',
    { schema: { tags, security, summary: 'One template', params: z.object({ id: z.string().max(100) }), response: { 200: template, 404: problemSchema } } },
    async (request) => find(request.params.id),
  );

  app.get(
    '/templates/:id/download',
    {
      schema: {
        tags,
        security,
        summary: 'A template as a versioned configuration artifact (not authority to act)',
        params: z.object({ id: z.string().max(100) }),
        response: { 200: template.extend({ schema: z.literal('hnp.automation-template'), authority: z.string() }), 404: problemSchema },
      },
    },
    async (request, reply) => {
      const t = find(request.params.id);
      reply.header('content-disposition', `attachment; filename="${t.id}.v${t.version}.json"`);
      return { schema: 'hnp.automation-template' as const, ...t, authority: 'None: a template is configuration input. Triggers and proposals it describes still need workspace permissions and review.' };
    },
  );

  app.get('/openapi.json', { schema: { tags, security, summary: 'The OpenAPI description of the automation gateway (generated)' } }, async () => {
    const document = app.swagger() as { paths?: Record<string, unknown> } & Record<string, unknown>;
    const paths = Object.fromEntries(Object.entries(document.paths ?? {}).filter(([path]) => path.startsWith('/api/dev/automation')));
    return { ...document, info: { ...(document['info'] as object), title: 'Hosted Notes Platform — automation gateway' }, paths };
  });
};
