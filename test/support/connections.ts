// Shared set-up for the delegated-connection route tests: a client for the /api/product/v1
// connection routes over app.inject (PUT included, and the public OAuth callback sent the way a
// browser does, without a credential), and a dump of every stored value to look for secrets in.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { z } from 'zod';
import type { DatabasePool } from '../../db/pool.ts';
import type { Json } from './dev-client.ts';

export const CALLBACK_PATH = '/api/product/v1/connections/provider/oauth/callback';

export type ConnectionsResponse = { statusCode: number; headers: Record<string, unknown>; data: Json; body: string };

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Requests to /api/product/v1 with the credential; `keep` sees every answer (to look for secrets in all of them). */
export function connectionsClient(app: FastifyInstance, secret: string, keep: (res: ConnectionsResponse) => void = () => undefined) {
  const send = async (method: Method, url: string, headers: Record<string, string>, body?: unknown): Promise<ConnectionsResponse> => {
    const res = await app.inject({ method, url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
    let data: Json = {};
    try {
      data = res.body ? (JSON.parse(res.body) as Json) : {};
    } catch {
      data = {};
    }
    const answer = { statusCode: res.statusCode, headers: res.headers, data, body: res.body };
    keep(answer);
    return answer;
  };
  const request = (method: Method, path: string, options: { body?: unknown; key?: string } = {}) =>
    send(
      method,
      `/api/product/v1${path}`,
      { authorization: `Bearer ${secret}`, 'x-service-runtime-version': '1', ...(options.key ? { 'idempotency-key': options.key } : {}) },
      options.body,
    );
  const c = (connectionId: string) => `/connections/${encodeURIComponent(connectionId)}`;
  return {
    request,
    capabilities: () => request('GET', '/capabilities'),
    start: (body: unknown) => request('POST', '/connections/google', { body }),
    /** The person's browser arriving from Google's consent screen: our callback's path and query, no credential. */
    callback: (redirect: URL) => send('GET', `${redirect.pathname}${redirect.search}`, {}),
    list: (query = '') => request('GET', `/connections${query}`),
    get: (connectionId: string) => request('GET', c(connectionId)),
    revoke: (connectionId: string) => request('DELETE', c(connectionId)),
    createDocument: (connectionId: string, body: unknown, key?: string) => request('POST', `${c(connectionId)}/drive/documents`, { body, ...(key ? { key } : {}) }),
    getDocument: (connectionId: string, fileId: string) => request('GET', `${c(connectionId)}/drive/documents/${encodeURIComponent(fileId)}`),
    updateDocument: (connectionId: string, fileId: string, body: unknown) => request('PUT', `${c(connectionId)}/drive/documents/${encodeURIComponent(fileId)}`, { body }),
    importDrive: (vaultId: string, body: unknown, key?: string) => request('POST', `/vaults/${vaultId}/imports/drive`, { body, ...(key ? { key } : {}) }),
    courses: (connectionId: string, query = '') => request('GET', `${c(connectionId)}/classroom/courses${query}`),
    roster: (connectionId: string, courseId: string, query = '') => request('GET', `${c(connectionId)}/classroom/courses/${encodeURIComponent(courseId)}/students${query}`),
    createAssignment: (connectionId: string, courseId: string, body: unknown, key?: string) =>
      request('POST', `${c(connectionId)}/classroom/courses/${encodeURIComponent(courseId)}/assignments`, { body, ...(key ? { key } : {}) }),
    attachments: (connectionId: string, courseId: string, courseWorkId: string, query = '') =>
      request('GET', `${c(connectionId)}/classroom/courses/${encodeURIComponent(courseId)}/assignments/${encodeURIComponent(courseWorkId)}/attachments${query}`),
    readNote: (vaultId: string, path: string) => request('GET', `/vaults/${vaultId}/note?path=${encodeURIComponent(path)}`),
  };
}
export type ConnectionsClient = ReturnType<typeof connectionsClient>;

/**
 * Every row of every table of the database as JSON text, one row a line (bytea columns come out as
 * hex: look for a secret's hex form too). For secrets that must never be stored in the clear.
 */
export async function everyStoredRow(db: DatabasePool): Promise<string> {
  const tables = await db.any(sql.type(z.object({ schema: z.string(), name: z.string() }))`
    SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
     ORDER BY 1, 2`);
  const lines: string[] = [];
  for (const table of tables) {
    const rows = await db.anyFirst(sql.type(z.object({ row: z.string() }))`SELECT row_to_json(t)::text AS row FROM ${sql.identifier([table.schema, table.name])} t`);
    lines.push(...rows);
  }
  return lines.join('\n');
}

/** The stored forms a secret could take: as is, and hex (bytea). */
export const storedForms = (secret: string): string[] => [secret, Buffer.from(secret, 'utf8').toString('hex')];
