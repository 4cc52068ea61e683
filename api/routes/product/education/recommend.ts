// POST /intelligence/education/artifacts/recommend: rank candidate artifacts against a goal, with
// the signals behind each score, near-duplicates and a recommended action (domain/education/
// recommend.ts). Deterministic and read-only: no model, no metering, no database write; it answers
// with no provider configured.
import { envelope, RECOMMEND_LIMITS, recommendArtifactsInputSchema, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../../openapi.ts';
import { deterministicRow } from './row.ts';
import type { OperationExamples } from '../../../openapi-examples.ts';
import { recommendArtifacts as rankArtifacts } from '../../../../domain/education/recommend.ts';
import type { RecommendArtifactsRequest } from '@hosted-notes/runtime-sdk';

const KIND = runtimeOperations.recommendArtifacts.kind;

/** 250 candidates at their largest are about 2.1 MB of ASCII JSON; 4 MiB leaves room for multi-byte text. */
const BODY_LIMIT = 4 * 1_048_576;

const docs: OperationDoc = {
  responses: {
    200: { description: `The ranked candidates with their signals, recommended actions and near-duplicates, and the duplicate groups (${KIND} envelope).` },
  },
};

// The same worksheet saved twice: both copies carry the hash of the one content.
const worksheetSha256 = '3f0a9c1e5b7d2468ace0135792468ace0135792468ace0135792468ace01357a';
const exampleRequest: RecommendArtifactsRequest = {
  goal: {
    description: 'Equivalent fractions with fraction strips and number lines, for a small-group warm-up',
    standardIds: ['urn:case:4.NF.A.1', 'urn:case:4.NF.A.2'],
    courseId: 'course-math-4',
    gradeLevels: ['4'],
    format: 'worksheet',
    locale: 'en-US',
  },
  candidates: [
    {
      id: 'art-fraction-strips',
      title: 'Fraction strips: equivalent fractions',
      summary: 'Students fold paper strips to find fractions equal to 1/2 and 3/4.',
      contentSha256: worksheetSha256,
      standardIds: ['urn:case:4.NF.A.1', 'urn:case:4.NF.A.2'],
      courseId: 'course-math-4',
      gradeLevels: ['4'],
      format: 'worksheet',
      locale: 'en-US',
      educatorAccepted: true,
    },
    {
      id: 'art-fraction-strips-copy',
      title: 'Copy of Fraction strips',
      contentSha256: worksheetSha256,
      standardIds: ['urn:case:4.NF.A.1'],
      courseId: 'course-math-4',
      gradeLevels: ['4'],
      format: 'worksheet',
      locale: 'en-US',
      educatorAccepted: false,
    },
    {
      id: 'art-fracciones-equivalentes',
      title: 'Fracciones equivalentes con tiras de papel',
      standardIds: ['urn:case:4.NF.A.1'],
      gradeLevels: ['4'],
      format: 'slide-deck',
      locale: 'es-MX',
      educatorAccepted: true,
    },
  ],
  limit: 10,
};

const examples: OperationExamples = {
  request: { value: exampleRequest },
  // Computed by the operation itself, so the example is exactly what the service answers.
  responses: { 200: { value: envelope(KIND, rankArtifacts(recommendArtifactsInputSchema.parse(exampleRequest))) } },
};

export const recommendArtifacts = deterministicRow('recommendArtifacts', {
  bodyLimit: BODY_LIMIT,
  description:
    `Needs intelligence.execute. Deterministic (no model, no metering, nothing stored): the same request in any order answers byte for byte the same. ` +
    `Each candidate is scored from goal words, standards, course, format, grade levels, locale and educator acceptance with fixed weights (each ` +
    `result carries its signals), checked for near-duplicates (word 3-shingle Jaccard ≥ 0.8, or equal content hashes), and given one action: reuse, ` +
    `adapt, translate, differentiate or convert-format with its reasons. At most ${RECOMMEND_LIMITS.candidates} candidates, whose ids must be unique; ` +
    `the answer names candidates by id only and never returns a title, summary, excerpt or the goal's words.`,
  body: recommendArtifactsInputSchema,
  problems: ['payload_too_large'],
  answer: rankArtifacts,
  docs,
  examples,
});
