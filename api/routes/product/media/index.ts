// Private audio media on the runtime: upload (the raw bytes as the body, metadata in headers, so a
// product streams a recording without base64), read with Range and conditional requests, list and
// delete. The rules live in domain/media/ (library.ts: tenancy, idempotency, storage quota;
// audio-inspection.ts: what the bytes are); this file is the HTTP edge.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AUDIO_UPLOAD_CONTENT_TYPES, audioUploadSchema, envelope, MEDIA_HEADERS, MEDIA_LIMITS } from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../../domain/errors.ts';
import { deleteAudio, findAudio, getAudio, listAudio, uploadAudio } from '../../../../domain/media/library.ts';
import { UploadClaims } from '../../../../domain/media/upload-claims.ts';
import type { BlobStore } from '../../../../domain/media/blob-store.ts';
import { parseDeclaredDuration, parseReference } from '../../../../domain/media/upload-rules.ts';
import { headerValue } from '../../shared/headers.ts';
import type { RuntimeRouteDeps } from '../kit.ts';
import { runtimeCaller, runtimeEnvelope } from '../kit.ts';
import { operationKey, operationRoute } from '../operation-route.ts';
import { decideRead, mediaEtag } from './http-range.ts';
import {
  audioBytesContent,
  audioUploadRequestBody,
  deleteAudioExamples,
  getAudioMetadataExamples,
  listAudioExamples,
  readAudioExamples,
  uploadAudioExamples,
} from './openapi-docs.ts';

const mediaParams = z.strictObject({ mediaId: z.string().min(1).max(100).describe('The mediaId an upload answered with.') });
const uploadTypes = new Set<string>(AUDIO_UPLOAD_CONTENT_TYPES);

export type MediaRouteDeps = RuntimeRouteDeps & { mediaStore: BlobStore };

/** The declared content type's essence (`audio/webm;codecs=opus` → `audio/webm`). */
function declaredType(request: FastifyRequest): string | undefined {
  return headerValue(request, 'content-type')?.split(';')[0]!.trim().toLowerCase();
}

/** Everything an upload says besides its bytes, checked before a byte of the body is read. */
function uploadMetadata(request: FastifyRequest) {
  const type = declaredType(request);
  if (!type || !uploadTypes.has(type)) {
    throw new AppError('unsupported_media_type', `Send the audio bytes as the body with Content-Type ${AUDIO_UPLOAD_CONTENT_TYPES.join(', ')} (the bytes decide what it is).`);
  }
  return {
    idempotencyKey: operationKey(request),
    reference: parseReference(headerValue(request, MEDIA_HEADERS.reference.toLowerCase())),
    declaredDurationMs: parseDeclaredDuration(headerValue(request, MEDIA_HEADERS.declaredDuration.toLowerCase())),
  };
}

/** Headers every stored-media answer carries: private to its reader, never sniffed, revalidated. */
function mediaHeaders(reply: FastifyReply, etag: string): FastifyReply {
  return reply.header('etag', etag).header('accept-ranges', 'bytes').header('cache-control', 'private, no-cache').header('x-content-type-options', 'nosniff');
}

export const mediaRoutes: FastifyPluginAsyncZod<MediaRouteDeps> = async (app, { db, mediaStore }) => {
  // This app's group claims: concurrent uploads of one organization share a statement (decision 108).
  const claims = new UploadClaims(db);
  // The body of an upload is the audio itself, read as a Buffer: Fastify counts the bytes as they
  // arrive and refuses the 3 MiB + 1st (413) without buffering more.
  app.addContentTypeParser([...AUDIO_UPLOAD_CONTENT_TYPES], { parseAs: 'buffer', bodyLimit: MEDIA_LIMITS.maxAudioBytes }, (_request, body, done) => done(null, body));

  app.route({
    ...operationRoute('uploadAudio'),
    bodyLimit: MEDIA_LIMITS.maxAudioBytes,
    // Refuse bad metadata before reading the body (admission already ran in onRequest).
    preParsing: async (request) => {
      uploadMetadata(request);
    },
    schema: {
      description:
        `Needs media.write and an Idempotency-Key. The body is the audio file itself (at most ${MEDIA_LIMITS.maxAudioBytes} bytes, refused while it is read); ` +
        `${MEDIA_HEADERS.reference} carries the product's opaque reference and ${MEDIA_HEADERS.declaredDuration} the declared duration (at most ` +
        `${MEDIA_LIMITS.maxDurationSeconds} s). The container is recognized from the bytes (WebM, Ogg or MP4 with audio only), never from Content-Type; where ` +
        'the container states a duration it is recorded beside the declared one and a gross contradiction is refused. The SHA-256 and size are recorded and ' +
        "the size counts against the organization's mediaStorageBytes (shared by its installations). The answer carries the mediaId, never a storage URL. " +
        'The same key with the same bytes and metadata replays the same mediaId (200, Idempotent-Replayed: true); with anything else it is 422. ' +
        'When the store fails (503, Retry-After): media_storage_unavailable when it is confirmed that nothing was stored (no quota used, the key is free ' +
        'at once); media_upload_outcome_unknown when the store could not be reached to confirm (the size stays held, heldBytes; retrying the same key ' +
        'checks the store again and, once it confirms, uploads afresh).',
      response: { 201: runtimeEnvelope('service.media-audio', audioUploadSchema), 200: runtimeEnvelope('service.media-audio', audioUploadSchema) },
      problems: [
        'payload_too_large',
        'media_empty',
        'media_reference_invalid',
        'media_duration_invalid',
        'media_duration_exceeded',
        'media_duration_mismatch',
        'media_type_unsupported',
        'media_truncated',
        'media_storage_exhausted',
        'media_storage_unavailable',
        'media_upload_outcome_unknown',
      ],
      docs: {
        headers: ['MediaReference', 'MediaDurationSeconds'],
        requestBody: audioUploadRequestBody,
        responses: {
          201: { description: 'Stored: the mediaId, the recognized type, size, SHA-256, both durations, and the organization\'s storage after it.', headers: ['MediaLocation'] },
          200: { description: 'A replay of the upload this Idempotency-Key already made (replayed: true): the same mediaId, nothing stored twice.', headers: ['IdempotentReplayed'] },
        },
      },
      examples: uploadAudioExamples,
    },
    handler: async (request, reply) => {
      const metadata = uploadMetadata(request);
      const body = request.body;
      // No body at all (no bytes parsed) is an empty upload, refused by the inspection like zero bytes.
      const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
      const result = await uploadAudio(db, mediaStore, runtimeCaller(request), { ...metadata, bytes }, claims);
      const answer = envelope('service.media-audio', { ...result.media, replayed: result.replayed, storage: result.storage });
      if (result.replayed) return reply.code(200).header('idempotent-replayed', 'true').send(answer);
      return reply.code(201).header('location', `${request.url.split('?')[0]!.replace(/\/audio$/, '')}/${result.media.mediaId}`).send(answer);
    },
  });

  app.route({
    ...operationRoute('readAudio'),
    schema: {
      description:
        "Needs media.read; authorized on every read: another organization's or installation's mediaId answers exactly like a missing one (404 media_not_found). " +
        'Streams the bytes with their recognized type, length and a strong ETag (the quoted SHA-256). Range: one byte range answers 206 with Content-Range ' +
        '(several ranges, a malformed header, or an If-Range that does not match answer the whole media); a range starting past the end is 416. If-None-Match ' +
        'answers 304; an If-Match that does not match is 412. HEAD gives the headers only, from the record: it never reaches the store. A store that ' +
        'fails the read is 503 media_read_unavailable with Retry-After (the media exists; its bytes cannot be read now).',
      params: mediaParams,
      problems: ['media_not_found', 'range_not_satisfiable', 'precondition_failed', 'media_read_unavailable'],
      docs: {
        headers: ['MediaRange', 'MediaIfRange', 'MediaIfNoneMatch', 'MediaIfMatch'],
        responses: {
          200: { description: 'The whole media, with its recognized type and length.', headers: ['MediaETag', 'AcceptRanges'], content: audioBytesContent },
          206: { description: 'One byte range of the media.', headers: ['MediaETag', 'AcceptRanges', 'ContentRange'], content: audioBytesContent },
          304: { description: 'If-None-Match matched: the client holds these bytes.', headers: ['MediaETag'] },
        },
      },
      examples: readAudioExamples,
    },
    handler: async (request, reply) => {
      const { media, open } = await findAudio(db, mediaStore, runtimeCaller(request), request.params.mediaId);
      const etag = mediaEtag(media.sha256);
      const decision = decideRead(request, etag, media.sizeBytes);
      mediaHeaders(reply, etag);
      if (decision.kind === 'not-modified') return reply.code(304).send();
      reply.type(media.mediaType);
      if (decision.kind === 'range') {
        const { start, end } = decision.range;
        reply.code(206).header('content-range', `bytes ${start}-${end}/${media.sizeBytes}`).header('content-length', end - start + 1);
        return reply.send(request.method === 'HEAD' ? Readable.from([]) : await open(decision.range));
      }
      reply.code(200).header('content-length', media.sizeBytes);
      // HEAD: the same headers, storage untouched (Fastify drains the empty stream and sends no body).
      return reply.send(request.method === 'HEAD' ? Readable.from([]) : await open());
    },
  });

  app.route({
    ...operationRoute('listAudio'),
    schema: {
      description: 'Needs media.read. Records only (ids, references, types, sizes, SHA-256, durations); read the bytes with readAudio. Follow nextCursor.',
      querystring: z.strictObject({
        limit: z.coerce.number().int().min(1).max(MEDIA_LIMITS.listPage).default(50).describe(`Media per page, at most ${MEDIA_LIMITS.listPage}.`),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page (opaque).'),
      }),
      docs: { responses: { 200: { description: "A page of this installation's stored media, newest first, and the organization's storage." } } },
      examples: listAudioExamples,
    },
    handler: async (request) => envelope('service.media-audio-list', await listAudio(db, runtimeCaller(request), request.query)),
  });

  app.route({
    ...operationRoute('getAudioMetadata'),
    schema: {
      description: "Needs media.read. Another organization's or installation's mediaId answers exactly like a missing one (404 media_not_found).",
      params: mediaParams,
      problems: ['media_not_found'],
      docs: { responses: { 200: { description: 'The record of one stored media (service.media-audio-record envelope), no bytes.' } } },
      examples: getAudioMetadataExamples,
    },
    handler: async (request) => envelope('service.media-audio-record', await getAudio(db, runtimeCaller(request), request.params.mediaId)),
  });

  app.route({
    ...operationRoute('deleteAudio'),
    schema: {
      description:
        'Needs media.write. The media stops being readable at once; its bytes are removed from storage and its size is freed. A deleted (or foreign, or ' +
        'missing) mediaId is 404 media_not_found, so a retried delete after a lost answer sees 404. The record stays as a tombstone (who deleted it, when). ' +
        'A store that fails to remove the bytes is 503 media_deletion_pending with Retry-After: the media is already deleted for every reader, its size ' +
        '(heldBytes) stays counted until a retried DELETE or the sweep confirms the removal.',
      params: mediaParams,
      problems: ['media_not_found', 'media_deletion_pending'],
      docs: { responses: { 200: { description: 'Deleted: its bytes are gone from storage and its size is freed (service.media-deletion envelope).' } } },
      examples: deleteAudioExamples,
    },
    handler: async (request) => {
      const deleted = await deleteAudio(db, mediaStore, runtimeCaller(request), request.params.mediaId);
      return envelope('service.media-deletion', { ...deleted, deleted: true as const });
    },
  });
};
