// A scripted OpenAI-compatible provider (./scripted-provider.ts) listening for the whole test file:
// started before the file's first hook that needs it, closed after its last test. Its own module so
// that the benchmark can import the provider without vitest.
import { afterAll, beforeAll } from 'vitest';
import { ScriptedProvider } from './scripted-provider.ts';

export function useScriptedProvider(): ScriptedProvider {
  const provider = new ScriptedProvider();
  beforeAll(async () => {
    await provider.start();
  });
  afterAll(async () => {
    await provider.close();
  });
  return provider;
}
