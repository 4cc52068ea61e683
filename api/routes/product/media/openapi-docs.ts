// What the media routes (index.ts) pass to the OpenAPI document beside their descriptions: the raw
// audio request body, the binary 200/206 of readAudio, and one named set of examples per operation,
// built with the SDK's own envelope helper so they are what the runtime answers (redocly checks
// them in CI).
import { AUDIO_UPLOAD_CONTENT_TYPES, envelope, MEDIA_LIMITS } from '@hosted-notes/runtime-sdk';
import type { AudioMedia, AudioMediaList, AudioUpload, MediaDeletion, MediaStorage } from '@hosted-notes/runtime-sdk';
import type { OperationExamples } from '../../../openapi-examples.ts';

const binary = { type: 'string', format: 'binary' } as const;
const audioTypes = ['audio/webm', 'audio/ogg', 'audio/mp4'] as const;

/** uploadAudio's body: the raw audio bytes, under any of the accepted Content-Types. */
export const audioUploadRequestBody = {
  required: true,
  description:
    `The audio file itself, at most ${MEDIA_LIMITS.maxAudioBytes} bytes (3 MiB), streamed as the body: no base64, no multipart. The Content-Type may be any of ` +
    'these; the service recognizes WebM, Ogg or MP4 audio from the bytes and serves it back with the type it recognized.',
  content: Object.fromEntries(AUDIO_UPLOAD_CONTENT_TYPES.map((type) => [type, { schema: { ...binary, maxLength: MEDIA_LIMITS.maxAudioBytes } }])),
};

/** readAudio's 200 and 206 bodies: the stored bytes, under the type recognized at upload. */
export const audioBytesContent = Object.fromEntries(audioTypes.map((type) => [type, { schema: { ...binary, description: 'The stored bytes (or the requested range of them).' } }]));

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

export const uploadAudioExamples: OperationExamples = {
  responses: {
    201: { value: envelope('service.media-audio', upload) },
    200: { value: envelope('service.media-audio', { ...upload, replayed: true }) },
  },
};
export const readAudioExamples: OperationExamples = { parameters: { mediaId } };
export const listAudioExamples: OperationExamples = { responses: { 200: { value: envelope('service.media-audio-list', list) } } };
export const getAudioMetadataExamples: OperationExamples = { parameters: { mediaId }, responses: { 200: { value: envelope('service.media-audio-record', media) } } };
export const deleteAudioExamples: OperationExamples = { parameters: { mediaId }, responses: { 200: { value: envelope('service.media-deletion', deletion) } } };
