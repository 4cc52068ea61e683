// Metered intelligence on the runtime: generate (JSON or an NDJSON stream), generate-image, and the
// organization's usage receipts and budget. The rules live in the domain (domain/intelligence/
// generation.ts and metering.ts); this file is the HTTP edge: schemas, headers, the disconnect.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, generateImageInputSchema, generateInputSchema, NDJSON_CONTENT_TYPE } from '@hosted-notes/runtime-sdk';
import { checkEducationContext } from '../../../domain/education/context.ts';
import { getBudget, getReceipt, listReceipts } from '../../../domain/intelligence/ledger.ts';
import { generateImage, generateJson, generationOfRequest, openGenerate, replayStream, startBackgroundGenerate, streamGenerate } from '../../../domain/intelligence/generation.ts';
import type { OpenedGenerate } from '../../../domain/intelligence/generation.ts';
import { AppError } from '../../../domain/errors.ts';
import { generationOf } from '../../../domain/intelligence/generation-log.ts';
import type { GenerationWakes } from '../../../domain/intelligence/generation-log.ts';
import { acceptedInBackground, generationEventsUrl, prefersAsync } from './generations.ts';
import { intelligenceDocs, intelligenceExamples } from './intelligence-docs.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller } from './kit.ts';
import { disconnectSignal, generationDepsOf, intelligenceUnavailable } from './metered-route.ts';
import { operationKey, operationRoute } from './operation-route.ts';

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

export const intelligenceRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps & { wakes: GenerationWakes }> = async (app, deps) => {
  const { db, wakes } = deps;
  const generation = generationDepsOf(deps, app.log);

  app.route({
    ...operationRoute('generate'),
    bodyLimit: 512 * 1024,
    schema: {
      description:
        'Needs intelligence.execute and an Idempotency-Key. The maximum bounded cost (input bytes and the output cap at the configured prices) is reserved ' +
        "against the organization's monthly budget, the installation's sublimit and maxConcurrentIntelligence before the provider is called, then settled at " +
        'the actual cost with a usage receipt. With Accept: application/x-ndjson the answer is a stream of ready, delta… and done events. The same key ' +
        'replays a settled answer (no second model call); another body is 422. With no provider configured the answer is the unavailable envelope. ' +
        'With Prefer: respond-async the answer is 202 Accepted (Preference-Applied: respond-async, Location: the generation) with the ' +
        'service.intelligence-generation envelope once it is reserved, and it runs with no connection holding it (getGeneration, streamGeneration, ' +
        'cancelGeneration); the same key answers the same generation.',
      body: generateInputSchema,
      problems: ['payload_too_large', 'education_context_learner_record'],
      docs: intelligenceDocs.generate,
      examples: intelligenceExamples.generate,
    },
    handler: async (request, reply) => {
      if (!generation) return intelligenceUnavailable('service.generation');
      const caller = runtimeCaller(request);
      checkEducationContext(request.body.educationContext);
      const key = operationKey(request);
      const stream = wantsStream(request);
      const background = prefersAsync(request);
      const signal = disconnectSignal(reply);
      let opened: OpenedGenerate;
      try {
        opened = await openGenerate(generation, caller, request.body, key);
      } catch (error) {
        // The same key while its background generation runs answers that generation (another body is still 422).
        const running = background && error instanceof AppError && error.code === 'idempotency_in_flight' ? await generationOfRequest(generation, caller, key) : null;
        if (running) return acceptedInBackground(db, reply, running);
        throw error;
      }
      if (opened.kind === 'settled') {
        // A settled generation that kept a log answers as the generation it is; one answered as JSON replays (the preference not applied).
        const logged = background ? await generationOfRequest(generation, caller, key) : null;
        if (logged) return acceptedInBackground(db, reply, logged);
        if (!stream) return envelope('service.generation', opened.generation);
        return ndjson(reply).send(replayStream(opened.generation));
      }
      const { held, prepared } = opened;
      if (background) {
        await startBackgroundGenerate(generation, wakes, held, prepared, request.body);
        return acceptedInBackground(db, reply, await generationOf(db, caller, held.reservation.id));
      }
      if (!stream) return envelope('service.generation', await generateJson(generation, held, prepared, request.body, signal));
      // Accepted before the status line goes out, so a provider refusal is still a proper problem.
      return ndjson(reply).send(await streamGenerate(generation, wakes, held, prepared, request.body, signal, generationEventsUrl));
    },
  });

  app.route({
    ...operationRoute('generateImage'),
    bodyLimit: 64 * 1024,
    schema: {
      description:
        'Needs intelligence.execute and an Idempotency-Key. Answers the image as base64 in JSON with its media type (PNG, JPEG or WebP, recognized from ' +
        'the bytes, never taken from the provider), SHA-256, size, alt text composed from the brief, and the usage receipt. One image is reserved at the ' +
        'configured price per image. With no image model configured the answer is the unavailable envelope.',
      body: generateImageInputSchema,
      problems: ['payload_too_large', 'education_context_learner_record'],
      docs: intelligenceDocs.generateImage,
      examples: intelligenceExamples.generateImage,
    },
    handler: async (request, reply) => {
      if (!generation) return intelligenceUnavailable('service.generated-image');
      if (!generation.intelligence.image) return intelligenceUnavailable('service.generated-image', 'An image model');
      checkEducationContext(request.body.educationContext);
      const key = operationKey(request);
      const image = await generateImage(generation, runtimeCaller(request), request.body, key, disconnectSignal(reply));
      return envelope('service.generated-image', image);
    },
  });

  app.route({
    ...operationRoute('listUsageReceipts'),
    schema: {
      description:
        'service.product-intelligence-usage receipts of settled requests and billable failures, of every installation of the caller\'s organization (the ' +
        'budget is shared), or of one with installationId. Released and expired requests cost nothing and have no receipt. Needs intelligence.execute.',
      querystring: receiptPage,
      docs: intelligenceDocs.listUsageReceipts,
      examples: intelligenceExamples.listUsageReceipts,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      return envelope('service.product-intelligence-usage-list', await listReceipts(db, caller.organizationId, request.query));
    },
  });

  app.route({
    ...operationRoute('getUsageReceipt'),
    schema: {
      description: "Another organization's receipt answers exactly like a missing one (404 usage_receipt_not_found). Needs intelligence.execute.",
      params: receiptParams,
      problems: ['usage_receipt_not_found'],
      docs: intelligenceDocs.getUsageReceipt,
      examples: intelligenceExamples.getUsageReceipt,
    },
    handler: async (request) => envelope('service.product-intelligence-usage', await getReceipt(db, runtimeCaller(request).organizationId, request.params.receiptId)),
  });

  app.route({
    ...operationRoute('getIntelligenceBudget'),
    schema: {
      description:
        "The organization's monthly budget and what is committed against it (open reservations plus charges), its concurrency bound and executions in " +
        "flight, the installation's sublimit and commitments, and what a new request can still reserve. Needs intelligence.execute.",
      docs: intelligenceDocs.getIntelligenceBudget,
      examples: intelligenceExamples.getIntelligenceBudget,
    },
    handler: async (request) => {
      const caller = runtimeCaller(request);
      return envelope('service.intelligence-budget', await getBudget(db, caller.organizationId, caller.installationId));
    },
  });
};

/** An NDJSON answer: one event per line, flushed as written, never cached or compressed. */
function ndjson(reply: FastifyReply): FastifyReply {
  return reply.header('content-type', `${NDJSON_CONTENT_TYPE}; charset=utf-8`).header('cache-control', 'no-store').header('x-accel-buffering', 'no');
}
