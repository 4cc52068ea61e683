// MCP over one POST endpoint, for two eras of clients:
// - stateless 2026-07-28 requests carry `params._meta["io.modelcontextprotocol/protocolVersion"]`
//   and the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers, which must agree with the body;
// - legacy clients (initialize → notifications/initialized → requests) send no Mcp-Method header.
// No session is ever minted. JSON-RPC error codes are listed in docs/mcp.md.
import { errorCatalog } from '../../../domain/errors.ts';
import type { AppError } from '../../../domain/errors.ts';
import type { ErrorPointer } from '../../../domain/errors.ts';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2024-11-05';
export const SUPPORTED_VERSIONS = [MODERN_VERSION, LEGACY_VERSION] as const;
export const SERVER_INFO = { name: 'hosted-notes-mcp', title: 'Hosted Notes Platform', version: '1.0.0' } as const;
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

/** Validates the JSON-RPC envelope (batches are not supported since MCP 2025-06-18). */
export function parseEnvelope(body: unknown): JsonRpcRequest {
  if (Array.isArray(body)) throw new RpcError(rpcCodes.invalidRequest, 'JSON-RPC batches are not supported.', { httpStatus: 400 });
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

/**
 * Body-primary classification: a request whose `_meta` names a protocol version is modern; its
 * version must be one we support (else -32022 with the supported list), and the headers must be
 * present and agree with the body (else -32020). A body without that `_meta` is legacy, and must not
 * carry modern headers that contradict it.
 */
export function classify(message: JsonRpcRequest, headers: MessageHeaders): Era {
  const meta = message.params?.['_meta'];
  const version = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] : undefined;
  const isRequest = message.id !== undefined;
  if (version === undefined) {
    if (headers.method !== undefined) {
      throw new RpcError(rpcCodes.headerMismatch, `Mcp-Method is a ${MODERN_VERSION} header, but the body carries no _meta["${PROTOCOL_VERSION_META_KEY}"].`, { httpStatus: 400 });
    }
    if (headers.protocolVersion === MODERN_VERSION) {
      throw new RpcError(rpcCodes.headerMismatch, `MCP-Protocol-Version says ${MODERN_VERSION}, but the body carries no _meta["${PROTOCOL_VERSION_META_KEY}"].`, { httpStatus: 400 });
    }
    return 'legacy';
  }
  if (typeof version !== 'string' || !(SUPPORTED_VERSIONS as readonly string[]).includes(version) || version === LEGACY_VERSION) {
    throw new RpcError(rpcCodes.unsupportedProtocolVersion, `Unsupported protocol version ${JSON.stringify(version)}.`, {
      httpStatus: 400,
      data: { supported: [MODERN_VERSION], supportedVersions: [...SUPPORTED_VERSIONS], requested: version },
    });
  }
  if (!isRequest) return 'modern'; // notifications are exempt from the header checks
  if (headers.protocolVersion === undefined) throw new RpcError(rpcCodes.headerMismatch, 'Missing MCP-Protocol-Version header.', { httpStatus: 400 });
  if (headers.protocolVersion !== version) {
    throw new RpcError(rpcCodes.headerMismatch, `MCP-Protocol-Version ${headers.protocolVersion} disagrees with _meta version ${version}.`, { httpStatus: 400 });
  }
  if (headers.method === undefined) throw new RpcError(rpcCodes.headerMismatch, 'Missing Mcp-Method header.', { httpStatus: 400 });
  if (headers.method !== message.method) {
    throw new RpcError(rpcCodes.headerMismatch, `Mcp-Method ${JSON.stringify(headers.method)} disagrees with method ${JSON.stringify(message.method)}.`, { httpStatus: 400 });
  }
  if (message.method === 'tools/call') {
    const name = message.params?.['name'];
    if (headers.name === undefined) throw new RpcError(rpcCodes.headerMismatch, 'Missing Mcp-Name header for tools/call.', { httpStatus: 400 });
    if (headers.name !== name) {
      throw new RpcError(rpcCodes.headerMismatch, `Mcp-Name ${JSON.stringify(headers.name)} disagrees with params.name ${JSON.stringify(name)}.`, { httpStatus: 400 });
    }
  }
  return 'modern';
}

/** Maps the edge's AppErrors (auth, entitlement, allowance) onto JSON-RPC errors with the REST code. */
export function rpcErrorFromAppError(error: AppError, requestId: string): RpcError {
  const rpcCode =
    error.status === 401 ? rpcCodes.unauthorized : error.status === 403 ? rpcCodes.forbidden : error.status === 429 ? rpcCodes.rateLimited : rpcCodes.internalError;
  return new RpcError(rpcCode, error.detail ?? errorCatalog[error.code].title, {
    httpStatus: error.status,
    data: { code: error.code, status: error.status, requestId, ...error.extensions },
  });
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
