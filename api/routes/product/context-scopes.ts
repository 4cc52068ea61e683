// Context scopes and shared memory (domain/context-scopes/): listAvailableScopes, getScopeContext,
// getEffectiveScopePolicy, getScopeIntelligence, getScopeMemory, createSharedMemoryCandidate. A
// caller names a scope by its stable id; the server resolves the rest. A memory candidate is an
// action proposal a person reviews; it is shared memory only once Forge executed the approval.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  envelope,
  memoryCandidateInputSchema,
  memoryCandidateSchema,
  memoryCandidateStatusSchema,
  scopeContextSchema,
  scopeIntelligenceSchema,
  scopeListSchema,
  scopeMemorySchema,
  scopePolicySchema,
  unavailable,
} from '@hosted-notes/runtime-sdk';
import type { MissingPart } from '@hosted-notes/runtime-sdk';
import { getProposal } from '../../../domain/automation/proposals.ts';
import { fingerprintOf, requireIdempotencyKey } from '../../../domain/idempotency.ts';
import { listScopeMemory, memoryCandidateStatus, memoryLimits, proposeMemoryCandidate } from '../../../domain/context-scopes/memory.ts';
import { effectivePolicy, listVisibleScopes, resolveScope, scopeContext, scopeIntelligence } from '../../../domain/context-scopes/scopes.ts';
import { startRecorded } from '../shared/workflow-starts.ts';
import { reviewStart } from '../../../domain/automation/workflow-ids.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope, runtimeSecurity } from './kit.ts';

const tags = ['product-runtime'];
// No length or pattern here: a malformed id (domain/context-scopes/scopes.ts resolveScope) answers the
// same context_scope_not_found as any scope the caller cannot see, never a 400 that tells them apart.
const scopeParams = z.strictObject({ scopeId: z.string().min(1).describe('The stable scope id (listAvailableScopes lists them).') });
const page = z.strictObject({
  limit: z.coerce.number().int().min(1).max(memoryLimits.maxPage).default(50).describe(`Items per page, at most ${memoryLimits.maxPage}.`),
  cursor: z.string().max(512).optional().describe('nextCursor of the previous page (opaque).'),
});
const read = { runtime: { scope: 'scopes.read' } } as const;

export const contextScopeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const { db } = deps;

  app.get(
    '/scopes',
    {
      config: read,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'listAvailableScopes',
        summary: 'listAvailableScopes: the context scopes granted to this installation',
        description: "Scopes of the installation's workspace it holds a grant on, ordered by id, paginated. Needs scopes.read.",
        querystring: page,
        response: { 200: runtimeEnvelope('runtime.scope-list', scopeListSchema) },
      },
    },
    async (request) => envelope('runtime.scope-list', await listVisibleScopes(db, runtimeCaller(request), request.query)),
  );

  app.get(
    '/scopes/:scopeId',
    {
      config: read,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getScopeContext',
        summary: 'getScopeContext: the audience, workspace, ancestry and vault authority the server resolves for a scope',
        description:
          'Nothing of it comes from the caller. Partial when the scope has a vault this installation holds no grant on (missing vault: grant_missing). ' +
          "Another organization's or an ungranted scope is context_scope_not_found, like a missing one. Needs scopes.read.",
        params: scopeParams,
        response: { 200: runtimeEnvelope('runtime.scope-context', scopeContextSchema) },
        problems: ['context_scope_not_found'],
      },
    },
    async (request) => {
      const context = await scopeContext(db, runtimeCaller(request), request.params.scopeId);
      const missing: MissingPart[] =
        context.vault && context.vault.access === null ? [{ part: 'vault', reason: 'grant_missing', detail: "The scope's vault is not granted to this installation (bindHostedVault asks for it)." }] : [];
      return envelope('runtime.scope-context', context, missing);
    },
  );

  app.get(
    '/scopes/:scopeId/policy',
    {
      config: read,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getEffectiveScopePolicy',
        summary: 'getEffectiveScopePolicy: every setting after inheritance, and where it comes from',
        description: "Walks root → scope: each scope's own policy overrides its parent's; sourceScopeId null is the service default. Needs scopes.read.",
        params: scopeParams,
        response: { 200: runtimeEnvelope('runtime.scope-policy', scopePolicySchema) },
        problems: ['context_scope_not_found'],
      },
    },
    async (request) => {
      const { scope, ancestry } = await resolveScope(db, runtimeCaller(request), request.params.scopeId);
      return envelope('runtime.scope-policy', { scopeId: scope.scopeKey, settings: effectivePolicy(scope, ancestry) });
    },
  );

  app.get(
    '/scopes/:scopeId/intelligence',
    {
      config: read,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getScopeIntelligence',
        summary: 'getScopeIntelligence: whether intelligence may run on this scope, and why not',
        description:
          'Unavailable when the service has no model provider (capability_not_configured) or the credential lacks intelligence.execute (scope_missing); ' +
          "otherwise complete, with allowed false when the scope's policy forbids it. Needs scopes.read.",
        params: scopeParams,
        response: { 200: runtimeEnvelope('runtime.scope-intelligence', scopeIntelligenceSchema) },
        problems: ['context_scope_not_found'],
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      const { scope, ancestry } = await resolveScope(db, caller, request.params.scopeId);
      const answer = scopeIntelligence(scope, ancestry, { providerConfigured: deps.intelligence !== null, credentialScopes: caller.scopes });
      return 'unavailable' in answer ? unavailable('runtime.scope-intelligence', [answer.unavailable]) : envelope('runtime.scope-intelligence', answer.data);
    },
  );

  app.get(
    '/scopes/:scopeId/memory',
    {
      config: read,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getScopeMemory',
        summary: 'getScopeMemory: the reviewed shared memory of a scope',
        description:
          'Only memory a person approved and Forge executed; candidates waiting for review and undone memory are never returned. Newest first, paginated. Needs scopes.read.',
        params: scopeParams,
        querystring: page,
        response: { 200: runtimeEnvelope('runtime.scope-memory', scopeMemorySchema) },
        problems: ['context_scope_not_found'],
      },
    },
    async (request) => {
      const { scope } = await resolveScope(db, runtimeCaller(request), request.params.scopeId);
      return envelope('runtime.scope-memory', await listScopeMemory(db, scope, request.query));
    },
  );

  app.post(
    '/scopes/:scopeId/memory-candidates',
    {
      config: { runtime: { scope: 'memory.propose' } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'createSharedMemoryCandidate',
        summary: 'createSharedMemoryCandidate: propose shared memory for review',
        description:
          "Creates an action proposal (kind memory.promote) in the scope's workspace, proposed by this installation's service principal, and starts its review. " +
          'It is never trusted: it appears in getScopeMemory only after a person with automation.review approves it and Forge executes it (undo removes it again). ' +
          "Idempotency-Key required: the same key and body replay the candidate (replayed: true), another body is 422. Refused when the scope's policy forbids " +
          'candidates (memory.candidates). Answers 201, partial (missing memory: review_pending). Needs memory.propose.',
        params: scopeParams,
        body: memoryCandidateInputSchema,
        response: { 201: runtimeEnvelope('runtime.memory-candidate', memoryCandidateSchema) },
        problems: ['context_scope_not_found', 'permission_denied', 'idempotency_key_required', 'invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_in_flight'],
      },
    },
    async (request, reply) => {
      const caller = runtimeCaller(request);
      const { scope, ancestry } = await resolveScope(db, caller, request.params.scopeId);
      const key = requireIdempotencyKey(idempotencyKeyHeader(request));
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
      // The review starts once the proposal is committed; a replay (re)starts it only while it has not entered review.
      const current = replayed ? await getProposal(db, proposal.id) : proposal;
      if (current?.state === 'proposed') await startRecorded(deps.starter, [reviewStart(current.id)], request.log);
      const data = { candidateId: proposal.id, scopeId: scope.scopeKey, proposalId: proposal.id, state: current?.state ?? proposal.state, replayed, createdAt: proposal.createdAt };
      return reply.code(201).send(
        envelope('runtime.memory-candidate', data, [{ part: 'memory', reason: 'review_pending', detail: 'Shared memory only after a person approves it and Forge executes it.' }]),
      );
    },
  );

  app.get(
    '/scopes/:scopeId/memory-candidates/:candidateId',
    {
      config: { runtime: { scope: 'memory.propose' } },
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getMemoryCandidate',
        summary: 'getMemoryCandidate: follow a candidate through review to its receipt',
        description:
          "The candidate's proposal state, the reviewer's decision and reason, Forge's receipts (apply, then an undo's) and whether the memory is shared now. " +
          "Only this installation's candidates: another's, or one of another scope, is proposal_not_found like a missing one. Needs memory.propose.",
        params: scopeParams.extend({ candidateId: z.uuid().describe('The candidateId createSharedMemoryCandidate answered.') }),
        response: { 200: runtimeEnvelope('runtime.memory-candidate-status', memoryCandidateStatusSchema) },
        problems: ['context_scope_not_found', 'proposal_not_found'],
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      const { scope } = await resolveScope(db, caller, request.params.scopeId);
      const status = await memoryCandidateStatus(db, { installationId: caller.installationId, scope, candidateId: request.params.candidateId });
      const missing: MissingPart[] = status.shared || ['rejected', 'expired', 'failed', 'undone'].includes(status.state)
        ? []
        : [{ part: 'memory', reason: 'review_pending', detail: 'Shared memory only after a person approves it and Forge executes it.' }];
      return envelope('runtime.memory-candidate-status', status, missing);
    },
  );
};
