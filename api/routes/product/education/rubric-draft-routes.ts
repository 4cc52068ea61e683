// POST /intelligence/education/rubric-draft: a weighted analytic rubric with observable
// descriptors, metered through runStructured (reserve, ask at most twice, check, settle, replay by
// key). The check of the model's answer against the request is domain/education/rubric-draft.ts;
// the rubric is always `proposed` (the product keeps it as a proposed, versioned instrument).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { envelope, modelIdentitySchema } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { checkEducationContext } from '../../../../domain/education/context.ts';
import { acceptRubricDraft, rubricDraftJsonSchema, rubricDraftMessages, RUBRIC_DRAFT_OPERATION } from '../../../../domain/education/rubric-draft.ts';
import { rubricDraftContentSchema, rubricDraftInputSchema, rubricDraftSchema } from '@hosted-notes/runtime-sdk';
import type { RubricDraftContent, RubricDraftRequest } from '@hosted-notes/runtime-sdk';
import type { StructuredOperation } from '../generation.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { runtimeEnvelope, runtimeSecurity } from '../kit.ts';
import { generationDepsOf, intelligenceUnavailable, meteredProblems, structuredAnswer } from '../metered-route.ts';

const KIND = 'service.education-rubric-draft';

const rubricDraftOperation: StructuredOperation<RubricDraftRequest, RubricDraftContent> = {
  operation: RUBRIC_DRAFT_OPERATION,
  messages: rubricDraftMessages,
  jsonSchema: { name: 'rubric_draft', schema: rubricDraftJsonSchema },
  accept: acceptRubricDraft,
  // A descriptor of at most 600 characters is ≤ ~150 tokens (160 with its JSON), a criterion's name,
  // weight and ids ~64, the title ~200: 10 criteria × 6 levels reserve 10,400 tokens, 4 × 4 reserve
  // 2,960 (the model's maximum still caps it).
  maxOutputTokens: (input) => 200 + input.criterionCount * (64 + input.levelLabels.length * 160),
};

const problems = [...meteredProblems, 'payload_too_large', 'education_context_learner_record'] as const;

export const rubricDraftRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const generation = generationDepsOf(deps, app.log);

  app.post(
    '/intelligence/education/rubric-draft',
    {
      // 10 source excerpts of 8,000 characters and 40 statements of 1,000, in multi-byte scripts, fit.
      bodyLimit: 512 * 1024,
      config: { runtime: { scope: 'intelligence.execute' } },
      schema: {
        tags: ['product-runtime'],
        security: runtimeSecurity,
        operationId: 'educationRubricDraft',
        summary: 'rubricDraft: a metered draft of a weighted analytic rubric with observable descriptors, proposed for educator review',
        description:
          'Needs intelligence.execute and an Idempotency-Key. Takes the course, 1–20 authorized standards, 1–20 reviewed learning targets, up to 10 reviewed ' +
          'source excerpts, criterionCount (1–10), 2–6 ordered level labels and accessibility requirements. Answers exactly criterionCount criteria (ids ' +
          'criterion-1…), weights in (0, 1] summing to 1 within 0.01, one observable descriptor per level in the order given, citing only submitted ids. ' +
          'The model is asked at most twice; an answer that is not what was asked is refused with intelligence_output_invalid and the usage of both ' +
          'attempts charged. The rubric is always proposed: the product keeps it as a proposed, versioned instrument. The same key replays it.',
        body: rubricDraftInputSchema,
        response: { 200: runtimeEnvelope(KIND, rubricDraftSchema) },
        problems: [...problems],
      },
    },
    async (request, reply) => {
      if (!generation) return intelligenceUnavailable(KIND);
      checkEducationContext(request.body.educationContext);
      const run = await structuredAnswer(generation, request, reply, rubricDraftOperation, rubricDraftContentSchema);
      return envelope(KIND, { generationId: run.generationId, status: 'proposed' as const, ...run.result, model: run.model, receipt: run.receipt, replayed: run.replayed });
    },
  );
};

export const rubricDraftOperationDocs = {
  educationRubricDraft: {
    headers: ['RuntimeIdempotencyKey'],
    responses: { 200: { description: 'The proposed rubric with its usage receipt, or the unavailable envelope with no provider configured.' } },
  },
};

const exampleReceipt = {
  id: '5a7d1e9b-2c4f-4b6a-8e3d-9f1c0b2a4d57',
  kind: 'service.product-intelligence-usage' as const,
  organizationId: '0c7b5cfe-3b57-4f14-9b8f-3c1e1b0e6a51',
  installationId: '9a3e2c11-4f5b-4d8a-8d2b-7a6c5b4e3d21',
  operation: RUBRIC_DRAFT_OPERATION,
  outcome: 'settled' as const,
  outcomeCode: null,
  model: modelIdentitySchema.parse({ id: 'gpt-4.1-mini-2025-04-14', provider: 'openai-compatible' }),
  costMicrodollars: 1_406,
  reservedMicrodollars: 41_920,
  reportedCostMicrodollars: 1_406,
  overrunMicrodollars: 0,
  usage: { inputTokens: 902, outputTokens: 412, images: null },
  requestedAt: '2026-11-23T09:40:15.502Z',
  dispatchedAt: '2026-11-23T09:40:15.517Z',
  settledAt: '2026-11-23T09:40:21.069Z',
};

const levelLabels = ['Exceeds', 'Meets', 'Approaching', 'Beginning'];

export const rubricDraftExamples: Record<string, OperationExamples> = {
  educationRubricDraft: {
    request: {
      value: {
        course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
        standards: [
          { id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) by using visual fraction models.' },
        ],
        learningTargets: [{ id: 'lt-equiv-1', statement: 'I can use a fraction model to show that two fractions are equivalent.', reviewed: true }],
        criterionCount: 2,
        levelLabels,
        accessibilityRequirements: ['Descriptors in plain language a family member can read'],
      },
    },
    responses: {
      200: {
        value: envelope(KIND, {
          generationId: exampleReceipt.id,
          status: 'proposed' as const,
          title: 'Explaining equivalent fractions',
          levelLabels,
          criteria: [
            {
              criterionId: 'criterion-1',
              name: 'Uses a fraction model',
              weight: 0.6,
              descriptors: [
                { level: 'Exceeds', descriptor: 'Draws or folds two models and labels every part, and uses them to show the fractions cover the same amount.' },
                { level: 'Meets', descriptor: 'Uses one accurate model that shows both fractions covering the same amount.' },
                { level: 'Approaching', descriptor: 'Uses a model with unequal parts or a mislabelled part.' },
                { level: 'Beginning', descriptor: 'Does not use a model, or the model shows different amounts.' },
              ],
              standardIds: ['urn:case:4.NF.A.1'],
              learningTargetIds: ['lt-equiv-1'],
            },
            {
              criterionId: 'criterion-2',
              name: 'Explains why the fractions are equal',
              weight: 0.4,
              descriptors: [
                { level: 'Exceeds', descriptor: 'States that every part was split into the same number of smaller parts and generalizes to other fractions.' },
                { level: 'Meets', descriptor: 'States that every part was split into the same number of smaller parts.' },
                { level: 'Approaching', descriptor: 'Says the fractions are equal without saying why.' },
                { level: 'Beginning', descriptor: 'Gives no explanation, or an explanation about the numbers only (e.g. "both have a 4").' },
              ],
              standardIds: ['urn:case:4.NF.A.1'],
              learningTargetIds: ['lt-equiv-1'],
            },
          ],
          model: exampleReceipt.model,
          receipt: exampleReceipt,
          replayed: false,
        }),
      },
    },
  },
};
