// artifacts/recommend through the real app (no provider configured): deterministic answers whatever
// the input order, every bound, strict fields, nothing submitted echoed back, the scope, and the
// scoring, recommendations and near-duplicate detection on small hand-made cases.
import { beforeAll, describe, expect, it } from 'vitest';
import { RECOMMEND_LIMITS } from '@hosted-notes/runtime-sdk';
import { MIN_SHINGLES, NEAR_DUPLICATE_JACCARD, RECOMMEND_WEIGHTS } from '../domain/education/recommend.ts';
import { useTestApp } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeClient } from './support/product-runtime.ts';

const ctx = useTestApp();
const PATH = '/intelligence/education/artifacts/recommend';

let rt: RuntimeClient;
beforeAll(async () => {
  rt = runtimeClient(ctx.app, (await buildRuntimeChain(ctx.db.pool)).secret);
});

type Body = Record<string, unknown>;
type Signal = { value: number | null; weight: number; contribution: number; matched: number | null; of: number | null };
type Result = {
  candidateId: string;
  rank: number;
  score: number;
  signals: Record<string, Signal>;
  recommendation: { action: string; reasons: string[] };
  nearDuplicates: { candidateId: string; similarity: number; basis: string }[];
};
type Answer = { recommendationId: string; candidateCount: number; results: Result[]; duplicateGroups: { groupId: string; candidateIds: string[]; representativeId: string }[] };

const long = (n: number) => 'x'.repeat(n);
const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
const candidate = (id: string, patch: Body = {}): Body => ({ id, title: `Artifact ${id}`, format: 'worksheet', locale: 'en-US', educatorAccepted: false, ...patch });
const post = (body: unknown) => rt.request('POST', PATH, { body });
async function recommend(body: Body): Promise<Answer> {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.data).toMatchObject({ kind: 'service.education-artifact-recommendations', status: 'complete', missing: [] });
  return (res.data as { data: Answer }).data;
}
const byId = (answer: Answer, id: string) => answer.results.find((r) => r.candidateId === id)!;

/** A seeded shuffle (mulberry32), so a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** 100 distinct words; `edit` replaces the words at the given positions. */
const excerpt = (edit: number[] = []) => many(100, (i) => (edit.includes(i) ? `changed${i}` : `word${i}`)).join(' ');

describe('determinism', () => {
  const standards = ['urn:case:4.NF.A.1', 'urn:case:4.NF.A.2', 'urn:case:4.NF.B.3'];
  const body = {
    goal: { description: 'Equivalent fractions with fraction strips and number lines', standardIds: standards, courseId: 'math-4', gradeLevels: ['4', '5'], format: 'worksheet', locale: 'en-US' },
    candidates: many(40, (i) =>
      candidate(`art-${(i * 7919) % 1000}`, {
        title: i % 3 === 0 ? 'Fraction strips warm-up' : 'Number line practice',
        summary: i % 2 === 0 ? 'Equivalent fractions on number lines' : undefined,
        // Every fifth shares an excerpt with a small edit: several duplicate groups.
        excerpt: i % 5 === 0 ? excerpt([i % 100]) : undefined,
        standardIds: standards.slice(0, i % 4),
        courseId: i % 2 === 0 ? 'math-4' : 'math-5',
        gradeLevels: i % 3 === 0 ? ['4', '5'] : ['5'],
        format: ['worksheet', 'quiz', 'slide-deck'][i % 3],
        locale: ['en-US', 'en-GB', 'es-MX'][i % 3],
        educatorAccepted: i % 4 === 0,
      }),
    ),
    limit: 50,
  };

  it('answers byte for byte the same for the candidates, standards and grade levels in any order', async () => {
    const first = await post(body);
    expect(first.statusCode, first.body).toBe(200);
    const answer = (first.data as { data: Answer }).data;
    expect(answer.results).toHaveLength(40);
    expect(answer.duplicateGroups.length).toBeGreaterThan(0);
    for (const seed of [1, 2, 3, 4, 5]) {
      const reordered = {
        limit: 50,
        candidates: shuffled(body.candidates, seed).map((c) => ({ ...c, standardIds: shuffled(c['standardIds'] as string[], seed) })),
        goal: { ...body.goal, standardIds: shuffled(standards, seed), gradeLevels: shuffled(body.goal.gradeLevels, seed) },
      };
      const again = await post(reordered);
      expect(again.body, `seed ${seed}`).toBe(first.body);
    }
  });

  it('ranks by score, then by candidate id; ranks run 1..n', async () => {
    const { results } = await recommend(body);
    results.forEach((result, index) => {
      expect(result.rank).toBe(index + 1);
      if (index === 0) return;
      const before = results[index - 1]!;
      expect(before.score > result.score || (before.score === result.score && before.candidateId < result.candidateId)).toBe(true);
    });
  });
});

describe('bounds and strict fields: 400 invalid_request with the pointer', () => {
  const base = () => ({ goal: { description: 'fractions' }, candidates: [candidate('a')] }) as { goal: Body; candidates: Body[]; [k: string]: unknown };
  const with_ = (patch: (b: ReturnType<typeof base>) => void) => {
    const b = base();
    patch(b);
    return b;
  };
  it.each([
    ['251 candidates', with_((b) => (b.candidates = many(251, (i) => candidate(`c${i}`)))), '/body/candidates'],
    ['no candidates', with_((b) => (b.candidates = [])), '/body/candidates'],
    ['a candidate id twice', with_((b) => (b.candidates = [candidate('a'), candidate('a')])), '/body/candidates/1/id'],
    ['a goal description of 1,001 characters', with_((b) => (b.goal['description'] = long(1_001))), '/body/goal/description'],
    ['an empty goal description', with_((b) => (b.goal['description'] = '')), '/body/goal/description'],
    ['21 goal standards', with_((b) => (b.goal['standardIds'] = many(21, (i) => `s${i}`))), '/body/goal/standardIds'],
    ['a goal standard id of 201 characters', with_((b) => (b.goal['standardIds'] = [long(201)])), '/body/goal/standardIds/0'],
    ['14 goal grade levels', with_((b) => (b.goal['gradeLevels'] = many(14, (i) => `${i}`))), '/body/goal/gradeLevels'],
    ['a goal grade level of 21 characters', with_((b) => (b.goal['gradeLevels'] = [long(21)])), '/body/goal/gradeLevels/0'],
    ['a goal course id of 201 characters', with_((b) => (b.goal['courseId'] = long(201))), '/body/goal/courseId'],
    ['an unknown goal format', with_((b) => (b.goal['format'] = 'podcast')), '/body/goal/format'],
    ['a goal locale that is not a language tag', with_((b) => (b.goal['locale'] = 'english')), '/body/goal/locale'],
    ['a candidate id of 201 characters', with_((b) => (b.candidates[0]!['id'] = long(201))), '/body/candidates/0/id'],
    ['a title of 301 characters', with_((b) => (b.candidates[0]!['title'] = long(301))), '/body/candidates/0/title'],
    ['a summary of 1,001 characters', with_((b) => (b.candidates[0]!['summary'] = long(1_001))), '/body/candidates/0/summary'],
    ['an excerpt of 2,001 characters', with_((b) => (b.candidates[0]!['excerpt'] = long(2_001))), '/body/candidates/0/excerpt'],
    ['a content hash that is not SHA-256 hex', with_((b) => (b.candidates[0]!['contentSha256'] = 'ABC')), '/body/candidates/0/contentSha256'],
    ['21 candidate standards', with_((b) => (b.candidates[0]!['standardIds'] = many(21, (i) => `s${i}`))), '/body/candidates/0/standardIds'],
    ['14 candidate grade levels', with_((b) => (b.candidates[0]!['gradeLevels'] = many(14, (i) => `${i}`))), '/body/candidates/0/gradeLevels'],
    ['an unknown candidate format', with_((b) => (b.candidates[0]!['format'] = 'podcast')), '/body/candidates/0/format'],
    ['a candidate without a locale', with_((b) => delete b.candidates[0]!['locale']), '/body/candidates/0/locale'],
    ['a candidate without educatorAccepted', with_((b) => delete b.candidates[0]!['educatorAccepted']), '/body/candidates/0/educatorAccepted'],
    ['a limit of 51', with_((b) => (b['limit'] = 51)), '/body/limit'],
    ['a limit of 0', with_((b) => (b['limit'] = 0)), '/body/limit'],
    ['an unknown top-level field', with_((b) => (b['threshold'] = 0.5)), '/body/threshold'],
    ['an unknown goal field', with_((b) => (b.goal['learnerName'] = 'x')), '/body/goal/learnerName'],
    ['an unknown candidate field', with_((b) => (b.candidates[0]!['content'] = 'the full text')), '/body/candidates/0/content'],
  ])('%s', async (_name, body, pointer) => {
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.data).toMatchObject({ code: 'invalid_request' });
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
  });

  it('accepts the largest request: 250 candidates with every field at its maximum, and 50 results', async () => {
    const body = {
      goal: {
        description: long(RECOMMEND_LIMITS.goalDescriptionChars),
        standardIds: many(20, (i) => `${i}`.padStart(200, 's')),
        courseId: long(200),
        gradeLevels: many(13, (i) => `${i}`.padStart(20, 'g')),
        format: 'worksheet',
        locale: 'en-US',
      },
      candidates: many(RECOMMEND_LIMITS.candidates, (i) => ({
        id: `${i}`.padStart(200, 'c'),
        title: long(300),
        summary: long(1_000),
        excerpt: `${i} ${long(1_990)}`.slice(0, 2_000),
        contentSha256: (i % 64).toString(16).padStart(64, 'a'),
        standardIds: many(20, (j) => `${(i + j) % 40}`.padStart(200, 's')),
        courseId: long(200),
        gradeLevels: many(13, (j) => `${j}`.padStart(20, 'g')),
        format: 'quiz',
        locale: 'es-MX',
        educatorAccepted: i % 2 === 0,
      })),
      limit: 50,
    };
    const answer = await recommend(body);
    expect(answer.candidateCount).toBe(250);
    expect(answer.results).toHaveLength(50);
  });

  it('returns 10 results by default and `limit` of them when asked', async () => {
    const candidates = many(12, (i) => candidate(`c${i}`));
    expect((await recommend({ goal: { description: 'fractions' }, candidates })).results).toHaveLength(10);
    expect((await recommend({ goal: { description: 'fractions' }, candidates, limit: 3 })).results.map((r) => r.candidateId)).toEqual(['c0', 'c1', 'c10']);
  });
});

describe('the answer', () => {
  it('never echoes the goal or any title, summary or excerpt', async () => {
    const res = await post({
      goal: { description: 'Zanzibar quokka migration patterns', standardIds: ['std-1'] },
      candidates: [
        candidate('one', { title: 'Xylophone marmalade worksheet', summary: 'Quixotic pangolin summary', excerpt: `Hullabaloo narwhal ${excerpt()}` }),
        candidate('two', { title: 'Xylophone marmalade copy', excerpt: `Hullabaloo narwhal ${excerpt()}` }),
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    for (const word of ['zanzibar', 'quokka', 'migration', 'xylophone', 'marmalade', 'quixotic', 'pangolin', 'hullabaloo', 'narwhal', 'word42']) {
      expect(res.body.toLowerCase()).not.toContain(word);
    }
  });

  it('needs intelligence.execute: 403 scope_missing', async () => {
    const narrow = runtimeClient(ctx.app, (await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] })).secret);
    const res = await narrow.request('POST', PATH, { body: { goal: { description: 'fractions' }, candidates: [candidate('a')] } });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('scoring', () => {
  it('weighs the signals that apply and renormalizes over them; the rest are null and contribute nothing', async () => {
    const answer = await recommend({
      goal: { description: 'Equivalent fractions strips', standardIds: ['S1', 'S2'] },
      candidates: [
        candidate('full', { title: 'Equivalent fractions with paper strips', standardIds: ['S2', 'S1'], educatorAccepted: true }),
        candidate('half', { title: 'Equivalent fractions', standardIds: ['S1'] }),
        candidate('none', { title: 'Volcanoes', educatorAccepted: true }),
      ],
    });
    const applicable = RECOMMEND_WEIGHTS.goal + RECOMMEND_WEIGHTS.standard + RECOMMEND_WEIGHTS.educatorAccepted;
    expect(answer.results.map((r) => [r.candidateId, r.score])).toEqual([
      ['full', 1],
      // goal 2 of 3 words, standards 1 of 2, not accepted.
      ['half', Math.round(((RECOMMEND_WEIGHTS.goal * 2) / 3 + RECOMMEND_WEIGHTS.standard / 2) / applicable * 10_000) / 10_000],
      ['none', Math.round((RECOMMEND_WEIGHTS.educatorAccepted / applicable) * 10_000) / 10_000],
    ]);
    const half = byId(answer, 'half');
    // (0.25 × 2/3 + 0.3 × 1/2) ÷ 0.65 with the documented weights.
    expect(half.score).toBe(0.4872);
    expect(half.signals['goal']).toMatchObject({ value: 0.6667, weight: RECOMMEND_WEIGHTS.goal, matched: 2, of: 3 });
    expect(half.signals['standard']).toMatchObject({ value: 0.5, weight: RECOMMEND_WEIGHTS.standard, matched: 1, of: 2 });
    for (const name of ['course', 'format', 'gradeLevel', 'locale']) expect(half.signals[name]).toMatchObject({ value: null, contribution: 0 });
    expect(half.recommendation).toEqual({ action: 'adapt', reasons: ['standards-partial'] });
    expect(byId(answer, 'full').recommendation).toEqual({ action: 'reuse', reasons: ['aligned'] });
  });

  it('breaks equal scores by candidate id', async () => {
    const answer = await recommend({ goal: { description: 'fractions' }, candidates: [candidate('zeta'), candidate('alpha'), candidate('mid')] });
    expect(answer.results.map((r) => [r.candidateId, r.rank])).toEqual([
      ['alpha', 1],
      ['mid', 2],
      ['zeta', 3],
    ]);
  });

  it('recommends translate, convert-format, differentiate, adapt or reuse, in that precedence, with every reason', async () => {
    const aligned = { title: 'Fractions', standardIds: ['S1'], courseId: 'C1', gradeLevels: ['4', 'K'], format: 'worksheet', locale: 'en-US', educatorAccepted: true };
    const answer = await recommend({
      goal: { description: 'fractions', standardIds: ['S1'], courseId: 'C1', gradeLevels: ['k', '4'], format: 'worksheet', locale: 'en-US' },
      candidates: [
        candidate('reuse', aligned),
        candidate('translate', { ...aligned, locale: 'es-MX', format: 'slide-deck' }),
        candidate('convert', { ...aligned, format: 'quiz' }),
        candidate('differentiate', { ...aligned, gradeLevels: ['4'], standardIds: [] }),
        candidate('adapt-standards', { ...aligned, standardIds: ['S9'] }),
        candidate('adapt-course', { ...aligned, courseId: 'C2' }),
        candidate('adapt-region', { ...aligned, locale: 'en-GB' }),
      ],
    });
    const recommendation = (id: string) => byId(answer, id).recommendation;
    expect(recommendation('reuse')).toEqual({ action: 'reuse', reasons: ['aligned'] });
    expect(recommendation('translate')).toEqual({ action: 'translate', reasons: ['language-differs', 'format-differs'] });
    expect(recommendation('convert')).toEqual({ action: 'convert-format', reasons: ['format-differs'] });
    expect(recommendation('differentiate')).toEqual({ action: 'differentiate', reasons: ['grade-levels-differ', 'standards-partial'] });
    expect(recommendation('adapt-standards')).toEqual({ action: 'adapt', reasons: ['standards-partial'] });
    expect(recommendation('adapt-course')).toEqual({ action: 'adapt', reasons: ['course-differs'] });
    expect(recommendation('adapt-region')).toEqual({ action: 'adapt', reasons: ['locale-region-differs'] });
    // Grade levels compare case-insensitively; another region of the same language is half a locale match.
    expect(byId(answer, 'reuse').signals['gradeLevel']).toMatchObject({ value: 1, matched: 2, of: 2 });
    expect(byId(answer, 'adapt-region').signals['locale']!.value).toBe(0.5);
    expect(byId(answer, 'translate').signals['locale']!.value).toBe(0);
    expect(answer.results[0]!.candidateId).toBe('reuse');
  });
});

describe('near-duplicates', () => {
  it(`pairs excerpts with a Jaccard of word 3-shingles of at least ${NEAR_DUPLICATE_JACCARD}, and groups them transitively`, async () => {
    const answer = await recommend({
      goal: { description: 'word1 word2', standardIds: ['S1'] },
      candidates: [
        candidate('a', { excerpt: excerpt(), standardIds: ['S1'], educatorAccepted: true }),
        // Three scattered edits: 89 of 107 shingles shared (0.8318).
        candidate('b', { excerpt: excerpt([20, 50, 80]) }),
        // Three more edits on top of b: a near-duplicate of b, not of a (0.6897).
        candidate('c', { excerpt: excerpt([20, 50, 80, 10, 35, 65]) }),
        // Four edits from a: 86 of 110 (0.7818), below the threshold.
        candidate('d', { excerpt: excerpt([20, 40, 60, 80]) }),
        candidate('e', { excerpt: many(100, (i) => `other${i}`).join(' ') }),
      ],
    });
    expect(byId(answer, 'a').nearDuplicates).toEqual([{ candidateId: 'b', similarity: 0.8318, basis: 'shingles' }]);
    expect(byId(answer, 'b').nearDuplicates.map((d) => d.candidateId)).toEqual(['a', 'c', 'd']);
    expect(byId(answer, 'd').nearDuplicates.map((d) => d.candidateId)).toEqual(['b']);
    expect(byId(answer, 'e').nearDuplicates).toEqual([]);
    expect(answer.duplicateGroups).toEqual([{ groupId: expect.stringMatching(/^dup_[0-9a-f]{24}$/), candidateIds: ['a', 'b', 'c', 'd'], representativeId: 'a' }]);
  });

  it(`needs at least ${MIN_SHINGLES} distinct shingles to compare texts; equal content hashes are duplicates whatever the text`, async () => {
    const nineWords = 'one two three four five six seven eight nine';
    const tenWords = `${nineWords} ten`;
    const hash = 'a'.repeat(64);
    const answer = await recommend({
      goal: { description: 'fractions' },
      candidates: [
        candidate('short-1', { title: nineWords }),
        candidate('short-2', { title: nineWords }),
        candidate('long-1', { title: tenWords }),
        candidate('long-2', { title: tenWords }),
        candidate('hash-1', { title: 'Fractions', contentSha256: hash }),
        candidate('hash-2', { title: 'Volcanoes', contentSha256: hash }),
      ],
    });
    expect(byId(answer, 'short-1').nearDuplicates).toEqual([]);
    expect(byId(answer, 'long-1').nearDuplicates).toEqual([{ candidateId: 'long-2', similarity: 1, basis: 'shingles' }]);
    expect(byId(answer, 'hash-1').nearDuplicates).toEqual([{ candidateId: 'hash-2', similarity: 1, basis: 'content-sha256' }]);
    expect(answer.duplicateGroups.map((g) => g.candidateIds)).toEqual([
      ['hash-1', 'hash-2'],
      ['long-1', 'long-2'],
    ]);
  });

  it('reports groups over all candidates, beyond the results returned, with an id of their members', async () => {
    const body = { goal: { description: 'fractions' }, candidates: [candidate('x1', { excerpt: excerpt() }), candidate('x2', { excerpt: excerpt() }), candidate('a0')], limit: 1 };
    const answer = await recommend(body);
    expect(answer.results.map((r) => r.candidateId)).toEqual(['a0']);
    expect(answer.duplicateGroups).toEqual([{ groupId: expect.any(String), candidateIds: ['x1', 'x2'], representativeId: 'x1' }]);
    const other = await recommend({ ...body, goal: { description: 'something else' }, candidates: [...body.candidates, candidate('b0')] });
    expect(other.duplicateGroups[0]!.groupId).toBe(answer.duplicateGroups[0]!.groupId);
    expect(other.recommendationId).not.toBe(answer.recommendationId);
  });
});
