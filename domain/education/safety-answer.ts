// safety-answer: whether a guidance gives the teacher's answer away, in any notation. Both texts
// are normalized first (./safety-text.ts: NFKC, fractions, spacing, number words, case).
//
// A numeric answer (an integer, decimal, fraction, mixed number or percentage, optionally "x = …"
// or followed by a unit: "12 cm", "$4.50") is revealed by any number in the guidance with the same
// value: 3/4 ⇔ 6/8 ⇔ 0.75 ⇔ 75% ⇔ "three fourths"; a decimal or percentage of two or more places
// rounds to it (1/3 ⇔ 0.33 ⇔ 33.3%); a percentage is worth both p/100 and p. A multi-digit integer is
// also revealed with its digits spaced or separated ("1 4 4", "5-6"). A number written exactly as it
// is in the activity's own instructions is the question's given, not a revelation ("two fourths"
// when the activity asks what equals 2/4), unless it is the answer as the teacher wrote it.
//
// A text answer is revealed by the same letters in consecutive words of the guidance, whatever the
// case, spacing or separators ("photo-synthesis", "P H O T O…", "george washington"). A one-letter
// answer (a multiple-choice key) is revealed only where it is named as a choice ("option b",
// "(B)", "b)", "the answer is B").
import { normalizeForSafety, numbersIn, sameValue, type NumberToken } from './safety-text.ts';

type NumericAnswer = { kind: 'number'; values: number[]; text: string; digits: string | null };
type TextAnswer = { kind: 'text'; compact: string; letter: string | null };

/** The teacher's answer as a number (when it is one) or as text. */
export function parseAnswer(teacherAnswer: string): NumericAnswer | TextAnswer | null {
  const normalized = normalizeForSafety(teacherAnswer).replace(/[.,;!?]+$/, '').trim();
  if (normalized === '') return null;
  const bare = normalized.replace(/^[a-z]\s*=\s*/, '').replace(/\s*[a-z°]+(?:\s+[a-z]+)?$/, '').trim();
  const tokens = numbersIn(bare);
  if (tokens.length === 1 && tokens[0]!.text === bare) {
    const token = tokens[0]!;
    const integer = /^-?\d+$/.test(token.text) ? token.text.replace('-', '') : null;
    return { kind: 'number', values: token.values.map((v) => v.value), text: token.text, digits: integer && integer.length >= 2 ? integer : null };
  }
  const compact = normalized.replace(/[^\p{L}\p{N}]+/gu, '');
  if (compact === '') return null;
  return { kind: 'text', compact, letter: /^[a-z]$/.test(compact) ? compact : null };
}

function revealsNumber(token: NumberToken, answer: NumericAnswer): boolean {
  for (const { value, places } of token.values) {
    for (const a of answer.values) {
      if (sameValue(value, a)) return true;
      // A rounded decimal or percentage (two or more places) of a value it cannot write exactly.
      if (places >= 2 && Math.abs(value - a) < 0.5 * 10 ** -places + 1e-12) return true;
    }
  }
  return false;
}

/** Whether the guidance gives the teacher's answer away (see the module comment for the rule). */
export function revealsAnswer(guidance: string, teacherAnswer: string | undefined, instructions?: string): boolean {
  if (!teacherAnswer) return false;
  const answer = parseAnswer(teacherAnswer);
  if (!answer) return false;
  const text = normalizeForSafety(guidance);
  if (answer.kind === 'number') {
    const given = new Set(instructions ? numbersIn(normalizeForSafety(instructions)).map((t) => t.text) : []);
    for (const token of numbersIn(text)) {
      if (given.has(token.text) && token.text !== answer.text) continue;
      if (revealsNumber(token, answer)) return true;
    }
    if (answer.digits) {
      const spaced = answer.digits.split('').join('[ _-]');
      if (new RegExp(`(?<![\\p{N}.,/][ _-]?|\\p{N})${spaced}(?![ _-]?\\p{N}|[.,/]\\p{N})`, 'u').test(text)) return true;
    }
    return false;
  }
  const words = text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  if (answer.letter) {
    const l = answer.letter;
    const choice = new RegExp(`(?:\\b(?:choice|option|answer|letter|pick|choose|select|circle|mark|go with|is)|'s|:)\\s+\\(?${l}\\)?(?![\\p{L}\\p{N}'])|\\(${l}\\)|(?:^|\\s)${l}\\)`, 'u');
    // The question's own noun before the letter ("Which graph…?" → "graph C") names a choice too.
    const nouns = instructions ? new Set(normalizeForSafety(instructions).split(/[^\p{L}]+/u).filter((w) => w.length >= 3)) : new Set<string>();
    for (const m of text.matchAll(new RegExp(`(\\p{L}+)\\s+\\(?${l}\\)?(?![\\p{L}\\p{N}'])`, 'gu'))) if (nouns.has(m[1]!)) return true;
    if (new RegExp(`\\banswer(?:\\s+is|'s|:)?\\s+\\(?${l}\\)?(?![\\p{L}\\p{N}'])`, 'u').test(text)) return true;
    if (!choice.test(text)) return false;
    // "is a" is an article, not a choice: only a capital letter in the original names it.
    if (new RegExp(`\\b(?:choice|option|answer|letter|pick|choose|select|circle|mark|go with)\\s+\\(?${l}\\)?(?![\\p{L}\\p{N}'])|\\(${l}\\)|(?:^|\\s)${l}\\)`, 'u').test(text)) return true;
    return new RegExp(`(?:\\bis|'s|’s|:)\\s+${l.toUpperCase()}(?![\\p{L}\\p{N}'])`, 'u').test(guidance.normalize('NFKC'));
  }
  // The answer's letters, or its plural ("mammals", "volcanoes", "berries"), across consecutive words.
  const c = answer.compact;
  const forms = new Set([c, `${c}s`, `${c}es`, ...(c.endsWith('y') ? [`${c.slice(0, -1)}ies`] : [])]);
  const longest = c.length + 3;
  for (let i = 0; i < words.length; i++) {
    let joined = '';
    for (let j = i; j < words.length && joined.length < longest; j++) {
      joined += words[j];
      if (forms.has(joined)) return true;
    }
  }
  return false;
}
