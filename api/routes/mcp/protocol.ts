// MCP over one POST endpoint, for two eras of clients:
// - stateless 2026-07-28 requests carry their version in MCP-Protocol-Version and/or
//   `params._meta["io.modelcontextprotocol/protocolVersion"]`, plus Mcp-Method / Mcp-Name;
// - legacy clients (initialize → notifications/initialized → requests, or `_meta` 2024-11-05).
// Headers that are present must agree with the body in both eras (classify). No session is ever
// minted. JSON-RPC error codes are listed in docs/mcp.md.
import type { FastifyRequest } from 'fastify';
import { AppError, errorCatalog, isAppError } from '../../../domain/errors.ts';
import type { ErrorPointer } from '../../../domain/errors.ts';
import { assertSafeJson, parseJsonText } from '../../edge.ts';
import { headerValue } from '../shared/headers.ts';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2024-11-05';
/**
 * The revisions negotiated by an `initialize` handshake, newest first: what current clients ask for
 * (2025-11-25: VS Code, Claude Code, the TypeScript SDKs; 2025-06-18; 2025-03-26) and 2024-11-05.
 */
export const HANDSHAKE_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', LEGACY_VERSION] as const;
/** Every revision served, newest first. */
export const SERVED_VERSIONS = [MODERN_VERSION, ...HANDSHAKE_VERSIONS] as const;
export type Revision = (typeof SERVED_VERSIONS)[number];
/**
 * `server/discover`'s protocolVersions: the spec's list (2026-07-28, 2024-11-05) first, unchanged,
 * then the other revisions served, newest first.
 */
export const DISCOVER_PROTOCOL_VERSIONS = [MODERN_VERSION, LEGACY_VERSION, ...HANDSHAKE_VERSIONS.filter((v) => v !== LEGACY_VERSION)] as const;
/**
 * The revision of a request that names none: the transport spec lets a server that serves clients
 * older than 2025-06-18 (which send no MCP-Protocol-Version) take it as 2025-03-26.
 */
export const UNNAMED_REQUEST_VERSION = '2025-03-26';

export const isServedVersion = (value: unknown): value is Revision => typeof value === 'string' && (SERVED_VERSIONS as readonly string[]).includes(value);

/**
 * What a revision's results may carry beyond the 2024-11-05 shape. Fields a revision does not define
 * (title, annotations, outputSchema, structuredContent) are additive and ignored by its clients, so
 * they are always sent; a content block of a type the revision does not define is not (a client
 * validating the content union would refuse the whole result), nor is anything newer that changes
 * a shape.
 */
export type RevisionFeatures = {
  /** `resource_link` content blocks and `resources` (templates, read, list) with titles: 2025-06-18. */
  resourceLinks: boolean;
  /** `description` of the server's Implementation (serverInfo): 2025-11-25. */
  implementationDescription: boolean;
};

export function featuresOf(revision: Revision): RevisionFeatures {
  const atLeast = (first: Revision) => revision >= first; // revisions are ISO dates
  return { resourceLinks: atLeast('2025-06-18'), implementationDescription: atLeast('2025-11-25') };
}
export const SERVER_INFO = { name: 'hosted-notes-mcp', title: 'Hosted Notes Platform', version: '1.0.0' } as const;
/** serverInfo.description, from 2025-11-25 on. */
export const SERVER_DESCRIPTION = 'Hosted Markdown vaults: search, read and write notes of the vaults you mapped, with revisions and provenance.';
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
/** How long a client may cache discover and tools/list results (they only change with a deploy). */
export const CACHE_TTL_MS = 300_000;

export const rpcCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Resource not found before 2026-07-28 (which uses -32602). */
  resourceNotFound: -32002,
  headerMismatch: -32020,
  unsupportedProtocolVersion: -32022,
  // Server-defined (-32000..-32099): the HTTP edge's own refusals, with the REST `code` in data.
  unauthorized: -32001,
  forbidden: -32003,
  rateLimited: -32029,
} as const;

export type RpcId = string | number | null;

export class RpcError extends Error {
  readonly rpcCode: number;
  readonly httpStatus: number;
  readonly data: Record<string, unknown> | undefined;
  constructor(rpcCode: number, message: string, options: { httpStatus?: number; data?: Record<string, unknown> } = {}) {
    super(message);
    this.rpcCode = rpcCode;
    this.httpStatus = options.httpStatus ?? 200;
    this.data = options.data;
  }
}

export type JsonRpcRequest = { jsonrpc: '2.0'; id?: RpcId; method: string; params?: Record<string, unknown> };

/** Messages in one JSON-RPC batch, at most. */
export const MAX_BATCH_MESSAGES = 50;

/**
 * Whether a body that is an array is a batch to answer: 2025-03-26 requires receiving batches, and a
 * request naming no version is taken as 2025-03-26; 2025-06-18 removed them, and 2024-11-05 and
 * 2026-07-28 have none. The routing headers of 2026-07-28 cannot describe several messages.
 */
export function acceptsBatch(headers: MessageHeaders): boolean {
  return (headers.protocolVersion === undefined || headers.protocolVersion === UNNAMED_REQUEST_VERSION) && headers.method === undefined && headers.name === undefined;
}

/** Validates the JSON-RPC envelope of one message (a batch reaching here is refused: see acceptsBatch). */
export function parseEnvelope(body: unknown): JsonRpcRequest {
  if (Array.isArray(body)) throw new RpcError(rpcCodes.invalidRequest, 'JSON-RPC batches are served only to 2025-03-26 requests (removed in 2025-06-18).', { httpStatus: 400 });
  if (!body || typeof body !== 'object') throw new RpcError(rpcCodes.invalidRequest, 'The body must be a JSON-RPC 2.0 object.', { httpStatus: 400 });
  const message = body as Record<string, unknown>;
  if (message['jsonrpc'] !== '2.0') throw new RpcError(rpcCodes.invalidRequest, 'jsonrpc must be "2.0".', { httpStatus: 400 });
  if (typeof message['method'] !== 'string' || message['method'] === '') throw new RpcError(rpcCodes.invalidRequest, 'method must be a non-empty string.', { httpStatus: 400 });
  const id = message['id'];
  // MCP request ids are never null; a message without an id is a notification.
  if (id !== undefined && typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) {
    throw new RpcError(rpcCodes.invalidRequest, 'id must be a string or an integer (MCP ids are never null).', { httpStatus: 400 });
  }
  const params = message['params'];
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    throw new RpcError(rpcCodes.invalidRequest, 'params must be an object.', { httpStatus: 400 });
  }
  return message as JsonRpcRequest;
}

/** `=?base64?…?=` header values carry UTF-8 that HTTP headers cannot. */
export function decodeHeaderValue(raw: string): string {
  const match = /^=\?base64\?([A-Za-z0-9+/=_-]*)\?=$/.exec(raw.trim());
  if (!match) return raw.trim();
  return Buffer.from(match[1]!, 'base64').toString('utf8');
}

export type Era = 'modern' | 'legacy';

export type MessageHeaders = { protocolVersion: string | undefined; method: string | undefined; name: string | undefined };

/** The routing headers of a request, decoded: what `classify` holds against the body. */
export function messageHeaders(request: Pick<FastifyRequest, 'headers'>): MessageHeaders {
  const read = (name: string) => {
    const raw = headerValue(request, name);
    return raw === undefined ? undefined : decodeHeaderValue(raw);
  };
  return { protocolVersion: read('mcp-protocol-version'), method: read('mcp-method'), name: read('mcp-name') };
}

/** The body parameter each name-bearing method mirrors in Mcp-Name. */
const NAME_PARAMS: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const headerMismatch = (message: string, data: Record<string, unknown>) => new RpcError(rpcCodes.headerMismatch, message, { httpStatus: 400, data });

/** The era of a request and the revision its answer is shaped for. */
export type Classified = { era: Era; revision: Revision };

/**
 * Header/body agreement, the era of a message and its revision.
 * 1. Every header that is present must agree with the body, in every era and for notifications
 *    too: Mcp-Method with `method`, Mcp-Name with the named parameter (`params.name` of tools/call,
 *    `params.uri` of resources/read; a method that names nothing cannot carry one), MCP-Protocol-Version
 *    with the `_meta` version when both are sent. Any contradiction is -32020.
 * 2. The version is the body's `_meta` version, else the MCP-Protocol-Version header. One we do not
 *    serve is -32022 (an `initialize` negotiates in its body, so its header is not judged).
 * 3. 2026-07-28 is the modern era: a request must then carry MCP-Protocol-Version, Mcp-Method and,
 *    for tools/call and resources/read, Mcp-Name (else -32020). Every other revision, or no version at
 *    all (taken as 2025-03-26), is the legacy era; a request with Mcp-Method or Mcp-Name but no
 *    version anywhere is -32020 (those headers exist only in 2026-07-28, whose requests carry their
 *    version).
 */
export function classify(message: JsonRpcRequest, headers: MessageHeaders): Classified {
  const meta = message.params?.['_meta'];
  const bodyVersion = meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] : undefined;
  const isRequest = message.id !== undefined;

  if (headers.method !== undefined && headers.method !== message.method) {
    throw headerMismatch(`Mcp-Method ${JSON.stringify(headers.method)} disagrees with method ${JSON.stringify(message.method)}.`, {
      header: 'Mcp-Method',
      headerValue: headers.method,
      bodyValue: message.method,
    });
  }
  if (headers.name !== undefined) {
    const param = NAME_PARAMS[message.method];
    const named = param === undefined ? undefined : message.params?.[param];
    if (headers.name !== named) {
      throw headerMismatch(
        named === undefined
          ? `Mcp-Name ${JSON.stringify(headers.name)} names something, but the body of ${JSON.stringify(message.method)} names nothing.`
          : `Mcp-Name ${JSON.stringify(headers.name)} disagrees with params.${param} ${JSON.stringify(named)}.`,
        { header: 'Mcp-Name', headerValue: headers.name, bodyValue: named ?? null },
      );
    }
  }
  if (bodyVersion !== undefined && headers.protocolVersion !== undefined && headers.protocolVersion !== bodyVersion) {
    throw headerMismatch(`MCP-Protocol-Version ${headers.protocolVersion} disagrees with _meta version ${JSON.stringify(bodyVersion)}.`, {
      header: 'MCP-Protocol-Version',
      headerValue: headers.protocolVersion,
      bodyValue: bodyVersion,
    });
  }

  const version = bodyVersion ?? (message.method === 'initialize' ? undefined : headers.protocolVersion);
  if (version === undefined) {
    if (headers.method !== undefined || headers.name !== undefined) {
      throw headerMismatch(`Mcp-Method and Mcp-Name are ${MODERN_VERSION} headers, but the request carries no protocol version (MCP-Protocol-Version or _meta).`, {
        header: 'MCP-Protocol-Version',
        headerValue: null,
        bodyValue: null,
      });
    }
    return { era: 'legacy', revision: UNNAMED_REQUEST_VERSION };
  }
  if (!isServedVersion(version)) {
    throw new RpcError(rpcCodes.unsupportedProtocolVersion, `Unsupported protocol version ${JSON.stringify(version)}.`, {
      httpStatus: 400,
      data: { supported: [...SERVED_VERSIONS], supportedVersions: [...SERVED_VERSIONS], requested: version },
    });
  }
  if (version !== MODERN_VERSION) return { era: 'legacy', revision: version };
  const modern: Classified = { era: 'modern', revision: MODERN_VERSION };
  if (!isRequest) return modern; // notifications need no routing headers (but must not contradict the body)
  const missing = (header: string) => headerMismatch(`Missing ${header} header (required on ${MODERN_VERSION} requests).`, { header, headerValue: null });
  if (headers.protocolVersion === undefined) throw missing('MCP-Protocol-Version');
  if (headers.method === undefined) throw missing('Mcp-Method');
  if (NAME_PARAMS[message.method] !== undefined && headers.name === undefined) throw missing('Mcp-Name');
  return modern;
}

/**
 * Maps an AppError onto a JSON-RPC error with the REST `code` and status in `data` and the REST HTTP
 * status: 401 → -32001, 403 → -32003, 429 → -32029, malformed JSON → -32700, any other client error
 * (4xx: 413 payload_too_large, 415 unsupported_media_type, 400 invalid_character, json_too_deep, …)
 * → -32600 Invalid Request. Only a server failure (5xx) is -32603 Internal error.
 */
export function rpcErrorFromAppError(error: AppError, requestId: string): RpcError {
  const rpcCode =
    error.status === 401
      ? rpcCodes.unauthorized
      : error.status === 403
        ? rpcCodes.forbidden
        : error.status === 429
          ? rpcCodes.rateLimited
          : error.code === 'malformed_json'
            ? rpcCodes.parseError
            : error.status < 500
              ? rpcCodes.invalidRequest
              : rpcCodes.internalError;
  return new RpcError(rpcCode, error.detail ?? errorCatalog[error.code].title, {
    httpStatus: error.status,
    data: { code: error.code, status: error.status, requestId, ...error.extensions },
  });
}

/** The outcome of reading a request body: a refusal, or a value (with a refusal of its tool arguments, if any). */
export type ReadBody = { value: unknown; argumentRefusal: AppError | undefined } | { refusal: RpcError; id: RpcId };

const ARGUMENTS_POINTER = '/params/arguments';

/**
 * Parses the body with the edge's one JSON parser (parseJsonText: U+0000 anywhere, nesting deeper
 * than MAX_JSON_DEPTH, prototype keys), so nothing refused there reaches Postgres or recursive code.
 * Refusals are JSON-RPC errors with HTTP 400 and the edge's code in `data.code`: malformed JSON is
 * -32700; too deep, a NUL outside tool arguments or a prototype key is -32600 (-32602 when the NUL
 * is in params). A NUL inside `params.arguments` of tools/call is the tool's invalid argument
 * instead (`argumentRefusal`, pointers rewritten to /arguments/…): the call is answered, as for any
 * invalid argument, with an isError result carrying `invalid_character`.
 */
export function readBody(text: string, requestId: string): ReadBody {
  try {
    return { value: parseJsonText(text, ''), argumentRefusal: undefined };
  } catch (error) {
    if (!isAppError(error)) throw error;
    if (error.code === 'malformed_json') {
      return { refusal: new RpcError(rpcCodes.parseError, 'Parse error: the body is not valid JSON.', { httpStatus: 400, data: { code: error.code, status: 400, requestId } }), id: null };
    }
    // The text is valid JSON (only the walk refused it): the id can still be echoed.
    const value: unknown = JSON.parse(text);
    const message = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    const rawId = message?.['id'];
    const id: RpcId = (typeof rawId === 'string' && !rawId.includes('\u0000')) || typeof rawId === 'number' ? rawId : null;
    let refusal = error;
    if (error.code === 'invalid_character' && message?.['method'] === 'tools/call') {
      // Judge the envelope without the arguments, then the arguments at their depth in the body.
      const params = message['params'];
      const args = params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>)['arguments'] : undefined;
      try {
        assertSafeJson({ ...message, params: { ...(params as Record<string, unknown>), arguments: null } }, '');
        assertSafeJson({ params: { arguments: args } }, '');
      } catch (again) {
        if (!isAppError(again)) throw again;
        if (again.code === 'invalid_character' && pointerOf(again).startsWith(ARGUMENTS_POINTER)) {
          return { value, argumentRefusal: argumentsRefusal(again) };
        }
        refusal = again;
      }
    }
    const rpcError = rpcErrorFromAppError(refusal, requestId);
    const inParams = refusal.code === 'invalid_character' && pointerOf(refusal).startsWith('/params');
    return { refusal: inParams ? new RpcError(rpcCodes.invalidParams, rpcError.message, { httpStatus: 400, data: rpcError.data }) : rpcError, id };
  }
}

const pointerOf = (error: AppError) => (error.extensions['errors'] as ErrorPointer[] | undefined)?.[0]?.pointer ?? '';

/** The same refusal, pointing into the tool's arguments the way its other argument errors do. */
function argumentsRefusal(error: AppError): AppError {
  const errors = ((error.extensions['errors'] as ErrorPointer[] | undefined) ?? []).map((e) => ({ ...e, pointer: e.pointer.replace(ARGUMENTS_POINTER, '/arguments') }));
  const first = errors[0]?.pointer ?? '/arguments';
  return new AppError('invalid_character', `${first}: strings may not contain U+0000.`, { extensions: { ...error.extensions, errors } });
}

/** A tool's own failure: an MCP result with isError and the same stable code REST would use. */
export function toolErrorResult(error: AppError, requestId: string) {
  const problem = {
    code: error.code,
    status: error.status,
    title: errorCatalog[error.code].title,
    ...(error.detail ? { detail: error.detail } : {}),
    requestId,
    ...error.extensions,
  };
  const pointers = (error.extensions['errors'] as ErrorPointer[] | undefined)?.map((e) => `${e.pointer}: ${e.message}`) ?? [];
  return {
    isError: true,
    content: [{ type: 'text' as const, text: [`${error.code}: ${error.detail ?? problem.title}`, ...pointers].join('\n') }],
    structuredContent: problem,
  };
}
