// POST /intelligence/education/practice-review: proposed spaced retrieval practice (poll,
// short-answer, sort) for one course and one standard over a cadence of two to five sessions, from
// teacher-confirmed aggregate evidence (domain/education/practice-review.ts), metered through
// runStructured. Learner-record language in the evidence is refused before anything is reserved.
// The answer is `proposed`: nothing is assigned, scheduled, graded or placed.
import { envelope, PRACTICE_REVIEW_LIMITS, practiceReviewInputSchema, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { exampleReceipt } from '../intelligence-docs.ts';
import { meteredRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { checkEducationContext } from '../../../../domain/education/context.ts';
import { checkPracticeEvidence, practiceReviewOperation } from '../../../../domain/education/practice-review.ts';

const KIND = runtimeOperations.educationPracticeReview.kind;

const docs: OperationDoc = {
  responses: { 200: { description: 'The proposed practice plan with its usage receipt (replayed for the same Idempotency-Key), or the unavailable envelope with no provider.' } },
};

const receipt = exampleReceipt({
  id: '5e2a7c14-9b03-4d6f-8a21-c47e0b9d3f58',
  operation: runtimeOperations.educationPracticeReview.metered,
  costMicrodollars: 3_960,
  reservedMicrodollars: 66_214,
  usage: { inputTokens: 1_012, outputTokens: 737, images: null },
  at: ['2026-11-23T10:12:03.442Z', '2026-11-23T10:12:03.458Z', '2026-11-23T10:12:11.019Z'],
});

const STANDARD_ID = 'urn:case:4.NF.A.1';

const examples: OperationExamples = {
  request: {
    value: {
      course: { id: 'course-math-4', title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'] },
      standard: { id: STANDARD_ID, code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b) by using visual fraction models.' },
      cadence: { sessions: 2, spacingDays: 3, proposalsPerSession: 2, kinds: ['poll', 'short-answer', 'sort'] },
      evidence: {
        teacherConfirmed: true,
        groupSize: 26,
        observations: [
          { category: 'misconception', description: 'Adds the same number to numerator and denominator to make an equivalent fraction.', source: 'exit-ticket', share: 0.35 },
          { category: 'skill-strength', description: 'Folds and labels halves and fourths correctly.', source: 'observation', count: 20 },
        ],
      },
    },
  },
  responses: {
    200: {
      value: envelope(KIND, {
        generationId: receipt.id,
        status: 'proposed' as const,
        courseId: 'course-math-4',
        standardId: STANDARD_ID,
        plan: {
          sessions: [
            {
              session: 1,
              focus: 'Equivalence means the same amount: multiply, do not add.',
              proposals: [
                {
                  kind: 'poll' as const,
                  learnerFacing: { prompt: 'Which fraction is equal to 2/3?', choices: ['3/4', '4/6', '4/5'], categories: [] },
                  educatorOnly: {
                    answerGuide: '4/6. Learners who choose 3/4 or 4/5 added to the numerator and denominator; ask them to draw both fractions on strips.',
                    standardId: STANDARD_ID,
                    standardsRationale: 'Targets the rule (n × a)/(n × b) against the observed adding misconception.',
                    cautions: ['Show the fractions as strips too for learners who need a visual model.'],
                  },
                },
                {
                  kind: 'short-answer' as const,
                  learnerFacing: { prompt: 'Use your fraction strips to explain why 1/2 and 3/6 are the same amount.', choices: [], categories: [] },
                  educatorOnly: {
                    answerGuide: 'Look for: the strips line up; each half is split into three equal sixths, so the number of parts and the number shaded both triple.',
                    standardId: STANDARD_ID,
                    standardsRationale: 'Asks for the explanation with a visual model that the standard names.',
                    cautions: [],
                  },
                },
              ],
            },
            {
              session: 2,
              focus: 'Sort equivalent and non-equivalent pairs, then explain one.',
              proposals: [
                {
                  kind: 'sort' as const,
                  learnerFacing: { prompt: 'Sort each pair: equal or not equal?', choices: ['1/3 and 2/6', '2/5 and 3/6', '3/4 and 6/8', '1/2 and 2/3'], categories: ['Equal', 'Not equal'] },
                  educatorOnly: {
                    answerGuide: 'Equal: 1/3 and 2/6, 3/4 and 6/8. Not equal: 2/5 and 3/6, 1/2 and 2/3 (both made by adding 1).',
                    standardId: STANDARD_ID,
                    standardsRationale: 'Discriminating equal from added-to pairs checks the rule, not memorized pairs.',
                    cautions: ['Read the pairs aloud for learners who need reading support.'],
                  },
                },
                {
                  kind: 'poll' as const,
                  learnerFacing: { prompt: 'To make a fraction equal to 3/5, you can…', choices: ['add 2 to the top and bottom', 'multiply the top and bottom by 2', 'multiply only the top by 2'], categories: [] },
                  educatorOnly: {
                    answerGuide: 'Multiply the top and bottom by 2 (6/10). Revisit strips with learners who still choose adding.',
                    standardId: STANDARD_ID,
                    standardsRationale: 'States the general rule the standard asks learners to explain.',
                    cautions: [],
                  },
                },
              ],
            },
          ],
          reviewChecklist: [
            'Each answer guide matches the correct answer of its item.',
            'Every item can be answered without the strips by learners who cannot use them.',
            'Nothing refers to an individual learner.',
          ],
        },
        model: receipt.model,
        receipt,
        replayed: false,
      }),
    },
  },
};

export const educationPracticeReview = meteredRow('educationPracticeReview', {
  bodyLimit: 64 * 1024,
  description:
    'Needs intelligence.execute and an Idempotency-Key; metered (receipt operation education-practice-review). One course and one standard, a cadence of ' +
    `${PRACTICE_REVIEW_LIMITS.minSessions}–${PRACTICE_REVIEW_LIMITS.maxSessions} sessions of 1–${PRACTICE_REVIEW_LIMITS.maxProposalsPerSession} proposals, and teacher-confirmed aggregate evidence ` +
    '(teacherConfirmed: true; observations of a category with a share or a count standing for at least five learners). No learner identity is accepted: ' +
    'learner-record language in the evidence is 422 education_context_learner_record. Each proposal separates what a learner sees from the educator-only ' +
    'answer guide, standards rationale and cautions; the plan is checked against the cadence, the kinds and the standard id, asked again once, then refused ' +
    '(502 intelligence_output_invalid, both attempts charged). Proposed until an educator reviews it: nothing is assigned or graded.',
  body: practiceReviewInputSchema,
  problems: ['payload_too_large', 'education_context_learner_record'],
  check: (input) => {
    checkEducationContext(input.educationContext);
    checkPracticeEvidence(input);
  },
  operation: practiceReviewOperation,
  answer: (plan, input) => ({ status: 'proposed' as const, courseId: input.course.id, standardId: input.standard.id, plan }),
  docs,
  examples,
});
