// Metered intelligence on the runtime: generate (JSON or an NDJSON stream), generate-image, and the
// organization's usage receipts and budget. The rules live in generation.ts / metered-runs.ts and
// the domain (domain/intelligence/); this file is the HTTP edge: schemas, headers, the disconnect.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  envelope,
  generatedImageSchema,
  generateImageInputSchema,
  generateInputSchema,
  generationSchema,
  intelligenceBudgetSchema,
  NDJSON_CONTENT_TYPE,
  usageReceiptListSchema,
  usageReceiptSchema,
} from '@hosted-notes/runtime-sdk';
import { requireIdempotencyKey } from '../../../domain/idempotency.ts';
import { checkEducationContext } from '../../../domain/education/context.ts';
import { getBudget, getReceipt, listReceipts } from '../../../domain/intelligence/ledger.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import { acceptChat, generateImage, generateJson, generationStream, openGenerate, replayGeneration, replayStream } from './generation.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller, runtimeEnvelope, runtimeSecurity } from './kit.ts';
import { disconnectSignal, generationDepsOf, intelligenceUnavailable, meteredProblems } from './metered-route.ts';

const tags = ['product-runtime'];
const execute = { runtime: { scope: 'intelligence.execute' } } as const;

/** True when the caller asked for the NDJSON stream (a missing version header means 1, decision 46). */
function wantsStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === NDJSON_CONTENT_TYPE);
}

const receiptParams = z.strictObject({ receiptId: z.string().min(1).max(100).describe('The usage receipt id (the generationId of the request).') });
const receiptPage = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Receipts per page, at most 200.'),
  cursor: z.string().max(512).optional().describe('nextCursor of the previous page (opaque).'),
  installationId: z.uuid().optional().describe("Only this installation's receipts (of the caller's organization)."),
});

export const intelligenceRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const { db } = deps;
  const generation = generationDepsOf(deps, app.log);

  app.post(
    '/intelligence/education/generate',
    {
      bodyLimit: 512 * 1024,
      config: execute,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'generate',
        summary: 'generate: metered generation from bounded, explicitly selected inputs (JSON, or an NDJSON stream)',
        description:
          'Needs intelligence.execute and an Idempotency-Key. The maximum bounded cost (input bytes and the output cap at the configured prices) is reserved ' +
          "against the organization's monthly budget, the installation's sublimit and maxConcurrentIntelligence before the provider is called, then settled at " +
          'the actual cost with a usage receipt. With Accept: application/x-ndjson the answer is a stream of ready, delta… and done events. The same key ' +
          'replays a settled answer (no second model call); another body is 422. With no provider configured the answer is the unavailable envelope.',
        body: generateInputSchema,
        response: { 200: runtimeEnvelope('service.generation', generationSchema) },
        problems: [...meteredProblems, 'payload_too_large', 'education_context_learner_record'],
      },
    },
    async (request, reply) => {
      if (!generation) return intelligenceUnavailable('service.generation');
      const caller = runtimeCaller(request);
      checkEducationContext(request.body.educationContext);
      const key = requireIdempotencyKey(idempotencyKeyHeader(request));
      const stream = wantsStream(request);
      const signal = disconnectSignal(reply);
      const { run, prepared } = await openGenerate(generation, caller, request.body, key);
      if (run.kind === 'settled') {
        const replayed = await replayGeneration(db, run.reservation);
        if (!stream) return envelope('service.generation', replayed);
        return ndjson(reply).send(replayStream(replayed));
      }
      if (!stream) return envelope('service.generation', await generateJson(generation, run, prepared, request.body, signal));
      // Accepted before the status line goes out, so a provider refusal is still a proper problem.
      const accepted = await acceptChat(generation, run, prepared, signal);
      return ndjson(reply).send(generationStream(generation, run, request.body, accepted));
    },
  );

  app.post(
    '/intelligence/education/generate-image',
    {
      bodyLimit: 64 * 1024,
      config: execute,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'generateImage',
        summary: 'generateImage: one metered classroom image from a visual brief',
        description:
          'Needs intelligence.execute and an Idempotency-Key. Answers the image as base64 in JSON with its media type (PNG, JPEG or WebP, recognized from ' +
          'the bytes, never taken from the provider), SHA-256, size, alt text composed from the brief, and the usage receipt. One image is reserved at the ' +
          'configured price per image. With no image model configured the answer is the unavailable envelope.',
        body: generateImageInputSchema,
        response: { 200: runtimeEnvelope('service.generated-image', generatedImageSchema) },
        problems: [...meteredProblems, 'payload_too_large', 'education_context_learner_record'],
      },
    },
    async (request, reply) => {
      if (!generation) return intelligenceUnavailable('service.generated-image');
      if (!generation.intelligence.image) return intelligenceUnavailable('service.generated-image', 'An image model');
      checkEducationContext(request.body.educationContext);
      const key = requireIdempotencyKey(idempotencyKeyHeader(request));
      const image = await generateImage(generation, runtimeCaller(request), request.body, key, disconnectSignal(reply));
      return envelope('service.generated-image', image);
    },
  );

  app.get(
    '/intelligence/usage',
    {
      config: execute,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'listUsageReceipts',
        summary: "listUsageReceipts: the organization's usage receipts, newest first",
        description:
          'service.product-intelligence-usage receipts of settled requests and billable failures, of every installation of the caller\'s organization (the ' +
          'budget is shared), or of one with installationId. Released and expired requests cost nothing and have no receipt. Needs intelligence.execute.',
        querystring: receiptPage,
        response: { 200: runtimeEnvelope('service.product-intelligence-usage-list', usageReceiptListSchema) },
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      return envelope('service.product-intelligence-usage-list', await listReceipts(db, caller.organizationId, request.query));
    },
  );

  app.get(
    '/intelligence/usage/:receiptId',
    {
      config: execute,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getUsageReceipt',
        summary: 'getUsageReceipt: one usage receipt of the organization',
        description: "Another organization's receipt answers exactly like a missing one (404 usage_receipt_not_found). Needs intelligence.execute.",
        params: receiptParams,
        response: { 200: runtimeEnvelope('service.product-intelligence-usage', usageReceiptSchema) },
        problems: ['usage_receipt_not_found'],
      },
    },
    async (request) => envelope('service.product-intelligence-usage', await getReceipt(db, runtimeCaller(request).organizationId, request.params.receiptId)),
  );

  app.get(
    '/intelligence/budget',
    {
      config: execute,
      schema: {
        tags,
        security: runtimeSecurity,
        operationId: 'getIntelligenceBudget',
        summary: "getIntelligenceBudget: this month's budget, commitments and concurrent executions",
        description:
          "The organization's monthly budget and what is committed against it (open reservations plus charges), its concurrency bound and executions in " +
          "flight, the installation's sublimit and commitments, and what a new request can still reserve. Needs intelligence.execute.",
        response: { 200: runtimeEnvelope('service.intelligence-budget', intelligenceBudgetSchema) },
      },
    },
    async (request) => {
      const caller = runtimeCaller(request);
      return envelope('service.intelligence-budget', await getBudget(db, caller.organizationId, caller.installationId));
    },
  );
};

/** An NDJSON answer: one event per line, flushed as written, never cached or compressed. */
function ndjson(reply: FastifyReply): FastifyReply {
  return reply.header('content-type', `${NDJSON_CONTENT_TYPE}; charset=utf-8`).header('cache-control', 'no-store').header('x-accel-buffering', 'no');
}
