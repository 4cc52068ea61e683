// The OpenAPI document's tables for the metered intelligence routes (api/openapi.ts merges them):
// success descriptions, request headers and realistic examples, built with the SDK's envelope
// helpers so they are what the runtime answers (redocly checks them against the schemas in CI).
import { envelope, unavailable } from '@hosted-notes/runtime-sdk';
import type { Generation, GenerationStreamEvent, UsageReceipt } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../openapi.ts';
import type { OperationExamples } from '../../openapi-examples.ts';

type IntelligenceOperation = 'generate' | 'generateImage' | 'listUsageReceipts' | 'getUsageReceipt' | 'getIntelligenceBudget';

/** Each route's success descriptions (the Idempotency-Key header is the operation table's). */
export const intelligenceDocs = {
  generate: {
    responses: {
      200: {
        description:
          'The settled generation with its model identity and usage receipt (service.generation envelope), a replay of it (replayed: true), or the unavailable ' +
          'envelope when no provider is configured. With Accept: application/x-ndjson: the NDJSON stream of ready, delta… and done.',
      },
    },
  },
  generateImage: {
    responses: { 200: { description: 'The image (base64, media type from its signature), alt text and usage receipt (service.generated-image envelope), or unavailable.' } },
  },
  listUsageReceipts: { responses: { 200: { description: "A page of the organization's usage receipts, newest first." } } },
  getUsageReceipt: { responses: { 200: { description: 'One usage receipt (service.product-intelligence-usage envelope).' } } },
  getIntelligenceBudget: { responses: { 200: { description: "This month's budget, commitments and concurrent executions (service.intelligence-budget envelope)." } } },
} satisfies Record<IntelligenceOperation, OperationDoc>;

const ids = {
  organization: '0c7b5cfe-3b57-4f14-9b8f-3c1e1b0e6a51',
  installation: '9a3e2c11-4f5b-4d8a-8d2b-7a6c5b4e3d21',
  generation: '6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c',
  image: '2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091',
} as const;
const model = { id: 'gpt-4.1-mini-2025-04-14', provider: 'openai-compatible' as const };

/**
 * A settled usage receipt for an example: the caller's organization and installation, the model, no
 * overrun, charged what was reported. Every metered operation's examples build theirs with it.
 */
export function exampleReceipt(r: {
  id: string;
  operation: string;
  costMicrodollars: number;
  reservedMicrodollars: number;
  usage: UsageReceipt['usage'];
  /** requested, dispatched and settled, ISO timestamps. */
  at: [string, string, string];
  model?: UsageReceipt['model'];
}): UsageReceipt {
  return {
    id: r.id,
    kind: 'service.product-intelligence-usage',
    organizationId: ids.organization,
    installationId: ids.installation,
    operation: r.operation,
    outcome: 'settled',
    outcomeCode: null,
    model: r.model ?? model,
    costMicrodollars: r.costMicrodollars,
    reservedMicrodollars: r.reservedMicrodollars,
    reportedCostMicrodollars: r.costMicrodollars,
    overrunMicrodollars: 0,
    usage: r.usage,
    requestedAt: r.at[0],
    dispatchedAt: r.at[1],
    settledAt: r.at[2],
  };
}

const receipt = exampleReceipt({
  id: ids.generation,
  operation: 'generate',
  costMicrodollars: 1_372,
  reservedMicrodollars: 3_710,
  usage: { inputTokens: 612, outputTokens: 476, images: null },
  at: ['2026-11-23T09:14:02.118Z', '2026-11-23T09:14:02.131Z', '2026-11-23T09:14:05.904Z'],
});
const generation: Generation = {
  generationId: ids.generation,
  format: 'markdown',
  content: '## Warm-up: fraction strips (5 minutes)\n\n1. Fold a strip into halves, then quarters.\n2. Which strip shows the same amount as 1/2?',
  structured: null,
  finishReason: 'stop',
  model,
  receipt,
  replayed: false,
};
const streamEvents: GenerationStreamEvent[] = [
  { type: 'ready', generationId: ids.generation, reservedMicrodollars: 3_710, replayed: false },
  { type: 'delta', text: '## Warm-up: fraction strips (5 minutes)\n\n' },
  { type: 'delta', text: '1. Fold a strip into halves, then quarters.\n2. Which strip shows the same amount as 1/2?' },
  { type: 'done', generation, error: null, receipt },
];
const imageReceipt: UsageReceipt = {
  ...receipt,
  id: ids.image,
  operation: 'generate-image',
  model: { id: 'gpt-image-1', provider: 'openai-compatible' },
  costMicrodollars: 42_000,
  reservedMicrodollars: 42_000,
  reportedCostMicrodollars: 42_000,
  overrunMicrodollars: 0,
  usage: { inputTokens: 88, outputTokens: 4_160, images: 1 },
};
// A 1×1 PNG: the shape of the answer, not a lesson image.
const tinyPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const one = (value: unknown) => ({ value });

export const intelligenceExamples = {
  generate: {
    request: one({
      intent: { context: 'plan', task: 'Write a five-minute warm-up on equivalent fractions.' },
      format: 'markdown',
      maxOutputTokens: 800,
      standards: [{ id: 'urn:case:4.NF.A.1', code: '4.NF.A.1', statement: 'Explain why a fraction a/b is equivalent to a fraction (n × a)/(n × b).' }],
      course: { title: 'Grade 4 Mathematics', subject: 'Mathematics', gradeLevels: ['4'], locale: 'en-US' },
      sources: [{ id: 'src-1', title: 'Fraction strips lesson', excerpt: 'Students fold paper strips into halves, quarters and eighths.' }],
    }),
    responses: {
      200: {
        examples: {
          settled: { summary: 'Settled at the actual cost', value: envelope('service.generation', generation) },
          noProvider: {
            summary: 'No model provider configured',
            value: unavailable('service.generation', [{ part: 'intelligence', reason: 'capability_not_configured', detail: 'A model provider is not configured on this service; nothing is generated without it.' }]),
          },
        },
      },
    },
    ndjson: streamEvents.map((e) => JSON.stringify(e)).join('\n') + '\n',
  },
  generateImage: {
    request: one({
      context: 'teach',
      brief: {
        type: 'diagram',
        audience: 'grade 4 mathematics class',
        style: 'flat vector, thick outlines',
        orientation: 'landscape',
        palette: ['navy', '#ffcc00'],
        requiredElements: ['a fraction strip split into quarters', 'a fraction strip split into eighths'],
        exclusions: ['text paragraphs'],
        altTextIntent: 'Two fraction strips show that two eighths equal one quarter',
      },
      outputFormat: 'png',
    }),
    responses: {
      200: one(
        envelope('service.generated-image', {
          generationId: ids.image,
          mediaType: 'image/png',
          byteLength: 70,
          sha256: '3d5b8f6c2e1a4b7d9c0e2f4a6b8d0c1e3f5a7b9d1c3e5f7a9b0d2c4e6f8a0b1c',
          base64: tinyPng,
          width: 1,
          height: 1,
          altText: 'Diagram: Two fraction strips show that two eighths equal one quarter. It shows a fraction strip split into quarters, a fraction strip split into eighths.',
          altTextSource: 'brief',
          model: { id: 'gpt-image-1', provider: 'openai-compatible' },
          receipt: imageReceipt,
          replayed: false,
        }),
      ),
    },
  },
  listUsageReceipts: { responses: { 200: one(envelope('service.product-intelligence-usage-list', { receipts: [receipt], nextCursor: null })) } },
  getUsageReceipt: { parameters: { receiptId: ids.generation }, responses: { 200: one(envelope('service.product-intelligence-usage', receipt)) } },
  getIntelligenceBudget: {
    responses: {
      200: one(
        envelope('service.intelligence-budget', {
          monthStart: '2026-11-01T00:00:00.000Z',
          resetsAt: '2026-12-01T00:00:00.000Z',
          organization: { budgetMicrodollars: 50_000_000, committedMicrodollars: 1_283_442, maxConcurrent: 8, inFlight: 2 },
          installation: { sublimitMicrodollars: 20_000_000, committedMicrodollars: 912_030 },
          availableMicrodollars: 19_087_970,
        }),
      ),
    },
  },
} satisfies Record<IntelligenceOperation, OperationExamples>;
