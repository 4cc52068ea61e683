// The S3-compatible BlobStore (AWS S3, MinIO, R2, Ceph…), through the official client. Objects stay
// private: no ACL is ever sent (bucket policy decides, and buckets owner-enforced reject ACLs), and
// nothing here makes a URL for anyone. The SDK's own error messages can quote the bucket, key or
// endpoint, so a failure is reduced to its error name, status or Node code.
//
// One deadline per operation. `requestTimeoutMs` (MEDIA_S3_TIMEOUT_MS) bounds a whole put, read
// (to the response headers) or delete, its retry included. Before, it bounded each attempt, and a
// frozen store (accepts the connection, never answers) cost an upload 4× the timeout: the put's two
// attempts, then the clean-up delete's two attempts on the same frozen store. Now the SDK call gets
// an AbortSignal that fires at the deadline (or at the caller's signal) and the call is raced
// against it, so the operation ends then whatever the SDK's retry loop is doing; a second attempt
// only happens when the first failed early enough. The stall guard bounds the body of a read.
// Whether any attempt reached the store is recorded per attempt (`notSent`, blob-store.ts).
import { Readable, Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { GetObjectCommandOutput } from '@aws-sdk/client-s3';
import { BlobStoreError } from './blob-store.ts';
import type { BlobOperationOptions, BlobRange, BlobStore } from './blob-store.ts';

export type S3BlobStoreSettings = {
  bucket: string;
  /** e.g. 'us-east-1' (S3-compatible stores often accept any region, but sign with the one they expect). */
  region: string;
  /** An S3-compatible endpoint (MinIO, R2, Ceph…); AWS when absent. */
  endpoint?: string;
  /** True for most S3-compatible stores (`/<bucket>/<key>` rather than `<bucket>.<host>`). */
  forcePathStyle: boolean;
  /** Objects are stored as `${keyPrefix}${key}`, e.g. 'media/'. */
  keyPrefix: string;
  /** Absent: the SDK's default provider chain (environment, profile, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /**
   * The deadline of one operation, retries included: a put (its upload included), a read up to the
   * response headers, a delete. The body of a read is bounded by the stall guard with the same value.
   */
  requestTimeoutMs: number;
};

type Operation = 'put' | 'read' | 'delete';

// The SDK and its HTTP handler write to the console when given no logger (the handler warns there
// about slow requests): nothing of theirs may reach the service's output.
const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

// A token from the store's answer is kept only if it looks like an error class, status or code.
const safeToken = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The reason of a failure: SDK error name, HTTP status, Node error code; never a message. */
function reasonOf(error: unknown): string {
  const { name, code, $metadata } = (error ?? {}) as { name?: unknown; code?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const status = $metadata?.httpStatusCode;
  const tokens = [name === 'Error' ? undefined : name, code, typeof status === 'number' ? String(status) : undefined];
  const reason = [...new Set(tokens.filter((t): t is string => typeof t === 'string' && safeToken.test(t)))].join(' ');
  return reason || 'Unknown';
}

function failure(operation: Operation, error: unknown, notSent = false): BlobStoreError {
  return error instanceof BlobStoreError ? error : new BlobStoreError('s3', operation, reasonOf(error), { notSent });
}

// Node codes of a connection that was never made: not a byte of the request left this process.
// A connection timeout is not among them (a slow handshake may still have carried the request).
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** The reason given when the operation's deadline ends it (the same as the SDK's own timeout). */
const DEADLINE_REASON = 'TimeoutError ETIMEDOUT';

type Attempts = { started: number; unsent: number; running: number };

/**
 * Records each attempt of one SDK call (the middleware runs inside the retry loop) and whether it
 * failed before connecting, so a failure can say that nothing was sent.
 */
function recordAttempts<C extends { middlewareStack: { add: (...args: never[]) => unknown } }>(command: C, attempts: Attempts): C {
  const add = command.middlewareStack.add as unknown as (
    middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
    options: { step: 'deserialize'; name: string; priority: 'low' },
  ) => void;
  add.call(
    command.middlewareStack,
    (next) => async (args) => {
      attempts.started += 1;
      attempts.running += 1;
      try {
        return await next(args);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === 'string' && NEVER_CONNECTED.has(code)) attempts.unsent += 1;
        throw error;
      } finally {
        attempts.running -= 1;
      }
    },
    { step: 'deserialize', name: 'mediaAttemptRecorder', priority: 'low' },
  );
  return command;
}

export function createS3BlobStore(settings: S3BlobStoreSettings): BlobStore & { readonly timeoutMs: number; close(): void } {
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // The SDK's default since 2025 adds CRC32 checksums as aws-chunked trailers to every upload,
    // which many S3-compatible stores reject; the put sends its own SHA-256 in a plain header.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // One retry: a transient 5xx or reset is worth another try, a stuck store is not worth many.
    // The retry happens only inside the operation's deadline (bounded() below).
    maxAttempts: 2,
    logger: silent,
    // Options for the SDK's NodeHttpHandler (built from them, so no direct import of it is needed).
    // No socket idle timeout: a body the caller reads slowly (a slow listener) must not be cut.
    requestHandler: {
      // An unreachable store fails fast with its own reason rather than the whole request timeout.
      connectionTimeout: Math.min(settings.requestTimeoutMs, 5_000),
      // Per attempt; the operation's deadline (the same value) ends the whole call, retry included.
      requestTimeout: settings.requestTimeoutMs,
      // Without it the handler only logs a warning when the request timeout passes.
      throwOnRequestTimeout: true,
      logger: silent,
    },
  });
  const objectKey = (key: string) => `${settings.keyPrefix}${key}`;

  /**
   * One SDK call under the operation's deadline and the caller's signal: the call gets an
   * AbortSignal and is raced against it, so the operation ends at the deadline even while the SDK
   * waits between attempts or on a request that will never be answered. `late` disposes of a result
   * that arrives after the operation was given up.
   */
  async function bounded<T>(
    operation: Operation,
    options: BlobOperationOptions | undefined,
    send: (signal: AbortSignal, attempts: Attempts) => Promise<T>,
    late?: (result: T) => void,
  ): Promise<T> {
    const attempts: Attempts = { started: 0, unsent: 0, running: 0 };
    const deadline = new AbortController();
    const signal = options?.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
    // The deadline, or a caller's own timeout (AbortSignal.timeout), is a timeout; any other abort is not.
    const timedOut = () => deadline.signal.aborted || (options?.signal?.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
    const givenUp = () => new BlobStoreError('s3', operation, timedOut() ? DEADLINE_REASON : 'Aborted');
    let stop: (error: BlobStoreError) => void = () => undefined;
    const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
    const onAbort = () => stop(givenUp());
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => deadline.abort(), settings.requestTimeoutMs);
    if (signal.aborted) onAbort();
    const call = send(signal, attempts);
    try {
      return await Promise.race([call, stopped]);
    } catch (error) {
      // Nothing was sent only if every attempt that started failed to connect and none is still out.
      const notSent = attempts.running === 0 && attempts.unsent === attempts.started;
      if (signal.aborted) {
        call.then(late ?? (() => undefined), () => undefined);
        throw new BlobStoreError('s3', operation, givenUp().reason, { notSent });
      }
      throw failure(operation, error, notSent);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    kind: 's3',
    timeoutMs: settings.requestTimeoutMs,

    async put(key, bytes, meta, options) {
      if (!/^[0-9a-f]{64}$/i.test(meta.sha256)) throw new BlobStoreError('s3', 'put', 'InvalidSha256', { notSent: true });
      await bounded('put', options, (abortSignal, attempts) =>
        client.send(
          recordAttempts(
            new PutObjectCommand({
              Bucket: settings.bucket,
              Key: objectKey(key),
              Body: bytes,
              ContentLength: bytes.byteLength,
              ContentType: meta.contentType,
              // The store recomputes it and refuses the object (BadDigest) when the bytes differ.
              ChecksumSHA256: Buffer.from(meta.sha256, 'hex').toString('base64'),
              CacheControl: 'private, no-store',
            }),
            attempts,
          ),
          { abortSignal },
        ),
      );
    },

    async read(key, range?: BlobRange, options?: BlobOperationOptions) {
      let answer: GetObjectCommandOutput;
      try {
        answer = await bounded(
          'read',
          options,
          (abortSignal, attempts) =>
            client.send(
              recordAttempts(
                new GetObjectCommand({ Bucket: settings.bucket, Key: objectKey(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
                attempts,
              ),
              { abortSignal },
            ),
          // An answer that arrives after the deadline: its body holds a socket until read or destroyed.
          (late) => (late.Body as Readable | undefined)?.destroy?.(),
        );
      } catch (error) {
        if (error instanceof BlobStoreError && error.reason.split(' ').includes('NoSuchKey')) return null;
        throw error;
      }
      const body: unknown = answer.Body;
      if (!(body instanceof Readable)) throw new BlobStoreError('s3', 'read', 'UnexpectedBody');
      // A store (or a proxy before it) that ignores Range answers the whole object: passing that on
      // as the range would hand the client the wrong bytes.
      if (range && !answer.ContentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) {
        body.destroy();
        throw new BlobStoreError('s3', 'read', 'RangeNotHonoured');
      }
      return guardAgainstStall(body, settings.requestTimeoutMs);
    },

    async delete(key, options) {
      await bounded('delete', options, (abortSignal, attempts) =>
        client.send(recordAttempts(new DeleteObjectCommand({ Bucket: settings.bucket, Key: objectKey(key) }), attempts), { abortSignal }),
      );
    },

    close() {
      client.destroy();
    },
  };
}

/**
 * The request timeout ends at the response headers; a body that stops arriving part-way would
 * keep a reader (and an HTTP response) waiting forever. This fails it after `idleMs` without a
 * byte, but only while the reader is waiting for one: when the reader is behind (its buffer holds
 * bytes: backpressure from a slow listener), silence from the store is expected and never cut.
 */
function guardAgainstStall(body: Readable, idleMs: number): Readable {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      arm();
      done(null, chunk);
    },
    flush(done) {
      clearTimeout(timer);
      done();
    },
    destroy(error, done) {
      clearTimeout(timer);
      body.destroy();
      done(error);
    },
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (guard.readableLength > 0 || guard.writableLength > 0) return arm(); // the reader is behind, not the store
      guard.destroy(new BlobStoreError('s3', 'read', 'BodyStalled'));
    }, idleMs);
    timer.unref();
  };
  body.on('error', (error) => guard.destroy(failure('read', error)));
  arm();
  return body.pipe(guard);
}
