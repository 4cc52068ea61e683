// getRuntimeContext, getCapabilities and getWorkspace: what an installation may learn about itself.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { capabilitiesSchema, envelope, runtimeContextSchema, workspaceSchema } from '@hosted-notes/runtime-sdk';
import { getCapabilities, getRuntimeContext, getWorkspace } from '../../../domain/product-runtime/runtime-context.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope, runtimeSecurity } from './kit.ts';

const tags = ['product-runtime'];

/** Presentation resolved after authorization for the caller's organization and product (null: none configured). */
export type PresentationResolver = (caller: { organizationId: string; productDefinitionId: string }) => Promise<Record<string, unknown> | null>;
/** Whether the caller's product has a domain composition (a pack) assigned. */
export type CompositionProbe = (caller: { productDefinitionId: string }) => Promise<boolean>;

export const runtimeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps & { presentation: PresentationResolver; hasComposition: CompositionProbe }> = async (app, deps) => {
  const { db } = deps;

  app.get(
    '/context',
    {
      config: { runtime: { scope: null } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getRuntimeContext',
        summary: 'getRuntimeContext: who is calling, through which chain, and its presentation',
        description:
          'The organization, product, installation, service principal, credential (prefix and scopes, never the secret), workspace and runtime version of the ' +
          'calling credential, and the brand presentation resolved after authorization. Needs no scope: a product can always learn what its credential is.',
        response: { 200: runtimeEnvelope('runtime.context', runtimeContextSchema) },
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      const presentation = await deps.presentation(caller);
      return envelope('runtime.context', await getRuntimeContext(db, caller, presentation));
    },
  );

  app.get(
    '/capabilities',
    {
      config: { runtime: { scope: null } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getCapabilities',
        summary: 'getCapabilities: each capability, available or not and why',
        description:
          'Computed on every call from the service configuration, the credential scopes, the vault grants and the organization settings. An unavailable ' +
          'capability names a stable reason (capability_not_configured, scope_missing, grant_missing, budget_missing, setting_missing, not_supported). Needs no scope.',
        response: { 200: runtimeEnvelope('runtime.capabilities', capabilitiesSchema) },
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      const domainComposition = await deps.hasComposition(caller);
      return envelope('runtime.capabilities', await getCapabilities(db, caller, { intelligenceProvider: deps.intelligence !== null, domainComposition, googleConnections: deps.connections !== null }));
    },
  );

  app.get(
    '/workspace',
    {
      config: { runtime: { scope: 'runtime.read' } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getWorkspace',
        summary: 'getWorkspace: the workspace as far as this installation\'s grants reach',
        description:
          'The installation\'s workspace, the hosted vaults it holds a grant on and its open binding requests. Partial (missing workspace.vaults: grant_missing or ' +
          'grant_pending) while no vault is granted. Other vaults of the workspace are never listed. Needs runtime.read.',
        response: { 200: runtimeEnvelope('runtime.workspace', workspaceSchema) },
      },
    },
    async (request) => {
      const { data, missing } = await getWorkspace(db, runtimeCaller(request));
      return envelope('runtime.workspace', data, missing);
    },
  );
};
