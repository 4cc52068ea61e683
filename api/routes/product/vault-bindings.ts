// bindHostedVault: a product asks a person for a vault grant (domain/product-runtime/vault-bindings.ts).
// It never grants anything itself; the person decides through /api/dev/workspaces/:workspaceId/product-installations.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bindingListSchema, bindVaultInputSchema, envelope, vaultBindingResultSchema } from '@hosted-notes/runtime-sdk';
import { listBindings, MAX_BINDINGS_PAGE, requestBinding } from '../../../domain/product-runtime/vault-bindings.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope, runtimeSecurity } from './kit.ts';

const tags = ['product-runtime'];


export const vaultBindingRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, { db }) => {
  app.post(
    '/vault-bindings',
    {
      config: { runtime: { scope: 'vaults.bind' } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'bindHostedVault',
        summary: 'bindHostedVault: ask a person to grant this installation a hosted vault',
        description:
          'Records a request; it grants nothing. A person with workspace.manage grants or declines it (REST: /api/dev/workspaces/{workspaceId}/product-installations). ' +
          'Answers 202 with a partial envelope (missing: grant_pending) while the request is open, and asking again answers the same request; answers 200 complete ' +
          'with the grant when the installation already holds one that suffices. Omit vaultId to let the person choose. Only hosted vaults of the installation\'s ' +
          'workspace can be named (a local vault has no id here); any other id is vault_not_found. Needs vaults.bind.',
        body: bindVaultInputSchema,
        response: { 200: runtimeEnvelope('runtime.vault-binding', vaultBindingResultSchema), 202: runtimeEnvelope('runtime.vault-binding', vaultBindingResultSchema) },
        problems: ['vault_not_found'],
      },
    },
    async (request, reply) => {
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
  );

  app.get(
    '/vault-bindings',
    {
      config: { runtime: { scope: 'vaults.bind' } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'listVaultBindings',
        summary: 'This installation\'s binding requests, newest first',
        description: `Pending, granted and declined requests (at most ${MAX_BINDINGS_PAGE}). Needs vaults.bind.`,
        querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(MAX_BINDINGS_PAGE).default(50).describe(`Requests to return, newest first, at most ${MAX_BINDINGS_PAGE}.`) }),
        response: { 200: runtimeEnvelope('runtime.vault-binding-list', bindingListSchema) },
      },
    },
    async (request) => envelope('runtime.vault-binding-list', { bindings: await listBindings(db, runtimeCaller(request), request.query) }),
  );
};
