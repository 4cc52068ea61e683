// rubric-draft: the prompt, the strict JSON schema the provider is held to, and the check of the
// model's answer against the request (pure; runStructured in api/routes/product/generation.ts
// meters and stores it). An answer is accepted only when it is exactly what was asked:
// - shape and lengths (RUBRIC_DRAFT_LIMITS), exactly criterionCount criteria, names distinct
//   (ignoring case);
// - each weight in (0, 1] and their sum within RUBRIC_WEIGHT_TOLERANCE of 1 (returned as written);
// - each criterion's descriptors: one per level, labelled exactly with the request's levelLabels in
//   the request's order, and all different (a level that reads like another is not observable);
// - every cited id submitted (at least one standard per criterion).
// Anything else is null: asked again once, then refused (intelligence_output_invalid, paid).
// Criterion ids are assigned here in order (criterion-1…), never taken from the model.
import { z } from 'zod';
import { RUBRIC_DRAFT_LIMITS as L, RUBRIC_WEIGHT_TOLERANCE, rubricDraftContentSchema } from '@hosted-notes/runtime-sdk';
import type { RubricDraftContent, RubricDraftRequest } from '@hosted-notes/runtime-sdk';
import type { ChatMessage } from '../intelligence/provider.ts';
import type { StructuredOperation } from '../intelligence/generation.ts';
import { reviewedDraftMessages } from './reviewed-draft.ts';


const ROLE = 'You draft analytic rubrics for an educator, who reviews the rubric before it is used with learners.';

export function rubricDraftMessages(input: RubricDraftRequest): ChatMessage[] {
  const task = [
    `Write exactly ${input.criterionCount} criteria, each a distinct quality of the work.`,
    `Each criterion has a weight between 0 and 1; the weights sum to 1.`,
    `Each criterion has exactly ${input.levelLabels.length} descriptors, one per level, with level set to these labels in this order: ${JSON.stringify(input.levelLabels)}.`,
    'A descriptor states what an educator can observe in the work at that level, different from every other level of the criterion.',
    'Every criterion cites at least one standard id in standardIds, and the learning target ids it assesses.',
    'Answer with one JSON object: title and criteria.',
  ].join(' ');
  return reviewedDraftMessages(ROLE, task, input);
}

const strings = { type: 'array', items: { type: 'string' } };

/** Strict mode: every property required, no others; lengths are checked afterwards (modelOutputSchema). */
export const rubricDraftJsonSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'criteria'],
  properties: {
    title: { type: 'string' },
    criteria: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'weight', 'descriptors', 'standardIds', 'learningTargetIds'],
        properties: {
          name: { type: 'string' },
          weight: { type: 'number' },
          descriptors: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['level', 'descriptor'], properties: { level: { type: 'string' }, descriptor: { type: 'string' } } },
          },
          standardIds: strings,
          learningTargetIds: strings,
        },
      },
    },
  },
};

const text = (max: number) => z.string().trim().min(1).max(max);

const modelCriterionSchema = z.strictObject({
  name: text(L.criterionNameChars),
  weight: z.number().gt(0).lte(1),
  descriptors: z.array(z.strictObject({ level: z.string(), descriptor: text(L.descriptorChars) })).max(L.levelLabels.max),
  standardIds: z.array(z.string()).min(1).max(L.standards),
  learningTargetIds: z.array(z.string()).max(L.learningTargets),
});
const modelOutputSchema = z.strictObject({ title: text(L.titleChars), criteria: z.array(modelCriterionSchema).max(L.criteria) });

const folded = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();
const distinct = (values: string[]) => new Set(values.map(folded)).size === values.length;
const unique = (values: string[]) => [...new Set(values)];

/** The model's text as a checked rubric with criterion ids assigned, or null when it is not what was asked. */
export function acceptRubricDraft(raw: string, input: RubricDraftRequest): RubricDraftContent | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = modelOutputSchema.safeParse(json);
  if (!parsed.success) return null;
  const { title, criteria } = parsed.data;
  if (criteria.length !== input.criterionCount || !distinct(criteria.map((c) => c.name))) return null;
  const sum = criteria.reduce((total, c) => total + c.weight, 0);
  // 1e-9 absorbs binary rounding of the sum itself (0.33 + 0.33 + 0.33 is not exactly 0.99).
  if (Math.abs(sum - 1) > RUBRIC_WEIGHT_TOLERANCE + 1e-9) return null;
  const levels = input.levelLabels;
  const ordered = (c: (typeof criteria)[number]) => c.descriptors.length === levels.length && c.descriptors.every((d, i) => d.level.trim() === levels[i]) && distinct(c.descriptors.map((d) => d.descriptor));
  if (!criteria.every(ordered)) return null;
  const standards = new Set(input.standards.map((s) => s.id));
  const targets = new Set(input.learningTargets.map((t) => t.id));
  if (!criteria.every((c) => c.standardIds.every((id) => standards.has(id)) && c.learningTargetIds.every((id) => targets.has(id)))) return null;
  return {
    title,
    levelLabels: [...levels],
    criteria: criteria.map((c, index) => ({
      criterionId: `criterion-${index + 1}`,
      name: c.name,
      weight: c.weight,
      descriptors: c.descriptors.map((d, i) => ({ level: levels[i]!, descriptor: d.descriptor })),
      standardIds: unique(c.standardIds),
      learningTargetIds: unique(c.learningTargetIds),
    })),
  };
}

/** The metered operation (domain/intelligence/generation.ts runStructured): its prompt, schema, check and output bound. */
export const rubricDraftOperation: StructuredOperation<RubricDraftRequest, RubricDraftContent> = {
  messages: rubricDraftMessages,
  jsonSchema: { name: 'rubric_draft', schema: rubricDraftJsonSchema },
  resultSchema: rubricDraftContentSchema,
  accept: acceptRubricDraft,
  // A descriptor of at most 600 characters is ≤ ~150 tokens (160 with its JSON), a criterion's name,
  // weight and ids ~64, the title ~200: 10 criteria × 6 levels reserve 10,400 tokens, 4 × 4 reserve
  // 2,960 (the model's maximum still caps it).
  maxOutputTokens: (input) => 200 + input.criterionCount * (64 + input.levelLabels.length * 160),
};
