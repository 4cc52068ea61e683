// The metered operations end to end: bound the request's cost, hold it (metered-runs.ts), call the
// provider, and report how it ended so the workflow records it. The rules of the spec's
// reservation table, as they happen here:
//   - rejected before the provider accepted (refusal, unreachable, timeout, client gone) → release;
//   - accepted, then interrupted (client gone, stream broke, deadline, unusable output) → billable failure;
//   - completed → the answer is stored, then settled at the actual cost; the same key replays it.
// A report that cannot reach the workflow is not lost: its timers record the request as the spec says.
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { GENERATE_DEFAULT_OUTPUT_TOKENS, modelIdentitySchema, STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS, structuredGenerationSchema } from '@hosted-notes/runtime-sdk';
import type { GeneratedImage, Generation, GenerationStreamEvent, UsageReceipt } from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../domain/errors.ts';
import type { ErrorCode } from '../../../domain/errors.ts';
import { fingerprintOf } from '../../../domain/idempotency.ts';
import { receiptOf, storedResult, storeResult } from '../../../domain/intelligence/ledger.ts';
import type { Reservation } from '../../../domain/intelligence/ledger.ts';
import { chatCostBound, imageCost, inputTokenBound, outputCap, tokenCost } from '../../../domain/intelligence/pricing.ts';
import { briefAltText, generateMessages, imagePrompt, parseStructured, recognizeImage, structuredJsonSchema } from '../../../domain/intelligence/prompts.ts';
import type { GenerateRequest, ImageGenerationRequest } from '../../../domain/intelligence/prompts.ts';
import { MAX_IMAGE_BYTES, ProviderInterruption, ProviderRejection } from '../../../domain/intelligence/provider.ts';
import type { AcceptedChat, ChatFinal, ChatRequest } from '../../../domain/intelligence/provider.ts';
import type { Intelligence } from '../../../domain/intelligence/setup.ts';
import type { CompletionReport } from '../../../workflows/intelligence-usage.ts';
import type { RuntimeCaller } from './kit.ts';
import type { MeteredRuns, OpenedRun } from './metered-runs.ts';

export type GenerationDeps = { db: DatabasePool; runs: MeteredRuns; intelligence: Intelligence; log: FastifyBaseLogger };

type Held = Extract<OpenedRun, { kind: 'reserved' }>;


// ---- shared steps ----------------------------------------------------------------------------

/** Reports an end that the caller will not wait on (stream, refusals); a failure is logged, never thrown: the workflow's timers cover it. */
async function report(deps: GenerationDeps, run: Held, completion: CompletionReport): Promise<Reservation | null> {
  try {
    return await deps.runs.complete(run, completion);
  } catch (error) {
    deps.log.warn({ err: error, workflowId: run.workflowId, completion: completion.kind }, 'intelligence completion could not be reported; the workflow timers will record it');
    return null;
  }
}

/** A receipt for a request that ended as a billable failure (null when the report did not land). */
function receiptOrNull(recorded: Reservation | null): UsageReceipt | null {
  return recorded && (recorded.state === 'settled' || recorded.state === 'billable_failure') ? receiptOf(recorded) : null;
}

/** The problem a billable failure answers with, naming its receipt. */
function billableProblem(code: ProviderInterruption['code'], message: string, receipt: UsageReceipt | null): AppError {
  const appCode: ErrorCode = code === 'client_disconnected' ? 'intelligence_interrupted' : code;
  return new AppError(appCode, message, { extensions: { outcome: 'billable_failure', outcomeCode: code, receipt } });
}

async function releaseAndRefuse(deps: GenerationDeps, run: Held, rejection: ProviderRejection): Promise<never> {
  await report(deps, run, { kind: 'release', code: rejection.code });
  if (rejection.code === 'client_disconnected') throw new AppError('intelligence_interrupted', 'The client went away before the provider accepted; released, nothing charged.');
  // An unread image URL says why (fetchImageUrl's reason, the service's own words, never the URL); the
  // provider's refusals keep the catalog's detail.
  const detail = rejection.code === 'intelligence_output_unreadable' ? rejection.message : undefined;
  throw new AppError(rejection.code, detail, rejection.retryAfterSeconds !== null ? { headers: { 'retry-after': String(rejection.retryAfterSeconds) } } : {});
}

function billableReport(interruption: ProviderInterruption, text: Intelligence['text']): CompletionReport {
  return {
    kind: 'billable_failure',
    code: interruption.code,
    // Known usage is charged as used; without it the request is ambiguous and charged at its bound.
    costMicrodollars: interruption.usage ? tokenCost(text, { input: interruption.usage.inputTokens, output: interruption.usage.outputTokens }) : null,
    model: interruption.model,
    inputTokens: interruption.usage?.inputTokens ?? null,
    outputTokens: interruption.usage?.outputTokens ?? null,
  };
}

// ---- generate --------------------------------------------------------------------------------

const storedGenerationSchema = z.object({
  format: z.enum(['markdown', 'structured']),
  content: z.string(),
  structured: structuredGenerationSchema.nullable(),
  finishReason: z.enum(['stop', 'length']),
  model: modelIdentitySchema,
});
type StoredGeneration = z.infer<typeof storedGenerationSchema>;

type PreparedGenerate = { chat: ChatRequest; costMicrodollars: number };

function prepareGenerate(intelligence: Intelligence, input: GenerateRequest): PreparedGenerate {
  const messages = generateMessages(input);
  const structured = input.format === 'structured';
  const defaultCap = GENERATE_DEFAULT_OUTPUT_TOKENS[input.intent.context] + (structured ? STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS : 0);
  const maxTokens = outputCap(intelligence.text, input.maxOutputTokens, defaultCap);
  const jsonSchema = structured ? { name: 'structured_generation', schema: structuredJsonSchema } : undefined;
  const inputTokens = inputTokenBound(messages, jsonSchema);
  return {
    chat: { model: intelligence.text.name, messages, maxTokens, ...(jsonSchema ? { jsonSchema } : {}) },
    costMicrodollars: chatCostBound(intelligence.text, inputTokens, maxTokens),
  };
}

/** The run of a generate request, reserved or replayed. The parsed body is fingerprinted (the same key with another body is refused). */
export async function openGenerate(deps: GenerationDeps, caller: RuntimeCaller, input: GenerateRequest, idempotencyKey: string) {
  const prepared = prepareGenerate(deps.intelligence, input);
  const run = await deps.runs.open(caller, { operation: 'generate', idempotencyKey, fingerprint: fingerprintOf({ operation: 'generate', body: input }), costMicrodollars: prepared.costMicrodollars });
  return { run, prepared };
}

/** The stored answer of a settled generate, as a replay. */
export async function replayGeneration(db: DatabasePool, reservation: Reservation): Promise<Generation> {
  const stored = await storedResult(db, reservation.id);
  const parsed = storedGenerationSchema.safeParse(stored?.result);
  if (!parsed.success) throw new AppError('internal_error', 'The stored generation could not be read.');
  return { generationId: reservation.id, ...parsed.data, receipt: receiptOf(reservation), replayed: true };
}

/** Provider accepted (or a release and a refusal). */
export async function acceptChat(deps: GenerationDeps, run: Held, prepared: PreparedGenerate, signal: AbortSignal): Promise<AcceptedChat> {
  await deps.runs.dispatch(run);
  try {
    return await deps.intelligence.provider.openChat(prepared.chat, signal);
  } catch (error) {
    if (error instanceof ProviderRejection) return releaseAndRefuse(deps, run, error);
    // Not a provider answer at all (a bug): the request may have been sent, so it is billable.
    await report(deps, run, { kind: 'billable_failure', code: 'intelligence_interrupted', costMicrodollars: null, model: null, inputTokens: null, outputTokens: null });
    throw error;
  }
}

function renderStructured(s: NonNullable<StoredGeneration['structured']>): string {
  return [`# ${s.title}`, s.summary, ...s.sections.map((section) => `## ${section.heading}\n\n${section.markdown}`)].filter((part) => part.trim() !== '').join('\n\n');
}

/**
 * Stores and settles a completed chat. An answer that is not the promised structure is a billable
 * failure: the provider did the work, but there is nothing usable to return.
 */
async function settleGeneration(deps: GenerationDeps, run: Held, input: GenerateRequest, final: ChatFinal): Promise<Generation> {
  const usage = final.usage;
  let structured: StoredGeneration['structured'] = null;
  if (input.format === 'structured') {
    structured = parseStructured(final.text, input);
    if (!structured) {
      throw new ProviderInterruption('intelligence_output_invalid', 'The provider answer is not the structured object this operation promises.', { usage, model: final.model });
    }
  }
  const stored: StoredGeneration = {
    format: input.format,
    content: structured ? renderStructured(structured) : final.text,
    structured,
    finishReason: final.finishReason,
    model: { id: final.model, provider: 'openai-compatible' },
  };
  await storeResult(deps.db, run.workflowId, stored);
  const recorded = await deps.runs.complete(run, {
    kind: 'settle',
    // Without reported usage the actual cost is unknown: the reserved bound is charged. With it, the
    // ledger charges at most the reservation and records the rest as an overrun.
    costMicrodollars: usage ? tokenCost(deps.intelligence.text, { input: usage.inputTokens, output: usage.outputTokens }) : null,
    model: final.model,
    inputTokens: usage?.inputTokens ?? null,
    outputTokens: usage?.outputTokens ?? null,
    images: null,
  });
  if (recorded?.state !== 'settled') throw billableProblem('intelligence_interrupted', 'The generation completed after its deadline was recorded.', receiptOrNull(recorded));
  return { generationId: recorded.id, ...stored, receipt: receiptOf(recorded), replayed: false };
}

/** The JSON answer of a reserved generate: the whole generation once it settled. */
export async function generateJson(deps: GenerationDeps, run: Held, prepared: PreparedGenerate, input: GenerateRequest, signal: AbortSignal): Promise<Generation> {
  const accepted = await acceptChat(deps, run, prepared, signal);
  try {
    const deltas = accepted.deltas();
    let step = await deltas.next();
    while (!step.done) step = await deltas.next();
    return await settleGeneration(deps, run, input, step.value);
  } catch (error) {
    if (!(error instanceof ProviderInterruption)) throw error;
    const recorded = await report(deps, run, billableReport(error, deps.intelligence.text));
    throw billableProblem(error.code, error.message, receiptOrNull(recorded));
  }
}

const line = (event: GenerationStreamEvent) => `${JSON.stringify(event)}\n`;

/**
 * The NDJSON answer of an accepted generate: `ready`, a `delta` per provider chunk, `done`. The
 * provider is read by a pump of its own, not by the response: when the client leaves, the pump
 * still records the end (its upstream request is aborted by the same signal).
 */
export function generationStream(deps: GenerationDeps, run: Held, input: GenerateRequest, accepted: AcceptedChat): Readable {
  const out = new PassThrough();
  const write = (event: GenerationStreamEvent) => {
    if (!out.destroyed && !out.writableEnded) out.write(line(event));
  };
  write({ type: 'ready', generationId: run.reservation.id, reservedMicrodollars: run.reservation.reservedMicrodollars, replayed: false });
  const pump = async () => {
    try {
      const deltas = accepted.deltas();
      let step = await deltas.next();
      while (!step.done) {
        write({ type: 'delta', text: step.value });
        step = await deltas.next();
      }
      const generation = await settleGeneration(deps, run, input, step.value);
      write({ type: 'done', generation, error: null, receipt: generation.receipt });
    } catch (error) {
      const interruption =
        error instanceof ProviderInterruption ? error : new ProviderInterruption('intelligence_interrupted', 'The generation failed after the provider accepted it.');
      if (!(error instanceof ProviderInterruption) && !(error instanceof AppError)) deps.log.error({ err: error, workflowId: run.workflowId }, 'generation stream failed');
      const recorded = error instanceof AppError ? null : await report(deps, run, billableReport(interruption, deps.intelligence.text));
      const receipt = receiptOrNull(recorded) ?? (error instanceof AppError ? (error.extensions['receipt'] as UsageReceipt | null) : null);
      // A done event needs a receipt; without one (the report did not land) the stream ends short, which the SDK reports.
      if (receipt) write({ type: 'done', generation: null, error: { code: interruption.code, detail: interruption.message }, receipt });
    } finally {
      out.end();
    }
  };
  void pump();
  return out;
}

/** A settled generation replayed as a stream: the same three kinds of event, the whole text in one delta. */
export function replayStream(generation: Generation): Readable {
  const out = new PassThrough();
  out.write(line({ type: 'ready', generationId: generation.generationId, reservedMicrodollars: generation.receipt.reservedMicrodollars, replayed: true }));
  if (generation.content !== '') out.write(line({ type: 'delta', text: generation.content }));
  out.end(line({ type: 'done', generation, error: null, receipt: generation.receipt }));
  return out;
}

// ---- generate-image --------------------------------------------------------------------------

const storedImageSchema = z.object({
  mediaType: z.enum(['image/png', 'image/jpeg', 'image/webp']),
  byteLength: z.number(),
  sha256: z.string(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  altText: z.string(),
  altTextSource: z.literal('brief'),
  model: modelIdentitySchema,
});

export async function generateImage(
  deps: GenerationDeps,
  caller: RuntimeCaller,
  input: ImageGenerationRequest,
  idempotencyKey: string,
  signal: AbortSignal,
): Promise<GeneratedImage> {
  const model = deps.intelligence.image;
  if (!model) throw new AppError('capability_unavailable', 'No image model is configured.');
  const { prompt, size } = imagePrompt(input);
  const cost = imageCost(model, 1);
  const run = await deps.runs.open(caller, { operation: 'generate-image', idempotencyKey, fingerprint: fingerprintOf({ operation: 'generate-image', body: input }), costMicrodollars: cost });
  if (run.kind === 'settled') return replayImage(deps.db, run.reservation);
  await deps.runs.dispatch(run);
  try {
    let answer;
    try {
      answer = await deps.intelligence.provider.generateImage({ model: model.name, prompt, size, outputFormat: input.outputFormat }, signal);
    } catch (error) {
      if (error instanceof ProviderRejection) return await releaseAndRefuse(deps, run, error);
      throw error;
    }
    const recognized = answer.bytes.length <= MAX_IMAGE_BYTES ? recognizeImage(answer.bytes) : null;
    if (!recognized) throw new ProviderInterruption('intelligence_output_invalid', 'The provider answered bytes that are not a PNG, JPEG or WebP image.', { usage: answer.usage, model: answer.model });
    const stored: z.infer<typeof storedImageSchema> = {
      ...recognized,
      byteLength: answer.bytes.length,
      sha256: createHash('sha256').update(answer.bytes).digest('hex'),
      altText: briefAltText(input),
      altTextSource: 'brief',
      model: { id: answer.model, provider: 'openai-compatible' },
    };
    await storeResult(deps.db, run.workflowId, stored, answer.bytes);
    const recorded = await deps.runs.complete(run, {
      kind: 'settle',
      costMicrodollars: cost,
      model: answer.model,
      inputTokens: answer.usage?.inputTokens ?? null,
      outputTokens: answer.usage?.outputTokens ?? null,
      images: 1,
    });
    if (recorded?.state !== 'settled') throw billableProblem('intelligence_interrupted', 'The image completed after its deadline was recorded.', receiptOrNull(recorded));
    return { generationId: recorded.id, ...stored, base64: answer.bytes.toString('base64'), receipt: receiptOf(recorded), replayed: false };
  } catch (error) {
    if (!(error instanceof ProviderInterruption)) throw error;
    // An image is priced per image: an accepted but broken one is charged its price (there are no partial images).
    const recorded = await report(deps, run, { kind: 'billable_failure', code: error.code, costMicrodollars: cost, model: error.model, inputTokens: null, outputTokens: null });
    throw billableProblem(error.code, error.message, receiptOrNull(recorded));
  }
}

async function replayImage(db: DatabasePool, reservation: Reservation): Promise<GeneratedImage> {
  const stored = await storedResult(db, reservation.id);
  const parsed = storedImageSchema.safeParse(stored?.result);
  if (!parsed.success || !stored?.bytes) throw new AppError('internal_error', 'The stored image could not be read.');
  return { generationId: reservation.id, ...parsed.data, base64: stored.bytes.toString('base64'), receipt: receiptOf(reservation), replayed: true };
}

// ---- structured metered operations (the education drafts and reviews) -------------------------

/**
 * How many times a structured operation asks the model before refusing: an output that is not the
 * strict schema (or fails the operation's own checks) is asked again once, then refused. The bound
 * is reserved up front (attempts × one attempt's bound) and every attempt's usage is settled.
 */
export const MAX_STRUCTURED_ATTEMPTS = 2;

export type StructuredOperation<I, O> = {
  /** The metered kind, e.g. `education-assessment-draft` (the receipt's operation). */
  operation: string;
  messages(input: I): ChatRequest['messages'];
  /** The strict JSON schema the provider is held to. */
  jsonSchema: { name: string; schema: Record<string, unknown> };
  /** The model's text as the operation's result, or null when it is not acceptable (wrong shape, ids not submitted…). */
  accept(text: string, input: I): O | null;
  /**
   * Output cap of one attempt when the request names none: what a valid answer to this request needs
   * (sized from the counts it asks for), never above the model's maximum. Part of the reserved bound.
   */
  maxOutputTokens: (input: I) => number;
};

export type StructuredResult<O> = { generationId: string; result: O; model: Generation['model']; receipt: UsageReceipt; replayed: boolean };

const storedStructuredSchema = z.object({ result: z.unknown(), model: modelIdentitySchema });

/**
 * One structured metered request: reserve, ask (at most MAX_STRUCTURED_ATTEMPTS times), store the
 * accepted result and settle the usage of every attempt; the same key replays it. An output never
 * accepted is a billable failure (`intelligence_output_invalid`), its usage charged.
 */
export async function runStructured<I, O>(
  deps: GenerationDeps,
  caller: RuntimeCaller,
  op: StructuredOperation<I, O>,
  input: I,
  idempotencyKey: string,
  signal: AbortSignal,
  resultSchema: z.ZodType<O>,
): Promise<StructuredResult<O>> {
  const messages = op.messages(input);
  const maxTokens = outputCap(deps.intelligence.text, undefined, op.maxOutputTokens(input));
  const oneAttempt = chatCostBound(deps.intelligence.text, inputTokenBound(messages, op.jsonSchema), maxTokens);
  const run = await deps.runs.open(caller, {
    operation: op.operation,
    idempotencyKey,
    fingerprint: fingerprintOf({ operation: op.operation, body: input }),
    costMicrodollars: oneAttempt * MAX_STRUCTURED_ATTEMPTS,
  });
  if (run.kind === 'settled') {
    const stored = storedStructuredSchema.safeParse((await storedResult(deps.db, run.reservation.id))?.result);
    const result = stored.success ? resultSchema.safeParse(stored.data.result) : null;
    if (!stored.success || !result?.success) throw new AppError('internal_error', 'The stored result could not be read.');
    return { generationId: run.reservation.id, result: result.data, model: stored.data.model, receipt: receiptOf(run.reservation), replayed: true };
  }
  await deps.runs.dispatch(run);
  const usage = { inputTokens: 0, outputTokens: 0, reported: true };
  let accepted = false;
  let model: string | null = null;
  const spent = () => (usage.reported ? tokenCost(deps.intelligence.text, { input: usage.inputTokens, output: usage.outputTokens }) : null);
  try {
    for (let attempt = 1; attempt <= MAX_STRUCTURED_ATTEMPTS; attempt++) {
      let chat;
      try {
        chat = await deps.intelligence.provider.openChat({ model: deps.intelligence.text.name, messages, maxTokens, jsonSchema: op.jsonSchema }, signal);
      } catch (error) {
        // Before anything was accepted nothing was generated: release. After an accepted attempt, what it used is charged.
        if (error instanceof ProviderRejection && !accepted) return await releaseAndRefuse(deps, run, error);
        if (error instanceof ProviderRejection) throw new ProviderInterruption('intelligence_output_invalid', 'A retry after an invalid output was refused by the provider.', { model });
        throw error;
      }
      accepted = true;
      const deltas = chat.deltas();
      let step = await deltas.next();
      while (!step.done) step = await deltas.next();
      const final = step.value;
      model = final.model;
      if (final.usage) {
        usage.inputTokens += final.usage.inputTokens;
        usage.outputTokens += final.usage.outputTokens;
      } else usage.reported = false;
      const result = final.finishReason === 'stop' ? op.accept(final.text, input) : null;
      if (result === null) continue;
      const modelIdentity = { id: final.model, provider: 'openai-compatible' as const };
      await storeResult(deps.db, run.workflowId, { result, model: modelIdentity });
      const recorded = await deps.runs.complete(run, {
        kind: 'settle',
        costMicrodollars: spent(),
        model: final.model,
        inputTokens: usage.reported ? usage.inputTokens : null,
        outputTokens: usage.reported ? usage.outputTokens : null,
        images: null,
      });
      if (recorded?.state !== 'settled') throw billableProblem('intelligence_interrupted', 'The result completed after its deadline was recorded.', receiptOrNull(recorded));
      return { generationId: recorded.id, result, model: modelIdentity, receipt: receiptOf(recorded), replayed: false };
    }
    throw new ProviderInterruption('intelligence_output_invalid', `The model did not produce a valid ${op.operation} in ${MAX_STRUCTURED_ATTEMPTS} attempts.`, { model });
  } catch (error) {
    if (!(error instanceof ProviderInterruption)) throw error;
    const known = usage.reported ? { inputTokens: usage.inputTokens + (error.usage?.inputTokens ?? 0), outputTokens: usage.outputTokens + (error.usage?.outputTokens ?? 0) } : null;
    const recorded = await report(deps, run, {
      kind: 'billable_failure',
      code: error.code,
      costMicrodollars: known ? tokenCost(deps.intelligence.text, { input: known.inputTokens, output: known.outputTokens }) : null,
      model: error.model ?? model,
      inputTokens: known?.inputTokens ?? null,
      outputTokens: known?.outputTokens ?? null,
    });
    throw billableProblem(error.code, error.message, receiptOrNull(recorded));
  }
}
