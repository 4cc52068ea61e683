// The hosted adapter: the runtime's operations over HTTP to {baseUrl}/api/product/v1, with an
// installation's service credential. It pins the runtime version, sends an Idempotency-Key on every
// applied write and metered request (the caller's, or a fresh one), parses every answer with the same schemas the
// service serializes with, and turns problem+json refusals into RuntimeError with the stable code.
// It needs only fetch, Web Crypto and TextDecoder, so it runs in browsers and workers as in Node.
import type { z } from 'zod';
import { envelopeSchema, RUNTIME_VERSION, RUNTIME_VERSION_HEADER, unavailable } from './envelope.ts';
import type { PublishNoteInput } from './dto/core.ts';
import type { MemoryCandidateInput } from './dto/scopes.ts';
import { generationStreamEventSchema } from './dto/intelligence.ts';
import type { GenerateInput, GenerationStreamEvent } from './dto/intelligence.ts';
import { audioMediaSchema, MEDIA_HEADERS } from './dto/media.ts';
import type { AudioUploadInput } from './dto/media.ts';
import { NDJSON_CONTENT_TYPE, problemOf, readNdjson, RuntimeStreamError } from './ndjson.ts';
import { dtoSchemas, parseEnvelope, RuntimeError, RuntimeResponseError, RuntimeUnavailableError, runtimeByteOperations, runtimeOperations } from './operations.ts';

/** How many times in a row streamGeneration reads a broken connection again before it gives up. */
const STREAM_RECONNECTS = 5;
import type {
  AudioBytes,
  BodyOperationName,
  IdempotencyRule,
  CallOptions,
  CreateClassroomAssignmentInput,
  CreateDriveDocumentInput,
  DriveImportInput,
  GenerationStream,
  KeyedWriteOptions,
  PageInput,
  ProviderPageInput,
  ReadAudioOptions,
  RuntimeAdapter,
  RuntimeEnvelope,
  RuntimeKind,
  RuntimeOperationName,
  UpdateDriveDocumentInput,
  UsageReceiptPageInput,
  WriteOptions,
} from './operations.ts';

export { readNdjson };

export const RUNTIME_MOUNT = '/api/product/v1';

export type HostedRuntimeOptions = {
  /** The service's base address ({base_url}); the SDK adds /api/product/v1. */
  baseUrl: string | URL;
  /** The installation's service credential (`hnp_svc_…`). Sent only in the Authorization header. */
  credential: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof fetch;
  /** Makes the Idempotency-Key of applied writes the caller does not key themselves (default: a random UUID). */
  idempotencyKey?: () => string;
};

export type HostedRuntime = RuntimeAdapter & {
  readonly adapter: 'hosted';
  /** The runtime's mount this adapter calls, e.g. https://notes.example.com/api/product/v1. */
  readonly endpoint: string;
  /**
   * A raw request to the runtime with the adapter's headers (credential, version, Accept), for
   * operations this SDK version does not wrap yet; e.g. streaming: `readNdjson(await runtime.fetch(…, { accept: 'application/x-ndjson' }))`.
   */
  fetch(path: string, init?: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; body?: unknown; accept?: string; idempotencyKey?: string; signal?: AbortSignal }): Promise<Response>;
};

/** A request body sent as it is (an upload's audio), with the content type it declares. */
type RawBody = { bytes: Uint8Array; contentType: string };

type Call = {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  raw?: RawBody;
  headers?: Record<string, string>;
  /** A key carried by the input itself (uploadAudio's); otherwise the table's rule decides (keyFor). */
  idempotencyKey?: string | undefined;
};

type SendInit = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
  raw?: RawBody | undefined;
  headers?: Record<string, string> | undefined;
  accept: string;
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
};

/** The media types readAudio accepts an answer in: the ones an upload is recognized as. */
const audioMediaTypes: ReadonlySet<string> = new Set(audioMediaSchema.shape.mediaType.options);
const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+)$/;

/** A non-negative whole number of bytes, or a TypeError naming `what` (a product's mistake, not the service's refusal). */
function byteOffset(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${what} must be a whole number of bytes, 0 or more`);
  return value;
}

/**
 * X-Media-Duration-Seconds: the wire format has at most 3 decimals, so the number goes out rounded
 * to the millisecond (0.1 + 0.2 is sent as 0.3); the service judges the value.
 */
function durationHeader(seconds: number): string {
  return String(Math.round(seconds * 1000) / 1000);
}

/** The path of an operation under the mount, its `:param`s encoded. */
function routePath(name: string, template: string, params: Record<string, string> | undefined): string {
  return template.replace(/:(\w+)/g, (_, param: string) => {
    const value = params?.[param];
    if (value === undefined || value === '') throw new TypeError(`${name} needs ${param}`);
    return encodeURIComponent(value);
  });
}

/**
 * The key of a create that reaches a provider (a Drive file, a Classroom assignment): the caller's
 * own, required, never generated, since only a retry with the first attempt's key is recognized.
 */
function callerKey(name: string, options: KeyedWriteOptions | undefined): string {
  if (typeof options?.idempotencyKey !== 'string') throw new TypeError(`${name} needs options.idempotencyKey: retry a create with the key it was first sent with`);
  return options.idempotencyKey;
}

function endpointOf(baseUrl: string | URL): string {
  const url = new URL(baseUrl.toString());
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`baseUrl must be an http(s) URL, not ${url.protocol}`);
  if (url.search || url.hash) throw new TypeError('baseUrl must not carry a query or a fragment');
  const base = url.toString().replace(/\/+$/, '');
  return base.endsWith(RUNTIME_MOUNT) ? base : `${base}${RUNTIME_MOUNT}`;
}

export function createHostedRuntime(options: HostedRuntimeOptions): HostedRuntime {
  const endpoint = endpointOf(options.baseUrl);
  const credential = options.credential.trim();
  if (!credential || /\s/.test(credential)) throw new TypeError('credential must be the service credential (hnp_svc_…)');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const envelopeSchemas = new Map<RuntimeKind, z.ZodType>();
  const schemaOf = (kind: RuntimeKind) => {
    let schema = envelopeSchemas.get(kind);
    if (!schema) envelopeSchemas.set(kind, (schema = envelopeSchema(kind, dtoSchemas[kind])));
    return schema;
  };

  const send = (path: string, init: SendInit) => {
    const headers: Record<string, string> = {
      ...init.headers,
      authorization: `Bearer ${credential}`,
      [RUNTIME_VERSION_HEADER]: RUNTIME_VERSION,
      accept: init.accept,
    };
    let body: RequestInit['body'];
    if (init.raw !== undefined) {
      headers['content-type'] = init.raw.contentType;
      body = init.raw.bytes;
    } else if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    if (init.idempotencyKey !== undefined) headers['idempotency-key'] = init.idempotencyKey;
    return fetchImpl(`${endpoint}${path}`, {
      method: init.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      // The runtime never redirects; following one could carry the credential elsewhere.
      redirect: 'error',
      ...(init.signal ? { signal: init.signal } : {}),
    });
  };

  /**
   * The Idempotency-Key an operation is sent with, by the table's rule: none; the caller's own only
   * (`caller`: a create that reaches a provider is recognized on retry only by its first key); or the
   * caller's or a fresh one, always (`required`) or for an apply only (`apply`: a preview is keyless).
   */
  function keyFor(name: RuntimeOperationName, body: unknown, options: WriteOptions | undefined): string | undefined {
    const rule: IdempotencyRule = runtimeOperations[name].idempotency;
    if (rule === 'none') return undefined;
    if (rule === 'caller') return callerKey(name, options as KeyedWriteOptions | undefined);
    if (rule === 'apply' && (body as { mode?: unknown } | undefined)?.mode !== 'apply') return undefined;
    return options?.idempotencyKey ?? newKey();
  }

  async function call<N extends RuntimeOperationName>(name: N, input: Call = {}, options?: WriteOptions): Promise<RuntimeEnvelope<(typeof runtimeOperations)[N]['kind']>> {
    const op = runtimeOperations[name];
    let path = routePath(name, op.path, input.params);
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(input.query ?? {})) if (value !== undefined) query.set(key, String(value));
    if ([...query].length > 0) path += `?${query.toString()}`;
    const idempotencyKey = input.idempotencyKey ?? keyFor(name, input.body, options);
    const response = await send(path, {
      method: op.method,
      body: input.body,
      raw: input.raw,
      headers: input.headers,
      accept: 'application/json',
      idempotencyKey,
      signal: options?.signal,
    });
    if (!response.ok) throw await problemOf(response, idempotencyKey);
    checkVersion(response);
    return envelopeOf(name, response);
  }

  // The operations called with their body alone, derived from the table: a new one needs no code here.
  const bodyCalls = Object.fromEntries(
    (Object.keys(runtimeOperations) as RuntimeOperationName[])
      .filter((name) => runtimeOperations[name].method === 'POST' && !runtimeOperations[name].path.includes(':') && name !== 'uploadAudio')
      .map((name) => [name, (input: unknown, o?: WriteOptions) => call(name, { body: input }, o)]),
  ) as unknown as Pick<RuntimeAdapter, Exclude<BodyOperationName, 'uploadAudio'>>;

  const checkVersion = (response: Response) => {
    const answered = response.headers.get(RUNTIME_VERSION_HEADER);
    if (answered !== null && answered !== RUNTIME_VERSION) {
      throw new RuntimeResponseError(`Runtime version ${answered} answered; this SDK speaks ${RUNTIME_VERSION}.`, { status: response.status });
    }
  };

  async function envelopeOf<N extends RuntimeOperationName>(name: N, response: Response): Promise<RuntimeEnvelope<(typeof runtimeOperations)[N]['kind']>> {
    const kind = runtimeOperations[name].kind;
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new RuntimeResponseError(`${name} answered HTTP ${response.status} with a body that is not JSON.`, { status: response.status, cause });
    }
    return parseEnvelope(kind, json, schemaOf(kind), response.status);
  }

  /**
   * The NDJSON form of generate. Sent on the first step of the iteration, with the key fixed now so
   * the caller holds it before anything can fail. Refusals are problem+json (RuntimeError with the
   * key); a service without a model provider answers the unavailable JSON envelope even here, which
   * becomes RuntimeUnavailableError rather than an empty stream a product could mistake for silence.
   */
  function generateStream(input: GenerateInput, o?: WriteOptions): GenerationStream {
    const idempotencyKey = o?.idempotencyKey ?? newKey();
    async function* events(): AsyncGenerator<GenerationStreamEvent, void, undefined> {
      const response = await send(runtimeOperations.generate.path, { method: 'POST', body: input, accept: NDJSON_CONTENT_TYPE, idempotencyKey, signal: o?.signal });
      if (!response.ok) throw await problemOf(response, idempotencyKey);
      checkVersion(response);
      const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (mediaType === 'application/json') {
        const answer = await envelopeOf('generate', response);
        if (answer.status === 'unavailable' && answer.missing.length > 0) throw new RuntimeUnavailableError(answer, { idempotencyKey });
        throw new RuntimeResponseError(`generate answered a ${answer.status} JSON envelope to a stream request.`, { status: response.status });
      }
      // readNdjson checks the content type and the event order; returning early cancels the body.
      yield* readNdjson(response, { schema: generationStreamEventSchema });
    }
    return Object.assign(events(), { idempotencyKey });
  }

  /** generate in background mode: the 202 and its generation (see RuntimeAdapter.startGeneration). */
  async function startGeneration(input: GenerateInput, o?: WriteOptions): Promise<RuntimeEnvelope<'service.intelligence-generation'>> {
    const idempotencyKey = o?.idempotencyKey ?? newKey();
    const response = await send(runtimeOperations.generate.path, {
      method: 'POST',
      body: input,
      headers: { prefer: 'respond-async' },
      accept: 'application/json',
      idempotencyKey,
      signal: o?.signal,
    });
    if (!response.ok) throw await problemOf(response, idempotencyKey);
    checkVersion(response);
    if (response.status !== 202) {
      // The preference not applied: the unavailable envelope, or a key first answered without it (replayed as it was).
      const answer = await envelopeOf('generate', response);
      const [reason, ...more] = answer.missing;
      if (answer.status === 'unavailable' && reason) return unavailable('service.intelligence-generation', [reason, ...more]);
      throw new RuntimeResponseError(`generate answered HTTP ${response.status} without starting a background generation (was this key first sent without it?).`, { status: response.status });
    }
    return envelopeOf('getGeneration', response);
  }

  /**
   * streamGeneration: the NDJSON events of a generation after `after`. 204 (nothing follows `after`
   * in an ended generation) ends the iteration with no event; refusals are problem+json. A connection
   * that breaks before done is read again from the last seq seen (a reader's break cancels nothing),
   * at most STREAM_RECONNECTS times in a row with backoff; a log that ends without done (its writer
   * stopped) is RuntimeStreamError.
   */
  async function* streamGeneration(generationId: string, o: CallOptions & { after?: number } = {}): AsyncGenerator<GenerationStreamEvent, void, undefined> {
    let after = o.after;
    let broken = false;
    for (let retry = 0; ; retry += 1) {
      let path = routePath('streamGeneration', runtimeByteOperations.streamGeneration.path, { generationId });
      if (after !== undefined) path += `?after=${encodeURIComponent(String(after))}`;
      try {
        const response = await send(path, { method: 'GET', accept: NDJSON_CONTENT_TYPE, signal: o.signal });
        if (response.status === 204) {
          await response.body?.cancel().catch(() => undefined);
          if (broken) throw new RuntimeStreamError("The generation's log ended without done (its writer stopped); getGeneration says how it ended.");
          return;
        }
        if (!response.ok) throw await problemOf(response);
        checkVersion(response);
        for await (const event of readNdjson(response, { schema: generationStreamEventSchema, resumed: true })) {
          if (event.seq !== undefined) after = event.seq;
          retry = 0;
          yield event;
        }
        return;
      } catch (error) {
        // A refusal, a malformed answer or the caller's abort is final; a broken connection is read again.
        const final = error instanceof RuntimeError || (error instanceof RuntimeStreamError && error.line !== null) || o.signal?.aborted === true;
        if (final || retry >= STREAM_RECONNECTS) throw error;
        broken = true;
        await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** retry, 2_000)));
      }
    }
  }

  /** uploadAudio: the bytes as the body, the metadata in headers, keyed by the input's own key (never a generated one). */
  async function uploadAudio(input: AudioUploadInput, o?: CallOptions) {
    if (typeof input.idempotencyKey !== 'string') throw new TypeError('uploadAudio needs input.idempotencyKey: retry a recording with the key it was first sent with');
    // A header carries only Latin-1; the service's rule is visible ASCII, so anything else cannot be sent as it is.
    if (!/^[\x20-\x7e]*$/.test(input.reference)) throw new TypeError('reference must be visible ASCII (it travels in the X-Media-Reference header)');
    return call('uploadAudio', {
      raw: { bytes: input.bytes, contentType: input.contentType ?? 'application/octet-stream' },
      headers: { [MEDIA_HEADERS.reference]: input.reference, [MEDIA_HEADERS.declaredDuration]: durationHeader(input.declaredDurationSeconds) },
      // The table's rule is `caller`: the key travels in the input (the recording's own), never generated.
      idempotencyKey: input.idempotencyKey,
    }, o);
  }

  /**
   * readAudio: the bytes themselves, not an envelope. A refusal is problem+json like any other
   * (RuntimeError: media_not_found, range_not_satisfiable…); an answer whose status, type, ETag,
   * Content-Range or length is not what was asked for is RuntimeResponseError, never partial bytes.
   */
  async function readAudio(mediaId: string, o?: ReadAudioOptions): Promise<AudioBytes> {
    const op = runtimeByteOperations.readAudio;
    const headers: Record<string, string> = {};
    if (o?.range) {
      const start = byteOffset(o.range.start, 'range.start');
      const end = o.range.end === undefined ? '' : String(byteOffset(o.range.end, 'range.end'));
      if (end !== '' && Number(end) < start) throw new TypeError('range.end must not be before range.start');
      headers['range'] = `bytes=${start}-${end}`;
    }
    if (o?.ifNoneMatch !== undefined) headers['if-none-match'] = o.ifNoneMatch;
    const response = await send(routePath('readAudio', op.path, { mediaId }), {
      method: op.method,
      headers,
      accept: [...audioMediaTypes, 'application/problem+json'].join(', '),
      signal: o?.signal,
    });
    if (!response.ok && response.status !== 304) throw await problemOf(response);
    checkVersion(response);
    const etag = response.headers.get('etag');
    if (!etag) throw new RuntimeResponseError(`readAudio answered HTTP ${response.status} without an ETag.`, { status: response.status });
    if (response.status === 304) {
      await response.body?.cancel();
      return { status: 304, mediaType: null, etag, sizeBytes: null, range: null, bytes: new Uint8Array(0) };
    }
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new RuntimeResponseError(`readAudio answered HTTP ${response.status}; expected 200, 206 or 304.`, { status: response.status });
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!audioMediaTypes.has(mediaType)) {
      await response.body?.cancel();
      throw new RuntimeResponseError(`readAudio answered ${mediaType || 'no content type'}, not stored audio.`, { status: response.status });
    }
    let range: AudioBytes['range'] = null;
    if (response.status === 206) {
      const match = CONTENT_RANGE.exec(response.headers.get('content-range') ?? '');
      if (!match) {
        await response.body?.cancel();
        throw new RuntimeResponseError('readAudio answered 206 without a single-range Content-Range.', { status: 206 });
      }
      range = { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    const expected = range ? range.end - range.start + 1 : Number(response.headers.get('content-length') ?? bytes.byteLength);
    if (bytes.byteLength !== expected) {
      throw new RuntimeResponseError(`readAudio received ${bytes.byteLength} bytes of the ${expected} announced.`, { status: response.status });
    }
    return { status: response.status, mediaType, etag, sizeBytes: range ? range.size : bytes.byteLength, range, bytes };
  }

  const page = (input: PageInput | undefined) => ({ limit: input?.limit, cursor: input?.cursor });
  const providerPage = (input: ProviderPageInput | undefined) => ({ pageToken: input?.pageToken, pageSize: input?.pageSize });

  return {
    adapter: 'hosted',
    endpoint,
    fetch: (path, init = {}) => {
      if (!path.startsWith('/') || path.startsWith('//')) throw new TypeError('path must be a path under the runtime mount, starting with one /');
      return send(path, { method: init.method ?? 'GET', body: init.body, accept: init.accept ?? 'application/json', idempotencyKey: init.idempotencyKey, signal: init.signal });
    },
    ...bodyCalls,
    generateStream,
    uploadAudio,
    readAudio,
    getRuntimeContext: (o?: CallOptions) => call('getRuntimeContext', {}, o),
    getCapabilities: (o?: CallOptions) => call('getCapabilities', {}, o),
    getWorkspace: (o?: CallOptions) => call('getWorkspace', {}, o),
    getDomainComposition: (o?: CallOptions) => call('getDomainComposition', {}, o),
    listNotes: (vaultId: string, p?: PageInput, o?: CallOptions) => call('listNotes', { params: { vaultId }, query: page(p) }, o),
    readNote: (vaultId: string, path: string, o?: CallOptions) => call('readNote', { params: { vaultId }, query: { path } }, o),
    publishNote: (vaultId: string, input: PublishNoteInput, o?: WriteOptions) => call('publishNote', { params: { vaultId }, body: input }, o),
    listVaultBindings: (p?: { limit?: number }, o?: CallOptions) => call('listVaultBindings', { query: { limit: p?.limit } }, o),
    listAvailableScopes: (p?: PageInput, o?: CallOptions) => call('listAvailableScopes', { query: page(p) }, o),
    getScopeContext: (scopeId: string, o?: CallOptions) => call('getScopeContext', { params: { scopeId } }, o),
    getEffectiveScopePolicy: (scopeId: string, o?: CallOptions) => call('getEffectiveScopePolicy', { params: { scopeId } }, o),
    getScopeIntelligence: (scopeId: string, o?: CallOptions) => call('getScopeIntelligence', { params: { scopeId } }, o),
    getScopeMemory: (scopeId: string, p?: PageInput, o?: CallOptions) => call('getScopeMemory', { params: { scopeId }, query: page(p) }, o),
    createSharedMemoryCandidate: (scopeId: string, input: MemoryCandidateInput, o?: WriteOptions) => call('createSharedMemoryCandidate', { params: { scopeId }, body: input }, o),
    getMemoryCandidate: (scopeId: string, candidateId: string, o?: CallOptions) => call('getMemoryCandidate', { params: { scopeId, candidateId } }, o),
    listUsageReceipts: (p?: UsageReceiptPageInput, o?: CallOptions) => call('listUsageReceipts', { query: { ...page(p), installationId: p?.installationId } }, o),
    getUsageReceipt: (receiptId: string, o?: CallOptions) => call('getUsageReceipt', { params: { receiptId } }, o),
    getIntelligenceBudget: (o?: CallOptions) => call('getIntelligenceBudget', {}, o),
    getGeneration: (generationId: string, o?: CallOptions) => call('getGeneration', { params: { generationId } }, o),
    cancelGeneration: (generationId: string, o?: CallOptions) => call('cancelGeneration', { params: { generationId } }, o),
    streamGeneration,
    startGeneration,
    listAudio: (p?: PageInput, o?: CallOptions) => call('listAudio', { query: page(p) }, o),
    getAudioMetadata: (mediaId: string, o?: CallOptions) => call('getAudioMetadata', { params: { mediaId } }, o),
    deleteAudio: (mediaId: string, o?: CallOptions) => call('deleteAudio', { params: { mediaId } }, o),
    listConnections: (p?: PageInput, o?: CallOptions) => call('listConnections', { query: page(p) }, o),
    getConnection: (connectionId: string, o?: CallOptions) => call('getConnection', { params: { connectionId } }, o),
    revokeConnection: (connectionId: string, o?: CallOptions) => call('revokeConnection', { params: { connectionId } }, o),
    createDriveDocument: async (connectionId: string, input: CreateDriveDocumentInput, o: KeyedWriteOptions) => call('createDriveDocument', { params: { connectionId }, body: input }, o),
    getDriveDocument: (connectionId: string, fileId: string, o?: CallOptions) => call('getDriveDocument', { params: { connectionId, fileId } }, o),
    // Guarded by expectedVersion, not a key: a retry of an update that landed is a version conflict, never a second write.
    updateDriveDocument: (connectionId: string, fileId: string, input: UpdateDriveDocumentInput, o?: CallOptions) =>
      call('updateDriveDocument', { params: { connectionId, fileId }, body: input }, o),
    importDriveDocument: (vaultId: string, input: DriveImportInput, o?: WriteOptions) => call('importDriveDocument', { params: { vaultId }, body: input }, o),
    listClassroomCourses: (connectionId: string, p?: ProviderPageInput, o?: CallOptions) => call('listClassroomCourses', { params: { connectionId }, query: providerPage(p) }, o),
    listClassroomRoster: (connectionId: string, courseId: string, p?: ProviderPageInput, o?: CallOptions) =>
      call('listClassroomRoster', { params: { connectionId, courseId }, query: providerPage(p) }, o),
    createClassroomAssignment: async (connectionId: string, courseId: string, input: CreateClassroomAssignmentInput, o: KeyedWriteOptions) =>
      call('createClassroomAssignment', { params: { connectionId, courseId }, body: input }, o),
    listAssignmentAttachments: (connectionId: string, courseId: string, courseWorkId: string, p?: ProviderPageInput, o?: CallOptions) =>
      call('listAssignmentAttachments', { params: { connectionId, courseId, courseWorkId }, query: providerPage(p) }, o),
  };
}

export { NDJSON_CONTENT_TYPE };
