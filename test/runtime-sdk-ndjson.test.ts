// readNdjson: the SDK's reader of streamed runtime answers (ready, delta…, done), on constructed
// Responses. It must hand over every event of a well-formed stream, however the bytes are chunked,
// and refuse anything else rather than return a silently shorter answer.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readNdjson, RuntimeError, RuntimeStreamError } from '@hosted-notes/runtime-sdk';

const encoder = new TextEncoder();

/** A Response whose body arrives in the given chunks; `cancelled` turns true if the reader cancels it. */
function streamed(chunks: Array<string | Uint8Array>, init: { status?: number; contentType?: string } = {}) {
  const state = { cancelled: false, pulled: 0 };
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulled += 1;
      const chunk = chunks[index++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const response = new Response(body, { status: init.status ?? 200, headers: { 'content-type': init.contentType ?? 'application/x-ndjson' } });
  return { response, state };
}

const collect = async (response: Response) => {
  const events: unknown[] = [];
  for await (const event of readNdjson(response)) events.push(event);
  return events;
};

const refusal = async (response: Response) =>
  collect(response).then(
    () => null,
    (error: unknown) => error,
  );

describe('readNdjson', () => {
  it('yields ready, deltas and done however the bytes are split (a character across chunks, the last line without a newline)', async () => {
    const text = '{"type":"ready","requestId":"r1"}\n{"type":"delta","text":"Frac"}\r\n\n{"type":"delta","text":"tions ½"}\n{"type":"done","usage":{"tokens":3}}';
    const bytes = encoder.encode(text);
    // One byte per chunk: every boundary, including inside "½" (two bytes in UTF-8).
    const { response } = streamed([...bytes].map((b) => new Uint8Array([b])));
    expect(await collect(response)).toEqual([
      { type: 'ready', requestId: 'r1' },
      { type: 'delta', text: 'Frac' },
      { type: 'delta', text: 'tions ½' },
      { type: 'done', usage: { tokens: 3 } },
    ]);
  });

  it('refuses a line that is not JSON, naming the line', async () => {
    const error = await refusal(streamed(['{"type":"ready"}\n', '{"type":"delta",\n', '{"type":"done"}\n']).response);
    expect(error).toBeInstanceOf(RuntimeStreamError);
    expect(error).toMatchObject({ line: 2 });
  });

  it('refuses JSON that is not an event, and events out of order', async () => {
    for (const lines of [
      ['{"type":"ready"}', '{"kind":"delta"}', '{"type":"done"}'],
      ['{"type":"ready"}', '{"type":"progress"}', '{"type":"done"}'],
      ['{"type":"ready"}', '[1,2]', '{"type":"done"}'],
      ['{"type":"delta"}', '{"type":"done"}'],
      ['{"type":"ready"}', '{"type":"ready"}', '{"type":"done"}'],
      ['{"type":"ready"}', '{"type":"done"}', '{"type":"delta"}'],
    ]) {
      const error = await refusal(streamed([lines.join('\n') + '\n']).response);
      expect(error, lines.join(' | ')).toBeInstanceOf(RuntimeStreamError);
    }
  });

  it('refuses a stream that ends without done (as a dropped connection does), after handing over what came', async () => {
    const { response } = streamed(['{"type":"ready"}\n{"type":"delta","text":"half"}\n']);
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const event of readNdjson(response)) seen.push(event);
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(seen).toHaveLength(2);
    expect(error).toBeInstanceOf(RuntimeStreamError);
    expect((error as Error).message).toMatch(/without a done event/);
    expect(await refusal(streamed([]).response)).toBeInstanceOf(RuntimeStreamError);
  });

  it('refuses bytes that are not UTF-8', async () => {
    const error = await refusal(streamed([encoder.encode('{"type":"ready"}\n'), new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), encoder.encode('{"type":"done"}\n')]).response);
    expect(error).toBeInstanceOf(RuntimeStreamError);
    expect(error).toMatchObject({ line: 2 });
  });

  it('turns a problem+json refusal into RuntimeError, and refuses another content type', async () => {
    const problem = new Response(JSON.stringify({ type: '/problems/budget', title: 'Budget', status: 429, code: 'organization_quota_exhausted', resetsAt: '2026-12-01T00:00:00.000Z' }), {
      status: 429,
      headers: { 'content-type': 'application/problem+json' },
    });
    const error = await refusal(problem);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ status: 429, code: 'organization_quota_exhausted', extensions: { resetsAt: '2026-12-01T00:00:00.000Z' } });
    expect(await refusal(streamed(['{"type":"ready"}\n{"type":"done"}\n'], { contentType: 'application/json' }).response)).toBeInstanceOf(RuntimeStreamError);
  });

  it('cancels the body when the consumer stops early', async () => {
    const { response, state } = streamed(['{"type":"ready"}\n', '{"type":"delta","text":"a"}\n', '{"type":"delta","text":"b"}\n', '{"type":"done"}\n']);
    for await (const event of readNdjson(response)) {
      if (event.type === 'delta') break;
    }
    expect(state.cancelled).toBe(true);
  });

  it('checks each event against the operation schema when given one', async () => {
    const schema = z.discriminatedUnion('type', [
      z.object({ type: z.literal('ready'), model: z.string() }),
      z.object({ type: z.literal('delta'), text: z.string() }),
      z.object({ type: z.literal('done'), receiptId: z.string() }),
    ]);
    const good = streamed(['{"type":"ready","model":"m"}\n{"type":"delta","text":"x"}\n{"type":"done","receiptId":"u1"}\n']).response;
    const events = [];
    for await (const event of readNdjson(good, { schema })) events.push(event);
    expect(events.at(-1)).toEqual({ type: 'done', receiptId: 'u1' });
    const bad = streamed(['{"type":"ready","model":"m"}\n{"type":"delta","text":7}\n{"type":"done","receiptId":"u1"}\n']).response;
    const error = await (async () => {
      for await (const _ of readNdjson(bad, { schema })) void _;
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'RuntimeStreamError', line: 2 });
  });
});
