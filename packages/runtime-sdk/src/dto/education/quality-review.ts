// quality-review (`POST /intelligence/education/quality-review`): one bounded artifact revision, its
// authorized course, adopted standards, supporting sources and policy constraints in; an advisory
// evaluation out (eight dimensions, each a rating from a fixed vocabulary with bounded findings, and
// a summary). Strict objects: an unknown field is refused, never ignored; every string and list is
// bounded (docs/education-quality-review.md lists the bounds). The answer names the artifact, the
// standards and the sources only by the ids the caller sent: the artifact's content is never
// returned in the service's own fields.
import { z } from 'zod';
import { educationContextSchema } from './context.ts';
import { modelIdentitySchema, usageReceiptSchema } from '../intelligence.ts';

const text = (max: number) => z.string().min(1).max(max);

export const QUALITY_REVIEW_LIMITS = {
  idChars: 200,
  revisionChars: 100,
  titleChars: 300,
  /** A long lesson or a unit assessment; longer material is reviewed a revision section at a time. */
  contentChars: 60_000,
  standards: 20,
  standardStatementChars: 1_000,
  sources: 10,
  sourceExcerptChars: 8_000,
  policyConstraints: 20,
  policyConstraintChars: 500,
  gradeLevels: 13,
  /** Findings per dimension and their length: enough to explain a rating, short enough to read. */
  findingsPerDimension: 5,
  findingChars: 500,
  summaryChars: 1_200,
  /** A body at every maximum in ASCII is ~180 KB; 512 KiB leaves room for non-ASCII text. */
  bodyBytes: 512 * 1_024,
} as const;

export const reviewedArtifactFormats = ['markdown', 'plain-text', 'html'] as const;

/** The eight dimensions of a review, in the order they are answered. */
export const qualityDimensions = ['alignment', 'sourceSupport', 'citations', 'readingLevel', 'accessibility', 'biasRisk', 'assessmentValidity', 'policyConflicts'] as const;
export type QualityDimension = (typeof qualityDimensions)[number];

/** How well the artifact does on a quality dimension (best first). */
export const qualityRatings = ['strong', 'adequate', 'weak', 'insufficient-evidence', 'not-applicable'] as const;
/** How much risk a risk dimension (bias risk, policy conflicts) found (least first). */
export const riskRatings = ['none-found', 'low', 'moderate', 'high', 'not-applicable'] as const;
export const riskDimensions = ['biasRisk', 'policyConflicts'] as const satisfies readonly QualityDimension[];

const uniqueIds = <T extends { id: string }>(items: T[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item.id)) ctx.addIssue({ code: 'custom', message: 'id repeats an earlier entry', path: [index, 'id'] });
    seen.add(item.id);
  });
};

export const qualityReviewInputSchema = z
  .strictObject({
    /** The revision under review; its content goes to the model and never comes back in the service's fields. */
    artifact: z.strictObject({
      id: text(QUALITY_REVIEW_LIMITS.idChars),
      revision: text(QUALITY_REVIEW_LIMITS.revisionChars),
      title: text(QUALITY_REVIEW_LIMITS.titleChars),
      format: z.enum(reviewedArtifactFormats),
      content: text(QUALITY_REVIEW_LIMITS.contentChars),
    }),
    /** The course the artifact is authorized for. */
    course: z.strictObject({
      id: text(QUALITY_REVIEW_LIMITS.idChars),
      title: text(200),
      subject: text(100).optional(),
      gradeLevels: z.array(text(20)).max(QUALITY_REVIEW_LIMITS.gradeLevels).default([]),
    }),
    /** The standards the course adopted that the artifact should align to; findings cite them by id. */
    standards: z
      .array(
        z.strictObject({
          id: text(QUALITY_REVIEW_LIMITS.idChars),
          code: text(100).optional(),
          statement: text(QUALITY_REVIEW_LIMITS.standardStatementChars),
          framework: text(200).optional(),
        }),
      )
      .min(1)
      .max(QUALITY_REVIEW_LIMITS.standards)
      .superRefine(uniqueIds),
    /** Authorized supporting sources the artifact draws on; findings cite them by id. */
    sources: z
      .array(
        z.strictObject({
          id: text(QUALITY_REVIEW_LIMITS.idChars),
          title: text(QUALITY_REVIEW_LIMITS.titleChars),
          excerpt: text(QUALITY_REVIEW_LIMITS.sourceExcerptChars),
          citation: text(500).optional(),
        }),
      )
      .max(QUALITY_REVIEW_LIMITS.sources)
      .superRefine(uniqueIds)
      .default([]),
    /** The applicable policy constraints, one rule each; policy-conflict findings cite them by index. */
    policyConstraints: z.array(text(QUALITY_REVIEW_LIMITS.policyConstraintChars)).max(QUALITY_REVIEW_LIMITS.policyConstraints).default([]),
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'QualityReviewRequest' });
export type QualityReviewInput = z.input<typeof qualityReviewInputSchema>;

export const qualityFindingSchema = z
  .strictObject({
    /** The reviewer model's observation in its own words. */
    note: z.string().min(1).max(QUALITY_REVIEW_LIMITS.findingChars),
    /** Ids of submitted standards the finding concerns. */
    standardIds: z.array(z.string().max(QUALITY_REVIEW_LIMITS.idChars)).max(QUALITY_REVIEW_LIMITS.standards),
    /** Ids of submitted sources the finding concerns. */
    sourceIds: z.array(z.string().max(QUALITY_REVIEW_LIMITS.idChars)).max(QUALITY_REVIEW_LIMITS.sources),
    /** Zero-based indexes of the submitted policy constraints the finding concerns. */
    policyConstraintIndexes: z.array(z.number().int().min(0).max(QUALITY_REVIEW_LIMITS.policyConstraints - 1)).max(QUALITY_REVIEW_LIMITS.policyConstraints),
  })
  .meta({ id: 'QualityReviewFinding' });
export type QualityFinding = z.infer<typeof qualityFindingSchema>;

const findings = z.array(qualityFindingSchema).max(QUALITY_REVIEW_LIMITS.findingsPerDimension);
const qualityAssessment = z.strictObject({ rating: z.enum(qualityRatings), findings }).meta({ id: 'QualityReviewQualityAssessment' });
const riskAssessment = z.strictObject({ rating: z.enum(riskRatings), findings }).meta({ id: 'QualityReviewRiskAssessment' });

/** The evaluation itself: what the model produced, after the service checked it against the request. */
export const qualityEvaluationSchema = z
  .strictObject({
    alignment: qualityAssessment,
    sourceSupport: qualityAssessment,
    citations: qualityAssessment,
    readingLevel: qualityAssessment,
    accessibility: qualityAssessment,
    biasRisk: riskAssessment,
    assessmentValidity: qualityAssessment,
    policyConflicts: riskAssessment,
    summary: z.string().min(1).max(QUALITY_REVIEW_LIMITS.summaryChars),
  })
  .meta({ id: 'QualityReviewEvaluation' });
export type QualityEvaluation = z.infer<typeof qualityEvaluationSchema>;

export const qualityReviewSchema = z
  .object({
    /** The metered request's id (also its usage receipt's id). */
    generationId: z.uuid(),
    /** Advisory only: nothing is graded, approved, published or changed by a review. */
    advisory: z.literal(true),
    /** The reviewed revision, by its ids only. */
    artifact: z.object({ id: z.string(), revision: z.string() }),
    evaluation: qualityEvaluationSchema,
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    /** True when this answer is the stored result of an earlier request with the same Idempotency-Key (no model call). */
    replayed: z.boolean(),
  })
  .meta({ id: 'QualityReview' });
export type QualityReview = z.infer<typeof qualityReviewSchema>;
