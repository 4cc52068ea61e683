// bindHostedVault: a product asks a person for a vault grant (domain/product-runtime/vault-bindings.ts).
// It never grants anything itself; the person decides through /api/dev/workspaces/:workspaceId/product-installations.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bindVaultInputSchema, envelope, vaultBindingResultSchema } from '@hosted-notes/runtime-sdk';
import { listBindings, MAX_BINDINGS_PAGE, requestBinding } from '../../../domain/product-runtime/vault-bindings.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope } from './kit.ts';
import { bindHostedVaultExamples, listVaultBindingsExamples } from './openapi-docs.ts';
import { operationRoute } from './operation-route.ts';

export const vaultBindingRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, { db }) => {
  app.route({
    ...operationRoute('bindHostedVault'),
    schema: {
      description:
        'Records a request; it grants nothing. A person with workspace.manage grants or declines it (REST: /api/dev/workspaces/{workspaceId}/product-installations). ' +
        'Answers 202 with a partial envelope (missing: grant_pending) while the request is open, and asking again answers the same request; answers 200 complete ' +
        'with the grant when the installation already holds one that suffices. Omit vaultId to let the person choose. Only hosted vaults of the installation\'s ' +
        'workspace can be named (a local vault has no id here); any other id is vault_not_found. Needs vaults.bind.',
      body: bindVaultInputSchema,
      response: { 200: runtimeEnvelope('runtime.vault-binding', vaultBindingResultSchema), 202: runtimeEnvelope('runtime.vault-binding', vaultBindingResultSchema) },
      problems: ['vault_not_found'],
      docs: {
        responses: {
          200: { description: 'The installation already holds a sufficient grant: complete, with the grant.' },
          202: { description: 'The request is open: partial, missing grant (grant_pending) until a person decides.' },
        },
      },
      examples: bindHostedVaultExamples,
    },
    handler: async (request, reply) => {
      const caller = runtimeCaller(request);
      const body = request.body;
      const result = await requestBinding(db, caller, { vaultId: body.vaultId ?? null, access: body.access, reason: body.reason });
      if ('grant' in result) return reply.code(200).send(envelope('runtime.vault-binding', { binding: null, grant: result.grant }));
      return reply.code(202).send(
        envelope('runtime.vault-binding', { binding: result.binding, grant: null }, [
          { part: 'grant', reason: 'grant_pending', detail: 'A person with workspace.manage in the workspace must grant this request.' },
        ]),
      );
    },
  });

  app.route({
    ...operationRoute('listVaultBindings'),
    schema: {
      description: `Pending, granted and declined requests (at most ${MAX_BINDINGS_PAGE}). Needs vaults.bind.`,
      querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(MAX_BINDINGS_PAGE).default(50).describe(`Requests to return, newest first, at most ${MAX_BINDINGS_PAGE}.`) }),
      docs: { responses: { 200: { description: 'The installation\'s binding requests.' } } },
      examples: listVaultBindingsExamples,
    },
    handler: async (request) => envelope('runtime.vault-binding-list', { bindings: await listBindings(db, runtimeCaller(request), request.query) }),
  });
};
