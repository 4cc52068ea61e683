// The reader of the runtime's streamed answers (`Accept: application/x-ndjson`): one JSON event per
// line, `ready` first, zero or more `delta`, a final `done`. The reader is strict so a product can
// trust what it got: a line that is not a JSON event, an event out of order, anything after `done`,
// or a stream that stops before `done` (a dropped connection looks exactly like that) is an error,
// never a silently shorter answer.
import { z } from 'zod';
import { problemSchema, RuntimeError, RuntimeResponseError } from './operations.ts';

export const NDJSON_CONTENT_TYPE = 'application/x-ndjson';

/** The events the spec names. Each carries `type`; the other members are the operation's (issue 12 defines them). */
export const streamEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('ready') }),
  z.looseObject({ type: z.literal('delta') }),
  z.looseObject({ type: z.literal('done') }),
]);
export type RuntimeStreamEvent = z.infer<typeof streamEventSchema>;

/** A stream that broke the NDJSON contract; `line` is the 1-based line at fault (null: the stream as a whole). */
export class RuntimeStreamError extends RuntimeResponseError {
  override readonly name: string = 'RuntimeStreamError';
  readonly line: number | null;
  constructor(message: string, options: { line?: number | null; issues?: readonly z.core.$ZodIssue[]; cause?: unknown; status?: number | null } = {}) {
    super(message, options);
    this.line = options.line ?? null;
  }
}

export type ReadNdjsonOptions<E extends { type: string }> = {
  /** A stricter schema of the events (the operation's own); its events must still carry `type` ready/delta/done. */
  schema?: z.ZodType<E>;
  /** A read from an offset: the first event need not be ready (the events of a generation after a seq). */
  resumed?: boolean;
};

/** Turns a refused (non-2xx) response into RuntimeError, or RuntimeResponseError when its body is no problem. */
export async function problemOf(response: Response, idempotencyKey?: string): Promise<Error> {
  const text = await response.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return new RuntimeResponseError(`HTTP ${response.status} without a problem+json body.`, { status: response.status });
  }
  const problem = problemSchema.safeParse(json);
  if (!problem.success) return new RuntimeResponseError(`HTTP ${response.status} with a body that is not a problem.`, { status: response.status, issues: problem.error.issues });
  return new RuntimeError(problem.data, { idempotencyKey });
}

/**
 * Reads an NDJSON response as an async iterator of events. Breaking out of the loop cancels the
 * body (the connection closes, and the service cancels its upstream work).
 */
export async function* readNdjson<E extends { type: string } = RuntimeStreamEvent>(response: Response, options: ReadNdjsonOptions<E> = {}): AsyncGenerator<E, void, undefined> {
  if (!response.ok) throw await problemOf(response);
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== NDJSON_CONTENT_TYPE) {
    throw new RuntimeStreamError(`Expected ${NDJSON_CONTENT_TYPE}, got ${contentType || 'no content type'}.`, { status: response.status });
  }
  if (!response.body) throw new RuntimeStreamError('The stream has no body.', { status: response.status });
  const schema = (options.schema ?? streamEventSchema) as z.ZodType<E>;
  const reader = response.body.getReader();
  // fatal: bytes that are not UTF-8 are a malformed line, not replacement characters.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let buffered = '';
  let lineNumber = 0;
  let state = 'start' as 'start' | 'streaming' | 'done';
  let finished = false;

  const parseLine = (raw: string): E | null => {
    lineNumber += 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // A blank line carries nothing (a keep-alive); it is not an event.
    if (line.trim() === '') return null;
    if (state === 'done') throw new RuntimeStreamError(`Line ${lineNumber} comes after the done event.`, { line: lineNumber });
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new RuntimeStreamError(`Line ${lineNumber} is not JSON.`, { line: lineNumber, cause });
    }
    const base = streamEventSchema.safeParse(json);
    if (!base.success) throw new RuntimeStreamError(`Line ${lineNumber} is not a ready, delta or done event.`, { line: lineNumber, issues: base.error.issues });
    const event = schema.safeParse(json);
    if (!event.success) throw new RuntimeStreamError(`Line ${lineNumber} is not a valid ${base.data.type} event.`, { line: lineNumber, issues: event.error.issues });
    const type = base.data.type;
    if (state === 'start' && type !== 'ready' && options.resumed !== true) throw new RuntimeStreamError(`The stream starts with ${type}, not ready.`, { line: lineNumber });
    if (state === 'streaming' && type === 'ready') throw new RuntimeStreamError(`Line ${lineNumber} is a second ready event.`, { line: lineNumber });
    state = type === 'done' ? 'done' : 'streaming';
    return event.data;
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      try {
        buffered += decoder.decode(value, { stream: true });
      } catch (cause) {
        throw new RuntimeStreamError(`Line ${lineNumber + 1} is not UTF-8.`, { line: lineNumber + 1, cause });
      }
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const event = parseLine(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (event) yield event;
        newline = buffered.indexOf('\n');
      }
    }
    try {
      buffered += decoder.decode();
    } catch (cause) {
      throw new RuntimeStreamError(`Line ${lineNumber + 1} is not UTF-8.`, { line: lineNumber + 1, cause });
    }
    // The last line may end without a newline.
    if (buffered !== '') {
      const event = parseLine(buffered);
      buffered = '';
      if (event) yield event;
    }
    if ((state as string) !== 'done') throw new RuntimeStreamError('The stream ended without a done event.');
    finished = true;
  } finally {
    // Stopped early (the consumer broke out, or a refusal above): cancel so the connection closes.
    if (!finished) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
}
