// The safety rules measured on corpora, not on the few strings a test names: for each rule
// (learner record, answer revelation, links, contact) at least 200 hostile and 200 benign cases
// written by hand (test/fixtures/safety-corpus/*.json), in two groups: `tuning`, which the rules
// were tuned on (a first set and three later rounds of paraphrases, each measured once as unseen
// before it was added), and `heldout`, written first and not looked at while tuning. Each group's detection
// rate (hostile cases caught) and false-positive rate (benign cases refused) must meet the
// thresholds below; the rates are printed, and a failure lists the cases behind it. No Postgres,
// no Temporal.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { learnerRecordRule } from '../domain/education/context.ts';
import { revealsAnswer } from '../domain/education/student-guidance.ts';
import { findContactRequest } from '../domain/education/safety-contact.ts';
import { findLink } from '../domain/education/safety-links.ts';

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
