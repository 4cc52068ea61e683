// Education context v1: the packet is re-bounded by its schema (known fields, sizes, counts, groups
// of at least five); this module refuses learner-record language in its text. The detector is a
// set of named rules, each a pattern with the reason it exists; it errs towards refusing, because a
// product can always say the same thing about a class without a person in it, and a refusal names
// the rule and the field, never the text.
//
// What it looks for (docs/education-context.md lists examples of each):
// - contact details: e-mail addresses, phone numbers, street addresses;
// - identifiers: "student ID", "ID: 12345", runs of six or more digits, "#1234";
// - a person's grades or scores: a score word with a number, percentage or letter grade beside a
//   person (a name, he/she, "student");
// - diagnoses and person-tied accommodations: diagnostic terms, IEP / 504 plans;
// - names: an honorific with a name, "named …", or a capitalized word that is not a common word,
//   followed by a verb about a learner ("Maria struggles", "Jayden's reading").
import type { z } from 'zod';
import type { educationContextSchema } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';

export type EducationContextInput = z.output<typeof educationContextSchema>;

type Rule = { id: string; category: 'contact' | 'identifier' | 'person-score' | 'diagnosis' | 'accommodation' | 'name'; pattern: RegExp };

const rules: readonly Rule[] = [
  // Six or more digits in a row: record numbers, not the counts and years a class description uses.
  { id: 'long-number', category: 'identifier', pattern: /\d{6,}/ },
  { id: 'email', category: 'contact', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/ },
  // 7+ digits with common separators: a phone number (years and counts have fewer digits).
  { id: 'phone', category: 'contact', pattern: /(?:\+?\d[\s().-]?){7,}/ },
  { id: 'street-address', category: 'contact', pattern: /\b\d{1,5}\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\s+(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct)\b\.?/ },
  { id: 'id-label', category: 'identifier', pattern: /\b(?:student|learner|pupil|school)\s*(?:id|number|no\.?)\b|\bID\s*[:#]?\s*\d+/i },
  { id: 'hash-number', category: 'identifier', pattern: /#\s?\d{3,}/ },
  {
    id: 'person-score',
    category: 'person-score',
    pattern:
      /\b(?:he|she|they|his|her|their|student|learner|pupil|[A-Z][a-z]+)\b[^.;\n]{0,40}\b(?:scored|got|received|earned|failed|passed|grade[ds]?|score[ds]?|mark(?:ed|s)?)\b[^.;\n]{0,20}(?:\d+\s?%|\d+\s?\/\s?\d+|\b[A-F][+-]?(?:\s|$|[.,;])|\d+\s?points?)/,
  },
  {
    id: 'diagnosis',
    category: 'diagnosis',
    pattern: /\b(?:diagnos\w*|ADHD|ADD|autis\w*|ASD|dyslexi\w*|dyscalculi\w*|dysgraphi\w*|disorder|syndrome|disabilit\w*|medication|epilep\w*|depress\w*|anxiety)\b/i,
  },
  { id: 'plan', category: 'accommodation', pattern: /\b(?:IEP|504(?:\s+plan)?|individuali[sz]ed education (?:plan|program)|behaviou?r(?:al)? (?:plan|contract))\b/i },
  { id: 'honorific-name', category: 'name', pattern: /\b(?:Mr|Mrs|Ms|Miss|Mx|Dr)\.?\s+[A-Z][a-z]+/ },
  { id: 'named', category: 'name', pattern: /\b(?:named|called|student|learner|pupil)\s+[A-Z][a-z]+\b/ },
];

/**
 * Capitalized words a class description uses at the start of a sentence or as a proper noun that is
 * not a person; anything else capitalized before a learner verb is taken for a name.
 */
const commonCapitalized = new Set(
  'The This That These Those It Its They Their There Here We Our Students Student Learners Learners Pupils Class Group Groups Everyone Most Many Some Few All Several Each Half Teachers Teacher Grade Unit Lesson Today Yesterday Monday Tuesday Wednesday Thursday Friday English Spanish French Math Mathematics Science History Reading Writing Readers Writers Kids Children Boys Girls Nobody Somebody Anyone'.split(
    ' ',
  ),
);
const learnerVerb = /\b([A-Z][a-z]+)(?:'s)?\s+(?:is|was|has|had|needs|struggles|struggled|scored|got|can't|cannot|won't|reads|writes|finished|missed|refuses|refused|behaves|behaved|reading|writing|behavio(?:u)?r|mother|father|parents?)\b/g;

export type LearnerRecordFinding = { pointer: string; rule: string; category: Rule['category'] };

/** Every text field of the packet with its JSON pointer (below `base`). */
function texts(context: EducationContextInput, base: string): [string, string][] {
  const out: [string, string][] = [];
  if (context.instructionalFocus) out.push([`${base}/instructionalFocus`, context.instructionalFocus]);
  context.priorUnits.forEach((t, i) => out.push([`${base}/priorUnits/${i}`, t]));
  context.constraints.forEach((t, i) => out.push([`${base}/constraints/${i}`, t]));
  return out;
}

/** The learner-record language in a text: the first rule that matches, or null. */
export function learnerRecordRule(text: string): Pick<Rule, 'id' | 'category'> | null {
  for (const rule of rules) if (rule.pattern.test(text)) return { id: rule.id, category: rule.category };
  for (const match of text.matchAll(learnerVerb)) {
    if (!commonCapitalized.has(match[1]!)) return { id: 'name-before-learner-verb', category: 'name' };
  }
  return null;
}

export function findLearnerRecordLanguage(context: EducationContextInput, base = '/body/educationContext'): LearnerRecordFinding[] {
  const findings: LearnerRecordFinding[] = [];
  for (const [pointer, text] of texts(context, base)) {
    const rule = learnerRecordRule(text);
    if (rule) findings.push({ pointer, rule: rule.id, category: rule.category });
  }
  return findings;
}

/** Refuses a packet with learner-record language (422, each field and rule named; the text never repeated). */
export function checkEducationContext(context: EducationContextInput | undefined, base = '/body/educationContext'): void {
  if (!context) return;
  const findings = findLearnerRecordLanguage(context, base);
  if (findings.length === 0) return;
  throw new AppError('education_context_learner_record', `The education context describes a person (${[...new Set(findings.map((f) => f.category))].join(', ')}); describe the class in aggregate.`, {
    extensions: { errors: findings.map((f) => ({ pointer: f.pointer, message: `learner-record language (${f.category})`, code: f.rule })) },
  });
}
