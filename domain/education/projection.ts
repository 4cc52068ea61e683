// projection: findings over a bounded slice of portable Education entities and their
// provenance-backed relationships, and a Decision Signal handoff for a product's decision workflow.
// Pure and deterministic: entities and relationships are put in id order first, every set is sorted
// by code units, and ids are SHA-256 of canonical content, so the same input in any order gives the
// same answer, byte for byte. Read-only by construction: no I/O at all. The answer carries the
// caller's ids, counts and fixed vocabulary only, never a title or attribute value.
//
// "Scoring" here is the severity of each finding: a fixed rule per kind (SEVERITY_RULES), two of
// which depend on a signal the finding carries (coverage-gap: adopting courses; unreviewed-
// relationship: whether it is an alignment claim).
import { createHash } from 'node:crypto';
import type {
  EducationProjection,
  EducationProjectionRequest,
  FindingKind,
  FindingSignals,
  ProjectionFinding,
  entityTypes,
  relationshipTypes,
  severities,
  suggestedActions,
} from '@hosted-notes/runtime-sdk';
import { findingKinds, severities as severityOrder } from '@hosted-notes/runtime-sdk';

type Entity = EducationProjectionRequest['entities'][number];
type Relationship = EducationProjectionRequest['relationships'][number];
type EntityType = (typeof entityTypes)[number];
type RelationshipType = (typeof relationshipTypes)[number];
type Severity = (typeof severities)[number];
type Action = (typeof suggestedActions)[number];

export const PROJECTION_ALGORITHM = 'education-projection@1' as const;

/**
 * Which entity types each relationship type may connect (from → to). Anything else is an
 * `incompatible-endpoints` finding and is left out of the coverage, assessment and cycle analysis,
 * because a claim between the wrong kinds of things cannot support a conclusion.
 */
export const ALLOWED_ENDPOINTS: Readonly<Record<RelationshipType, { from: readonly EntityType[]; to: readonly EntityType[] }>> = {
  // A course aligning to a standard adopts it; a learning target aligning to a standard unpacks it.
  'aligns-to': { from: ['course', 'learning-target', 'artifact', 'assessment', 'activity'], to: ['standard', 'learning-target'] },
  assesses: { from: ['assessment'], to: ['standard', 'learning-target'] },
  teaches: { from: ['artifact', 'activity'], to: ['standard', 'learning-target'] },
  cites: { from: ['course', 'learning-target', 'artifact', 'assessment', 'activity'], to: ['source'] },
  // Membership: in a course, or in a larger artifact (a unit containing lessons and quizzes).
  'part-of': { from: ['learning-target', 'artifact', 'assessment', 'activity'], to: ['course', 'artifact'] },
  'prerequisite-of': { from: ['course', 'standard', 'learning-target', 'activity'], to: ['course', 'standard', 'learning-target', 'activity'] },
};

/** Relationship types that claim instructional alignment: they decide coverage, so their provenance matters most. */
export const ALIGNMENT_CLAIMS: ReadonlySet<RelationshipType> = new Set(['aligns-to', 'assesses', 'teaches']);
/** Material that teaches: artifacts and activities (an assessment measures; a course promises). */
const TEACHING_TYPES: ReadonlySet<EntityType> = new Set(['artifact', 'activity']);
/** The relationship types whose cycles are findings: a prerequisite cycle has no valid order, a part-of cycle no valid containment. */
const CYCLE_TYPES = ['prerequisite-of', 'part-of'] as const;

/**
 * A coverage gap on a standard that at least this many courses in the projection adopt is
 * `attention`: a course promises the standard and nothing teaches it. One adopting course is enough,
 * because a single course's promise is already unkept. Below it the standard may be context only:
 * `warning`.
 */
export const COVERAGE_GAP_ATTENTION_MIN_COURSES = 1;

/**
 * The severity of each kind and why. Two depend on a signal of the finding, named in the rule.
 * - attention: the slice cannot be trusted as stated (a reference to nothing, an impossible order or
 *   containment) or a course's promise is unkept (coverage-gap with an adopting course);
 * - warning: a specific claim is probably wrong or untrustworthy and changes a conclusion;
 * - info: hygiene that changes no conclusion (duplicates are counted once, an orphan affects nothing,
 *   an untested standard is common when formative assessment lives outside the slice).
 */
export const SEVERITY_RULES: Readonly<{ [K in FindingKind]: (signals: FindingSignals<K>) => Severity }> = {
  'dangling-endpoint': () => 'attention',
  cycle: () => 'attention',
  'coverage-gap': (s) => (s.adoptingCourses >= COVERAGE_GAP_ATTENTION_MIN_COURSES ? 'attention' : 'warning'),
  'self-reference': () => 'warning',
  'incompatible-endpoints': () => 'warning',
  // Alignments split across the copies, so one copy's coverage shows as the other's gap.
  'duplicate-standard': () => 'warning',
  'unaligned-assessment': () => 'warning',
  'assessment-off-course': () => 'warning',
  'grade-level-mismatch': () => 'warning',
  // An unconfirmed alignment claim feeds the coverage findings; other unconfirmed relationships do not.
  'unreviewed-relationship': (s) => (s.alignmentClaim ? 'warning' : 'info'),
  'duplicate-relationship': () => 'info',
  'assessment-gap': () => 'info',
  'orphan-entity': () => 'info',
};

export const SUGGESTED_ACTIONS: Readonly<Record<FindingKind, Action>> = {
  'dangling-endpoint': 'resolve-reference',
  cycle: 'review-structure',
  'coverage-gap': 'add-coverage',
  'self-reference': 'correct-relationship',
  'incompatible-endpoints': 'correct-relationship',
  'duplicate-standard': 'merge-duplicates',
  'unaligned-assessment': 'review-alignment',
  'assessment-off-course': 'review-alignment',
  'grade-level-mismatch': 'review-alignment',
  'unreviewed-relationship': 'confirm-relationship',
  'duplicate-relationship': 'merge-duplicates',
  'assessment-gap': 'add-assessment',
  'orphan-entity': 'review-structure',
};

/** Fixed sentences; none contains submitted text. */
const EXPLANATIONS: { [K in FindingKind]: (signals: FindingSignals<K>, severity: Severity) => string } = {
  'dangling-endpoint': () => 'The relationship names an entity that is not in this projection; nothing is concluded through it until the entity is added or the relationship corrected.',
  cycle: (s) =>
    s.relationshipType === 'prerequisite-of'
      ? 'These prerequisite relationships form a cycle, so no order of the entities satisfies them all.'
      : 'These part-of relationships form a cycle, so no entity can contain the others as stated.',
  'coverage-gap': (_s, severity) =>
    severity === 'attention'
      ? 'A course in this projection adopts this standard, but no artifact or activity teaches or aligns to it, directly or through a learning target.'
      : 'No artifact or activity in this projection teaches or aligns to this standard, directly or through a learning target, and no course in it adopts the standard.',
  'self-reference': () => 'The relationship connects an entity to itself.',
  'incompatible-endpoints': () => 'The relationship type does not fit the types of the entities it connects, so the analysis leaves it out.',
  'duplicate-standard': () => 'These standards share one framework and one code (after normalizing case and separators); alignments to one copy do not count for the others.',
  'unaligned-assessment': () => 'The assessment neither assesses nor aligns to any standard or learning target in this projection.',
  'assessment-off-course': () =>
    'The assessment belongs to a course that adopts standards, but none of the standards it assesses, directly or through a learning target, is one of them.',
  'grade-level-mismatch': () => 'The two entities of this alignment declare grade levels with none in common.',
  'unreviewed-relationship': (s) =>
    s.alignmentClaim
      ? 'An alignment claim asserted by an import or the product, not by an educator; coverage findings count it until an educator confirms or removes it.'
      : 'A relationship asserted by an import or the product, not by an educator.',
  'duplicate-relationship': () => 'Several relationships of one type connect the same two entities; the analysis counts them once.',
  'assessment-gap': () => 'Material in this projection teaches this standard, but no assessment in it assesses or aligns to the standard.',
  'orphan-entity': () => 'No relationship in this projection references this entity.',
};

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const sorted = (values: Iterable<string>) => [...new Set(values)].sort(byCodeUnits);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const normalized = (value: string) => value.normalize('NFKC').trim().toLowerCase();

/** Grade words the products send for the two grades before 1; numbers lose leading zeros ("04" is 4). */
const GRADE_ALIASES: Readonly<Record<string, string>> = { k: '0', kg: '0', kindergarten: '0', pk: '-1', prek: '-1', 'pre-k': '-1', tk: '-1' };
/** A range wider than a K–12 span plus one is not a grade range (and would be costly to expand). */
const MAX_GRADE_RANGE = 14;

function gradeNumber(token: string): number | null {
  const alias = GRADE_ALIASES[token];
  if (alias !== undefined) return Number(alias);
  return /^\d{1,2}$/.test(token) ? Number(token) : null;
}

/** A grade level as a set of comparable tokens: aliases and numbers normalized, a range such as 9-12 or K–2 expanded. */
export function gradeTokens(level: string): string[] {
  const value = normalized(level).replace(/\s+/g, '');
  const single = gradeNumber(value);
  if (single !== null) return [String(single)];
  const range = /^([a-z]{1,2}|\d{1,2})[-–](\d{1,2})$/.exec(value);
  if (range) {
    const low = gradeNumber(range[1]!);
    const high = gradeNumber(range[2]!);
    if (low !== null && high !== null && low <= high && high - low < MAX_GRADE_RANGE) {
      return Array.from({ length: high - low + 1 }, (_, i) => String(low + i));
    }
  }
  return [value];
}

/** A standard's identity for duplicate detection: the framework, and the code with case and separators normalized (4.NF.A.1 = 4 nf a 1). */
function standardKey(entity: Entity): string | null {
  const framework = entity.attributes?.framework;
  const code = entity.attributes?.code;
  if (!framework || !code) return null;
  const codeKey = normalized(code)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join('.');
  return codeKey ? JSON.stringify([normalized(framework).replace(/\s+/g, ' '), codeKey]) : null;
}

/** The canonical graph the projection id hashes: sorted, titles left out (they are never read). */
function canonicalGraph(entities: readonly Entity[], relationships: readonly Relationship[]) {
  return {
    entities: entities.map((e) => [
      e.id,
      e.type,
      e.attributes?.gradeLevels ? sorted(e.attributes.gradeLevels) : null,
      e.attributes?.subject ?? null,
      e.attributes?.framework ?? null,
      e.attributes?.code ?? null,
    ]),
    relationships: relationships.map((r) => [r.id, r.type, r.from, r.to, r.provenance.source, r.provenance.assertedBy, r.provenance.assertedAt]),
  };
}

/** Strongly connected components of two or more nodes (Tarjan, iterative), over nodes and successors in code-unit order. */
function cyclicComponents(nodes: readonly string[], successors: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; child: number }[] = [{ node: root, child: 0 }];
    index.set(root, next);
    low.set(root, next);
    next += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = successors.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child]!;
        frame.child += 1;
        if (!index.has(child)) {
          index.set(child, next);
          low.set(child, next);
          next += 1;
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) components.push(sorted(component));
      }
    }
  }
  return components;
}

type Draft = { [K in FindingKind]: { kind: K; entityIds: Iterable<string>; relationshipIds: Iterable<string>; related?: Iterable<string>; signals: FindingSignals<K> } }[FindingKind];

function finding(draft: Draft): ProjectionFinding {
  const entityIds = sorted(draft.entityIds);
  const relationshipIds = sorted(draft.relationshipIds);
  const kind = draft.kind;
  // The rule tables are keyed by kind; TypeScript cannot narrow a correlated union through them.
  const signals = draft.signals as never;
  const severity = SEVERITY_RULES[kind](signals);
  return {
    kind,
    findingId: `fnd_${sha256(JSON.stringify(['education-projection-finding', kind, entityIds, relationshipIds])).slice(0, 24)}`,
    severity,
    subjects: { entityIds, relationshipIds },
    relatedEntityIds: sorted(draft.related ?? []),
    explanation: EXPLANATIONS[kind](signals, severity),
    suggestedAction: SUGGESTED_ACTIONS[kind],
    signals: draft.signals,
  } as ProjectionFinding;
}

/** A map of sets that creates its sets on first use. */
function setMap() {
  const map = new Map<string, Set<string>>();
  return {
    add(key: string, value: string) {
      let set = map.get(key);
      if (!set) map.set(key, (set = new Set()));
      set.add(value);
    },
    get: (key: string): ReadonlySet<string> => map.get(key) ?? new Set(),
  };
}

export function projectEducation(input: EducationProjectionRequest): EducationProjection {
  const entities = [...input.entities].sort((a, b) => byCodeUnits(a.id, b.id));
  const relationships = [...input.relationships].sort((a, b) => byCodeUnits(a.id, b.id));
  const byId = new Map(entities.map((e) => [e.id, e]));
  const drafts: Draft[] = [];

  // 1. Each relationship on its own: endpoints, types, provenance. Only valid ones feed the analysis.
  const valid: Relationship[] = [];
  const referenced = new Set<string>();
  for (const r of relationships) {
    referenced.add(r.from);
    referenced.add(r.to);
    const from = byId.get(r.from);
    const to = byId.get(r.to);
    const present = [from, to].filter((e): e is Entity => e !== undefined).map((e) => e.id);
    if (r.provenance.assertedBy !== 'educator') {
      drafts.push({
        kind: 'unreviewed-relationship',
        entityIds: present,
        relationshipIds: [r.id],
        signals: { relationshipType: r.type, assertedBy: r.provenance.assertedBy, alignmentClaim: ALIGNMENT_CLAIMS.has(r.type) },
      });
    }
    if (!from || !to) {
      const missing = [r.from, r.to].filter((endpoint) => !byId.has(endpoint));
      drafts.push({
        kind: 'dangling-endpoint',
        entityIds: present,
        relationshipIds: [r.id],
        related: missing,
        signals: { relationshipType: r.type, missingEndpoint: !from && !to ? 'both' : !from ? 'from' : 'to' },
      });
    } else if (from.id === to.id) {
      drafts.push({ kind: 'self-reference', entityIds: [from.id], relationshipIds: [r.id], signals: { relationshipType: r.type, entityType: from.type } });
    } else if (!ALLOWED_ENDPOINTS[r.type].from.includes(from.type) || !ALLOWED_ENDPOINTS[r.type].to.includes(to.type)) {
      drafts.push({ kind: 'incompatible-endpoints', entityIds: present, relationshipIds: [r.id], signals: { relationshipType: r.type, fromType: from.type, toType: to.type } });
    } else {
      valid.push(r);
    }
  }

  // 2. Duplicates: relationships of one type between the same two ids (dangling ones too).
  const copies = new Map<string, Relationship[]>();
  for (const r of relationships) {
    const key = JSON.stringify([r.type, r.from, r.to]);
    copies.set(key, [...(copies.get(key) ?? []), r]);
  }
  for (const group of copies.values()) {
    if (group.length < 2) continue;
    const first = group[0]!;
    drafts.push({
      kind: 'duplicate-relationship',
      entityIds: [first.from, first.to].filter((e) => byId.has(e)),
      relationshipIds: group.map((r) => r.id),
      signals: { relationshipType: first.type, copies: group.length, educatorAsserted: group.filter((r) => r.provenance.assertedBy === 'educator').length },
    });
  }
  const standardGroups = new Map<string, string[]>();
  for (const e of entities) {
    const key = e.type === 'standard' ? standardKey(e) : null;
    if (key) standardGroups.set(key, [...(standardGroups.get(key) ?? []), e.id]);
  }
  for (const group of standardGroups.values()) {
    if (group.length > 1) drafts.push({ kind: 'duplicate-standard', entityIds: group, relationshipIds: [], signals: { copies: group.length } });
  }

  // 3. Grade levels of each valid alignment claim.
  const gradeSets = new Map(entities.filter((e) => e.attributes?.gradeLevels?.length).map((e) => [e.id, new Set(e.attributes!.gradeLevels!.flatMap(gradeTokens))]));
  for (const r of valid) {
    const fromGrades = gradeSets.get(r.from);
    const toGrades = gradeSets.get(r.to);
    if (!ALIGNMENT_CLAIMS.has(r.type) || !fromGrades || !toGrades) continue;
    if ([...fromGrades].some((g) => toGrades.has(g))) continue;
    drafts.push({
      kind: 'grade-level-mismatch',
      entityIds: [r.from, r.to],
      relationshipIds: [r.id],
      signals: { relationshipType: r.type, fromGradeLevels: fromGrades.size, toGradeLevels: toGrades.size, sharedGradeLevels: 0 },
    });
  }

  // 4. Cycles among valid prerequisite-of and part-of relationships.
  for (const type of CYCLE_TYPES) {
    const ofType = valid.filter((r) => r.type === type);
    const successors = setMap();
    for (const r of ofType) successors.add(r.from, r.to);
    const nodes = sorted(ofType.map((r) => r.from));
    const ordered = new Map(nodes.map((n) => [n, sorted(successors.get(n))]));
    for (const component of cyclicComponents(nodes, ordered)) {
      const members = new Set(component);
      const inside = ofType.filter((r) => members.has(r.from) && members.has(r.to)).map((r) => r.id);
      drafts.push({ kind: 'cycle', entityIds: component, relationshipIds: inside, signals: { relationshipType: type, entityCount: component.length, relationshipCount: inside.length } });
    }
  }

  // 5. Coverage of each standard: who adopts it (courses), who teaches it (artifacts, activities) and
  //    who assesses it (assessments), directly or through a learning target that aligns to it.
  const typeOf = (id: string) => byId.get(id)!.type;
  const targetsOf = setMap(); // entity → standards and learning targets it aligns to, assesses or teaches
  const standardsOfTarget = setMap(); // learning target → standards it aligns to
  const coursesOf = setMap(); // entity → what it is directly part of
  const adoptedBy = setMap(); // standard → courses aligning to it
  const adoptedStandards = setMap(); // course → standards it aligns to
  for (const r of valid) {
    if (r.type === 'part-of') coursesOf.add(r.from, r.to);
    if (!ALIGNMENT_CLAIMS.has(r.type)) continue;
    const fromType = typeOf(r.from);
    const toType = typeOf(r.to);
    if (fromType === 'course') {
      if (toType === 'standard') {
        adoptedBy.add(r.to, r.from);
        adoptedStandards.add(r.from, r.to);
      }
    } else if (fromType === 'learning-target') {
      if (toType === 'standard') standardsOfTarget.add(r.from, r.to);
    } else {
      targetsOf.add(r.from, r.to);
    }
  }
  /** Standards an entity reaches: directly, or through a learning target it targets. */
  const standardsReached = (id: string) => {
    const reached = new Set<string>();
    for (const target of targetsOf.get(id)) {
      if (typeOf(target) === 'standard') reached.add(target);
      else for (const standard of standardsOfTarget.get(target)) reached.add(standard);
    }
    return reached;
  };
  const teaching = setMap();
  const assessing = setMap();
  const targetsOfStandard = setMap();
  for (const [target, standards] of entities.filter((e) => e.type === 'learning-target').map((e) => [e.id, standardsOfTarget.get(e.id)] as const)) {
    for (const standard of standards) targetsOfStandard.add(standard, target);
  }
  for (const e of entities) {
    if (!TEACHING_TYPES.has(e.type) && e.type !== 'assessment') continue;
    for (const standard of standardsReached(e.id)) (e.type === 'assessment' ? assessing : teaching).add(standard, e.id);
  }
  for (const standard of entities.filter((e) => e.type === 'standard')) {
    const courses = adoptedBy.get(standard.id);
    const signals = {
      adoptingCourses: courses.size,
      teachingEntities: teaching.get(standard.id).size,
      assessingEntities: assessing.get(standard.id).size,
      learningTargets: targetsOfStandard.get(standard.id).size,
    };
    if (signals.teachingEntities === 0) {
      drafts.push({ kind: 'coverage-gap', entityIds: [standard.id], relationshipIds: [], related: courses, signals: { ...signals, teachingEntities: 0 } });
    } else if (signals.assessingEntities === 0) {
      drafts.push({ kind: 'assessment-gap', entityIds: [standard.id], relationshipIds: [], related: courses, signals: { ...signals, assessingEntities: 0 } });
    }
  }

  // 6. Each assessment against the standards of the courses it belongs to (through part-of chains).
  for (const assessment of entities.filter((e) => e.type === 'assessment')) {
    const courses = new Set<string>();
    const seen = new Set<string>([assessment.id]);
    const queue = [assessment.id];
    while (queue.length > 0) {
      for (const container of coursesOf.get(queue.shift()!)) {
        if (seen.has(container)) continue;
        seen.add(container);
        if (typeOf(container) === 'course') courses.add(container);
        else queue.push(container);
      }
    }
    if (targetsOf.get(assessment.id).size === 0) {
      drafts.push({ kind: 'unaligned-assessment', entityIds: [assessment.id], relationshipIds: [], related: courses, signals: { courses: courses.size } });
      continue;
    }
    const courseStandards = new Set([...courses].flatMap((course) => [...adoptedStandards.get(course)]));
    const aligned = standardsReached(assessment.id);
    // Aligned only to learning targets with no standard: nothing to compare, so no finding.
    if (courseStandards.size === 0 || aligned.size === 0 || [...aligned].some((s) => courseStandards.has(s))) continue;
    drafts.push({
      kind: 'assessment-off-course',
      entityIds: [assessment.id],
      relationshipIds: [],
      related: courses,
      signals: { courses: courses.size, courseStandards: courseStandards.size, alignedStandards: aligned.size, sharedStandards: 0 },
    });
  }

  // 7. Entities nothing references (standards are covered by coverage-gap instead).
  for (const e of entities) {
    if (e.type !== 'standard' && !referenced.has(e.id)) drafts.push({ kind: 'orphan-entity', entityIds: [e.id], relationshipIds: [], signals: { entityType: e.type } });
  }

  const severityRank = new Map(severityOrder.map((s, i) => [s, i]));
  const kindRank = new Map(findingKinds.map((k, i) => [k, i]));
  const findings = drafts
    .map(finding)
    .sort(
      (a, b) => severityRank.get(a.severity)! - severityRank.get(b.severity)! || kindRank.get(a.kind)! - kindRank.get(b.kind)! || byCodeUnits(a.findingId, b.findingId),
    );

  const decisionSignals: EducationProjection['decisionSignals'] = [];
  for (const f of findings) {
    const last = decisionSignals[decisionSignals.length - 1];
    if (last && last.kind === f.kind && last.severity === f.severity) last.findingIds.push(f.findingId);
    else decisionSignals.push({ signalId: '', kind: f.kind, severity: f.severity, suggestedAction: f.suggestedAction, findingIds: [f.findingId], requiresHumanDecision: true });
  }
  for (const signal of decisionSignals) {
    signal.findingIds.sort(byCodeUnits);
    signal.signalId = `dsg_${sha256(JSON.stringify(['education-decision-signal', signal.kind, signal.severity, signal.findingIds])).slice(0, 24)}`;
  }

  const countBy = <T extends string>(keys: readonly T[], of: (f: ProjectionFinding) => T) =>
    Object.fromEntries(keys.map((key) => [key, findings.filter((f) => of(f) === key).length])) as Record<T, number>;
  return {
    projectionId: `prj_${sha256(JSON.stringify(canonicalGraph(entities, relationships))).slice(0, 24)}`,
    algorithm: PROJECTION_ALGORITHM,
    effects: { readOnly: true, trustedMemoryWritten: false, forgeMutationRun: false },
    counts: {
      entities: entities.length,
      relationships: relationships.length,
      findings: findings.length,
      bySeverity: countBy(severityOrder, (f) => f.severity),
      byKind: countBy(findingKinds, (f) => f.kind),
    },
    findings,
    decisionSignals,
  };
}
