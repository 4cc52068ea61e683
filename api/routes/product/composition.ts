// getDomainComposition: the packs a product definition is assigned, composed for the caller
// (domain/product-runtime/composition.ts). Unavailable (setting_missing) while no pack is assigned;
// partial, with one scope_missing part per hidden item, when the credential lacks a capability's scope.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { envelope, unavailable } from '@hosted-notes/runtime-sdk';
import { domainCompositionDataSchema, getDomainComposition } from '../../../domain/product-runtime/composition.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope, runtimeSecurity } from './kit.ts';

export const compositionRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  app.get(
    '/composition',
    {
      config: { runtime: { scope: 'runtime.read' } },
      schema: {
        tags: ['product-runtime'],
        security: runtimeSecurity,
        operationId: 'getDomainComposition',
        summary: 'getDomainComposition: the Vertical Intelligence Pack and Product Experience Pack of this product',
        description:
          'The packs assigned to the calling product definition, as versioned data: the vertical pack\'s entities, relationships and operations (with the scope each ' +
          'needs), and the experience pack\'s navigation, terminology (the pack\'s defaults overlaid by the organization\'s brand profile), onboarding intent and ' +
          'capability visibility. A navigation item or onboarding step whose capability the credential has no scope for is hidden, and the envelope is partial ' +
          'with a scope_missing part per hidden item. Unavailable (setting_missing) when no pack is assigned. Visibility is presentation, never authority. Needs runtime.read.',
        response: { 200: runtimeEnvelope('runtime.domain-composition', domainCompositionDataSchema) },
      },
    },
    async (request) => {
      const result = await getDomainComposition(deps.db, runtimeCaller(request), { intelligenceProvider: deps.intelligenceProviderConfigured });
      if (result.status === 'unavailable') return unavailable('runtime.domain-composition', result.missing);
      return envelope('runtime.domain-composition', result.data, result.missing);
    },
  );
};
