// The OpenAI-compatible model provider, through the official `openai` package. Two questions decide
// the ledger, so this module answers them precisely:
// - Did the provider accept the request? Accepted = its 2xx response headers arrived. Anything
//   before that (a refusal, a connection failure, a timeout, the client leaving) is a rejection,
//   and the reservation is released.
// - Did an accepted request complete? Only a stream that reached a finish reason did; one that
//   broke, stalled past the deadline or was aborted is interrupted (a billable failure).
// `maxRetries: 0`: one dispatch is one provider request, so one ledger entry. Nothing here logs a
// prompt, an answer or the key.
import OpenAI from 'openai';
import type { ErrorCode } from '../errors.ts';
import { getBytes } from '../automation/network.ts';
import type { EgressPolicy } from '../automation/network.ts';

export type ProviderConfig = {
  baseUrl: string;
  apiKey: string;
  /** Deadline of one request, headers and body together. */
  timeoutMs: number;
  /**
   * Where an image answered as a URL may be fetched from: the webhooks' egress rules (public
   * addresses only, https, unless allow-listed). Default: public https only.
   */
  egress?: EgressPolicy;
};

/** An image larger than this is not an answer we keep (the provider's are ~2–4 MiB). */
export const MAX_IMAGE_BYTES = 20 * 1_048_576;

export type ChatMessage = { role: 'system' | 'user'; content: string };

export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  /** Structured output: the provider is held to this JSON schema (strict). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
};

export type ChatUsage = { inputTokens: number; outputTokens: number };
export type ChatFinal = { model: string; finishReason: 'stop' | 'length'; usage: ChatUsage | null; text: string };

/** The provider did not accept the request: nothing was generated, the reservation is released. */
export class ProviderRejection extends Error {
  readonly code: ErrorCode | 'client_disconnected';
  readonly retryAfterSeconds: number | null;
  constructor(code: ErrorCode | 'client_disconnected', message: string, retryAfterSeconds: number | null = null) {
    super(message);
    this.name = 'ProviderRejection';
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An accepted request that did not complete: a billable failure. */
export class ProviderInterruption extends Error {
  /** generation_cancelled: stopped by a cancel of the generation (generation.ts tells it from a client leaving). */
  readonly code: 'client_disconnected' | 'generation_cancelled' | 'intelligence_interrupted' | 'intelligence_provider_timeout' | 'intelligence_output_invalid';
  /** What the provider reported before it stopped, if anything (the charge is then the actual cost). */
  readonly usage: ChatUsage | null;
  readonly model: string | null;
  constructor(code: ProviderInterruption['code'], message: string, partial: { usage?: ChatUsage | null; model?: string | null } = {}) {
    super(message);
    this.name = 'ProviderInterruption';
    this.code = code;
    this.usage = partial.usage ?? null;
    this.model = partial.model ?? null;
  }
}

/** An accepted chat completion: iterate `deltas()` once; `final` is set when it completed. */
export type AcceptedChat = {
  deltas(): AsyncGenerator<string, ChatFinal, undefined>;
};

export type ImageRequest = { model: string; prompt: string; size: '1024x1024' | '1536x1024' | '1024x1536'; outputFormat: 'png' | 'jpeg' | 'webp' };

/**
 * The image parameters a model takes: the GPT image models always answer base64 and take
 * `output_format` (and refuse `response_format`); DALL·E answers a URL unless asked for `b64_json`
 * (and refuses `output_format`). Any other name is a proxy's alias whose model we cannot see: it gets
 * `output_format` only, because a proxy that does not know the model refuses `response_format`
 * (LiteLLM 1.80.5: UnsupportedParamsError, a 400) but drops an unknown `output_format`; if the
 * answer is then a URL, it is fetched (fetchImageUrl).
 */
export function imageFormatParams(model: string, outputFormat: ImageRequest['outputFormat']): { output_format?: ImageRequest['outputFormat']; response_format?: 'b64_json' } {
  if (/^gpt-image/i.test(model)) return { output_format: outputFormat };
  if (/^dall-e/i.test(model)) return { response_format: 'b64_json' };
  return { output_format: outputFormat };
}
export type ImageAnswer = { bytes: Buffer; model: string; usage: ChatUsage | null };

export type IntelligenceProvider = {
  /** Resolves once the provider accepted (2xx headers); throws ProviderRejection before that. */
  openChat(request: ChatRequest, signal: AbortSignal): Promise<AcceptedChat>;
  /**
   * One image, base64 from the provider (asked for where the API allows it); an image answered as a
   * URL is fetched under the egress rules and size cap. Throws ProviderRejection before acceptance,
   * and also when the service refuses to read an accepted answer (a URL it may not or cannot fetch:
   * `intelligence_output_unreadable`, released, never billed); ProviderInterruption after acceptance
   * otherwise (a body that breaks or carries no image).
   */
  generateImage(request: ImageRequest, signal: AbortSignal): Promise<ImageAnswer>;
};

function retryAfterOf(headers: Headers | undefined): number | null {
  const raw = headers?.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** A failure before acceptance, as a stable code (never the provider's message: it may echo input). */
function rejectionOf(error: unknown, deadline: AbortSignal, client: AbortSignal): ProviderRejection {
  if (client.aborted) return new ProviderRejection('client_disconnected', 'The client went away before the provider accepted the request.');
  if (deadline.aborted || error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ProviderRejection('intelligence_provider_timeout', 'The model provider did not answer before the deadline.');
  }
  if (error instanceof OpenAI.APIUserAbortError) return new ProviderRejection('client_disconnected', 'The request was aborted before the provider accepted it.');
  if (error instanceof OpenAI.APIConnectionError) return new ProviderRejection('intelligence_provider_unreachable', 'The model provider could not be reached.');
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    if (status === 429) return new ProviderRejection('intelligence_provider_rate_limited', 'The model provider is rate limiting this service.', retryAfterOf(error.headers));
    if (status === 401 || status === 403 || status === 404) {
      return new ProviderRejection('intelligence_provider_misconfigured', `The model provider refused the service's configuration (HTTP ${status}).`);
    }
    if (status >= 400 && status < 500) return new ProviderRejection('intelligence_provider_refused', `The model provider refused the request (HTTP ${status}).`);
    return new ProviderRejection('intelligence_provider_error', `The model provider failed (HTTP ${status}).`);
  }
  return new ProviderRejection('intelligence_provider_error', 'The model provider failed before accepting the request.');
}

export function createOpenAiProvider(config: ProviderConfig): IntelligenceProvider {
  const client = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseUrl, maxRetries: 0, timeout: config.timeoutMs });

  return {
    async openChat(request, signal) {
      // One signal for the whole request (headers and body): the client leaving, or the deadline.
      const deadline = AbortSignal.timeout(config.timeoutMs);
      const both = AbortSignal.any([signal, deadline]);
      let stream;
      try {
        stream = await client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages,
            max_completion_tokens: request.maxTokens,
            stream: true,
            stream_options: { include_usage: true },
            ...(request.jsonSchema ? { response_format: { type: 'json_schema', json_schema: { name: request.jsonSchema.name, schema: request.jsonSchema.schema, strict: true } } } : {}),
          },
          { signal: both },
        );
      } catch (error) {
        throw rejectionOf(error, deadline, signal);
      }
      return {
        async *deltas() {
          let model: string | null = null;
          let usage: ChatUsage | null = null;
          let finishReason: 'stop' | 'length' | null = null;
          let text = '';
          const interrupted = (cause?: unknown) => {
            if (signal.aborted) return new ProviderInterruption('client_disconnected', 'The client went away mid-generation.', { usage, model });
            if (deadline.aborted) return new ProviderInterruption('intelligence_provider_timeout', 'The generation passed its deadline.', { usage, model });
            return new ProviderInterruption('intelligence_interrupted', cause instanceof Error ? 'The provider stream broke off.' : 'The provider stream ended without finishing.', {
              usage,
              model,
            });
          };
          try {
            for await (const chunk of stream) {
              if (chunk.model) model = chunk.model;
              if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
              const choice = chunk.choices[0];
              if (choice?.finish_reason) {
                // content_filter / tool_calls are not a usable answer of this operation.
                if (choice.finish_reason !== 'stop' && choice.finish_reason !== 'length') {
                  throw new ProviderInterruption('intelligence_output_invalid', `The provider finished with ${choice.finish_reason}.`, { usage, model });
                }
                finishReason = choice.finish_reason;
              }
              const piece = choice?.delta?.content;
              if (piece) {
                text += piece;
                yield piece;
              }
            }
          } catch (error) {
            if (error instanceof ProviderInterruption) throw error;
            throw interrupted(error);
          } finally {
            // A consumer that stops early (the client left) must stop the upstream request too.
            stream.controller.abort();
          }
          // Trap: an aborted stream ends the loop silently; only a finish reason means it completed.
          if (both.aborted || finishReason === null) throw interrupted();
          return { model: model ?? request.model, finishReason, usage, text };
        },
      };
    },

    async generateImage(request, signal) {
      const deadline = AbortSignal.timeout(config.timeoutMs);
      const both = AbortSignal.any([signal, deadline]);
      let response: Response;
      try {
        // asResponse: resolves when the (2xx) headers arrive, which is where acceptance is decided.
        response = await client.images
          .generate({ model: request.model, prompt: request.prompt, n: 1, size: request.size, ...imageFormatParams(request.model, request.outputFormat) }, { signal: both })
          .asResponse();
      } catch (error) {
        throw rejectionOf(error, deadline, signal);
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        if (signal.aborted) throw new ProviderInterruption('client_disconnected', 'The client went away while the image was downloading.');
        if (deadline.aborted) throw new ProviderInterruption('intelligence_provider_timeout', 'The image passed its deadline.');
        throw new ProviderInterruption('intelligence_interrupted', 'The image response broke off.');
      }
      const parsed = body as { model?: unknown; data?: { b64_json?: unknown; url?: unknown }[]; usage?: { input_tokens?: unknown; output_tokens?: unknown } };
      const b64 = parsed.data?.[0]?.b64_json;
      const url = parsed.data?.[0]?.url;
      const usage =
        typeof parsed.usage?.input_tokens === 'number' && typeof parsed.usage.output_tokens === 'number'
          ? { inputTokens: parsed.usage.input_tokens, outputTokens: parsed.usage.output_tokens }
          : null;
      const model = typeof parsed.model === 'string' ? parsed.model : request.model;
      if ((typeof b64 !== 'string' || b64.length === 0) && typeof url === 'string' && url !== '') {
        return { bytes: await fetchImageUrl(url, config.egress ?? { allowList: [] }, deadline, signal), model, usage };
      }
      if (typeof b64 !== 'string' || b64.length === 0) {
        throw new ProviderInterruption('intelligence_output_invalid', 'The provider answered no base64 image.', { usage, model });
      }
      return { bytes: Buffer.from(b64, 'base64'), model, usage };
    },
  };
}

/**
 * The bytes of an image the provider answered as a URL, fetched like a webhook is sent (SSRF rules,
 * no redirects, within the request's remaining deadline) and refused past MAX_IMAGE_BYTES. Anything
 * that keeps the service from reading it is the service's refusal, not the caller's cost: a
 * rejection (released). Only the client leaving stays an interruption.
 */
async function fetchImageUrl(raw: string, egress: EgressPolicy, deadline: AbortSignal, client: AbortSignal): Promise<Buffer> {
  const url = URL.parse(raw);
  const unreadable = (why: string) => new ProviderRejection('intelligence_output_unreadable', `The provider answered the image as a URL the service did not read (${why}); nothing was charged.`);
  if (!url) throw unreadable('not a URL');
  if (deadline.aborted) throw unreadable('the deadline passed');
  try {
    const { bytes } = await getBytes(url, egress, { timeoutMs: IMAGE_URL_TIMEOUT_MS, maxBytes: MAX_IMAGE_BYTES, signal: AbortSignal.any([client, deadline]) });
    return bytes;
  } catch (error) {
    if (client.aborted) throw new ProviderInterruption('client_disconnected', 'The client went away while the image was downloading.');
    const code = (error as { code?: string }).code;
    const why =
      code === 'EGRESS_REFUSED' ? 'its address is not one the service may fetch'
      : code === 'TOO_LARGE' ? `it is larger than ${MAX_IMAGE_BYTES} bytes`
      : code === 'HTTP_STATUS' ? 'it did not answer 200'
      : code === 'ETIMEDOUT' || deadline.aborted ? 'it did not answer in time'
      : 'it could not be fetched';
    throw unreadable(why);
  }
}

/** Deadline of fetching an image URL (within the provider request's own deadline). */
const IMAGE_URL_TIMEOUT_MS = 30_000;
