// POST /intelligence/education/student-guidance: one supportive turn for a learner under the
// fail-closed policy (domain/education/student-guidance.ts), metered through runStructured. Guidance
// that fails a check after generation is refused (422 student_guidance_refused with the safety
// receipt and the usage receipt: the model's work is paid for) and never shown.
import { envelope, runtimeOperations, STUDENT_GUIDANCE_POLICY_VERSION, studentGuidanceInputSchema } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { exampleReceipt } from '../intelligence-docs.ts';
import { meteredRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { AppError } from '../../../../domain/errors.ts';
import { guidanceOperation } from '../../../../domain/education/student-guidance.ts';

const KIND = runtimeOperations.studentGuidance.kind;

const docs: OperationDoc = {
  responses: { 200: { description: 'Guidance that passed every check, with its safety receipt and usage receipt, or the unavailable envelope with no provider.' } },
};

const receipt = exampleReceipt({
  id: '8c1f2e3d-4b5a-4c69-8d7e-6f5a4b3c2d1e',
  operation: runtimeOperations.studentGuidance.metered,
  costMicrodollars: 214,
  reservedMicrodollars: 2_406,
  usage: { inputTokens: 431, outputTokens: 26, images: null },
  at: ['2026-11-23T09:20:11.204Z', '2026-11-23T09:20:11.219Z', '2026-11-23T09:20:12.087Z'],
});

const examples: OperationExamples = {
  request: {
    value: {
      ageBand: 'elementary',
      course: { id: 'course-math-4', title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'] },
      standard: { id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b).' },
      activity: { id: 'act-17', title: 'Fraction strips', instructions: 'Which fraction equals 2/4? Use your strips to show it.', teacherAnswer: '1/2' },
      policy: { noAnswerRevelation: true, noExternalLinks: true, noDirectMessaging: true, teacherVisibleTranscript: true },
      learnerMessage: "I folded it but I don't get it",
      supportPreferences: { mode: 'short-hint' },
      priorTurns: [],
    },
  },
  responses: {
    200: {
      value: envelope(KIND, {
        generationId: receipt.id,
        mode: 'short-hint' as const,
        text: 'Lay your strip of fourths next to the other strips. Which strip has a fold in exactly the same place as two of your fourths?',
        locale: null,
        answerWithheld: true as const,
        teacherVisible: true as const,
        safety: {
          policyVersion: STUDENT_GUIDANCE_POLICY_VERSION,
          passed: true,
          checks: [
            { check: 'schema' as const, passed: true, finding: null },
            { check: 'mode' as const, passed: true, finding: null },
            { check: 'length' as const, passed: true, finding: null },
            { check: 'no-links' as const, passed: true, finding: null },
            { check: 'no-contact-request' as const, passed: true, finding: null },
            { check: 'no-answer-revelation' as const, passed: true, finding: null },
          ],
        },
        model: receipt.model,
        receipt,
        replayed: false,
      }),
    },
  },
};

export const studentGuidance = meteredRow('studentGuidance', {
  bodyLimit: 64 * 1024,
  description:
    'Needs intelligence.execute and an Idempotency-Key. Every policy switch must be true (answer withheld, no links, no direct messaging, teacher-visible ' +
    "transcript); the learner's message and prior turns are untrusted evidence. The guidance is checked after generation (links, contact requests, the " +
    "teacher's answer when supplied): a failure is 422 student_guidance_refused with the safety receipt and the usage receipt, never a repaired text.",
  body: studentGuidanceInputSchema,
  problems: ['student_guidance_refused', 'payload_too_large'],
  check: () => undefined,
  operation: guidanceOperation,
  answer: ({ safety, mode, text, locale }, _input, run) => {
    // Guidance that failed a check after generation is withheld; the model's work is paid for and named.
    if (!safety.passed) {
      throw new AppError('student_guidance_refused', 'The generated guidance broke the policy and is withheld.', {
        extensions: { safety, receipt: run.receipt, generationId: run.generationId, replayed: run.replayed },
      });
    }
    return { mode, text, locale, answerWithheld: true as const, teacherVisible: true as const, safety };
  },
  docs,
  examples,
});
