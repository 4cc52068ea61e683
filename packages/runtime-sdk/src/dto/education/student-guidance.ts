// student-guidance: one supportive turn for a learner working on a live, teacher-authored activity,
// under a fail-closed policy. Every field of the request except the ids is untrusted evidence; the
// policy is not negotiable (each switch must be true, or the request is refused).
import { z } from 'zod';
import { modelIdentitySchema, usageReceiptSchema } from '../intelligence.ts';

const text = (max: number) => z.string().min(1).max(max);
const locale = z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a BCP 47 language tag such as es-MX');

export const guidanceModes = ['short-hint', 'explanation-scaffold', 'reflection-question', 'translation', 'clearer-reading'] as const;
export const STUDENT_GUIDANCE_POLICY_VERSION = 'student-guidance-policy@1';

export const STUDENT_GUIDANCE_LIMITS = {
  instructionsChars: 4_000,
  teacherAnswerChars: 2_000,
  learnerMessageChars: 1_000,
  priorTurns: 10,
  turnChars: 1_000,
  /** Characters of guidance by mode: a hint is short by definition; the others may explain. */
  outputChars: { 'short-hint': 300, 'explanation-scaffold': 1_200, 'reflection-question': 400, translation: 1_200, 'clearer-reading': 1_200 },
} as const;

export const studentGuidanceInputSchema = z
  .strictObject({
    ageBand: z.enum(['elementary', 'middle', 'secondary']),
    course: z.strictObject({ id: text(200), title: text(200), subject: text(100).optional(), gradeLevels: z.array(text(20)).max(13).default([]) }),
    standard: z.strictObject({ id: text(200), code: text(100).optional(), statement: text(1_000) }),
    /** The live activity as the teacher wrote it; `teacherAnswer` lets the service check that guidance never gives it away. */
    activity: z.strictObject({
      id: text(200),
      title: text(300),
      instructions: text(STUDENT_GUIDANCE_LIMITS.instructionsChars),
      teacherAnswer: text(STUDENT_GUIDANCE_LIMITS.teacherAnswerChars).optional(),
    }),
    /** Fail-closed: every switch must be true; there is no way to ask for less. */
    policy: z.strictObject({
      noAnswerRevelation: z.literal(true),
      noExternalLinks: z.literal(true),
      noDirectMessaging: z.literal(true),
      teacherVisibleTranscript: z.literal(true),
    }),
    learnerMessage: text(STUDENT_GUIDANCE_LIMITS.learnerMessageChars),
    supportPreferences: z
      .strictObject({ mode: z.enum(guidanceModes), locale: locale.optional() })
      .refine((p) => p.mode !== 'translation' || p.locale !== undefined, { message: 'translation needs an explicit locale', path: ['locale'] }),
    priorTurns: z.array(z.strictObject({ role: z.enum(['learner', 'guide']), text: text(STUDENT_GUIDANCE_LIMITS.turnChars) })).max(STUDENT_GUIDANCE_LIMITS.priorTurns).default([]),
  })
  .meta({ id: 'StudentGuidanceRequest' });
export type StudentGuidanceInput = z.input<typeof studentGuidanceInputSchema>;

export const safetyChecks = ['schema', 'mode', 'length', 'no-links', 'no-contact-request', 'no-answer-revelation'] as const;

/** Which checks ran on the generated guidance and what they found (a category, never the text). */
export const safetyReceiptSchema = z
  .object({
    policyVersion: z.literal(STUDENT_GUIDANCE_POLICY_VERSION),
    passed: z.boolean(),
    checks: z.array(z.object({ check: z.enum(safetyChecks), passed: z.boolean(), finding: z.string().nullable() })),
  })
  .meta({ id: 'StudentGuidanceSafetyReceipt' });
export type SafetyReceipt = z.infer<typeof safetyReceiptSchema>;

export const studentGuidanceSchema = z
  .object({
    generationId: z.uuid(),
    mode: z.enum(guidanceModes),
    /** The guidance for the learner; the completed answer is never in it. */
    text: z.string(),
    locale: z.string().nullable(),
    answerWithheld: z.literal(true),
    teacherVisible: z.literal(true),
    safety: safetyReceiptSchema,
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    replayed: z.boolean(),
  })
  .meta({ id: 'StudentGuidance' });
export type StudentGuidance = z.infer<typeof studentGuidanceSchema>;
