// The Runtime SDK conformance suite: ONE set of cases, run against every adapter
// (test/runtime-sdk-conformance.test.ts runs them on the hosted adapter over the real server and on
// the local adapter over a temporary folder). A case states the contract a product relies on; where
// the adapters legitimately differ (the local one has no provenance log, no hosted chain), the case
// says so through the target's `adapter`, never by skipping.
import { educationExamples } from '../../api/routes/product/education/index.ts';
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { envelopeSchema, dtoSchemas, missingReasons, RuntimeError, RuntimeUnavailableError } from '@hosted-notes/runtime-sdk';
import type { RuntimeAdapter, RuntimeKind } from '@hosted-notes/runtime-sdk';
import { audioFixture } from './media.ts';

export type ConformanceTarget = {
  runtime: RuntimeAdapter;
  /** A vault this runtime may read and write. */
  vaultId: string;
  /** A vault id this runtime holds no grant on (another organization's vault, for the hosted one). */
  foreignVaultId: string;
};

export type ConformanceCase = { name: string; run: (target: ConformanceTarget) => Promise<void> };

const sha256 = (content: string) => `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;

/** The envelope parses with the shared schema of its kind, and its status agrees with `missing`. */
export function expectEnvelope(kind: RuntimeKind, value: unknown): void {
  const parsed = envelopeSchema(kind, dtoSchemas[kind]).safeParse(value);
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true);
  const env = value as { status: string; data: unknown; missing: unknown[] };
  if (env.status === 'complete') expect(env.missing).toEqual([]);
  if (env.status === 'partial') expect(env.missing.length).toBeGreaterThan(0);
  if (env.status === 'unavailable') {
    expect(env.data).toBeNull();
    expect(env.missing.length).toBeGreaterThan(0);
  }
}

/** The promise rejects with a RuntimeError of `code` and `status`; returns it for more checks. */
export async function expectRefusal(promise: Promise<unknown>, code: string, status: number): Promise<RuntimeError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(RuntimeError);
  expect({ code: (error as RuntimeError).code, status: (error as RuntimeError).status }).toEqual({ code, status });
  return error as RuntimeError;
}

/** A path no other case uses, so cases can share a hosted vault. */
const fresh = (name: string) => `Conformance ${randomUUID().slice(0, 8)}/${name}.md`;

/** A mediaId no installation holds. */
const MISSING_MEDIA_ID = '00000000-0000-4000-8000-000000000000';

/** An upload of a committed fixture (a 3 s tone) under a fresh key. */
const fixtureUpload = (name: string, reference: string) => ({
  idempotencyKey: `conformance-${randomUUID()}`,
  reference,
  declaredDurationSeconds: 3,
  bytes: new Uint8Array(audioFixture(name)),
});

export const conformanceCases: ConformanceCase[] = [
  {
    name: 'publishNote previews by default: the judgement and a diff, nothing written',
    async run({ runtime, vaultId }) {
      const path = fresh('Preview');
      const content = '# Fractions\n\nHalves and quarters.\n';
      const preview = await runtime.publishNote(vaultId, { path, content });
      expectEnvelope('runtime.note-publication', preview);
      expect(preview).toMatchObject({ status: 'complete', kind: 'runtime.note-publication', runtimeVersion: '1' });
      expect(preview.data).toMatchObject({
        mode: 'preview',
        applied: false,
        path,
        title: 'Fractions',
        operation: 'create',
        beforeRevision: null,
        afterRevision: sha256(content),
        size: Buffer.byteLength(content),
        revisionRequired: false,
        diffTruncated: false,
        eventId: null,
        replayed: false,
      });
      expect(preview.data?.diff).toContain('+Halves and quarters.');
      await expectRefusal(runtime.readNote(vaultId, path), 'note_not_found', 404);
    },
  },
  {
    name: 'apply creates; readNote and listNotes agree on revision, title, size, links and frontmatter',
    async run({ runtime, vaultId }) {
      const path = fresh('Unit 1');
      const content = '---\ntitle: Ratios\ntags: [math, grade-6]\nunit: 1\n---\n# Heading\n\nSee [[Unit 2#Goals|next unit]] and ![[diagram.png]].\n';
      const applied = await runtime.publishNote(vaultId, { path, content, mode: 'apply' });
      expectEnvelope('runtime.note-publication', applied);
      expect(applied.data).toMatchObject({ mode: 'apply', applied: true, operation: 'create', beforeRevision: null, afterRevision: sha256(content), replayed: false, diff: null });
      // The hosted runtime records a provenance event; a folder keeps none.
      if (runtime.adapter === 'hosted') expect(applied.data?.eventId).toEqual(expect.any(String));
      else expect(applied.data?.eventId).toBeNull();

      const read = await runtime.readNote(vaultId, path);
      expectEnvelope('runtime.note', read);
      expect(read.status).toBe('complete');
      expect(read.data).toMatchObject({
        vaultId,
        path,
        content,
        revision: sha256(content),
        size: Buffer.byteLength(content),
        title: 'Ratios',
        frontmatter: { title: 'Ratios', tags: ['math', 'grade-6'], unit: 1 },
        links: [
          { kind: 'link', target: 'Unit 2', heading: 'Goals', block: null, alias: 'next unit' },
          { kind: 'embed', target: 'diagram.png', heading: null, block: null, alias: null },
        ],
      });

      const list = await runtime.listNotes(vaultId, { limit: 1000 });
      expectEnvelope('runtime.note-list', list);
      const summary = list.data?.notes.find((n) => n.path === path);
      expect(summary).toMatchObject({ path, title: read.data?.title, revision: read.data?.revision, size: read.data?.size, updatedAt: read.data?.updatedAt });
    },
  },
  {
    name: 'frontmatter title wins over the heading; the heading over the file name',
    async run({ runtime, vaultId }) {
      const titled = fresh('Titled');
      await runtime.publishNote(vaultId, { path: titled, content: '---\ntitle: "Lesson: plants"\n---\n# Not this\n', mode: 'apply' });
      expect((await runtime.readNote(vaultId, titled)).data).toMatchObject({ title: 'Lesson: plants', frontmatter: { title: 'Lesson: plants' } });
      const plain = fresh('Plain name');
      await runtime.publishNote(vaultId, { path: plain, content: 'No heading here.\n```\n# code, not a heading\n```\n', mode: 'apply' });
      expect((await runtime.readNote(vaultId, plain)).data).toMatchObject({ title: 'Plain name', frontmatter: null, links: [] });
    },
  },
  {
    name: 'apply with the same key and body replays; another body under the key is idempotency_key_reused',
    async run({ runtime, vaultId }) {
      const path = fresh('Replay');
      const key = `conformance-${randomUUID()}`;
      const first = await runtime.publishNote(vaultId, { path, content: 'one\n', mode: 'apply' }, { idempotencyKey: key });
      const again = await runtime.publishNote(vaultId, { path, content: 'one\n', mode: 'apply' }, { idempotencyKey: key });
      expect(first.data).toMatchObject({ operation: 'create', replayed: false });
      expect(again.data).toEqual({ ...first.data, replayed: true });
      const reused = await expectRefusal(runtime.publishNote(vaultId, { path, content: 'two\n', mode: 'apply' }, { idempotencyKey: key }), 'idempotency_key_reused', 422);
      expect(reused.idempotencyKey).toBe(key);
      expect((await runtime.readNote(vaultId, path)).data?.content).toBe('one\n');
      await expectRefusal(runtime.publishNote(vaultId, { path: fresh('Bad key'), content: 'x', mode: 'apply' }, { idempotencyKey: 'has space' }), 'invalid_idempotency_key', 400);
    },
  },
  {
    name: 'parallel applies under one key write once',
    async run({ runtime, vaultId }) {
      const path = fresh('Parallel');
      const key = `parallel-${randomUUID()}`;
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => runtime.publishNote(vaultId, { path, content: 'once\n', mode: 'apply' }, { idempotencyKey: key })));
      const answers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.data] : []));
      const refusals = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as RuntimeError] : []));
      // One applied; the others replay it or were told the key is still in flight.
      expect(answers.filter((a) => a?.replayed === false)).toHaveLength(1);
      for (const refusal of refusals) expect(refusal.code).toBe('idempotency_in_flight');
      expect(answers.every((a) => a?.operation === 'create')).toBe(true);
    },
  },
  {
    name: 'replacing needs the current revision: revision_required without one, revision_conflict when stale; identical content is a noop',
    async run({ runtime, vaultId }) {
      const path = fresh('Revisions');
      const v1 = '# v1\n';
      const v2 = '# v2\n';
      await runtime.publishNote(vaultId, { path, content: v1, mode: 'apply' });
      const preview = await runtime.publishNote(vaultId, { path, content: v2 });
      expect(preview.data).toMatchObject({ operation: 'replace', beforeRevision: sha256(v1), revisionRequired: true });
      expect(preview.data?.diff).toMatch(/-# v1\n\+# v2/);
      const required = await expectRefusal(runtime.publishNote(vaultId, { path, content: v2, mode: 'apply' }), 'revision_required', 428);
      expect(required.extensions['currentRevision']).toBe(sha256(v1));
      const stale = sha256('something older');
      const conflict = await expectRefusal(runtime.publishNote(vaultId, { path, content: v2, mode: 'apply', expectedRevision: stale }), 'revision_conflict', 409);
      expect(conflict.extensions['currentRevision']).toBe(sha256(v1));
      // A preview judges the revision the same way.
      await expectRefusal(runtime.publishNote(vaultId, { path, content: v2, expectedRevision: stale }), 'revision_conflict', 409);
      expect((await runtime.readNote(vaultId, path)).data?.content).toBe(v1);

      const replaced = await runtime.publishNote(vaultId, { path, content: v2, mode: 'apply', expectedRevision: sha256(v1) });
      expect(replaced.data).toMatchObject({ operation: 'replace', beforeRevision: sha256(v1), afterRevision: sha256(v2), title: 'v2' });
      const noop = await runtime.publishNote(vaultId, { path, content: v2, mode: 'apply', expectedRevision: sha256(v2) });
      expect(noop.data).toMatchObject({ operation: 'noop', beforeRevision: sha256(v2), afterRevision: sha256(v2), eventId: null });
      expect((await runtime.readNote(vaultId, path)).data?.content).toBe(v2);
    },
  },
  {
    name: 'a path differing only by case from an existing note is path_case_conflict',
    async run({ runtime, vaultId }) {
      const path = fresh('Casing');
      await runtime.publishNote(vaultId, { path, content: 'a\n', mode: 'apply' });
      await expectRefusal(runtime.publishNote(vaultId, { path: path.toUpperCase().replace(/\.MD$/, '.md'), content: 'b\n', mode: 'apply' }), 'path_case_conflict', 409);
    },
  },
  {
    name: 'paths breaking the rules are invalid_path, on reads and writes; none reaches outside the vault',
    async run({ runtime, vaultId }) {
      const bad = ['../escape.md', '../../etc/passwd.md', 'Units/../../escape.md', '/absolute.md', 'a\\b.md', '.obsidian/workspace.md', 'Units/.hidden.md', 'notes.txt', 'Units//double.md', 'con.md', 'zero\u200bwidth.md', ''];
      for (const path of bad) {
        if (path !== '') await expectRefusal(runtime.readNote(vaultId, path), 'invalid_path', 400);
        const error = await runtime.publishNote(vaultId, { path, content: 'x', mode: 'apply' }).then(
          () => null,
          (e: unknown) => e as RuntimeError,
        );
        // An empty path fails the request schema before the path rules.
        expect(error?.code).toBe(path === '' ? 'invalid_request' : 'invalid_path');
      }
    },
  },
  {
    name: 'a missing note is note_not_found; a vault without a grant is vault_not_granted',
    async run({ runtime, vaultId, foreignVaultId }) {
      await expectRefusal(runtime.readNote(vaultId, fresh('Missing')), 'note_not_found', 404);
      await expectRefusal(runtime.readNote(foreignVaultId, 'Anything.md'), 'vault_not_granted', 403);
      await expectRefusal(runtime.listNotes(foreignVaultId), 'vault_not_granted', 403);
      await expectRefusal(runtime.publishNote(foreignVaultId, { path: 'Anything.md', content: 'x' }), 'vault_not_granted', 403);
    },
  },
  {
    name: 'listNotes pages in bytewise path order with opaque cursors; a made-up cursor is invalid_request',
    async run({ runtime, vaultId }) {
      const folder = `Order ${randomUUID().slice(0, 8)}`;
      // Bytewise: upper case before lower case, ASCII before accented letters.
      const names = ['b.md', 'C.md', 'a.md', 'é.md', 'Z.md'].map((n) => `${folder}/${n}`);
      for (const path of names) await runtime.publishNote(vaultId, { path, content: `${path}\n`, mode: 'apply' });
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages += 1) {
        const page = await runtime.listNotes(vaultId, { limit: 2, ...(cursor ? { cursor } : {}) });
        expectEnvelope('runtime.note-list', page);
        expect(page.data!.notes.length).toBeLessThanOrEqual(2);
        seen.push(...page.data!.notes.map((n) => n.path));
        if (!page.data!.hasMore) {
          expect(page.data!.nextCursor).toBeNull();
          break;
        }
        cursor = page.data!.nextCursor!;
      }
      const mine = seen.filter((p) => p.startsWith(`${folder}/`));
      expect(mine).toEqual([`${folder}/C.md`, `${folder}/Z.md`, `${folder}/a.md`, `${folder}/b.md`, `${folder}/é.md`]);
      expect([...seen].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))).toEqual(seen);
      await expectRefusal(runtime.listNotes(vaultId, { cursor: 'not-a-cursor' }), 'invalid_request', 400);
    },
  },
  {
    name: 'getCapabilities names every capability with a reason when unavailable; pulse is not_supported',
    async run({ runtime }) {
      const caps = await runtime.getCapabilities();
      expectEnvelope('runtime.capabilities', caps);
      expect(caps.data?.adapter).toBe(runtime.adapter);
      const byId = new Map(caps.data!.capabilities.map((c) => [c.id, c]));
      expect(byId.get('pulse')).toMatchObject({ available: false, reason: 'not_supported' });
      expect(byId.get('notes.read')).toMatchObject({ available: true, reason: null });
      expect(byId.get('notes.write')).toMatchObject({ available: true, reason: null });
      for (const capability of caps.data!.capabilities) {
        if (capability.available) expect(capability.reason).toBeNull();
        else expect(missingReasons).toContain(capability.reason);
      }
    },
  },
  {
    name: 'getRuntimeContext says which adapter answers, and no part of it is made up',
    async run({ runtime }) {
      const context = await runtime.getRuntimeContext();
      expectEnvelope('runtime.context', context);
      expect(context.data).toMatchObject({ adapter: runtime.adapter, runtimeVersion: '1' });
      // Every null part is listed in missing with its reason.
      const nullParts = Object.entries(context.data!).filter(([, value]) => value === null).map(([key]) => key);
      const missingParts = context.missing.map((m) => m.part);
      for (const part of nullParts) if (part !== 'presentation' || runtime.adapter === 'local') expect(missingParts).toContain(part);
    },
  },
];

/** Every operation of the interface, called with plausible inputs: each answers an envelope or a typed refusal. */
/** The request body of an operation's OpenAPI example (api/routes/product/education). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the examples are untyped JSON; the adapters validate them on the way out
function exampleRequest(operation: string): any {
  const request = educationExamples[operation]?.request;
  if (!request || !('value' in request)) throw new Error(`no request example for ${operation}`);
  return request.value;
}

export const everyOperation = (target: ConformanceTarget): Array<[string, () => Promise<unknown>]> => {
  const { runtime, vaultId } = target;
  const scopeId = 'course-algebra-1';
  return [
    ['getRuntimeContext', () => runtime.getRuntimeContext()],
    ['getCapabilities', () => runtime.getCapabilities()],
    ['getWorkspace', () => runtime.getWorkspace()],
    ['getDomainComposition', () => runtime.getDomainComposition()],
    ['listNotes', () => runtime.listNotes(vaultId)],
    ['readNote', () => runtime.readNote(vaultId, 'Missing.md')],
    ['publishNote', () => runtime.publishNote(vaultId, { path: fresh('Every'), content: '# every\n' })],
    ['bindHostedVault', () => runtime.bindHostedVault({ access: 'read', reason: 'conformance' })],
    ['listVaultBindings', () => runtime.listVaultBindings()],
    ['listAvailableScopes', () => runtime.listAvailableScopes()],
    ['getScopeContext', () => runtime.getScopeContext(scopeId)],
    ['getEffectiveScopePolicy', () => runtime.getEffectiveScopePolicy(scopeId)],
    ['getScopeIntelligence', () => runtime.getScopeIntelligence(scopeId)],
    ['getScopeMemory', () => runtime.getScopeMemory(scopeId)],
    ['createSharedMemoryCandidate', () => runtime.createSharedMemoryCandidate(scopeId, { content: 'Fractions come before ratios.' })],
    ['getMemoryCandidate', () => runtime.getMemoryCandidate(scopeId, '00000000-0000-4000-8000-000000000000')],
    ['generate', () => runtime.generate({ intent: { context: 'plan', task: 'A warm-up on fractions' } })],
    ['generateImage', () => runtime.generateImage({ context: 'teach', brief: { type: 'diagram', audience: 'grade 4', style: 'flat', orientation: 'square', altTextIntent: 'Two equal fractions' } })],
    ['listUsageReceipts', () => runtime.listUsageReceipts()],
    ['getUsageReceipt', () => runtime.getUsageReceipt('00000000-0000-4000-8000-000000000000')],
    ['getIntelligenceBudget', () => runtime.getIntelligenceBudget()],
    // The education operations with the requests of their OpenAPI examples.
    ['educationProjection', () => runtime.educationProjection(exampleRequest('educationProjection'))],
    ['recommendArtifacts', () => runtime.recommendArtifacts(exampleRequest('recommendArtifacts'))],
    ['crosswalkStandards', () => runtime.crosswalkStandards(exampleRequest('crosswalkStandards'))],
    ['studentGuidance', () => runtime.studentGuidance(exampleRequest('studentGuidance'))],
    ['educationQualityReview', () => runtime.educationQualityReview(exampleRequest('educationQualityReview'))],
    ['educationPracticeReview', () => runtime.educationPracticeReview(exampleRequest('educationPracticeReview'))],
    ['assessmentDraft', () => runtime.assessmentDraft(exampleRequest('assessmentDraft'))],
    ['rubricDraft', () => runtime.rubricDraft(exampleRequest('rubricDraft'))],
    // readAudio answers bytes, not an envelope: the media case below covers it.
    ['uploadAudio', () => runtime.uploadAudio(fixtureUpload('tone-3s.webm', 'conformance/every'))],
    ['listAudio', () => runtime.listAudio()],
    ['getAudioMetadata', () => runtime.getAudioMetadata(MISSING_MEDIA_ID)],
    ['deleteAudio', () => runtime.deleteAudio(MISSING_MEDIA_ID)],
  ];
};

conformanceCases.push({
  name: 'every operation answers a valid envelope of its kind or a RuntimeError, never anything else',
  async run(target) {
    const kinds: Record<string, RuntimeKind> = {
      getRuntimeContext: 'runtime.context',
      getCapabilities: 'runtime.capabilities',
      getWorkspace: 'runtime.workspace',
      getDomainComposition: 'runtime.domain-composition',
      listNotes: 'runtime.note-list',
      readNote: 'runtime.note',
      publishNote: 'runtime.note-publication',
      bindHostedVault: 'runtime.vault-binding',
      listVaultBindings: 'runtime.vault-binding-list',
      listAvailableScopes: 'runtime.scope-list',
      getScopeContext: 'runtime.scope-context',
      getEffectiveScopePolicy: 'runtime.scope-policy',
      getScopeIntelligence: 'runtime.scope-intelligence',
      getScopeMemory: 'runtime.scope-memory',
      createSharedMemoryCandidate: 'runtime.memory-candidate',
      getMemoryCandidate: 'runtime.memory-candidate-status',
      generate: 'service.generation',
      generateImage: 'service.generated-image',
      listUsageReceipts: 'service.product-intelligence-usage-list',
      getUsageReceipt: 'service.product-intelligence-usage',
      getIntelligenceBudget: 'service.intelligence-budget',
      educationProjection: 'service.education-projection',
      recommendArtifacts: 'service.education-artifact-recommendations',
      crosswalkStandards: 'service.education-standards-crosswalk',
      studentGuidance: 'service.education-student-guidance',
      educationQualityReview: 'service.education-quality-review',
      educationPracticeReview: 'service.education-practice-review',
      assessmentDraft: 'service.education-assessment-draft',
      rubricDraft: 'service.education-rubric-draft',
      uploadAudio: 'service.media-audio',
      listAudio: 'service.media-audio-list',
      getAudioMetadata: 'service.media-audio-record',
      deleteAudio: 'service.media-deletion',
    };
    for (const [name, call] of everyOperation(target)) {
      const outcome = await call().then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      if ('error' in outcome) expect(outcome.error, name).toBeInstanceOf(RuntimeError);
      else expectEnvelope(kinds[name]!, outcome.value);
    }
  },
});

conformanceCases.push({
  name: 'private audio media: hosted, a fixture is uploaded, read whole and in part, listed and deleted; local, every media operation is hosted_only',
  async run({ runtime }) {
    const file = audioFixture('tone-3s.ogg');
    const upload = fixtureUpload('tone-3s.ogg', `conformance/${randomUUID()}`);
    if (runtime.adapter === 'local') {
      // A local runtime keeps no recordings: an explicit gap, never an empty list or a made-up id.
      const answers: Array<[RuntimeKind, unknown]> = [
        ['service.media-audio', await runtime.uploadAudio(upload)],
        ['service.media-audio-list', await runtime.listAudio()],
        ['service.media-audio-record', await runtime.getAudioMetadata(MISSING_MEDIA_ID)],
        ['service.media-deletion', await runtime.deleteAudio(MISSING_MEDIA_ID)],
      ];
      for (const [kind, answer] of answers) {
        expectEnvelope(kind, answer);
        expect(answer).toMatchObject({ kind, status: 'unavailable', data: null, missing: [{ part: 'media.audio', reason: 'hosted_only' }] });
      }
      const unavailableRead = await runtime.readAudio(MISSING_MEDIA_ID).then(
        () => null,
        (e: unknown) => e,
      );
      expect(unavailableRead).toBeInstanceOf(RuntimeUnavailableError);
      expect((unavailableRead as RuntimeUnavailableError).code).toBe('hosted_only');
      return;
    }

    const stored = await runtime.uploadAudio(upload);
    expectEnvelope('service.media-audio', stored);
    const sha256 = createHash('sha256').update(file).digest('hex');
    expect(stored.data).toMatchObject({ reference: upload.reference, mediaType: 'audio/ogg', container: 'ogg', sizeBytes: file.byteLength, sha256, declaredDurationSeconds: 3, replayed: false });
    const mediaId = stored.data!.mediaId;

    const whole = await runtime.readAudio(mediaId);
    expect({ ...whole, bytes: Buffer.from(whole.bytes).equals(file) }).toEqual({
      status: 200,
      mediaType: 'audio/ogg',
      etag: `"${sha256}"`,
      sizeBytes: file.byteLength,
      range: null,
      bytes: true,
    });
    const part = await runtime.readAudio(mediaId, { range: { start: 10, end: 99 } });
    expect(part).toMatchObject({ status: 206, sizeBytes: file.byteLength, range: { start: 10, end: 99, size: file.byteLength } });
    expect(Buffer.from(part.bytes).equals(file.subarray(10, 100))).toBe(true);

    const listed = await runtime.listAudio({ limit: 200 });
    expectEnvelope('service.media-audio-list', listed);
    const { replayed: _replayed, storage: _storage, ...record } = stored.data!;
    expect(listed.data!.media).toContainEqual(record);
    expect((await runtime.getAudioMetadata(mediaId)).data).toEqual(record);

    const deleted = await runtime.deleteAudio(mediaId);
    expectEnvelope('service.media-deletion', deleted);
    expect(deleted.data).toMatchObject({ mediaId, deleted: true, freedBytes: file.byteLength });
    await expectRefusal(runtime.readAudio(mediaId), 'media_not_found', 404);
    await expectRefusal(runtime.getAudioMetadata(mediaId), 'media_not_found', 404);
    await expectRefusal(runtime.deleteAudio(mediaId), 'media_not_found', 404);
    expect((await runtime.listAudio({ limit: 200 })).data!.media.map((m) => m.mediaId)).not.toContain(mediaId);
  },
});

type Trap = { calls: string[]; restore: () => void };

/**
 * Replaces every way this process could open a connection or resolve a name with a function that
 * records the attempt and throws; `restore` puts the originals back. Named ESM imports of the
 * builtins are re-synced so `import { connect } from 'node:net'` sees the trap too.
 */
export async function trapNetwork(): Promise<Trap> {
  const net = (await import('node:net')).default;
  const http = (await import('node:http')).default;
  const https = (await import('node:https')).default;
  const tls = (await import('node:tls')).default;
  const dns = (await import('node:dns')).default;
  const { syncBuiltinESMExports } = await import('node:module');
  const calls: string[] = [];
  const restores: Array<() => void> = [];
  const trap = <T extends object>(owner: T, key: keyof T & string, label: string) => {
    const original = owner[key];
    (owner as Record<string, unknown>)[key] = (..._args: unknown[]) => {
      calls.push(label);
      throw new Error(`network call attempted: ${label}`);
    };
    restores.push(() => {
      (owner as Record<string, unknown>)[key] = original;
    });
  };
  trap(globalThis, 'fetch', 'fetch');
  trap(net, 'connect', 'net.connect');
  trap(net, 'createConnection', 'net.createConnection');
  trap(net.Socket.prototype, 'connect', 'net.Socket.prototype.connect');
  trap(http, 'request', 'http.request');
  trap(http, 'get', 'http.get');
  trap(https, 'request', 'https.request');
  trap(https, 'get', 'https.get');
  trap(tls, 'connect', 'tls.connect');
  trap(dns, 'lookup', 'dns.lookup');
  trap(dns, 'resolve', 'dns.resolve');
  trap(dns.promises, 'lookup', 'dns.promises.lookup');
  syncBuiltinESMExports();
  return {
    calls,
    restore: () => {
      for (const restore of restores.reverse()) restore();
      syncBuiltinESMExports();
    },
  };
}
