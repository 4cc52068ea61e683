// POST /intelligence/education/standards/crosswalk through the real app with no model provider:
// determinism under reordering, every bound (the maximum accepted, one more refused with a
// pointer), strict objects, nothing submitted echoed, the scope, and the documented scoring on
// small hand-made slices (docs/education-crosswalk.md).
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeClient } from './support/product-runtime.ts';

const ctx = useTestApp();
let rt: RuntimeClient;
beforeAll(async () => {
  rt = runtimeClient(ctx.app, (await buildRuntimeChain(ctx.db.pool)).secret);
});

const PATH = '/intelligence/education/standards/crosswalk';
type Item = {
  identifier: string;
  humanCodingScheme?: string;
  fullStatement: string;
  educationLevel?: string[];
  subject?: string[];
  domain?: string;
  conceptKeywords?: string[];
};
type Body = Record<string, unknown>;
type Signal = { name: string; value: number; weight: number | null; contribution: number | null };
type Candidate = {
  candidateId: string;
  sourceItem: string;
  targetItem: string;
  confidence: number;
  basis: string;
  signals: Signal[];
  cautions: string[];
  rationale: string;
  status: string;
  requiresQualifiedReview: boolean;
};
type Crosswalk = {
  crosswalkId: string;
  candidates: Candidate[];
  unmatchedSourceItems: string[];
  counts: { sourceItems: number; targetItems: number; pairsConsidered: number; candidates: number };
  scoring: { minConfidence: number; maxCandidatesPerItem: number; weights: Record<string, number> };
};

const slice = (identifier: string, items: Item[]) => ({ framework: { identifier, title: `Framework ${identifier}` }, items });
const body = (source: Item[], target: Item[], options?: Record<string, unknown>): Body => ({
  source: slice('src-framework', source),
  target: slice('tgt-framework', target),
  ...(options ? { options } : {}),
});
const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
const long = (n: number) => 'x'.repeat(n);

async function crosswalk(b: Body) {
  const res = await rt.request('POST', PATH, { body: b });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.data).toMatchObject({ kind: 'service.education-standards-crosswalk', status: 'complete' });
  return { body: res.body, data: (res.data as { data: Crosswalk }).data };
}
const signal = (c: Candidate, name: string) => c.signals.find((s) => s.name === name);
const pair = (x: Crosswalk, source: string, target: string) => x.candidates.find((c) => c.sourceItem === source && c.targetItem === target);

/** A deterministic shuffle (a seeded LCG), so a failure reproduces. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A realistic slice: grades K–5, two domains per grade, statements that share some words. */
function gradeBand(prefix: string, codePrefix: string, count: number): Item[] {
  const topics = ['fractions', 'place value', 'measurement', 'geometry shapes', 'data graphs', 'multiplication'];
  return many(count, (i) => {
    const grade = i % 6;
    const topic = topics[i % topics.length]!;
    return {
      identifier: `${prefix}-${String(i).padStart(3, '0')}`,
      humanCodingScheme: `${codePrefix}${grade === 0 ? 'K' : grade}.${['NF', 'NBT', 'MD', 'G'][i % 4]}.A.${(i % 5) + 1}`,
      fullStatement: `Students reason about ${topic} with models and explain strategy number ${i % 7} for problems of kind ${i % 3}.`,
      educationLevel: [grade === 0 ? 'KG' : `0${grade}`, ...(i % 5 === 0 ? ['06'] : [])],
      subject: ['Mathematics'],
      domain: `Domain ${topic}`,
      conceptKeywords: [topic, `strategy ${i % 7}`],
    };
  });
}

describe('determinism', () => {
  it('the same slices in any order, with their lists reordered, answer byte for byte the same', async () => {
    const source = gradeBand('s', '', 60);
    const target = gradeBand('t', 'MA.', 60);
    const first = await crosswalk(body(source, target, { minConfidence: 0.2, maxCandidatesPerItem: 5 }));
    expect(first.data.candidates.length).toBeGreaterThan(60);
    const reorder = (items: Item[], seed: number) =>
      shuffled(items, seed).map((item) => ({
        conceptKeywords: [...(item.conceptKeywords ?? [])].reverse(),
        educationLevel: [...(item.educationLevel ?? [])].reverse(),
        fullStatement: item.fullStatement,
        identifier: item.identifier,
        humanCodingScheme: item.humanCodingScheme!,
        subject: item.subject!,
        domain: item.domain!,
      }));
    for (const seed of [1, 2, 3]) {
      const again = await crosswalk({
        options: { maxCandidatesPerItem: 5, minConfidence: 0.2 },
        target: slice('tgt-framework', reorder(target, seed + 10)),
        source: slice('src-framework', reorder(source, seed)),
      });
      expect(again.body).toBe(first.body);
    }
  });

  it('candidates are sorted by source item, confidence (highest first), then target item; candidate ids are stable pair ids', async () => {
    const { data } = await crosswalk(body(gradeBand('s', '', 30), gradeBand('t', '', 30), { minConfidence: 0, maxCandidatesPerItem: 5 }));
    const keys = data.candidates.map((c) => [c.sourceItem, -c.confidence, c.targetItem] as const);
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0)));
    expect(keys).toEqual(sorted);
    // The id names the pair: the same pair in another request has the same id.
    const one = data.candidates[0]!;
    const alone = await crosswalk(body(gradeBand('s', '', 30).filter((i) => i.identifier === one.sourceItem), gradeBand('t', '', 30), { minConfidence: 0 }));
    expect(pair(alone.data, one.sourceItem, one.targetItem)?.candidateId).toBe(one.candidateId);
    expect(new Set(data.candidates.map((c) => c.candidateId)).size).toBe(data.candidates.length);
  });
});

describe('bounds and strict objects', () => {
  const item = (i: number): Item => ({ identifier: `item-${i}`, fullStatement: `Statement ${i} about fractions.` });
  const base = () => body([item(0), item(1)], [item(0), item(1)]) as { source: { framework: Body; items: Body[] }; target: { framework: Body; items: Body[] } } & Body;
  const with_ = (patch: (b: ReturnType<typeof base>) => void) => {
    const b = base();
    patch(b);
    return b;
  };

  it.each([
    ['1,001 source items', with_((b) => (b.source.items = many(1_001, item))), '/body/source/items'],
    ['1,001 target items', with_((b) => (b.target.items = many(1_001, item))), '/body/target/items'],
    ['no source items', with_((b) => (b.source.items = [])), '/body/source/items'],
    ['a repeated item identifier', with_((b) => (b.target.items[1]!['identifier'] = 'item-0')), '/body/target/items/1/identifier'],
    ['a statement of 2,001 characters', with_((b) => (b.source.items[0]!['fullStatement'] = long(2_001))), '/body/source/items/0/fullStatement'],
    ['an empty statement', with_((b) => (b.source.items[0]!['fullStatement'] = '')), '/body/source/items/0/fullStatement'],
    ['no statement', with_((b) => delete b.source.items[0]!['fullStatement']), '/body/source/items/0/fullStatement'],
    ['an item identifier of 201 characters', with_((b) => (b.source.items[0]!['identifier'] = long(201))), '/body/source/items/0/identifier'],
    ['a code of 101 characters', with_((b) => (b.source.items[0]!['humanCodingScheme'] = long(101))), '/body/source/items/0/humanCodingScheme'],
    ['17 education levels', with_((b) => (b.source.items[0]!['educationLevel'] = many(17, (i) => `${i}`))), '/body/source/items/0/educationLevel'],
    ['an education level of 21 characters', with_((b) => (b.source.items[0]!['educationLevel'] = [long(21)])), '/body/source/items/0/educationLevel/0'],
    ['6 subjects', with_((b) => (b.target.items[0]!['subject'] = many(6, (i) => `s${i}`))), '/body/target/items/0/subject'],
    ['a subject of 101 characters', with_((b) => (b.target.items[0]!['subject'] = [long(101)])), '/body/target/items/0/subject/0'],
    ['a domain of 201 characters', with_((b) => (b.target.items[0]!['domain'] = long(201))), '/body/target/items/0/domain'],
    ['11 concept keywords', with_((b) => (b.target.items[0]!['conceptKeywords'] = many(11, (i) => `k${i}`))), '/body/target/items/0/conceptKeywords'],
    ['a concept keyword of 61 characters', with_((b) => (b.target.items[0]!['conceptKeywords'] = [long(61)])), '/body/target/items/0/conceptKeywords/0'],
    ['a framework identifier of 201 characters', with_((b) => (b.source.framework['identifier'] = long(201))), '/body/source/framework/identifier'],
    ['a framework title of 301 characters', with_((b) => (b.source.framework['title'] = long(301))), '/body/source/framework/title'],
    ['a publisher of 201 characters', with_((b) => (b.target.framework['publisher'] = long(201))), '/body/target/framework/publisher'],
    ['minConfidence above 1', with_((b) => (b['options'] = { minConfidence: 1.01 })), '/body/options/minConfidence'],
    ['minConfidence below 0', with_((b) => (b['options'] = { minConfidence: -0.01 })), '/body/options/minConfidence'],
    ['maxCandidatesPerItem 6', with_((b) => (b['options'] = { maxCandidatesPerItem: 6 })), '/body/options/maxCandidatesPerItem'],
    ['maxCandidatesPerItem 0', with_((b) => (b['options'] = { maxCandidatesPerItem: 0 })), '/body/options/maxCandidatesPerItem'],
    ['a fractional maxCandidatesPerItem', with_((b) => (b['options'] = { maxCandidatesPerItem: 2.5 })), '/body/options/maxCandidatesPerItem'],
    ['an unknown top-level field', with_((b) => (b['threshold'] = 0.5)), '/body/threshold'],
    ['an unknown option', with_((b) => (b['options'] = { strategy: 'fuzzy' })), '/body/options/strategy'],
    ['an unknown slice field', with_((b) => ((b.source as Body)['associations'] = [])), '/body/source/associations'],
    ['an unknown framework field', with_((b) => (b.target.framework['uri'] = 'https://example.org')), '/body/target/framework/uri'],
    ['an unknown item field', with_((b) => (b.target.items[0]!['notes'] = 'x')), '/body/target/items/0/notes'],
    ['no target', with_((b) => delete (b as Body)['target']), '/body/target'],
  ])('%s is refused with invalid_request and a pointer', async (_name, b, pointer) => {
    const res = await rt.request('POST', PATH, { body: b });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.data).toMatchObject({ code: 'invalid_request' });
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
  });

  it('every maximum at once is accepted: 1,000 items a slice, the longest strings and lists, the option bounds', async () => {
    const biggest = (i: number, side: string): Item => ({
      identifier: `${side}${String(i).padStart(4, '0')}${long(195)}`,
      humanCodingScheme: `${i}.NF.A.1${long(93)}`.slice(0, 100),
      fullStatement: `Fractions ${i} ${long(1_980)}`.slice(0, 2_000),
      educationLevel: many(16, (g) => `${String(g).padStart(2, '0')}${long(18)}`),
      subject: many(5, (s) => `subject ${s} ${long(90)}`),
      domain: long(200),
      conceptKeywords: many(10, (k) => `keyword ${k} ${long(50)}`),
    });
    const b = {
      source: { framework: { identifier: long(200), title: long(300), publisher: long(200) }, items: many(1_000, (i) => biggest(i, 's')) },
      target: { framework: { identifier: `t${long(199)}`, title: long(300), publisher: long(200) }, items: many(1_000, (i) => biggest(i, 't')) },
      options: { minConfidence: 1, maxCandidatesPerItem: 5 },
    };
    const { data } = await crosswalk(b);
    expect(data.counts).toMatchObject({ sourceItems: 1_000, targetItems: 1_000 });
    // Item i of each side agrees on everything, so every weighted signal is at full strength and the
    // weights sum to exactly 1; every other pair shares only some words and stays below 1.
    expect(data.candidates).toHaveLength(1_000);
    expect(data.candidates.every((c) => c.confidence === 1 && c.basis === 'weighted_signals' && c.signals.length === 6 && c.sourceItem.slice(1, 5) === c.targetItem.slice(1, 5))).toBe(true);
    expect(data.unmatchedSourceItems).toEqual([]);
    const lowest = await crosswalk(body([item(0)], [item(1)], { minConfidence: 0, maxCandidatesPerItem: 1 }));
    expect(lowest.data.scoring).toMatchObject({ minConfidence: 0, maxCandidatesPerItem: 1 });
  });

  it('options are optional, with the documented defaults (0.35, 3)', async () => {
    const { data } = await crosswalk(body([item(0)], [item(1)]));
    expect(data.scoring).toMatchObject({ minConfidence: 0.35, maxCandidatesPerItem: 3 });
  });
});

describe('nothing submitted is echoed', () => {
  it('statements, codes, titles, publishers, domains, grades, subjects and keywords never appear in the answer; identifiers do', async () => {
    const source: Item[] = [
      {
        identifier: 'src-1',
        humanCodingScheme: 'ZQX.4.NF.A.1',
        fullStatement: 'Explain quokkafraction equivalence with zebrastrip models and compare parts.',
        educationLevel: ['04'],
        subject: ['Mathematicsquill'],
        domain: 'Narwhal Operations',
        conceptKeywords: ['platypus pairs'],
      },
    ];
    const target: Item[] = [
      {
        identifier: 'tgt-1',
        humanCodingScheme: 'WVU.4.NF.A.1',
        fullStatement: 'Explain quokkafraction equivalence using zebrastrip models; compare parts.',
        educationLevel: ['4'],
        subject: ['Mathematicsquill'],
        domain: 'Narwhal Operations',
        conceptKeywords: ['platypus pairs'],
      },
    ];
    const b = {
      source: { framework: { identifier: 'fw-source', title: 'Axolotl Standards', publisher: 'Capybara Board' }, items: source },
      target: { framework: { identifier: 'fw-target', title: 'Okapi Standards', publisher: 'Tapir Office' }, items: target },
      options: { minConfidence: 0 },
    };
    const res = await crosswalk(b);
    expect(res.data.candidates).toHaveLength(1);
    for (const submitted of ['quokka', 'zebrastrip', 'ZQX', 'zqx', 'WVU', 'wvu', 'Axolotl', 'Okapi', 'Capybara', 'Tapir', 'Narwhal', 'narwhal', 'platypus', 'Mathematicsquill', 'mathematicsquill', 'equivalence', 'NF.A']) {
      expect(res.body).not.toContain(submitted);
    }
    for (const id of ['src-1', 'tgt-1', 'fw-source', 'fw-target']) expect(res.body).toContain(id);
  });
});

describe('the scope', () => {
  it('a credential without intelligence.execute is refused with 403 scope_missing', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const res = await runtimeClient(ctx.app, chain.secret).request('POST', PATH, { body: body([{ identifier: 'a', fullStatement: 'x y' }], [{ identifier: 'b', fullStatement: 'x y' }]) });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('scoring as documented', () => {
  const all = { minConfidence: 0, maxCandidatesPerItem: 5 };

  it('the same CASE identifier is decisive (confidence 1, basis case_identity); a different statement under it is a caution', async () => {
    const { data } = await crosswalk(
      body(
        [{ identifier: '6B9EE8E6-D7CC-11E8-824F-0242AC160002', fullStatement: 'Explain equivalent fractions with visual models.' }],
        [
          { identifier: '6b9ee8e6-d7cc-11e8-824f-0242ac160002', fullStatement: 'Add and subtract mixed numbers with like denominators.' },
          { identifier: 'other', fullStatement: 'Explain equivalent fractions with visual models.' },
        ],
        all,
      ),
    );
    const same = pair(data, '6B9EE8E6-D7CC-11E8-824F-0242AC160002', '6b9ee8e6-d7cc-11e8-824f-0242ac160002')!;
    expect(same).toMatchObject({ confidence: 1, basis: 'case_identity', cautions: ['identifier_statement_differs'], status: 'proposed', requiresQualifiedReview: true });
    expect(signal(same, 'case_identifier')).toEqual({ name: 'case_identifier', value: 1, weight: null, contribution: null });
    expect(same.rationale).toContain('the same CASE item identifier');
    // Identical wording without anything else agreeing weighs only the statement weight.
    const wording = pair(data, '6B9EE8E6-D7CC-11E8-824F-0242AC160002', 'other')!;
    expect(wording).toMatchObject({ confidence: 0.4, basis: 'weighted_signals', signals: [{ name: 'statement', value: 1, weight: 0.4, contribution: 0.4 }] });
    expect(data.candidates.map((c) => c.targetItem)).toEqual(['6b9ee8e6-d7cc-11e8-824f-0242ac160002', 'other']);
  });

  it('statement similarity is the Jaccard share of words, without stopwords, single letters or plural endings', async () => {
    const { data } = await crosswalk(
      body(
        [{ identifier: 's', fullStatement: 'Students will compare the fractions a/b using area models and number lines.' }],
        [
          // compare, fraction, area, model, number, line: the same six words.
          { identifier: 'same-words', fullStatement: 'Compare fraction with an area model, on a number line.' },
          // compare, fraction, area, model against ordering, decimal: 4 of 8 words.
          { identifier: 'half', fullStatement: 'Compare fractions, area models, ordering decimals.' },
        ],
        all,
      ),
    );
    expect(signal(pair(data, 's', 'same-words')!, 'statement')).toEqual({ name: 'statement', value: 1, weight: 0.4, contribution: 0.4 });
    expect(signal(pair(data, 's', 'half')!, 'statement')).toEqual({ name: 'statement', value: 0.5, weight: 0.4, contribution: 0.2 });
  });

  it('codes are compared normalized: case, punctuation and leading zeros do not matter; a namespace prefix is 0.8; a sibling is at most 0.5', async () => {
    const statement = 'Fraction equivalence.';
    const { data } = await crosswalk(
      body(
        [{ identifier: 's', humanCodingScheme: '04.nf.A.01', fullStatement: statement }],
        [
          { identifier: 'exact', humanCodingScheme: '4-NF-A-1', fullStatement: statement },
          { identifier: 'prefixed', humanCodingScheme: 'CCSS.MATH.CONTENT.4.NF.A.1', fullStatement: statement },
          { identifier: 'sibling', humanCodingScheme: '4.NF.A.2', fullStatement: statement },
          { identifier: 'state-sibling', humanCodingScheme: 'MA.4.NF.B.3', fullStatement: statement },
          { identifier: 'short-suffix', humanCodingScheme: 'A.1', fullStatement: statement },
        ],
        all,
      ),
    );
    const code = (t: string) => signal(pair(data, 's', t)!, 'code')?.value ?? 0;
    expect(code('exact')).toBe(1);
    expect(code('prefixed')).toBe(0.8);
    expect(code('sibling')).toBe(0.375); // 3 of 4 leading segments × 0.5
    expect(code('state-sibling')).toBe(0.25); // 4.NF of 4.NF.A.1 once MA. is dropped: 2 of 4 × 0.5
    expect(code('short-suffix')).toBe(0); // "A.1" is in every domain: untrusted
    expect(pair(data, 's', 'exact')!.confidence).toBe(0.65); // statement 0.40 + code 0.25
  });

  it('grades: CEDS spellings unified, overlap as a share, one grade apart 0.25 with a caution, further apart a caution only', async () => {
    const statement = 'Count objects to tell how many.';
    const { data } = await crosswalk(
      body(
        [{ identifier: 's', educationLevel: ['KG', '01'], fullStatement: statement }],
        [
          { identifier: 'same', educationLevel: ['K', '1'], fullStatement: statement },
          { identifier: 'half', educationLevel: ['kindergarten'], fullStatement: statement },
          { identifier: 'adjacent', educationLevel: ['02'], fullStatement: statement },
          { identifier: 'far', educationLevel: ['08'], fullStatement: statement },
          { identifier: 'none', fullStatement: statement },
        ],
        all,
      ),
    );
    const get = (t: string) => pair(data, 's', t)!;
    expect(signal(get('same'), 'grade')).toEqual({ name: 'grade', value: 1, weight: 0.15, contribution: 0.15 });
    expect(signal(get('half'), 'grade')?.value).toBe(0.5);
    expect(signal(get('adjacent'), 'grade')).toEqual({ name: 'grade', value: 0.25, weight: 0.15, contribution: 0.0375 });
    expect(get('adjacent').cautions).toEqual(['grade_mismatch']);
    expect(signal(get('far'), 'grade')).toBeUndefined();
    expect(get('far').cautions).toEqual(['grade_mismatch']);
    // Missing data is neither evidence nor a caution.
    expect(signal(get('none'), 'grade')).toBeUndefined();
    expect(get('none').cautions).toEqual([]);
    expect(get('none').confidence).toBe(0.4);
  });

  it('subject (with the math alias), domain words and concept keywords; the confidence is the sum of the contributions', async () => {
    const { data } = await crosswalk(
      body(
        [{ identifier: 's', fullStatement: 'Tell time to the nearest minute.', subject: ['Mathematics'], domain: 'Measurement and Data', conceptKeywords: ['Telling time', 'clocks'] }],
        [
          { identifier: 'agree', fullStatement: 'Tell time to the nearest minute.', subject: ['math'], domain: 'Measurement & Data', conceptKeywords: ['telling times', 'clock'] },
          { identifier: 'differ', fullStatement: 'Tell time to the nearest minute.', subject: ['Science'], domain: 'Earth Systems', conceptKeywords: ['seasons'] },
        ],
        all,
      ),
    );
    const agree = pair(data, 's', 'agree')!;
    expect(agree.signals.map((s) => [s.name, s.value])).toEqual([
      ['statement', 1],
      ['subject', 1],
      ['domain', 1],
      ['concept_keywords', 1],
    ]);
    expect(agree.confidence).toBe(0.6); // 0.40 + 0.05 + 0.10 + 0.05
    expect(agree.confidence).toBeCloseTo(agree.signals.reduce((sum, s) => sum + s.contribution!, 0), 10);
    expect(agree.rationale).toBe(
      'Proposed from statement wording overlap (strong); subject match (strong); domain overlap (strong); concept keyword overlap (strong). ' +
        'A proposal only: a qualified reviewer confirms the alignment before it is used.',
    );
    const differ = pair(data, 's', 'differ')!;
    expect(differ).toMatchObject({ confidence: 0.4, cautions: ['domain_mismatch', 'subject_mismatch'] });
    expect(differ.rationale).toContain('Check: the domains differ; the subjects differ.');
  });

  it('grade, subject and domain alone never propose: a pair needs a shared identifier, code, word or keyword', async () => {
    const context = { educationLevel: ['04'], subject: ['Mathematics'], domain: 'Geometry' };
    const { data } = await crosswalk(
      body([{ identifier: 's', fullStatement: 'Classify triangles by angles.', ...context }], [{ identifier: 't', fullStatement: 'Measure perimeter of rectangles.', ...context }], all),
    );
    expect(data.candidates).toEqual([]);
    expect(data.unmatchedSourceItems).toEqual(['s']);
    expect(data.counts).toEqual({ sourceItems: 1, targetItems: 1, pairsConsidered: 0, candidates: 0 });
  });

  it('minConfidence drops weaker candidates; maxCandidatesPerItem keeps the best, ties broken by target identifier', async () => {
    const s = { identifier: 's', fullStatement: 'Compare decimals to hundredths.' };
    const targets = [
      { identifier: 'tie-b', fullStatement: 'Compare decimals to hundredths.' },
      { identifier: 'tie-a', fullStatement: 'Compare decimals to hundredths.' },
      { identifier: 'weaker', fullStatement: 'Compare decimals to tenths.' },
    ];
    const top1 = await crosswalk(body([s], targets, { minConfidence: 0, maxCandidatesPerItem: 1 }));
    expect(top1.data.candidates.map((c) => c.targetItem)).toEqual(['tie-a']);
    const all3 = await crosswalk(body([s], targets, { minConfidence: 0, maxCandidatesPerItem: 5 }));
    expect(all3.data.candidates.map((c) => [c.targetItem, c.confidence])).toEqual([
      ['tie-a', 0.4],
      ['tie-b', 0.4],
      ['weaker', 0.2], // compare, decimal shared of compare, decimal, hundredth, tenth
    ]);
    const strict = await crosswalk(body([s], targets, { minConfidence: 0.3, maxCandidatesPerItem: 5 }));
    expect(strict.data.candidates.map((c) => c.targetItem)).toEqual(['tie-a', 'tie-b']);
  });
});
