// Standards crosswalk (`POST /intelligence/education/standards/crosswalk`): two bounded framework
// slices in CASE shape in, deterministic crosswalk candidates out. Strict objects (an unknown field
// is refused, never ignored) and every string and array bounded (docs/education-crosswalk.md lists
// the bounds and the scoring). The answer names items only by the identifiers the caller sent: no
// statement, code, title or keyword is ever returned.
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);

export const CROSSWALK_LIMITS = {
  /** CASE identifiers are UUIDs; 200 leaves room for URI-style identifiers of other publishers. */
  identifierChars: 200,
  titleChars: 300,
  publisherChars: 200,
  /** Items per slice: a whole grade band of a framework, and the size the benchmark is run at. */
  items: 1_000,
  codeChars: 100,
  statementChars: 2_000,
  /** CEDS education levels run from IT/PR/PK/KG through 13 and the post-secondary codes. */
  educationLevels: 16,
  educationLevelChars: 20,
  subjects: 5,
  subjectChars: 100,
  domainChars: 200,
  conceptKeywords: 10,
  conceptKeywordChars: 60,
  /** Candidates kept per source item. */
  maxCandidatesPerItem: 5,
  /** Two slices at every item maximum in ASCII text are about 9 MB; non-ASCII text at its maxima may exceed it (413). */
  bodyBytes: 12 * 1_048_576,
} as const;

/** The defaults of `options`: below 0.35, grade, subject and domain agreement alone would be proposed. */
export const CROSSWALK_DEFAULTS = { minConfidence: 0.35, maxCandidatesPerItem: 3 } as const;

export const crosswalkFrameworkSchema = z
  .strictObject({
    /** The CASE CFDocument identifier of the framework. */
    identifier: text(CROSSWALK_LIMITS.identifierChars),
    title: text(CROSSWALK_LIMITS.titleChars),
    publisher: text(CROSSWALK_LIMITS.publisherChars).optional(),
  })
  .meta({ id: 'CrosswalkFramework' });

export const crosswalkItemSchema = z
  .strictObject({
    /** The CASE CFItem identifier; unique within its slice, and the only thing of the item the answer names. */
    identifier: text(CROSSWALK_LIMITS.identifierChars),
    /** The CFItem humanCodingScheme, e.g. 4.NF.A.1. */
    humanCodingScheme: text(CROSSWALK_LIMITS.codeChars).optional(),
    /** The CFItem fullStatement: compared, never returned. */
    fullStatement: text(CROSSWALK_LIMITS.statementChars),
    /** CEDS education levels, e.g. ["04"] or ["KG", "01"]. */
    educationLevel: z.array(text(CROSSWALK_LIMITS.educationLevelChars)).max(CROSSWALK_LIMITS.educationLevels).default([]),
    subject: z.array(text(CROSSWALK_LIMITS.subjectChars)).max(CROSSWALK_LIMITS.subjects).default([]),
    /** The grouping the item belongs to (its CFItemType or the CFAssociation parent), e.g. "Number and Operations—Fractions". */
    domain: text(CROSSWALK_LIMITS.domainChars).optional(),
    conceptKeywords: z.array(text(CROSSWALK_LIMITS.conceptKeywordChars)).max(CROSSWALK_LIMITS.conceptKeywords).default([]),
  })
  .meta({ id: 'CrosswalkItem' });

export const crosswalkSliceSchema = z
  .strictObject({
    framework: crosswalkFrameworkSchema,
    items: z
      .array(crosswalkItemSchema)
      .min(1)
      .max(CROSSWALK_LIMITS.items)
      .superRefine((items, ctx) => {
        // Candidates are keyed by item identifier: two items with one identifier would be ambiguous.
        const seen = new Set<string>();
        items.forEach((item, index) => {
          if (seen.has(item.identifier)) ctx.addIssue({ code: 'custom', message: 'identifier repeats an earlier item of this slice', path: [index, 'identifier'] });
          seen.add(item.identifier);
        });
      }),
  })
  .meta({ id: 'CrosswalkSlice' });

export const crosswalkInputSchema = z
  .strictObject({
    source: crosswalkSliceSchema,
    target: crosswalkSliceSchema,
    options: z
      .strictObject({
        /** Candidates below this confidence are not proposed. */
        minConfidence: z.number().min(0).max(1).default(CROSSWALK_DEFAULTS.minConfidence),
        /** At most this many candidates per source item, the most confident first. */
        maxCandidatesPerItem: z.number().int().min(1).max(CROSSWALK_LIMITS.maxCandidatesPerItem).default(CROSSWALK_DEFAULTS.maxCandidatesPerItem),
      })
      .default({ minConfidence: CROSSWALK_DEFAULTS.minConfidence, maxCandidatesPerItem: CROSSWALK_DEFAULTS.maxCandidatesPerItem }),
  })
  .meta({ id: 'StandardsCrosswalkRequest' });
export type CrosswalkInput = z.input<typeof crosswalkInputSchema>;

/** The evidence a candidate may carry (docs/education-crosswalk.md: how each is computed). */
export const crosswalkSignalNames = ['case_identifier', 'statement', 'code', 'grade', 'subject', 'domain', 'concept_keywords'] as const;
/** What a reviewer should look at: both sides had the data and it disagrees. */
export const crosswalkCautions = ['grade_mismatch', 'subject_mismatch', 'domain_mismatch', 'identifier_statement_differs'] as const;

const unit = z.number().min(0).max(1);

export const crosswalkSignalSchema = z
  .strictObject({
    name: z.enum(crosswalkSignalNames),
    /** How strongly the signal holds, 0..1. */
    value: unit,
    /** Its weight in the confidence; null for case_identifier, which is decisive rather than weighted. */
    weight: unit.nullable(),
    /** value × weight: the confidence of a weighted candidate is the sum of its contributions. */
    contribution: unit.nullable(),
  })
  .meta({ id: 'CrosswalkSignal' });

export const crosswalkCandidateSchema = z
  .strictObject({
    /** Stable: the same pair of frameworks and items always has the same id. */
    candidateId: z.string(),
    sourceItem: z.string(),
    targetItem: z.string(),
    confidence: unit,
    /** case_identity: both slices hold the same CFItem (confidence 1); weighted_signals: the sum of the contributions. */
    basis: z.enum(['case_identity', 'weighted_signals']),
    signals: z.array(crosswalkSignalSchema),
    cautions: z.array(z.enum(crosswalkCautions)),
    /** Fixed template text built from the signal and caution names only. */
    rationale: z.string(),
    status: z.literal('proposed'),
    requiresQualifiedReview: z.literal(true),
  })
  .meta({ id: 'CrosswalkCandidate' });

export const crosswalkSchema = z
  .strictObject({
    /** Stable: the same input in any order has the same id. */
    crosswalkId: z.string(),
    sourceFramework: z.string(),
    targetFramework: z.string(),
    scoring: z.strictObject({
      version: z.string(),
      minConfidence: unit,
      maxCandidatesPerItem: z.number().int(),
      weights: z.strictObject({ statement: unit, code: unit, grade: unit, subject: unit, domain: unit, conceptKeywords: unit }),
    }),
    /** By source item, then confidence (highest first), then target item. */
    candidates: z.array(crosswalkCandidateSchema),
    /** Source items with no candidate at or above minConfidence. */
    unmatchedSourceItems: z.array(z.string()),
    counts: z.strictObject({
      sourceItems: z.number().int(),
      targetItems: z.number().int(),
      /** Pairs that shared an identifier, a code, a statement word or a keyword; no other pair can be proposed. */
      pairsConsidered: z.number().int(),
      candidates: z.number().int(),
    }),
  })
  .meta({ id: 'StandardsCrosswalk' });
export type Crosswalk = z.output<typeof crosswalkSchema>;
export type CrosswalkCandidate = z.output<typeof crosswalkCandidateSchema>;
