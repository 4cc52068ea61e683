// The OpenAPI document's tables for a generation's routes (issue 48; api/openapi.ts merges them):
// success descriptions, the event stream's two media types, and realistic examples built with the
// SDK's envelope helper so they are what the runtime answers.
import { envelope } from '@hosted-notes/runtime-sdk';
import type { IntelligenceGeneration } from '@hosted-notes/runtime-sdk';
import type { OperationDoc } from '../../openapi.ts';
import type { OperationExamples } from '../../openapi-examples.ts';
import { exampleReceipt } from './intelligence-docs.ts';

type GenerationOperation = 'getGeneration' | 'cancelGeneration' | 'streamGeneration';

const generationId = '6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c';
const url = `/api/product/v1/intelligence/generations/${generationId}`;
const eventsUrl = `${url}/events`;

const receipt = exampleReceipt({
  id: generationId,
  operation: 'generate',
  costMicrodollars: 1_372,
  reservedMicrodollars: 3_710,
  usage: { inputTokens: 612, outputTokens: 476, images: null },
  at: ['2026-11-23T09:14:02.118Z', '2026-11-23T09:14:02.131Z', '2026-11-23T09:14:05.904Z'],
});

const completed: IntelligenceGeneration = {
  generationId,
  operation: 'generate',
  status: 'completed',
  background: true,
  createdAt: '2026-11-23T09:14:02.125Z',
  finishedAt: '2026-11-23T09:14:05.911Z',
  lastSeq: 57,
  eventsExpireAt: '2026-11-24T09:14:05.911Z',
  cancelRequestedAt: null,
  result: {
    generationId,
    format: 'markdown',
    content: '## Warm-up: fraction strips\n\n1. Fold a strip into halves, then quarters…',
    structured: null,
    finishReason: 'stop',
    model: { id: 'gpt-4.1-mini-2025-04-14', provider: 'openai-compatible' },
    receipt,
    replayed: false,
  },
  error: null,
  receipt,
  url,
  eventsUrl,
};

const cancelled: IntelligenceGeneration = {
  ...completed,
  status: 'running',
  finishedAt: null,
  lastSeq: 23,
  eventsExpireAt: null,
  cancelRequestedAt: '2026-11-23T09:14:04.002Z',
  result: null,
  receipt: null,
};

const ndjsonExample = [
  { type: 'delta', text: ' then quarters', seq: 4 },
  { type: 'delta', text: '…', seq: 5 },
]
  .map((event) => JSON.stringify(event))
  .join('\n');

/** Each route's success descriptions; the events are NDJSON or SSE, not a JSON body. */
export const generationDocs = {
  getGeneration: { responses: { 200: { description: "The generation's status, and its result, error and receipt once it ended (service.intelligence-generation envelope)." } } },
  cancelGeneration: { responses: { 200: { description: 'The generation as it stands after the ask (usually still running for the moment its pump takes to record the end).' } } },
  streamGeneration: {
    responses: {
      200: {
        description: 'The events after the offset, each with its seq, then live until done (blank lines or SSE comments keep an idle connection open).',
        content: {
          'application/x-ndjson': { schema: { type: 'string', description: 'One event per line: ready (with eventsUrl), delta…, done.' }, example: ndjsonExample },
          'text/event-stream': { schema: { type: 'string', description: 'id: the seq; event: the type; data: the event.' } },
        },
      },
      204: { description: 'Nothing follows the offset in an ended generation (also tells an EventSource to stop reconnecting).' },
    },
  },
} satisfies Record<GenerationOperation, OperationDoc>;

export const generationExamples = {
  getGeneration: { parameters: { generationId }, responses: { 200: { value: envelope('service.intelligence-generation', completed) } } },
  cancelGeneration: { parameters: { generationId }, responses: { 200: { value: envelope('service.intelligence-generation', cancelled) } } },
  streamGeneration: { parameters: { generationId, after: '3' } },
} satisfies Record<GenerationOperation, OperationExamples>;
