// The metered operations of the runtime: generate (JSON or an NDJSON stream), generate-image and the
// structured education operations. Each bounds its cost, then goes through the one reservation
// lifecycle (metering.ts: meter, accept, settle); what is here is only what differs: the prompt,
// the cost bound, how an answer becomes the stored result, and what a failure is charged.
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { GENERATE_DEFAULT_OUTPUT_TOKENS, modelIdentitySchema, STRUCTURED_GENERATE_EXTRA_OUTPUT_TOKENS, structuredGenerationSchema } from '@hosted-notes/runtime-sdk';
import type { GeneratedImage, Generation, GenerationStreamEvent, UsageReceipt } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';
import { getReceipt, receiptOf, storedResult } from './ledger.ts';
import type { Reservation } from './ledger.ts';
import { meter } from './metering.ts';
import type { FailureCharge, HeldRequest, MeteredCaller, MeteringDeps } from './metering.ts';
import { chatCostBound, imageCost, inputTokenBound, outputCap, tokenCost } from './pricing.ts';
import { briefAltText, generateMessages, imagePrompt, parseStructured, recognizeImage, structuredJsonSchema } from './prompts.ts';
import type { GenerateRequest, ImageGenerationRequest } from './prompts.ts';
import { MAX_IMAGE_BYTES, ProviderInterruption, ProviderRejection } from './provider.ts';
import type { AcceptedChat, ChatFinal, ChatRequest, ChatUsage } from './provider.ts';
import type { Intelligence } from './setup.ts';
import { GenerationLogWriter, generationOfKey, sweepExpiredEvents } from './generation-log.ts';
import { hashSecret } from '../secrets.ts';
import type { FinishedStatus, GenerationRow, GenerationWakes } from './generation-log.ts';
import type { DatabasePool } from 'slonik';

export type GenerationDeps = MeteringDeps & { intelligence: Intelligence };

/** Known usage is charged as used; without it the request is ambiguous and charged at its bound. */
function tokenCharge(text: Intelligence['text'], usage: ChatUsage | null, model: string | null): FailureCharge {
  return {
    costMicrodollars: usage ? tokenCost(text, { input: usage.inputTokens, output: usage.outputTokens }) : null,
    model,
    inputTokens: usage?.inputTokens ?? null,
    outputTokens: usage?.outputTokens ?? null,
  };
}

/** Reads an accepted chat to its end. */
async function finalOf(chat: AcceptedChat, onDelta: (text: string) => void = () => undefined): Promise<ChatFinal> {
  const deltas = chat.deltas();
  let step = await deltas.next();
  while (!step.done) {
    onDelta(step.value);
    step = await deltas.next();
  }
  return step.value;
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

export type PreparedGenerate = { chat: ChatRequest; costMicrodollars: number };

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

/** A generate request opened: held with its prepared chat, or settled under its key (the stored generation, replayed). */
export type OpenedGenerate = { kind: 'held'; held: HeldRequest; prepared: PreparedGenerate } | { kind: 'settled'; generation: Generation };

/** Opens a generate request. The parsed body is fingerprinted (the same key with another body is refused). */
export async function openGenerate(deps: GenerationDeps, caller: MeteredCaller, input: GenerateRequest, idempotencyKey: string): Promise<OpenedGenerate> {
  const prepared = prepareGenerate(deps.intelligence, input);
  const opened = await meter(deps, caller, idempotencyKey, { operation: 'generate', body: input, costMicrodollars: prepared.costMicrodollars });
  if (opened.kind === 'settled') return { kind: 'settled', generation: await replayGeneration(deps, opened.reservation) };
  return { kind: 'held', held: opened.held, prepared };
}

async function replayGeneration(deps: GenerationDeps, reservation: Reservation): Promise<Generation> {
  const stored = await storedResult(deps.db, reservation.id);
  const parsed = storedGenerationSchema.safeParse(stored?.result);
  if (!parsed.success) throw new AppError('internal_error', 'The stored generation could not be read.');
  return { generationId: reservation.id, ...parsed.data, receipt: receiptOf(reservation), replayed: true };
}

/**
 * The provider's acceptance of a held generate (or its release and a refusal). `signal` aborts the
 * upstream request; when `cancelled` is what aborted it, the release is recorded as the cancel it was.
 */
export function acceptGenerate(deps: GenerationDeps, held: HeldRequest, prepared: PreparedGenerate, signal: AbortSignal, cancelled?: AbortSignal): Promise<AcceptedChat> {
  return held.accept(async () => {
    try {
      return await deps.intelligence.provider.openChat(prepared.chat, signal);
    } catch (error) {
      if (cancelled?.aborted && error instanceof ProviderRejection && error.code === 'client_disconnected') {
        throw new ProviderRejection('generation_cancelled', 'The generation was cancelled before the provider accepted it; released, nothing charged.');
      }
      throw error;
    }
  });
}

/** A client's leaving, as the provider sees any abort, told apart from a cancel of the generation. */
function asCancel(error: unknown, cancelled: AbortSignal | undefined): unknown {
  if (!cancelled?.aborted || !(error instanceof ProviderInterruption) || error.code !== 'client_disconnected') return error;
  return new ProviderInterruption('generation_cancelled', 'The generation was cancelled; the text so far is kept in its events.', { usage: error.usage, model: error.model });
}

function renderStructured(s: NonNullable<StoredGeneration['structured']>): string {
  return [`# ${s.title}`, s.summary, ...s.sections.map((section) => `## ${section.heading}\n\n${section.markdown}`)].filter((part) => part.trim() !== '').join('\n\n');
}

/**
 * Reads an accepted chat to its end and settles it. An answer that is not the promised structure is
 * a billable failure: the provider did the work, but there is nothing usable to return.
 */
async function settleGeneration(
  deps: GenerationDeps,
  held: HeldRequest,
  input: GenerateRequest,
  chat: AcceptedChat,
  onDelta?: (text: string) => void,
  cancelled?: AbortSignal,
): Promise<Generation> {
  const { recorded, stored } = await held.settle(
    async () => {
      let final: ChatFinal;
      try {
        final = await finalOf(chat, onDelta);
      } catch (error) {
        throw asCancel(error, cancelled);
      }
      let structured: StoredGeneration['structured'] = null;
      if (input.format === 'structured') {
        structured = parseStructured(final.text, input);
        if (!structured) throw new ProviderInterruption('intelligence_output_invalid', 'The provider answer is not the structured object this operation promises.', { usage: final.usage, model: final.model });
      }
      const generation: StoredGeneration = {
        format: input.format,
        content: structured ? renderStructured(structured) : final.text,
        structured,
        finishReason: final.finishReason,
        model: { id: final.model, provider: 'openai-compatible' },
      };
      // Without reported usage the actual cost is unknown: the reserved bound is charged. With it, the
      // ledger charges at most the reservation and records the rest as an overrun.
      return { stored: generation, ...tokenCharge(deps.intelligence.text, final.usage, final.model), model: final.model, images: null };
    },
    (interruption) => tokenCharge(deps.intelligence.text, interruption.usage, interruption.model),
  );
  return { generationId: recorded.id, ...stored, receipt: receiptOf(recorded), replayed: false };
}

/** The JSON answer of a held generate: the whole generation once it settled. */
export async function generateJson(deps: GenerationDeps, held: HeldRequest, prepared: PreparedGenerate, input: GenerateRequest, signal: AbortSignal): Promise<Generation> {
  return settleGeneration(deps, held, input, await acceptGenerate(deps, held, prepared, signal));
}

const line = (event: GenerationStreamEvent) => `${JSON.stringify(event)}\n`;

/**
 * A generation's cancel in this process: aborted when a cancel of it is announced (POST …/cancel, on
 * any API). `release` when the pump is done.
 */
function cancellation(wakes: GenerationWakes, generationId: string): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const release = wakes.pump(generationId, () => controller.abort());
  return { signal: controller.signal, release };
}

/** The ready event of a held generate (the first event of its log). */
const readyOf = (held: HeldRequest): GenerationStreamEvent => ({
  type: 'ready',
  generationId: held.reservation.id,
  reservedMicrodollars: held.reservation.reservedMicrodollars,
  replayed: false,
});

/** Opens a held generate's log; expired logs of others are swept as a new one opens (bounded, not awaited). */
async function openLog(deps: GenerationDeps, held: HeldRequest, background: boolean): Promise<GenerationLogWriter> {
  const { id: generationId, organizationId, installationId } = held.reservation;
  const log = await GenerationLogWriter.open(deps.db, { generationId, organizationId, installationId, background }, deps.log, deps.timing.generationRetentionHours);
  void sweepExpiredEvents(deps.db).catch((error: unknown) => deps.log.warn({ err: error }, 'sweeping expired generation events failed'));
  return log;
}

/** Opens the log with the generation's cancel registered; a log that cannot be opened gives the registration back. */
async function openLogHeld(deps: GenerationDeps, held: HeldRequest, background: boolean, cancel: { release(): void }): Promise<GenerationLogWriter> {
  try {
    return await openLog(deps, held, background);
  } catch (error) {
    cancel.release();
    throw error;
  }
}

/**
 * The NDJSON answer of a held generate: its log opened (readers find it by the generation's id), the
 * provider's acceptance (a refusal before it is still a problem, and the log ends failed), then the
 * stream. The upstream request stops when the client leaves (`signal`) or the generation is cancelled.
 */
export async function streamGenerate(
  deps: GenerationDeps,
  wakes: GenerationWakes,
  held: HeldRequest,
  prepared: PreparedGenerate,
  input: GenerateRequest,
  signal: AbortSignal,
  eventsUrl: (generationId: string) => string,
): Promise<Readable> {
  const cancel = cancellation(wakes, held.reservation.id);
  const log = await openLogHeld(deps, held, false, cancel);
  let accepted: AcceptedChat;
  try {
    accepted = await acceptGenerate(deps, held, prepared, AbortSignal.any([signal, cancel.signal]), cancel.signal);
  } catch (error) {
    cancel.release();
    await log.finish(cancel.signal.aborted ? 'cancelled' : 'failed');
    throw error;
  }
  const out = new PassThrough();
  const send = (event: GenerationStreamEvent) => {
    if (!out.destroyed && !out.writableEnded) out.write(line(event));
  };
  log.running();
  // The pump is the log's writer and the response's: each event goes out with the seq the log gives
  // it, written directly, never read back from the log, so the log costs the plain stream nothing on
  // its way. Only ready names where to resume (the log's readers get it added as they read).
  send({ ...log.append(readyOf(held)), eventsUrl: eventsUrl(held.reservation.id) } as GenerationStreamEvent);
  void pumpGeneration(deps, held, input, accepted, cancel.signal, (delta) => send(log.append(delta) as GenerationStreamEvent)).then(async ({ status, done }) => {
    cancel.release();
    // The done and the log's end go in one write; the response gets the done with its seq at once.
    const closing = log.finish(status, done ?? undefined);
    if (done) send({ ...done, seq: log.lastSeq } as GenerationStreamEvent);
    out.end();
    await closing;
  });
  return out;
}

/**
 * Starts a held generate in the background (Prefer: respond-async): its log is opened (queued) and a
 * pump in this process calls the provider and writes the events; no connection holds it, only a
 * cancel stops it. Answers once the log exists, before the provider is called.
 */
export async function startBackgroundGenerate(deps: GenerationDeps, wakes: GenerationWakes, held: HeldRequest, prepared: PreparedGenerate, input: GenerateRequest): Promise<void> {
  // Registered before the log exists: a cancel can only name a generation whose log it finds, so none is missed.
  const cancel = cancellation(wakes, held.reservation.id);
  const log = await openLogHeld(deps, held, true, cancel);
  const run = async () => {
    let accepted: AcceptedChat;
    try {
      accepted = await acceptGenerate(deps, held, prepared, cancel.signal, cancel.signal);
    } catch (error) {
      // Refused or cancelled before the provider accepted: released (its code is the reservation's), nothing to stream.
      if (!(error instanceof AppError)) deps.log.error({ err: error, workflowId: held.workflowId }, 'starting a background generation failed');
      await log.finish(cancel.signal.aborted ? 'cancelled' : 'failed');
      return;
    }
    log.running();
    log.append(readyOf(held));
    const { status, done } = await pumpGeneration(deps, held, input, accepted, cancel.signal, (delta) => log.append(delta));
    await log.finish(status, done ?? undefined);
  };
  void run().finally(cancel.release);
}

/**
 * Reads an accepted chat to its end, handing each delta to `delta`, settles it, and answers how it
 * finished and its `done` event. Never throws: the provider's and the lifecycle's failures end in a
 * `done` with the error and the receipt (none when the report did not land).
 */
async function pumpGeneration(
  deps: GenerationDeps,
  held: HeldRequest,
  input: GenerateRequest,
  accepted: AcceptedChat,
  cancelled: AbortSignal,
  delta: (event: GenerationStreamEvent) => void,
): Promise<{ status: FinishedStatus; done: GenerationStreamEvent | null }> {
  try {
    const generation = await settleGeneration(deps, held, input, accepted, (text) => delta({ type: 'delta', text }), cancelled);
    return { status: 'completed', done: { type: 'done', generation, error: null, receipt: generation.receipt } };
  } catch (error) {
    let code: string = 'intelligence_interrupted';
    let detail = 'The generation failed after the provider accepted it.';
    let receipt: UsageReceipt | null = null;
    try {
      if (error instanceof AppError) {
        // A billable failure the lifecycle recorded: its receipt and the provider's own outcome code.
        code = typeof error.extensions['outcomeCode'] === 'string' ? error.extensions['outcomeCode'] : error.code;
        detail = error.detail ?? detail;
        receipt = (error.extensions['receipt'] as UsageReceipt | null | undefined) ?? null;
      } else {
        deps.log.error({ err: error, workflowId: held.workflowId }, 'generation stream failed');
        receipt = await held.fail(new ProviderInterruption('intelligence_interrupted', detail), tokenCharge(deps.intelligence.text, null, null));
      }
    } catch (reportError) {
      deps.log.error({ err: reportError, workflowId: held.workflowId }, 'recording a failed generation failed; its workflow will');
    }
    // A done event needs a receipt; without one (the report did not land) the stream ends short, which the SDK reports.
    const done: GenerationStreamEvent | null = receipt ? { type: 'done', generation: null, error: { code, detail }, receipt } : null;
    return { status: code === 'generation_cancelled' ? 'cancelled' : 'failed', done };
  }
}

/** The logged generation the caller started under `idempotencyKey` (a retry of a background start answers it), if any. */
export function generationOfRequest(deps: GenerationDeps, caller: MeteredCaller, idempotencyKey: string): Promise<GenerationRow | null> {
  return generationOfKey(deps.db, caller, hashSecret(idempotencyKey));
}

/** What GET …/generations/{id} answers: the status, and once it ended the result (completed), the error and the receipt (when charged). */
export type GenerationView = {
  generationId: string;
  operation: string;
  status: GenerationRow['status'];
  background: boolean;
  createdAt: string;
  finishedAt: string | null;
  /** The seq of the last event in the log. */
  lastSeq: number;
  /** When the events stop being readable (410 generation_expired after); null while it runs. */
  eventsExpireAt: string | null;
  cancelRequestedAt: string | null;
  result: Generation | null;
  error: { code: string } | null;
  receipt: UsageReceipt | null;
};

/** The view of an authorized generation: its log's status and, from the ledger, its receipt and result. */
export async function generationView(db: DatabasePool, generation: GenerationRow): Promise<GenerationView> {
  const { generationId, operation, status, background, createdAt, finishedAt, lastSeq, eventsExpireAt, cancelRequestedAt } = generation;
  const finished = status !== 'queued' && status !== 'running';
  const charged = generation.reservationState === 'settled' || generation.reservationState === 'billable_failure';
  const receipt = finished && charged ? await getReceipt(db, generation.organizationId, generationId) : null;
  let result: Generation | null = null;
  if (receipt && status === 'completed' && operation === 'generate') {
    const parsed = storedGenerationSchema.safeParse((await storedResult(db, generationId))?.result);
    if (!parsed.success) throw new AppError('internal_error', 'The stored generation could not be read.');
    result = { generationId, ...parsed.data, receipt, replayed: false };
  }
  const error = finished && status !== 'completed' ? { code: generation.outcomeCode ?? 'intelligence_interrupted' } : null;
  return { generationId, operation, status, background, createdAt, finishedAt, lastSeq, eventsExpireAt, cancelRequestedAt, result, error, receipt };
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

/** One metered image. Priced per image: an accepted but broken one is charged its price (there are no partial images). */
export async function generateImage(deps: GenerationDeps, caller: MeteredCaller, input: ImageGenerationRequest, idempotencyKey: string, signal: AbortSignal): Promise<GeneratedImage> {
  const model = deps.intelligence.image;
  if (!model) throw new AppError('capability_unavailable', 'No image model is configured.');
  const { prompt, size } = imagePrompt(input);
  const cost = imageCost(model, 1);
  const opened = await meter(deps, caller, idempotencyKey, { operation: 'generate-image', body: input, costMicrodollars: cost });
  if (opened.kind === 'settled') return replayImage(deps, opened.reservation);
  const answer = await opened.held.accept(() => deps.intelligence.provider.generateImage({ model: model.name, prompt, size, outputFormat: input.outputFormat }, signal));
  const { recorded, stored } = await opened.held.settle(
    async () => {
      const recognized = answer.bytes.length <= MAX_IMAGE_BYTES ? recognizeImage(answer.bytes) : null;
      if (!recognized) throw new ProviderInterruption('intelligence_output_invalid', 'The provider answered bytes that are not a PNG, JPEG or WebP image.', { usage: answer.usage, model: answer.model });
      const image: z.infer<typeof storedImageSchema> = {
        ...recognized,
        byteLength: answer.bytes.length,
        sha256: createHash('sha256').update(answer.bytes).digest('hex'),
        altText: briefAltText(input),
        altTextSource: 'brief',
        model: { id: answer.model, provider: 'openai-compatible' },
      };
      return {
        stored: image,
        bytes: answer.bytes,
        costMicrodollars: cost,
        model: answer.model,
        inputTokens: answer.usage?.inputTokens ?? null,
        outputTokens: answer.usage?.outputTokens ?? null,
        images: 1,
      };
    },
    (interruption) => ({ costMicrodollars: cost, model: interruption.model, inputTokens: null, outputTokens: null }),
  );
  return { generationId: recorded.id, ...stored, base64: answer.bytes.toString('base64'), receipt: receiptOf(recorded), replayed: false };
}

async function replayImage(deps: GenerationDeps, reservation: Reservation): Promise<GeneratedImage> {
  const stored = await storedResult(deps.db, reservation.id);
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
  messages(input: I): ChatRequest['messages'];
  /** The strict JSON schema the provider is held to. */
  jsonSchema: { name: string; schema: Record<string, unknown> };
  /** The model's text as the operation's result, or null when it is not acceptable (wrong shape, ids not submitted…). */
  accept(text: string, input: I): O | null;
  /** The stored result as read back for a replay (the same shape accept answers). */
  resultSchema: z.ZodType<O>;
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
  caller: MeteredCaller,
  /** The operation's metered kind (the receipt's operation), as the SDK's operation table states it. */
  meteredKind: string,
  op: StructuredOperation<I, O>,
  input: I,
  idempotencyKey: string,
  signal: AbortSignal,
): Promise<StructuredResult<O>> {
  const messages = op.messages(input);
  const maxTokens = outputCap(deps.intelligence.text, undefined, op.maxOutputTokens(input));
  const chat: ChatRequest = { model: deps.intelligence.text.name, messages, maxTokens, jsonSchema: op.jsonSchema };
  const oneAttempt = chatCostBound(deps.intelligence.text, inputTokenBound(messages, op.jsonSchema), maxTokens);
  const opened = await meter(deps, caller, idempotencyKey, { operation: meteredKind, body: input, costMicrodollars: oneAttempt * MAX_STRUCTURED_ATTEMPTS });
  if (opened.kind === 'settled') {
    const stored = storedStructuredSchema.safeParse((await storedResult(deps.db, opened.reservation.id))?.result);
    const result = stored.success ? op.resultSchema.safeParse(stored.data.result) : null;
    if (!stored.success || !result?.success) throw new AppError('internal_error', 'The stored result could not be read.');
    return { generationId: opened.reservation.id, result: result.data, model: stored.data.model, receipt: receiptOf(opened.reservation), replayed: true };
  }
  const { held } = opened;
  // What every attempt used; `reported` false once one attempt reported nothing (then the bound is charged).
  const used = { inputTokens: 0, outputTokens: 0, reported: true };
  let model: string | null = null;
  const first = await held.accept(() => deps.intelligence.provider.openChat(chat, signal));
  const { recorded, stored } = await held.settle(
    async () => {
      for (let attempt = 1; attempt <= MAX_STRUCTURED_ATTEMPTS; attempt++) {
        const answer =
          attempt === 1
            ? first
            : await deps.intelligence.provider.openChat(chat, signal).catch((error: unknown) => {
                // After an accepted attempt, a refused retry is a billable failure: what was used is charged.
                if (error instanceof ProviderRejection) throw new ProviderInterruption('intelligence_output_invalid', 'A retry after an invalid output was refused by the provider.', { model });
                throw error;
              });
        const final = await finalOf(answer);
        model = final.model;
        if (final.usage) {
          used.inputTokens += final.usage.inputTokens;
          used.outputTokens += final.usage.outputTokens;
        } else used.reported = false;
        const result = final.finishReason === 'stop' ? op.accept(final.text, input) : null;
        if (result === null) continue;
        const known = used.reported ? { inputTokens: used.inputTokens, outputTokens: used.outputTokens } : null;
        return { stored: { result, model: { id: final.model, provider: 'openai-compatible' as const } }, ...tokenCharge(deps.intelligence.text, known, final.model), model: final.model, images: null };
      }
      throw new ProviderInterruption('intelligence_output_invalid', `The model did not produce a valid ${meteredKind} in ${MAX_STRUCTURED_ATTEMPTS} attempts.`, { model });
    },
    (interruption) => {
      // Every attempt's usage, and what the interrupted one reported before it broke.
      const extra = interruption.usage ?? { inputTokens: 0, outputTokens: 0 };
      const known = used.reported ? { inputTokens: used.inputTokens + extra.inputTokens, outputTokens: used.outputTokens + extra.outputTokens } : null;
      return tokenCharge(deps.intelligence.text, known, interruption.model ?? model);
    },
  );
  return { generationId: recorded.id, result: stored.result, model: stored.model, receipt: receiptOf(recorded), replayed: false };
}
