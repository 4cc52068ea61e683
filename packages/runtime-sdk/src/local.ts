// The local adapter: the runtime's operations on a folder of Markdown notes on this machine (an
// Obsidian-style vault: nested folders of .md files; dot-folders such as .obsidian/ and .git/ are
// not notes). It works offline, never opens a network connection and never uploads anything: what
// only the hosted service has (workspace, vault bindings, context scopes, shared memory, domain
// composition, metered intelligence, private media, delegated Google connections) answers the
// explicit `unavailable` envelope with reason `hosted_only`. It never calls a model: a streamed
// generate throws RuntimeUnavailableError, and so does readAudio, whose answer is bytes rather than
// an envelope.
//
// Notes follow the hosted rules so a product sees one contract: the same path rules (invalid →
// invalid_path), revision (sha256 of the UTF-8 content), title and links, bytewise order and opaque
// cursors, preview by default, apply with an idempotency key (replayed, or idempotency_key_reused
// for another body), the current revision to replace (revision_required / revision_conflict).
import { createHash, randomUUID } from 'node:crypto';
import { access, constants, lstat, mkdir, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { envelope, unavailable } from './envelope.ts';
import type { MissingPart } from './envelope.ts';
import { capabilityIds, publishNoteInputSchema } from './dto/core.ts';
import type { Capability, CapabilityId, PublishNoteInput } from './dto/core.ts';
import { compareBytewise, deriveNote, noteLimits, pathKey, pathProblem, unifiedDiff } from './notes.ts';
import type { GenerationStreamEvent } from './dto/intelligence.ts';
import { packOperationNames, RuntimeError, RuntimeUnavailableError, runtimeOperations } from './operations.ts';
import type { AudioBytes, DtoOf, GenerationStream, PackOperationName, PageInput, RuntimeAdapter, RuntimeEnvelope, WriteOptions } from './operations.ts';

export type LocalRuntimeOptions = {
  /** The vault folder. */
  root: string;
  /** The id this runtime's one vault answers to (default `local`); any other vault id is vault_not_granted. */
  vaultId?: string;
  /** Makes the idempotency key of applies the caller does not key themselves (default: a random UUID). */
  idempotencyKey?: () => string;
};

export type LocalRuntime = RuntimeAdapter & { readonly adapter: 'local'; readonly vaultId: string; readonly root: string };

/** Status and title of the refusals the local adapter makes: the service's catalog entries for the same codes. */
const refusals = {
  invalid_request: { status: 400, title: 'The request is not valid.' },
  invalid_path: { status: 400, title: 'The note path breaks the path rules.' },
  note_too_large: { status: 413, title: 'The note content is larger than the limit.' },
  note_not_found: { status: 404, title: 'No live note at this path in this vault.' },
  vault_not_granted: { status: 403, title: 'The installation holds no grant on this logical vault.' },
  vault_not_found: { status: 404, title: 'No hosted vault with this id is visible to the caller.' },
  revision_required: { status: 428, title: 'Replacing or deleting an existing note needs its current revision.' },
  revision_conflict: { status: 409, title: 'The expected revision is stale; the note changed since it was read.' },
  path_case_conflict: { status: 409, title: 'A note whose path differs only by letter case already exists.' },
  conflict: { status: 409, title: 'The request conflicts with the current state.' },
  invalid_idempotency_key: { status: 400, title: 'The Idempotency-Key must be 1–255 visible ASCII characters.' },
  idempotency_key_reused: { status: 422, title: 'This Idempotency-Key was used with a different request.' },
} as const;
type RefusalCode = keyof typeof refusals;

function refuse(code: RefusalCode, detail?: string, extensions: Record<string, unknown> = {}): RuntimeError {
  const { status, title } = refusals[code];
  return new RuntimeError({ type: `/problems/${code}`, title, status, code, ...(detail ? { detail } : {}), ...extensions });
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000;
const DEFAULT_PAGE = 100;

const hostedOnly = (part: string, detail: string): [MissingPart] => [{ part, reason: 'hosted_only', detail }];

/** What the local adapter cannot offer, and why (getCapabilities). */
const localCapabilityDetail: Record<Exclude<CapabilityId, 'notes.read' | 'notes.write' | 'pulse'>, string> = {
  'vaults.bind': 'A local folder cannot be bound or uploaded; hosted vaults are bound through the hosted adapter.',
  'domain-composition': 'The domain composition is assigned to a product on the hosted service.',
  'context-scopes': 'Context scopes are resolved by the hosted service.',
  'shared-memory.propose': 'Shared memory lives on the hosted service, after a person reviews it.',
  'intelligence.generate': 'Intelligence runs on the hosted service, against the organization budget.',
  'intelligence.education': 'Education intelligence runs on the hosted service.',
  'intelligence.education-deterministic': 'The deterministic education operations run on the hosted service.',
  'media.audio': 'Private audio media are stored by the hosted service.',
  'connections.google': 'Delegated connections are held by the hosted service.',
  'decisions.forge': 'Governed actions are reviewed and executed by Forge on the hosted service.',
};

type NoteFile = { path: string; content: string; createdAt: string; updatedAt: string };
type IdempotencyRecord = { fingerprint: string; data: DtoOf<'runtime.note-publication'>; storedAt: number };

const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v && typeof v === 'object'
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
      : v;
const fingerprintOf = (value: unknown) => createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex');

const isMissing = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const root = resolve(options.root);
  const vaultId = options.vaultId ?? 'local';
  const newKey = options.idempotencyKey ?? (() => randomUUID());
  const records = new Map<string, IdempotencyRecord>();
  // Applies run one at a time: the check of the current revision and the write are one step.
  let applying: Promise<unknown> = Promise.resolve();

  let rootReal: Promise<string> | undefined;
  /** The vault folder's real path (symlinks resolved), checked to be a directory. */
  const vaultRoot = () =>
    (rootReal ??= (async () => {
      const real = await realpath(root).catch(() => null);
      if (!real || !(await stat(real)).isDirectory()) throw refuse('vault_not_found', `The vault folder ${root} does not exist or is not a folder.`);
      return real;
    })().catch((error: unknown) => {
      rootReal = undefined;
      throw error;
    }));

  const checkVault = (id: string) => {
    if (id !== vaultId) throw refuse('vault_not_granted', `This local runtime reaches only its folder, vault "${vaultId}".`, { failedLink: 'vault_grant' });
  };

  const notePath = (raw: string, pointer: string) => {
    const path = raw.normalize('NFC');
    const problem = pathProblem(path);
    if (problem) throw refuse('invalid_path', `Invalid note path: ${problem}.`, { errors: [{ pointer, message: problem, code: 'invalid_path' }] });
    return path;
  };

  /**
   * The file of a valid note path, inside the vault folder. The path rules already refuse `..`,
   * absolute paths, backslashes and dot segments; a symbolic link anywhere on the way could still
   * lead outside, so a note is only a file whose real path is exactly the lexical one.
   */
  const fileOf = async (path: string) => {
    const base = await vaultRoot();
    const file = join(base, ...path.split('/'));
    if (!file.startsWith(base + sep)) throw refuse('invalid_path', 'Invalid note path: it leads outside the vault.');
    return { base, file };
  };

  async function readNoteFile(path: string): Promise<NoteFile | null> {
    const { file } = await fileOf(path);
    const real = await realpath(file).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    // Through a symbolic link (or another spelling on a case-insensitive disk): not this note.
    if (real !== file) return null;
    const info = await stat(file);
    if (!info.isFile()) return null;
    const content = await readFile(file, 'utf8');
    const updatedAt = info.mtime.toISOString();
    return { path, content, createdAt: info.birthtimeMs > 0 ? info.birthtime.toISOString() : updatedAt, updatedAt };
  }

  /** Every note path of the vault: .md files with valid NFC paths, dot-entries and symbolic links skipped. */
  async function allNotePaths(): Promise<string[]> {
    const base = await vaultRoot();
    const paths: string[] = [];
    const walk = async (dir: string, prefix: string) => {
      const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
        if (isMissing(error)) return [];
        throw error;
      });
      for (const entry of entries) {
        if (entry.name.startsWith('.') || entry.isSymbolicLink()) continue;
        const path = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isDirectory()) await walk(join(dir, entry.name), path);
        else if (entry.isFile() && entry.name.endsWith('.md') && path.normalize('NFC') === path && pathProblem(path) === null) paths.push(path);
      }
    };
    await walk(base, '');
    return paths.sort(compareBytewise);
  }

  /** Writes through a temporary file and a rename, so a reader never sees half a note. */
  async function writeNoteFile(path: string, content: string): Promise<void> {
    const { base, file } = await fileOf(path);
    const segments = path.split('/');
    let dir = base;
    for (const segment of segments.slice(0, -1)) {
      dir = join(dir, segment);
      const info = await lstat(dir).catch((error: unknown) => {
        if (isMissing(error)) return null;
        throw error;
      });
      if (!info) await mkdir(dir);
      else if (info.isSymbolicLink()) throw refuse('invalid_path', `Invalid note path: the folder "${segment}" is a symbolic link.`);
      else if (!info.isDirectory()) throw refuse('conflict', `A file named "${segment}" stands where the path needs a folder.`);
    }
    const existing = await lstat(file).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (existing && !existing.isFile()) throw refuse('conflict', `"${path}" exists and is not a regular file.`);
    const temporary = join(dir, `.${segments[segments.length - 1]}.${randomUUID()}.tmp`);
    try {
      await writeFile(temporary, content, { encoding: 'utf8', flag: 'wx' });
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  function noteDto(note: NoteFile) {
    const derived = deriveNote(note.path, note.content);
    const missing: MissingPart[] = derived.frontmatterSupported
      ? []
      : [{ part: 'frontmatter', reason: 'not_supported', detail: 'The local adapter reads flat frontmatter (key: scalar and lists); this block is beyond it, so the title may differ from the hosted one.' }];
    return {
      data: {
        vaultId,
        path: note.path,
        title: derived.title,
        content: note.content,
        revision: derived.revision,
        size: derived.sizeBytes,
        frontmatter: derived.frontmatter,
        links: derived.links,
        createdAt: note.createdAt,
        updatedAt: note.updatedAt,
      },
      missing,
    };
  }

  const decodeCursor = (cursor: string): string => {
    try {
      const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
      if (value && typeof value === 'object' && typeof (value as { after?: unknown }).after === 'string') return (value as { after: string }).after;
    } catch {
      // refused below
    }
    throw refuse('invalid_request', 'The cursor is not one this API returned.', { errors: [{ pointer: '/querystring/cursor', message: 'invalid cursor' }] });
  };

  async function listNotes(id: string, page: PageInput = {}): Promise<RuntimeEnvelope<'runtime.note-list'>> {
    checkVault(id);
    const limit = page.limit ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > noteLimits.maxInventoryPage) {
      throw refuse('invalid_request', `/querystring/limit: between 1 and ${noteLimits.maxInventoryPage}`, { errors: [{ pointer: '/querystring/limit', message: 'out of range' }] });
    }
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const paths = (await allNotePaths()).filter((p) => after === undefined || compareBytewise(p, after) > 0);
    const notes = [];
    for (const path of paths) {
      if (notes.length > limit) break;
      const note = await readNoteFile(path);
      // Gone between the walk and the read: not a note any more.
      if (!note) continue;
      const derived = deriveNote(path, note.content);
      notes.push({ path, title: derived.title, revision: derived.revision, size: derived.sizeBytes, updatedAt: note.updatedAt });
    }
    const hasMore = notes.length > limit;
    const pageNotes = notes.slice(0, limit);
    const nextCursor = hasMore ? Buffer.from(JSON.stringify({ after: pageNotes[pageNotes.length - 1]!.path })).toString('base64url') : null;
    return envelope('runtime.note-list', { vaultId, notes: pageNotes, hasMore, nextCursor });
  }

  async function readNote(id: string, rawPath: string): Promise<RuntimeEnvelope<'runtime.note'>> {
    checkVault(id);
    const path = notePath(rawPath, '/querystring/path');
    const note = await readNoteFile(path);
    if (!note) throw refuse('note_not_found', `No live note at ${path}.`);
    const { data, missing } = noteDto(note);
    return envelope('runtime.note', data, missing);
  }

  /** The service's judgement of a write against the current note (domain/notes/knowledge.ts judgeWrite). */
  async function judge(path: string, content: string, expectedRevision: string | undefined, requireRevision: boolean) {
    const current = await readNoteFile(path);
    if (!current) {
      const key = pathKey(path);
      const collision = (await allNotePaths()).find((p) => p !== path && pathKey(p) === key);
      if (collision !== undefined) {
        throw refuse('path_case_conflict', `"${collision}" already exists; paths may not differ only by case.`, {
          existingPath: collision,
          errors: [{ pointer: '/path', message: 'case collision', code: 'path_case_conflict' }],
        });
      }
    }
    const currentRevision = current ? deriveNote(path, current.content).revision : null;
    if (expectedRevision !== undefined && currentRevision !== expectedRevision) {
      throw refuse('revision_conflict', `The note's current revision is ${currentRevision ?? 'none (it does not exist)'}, not ${expectedRevision}.`, {
        currentRevision,
        errors: [{ pointer: '/expectedHash', message: 'stale revision', code: 'revision_conflict' }],
      });
    }
    if (requireRevision && current && expectedRevision === undefined) {
      throw refuse('revision_required', undefined, { currentRevision, errors: [{ pointer: '/expectedHash', message: 'required when replacing', code: 'revision_required' }] });
    }
    const derived = deriveNote(path, content);
    const operation = !current ? ('create' as const) : currentRevision === derived.revision ? ('noop' as const) : ('replace' as const);
    return { current, currentRevision, derived, operation };
  }

  async function publishNote(id: string, input: PublishNoteInput, options: WriteOptions = {}): Promise<RuntimeEnvelope<'runtime.note-publication'>> {
    checkVault(id);
    const parsed = publishNoteInputSchema.safeParse(input);
    if (!parsed.success) {
      const errors = parsed.error.issues.map((issue) => ({ pointer: `/body/${issue.path.join('/')}`.replace(/\/$/, ''), message: issue.message, code: issue.code }));
      throw refuse('invalid_request', `${errors[0]!.pointer}: ${errors[0]!.message}`, { errors });
    }
    const body = parsed.data;
    const path = notePath(body.path, '/path');
    const size = Buffer.byteLength(body.content, 'utf8');
    if (size > noteLimits.maxContentBytes) {
      throw refuse('note_too_large', `The note is ${size} bytes; the limit is ${noteLimits.maxContentBytes} bytes.`, {
        limit: noteLimits.maxContentBytes,
        size,
        errors: [{ pointer: '/content', message: 'content too large', code: 'note_too_large' }],
      });
    }
    const base = { vaultId, path };
    // What the judgement says, the same for a preview and an apply.
    const judged = (plan: Awaited<ReturnType<typeof judge>>) => ({
      title: plan.derived.title,
      operation: plan.operation,
      beforeRevision: plan.currentRevision,
      afterRevision: plan.derived.revision,
      size: plan.derived.sizeBytes,
    });
    if (body.mode === 'preview') {
      const plan = await judge(path, body.content, body.expectedRevision, false);
      return envelope('runtime.note-publication', {
        mode: 'preview',
        applied: false,
        ...base,
        ...judged(plan),
        revisionRequired: plan.current !== null && body.expectedRevision === undefined,
        ...unifiedDiff(path, plan.current?.content ?? null, body.content),
        eventId: null,
        replayed: false,
      });
    }
    const key = options.idempotencyKey ?? newKey();
    if (!KEY_PATTERN.test(key)) throw refuse('invalid_idempotency_key');
    // What determines the outcome, as the service fingerprints it (the path as sent).
    const fingerprint = fingerprintOf({ path: input.path, content: body.content, expectedHash: body.expectedRevision });
    const run = async (): Promise<RuntimeEnvelope<'runtime.note-publication'>> => {
      const now = Date.now();
      for (const [k, record] of records) if (now - record.storedAt > IDEMPOTENCY_RETENTION_MS) records.delete(k);
      const stored = records.get(key);
      if (stored) {
        if (stored.fingerprint !== fingerprint) throw refuse('idempotency_key_reused', undefined, { idempotencyKey: key });
        return envelope('runtime.note-publication', { ...stored.data, replayed: true });
      }
      const plan = await judge(path, body.content, body.expectedRevision, true);
      if (plan.operation !== 'noop') await writeNoteFile(path, body.content);
      const data = {
        mode: 'apply' as const,
        applied: true,
        ...base,
        ...judged(plan),
        revisionRequired: null,
        diff: null,
        diffTruncated: null,
        // A folder keeps no provenance log: there is no event to name.
        eventId: null,
        replayed: false,
      };
      records.set(key, { fingerprint, data, storedAt: now });
      return envelope('runtime.note-publication', data);
    };
    const result = applying.then(run, run);
    applying = result.catch(() => undefined);
    // A refused apply names its key, as the hosted adapter's do, so the caller can retry it.
    return result.catch((error: unknown) => {
      if (!(error instanceof RuntimeError)) throw error;
      throw new RuntimeError({ type: `/problems/${error.code}`, title: error.title, status: error.status, code: error.code, detail: error.detail, ...error.extensions }, { idempotencyKey: key });
    });
  }

  async function getCapabilities(): Promise<RuntimeEnvelope<'runtime.capabilities'>> {
    const base = await vaultRoot();
    const writable = await access(base, constants.W_OK).then(
      () => true,
      () => false,
    );
    const capabilities = capabilityIds.map((id): Capability => {
      if (id === 'notes.read') return { id, available: true, reason: null, detail: `The Markdown notes of ${base}.`, requiredScopes: [] };
      if (id === 'notes.write') {
        return writable
          ? { id, available: true, reason: null, detail: `Writes into ${base}; nothing is uploaded.`, requiredScopes: [] }
          : { id, available: false, reason: 'not_supported', detail: 'The vault folder is not writable.', requiredScopes: [] };
      }
      if (id === 'pulse') return { id, available: false, reason: 'not_supported', detail: 'Pulse is not offered in runtime version 1.', requiredScopes: [] };
      return { id, available: false, reason: 'hosted_only', detail: localCapabilityDetail[id], requiredScopes: [] };
    });
    return envelope('runtime.capabilities', { adapter: 'local', capabilities });
  }

  async function getRuntimeContext(): Promise<RuntimeEnvelope<'runtime.context'>> {
    await vaultRoot();
    const chain = ['organization', 'product', 'installation', 'principal', 'credential', 'workspace'] as const;
    const missing: MissingPart[] = [
      ...chain.map((part): MissingPart => ({ part, reason: 'hosted_only', detail: `A local runtime has no ${part}: it acts for the person on this machine.` })),
      { part: 'presentation', reason: 'hosted_only', detail: 'Brand presentation is resolved by the hosted service.' },
    ];
    return envelope(
      'runtime.context',
      { adapter: 'local', runtimeVersion: '1', organization: null, product: null, installation: null, principal: null, credential: null, workspace: null, presentation: null },
      missing,
    );
  }

  const scopeDetail = 'Context scopes are resolved by the hosted service; a local runtime has none.';
  const intelligenceDetail = `${localCapabilityDetail['intelligence.generate']} A local runtime never calls a model.`;

  /**
   * The stream of a generate that cannot run here: its first step throws RuntimeUnavailableError
   * (reason hosted_only), as the hosted adapter does when the service has no model, rather than
   * ending quietly with no events. It keeps the WriteOptions contract: the key is fixed up front.
   */
  function generateStream(_input: unknown, o?: WriteOptions): GenerationStream {
    const idempotencyKey = o?.idempotencyKey ?? newKey();
    async function* events(): AsyncGenerator<GenerationStreamEvent, void, undefined> {
      throw new RuntimeUnavailableError(unavailable('service.generation', hostedOnly('intelligence', intelligenceDetail)), { idempotencyKey });
    }
    return Object.assign(events(), { idempotencyKey });
  }

  const mediaDetail = `${localCapabilityDetail['media.audio']} Nothing is uploaded.`;
  const connectionsDetail = `${localCapabilityDetail['connections.google']} Nothing is sent to Google.`;

  // Every education operation of the pack but generate and generate-image, from the table: a new one needs no code here.
  const educationCalls = Object.fromEntries(
    packOperationNames('education')
      .filter((name) => name !== 'generate' && name !== 'generateImage')
      .map((name) => [name, async () => unavailable(runtimeOperations[name].kind, hostedOnly('intelligence.education', intelligenceDetail))]),
  ) as unknown as Pick<RuntimeAdapter, Exclude<PackOperationName<'education'>, 'generate' | 'generateImage'>>;

  return {
    adapter: 'local',
    vaultId,
    root,
    getRuntimeContext: () => getRuntimeContext(),
    getCapabilities: () => getCapabilities(),
    getWorkspace: async () => unavailable('runtime.workspace', hostedOnly('workspace', 'Workspaces and their hosted vaults exist on the hosted service only.')),
    getDomainComposition: async () => unavailable('runtime.domain-composition', hostedOnly('domain-composition', localCapabilityDetail['domain-composition'])),
    listNotes: (id: string, p?: PageInput) => listNotes(id, p),
    readNote: (id: string, path: string) => readNote(id, path),
    publishNote: (id: string, input: PublishNoteInput, o?: WriteOptions) => publishNote(id, input, o),
    bindHostedVault: async () => unavailable('runtime.vault-binding', hostedOnly('vault-binding', localCapabilityDetail['vaults.bind'])),
    listVaultBindings: async () => unavailable('runtime.vault-binding-list', hostedOnly('vault-bindings', localCapabilityDetail['vaults.bind'])),
    listAvailableScopes: async () => unavailable('runtime.scope-list', hostedOnly('scopes', scopeDetail)),
    getScopeContext: async () => unavailable('runtime.scope-context', hostedOnly('scope', scopeDetail)),
    getEffectiveScopePolicy: async () => unavailable('runtime.scope-policy', hostedOnly('scope.policy', scopeDetail)),
    getScopeIntelligence: async () => unavailable('runtime.scope-intelligence', hostedOnly('scope.intelligence', scopeDetail)),
    getScopeMemory: async () => unavailable('runtime.scope-memory', hostedOnly('scope.memory', localCapabilityDetail['shared-memory.propose'])),
    createSharedMemoryCandidate: async () => unavailable('runtime.memory-candidate', hostedOnly('memory-candidate', `${localCapabilityDetail['shared-memory.propose']} Nothing is uploaded.`)),
    getMemoryCandidate: async () => unavailable('runtime.memory-candidate-status', hostedOnly('memory-candidate', localCapabilityDetail['shared-memory.propose'])),
    generate: async () => unavailable('service.generation', hostedOnly('intelligence', intelligenceDetail)),
    generateStream,
    generateImage: async () => unavailable('service.generated-image', hostedOnly('intelligence', intelligenceDetail)),
    listUsageReceipts: async () => unavailable('service.product-intelligence-usage-list', hostedOnly('intelligence.usage', intelligenceDetail)),
    getUsageReceipt: async () => unavailable('service.product-intelligence-usage', hostedOnly('intelligence.usage', intelligenceDetail)),
    getIntelligenceBudget: async () => unavailable('service.intelligence-budget', hostedOnly('intelligence.budget', intelligenceDetail)),
    startGeneration: async () => unavailable('service.intelligence-generation', hostedOnly('intelligence', intelligenceDetail)),
    getGeneration: async () => unavailable('service.intelligence-generation', hostedOnly('intelligence', intelligenceDetail)),
    cancelGeneration: async () => unavailable('service.intelligence-generation', hostedOnly('intelligence', intelligenceDetail)),
    // Events have no envelope to be unavailable in: the first step throws, as generateStream's does.
    async *streamGeneration(): AsyncGenerator<GenerationStreamEvent, void, undefined> {
      throw new RuntimeUnavailableError(unavailable('service.intelligence-generation', hostedOnly('intelligence', intelligenceDetail)));
    },
    // The education operations run on the service (the deterministic ones too: their logic is the service's).
    ...educationCalls,
    // Recordings are kept by the service only; a local runtime stores none and has none to read.
    uploadAudio: async () => unavailable('service.media-audio', hostedOnly('media.audio', mediaDetail)),
    // Bytes have no envelope to be unavailable in: the error carries the record's unavailable answer.
    readAudio: async (): Promise<AudioBytes> => {
      throw new RuntimeUnavailableError(unavailable('service.media-audio-record', hostedOnly('media.audio', mediaDetail)));
    },
    listAudio: async () => unavailable('service.media-audio-list', hostedOnly('media.audio', mediaDetail)),
    getAudioMetadata: async () => unavailable('service.media-audio-record', hostedOnly('media.audio', mediaDetail)),
    deleteAudio: async () => unavailable('service.media-deletion', hostedOnly('media.audio', mediaDetail)),
    // Google grants and tokens are held by the service only; a local runtime has no connection to use.
    startGoogleConnection: async () => unavailable('service.connection-attempt', hostedOnly('connections.google', connectionsDetail)),
    listConnections: async () => unavailable('service.connection-list', hostedOnly('connections.google', connectionsDetail)),
    getConnection: async () => unavailable('service.connection', hostedOnly('connections.google', connectionsDetail)),
    revokeConnection: async () => unavailable('service.connection-revocation', hostedOnly('connections.google', connectionsDetail)),
    createDriveDocument: async () => unavailable('service.drive-document', hostedOnly('connections.google', connectionsDetail)),
    getDriveDocument: async () => unavailable('service.drive-document', hostedOnly('connections.google', connectionsDetail)),
    updateDriveDocument: async () => unavailable('service.drive-document', hostedOnly('connections.google', connectionsDetail)),
    // Nothing is read from Drive, so nothing is written to the folder either.
    importDriveDocument: async () => unavailable('service.drive-import', hostedOnly('connections.google', connectionsDetail)),
    listClassroomCourses: async () => unavailable('service.classroom-courses', hostedOnly('connections.google', connectionsDetail)),
    listClassroomRoster: async () => unavailable('service.classroom-roster', hostedOnly('connections.google', connectionsDetail)),
    createClassroomAssignment: async () => unavailable('service.classroom-assignment', hostedOnly('connections.google', connectionsDetail)),
    listAssignmentAttachments: async () => unavailable('service.classroom-attachments', hostedOnly('connections.google', connectionsDetail)),
  };
}
