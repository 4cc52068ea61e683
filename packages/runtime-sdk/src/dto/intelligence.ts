// Metered intelligence: the inputs of `generate` and `generate-image`, what they answer, the
// NDJSON stream events of a streamed `generate`, and the usage receipt every metered request
// leaves. Strict objects: an unknown field is refused, never ignored, and every string and array
// is bounded (docs/intelligence.md lists the bounds).
import { z } from 'zod';
import { educationContextSchema } from './education/context.ts';

const text = (max: number) => z.string().min(1).max(max);

/** The workflow contexts the education product generates for (the spec's image contexts; generate uses the same words). */
export const generationContexts = ['plan', 'teach', 'create', 'communicate'] as const;

export const INTELLIGENCE_LIMITS = {
  taskChars: 4_000,
  standards: 20,
  standardStatementChars: 1_000,
  sources: 10,
  sourceExcerptChars: 8_000,
  gradeLevels: 13,
  /** Output tokens a caller may ask for; the service also clamps to the model's configured maximum. */
  maxOutputTokens: 16_384,
  imageListItems: 12,
  paletteColors: 8,
} as const;

/**
 * The output cap of `generate` when the request names no `maxOutputTokens`, by `intent.context`: what
 * that workflow's output usually needs, with room to finish (a lesson plan or a set of materials
 * ~1,100 words, an explanation or activity ~750, a message to families ~500; about 0.75 words a
 * token). The cap is part of the reserved bound, so a smaller one lets a budget admit more
 * concurrent requests; a longer answer stops with `finishReason: "length"`, and a caller who needs
 * more asks for it (up to the model's configured maximum). A `structured` answer gets 256 more
 * tokens for its JSON.
 */
export const GENERATE_DEFAULT_OUTPUT_TOKENS = { plan: 1_500, teach: 1_000, create: 1_500, communicate: 700 } as const satisfies Record<
  (typeof generationContexts)[number],
  number
>;
export const STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS = 256;

export const standardRefSchema = z
  .strictObject({
    /** The product's id of an authorized standard (e.g. a CASE identifier). */
    id: text(200),
    code: text(100).optional(),
    statement: text(INTELLIGENCE_LIMITS.standardStatementChars),
    framework: text(200).optional(),
  })
  .meta({ id: 'GenerationStandard' });

export const courseMetadataSchema = z
  .strictObject({
    title: text(200),
    subject: text(100).optional(),
    gradeLevels: z.array(text(20)).max(INTELLIGENCE_LIMITS.gradeLevels).default([]),
    /** BCP 47 language tag of the output, e.g. en-US. */
    locale: z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'a BCP 47 language tag such as en-US').optional(),
  })
  .meta({ id: 'GenerationCourse' });

export const selectedSourceSchema = z
  .strictObject({
    /** The product's id of a source the user explicitly selected; a structured answer cites sources by it. */
    id: text(200),
    title: text(300),
    excerpt: text(INTELLIGENCE_LIMITS.sourceExcerptChars),
    citation: text(500).optional(),
  })
  .meta({ id: 'GenerationSource' });

export const generateInputSchema = z
  .strictObject({
    intent: z.strictObject({
      /** Which of the product's workflows asks. */
      context: z.enum(generationContexts),
      /** What to produce, in the educator's words. */
      task: text(INTELLIGENCE_LIMITS.taskChars),
    }),
    /** `markdown` (default): text streamed as it is written; `structured`: a JSON object of the documented shape. */
    format: z.enum(['markdown', 'structured']).default('markdown'),
    /** At most this many output tokens (default: GENERATE_DEFAULT_OUTPUT_TOKENS of the intent's context; ceiling: the model's configured maximum). Part of the reserved bound. */
    maxOutputTokens: z.number().int().min(16).max(INTELLIGENCE_LIMITS.maxOutputTokens).optional(),
    standards: z.array(standardRefSchema).max(INTELLIGENCE_LIMITS.standards).default([]),
    course: courseMetadataSchema.optional(),
    sources: z.array(selectedSourceSchema).max(INTELLIGENCE_LIMITS.sources).default([]),
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'GenerateInput' });
export type GenerateInput = z.input<typeof generateInputSchema>;

/** The shape of a `structured` generation (the provider is held to it with a JSON schema). */
export const structuredGenerationSchema = z
  .strictObject({
    title: z.string().max(300),
    summary: z.string().max(2_000),
    sections: z.array(z.strictObject({ heading: z.string().max(300), markdown: z.string().max(60_000) })).max(50),
    /** Ids of the submitted sources the text relies on; never anything else. */
    citedSourceIds: z.array(z.string().max(200)).max(INTELLIGENCE_LIMITS.sources),
  })
  .meta({ id: 'StructuredGeneration' });
export type StructuredGeneration = z.infer<typeof structuredGenerationSchema>;

export const modelIdentitySchema = z
  .object({
    /** The model that answered, as the provider named it in its response. */
    id: z.string(),
    provider: z.literal('openai-compatible'),
  })
  .meta({ id: 'ModelIdentity' });
export type ModelIdentity = z.infer<typeof modelIdentitySchema>;

/** `service.product-intelligence-usage`: what one metered request cost, recorded against the organization. */
export const usageReceiptSchema = z
  .object({
    id: z.uuid(),
    kind: z.literal('service.product-intelligence-usage'),
    organizationId: z.uuid(),
    installationId: z.uuid(),
    operation: z.string(),
    /** settled: the provider completed; billable_failure: accepted but interrupted or ambiguous (charged, not released). */
    outcome: z.enum(['settled', 'billable_failure']),
    /** Why a billable failure happened (e.g. client_disconnected, intelligence_interrupted); null when settled. */
    outcomeCode: z.string().nullable(),
    model: modelIdentitySchema.nullable(),
    /** What this request was charged: the provider's reported usage at the configured prices, never more than reservedMicrodollars. */
    costMicrodollars: z.number().int().min(0),
    /** The maximum bounded cost held before dispatch: the ceiling of the charge. */
    reservedMicrodollars: z.number().int().min(0),
    /** What the provider's reported usage prices at (null: no usage reported); above reservedMicrodollars only when the provider reported more than the bound allows. */
    reportedCostMicrodollars: z.number().int().min(0).nullable(),
    /** max(0, reported − reserved): absorbed by the service, never charged to the budget. */
    overrunMicrodollars: z.number().int().min(0),
    usage: z.object({
      /** Null when the provider did not report usage (the charge is then the reserved bound). */
      inputTokens: z.number().int().min(0).nullable(),
      outputTokens: z.number().int().min(0).nullable(),
      images: z.number().int().min(0).nullable(),
    }),
    requestedAt: z.string(),
    dispatchedAt: z.string().nullable(),
    settledAt: z.string(),
  })
  .meta({ id: 'UsageReceipt' });
export type UsageReceipt = z.infer<typeof usageReceiptSchema>;

export const generationSchema = z
  .object({
    /** The metered request's id (also its usage receipt's id). */
    generationId: z.uuid(),
    format: z.enum(['markdown', 'structured']),
    /** The text (markdown format), or the structured object rendered as text (structured format). */
    content: z.string(),
    structured: structuredGenerationSchema.nullable(),
    finishReason: z.enum(['stop', 'length']),
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    /** True when this answer is the stored result of an earlier request with the same Idempotency-Key (no model call). */
    replayed: z.boolean(),
  })
  .meta({ id: 'Generation' });
export type Generation = z.infer<typeof generationSchema>;

// ---- NDJSON stream of a streamed generate ---------------------------------------------------

/**
 * The event's place in the generation's log (1, 2, …): resume after it at `eventsUrl` with
 * `Last-Event-ID` or `?after=` (docs/intelligence.md, "Long generations"). Absent on a replayed
 * answer (the whole text at once: nothing to resume).
 */
const seqSchema = z.number().int().min(1).optional();

export const generationReadyEventSchema = z.strictObject({
  type: z.literal('ready'),
  seq: seqSchema,
  generationId: z.uuid(),
  /** The maximum this request may cost, held against the budget until it settles. */
  reservedMicrodollars: z.number().int().min(0),
  replayed: z.boolean(),
  /** Where the generation's events are read from an offset, by any API (absent on a replay). */
  eventsUrl: z.string().optional(),
});
export const generationDeltaEventSchema = z.strictObject({ type: z.literal('delta'), seq: seqSchema, text: z.string() });
export const generationDoneEventSchema = z.strictObject({
  type: z.literal('done'),
  seq: seqSchema,
  /** The whole answer when it settled; null when the request ended as a billable failure (`error` says why). */
  generation: generationSchema.nullable(),
  error: z.strictObject({ code: z.string(), detail: z.string() }).nullable(),
  receipt: usageReceiptSchema,
});
export const generationStreamEventSchema = z.discriminatedUnion('type', [generationReadyEventSchema, generationDeltaEventSchema, generationDoneEventSchema]);
export type GenerationStreamEvent = z.infer<typeof generationStreamEventSchema>;

// ---- a generation's status (issue 48: GET and cancel of …/intelligence/generations/{id}) ------

export const intelligenceGenerationSchema = z
  .object({
    generationId: z.uuid(),
    /** The metered kind of the request (its receipt's operation), e.g. generate. */
    operation: z.string(),
    status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
    /** Started with Prefer: respond-async (no connection holds it; only a cancel stops it). */
    background: z.boolean(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    /** The seq of the last event in its log. */
    lastSeq: z.number().int().min(0),
    /** After this its events answer 410 generation_expired (null while it runs). */
    eventsExpireAt: z.string().nullable(),
    cancelRequestedAt: z.string().nullable(),
    /** The generation once it completed (a generate's). */
    result: generationSchema.nullable(),
    /** Why it failed or was cancelled (a release's or a billable failure's code). */
    error: z.object({ code: z.string() }).nullable(),
    /** Its usage receipt once it was charged (a release has none). */
    receipt: usageReceiptSchema.nullable(),
    url: z.string(),
    eventsUrl: z.string(),
  })
  .meta({ id: 'IntelligenceGeneration' });
export type IntelligenceGeneration = z.infer<typeof intelligenceGenerationSchema>;

// ---- generate-image --------------------------------------------------------------------------

export const imageTypes = ['diagram', 'illustration', 'timeline', 'map', 'scene', 'organizer'] as const;
export const imageFormats = ['png', 'jpeg', 'webp'] as const;

export const generateImageInputSchema = z
  .strictObject({
    context: z.enum(generationContexts),
    brief: z.strictObject({
      type: z.enum(imageTypes),
      /** The classroom audience, e.g. "grade 4 science class, mixed reading levels". */
      audience: text(300),
      /** A style the product has approved, e.g. "flat vector, thick outlines". */
      style: text(200),
      orientation: z.enum(['landscape', 'portrait', 'square']),
      /** Colour names or #rrggbb values. */
      palette: z.array(text(40)).max(INTELLIGENCE_LIMITS.paletteColors).default([]),
      requiredElements: z.array(text(200)).max(INTELLIGENCE_LIMITS.imageListItems).default([]),
      exclusions: z.array(text(200)).max(INTELLIGENCE_LIMITS.imageListItems).default([]),
      /** What the alt text must convey to a learner who cannot see the image. */
      altTextIntent: text(500),
    }),
    /** The encoding asked of the provider (default png); the answer's bytes are checked, not trusted. */
    outputFormat: z.enum(imageFormats).default('png'),
    /** Optional, advisory class context (partner.education-context v1); never a person. */
    educationContext: educationContextSchema.optional(),
  })
  .meta({ id: 'GenerateImageInput' });
export type GenerateImageInput = z.input<typeof generateImageInputSchema>;

export const generatedImageSchema = z
  .object({
    generationId: z.uuid(),
    /** image/png, image/jpeg or image/webp, recognized from the bytes' signature. */
    mediaType: z.enum(['image/png', 'image/jpeg', 'image/webp']),
    byteLength: z.number().int().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** The image, base64 (standard alphabet, padded). */
    base64: z.string(),
    width: z.number().int().min(1).nullable(),
    height: z.number().int().min(1).nullable(),
    altText: z.string(),
    /** `brief`: composed from the brief's alt-text intent and required elements; an educator reviews it against the image. */
    altTextSource: z.literal('brief'),
    model: modelIdentitySchema,
    receipt: usageReceiptSchema,
    replayed: z.boolean(),
  })
  .meta({ id: 'GeneratedImage' });
export type GeneratedImage = z.infer<typeof generatedImageSchema>;

// ---- usage and budget ------------------------------------------------------------------------

export const usageReceiptListSchema = z
  .object({ receipts: z.array(usageReceiptSchema), nextCursor: z.string().nullable() })
  .meta({ id: 'UsageReceiptList' });

export const intelligenceBudgetSchema = z
  .object({
    monthStart: z.string(),
    resetsAt: z.string(),
    organization: z.object({
      /** Null or 0: no budget, every metered request fails closed. */
      budgetMicrodollars: z.number().int().min(0).nullable(),
      committedMicrodollars: z.number().int().min(0),
      maxConcurrent: z.number().int().min(0),
      inFlight: z.number().int().min(0),
    }),
    installation: z.object({
      sublimitMicrodollars: z.number().int().min(0).nullable(),
      committedMicrodollars: z.number().int().min(0),
    }),
    /** What a new request can still reserve: the lower of the organization's and the installation's remainders. */
    availableMicrodollars: z.number().int().min(0),
  })
  .meta({ id: 'IntelligenceBudget' });
export type IntelligenceBudget = z.infer<typeof intelligenceBudgetSchema>;
