// assessment-draft: the prompt, the strict JSON schema the provider is held to, and the check of
// the model's answer against the request (pure; runStructured in api/routes/product/generation.ts
// meters and stores it). An answer is accepted only when it is exactly what was asked:
// - shape and lengths (ASSESSMENT_DRAFT_LIMITS), exactly itemCount items;
// - every item of a requested type and DOK level; each requested type and level at least once when
//   itemCount is at least the number requested;
// - each type's own shape: multiple-choice 3–6 choices and one correct choice; true-false 2 choices
//   and one correct; matching 2–10 prompts, 2–10 choices and one pair per prompt; short-answer and
//   constructed-response a sample answer and no choices; choice and prompt ids unique in the item;
// - every cited id submitted (at least one standard per item): a draft citing a standard the
//   educator did not authorize is invalid, not trimmed.
// Anything else is null: asked again once, then refused (intelligence_output_invalid, paid).
// Item ids are assigned here in order (item-1…), never taken from the model.
import { z } from 'zod';
import { ASSESSMENT_DRAFT_LIMITS as L, assessmentDraftContentSchema, assessmentItemTypes, dokLevels } from '@hosted-notes/runtime-sdk';
import type { AssessmentDraftContent, AssessmentDraftRequest, AssessmentItem, AssessmentItemType } from '@hosted-notes/runtime-sdk';
import type { ChatMessage } from '../intelligence/provider.ts';
import type { StructuredOperation } from '../intelligence/generation.ts';
import { reviewedDraftMessages } from './reviewed-draft.ts';


const ROLE = 'You draft assessment items for an educator, who reviews the draft before any learner sees it.';

const typeRule: Record<AssessmentItemType, string> = {
  'multiple-choice': `multiple-choice: ${L.multipleChoiceChoices.min}–${L.multipleChoiceChoices.max} choices, answerKey.choiceIds holds the one correct choice id; matchPrompts and matches empty; sampleAnswer null`,
  'true-false': 'true-false: exactly 2 choices (True, False), answerKey.choiceIds holds the correct one; matchPrompts and matches empty; sampleAnswer null',
  matching: `matching: ${L.matchPrompts.min}–${L.matchPrompts.max} matchPrompts, ${L.matchingChoices.min}–${L.matchingChoices.max} choices, answerKey.matches pairs every prompt id with one choice id; choiceIds empty; sampleAnswer null`,
  'short-answer': 'short-answer: no choices or matchPrompts, answerKey.sampleAnswer is a model answer; choiceIds and matches empty',
  'constructed-response': 'constructed-response: no choices or matchPrompts, answerKey.sampleAnswer is an exemplary response with what it must show; choiceIds and matches empty',
};

export function assessmentDraftMessages(input: AssessmentDraftRequest): ChatMessage[] {
  const coverTypes = input.itemCount >= input.itemTypes.length;
  const coverLevels = input.itemCount >= input.dokLevels.length;
  const task = [
    `Write exactly ${input.itemCount} items.`,
    `Item types allowed: ${input.itemTypes.join(', ')}${coverTypes ? ' (each at least once)' : ''}.`,
    `Depth of Knowledge levels allowed: ${input.dokLevels.join(', ')}${coverLevels ? ' (each at least once)' : ''}.`,
    `By type: ${input.itemTypes.map((t) => typeRule[t]).join('; ')}.`,
    'Every item cites at least one standard id in standardIds, and the learning target ids and source ids it relies on.',
    'The rationale explains, for the educator, why the answer is correct and which misconceptions the item reveals.',
    'accessibilityNotes say how the item meets the accessibility requirements (empty when there are none).',
    'Answer with one JSON object: title and items.',
  ].join(' ');
  return reviewedDraftMessages(ROLE, task, input);
}

const strings = { type: 'array', items: { type: 'string' } };
const labelled = { type: 'array', items: { type: 'object', additionalProperties: false, required: ['id', 'text'], properties: { id: { type: 'string' }, text: { type: 'string' } } } };

/** Strict mode: every property required, no others; lengths are checked afterwards (modelOutputSchema). */
export const assessmentDraftJsonSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'items'],
  properties: {
    title: { type: 'string' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'dokLevel', 'stem', 'choices', 'matchPrompts', 'answerKey', 'rationale', 'standardIds', 'learningTargetIds', 'sourceIds', 'accessibilityNotes'],
        properties: {
          type: { type: 'string', enum: [...assessmentItemTypes] },
          dokLevel: { type: 'integer', enum: [...dokLevels] },
          stem: { type: 'string' },
          choices: labelled,
          matchPrompts: labelled,
          answerKey: {
            type: 'object',
            additionalProperties: false,
            required: ['choiceIds', 'matches', 'sampleAnswer'],
            properties: {
              choiceIds: strings,
              matches: {
                type: 'array',
                items: { type: 'object', additionalProperties: false, required: ['promptId', 'choiceId'], properties: { promptId: { type: 'string' }, choiceId: { type: 'string' } } },
              },
              sampleAnswer: { type: ['string', 'null'] },
            },
          },
          rationale: { type: 'string' },
          standardIds: strings,
          learningTargetIds: strings,
          sourceIds: strings,
          accessibilityNotes: strings,
        },
      },
    },
  },
};

const text = (max: number) => z.string().trim().min(1).max(max);
const option = z.strictObject({ id: text(L.choiceIdChars), text: text(L.choiceChars) });
const ids = (max: number) => z.array(z.string()).max(max);

const modelItemSchema = z.strictObject({
  type: z.enum(assessmentItemTypes),
  dokLevel: z.literal(dokLevels),
  stem: text(L.stemChars),
  choices: z.array(option).max(Math.max(L.multipleChoiceChoices.max, L.matchingChoices.max)),
  matchPrompts: z.array(option).max(L.matchPrompts.max),
  answerKey: z.strictObject({
    choiceIds: ids(L.matchingChoices.max),
    matches: z.array(z.strictObject({ promptId: z.string(), choiceId: z.string() })).max(L.matchPrompts.max),
    sampleAnswer: text(L.sampleAnswerChars).nullable(),
  }),
  rationale: text(L.rationaleChars),
  standardIds: ids(L.standards).min(1),
  learningTargetIds: ids(L.learningTargets),
  sourceIds: ids(L.sources),
  accessibilityNotes: z.array(text(L.accessibilityNoteChars)).max(L.accessibilityNotes),
});
const modelOutputSchema = z.strictObject({ title: text(L.titleChars), items: z.array(modelItemSchema).max(L.itemCount) });
type ModelItem = z.infer<typeof modelItemSchema>;

const distinct = (values: string[]) => new Set(values).size === values.length;
const within = (n: number, bounds: { min: number; max: number }) => n >= bounds.min && n <= bounds.max;

/** Whether an item has its type's own shape (see the module comment). */
export function itemShapeValid(item: ModelItem): boolean {
  const { choices, matchPrompts, answerKey } = item;
  const choiceIds = choices.map((c) => c.id);
  if (!distinct(choiceIds) || !distinct(matchPrompts.map((p) => p.id))) return false;
  const oneCorrectChoice = answerKey.choiceIds.length === 1 && choiceIds.includes(answerKey.choiceIds[0]!) && matchPrompts.length === 0 && answerKey.matches.length === 0;
  switch (item.type) {
    case 'multiple-choice':
      return within(choices.length, L.multipleChoiceChoices) && oneCorrectChoice;
    case 'true-false':
      return choices.length === 2 && oneCorrectChoice;
    case 'matching': {
      const prompts = matchPrompts.map((p) => p.id);
      const paired = answerKey.matches.map((m) => m.promptId);
      return (
        within(matchPrompts.length, L.matchPrompts) &&
        within(choices.length, L.matchingChoices) &&
        answerKey.choiceIds.length === 0 &&
        paired.length === prompts.length &&
        distinct(paired) &&
        paired.every((id) => prompts.includes(id)) &&
        answerKey.matches.every((m) => choiceIds.includes(m.choiceId))
      );
    }
    case 'short-answer':
    case 'constructed-response':
      return choices.length === 0 && matchPrompts.length === 0 && answerKey.choiceIds.length === 0 && answerKey.matches.length === 0 && answerKey.sampleAnswer !== null;
  }
}

const unique = (values: string[]) => [...new Set(values)];

/** The model's text as a checked draft with item ids assigned, or null when it is not what was asked. */
export function acceptAssessmentDraft(raw: string, input: AssessmentDraftRequest): AssessmentDraftContent | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = modelOutputSchema.safeParse(json);
  if (!parsed.success) return null;
  const { title, items } = parsed.data;
  if (items.length !== input.itemCount) return null;
  const types = new Set<string>(input.itemTypes);
  const levels = new Set<number>(input.dokLevels);
  if (!items.every((item) => types.has(item.type) && levels.has(item.dokLevel))) return null;
  if (items.length >= types.size && new Set(items.map((i) => i.type)).size !== types.size) return null;
  if (items.length >= levels.size && new Set(items.map((i) => i.dokLevel)).size !== levels.size) return null;
  if (!items.every(itemShapeValid)) return null;
  const standards = new Set(input.standards.map((s) => s.id));
  const targets = new Set(input.learningTargets.map((t) => t.id));
  const sources = new Set(input.sources.map((s) => s.id));
  const cited = (item: ModelItem) =>
    item.standardIds.every((id) => standards.has(id)) && item.learningTargetIds.every((id) => targets.has(id)) && item.sourceIds.every((id) => sources.has(id));
  if (!items.every(cited)) return null;
  return {
    title,
    items: items.map(
      (item, index): AssessmentItem => ({
        itemId: `item-${index + 1}`,
        type: item.type,
        dokLevel: item.dokLevel,
        stem: item.stem,
        choices: item.choices,
        matchPrompts: item.matchPrompts,
        accessibilityNotes: item.accessibilityNotes,
        alignment: { standardIds: unique(item.standardIds), learningTargetIds: unique(item.learningTargetIds), sourceIds: unique(item.sourceIds) },
        educatorOnly: {
          answerKey: {
            choiceIds: item.answerKey.choiceIds,
            matches: item.answerKey.matches,
            // Only written answers carry a sample answer; a choice item's key is its choice ids.
            sampleAnswer: item.type === 'short-answer' || item.type === 'constructed-response' ? item.answerKey.sampleAnswer : null,
          },
          rationale: item.rationale,
        },
      }),
    ),
  };
}

/** The metered operation (domain/intelligence/generation.ts runStructured): its prompt, schema, check and output bound. */
export const assessmentDraftOperation: StructuredOperation<AssessmentDraftRequest, AssessmentDraftContent> = {
  messages: assessmentDraftMessages,
  jsonSchema: { name: 'assessment_draft', schema: assessmentDraftJsonSchema },
  resultSchema: assessmentDraftContentSchema,
  accept: acceptAssessmentDraft,
  // An item of ordinary length (a stem, its choices or sample answer, a rationale, DOK and standard)
  // is ~300 tokens; 400 leave room for constructed responses, plus the title and notes: 30 items
  // reserve ~12,000 tokens, 5 items ~2,300 (the model's maximum still caps it).
  maxOutputTokens: (input) => 256 + input.itemCount * 400,
};
