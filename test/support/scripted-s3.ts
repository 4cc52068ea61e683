// A scripted S3-compatible object store on loopback, speaking the S3 REST wire protocol for what
// the S3 BlobStore uses (path-style PutObject, GetObject with a single Range, HeadObject,
// DeleteObject) with S3's XML error bodies. Like S3 it checks AWS Signature V4 on every request
// (recomputed here from the received method, path, query and signed headers with node:crypto,
// independently of the SDK's signer), the payload hash, the x-amz-checksum-sha256 of an upload,
// that every x-amz-* header is signed and that no ACL is asked for. It records every request and
// fails on demand: an error status, a dropped connection, no answer at all, a connection killed
// part-way through an upload's body (the store alone, or the whole store dying with it).
// The store as a whole can also be stopped (its port then refuses connections: ECONNREFUSED),
// restarted on the same port with the objects it held, and frozen: it accepts TCP connections and
// never reads or answers a byte on them (new connections and those it already had alike).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Server as TcpServer, Socket } from 'node:net';
import type { S3BlobStoreSettings } from '../../domain/media/s3-blob-store.ts';

export type S3Operation = 'put' | 'get' | 'head' | 'delete';
/**
 * A status, a dropped connection, no answer at all, (GET) the headers and half the body then silence,
 * or (PUT) the connection destroyed once part of the body has arrived: `kill-mid-body` the connection
 * alone, `crash-mid-body` the whole store with it (stopped: its port refuses until `start()` again).
 */
export type ScriptedOutcome = number | 'drop' | 'hang' | 'stall-body' | 'kill-mid-body' | 'crash-mid-body';

export type RecordedS3Request = {
  method: string;
  /** null for anything the server does not implement (bucket-level calls, unknown queries). */
  operation: S3Operation | null;
  /** The object key, decoded (keyPrefix included); null when the path names no object. */
  key: string | null;
  /** The Range header as received. */
  range: string | null;
  /** The status answered, or how the scripted failure ended the request. */
  status: number | 'dropped' | 'hung' | 'stalled' | 'killed' | 'frozen';
  /** The S3 error code answered, if any. */
  errorCode: string | null;
  headers: IncomingHttpHeaders;
  /** A killed upload: how many bytes of its body had arrived (fewer than its Content-Length). */
  receivedBytes?: number;
};

/** What PutObject stored beside the bytes. */
export type StoredObjectInfo = { contentType: string; cacheControl: string | null; etag: string; lastModified: Date };

export const SCRIPTED_S3_BUCKET = 'scripted-media-bucket';
export const SCRIPTED_S3_REGION = 'eu-central-1';
export const SCRIPTED_S3_ACCESS_KEY_ID = 'AKIASCRIPTEDTESTKEY01';
export const SCRIPTED_S3_SECRET = 'scripted/secret+never-in-an-error-Kq9w';

// RFC 3986 unreserved characters stay; every other byte is %XX (what S3 canonicalises to).
const uriEncode = (text: string, keepSlash: boolean) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9\-_.~]/.test(char) || (keepSlash && char === '/') ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

// How S3 names the errors a scripted status stands for.
const scriptedErrorCodes: Record<number, string> = { 500: 'InternalError', 503: 'SlowDown', 400: 'InvalidRequest', 403: 'AccessDenied' };
const errorMessages: Record<string, string> = {
  InternalError: 'We encountered an internal error. Please try again.',
  SlowDown: 'Please reduce your request rate.',
  AccessDenied: 'Access Denied',
  InvalidRequest: 'Invalid Request',
};

class S3Failure extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, string>;
  constructor(status: number, code: string, message: string, extra: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
  }
}

const xmlEscape = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

export class ScriptedS3 {
  /** The stored bytes by object key (keyPrefix included); a test may change them behind the store's back. */
  readonly objects = new Map<string, Buffer>();
  readonly objectInfo = new Map<string, StoredObjectInfo>();
  readonly requests: RecordedS3Request[] = [];
  /** false: answer a ranged GET with the whole object (as a store or proxy that ignores Range does). */
  honourRange = true;
  readonly bucket: string;
  readonly region: string;
  private readonly credentials: Map<string, string>;
  private readonly failures: { operation: S3Operation; outcome: ScriptedOutcome }[] = [];
  // A TCP front that hands each connection to the HTTP server, or holds it silent while frozen.
  private readonly http: Server;
  private listener: TcpServer | null = null;
  private readonly sockets = new Set<Socket>();
  private port = 0;
  /** True: every connection is accepted and never read from or answered (see freeze()). */
  frozen = false;
  /** Connections accepted while frozen (held, never read from): one per attempt a client made. */
  frozenConnections = 0;
  endpoint = '';

  constructor(options: { bucket?: string; region?: string } = {}) {
    this.bucket = options.bucket ?? SCRIPTED_S3_BUCKET;
    this.region = options.region ?? SCRIPTED_S3_REGION;
    this.credentials = new Map([[SCRIPTED_S3_ACCESS_KEY_ID, SCRIPTED_S3_SECRET]]);
    this.http = createServer((req, res) => void this.handle(req, res));
  }

  /** Listens on loopback: a new port the first time, the same port (and the same objects) after stop(). */
  async start(): Promise<{ endpoint: string }> {
    if (this.listener) return { endpoint: this.endpoint };
    const listener = createTcpServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      if (this.frozen) {
        this.frozenConnections += 1;
        socket.pause();
      } else this.http.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.listener = listener;
    this.port = (listener.address() as AddressInfo).port;
    this.endpoint = `http://127.0.0.1:${this.port}`;
    return { endpoint: this.endpoint };
  }

  /** Stops listening and drops every connection: the port refuses connections until start(). */
  async stop(): Promise<void> {
    const listener = this.listener;
    this.listener = null;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (listener) await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  /**
   * A store that accepts TCP connections and then never reads or answers a byte: new connections are
   * held paused, and requests on connections it already had are left unanswered, body unread.
   */
  freeze(): this {
    this.frozen = true;
    return this;
  }

  thaw(): this {
    this.frozen = false;
    return this;
  }

  /** The next `times` requests of this operation end with the outcome instead of their answer. */
  failNext(operation: S3Operation, outcome: ScriptedOutcome, times = 1): this {
    for (let i = 0; i < times; i++) this.failures.push({ operation, outcome });
    return this;
  }

  reset(): void {
    this.frozen = false;
    this.frozenConnections = 0;
    this.objects.clear();
    this.objectInfo.clear();
    this.requests.length = 0;
    this.failures.length = 0;
    this.honourRange = true;
  }

  /** S3BlobStore settings for this server (path-style, its credentials). */
  storeSettings(overrides: Partial<S3BlobStoreSettings> = {}): S3BlobStoreSettings {
    return {
      bucket: this.bucket,
      region: this.region,
      endpoint: this.endpoint,
      forcePathStyle: true,
      keyPrefix: 'media/',
      credentials: { accessKeyId: SCRIPTED_S3_ACCESS_KEY_ID, secretAccessKey: SCRIPTED_S3_SECRET },
      requestTimeoutMs: 5_000,
      ...overrides,
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.frozen) {
      // An already open (kept-alive) connection of a frozen store: nothing read, nothing answered.
      req.pause();
      this.requests.push({ method: req.method ?? '', operation: null, key: null, range: req.headers.range ?? null, status: 'frozen', errorCode: null, headers: req.headers });
      return;
    }
    const kill = req.method === 'PUT' ? this.peekFailure('put') : undefined;
    if (kill === 'kill-mid-body' || kill === 'crash-mid-body') {
      this.takeFailure('put');
      await this.killMidBody(req, kill === 'crash-mid-body');
      return;
    }
    const body = await readBody(req);
    const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2) as [string?, string?];
    const query = parseQuery(rawQuery);
    const target = query ? this.targetOf(req.method ?? '', rawPath, query) : null;
    const record: RecordedS3Request = {
      method: req.method ?? '',
      operation: target?.operation ?? null,
      key: target?.key ?? null,
      range: req.headers.range ?? null,
      status: 200,
      errorCode: null,
      headers: req.headers,
    };
    this.requests.push(record);
    res.setHeader('x-amz-request-id', randomBytes(8).toString('hex').toUpperCase());
    res.setHeader('server', 'ScriptedS3');
    try {
      if (!target || !query) throw new S3Failure(400, 'InvalidURI', "Couldn't parse the specified URI.");
      this.authenticate(req, rawPath, query, body);
      if (target.bucket !== this.bucket) throw new S3Failure(404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: target.bucket });
      if (!target.operation || target.key === null) throw new S3Failure(501, 'NotImplemented', 'A header or query you provided implies functionality that is not implemented.');
      const scripted = this.takeFailure(target.operation);
      // (A kill of a PUT ends it before its body is read, in handle(); anything else just drops.)
      if (scripted === 'drop' || scripted === 'kill-mid-body' || scripted === 'crash-mid-body') {
        record.status = 'dropped';
        req.socket.destroy();
        return;
      }
      if (scripted === 'hang') {
        record.status = 'hung';
        return;
      }
      if (scripted === 'stall-body') {
        record.status = 'stalled';
        this.getObject(req, res, target.key, false, true);
        return;
      }
      if (scripted !== undefined) {
        const code = scriptedErrorCodes[scripted] ?? 'InternalError';
        throw new S3Failure(scripted, code, errorMessages[code] ?? 'Scripted failure');
      }
      switch (target.operation) {
        case 'put':
          this.putObject(req, res, target.key, body);
          break;
        case 'get':
        case 'head':
          this.getObject(req, res, target.key, target.operation === 'head');
          break;
        case 'delete':
          this.objects.delete(target.key);
          this.objectInfo.delete(target.key);
          res.writeHead(204).end();
          break;
      }
      record.status = res.statusCode;
    } catch (error) {
      if (!(error instanceof S3Failure)) throw error;
      record.status = error.status;
      record.errorCode = error.code;
      const details = Object.entries({ ...error.extra, ...(target?.key != null ? { Key: target.key } : {}) })
        .map(([name, value]) => `<${name}>${xmlEscape(value)}</${name}>`)
        .join('');
      const headers: Record<string, string> = { 'content-type': 'application/xml' };
      if (error.code === 'InvalidRange' && target?.key != null) headers['content-range'] = `bytes */${this.objects.get(target.key)?.length ?? 0}`;
      res.writeHead(error.status, headers);
      // HEAD answers carry no body; S3 sends the status alone.
      if (req.method === 'HEAD') res.end();
      else {
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${error.code}</Code><Message>${xmlEscape(error.message)}</Message>${details}<RequestId>${res.getHeader('x-amz-request-id') as string}</RequestId><HostId>${randomBytes(24).toString('base64')}</HostId></Error>`,
        );
      }
    }
  }

  /** Path-style only: `/<bucket>/<key>`; the only query S3 SDKs add to these calls is `x-id`. */
  private targetOf(method: string, rawPath: string, query: [string, string][]): { bucket: string; key: string | null; operation: S3Operation | null } | null {
    const path = safeDecode(rawPath);
    if (path === null) return null;
    const slash = path.indexOf('/', 1);
    const bucket = slash === -1 ? path.slice(1) : path.slice(1, slash);
    const key = slash === -1 || slash === path.length - 1 ? null : path.slice(slash + 1);
    const operations: Record<string, S3Operation> = { PUT: 'put', GET: 'get', HEAD: 'head', DELETE: 'delete' };
    const plain = query.every(([name]) => name === 'x-id');
    return { bucket, key, operation: plain ? (operations[method] ?? null) : null };
  }

  private peekFailure(operation: S3Operation): ScriptedOutcome | undefined {
    return this.failures.find((f) => f.operation === operation)?.outcome;
  }

  /**
   * Reads part of an upload's body (at least one chunk, and no more than half of it), then destroys
   * the connection without a word, as a store killed mid-upload does; `crash` stops the whole store.
   */
  private async killMidBody(req: IncomingMessage, crash: boolean): Promise<void> {
    const expected = Number(req.headers['content-length'] ?? 0);
    const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2) as [string?, string?];
    const query = parseQuery(rawQuery);
    const key = query ? (this.targetOf('PUT', rawPath, query)?.key ?? null) : null;
    const record: RecordedS3Request = { method: 'PUT', operation: 'put', key, range: null, status: 'killed', errorCode: null, headers: req.headers, receivedBytes: 0 };
    this.requests.push(record);
    await new Promise<void>((resolve) => {
      let received = 0;
      const done = () => {
        req.removeAllListeners('data');
        resolve();
      };
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        record.receivedBytes = received;
        if (received >= Math.min(expected / 2, 16 * 1024) || received >= expected) done();
      });
      req.on('end', done);
      req.on('error', done);
    });
    req.socket.destroy();
    if (crash) await this.stop();
  }

  private takeFailure(operation: S3Operation): ScriptedOutcome | undefined {
    const index = this.failures.findIndex((f) => f.operation === operation);
    return index === -1 ? undefined : this.failures.splice(index, 1)[0]!.outcome;
  }

  /** AWS Signature Version 4 as S3 checks it (header-based; presigned query auth is not accepted). */
  private authenticate(req: IncomingMessage, rawPath: string, query: [string, string][], body: Buffer): void {
    const authorization = req.headers.authorization ?? '';
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!match) throw new S3Failure(403, 'AccessDenied', 'Access Denied');
    const [, accessKeyId = '', scopeDate, scopeRegion, scopeService, signedHeaderList = '', signature = ''] = match;
    const secret = this.credentials.get(accessKeyId);
    if (secret === undefined) throw new S3Failure(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKeyId });
    const amzDate = header(req.headers, 'x-amz-date');
    const payloadHash = header(req.headers, 'x-amz-content-sha256');
    if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) throw new S3Failure(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    if (!payloadHash) throw new S3Failure(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    if (scopeDate !== amzDate.slice(0, 8) || scopeService !== 's3' || scopeRegion !== this.region) {
      throw new S3Failure(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${scopeRegion}' is wrong; expecting '${this.region}'`, { Region: this.region });
    }
    const signedAt = Date.parse(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    if (Math.abs(Date.now() - signedAt) > 15 * 60_000) throw new S3Failure(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');

    const signedHeaders = signedHeaderList.split(';');
    if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date') || !signedHeaders.includes('x-amz-content-sha256')) {
      throw new S3Failure(403, 'AccessDenied', 'Host, x-amz-date and x-amz-content-sha256 must be signed');
    }
    const unsigned = Object.keys(req.headers).filter((name) => name.startsWith('x-amz-') && !signedHeaders.includes(name));
    if (unsigned.length > 0) throw new S3Failure(403, 'AccessDenied', 'There were headers present in the request which were not signed', { HeadersNotSigned: unsigned.join(', ') });

    const canonicalQuery = query
      .map(([name, value]) => [uriEncode(name, false), uriEncode(value, false)] as const)
      .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
      .map(([name, value]) => `${name}=${value}`)
      .join('&');
    const canonicalHeaders = signedHeaders.map((name) => `${name}:${(req.headersDistinct[name] ?? []).map((v) => v.trim().replace(/\s+/g, ' ')).join(',')}\n`).join('');
    const canonicalRequest = [req.method, uriEncode(safeDecode(rawPath) ?? rawPath, true), canonicalQuery, canonicalHeaders, signedHeaderList, payloadHash].join('\n');
    const scope = `${scopeDate}/${scopeRegion}/s3/aws4_request`;
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, scopeDate!), scopeRegion!), 's3'), 'aws4_request');
    const expected = createHmac('sha256', signingKey).update(stringToSign).digest();
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
      throw new S3Failure(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', {
        AWSAccessKeyId: accessKeyId,
        StringToSign: stringToSign,
        SignatureProvided: signature,
        CanonicalRequest: canonicalRequest,
      });
    }
    if (payloadHash.startsWith('STREAMING-')) throw new S3Failure(501, 'NotImplemented', 'aws-chunked uploads are not implemented by this server');
    if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256Hex(body)) {
      throw new S3Failure(400, 'XAmzContentSHA256Mismatch', 'The provided \'x-amz-content-sha256\' header does not match what was computed.');
    }
  }

  private putObject(req: IncomingMessage, res: ServerResponse, key: string, body: Buffer): void {
    if (req.headers['content-length'] === undefined) throw new S3Failure(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
    if (header(req.headers, 'content-encoding')?.includes('aws-chunked')) throw new S3Failure(501, 'NotImplemented', 'aws-chunked uploads are not implemented by this server');
    // Buckets with Object Ownership "bucket owner enforced" (S3's default since 2023) refuse ACLs.
    if (Object.keys(req.headers).some((name) => name === 'x-amz-acl' || name.startsWith('x-amz-grant-'))) {
      throw new S3Failure(400, 'AccessControlListNotSupported', 'The bucket does not allow ACLs');
    }
    const checksum = header(req.headers, 'x-amz-checksum-sha256');
    if (checksum !== undefined) {
      if (Buffer.from(checksum, 'base64').length !== 32) throw new S3Failure(400, 'InvalidRequest', 'Value for x-amz-checksum-sha256 header is invalid.');
      if (createHash('sha256').update(body).digest('base64') !== checksum) {
        throw new S3Failure(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
      }
    }
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    this.objects.set(key, body);
    this.objectInfo.set(key, {
      contentType: header(req.headers, 'content-type') ?? 'binary/octet-stream',
      cacheControl: header(req.headers, 'cache-control') ?? null,
      etag,
      lastModified: new Date(),
    });
    const headers: Record<string, string> = { etag };
    if (checksum !== undefined) headers['x-amz-checksum-sha256'] = checksum;
    res.writeHead(200, headers).end();
  }

  private getObject(req: IncomingMessage, res: ServerResponse, key: string, headOnly: boolean, stall = false): void {
    const stored = this.objects.get(key);
    if (!stored) throw new S3Failure(404, 'NoSuchKey', 'The specified key does not exist.');
    const info = this.objectInfo.get(key);
    const size = stored.length;
    const headers: Record<string, string> = {
      'content-type': info?.contentType ?? 'binary/octet-stream',
      etag: info?.etag ?? `"${createHash('md5').update(stored).digest('hex')}"`,
      'last-modified': (info?.lastModified ?? new Date()).toUTCString(),
      'accept-ranges': 'bytes',
    };
    if (info?.cacheControl) headers['cache-control'] = info.cacheControl;
    const range = this.honourRange ? parseRange(req.headers.range, size) : null;
    if (range === 'unsatisfiable') throw new S3Failure(416, 'InvalidRange', 'The requested range is not satisfiable', { RangeRequested: req.headers.range ?? '', ActualObjectSize: String(size) });
    const bytes = range ? stored.subarray(range.start, range.end + 1) : stored;
    if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
    headers['content-length'] = String(bytes.length);
    res.writeHead(range ? 206 : 200, headers);
    // A store that stops sending mid-body: half the bytes, then the connection stays open, silent.
    if (stall) res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
    else res.end(headOnly ? undefined : bytes);
  }
}

/**
 * One `bytes=a-b`, `bytes=a-` or `bytes=-n` range, as S3 reads it: anything else (several ranges,
 * a malformed header) is ignored and the whole object is answered; a start past the end is refused.
 */
function parseRange(value: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const match = value ? /^bytes=(\d*)-(\d*)$/.exec(value.trim()) : null;
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** The query's pairs, decoded; null when one does not decode. */
function parseQuery(raw: string): [string, string][] | null {
  if (raw === '') return [];
  const pairs: [string, string][] = [];
  for (const pair of raw.split('&')) {
    const at = pair.indexOf('=');
    const name = safeDecode(at === -1 ? pair : pair.slice(0, at));
    const value = safeDecode(at === -1 ? '' : pair.slice(at + 1));
    if (name === null || value === null) return null;
    pairs.push([name, value]);
  }
  return pairs;
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', () => resolve(Buffer.concat(parts)));
  });
}
