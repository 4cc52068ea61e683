// The education operations of the Product Runtime (`/intelligence/education/*` beyond generate,
// generate-image and media), registered from one table. The SDK's operation table states each one's
// method, path, scope, key rule, metering and result kind; a row here states the rest: its body and
// its limit, its description and examples, the checks before anything is reserved, and how its
// answer is built. Deterministic rows (no model, no metering) answer from a domain function;
// metered rows run the domain's structured operation through the one reservation lifecycle
// (domain/intelligence/generation.ts runStructured). One row per operation, one file per row.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { envelope, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { RuntimeOperationName } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { generationDepsOf, intelligenceUnavailable, structuredAnswer } from '../metered-route.ts';
import { operationRoute } from '../operation-route.ts';
import { assessmentDraft } from './assessment-draft.ts';
import { crosswalkStandards } from './crosswalk.ts';
import { educationPracticeReview } from './practice-review.ts';
import { educationProjection } from './projection.ts';
import { educationQualityReview } from './quality-review.ts';
import { recommendArtifacts } from './recommend.ts';
import { rubricDraft } from './rubric-draft.ts';
import { studentGuidance } from './student-guidance.ts';

/** Every education operation of the pack's table but generate and generate-image (intelligence.ts). */
const educationRows = [
  educationProjection,
  recommendArtifacts,
  crosswalkStandards,
  studentGuidance,
  educationQualityReview,
  educationPracticeReview,
  assessmentDraft,
  rubricDraft,
] as const;

/** Each row's OpenAPI examples by operation name (the conformance suite calls the adapters with their requests). */
export const educationExamples: Readonly<Record<string, OperationExamples>> = Object.fromEntries(educationRows.map(({ name, row }) => [name, row.examples]));

export const educationRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  const generation = generationDepsOf(deps, app.log);
  for (const { name, kind, row } of educationRows) {
    const envelopeKind = runtimeOperations[name as RuntimeOperationName].kind;
    app.route({
      ...operationRoute(name),
      bodyLimit: row.bodyLimit,
      schema: { description: row.description, body: row.body, problems: row.problems, docs: row.docs, examples: row.examples },
      handler: async (request, reply) => {
        const input = request.body as never;
        if (kind === 'deterministic') return envelope(envelopeKind, row.answer(input));
        if (!generation) return intelligenceUnavailable(envelopeKind);
        row.check(input);
        const run = await structuredAnswer(generation, request as typeof request & { body: never }, reply, String(runtimeOperations[name].metered), row.operation);
        return envelope(envelopeKind, { generationId: run.generationId, ...row.answer(run.result as never, input, run as never), model: run.model, receipt: run.receipt, replayed: run.replayed });
      },
    });
  }
};
