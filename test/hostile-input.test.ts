// Hostile input at the HTTP edge: every one of these answered 500 (or a non-problem body) once.
// Each must be a 4xx problem with a stable code, and nothing may be half-written.
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { MAX_JSON_DEPTH } from '../api/edge.ts';
import { createWorkspace } from '../domain/identity/workspaces.ts';
import { useCaller } from './support/harness.ts';
import type { DevClient, DevResponse } from './support/dev-client.ts';

const ctx = useCaller({ listen: true, plan: 'team' });
let api: DevClient;
let token: string;
let mappingId: string;
let vaultId: string;
let workspaceId: string;

beforeAll(async () => {
  ({ api, token, mappingId, vaultId } = ctx);
  workspaceId = (await createWorkspace(ctx.db.pool, { name: 'Hostile', ownerAccountId: ctx.accountId })).id;
});

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: `/problems/${code}` });
  return body;
}

const rowsIn = async (table: 'notes' | 'note_events') =>
  ctx.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE vault_id = ${vaultId}`);

const deep = (depth: number, leaf: unknown = 1): string => '{"a":'.repeat(depth) + JSON.stringify(leaf) + '}'.repeat(depth);

describe('U+0000 in any string', () => {
  const nulCases: Array<[string, 'POST', string, () => unknown, string]> = [
    ['REST apply content', 'POST', '/api/dev/notes', () => ({ mappingId, path: 'Nul/Apply.md', content: 'a\u0000b', dryRun: false }), '/body/content'],
    ['REST preview content', 'POST', '/api/dev/notes', () => ({ mappingId, path: 'Nul/Preview.md', content: 'a\u0000b' }), '/body/content'],
    [
      'transaction action content',
      'POST',
      '/api/dev/transactions',
      () => ({ mappingId, dryRun: false, actions: [{ type: 'write-note', path: 'Nul/Tx.md', content: '\u0000' }] }),
      '/body/actions/0/content',
    ],
    ['event data', 'POST', '/api/dev/automation/events', () => ({ workspaceId, type: 'capture.created', source: 'test', data: { text: 'x\u0000' } }), '/body/data/text'],
    ['event source', 'POST', '/api/dev/automation/events', () => ({ workspaceId, type: 'capture.created', source: 'te\u0000st' }), '/body/source'],
    ['trigger name', 'POST', '/api/dev/automation/triggers', () => ({ workspaceId, name: 'n\u0000', kind: 'event', eventType: 'x' }), '/body/name'],
    ['trigger filter', 'POST', '/api/dev/automation/triggers', () => ({ workspaceId, name: 'n', kind: 'event', eventType: 'x', filter: { k: '\u0000' } }), '/body/filter/k'],
    ['proposal summary', 'POST', '/api/dev/automation/proposals', () => ({ workspaceId, bridge: 'b', summary: '\u0000' }), '/body/summary'],
    [
      'proposal action content',
      'POST',
      '/api/dev/automation/proposals',
      () => ({ workspaceId, bridge: 'b', action: { kind: 'note.write', mappingId, path: 'Nul/P.md', content: '\u0000' } }),
      '/body/action/content',
    ],
    ['endpoint description', 'POST', '/api/dev/automation/endpoints', () => ({ workspaceId, url: 'https://example.com/h', description: '\u0000' }), '/body/description'],
    ['an object key', 'POST', '/api/dev/automation/events', () => ({ workspaceId, type: 't', source: 's', data: { 'k\u0000': 1 } }), '/body/data/k\u0000'],
  ];

  it.each(nulCases)('%s is refused with 400 invalid_character and a pointer', async (_name, method, url, body, pointer) => {
    const before = [await rowsIn('notes'), await rowsIn('note_events')];
    const res = await api.request(method, url, { body: body(), headers: { 'idempotency-key': `nul-${url}-${pointer}` } });
    const problem = expectProblem(res, 400, 'invalid_character');
    expect(problem['errors']).toEqual([expect.objectContaining({ pointer, code: 'nul_character' })]);
    expect([await rowsIn('notes'), await rowsIn('note_events')]).toEqual(before);
  });

  it('refuses U+0000 in query strings and path parameters', async () => {
    expectProblem(await api.request('GET', `/api/dev/notes?mappingId=${mappingId}&cursor=%00`), 400, 'invalid_character');
    expectProblem(await api.request('GET', `/api/dev/notes/Inbox/a%00b.md?mappingId=${mappingId}`), 400, 'invalid_character');
    expectProblem(await api.request('DELETE', `/api/dev/notes/Inbox/a%00b.md?mappingId=${mappingId}`), 400, 'invalid_character');
  });

  it('keeps the preview and the apply of one body consistent', async () => {
    const body = { mappingId, path: 'Zero/Same.md', content: 'fine' };
    expect((await api.preview(body)).statusCode).toBe(200);
    expect((await api.apply(body)).statusCode).toBe(201);
  });
});

describe('JSON nesting depth', () => {
  it('refuses 60,000-deep JSON in event data and trigger filters with 400 json_too_deep', async () => {
    for (const [url, field] of [
      ['/api/dev/automation/events', 'data'],
      ['/api/dev/automation/triggers', 'filter'],
    ] as const) {
      const payload = `{"workspaceId":"${workspaceId}","type":"t","source":"s","name":"n","kind":"event","eventType":"t","${field}":${deep(60_000)}}`;
      expect(payload.length).toBeLessThan(512 * 1024);
      const res = await ctx.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
      const problem = expectProblem(res, 400, 'json_too_deep');
      expect(problem['maxDepth']).toBe(MAX_JSON_DEPTH);
    }
  });

  it(`accepts nesting up to ${MAX_JSON_DEPTH} levels and refuses one more`, async () => {
    const at = (depth: number) =>
      ctx.app.inject({
        method: 'POST',
        url: '/api/dev/automation/events',
        // The body object is level 1; data's objects are the levels below it.
        payload: `{"workspaceId":"${workspaceId}","type":"depth.test","source":"s","data":${deep(depth - 1)}}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
    expect((await at(MAX_JSON_DEPTH)).statusCode).toBe(201);
    expectProblem(await at(MAX_JSON_DEPTH + 1), 400, 'json_too_deep');
  });
});

describe("the framework's and the HTTP server's refusals", () => {
  it('answers an over-long path segment with 414 uri_too_long', async () => {
    expectProblem(await api.request('GET', `/api/dev/notes/${'a'.repeat(5_000)}/b.md?mappingId=${mappingId}`), 414, 'uri_too_long');
  });

  it('answers an undecodable URL with 400 problem+json', async () => {
    expectProblem(await api.request('GET', `/api/dev/notes/%E0%A4%A/b.md?mappingId=${mappingId}`), 400, 'invalid_request');
  });

  it('answers headers larger than the server takes with 431 headers_too_large', async () => {
    const res = await rawRequest({ path: '/healthz', headers: { 'x-padding': 'p'.repeat(20_000) } });
    expectProblem(res, 431, 'headers_too_large');
  });

  it('answers a wrong method on a REST route with 405 and Allow', async () => {
    const put = await api.request('PATCH', '/api/dev/notes');
    expectProblem(put, 405, 'method_not_allowed');
    expect(put.headers['allow']).toBe('GET, HEAD, POST');
    const post = await api.request('POST', `/api/dev/notes/Inbox/Note.md?mappingId=${mappingId}`);
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers['allow']).toBe('GET, HEAD, DELETE');
    expectProblem(await api.request('GET', '/api/dev/no-such-thing'), 404, 'route_not_found');
  });

  it('refuses a duplicated Authorization header instead of taking the first', async () => {
    const res = await rawRequest({ path: '/api/dev/me', headers: { authorization: [`Bearer ${token}`, 'Bearer hnp_pat_other'] } });
    expectProblem(res, 400, 'duplicate_header');
    const once = await rawRequest({ path: '/api/dev/me', headers: { authorization: `Bearer ${token}` } });
    expect(once.statusCode).toBe(200);
  });
});

describe('note path limits are one rule on write and read', () => {
  it('writes and reads segments up to 255 bytes, and refuses 256 the same way on both', async () => {
    for (const length of [99, 100, 101, 200, 252]) {
      const path = `Long/${'n'.repeat(length)}.md`;
      expect((await api.apply({ mappingId, path, content: `${length}` })).statusCode).toBe(201);
      const read = await api.read(mappingId, path);
      expect(read.statusCode).toBe(200);
      expect(read.data['content']).toBe(`${length}`);
    }
    const tooLong = `Long/${'n'.repeat(253)}.md`;
    const write = await api.apply({ mappingId, path: tooLong, content: 'x' });
    const read = await api.read(mappingId, tooLong);
    for (const res of [write, read]) {
      const problem = expectProblem(res, 400, 'invalid_path');
      expect(problem['detail']).toContain('longer than 255 bytes');
    }
  });

  it('refuses bidirectional controls and invisible characters in paths', async () => {
    for (const path of ['Inbox/invoice\u202Egpj.md', 'Inbox/zero\u200Bwidth.md', 'Inbox/\uFEFFbom.md', 'Inbox/iso\u2066late.md']) {
      expectProblem(await api.apply({ mappingId, path, content: 'x' }), 400, 'invalid_path');
    }
    // Joiners that written text needs stay allowed.
    expect((await api.apply({ mappingId, path: 'Inbox/👩\u200D💻 notes.md', content: 'x' })).statusCode).toBe(201);
  });
});

/** A real HTTP request (inject cannot send repeated headers or overflow the parser). */
function rawRequest(options: { path: string; headers: Record<string, string | string[]> }): Promise<DevResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${ctx.url}${options.path}`, { method: 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body, data: {} } as unknown as DevResponse);
      });
    });
    req.on('error', reject);
    req.end();
  });
}
