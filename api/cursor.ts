// Opaque pagination cursors: base64url JSON, validated on the way back in.
import type { z } from 'zod';
import { AppError } from '../domain/errors.ts';

export const encodeCursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new AppError('invalid_request', 'The cursor is not one this API returned.', { extensions: { errors: [{ pointer: '/querystring/cursor', message: 'invalid cursor' }] } });
  }
}
