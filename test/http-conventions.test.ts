// Error bodies, request ids, OpenAPI and docs: the conventions every interface inherits.
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorCatalog } from '../domain/errors.ts';
import { redactPaths } from '../platform/logger.ts';
import { buildTestApp } from './support/app.ts';
import { createTestDatabase } from './support/database.ts';
import type { TestDatabase } from './support/database.ts';
import { accountWithToken, bearer } from './support/fixtures.ts';

let db: TestDatabase;
let app: FastifyInstance;
const logLines: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  app = await buildTestApp(db.pool, { logger: pino({ level: 'trace', redact: { paths: redactPaths, censor: '[redacted]' } }, sink) }, (probe) => {
    // Probe routes registered at the root, as any interface plugin's routes are: they inherit the
    // same parser, validator and error handler.
    probe.post('/__probe/echo', { schema: { body: z.object({ count: z.number().int() }) } }, async (request) => request.body);
    probe.get('/__probe/crash', async () => {
      throw new Error('secret internals');
    });
  });
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: `/problems/${code}`, title: expect.any(String), requestId: expect.any(String) });
  expect(body['requestId']).toBe(res.headers['x-request-id']);
  return body;
}

describe('problem+json', () => {
  it('answers an unknown route with 404 route_not_found', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/no/such/route' }), 404, 'route_not_found');
  });

  it('answers a known path with the wrong method with 405 method_not_allowed and Allow', async () => {
    const res = await app.inject({ method: 'DELETE', url: '/healthz' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers['allow']).toBe('GET, HEAD');
  });

  it('answers a malformed JSON body on a POST route with 400 malformed_json', async () => {
    const res = await app.inject({ method: 'POST', url: '/__probe/echo', headers: { 'content-type': 'application/json' }, payload: '{"broken": ' });
    expectProblem(res, 400, 'malformed_json');
  });

  it('answers a body with an unsupported content type with 415', async () => {
    const res = await app.inject({ method: 'POST', url: '/__probe/echo', headers: { 'content-type': 'application/x-yaml' }, payload: 'a: 1' });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('reports zod validation failures as 400 invalid_request with JSON pointers', async () => {
    const res = await app.inject({ method: 'POST', url: '/__probe/echo', payload: { count: 'many' } });
    const body = expectProblem(res, 400, 'invalid_request');
    expect(body['errors']).toEqual([expect.objectContaining({ pointer: '/body/count', message: expect.any(String) })]);
  });

  it('hides internal failures behind 500 internal_error', async () => {
    const res = await app.inject({ method: 'GET', url: '/__probe/crash' });
    const body = expectProblem(res, 500, 'internal_error');
    expect(JSON.stringify(body)).not.toContain('secret internals');
  });

  it('describes each problem type at its type URI', async () => {
    const res = await app.inject({ method: 'GET', url: '/problems/invalid_token' });
    expect(res.json()).toEqual({ type: '/problems/invalid_token', code: 'invalid_token', status: 401, title: errorCatalog.invalid_token.title });
    expectProblem(await app.inject({ method: 'GET', url: '/problems/nope' }), 404, 'not_found');
  });
});

describe('request ids', () => {
  it('generates one per response and keeps a sane incoming X-Request-Id', async () => {
    const generated = await app.inject({ method: 'GET', url: '/healthz' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers['x-request-id']).toBe('trace-abc.123');
    const replaced = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the request id on every log line of a request and never logs the bearer token', async () => {
    const { token } = await accountWithToken(db.pool);
    logLines.length = 0;
    const res = await app.inject({ method: 'GET', url: '/api/dev/me', headers: { ...bearer(token), 'x-request-id': 'log-check-1' } });
    expect(res.statusCode).toBe(200);
    const lines = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['requestId'] === 'log-check-1');
    expect(lines.length).toBeGreaterThanOrEqual(2); // incoming request + request completed
    expect(logLines.join('')).not.toContain(token);
  });

  it('redacts credentials that a log call passes explicitly', async () => {
    logLines.length = 0;
    app.log.info({ token: 'hnp_pat_should-not-appear', req: { headers: { authorization: 'Bearer also-hidden' } } }, 'probe');
    const text = logLines.join('');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('should-not-appear');
    expect(text).not.toContain('also-hidden');
  });
});

describe('OpenAPI and docs', () => {
  it('serves an OpenAPI 3.1 document generated from the zod schemas', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { openapi: string; paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths).toHaveProperty('/api/dev/me');
    expect(doc.paths).toHaveProperty('/readyz');
    expect(doc.components.schemas).toHaveProperty('Problem');
  });

  it('serves the docs UI', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});
