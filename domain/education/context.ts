// Education context v1: the packet is re-bounded by its schema (known fields, sizes, counts, groups
// of at least five); this module refuses learner-record language in its text (and, through
// learnerRecordRule, in practice-review evidence). The detector is a set of named rules, each with
// the reason it exists; it errs towards refusing, because a product can always say the same thing
// about a class without a person in it, and a refusal names the rule and the field, never the text.
// Every rule judges the text after ./safety-text.ts (NFKC, dashes, quotes, fractions, number words:
// "forty-five percent" is 45%, "three out of ten" is 3/10), so notation does not hide a record.
//
// Rules that need no person (docs/education-context.md lists examples of each):
// - identifiers: "student ID", "ID: 12345", runs of six or more digits, "#1234";
// - contact details: e-mail addresses (also obfuscated), phone numbers, street addresses;
// - diagnoses: clinical terms that only describe a person (ADHD, autism, dyslexia, epilepsy…);
// - plans: IEP, 504 plan, individual education / behaviour plans and contracts;
// - a learner named as such ("a student named Kofi", "pupil Hamid") and an honorific with a name
//   (a real adult at the school: "Ms. Rivera asked for…").
// Rules about a person: an individual subject bound to a learner-record predicate in the same
// sentence. The subject is a name (a capitalized word that is neither a common English word at
// the start of a sentence, ./safety-words.ts, nor a school, calendar or subject word; a name in
// capitals counts: "JAYDEN"), a singular pronoun (he, she, his, her), or a singular learner noun
// ("one boy", "my weakest student", "the new kid", "Student 4"). Since issue 49 a name is a name
// whatever its form: lower case where a clause opens or after "for X:" ("one of my boys, ethan,
// is…"), initials ("T.J.", "k.l.", "e."), a word and an initial ("grace o.", "maya k"), a name with
// a number ("jayden2", "student14"), a labelled learner ("Student A", "learner 7"). And a
// reading-level verb ("reads at a first-grade level", "is on level C books") makes its subject one
// learner unless that subject is a group, a share, the speaker or a thing ("most of the class",
// "a few of the boys", "we", "this book"): the form of the name is then not needed at all. The predicates:
// - person-score: a score or result with or without a verb ("Maria: 45%", "JAYDEN – 3/10",
//   "Score for Sam 62", "Dara (D+)", "got a 39", "quiz score was 6"), a failing result as a sentence
//   ("did not pass", "a fail", "failed", "below the benchmark", "held back", "at risk of failing");
// - name-before-learner-verb: the learner's work, difficulty, behaviour, attendance, discipline,
//   home, language or health ("struggles", "still can't", "reading is behind", "refuses to write",
//   "was suspended", "absent eleven days", "his mum says", "speaks no English", "takes medication").
// - reading-level: a reading level, age, band or fluency ("reading level F", "54 wpm", "running
//   record", "DRA 12", "still at level B", "a non-reader", "can only read three-letter words",
//   "reads like a first grader", "reads very slowly", "still reading CVC words").
// How a learner is told from a famous person without a list of names: the predicates are about
// school records (scores on tests, passing, behaviour, attendance, plans), which famous people's
// sentences rarely have; and a name in a sentence framed as history or fiction (a year before 2000,
// "century", BC/AD, "in the novel/story", "the character", or a life-achievement verb: wrote,
// invented, discovered, won, published, painted, founded, ruled…) is not taken for a learner.
// Aggregates are not persons: "60% of the class", "most students", "the class average". A diagnosis
// or a plan said of a share of the class ("several students have IEPs", "most have ADHD
// diagnoses") is an aggregate support need and passes; of a count under five ("two students have
// IEPs": the schema's groups are at least five for the same reason) or with one singled out
// ("including one who…") it is refused.
import type { z } from 'zod';
import type { educationContextSchema } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';
import { findContactDetails } from './safety-contact.ts';
import { normalizeUnicode, numberWords, normalizeNumbers } from './safety-text.ts';
import { commonWords } from './safety-words.ts';

export type EducationContextInput = z.output<typeof educationContextSchema>;

type Category = 'contact' | 'identifier' | 'person-score' | 'diagnosis' | 'accommodation' | 'name';
type Rule = { id: string; category: Category; pattern: RegExp };

// Rules that need no person: each pattern runs on the normalized text (case kept).
const rules: readonly Rule[] = [
  // Six or more digits in a row: record numbers, not the counts and years a class description uses.
  { id: 'long-number', category: 'identifier', pattern: /\d{6,}/ },
  { id: 'street-address', category: 'contact', pattern: /\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Close|Crescent|Terrace|Place|Way)\b/ },
  { id: 'id-label', category: 'identifier', pattern: /\b(?:student|learner|pupil|school)\s*(?:id|number|no\.?|#)(?![a-z])|\bID\s*[:#]?\s*\d+|\bID#/i },
  { id: 'hash-number', category: 'identifier', pattern: /#\s?\d{3,}/ },
  // Clinical terms that only ever describe a person (ambiguous ones, like "depression" or
  // "anxiety", are judged with a person below).
  {
    id: 'diagnosis',
    category: 'diagnosis',
    // Acronyms that are also words ("add", "odd") count only in capitals.
    pattern: /\b(?:[Dd]iagnos\w*|ADHD|adhd|ADD|[Aa]utis\w*|ASD|[Aa]sperger\w*|[Dd]yslexi\w*|[Dd]yscalculi\w*|[Dd]ysgraphi\w*|[Dd]yspraxi\w*|[Ee]pilep\w*|OCD|ODD|PTSD|[Bb]ipolar|[Tt]ourette\w*|on the (?:autism )?spectrum)\b/,
  },
  { id: 'plan', category: 'accommodation', pattern: /\b(?:IEPs?|EHCPs?|504(?:\s+plan)?|individuali[sz]ed education (?:plan|program)|(?:education|behaviou?r(?:al)?|support|health ?care) (?:plan|contract))\b/i },
  { id: 'named', category: 'name', pattern: /\b(?:student|learner|pupil|child|kid|boy|girl)s?\s+(?:named|called)\s+\p{Lu}|\b(?:[Ss]tudent|[Ll]earner|[Pp]upil)\s+(?!(?:ID|Id|Number|No)\b)(?:\p{Lu}\p{Ll}+|\d{1,4}\b)/u },
];

/** Capitalized words that are not names wherever they stand: calendar, school structure, subjects, titles. */
const notNames = new Set(
  (
    'i monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december ' +
    'english spanish french german chinese arabic latin math maths mathematics science history geography art music pe biology chemistry physics algebra geometry reading writing phonics ' +
    'unit lesson chapter grade year period class room week level section part question item page figure table test quiz exam term semester quarter module step group team round set task activity ' +
    'q1 q2 q3 q4 mr mrs ms miss mx dr prof sir dame king queen president saint st pope emperor lord lady prince princess captain general ' +
    'score scores mark marks result results average mean median mode total overall range benchmark pass fail retake final midterm report ' +
    'students student learners learner pupils pupil class everyone nobody most many some few all several each half ' +
    'lexile fountas pinnell iready renaissance accelerated phonics'
  ).split(' '),
);
/** Acronyms written in capitals that are not names in capitals. */
const acronyms = new Set(
  'IEP ELL ESL EAL ELD ELA SEL SAT SATS ACT AP IB MAP STAAR PARCC SBAC NAEP PISA TIMSS NWEA DIBELS GCSE NAPLAN EQAO STEM STEAM PE PBIS RTI MTSS SPED GPA OK USA US UK EU UN NASA DNA RNA ID SIS NBA NFL FIFA BC AD BCE CE AM PM TV PDF WWII WW UNESCO UNICEF EHCP SEN SENCO TA ADHD ASD OCD ODD PTSD KS KS1 KS2 KS3 MCAS CAASPP FSA ISTEP LEAP SOL STAR AR DRA BAS'.split(
    ' ',
  ),
);
const honorific = /^(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Saint|St|King|Queen|President|Emperor|Pope|Lord|Lady|Prince|Princess|Captain|General|Coach|Uncle|Aunt)\.?$/;

/** A sentence framed as history or fiction: a name in it is not taken for a learner. */
const historicalOrFiction =
  /\b1\d{3}s?\b|\b\d{1,4}\s?(?:BC|BCE|AD|CE)\b|\b(?:AD|A\.D\.)\s?\d|\bcentur(?:y|ies)\b|\bin (?:the|his|her|a) (?:novel|story|book|play|poem|film|movie|myth|legend|fable|series|tale|comic)\b|\b(?:character|protagonist|narrator|author|poet|novelist|playwright|scientist|inventor|explorer|pharaoh|emperor|empress|king|queen|president|prime minister|general|composer|painter|philosopher|mathematician|astronaut)\b|\b(?:reportedly|famously|legendarily|according to|is said to|was said to|biograph\w*)\b|\b(?:wrote|written|invented|discovered|published|painted|composed|founded|won|led|ruled|reigned|became|born|died|formulated|proved|explored|signed|sailed|flew|elected|assassinated|crowned|conquered|declared|coined|designed|built|created|developed|liberated|unified|narrates|follows|wakes|hesitates|kills|finds|discovers|leaves)\b(?!['’])/i;

// A score as written (after normalizeNumbers): 45%, 3/10, "12 of 40", a letter grade in a grading
// context, or a bare number where a score word or "a"/"an" makes it one.
const SCORE_VALUE = String.raw`(?:-?\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?\s?/\s?\d+|\d+(?:\s+(?:right|correct|wrong|points?|marks?|questions?))?\s+(?:out\s+)?of\s+\d+(?!\s*(?:days|weeks|years|months|times|people|students|learners|pupils|children|kids|groups|classes|teachers))|\d+(?:st|nd|rd|th)\s+percentile)`;
const LETTER_GRADE = String.raw`(?:(?:\b(?:a|an|got|get|gets|received|earned|given|grade(?:\s+(?:of|was|is|for\s+\S+(?:\s+\S+)?))?|mark(?:\s+(?:of|was|is))?|was|is|with|to)\s+|[:(–—=-]\s*|\b(?:grade|mark|result)\s*:\s*)[A-F][+-]?(?![\p{L}\p{N}+-])(?!\s*(?:plan|level|block|wing|hall|team|group|side)\b))`;
const SCORE_WORD_NUMBER = String.raw`(?:\bgrade\b(?!\s+\d)|\b(?:scores?|marks?|results?|points|percentage)\b)(?:\s+(?:for|of|on)\s+[^\s:,]+(?:\s+[^\s:,]+)?)?\s*(?::|=|–|—|-|was|is|of|came back at|at|dropped to|fell to)?\s*\d+(?:\.\d+)?(?!\s*(?:st|nd|rd|th|days|weeks|years|pages|questions|items|minutes|students|learners|pupils)\b)`;
const VERB_NUMBER = String.raw`\b(?:scored|scores|scoring|got|gets|earned|earns|received|earned|has|had|managed|came in at|came back at|ended up with|walked away with|dropped to|fell to|is at|was at|sits at|only|just)\s+(?:only\s+|just\s+|a\s+|an\s+)*\d+(?:\.\d+)?(?=\s*(?:$|[.,;!)]|\s(?:on|in|for)\s(?:[\w-]+\s){0,3}?(?:test|tests|quiz|quizzes|exam|assessment|benchmark|check|rubric|essay|project|homework|retake|final|paper|lab|worksheet|assignment|task|report|math|maths|reading|writing|spelling|science|english)\b))`;

const personScore = new RegExp(
  [
    SCORE_VALUE,
    SCORE_WORD_NUMBER,
    VERB_NUMBER,
    String.raw`\b(?:fail|fails|failed|failing|flunk\w*|bomb(?:ed|s)?)\b`,
    String.raw`\b(?:did\s*n[o']t|does\s*n[o']t|do\s+not|did not|didn't|not|never|could\s*n[o']t|could not|can't|cannot)\s+(?:yet\s+)?(?:pass|passing|meet|meeting|reach|make the cut)\b`,
    String.raw`\bnot\s+(?:yet\s+)?(?:passing|meeting)\b|\b(?:not|n't|never)\s+(?:yet\s+)?(?:been\s+)?pass(?:ed|ing)?\b`,
    String.raw`\b(?:did\s*n[o']t|did not|didn't|could\s*n[o']t|could not|couldn't|never|unable to|failed to)\s+(?:\w+\s+){0,2}?(?:pass|passing|meet|reach|make|do (?:well|great|good|ok))\b`,
    String.raw`\bnot (?:yet )?(?:proficient|secure|at (?:the )?standard|on track|at grade level|at expected)\b|\b(?:approaching|emerging|beginning|developing) (?:proficien\w*|standards?|expectations?)\b|\bnot yet\b`,
    String.raw`\b(?:got|gets|getting|scored|a|with)\s+(?:a\s+)?zeros?\b|\bzeros?\s+(?:on|in|for)\b|\bzeroes\b`,
    String.raw`\b(?:answered|got|spelled|spelt|solved|completed|passed|managed)\s+(?:only\s+|just\s+)?\d+\s+(?:out\s+)?of\s+(?:the\s+)?\d+\b|\b(?:bad|poor|low|failing|terrible|dropping|falling) (?:grades?|marks?|scores?|results?)\b`,
    String.raw`\bbelow\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:basic|benchmark|standard|expectations?|pass mark|grade level|level|target|average|where (?:she|he|they) should be|(?:the |her |his )?(?:class|peers|classmates|others|rest)|(?:his|her|their) (?:year group|age group|age|grade|year|group))\b|\bway below\b`,
    String.raw`\b(?:lowest|worst|bottom|last)\s+(?:score|mark|grade|result|in the class|on the|\d+\s?%|band|group|reading group)\b`,
    String.raw`\b(?:fell|falls|fall) short\b|\bheld back\b|\brepeat(?:s|ed|ing)?\s+(?:a |the )?(?:year|grade|class)\b|\brepeating (?:year|grade) \d\b|\bresit\b|\bretake\b|\bat risk of failing\b|\branked last\b|\bincomplete\b|\bunsatisfactory\b|\bdid (?:badly|poorly)\b|\bpoor(?:ly)?\b|\bassessed at level\b|\bgraded\b|\bmarked (?:as\s+)?(?:\d|not|below|5)`,
  ].join('|'),
  'iu',
);
// Letter grades only in capitals ("got a D"), never "is a brilliant reader".
const personScoreCased = new RegExp(LETTER_GRADE, 'u');

const learnerRecord = new RegExp(
  [
    // work and difficulty
    String.raw`\bstruggl\w*|\bconfus(?:es|ed|ing)\b|\bmix(?:es|ed)? up\b|\bforgets\b|\bhas (?:trouble|difficulty|difficulties)\b|\bstuck (?:on|at)\b|\b(?:isn't|is not|not|wasn't) coping\b|\bfall(?:s|ing)? behind\b|\bfell behind\b|\b(?:is|are|was|were|far|way|well|years?|months?|levels?|still|so|very|really|getting)\s+behind\b(?!\s+(?:the (?!class|rest|others)|a |an |\p{Lu}))|\bmiss(?:es|ed|ing) (?:a lot of |lots of |so much )?(?:school|class|classes|lessons?|days)\b|\bmeltdowns?\b|\btantrums?\b|\boutbursts?\b|\bpanic attacks?\b|\bfinds (?:it|\w+) (?:hard|difficult)\b`,
    String.raw`\b(?:still\s+)?(?:can't|cannot|can not|won't|will not|doesn't|does not|couldn't|could not)\s+(?:yet\s+)?(?:read|write|spell|count|add|focus|sit|stay|follow|tell|finish|concentrate|understand|remember|keep up|work|speak|listen|behave|manage|do|add|subtract|multiply|divide|blend|decode|segment|sound out|handle|cope with)\b`,
    String.raw`\b(?:reading|writing|maths?|spelling|work|homework|essay|handwriting|attendance|behaviou?r|progress|fluency|reading age|reading level)\s+(?:is|was|has been|are)\s+(?:\w+\s+){0,3}?(?:behind|below|weak|poor|low|careless|messy|incomplete|missing|late|awful|bad|terrible|a problem|worrying|concerning|at \d)`,
    String.raw`\b(?:is|are|was|been)\s+(?:\w+\s+)?(?:behind|weak|slow|lazy|careless|disruptive|distracted|off[- ]task|a problem)\b|\b(?:\w+\s+){0,2}(?:grade|year)s?\s+levels?\s+(?:below|behind)\b|\bwell behind\b|\bfar behind\b|\bbehind (?:the|her|his|their) (?:class|peers|classmates)\b`,
    String.raw`\breads? at (?:a )?level\b|\breading (?:at|level|age)\b|\bneeds (?:a scribe|a reader|extra time|breaks|prompts|reminders|help|support|one-to-one|1:1|constant)\b|\bneeds to (?:redo|retake|resit)\b`,
    String.raw`\b(?:weakest|lowest|worst|slowest|poorest|least able)\b|\bcan (?:barely|hardly|only just)\s+(?:read|write|spell|count|focus|sit|add)\b|\b(?:reading|writing|spelling|maths?) age\b`,
    // behaviour and discipline
    String.raw`\bdisrupt\w*|\bdetentions?\b|\bexclu(?:ded|sions?)\b|\bsuspend\w*|\bsuspension\b|\bexpel\w*|\breferrals?\b|\bsent (?:out|home|to the (?:office|principal|head))\b|\b(?:got into|gets into|get into|in) (?:a )?fights?\b|\bfight(?:s|ing)? (?:with|constantly|all the time|at (?:lunch|recess|break))\b|\bthey fight\b|\bhit (?:another|a) (?:child|student|kid|pupil|classmate)\b|\bcheat\w*|\btalking back\b|\brefus(?:es|ed|ing) to (?:write|work|read|do|participate|speak|sit|follow|listen|join|answer|come|talk)\b|\bbehaviou?r\b|\bmisbehav\w*|\bbull(?:ies|ied|ying)\b|\bin trouble\b|\bpolice\b|\bon report\b|\bswear\w*|\bfought (?:with|at (?:lunch|recess|break|school)|in (?:class|the (?:playground|corridor|hall|canteen)))\b|\b(?:kick|kicks|kicked|punch|punches|punched|hit|hits|bit|bites|spat at|spits at|shoves|shoved|pushed) (?:a |another |other )?(?:child|children|student|students|kid|kids|pupil|pupils|classmate|classmates|teacher|staff)\b|\brude\b|\bdefian\w*|\baggressi\w*|\bviolent\b|\bkeep \p{Lu}\p{Ll}+ (?:away|apart)\b|\b(?:don't|do not|never) (?:pair|seat|sit|put|group)\b|\barrest\w*|\bcaught\b|\bvap(?:e|es|ed|ing)\b|\bsmok(?:es|ed|ing)\b|\bdrugs?\b|\balcohol\b|\bst(?:ole|ealing|eals)\b|\bvandal\w*`,
    // attendance
    String.raw`\babsent\b|\babsences?\b|\btardy\b|\btruan\w*|\bmissed \d+ (?:days|lessons|classes|weeks)\b|\bmiss(?:es|ed|ing) (?:most|much|half|all|a lot|lots|part|some|a third|a week) of (?:the |his |her |their )?(?:[\w-]+ )?(?:block|lessons?|class|classes|term|week|weeks|school|year|unit|sessions?|intervention)\b|\b(?:always|often) late\b|\blate to (?:class|school|first period)\b|\bskip(?:s|ped|ping)? (?:school|class|classes|lessons?)\b|\bplay(?:s|ed|ing)? truant\b|\bunexcused\b`,
    // home and family
    String.raw`\b(?:mum|mom|mother|dad|father|parents?|stepdad|stepmom|grandmother|grandfather|grandparents?|guardian|foster|family|brother|sister|son|daughter)\b[^.]{0,40}\b(?:says|said|divorc\w*|separat\w*|prison|jail|left|died|custody|works|unemployed|evicted|homeless|shelter|gang|police|arrested|deported|drinks|addict\w*|abus\w*|violen\w*)|\blives (?:with|in a|at)\b|\bdivorc\w*|\bfree (?:school )?(?:meals|lunch)\b|\bhomeless\b|\bshelter\b|\bin (?:foster )?care\b|\bfoster\b|\bno (?:internet|food|computer) at home\b|\bhungry\b|\bneglect\w*|\bbruis\w*|\bunwashed\b|\bno (?:breakfast|lunch)\b|\bfree (?:school )?(?:meals?|lunch(?:es)?)\b`,
    // language and arrival
    String.raw`\bnew to the country\b|\bnew arrival\b|\bspeaks? (?:no|little|very little|limited) English\b|\brefugee\b|\bundocumented\b`,
    // health
    String.raw`\b(?:takes|on|needs)\s+(?:\w+\s+)?medication\b|\bmedication\b|\b(?:ritalin|adderall|concerta|methylphenidate|insulin|inhaler|epipen|antidepressants?)\b|\bimpair\w*|\bhearing aids?\b|\bwheelchair\b|\b(?:is|was|went) (?:deaf|blind|partially sighted)\b|\bdisabilit\w*|\b(?:depressed|anxious|suicidal|self-harm\w*|eating disorder|grieving|bereaved|traumati[sz]ed)\b|\bcounsel+or\b|\btherapist\b|\bsees? (?:a|the) (?:counsel+or|therapist|psychologist|nurse)\b|\b(?:has|with|suffers from)\s+(?:[\w-]+\s+){0,3}?(?:anxiety|depression|diabetes|asthma|allergies|disorder|syndrome|disability|seizures|cancer|illness)\b|\bdiabet\w*|\bblood sugar\b|\bseizures?\b|\ballergic\b|\basthma\w*|\bhospitali[sz]ed\b|\bin hospital\b`,
  ].join('|'),
  'iu',
);

// A reading level, age or band as one learner's record: "reads at a first-grade level", "reading at
// a year 1 level", "reads like a first grader", "is on level C books", "reading level F", "54 wpm",
// "running record", "a non-reader", "can only read three-letter words". Bound to a person below,
// like every predicate; and, for the verb forms, to any subject that is not a group (see readerSubject).
const READS_AT = String.raw`(?:\b(?:reads?|(?:is|are|was|were|still)\s+reading)|['’]s\s+reading|\breading\s+(?=at|below|above|on|around|about|like|well|far|way|two|one|a\b))\b(?:\s+[\w-]+){0,4}?\s+(?:level|grade|age|band|year|standard)\b|\breads?\s+like\s+(?:an?\s+)?(?:[\w-]+\s+){0,3}?(?:grader|kindergart\w*|preschooler|toddler|baby|year[- ]old|beginner|reader|child|kid|student|learner)\b|\b(?:is|are|was|still)\s+(?:still\s+)?on\s+(?:level\s+\p{L}|[\w-]+\s+band)\b|\bcan (?:only|just|barely|hardly) read\b|\bnon-?reader\b|\breads?\s+(?:very\s+|really\s+|so\s+|quite\s+|too\s+)?(?:slowly|haltingly|word by word|without (?:expression|fluency))\b|\bstill\s+(?:reading|on|working on|learning)\s+(?:cvc|decodable|picture books|letter sounds|sight words|phonics|(?:single |first )?sounds)`;
const readingLevel = new RegExp(
  [
    READS_AT,
    String.raw`\b(?:reading|spelling|guided reading|instructional|independent|frustration|book|lexile|DRA|decoding|phonics) (?:level|age|band)\b(?!s)|\blexile\b|\b\d+\s?(?:wpm|wcpm|cwpm)\b|\bwords (?:correct )?(?:per|a) minute\b|\brunning records?\b|\bpre-?primer\b|\b(?:is|are|was|were|still|both|now|only)\s+(?:still\s+|only\s+)?(?:at|on)\s+level\s+\p{L}(?![\p{L}])|\b(?:DRA|AR|ZPD|F&P|BAS|ORF|DIBELS|STAR|PM)\s*(?:level\s*)?[:=-]?\s*\d|\bskips (?:words|lines)\b|\bguesses (?:at )?(?:words|unknown words)\b|\bfluency\s*[:=]|\b(?:gets|has|given|allowed) extra time\b`,
  ].join('|'),
  'iu',
);
const readsAt = new RegExp(READS_AT, 'iu');
/**
 * A subject that is a group, a share, the speaker or a thing, not one learner: "most of the
 * class", "half my students", "a few of the boys", "we", "this book". Whatever else opens a
 * sentence whose verb is a reading level is taken for one learner, so the form of a name (lower
 * case, initials, a period, a number, a common word: "lily reads at level B") does not matter.
 */
const groupOrThing =
  /\b(?:most|many|much|half|halves|thirds?|quarters?|fifths?|several|some|few|lots?|plenty|majority|minority|all|every(?:one|body)?|nobody|none|no one|any(?:one|body)?|each|both|rest|whole|average|median|mean|class(?:es)?|groups?|cohorts?|sets?|sections?|tables?|teams?|students|learners|pupils|children|kids|readers|boys|girls|graders|ones|people|they|them|their|we|us|our|you|your|i|\d+\s?%|\d+\s?\/\s?\d+|text|texts|book|books|passage|passages|story|stories|article|poem|novel|series|worksheet|sentence|paragraph|page|chapter|this|that|these|those|it|which|who|what)\b/iu;
/** The subject of a reading-level verb ("lily reads at level B"), when it is one learner. */
function readerSubject(sentence: string): boolean {
  const m = readsAt.exec(sentence);
  if (!m) return false;
  // The clause before the verb: after the last colon or semicolon.
  const subject = sentence.slice(0, m.index).split(/[:;]/).pop()!.trim();
  return /\p{L}/u.test(subject) && !groupOrThing.test(subject) && !genericFrame.test(sentence);
}

/** An aggregate share of learners ("several students", "most of the class", "60% of"), not a count small enough to point at someone ("two students", "a few"). */
const shareOfLearners =
  /\b(?:most|many|several|half|majority|minority|(?:a|one|two) (?:third|quarter|fifth)s?|some|lots|a lot|a number|nearly all|almost all|all|\d+\s?%|\d{2,}|[5-9])\s+(?:of\s+)?(?:(?:the|my|our|this|these|those)\s+)?(?:[\w-]+\s+)?(?:class|group|cohort|students|learners|pupils|children|kids|boys|girls|readers|them)\b|\bthe (?:whole )?(?:class|group|cohort)\b/i;
/** One learner singled out of a group: "including one who…", "one of them", "except". */
const singledOut = /\b(?:one|1)\s+(?:who|of them|of whom|of the|of my|of our)\b|\b(?:including|especially|except|apart from|particularly)\b/i;
const smallCount = /\b(?:a few|few|a couple|a pair|one|two|three|four|[1-4])\s+(?:of\s+(?:the|my|our)\s+)?(?:students|learners|pupils|children|kids|boys|girls|of)\b/i;

/** A singular learner noun phrase: "one boy", "my weakest student", "the new kid", "Student 4". */
const learnerNoun = /\b(?:a|an|one|1|this|that|the|my|our|her|his)\s+(?:(?:new|weakest|strongest|lowest|quiet|youngest|oldest|only|other|same)\s+)?(?:student|learner|pupil|child|kid|boy|girl|reader|scorer)\b(?!s)/i;
const genericFrame = /^(?:if|when|whenever|any|each|every|where)\b|\b(?:any|each|every|per)\s+(?:student|learner|pupil|child)\b/i;
const pronoun = /\b(?:he|she|him|his|hers|her)\b/i;
const aggregate = /\b\d+(?:\.\d+)?\s?%\s+of\b|\b\d+\s?\/\s?\d+\s+of\b|\b\d+\s+(?:out\s+)?of\s+(?:the\s+)?\d+\s+(?:students|learners|pupils|children)\b/i;

const scoreWord = /\b(?:scores?|results?|marks?|points|percentages?|quiz|test|exam|grades?(?!\s+\d))\b/i;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const personVerb = /^\s+(?:failed|flunked|scored|got|gets|earned|received|struggles|struggled|did not|didn't|does not|doesn't|can't|cannot|refuses|refused|needs|missed|was absent|was suspended|has (?:an?|no)\b)/;
/** A fraction that is the date written beside it ("Pi Day is March 14 (3/14)"): month/day or day/month. */
const monthNames = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
function withoutDates(sentence: string): string {
  let out = sentence;
  for (const m of sentence.matchAll(/\b([A-Za-z]+)\s+(\d{1,2})\b|\b(\d{1,2})\s+([A-Za-z]+)\b/g)) {
    const name = (m[1] ?? m[4])!.toLowerCase();
    const day = m[2] ?? m[3];
    const month = monthNames.indexOf(name) + 1;
    if (month === 0) continue;
    out = out.replace(new RegExp(`\\b(?:${month}/${day}|${day}/${month})\\b`, 'g'), ' ');
  }
  return out;
}
/** A work's title after "in": at least two capitalized words, or three ("in Diary of a Wimpy Kid"). */
const titledWork = /\bin\s+(?:The\s+|A\s+)?\p{Lu}\p{Ll}+(?:\s+(?:of|the|a|an|and|in|on|to)\b)+(?:\s+\p{Lu}\p{Ll}+)+|\bin\s+\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+){2,}/u;

/** Initials: one to three letters each with a period ("T.J.", "k.l.", "e."), not "e.g.", a time ("9 a.m.") or a label ("level R."). */
const initials = /(?<![\p{L}\p{N}.])(?:\p{L}\.\s?){1,3}(?!\p{L})/gu;
const notInitials = new Set(['e.g.', 'i.e.', 'n.b.', 'p.s.', 'u.s.', 'u.k.', 'a.d.', 'b.c.', 'v.']);
/** A word and a one-letter initial before a break or a verb ("grace o. is", "maya k reads", "chloe w —"); not "is a", "plan b". */
const nameAndInitial = /(?<![\p{L}'’])(\p{L}[\p{L}'’-]+)\s+(?![AaIi]\b)\p{L}\b\.?(?=\s*(?:$|[,:;()–—-]|\s\p{Ll}))/gu;
/** A name with a number ("jayden2", "student14"), not "year7", "q1", "ks2". */
const nameWithNumber = /(?<![\p{L}\p{N}])(\p{L}{3,})\d{1,3}(?![\p{L}\p{N}])/gu;
const learnerWords = /^(?:student|learner|pupil|child|kid|boy|girl)$/i;
/** A learner noun labelled with a capital letter or a number ("Student A", "learner 7", "kid #3"). */
const labelledLearner = /\b(?:[Ss]tudent|[Ll]earner|[Pp]upil|[Cc]hild|[Kk]id|[Rr]eader)\s*(?:#\s*)?(?:\d{1,3}|\p{Lu})(?![\p{L}\p{N}])/gu;
/** Lower-case words no dictionary has that are not names: school shorthand and texting. */
const nameNoise = new Set(
  'pls plz thx btw fyi asap eg ie etc ok okay wpm wcpm cwpm cvc cvce lexile decodable decodables dra ell esl eal eld sped iep ks ta tas sen senco ela ss sel pbis rti mtss ipad ipads chromebook chromebooks hw ws pg pp ch wk yr yrs hr hrs min mins vs ftw lol'.split(
    ' ',
  ),
);

/** A word that is never a name before an initial or a label: school words (plural too) and function words ("level B", "to E", "plan A"). */
const functionWords = new Set('a an to at of in on by and or from for with as is are was be the an this that than then so if vs per into onto up down out over under about between'.split(' '));
function notAName(word: string): boolean {
  const lower = word.toLowerCase();
  return notNames.has(lower) || notNames.has(lower.replace(/e?s$/, '')) || functionWords.has(lower) || nameNoise.has(lower);
}

const groupAfter = /^\s+(?:\p{Lu}[\p{L}-]*\s+)?(?:class|classes|group|groups|set|form|team|house|table|stream|cohort|room|tutor group|homeroom)\b/iu;
const shareOf = /\b(?:most|many|half|all|some|several|none|few|lots|majority|minority|rest|thirds?|quarters?|fifths?|\d+\s?%|\d+\/\d+)\s+of\s+(?:the\s+|my\s+|our\s+)?(?:[\p{L}'’-]+\s+){0,2}$/iu;

/** Name candidates of a sentence (see the module comment). */
function names(sentence: string): string[] {
  const out: string[] = [];
  const tokens = [...sentence.matchAll(/[\p{L}][\p{L}'’-]*/gu)];
  tokens.forEach((m, i) => {
    const raw = m[0].replace(/['’]s?$/u, '');
    if (!/^\p{Lu}/u.test(raw) || raw.length < 2) return;
    const lower = raw.toLowerCase();
    const previous = tokens[i - 1]?.[0];
    if (previous && honorific.test(previous.replace(/\.$/, ''))) return;
    if (previous && /^by$/i.test(previous)) return;
    // "Team Alpha", "Group Blue", "House Phoenix": a group named, not a person.
    const adjacent = i > 0 && /^\s+$/.test(sentence.slice(tokens[i - 1]!.index + tokens[i - 1]![0].length, m.index));
    if (previous && adjacent && /^(?:Team|Group|House|Class|Room|Table|Set|Unit|Chapter|Lesson|Section|Part|Level|Grade|Year|Period|Week|Module|Round|Task)$/.test(previous)) return;
    // A class or group with a name of its own, not a person: a group word after it ("Oak Class",
    // "the Dolphins group"), or after a share of it ("most of Hawthorn", "half of the Bluebirds").
    if (!/['’]s?$/u.test(m[0]) && (groupAfter.test(sentence.slice(m.index + m[0].length)) || shareOf.test(sentence.slice(0, m.index)))) return;
    if (notNames.has(lower) || notNames.has(lower.replace(/s$/, '')) || honorific.test(raw)) return;
    // An acronym's plural ("IEPs", "ELLs") is not a name.
    if (/^\p{Lu}{2,}s$/u.test(raw) && acronyms.has(raw.slice(0, -1))) return;
    const caps = raw.length >= 2 && raw === raw.toUpperCase();
    if (caps) {
      if (acronyms.has(raw) || commonWords.has(lower)) return;
      out.push(raw);
      return;
    }
    const start = m.index === 0 || /[.!?:;(\n"]\s*$|^\s*[-–—•*]\s*$/u.test(sentence.slice(0, m.index));
    // A common word starting a sentence is a word ("Fractions: 45%"), unless a person's verb follows
    // it at once ("Grace failed the quiz", "Hope scored 30%").
    if (start && commonWords.has(lower) && !personVerb.test(sentence.slice(m.index + m[0].length))) return;
    if (!start && commonWords.has(lower) && /^(?:the|a|an|of|in|on|at|for|and)$/i.test(previous ?? '')) return;
    out.push(raw);
  });
  // A name written in lower case ("maria lopez 45%", "liam's reading age", "one of my boys, ethan,
  // is…", "for tomás:"): a word no dictionary knows, opening the sentence or a clause, or after "for".
  tokens.forEach((m, i) => {
    const raw = m[0].replace(/['’]s?$/u, '');
    if (!/^\p{Ll}[\p{Ll}-]{1,}$/u.test(raw) || commonWords.has(raw) || notNames.has(raw) || nameNoise.has(raw)) return;
    const before = sentence.slice(0, m.index);
    const after = sentence.slice(m.index + m[0].length);
    if (i === 0 || /[:;,(–—-]\s*$/u.test(before) || (/\bfor\s+$/u.test(before) && /^\s*(?:$|[:;,(–—-])/u.test(after))) out.push(raw);
  });
  // The forms a name takes in a teacher's note, whatever the case: initials ("T.J.", "k.l.", "e."),
  // a word and an initial ("grace o.", "maya k"), a name with a number ("jayden2", "student14"), a
  // learner noun with a letter or a number ("Student A", "learner 7").
  for (const m of sentence.matchAll(initials)) {
    const previous = /([\p{L}\d]+)\s*$/u.exec(sentence.slice(0, m.index))?.[1];
    if (!notInitials.has(m[0].replace(/\s/g, '').toLowerCase()) && !(previous && (/\d/.test(previous) || (notAName(previous) && !/^for$/i.test(previous))))) out.push(m[0].trim());
  }
  for (const m of sentence.matchAll(nameAndInitial)) if (!notAName(m[1]!)) out.push(m[0].trim());
  for (const m of sentence.matchAll(nameWithNumber)) if (!notNames.has(m[1]!.toLowerCase()) || learnerWords.test(m[1]!)) out.push(m[0]);
  for (const m of sentence.matchAll(labelledLearner)) out.push(m[0]);
  return out;
}

/** The learner-record language in a text: the first rule that matches, or null. */
export function learnerRecordRule(text: string): Pick<Rule, 'id' | 'category'> | null {
  // Identifiers are judged as written (a "120,000 km" is not a record number); scores after
  // number words and spacing are normalized.
  const unicode = normalizeUnicode(text);
  const view = normalizeNumbers(numberWords(unicode));
  // Sentences: not split after an initial or a title ("Rosa M. (Year 8)", "ms. rivera", "Jr.").
  const sentences = view.split(/(?<=[.!?;])(?<!\b\p{L}\.|\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Jr|Sr|vs|etc|No|Ma)\.)\s+(?=\S)|\n+/u);
  for (const rule of rules) {
    if (rule.category === 'identifier') {
      if (rule.pattern.test(unicode)) return { id: rule.id, category: rule.category };
      continue;
    }
    // A diagnosis or a plan said of a share of the class ("several students have IEPs") is an
    // aggregate support need; said of a person or of a count small enough to point at one
    // ("two students have ADHD"), it is a record.
    const aggregateOnly = rule.category === 'diagnosis' || rule.category === 'accommodation';
    if (sentences.some((sentence) => rule.pattern.test(sentence) && !(aggregateOnly && aggregateSentence(sentence)))) return { id: rule.id, category: rule.category };
  }
  const contact = findContactDetails(text);
  if (contact) return { id: contact, category: 'contact' };
  for (const sentence of sentences) {
    const framed = historicalOrFiction.test(sentence) || titledWork.test(sentence);
    const named = names(sentence);
    if (!framed && /\b(?:Mr|Mrs|Ms|Mx|Dr|Miss)\.?\s+\p{Lu}\p{Ll}+/u.test(sentence)) return { id: 'honorific-name', category: 'name' };
    if (!framed && readerSubject(sentence)) return { id: 'reading-level', category: 'person-score' };
    const person = (!framed && (named.length > 0 || pronoun.test(sentence))) || (learnerNoun.test(sentence) && !genericFrame.test(sentence));
    if (!person) continue;
    let scoreText = sentence.replace(new RegExp(aggregate.source, 'gi'), ' ');
    scoreText = withoutDates(scoreText);
    if (personScore.test(scoreText) || personScoreCased.test(scoreText)) return { id: 'person-score', category: 'person-score' };
    // A list of names with bare numbers under a score word: "Results: Farah 88, Gabriel 52".
    if (scoreWord.test(sentence) && named.some((n) => new RegExp(`${escape(n)}['’]?s?\\s*[:=–—-]?\\s*\\d+(?:\\.\\d+)?(?!\\s*(?:st|nd|rd|th)\\b)(?![\\d/])`, 'u').test(sentence))) return { id: 'person-score', category: 'person-score' };
    if (learnerRecord.test(sentence)) return { id: 'name-before-learner-verb', category: 'name' };
    if (readingLevel.test(sentence)) return { id: 'reading-level', category: 'person-score' };
  }
  return null;
}

/** A sentence about a share of the class and nobody in particular (no name, pronoun or single learner). */
function aggregateSentence(sentence: string): boolean {
  return shareOfLearners.test(sentence) && !smallCount.test(sentence) && !singledOut.test(sentence) && names(sentence).length === 0 && !pronoun.test(sentence) && !learnerNoun.test(sentence);
}

export type LearnerRecordFinding = { pointer: string; rule: string; category: Rule['category'] };

/** Every text field of the packet with its JSON pointer (below `base`). */
function texts(context: EducationContextInput, base: string): [string, string][] {
  const out: [string, string][] = [];
  if (context.instructionalFocus) out.push([`${base}/instructionalFocus`, context.instructionalFocus]);
  context.priorUnits.forEach((t, i) => out.push([`${base}/priorUnits/${i}`, t]));
  context.constraints.forEach((t, i) => out.push([`${base}/constraints/${i}`, t]));
  return out;
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
