// POST /intelligence/education/student-guidance: one supportive turn for a learner under the
// fail-closed policy (domain/education/student-guidance.ts), metered through runStructured. Guidance
// that fails a check after generation is refused (422 student_guidance_refused with the safety
// receipt and the usage receipt: the model's work is paid for) and never shown.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, modelIdentitySchema, studentGuidanceInputSchema, studentGuidanceSchema, STUDENT_GUIDANCE_LIMITS, STUDENT_GUIDANCE_POLICY_VERSION } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { AppError } from '../../../../domain/errors.ts';
import { checkGuidance, guidanceJsonSchema, guidanceMessages } from '../../../../domain/education/student-guidance.ts';
import type { CheckedGuidance, StudentGuidanceRequest } from '../../../../domain/education/student-guidance.ts';
import type { StructuredOperation } from '../generation.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { runtimeEnvelope, runtimeSecurity } from '../kit.ts';
import { generationDepsOf, intelligenceUnavailable, meteredProblems, structuredAnswer } from '../metered-route.ts';

const KIND = 'service.education-student-guidance';

const guidanceOperation: StructuredOperation<StudentGuidanceRequest, CheckedGuidance> = {
  operation: 'education-student-guidance',
  messages: guidanceMessages,
  jsonSchema: { name: 'student_guidance', schema: guidanceJsonSchema },
  accept: checkGuidance,
  // The mode's character bound at two characters a token (English runs ~4; scripts without spaces
  // fewer), plus the JSON around it: 214 tokens for a short hint, 664 for the 1,200-character modes.
  maxOutputTokens: (input) => Math.ceil(STUDENT_GUIDANCE_LIMITS.outputChars[input.supportPreferences.mode] / 2) + 64,
};

const checkedSchema = z.object({
  mode: studentGuidanceSchema.shape.mode,
  text: z.string(),
  locale: z.string().nullable(),
  safety: studentGuidanceSchema.shape.safety,
}) as z.ZodType<CheckedGuidance>;

export const studentGuidanceRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const generation = generationDepsOf(deps, app.log);

  app.post(
    '/intelligence/education/student-guidance',
    {
      bodyLimit: 64 * 1024,
      config: { runtime: { scope: 'intelligence.execute' } },
      schema: {
        tags: ['product-runtime'],
        security: runtimeSecurity,
        operationId: 'educationStudentGuidance',
        summary: 'studentGuidance: one hint, scaffold, reflection question, translation or clearer reading for a learner, under a fail-closed policy',
        description:
          'Needs intelligence.execute and an Idempotency-Key. Every policy switch must be true (answer withheld, no links, no direct messaging, teacher-visible ' +
          "transcript); the learner's message and prior turns are untrusted evidence. The guidance is checked after generation (links, contact requests, the " +
          "teacher's answer when supplied): a failure is 422 student_guidance_refused with the safety receipt and the usage receipt, never a repaired text.",
        body: studentGuidanceInputSchema,
        response: { 200: runtimeEnvelope(KIND, studentGuidanceSchema) },
        problems: [...meteredProblems, 'student_guidance_refused', 'payload_too_large'],
      },
    },
    async (request, reply) => {
      if (!generation) return intelligenceUnavailable(KIND);
      const run = await structuredAnswer(generation, request, reply, guidanceOperation, checkedSchema);
      const { safety, mode, text, locale } = run.result;
      if (!safety.passed) {
        throw new AppError('student_guidance_refused', 'The generated guidance broke the policy and is withheld.', {
          extensions: { safety, receipt: run.receipt, generationId: run.generationId, replayed: run.replayed },
        });
      }
      return envelope(KIND, { generationId: run.generationId, mode, text, locale, answerWithheld: true as const, teacherVisible: true as const, safety, model: run.model, receipt: run.receipt, replayed: run.replayed });
    },
  );
};

export const studentGuidanceOperationDocs = {
  educationStudentGuidance: {
    headers: ['RuntimeIdempotencyKey'],
    responses: { 200: { description: 'Guidance that passed every check, with its safety receipt and usage receipt, or the unavailable envelope with no provider.' } },
  },
};

const exampleReceipt = {
  id: '8c1f2e3d-4b5a-4c69-8d7e-6f5a4b3c2d1e',
  kind: 'service.product-intelligence-usage' as const,
  organizationId: '0c7b5cfe-3b57-4f14-9b8f-3c1e1b0e6a51',
  installationId: '9a3e2c11-4f5b-4d8a-8d2b-7a6c5b4e3d21',
  operation: 'education-student-guidance',
  outcome: 'settled' as const,
  outcomeCode: null,
  model: modelIdentitySchema.parse({ id: 'gpt-4.1-mini-2025-04-14', provider: 'openai-compatible' }),
  costMicrodollars: 214,
  reservedMicrodollars: 2_406,
  reportedCostMicrodollars: 214,
  overrunMicrodollars: 0,
  usage: { inputTokens: 431, outputTokens: 26, images: null },
  requestedAt: '2026-11-23T09:20:11.204Z',
  dispatchedAt: '2026-11-23T09:20:11.219Z',
  settledAt: '2026-11-23T09:20:12.087Z',
};

export const studentGuidanceExamples: Record<string, OperationExamples> = {
  educationStudentGuidance: {
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
          generationId: exampleReceipt.id,
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
          model: exampleReceipt.model,
          receipt: exampleReceipt,
          replayed: false,
        }),
      },
    },
  },
};
