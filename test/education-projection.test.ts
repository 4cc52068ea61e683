// projection through the real app (no provider configured): deterministic answers and stable finding
// ids whatever the input order, every bound, strict fields, nothing submitted echoed back, the scope,
// each finding kind's rule and severity on small hand-made graphs, and the Decision Signal handoff.
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECTION_LIMITS } from '@hosted-notes/runtime-sdk';
import { gradeTokens } from '../domain/education/projection.ts';
import { useTestApp } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeClient } from './support/product-runtime.ts';

const ctx = useTestApp();
const PATH = '/intelligence/education/projection';

let rt: RuntimeClient;
beforeAll(async () => {
  rt = runtimeClient(ctx.app, (await buildRuntimeChain(ctx.db.pool)).secret);
});

type Body = Record<string, unknown>;
type Finding = {
  kind: string;
  findingId: string;
  severity: string;
  subjects: { entityIds: string[]; relationshipIds: string[] };
  relatedEntityIds: string[];
  explanation: string;
  suggestedAction: string;
  signals: Record<string, unknown>;
};
type Signal = { signalId: string; kind: string; severity: string; suggestedAction: string; findingIds: string[]; requiresHumanDecision: boolean };
type Answer = {
  projectionId: string;
  effects: Record<string, boolean>;
  counts: { entities: number; relationships: number; findings: number; bySeverity: Record<string, number>; byKind: Record<string, number> };
  findings: Finding[];
  decisionSignals: Signal[];
};

const long = (n: number) => 'x'.repeat(n);
const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
const entity = (id: string, type: string, attributes?: Body): Body => ({ id, type, ...(attributes ? { attributes } : {}) });
const provenance = (assertedBy = 'educator') => ({ source: 'review-1', assertedBy, assertedAt: '2026-02-03' });
const rel = (id: string, type: string, from: string, to: string, assertedBy = 'educator'): Body => ({ id, type, from, to, provenance: provenance(assertedBy) });
const post = (body: unknown) => rt.request('POST', PATH, { body });
async function project(body: Body): Promise<Answer> {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.data).toMatchObject({ kind: 'service.education-projection', status: 'complete', missing: [] });
  return (res.data as { data: Answer }).data;
}
const ofKind = (answer: Answer, kind: string) => answer.findings.filter((f) => f.kind === kind);

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

/** Four courses, each with standards, targets, material and assessments, and every kind of defect somewhere. */
function district(): { entities: Body[]; relationships: Body[] } {
  const entities: Body[] = [];
  const relationships: Body[] = [];
  let n = 0;
  const link = (type: string, from: string, to: string, assertedBy = 'educator') => relationships.push(rel(`r${(n += 1) * 7919 % 100_000}`, type, from, to, assertedBy));
  for (let c = 0; c < 4; c += 1) {
    const course = `course-${c}`;
    entities.push(entity(course, 'course', { gradeLevels: [`${c + 3}`, `${c + 4}`] }));
    for (let s = 0; s < 6; s += 1) {
      const standard = `std-${c}-${s}`;
      entities.push(entity(standard, 'standard', { gradeLevels: [`${c + 3 + (s % 3)}`], framework: 'CCSS-M', code: `${c}.NF.${s % 5}` }));
      if (s < 5) link('aligns-to', course, standard);
      if (s % 2 === 0) {
        entities.push(entity(`lt-${c}-${s}`, 'learning-target'));
        link('aligns-to', `lt-${c}-${s}`, standard, s === 4 ? 'import' : 'educator');
        entities.push(entity(`art-${c}-${s}`, 'artifact', { gradeLevels: ['K', `${c + 3}`] }));
        link('teaches', `art-${c}-${s}`, `lt-${c}-${s}`);
        link('part-of', `art-${c}-${s}`, course, 'product');
      }
      if (s % 3 === 0) {
        entities.push(entity(`quiz-${c}-${s}`, 'assessment'));
        link('assesses', `quiz-${c}-${s}`, s === 3 ? `std-${(c + 1) % 4}-1` : standard);
        link('part-of', `quiz-${c}-${s}`, `art-${c}-0`);
      }
      if (s > 0) link('prerequisite-of', `std-${c}-${s - 1}`, standard);
    }
    link('prerequisite-of', `std-${c}-5`, `std-${c}-3`);
    link('aligns-to', `art-${c}-0`, `std-${c}-0`, 'import');
    link('aligns-to', `art-${c}-0`, `std-${c}-0`);
    link('cites', `art-${c}-2`, `src-missing-${c}`);
    link('teaches', `quiz-${c}-0`, `std-${c}-0`);
    entities.push(entity(`src-${c}`, 'source'));
  }
  return { entities, relationships };
}

describe('determinism and identity', () => {
  it('answers byte for byte the same for the entities, relationships and grade levels in any order', async () => {
    const body = district();
    const first = await post(body);
    expect(first.statusCode, first.body).toBe(200);
    const answer = (first.data as { data: Answer }).data;
    // The fixture reaches most kinds, so the order of many findings is exercised.
    expect(Object.values(answer.counts.byKind).filter((count) => count > 0).length).toBeGreaterThanOrEqual(9);
    for (const seed of [1, 2, 3, 4, 5]) {
      const reordered = {
        relationships: shuffled(body.relationships, seed),
        entities: shuffled(body.entities, seed).map((e) => {
          const attributes = e['attributes'] as { gradeLevels?: string[] } | undefined;
          return attributes?.gradeLevels ? { ...e, attributes: { ...attributes, gradeLevels: shuffled(attributes.gradeLevels, seed) } } : e;
        }),
      };
      const again = await post(reordered);
      expect(again.body, `seed ${seed}`).toBe(first.body);
    }
  });

  it('keeps a finding id when unrelated entities and relationships are added, and derives it from the kind and subjects only', async () => {
    const base = { entities: [entity('std-a', 'standard'), entity('course-a', 'course')], relationships: [rel('r1', 'aligns-to', 'course-a', 'std-a')] };
    const before = await project(base);
    const after = await project({
      entities: [...base.entities, entity('std-b', 'standard'), entity('art-b', 'artifact')],
      relationships: [...base.relationships, rel('r2', 'teaches', 'art-b', 'std-b', 'import')],
    });
    const gap = ofKind(before, 'coverage-gap')[0]!;
    expect(ofKind(after, 'coverage-gap').find((f) => f.subjects.entityIds[0] === 'std-a')!.findingId).toBe(gap.findingId);
    expect(after.projectionId).not.toBe(before.projectionId);
    // Severity may change with the graph; the identity does not: without the course the gap is a warning, same id.
    const unadopted = await project({ entities: base.entities, relationships: [] });
    expect(ofKind(unadopted, 'coverage-gap')[0]).toMatchObject({ findingId: gap.findingId, severity: 'warning' });
    expect(gap.severity).toBe('attention');
  });

  it('leaves titles out of the projection id (they are never read)', async () => {
    const a = await project({ entities: [{ ...entity('e', 'course'), title: 'One title' }] });
    const b = await project({ entities: [{ ...entity('e', 'course'), title: 'Another title' }] });
    expect(a.projectionId).toBe(b.projectionId);
    expect(a.projectionId).toMatch(/^prj_[0-9a-f]{24}$/);
  });
});

describe('bounds and strict fields: 400 invalid_request with the pointer', () => {
  const base = () => ({ entities: [entity('a', 'course'), entity('b', 'standard')], relationships: [rel('r', 'aligns-to', 'a', 'b')] }) as { entities: Body[]; relationships: Body[]; [k: string]: unknown };
  const with_ = (patch: (b: ReturnType<typeof base>) => void) => {
    const b = base();
    patch(b);
    return b;
  };
  const attrs = (b: ReturnType<typeof base>, attributes: Body) => (b.entities[0]!['attributes'] = attributes);
  const prov = (b: ReturnType<typeof base>) => b.relationships[0]!['provenance'] as Body;
  it.each([
    ['501 entities', with_((b) => (b.entities = many(501, (i) => entity(`e${i}`, 'artifact')))), '/body/entities'],
    ['no entities', with_((b) => (b.entities = [])), '/body/entities'],
    ['2,001 relationships', with_((b) => (b.relationships = many(2_001, (i) => rel(`r${i}`, 'aligns-to', 'a', 'b')))), '/body/relationships'],
    ['an entity id twice', with_((b) => b.entities.push(entity('a', 'artifact'))), '/body/entities/2/id'],
    ['a relationship id twice', with_((b) => b.relationships.push(rel('r', 'teaches', 'a', 'b'))), '/body/relationships/1/id'],
    ['an entity id of 201 characters', with_((b) => (b.entities[0]!['id'] = long(201))), '/body/entities/0/id'],
    ['an empty entity id', with_((b) => (b.entities[0]!['id'] = '')), '/body/entities/0/id'],
    ['an unknown entity type', with_((b) => (b.entities[0]!['type'] = 'learner')), '/body/entities/0/type'],
    ['a title of 301 characters', with_((b) => (b.entities[0]!['title'] = long(301))), '/body/entities/0/title'],
    ['14 grade levels', with_((b) => attrs(b, { gradeLevels: many(14, (i) => `${i}`) })), '/body/entities/0/attributes/gradeLevels'],
    ['a grade level of 21 characters', with_((b) => attrs(b, { gradeLevels: [long(21)] })), '/body/entities/0/attributes/gradeLevels/0'],
    ['a subject of 101 characters', with_((b) => attrs(b, { subject: long(101) })), '/body/entities/0/attributes/subject'],
    ['a framework of 201 characters', with_((b) => attrs(b, { framework: long(201) })), '/body/entities/0/attributes/framework'],
    ['a code of 101 characters', with_((b) => attrs(b, { code: long(101) })), '/body/entities/0/attributes/code'],
    ['an unknown attribute', with_((b) => attrs(b, { learnerName: 'x' })), '/body/entities/0/attributes/learnerName'],
    ['an unknown entity field', with_((b) => (b.entities[0]!['description'] = 'text')), '/body/entities/0/description'],
    ['a relationship id of 201 characters', with_((b) => (b.relationships[0]!['id'] = long(201))), '/body/relationships/0/id'],
    ['an unknown relationship type', with_((b) => (b.relationships[0]!['type'] = 'grades')), '/body/relationships/0/type'],
    ['a from of 201 characters', with_((b) => (b.relationships[0]!['from'] = long(201))), '/body/relationships/0/from'],
    ['a to of 201 characters', with_((b) => (b.relationships[0]!['to'] = long(201))), '/body/relationships/0/to'],
    ['a relationship without provenance', with_((b) => delete b.relationships[0]!['provenance']), '/body/relationships/0/provenance'],
    ['a provenance source of 201 characters', with_((b) => (prov(b)['source'] = long(201))), '/body/relationships/0/provenance/source'],
    ['an unknown assertedBy', with_((b) => (prov(b)['assertedBy'] = 'model')), '/body/relationships/0/provenance/assertedBy'],
    ['an assertedAt that is not ISO 8601', with_((b) => (prov(b)['assertedAt'] = '03/02/2026')), '/body/relationships/0/provenance/assertedAt'],
    ['an assertedAt without an offset', with_((b) => (prov(b)['assertedAt'] = '2026-02-03T10:00:00')), '/body/relationships/0/provenance/assertedAt'],
    ['an unknown provenance field', with_((b) => (prov(b)['confidence'] = 0.9)), '/body/relationships/0/provenance/confidence'],
    ['an unknown relationship field', with_((b) => (b.relationships[0]!['weight'] = 1)), '/body/relationships/0/weight'],
    ['an unknown top-level field', with_((b) => (b['learners'] = [])), '/body/learners'],
  ])('%s', async (_name, body, pointer) => {
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.data).toMatchObject({ code: 'invalid_request' });
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
  });

  it('accepts the largest request: 500 entities and 2,000 relationships with every field at its maximum', async () => {
    const entityId = (i: number) => `${i}`.padStart(PROJECTION_LIMITS.idChars, 'e');
    const types = ['course', 'standard', 'learning-target', 'artifact', 'assessment', 'activity', 'source'];
    const relTypes = ['aligns-to', 'assesses', 'teaches', 'cites', 'part-of', 'prerequisite-of'];
    const body = {
      entities: many(PROJECTION_LIMITS.entities, (i) => ({
        id: entityId(i),
        type: types[i % types.length],
        title: long(PROJECTION_LIMITS.titleChars),
        attributes: {
          gradeLevels: many(PROJECTION_LIMITS.gradeLevels, (j) => `${(i + j) % 13}`.padStart(PROJECTION_LIMITS.gradeLevelChars, '0')),
          subject: long(PROJECTION_LIMITS.subjectChars),
          framework: long(PROJECTION_LIMITS.frameworkChars),
          code: `${i % 50}`.padStart(PROJECTION_LIMITS.codeChars, 'c'),
        },
      })),
      relationships: many(PROJECTION_LIMITS.relationships, (i) => ({
        id: `${i}`.padStart(PROJECTION_LIMITS.idChars, 'r'),
        type: relTypes[i % relTypes.length],
        from: entityId((i * 7) % 510),
        to: entityId((i * 13 + 1) % 510),
        provenance: { source: long(PROJECTION_LIMITS.provenanceSourceChars), assertedBy: ['educator', 'import', 'product'][i % 3], assertedAt: '2026-02-03T10:00:00.000+01:00' },
      })),
    };
    const answer = await project(body);
    expect(answer.counts).toMatchObject({ entities: 500, relationships: 2_000 });
    expect(answer.counts.findings).toBe(answer.findings.length);
  });
});

describe('the answer', () => {
  it('never echoes a title, attribute value or provenance source', async () => {
    const res = await post({
      entities: [
        { id: 'course-1', type: 'course', title: 'Zanzibar quokka migration', attributes: { subject: 'Xylophone marmalade', gradeLevels: ['Pangolin'] } },
        { id: 'std-1', type: 'standard', title: 'Quixotic narwhal', attributes: { framework: 'Hullabaloo framework', code: 'Kerfuffle.1', gradeLevels: ['Wombat'] } },
        { id: 'std-2', type: 'standard', attributes: { framework: 'Hullabaloo framework', code: 'kerfuffle 1' } },
      ],
      relationships: [{ id: 'r1', type: 'aligns-to', from: 'course-1', to: 'std-1', provenance: { source: 'Flibbertigibbet import', assertedBy: 'import', assertedAt: '2026-02-03' } }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = (res.data as { data: Answer }).data;
    // The inputs did produce findings about them: grade levels, duplicates, provenance.
    expect(answer.counts.byKind).toMatchObject({ 'grade-level-mismatch': 1, 'duplicate-standard': 1, 'unreviewed-relationship': 1 });
    for (const word of ['zanzibar', 'quokka', 'xylophone', 'marmalade', 'pangolin', 'quixotic', 'narwhal', 'hullabaloo', 'kerfuffle', 'wombat', 'flibbertigibbet']) {
      expect(res.body.toLowerCase()).not.toContain(word);
    }
  });

  it('says it is read-only, and every decision signal needs a human decision', async () => {
    const answer = await project(district());
    expect(answer.effects).toEqual({ readOnly: true, trustedMemoryWritten: false, forgeMutationRun: false });
    expect(answer.decisionSignals.length).toBeGreaterThan(0);
    for (const signal of answer.decisionSignals) expect(signal.requiresHumanDecision).toBe(true);
  });

  it('needs intelligence.execute: 403 scope_missing', async () => {
    const narrow = runtimeClient(ctx.app, (await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] })).secret);
    const res = await narrow.request('POST', PATH, { body: { entities: [entity('a', 'course')] } });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.data).toMatchObject({ code: 'scope_missing' });
  });
});

describe('findings: each rule, its severity, signals and action', () => {
  it('coverage: a gap is attention when a course adopts the standard, a warning when none does; taught but unassessed is info', async () => {
    const answer = await project({
      entities: [
        entity('course', 'course'),
        entity('std-adopted', 'standard'),
        entity('std-loose', 'standard'),
        entity('std-taught', 'standard'),
        entity('std-covered', 'standard'),
        entity('lt', 'learning-target'),
        entity('art', 'artifact'),
        entity('act', 'activity'),
        entity('quiz', 'assessment'),
      ],
      relationships: [
        rel('r1', 'aligns-to', 'course', 'std-adopted'),
        rel('r2', 'aligns-to', 'course', 'std-taught'),
        rel('r3', 'teaches', 'act', 'std-taught'),
        // Covered through a learning target: the artifact teaches the target, the target unpacks the standard.
        rel('r4', 'aligns-to', 'lt', 'std-covered'),
        rel('r5', 'teaches', 'art', 'lt'),
        rel('r6', 'assesses', 'quiz', 'lt'),
        rel('r7', 'assesses', 'quiz', 'std-loose'),
      ],
    });
    const gaps = ofKind(answer, 'coverage-gap');
    expect(gaps.map((f) => [f.subjects.entityIds[0], f.severity, f.suggestedAction])).toEqual([
      ['std-adopted', 'attention', 'add-coverage'],
      ['std-loose', 'warning', 'add-coverage'],
    ]);
    expect(gaps[0]).toMatchObject({ relatedEntityIds: ['course'], signals: { adoptingCourses: 1, teachingEntities: 0, assessingEntities: 0, learningTargets: 0 } });
    expect(gaps[1]!.signals).toEqual({ adoptingCourses: 0, teachingEntities: 0, assessingEntities: 1, learningTargets: 0 });
    expect(ofKind(answer, 'assessment-gap')).toEqual([
      expect.objectContaining({ severity: 'info', suggestedAction: 'add-assessment', subjects: { entityIds: ['std-taught'], relationshipIds: [] }, signals: { adoptingCourses: 1, teachingEntities: 1, assessingEntities: 0, learningTargets: 0 } }),
    ]);
    expect(answer.findings.some((f) => f.subjects.entityIds.includes('std-covered'))).toBe(false);
  });

  it('assessments: unaligned, or aligned to none of the standards of the course they belong to (through part-of chains)', async () => {
    const answer = await project({
      entities: [
        entity('course', 'course'),
        entity('std-1', 'standard'),
        entity('std-2', 'standard'),
        entity('unit', 'artifact'),
        entity('quiz-on', 'assessment'),
        entity('quiz-off', 'assessment'),
        entity('quiz-none', 'assessment'),
        entity('lt-free', 'learning-target'),
        entity('quiz-target-only', 'assessment'),
      ],
      relationships: [
        rel('r1', 'aligns-to', 'course', 'std-1'),
        rel('r2', 'teaches', 'unit', 'std-1'),
        rel('r3', 'teaches', 'unit', 'std-2'),
        rel('r4', 'part-of', 'unit', 'course'),
        rel('r5', 'part-of', 'quiz-on', 'unit'),
        rel('r6', 'part-of', 'quiz-off', 'unit'),
        rel('r7', 'part-of', 'quiz-none', 'course'),
        rel('r8', 'part-of', 'quiz-target-only', 'course'),
        rel('r9', 'assesses', 'quiz-on', 'std-1'),
        rel('r10', 'assesses', 'quiz-off', 'std-2'),
        // A learning target with no standard: nothing to compare with the course, so no finding.
        rel('r11', 'assesses', 'quiz-target-only', 'lt-free'),
      ],
    });
    expect(ofKind(answer, 'assessment-off-course')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        suggestedAction: 'review-alignment',
        subjects: { entityIds: ['quiz-off'], relationshipIds: [] },
        relatedEntityIds: ['course'],
        signals: { courses: 1, courseStandards: 1, alignedStandards: 1, sharedStandards: 0 },
      }),
    ]);
    expect(ofKind(answer, 'unaligned-assessment')).toEqual([
      expect.objectContaining({ severity: 'warning', subjects: { entityIds: ['quiz-none'], relationshipIds: [] }, relatedEntityIds: ['course'], signals: { courses: 1 } }),
    ]);
  });

  it('relationships: dangling, self-referencing and incompatible ones are findings and left out of the analysis', async () => {
    const answer = await project({
      entities: [entity('std', 'standard'), entity('art', 'artifact'), entity('src', 'source'), entity('lt', 'learning-target')],
      relationships: [
        rel('r-dangling', 'teaches', 'art', 'std-elsewhere'),
        rel('r-both', 'cites', 'nowhere-1', 'nowhere-2'),
        rel('r-self', 'prerequisite-of', 'lt', 'lt'),
        // A source cannot teach: the standard stays a coverage gap.
        rel('r-wrong', 'teaches', 'src', 'std'),
        rel('r-cites', 'cites', 'art', 'src'),
      ],
    });
    const dangling = ofKind(answer, 'dangling-endpoint');
    expect(dangling).toHaveLength(2);
    expect(dangling.map((f) => [f.subjects, f.relatedEntityIds, f.signals, f.severity, f.suggestedAction])).toEqual(
      expect.arrayContaining([
        [{ entityIds: [], relationshipIds: ['r-both'] }, ['nowhere-1', 'nowhere-2'], { relationshipType: 'cites', missingEndpoint: 'both' }, 'attention', 'resolve-reference'],
        [{ entityIds: ['art'], relationshipIds: ['r-dangling'] }, ['std-elsewhere'], { relationshipType: 'teaches', missingEndpoint: 'to' }, 'attention', 'resolve-reference'],
      ]),
    );
    expect(ofKind(answer, 'self-reference')).toEqual([
      expect.objectContaining({ severity: 'warning', suggestedAction: 'correct-relationship', signals: { relationshipType: 'prerequisite-of', entityType: 'learning-target' } }),
    ]);
    expect(ofKind(answer, 'incompatible-endpoints')).toEqual([
      expect.objectContaining({ subjects: { entityIds: ['src', 'std'], relationshipIds: ['r-wrong'] }, signals: { relationshipType: 'teaches', fromType: 'source', toType: 'standard' } }),
    ]);
    expect(ofKind(answer, 'coverage-gap').map((f) => f.subjects.entityIds)).toEqual([['std']]);
  });

  it('cycles: each strongly connected set of prerequisite-of or part-of relationships is one attention finding', async () => {
    const answer = await project({
      entities: ['a', 'b', 'c', 'd'].map((id) => entity(id, 'standard')).concat([entity('unit-1', 'artifact'), entity('unit-2', 'artifact')]),
      relationships: [
        rel('p1', 'prerequisite-of', 'a', 'b'),
        rel('p2', 'prerequisite-of', 'b', 'c'),
        rel('p3', 'prerequisite-of', 'c', 'a'),
        rel('p4', 'prerequisite-of', 'c', 'd'),
        rel('w1', 'part-of', 'unit-1', 'unit-2'),
        rel('w2', 'part-of', 'unit-2', 'unit-1'),
      ],
    });
    const cycles = ofKind(answer, 'cycle');
    expect(cycles.map((f) => [f.severity, f.subjects, f.signals])).toEqual(
      expect.arrayContaining([
        ['attention', { entityIds: ['a', 'b', 'c'], relationshipIds: ['p1', 'p2', 'p3'] }, { relationshipType: 'prerequisite-of', entityCount: 3, relationshipCount: 3 }],
        ['attention', { entityIds: ['unit-1', 'unit-2'], relationshipIds: ['w1', 'w2'] }, { relationshipType: 'part-of', entityCount: 2, relationshipCount: 2 }],
      ]),
    );
    expect(cycles).toHaveLength(2);
    expect(cycles[0]!.suggestedAction).toBe('review-structure');
  });

  it('provenance: relationships not asserted by an educator; alignment claims are warnings, the rest info', async () => {
    const answer = await project({
      entities: [entity('std', 'standard'), entity('art', 'artifact'), entity('src', 'source'), entity('course', 'course')],
      relationships: [rel('r1', 'teaches', 'art', 'std', 'import'), rel('r2', 'cites', 'art', 'src', 'product'), rel('r3', 'part-of', 'art', 'course', 'educator')],
    });
    expect(ofKind(answer, 'unreviewed-relationship').map((f) => [f.subjects.relationshipIds[0], f.severity, f.suggestedAction, f.signals])).toEqual([
      ['r1', 'warning', 'confirm-relationship', { relationshipType: 'teaches', assertedBy: 'import', alignmentClaim: true }],
      ['r2', 'info', 'confirm-relationship', { relationshipType: 'cites', assertedBy: 'product', alignmentClaim: false }],
    ]);
  });

  it('duplicates: relationships of one type between the same ids (counted once), and standards of one framework and normalized code', async () => {
    const answer = await project({
      entities: [
        entity('std-1', 'standard', { framework: 'CCSS-M', code: '4.NF.A.1' }),
        entity('std-1-copy', 'standard', { framework: 'ccss-m', code: '4 nf a 1' }),
        entity('std-other', 'standard', { framework: 'CCSS-M', code: '4.NF.A.11' }),
        entity('act', 'activity'),
      ],
      relationships: [rel('r1', 'teaches', 'act', 'std-1'), rel('r2', 'teaches', 'act', 'std-1', 'import'), rel('r3', 'teaches', 'act', 'std-other')],
    });
    expect(ofKind(answer, 'duplicate-relationship')).toEqual([
      expect.objectContaining({ severity: 'info', suggestedAction: 'merge-duplicates', subjects: { entityIds: ['act', 'std-1'], relationshipIds: ['r1', 'r2'] }, signals: { relationshipType: 'teaches', copies: 2, educatorAsserted: 1 } }),
    ]);
    expect(ofKind(answer, 'duplicate-standard')).toEqual([
      expect.objectContaining({ severity: 'warning', subjects: { entityIds: ['std-1', 'std-1-copy'], relationshipIds: [] }, signals: { copies: 2 } }),
    ]);
    // Alignment to one copy does not cover the other.
    expect(ofKind(answer, 'coverage-gap').map((f) => f.subjects.entityIds[0])).toEqual(['std-1-copy']);
  });

  it('grade levels: an alignment between disjoint sets is a mismatch; aliases and ranges are understood', async () => {
    expect(gradeTokens('K')).toEqual(['0']);
    expect(gradeTokens(' 04 ')).toEqual(['4']);
    expect(gradeTokens('9-12')).toEqual(['9', '10', '11', '12']);
    expect(gradeTokens('K–2')).toEqual(['0', '1', '2']);
    expect(gradeTokens('Algebra I')).toEqual(['algebrai']);
    const answer = await project({
      entities: [
        entity('std-hs', 'standard', { gradeLevels: ['9-12'] }),
        entity('std-k', 'standard', { gradeLevels: ['Kindergarten'] }),
        entity('art-10', 'artifact', { gradeLevels: ['10'] }),
        entity('art-3', 'artifact', { gradeLevels: ['3', '4'] }),
        entity('art-none', 'artifact'),
      ],
      relationships: [rel('r1', 'teaches', 'art-10', 'std-hs'), rel('r2', 'teaches', 'art-3', 'std-hs'), rel('r3', 'teaches', 'art-none', 'std-k'), rel('r4', 'aligns-to', 'art-3', 'std-k')],
    });
    expect(ofKind(answer, 'grade-level-mismatch')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          severity: 'warning',
          suggestedAction: 'review-alignment',
          subjects: { entityIds: ['art-3', 'std-hs'], relationshipIds: ['r2'] },
          signals: { relationshipType: 'teaches', fromGradeLevels: 2, toGradeLevels: 4, sharedGradeLevels: 0 },
        }),
        expect.objectContaining({ subjects: { entityIds: ['art-3', 'std-k'], relationshipIds: ['r4'] } }),
      ]),
    );
    expect(ofKind(answer, 'grade-level-mismatch')).toHaveLength(2);
  });

  it('orphans: an entity no relationship references (standards are coverage gaps instead)', async () => {
    const answer = await project({ entities: [entity('src', 'source'), entity('std', 'standard'), entity('course', 'course')], relationships: [rel('r1', 'cites', 'course', 'ghost')] });
    expect(ofKind(answer, 'orphan-entity').map((f) => [f.subjects.entityIds, f.severity, f.signals])).toEqual([[['src'], 'info', { entityType: 'source' }]]);
  });

  it('orders findings by severity, kind and id, and hands off one decision signal per kind and severity', async () => {
    const answer = await project(district());
    const severity = ['attention', 'warning', 'info'];
    answer.findings.forEach((f, i) => {
      expect(f.findingId).toMatch(/^fnd_[0-9a-f]{24}$/);
      if (i === 0) return;
      const before = answer.findings[i - 1]!;
      expect(severity.indexOf(before.severity)).toBeLessThanOrEqual(severity.indexOf(f.severity));
    });
    expect(new Set(answer.findings.map((f) => f.findingId)).size).toBe(answer.findings.length);
    const covered = answer.decisionSignals.flatMap((s) => s.findingIds);
    expect(covered.sort()).toEqual(answer.findings.map((f) => f.findingId).sort());
    for (const signal of answer.decisionSignals) {
      expect(signal.signalId).toMatch(/^dsg_[0-9a-f]{24}$/);
      expect(signal.findingIds).toEqual([...signal.findingIds].sort());
      const members = answer.findings.filter((f) => signal.findingIds.includes(f.findingId));
      for (const f of members) expect([f.kind, f.severity, f.suggestedAction]).toEqual([signal.kind, signal.severity, signal.suggestedAction]);
    }
    expect(new Set(answer.decisionSignals.map((s) => `${s.kind}/${s.severity}`)).size).toBe(answer.decisionSignals.length);
    expect(answer.counts.findings).toBe(answer.findings.length);
    expect(Object.values(answer.counts.bySeverity).reduce((a, b) => a + b, 0)).toBe(answer.findings.length);
  });
});
