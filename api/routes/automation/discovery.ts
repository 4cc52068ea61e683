// Discovery: adapters and templates (and their download). The gateway's OpenAPI description is
// served publicly by api/openapi.ts.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { adapters, templates } from '../../../domain/automation/catalog.ts';
import { AppError } from '../../../domain/errors.ts';

const tags = ['automation'];
const security = [{ bearerAuth: [] }];
const templateSummary = z.object({ id: z.string(), version: z.number().int().min(1), title: z.string(), description: z.string() });
const template = templateSummary.extend({ configuration: z.record(z.string(), z.unknown()) }).meta({ id: 'AutomationTemplate' });

export const discoveryRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/adapters/:bridge',
    {
      schema: {
        tags,
        security,
        operationId: 'readAdapter',
        summary: 'One adapter (bridge): what it may send and how it authenticates',
        description: 'Adapters: graph-provider (directory-graph ingestion; never receives a native provider credential) and generic-webhook. An unknown bridge is 404 listing the adapters.',
        params: z.object({ bridge: z.string().max(64).describe('The adapter, e.g. graph-provider.') }),
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
        },
        problems: ['not_found'],
      },
    },
    async (request) => {
      const adapter = adapters.find((a) => a.bridge === request.params.bridge);
      if (!adapter) throw new AppError('not_found', `No adapter ${request.params.bridge}.`, { extensions: { adapters: adapters.map((a) => a.bridge) } });
      return adapter;
    },
  );

  app.get(
    '/templates',
    {
      schema: {
        tags,
        security,
        operationId: 'listTemplates',
        summary: 'Automation templates',
        description: 'Versioned configuration templates for triggers and proposals (summaries; read one for its configuration).',
        response: { 200: z.object({ templates: z.array(templateSummary) }) },
      },
    },
    async () => ({ templates: templates.map(({ configuration: _c, ...summary }) => summary) }),
  );

  const find = (id: string) => {
    const found = templates.find((t) => t.id === id);
    if (!found) throw new AppError('not_found', `No template ${id}.`);
    return found;
  };

  app.get(
    '/templates/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'readTemplate',
        summary: 'One template',
        description: 'The template with its configuration (a trigger and a proposal template).',
        params: z.object({ id: z.string().max(100).describe('The template id, e.g. inbox-capture.') }),
        response: { 200: template },
        problems: ['not_found'],
      },
    },
    async (request) => find(request.params.id),
  );

  app.get(
    '/templates/:id/download',
    {
      schema: {
        tags,
        security,
        operationId: 'downloadTemplate',
        summary: 'A template as a versioned configuration artifact (not authority to act)',
        description: 'The template as a file (Content-Disposition: attachment; <id>.v<version>.json). Downloading grants nothing: triggers and proposals still need workspace permissions and review.',
        params: z.object({ id: z.string().max(100).describe('The template id, e.g. inbox-capture.') }),
        response: { 200: template.extend({ schema: z.literal('hnp.automation-template'), authority: z.string() }) },
        problems: ['not_found'],
      },
    },
    async (request, reply) => {
      const t = find(request.params.id);
      reply.header('content-disposition', `attachment; filename="${t.id}.v${t.version}.json"`);
      return { schema: 'hnp.automation-template' as const, ...t, authority: 'None: a template is configuration input. Triggers and proposals it describes still need workspace permissions and review.' };
    },
  );
};
