// Automation discovery: catalog, adapters (graph-provider), templates and their download, and the
// gateway's generated OpenAPI (public); everything else behind the Developer entitlement.
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/harness.ts';
import { accountWithToken, bearer } from './support/fixtures.ts';

const ctx = useTestApp();
let app: FastifyInstance;
let token: string;
beforeAll(async () => {
  app = ctx.app;
  ({ token } = await accountWithToken(ctx.db.pool, 'developer_agent'));
});

const get = (url: string, t = token) => app.inject({ method: 'GET', url: `/api/dev/automation${url}`, headers: bearer(t) });

describe('automation discovery', () => {
  it('publishes the catalog with the action kinds and proposal states', async () => {
    const res = await get('/catalog');
    expect(res.json()).toMatchObject({
      version: 1,
      actionKinds: [expect.objectContaining({ kind: 'note.write' }), expect.objectContaining({ kind: 'note.transaction' }), expect.objectContaining({ kind: 'memory.promote' })],
      proposalStates: ['proposed', 'pending_review', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed', 'undoing', 'undone'],
    });
  });

  it('describes the graph-provider boundary, which never receives the native credential', async () => {
    const res = await get('/adapters/graph-provider');
    expect(res.json()).toMatchObject({ bridge: 'graph-provider', direction: 'ingest', actionKinds: [] });
    expect(res.json().credentials).toMatch(/never receives the native provider credential/i);
    expect((await get('/adapters/nope')).statusCode).toBe(404);
  });

  it('lists, shows and downloads templates as configuration, not authority', async () => {
    const list = await get('/templates');
    expect(list.json().templates.map((t: { id: string }) => t.id)).toEqual(['inbox-capture', 'weekly-review']);
    expect((await get('/templates/inbox-capture')).json()).toMatchObject({ id: 'inbox-capture', version: 1, configuration: { trigger: { type: 'event' } } });
    const download = await get('/templates/weekly-review/download');
    expect(download.headers['content-disposition']).toBe('attachment; filename="weekly-review.v1.json"');
    expect(download.json()).toMatchObject({ schema: 'hnp.automation-template', version: 1, authority: expect.stringMatching(/^None/) });
    expect((await get('/templates/missing')).statusCode).toBe(404);
  });

  it('serves an OpenAPI description generated from the same schemas, automation paths only', async () => {
    const doc = (await get('/openapi.json')).json() as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/dev/automation/proposals', '/api/dev/automation/proposals/{id}/approve', '/api/dev/automation/catalog']));
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/api/dev/automation'))).toBe(true);
  });

  it('serves that description openly, as /openapi.json is: no token, any token, nothing counted', async () => {
    const premium = await accountWithToken(ctx.db.pool, 'premium');
    for (const headers of [{}, bearer('hnp_pat_not-a-token'), bearer(premium.token)]) {
      const res = await app.inject({ method: 'GET', url: '/api/dev/automation/openapi.json', headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.headers['ratelimit']).toBeUndefined(); // counted answers carry RateLimit
      expect((res.json() as { info: { title: string } }).info.title).toContain('automation gateway');
    }
    const whole = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['ratelimit']).toBeUndefined();
    // The rest of the gateway still needs a token.
    expect((await app.inject({ method: 'GET', url: '/api/dev/automation/templates' })).statusCode).toBe(401);
  });

  it('needs the Developer entitlement', async () => {
    const premium = await accountWithToken(ctx.db.pool, 'premium');
    expect((await get('/catalog', premium.token)).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: '/api/dev/automation/catalog' })).statusCode).toBe(401);
  });
});
