// Metered intelligence through LiteLLM's proxy (pinned 1.80.5; never 1.107.0, a compromised
// release), a maintained server that speaks the OpenAI API, in front of our scripted provider: the
// production `openai` client → LiteLLM → the scripted upstream. Opt-in, not part of `npm test`
// (installing LiteLLM takes minutes): `npm run test:litellm` installs it into .tools/litellm and runs
// this file. What it shows: an over-reporting upstream is still charged only the reservation through
// a proxy, the proxy's refusal of an image parameter it does not know is avoided, and an image the
// proxy answers as a URL is fetched under the egress rules.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestAppWithWorker } from '../support/harness.ts';
import { buildRuntimeChain, runtimeClient } from '../support/product-runtime.ts';
import { ScriptedProvider, tinyImages } from '../support/scripted-provider.ts';
import { generateBody, imageBody, orgLedger, setBudget } from '../support/intelligence.ts';
import type { Json } from '../support/dev-client.ts';

const LITELLM = resolve(process.env['LITELLM_BIN'] ?? '.tools/litellm/bin/litellm');
const MASTER_KEY = 'sk-litellm-master-test';

const upstream = new ScriptedProvider();
let proxy: ChildProcess | null = null;
let proxyUrl = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

beforeAll(async () => {
  await upstream.start();
  const dir = mkdtempSync(join(tmpdir(), 'litellm-'));
  const config = join(dir, 'config.yaml');
  const model = (name: string) => `  - model_name: ${name}\n    litellm_params:\n      model: openai/${name}\n      api_base: ${upstream.url}\n      api_key: sk-upstream\n`;
  writeFileSync(config, `model_list:\n${model('scripted-model')}${model('scripted-image')}general_settings:\n  master_key: ${MASTER_KEY}\n`);
  const port = await freePort();
  proxyUrl = `http://127.0.0.1:${port}`;
  // The cost map shipped in the package (no download), no telemetry: nothing leaves loopback.
  proxy = spawn(LITELLM, ['--config', config, '--host', '127.0.0.1', '--port', String(port)], {
    env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True', LITELLM_TELEMETRY: 'False' },
    stdio: 'ignore',
  });
  for (let i = 0; i < 240; i++) {
    if (await fetch(`${proxyUrl}/health/liveliness`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`LiteLLM did not start at ${proxyUrl} (is it installed? npm run test:litellm installs it)`);
}, 120_000);
afterAll(async () => {
  proxy?.kill('SIGINT');
  await upstream.close();
});

const ctx = useTestAppWithWorker({
  name: 'litellm-proxy',
  overrides: () => {
    const settings = upstream.settings();
    return {
      intelligence: upstream.intelligence({
        provider: { ...settings.provider, baseUrl: `${proxyUrl}/v1`, apiKey: MASTER_KEY },
        text: { ...settings.text, maxOutputTokens: 16_384 },
      }),
    };
  },
});

const data = (res: { data: Json }) => (res.data as { data: Record<string, unknown> }).data;

describe('through LiteLLM 1.80.5', () => {
  it('an upstream reporting 50,000 prompt tokens for a 64-token request is charged its reservation; the overrun is recorded', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await setBudget(ctx.db.pool, chain.organizationId, 5_000, 10);
    const rt = runtimeClient(ctx.app, chain.secret);
    upstream.fallback = { kind: 'chat', chunks: ['A warm-up.'], usage: { prompt_tokens: 50_000, completion_tokens: 10 } };
    const res = await rt.request('POST', '/intelligence/education/generate', { body: { ...generateBody(), maxOutputTokens: 64 }, headers: { 'idempotency-key': randomUUID() } });
    expect(res.statusCode, res.body).toBe(200);
    const receipt = data(res)['receipt'] as { costMicrodollars: number; reservedMicrodollars: number; reportedCostMicrodollars: number; overrunMicrodollars: number };
    expect(receipt.reportedCostMicrodollars).toBe(50_040);
    expect(receipt.costMicrodollars).toBe(receipt.reservedMicrodollars);
    expect(receipt.overrunMicrodollars).toBe(50_040 - receipt.reservedMicrodollars);
    expect(await orgLedger(ctx.db.pool, chain.organizationId)).toEqual({ committed: receipt.reservedMicrodollars, inFlight: 0 });
    // LiteLLM passed our cap through.
    expect(upstream.calls[0]!.body['max_completion_tokens']).toBe(64);
  });

  it('images: accepted by the proxy (no response_format it would refuse), base64 or a URL fetched under the egress rules', async () => {
    const chain = await buildRuntimeChain(ctx.db.pool);
    await setBudget(ctx.db.pool, chain.organizationId, 1_000_000, 10);
    const rt = runtimeClient(ctx.app, chain.secret);
    upstream.fallback = { kind: 'image', bytes: tinyImages.png };
    const b64 = await rt.request('POST', '/intelligence/education/generate-image', { body: imageBody(), headers: { 'idempotency-key': randomUUID() } });
    expect(b64.statusCode, b64.body).toBe(200);
    upstream.files.set('img.png', { kind: 'bytes', bytes: tinyImages.png });
    upstream.fallback = { kind: 'image-url', url: upstream.fileUrl('img.png') };
    const byUrl = await rt.request('POST', '/intelligence/education/generate-image', { body: imageBody(), headers: { 'idempotency-key': randomUUID() } });
    expect(byUrl.statusCode, byUrl.body).toBe(200);
    expect(data(byUrl)).toMatchObject({ mediaType: 'image/png', receipt: { outcome: 'settled' } });
    expect(upstream.fileRequests).toEqual(['img.png']);
  });
});
