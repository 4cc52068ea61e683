// The SDK conformance suite (test/support/runtime-conformance.ts) on both adapters: the hosted one
// against the real server on loopback (a full chain per case, built with the domain functions
// System Operations uses), the local one on a temporary folder with every network entry point
// trapped to throw. Then the two adapters on the same note must agree on everything but the vault
// id and the times.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostedRuntime } from '@hosted-notes/runtime-sdk/hosted';
import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
import { useTestApp } from './support/harness.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';
import { conformanceCases, trapNetwork } from './support/runtime-conformance.ts';

const ctx = useTestApp({ listen: true });
const folders: string[] = [];
const newFolder = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'runtime-sdk-'));
  folders.push(folder);
  return folder;
};
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

let foreign: RuntimeChain | undefined;
async function hostedTarget() {
  const chain = await buildRuntimeChain(ctx.db.pool);
  // Another organization's real vault: the credential holds no grant on it.
  foreign ??= await buildRuntimeChain(ctx.db.pool);
  return { chain, runtime: createHostedRuntime({ baseUrl: ctx.url, credential: chain.secret }), vaultId: chain.vaultId, foreignVaultId: foreign.vaultId };
}

describe('conformance: hosted adapter (real server on loopback)', () => {
  for (const testCase of conformanceCases) {
    it(testCase.name, async () => {
      await testCase.run(await hostedTarget());
    });
  }
});

describe('conformance: local adapter (networking trapped)', () => {
  for (const testCase of conformanceCases) {
    it(testCase.name, async () => {
      const root = await newFolder();
      const network = await trapNetwork();
      try {
        await testCase.run({ runtime: createLocalRuntime({ root }), vaultId: 'local', foreignVaultId: 'another-vault' });
      } finally {
        network.restore();
      }
      expect(network.calls).toEqual([]);
    });
  }
});

describe('both adapters on the same note', () => {
  it('agree on the note, its summary and the publication judgement (diff included), but for the vault id, the times and the provenance event', async () => {
    const { runtime: hosted, vaultId } = await hostedTarget();
    const local = createLocalRuntime({ root: await newFolder() });
    const path = 'Units/Ünit 3 — ratios.md';
    const content = '---\ntitle: "Ratios & rates"\naliases:\n  - rates\n  - "unit rates"\ndraft: false\nweight: 2.5\n---\n# Ratios\n\nSee [[Units/Unit 2|the last unit]], ![[chart.png]] and `[[not a link]]`.\n';
    const strip = <T extends object | null>(value: T) => {
      if (!value) return value;
      const { vaultId: _v, createdAt: _c, updatedAt: _u, ...rest } = value as Record<string, unknown>;
      return rest;
    };
    const previews = await Promise.all([hosted.publishNote(vaultId, { path, content }), local.publishNote('local', { path, content })]);
    expect(strip(previews[0].data)).toEqual(strip(previews[1].data));
    const applied = await Promise.all([hosted.publishNote(vaultId, { path, content, mode: 'apply' }), local.publishNote('local', { path, content, mode: 'apply' })]);
    expect({ ...strip(applied[0].data), eventId: null }).toEqual(strip(applied[1].data));
    const reads = await Promise.all([hosted.readNote(vaultId, path), local.readNote('local', path)]);
    expect(reads[0].status).toBe('complete');
    expect(reads[1].status).toBe('complete');
    expect(strip(reads[0].data)).toEqual(strip(reads[1].data));
    const lists = await Promise.all([hosted.listNotes(vaultId), local.listNotes('local')]);
    expect(lists[0].data!.notes.map(({ updatedAt: _u, ...n }) => n)).toEqual(lists[1].data!.notes.map(({ updatedAt: _u, ...n }) => n));
  });
});
