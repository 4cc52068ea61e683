// The safety rules measured on corpora, not on the few strings a test names: for each rule
// (learner record, answer revelation, links, contact) at least 200 hostile and 200 benign cases
// written by hand (test/fixtures/safety-corpus/*.json), in two groups: `tuning`, which the rules
// were tuned on (a first set and five later rounds of paraphrases, the last two for issue 49,
// each measured once as unseen before it was added), and `heldout`, written first and not looked at
// while tuning. Each group's detection rate (hostile cases caught) and false-positive rate (benign
// cases refused) must meet the thresholds below; the rates are printed, and a failure lists the
// cases behind it. No Postgres, no Temporal.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { learnerRecordRule } from '../domain/education/context.ts';
import { revealsAnswer } from '../domain/education/safety-answer.ts';
import { findContactRequest } from '../domain/education/safety-contact.ts';
import { findLink } from '../domain/education/safety-links.ts';
import { normalizeForSafety, numbersIn } from '../domain/education/safety-text.ts';

type AnswerCase = { teacherAnswer: string; instructions: string; text: string };
type Corpus<T> = { rule: string; hostile: { tuning: T[]; heldout: T[] }; benign: { tuning: T[]; heldout: T[] } };

const load = <T,>(name: string) => JSON.parse(readFileSync(new URL(`./fixtures/safety-corpus/${name}.json`, import.meta.url), 'utf8')) as Corpus<T>;

// Thresholds: the tuning group must be nearly perfect; the held-out group stands for paraphrases
// the rules have not seen, so it is held to a lower bar (stated before it was first measured).
const thresholds = {
  tuning: { detection: 0.97, falsePositive: 0.02 },
  heldout: { detection: 0.9, falsePositive: 0.05 },
} as const;

const rules: { name: string; judge: (c: never) => boolean }[] = [
  { name: 'learner-record', judge: (c: string) => learnerRecordRule(c) !== null },
  { name: 'answer-revelation', judge: (c: AnswerCase) => revealsAnswer(c.text, c.teacherAnswer, c.instructions) },
  { name: 'links', judge: (c: string) => findLink(c) !== null },
  { name: 'contact', judge: (c: string) => findContactRequest(c) !== null },
];

const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)}% (${n}/${d})`;

describe.each(rules)('the $name rule on its corpus', ({ name, judge }) => {
  const corpus = load<never>(name);

  it('keeps at least 200 hostile and 200 benign cases, at least 50 of each held out', () => {
    for (const label of ['hostile', 'benign'] as const) {
      const { tuning, heldout } = corpus[label];
      expect(tuning.length + heldout.length, `${name} ${label}`).toBeGreaterThanOrEqual(200);
      expect(heldout.length, `${name} ${label} held out`).toBeGreaterThanOrEqual(50);
      expect(heldout.length / (tuning.length + heldout.length), `${name} ${label} held out`).toBeGreaterThanOrEqual(0.1);
    }
  });

  it.each(['tuning', 'heldout'] as const)('%s group: detection and false-positive rates meet the thresholds', (group) => {
    const hostile = corpus.hostile[group];
    const benign = corpus.benign[group];
    const missed = hostile.filter((c) => !judge(c));
    const refused = benign.filter((c) => judge(c));
    const detection = (hostile.length - missed.length) / hostile.length;
    const falsePositive = refused.length / benign.length;
    console.log(`${name} ${group}: detection ${pct(hostile.length - missed.length, hostile.length)}, false positives ${pct(refused.length, benign.length)}`);
    const report = [`missed (${missed.length}):`, ...missed.map((c) => `  ${JSON.stringify(c)}`), `benign refused (${refused.length}):`, ...refused.map((c) => `  ${JSON.stringify(c)}`)].join('\n');
    expect(detection, report).toBeGreaterThanOrEqual(thresholds[group].detection);
    expect(falsePositive, report).toBeLessThanOrEqual(thresholds[group].falsePositive);
  });
});

describe('the normalization every rule judges after', () => {
  it.each([
    ['¾ of it', '3/4 of it'],
    ['1½ cups', '1 1/2 cups'],
    ['3 ⁄ 4', '3/4'],
    ['0 . 75', '0.75'],
    ['three fourths', '3/4'],
    ['three-quarters', '3/4'],
    ['a half', '1/2'],
    ['two and a half', '2 1/2'],
    ['seventy five hundredths', '75/100'],
    ['point seven five', '0.75'],
    ['negative seven', '-7'],
    ['three hundred and sixty-five', '365'],
    ['fourteen ninety-two', '1492'],
    ['2.5 million', '2500000'],
    ['1,000,000', '1000000'],
    ['seventy-five per cent', '75%'],
    ['３ out of ４', '3/4'],
    ['which one is bigger', 'which one is bigger'],
    ['fold it in half', 'fold it in half'],
  ])('%s → %s', (text, normalized) => {
    expect(normalizeForSafety(text)).toBe(normalized);
  });

  it('reads each number with the values it stands for', () => {
    expect(numbersIn(normalizeForSafety('6/8, 75%, 0.75 and -3')).map((t) => t.values.map((v) => v.value))).toEqual([[0.75], [0.75, 75], [0.75], [-3]]);
    expect(numbersIn(normalizeForSafety('Compare 11/24 and 120 with 3-4 and 12:45'))).toHaveLength(2);
  });

  it('a number the question already states is not the answer revealed; an equivalent one is', () => {
    const question = 'Which fraction equals 2/4? Use your strips.';
    expect(revealsAnswer('Which strip folds where two fourths do?', '1/2', question)).toBe(false);
    expect(revealsAnswer('It is the same as 4/8.', '1/2', question)).toBe(true);
    expect(revealsAnswer('Half of the strip, so 50 percent.', '1/2', question)).toBe(true);
  });
});
