// Education context v1 (`partner.education-context`): an optional, advisory packet a product may
// attach to generate, generate-image and the structured education operations. Known fields only,
// every string and list bounded; class support is described by aggregate categories of at least
// five learners, never by a person. The service also refuses learner-record language in its text
// (docs/education-context.md); omitting the packet is always valid and it never authorizes anything.
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);

/** The smallest group a support category may describe: smaller groups come close to identifying a learner. */
export const MIN_AGGREGATE_GROUP_SIZE = 5;

export const classSupportCategories = [
  'english-language-development',
  'reading-support',
  'math-foundations',
  'extension',
  'attention-and-focus',
  'vision-access',
  'hearing-access',
  'motor-access',
  'social-emotional',
] as const;

export const EDUCATION_CONTEXT_LIMITS = {
  focusChars: 500,
  listItems: 10,
  itemChars: 200,
  supportGroups: 10,
  maxGroupSize: 1_000,
} as const;

export const educationContextSchema = z
  .strictObject({
    kind: z.literal('partner.education-context'),
    version: z.literal(1),
    /** What the class is working on now, in the educator's words. */
    instructionalFocus: text(EDUCATION_CONTEXT_LIMITS.focusChars).optional(),
    /** Units or topics the class has already covered. */
    priorUnits: z.array(text(EDUCATION_CONTEXT_LIMITS.itemChars)).max(EDUCATION_CONTEXT_LIMITS.listItems).default([]),
    /** Constraints of the setting, e.g. "45-minute periods", "no student devices". */
    constraints: z.array(text(EDUCATION_CONTEXT_LIMITS.itemChars)).max(EDUCATION_CONTEXT_LIMITS.listItems).default([]),
    /** Aggregate support needs of the class: a category and how many learners share it (at least five). */
    classSupport: z
      .array(
        z.strictObject({
          category: z.enum(classSupportCategories),
          groupSize: z.number().int().min(MIN_AGGREGATE_GROUP_SIZE).max(EDUCATION_CONTEXT_LIMITS.maxGroupSize),
        }),
      )
      .max(EDUCATION_CONTEXT_LIMITS.supportGroups)
      .refine((groups) => new Set(groups.map((g) => g.category)).size === groups.length, 'each category at most once')
      .default([]),
  })
  .meta({ id: 'EducationContextV1' });
export type EducationContext = z.input<typeof educationContextSchema>;
