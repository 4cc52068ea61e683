// POST /intelligence/education/projection: findings with stable ids over a bounded slice of portable
// Education entities and provenance-backed relationships, and a Decision Signal handoff
// (domain/education/projection.ts). Deterministic and read-only: no model, no metering, no database
// write, no trusted memory, no Forge mutation; it answers with no provider configured.
import type { OperationDoc } from '../../../openapi.ts';
import { deterministicRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { projectEducation } from '../../../../domain/education/projection.ts';
import { educationProjectionInputSchema, envelope, PROJECTION_LIMITS, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { EducationProjectionRequest } from '@hosted-notes/runtime-sdk';

const KIND = runtimeOperations.educationProjection.kind;

/**
 * 500 entities and 2,000 relationships with every field at its maximum are about 2.6 MB of ASCII
 * JSON; 6 MiB leaves room for multi-byte ids and titles.
 */
const BODY_LIMIT = 6 * 1_048_576;

const docs: OperationDoc = {
  responses: {
    200: { description: `The findings with their signals and suggested actions, the counts, and the decision signals (${KIND} envelope); readOnly: true.` },
  },
};

// A fourth-grade fractions course: one standard taught and assessed, one adopted but taught by
// nothing, an imported alignment not yet confirmed, a quiz aligned off the course, and a
// relationship to a standard missing from the slice.
const educator = (source: string) => ({ source, assertedBy: 'educator' as const, assertedAt: '2026-02-03' });
const exampleRequest: EducationProjectionRequest = {
  entities: [
    { id: 'course-math-4', type: 'course', title: 'Grade 4 Mathematics', attributes: { gradeLevels: ['4'], subject: 'Mathematics' } },
    { id: 'std-4-nf-a-1', type: 'standard', attributes: { gradeLevels: ['4'], framework: 'CCSS-M', code: '4.NF.A.1' } },
    { id: 'std-4-nf-a-2', type: 'standard', attributes: { gradeLevels: ['4'], framework: 'CCSS-M', code: '4.NF.A.2' } },
    { id: 'std-5-nf-a-1', type: 'standard', attributes: { gradeLevels: ['5'], framework: 'CCSS-M', code: '5.NF.A.1' } },
    { id: 'lt-equivalent-fractions', type: 'learning-target', title: 'I can explain why two fractions are equivalent' },
    { id: 'art-fraction-strips', type: 'artifact', title: 'Fraction strips worksheet', attributes: { gradeLevels: ['4'] } },
    { id: 'quiz-fractions', type: 'assessment', title: 'Fractions exit ticket', attributes: { gradeLevels: ['4'] } },
    { id: 'quiz-fractions-grade-5', type: 'assessment', title: 'Grade 5 fractions quiz', attributes: { gradeLevels: ['5'] } },
  ],
  relationships: [
    { id: 'rel-1', type: 'aligns-to', from: 'course-math-4', to: 'std-4-nf-a-1', provenance: educator('course-setup-2026') },
    { id: 'rel-2', type: 'aligns-to', from: 'course-math-4', to: 'std-4-nf-a-2', provenance: educator('course-setup-2026') },
    { id: 'rel-3', type: 'aligns-to', from: 'lt-equivalent-fractions', to: 'std-4-nf-a-1', provenance: educator('unit-3-review') },
    {
      id: 'rel-4',
      type: 'teaches',
      from: 'art-fraction-strips',
      to: 'lt-equivalent-fractions',
      provenance: { source: 'import-2026-02', assertedBy: 'import', assertedAt: '2026-02-01T09:30:00Z' },
    },
    { id: 'rel-5', type: 'assesses', from: 'quiz-fractions', to: 'std-4-nf-a-1', provenance: educator('unit-3-review') },
    { id: 'rel-6', type: 'part-of', from: 'quiz-fractions', to: 'course-math-4', provenance: educator('course-setup-2026') },
    { id: 'rel-7', type: 'part-of', from: 'quiz-fractions-grade-5', to: 'course-math-4', provenance: educator('course-setup-2026') },
    { id: 'rel-8', type: 'assesses', from: 'quiz-fractions-grade-5', to: 'std-5-nf-a-1', provenance: educator('unit-3-review') },
    { id: 'rel-9', type: 'aligns-to', from: 'art-fraction-strips', to: 'std-4-nf-b-3', provenance: educator('unit-3-review') },
  ],
};

const examples: OperationExamples = {
  request: { value: exampleRequest },
  // Computed by the operation itself, so the example is exactly what the service answers.
  responses: { 200: { value: envelope(KIND, projectEducation(educationProjectionInputSchema.parse(exampleRequest))) } },
};

export const educationProjection = deterministicRow('educationProjection', {
  bodyLimit: BODY_LIMIT,
  description:
    `Needs intelligence.execute. Deterministic and read-only (no model, no metering, nothing stored, no trusted memory, no Forge mutation): the same ` +
    `request in any order answers byte for byte the same. Up to ${PROJECTION_LIMITS.entities} entities (course, standard, learning-target, artifact, ` +
    `assessment, activity, source) and ${PROJECTION_LIMITS.relationships} relationships (aligns-to, assesses, teaches, cites, part-of, prerequisite-of), ` +
    `each with its provenance; ids unique within each list. Findings (dangling endpoints, cycles, coverage and assessment gaps, incompatible or ` +
    `self-referencing relationships, duplicates, assessments off their course's standards, grade-level mismatches, unreviewed relationships, ` +
    `orphans) each carry a stable id (the kind and the sorted subject ids), a severity from a fixed rule, the signals behind it, a fixed ` +
    `explanation and a suggested action. Decision signals group them by kind and severity for a product's decision workflow; each requires a ` +
    `human decision and the service decides nothing. The answer names entities and relationships by id only; it never returns a title or ` +
    `attribute value.`,
  body: educationProjectionInputSchema,
  problems: ['payload_too_large'],
  answer: projectEducation,
  docs,
  examples,
});
