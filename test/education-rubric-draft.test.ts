// rubric-draft: a weighted analytic rubric with one observable descriptor per level, metered and
// replayable like every structured operation; the model's answer is checked against the request
// (criterion count, the exact level order, weights summing to 1 within the tolerance, cited ids)
// and an answer that is not what was asked is asked again once, then refused with both attempts
// charged. Every bound of the request is refused before anything is reserved. Scripted
// OpenAI-compatible provider on loopback, real Postgres and Temporal.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acceptRubricDraft } from '../domain/education/rubric-draft.ts';
import { RUBRIC_WEIGHT_TOLERANCE, rubricDraftInputSchema, rubricDraftSchema } from '../packages/runtime-sdk/src/dto/education/rubric-draft.ts';
import { educationExamples } from '../api/routes/product/education/index.ts';
import { buildTestApp } from './support/app.ts';
import { useMeteredRuntime } from './support/metered-runtime.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { orgLedger, reservations } from './support/intelligence.ts';

const PATH = '/intelligence/education/rubric-draft';
const LEVELS = ['Exceeds', 'Meets', 'Approaching', 'Beginning'];

const body = (patch: Record<string, unknown> = {}) => ({
  course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'] },
  standards: [
    { id: 'std-1', code: '4.NF.A.1', statement: 'Explain why fractions are equivalent using visual models.' },
    { id: 'std-2', code: '4.NF.A.2', statement: 'Compare two fractions with different numerators and denominators.' },
  ],
  learningTargets: [{ id: 'lt-1', statement: 'I can show two fractions are equivalent with a model.', reviewed: true }],
  criterionCount: 2,
  levelLabels: LEVELS,
  accessibilityRequirements: ['Plain language'],
  ...patch,
});

const descriptors = (topic: string, levels = LEVELS) => levels.map((level) => ({ level, descriptor: `${level}: ${topic} observed at the ${level.toLowerCase()} level.` }));
const criterion = (name: string, weight: number, patch: Record<string, unknown> = {}) => ({
  name,
  weight,
  descriptors: descriptors(name),
  standardIds: ['std-1'],
  learningTargetIds: ['lt-1'],
  ...patch,
});
const rubric = (criteria: unknown[] = [criterion('Uses a fraction model', 0.6), criterion('Explains why', 0.4, { standardIds: ['std-1', 'std-2', 'std-1'] })], title = 'Explaining equivalent fractions') => ({
  title,
  criteria,
});
const turn = (output: unknown) => ({ kind: 'chat' as const, chunks: [typeof output === 'string' ? output : JSON.stringify(output)], usage: { prompt_tokens: 300, completion_tokens: 20 } });

describe('the check of the model answer (no app)', () => {
  it('the OpenAPI examples are a valid request and a valid answer', () => {
    const example = educationExamples['rubricDraft']!;
    expect(rubricDraftInputSchema.safeParse((example.request as { value: unknown }).value).success).toBe(true);
    const answer = (example.responses![200] as { value: { data: unknown } }).value;
    expect(rubricDraftSchema.safeParse(answer.data).error).toBeUndefined();
  });

  const input = rubricDraftInputSchema.parse(body());
  const accept = (output: unknown, request = input) => acceptRubricDraft(JSON.stringify(output), request);

  it('accepts exactly what was asked; the service assigns criterion ids, keeps the level order and dedupes cited ids', () => {
    const result = accept(rubric());
    expect(result).toMatchObject({ title: 'Explaining equivalent fractions', levelLabels: LEVELS });
    expect(result?.criteria.map((c) => [c.criterionId, c.weight])).toEqual([
      ['criterion-1', 0.6],
      ['criterion-2', 0.4],
    ]);
    expect(result?.criteria[0]!.descriptors.map((d) => d.level)).toEqual(LEVELS);
    expect(result?.criteria[1]!.standardIds).toEqual(['std-1', 'std-2']);
  });

  it('weights may miss 1 by the documented tolerance, not more', () => {
    const three = rubricDraftInputSchema.parse(body({ criterionCount: 3 }));
    expect(accept(rubric([criterion('A', 0.33), criterion('B', 0.33), criterion('C', 0.33)]), three)).not.toBeNull();
    expect(accept(rubric([criterion('A', 0.6), criterion('B', 0.4 + RUBRIC_WEIGHT_TOLERANCE * 1.5)]))).toBeNull();
    expect(accept(rubric([criterion('A', 0.6), criterion('B', 0.4 - RUBRIC_WEIGHT_TOLERANCE * 1.5)]))).toBeNull();
  });

  it.each([
    ['not JSON', 'not json'],
    ['an unknown field', { ...rubric(), version: 2 }],
    ['an unknown criterion field', rubric([{ ...criterion('A', 0.5), points: 4 }, criterion('B', 0.5)])],
    ['one criterion too few', rubric([criterion('A', 1)])],
    ['one criterion too many', rubric([criterion('A', 0.4), criterion('B', 0.3), criterion('C', 0.3)])],
    ['two criteria with the same name', rubric([criterion('Model', 0.5), criterion('model ', 0.5)])],
    ['a zero weight', rubric([criterion('A', 1), criterion('B', 0)])],
    ['a negative weight', rubric([criterion('A', 1.2), criterion('B', -0.2)])],
    ['weights summing to 2', rubric([criterion('A', 1), criterion('B', 1)])],
    ['levels in another order', rubric([criterion('A', 0.5, { descriptors: descriptors('A', [...LEVELS].reverse()) }), criterion('B', 0.5)])],
    ['a level missing', rubric([criterion('A', 0.5, { descriptors: descriptors('A', LEVELS.slice(0, 3)) }), criterion('B', 0.5)])],
    ['a level added', rubric([criterion('A', 0.5, { descriptors: descriptors('A', [...LEVELS, 'Not yet']) }), criterion('B', 0.5)])],
    ['a renamed level', rubric([criterion('A', 0.5, { descriptors: descriptors('A', ['Exceeds', 'Meets', 'Developing', 'Beginning']) }), criterion('B', 0.5)])],
    ['the same descriptor at two levels', rubric([criterion('A', 0.5, { descriptors: LEVELS.map((level) => ({ level, descriptor: 'Shows a model.' })) }), criterion('B', 0.5)])],
    ['an empty descriptor', rubric([criterion('A', 0.5, { descriptors: LEVELS.map((level, i) => ({ level, descriptor: i === 0 ? ' ' : level })) }), criterion('B', 0.5)])],
    ['a descriptor over 600 characters', rubric([criterion('A', 0.5, { descriptors: LEVELS.map((level) => ({ level, descriptor: `${level} ${'x'.repeat(600)}` })) }), criterion('B', 0.5)])],
    ['an unsubmitted standard', rubric([criterion('A', 0.5, { standardIds: ['std-9'] }), criterion('B', 0.5)])],
    ['an unsubmitted learning target', rubric([criterion('A', 0.5, { learningTargetIds: ['lt-9'] }), criterion('B', 0.5)])],
    ['a criterion citing no standard', rubric([criterion('A', 0.5, { standardIds: [] }), criterion('B', 0.5)])],
  ])('%s is invalid', (_name, output) => {
    expect(typeof output === 'string' ? acceptRubricDraft(output, input) : accept(output)).toBeNull();
  });
});

describe('through the app', () => {
  const metered = useMeteredRuntime('education-rubric-draft');
  const { provider, ctx } = metered;

  const post = (b: unknown, key: string | null = randomUUID()) => metered.rt.request('POST', PATH, { body: b, headers: key === null ? {} : { 'idempotency-key': key } });
  type Answer = { kind: string; data: Record<string, unknown> & { criteria: { criterionId: string }[]; receipt: Record<string, unknown> } };

  it('a valid rubric settles: proposed, criterion ids assigned, one provider call under the strict schema, the receipt of the metered kind', async () => {
    provider.script(turn(rubric()));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.data as Answer;
    expect(answer.kind).toBe('service.education-rubric-draft');
    expect(answer.data).toMatchObject({
      status: 'proposed',
      levelLabels: LEVELS,
      replayed: false,
      receipt: { operation: 'education-rubric-draft', outcome: 'settled', costMicrodollars: 380, usage: { inputTokens: 300, outputTokens: 20 } },
    });
    expect(answer.data.generationId).toBe(answer.data.receipt['id']);
    expect(answer.data.criteria.map((c) => c.criterionId)).toEqual(['criterion-1', 'criterion-2']);
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]!.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'rubric_draft', strict: true } } });
    const messages = provider.calls[0]!.body['messages'] as { role: string; content: string }[];
    expect(messages[0]!.content).toContain(JSON.stringify(LEVELS));
    expect(messages[1]!.content.startsWith('<request>')).toBe(true);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(380);
  });

  it('the same key replays the stored rubric without a second model call', async () => {
    provider.script(turn(rubric()));
    const key = randomUUID();
    const first = (await post(body(), key)).data as Answer;
    const again = await post(body(), key);
    expect(again.statusCode).toBe(200);
    expect((again.data as Answer).data).toMatchObject({ generationId: first.data.generationId, replayed: true, status: 'proposed', criteria: first.data.criteria });
    expect(provider.calls).toHaveLength(1);
  });

  it('an answer with the levels out of order is asked again once, then refused as invalid with both attempts charged', async () => {
    const invalid = rubric([criterion('A', 0.5, { descriptors: descriptors('A', [...LEVELS].reverse()) }), criterion('B', 0.5)]);
    provider.script(turn(invalid), turn(invalid));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode).toBe(502);
    expect(res.data).toMatchObject({ code: 'intelligence_output_invalid', receipt: { operation: 'education-rubric-draft', outcome: 'billable_failure', costMicrodollars: 760, usage: { inputTokens: 600, outputTokens: 40 } } });
    expect(provider.calls).toHaveLength(2);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(760);
  });

  it('an invalid first answer (weights summing to 0.8) and a valid second one settle both attempts', async () => {
    provider.script(turn(rubric([criterion('A', 0.4), criterion('B', 0.4)])), turn(rubric()));
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    expect((res.data as Answer).data.receipt).toMatchObject({ outcome: 'settled', costMicrodollars: 760 });
    expect(provider.calls).toHaveLength(2);
  });

  const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
  it.each([
    ['criterionCount 0', body({ criterionCount: 0 }), '/body/criterionCount'],
    ['criterionCount 11', body({ criterionCount: 11 }), '/body/criterionCount'],
    ['one level label', body({ levelLabels: ['Meets'] }), '/body/levelLabels'],
    ['seven level labels', body({ levelLabels: many(7, (i) => `Level ${i}`) }), '/body/levelLabels'],
    ['a repeated level label (ignoring case)', body({ levelLabels: ['Meets', 'meets'] }), '/body/levelLabels/1'],
    ['an empty level label', body({ levelLabels: ['Meets', '  '] }), '/body/levelLabels/1'],
    ['a level label of 61 characters', body({ levelLabels: ['Meets', 'x'.repeat(61)] }), '/body/levelLabels/1'],
    ['no standards', body({ standards: [] }), '/body/standards'],
    ['21 standards', body({ standards: many(21, (i) => ({ id: `s${i}`, statement: 'A standard.' })) }), '/body/standards'],
    ['a repeated standard id', body({ standards: [{ id: 's', statement: 'A.' }, { id: 's', statement: 'B.' }] }), '/body/standards/1/id'],
    ['no learning targets', body({ learningTargets: [] }), '/body/learningTargets'],
    ['an unreviewed learning target', body({ learningTargets: [{ id: 't', statement: 'A target.', reviewed: false }] }), '/body/learningTargets/0/reviewed'],
    ['a repeated learning target id', body({ learningTargets: [{ id: 't', statement: 'A.', reviewed: true }, { id: 't', statement: 'B.', reviewed: true }] }), '/body/learningTargets/1/id'],
    ['11 sources', body({ sources: many(11, (i) => ({ id: `src${i}`, title: 'T', excerpt: 'E' })) }), '/body/sources'],
    ['11 accessibility requirements', body({ accessibilityRequirements: many(11, () => 'Large print') }), '/body/accessibilityRequirements'],
    ['an unknown field', body({ learnerScores: [3, 4] }), '/body/learnerScores'],
  ])('%s is refused before anything is reserved', async (_name, b, pointer) => {
    const held = (await reservations(ctx.db.pool, metered.chain.installationId)).length;
    const res = await post(b);
    expect(res.statusCode, res.body).toBe(400);
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, metered.chain.installationId)).toHaveLength(held);
  });

  it('learner-record language in the education context and a missing Idempotency-Key are refused before anything is reserved', async () => {
    const held = (await reservations(ctx.db.pool, metered.chain.installationId)).length;
    const record = await post(body({ educationContext: { kind: 'partner.education-context', version: 1, constraints: ['Student ID 4411 has an IEP'] } }));
    expect(record.statusCode).toBe(422);
    expect(record.data).toMatchObject({ code: 'education_context_learner_record' });
    const noKey = await post(body(), null);
    expect(noKey.statusCode).toBe(400);
    expect(noKey.data).toMatchObject({ code: 'idempotency_key_required' });
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, metered.chain.installationId)).toHaveLength(held);
  });

  it('without intelligence.execute, and with no provider configured', async () => {
    const narrow = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const refused = await runtimeClient(ctx.app, narrow.secret).request('POST', PATH, { body: body(), headers: { 'idempotency-key': randomUUID() } });
    expect(refused.statusCode).toBe(403);
    expect(refused.data).toMatchObject({ code: 'scope_missing' });
    const app = await buildTestApp(ctx.db.pool);
    try {
      const res = await runtimeClient(app, metered.chain.secret).request('POST', PATH, { body: body(), headers: { 'idempotency-key': randomUUID() } });
      expect(res.statusCode).toBe(200);
      expect(res.data).toMatchObject({ kind: 'service.education-rubric-draft', status: 'unavailable', missing: [{ reason: 'capability_not_configured' }] });
    } finally {
      await app.close();
    }
    expect(provider.calls).toHaveLength(0);
  });
});
