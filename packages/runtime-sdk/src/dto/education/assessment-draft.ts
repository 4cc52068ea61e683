// assessment-draft: a metered, strictly structured draft of assessment items for an educator to
// review. The request carries only what the educator already authorized or reviewed (standards,
// learning targets, sources); the answer cites them by their submitted ids and stays `proposed`
// until an educator reviews it. Answer keys and rationales sit under `educatorOnly`, so a product
// can drop that object before anything reaches learners. Nothing here grades or places a learner.
// The request pieces shared with rubric-draft (course, standards, targets, sources, accessibility)
// live here and are imported by ./rubric-draft.ts.
import { z } from 'zod';
import { courseMetadataSchema, modelIdentitySchema, selectedSourceSchema, standardRefSchema, usageReceiptSchema } from '../intelligence.ts';
import { educationContextSchema } from './context.ts';

const text = (max: number) => z.string().min(1).max(max);

/** Bounds of the two draft requests (assessment-draft and rubric-draft share the first six). */
export const EDUCATION_DRAFT_LIMITS = {
  standards: 20,
  learningTargets: 20,
  learningTargetChars: 1_000,
  sources: 10,
  accessibilityRequirements: 10,
  accessibilityRequirementChars: 300,
} as const;

export const ASSESSMENT_DRAFT_LIMITS = {
  ...EDUCATION_DRAFT_LIMITS,
  itemCount: 30,
  /** Bounds the service holds the model's answer to (an answer over them is invalid and asked again once). */
  titleChars: 200,
  stemChars: 2_000,
  /** Options by item type: multiple-choice 3–6, true-false exactly 2, matching 2–10 (its right-hand column). */
  multipleChoiceChoices: { min: 3, max: 6 },
  matchingChoices: { min: 2, max: 10 },
  matchPrompts: { min: 2, max: 10 },
  choiceIdChars: 20,
  choiceChars: 500,
  sampleAnswerChars: 2_000,
  rationaleChars: 1_000,
  accessibilityNotes: 5,
  accessibilityNoteChars: 300,
} as const;

export const assessmentItemTypes = ['multiple-choice', 'short-answer', 'constructed-response', 'true-false', 'matching'] as const;
export type AssessmentItemType = (typeof assessmentItemTypes)[number];
/** Webb's Depth of Knowledge: 1 recall, 2 skill/concept, 3 strategic thinking, 4 extended thinking. */
export const dokLevels = [1, 2, 3, 4] as const;

/** A list whose `key` values are all different, refused at the duplicate's own pointer. */
export function uniqueBy<T>(items: readonly T[], key: (item: T) => string | number, ctx: z.core.$RefinementCtx<T[]>, field: string | null): void {
  const seen = new Set<string | number>();
  items.forEach((item, index) => {
    const value = key(item);
    if (seen.has(value)) ctx.addIssue({ code: 'custom', message: `duplicate ${field ?? 'value'} ${JSON.stringify(value)}`, path: field ? [index, field] : [index] });
    seen.add(value);
  });
}

export const reviewedLearningTargetSchema = z
  .strictObject({
    /** The product's id of the learning target; the draft cites it by this id. */
    id: text(200),
    statement: text(EDUCATION_DRAFT_LIMITS.learningTargetChars),
    /** The product asserts an educator reviewed this target; unreviewed targets are not accepted. */
    reviewed: z.literal(true),
  })
  .meta({ id: 'ReviewedLearningTarget' });

/** Standards the educator is authorized to use: at least one, ids unique. */
export const authorizedStandardsSchema = z
  .array(standardRefSchema)
  .min(1)
  .max(EDUCATION_DRAFT_LIMITS.standards)
  .superRefine((items, ctx) => uniqueBy(items, (s) => s.id, ctx, 'id'));
export const reviewedLearningTargetsSchema = z
  .array(reviewedLearningTargetSchema)
  .min(1)
  .max(EDUCATION_DRAFT_LIMITS.learningTargets)
  .superRefine((items, ctx) => uniqueBy(items, (t) => t.id, ctx, 'id'));
/** Sources the educator reviewed (excerpts only); optional. */
export const reviewedSourcesSchema = z
  .array(selectedSourceSchema)
  .max(EDUCATION_DRAFT_LIMITS.sources)
  .superRefine((items, ctx) => uniqueBy(items, (s) => s.id, ctx, 'id'))
  .default([]);
/** What the draft must accommodate, in the educator's words (e.g. "screen-reader friendly", "no timed items"); never a person. */
export const accessibilityRequirementsSchema = z.array(text(EDUCATION_DRAFT_LIMITS.accessibilityRequirementChars)).max(EDUCATION_DRAFT_LIMITS.accessibilityRequirements).default([]);

export const assessmentDraftInputSchema = z
  .strictObject({
    course: courseMetadataSchema,
    standards: authorizedStandardsSchema,
    learningTargets: reviewedLearningTargetsSchema,
    sources: reviewedSourcesSchema,
    /** Exactly this many items come back. */
    itemCount: z.number().int().min(1).max(ASSESSMENT_DRAFT_LIMITS.itemCount),
    /** The item types allowed; each appears at least once when itemCount allows it. */
    itemTypes: z
      .array(z.enum(assessmentItemTypes))
      .min(1)
      .max(assessmentItemTypes.length)
      .superRefine((items, ctx) => uniqueBy(items, (t) => t, ctx, null)),
    /** The Depth of Knowledge levels to target; each appears at least once when itemCount allows it. */
    dokLevels: z
      .array(z.literal(dokLevels))
      .min(1)
      .max(dokLevels.length)
      .superRefine((items, ctx) => uniqueBy(items, (l) => l, ctx, null)),
    accessibilityRequirements: accessibilityRequirementsSchema,
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'AssessmentDraftRequest' });
export type AssessmentDraftInput = z.input<typeof assessmentDraftInputSchema>;
export type AssessmentDraftRequest = z.output<typeof assessmentDraftInputSchema>;

const labelled = z.object({ id: z.string(), text: z.string() });

export const assessmentItemSchema = z
  .object({
    /** Assigned by the service in order (item-1, item-2…): stable across replays of the same draft. */
    itemId: z.string(),
    type: z.enum(assessmentItemTypes),
    dokLevel: z.literal(dokLevels),
    stem: z.string(),
    /** The options of multiple-choice (3–6), true-false (exactly 2) and matching (the right-hand column); empty otherwise. */
    choices: z.array(labelled),
    /** The left-hand column of a matching item (2–10); empty otherwise. */
    matchPrompts: z.array(labelled),
    accessibilityNotes: z.array(z.string()),
    /** Ids the item aligns to, each one submitted in the request (at least one standard). */
    alignment: z.object({ standardIds: z.array(z.string()), learningTargetIds: z.array(z.string()), sourceIds: z.array(z.string()) }),
    /** For the educator only: never show this object to learners. */
    educatorOnly: z.object({
      answerKey: z.object({
        /** The correct choice of multiple-choice and true-false (exactly one id of `choices`). */
        choiceIds: z.array(z.string()),
        /** Matching: one pair per prompt. */
        matches: z.array(z.object({ promptId: z.string(), choiceId: z.string() })),
        /** Short-answer and constructed-response: an exemplary answer (required); null for the others. */
        sampleAnswer: z.string().nullable(),
      }),
      rationale: z.string(),
    }),
  })
  .meta({ id: 'AssessmentDraftItem' });
export type AssessmentItem = z.infer<typeof assessmentItemSchema>;

/** The accepted draft as stored (and replayed): what the model wrote, checked, with ids assigned. */
export const assessmentDraftContentSchema = z.object({ title: z.string(), items: z.array(assessmentItemSchema) });
export type AssessmentDraftContent = z.infer<typeof assessmentDraftContentSchema>;

/** `service.education-assessment-draft`. */
export const assessmentDraftSchema = z
  .object({
    /** The metered request's id (also its usage receipt's id). */
    generationId: z.uuid(),
    /** Always `proposed`: an educator reviews the draft before it is used. */
    status: z.literal('proposed'),
    title: z.string(),
    items: z.array(assessmentItemSchema),
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    /** True when this is the stored draft of an earlier request with the same Idempotency-Key (no model call). */
    replayed: z.boolean(),
  })
  .meta({ id: 'AssessmentDraft' });
export type AssessmentDraft = z.infer<typeof assessmentDraftSchema>;
