// Nothing secret reaches a log: with every logger of the app at trace, a generate that settles, one
// the provider refuses and one that breaks off leave no provider key, no prompt or source text and no
// generated text in any log line, and no service credential.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, it } from 'vitest';
import { useTestAppWithWorker } from './support/harness.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import { SCRIPTED_API_KEY } from './support/scripted-provider.ts';
import { generateBody, setBudget } from './support/intelligence.ts';
import { useScriptedProvider } from './support/use-scripted-provider.ts';

const provider = useScriptedProvider();
const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString());
    done();
  },
});
const ctx = useTestAppWithWorker({
  name: 'intelligence-logging',
  overrides: () => ({ intelligence: provider.intelligence(), logger: pino({ level: 'trace' }, sink) }),
});

it('logs requests and outcomes, never the key, the prompt, the sources or the answer', async () => {
  const chain = await buildRuntimeChain(ctx.db.pool);
  await setBudget(ctx.db.pool, chain.organizationId, 10_000_000);
  const rt = runtimeClient(ctx.app, chain.secret);
  const body = { ...generateBody('SECRET-TASK-TEXT about fractions'), sources: [{ id: 'src-1', title: 'SECRET-SOURCE-TITLE', excerpt: 'SECRET-SOURCE-EXCERPT' }] };
  provider.script(
    { kind: 'chat', chunks: ['SECRET-ANSWER-TEXT'] },
    { kind: 'error', status: 400 },
    { kind: 'drop', chunks: ['SECRET-PARTIAL-TEXT'] },
  );
  for (let i = 0; i < 3; i++) await rt.request('POST', '/intelligence/education/generate', { body, headers: { 'idempotency-key': randomUUID() } });
  expect(provider.calls).toHaveLength(3);
  const log = lines.join('');
  expect(log).toContain('/api/product/v1/intelligence/education/generate');
  for (const secret of [SCRIPTED_API_KEY, 'SECRET-TASK-TEXT', 'SECRET-SOURCE-TITLE', 'SECRET-SOURCE-EXCERPT', 'SECRET-ANSWER-TEXT', 'SECRET-PARTIAL-TEXT', chain.secret]) {
    expect(log).not.toContain(secret);
  }
});
