// The set-up most metered-operation test files share: a scripted OpenAI-compatible provider, the
// real app with a worker on it, one runtime chain whose organization has a US$10 budget, and a
// client with that chain's credential; the provider's script is reset before each test. Read
// `chain` and `rt` inside hooks and tests (beforeAll fills them in).
import { beforeAll, beforeEach } from 'vitest';
import { useTestAppWithWorker } from './harness.ts';
import type { WorkerTestContext } from './harness.ts';
import { setBudget } from './intelligence.ts';
import { buildRuntimeChain, runtimeClient } from './product-runtime.ts';
import type { RuntimeChain, RuntimeClient } from './product-runtime.ts';
import type { ScriptedProvider } from './scripted-provider.ts';
import { useScriptedProvider } from './use-scripted-provider.ts';

export type MeteredRuntime = { provider: ScriptedProvider; ctx: WorkerTestContext; readonly chain: RuntimeChain; readonly rt: RuntimeClient };

export function useMeteredRuntime(name: string): MeteredRuntime {
  const provider = useScriptedProvider();
  const ctx = useTestAppWithWorker({ name, overrides: () => ({ intelligence: provider.intelligence() }) });
  const state = {} as { chain: RuntimeChain; rt: RuntimeClient };
  beforeAll(async () => {
    state.chain = await buildRuntimeChain(ctx.db.pool);
    state.rt = runtimeClient(ctx.app, state.chain.secret);
    await setBudget(ctx.db.pool, state.chain.organizationId, 10_000_000);
  });
  beforeEach(() => provider.reset());
  return {
    provider,
    ctx,
    get chain() {
      return state.chain;
    },
    get rt() {
      return state.rt;
    },
  };
}
