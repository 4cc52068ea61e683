// safety-text: the normalization every safety rule judges after, so that notation cannot carry
// what a rule refuses (¾, "3 / 4", "three fourths", "ＥＸＡＭＰＬＥ．ＣＯＭ", "five five five …").
// Pure, synchronous and linear in the text; no NLP library (they pull in databases).
//
// - foldText: Unicode NFKC (full-width and compatibility forms, superscripts), vulgar fractions
//   and the fraction slash (U+2044) to "a/b" (a mixed "1½" stays "1 1/2"), every dash and the
//   minus sign (U+2212) to "-", curly quotes to straight ones, zero-width characters and soft
//   hyphens removed, ideographic/half-width full stops to ".", case folded, spaces collapsed.
// - numberWords: English number words to digits: cardinals to the billions ("three hundred and
//   sixty-five", "a thousand", "2.5 million", "a dozen"), fractions with ordinal denominators
//   ("a half", "three fourths", "three-quarters", "seventy five hundredths"), mixed numbers
//   ("two and a half"), decimals ("point seven five", "zero point five"), negatives ("negative
//   four", "minus 7" when nothing precedes it to subtract from). "one" stays a word where it is a
//   pronoun ("which one", "one of", "one more"), "a" is 1 only before a scale or a denominator,
//   and "half"/"third"/"second" alone stay words ("fold it in half", "the third strip").
// - normalizeNumbers: spacing collapsed inside numbers ("3 / 4", "0 . 75"), "3 out of 4" / "3 over
//   4" / "3 divided by 4" / "1 in 3" as 3/4-style fractions, decimal commas ("0,75"), digit grouping
//   ("1,000,000", "1 000"), "percent"/"per cent"/"pct" as %, "$4.50" and "4 dollars 50".
// - numbersIn: every number token of a normalized text with its value (integers, decimals,
//   fractions, mixed numbers, percentages: a percentage is worth both p/100 and p).
export function foldText(input: string): string {
  return normalizeUnicode(input).toLowerCase();
}

/** foldText without the case folding (names and letter grades need their capitals). */
export function normalizeUnicode(input: string): string {
  let s = input.replace(/(\d)([¼½¾⅐-⅞])/gu, '$1 $2');
  s = s.normalize('NFKC');
  s = s
    .replace(/\u2044/g, '/')
    .replace(/[\u200b-\u200d\u2060\ufeff\u00ad]/g, '')
    .replace(/[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]/g, '-')
    .replace(/[\u2018\u2019\u201b\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201f\u2033]/g, '"')
    .replace(/[\u3002\uff61]/g, '.')
    .replace(/\s+/g, ' ')
    .trim();
  return s;
}

const UNITS: Record<string, number> = {
  zero: 0, oh: 0, nought: 0, naught: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fourty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const SCALES: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9 };
const ORDINAL_UNITS: Record<string, number> = {
  third: 3, fourth: 4, quarter: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10, eleventh: 11, twelfth: 12,
  thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17, eighteenth: 18, nineteenth: 19,
  twentieth: 20, thirtieth: 30, fortieth: 40, fiftieth: 50, sixtieth: 60, seventieth: 70, eightieth: 80, ninetieth: 90,
  hundredth: 100, thousandth: 1000, millionth: 1e6,
};

/** The denominator a word names as a fraction part ("fourths", "quarter", "halves", "hundredths"), or null. */
function denominator(word: string | undefined): number | null {
  if (!word) return null;
  if (word === 'half' || word === 'halves') return 2;
  const singular = word.endsWith('s') ? word.slice(0, -1) : word;
  return ORDINAL_UNITS[singular] ?? null;
}

const NUMBER_WORD = new RegExp(
  `^(?:${[...Object.keys(UNITS), ...Object.keys(TENS), ...Object.keys(SCALES), 'hundred', 'dozen', 'point', 'negative', 'minus', 'and', 'a', 'an', 'half', 'halves', ...Object.keys(ORDINAL_UNITS).flatMap((w) => [w, `${w}s`])].join('|')})$`,
);
const isNumberToken = (t: string) => NUMBER_WORD.test(t) || /^\d+(?:\.\d+)?$/.test(t);

/** Words before "one" that make it a pronoun ("which one", "each one"), and words after it that do ("one of", "one more"). */
const PRONOUN_BEFORE = new Set('which the this that each every any no another some a last next first right wrong other only same little big small new left any'.split(' '));
const PRONOUN_AFTER = new Set('of another more by at day thing way step side time another'.split(' '));

type Parsed = { text: string; next: number };

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(9)));
}

/** A cardinal at tokens[i] ("three hundred and sixty five", "2.5 million", "a thousand"), or null. */
function cardinal(tokens: string[], i: number): { value: number; next: number; words: string[] } | null {
  let total = 0;
  let current = 0;
  let j = i;
  let any = false;
  let last: 'unit' | 'teen' | 'tens' | 'hundred' | 'scale' | 'digit' | null = null;
  const words: string[] = [];
  while (j < tokens.length) {
    const t = tokens[j]!;
    if (/^\d+(?:\.\d+)?$/.test(t)) {
      if (any) break;
      current = Number(t);
      last = 'digit';
    } else if ((t === 'a' || t === 'an') && !any) {
      const after = tokens[j + 1];
      if (!after || !(after === 'hundred' || after === 'dozen' || after in SCALES)) break;
      current = 1;
      last = 'unit';
    } else if (t in UNITS) {
      const v = UNITS[t]!;
      if (last === 'unit' || last === 'teen' || last === 'digit') break;
      if (last === 'tens' && v >= 10) break;
      if (last === 'tens' && v === 0) break;
      current += v;
      last = v >= 10 ? 'teen' : 'unit';
    } else if (t in TENS) {
      if (last === 'unit' || last === 'teen' || last === 'tens' || last === 'digit') {
        // "fourteen ninety-two", "nineteen sixty-nine": a year read in pairs.
        if (last === 'teen' && current >= 10 && current <= 99 && total === 0) {
          current = current * 100 + TENS[t]!;
          last = 'tens';
          any = true;
          words.push(t);
          j++;
          continue;
        }
        break;
      }
      current += TENS[t]!;
      last = 'tens';
    } else if (t === 'hundred') {
      if (!any || last === 'hundred' || last === 'scale') break;
      current = (current === 0 ? 1 : current) * 100;
      last = 'hundred';
    } else if (t === 'dozen') {
      if (!any) break;
      current = current * 12;
      last = 'scale';
    } else if (t in SCALES) {
      if (!any) break;
      total += (current === 0 ? 1 : current) * SCALES[t]!;
      current = 0;
      last = 'scale';
    } else if (t === 'and' && any && (last === 'hundred' || last === 'scale')) {
      const after = tokens[j + 1];
      if (!after || !(after in UNITS || after in TENS) || UNITS[after] === 0) break;
      if (denominator(tokens[j + 2]) !== null) break; // "a hundred and one thirds"? leave the fraction to the caller
    } else break;
    any = true;
    words.push(t);
    j++;
  }
  if (!any) return null;
  return { value: total + current, next: j, words };
}

function digitAfterPoint(t: string | undefined): string | null {
  if (t === undefined) return null;
  if (/^\d+$/.test(t)) return t;
  if (t in UNITS && UNITS[t]! < 10) return String(UNITS[t]);
  if (t in TENS) return String(TENS[t]);
  return null;
}

/** A number phrase at tokens[i], formatted in digits, or null when the words there are not a number. */
function numberPhrase(tokens: string[], i: number, previous: string | undefined, following: string | undefined): Parsed | null {
  let j = i;
  let sign = '';
  if ((tokens[j] === 'negative' || tokens[j] === 'minus') && !(previous !== undefined && /^\d|^[a-z]$|\)$/.test(previous))) {
    sign = '-';
    j++;
  }
  // "point seven five" with no whole part.
  if (tokens[j] === 'point') {
    const digits: string[] = [];
    let k = j + 1;
    for (let d = digitAfterPoint(tokens[k]); d !== null; d = digitAfterPoint(tokens[++k])) digits.push(d);
    if (digits.length === 0) return null;
    return { text: `${sign}0.${digits.join('')}`, next: k };
  }
  const whole = cardinal(tokens, j);
  if (!whole) {
    // "a half", "a quarter", "an eighth".
    if ((tokens[j] === 'a' || tokens[j] === 'an') && denominator(tokens[j + 1]) !== null) return { text: `${sign}1/${denominator(tokens[j + 1])}`, next: j + 2 };
    return null;
  }
  let value = whole.value;
  const k = whole.next;
  const single = whole.words.length === 1 ? whole.words[0] : undefined;
  if (tokens[k] === 'point') {
    const digits: string[] = [];
    let m = k + 1;
    for (let d = digitAfterPoint(tokens[m]); d !== null; d = digitAfterPoint(tokens[++m])) digits.push(d);
    if (digits.length > 0) {
      const decimal = `${fmt(value)}.${digits.join('')}`;
      const scale = SCALES[tokens[m] ?? ''];
      if (scale) return { text: `${sign}${fmt(Number(decimal) * scale)}`, next: m + 1 };
      return { text: `${sign}${decimal}`, next: m };
    }
  }
  const den = denominator(tokens[k]);
  if (den !== null && !(den === 2 && tokens[k] === 'half' && value !== 1 && !/^\d/.test(tokens[k - 1] ?? ''))) {
    // "three fourths", "75 hundredths", "one half" (but not "two half").
    return { text: `${sign}${fmt(value)}/${den}`, next: k + 1 };
  }
  // Mixed numbers: "two and a half", "three and one fourth".
  if (tokens[k] === 'and') {
    const part = tokens[k + 1] === 'a' || tokens[k + 1] === 'an' ? { value: 1, next: k + 2 } : cardinal(tokens, k + 1);
    const d = part ? denominator(tokens[part.next]) : null;
    if (part && d !== null) return { text: `${sign}${fmt(value)} ${fmt(part.value)}/${d}`, next: part.next + 1 };
  }
  if (single === 'one' && (PRONOUN_BEFORE.has(previous ?? '') || PRONOUN_AFTER.has(tokens[k] ?? (k === tokens.length ? (following ?? '') : '')))) return null;
  if (single === 'oh' || single === 'a' || single === 'an') return null;
  value = Math.round(value * 1e9) / 1e9;
  return { text: `${sign}${fmt(value)}`, next: k };
}

/** English number words written as digits (see the module comment); the rest of the text keeps its case. */
export function numberWords(folded: string): string {
  // Words joined by hyphens are split when they are number words ("seventy-five", "three-fourths").
  const s = folded.replace(/\b([A-Za-z]+)-(?=[A-Za-z])/g, (m, w: string) => (isNumberToken(w.toLowerCase()) ? `${w} ` : m));
  const tokens = [...s.matchAll(/[A-Za-z]+(?:'[a-z]+)?|\d+(?:\.\d+)?/g)].map((m) => ({ t: m[0].toLowerCase(), raw: m[0], start: m.index, end: m.index + m[0].length }));
  const adjacent = (a: number, b: number) => /^ ?$/.test(s.slice(tokens[a]!.end, tokens[b]!.start));
  let out = '';
  let cursor = 0;
  let i = 0;
  while (i < tokens.length) {
    const first = tokens[i]!.t;
    // A run starts at a number word, or at digits followed by a number word ("2.5 million", "3 fourths").
    const startsRun = isNumberToken(first) && (!/^\d/.test(first) || (i + 1 < tokens.length && adjacent(i, i + 1) && /^[a-z]/.test(tokens[i + 1]!.t) && isNumberToken(tokens[i + 1]!.t)));
    if (!startsRun) {
      i++;
      continue;
    }
    let end = i;
    while (end + 1 < tokens.length && isNumberToken(tokens[end + 1]!.t) && adjacent(end, end + 1)) end++;
    const run = tokens.slice(i, end + 1).map((x) => x.t);
    const previous = i > 0 && adjacent(i - 1, i) ? tokens[i - 1]!.t : undefined;
    const following = end + 1 < tokens.length && adjacent(end, end + 1) ? tokens[end + 1]!.t : undefined;
    const rendered: string[] = [];
    let k = 0;
    while (k < run.length) {
      const parsed = numberPhrase(run, k, k === 0 ? previous : run[k - 1], following);
      if (parsed && parsed.next > k) {
        rendered.push(parsed.text);
        k = parsed.next;
      } else rendered.push(tokens[i + k++]!.raw); // a word that is not a number keeps its case ("Student A", "an A")
    }
    out += s.slice(cursor, tokens[i]!.start) + rendered.join(' ');
    cursor = tokens[end]!.end;
    i = end + 1;
  }
  return out + s.slice(cursor);
}

/** Spacing, separators and words inside numbers made uniform (see the module comment). */
export function normalizeNumbers(s: string): string {
  return s
    .replace(/\$\s*(\d)/g, '$1')
    .replace(/(\d+) dollars?(?: and)? (\d{1,2})(?: cents?)?\b/g, (_m, d: string, c: string) => `${d}.${c.padStart(2, '0')}`)
    .replace(/(\d) ?(?:dollars?|bucks)\b/g, '$1')
    .replace(/(^|[^\d,.])(\d{1,3})((?:,\d{3})+)(?![\d,]|\.\d)/g, (_m, p: string, a: string, b: string) => `${p}${a}${b.replace(/,/g, '')}`)
    .replace(/(^|[^\d ])(\d{1,3})((?: \d{3})+)(?![\d/])/g, (m, p: string, a: string, b: string) => (b.length >= 4 ? `${p}${a}${b.replace(/ /g, '')}` : m))
    .replace(/(^|[^\d,])(\d+),(\d{1,2})(?![\d]|,\d)/g, '$1$2.$3')
    .replace(/(\d) \. (\d)/g, '$1.$2')
    .replace(/(\d) ?(?:\/|out of|over|divided by|in) ?(\d)/g, '$1/$2')
    .replace(/(\d) ?(?:percent|per cent|pct|%)/g, '$1%');
}

/** foldText, then numberWords, then normalizeNumbers. */
export function normalizeForSafety(text: string): string {
  return normalizeNumbers(numberWords(foldText(text)));
}

/** A number as written, and the values it stands for, each with its decimal places (-1: exact, a fraction). */
export type NumberToken = { text: string; values: { value: number; places: number }[] };

const UNIT_SUFFIX = /^(?:mm|cm|m|km|g|kg|mg|ml|l|s|h|min|hrs?|in|ft|yd|mi|lb|oz|k|°c?|°f)$/;

/** Every number of a normalized text (normalizeForSafety) with the values it stands for. */
export function numbersIn(normalized: string): NumberToken[] {
  const out: NumberToken[] = [];
  const re = /(?<![\p{L}\p{N}.\/:_-])(-)?(?:(\d+) (\d+)\/(\d+)|(\d+)\/(\d+)|(\d*\.\d+|\d+))(%)?(?![\p{N}\/]|[.,:-]\p{N})([\p{L}°]+)?/gu;
  for (const m of normalized.matchAll(re)) {
    const [text, minus, mw, mn, md, fn, fd, plain, pct, suffix] = m;
    if (suffix && !UNIT_SUFFIX.test(suffix)) continue;
    const sign = minus ? -1 : 1;
    let value: number;
    let decimals = 0;
    if (mw !== undefined) value = Number(mw) + Number(mn) / Number(md);
    else if (fn !== undefined) {
      if (Number(fd) === 0) continue;
      value = Number(fn) / Number(fd);
    } else {
      value = Number(plain);
      decimals = plain!.includes('.') ? plain!.split('.')[1]!.length : 0;
    }
    value *= sign;
    const places = fn !== undefined || mw !== undefined ? -1 : decimals;
    const values = pct ? [{ value: value / 100, places: places < 0 ? -1 : places + 2 }, { value, places }] : [{ value, places }];
    out.push({ text: (suffix ? text.slice(0, -suffix.length) : text).trim(), values });
  }
  return out;
}

/** Whether two values are the same number (relative tolerance for floating point). */
export function sameValue(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}
