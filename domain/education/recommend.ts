// artifacts/recommend: rank candidate artifacts against a teaching goal, detect near-duplicates and
// say what an educator would do with each (reuse, adapt, translate, differentiate, convert format).
// Pure and deterministic: candidates are put in id order first and every later step works on that
// order, so the same input in any order gives the same answer, byte for byte. The answer carries the
// caller's ids and computed numbers only, never a title, summary, excerpt or the goal's words.
//
// Score = Σ value × weight ÷ Σ weight, over the signals that apply (a signal whose goal field is
// absent does not apply: value null). Every signal value is in 0..1, so the score is too.
import { createHash } from 'node:crypto';
import type {
  ArtifactRecommendations,
  RecommendArtifactsRequest,
  recommendationActions,
  recommendationReasons,
  signalNames,
} from '@hosted-notes/runtime-sdk';

type SignalName = (typeof signalNames)[number];
type Reason = (typeof recommendationReasons)[number];
type Action = (typeof recommendationActions)[number];
type Candidate = RecommendArtifactsRequest['candidates'][number];
type Goal = RecommendArtifactsRequest['goal'];

export const RECOMMEND_ALGORITHM = 'artifact-recommend@1' as const;

/**
 * The weights (they add up to 1). Standards weigh most: alignment to the standard the educator
 * teaches is what makes an artifact usable at all. Goal words come next but are a lexical, noisy
 * signal. Course, format and grade levels are each a moderate fit signal; educator acceptance is a
 * quality prior, not relevance, so it cannot lift an unrelated artifact far. Locale weighs least
 * because a language mismatch is already named by the `translate` recommendation.
 */
export const RECOMMEND_WEIGHTS: Readonly<Record<SignalName, number>> = {
  goal: 0.25,
  standard: 0.3,
  course: 0.1,
  format: 0.1,
  gradeLevel: 0.1,
  locale: 0.05,
  educatorAccepted: 0.1,
};

/** The same language in another region (en-GB for en-US) is half a match: readable, but spelling and conventions differ. */
export const SAME_LANGUAGE_OTHER_REGION = 0.5;

/** Scores, contributions and similarities are rounded to 4 decimals, so no float noise reaches the output or the order. */
const DECIMALS = 4;

/**
 * Word 3-shingles: short enough to match in 300-word excerpts, long enough that shared common phrases
 * are not enough. (nearDuplicates builds its keys for exactly three words.)
 */
export const SHINGLE_WORDS = 3;
/** Texts with fewer distinct shingles (about ten words) say too little to call two artifacts duplicates; they match by content hash only. */
export const MIN_SHINGLES = 8;
/**
 * Jaccard similarity at or above which two candidates are near-duplicates. One edited word changes up
 * to three shingles, so in a 100-word excerpt about three scattered word edits still reach 0.8 and
 * four do not: copies with small edits, not two artifacts on the same topic.
 */
export const NEAR_DUPLICATE_JACCARD = 0.8;

/**
 * Words left out of goal-word overlap: English function words and the words nearly every educator's
 * goal contains (students, lesson, use); they match everything and would reward long texts. Shingles keep them, since they carry a text's structure.
 */
const STOP_WORDS = new Set(
  ('a an and are as at be by for from has have how i in into is it its of on or our so that the their them they this to was we what when which who will with ' +
    'students student learners learner lesson about use using can my me do does').split(' '),
);

const round = (value: number) => {
  const factor = 10 ** DECIMALS;
  return Math.round(value * factor) / factor;
};
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Lowercase words (letters and digits, any script) after Unicode compatibility normalization. */
function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Content words for goal overlap: no stop words, no single characters, a plural -s folded (fractions → fraction). */
function contentWords(...texts: readonly string[][]): Set<string> {
  const out = new Set<string>();
  for (const word of texts.flat()) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    out.add(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  }
  return out;
}

const normalizeAll = (values: readonly string[]) => [...new Set(values.map((v) => v.trim().toLowerCase()))].sort(byCodeUnits);
const language = (tag: string) => tag.split('-')[0]!.toLowerCase();

type Signal = { value: number | null; weight: number; contribution: number; matched: number | null; of: number | null };

function overlap(goal: ReadonlySet<string>, candidate: ReadonlySet<string>): { value: number | null; matched: number | null; of: number | null } {
  if (goal.size === 0) return { value: null, matched: null, of: null };
  let matched = 0;
  for (const item of goal) if (candidate.has(item)) matched += 1;
  return { value: matched / goal.size, matched, of: goal.size };
}

const equality = (wanted: string | undefined, actual: string | undefined) => ({ value: wanted === undefined ? null : wanted === actual ? 1 : 0, matched: null, of: null });

function localeMatch(wanted: string | undefined, actual: string) {
  if (wanted === undefined) return { value: null, matched: null, of: null };
  if (wanted.toLowerCase() === actual.toLowerCase()) return { value: 1, matched: null, of: null };
  return { value: language(wanted) === language(actual) ? SAME_LANGUAGE_OTHER_REGION : 0, matched: null, of: null };
}

type PreparedGoal = { words: Set<string>; standards: Set<string>; grades: Set<string>; goal: Goal };
/** A candidate with its text split into words once (goal overlap and shingles both read them). */
type PreparedCandidate = { candidate: Candidate; tokens: { title: string[]; summary: string[]; excerpt: string[] | null } };

function prepare(candidate: Candidate): PreparedCandidate {
  const tokens = { title: words(candidate.title), summary: words(candidate.summary ?? ''), excerpt: candidate.excerpt === undefined ? null : words(candidate.excerpt) };
  return { candidate, tokens };
}

function signalsOf(goal: PreparedGoal, { candidate, tokens }: PreparedCandidate): { signals: Record<SignalName, Signal>; score: number } {
  const candidateWords = contentWords(tokens.title, tokens.summary, tokens.excerpt ?? []);
  const raw: Record<SignalName, { value: number | null; matched: number | null; of: number | null }> = {
    goal: overlap(goal.words, candidateWords),
    standard: overlap(goal.standards, new Set(candidate.standardIds)),
    course: equality(goal.goal.courseId, candidate.courseId),
    format: equality(goal.goal.format, candidate.format),
    gradeLevel: overlap(goal.grades, new Set(normalizeAll(candidate.gradeLevels))),
    locale: localeMatch(goal.goal.locale, candidate.locale),
    educatorAccepted: { value: candidate.educatorAccepted ? 1 : 0, matched: null, of: null },
  };
  const names = Object.keys(RECOMMEND_WEIGHTS) as SignalName[];
  // educatorAccepted always applies, so the sum is never zero.
  const applicable = names.reduce((sum, name) => sum + (raw[name].value === null ? 0 : RECOMMEND_WEIGHTS[name]), 0);
  let total = 0;
  const signals = {} as Record<SignalName, Signal>;
  for (const name of names) {
    const { value, matched, of } = raw[name];
    const share = value === null ? 0 : (value * RECOMMEND_WEIGHTS[name]) / applicable;
    total += share;
    signals[name] = { value: value === null ? null : round(value), weight: RECOMMEND_WEIGHTS[name], contribution: round(share), matched, of };
  }
  return { signals, score: round(Math.min(1, total)) };
}

const actionOf: Record<Reason, Action> = {
  'language-differs': 'translate',
  'format-differs': 'convert-format',
  'grade-levels-differ': 'differentiate',
  'standards-partial': 'adapt',
  'course-differs': 'adapt',
  'locale-region-differs': 'adapt',
  aligned: 'reuse',
};

/**
 * The reasons that apply, in precedence order, and the action of the first. The order follows the
 * size of the change: a text in another language must be translated before anything else is useful;
 * another format is rebuilt; other grade levels need differentiated versions; partial standards,
 * another course or another regional variant need adaptation; otherwise the artifact is reused.
 */
function recommend(goal: PreparedGoal, candidate: Candidate, signals: Record<SignalName, Signal>): { action: Action; reasons: Reason[] } {
  const reasons: Reason[] = [];
  const wantedLocale = goal.goal.locale;
  if (wantedLocale !== undefined && language(wantedLocale) !== language(candidate.locale)) reasons.push('language-differs');
  if (goal.goal.format !== undefined && goal.goal.format !== candidate.format) reasons.push('format-differs');
  if (signals.gradeLevel.value !== null && signals.gradeLevel.value < 1) reasons.push('grade-levels-differ');
  if (signals.standard.value !== null && signals.standard.value < 1) reasons.push('standards-partial');
  if (goal.goal.courseId !== undefined && goal.goal.courseId !== candidate.courseId) reasons.push('course-differs');
  if (wantedLocale !== undefined && language(wantedLocale) === language(candidate.locale) && signals.locale.value !== 1) reasons.push('locale-region-differs');
  if (reasons.length === 0) reasons.push('aligned');
  return { action: actionOf[reasons[0]!], reasons };
}

type NearDuplicate = { candidateId: string; similarity: number; basis: 'content-sha256' | 'shingles' };

/**
 * Exact interning of word-id triples into dense shingle ids: an open-addressing table over typed
 * arrays (linear probing, the stored triple compared on every probe, so no two shingles share an id).
 * Maps keyed by joined strings or by 40-bit numbers cost several times more at 250 × 1,000 shingles.
 */
function shingleTable(capacity: number) {
  let size = 1;
  while (size < capacity * 2) size *= 2;
  const mask = size - 1;
  const slots = new Int32Array(size).fill(-1);
  const triples = new Int32Array(Math.max(1, capacity) * 3);
  let count = 0;
  return (a: number, b: number, c: number): number => {
    // A multiplicative mix of the three ids (constants from MurmurHash3/xxHash): any spread will do, equality is checked.
    let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77) ^ Math.imul(c + 0x165667b1, 0xc2b2ae3d);
    h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f);
    h ^= h >>> 13;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = slots[slot]!;
      if (id === -1) {
        slots[slot] = count;
        triples.set([a, b, c], count * 3);
        return count++;
      }
      if (triples[id * 3] === a && triples[id * 3 + 1] === b && triples[id * 3 + 2] === c) return id;
    }
  };
}

/**
 * Near-duplicate pairs among candidates in id order: equal content hashes, or a Jaccard similarity of
 * word 3-shingles at or above NEAR_DUPLICATE_JACCARD. Shingles come from the excerpt when there is
 * one (the content), otherwise from title and summary. Intersections are counted through an inverted
 * index (shingle → candidates), so unrelated candidates cost nothing.
 */
function nearDuplicates(candidates: readonly PreparedCandidate[]): NearDuplicate[][] {
  const n = candidates.length;
  const texts = candidates.map(({ tokens }) => tokens.excerpt ?? [...tokens.title, ...tokens.summary]);
  const wordIds = new Map<string, number>();
  const capacity = texts.reduce((sum, text) => sum + text.length, 0);
  const shingleId = shingleTable(capacity);
  const postings: number[][] = [];
  // The last candidate each shingle was counted for: a repeated shingle counts once per candidate.
  const lastSeen = new Int32Array(Math.max(1, capacity)).fill(-1);
  const sizes = texts.map((text, index) => {
    const ids = text.map((word) => {
      let id = wordIds.get(word);
      if (id === undefined) wordIds.set(word, (id = wordIds.size));
      return id;
    });
    let distinct = 0;
    for (let i = 0; i + SHINGLE_WORDS <= ids.length; i += 1) {
      const id = shingleId(ids[i]!, ids[i + 1]!, ids[i + 2]!);
      if (lastSeen[id] === index) continue;
      lastSeen[id] = index;
      distinct += 1;
      if (id === postings.length) postings.push([]);
      postings[id]!.push(index);
    }
    return distinct;
  });
  // Pair counts fit 16 bits: an excerpt of 2,000 characters has at most 1,000 words.
  const shared = new Uint16Array(n * n);
  for (const list of postings) {
    for (let a = 0; a < list.length; a += 1) for (let b = a + 1; b < list.length; b += 1) shared[list[a]! * n + list[b]!]! += 1;
  }
  const found: NearDuplicate[][] = candidates.map(() => []);
  for (let i = 0; i < n; i += 1) {
    for (let j = i + 1; j < n; j += 1) {
      const hashI = candidates[i]!.candidate.contentSha256;
      let pair: { similarity: number; basis: NearDuplicate['basis'] } | null = null;
      if (hashI !== undefined && hashI === candidates[j]!.candidate.contentSha256) pair = { similarity: 1, basis: 'content-sha256' };
      else if (sizes[i]! >= MIN_SHINGLES && sizes[j]! >= MIN_SHINGLES) {
        const common = shared[i * n + j]!;
        const similarity = common / (sizes[i]! + sizes[j]! - common);
        if (similarity >= NEAR_DUPLICATE_JACCARD) pair = { similarity: round(similarity), basis: 'shingles' };
      }
      if (!pair) continue;
      found[i]!.push({ candidateId: candidates[j]!.candidate.id, ...pair });
      found[j]!.push({ candidateId: candidates[i]!.candidate.id, ...pair });
    }
  }
  // Pushed in id order (i ascending, then j ascending), so each list is already sorted by candidate id.
  return found;
}

const sortedSet = (values: readonly string[]) => [...new Set(values)].sort(byCodeUnits);

/**
 * The request in one canonical form, hashed into the recommendation id: candidates in id order, sets
 * sorted and deduplicated, every object's keys written in a fixed order (absent fields left out).
 */
function canonicalRequest(request: RecommendArtifactsRequest, candidates: readonly Candidate[]): string {
  const { goal } = request;
  return JSON.stringify({
    goal: {
      description: goal.description,
      standardIds: sortedSet(goal.standardIds),
      courseId: goal.courseId,
      gradeLevels: normalizeAll(goal.gradeLevels),
      format: goal.format,
      locale: goal.locale,
    },
    candidates: candidates.map((c) => ({
      id: c.id,
      title: c.title,
      summary: c.summary,
      excerpt: c.excerpt,
      contentSha256: c.contentSha256,
      standardIds: sortedSet(c.standardIds),
      courseId: c.courseId,
      gradeLevels: normalizeAll(c.gradeLevels),
      format: c.format,
      locale: c.locale,
      educatorAccepted: c.educatorAccepted,
    })),
    limit: request.limit,
  });
}

export function recommendArtifacts(request: RecommendArtifactsRequest): ArtifactRecommendations {
  const candidates = [...request.candidates].sort((a, b) => byCodeUnits(a.id, b.id));
  const goal: PreparedGoal = {
    words: contentWords(words(request.goal.description)),
    standards: new Set(request.goal.standardIds),
    grades: new Set(normalizeAll(request.goal.gradeLevels)),
    goal: request.goal,
  };
  const prepared = candidates.map(prepare);
  const duplicates = nearDuplicates(prepared);
  const ranked = prepared
    .map((entry, index) => ({ candidate: entry.candidate, index, ...signalsOf(goal, entry) }))
    .sort((a, b) => b.score - a.score || byCodeUnits(a.candidate.id, b.candidate.id));
  const rankOf = new Map(ranked.map((entry, position) => [entry.index, position + 1]));

  const results = ranked.slice(0, request.limit).map((entry, position) => ({
    candidateId: entry.candidate.id,
    rank: position + 1,
    score: entry.score,
    signals: entry.signals,
    recommendation: recommend(goal, entry.candidate, entry.signals),
    nearDuplicates: duplicates[entry.index]!,
  }));

  return {
    recommendationId: `rec_${sha256(canonicalRequest(request, candidates)).slice(0, 24)}`,
    algorithm: RECOMMEND_ALGORITHM,
    candidateCount: candidates.length,
    weights: { ...RECOMMEND_WEIGHTS },
    nearDuplicate: { shingleWords: SHINGLE_WORDS, minShingles: MIN_SHINGLES, jaccardThreshold: NEAR_DUPLICATE_JACCARD },
    results,
    duplicateGroups: duplicateGroups(candidates, duplicates, rankOf),
  };
}

/** Connected components of the near-duplicate pairs (union-find over id order), ordered by the rank of their best member. */
function duplicateGroups(candidates: readonly Candidate[], duplicates: readonly NearDuplicate[][], rankOf: ReadonlyMap<number, number>) {
  const indexOf = new Map(candidates.map((candidate, index) => [candidate.id, index]));
  const parent = candidates.map((_, index) => index);
  const root = (index: number): number => {
    while (parent[index] !== index) index = parent[index] = parent[parent[index]!]!;
    return index;
  };
  duplicates.forEach((pairs, index) => {
    for (const pair of pairs) {
      const [a, b] = [root(index), root(indexOf.get(pair.candidateId)!)];
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  });
  const members = new Map<number, number[]>();
  candidates.forEach((_, index) => {
    if (duplicates[index]!.length === 0) return;
    const group = members.get(root(index)) ?? [];
    group.push(index);
    members.set(root(index), group);
  });
  return [...members.values()]
    .map((group) => {
      const best = group.reduce((a, b) => (rankOf.get(a)! <= rankOf.get(b)! ? a : b));
      const ids = group.map((index) => candidates[index]!.id);
      return { rank: rankOf.get(best)!, group: { groupId: `dup_${sha256(JSON.stringify(ids)).slice(0, 24)}`, candidateIds: ids, representativeId: candidates[best]!.id } };
    })
    .sort((a, b) => a.rank - b.rank)
    .map(({ group }) => group);
}
