// Bad input to the metered operations: every field and every bound of generate and generate-image,
// unknown fields (strict), the Idempotency-Key, content types, truncated and oversized bodies, the
// scope; and a service with no provider, which answers the unavailable envelope and generates
// nothing. Nothing refused here reaches the provider or leaves a reservation.
import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp } from './support/app.ts';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeClient } from './support/product-runtime.ts';
import { generateBody, imageBody, reservations, setBudget } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const ctx = useTestAppWithWorker({ name: 'intelligence-input', overrides: () => ({ intelligence: provider.intelligence() }) });

let chain: RuntimeChain;
let rt: RuntimeClient;
beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  rt = runtimeClient(ctx.app, chain.secret);
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000);
});
beforeEach(() => provider.reset());

const long = (n: number) => 'x'.repeat(n);
const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
type Body = Record<string, unknown>;
const with_ = (patch: (b: Body) => void) => {
  const b = generateBody() as unknown as Body;
  patch(b);
  return b;
};
const intent = (b: Body) => b['intent'] as Body;
const course = (b: Body) => b['course'] as Body;
const source0 = (b: Body) => (b['sources'] as Body[])[0]!;
const standard0 = (b: Body) => (b['standards'] as Body[])[0]!;

describe('generate refuses every field out of bounds with invalid_request and a pointer, before anything is reserved', () => {
  it.each([
    ['no intent', with_((b) => delete b['intent']), '/body/intent'],
    ['an unknown context', with_((b) => (intent(b)['context'] = 'grade')), '/body/intent/context'],
    ['an empty task', with_((b) => (intent(b)['task'] = '')), '/body/intent/task'],
    ['a task of 4,001 characters', with_((b) => (intent(b)['task'] = long(4_001))), '/body/intent/task'],
    ['an unknown format', with_((b) => (b['format'] = 'html')), '/body/format'],
    ['maxOutputTokens below 16', with_((b) => (b['maxOutputTokens'] = 15)), '/body/maxOutputTokens'],
    ['maxOutputTokens above 16,384', with_((b) => (b['maxOutputTokens'] = 16_385)), '/body/maxOutputTokens'],
    ['a fractional maxOutputTokens', with_((b) => (b['maxOutputTokens'] = 100.5)), '/body/maxOutputTokens'],
    ['21 standards', with_((b) => (b['standards'] = many(21, (i) => ({ id: `s${i}`, statement: 'x' })))), '/body/standards'],
    ['a standard statement of 1,001 characters', with_((b) => (standard0(b)['statement'] = long(1_001))), '/body/standards/0/statement'],
    ['a standard without a statement', with_((b) => delete standard0(b)['statement']), '/body/standards/0/statement'],
    ['14 grade levels', with_((b) => (course(b)['gradeLevels'] = many(14, (i) => `${i}`))), '/body/course/gradeLevels'],
    ['a locale that is not a language tag', with_((b) => (course(b)['locale'] = 'english please')), '/body/course/locale'],
    ['11 sources', with_((b) => (b['sources'] = many(11, (i) => ({ id: `s${i}`, title: 't', excerpt: 'e' })))), '/body/sources'],
    ['a source excerpt of 8,001 characters', with_((b) => (source0(b)['excerpt'] = long(8_001))), '/body/sources/0/excerpt'],
    ['an unknown top-level field', with_((b) => (b['temperature'] = 2)), '/body/temperature'],
    ['an unknown nested field', with_((b) => (source0(b)['url'] = 'https://example.com')), '/body/sources/0/url'],
    ['an education context of another version', with_((b) => (b['educationContext'] = { kind: 'partner.education-context', version: 2 })), '/body/educationContext/version'],
    [
      'a support group of four learners',
      with_((b) => (b['educationContext'] = { kind: 'partner.education-context', version: 1, classSupport: [{ category: 'reading-support', groupSize: 4 }] })),
      '/body/educationContext/classSupport/0/groupSize',
    ],
  ])('%s', async (_name, body, pointer) => {
    const res = await rt.request('POST', '/intelligence/education/generate', { body, headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.data).toMatchObject({ code: 'invalid_request' });
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, chain.installationId)).toHaveLength(0);
  });

  it('the largest valid request is accepted', async () => {
    const body = {
      intent: { context: 'create', task: long(4_000) },
      format: 'markdown',
      maxOutputTokens: 16_384,
      standards: many(20, (i) => ({ id: `s${i}`, code: long(100), statement: long(1_000), framework: long(200) })),
      course: { title: long(200), subject: long(100), gradeLevels: many(13, (i) => `${i}`), locale: 'en-US' },
      sources: many(10, (i) => ({ id: `src${i}`, title: long(300), excerpt: long(8_000), citation: long(500) })),
    };
    const res = await rt.request('POST', '/intelligence/education/generate', { body, headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode, res.body).toBe(200);
    // The output cap sent is the model's configured maximum (1,000 here), never the caller's larger ask.
    expect(provider.calls[0]!.body['max_completion_tokens']).toBe(1_000);
  });
});

describe('generate-image refuses every field out of bounds', () => {
  const brief = (patch: (b: Body) => void) => {
    const body = imageBody() as unknown as Body;
    patch(body['brief'] as Body);
    return body;
  };
  it.each([
    ['an unknown context', { ...imageBody(), context: 'grade' }, '/body/context'],
    ['an unknown output format', { ...imageBody(), outputFormat: 'gif' }, '/body/outputFormat'],
    ['an unknown image type', brief((b) => (b['type'] = 'photo')), '/body/brief/type'],
    ['an unknown orientation', brief((b) => (b['orientation'] = 'diagonal')), '/body/brief/orientation'],
    ['9 palette colours', brief((b) => (b['palette'] = many(9, (i) => `c${i}`))), '/body/brief/palette'],
    ['13 required elements', brief((b) => (b['requiredElements'] = many(13, (i) => `e${i}`))), '/body/brief/requiredElements'],
    ['13 exclusions', brief((b) => (b['exclusions'] = many(13, (i) => `e${i}`))), '/body/brief/exclusions'],
    ['no alt-text intent', brief((b) => delete b['altTextIntent']), '/body/brief/altTextIntent'],
    ['an audience of 301 characters', brief((b) => (b['audience'] = long(301))), '/body/brief/audience'],
    ['an unknown brief field', brief((b) => (b['seed'] = 42)), '/body/brief/seed'],
  ])('%s', async (_name, body, pointer) => {
    const res = await rt.request('POST', '/intelligence/education/generate-image', { body, headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode, res.body).toBe(400);
    expect((res.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain(pointer);
    expect(provider.calls).toHaveLength(0);
  });
});

describe('the request itself', () => {
  const raw = (payload: string, headers: Record<string, string>) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/product/v1/intelligence/education/generate',
      headers: { authorization: `Bearer ${chain.secret}`, 'idempotency-key': randomUUID(), ...headers },
      payload,
    });

  it.each([
    ['no Idempotency-Key', undefined, 400, 'idempotency_key_required'],
    ['an Idempotency-Key of 256 characters', long(256), 400, 'invalid_idempotency_key'],
    ['an Idempotency-Key with a space', 'two words', 400, 'invalid_idempotency_key'],
  ])('%s is refused before any reservation', async (_name, key, status, code) => {
    const res = await rt.request('POST', '/intelligence/education/generate', { body: generateBody(), headers: { 'idempotency-key': key } });
    expect(res.statusCode).toBe(status);
    expect(res.data).toMatchObject({ code });
    expect(provider.calls).toHaveLength(0);
  });

  it('a body that is not JSON, a truncated body and an oversized one are refused', async () => {
    const text = await raw('intent=plan', { 'content-type': 'text/plain' });
    expect(text.statusCode, text.body).toBe(415);
    const truncated = await raw(JSON.stringify(generateBody()).slice(0, 40), { 'content-type': 'application/json' });
    expect(truncated.statusCode).toBe(400);
    expect(truncated.json()).toMatchObject({ code: 'malformed_json' });
    const oversized = await raw(JSON.stringify({ ...generateBody(), padding: long(600 * 1024) }), { 'content-type': 'application/json' });
    expect(oversized.statusCode).toBe(413);
    expect(oversized.json()).toMatchObject({ code: 'payload_too_large' });
    expect(provider.calls).toHaveLength(0);
  });

  it('a credential without intelligence.execute is refused at the scope, for every intelligence route', async () => {
    const narrow = await buildRuntimeChain(ctx.db.pool, { scopes: ['notes.read'] });
    const nrt = runtimeClient(ctx.app, narrow.secret);
    for (const [method, path] of [
      ['POST', '/intelligence/education/generate'],
      ['POST', '/intelligence/education/generate-image'],
      ['GET', '/intelligence/usage'],
      ['GET', `/intelligence/usage/${randomUUID()}`],
      ['GET', '/intelligence/budget'],
    ] as const) {
      const res = await nrt.request(method, path, method === 'POST' ? { body: generateBody(), headers: { 'idempotency-key': randomUUID() } } : {});
      expect(res.statusCode, path).toBe(403);
      expect(res.data).toMatchObject({ code: 'scope_missing', failedLink: 'credential_scope' });
    }
    expect(provider.calls).toHaveLength(0);
  });
});

describe('no provider configured', () => {
  it('answers the unavailable envelope (capability_not_configured); nothing is generated or reserved; capabilities agree', async () => {
    const app = await buildTestApp(ctx.db.pool);
    const held = (await reservations(ctx.db.pool, chain.installationId)).length;
    try {
      const nrt = runtimeClient(app, chain.secret);
      for (const [path, body, kind] of [
        ['/intelligence/education/generate', generateBody(), 'service.generation'],
        ['/intelligence/education/generate-image', imageBody(), 'service.generated-image'],
      ] as const) {
        const res = await nrt.request('POST', path, { body, headers: { 'idempotency-key': randomUUID(), accept: 'application/x-ndjson' } });
        expect(res.statusCode).toBe(200);
        expect(res.data).toEqual({
          runtimeVersion: '1',
          kind,
          status: 'unavailable',
          data: null,
          missing: [{ part: 'intelligence', reason: 'capability_not_configured', detail: expect.any(String) }],
        });
      }
      const caps = (await nrt.capabilities()).data as { data: { capabilities: { id: string; available: boolean; reason: string }[] } };
      expect(caps.data.capabilities.find((c) => c.id === 'intelligence.generate')).toMatchObject({ available: false, reason: 'capability_not_configured' });
      // The deterministic education operations need no model: available with the scope alone.
      expect(caps.data.capabilities.find((c) => c.id === 'intelligence.education-deterministic')).toMatchObject({ available: true });
      expect(provider.calls).toHaveLength(0);
      expect(await reservations(ctx.db.pool, chain.installationId)).toHaveLength(held);
    } finally {
      await app.close();
    }
  });

  it('with a text model but no image model, only generate-image is unavailable', async () => {
    const app = await buildTestApp(ctx.db.pool, { intelligence: provider.intelligence({ image: null }) });
    try {
      const res = await runtimeClient(app, chain.secret).request('POST', '/intelligence/education/generate-image', { body: imageBody(), headers: { 'idempotency-key': randomUUID() } });
      expect(res.data).toMatchObject({ status: 'unavailable', missing: [{ reason: 'capability_not_configured' }] });
    } finally {
      await app.close();
    }
  });
});

describe('education context v1 on generate and generate-image', () => {
  const context = { kind: 'partner.education-context', version: 1, instructionalFocus: 'introducing equivalent fractions', classSupport: [{ category: 'english-language-development', groupSize: 6 }] };

  it('an aggregate context is accepted and reaches the model as advisory data', async () => {
    const res = await rt.request('POST', '/intelligence/education/generate', { body: { ...generateBody(), educationContext: context }, headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode, res.body).toBe(200);
    const sent = JSON.stringify(provider.calls[0]!.body);
    expect(sent).toContain('introducing equivalent fractions');
    expect(sent).toContain('english-language-development');
  });

  it.each([
    ['generate', '/intelligence/education/generate', generateBody()],
    ['generate-image', '/intelligence/education/generate-image', imageBody()],
  ])('%s refuses learner-record language before anything is reserved, naming the field, never the text', async (_name, path, body) => {
    const held = (await reservations(ctx.db.pool, chain.installationId)).length;
    const res = await rt.request('POST', path, {
      body: { ...body, educationContext: { ...context, constraints: ['Jayden struggles with long division'] } },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(res.statusCode).toBe(422);
    expect(res.data).toMatchObject({ code: 'education_context_learner_record', errors: [{ pointer: '/body/educationContext/constraints/0', code: 'name-before-learner-verb' }] });
    expect(res.body).not.toContain('Jayden');
    expect(provider.calls).toHaveLength(0);
    expect(await reservations(ctx.db.pool, chain.installationId)).toHaveLength(held);
  });
});
