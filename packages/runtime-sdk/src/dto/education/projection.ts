// projection: a bounded slice of portable Education entities (courses, standards, learning targets,
// artifacts, assessments, activities, sources) and the provenance-backed relationships between them,
// in; deterministic findings with stable identity and a Decision Signal handoff, out. No model, no
// metering, read-only: it creates no trusted memory and runs no Forge mutation. The answer names
// entities and relationships only by the ids the caller gave, plus its own computed ids, counts and
// fixed vocabulary; a title or attribute value is never returned. Strict objects: an unknown field
// is refused, and every string and array is bounded (docs/education.md, "Projection").
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);

export const PROJECTION_LIMITS = {
  entities: 500,
  relationships: 2_000,
  idChars: 200,
  titleChars: 300,
  gradeLevels: 13,
  gradeLevelChars: 20,
  subjectChars: 100,
  frameworkChars: 200,
  codeChars: 100,
  provenanceSourceChars: 200,
} as const;

export const entityTypes = ['course', 'standard', 'learning-target', 'artifact', 'assessment', 'activity', 'source'] as const;
export const relationshipTypes = ['aligns-to', 'assesses', 'teaches', 'cites', 'part-of', 'prerequisite-of'] as const;
/** Who asserted a relationship: an educator (reviewed), an import, or the product itself (both unreviewed). */
export const assertedByValues = ['educator', 'import', 'product'] as const;
export const severities = ['attention', 'warning', 'info'] as const;

/** The finding kinds, in the order findings of equal severity are listed (docs/education.md lists the rule of each). */
export const findingKinds = [
  'dangling-endpoint',
  'cycle',
  'coverage-gap',
  'self-reference',
  'incompatible-endpoints',
  'duplicate-standard',
  'unaligned-assessment',
  'assessment-off-course',
  'grade-level-mismatch',
  'unreviewed-relationship',
  'duplicate-relationship',
  'assessment-gap',
  'orphan-entity',
] as const;

/** What a human might decide about a finding; the service decides nothing (each kind has one action). */
export const suggestedActions = [
  'resolve-reference',
  'review-structure',
  'add-coverage',
  'correct-relationship',
  'merge-duplicates',
  'review-alignment',
  'confirm-relationship',
  'add-assessment',
] as const;

const id = text(PROJECTION_LIMITS.idChars);

export const projectionEntityAttributesSchema = z
  .strictObject({
    /** Grade levels (e.g. K, 4, 9-12), compared case-insensitively as a set; alignments between disjoint sets are findings. */
    gradeLevels: z.array(text(PROJECTION_LIMITS.gradeLevelChars)).max(PROJECTION_LIMITS.gradeLevels).optional(),
    /** Carried for portability and part of the projection id; no v1 finding reads it. */
    subject: text(PROJECTION_LIMITS.subjectChars).optional(),
    /** A standard's framework (e.g. a CASE framework identifier); with `code`, two standards of one framework and code are duplicates. */
    framework: text(PROJECTION_LIMITS.frameworkChars).optional(),
    /** A standard's human-readable code (e.g. 4.NF.A.1), compared after normalizing case and separators. */
    code: text(PROJECTION_LIMITS.codeChars).optional(),
  })
  .meta({ id: 'EducationProjectionEntityAttributes' });

export const projectionEntitySchema = z
  .strictObject({
    /** The product's id of the entity (unique among the entities of the request); findings name it. */
    id,
    type: z.enum(entityTypes),
    /** Accepted so a portable export can be sent as is; never read and never returned. */
    title: text(PROJECTION_LIMITS.titleChars).optional(),
    attributes: projectionEntityAttributesSchema.optional(),
  })
  .meta({ id: 'EducationProjectionEntity' });

export const relationshipProvenanceSchema = z
  .strictObject({
    /** The id of the record the assertion came from (an import batch, a review, a product event). */
    source: text(PROJECTION_LIMITS.provenanceSourceChars),
    assertedBy: z.enum(assertedByValues),
    /** When it was asserted: an ISO 8601 date or date-time with an offset. */
    assertedAt: z.union([z.iso.date(), z.iso.datetime({ offset: true })]),
  })
  .meta({ id: 'EducationRelationshipProvenance' });

export const projectionRelationshipSchema = z
  .strictObject({
    /** The product's id of the relationship (unique among the relationships of the request). */
    id,
    type: z.enum(relationshipTypes),
    /** Entity ids; one absent from `entities` is a `dangling-endpoint` finding, not a refusal. */
    from: id,
    to: id,
    provenance: relationshipProvenanceSchema,
  })
  .meta({ id: 'EducationProjectionRelationship' });

function uniqueIds(items: readonly { id: string }[], ctx: z.RefinementCtx, what: string) {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item.id)) ctx.addIssue({ code: 'custom', message: `${what} ids must be unique`, path: [index, 'id'] });
    seen.add(item.id);
  });
}

export const educationProjectionInputSchema = z
  .strictObject({
    entities: z
      .array(projectionEntitySchema)
      .min(1)
      .max(PROJECTION_LIMITS.entities)
      .superRefine((entities, ctx) => uniqueIds(entities, ctx, 'entity')),
    relationships: z
      .array(projectionRelationshipSchema)
      .max(PROJECTION_LIMITS.relationships)
      .default([])
      .superRefine((relationships, ctx) => uniqueIds(relationships, ctx, 'relationship')),
  })
  .meta({ id: 'EducationProjectionRequest' });
export type EducationProjectionInput = z.input<typeof educationProjectionInputSchema>;
export type EducationProjectionRequest = z.output<typeof educationProjectionInputSchema>;

const count = z.number().int().min(0);
const relationshipType = z.enum(relationshipTypes);
const entityType = z.enum(entityTypes);

/** The signals behind each kind of finding: counts and fixed vocabulary only, never a submitted value. */
export const findingSignalSchemas = {
  'dangling-endpoint': z.object({ relationshipType, missingEndpoint: z.enum(['from', 'to', 'both']) }),
  cycle: z.object({ relationshipType: z.enum(['prerequisite-of', 'part-of']), entityCount: count, relationshipCount: count }),
  'coverage-gap': z.object({ adoptingCourses: count, teachingEntities: z.literal(0), assessingEntities: count, learningTargets: count }),
  'self-reference': z.object({ relationshipType, entityType }),
  'incompatible-endpoints': z.object({ relationshipType, fromType: entityType, toType: entityType }),
  'duplicate-standard': z.object({ copies: count }),
  'unaligned-assessment': z.object({ courses: count }),
  'assessment-off-course': z.object({ courses: count, courseStandards: count, alignedStandards: count, sharedStandards: z.literal(0) }),
  'grade-level-mismatch': z.object({ relationshipType, fromGradeLevels: count, toGradeLevels: count, sharedGradeLevels: z.literal(0) }),
  'unreviewed-relationship': z.object({ relationshipType, assertedBy: z.enum(['import', 'product']), alignmentClaim: z.boolean() }),
  'duplicate-relationship': z.object({ relationshipType, copies: count, educatorAsserted: count }),
  'assessment-gap': z.object({ adoptingCourses: count, teachingEntities: count, assessingEntities: z.literal(0), learningTargets: count }),
  'orphan-entity': z.object({ entityType }),
} as const satisfies Record<(typeof findingKinds)[number], z.ZodType>;
export type FindingKind = (typeof findingKinds)[number];
export type FindingSignals<K extends FindingKind> = z.output<(typeof findingSignalSchemas)[K]>;

const ids = z.array(z.string());
const findingIdentity = {
  /** `fnd_` + the first 24 hex of SHA-256 over the kind and the sorted subject ids: the same issue on the same subjects keeps its id. */
  findingId: z.string(),
  severity: z.enum(severities),
  /** The entities and relationships the finding is about (sorted); with the kind, they make its id. */
  subjects: z.object({ entityIds: ids, relationshipIds: ids }),
  /** Other entities involved, not part of the identity (adopting courses; for a dangling endpoint, the absent id it references). */
  relatedEntityIds: ids,
  /** A fixed sentence for the kind and severity; it contains no submitted text. */
  explanation: z.string(),
  suggestedAction: z.enum(suggestedActions),
};

export const projectionFindingSchema = z
  .discriminatedUnion(
    'kind',
    findingKinds.map((kind) => z.object({ kind: z.literal(kind), ...findingIdentity, signals: findingSignalSchemas[kind] })) as unknown as [
      z.ZodObject<{ kind: z.ZodLiteral<FindingKind> }>,
      ...z.ZodObject<{ kind: z.ZodLiteral<FindingKind> }>[],
    ],
  )
  .meta({ id: 'EducationProjectionFinding' });
export type ProjectionFinding = {
  [K in FindingKind]: {
    kind: K;
    findingId: string;
    severity: (typeof severities)[number];
    subjects: { entityIds: string[]; relationshipIds: string[] };
    relatedEntityIds: string[];
    explanation: string;
    suggestedAction: (typeof suggestedActions)[number];
    signals: FindingSignals<K>;
  };
}[FindingKind];

export const decisionSignalSchema = z
  .object({
    /** `dsg_` + the first 24 hex of SHA-256 over the kind, severity and sorted finding ids. */
    signalId: z.string(),
    kind: z.enum(findingKinds),
    severity: z.enum(severities),
    suggestedAction: z.enum(suggestedActions),
    /** Every finding of this kind and severity (sorted); the product may fan them out one decision each. */
    findingIds: ids.min(1),
    /** Always true: the service proposes nothing into effect; a person decides in the product's workflow. */
    requiresHumanDecision: z.literal(true),
  })
  .meta({ id: 'EducationDecisionSignal' });

const severityCounts = z.object(Object.fromEntries(severities.map((s) => [s, count])) as Record<(typeof severities)[number], typeof count>);
const kindCounts = z.object(Object.fromEntries(findingKinds.map((k) => [k, count])) as Record<FindingKind, typeof count>);

export const educationProjectionSchema = z
  .object({
    /** `prj_` + the first 24 hex of SHA-256 over the canonical graph (sorted; titles left out): the same graph, the same id. */
    projectionId: z.string(),
    algorithm: z.literal('education-projection@1'),
    /** What the operation did not do, stated: it stored nothing, wrote no trusted memory and ran no Forge mutation. */
    effects: z.object({ readOnly: z.literal(true), trustedMemoryWritten: z.literal(false), forgeMutationRun: z.literal(false) }),
    counts: z.object({ entities: count, relationships: count, findings: count, bySeverity: severityCounts, byKind: kindCounts }),
    /** Severity (attention, warning, info), then kind in `findingKinds` order, then finding id. */
    findings: z.array(projectionFindingSchema),
    /** One signal per kind and severity that has findings, in the findings' order: at most one per kind and severity. */
    decisionSignals: z.array(decisionSignalSchema),
  })
  .meta({ id: 'EducationProjection' });
export type EducationProjection = z.output<typeof educationProjectionSchema>;
