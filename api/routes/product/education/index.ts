// The education operations of the Product Runtime (`/intelligence/education/*` beyond generate and
// generate-image): one plugin and one table of OpenAPI docs and examples per operation.
// Deterministic (no model, no metering): projection, artifacts/recommend, standards/crosswalk.
// Metered (runStructured in ../generation.ts): assessment-draft, rubric-draft, quality-review,
// practice-review, student-guidance.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { OperationExamples } from '../../../openapi-examples.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { assessmentDraftExamples, assessmentDraftOperationDocs, assessmentDraftRoutes } from './assessment-draft-routes.ts';
import { crosswalkExamples, crosswalkOperationDocs, crosswalkRoutes } from './crosswalk.ts';
import { practiceReviewExamples, practiceReviewOperationDocs, practiceReviewRoutes } from './practice-review-routes.ts';
import { projectionExamples, projectionOperationDocs, projectionRoutes } from './projection.ts';
import { qualityReviewExamples, qualityReviewOperationDocs, qualityReviewRoutes } from './quality-review-routes.ts';
import { recommendExamples, recommendOperationDocs, recommendRoutes } from './recommend.ts';
import { rubricDraftExamples, rubricDraftOperationDocs, rubricDraftRoutes } from './rubric-draft-routes.ts';
import { studentGuidanceExamples, studentGuidanceOperationDocs, studentGuidanceRoutes } from './student-guidance-routes.ts';

const operations = [
  [projectionRoutes, projectionOperationDocs, projectionExamples],
  [recommendRoutes, recommendOperationDocs, recommendExamples],
  [crosswalkRoutes, crosswalkOperationDocs, crosswalkExamples],
  [assessmentDraftRoutes, assessmentDraftOperationDocs, assessmentDraftExamples],
  [rubricDraftRoutes, rubricDraftOperationDocs, rubricDraftExamples],
  [qualityReviewRoutes, qualityReviewOperationDocs, qualityReviewExamples],
  [practiceReviewRoutes, practiceReviewOperationDocs, practiceReviewExamples],
  [studentGuidanceRoutes, studentGuidanceOperationDocs, studentGuidanceExamples],
] as const;

export const educationRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  for (const [routes] of operations) await app.register(routes, deps);
};

export const educationOperationDocs: Record<string, { headers?: readonly string[]; responses: Record<string, { description: string }> }> = Object.assign(
  {},
  ...operations.map(([, docs]) => docs),
);
export const educationExamples: Record<string, OperationExamples> = Object.assign({}, ...operations.map(([, , examples]) => examples));
