// rubric-draft: a metered draft of a weighted analytic rubric for an educator to review. The
// request is assessment-draft's context (course, authorized standards, reviewed learning targets,
// optional reviewed sources, accessibility requirements) plus how many criteria and the ordered
// performance-level labels. Each criterion comes back with a weight (the weights sum to 1 within
// RUBRIC_WEIGHT_TOLERANCE) and one observable descriptor per level, in the order given. The draft is
// `proposed`: the product persists it as a proposed, versioned instrument; nothing here scores anyone.
import { z } from 'zod';
import { courseMetadataSchema, modelIdentitySchema, usageReceiptSchema } from '../intelligence.ts';
import {
  accessibilityRequirementsSchema,
  authorizedStandardsSchema,
  EDUCATION_DRAFT_LIMITS,
  reviewedLearningTargetsSchema,
  reviewedSourcesSchema,
  uniqueBy,
} from './assessment-draft.ts';
import { educationContextSchema } from './context.ts';

export const RUBRIC_DRAFT_LIMITS = {
  ...EDUCATION_DRAFT_LIMITS,
  criteria: 10,
  levelLabels: { min: 2, max: 6 },
  levelLabelChars: 60,
  /** Bounds the service holds the model's answer to (an answer over them is invalid and asked again once). */
  titleChars: 200,
  criterionNameChars: 200,
  descriptorChars: 600,
} as const;

/**
 * How far the weights' sum may be from 1. Models write decimals such as 0.33 + 0.33 + 0.33; a
 * hundredth absorbs that rounding and still refuses weights that were not meant to sum to 1.
 */
export const RUBRIC_WEIGHT_TOLERANCE = 0.01;

export const rubricDraftInputSchema = z
  .strictObject({
    course: courseMetadataSchema,
    standards: authorizedStandardsSchema,
    learningTargets: reviewedLearningTargetsSchema,
    sources: reviewedSourcesSchema,
    /** Exactly this many criteria come back. */
    criterionCount: z.number().int().min(1).max(RUBRIC_DRAFT_LIMITS.criteria),
    /** The performance levels in the order the rubric shows them (e.g. Exceeds, Meets, Approaching, Beginning); labels differ ignoring case. */
    levelLabels: z
      .array(z.string().trim().min(1).max(RUBRIC_DRAFT_LIMITS.levelLabelChars))
      .min(RUBRIC_DRAFT_LIMITS.levelLabels.min)
      .max(RUBRIC_DRAFT_LIMITS.levelLabels.max)
      .superRefine((labels, ctx) => uniqueBy(labels, (l) => l.toLowerCase(), ctx, null)),
    accessibilityRequirements: accessibilityRequirementsSchema,
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'RubricDraftRequest' });
export type RubricDraftInput = z.input<typeof rubricDraftInputSchema>;
export type RubricDraftRequest = z.output<typeof rubricDraftInputSchema>;

export const rubricCriterionSchema = z
  .object({
    /** Assigned by the service in order (criterion-1, criterion-2…): stable across replays of the same draft. */
    criterionId: z.string(),
    name: z.string(),
    /** Share of the total, > 0 and ≤ 1; the criteria's weights sum to 1 within RUBRIC_WEIGHT_TOLERANCE. */
    weight: z.number(),
    /** One observable descriptor per level, in the order of the request's levelLabels. */
    descriptors: z.array(z.object({ level: z.string(), descriptor: z.string() })),
    /** Submitted standard ids the criterion evidences (at least one) and submitted learning-target ids. */
    standardIds: z.array(z.string()),
    learningTargetIds: z.array(z.string()),
  })
  .meta({ id: 'RubricCriterion' });
export type RubricCriterion = z.infer<typeof rubricCriterionSchema>;

/** The accepted rubric as stored (and replayed): what the model wrote, checked, with ids assigned. */
export const rubricDraftContentSchema = z.object({ title: z.string(), levelLabels: z.array(z.string()), criteria: z.array(rubricCriterionSchema) });
export type RubricDraftContent = z.infer<typeof rubricDraftContentSchema>;

/** `service.education-rubric-draft`. */
export const rubricDraftSchema = z
  .object({
    /** The metered request's id (also its usage receipt's id). */
    generationId: z.uuid(),
    /** Always `proposed`: the product keeps it as a proposed, versioned instrument until an educator adopts it. */
    status: z.literal('proposed'),
    title: z.string(),
    /** The request's level labels, in its order (each criterion's descriptors follow it). */
    levelLabels: z.array(z.string()),
    criteria: z.array(rubricCriterionSchema),
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    /** True when this is the stored draft of an earlier request with the same Idempotency-Key (no model call). */
    replayed: z.boolean(),
  })
  .meta({ id: 'RubricDraft' });
export type RubricDraft = z.infer<typeof rubricDraftSchema>;
