// The `data` of the core runtime operations' envelopes (context, capabilities, workspace, notes,
// vault bindings). The service serializes its answers with these schemas; both adapters return them.
import { z } from 'zod';
import { supportedRuntimeVersions, missingReasons } from '../envelope.ts';

const id = z.string().uuid();
const timestamp = z.string().describe('ISO-8601, UTC');
const revision = z.string().regex(/^sha256:[0-9a-f]{64}$/).describe('sha256:<64 hex digits> of the note content');

export const runtimeContextSchema = z
  .object({
    adapter: z.enum(['hosted', 'local']),
    runtimeVersion: z.enum(supportedRuntimeVersions),
    organization: z.object({ id, name: z.string() }).nullable(),
    product: z.object({ id, slug: z.string(), name: z.string() }).nullable(),
    installation: z.object({ id }).nullable(),
    principal: z.object({ id, name: z.string() }).nullable(),
    credential: z.object({ id, displayPrefix: z.string(), scopes: z.array(z.string()), expiresAt: timestamp.nullable() }).nullable(),
    workspace: z.object({ id, name: z.string() }).nullable(),
    /** Presentation resolved after authorization (the organization's brand over the pack's defaults); never authority. */
    presentation: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'RuntimeContext' });
export type RuntimeContextDto = z.infer<typeof runtimeContextSchema>;

/** The capabilities a runtime reports; `pulse` is named by the spec but not defined: never available in V1. */
export const capabilityIds = [
  'notes.read',
  'notes.write',
  'vaults.bind',
  'domain-composition',
  'context-scopes',
  'shared-memory.propose',
  'intelligence.generate',
  'intelligence.education',
  // projection, artifacts/recommend, standards/crosswalk: no model, so no provider or budget needed.
  'intelligence.education-deterministic',
  'media.audio',
  'connections.google',
  'decisions.forge',
  'pulse',
] as const;
export type CapabilityId = (typeof capabilityIds)[number];

export const capabilitySchema = z
  .object({
    id: z.enum(capabilityIds),
    available: z.boolean(),
    /** Why not, when unavailable (a stable value); null when available. */
    reason: z.enum(missingReasons).nullable(),
    detail: z.string(),
    /** The credential scopes the capability's operations need. */
    requiredScopes: z.array(z.string()),
  })
  .meta({ id: 'RuntimeCapability' });
export type Capability = z.infer<typeof capabilitySchema>;

export const capabilitiesSchema = z.object({ adapter: z.enum(['hosted', 'local']), capabilities: z.array(capabilitySchema) }).meta({ id: 'RuntimeCapabilities' });
export type CapabilitiesDto = z.infer<typeof capabilitiesSchema>;

export const grantedVaultSchema = z
  .object({ vaultId: id, name: z.string(), access: z.enum(['read', 'write']), grantId: id, grantedAt: timestamp })
  .meta({ id: 'RuntimeGrantedVault' });

export const bindingRequestSchema = z
  .object({
    bindingId: id,
    vaultId: id.nullable().describe('The vault asked for; null lets the person choose.'),
    access: z.enum(['read', 'write']),
    reason: z.string(),
    state: z.enum(['pending', 'granted', 'declined']),
    grantId: id.nullable(),
    createdAt: timestamp,
    decidedAt: timestamp.nullable(),
  })
  .meta({ id: 'RuntimeVaultBinding' });
export type BindingRequestDto = z.infer<typeof bindingRequestSchema>;

export const workspaceSchema = z
  .object({
    workspace: z.object({ id, name: z.string() }),
    /** Only the vaults this installation holds a grant on: a product never sees the rest of the workspace. */
    vaults: z.array(grantedVaultSchema),
    pendingBindings: z.array(bindingRequestSchema),
  })
  .meta({ id: 'RuntimeWorkspace' });
export type WorkspaceDto = z.infer<typeof workspaceSchema>;

export const noteLinkSchema = z.object({
  kind: z.enum(['link', 'embed']),
  target: z.string(),
  heading: z.string().nullable(),
  block: z.string().nullable(),
  alias: z.string().nullable(),
});

export const noteSummarySchema = z.object({ path: z.string(), title: z.string(), revision, size: z.number().int().nonnegative(), updatedAt: timestamp }).meta({ id: 'RuntimeNoteSummary' });

export const noteListSchema = z
  .object({ vaultId: z.string(), notes: z.array(noteSummarySchema), hasMore: z.boolean(), nextCursor: z.string().nullable() })
  .meta({ id: 'RuntimeNoteList' });
export type NoteListDto = z.infer<typeof noteListSchema>;

export const noteSchema = z
  .object({
    vaultId: z.string(),
    path: z.string(),
    title: z.string(),
    content: z.string(),
    revision,
    size: z.number().int().nonnegative(),
    frontmatter: z.record(z.string(), z.unknown()).nullable(),
    links: z.array(noteLinkSchema),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'RuntimeNote' });
export type NoteDto = z.infer<typeof noteSchema>;

/** What a publication did or would do: the same judgement for preview and apply. */
export const publicationSchema = z
  .object({
    mode: z.enum(['preview', 'apply']),
    applied: z.boolean(),
    vaultId: z.string(),
    path: z.string(),
    title: z.string(),
    operation: z.enum(['create', 'replace', 'noop']),
    beforeRevision: revision.nullable(),
    afterRevision: revision,
    size: z.number().int().nonnegative(),
    /** Preview only: whether applying needs expectedRevision (the note exists). */
    revisionRequired: z.boolean().nullable(),
    /** Preview only: a unified diff (may be truncated). */
    diff: z.string().nullable(),
    diffTruncated: z.boolean().nullable(),
    /** Apply only: the provenance event recorded (null for a no-op). */
    eventId: z.string().nullable(),
    /** Apply only: whether this answer replays an earlier apply with the same Idempotency-Key. */
    replayed: z.boolean(),
  })
  .meta({ id: 'RuntimeNotePublication' });
export type PublicationDto = z.infer<typeof publicationSchema>;

export const publishNoteInputSchema = z
  .strictObject({
    path: z.string().min(1).max(8192),
    content: z.string(),
    expectedRevision: revision.optional().describe('The current revision; required when the note exists.'),
    mode: z.enum(['preview', 'apply']).default('preview').describe('preview (default) writes nothing; apply needs Idempotency-Key.'),
  })
  .meta({ id: 'RuntimePublishNoteRequest' });
export type PublishNoteInput = z.input<typeof publishNoteInputSchema>;

export const bindVaultInputSchema = z
  .strictObject({
    vaultId: id.optional().describe('A hosted vault of the installation\'s workspace; omit to let the person choose.'),
    access: z.enum(['read', 'write']),
    reason: z.string().max(500).default('').describe('Shown to the person who decides.'),
  })
  .meta({ id: 'RuntimeBindVaultRequest' });
export type BindVaultInput = z.input<typeof bindVaultInputSchema>;

export const bindingListSchema = z.object({ bindings: z.array(bindingRequestSchema) }).meta({ id: 'RuntimeVaultBindingList' });
