// POST /intelligence/education/quality-review: an advisory evaluation of one artifact revision
// against its course, adopted standards, supporting sources and policy constraints
// (domain/education/quality-review.ts), metered through runStructured. The answer names the artifact
// by its id and revision only; nothing is graded, approved or changed by a review.
import { envelope, QUALITY_REVIEW_LIMITS, qualityReviewInputSchema, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { exampleReceipt } from '../intelligence-docs.ts';
import { meteredRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { checkEducationContext } from '../../../../domain/education/context.ts';
import { qualityReviewOperation } from '../../../../domain/education/quality-review.ts';

const KIND = runtimeOperations.educationQualityReview.kind;

const docs: OperationDoc = {
  responses: { 200: { description: 'The advisory evaluation with its usage receipt (replayed for the same Idempotency-Key), or the unavailable envelope with no provider.' } },
};

const receipt = exampleReceipt({
  id: '3d6b9a0e-2f41-4c7a-9b85-1e0f4d2c6a73',
  operation: runtimeOperations.educationQualityReview.metered,
  costMicrodollars: 3_412,
  reservedMicrodollars: 52_860,
  usage: { inputTokens: 1_836, outputTokens: 394, images: null },
  at: ['2026-11-23T10:04:51.117Z', '2026-11-23T10:04:51.131Z', '2026-11-23T10:04:57.902Z'],
});

const none = { standardIds: [], sourceIds: [], policyConstraintIndexes: [] };

const examples: OperationExamples = {
  request: {
    value: {
      artifact: {
        id: 'artifact-fraction-strips',
        revision: '7',
        title: 'Fraction strips: equivalent fractions',
        format: 'markdown',
        content:
          '# Fraction strips\n\nFold one strip into halves and one into fourths. Lay them side by side.\n\n**Check:** Which fraction equals 2/4? Explain with your strips.\n\nAs the textbook shows, every fraction has exactly one equivalent fraction.',
      },
      course: { id: 'course-math-4', title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'] },
      standards: [{ id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) by using visual fraction models.' }],
      sources: [{ id: 'src-strips', title: 'Fraction strips lesson', excerpt: 'Students fold paper strips into halves, fourths and eighths and compare the folds.' }],
      policyConstraints: ['Every image needs alt text.', 'No brand names in classroom materials.'],
    },
  },
  responses: {
    200: {
      value: envelope(KIND, {
        generationId: receipt.id,
        advisory: true as const,
        artifact: { id: 'artifact-fraction-strips', revision: '7' },
        evaluation: {
          alignment: { rating: 'adequate' as const, findings: [{ ...none, note: 'The folding task and the check question practise equivalence with a visual model, as the standard asks.', standardIds: ['urn:case:4.NF.A.1'] }] },
          sourceSupport: { rating: 'weak' as const, findings: [{ ...none, note: 'The closing claim that each fraction has exactly one equivalent is not in the source and is false.', sourceIds: ['src-strips'] }] },
          citations: { rating: 'weak' as const, findings: [{ ...none, note: 'It refers to "the textbook" without naming a source; the supplied lesson is not attributed.', sourceIds: ['src-strips'] }] },
          readingLevel: { rating: 'strong' as const, findings: [] },
          accessibility: { rating: 'adequate' as const, findings: [{ ...none, note: 'The task relies on folding paper; offer a drawn or digital strip for learners who cannot fold.' }] },
          biasRisk: { rating: 'none-found' as const, findings: [] },
          assessmentValidity: { rating: 'adequate' as const, findings: [{ ...none, note: 'The check question has one defensible answer, but asking learners to explain with the strips is what shows the reasoning.', standardIds: ['urn:case:4.NF.A.1'] }] },
          policyConflicts: { rating: 'none-found' as const, findings: [] },
          summary: 'Aligned, accessible practice with a visual model. Remove or correct the closing claim about equivalent fractions and attribute the strips lesson before use.',
        },
        model: receipt.model,
        receipt,
        replayed: false,
      }),
    },
  },
};

export const educationQualityReview = meteredRow('educationQualityReview', {
  bodyLimit: QUALITY_REVIEW_LIMITS.bodyBytes,
  description:
    `Needs intelligence.execute and an Idempotency-Key; metered (receipt operation education-quality-review). One artifact revision (content ≤ ${QUALITY_REVIEW_LIMITS.contentChars.toLocaleString('en-US')} characters), ` +
    `its course, 1–${QUALITY_REVIEW_LIMITS.standards} adopted standards, ≤ ${QUALITY_REVIEW_LIMITS.sources} supporting sources and ≤ ${QUALITY_REVIEW_LIMITS.policyConstraints} policy constraints. ` +
    'Each dimension gets a rating from a fixed vocabulary and at most five findings citing only submitted standard ids, source ids and constraint indexes; ' +
    'an output that is not that is asked again once, then refused (502 intelligence_output_invalid, both attempts charged). Advisory: nothing is graded or approved. ' +
    'The artifact content is never returned.',
  body: qualityReviewInputSchema,
  problems: ['payload_too_large', 'education_context_learner_record'],
  check: (input) => checkEducationContext(input.educationContext),
  operation: qualityReviewOperation,
  answer: (evaluation, input) => ({ advisory: true as const, artifact: { id: input.artifact.id, revision: input.artifact.revision }, evaluation }),
  docs,
  examples,
});
