// The S3-compatible BlobStore (AWS S3, MinIO, R2, Ceph…), through the official client. Objects stay
// private: no ACL is ever sent (bucket policy decides, and buckets owner-enforced reject ACLs), and
// nothing here makes a URL for anyone. The SDK's own error messages can quote the bucket, key or
// endpoint, so a failure is reduced to its error name, status or Node code.
import { Readable, Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobStoreError } from './blob-store.ts';
import type { BlobRange, BlobStore } from './blob-store.ts';

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
  /** Bounds each attempt from sending the request to the response headers (a put's upload included). */
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

function failure(operation: Operation, error: unknown): BlobStoreError {
  return error instanceof BlobStoreError ? error : new BlobStoreError('s3', operation, reasonOf(error));
}

export function createS3BlobStore(settings: S3BlobStoreSettings): BlobStore & { close(): void } {
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
    maxAttempts: 2,
    logger: silent,
    // Options for the SDK's NodeHttpHandler (built from them, so no direct import of it is needed).
    // No socket idle timeout: a body the caller reads slowly (a slow listener) must not be cut.
    requestHandler: {
      // An unreachable store fails fast with its own reason rather than the whole request timeout.
      connectionTimeout: Math.min(settings.requestTimeoutMs, 5_000),
      requestTimeout: settings.requestTimeoutMs,
      // Without it the handler only logs a warning when the request timeout passes.
      throwOnRequestTimeout: true,
      logger: silent,
    },
  });
  const objectKey = (key: string) => `${settings.keyPrefix}${key}`;

  return {
    kind: 's3',

    async put(key, bytes, meta) {
      if (!/^[0-9a-f]{64}$/i.test(meta.sha256)) throw new BlobStoreError('s3', 'put', 'InvalidSha256');
      try {
        await client.send(
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
        );
      } catch (error) {
        throw failure('put', error);
      }
    },

    async read(key, range?: BlobRange) {
      let body: unknown;
      let contentRange: string | undefined;
      try {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket: settings.bucket,
            Key: objectKey(key),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        body = answer.Body;
        contentRange = answer.ContentRange;
      } catch (error) {
        if ((error as { name?: unknown } | null)?.name === 'NoSuchKey') return null;
        throw failure('read', error);
      }
      if (!(body instanceof Readable)) throw new BlobStoreError('s3', 'read', 'UnexpectedBody');
      // A store (or a proxy before it) that ignores Range answers the whole object: passing that on
      // as the range would hand the client the wrong bytes.
      if (range && !contentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) {
        body.destroy();
        throw new BlobStoreError('s3', 'read', 'RangeNotHonoured');
      }
      return guardAgainstStall(body, settings.requestTimeoutMs);
    },

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key: objectKey(key) }));
      } catch (error) {
        throw failure('delete', error);
      }
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
