// assessment-draft: a strict structured draft of assessment items, metered and replayable like every
// structured operation; the model's answer is checked against the request (count, types, DOK levels,
// each type's shape, cited ids) and an answer that is not what was asked is asked again once, then
// refused with both attempts charged. Every bound of the request is refused before anything is
// reserved. Scripted OpenAI-compatible provider on loopback, real Postgres and Temporal.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acceptAssessmentDraft } from '../domain/education/assessment-draft.ts';
import { assessmentDraftInputSchema, assessmentDraftSchema } from '../packages/runtime-sdk/src/dto/education/assessment-draft.ts';
import { educationExamples } from '../api/routes/product/education/index.ts';
import { buildTestApp } from './support/app.ts';
import { useMeteredRuntime } from './support/metered-runtime.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { orgLedger, reservations } from './support/intelligence.ts';

const PATH = '/intelligence/education/assessment-draft';

const body = (patch: Record<string, unknown> = {}) => ({
  course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
  standards: [
    { id: 'std-1', code: '4.NF.A.1', statement: 'Explain why fractions are equivalent using visual models.' },
    { id: 'std-2', code: '4.NF.A.2', statement: 'Compare two fractions with different numerators and denominators.' },
  ],
  learningTargets: [{ id: 'lt-1', statement: 'I can show two fractions are equivalent with a model.', reviewed: true }],
  sources: [{ id: 'src-1', title: 'Fraction strips notes', excerpt: 'Students fold strips into halves and fourths.' }],
  itemCount: 2,
  itemTypes: ['multiple-choice', 'short-answer'],
  dokLevels: [1, 2],
  accessibilityRequirements: ['Screen-reader friendly'],
  ...patch,
});

const mcItem = (patch: Record<string, unknown> = {}) => ({
  type: 'multiple-choice',
  dokLevel: 1,
  stem: 'Which fraction is equivalent to 2/4?',
  choices: [
    { id: 'A', text: '1/2' },
    { id: 'B', text: '2/8' },
    { id: 'C', text: '4/2' },
  ],
  matchPrompts: [],
  answerKey: { choiceIds: ['A'], matches: [], sampleAnswer: null },
  rationale: 'Multiplying 1/2 by 2/2 gives 2/4; C inverts the fraction.',
  standardIds: ['std-1'],
  learningTargetIds: ['lt-1'],
  sourceIds: [],
  accessibilityNotes: ['Fractions are text, read aloud by a screen reader.'],
  ...patch,
});
const saItem = (patch: Record<string, unknown> = {}) => ({
  type: 'short-answer',
  dokLevel: 2,
  stem: 'Explain how your strips show that 3/4 = 6/8.',
  choices: [],
  matchPrompts: [],
  answerKey: { choiceIds: [], matches: [], sampleAnswer: 'Each fourth is two eighths, so three fourths are six eighths.' },
  rationale: 'Looks for splitting each part into the same number of smaller parts.',
  standardIds: ['std-1', 'std-1'],
  learningTargetIds: ['lt-1'],
  sourceIds: ['src-1'],
  accessibilityNotes: [],
  ...patch,
});
const draft = (items: unknown[] = [mcItem(), saItem()], title = 'Equivalent fractions check') => ({ title, items });
const turn = (output: unknown) => ({ kind: 'chat' as const, chunks: [typeof output === 'string' ? output : JSON.stringify(output)], usage: { prompt_tokens: 300, completion_tokens: 20 } });

describe('the check of the model answer (no app)', () => {
  it('the OpenAPI examples are a valid request and a valid answer', () => {
    const example = educationExamples['assessmentDraft']!;
    expect(assessmentDraftInputSchema.safeParse((example.request as { value: unknown }).value).success).toBe(true);
    const answer = (example.responses![200] as { value: { data: unknown } }).value;
    expect(assessmentDraftSchema.safeParse(answer.data).error).toBeUndefined();
  });

  const input = assessmentDraftInputSchema.parse(body());
  const accept = (output: unknown, request = input) => acceptAssessmentDraft(JSON.stringify(output), request);

  it('accepts exactly what was asked; the service assigns item ids, dedupes cited ids and keeps keys educator-only', () => {
    const result = accept(draft());
    expect(result?.items.map((i) => i.itemId)).toEqual(['item-1', 'item-2']);
    expect(result?.items[1]).toMatchObject({
      type: 'short-answer',
      dokLevel: 2,
      alignment: { standardIds: ['std-1'], learningTargetIds: ['lt-1'], sourceIds: ['src-1'] },
      educatorOnly: { answerKey: { sampleAnswer: expect.stringContaining('two eighths') } },
    });
    // A choice item's key is its choice; a stray sample answer is not kept.
    expect(accept(draft([mcItem({ answerKey: { choiceIds: ['A'], matches: [], sampleAnswer: 'A' } }), saItem()]))?.items[0]!.educatorOnly.answerKey.sampleAnswer).toBeNull();
  });

  it.each([
    ['not JSON', 'not json'],
    ['an unknown field', { ...draft(), notes: 'x' }],
    ['an unknown item field', draft([{ ...mcItem(), points: 2 }, saItem()])],
    ['one item too few', draft([mcItem()])],
    ['one item too many', draft([mcItem(), saItem(), mcItem()])],
    ['a type not requested', draft([mcItem(), saItem({ type: 'constructed-response' })])],
    ['a DOK level not requested', draft([mcItem({ dokLevel: 3 }), saItem()])],
    ['a requested type missing', draft([mcItem(), mcItem({ dokLevel: 2 })])],
    ['a requested DOK level missing', draft([mcItem(), saItem({ dokLevel: 1 })])],
    ['an unsubmitted standard', draft([mcItem({ standardIds: ['std-9'] }), saItem()])],
    ['an unsubmitted learning target', draft([mcItem({ learningTargetIds: ['lt-9'] }), saItem()])],
    ['an unsubmitted source', draft([mcItem(), saItem({ sourceIds: ['src-9'] })])],
    ['an item citing no standard', draft([mcItem({ standardIds: [] }), saItem()])],
    ['multiple-choice with 2 choices', draft([mcItem({ choices: [{ id: 'A', text: '1/2' }, { id: 'B', text: '2/8' }] }), saItem()])],
    ['multiple-choice with two correct choices', draft([mcItem({ answerKey: { choiceIds: ['A', 'B'], matches: [], sampleAnswer: null } }), saItem()])],
    ['multiple-choice keyed to a choice it does not have', draft([mcItem({ answerKey: { choiceIds: ['D'], matches: [], sampleAnswer: null } }), saItem()])],
    ['duplicate choice ids', draft([mcItem({ choices: [{ id: 'A', text: '1' }, { id: 'A', text: '2' }, { id: 'C', text: '3' }] }), saItem()])],
    ['short-answer without a sample answer', draft([mcItem(), saItem({ answerKey: { choiceIds: [], matches: [], sampleAnswer: null } })])],
    ['short-answer with choices', draft([mcItem(), saItem({ choices: [{ id: 'A', text: 'x' }] })])],
    ['a stem over 2,000 characters', draft([mcItem({ stem: 'x'.repeat(2_001) }), saItem()])],
    ['an empty title', draft(undefined, ' ')],
  ])('%s is invalid', (_name, output) => {
    expect(typeof output === 'string' ? acceptAssessmentDraft(output, input) : accept(output)).toBeNull();
  });

  it('true-false needs exactly two choices and one key; matching pairs every prompt once with a choice it has', () => {
    const request = assessmentDraftInputSchema.parse(body({ itemCount: 2, itemTypes: ['true-false', 'matching'], dokLevels: [1] }));
    const tf = (patch: Record<string, unknown> = {}) =>
      mcItem({ type: 'true-false', stem: '2/4 = 1/2.', choices: [{ id: 'T', text: 'True' }, { id: 'F', text: 'False' }], answerKey: { choiceIds: ['T'], matches: [], sampleAnswer: null }, ...patch });
    const prompts = [{ id: 'p1', text: '2/4' }, { id: 'p2', text: '2/8' }];
    const choices = [{ id: 'a', text: '1/2' }, { id: 'b', text: '1/4' }, { id: 'c', text: '3/4' }];
    const matching = (matches: unknown[], patch: Record<string, unknown> = {}) =>
      mcItem({ type: 'matching', stem: 'Match each fraction to its equal.', choices, matchPrompts: prompts, answerKey: { choiceIds: [], matches, sampleAnswer: null }, ...patch });
    const pairs = [{ promptId: 'p1', choiceId: 'a' }, { promptId: 'p2', choiceId: 'b' }];
    expect(accept(draft([tf(), matching(pairs)]), request)?.items.map((i) => i.type)).toEqual(['true-false', 'matching']);
    expect(accept(draft([tf({ choices: [...tf().choices, { id: 'M', text: 'Maybe' }] }), matching(pairs)]), request)).toBeNull();
    expect(accept(draft([tf(), matching(pairs.slice(0, 1))]), request)).toBeNull();
    expect(accept(draft([tf(), matching([pairs[0], { promptId: 'p1', choiceId: 'b' }])]), request)).toBeNull();
    expect(accept(draft([tf(), matching([pairs[0], { promptId: 'p2', choiceId: 'z' }])]), request)).toBeNull();
    expect(accept(draft([tf(), matching(pairs, { matchPrompts: prompts.slice(0, 1) })]), request)).toBeNull();
  });

  it('with fewer items than requested types or levels, each item only has to be of one of them', () => {
    const one = assessmentDraftInputSchema.parse(body({ itemCount: 1 }));
    expect(accept(draft([mcItem()]), one)?.items).toHaveLength(1);
    expect(accept(draft([saItem({ dokLevel: 1 })]), one)?.items).toHaveLength(1);
  });
});

describe('through the app', () => {
  const metered = useMeteredRuntime('education-assessment-draft');
  const { provider, ctx } = metered;

  const post = (b: unknown, key: string | null = randomUUID()) => metered.rt.request('POST', PATH, { body: b, headers: key === null ? {} : { 'idempotency-key': key } });
  type Answer = { kind: string; data: Record<string, unknown> & { items: { itemId: string }[]; receipt: Record<string, unknown> } };

  it('a valid draft settles: proposed, item ids assigned, one provider call under the strict schema, the receipt of the metered kind', async () => {
    provider.script(turn(draft()));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.data as Answer;
    expect(answer.kind).toBe('service.education-assessment-draft');
    expect(answer.data).toMatchObject({
      status: 'proposed',
      title: 'Equivalent fractions check',
      replayed: false,
      receipt: { operation: 'education-assessment-draft', outcome: 'settled', costMicrodollars: 380, usage: { inputTokens: 300, outputTokens: 20 } },
    });
    expect(answer.data.generationId).toBe(answer.data.receipt['id']);
    expect(answer.data.items.map((i) => i.itemId)).toEqual(['item-1', 'item-2']);
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]!.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'assessment_draft', strict: true } } });
    const messages = provider.calls[0]!.body['messages'] as { role: string; content: string }[];
    expect(messages[0]!.content).toContain('Write exactly 2 items.');
    expect(messages[1]!.content.startsWith('<request>')).toBe(true);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(380);
  });

  it('the same key replays the stored draft without a second model call; another body with it is refused', async () => {
    provider.script(turn(draft()));
    const key = randomUUID();
    const first = (await post(body(), key)).data as Answer;
    const again = await post(body(), key);
    expect(again.statusCode).toBe(200);
    const replayed = again.data as Answer;
    expect(replayed.data).toMatchObject({ generationId: first.data.generationId, replayed: true, status: 'proposed', items: first.data.items });
    expect(provider.calls).toHaveLength(1);
    const other = await post(body({ itemCount: 3 }), key);
    expect(other.statusCode).toBe(422);
    expect(other.data).toMatchObject({ code: 'idempotency_key_reused' });
    expect(provider.calls).toHaveLength(1);
  });

  it('an answer citing an unsubmitted standard is asked again once, then refused as invalid with both attempts charged', async () => {
    const invalid = draft([mcItem({ standardIds: ['std-unsubmitted'] }), saItem()]);
    provider.script(turn(invalid), turn(invalid));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode).toBe(502);
    expect(res.data).toMatchObject({ code: 'intelligence_output_invalid', receipt: { operation: 'education-assessment-draft', outcome: 'billable_failure', costMicrodollars: 760, usage: { inputTokens: 600, outputTokens: 40 } } });
    expect(provider.calls).toHaveLength(2);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(760);
  });

  it('an invalid first answer and a valid second one settle both attempts', async () => {
    provider.script(turn(draft([mcItem()])), turn(draft()));
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    expect((res.data as Answer).data.receipt).toMatchObject({ outcome: 'settled', costMicrodollars: 760 });
    expect(provider.calls).toHaveLength(2);
  });

  const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
  it.each([
    ['itemCount 0', body({ itemCount: 0 }), '/body/itemCount'],
    ['itemCount 31', body({ itemCount: 31 }), '/body/itemCount'],
    ['a fractional itemCount', body({ itemCount: 1.5 }), '/body/itemCount'],
    ['no item types', body({ itemTypes: [] }), '/body/itemTypes'],
    ['an unknown item type', body({ itemTypes: ['essay'] }), '/body/itemTypes/0'],
    ['a repeated item type', body({ itemTypes: ['matching', 'matching'] }), '/body/itemTypes/1'],
    ['no DOK levels', body({ dokLevels: [] }), '/body/dokLevels'],
    ['DOK level 5', body({ dokLevels: [5] }), '/body/dokLevels/0'],
    ['a repeated DOK level', body({ dokLevels: [2, 2] }), '/body/dokLevels/1'],
    ['no standards', body({ standards: [] }), '/body/standards'],
    ['21 standards', body({ standards: many(21, (i) => ({ id: `s${i}`, statement: 'A standard.' })) }), '/body/standards'],
    ['a repeated standard id', body({ standards: [{ id: 's', statement: 'A.' }, { id: 's', statement: 'B.' }] }), '/body/standards/1/id'],
    ['a standard statement of 1,001 characters', body({ standards: [{ id: 's', statement: 'x'.repeat(1_001) }] }), '/body/standards/0/statement'],
    ['no learning targets', body({ learningTargets: [] }), '/body/learningTargets'],
    ['21 learning targets', body({ learningTargets: many(21, (i) => ({ id: `t${i}`, statement: 'A target.', reviewed: true })) }), '/body/learningTargets'],
    ['an unreviewed learning target', body({ learningTargets: [{ id: 't', statement: 'A target.', reviewed: false }] }), '/body/learningTargets/0/reviewed'],
    ['a learning target without reviewed', body({ learningTargets: [{ id: 't', statement: 'A target.' }] }), '/body/learningTargets/0/reviewed'],
    ['a learning target of 1,001 characters', body({ learningTargets: [{ id: 't', statement: 'x'.repeat(1_001), reviewed: true }] }), '/body/learningTargets/0/statement'],
    ['11 sources', body({ sources: many(11, (i) => ({ id: `src${i}`, title: 'T', excerpt: 'E' })) }), '/body/sources'],
    ['a source excerpt of 8,001 characters', body({ sources: [{ id: 'src', title: 'T', excerpt: 'x'.repeat(8_001) }] }), '/body/sources/0/excerpt'],
    ['11 accessibility requirements', body({ accessibilityRequirements: many(11, () => 'Large print') }), '/body/accessibilityRequirements'],
    ['an accessibility requirement of 301 characters', body({ accessibilityRequirements: ['x'.repeat(301)] }), '/body/accessibilityRequirements/0'],
    ['a course title of 201 characters', body({ course: { title: 'x'.repeat(201) } }), '/body/course/title'],
    ['no course', { ...body(), course: undefined }, '/body/course'],
    ['a class-support group of 4', body({ educationContext: { kind: 'partner.education-context', version: 1, classSupport: [{ category: 'reading-support', groupSize: 4 }] } }), '/body/educationContext/classSupport/0/groupSize'],
    ['an unknown field', body({ learner: { name: 'Maria' } }), '/body/learner'],
    ['an unknown field in a standard', body({ standards: [{ id: 's', statement: 'A.', mastery: 0.4 }] }), '/body/standards/0/mastery'],
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
    const record = await post(body({ educationContext: { kind: 'partner.education-context', version: 1, instructionalFocus: 'Maria struggles with fractions' } }));
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
      expect(res.data).toMatchObject({ kind: 'service.education-assessment-draft', status: 'unavailable', missing: [{ reason: 'capability_not_configured' }] });
    } finally {
      await app.close();
    }
    expect(provider.calls).toHaveLength(0);
  });
});
