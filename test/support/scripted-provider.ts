// A scripted OpenAI-compatible model provider on loopback: the real wire protocol (chat
// completions as server-sent events with a usage chunk, images as base64 JSON, OpenAI-shaped error
// bodies), driven by the same `openai` client production uses. It plays queued turns, counts calls,
// streams slowly, fails on demand and records when a client goes away mid-request.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIntelligence } from '../../domain/intelligence/setup.ts';
import type { Intelligence, IntelligenceSettings } from '../../domain/intelligence/setup.ts';

export type ChatTurn = {
  kind: 'chat';
  chunks: string[];
  /** Between chunks (and before the first). */
  chunkDelayMs?: number;
  /** Reported in the final usage chunk; null sends none (a provider without include_usage). Default: counted from the chunks. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  model?: string;
  finishReason?: 'stop' | 'length' | 'content_filter';
  /** Headers are held until this settles (keeps a request dispatched but unanswered). */
  holdUntil?: Promise<unknown>;
  /** Awaited before chunk `index` is sent: a test paces the stream by what its client has seen. */
  beforeChunk?: (index: number) => Promise<unknown>;
};
export type ScriptedTurn =
  | ChatTurn
  /** An error answer before any stream: the status, an OpenAI error body, optional Retry-After. */
  | { kind: 'error'; status: number; retryAfter?: string; holdUntil?: Promise<unknown> }
  /** 200 headers and these chunks, then silence until the client goes away. */
  | { kind: 'stall'; chunks: string[] }
  /** 200 headers and these chunks, then the connection is cut. */
  | { kind: 'drop'; chunks: string[] }
  /** Never answers, not even headers. */
  | { kind: 'hang' }
  | { kind: 'image'; bytes: Buffer; usage?: { input_tokens: number; output_tokens: number }; holdUntil?: Promise<unknown> }
  /** The image as a URL instead of base64 (as DALL·E answers unless asked for b64_json, and some proxies do). */
  | { kind: 'image-url'; url: string };

/** What GET /files/<name> answers: bytes, an HTTP status, a redirect, or silence. */
export type ServedFile = { kind: 'bytes'; bytes: Buffer } | { kind: 'status'; status: number } | { kind: 'redirect'; location: string } | { kind: 'hang' };

export type RecordedCall = { path: string; body: Record<string, unknown>; authorization: string | undefined; at: number };
export type RecordedAbort = { path: string; at: number };

export const SCRIPTED_MODEL = 'scripted-model-2026-11-01';
export const SCRIPTED_API_KEY = 'sk-scripted-test-key-never-logged';

export class ScriptedProvider {
  readonly calls: RecordedCall[] = [];
  readonly aborts: RecordedAbort[] = [];
  /** Played when the queue is empty. */
  fallback: ScriptedTurn = { kind: 'chat', chunks: ['Hello', ', ', 'world.'] };
  private readonly queue: ScriptedTurn[] = [];
  /** Files served under /files/ (an image answered by URL points here); their GETs are not provider calls. */
  readonly files = new Map<string, ServedFile>();
  readonly fileRequests: string[] = [];
  private readonly abortWaiters: { count: number; resolve: () => void }[] = [];
  private readonly callWaiters: { count: number; resolve: () => void }[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Queue turns, played in order, one per request. */
  script(...turns: ScriptedTurn[]): this {
    this.queue.push(...turns);
    return this;
  }

  /** The URL of a file this server serves (see `files`). */
  fileUrl(name: string): string {
    return `${this.url.replace(/\/v1$/, '')}/files/${name}`;
  }

  reset(): void {
    this.files.clear();
    this.fileRequests.length = 0;
    this.calls.length = 0;
    this.aborts.length = 0;
    this.queue.length = 0;
    this.fallback = { kind: 'chat', chunks: ['Hello', ', ', 'world.'] };
  }

  /** Resolves once `count` clients in all have gone away mid-request. */
  waitForAborts(count: number): Promise<void> {
    if (this.aborts.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.abortWaiters.push({ count, resolve }));
  }

  waitForCalls(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.callWaiters.push({ count, resolve }));
  }

  /** Intelligence settings pointing at this server (prices per million tokens / per image in microdollars). */
  settings(overrides: Partial<IntelligenceSettings> = {}): IntelligenceSettings {
    return {
      // Loopback is allow-listed so an image answered by URL can point at this server's /files/.
      provider: { baseUrl: this.url, apiKey: SCRIPTED_API_KEY, timeoutMs: 10_000, egress: { allowList: ['127.0.0.1'] } },
      text: { name: 'scripted-model', inputMicrodollarsPerMillionTokens: 1_000_000, outputMicrodollarsPerMillionTokens: 4_000_000, maxOutputTokens: 1_000 },
      image: { name: 'scripted-image', microdollarsPerImage: 40_000 },
      timing: { reservationTtlMs: 60_000, completionDeadlineMs: 70_000 },
      ...overrides,
    };
  }

  intelligence(overrides: Partial<IntelligenceSettings> = {}): Intelligence {
    return createIntelligence(this.settings(overrides));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path.startsWith('/files/')) return this.serveFile(path.slice('/files/'.length), res);
    const raw = await readBody(req);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // recorded as an empty body
    }
    this.calls.push({ path, body, authorization: req.headers.authorization, at: performance.now() });
    for (const w of this.callWaiters.filter((w) => this.calls.length >= w.count)) {
      this.callWaiters.splice(this.callWaiters.indexOf(w), 1);
      w.resolve();
    }
    // A client gone before the answer ended.
    res.on('close', () => {
      if (!res.writableFinished) {
        this.aborts.push({ path, at: performance.now() });
        for (const w of this.abortWaiters.filter((w) => this.aborts.length >= w.count)) {
          this.abortWaiters.splice(this.abortWaiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    const turn = this.queue.shift() ?? this.fallback;
    if ('holdUntil' in turn && turn.holdUntil) await turn.holdUntil;
    if (res.destroyed) return;

    switch (turn.kind) {
      case 'hang':
        return;
      case 'error': {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (turn.retryAfter) headers['retry-after'] = turn.retryAfter;
        res.writeHead(turn.status, headers);
        res.end(JSON.stringify({ error: { message: `scripted ${turn.status}`, type: 'scripted_error', param: null, code: null } }));
        return;
      }
      case 'image-url': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ created: 1_790_000_000, data: [{ url: turn.url, revised_prompt: 'scripted' }] }));
        return;
      }
      case 'image': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ created: 1_790_000_000, data: [{ b64_json: turn.bytes.toString('base64') }], usage: turn.usage ?? { input_tokens: 50, output_tokens: 4160, total_tokens: 4210 } }));
        return;
      }
      default:
        break;
    }
    if (path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'unknown path', type: 'invalid_request_error' } }));
      return;
    }
    const model = (turn.kind === 'chat' && turn.model) || SCRIPTED_MODEL;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (chunk: unknown) => !res.destroyed && res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      id: 'chatcmpl-scripted',
      object: 'chat.completion.chunk',
      created: 1_790_000_000,
      model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    send(chunk({ role: 'assistant', content: '' }, null));
    const delay = turn.kind === 'chat' ? (turn.chunkDelayMs ?? 0) : 0;
    for (const [index, piece] of turn.chunks.entries()) {
      if (delay > 0) await sleep(delay);
      if (turn.kind === 'chat' && turn.beforeChunk) await turn.beforeChunk(index);
      if (res.destroyed) return;
      send(chunk({ content: piece }, null));
    }
    if (turn.kind === 'stall') return; // silence until the client leaves
    if (turn.kind === 'drop') {
      // Let what was written reach the client first: the cut comes after acceptance.
      await sleep(50);
      res.socket?.destroy();
      return;
    }
    send(chunk({}, turn.finishReason ?? 'stop'));
    const streamOptions = body['stream_options'] as { include_usage?: boolean } | undefined;
    const usage = turn.usage === undefined ? { prompt_tokens: promptTokens(body), completion_tokens: turn.chunks.length } : turn.usage;
    if (streamOptions?.include_usage && usage) {
      send({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1_790_000_000, model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
    }
    res.end('data: [DONE]\n\n');
  }

  private serveFile(name: string, res: ServerResponse): void {
    this.fileRequests.push(name);
    const file = this.files.get(name) ?? { kind: 'status', status: 404 };
    if (file.kind === 'hang') return;
    if (file.kind === 'status') return void res.writeHead(file.status).end();
    if (file.kind === 'redirect') return void res.writeHead(302, { location: file.location }).end();
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.bytes.length }).end(file.bytes);
  }
}

/** A stand-in count of input tokens: words of the messages (always below the service's byte bound). */
function promptTokens(body: Record<string, unknown>): number {
  const messages = (body['messages'] as { content?: string }[] | undefined) ?? [];
  return messages.reduce((n, m) => n + (m.content?.split(/\s+/).length ?? 0), 0);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A provider that nothing listens on: configured, but every call fails to connect. */
export function unreachableIntelligence(): Intelligence {
  const provider = new ScriptedProvider();
  provider.url = 'http://127.0.0.1:9/v1';
  return provider.intelligence();
}

/** A 1×1 PNG, a tiny JPEG header and a WebP (VP8L) header: real signatures for the image checks. */
export const tinyImages = {
  png: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
  webp: Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'),
  jpeg: Buffer.from(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
    'base64',
  ),
};

/**
 * The environment that points an API process (api/main.ts) at a scripted provider, priced as the
 * tests price it: 1 µ$ per input token, 4 per output token.
 */
export function scriptedProviderEnv(provider: ScriptedProvider): Record<string, string> {
  return {
    INTELLIGENCE_PROVIDER_BASE_URL: provider.url,
    INTELLIGENCE_PROVIDER_API_KEY: SCRIPTED_API_KEY,
    INTELLIGENCE_TEXT_MODEL: 'scripted-model',
    INTELLIGENCE_TEXT_INPUT_MICRODOLLARS_PER_MTOK: '1000000',
    INTELLIGENCE_TEXT_OUTPUT_MICRODOLLARS_PER_MTOK: '4000000',
    INTELLIGENCE_TEXT_MAX_OUTPUT_TOKENS: '1000',
  };
}
