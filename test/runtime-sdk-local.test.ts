// The local adapter on a folder of Markdown notes: what it refuses to reach (nothing outside the
// folder, through `..` or a symbolic link), what it does not count as notes (dot-folders, other
// files), what it answers for the hosted-only operations (unavailable, never made-up data), and that
// no operation of it opens a connection. The shared contract is test/runtime-sdk-conformance.test.ts.
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { RuntimeError } from '@hosted-notes/runtime-sdk';
import { createLocalRuntime } from '@hosted-notes/runtime-sdk/local';
import type { LocalRuntime } from '@hosted-notes/runtime-sdk/local';
import type { RuntimeKind } from '@hosted-notes/runtime-sdk';
import { everyOperation, expectEnvelope, expectRefusal, trapNetwork } from './support/runtime-conformance.ts';

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

let root: string;
let outside: string;
let runtime: LocalRuntime;
beforeEach(async () => {
  const base = await mkdtemp(join(tmpdir(), 'runtime-sdk-local-'));
  folders.push(base);
  root = join(base, 'vault');
  outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.md'), '# Outside secret\n');
  runtime = createLocalRuntime({ root });
});

const put = async (path: string, content: string) => {
  await mkdir(join(root, ...path.split('/').slice(0, -1)), { recursive: true });
  await writeFile(join(root, ...path.split('/')), content);
};

describe('local adapter: the folder', () => {
  it('lists only Markdown notes with valid paths: dot-folders, other files and invalid names are not notes', async () => {
    await put('Units/Unit 1.md', '# Unit 1\n');
    await put('Top.md', 'top\n');
    await put('.obsidian/workspace.md', 'config\n');
    await put('.git/HEAD.md', 'x\n');
    await put('.trash/Old.md', 'x\n');
    await put('Units/.draft.md', 'x\n');
    await put('Units/diagram.png', 'x');
    await put('Units/Notes.txt', 'x');
    await put('Units/what?.md', 'x\n');
    await put('Units/con.md', 'x\n');
    const list = await runtime.listNotes('local');
    expect(list.data?.notes.map((n) => n.path)).toEqual(['Top.md', 'Units/Unit 1.md']);
    await expectRefusal(runtime.readNote('local', '.obsidian/workspace.md'), 'invalid_path', 400);
  });

  it('never reaches outside the folder: not by .., not through a symbolic link to a folder or a file', async () => {
    await symlink(outside, join(root, 'Linked'));
    await symlink(join(outside, 'secret.md'), join(root, 'Secret.md'));
    await put('Units/A.md', '# A\n');
    const list = await runtime.listNotes('local');
    expect(list.data?.notes.map((n) => n.path)).toEqual(['Units/A.md']);
    await expectRefusal(runtime.readNote('local', '../outside/secret.md'), 'invalid_path', 400);
    await expectRefusal(runtime.readNote('local', 'Units/../../outside/secret.md'), 'invalid_path', 400);
    await expectRefusal(runtime.readNote('local', 'Linked/secret.md'), 'note_not_found', 404);
    await expectRefusal(runtime.readNote('local', 'Secret.md'), 'note_not_found', 404);
    // Writes: through the linked folder, over the linked file, and by ..: all refused, the outside untouched.
    await expectRefusal(runtime.publishNote('local', { path: 'Linked/new.md', content: 'x', mode: 'apply' }), 'invalid_path', 400);
    await expectRefusal(runtime.publishNote('local', { path: 'Secret.md', content: 'overwritten', mode: 'apply' }), 'conflict', 409);
    await expectRefusal(runtime.publishNote('local', { path: '../outside/secret.md', content: 'x', mode: 'apply' }), 'invalid_path', 400);
    expect(await readdir(outside)).toEqual(['secret.md']);
    expect(await readFile(join(outside, 'secret.md'), 'utf8')).toBe('# Outside secret\n');
  });

  it('writes whole files, creating folders, and leaves no temporary file behind', async () => {
    const applied = await runtime.publishNote('local', { path: 'Deep/er/Note.md', content: '# Deep\n', mode: 'apply' });
    expect(applied.data).toMatchObject({ operation: 'create', applied: true });
    expect(await readFile(join(root, 'Deep', 'er', 'Note.md'), 'utf8')).toBe('# Deep\n');
    expect(await readdir(join(root, 'Deep', 'er'))).toEqual(['Note.md']);
    // A file where the path needs a folder cannot be written over.
    await expectRefusal(runtime.publishNote('local', { path: 'Deep/er/Note.md/child.md', content: 'x', mode: 'apply' }), 'conflict', 409);
  });

  it('reads a note edited outside the SDK (Obsidian) with its new revision, and refuses an apply based on the old one', async () => {
    const first = await runtime.publishNote('local', { path: 'Edited.md', content: 'v1\n', mode: 'apply' });
    await writeFile(join(root, 'Edited.md'), 'edited in Obsidian\n');
    const read = await runtime.readNote('local', 'Edited.md');
    expect(read.data?.content).toBe('edited in Obsidian\n');
    await expectRefusal(runtime.publishNote('local', { path: 'Edited.md', content: 'v2\n', mode: 'apply', expectedRevision: first.data!.afterRevision }), 'revision_conflict', 409);
    expect(await readFile(join(root, 'Edited.md'), 'utf8')).toBe('edited in Obsidian\n');
  });

  it('says when frontmatter is beyond what it reads, instead of guessing (partial, frontmatter not_supported)', async () => {
    await put('Nested.md', '---\nmeta:\n  level: 2\n---\n# Nested\n');
    const read = await runtime.readNote('local', 'Nested.md');
    expectEnvelope('runtime.note', read);
    expect(read).toMatchObject({ status: 'partial', missing: [{ part: 'frontmatter', reason: 'not_supported' }] });
    expect(read.data).toMatchObject({ frontmatter: null, title: 'Nested' });
  });

  it('a folder that does not exist is vault_not_found', async () => {
    const missing = createLocalRuntime({ root: join(root, 'nope') });
    await expectRefusal(missing.listNotes('local'), 'vault_not_found', 404);
    await expectRefusal(missing.getCapabilities(), 'vault_not_found', 404);
  });
});

describe('local adapter: hosted-only operations', () => {
  it('answer unavailable with reason hosted_only and no data', async () => {
    const hostedOnly = ['getWorkspace', 'getDomainComposition', 'bindHostedVault', 'listVaultBindings', 'listAvailableScopes', 'getScopeContext', 'getEffectiveScopePolicy', 'getScopeIntelligence', 'getScopeMemory', 'createSharedMemoryCandidate'];
    const calls = new Map(everyOperation({ runtime, vaultId: 'local', foreignVaultId: 'other' }));
    for (const name of hostedOnly) {
      const answer = (await calls.get(name)!()) as { status: string; data: unknown; missing: Array<{ reason: string; detail: string }> };
      expect(answer, name).toMatchObject({ runtimeVersion: '1', status: 'unavailable', data: null });
      expect(answer.missing.map((m) => m.reason)).toEqual(['hosted_only']);
      expect(answer.missing[0]!.detail.length).toBeGreaterThan(0);
    }
    // Nothing was written to the folder by any of them.
    expect(await readdir(root)).toEqual([]);
  });

  it('answer every delegated Google connection operation unavailable (hosted_only, connections.google), offline, writing nothing', async () => {
    const connectionId = '3b0f6c2e-8a51-4d2b-9f3e-6c1d2a7b8e90';
    const network = await trapNetwork();
    let answers: Array<[RuntimeKind, unknown]>;
    try {
      answers = [
        ['service.connection-attempt', await runtime.startGoogleConnection({ services: ['drive'], returnTarget: 'https://app.example.test/connected' })],
        ['service.connection-list', await runtime.listConnections()],
        ['service.connection', await runtime.getConnection(connectionId)],
        ['service.connection-revocation', await runtime.revokeConnection(connectionId)],
        ['service.drive-document', await runtime.createDriveDocument(connectionId, { name: 'Unit 1', markdown: '# Unit 1\n' }, { idempotencyKey: 'k-1' })],
        ['service.drive-document', await runtime.getDriveDocument(connectionId, 'file-1')],
        ['service.drive-document', await runtime.updateDriveDocument(connectionId, 'file-1', { expectedVersion: '1', markdown: '# Unit 1\n' })],
        ['service.drive-import', await runtime.importDriveDocument('local', { connectionId, fileId: 'file-1', path: 'Units/Unit 1.md', mode: 'apply' })],
        ['service.classroom-courses', await runtime.listClassroomCourses(connectionId)],
        ['service.classroom-roster', await runtime.listClassroomRoster(connectionId, 'course-1')],
        ['service.classroom-assignment', await runtime.createClassroomAssignment(connectionId, 'course-1', { title: 'Reading check' }, { idempotencyKey: 'k-2' })],
        ['service.classroom-attachments', await runtime.listAssignmentAttachments(connectionId, 'course-1', 'work-1')],
      ];
    } finally {
      network.restore();
    }
    expect(network.calls).toEqual([]);
    for (const [kind, answer] of answers) {
      expectEnvelope(kind, answer);
      expect(answer, kind).toMatchObject({ kind, status: 'unavailable', data: null, missing: [{ part: 'connections.google', reason: 'hosted_only' }] });
    }
    // An applied import wrote nothing: a local runtime has no Drive document to import.
    expect(await readdir(root)).toEqual([]);
  });

  it('reports what it is: adapter local, notes available, pulse not_supported, the rest hosted_only; a context with no made-up chain', async () => {
    const caps = await runtime.getCapabilities();
    const reasons = Object.fromEntries(caps.data!.capabilities.map((c) => [c.id, c.available ? 'available' : c.reason]));
    expect(reasons).toEqual({
      'notes.read': 'available',
      'notes.write': 'available',
      'vaults.bind': 'hosted_only',
      'domain-composition': 'hosted_only',
      'context-scopes': 'hosted_only',
      'shared-memory.propose': 'hosted_only',
      'intelligence.generate': 'hosted_only',
      'intelligence.education': 'hosted_only',
      'intelligence.education-deterministic': 'hosted_only',
      'media.audio': 'hosted_only',
      'connections.google': 'hosted_only',
      'decisions.forge': 'hosted_only',
      pulse: 'not_supported',
    });
    const context = await runtime.getRuntimeContext();
    expect(context).toMatchObject({
      status: 'partial',
      data: { adapter: 'local', runtimeVersion: '1', organization: null, product: null, installation: null, principal: null, credential: null, workspace: null, presentation: null },
    });
    expect(context.missing.every((m) => m.reason === 'hosted_only')).toBe(true);
  });
});

describe('local adapter: offline', () => {
  it('no operation opens a connection or resolves a name (fetch, net, http, https, tls, dns trapped)', async () => {
    await put('Units/A.md', '# A\n');
    const network = await trapNetwork();
    try {
      // The traps are live: a call would be recorded and fail.
      expect(() => fetch('http://127.0.0.1:9/')).toThrow(/network call attempted/);
      network.calls.length = 0;
      // Each answers (or refuses, like readNote of a missing note) without touching the network.
      for (const [, call] of everyOperation({ runtime, vaultId: 'local', foreignVaultId: 'other' })) await call().catch((error: unknown) => expect(error).toBeInstanceOf(RuntimeError));
      await runtime.publishNote('local', { path: 'Units/B.md', content: '# B\n', mode: 'apply' });
      await runtime.readNote('local', 'Units/B.md');
    } finally {
      network.restore();
    }
    expect(network.calls).toEqual([]);
  });
});
