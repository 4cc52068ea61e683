// Standards crosswalk: candidate alignments between the items of two CASE framework slices, scored
// from explainable signals. Pure and deterministic: the same slices in any order give the same
// answer, byte for byte (everything is sorted by identifier, ids are hashes of canonical content).
// The answer names items by the identifiers the caller sent and carries only computed numbers and
// fixed text: a statement, code, title or keyword never leaves this module.
//
// Scoring (docs/education-crosswalk.md has worked examples):
// - case_identifier: the same CFItem identifier on both sides is the same item, so it is decisive
//   (confidence 1, basis case_identity) rather than weighted.
// - otherwise confidence = Σ weight × value over statement, code, grade, subject, domain and
//   concept keywords (the weights sum to 1). A signal whose data is missing on either side counts 0:
//   confidence never rises because something was not sent.
// - a pair is scored only when it shares a content signal (identifier, code or a statement or
//   keyword word, found through inverted indexes); grade, subject and domain alone never propose.
// - per source item the candidates at or above minConfidence, most confident first (ties by target
//   identifier), at most maxCandidatesPerItem.
import { createHash } from 'node:crypto';

export const CROSSWALK_SCORING_VERSION = 'crosswalk-v1';

/** The weights of the weighted signals; they sum to 1 so the confidence is a 0..1 share of the evidence. */
export const CROSSWALK_WEIGHTS = {
  // What the standard asks of a learner: the strongest evidence, but publishers reword freely, so
  // identical wording alone (with nothing else agreeing) stays at 0.40.
  statement: 0.4,
  // Many frameworks reuse a common coding (4.NF.A.1); equal codes are strong evidence, but codes are
  // only comparable within one scheme, so it weighs less than the statement.
  code: 0.25,
  // Crosswalks mostly align within a grade; necessary context, but hundreds of items share a grade.
  grade: 0.15,
  // The domain narrows a grade to a cluster of a few dozen items.
  domain: 0.1,
  // Nearly every pair of a crosswalk shares its subject, so it separates little.
  subject: 0.05,
  // Optional and publisher-specific; agreement helps, absence is common.
  conceptKeywords: 0.05,
} as const;

/** Code signal values. */
const CODE_EXACT = 1;
/** One code is the other with a namespace in front (CCSS.MATH.CONTENT.4.NF.A.1 and 4.NF.A.1): the same standard, restated by another publisher. */
const CODE_PREFIXED = 0.8;
/** A suffix is only trusted from this many segments: "A.1" alone matches a standard in every domain. */
const CODE_MIN_SUFFIX_SEGMENTS = 3;
/** Codes that share leading segments (4.NF.A.1 and 4.NF.A.2) are siblings in one cluster: related, not the same, so at most half. */
const CODE_SIBLING_MAX = 0.5;
/** Siblings need at least grade and domain in common (two segments); one shared segment is only the grade. */
const CODE_MIN_SHARED_PREFIX = 2;

/** A standard moved by one grade is a common crosswalk pattern, but much weaker evidence than the same grade. */
const GRADE_ADJACENT = 0.25;

/** Below this statement overlap, the same CFItem identifier likely names a revised item: a reviewer should compare versions. */
const IDENTITY_STATEMENT_DIVERGENCE = 0.5;

/** Strength bands of the rationale: fixed words, so the rationale says how strong without quoting anything. */
const STRONG = 0.75;
const MODERATE = 0.4;

/**
 * Words that say nothing about which standard this is: English function words, and words that open
 * nearly every standard statement in every framework ("students will understand and use …").
 */
const STOPWORDS = new Set(
  (
    'a an and are as at be been by can do does for from has have how in into is it its of on or that the their them then there these this those ' +
    'to was were what when where which while who whose will with within without than such so not no but if both each other also may should ' +
    'student students learner learners will able use using used understand understanding include including includes e g eg ie i.e e.g etc ' +
    'grade level demonstrate apply'
  ).split(/\s+/),
);

/** Common names of one subject (the only aliases): products send both. */
const SUBJECT_ALIASES: Record<string, string> = {
  math: 'mathematics',
  maths: 'mathematics',
  ela: 'english language arts',
  'english language arts and literacy': 'english language arts',
};

/** CEDS level spellings of one level, and the order adjacency is measured in. */
const GRADE_ALIASES: Record<string, string> = { K: 'KG', KINDERGARTEN: 'KG', PREK: 'PK', PREKINDERGARTEN: 'PK' };
const GRADE_ORDINALS: Record<string, number> = { PK: -1, KG: 0 };

export type CrosswalkItemInput = {
  identifier: string;
  humanCodingScheme?: string | undefined;
  fullStatement: string;
  educationLevel: readonly string[];
  subject: readonly string[];
  domain?: string | undefined;
  conceptKeywords: readonly string[];
};
export type CrosswalkRequest = {
  source: { framework: { identifier: string }; items: readonly CrosswalkItemInput[] };
  target: { framework: { identifier: string }; items: readonly CrosswalkItemInput[] };
  options: { minConfidence: number; maxCandidatesPerItem: number };
};

export type SignalName = 'case_identifier' | 'statement' | 'code' | 'grade' | 'subject' | 'domain' | 'concept_keywords';
export type Caution = 'grade_mismatch' | 'subject_mismatch' | 'domain_mismatch' | 'identifier_statement_differs';
export type Signal = { name: SignalName; value: number; weight: number | null; contribution: number | null };
export type Candidate = {
  candidateId: string;
  sourceItem: string;
  targetItem: string;
  confidence: number;
  basis: 'case_identity' | 'weighted_signals';
  signals: Signal[];
  cautions: Caution[];
  rationale: string;
  status: 'proposed';
  requiresQualifiedReview: true;
};
export type CrosswalkResult = {
  crosswalkId: string;
  sourceFramework: string;
  targetFramework: string;
  scoring: {
    version: string;
    minConfidence: number;
    maxCandidatesPerItem: number;
    weights: { statement: number; code: number; grade: number; subject: number; domain: number; conceptKeywords: number };
  };
  candidates: Candidate[];
  unmatchedSourceItems: string[];
  counts: { sourceItems: number; targetItems: number; pairsConsidered: number; candidates: number };
};

// ---------------------------------------------------------------------------------------------
// Normalization (each documented in docs/education-crosswalk.md)

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Code-unit order: the same on every machine and locale (localeCompare is not). */
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Letters and digits of `text` after NFKC and lowercasing; everything else separates words. */
function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A light plural fold, the same on both sides: quantities → quantity, fractions → fraction (not class → clas). */
function fold(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The set of statement words: no stopwords, no single letters (the a and b of "a/b"), plurals folded. Digits stay: "1,000" and "100" are content. */
export function statementWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of words(text)) {
    if (STOPWORDS.has(word)) continue;
    if (word.length === 1 && !/\p{N}/u.test(word)) continue;
    out.add(fold(word));
  }
  return out;
}

/** Code segments: runs of letters or of digits (4NF → 4, nf), lowercased, numbers without leading zeros (04 → 4). */
export function codeSegments(code: string): string[] {
  return (code.normalize('NFKC').toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []).map((s) => (/^\d+$/.test(s) ? s.replace(/^0+(?=\d)/, '') : s));
}

/** A CEDS level: uppercase letters and digits only, numbers without leading zeros, K/PreK spellings unified. */
export function normalizeGrade(level: string): string {
  const compact = level.normalize('NFKC').toUpperCase().replace(/[^\p{L}\p{N}]/gu, '');
  if (/^\d+$/.test(compact)) return compact.replace(/^0+(?=\d)/, '');
  return GRADE_ALIASES[compact] ?? compact;
}

function gradeOrdinal(grade: string): number | null {
  if (/^\d+$/.test(grade)) return Number(grade);
  return GRADE_ORDINALS[grade] ?? null;
}

/** A subject: its words joined by one space, then the alias table. */
function normalizeSubject(subject: string): string {
  const joined = words(subject).join(' ');
  return SUBJECT_ALIASES[joined] ?? joined;
}

/** A keyword phrase: its words, plurals folded, joined by one space. */
function normalizeKeyword(keyword: string): string {
  return words(keyword).map(fold).join(' ');
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

// ---------------------------------------------------------------------------------------------
// Prepared items: everything a pair needs, computed once per item

type Prepared = {
  identifier: string;
  identityKey: string;
  /** Interned statement word ids. */
  words: Int32Array;
  code: string[] | null;
  codeKey: string | null;
  grades: string[];
  ordinals: number[];
  subjects: Set<string>;
  domain: Set<string> | null;
  keywords: Int32Array;
  /** Interned grades + subjects + domain: a slice has few of these, so their pair values are cached. */
  contextId: number;
};

class Interner {
  private readonly ids = new Map<string, number>();
  id(word: string): number {
    let id = this.ids.get(word);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(word, id);
    }
    return id;
  }
}

type Interners = { words: Interner; keywords: Interner; contexts: Interner };

function prepare(item: CrosswalkItemInput, ids: Interners): Prepared {
  const code = item.humanCodingScheme ? codeSegments(item.humanCodingScheme) : [];
  const grades = [...new Set(item.educationLevel.map(normalizeGrade).filter((g) => g !== ''))].sort(byString);
  const subjects = [...new Set(item.subject.map(normalizeSubject).filter((s) => s !== ''))].sort(byString);
  const domain = [...new Set(words(item.domain ?? '').filter((w) => !STOPWORDS.has(w)).map(fold))].sort(byString);
  const keywords = new Set(item.conceptKeywords.map(normalizeKeyword).filter((k) => k !== ''));
  return {
    identifier: item.identifier,
    // CASE identifiers are UUIDs, which compare without regard to case or surrounding space.
    identityKey: item.identifier.trim().toLowerCase(),
    words: Int32Array.from(statementWords(item.fullStatement), (w) => ids.words.id(w)),
    code: code.length > 0 ? code : null,
    codeKey: code.length > 0 ? code.join('.') : null,
    grades,
    ordinals: grades.map(gradeOrdinal).filter((o): o is number => o !== null),
    subjects: new Set(subjects),
    domain: domain.length > 0 ? new Set(domain) : null,
    keywords: Int32Array.from(keywords, (k) => ids.keywords.id(k)),
    contextId: ids.contexts.id(JSON.stringify([grades, subjects, domain])),
  };
}

// ---------------------------------------------------------------------------------------------
// Signals of one pair

function codeValue(a: string[], b: string[]): number {
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  const offset = longer.length - shorter.length;
  let suffix = true;
  for (let i = 0; i < shorter.length && suffix; i++) suffix = shorter[i] === longer[offset + i];
  if (suffix && offset === 0) return CODE_EXACT;
  if (suffix && shorter.length >= CODE_MIN_SUFFIX_SEGMENTS) return CODE_PREFIXED;
  // Siblings, read from the front as written, and with the longer code's namespace dropped
  // (MA.4.NF.A.1 against 4.NF.A.2 is 4.NF.A.1 against 4.NF.A.2).
  let prefix = 0;
  while (prefix < shorter.length && a[prefix] === b[prefix]) prefix++;
  let aligned = 0;
  // A whole short code at the end of a longer one is the untrusted suffix above, not a sibling.
  while (!suffix && aligned < shorter.length && shorter[aligned] === longer[offset + aligned]) aligned++;
  const share = Math.max(prefix >= CODE_MIN_SHARED_PREFIX ? prefix / longer.length : 0, aligned >= CODE_MIN_SHARED_PREFIX ? aligned / shorter.length : 0);
  return CODE_SIBLING_MAX * share;
}

/** Grade overlap (Jaccard of the level sets), or GRADE_ADJACENT when none is shared but two are one grade apart. */
function gradeValue(a: Prepared, b: Prepared): number {
  let shared = 0;
  for (const g of a.grades) if (b.grades.includes(g)) shared++;
  if (shared > 0) return shared / (a.grades.length + b.grades.length - shared);
  for (const x of a.ordinals) for (const y of b.ordinals) if (Math.abs(x - y) === 1) return GRADE_ADJACENT;
  return 0;
}

/** One weighted signal, value and contribution rounded to 4 decimals; null when it does not hold (or its data is missing). */
function weighted(name: SignalName, raw: number | null, weight: number): Signal | null {
  if (raw === null) return null;
  const value = round4(raw);
  return value > 0 ? { name, value, weight, contribution: round4(value * weight) } : null;
}

/** The grade, subject and domain signals and cautions of two contexts (cached per context pair). */
type PairContext = { signals: Signal[]; cautions: Caution[]; contribution: number };

function pairContext(s: Prepared, t: Prepared): PairContext {
  const signals: (Signal | null)[] = [];
  const cautions: Caution[] = [];
  if (s.grades.length > 0 && t.grades.length > 0) {
    signals.push(weighted('grade', gradeValue(s, t), CROSSWALK_WEIGHTS.grade));
    if (!s.grades.some((g) => t.grades.includes(g))) cautions.push('grade_mismatch');
  }
  if (s.subjects.size > 0 && t.subjects.size > 0) {
    const shared = [...s.subjects].some((x) => t.subjects.has(x));
    signals.push(weighted('subject', shared ? 1 : 0, CROSSWALK_WEIGHTS.subject));
    if (!shared) cautions.push('subject_mismatch');
  }
  if (s.domain && t.domain) {
    const domain = jaccard(s.domain, t.domain);
    signals.push(weighted('domain', domain, CROSSWALK_WEIGHTS.domain));
    if (domain === 0) cautions.push('domain_mismatch');
  }
  const present = signals.filter((x): x is Signal => x !== null);
  return { signals: present, cautions, contribution: present.reduce((sum, x) => sum + x.contribution!, 0) };
}

function statementValue(s: Prepared, t: Prepared, sharedWords: number): number {
  return sharedWords === 0 ? 0 : sharedWords / (s.words.length + t.words.length - sharedWords);
}
function codeSignalValue(s: Prepared, t: Prepared): number | null {
  if (!s.code || !t.code) return null;
  return s.codeKey === t.codeKey ? CODE_EXACT : codeValue(s.code, t.code);
}
function keywordValue(s: Prepared, t: Prepared, sharedKeywords: number): number {
  return sharedKeywords === 0 ? 0 : sharedKeywords / (s.keywords.length + t.keywords.length - sharedKeywords);
}

/** A contribution from a share (shared / union), rounded as weighted() rounds it; numbers only, for the hot path. */
function shareContribution(shared: number, sizeA: number, sizeB: number, weight: number): number {
  if (shared === 0) return 0;
  const value = round4(shared / (sizeA + sizeB - shared));
  return value > 0 ? round4(value * weight) : 0;
}

/**
 * The confidence of a weighted pair: the sum of the rounded contributions (statement + code +
 * context + keywords), rounded to 4 decimals. -1 when it cannot reach `floor` even with a full code
 * match: the code (the costliest signal) is then not compared. Float addition is monotonic, so the
 * bound is exact and pruning never changes an answer.
 */
function confidenceOf(s: Prepared, t: Prepared, sharedWords: number, sharedKeywords: number, contextContribution: number, floor: number): number {
  const statement = shareContribution(sharedWords, s.words.length, t.words.length, CROSSWALK_WEIGHTS.statement);
  const keywords = shareContribution(sharedKeywords, s.keywords.length, t.keywords.length, CROSSWALK_WEIGHTS.conceptKeywords);
  if (round4(statement + CROSSWALK_WEIGHTS.code + contextContribution + keywords) < floor) return -1;
  const code = s.code && t.code ? round4(round4(s.codeKey === t.codeKey ? CODE_EXACT : codeValue(s.code, t.code)) * CROSSWALK_WEIGHTS.code) : 0;
  return Math.min(1, round4(statement + code + contextContribution + keywords));
}

/** The signals and cautions behind a kept candidate, in the fixed order of the signal names. */
function explain(s: Prepared, t: Prepared, sharedWords: number, sharedKeywords: number, context: PairContext): { signals: Signal[]; cautions: Caution[] } {
  const identical = s.identityKey === t.identityKey;
  const statement = statementValue(s, t, sharedWords);
  const signals = [
    identical ? ({ name: 'case_identifier', value: 1, weight: null, contribution: null } as const) : null,
    weighted('statement', statement, CROSSWALK_WEIGHTS.statement),
    weighted('code', codeSignalValue(s, t), CROSSWALK_WEIGHTS.code),
    ...context.signals,
    weighted('concept_keywords', keywordValue(s, t, sharedKeywords), CROSSWALK_WEIGHTS.conceptKeywords),
  ].filter((x): x is Signal => x !== null);
  const cautions: Caution[] = [...context.cautions];
  if (identical && statement < IDENTITY_STATEMENT_DIVERGENCE) cautions.push('identifier_statement_differs');
  return { signals, cautions: cautions.sort(byString) };
}

function band(value: number): 'strong' | 'moderate' | 'weak' {
  return value >= STRONG ? 'strong' : value >= MODERATE ? 'moderate' : 'weak';
}

const signalPhrases: Record<SignalName, string> = {
  case_identifier: 'the same CASE item identifier',
  statement: 'statement wording overlap',
  code: 'normalized code agreement',
  grade: 'grade overlap',
  subject: 'subject match',
  domain: 'domain overlap',
  concept_keywords: 'concept keyword overlap',
};
const cautionPhrases: Record<Caution, string> = {
  grade_mismatch: 'the grades differ',
  subject_mismatch: 'the subjects differ',
  domain_mismatch: 'the domains differ',
  identifier_statement_differs: 'the same identifier carries different statements (a revised item?)',
};

/** Fixed template text from signal names, bands and caution names: nothing submitted is quoted. */
function rationale(signals: Signal[], cautions: Caution[]): string {
  const evidence = signals.map((s) => (s.name === 'case_identifier' ? signalPhrases[s.name] : `${signalPhrases[s.name]} (${band(s.value)})`)).join('; ');
  const caution = cautions.length > 0 ? ` Check: ${cautions.map((c) => cautionPhrases[c]).join('; ')}.` : '';
  return `Proposed from ${evidence}.${caution} A proposal only: a qualified reviewer confirms the alignment before it is used.`;
}

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 24);

// ---------------------------------------------------------------------------------------------

/** Candidate alignments of every source item with the target slice. */
export function crosswalkStandards(request: CrosswalkRequest): CrosswalkResult {
  const { minConfidence, maxCandidatesPerItem } = request.options;
  const ids: Interners = { words: new Interner(), keywords: new Interner(), contexts: new Interner() };
  // Sorted by identifier first, so interning, indexes and every later step see one order.
  const sortItems = (items: readonly CrosswalkItemInput[]) => [...items].sort((a, b) => byString(a.identifier, b.identifier));
  const sources = sortItems(request.source.items).map((i) => prepare(i, ids));
  const targets = sortItems(request.target.items).map((i) => prepare(i, ids));

  // Inverted indexes of the target slice: identity, code (whole and by trusted suffix), words, keywords.
  const push = <K>(index: Map<K, number[]>, key: K, t: number) => {
    const list = index.get(key);
    if (list) list.push(t);
    else index.set(key, [t]);
  };
  const byIdentity = new Map<string, number[]>();
  const byCode = new Map<string, number[]>();
  const byCodeSuffix = new Map<string, number[]>();
  // Postings by interned id (ids are dense): an array lookup per word instead of a map lookup.
  const byWord: number[][] = [];
  const byKeyword: number[][] = [];
  targets.forEach((t, index) => {
    push(byIdentity, t.identityKey, index);
    if (t.code) {
      push(byCode, t.codeKey!, index);
      for (let start = 1; t.code.length - start >= CODE_MIN_SUFFIX_SEGMENTS; start++) push(byCodeSuffix, t.code.slice(start).join('.'), index);
    }
    for (const w of t.words) (byWord[w] ??= []).push(index);
    for (const k of t.keywords) (byKeyword[k] ??= []).push(index);
  });

  // Scratch space reused for every source item: a million pairs allocate nothing.
  const wordCounts = new Int32Array(targets.length);
  const keywordCounts = new Int32Array(targets.length);
  const touched = new Uint8Array(targets.length);
  const reached = new Int32Array(targets.length);
  const topTarget = new Int32Array(maxCandidatesPerItem);
  const topConfidence = new Float64Array(maxCandidatesPerItem);
  const topWords = new Int32Array(maxCandidatesPerItem);
  const topKeywords = new Int32Array(maxCandidatesPerItem);
  // The grade, subject and domain values of a source context with each target context, computed once.
  const contextRows = new Map<number, (PairContext | undefined)[]>();
  const candidates: Candidate[] = [];
  const unmatchedSourceItems: string[] = [];
  let pairsConsidered = 0;

  for (const s of sources) {
    let reachedCount = 0;
    const reach = (t: number) => {
      if (touched[t] === 0) {
        touched[t] = 1;
        reached[reachedCount++] = t;
      }
    };
    const identical = byIdentity.get(s.identityKey) ?? [];
    for (const t of identical) reach(t);
    if (s.code) {
      for (const t of byCode.get(s.codeKey!) ?? []) reach(t);
      for (const t of byCodeSuffix.get(s.codeKey!) ?? []) reach(t);
      for (let start = 1; s.code.length - start >= CODE_MIN_SUFFIX_SEGMENTS; start++) for (const t of byCode.get(s.code.slice(start).join('.')) ?? []) reach(t);
    }
    // The hot loop (millions of postings at the maximum size): counting and reaching inline.
    for (const w of s.words) {
      const postings = byWord[w];
      if (!postings) continue;
      for (let p = 0; p < postings.length; p++) {
        const t = postings[p]!;
        if (wordCounts[t]!++ === 0 && touched[t] === 0) {
          touched[t] = 1;
          reached[reachedCount++] = t;
        }
      }
    }
    for (const k of s.keywords) {
      for (const t of byKeyword[k] ?? []) {
        keywordCounts[t]!++;
        reach(t);
      }
    }

    let row = contextRows.get(s.contextId);
    if (!row) contextRows.set(s.contextId, (row = []));
    // The best maxCandidatesPerItem so far, most confident first; ties go to the lower index, which
    // is the lower target identifier (targets are sorted), so the order of `reached` does not matter.
    let kept = 0;
    // Once the list is full, a pair must at least tie its last entry to get in.
    let floor = minConfidence;
    for (let r = 0; r < reachedCount; r++) {
      const t = reached[r]!;
      const target = targets[t]!;
      const context = (row[target.contextId] ??= pairContext(s, target));
      const confidence = identical.includes(t) ? 1 : confidenceOf(s, target, wordCounts[t]!, keywordCounts[t]!, context.contribution, floor);
      if (confidence >= floor) {
        let at = kept;
        while (at > 0 && (topConfidence[at - 1]! < confidence || (topConfidence[at - 1] === confidence && topTarget[at - 1]! > t))) at--;
        if (at < maxCandidatesPerItem) {
          for (let m = Math.min(kept, maxCandidatesPerItem - 1); m > at; m--) {
            topTarget[m] = topTarget[m - 1]!;
            topConfidence[m] = topConfidence[m - 1]!;
            topWords[m] = topWords[m - 1]!;
            topKeywords[m] = topKeywords[m - 1]!;
          }
          topTarget[at] = t;
          topConfidence[at] = confidence;
          topWords[at] = wordCounts[t]!;
          topKeywords[at] = keywordCounts[t]!;
          if (kept < maxCandidatesPerItem) kept++;
          if (kept === maxCandidatesPerItem) floor = topConfidence[kept - 1]!;
        }
      }
      wordCounts[t] = 0;
      keywordCounts[t] = 0;
      touched[t] = 0;
    }
    pairsConsidered += reachedCount;

    if (kept === 0) unmatchedSourceItems.push(s.identifier);
    for (let m = 0; m < kept; m++) {
      const target = targets[topTarget[m]!]!;
      const { signals, cautions } = explain(s, target, topWords[m]!, topKeywords[m]!, row[target.contextId]!);
      candidates.push({
        candidateId: `xwc_${hash([CROSSWALK_SCORING_VERSION, request.source.framework.identifier, s.identifier, request.target.framework.identifier, target.identifier])}`,
        sourceItem: s.identifier,
        targetItem: target.identifier,
        confidence: topConfidence[m]!,
        basis: s.identityKey === target.identityKey ? 'case_identity' : 'weighted_signals',
        signals,
        cautions,
        rationale: rationale(signals, cautions),
        status: 'proposed',
        requiresQualifiedReview: true,
      });
    }
  }

  const body = {
    sourceFramework: request.source.framework.identifier,
    targetFramework: request.target.framework.identifier,
    scoring: { version: CROSSWALK_SCORING_VERSION, minConfidence, maxCandidatesPerItem, weights: { ...CROSSWALK_WEIGHTS } },
    candidates,
    unmatchedSourceItems,
    counts: { sourceItems: sources.length, targetItems: targets.length, pairsConsidered, candidates: candidates.length },
  };
  return { crosswalkId: `xw_${hash(body)}`, ...body };
}
