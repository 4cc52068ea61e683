// The BlobStore the service runs with, from its settings (platform/config.ts mediaStorageFrom).
import type { DatabasePool } from 'slonik';
import type { BlobStore } from './blob-store.ts';
import { createPostgresBlobStore } from './postgres-blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';
import type { S3BlobStoreSettings } from './s3-blob-store.ts';

export type MediaStorageSettings = { backend: 'postgres' } | { backend: 's3'; s3: S3BlobStoreSettings };

export function createBlobStore(settings: MediaStorageSettings, db: DatabasePool): BlobStore {
  return settings.backend === 's3' ? createS3BlobStore(settings.s3) : createPostgresBlobStore(db);
}
