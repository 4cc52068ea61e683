// Opaque pagination cursors: base64url JSON, validated on the way back in. Clients pass back what
// they were given and never build one, so the encoding can change without breaking them.
import type { z } from 'zod';
import { AppError } from './errors.ts';

export const encodeCursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>, pointer = '/querystring/cursor'): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new AppError('invalid_request', 'The cursor is not one this API returned.', { extensions: { errors: [{ pointer, message: 'invalid cursor' }] } });
  }
}
