// What a metered request may cost before it runs, and what it cost after. Integer microdollars
// throughout (1,000,000 = US$1); prices are configured per million tokens and per image.
//
// The bound must never be below the provider's charge, or 200 concurrent callers could overspend:
// - input tokens ≤ UTF-8 bytes of every message (a byte-level BPE token covers at least one byte),
//   plus a per-message allowance for the chat format's framing tokens;
// - output tokens ≤ max_tokens, which we always send (clamped to the model's configured maximum);
// - an image costs its configured price, one image per request.

export type TextModelConfig = {
  name: string;
  inputMicrodollarsPerMillionTokens: number;
  outputMicrodollarsPerMillionTokens: number;
  /** max_tokens is clamped to this; the default when the caller names none. */
  maxOutputTokens: number;
};

export type ImageModelConfig = { name: string; microdollarsPerImage: number };

/** Tokens the chat format adds around each message (role markers, separators); OpenAI's documented framing is 3–4. */
export const FRAMING_TOKENS_PER_MESSAGE = 8;
/** Tokens that prime the reply, plus the response_format's schema when structured output is asked. */
export const FRAMING_TOKENS_PER_REQUEST = 16;

const ceilDiv = (numerator: number, denominator: number) => Math.ceil(numerator / denominator);

/** An upper bound of the input tokens of these messages (and the JSON schema sent beside them). */
export function inputTokenBound(messages: readonly { content: string }[], extra = ''): number {
  let bytes = Buffer.byteLength(extra, 'utf8');
  for (const m of messages) bytes += Buffer.byteLength(m.content, 'utf8');
  return bytes + messages.length * FRAMING_TOKENS_PER_MESSAGE + FRAMING_TOKENS_PER_REQUEST;
}

export function tokenCost(model: TextModelConfig, tokens: { input: number; output: number }): number {
  return ceilDiv(tokens.input * model.inputMicrodollarsPerMillionTokens + tokens.output * model.outputMicrodollarsPerMillionTokens, 1_000_000);
}

/** The output cap actually sent: the caller's ask, never above the model's maximum. */
export function outputCap(model: TextModelConfig, asked: number | undefined): number {
  return Math.min(asked ?? model.maxOutputTokens, model.maxOutputTokens);
}

/** The maximum bounded cost of a chat request: everything it could be charged. */
export function chatCostBound(model: TextModelConfig, inputTokens: number, maxTokens: number): number {
  return tokenCost(model, { input: inputTokens, output: maxTokens });
}

export function imageCost(model: ImageModelConfig, images: number): number {
  return model.microdollarsPerImage * images;
}
