// quality-review: an advisory evaluation of one artifact revision, metered through the structured
// runner (reserve → strict schema → our check against the request → settle; at most two attempts),
// replayed by key, strict and bounded input, never echoing the artifact. Scripted OpenAI-compatible
// provider on loopback, real Postgres and Temporal; the accept check also unit-tested on its own.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { envelopeSchema } from '@hosted-notes/runtime-sdk';
import { educationExamples } from '../api/routes/product/education/index.ts';
import { acceptQualityReview, evaluationProblem } from '../domain/education/quality-review.ts';
import { qualityEvaluationSchema, qualityReviewInputSchema, qualityReviewSchema } from '@hosted-notes/runtime-sdk';
import type { QualityEvaluation } from '@hosted-notes/runtime-sdk';
import { buildTestApp } from './support/app.ts';
import { useMeteredRuntime } from './support/metered-runtime.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { orgLedger, reservations } from './support/intelligence.ts';

const metered = useMeteredRuntime('education-quality-review');
const { provider, ctx } = metered;

/** A sentence only the artifact holds: the answer must never contain it. */
const ARTIFACT_MARKER = 'Zebras fold quartz strips beside the violet lighthouse.';

const body = (patch: Record<string, unknown> = {}) => ({
  artifact: { id: 'artifact-fraction-strips', revision: '7', title: 'Fraction strips', format: 'markdown', content: `# Fraction strips\n\nFold one strip into halves. ${ARTIFACT_MARKER}` },
  course: { id: 'course-math-4', title: 'Grade 4 Mathematics', gradeLevels: ['4'] },
  standards: [{ id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why fractions are equivalent.' }],
  sources: [{ id: 'src-strips', title: 'Fraction strips lesson', excerpt: 'Students fold paper strips into halves and fourths.' }],
  policyConstraints: ['Every image needs alt text.'],
  ...patch,
});

const finding = (note: string, cited: Partial<{ standardIds: string[]; sourceIds: string[]; policyConstraintIndexes: number[] }> = {}) => ({
  note,
  standardIds: [],
  sourceIds: [],
  policyConstraintIndexes: [],
  ...cited,
});
const evaluation = (patch: Partial<Record<keyof QualityEvaluation, unknown>> = {}) => ({
  alignment: { rating: 'adequate', findings: [finding('Practises equivalence with a visual model.', { standardIds: ['urn:case:4.NF.A.1'] })] },
  sourceSupport: { rating: 'strong', findings: [] },
  citations: { rating: 'weak', findings: [finding('The strips lesson is not attributed.', { sourceIds: ['src-strips'] })] },
  readingLevel: { rating: 'strong', findings: [] },
  accessibility: { rating: 'adequate', findings: [] },
  biasRisk: { rating: 'none-found', findings: [] },
  assessmentValidity: { rating: 'not-applicable', findings: [] },
  policyConflicts: { rating: 'none-found', findings: [] },
  summary: 'Aligned practice; attribute the source before use.',
  ...patch,
});
const answer = (output: unknown) => ({ kind: 'chat' as const, chunks: [JSON.stringify(output)], usage: { prompt_tokens: 300, completion_tokens: 20 } });
const post = (b: unknown, key = randomUUID()) => metered.rt.request('POST', '/intelligence/education/quality-review', { body: b, headers: { 'idempotency-key': key } });
type Answer = { kind: string; status: string; data: Record<string, unknown> };

describe('an evaluation the check accepts', () => {
  it('is metered (one provider call, receipt education-quality-review), advisory, and never echoes the artifact', async () => {
    provider.script(answer(evaluation()));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    const env = res.data as Answer;
    expect(env.kind).toBe('service.education-quality-review');
    expect(env.data).toMatchObject({
      advisory: true,
      artifact: { id: 'artifact-fraction-strips', revision: '7' },
      evaluation: { alignment: { rating: 'adequate' }, citations: { rating: 'weak' } },
      replayed: false,
      // 300 input tokens at 1 µ$ and 20 output tokens at 4 µ$.
      receipt: { operation: 'education-quality-review', outcome: 'settled', costMicrodollars: 380, usage: { inputTokens: 300, outputTokens: 20 } },
    });
    expect(env.data['generationId']).toBe((env.data['receipt'] as { id: string }).id);
    expect(res.body).not.toContain(ARTIFACT_MARKER);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(380);
    expect(provider.calls).toHaveLength(1);
    const sent = provider.calls[0]!.body;
    expect(sent).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'education_quality_review', strict: true } } });
    const messages = sent['messages'] as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0]!.content).not.toContain(ARTIFACT_MARKER);
    expect(messages[1]!.content.startsWith('<request>')).toBe(true);
    expect(messages[1]!.content).toContain(ARTIFACT_MARKER);
  });

  it('the same key replays the stored evaluation with no second model call; another body with the key is refused', async () => {
    provider.script(answer(evaluation()));
    const key = randomUUID();
    const first = await post(body(), key);
    expect(first.statusCode, first.body).toBe(200);
    const again = await post(body(), key);
    expect(again.statusCode, again.body).toBe(200);
    expect((again.data as Answer).data).toEqual({ ...(first.data as Answer).data, replayed: true });
    expect(provider.calls).toHaveLength(1);
    const other = await post(body({ policyConstraints: [] }), key);
    expect(other.statusCode).toBe(422);
    expect(other.data).toMatchObject({ code: 'idempotency_key_reused' });
    expect(provider.calls).toHaveLength(1);
  });
});

describe('an evaluation the check refuses is asked again once, then refused with both attempts charged', () => {
  it('citing a standard that was not submitted, twice: 502 intelligence_output_invalid, two calls, both charged', async () => {
    const invalid = evaluation({ alignment: { rating: 'adequate', findings: [finding('Aligned.', { standardIds: ['urn:case:5.NF.B.3'] })] } });
    provider.script(answer(invalid), answer(invalid));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode).toBe(502);
    expect(res.data).toMatchObject({ code: 'intelligence_output_invalid', receipt: { operation: 'education-quality-review', outcome: 'billable_failure', costMicrodollars: 760, usage: { inputTokens: 600, outputTokens: 40 } } });
    expect(provider.calls).toHaveLength(2);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(760);
  });

  it('an output that is not JSON, then a valid one: settled at the usage of both attempts', async () => {
    provider.script({ kind: 'chat', chunks: ['not json'], usage: { prompt_tokens: 300, completion_tokens: 20 } }, answer(evaluation()));
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    expect((res.data as Answer).data['receipt']).toMatchObject({ outcome: 'settled', costMicrodollars: 760 });
    expect(provider.calls).toHaveLength(2);
  });
});

describe('the request is refused before anything is reserved', () => {
  const standard = (i: number) => ({ id: `urn:case:s${i}`, statement: 'A statement.' });
  const source = (i: number) => ({ id: `src-${i}`, title: 'A source', excerpt: 'An excerpt.' });
  it.each([
    ['content of 60,001 characters', body({ artifact: { ...body().artifact, content: 'x'.repeat(60_001) } }), '/body/artifact/content'],
    ['an empty content', body({ artifact: { ...body().artifact, content: '' } }), '/body/artifact/content'],
    ['an unknown format', body({ artifact: { ...body().artifact, format: 'pdf' } }), '/body/artifact/format'],
    ['a title of 301 characters', body({ artifact: { ...body().artifact, title: 't'.repeat(301) } }), '/body/artifact/title'],
    ['a revision of 101 characters', body({ artifact: { ...body().artifact, revision: 'r'.repeat(101) } }), '/body/artifact/revision'],
    ['no standards', body({ standards: [] }), '/body/standards'],
    ['21 standards', body({ standards: Array.from({ length: 21 }, (_, i) => standard(i)) }), '/body/standards'],
    ['a standard statement of 1,001 characters', body({ standards: [{ id: 's', statement: 's'.repeat(1_001) }] }), '/body/standards/0/statement'],
    ['a repeated standard id', body({ standards: [standard(1), standard(1)] }), '/body/standards/1/id'],
    ['11 sources', body({ sources: Array.from({ length: 11 }, (_, i) => source(i)) }), '/body/sources'],
    ['a source excerpt of 8,001 characters', body({ sources: [{ ...source(1), excerpt: 'e'.repeat(8_001) }] }), '/body/sources/0/excerpt'],
    ['21 policy constraints', body({ policyConstraints: Array.from({ length: 21 }, (_, i) => `Rule ${i}`) }), '/body/policyConstraints'],
    ['a policy constraint of 501 characters', body({ policyConstraints: ['p'.repeat(501)] }), '/body/policyConstraints/0'],
    ['14 grade levels', body({ course: { id: 'c', title: 'C', gradeLevels: Array.from({ length: 14 }, (_, i) => String(i)) } }), '/body/course/gradeLevels'],
    ['an unknown field', body({ learner: { name: 'Maria' } }), '/body/learner'],
    ['an unknown artifact field', body({ artifact: { ...body().artifact, authorEmail: 'a@example.org' } }), '/body/artifact/authorEmail'],
    ['a group of four in the context', body({ educationContext: { kind: 'partner.education-context', version: 1, classSupport: [{ category: 'reading-support', groupSize: 4 }] } }), '/body/educationContext/classSupport/0/groupSize'],
  ])('%s: 400 naming its pointer', async (_name, b, pointer) => {
    const held = (await reservations(ctx.db.pool, metered.chain.installationId)).length;
    const res = await post(b);
    expect(res.statusCode, res.body).toBe(400);
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, metered.chain.installationId)).toHaveLength(held);
  });

  it('learner-record language in the education context: 422 naming the field, never the text', async () => {
    const res = await post(body({ educationContext: { kind: 'partner.education-context', version: 1, constraints: ['Maria struggles with fractions'] } }));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.data).toMatchObject({ code: 'education_context_learner_record', errors: [{ pointer: '/body/educationContext/constraints/0' }] });
    expect(res.body).not.toContain('Maria');
    expect(provider.calls).toHaveLength(0);
  });

  it('without an Idempotency-Key: 400, nothing called', async () => {
    const res = await metered.rt.request('POST', '/intelligence/education/quality-review', { body: body() });
    expect(res.statusCode).toBe(400);
    expect(res.data).toMatchObject({ code: 'idempotency_key_required' });
    expect(provider.calls).toHaveLength(0);
  });

  it('without intelligence.execute: 403; with no provider configured: the unavailable envelope', async () => {
    const narrow = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const refused = await runtimeClient(ctx.app, narrow.secret).request('POST', '/intelligence/education/quality-review', { body: body(), headers: { 'idempotency-key': randomUUID() } });
    expect(refused.statusCode).toBe(403);
    expect(refused.data).toMatchObject({ code: 'scope_missing' });
    const app = await buildTestApp(ctx.db.pool);
    try {
      const res = await runtimeClient(app, metered.chain.secret).request('POST', '/intelligence/education/quality-review', { body: body(), headers: { 'idempotency-key': randomUUID() } });
      expect(res.statusCode).toBe(200);
      expect(res.data).toMatchObject({ kind: 'service.education-quality-review', status: 'unavailable', data: null, missing: [{ reason: 'capability_not_configured' }] });
    } finally {
      await app.close();
    }
    expect(provider.calls).toHaveLength(0);
  });
});

describe('the accept check (no app)', () => {
  const input = qualityReviewInputSchema.parse(body());
  const accepted = (output: unknown) => acceptQualityReview(JSON.stringify(output), input);

  it('accepts a well-formed evaluation citing only submitted ids', () => {
    expect(accepted(evaluation())).toEqual(qualityEvaluationSchema.parse(evaluation()));
    expect(accepted(evaluation({ policyConflicts: { rating: 'high', findings: [finding('No alt text on the diagram.', { policyConstraintIndexes: [0] })] } }))).not.toBeNull();
  });

  it.each([
    ['not JSON', null],
    ['an unknown field', { ...evaluation(), overall: 'good' }],
    ['a missing dimension', { ...evaluation(), biasRisk: undefined }],
    ['a rating outside the vocabulary', evaluation({ alignment: { rating: 'excellent', findings: [] } })],
    ['a risk rating on a quality dimension', evaluation({ readingLevel: { rating: 'low', findings: [finding('x')] } })],
    ['a finding of 501 characters', evaluation({ accessibility: { rating: 'adequate', findings: [finding('n'.repeat(501))] } })],
    ['six findings on one dimension', evaluation({ accessibility: { rating: 'adequate', findings: Array.from({ length: 6 }, () => finding('n')) } })],
    ['a summary of 1,201 characters', evaluation({ summary: 's'.repeat(1_201) })],
    ['an unsubmitted source', evaluation({ sourceSupport: { rating: 'adequate', findings: [finding('x', { sourceIds: ['src-other'] })] } })],
    ['an unsubmitted standard', evaluation({ alignment: { rating: 'adequate', findings: [finding('x', { standardIds: ['urn:case:other'] })] } })],
    ['a constraint index beyond those submitted', evaluation({ policyConflicts: { rating: 'low', findings: [finding('x', { policyConstraintIndexes: [1] })] } })],
    ['a weak rating with no finding', evaluation({ citations: { rating: 'weak', findings: [] } })],
    ['a moderate conflict that names no constraint', evaluation({ policyConflicts: { rating: 'moderate', findings: [finding('x')] } })],
  ])('refuses %s', (_name, output) => {
    expect(output === null ? acceptQualityReview('{"alignment":', input) : accepted(output)).toBeNull();
  });

  it('with no policy constraints, policy conflicts can only be not-applicable', () => {
    const none = qualityReviewInputSchema.parse(body({ policyConstraints: [] }));
    const parsed = qualityEvaluationSchema.parse(evaluation());
    expect(evaluationProblem(parsed, none)).toBe('policyConflicts: rated with no policy constraints submitted');
    expect(evaluationProblem({ ...parsed, policyConflicts: { rating: 'not-applicable', findings: [] } }, none)).toBeNull();
  });

  it('the OpenAPI example request and answer are valid by the published schemas, and the answer passes the check', () => {
    const example = educationExamples['educationQualityReview'] as { request: { value: unknown }; responses: { 200: { value: unknown } } };
    const request = qualityReviewInputSchema.parse(example.request.value);
    const response = envelopeSchema('service.education-quality-review', qualityReviewSchema).parse(example.responses[200].value);
    expect(evaluationProblem(response.data!.evaluation, request)).toBeNull();
    expect(JSON.stringify(response)).not.toContain(request.artifact.content.slice(0, 40));
  });
});
