// artifacts/recommend: rank at most 250 candidate artifacts (already authorized for the active user)
// against a teaching goal. Deterministic: no model, no metering. The answer names candidates only by
// the ids the caller gave and carries computed signals, never a title, summary, excerpt or the goal's
// words. Strict objects: an unknown field is refused, and every string and array is bounded
// (docs/education.md, "Artifact recommendation", lists the bounds and the scoring).
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);
const locale = z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a BCP 47 language tag such as en-US');

export const RECOMMEND_LIMITS = {
  candidates: 250,
  /** Results returned at most (the `limit` field); the default is `defaultResults`. */
  results: 50,
  defaultResults: 10,
  idChars: 200,
  goalDescriptionChars: 1_000,
  titleChars: 300,
  summaryChars: 1_000,
  /** Enough text for near-duplicate detection (about 300 words); the artifact itself is never needed. */
  excerptChars: 2_000,
  standardIds: 20,
  gradeLevels: 13,
  gradeLevelChars: 20,
} as const;

export const artifactFormats = ['lesson-plan', 'worksheet', 'slide-deck', 'quiz', 'rubric', 'video', 'reading', 'activity', 'other'] as const;

/** What the educator would do with a candidate; the first reason decided it (see recommendationReasons). */
export const recommendationActions = ['reuse', 'adapt', 'translate', 'differentiate', 'convert-format'] as const;

/**
 * Why, in order of precedence: the first reason that applies names the action.
 * - `language-differs` → translate: the goal's language is not the candidate's;
 * - `format-differs` → convert-format: the goal asks for another format;
 * - `grade-levels-differ` → differentiate: the candidate does not cover every grade level of the goal;
 * - `standards-partial`, `course-differs`, `locale-region-differs` → adapt;
 * - `aligned` → reuse: nothing the goal asked for differs.
 */
export const recommendationReasons = ['language-differs', 'format-differs', 'grade-levels-differ', 'standards-partial', 'course-differs', 'locale-region-differs', 'aligned'] as const;

export const signalNames = ['goal', 'standard', 'course', 'format', 'gradeLevel', 'locale', 'educatorAccepted'] as const;

const id = text(RECOMMEND_LIMITS.idChars);
const standardIds = z.array(id).max(RECOMMEND_LIMITS.standardIds);
const gradeLevels = z.array(text(RECOMMEND_LIMITS.gradeLevelChars)).max(RECOMMEND_LIMITS.gradeLevels);

export const recommendGoalSchema = z
  .strictObject({
    /** What the educator wants to teach, in their words: used only for word overlap, never returned. */
    description: text(RECOMMEND_LIMITS.goalDescriptionChars),
    /** Authorized standards the artifact should address (their ids, e.g. CASE identifiers). */
    standardIds: standardIds.default([]),
    courseId: id.optional(),
    gradeLevels: gradeLevels.default([]),
    format: z.enum(artifactFormats).optional(),
    /** The language of instruction; a candidate in another language is recommended for translation. */
    locale: locale.optional(),
  })
  .meta({ id: 'ArtifactRecommendGoal' });

export const artifactCandidateSchema = z
  .strictObject({
    /** The product's id of the artifact; results name candidates by it (unique within the request). */
    id,
    title: text(RECOMMEND_LIMITS.titleChars),
    summary: text(RECOMMEND_LIMITS.summaryChars).optional(),
    /** A bounded excerpt of the content, for near-duplicate detection and word overlap; never returned. */
    excerpt: text(RECOMMEND_LIMITS.excerptChars).optional(),
    /** SHA-256 (lowercase hex) of the full content, when the product has it: equal hashes are duplicates. */
    contentSha256: z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256').optional(),
    standardIds: standardIds.default([]),
    courseId: id.optional(),
    gradeLevels: gradeLevels.default([]),
    format: z.enum(artifactFormats),
    locale,
    /** An educator has reviewed and accepted this artifact for use. */
    educatorAccepted: z.boolean(),
  })
  .meta({ id: 'ArtifactCandidate' });

export const recommendArtifactsInputSchema = z
  .strictObject({
    goal: recommendGoalSchema,
    candidates: z
      .array(artifactCandidateSchema)
      .min(1)
      .max(RECOMMEND_LIMITS.candidates)
      .superRefine((candidates, ctx) => {
        const seen = new Set<string>();
        candidates.forEach((candidate, index) => {
          if (seen.has(candidate.id)) ctx.addIssue({ code: 'custom', message: 'candidate ids must be unique', path: [index, 'id'] });
          seen.add(candidate.id);
        });
      }),
    /** How many ranked results to return (duplicate groups always cover every candidate). */
    limit: z.number().int().min(1).max(RECOMMEND_LIMITS.results).default(RECOMMEND_LIMITS.defaultResults),
  })
  .meta({ id: 'RecommendArtifactsRequest' });
export type RecommendArtifactsInput = z.input<typeof recommendArtifactsInputSchema>;
export type RecommendArtifactsRequest = z.output<typeof recommendArtifactsInputSchema>;

const unit = z.number().min(0).max(1);

/** One signal: its value (0–1; null when the goal did not ask for it), its fixed weight, and its share of the score. */
export const recommendSignalSchema = z
  .object({
    value: unit.nullable(),
    weight: unit,
    /** value × weight ÷ (sum of the weights of the signals that apply); the contributions add up to the score. */
    contribution: unit,
    /** For the overlap signals (goal words, standards, grade levels): how many of the goal's items the candidate matched, of how many. */
    matched: z.number().int().min(0).nullable(),
    of: z.number().int().min(0).nullable(),
  })
  .meta({ id: 'ArtifactRecommendSignal' });

export const nearDuplicateSchema = z
  .object({
    candidateId: z.string(),
    /** Jaccard similarity of the two candidates' three-word shingles (1 for equal content hashes). */
    similarity: unit,
    basis: z.enum(['content-sha256', 'shingles']),
  })
  .meta({ id: 'ArtifactNearDuplicate' });

export const artifactRecommendationSchema = z
  .object({
    candidateId: z.string(),
    rank: z.number().int().min(1),
    score: unit,
    signals: z.object(Object.fromEntries(signalNames.map((name) => [name, recommendSignalSchema])) as Record<(typeof signalNames)[number], typeof recommendSignalSchema>),
    recommendation: z.object({
      action: z.enum(recommendationActions),
      /** Every reason that applies, in precedence order; the first decided the action. */
      reasons: z.array(z.enum(recommendationReasons)).min(1),
    }),
    nearDuplicates: z.array(nearDuplicateSchema),
  })
  .meta({ id: 'ArtifactRecommendation' });

export const duplicateGroupSchema = z
  .object({
    /** `dup_` + the first 24 hex of SHA-256 over the sorted member ids: the same members, the same id. */
    groupId: z.string(),
    candidateIds: z.array(z.string()).min(2),
    /** The best-ranked member: the one to keep when a product shows one per group. */
    representativeId: z.string(),
  })
  .meta({ id: 'ArtifactDuplicateGroup' });

export const artifactRecommendationsSchema = z
  .object({
    /** `rec_` + the first 24 hex of SHA-256 over the canonical request (candidates sorted by id): stable for the same input in any order. */
    recommendationId: z.string(),
    algorithm: z.literal('artifact-recommend@1'),
    candidateCount: z.number().int().min(1),
    /** The weights and thresholds the scores were computed with. */
    weights: z.object(Object.fromEntries(signalNames.map((name) => [name, unit])) as Record<(typeof signalNames)[number], typeof unit>),
    nearDuplicate: z.object({ shingleWords: z.number().int(), minShingles: z.number().int(), jaccardThreshold: unit }),
    /** The best `limit` candidates: score descending, then candidate id ascending. */
    results: z.array(artifactRecommendationSchema),
    /** Connected groups of near-duplicates among all candidates, by the rank of their representative. */
    duplicateGroups: z.array(duplicateGroupSchema),
  })
  .meta({ id: 'ArtifactRecommendations' });
export type ArtifactRecommendations = z.output<typeof artifactRecommendationsSchema>;
