// getRuntimeContext, getCapabilities and getWorkspace: what an installation may learn about itself.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { envelope } from '@hosted-notes/runtime-sdk';
import { getCapabilities, getRuntimeContext, getWorkspace } from '../../../domain/product-runtime/runtime-context.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller } from './kit.ts';
import { getCapabilitiesExamples, getRuntimeContextExamples, getWorkspaceExamples } from './openapi-docs.ts';
import { operationRoute } from './operation-route.ts';

/** Presentation resolved after authorization for the caller's organization and product (null: none configured). */
export type PresentationResolver = (caller: { organizationId: string; productDefinitionId: string }) => Promise<Record<string, unknown> | null>;
/** Whether the caller's product has a domain composition (a pack) assigned. */
export type CompositionProbe = (caller: { productDefinitionId: string }) => Promise<boolean>;

export const runtimeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps & { presentation: PresentationResolver; hasComposition: CompositionProbe }> = async (app, deps) => {
  const { db } = deps;

  app.route({
    ...operationRoute('getRuntimeContext'),
    schema: {
      description:
        'The organization, product, installation, service principal, credential (prefix and scopes, never the secret), workspace and runtime version of the ' +
        'calling credential, and the brand presentation resolved after authorization. Needs no scope: a product can always learn what its credential is.',
      docs: { responses: { 200: { description: 'The calling chain and its presentation (runtime.context envelope).' } } },
      examples: getRuntimeContextExamples,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      const presentation = await deps.presentation(caller);
      return envelope('runtime.context', await getRuntimeContext(db, caller, presentation));
    },
  });

  app.route({
    ...operationRoute('getCapabilities'),
    schema: {
      description:
        'Computed on every call from the service configuration, the credential scopes, the vault grants and the organization settings. An unavailable ' +
        'capability names a stable reason (capability_not_configured, scope_missing, grant_missing, budget_missing, setting_missing, not_supported). Needs no scope.',
      docs: { responses: { 200: { description: 'Every capability with its availability and reason (runtime.capabilities envelope).' } } },
      examples: getCapabilitiesExamples,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      const domainComposition = await deps.hasComposition(caller);
      return envelope('runtime.capabilities', await getCapabilities(db, caller, { intelligenceProvider: deps.intelligence !== null, domainComposition, googleConnections: deps.connections !== null }));
    },
  });

  app.route({
    ...operationRoute('getWorkspace'),
    schema: {
      description:
        'The installation\'s workspace, the hosted vaults it holds a grant on and its open binding requests. Partial (missing workspace.vaults: grant_missing or ' +
        'grant_pending) while no vault is granted. Other vaults of the workspace are never listed. Needs runtime.read.',
      docs: { responses: { 200: { description: 'The workspace as far as the grants reach; partial while no vault is granted.' } } },
      examples: getWorkspaceExamples,
    },
    handler: async (request) => {
      const { data, missing } = await getWorkspace(db, runtimeCaller(request));
      return envelope('runtime.workspace', data, missing);
    },
  });
};
