// Context scopes and shared memory (domain/context-scopes/): listAvailableScopes, getScopeContext,
// getEffectiveScopePolicy, getScopeIntelligence, getScopeMemory, createSharedMemoryCandidate. A
// caller names a scope by its stable id; the server resolves the rest. A memory candidate is an
// action proposal a person reviews; it is shared memory only once Forge executed the approval.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, memoryCandidateInputSchema, memoryCandidateSchema, unavailable } from '@hosted-notes/runtime-sdk';
import type { MissingPart } from '@hosted-notes/runtime-sdk';
import { getProposal } from '../../../domain/automation/proposals.ts';
import { fingerprintOf } from '../../../domain/idempotency.ts';
import { listScopeMemory, memoryCandidateStatus, memoryLimits, proposeMemoryCandidate } from '../../../domain/context-scopes/memory.ts';
import { effectivePolicy, listVisibleScopes, resolveScope, scopeContext, scopeIntelligence } from '../../../domain/context-scopes/scopes.ts';
import { startSubmittedReview } from '../shared/workflow-starts.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope } from './kit.ts';
import {
  createSharedMemoryCandidateExamples,
  getEffectiveScopePolicyExamples,
  getMemoryCandidateExamples,
  getScopeContextExamples,
  getScopeIntelligenceExamples,
  getScopeMemoryExamples,
  listAvailableScopesExamples,
} from './openapi-docs.ts';
import { operationKey, operationRoute } from './operation-route.ts';

// No length or pattern here: a malformed id (domain/context-scopes/scopes.ts resolveScope) answers the
// same context_scope_not_found as any scope the caller cannot see, never a 400 that tells them apart.
const scopeParams = z.strictObject({ scopeId: z.string().min(1).describe('The stable scope id (listAvailableScopes lists them).') });
const page = z.strictObject({
  limit: z.coerce.number().int().min(1).max(memoryLimits.maxPage).default(50).describe(`Items per page, at most ${memoryLimits.maxPage}.`),
  cursor: z.string().max(512).optional().describe('nextCursor of the previous page (opaque).'),
});

export const contextScopeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const { db } = deps;

  app.route({
    ...operationRoute('listAvailableScopes'),
    schema: {
      description: "Scopes of the installation's workspace it holds a grant on, ordered by id, paginated. Needs scopes.read.",
      querystring: page,
      docs: { responses: { 200: { description: 'A page of the scopes granted to this installation (runtime.scope-list envelope).' } } },
      examples: listAvailableScopesExamples,
    },
    handler: async (request) => envelope('runtime.scope-list', await listVisibleScopes(db, runtimeCaller(request), request.query)),
  });

  app.route({
    ...operationRoute('getScopeContext'),
    schema: {
      description:
        'Nothing of it comes from the caller. Partial when the scope has a vault this installation holds no grant on (missing vault: grant_missing). ' +
        "Another organization's or an ungranted scope is context_scope_not_found, like a missing one. Needs scopes.read.",
      params: scopeParams,
      problems: ['context_scope_not_found'],
      docs: { responses: { 200: { description: 'The resolved scope context; partial when its vault is not granted.' } } },
      examples: getScopeContextExamples,
    },
    handler: async (request) => {
      const context = await scopeContext(db, runtimeCaller(request), request.params.scopeId);
      const missing: MissingPart[] =
        context.vault && context.vault.access === null ? [{ part: 'vault', reason: 'grant_missing', detail: "The scope's vault is not granted to this installation (bindHostedVault asks for it)." }] : [];
      return envelope('runtime.scope-context', context, missing);
    },
  });

  app.route({
    ...operationRoute('getEffectiveScopePolicy'),
    schema: {
      description: "Walks root → scope: each scope's own policy overrides its parent's; sourceScopeId null is the service default. Needs scopes.read.",
      params: scopeParams,
      problems: ['context_scope_not_found'],
      docs: { responses: { 200: { description: 'Every setting after inheritance, with its source.' } } },
      examples: getEffectiveScopePolicyExamples,
    },
    handler: async (request) => {
      const { scope, ancestry } = await resolveScope(db, runtimeCaller(request), request.params.scopeId);
      return envelope('runtime.scope-policy', { scopeId: scope.scopeKey, settings: effectivePolicy(scope, ancestry) });
    },
  });

  app.route({
    ...operationRoute('getScopeIntelligence'),
    schema: {
      description:
        'Unavailable when the service has no model provider (capability_not_configured) or the credential lacks intelligence.execute (scope_missing); ' +
        "otherwise complete, with allowed false when the scope's policy forbids it. Needs scopes.read.",
      params: scopeParams,
      problems: ['context_scope_not_found'],
      docs: { responses: { 200: { description: 'Whether intelligence may run here; unavailable with no provider or without intelligence.execute.' } } },
      examples: getScopeIntelligenceExamples,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      const { scope, ancestry } = await resolveScope(db, caller, request.params.scopeId);
      const answer = scopeIntelligence(scope, ancestry, { providerConfigured: deps.intelligence !== null, credentialScopes: caller.scopes });
      return 'unavailable' in answer ? unavailable('runtime.scope-intelligence', [answer.unavailable]) : envelope('runtime.scope-intelligence', answer.data);
    },
  });

  app.route({
    ...operationRoute('getScopeMemory'),
    schema: {
      description:
        'Only memory a person approved and Forge executed; candidates waiting for review and undone memory are never returned. Newest first, paginated. Needs scopes.read.',
      params: scopeParams,
      querystring: page,
      problems: ['context_scope_not_found'],
      docs: { responses: { 200: { description: 'A page of reviewed shared memory.' } } },
      examples: getScopeMemoryExamples,
    },
    handler: async (request) => {
      const { scope } = await resolveScope(db, runtimeCaller(request), request.params.scopeId);
      return envelope('runtime.scope-memory', await listScopeMemory(db, scope, request.query));
    },
  });

  app.route({
    ...operationRoute('createSharedMemoryCandidate'),
    schema: {
      description:
        "Creates an action proposal (kind memory.promote) in the scope's workspace, proposed by this installation's service principal, and starts its review. " +
        'It is never trusted: it appears in getScopeMemory only after a person with automation.review approves it and Forge executes it (undo removes it again). ' +
        "Idempotency-Key required: the same key and body replay the candidate (replayed: true), another body is 422. Refused when the scope's policy forbids " +
        'candidates (memory.candidates). Answers 201, partial (missing memory: review_pending). Needs memory.propose.',
      params: scopeParams,
      body: memoryCandidateInputSchema,
      response: { 201: runtimeEnvelope('runtime.memory-candidate', memoryCandidateSchema) },
      problems: ['context_scope_not_found', 'permission_denied'],
      docs: { responses: { 201: { description: 'The candidate and the proposal a person reviews (partial: review_pending); a replay says replayed: true.' } } },
      examples: createSharedMemoryCandidateExamples,
    },
    handler: async (request, reply) => {
      const caller = runtimeCaller(request);
      const { scope, ancestry } = await resolveScope(db, caller, request.params.scopeId);
      const key = operationKey(request);
      const candidate = { content: request.body.content, rationale: request.body.rationale };
      const idempotency = { accountId: caller.installationId, route: 'runtime:createSharedMemoryCandidate', scope: scope.id, key, fingerprint: fingerprintOf(candidate) };
      const { proposal, replayed } = await proposeMemoryCandidate(db, {
        scope,
        ancestry,
        servicePrincipalId: caller.servicePrincipalId,
        candidate,
        idempotency,
        expiresInSeconds: deps.proposalExpirySeconds,
      });
      // The review starts once the proposal is committed (a replay starts it only while it is open).
      const current = replayed ? await getProposal(db, proposal.id) : proposal;
      if (current) await startSubmittedReview(deps.starter, current, replayed, request.log);
      const data = { candidateId: proposal.id, scopeId: scope.scopeKey, proposalId: proposal.id, state: current?.state ?? proposal.state, replayed, createdAt: proposal.createdAt };
      return reply.code(201).send(
        envelope('runtime.memory-candidate', data, [{ part: 'memory', reason: 'review_pending', detail: 'Shared memory only after a person approves it and Forge executes it.' }]),
      );
    },
  });

  app.route({
    ...operationRoute('getMemoryCandidate'),
    schema: {
      description:
        "The candidate's proposal state, the reviewer's decision and reason, Forge's receipts (apply, then an undo's) and whether the memory is shared now. " +
        "Only this installation's candidates: another's, or one of another scope, is proposal_not_found like a missing one. Needs memory.propose.",
      params: scopeParams.extend({ candidateId: z.uuid().describe('The candidateId createSharedMemoryCandidate answered.') }),
      problems: ['context_scope_not_found', 'proposal_not_found'],
      docs: { responses: { 200: { description: 'The candidate followed through review: partial (review_pending) until Forge shares it or it is rejected, expires, fails or is undone.' } } },
      examples: getMemoryCandidateExamples,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      const { scope } = await resolveScope(db, caller, request.params.scopeId);
      const status = await memoryCandidateStatus(db, { installationId: caller.installationId, scope, candidateId: request.params.candidateId });
      const missing: MissingPart[] = status.shared || ['rejected', 'expired', 'failed', 'undone'].includes(status.state)
        ? []
        : [{ part: 'memory', reason: 'review_pending', detail: 'Shared memory only after a person approves it and Forge executes it.' }];
      return envelope('runtime.memory-candidate-status', status, missing);
    },
  });
};
