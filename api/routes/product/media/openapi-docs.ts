// The OpenAPI document's tables for the media routes (api/openapi.ts merges them): the raw audio
// request body, the binary 200/206 of readAudio, the headers, and examples built with the SDK's
// own envelope helper so they are what the runtime answers (redocly checks them in CI).
import { AUDIO_UPLOAD_CONTENT_TYPES, envelope, MEDIA_LIMITS } from '@hosted-notes/runtime-sdk';
import type { AudioMedia, AudioMediaList, AudioUpload, MediaDeletion, MediaStorage } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';

type OperationDoc = {
  headers?: readonly string[];
  responses: Record<string, { description: string; headers?: readonly string[]; content?: Record<string, unknown> }>;
  requestBody?: { required: boolean; description: string; content: Record<string, Record<string, unknown>> };
};

const binary = { type: 'string', format: 'binary' } as const;
const audioTypes = ['audio/webm', 'audio/ogg', 'audio/mp4'] as const;
const audioContent = Object.fromEntries(audioTypes.map((type) => [type, { schema: { ...binary, description: 'The stored bytes (or the requested range of them).' } }]));

export const mediaOperationDocs: Record<string, OperationDoc> = {
  uploadAudio: {
    headers: ['RuntimeIdempotencyKey', 'MediaReference', 'MediaDurationSeconds'],
    requestBody: {
      required: true,
      description:
        `The audio file itself, at most ${MEDIA_LIMITS.maxAudioBytes} bytes (3 MiB), streamed as the body: no base64, no multipart. The Content-Type may be any of ` +
        'these; the service recognizes WebM, Ogg or MP4 audio from the bytes and serves it back with the type it recognized.',
      content: Object.fromEntries(AUDIO_UPLOAD_CONTENT_TYPES.map((type) => [type, { schema: { ...binary, maxLength: MEDIA_LIMITS.maxAudioBytes } }])),
    },
    responses: {
      201: { description: 'Stored: the mediaId, the recognized type, size, SHA-256, both durations, and the organization\'s storage after it.', headers: ['MediaLocation'] },
      200: { description: 'A replay of the upload this Idempotency-Key already made (replayed: true): the same mediaId, nothing stored twice.', headers: ['IdempotentReplayed'] },
    },
  },
  readAudio: {
    headers: ['MediaRange', 'MediaIfRange', 'MediaIfNoneMatch', 'MediaIfMatch'],
    responses: {
      200: { description: 'The whole media, with its recognized type and length.', headers: ['MediaETag', 'AcceptRanges'], content: audioContent },
      206: { description: 'One byte range of the media.', headers: ['MediaETag', 'AcceptRanges', 'ContentRange'], content: audioContent },
      304: { description: 'If-None-Match matched: the client holds these bytes.', headers: ['MediaETag'] },
    },
  },
  listAudio: { responses: { 200: { description: "A page of this installation's stored media, newest first, and the organization's storage." } } },
  getAudioMetadata: { responses: { 200: { description: 'The record of one stored media (service.media-audio-record envelope), no bytes.' } } },
  deleteAudio: { responses: { 200: { description: 'Deleted: its bytes are gone from storage and its size is freed (service.media-deletion envelope).' } } },
};

const mediaId = '5d0c3a1e-8f2b-4c6d-9e1a-3b5c7d9f1e2a';
const storage: MediaStorage = { limitBytes: 524_288_000, usedBytes: 18_940_311, availableBytes: 505_347_689 };
const media: AudioMedia = {
  mediaId,
  reference: 'lesson-42/reading-check/attempt-3',
  mediaType: 'audio/webm',
  container: 'webm',
  codec: 'opus',
  sizeBytes: 482_117,
  sha256: '9f2c6b1e4d7a8c3b5e0f1a2d4c6b8e0a1c3e5f7a9b1d3f5e7a9c1b3d5f7e9a1c',
  declaredDurationSeconds: 42.5,
  containerDurationSeconds: 42.46,
  durationSource: 'cluster-walk',
  createdAt: '2026-11-23T09:14:02.118Z',
};
const upload: AudioUpload = { ...media, replayed: false, storage };
const list: AudioMediaList = { media: [media], nextCursor: null, storage };
const deletion: MediaDeletion = { mediaId, deleted: true, freedBytes: media.sizeBytes, storage: { ...storage, usedBytes: storage.usedBytes - media.sizeBytes, availableBytes: storage.availableBytes + media.sizeBytes } };

export const mediaExamples: Record<string, OperationExamples> = {
  uploadAudio: {
    responses: {
      201: { value: envelope('service.media-audio', upload) },
      200: { value: envelope('service.media-audio', { ...upload, replayed: true }) },
    },
  },
  readAudio: { parameters: { mediaId } },
  listAudio: { responses: { 200: { value: envelope('service.media-audio-list', list) } } },
  getAudioMetadata: { parameters: { mediaId }, responses: { 200: { value: envelope('service.media-audio-record', media) } } },
  deleteAudio: { parameters: { mediaId }, responses: { 200: { value: envelope('service.media-deletion', deletion) } } },
};
