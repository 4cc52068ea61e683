// What a metered request may cost before it runs, and what it cost after. Integer microdollars
// throughout (1,000,000 = US$1); prices are configured per million tokens and per image.
//
// The bound is a true upper bound of what an honest provider charges for the request we send:
// - input tokens ≤ UTF-8 bytes of every message (a byte-level BPE token covers at least one byte),
//   plus a per-message allowance for the chat format's framing tokens, and for structured output the
//   schema's bytes plus an allowance for the text the provider wraps it in; we send no tools and no
//   images to a chat model, so nothing else is counted as input;
// - output tokens ≤ max_completion_tokens, which we always send (reasoning tokens count inside it);
// - an image costs its configured price, one image per request.
// A provider or proxy that reports more (its own system prompt, another tokenizer) is still charged
// at most the bound: the ledger records the difference as an overrun (ledger.ts).
//
// The output cap is per operation (docs/intelligence.md, "Output caps"): the bound is dominated by
// it, so a cap sized for what the operation needs lets a budget admit as many concurrent requests as
// it can pay for; a caller may ask for more, up to the model's configured maximum.

export type TextModelConfig = {
  name: string;
  inputMicrodollarsPerMillionTokens: number;
  outputMicrodollarsPerMillionTokens: number;
  /** The model's output ceiling: max_completion_tokens is clamped to it (INTELLIGENCE_TEXT_MAX_OUTPUT_TOKENS). */
  maxOutputTokens: number;
};

export type ImageModelConfig = { name: string; microdollarsPerImage: number };

/** Tokens the chat format adds around each message (role markers, separators); OpenAI's documented framing is 3–4. */
export const FRAMING_TOKENS_PER_MESSAGE = 8;
/** Tokens that prime the reply, plus the response_format's schema when structured output is asked. */
export const FRAMING_TOKENS_PER_REQUEST = 16;

const ceilDiv = (numerator: number, denominator: number) => Math.ceil(numerator / denominator);

/**
 * Tokens a provider adds around a structured-output schema (it is rendered into the prompt under a
 * heading with its name and strictness); generous beside the few dozen a provider uses.
 */
export const STRUCTURED_OUTPUT_FRAMING_TOKENS = 64;

/** An upper bound of the input tokens of these messages (and of the JSON schema sent beside them, when there is one). */
export function inputTokenBound(messages: readonly { content: string }[], jsonSchema?: { name: string; schema: Record<string, unknown> }): number {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.content, 'utf8');
  const schema = jsonSchema ? Buffer.byteLength(jsonSchema.name, 'utf8') + Buffer.byteLength(JSON.stringify(jsonSchema.schema), 'utf8') + STRUCTURED_OUTPUT_FRAMING_TOKENS : 0;
  return bytes + schema + messages.length * FRAMING_TOKENS_PER_MESSAGE + FRAMING_TOKENS_PER_REQUEST;
}

export function tokenCost(model: TextModelConfig, tokens: { input: number; output: number }): number {
  return ceilDiv(tokens.input * model.inputMicrodollarsPerMillionTokens + tokens.output * model.outputMicrodollarsPerMillionTokens, 1_000_000);
}

/** The output cap actually sent: the caller's ask, else the operation's default, never above the model's maximum. */
export function outputCap(model: TextModelConfig, asked: number | undefined, operationDefault: number): number {
  return Math.min(asked ?? operationDefault, model.maxOutputTokens);
}

/** The maximum bounded cost of a chat request: everything it could be charged. */
export function chatCostBound(model: TextModelConfig, inputTokens: number, maxTokens: number): number {
  return tokenCost(model, { input: inputTokens, output: maxTokens });
}

export function imageCost(model: ImageModelConfig, images: number): number {
  return model.microdollarsPerImage * images;
}
