// getDomainComposition: the packs a product definition is assigned, composed for the caller
// (domain/product-runtime/composition.ts). Unavailable (setting_missing) while no pack is assigned;
// partial, with one scope_missing part per hidden item, when the credential lacks a capability's scope.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { envelope, unavailable } from '@hosted-notes/runtime-sdk';
import type { CapabilityId } from '@hosted-notes/runtime-sdk';
import { composePack, getDomainComposition } from '../../../domain/product-runtime/composition.ts';
import { findPack } from '../../../domain/product-runtime/packs/index.ts';
import type { OperationExamples } from '../../openapi-examples.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller } from './kit.ts';
import { operationRoute } from './operation-route.ts';

// OpenAPI examples, composed from the shipped education pack by the same function the route uses.
// The scope table is the one getCapabilities publishes for the capabilities the pack surfaces.
const exampleScopes = new Map<CapabilityId, string[]>([
  ['notes.read', ['notes.read']],
  ['notes.write', ['notes.write']],
  ['vaults.bind', ['vaults.bind']],
  ['context-scopes', ['scopes.read']],
  ['shared-memory.propose', ['memory.propose']],
  ['intelligence.education', ['intelligence.execute']],
  ['intelligence.generate', ['intelligence.execute']],
]);
const exampleProduct = { id: '5d1f0f43-8a53-4b7e-9a8e-16e0f6a1c7d2', slug: 'lesson-studio' };
const composedExample = (scopes: string[]) =>
  composePack(findPack('education', 1)!, { product: exampleProduct, scopes, requiredScopes: exampleScopes, terminology: { learners: 'Pupils', 'nav.library': 'Resource bank' } });

const everyScope = composedExample(['runtime.read', 'notes.read', 'notes.write', 'vaults.bind', 'scopes.read', 'memory.propose', 'intelligence.execute']);
const readOnly = composedExample(['runtime.read', 'notes.read']);

const getDomainCompositionExamples: OperationExamples = {
  responses: {
    200: {
      examples: {
        complete: { summary: 'Every scope: complete, with the organization\'s terminology', value: envelope('runtime.domain-composition', everyScope.data, everyScope.missing) },
        partial: { summary: 'runtime.read and notes.read only: items needing other scopes hidden', value: envelope('runtime.domain-composition', readOnly.data, readOnly.missing) },
        unavailable: {
          summary: 'No pack assigned to the product',
          value: unavailable('runtime.domain-composition', [{ part: 'domain-composition', reason: 'setting_missing', detail: 'No pack is assigned to this product definition.' }]),
        },
      },
    },
  },
};

export const compositionRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  app.route({
    ...operationRoute('getDomainComposition'),
    schema: {
      description:
        'The packs assigned to the calling product definition, as versioned data: the vertical pack\'s entities, relationships and operations (with the scope each ' +
        'needs), and the experience pack\'s navigation, terminology (the pack\'s defaults overlaid by the organization\'s brand profile), onboarding intent and ' +
        'capability visibility. A navigation item or onboarding step whose capability the credential has no scope for is hidden, and the envelope is partial ' +
        'with a scope_missing part per hidden item. Unavailable (setting_missing) when no pack is assigned. Visibility is presentation, never authority. Needs runtime.read.',
      docs: {
        responses: {
          200: {
            description:
              'The packs composed for this product (runtime.domain-composition envelope): complete, partial (items hidden for missing scopes, one scope_missing part each) ' +
              'or unavailable (no pack assigned: setting_missing).',
          },
        },
      },
      examples: getDomainCompositionExamples,
    },
    handler: async (request) => {
      const result = await getDomainComposition(deps.db, runtimeCaller(request), { intelligenceProvider: deps.intelligence !== null });
      if (result.status === 'unavailable') return unavailable('runtime.domain-composition', result.missing);
      return envelope('runtime.domain-composition', result.data, result.missing);
    },
  });
};
