// practice-review (`POST /intelligence/education/practice-review`): one authorized course and one
// standard, an explicit cadence of two to five review sessions, and teacher-confirmed aggregate
// evidence in; proposed retrieval-practice items (poll, short-answer, sort) per session out, each
// with an educator-only answer guide, standards rationale and cautions, plus a review checklist.
// No field identifies a learner: the evidence is aggregate categories with a share or a count of at
// least five learners (the service also refuses learner-record language in its text). Strict
// objects, every string and list bounded (docs/education-practice-review.md lists the bounds).
import { z } from 'zod';
import { educationContextSchema, MIN_AGGREGATE_GROUP_SIZE } from './context.ts';
import { modelIdentitySchema, usageReceiptSchema } from '../intelligence.ts';

const text = (max: number) => z.string().min(1).max(max);

export const PRACTICE_REVIEW_LIMITS = {
  idChars: 200,
  /** A cadence is two to five sessions: one is not spaced practice, more is a unit plan. */
  minSessions: 2,
  maxSessions: 5,
  maxSpacingDays: 30,
  maxProposalsPerSession: 4,
  observations: 10,
  observationChars: 300,
  evidenceNoteChars: 1_000,
  maxGroupSize: 1_000,
  // What one proposal may hold: learner-facing prompt and choices, and the educator-only guide.
  focusChars: 300,
  promptChars: 600,
  choices: 8,
  choiceChars: 150,
  sortCategories: 4,
  answerGuideChars: 1_000,
  rationaleChars: 400,
  cautions: 3,
  cautionChars: 200,
  checklistItems: 8,
  checklistItemChars: 200,
} as const;

export const practiceKinds = ['poll', 'short-answer', 'sort'] as const;
export type PracticeKind = (typeof practiceKinds)[number];

/** What an aggregate observation is about. */
export const observationCategories = ['misconception', 'skill-gap', 'skill-strength', 'procedural-error', 'vocabulary'] as const;
/** Where the teacher saw it (class-level activities, never one learner's record). */
export const evidenceSources = ['exit-ticket', 'quiz', 'class-discussion', 'observation', 'homework', 'other'] as const;

export const practiceReviewInputSchema = z
  .strictObject({
    course: z.strictObject({ id: text(PRACTICE_REVIEW_LIMITS.idChars), title: text(200), subject: text(100).optional(), gradeLevels: z.array(text(20)).max(13).default([]) }),
    /** The one standard the review practises; every proposal cites it. */
    standard: z.strictObject({ id: text(PRACTICE_REVIEW_LIMITS.idChars), code: text(100).optional(), statement: text(1_000), framework: text(200).optional() }),
    cadence: z.strictObject({
      sessions: z.number().int().min(PRACTICE_REVIEW_LIMITS.minSessions).max(PRACTICE_REVIEW_LIMITS.maxSessions),
      /** Days between sessions, for the model to pace difficulty; the product schedules. */
      spacingDays: z.number().int().min(1).max(PRACTICE_REVIEW_LIMITS.maxSpacingDays).optional(),
      proposalsPerSession: z.number().int().min(1).max(PRACTICE_REVIEW_LIMITS.maxProposalsPerSession).default(3),
      /** The kinds a proposal may take (default: all three). */
      kinds: z
        .array(z.enum(practiceKinds))
        .min(1)
        .max(practiceKinds.length)
        .refine((kinds) => new Set(kinds).size === kinds.length, 'each kind at most once')
        .default([...practiceKinds]),
    }),
    /** What the teacher confirmed about the class, in aggregate. */
    evidence: z
      .strictObject({
        /** The teacher confirmed this evidence; there is no unconfirmed evidence. */
        teacherConfirmed: z.literal(true),
        /** How many learners the evidence covers: at least five, so no observation narrows to a person. */
        groupSize: z.number().int().min(MIN_AGGREGATE_GROUP_SIZE).max(PRACTICE_REVIEW_LIMITS.maxGroupSize),
        observations: z
          .array(
            z.strictObject({
              category: z.enum(observationCategories),
              /** The pattern in the teacher's words, about the class ("confuses numerator and denominator"). */
              description: text(PRACTICE_REVIEW_LIMITS.observationChars),
              source: z.enum(evidenceSources).optional(),
              /** Share of the group (0–1] or a count of learners: exactly one, and at least five learners either way. */
              share: z.number().gt(0).max(1).optional(),
              count: z.number().int().min(MIN_AGGREGATE_GROUP_SIZE).max(PRACTICE_REVIEW_LIMITS.maxGroupSize).optional(),
            }),
          )
          .min(1)
          .max(PRACTICE_REVIEW_LIMITS.observations),
        note: text(PRACTICE_REVIEW_LIMITS.evidenceNoteChars).optional(),
      })
      .superRefine((evidence, ctx) => {
        evidence.observations.forEach((o, index) => {
          const path = ['observations', index];
          if ((o.share === undefined) === (o.count === undefined)) ctx.addIssue({ code: 'custom', message: 'give exactly one of share or count', path: [...path, 'share'] });
          if (o.count !== undefined && o.count > evidence.groupSize) ctx.addIssue({ code: 'custom', message: 'count is larger than groupSize', path: [...path, 'count'] });
          // A share of a small group can be one learner: it must stand for at least five learners.
          if (o.share !== undefined && Math.round(o.share * evidence.groupSize) < MIN_AGGREGATE_GROUP_SIZE) {
            ctx.addIssue({ code: 'custom', message: `share of groupSize is fewer than ${MIN_AGGREGATE_GROUP_SIZE} learners`, path: [...path, 'share'] });
          }
        });
      }),
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'PracticeReviewRequest' });
export type PracticeReviewInput = z.input<typeof practiceReviewInputSchema>;

export const practiceProposalSchema = z
  .strictObject({
    kind: z.enum(practiceKinds),
    /** What a learner would see, once an educator accepts it. */
    learnerFacing: z.strictObject({
      prompt: z.string().min(1).max(PRACTICE_REVIEW_LIMITS.promptChars),
      /** Poll: the options (2–8). Sort: the items to sort (3–8). Short-answer: none. */
      choices: z.array(z.string().min(1).max(PRACTICE_REVIEW_LIMITS.choiceChars)).max(PRACTICE_REVIEW_LIMITS.choices),
      /** Sort: the categories (2–4). Otherwise none. */
      categories: z.array(z.string().min(1).max(PRACTICE_REVIEW_LIMITS.choiceChars)).max(PRACTICE_REVIEW_LIMITS.sortCategories),
    }),
    /** For the educator only: never shown to a learner. */
    educatorOnly: z.strictObject({
      answerGuide: z.string().min(1).max(PRACTICE_REVIEW_LIMITS.answerGuideChars),
      /** The submitted standard's id. */
      standardId: z.string().max(PRACTICE_REVIEW_LIMITS.idChars),
      standardsRationale: z.string().min(1).max(PRACTICE_REVIEW_LIMITS.rationaleChars),
      cautions: z.array(z.string().min(1).max(PRACTICE_REVIEW_LIMITS.cautionChars)).max(PRACTICE_REVIEW_LIMITS.cautions),
    }),
  })
  .meta({ id: 'PracticeReviewProposal' });
export type PracticeProposal = z.infer<typeof practiceProposalSchema>;

export const practiceSessionSchema = z
  .strictObject({
    /** 1-based, in order. */
    session: z.number().int().min(1).max(PRACTICE_REVIEW_LIMITS.maxSessions),
    focus: z.string().min(1).max(PRACTICE_REVIEW_LIMITS.focusChars),
    proposals: z.array(practiceProposalSchema).min(1).max(PRACTICE_REVIEW_LIMITS.maxProposalsPerSession),
  })
  .meta({ id: 'PracticeReviewSession' });

/** The plan itself: what the model produced, after the service checked it against the request. */
export const practicePlanSchema = z
  .strictObject({
    sessions: z.array(practiceSessionSchema).min(PRACTICE_REVIEW_LIMITS.minSessions).max(PRACTICE_REVIEW_LIMITS.maxSessions),
    /** What the educator checks before using any proposal. */
    reviewChecklist: z.array(z.string().min(1).max(PRACTICE_REVIEW_LIMITS.checklistItemChars)).min(1).max(PRACTICE_REVIEW_LIMITS.checklistItems),
  })
  .meta({ id: 'PracticeReviewPlan' });
export type PracticePlan = z.infer<typeof practicePlanSchema>;

export const practiceReviewSchema = z
  .object({
    /** The metered request's id (also its usage receipt's id). */
    generationId: z.uuid(),
    /** Proposals until an educator reviews them: nothing is assigned, graded or scheduled. */
    status: z.literal('proposed'),
    courseId: z.string(),
    standardId: z.string(),
    plan: practicePlanSchema,
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    /** True when this answer is the stored result of an earlier request with the same Idempotency-Key (no model call). */
    replayed: z.boolean(),
  })
  .meta({ id: 'PracticeReview' });
export type PracticeReview = z.infer<typeof practiceReviewSchema>;
