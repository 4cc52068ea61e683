// A small client for the Developer REST API over app.inject, so tests read like requests.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export type Json = Record<string, unknown> & { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export type DevResponse = LightMyRequestResponse & { body: string; data: Json };

function wrap(res: LightMyRequestResponse): DevResponse {
  let data: Json = {};
  try {
    data = res.body ? (JSON.parse(res.body) as Json) : {};
  } catch {
    data = {};
  }
  return Object.assign(res, { data });
}

export function devClient(app: FastifyInstance, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  const request = async (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    wrap(await app.inject({ method, url, headers: { ...auth, ...options.headers }, ...(options.body !== undefined ? { payload: options.body as object } : {}) }));
  return {
    request,
    inventory: (mappingId: string, query = '') => request('GET', `/api/dev/notes?mappingId=${mappingId}${query}`),
    read: (mappingId: string, path: string, headers: Record<string, string> = {}) =>
      request('GET', `/api/dev/notes/${path.split('/').map(encodeURIComponent).join('/')}?mappingId=${mappingId}`, { headers }),
    preview: (body: Json, headers: Record<string, string> = {}) => request('POST', '/api/dev/notes', { body, headers }),
    apply: (body: Json, headers: Record<string, string> = {}, key: string = randomUUID()) =>
      request('POST', '/api/dev/notes', { body: { ...body, dryRun: false }, headers: { 'idempotency-key': key, ...headers } }),
    remove: (mappingId: string, path: string, options: { dryRun?: boolean; headers?: Record<string, string> } = {}) =>
      request('DELETE', `/api/dev/notes/${path.split('/').map(encodeURIComponent).join('/')}?mappingId=${mappingId}&dryRun=${options.dryRun ?? true}`, {
        headers: options.headers ?? {},
      }),
    transaction: (body: Json, key?: string) => request('POST', '/api/dev/transactions', { body, headers: key ? { 'idempotency-key': key } : {} }),
    events: (mappingId: string, query = '') => request('GET', `/api/dev/events?mappingId=${mappingId}${query}`),
    trash: (mappingId: string, query = '') => request('GET', `/api/dev/trash?mappingId=${mappingId}${query}`),
    restore: (mappingId: string, trashId: string, dryRun: boolean, key?: string) =>
      request('POST', `/api/dev/trash/${trashId}/restore`, { body: { mappingId, dryRun }, headers: key ? { 'idempotency-key': key } : {} }),
  };
}

export type DevClient = ReturnType<typeof devClient>;
