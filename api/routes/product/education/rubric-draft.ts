// POST /intelligence/education/rubric-draft: a weighted analytic rubric with observable
// descriptors, metered through runStructured (reserve, ask at most twice, check, settle, replay by
// key). The check of the model's answer against the request is domain/education/rubric-draft.ts;
// the rubric is always `proposed` (the product keeps it as a proposed, versioned instrument).
import { envelope, rubricDraftInputSchema, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { exampleReceipt } from '../intelligence-docs.ts';
import { meteredRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { checkEducationContext } from '../../../../domain/education/context.ts';
import { rubricDraftOperation } from '../../../../domain/education/rubric-draft.ts';

const KIND = runtimeOperations.rubricDraft.kind;

const docs: OperationDoc = {
  responses: { 200: { description: 'The proposed rubric with its usage receipt, or the unavailable envelope with no provider configured.' } },
};

const receipt = exampleReceipt({
  id: '5a7d1e9b-2c4f-4b6a-8e3d-9f1c0b2a4d57',
  operation: runtimeOperations.rubricDraft.metered,
  costMicrodollars: 1_406,
  reservedMicrodollars: 41_920,
  usage: { inputTokens: 902, outputTokens: 412, images: null },
  at: ['2026-11-23T09:40:15.502Z', '2026-11-23T09:40:15.517Z', '2026-11-23T09:40:21.069Z'],
});

const levelLabels = ['Exceeds', 'Meets', 'Approaching', 'Beginning'];

const examples: OperationExamples = {
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
        generationId: receipt.id,
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
        model: receipt.model,
        receipt,
        replayed: false,
      }),
    },
  },
};

export const rubricDraft = meteredRow('rubricDraft', {
  bodyLimit: 512 * 1024,
  description:
    'Needs intelligence.execute and an Idempotency-Key. Takes the course, 1–20 authorized standards, 1–20 reviewed learning targets, up to 10 reviewed ' +
    'source excerpts, criterionCount (1–10), 2–6 ordered level labels and accessibility requirements. Answers exactly criterionCount criteria (ids ' +
    'criterion-1…), weights in (0, 1] summing to 1 within 0.01, one observable descriptor per level in the order given, citing only submitted ids. ' +
    'The model is asked at most twice; an answer that is not what was asked is refused with intelligence_output_invalid and the usage of both ' +
    'attempts charged. The rubric is always proposed: the product keeps it as a proposed, versioned instrument. The same key replays it.',
  body: rubricDraftInputSchema,
  problems: ['payload_too_large', 'education_context_learner_record'],
  check: (input) => checkEducationContext(input.educationContext),
  operation: rubricDraftOperation,
  answer: (result) => ({ status: 'proposed' as const, ...result }),
  docs,
  examples,
});
