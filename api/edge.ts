// The HTTP edge's hostile-input rules, applied once for every interface present and future:
// - JSON bodies: parsed by one parser that bounds nesting depth and refuses U+0000 anywhere (keys or
//   values). Postgres text and jsonb cannot hold NUL, and deep nesting overflows recursive code
//   (validation, serialisation) long before the body limit is reached.
// - Query strings and path parameters: the same NUL rule.
// - Fastify's own refusals (414 on an over-long parameter, a malformed URL) and the HTTP server's
//   (431 headers too large, 408, 400 unparseable) answer problem+json like everything else.
// - A path that exists with other methods answers 405 with Allow instead of 404.
// - A single-valued header (Authorization, Idempotency-Key, …) sent twice is refused, not guessed at.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { AppError, errorCatalog } from '../domain/errors.ts';
import type { ErrorCode, ErrorPointer } from '../domain/errors.ts';
import { PROBLEM_CONTENT_TYPE } from './problems.ts';

/** Deepest nesting of objects/arrays a JSON body may have. Real payloads stay far below it. */
export const MAX_JSON_DEPTH = 64;

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Walks a parsed JSON value without recursion and throws on the first NUL or on nesting deeper
 * than MAX_JSON_DEPTH. `where` prefixes the JSON Pointer of the refusal (e.g. /body).
 */
export function assertSafeJson(value: unknown, where: string): void {
  const stack: Array<[unknown, string, number]> = [[value, where, 0]];
  while (stack.length) {
    const [current, pointer, depth] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) throw nulRefusal(pointer);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw new AppError('json_too_deep', `JSON nesting deeper than ${MAX_JSON_DEPTH} levels at ${pointer || '/'}.`, {
        extensions: { maxDepth: MAX_JSON_DEPTH, errors: [{ pointer: pointer || '/', message: `nested deeper than ${MAX_JSON_DEPTH}` }] },
      });
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${pointer}/${i}`, depth + 1]);
      continue;
    }
    for (const key of Object.keys(current)) {
      const child = `${pointer}/${escapePointer(key)}`;
      if (key.includes('\u0000')) throw nulRefusal(child);
      stack.push([(current as Record<string, unknown>)[key], child, depth + 1]);
    }
  }
}

function nulRefusal(pointer: string): AppError {
  const errors: ErrorPointer[] = [{ pointer, message: 'contains U+0000 (NUL), which no string may hold', code: 'nul_character' }];
  return new AppError('invalid_character', `${pointer}: strings may not contain U+0000.`, { extensions: { errors } });
}

/**
 * The one JSON text parser: JSON.parse (iterative in V8, so depth cannot overflow it), then the walk
 * above. Prototype keys are refused as Fastify's default parser does.
 */
export function parseJsonText(text: string, where = '/body'): unknown {
  if (text.trim() === '') throw new AppError('malformed_json', 'The body is empty.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError('malformed_json', error instanceof Error ? error.message : undefined);
  }
  assertSafeJson(value, where);
  if (/"(?:__proto__|constructor)"\s*:/.test(text) && hasPrototypeKey(value)) {
    throw new AppError('invalid_request', 'The keys __proto__ and constructor.prototype are not accepted.');
  }
  return value;
}

function hasPrototypeKey(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Object.hasOwn(current, '__proto__')) return true;
    const ctor = (current as Record<string, unknown>)['constructor'];
    if (ctor && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return true;
    stack.push(...(Array.isArray(current) ? current : Object.values(current)));
  }
  return false;
}

/** Every other place a client string enters: the query string and the path parameters. */
export function assertNoNulInRecord(values: unknown, where: string): void {
  if (!values || typeof values !== 'object') return;
  for (const [key, value] of Object.entries(values)) {
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) if (typeof item === 'string' && (item.includes('\u0000') || key.includes('\u0000'))) throw nulRefusal(`${where}/${escapePointer(key)}`);
  }
}

/**
 * Headers that carry one value. Node keeps the first Authorization and joins repeated custom headers
 * with ", "; either way a second value would be silently dropped or mangled, so it is refused.
 */
const SINGLE_VALUED_HEADERS = new Set([
  'authorization',
  'content-type',
  'idempotency-key',
  'if-match',
  'x-service-mapping',
  'x-service-runtime-version',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
]);

function assertSingleValuedHeaders(rawHeaders: readonly string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE_VALUED_HEADERS.has(name)) continue;
    if (seen.has(name)) {
      throw new AppError('duplicate_header', `The ${name} header was sent more than once; send it once.`, {
        extensions: { errors: [{ pointer: `/headers/${name}`, message: 'sent more than once' }] },
      });
    }
    seen.add(name);
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Installs the rules above on the root instance; every interface plugin inherits them. */
/** How long a connection answered before its request body ended keeps reading (and discarding) after the answer. */
export const LINGER_MS = 2_000;

/**
 * A lingering close (as nginx's `lingering_close`): when the answer goes out before the request's
 * body has ended (a 413 while an upload is still arriving, a refusal before the body is read), Node
 * half-closes the connection and destroys it as soon as the answer is flushed; bytes the client is
 * still sending then meet a closed socket, the kernel answers them with a reset, and the client's
 * kernel drops the answer it had not read yet: the client sees "connection reset", not the 413.
 * So the socket ends its side and goes on reading and discarding for LINGER_MS before it is destroyed.
 */
function lingerOnClose(socket: Socket | null): void {
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    if (this.writable) this.end();
    this.resume();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}
const lingering = new WeakSet<Socket>();

export function registerEdgeRules(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonText(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addHook('onRequest', async (request) => {
    assertSingleValuedHeaders(request.raw.rawHeaders);
  });
  app.addHook('preValidation', async (request) => {
    assertNoNulInRecord(request.query, '/querystring');
    assertNoNulInRecord(request.params, '/params');
  });
  app.addHook('onSend', async (request) => {
    if (!request.raw.complete) lingerOnClose(request.raw.socket);
  });

  // A shadow router of every route's method and path, so a miss can tell 404 from 405.
  const shadow = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!METHODS.includes(method as (typeof METHODS)[number])) continue;
      try {
        shadow.on(method as (typeof METHODS)[number], route.url, () => undefined);
      } catch {
        // already registered (HEAD is added beside GET by Fastify itself)
      }
    }
  });
  app.decorate('allowedMethods', (url: string) => {
    const path = url.split('?')[0] ?? url;
    return METHODS.filter((method) => shadow.find(method, path) !== null);
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Methods that have a route at this URL (empty when the path itself is unknown). */
    allowedMethods(url: string): readonly string[];
  }
}

/** Path parameter length Fastify accepts: a 255-byte segment percent-encoded is at most 765 characters. */
export const MAX_PARAM_LENGTH = 1_024;

/** 414 for a path segment longer than the router's parameter limit. */
export const uriTooLong = () => new AppError('uri_too_long', `A path segment is longer than ${MAX_PARAM_LENGTH} characters.`);

/**
 * The headers an interface adds to every answer under its mount, even one Fastify gives before any
 * route or hook runs (the Product Runtime's version: api/routes/product/kit.ts runtimeMountHeaders).
 * The composition root (api/app.ts) passes them in: the edge knows no interface.
 */
export type MountHeaders = (url: string) => Record<string, string>;

/** Fastify's `frameworkErrors`: an over-long parameter (414) or an undecodable URL (400), with `mountHeaders` of the URL. */
export function frameworkErrors(mountHeaders: MountHeaders) {
  return (error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply): void => {
    const appError =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? uriTooLong()
        : new AppError('invalid_request', 'The URL is not valid (a path segment does not decode).');
    void reply.code(appError.status).type(PROBLEM_CONTENT_TYPE).header('x-request-id', reply.request.id).headers(mountHeaders(reply.request.url)).send({
      type: `/problems/${appError.code}`,
      title: errorCatalog[appError.code].title,
      status: appError.status,
      detail: appError.detail,
      code: appError.code,
      requestId: reply.request.id,
    });
  };
}

/**
 * The HTTP server's refusals before any request exists (header overflow, timeout, garbage): a
 * problem+json body written on the socket, then the connection closes, as Node itself does.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'invalid_request';
  const { status, title } = errorCatalog[code];
  const body = JSON.stringify({ type: `/problems/${code}`, title, status, code, detail: code === 'invalid_request' ? 'The HTTP request could not be parsed.' : title });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
