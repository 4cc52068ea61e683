// practice-review: proposed spaced retrieval practice for one standard over two to five sessions,
// from teacher-confirmed aggregate evidence only (no learner identity, learner-record language
// refused), metered through the structured runner (at most two attempts), replayed by key, strict
// and bounded input. Scripted OpenAI-compatible provider on loopback, real Postgres and Temporal;
// the evidence check and the accept check also unit-tested on their own.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { envelopeSchema } from '@hosted-notes/runtime-sdk';
import { educationExamples } from '../api/routes/product/education/index.ts';
import { acceptPracticeReview, checkPracticeEvidence, planProblem } from '../domain/education/practice-review.ts';
import { AppError } from '../domain/errors.ts';
import { practicePlanSchema, practiceReviewInputSchema, practiceReviewSchema } from '@hosted-notes/runtime-sdk';
import { buildTestApp } from './support/app.ts';
import { useMeteredRuntime } from './support/metered-runtime.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { orgLedger, reservations } from './support/intelligence.ts';

const metered = useMeteredRuntime('education-practice-review');
const { provider, ctx } = metered;

const STANDARD = 'urn:case:4.NF.A.1';
const observation = (patch: Record<string, unknown> = {}) => ({ category: 'misconception', description: 'Adds the same number to the numerator and the denominator.', share: 0.4, ...patch });
const evidence = (patch: Record<string, unknown> = {}) => ({ teacherConfirmed: true, groupSize: 25, observations: [observation()], ...patch });
const body = (patch: Record<string, unknown> = {}) => ({
  course: { id: 'course-math-4', title: 'Grade 4 Mathematics', gradeLevels: ['4'] },
  standard: { id: STANDARD, code: '4.NF.A.1', statement: 'Explain why fractions are equivalent.' },
  cadence: { sessions: 2, proposalsPerSession: 2 },
  evidence: evidence(),
  ...patch,
});

const poll = (patch: Record<string, unknown> = {}) => ({
  kind: 'poll',
  learnerFacing: { prompt: 'Which fraction equals 2/3?', choices: ['3/4', '4/6'], categories: [] },
  educatorOnly: { answerGuide: '4/6; 3/4 shows the adding misconception.', standardId: STANDARD, standardsRationale: 'Targets (n × a)/(n × b).', cautions: [] },
  ...patch,
});
const shortAnswer = () => ({
  kind: 'short-answer',
  learnerFacing: { prompt: 'Explain why 1/2 and 3/6 are equal.', choices: [], categories: [] },
  educatorOnly: { answerGuide: 'Each half splits into three sixths.', standardId: STANDARD, standardsRationale: 'Asks for the explanation.', cautions: ['Offer strips.'] },
});
const sort = () => ({
  kind: 'sort',
  learnerFacing: { prompt: 'Sort the pairs.', choices: ['1/3 and 2/6', '2/5 and 3/6', '3/4 and 6/8'], categories: ['Equal', 'Not equal'] },
  educatorOnly: { answerGuide: 'Equal: 1/3 and 2/6, 3/4 and 6/8.', standardId: STANDARD, standardsRationale: 'Discriminates the rule.', cautions: [] },
});
const plan = (sessions: unknown[][] = [[poll(), shortAnswer()], [sort(), poll()]]) => ({
  sessions: sessions.map((proposals, i) => ({ session: i + 1, focus: `Focus ${i + 1}`, proposals })),
  reviewChecklist: ['Each answer guide matches its item.'],
});
const answer = (output: unknown) => ({ kind: 'chat' as const, chunks: [JSON.stringify(output)], usage: { prompt_tokens: 300, completion_tokens: 20 } });
const post = (b: unknown, key = randomUUID()) => metered.rt.request('POST', '/intelligence/education/practice-review', { body: b, headers: { 'idempotency-key': key } });
type Answer = { kind: string; status: string; data: Record<string, unknown> };

describe('a plan the check accepts', () => {
  it('is metered (one provider call, receipt education-practice-review) and proposed, with educator-only guides apart from what learners see', async () => {
    provider.script(answer(plan()));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    const env = res.data as Answer;
    expect(env.kind).toBe('service.education-practice-review');
    expect(env.data).toMatchObject({
      status: 'proposed',
      courseId: 'course-math-4',
      standardId: STANDARD,
      plan: { sessions: [{ session: 1 }, { session: 2 }], reviewChecklist: ['Each answer guide matches its item.'] },
      replayed: false,
      receipt: { operation: 'education-practice-review', outcome: 'settled', costMicrodollars: 380, usage: { inputTokens: 300, outputTokens: 20 } },
    });
    const first = (env.data['plan'] as { sessions: { proposals: Record<string, Record<string, unknown>>[] }[] }).sessions[0]!.proposals[0]!;
    expect(Object.keys(first['learnerFacing']!).sort()).toEqual(['categories', 'choices', 'prompt']);
    expect(first['educatorOnly']).toMatchObject({ standardId: STANDARD, answerGuide: expect.any(String) });
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(380);
    expect(provider.calls).toHaveLength(1);
    const sent = provider.calls[0]!.body;
    expect(sent).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'education_practice_review', strict: true } } });
    const messages = sent['messages'] as { role: string; content: string }[];
    expect(messages[0]!.content).toContain('Plan exactly 2 sessions');
    expect(messages[1]!.content.startsWith('<request>')).toBe(true);
  });

  it('the same key replays the stored plan with no second model call', async () => {
    provider.script(answer(plan()));
    const key = randomUUID();
    const first = await post(body(), key);
    expect(first.statusCode, first.body).toBe(200);
    const again = await post(body(), key);
    expect(again.statusCode, again.body).toBe(200);
    expect((again.data as Answer).data).toEqual({ ...(first.data as Answer).data, replayed: true });
    expect(provider.calls).toHaveLength(1);
  });
});

describe('a plan the check refuses is asked again once, then refused with both attempts charged', () => {
  it('one session for a cadence of two, twice: 502 intelligence_output_invalid, two calls, both charged', async () => {
    const short = plan([[poll(), shortAnswer()]]);
    provider.script(answer(short), answer(short));
    const before = await orgLedger(ctx.db.pool, metered.chain.organizationId);
    const res = await post(body());
    expect(res.statusCode).toBe(502);
    expect(res.data).toMatchObject({ code: 'intelligence_output_invalid', receipt: { operation: 'education-practice-review', outcome: 'billable_failure', costMicrodollars: 760, usage: { inputTokens: 600, outputTokens: 40 } } });
    expect(provider.calls).toHaveLength(2);
    expect((await orgLedger(ctx.db.pool, metered.chain.organizationId)).committed - before.committed).toBe(760);
  });

  it('a proposal citing another standard, then a valid plan: settled at the usage of both attempts', async () => {
    const other = { ...poll(), educatorOnly: { ...poll().educatorOnly, standardId: 'urn:case:5.NF.B.3' } };
    provider.script(answer(plan([[other, shortAnswer()], [sort(), poll()]])), answer(plan()));
    const res = await post(body());
    expect(res.statusCode, res.body).toBe(200);
    expect((res.data as Answer).data['receipt']).toMatchObject({ outcome: 'settled', costMicrodollars: 760 });
    expect(provider.calls).toHaveLength(2);
  });
});

describe('the request is refused before anything is reserved', () => {
  it.each([
    ['one session', body({ cadence: { sessions: 1 } }), '/body/cadence/sessions'],
    ['six sessions', body({ cadence: { sessions: 6 } }), '/body/cadence/sessions'],
    ['no cadence', { ...body(), cadence: undefined }, '/body/cadence'],
    ['five proposals a session', body({ cadence: { sessions: 2, proposalsPerSession: 5 } }), '/body/cadence/proposalsPerSession'],
    ['an unknown kind', body({ cadence: { sessions: 2, kinds: ['essay'] } }), '/body/cadence/kinds/0'],
    ['a repeated kind', body({ cadence: { sessions: 2, kinds: ['poll', 'poll'] } }), '/body/cadence/kinds'],
    ['spacing of 31 days', body({ cadence: { sessions: 2, spacingDays: 31 } }), '/body/cadence/spacingDays'],
    ['evidence the teacher did not confirm', body({ evidence: evidence({ teacherConfirmed: false }) }), '/body/evidence/teacherConfirmed'],
    ['evidence of a group of four', body({ evidence: evidence({ groupSize: 4 }) }), '/body/evidence/groupSize'],
    ['no observations', body({ evidence: evidence({ observations: [] }) }), '/body/evidence/observations'],
    ['11 observations', body({ evidence: evidence({ observations: Array.from({ length: 11 }, () => observation()) }) }), '/body/evidence/observations'],
    ['an observation of 301 characters', body({ evidence: evidence({ observations: [observation({ description: 'd'.repeat(301) })] }) }), '/body/evidence/observations/0/description'],
    ['a count of four learners', body({ evidence: evidence({ observations: [observation({ share: undefined, count: 4 })] }) }), '/body/evidence/observations/0/count'],
    ['a count larger than the group', body({ evidence: evidence({ observations: [observation({ share: undefined, count: 26 })] }) }), '/body/evidence/observations/0/count'],
    ['a share standing for fewer than five learners', body({ evidence: evidence({ observations: [observation({ share: 0.1 })] }) }), '/body/evidence/observations/0/share'],
    ['both a share and a count', body({ evidence: evidence({ observations: [observation({ count: 10 })] }) }), '/body/evidence/observations/0/share'],
    ['neither a share nor a count', body({ evidence: evidence({ observations: [observation({ share: undefined })] }) }), '/body/evidence/observations/0/share'],
    ['an evidence note of 1,001 characters', body({ evidence: evidence({ note: 'n'.repeat(1_001) }) }), '/body/evidence/note'],
    ['a learner identity on an observation', body({ evidence: evidence({ observations: [observation({ learnerId: 'stu-1042' })] }) }), '/body/evidence/observations/0/learnerId'],
    ['a learner list in the evidence', body({ evidence: evidence({ learners: ['Maria'] }) }), '/body/evidence/learners'],
    ['a second standard', body({ standards: [{ id: 'x', statement: 'y' }] }), '/body/standards'],
    ['a standard statement of 1,001 characters', body({ standard: { id: STANDARD, statement: 's'.repeat(1_001) } }), '/body/standard/statement'],
  ])('%s: 400 naming its pointer', async (_name, b, pointer) => {
    const held = (await reservations(ctx.db.pool, metered.chain.installationId)).length;
    const res = await post(b);
    expect(res.statusCode, res.body).toBe(400);
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, metered.chain.installationId)).toHaveLength(held);
  });

  it.each([
    ['a name before a learner verb', { observations: [observation(), observation({ description: 'Jayden struggles with the folding.' })] }, '/body/evidence/observations/1/description', 'Jayden'],
    ['a student id', { observations: [observation({ description: 'Student ID 4471 confuses the parts.' })] }, '/body/evidence/observations/0/description', '4471'],
    ['a diagnosis in the note', { note: 'Two of them have dyslexia diagnoses.' }, '/body/evidence/note', 'dyslexia'],
  ])('learner-record language (%s): 422 naming the field and the rule, never the text; nothing reserved', async (_name, patch, pointer, text) => {
    const held = (await reservations(ctx.db.pool, metered.chain.installationId)).length;
    const res = await post(body({ evidence: evidence(patch) }));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.data).toMatchObject({ code: 'education_context_learner_record', errors: [{ pointer, code: expect.any(String) }] });
    // The answer never echoes the text (its requestId, a random UUID, may happen to hold the digits of "4471").
    const { requestId: _requestId, ...answer } = res.data as Record<string, unknown>;
    expect(JSON.stringify(answer)).not.toContain(text);
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, metered.chain.installationId)).toHaveLength(held);
  });

  it('learner-record language in the education context: 422', async () => {
    const res = await post(body({ educationContext: { kind: 'partner.education-context', version: 1, instructionalFocus: 'Ms. Rivera asked for more fractions practice' } }));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.data).toMatchObject({ code: 'education_context_learner_record', errors: [{ pointer: '/body/educationContext/instructionalFocus' }] });
  });

  it('without intelligence.execute: 403; with no provider configured: the unavailable envelope', async () => {
    const narrow = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const refused = await runtimeClient(ctx.app, narrow.secret).request('POST', '/intelligence/education/practice-review', { body: body(), headers: { 'idempotency-key': randomUUID() } });
    expect(refused.statusCode).toBe(403);
    expect(refused.data).toMatchObject({ code: 'scope_missing' });
    const app = await buildTestApp(ctx.db.pool);
    try {
      const res = await runtimeClient(app, metered.chain.secret).request('POST', '/intelligence/education/practice-review', { body: body(), headers: { 'idempotency-key': randomUUID() } });
      expect(res.statusCode).toBe(200);
      expect(res.data).toMatchObject({ kind: 'service.education-practice-review', status: 'unavailable', data: null, missing: [{ reason: 'capability_not_configured' }] });
    } finally {
      await app.close();
    }
    expect(provider.calls).toHaveLength(0);
  });
});

describe('the checks on their own (no app)', () => {
  const input = practiceReviewInputSchema.parse(body());
  const accepted = (output: unknown) => acceptPracticeReview(JSON.stringify(output), input);

  it('accepts a plan of the cadence, the kinds and the standard', () => {
    expect(accepted(plan())).toEqual(practicePlanSchema.parse(plan()));
  });

  it.each([
    ['three sessions for a cadence of two', plan([[poll(), sort()], [sort(), poll()], [poll(), poll()]])],
    ['sessions out of order', { ...plan(), sessions: plan().sessions.reverse() }],
    ['one proposal where two were asked', plan([[poll()], [sort(), poll()]])],
    ['a poll with one option', plan([[poll({ learnerFacing: { prompt: 'p', choices: ['a'], categories: [] } }), sort()], [sort(), poll()]])],
    ['a sort with no categories', plan([[{ ...sort(), learnerFacing: { prompt: 'p', choices: ['a', 'b', 'c'], categories: [] } }, poll()], [sort(), poll()]])],
    ['a short answer with choices', plan([[{ ...shortAnswer(), learnerFacing: { prompt: 'p', choices: ['a'], categories: [] } }, poll()], [sort(), poll()]])],
    ['an unknown field', { ...plan(), learnerNames: [] }],
    ['an answer guide of 1,001 characters', plan([[poll({ educatorOnly: { ...poll().educatorOnly, answerGuide: 'g'.repeat(1_001) } }), sort()], [sort(), poll()]])],
    ['four cautions', plan([[poll({ educatorOnly: { ...poll().educatorOnly, cautions: ['a', 'b', 'c', 'd'] } }), sort()], [sort(), poll()]])],
    ['no review checklist', { ...plan(), reviewChecklist: [] }],
  ])('refuses %s', (_name, output) => {
    expect(accepted(output)).toBeNull();
  });

  it('refuses a kind that was not requested', () => {
    const pollsOnly = practiceReviewInputSchema.parse(body({ cadence: { sessions: 2, proposalsPerSession: 2, kinds: ['poll'] } }));
    expect(planProblem(practicePlanSchema.parse(plan()), pollsOnly)).toBe('session 1: a short-answer proposal was not requested');
    expect(planProblem(practicePlanSchema.parse(plan([[poll(), poll()], [poll(), poll()]])), pollsOnly)).toBeNull();
  });

  it('aggregate class language passes the evidence check; a person does not', () => {
    expect(() => checkPracticeEvidence(input)).not.toThrow();
    const named = practiceReviewInputSchema.parse(body({ evidence: evidence({ observations: [observation({ description: 'Maria needs help with numerators.' })] }) }));
    expect(() => checkPracticeEvidence(named)).toThrow(AppError);
  });

  it('the OpenAPI example request and answer are valid by the published schemas, and their evidence passes the check', () => {
    const example = educationExamples['educationPracticeReview'] as { request: { value: unknown }; responses: { 200: { value: unknown } } };
    const request = practiceReviewInputSchema.parse(example.request.value);
    expect(() => checkPracticeEvidence(request)).not.toThrow();
    const response = envelopeSchema('service.education-practice-review', practiceReviewSchema).parse(example.responses[200].value);
    expect(planProblem(response.data!.plan, request)).toBeNull();
  });
});
