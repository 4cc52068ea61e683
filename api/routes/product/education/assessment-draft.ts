// POST /intelligence/education/assessment-draft: a strict structured draft of assessment items,
// metered through runStructured (reserve, ask at most twice, check, settle, replay by key). The
// check of the model's answer against the request is domain/education/assessment-draft.ts; the
// draft is always `proposed` (an educator reviews it) and nothing here grades or places a learner.
import { assessmentDraftInputSchema, envelope, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { exampleReceipt } from '../intelligence-docs.ts';
import { meteredRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { checkEducationContext } from '../../../../domain/education/context.ts';
import { assessmentDraftOperation } from '../../../../domain/education/assessment-draft.ts';

const KIND = runtimeOperations.assessmentDraft.kind;

const docs: OperationDoc = {
  responses: { 200: { description: 'The proposed draft with its usage receipt, or the unavailable envelope with no provider configured.' } },
};

const receipt = exampleReceipt({
  id: '3f0b9c2a-6d1e-4f7a-9b8c-2e5d4a1f6c03',
  operation: runtimeOperations.assessmentDraft.metered,
  costMicrodollars: 1_912,
  reservedMicrodollars: 57_344,
  usage: { inputTokens: 1_084, outputTokens: 571, images: null },
  at: ['2026-11-23T09:31:02.118Z', '2026-11-23T09:31:02.131Z', '2026-11-23T09:31:09.744Z'],
});

const examples: OperationExamples = {
  request: {
    value: {
      course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
      standards: [
        { id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) by using visual fraction models.' },
      ],
      learningTargets: [{ id: 'lt-equiv-1', statement: 'I can use a fraction model to show that two fractions are equivalent.', reviewed: true }],
      sources: [{ id: 'src-strips', title: 'Fraction strips lesson notes', excerpt: 'Students fold paper strips into halves, fourths and eighths and compare the folds.' }],
      itemCount: 2,
      itemTypes: ['multiple-choice', 'short-answer'],
      dokLevels: [1, 2],
      accessibilityRequirements: ['Readable by a screen reader: no information only in images'],
    },
  },
  responses: {
    200: {
      value: envelope(KIND, {
        generationId: receipt.id,
        status: 'proposed' as const,
        title: 'Equivalent fractions check',
        items: [
          {
            itemId: 'item-1',
            type: 'multiple-choice' as const,
            dokLevel: 1 as const,
            stem: 'Which fraction is equivalent to 2/4?',
            choices: [
              { id: 'A', text: '1/2' },
              { id: 'B', text: '2/8' },
              { id: 'C', text: '4/2' },
            ],
            matchPrompts: [],
            accessibilityNotes: ['Fractions are written as text, so a screen reader reads them.'],
            alignment: { standardIds: ['urn:case:4.NF.A.1'], learningTargetIds: ['lt-equiv-1'], sourceIds: [] },
            educatorOnly: {
              answerKey: { choiceIds: ['A'], matches: [], sampleAnswer: null },
              rationale: 'Multiplying 1/2 by 2/2 gives 2/4. B halves the fraction; C inverts it (a common misconception).',
            },
          },
          {
            itemId: 'item-2',
            type: 'short-answer' as const,
            dokLevel: 2 as const,
            stem: 'You folded a strip into fourths and another into eighths. Explain how the strips show that 3/4 = 6/8.',
            choices: [],
            matchPrompts: [],
            accessibilityNotes: ['The strips are described in words; no picture is needed to answer.'],
            alignment: { standardIds: ['urn:case:4.NF.A.1'], learningTargetIds: ['lt-equiv-1'], sourceIds: ['src-strips'] },
            educatorOnly: {
              answerKey: { choiceIds: [], matches: [], sampleAnswer: 'Each fourth is two eighths, so three fourths cover the same length as six eighths.' },
              rationale: 'Looks for the idea that each part is split into the same number of smaller parts (n = 2).',
            },
          },
        ],
        model: receipt.model,
        receipt,
        replayed: false,
      }),
    },
  },
};

export const assessmentDraft = meteredRow('assessmentDraft', {
  bodyLimit: 512 * 1024,
  description:
    'Needs intelligence.execute and an Idempotency-Key. Takes the course, 1–20 authorized standards, 1–20 reviewed learning targets, up to 10 reviewed ' +
    'source excerpts, itemCount (1–30), the item types and Depth of Knowledge levels allowed, and accessibility requirements. Answers exactly itemCount ' +
    'items (ids item-1…), each of a requested type and level (each requested type and level at least once when itemCount allows), citing only submitted ' +
    'ids; answer keys and rationales are under educatorOnly. The model is asked at most twice; an answer that is not what was asked is refused with ' +
    'intelligence_output_invalid and the usage of both attempts charged. The draft is always proposed. The same key replays it (no second model call).',
  body: assessmentDraftInputSchema,
  problems: ['payload_too_large', 'education_context_learner_record'],
  check: (input) => checkEducationContext(input.educationContext),
  operation: assessmentDraftOperation,
  answer: (result) => ({ status: 'proposed' as const, ...result }),
  docs,
  examples,
});
