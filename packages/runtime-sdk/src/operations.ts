// The Runtime SDK's operations: one interface (`RuntimeAdapter`) with the spec's operation names,
// the DTO schema of each operation's `data` (by envelope kind), and the typed error a refusal
// becomes. Both adapters implement the interface; the server serializes its answers with the same
// schemas, so a hosted answer that does not parse is a contract break, never silently accepted.
import { z } from 'zod';
import type { Envelope, MissingPart, MissingReason } from './envelope.ts';
import {
  bindingListSchema,
  bindingRequestSchema,
  capabilitiesSchema,
  grantedVaultSchema,
  noteListSchema,
  noteSchema,
  publicationSchema,
  runtimeContextSchema,
  workspaceSchema,
} from './dto/core.ts';
import type { BindVaultInput, PublishNoteInput } from './dto/core.ts';
import { domainCompositionSchema } from './dto/composition.ts';
import {
  memoryCandidateInputSchema,
  memoryCandidateSchema,
  scopeContextSchema,
  scopeIntelligenceSchema,
  scopeListSchema,
  scopeMemorySchema,
  scopePolicySchema,
  memoryCandidateStatusSchema,
} from './dto/scopes.ts';
import type { MemoryCandidateInput } from './dto/scopes.ts';
import { generatedImageSchema, generationSchema, intelligenceBudgetSchema, intelligenceGenerationSchema, usageReceiptListSchema, usageReceiptSchema } from './dto/intelligence.ts';
import type { GeneratedImage, GenerateImageInput, GenerateInput, GenerationStreamEvent } from './dto/intelligence.ts';
import { educationProjectionSchema } from './dto/education/projection.ts';
import type { EducationProjectionInput } from './dto/education/projection.ts';
import { artifactRecommendationsSchema } from './dto/education/recommend.ts';
import type { RecommendArtifactsInput } from './dto/education/recommend.ts';
import { crosswalkSchema } from './dto/education/crosswalk.ts';
import type { CrosswalkInput } from './dto/education/crosswalk.ts';
import { studentGuidanceSchema } from './dto/education/student-guidance.ts';
import type { StudentGuidanceInput } from './dto/education/student-guidance.ts';
import { qualityReviewSchema } from './dto/education/quality-review.ts';
import type { QualityReviewInput } from './dto/education/quality-review.ts';
import { practiceReviewSchema } from './dto/education/practice-review.ts';
import type { PracticeReviewInput } from './dto/education/practice-review.ts';
import { assessmentDraftSchema } from './dto/education/assessment-draft.ts';
import type { AssessmentDraftInput } from './dto/education/assessment-draft.ts';
import { rubricDraftSchema } from './dto/education/rubric-draft.ts';
import type { RubricDraftInput } from './dto/education/rubric-draft.ts';
import { audioMediaListSchema, audioMediaSchema, audioUploadSchema, mediaDeletionSchema } from './dto/media.ts';
import type { AudioUploadInput } from './dto/media.ts';
import {
  classroomAssignmentSchema,
  classroomAttachmentListSchema,
  classroomCourseListSchema,
  classroomRosterSchema,
  connectionAttemptSchema,
  connectionListSchema,
  connectionRevocationSchema,
  connectionSchema,
  driveDocumentSchema,
} from './dto/connections.ts';
import type { createAssignmentInputSchema, createDriveDocumentInputSchema, driveImportInputSchema, StartConnectionInput, updateDriveDocumentInputSchema } from './dto/connections.ts';

// The education operations' DTOs are exported where the operations are declared: one file to touch
// (besides the DTO's own) when an operation is added.
export * from './dto/education/context.ts';
export * from './dto/education/student-guidance.ts';
export * from './dto/education/projection.ts';
export * from './dto/education/recommend.ts';
export * from './dto/education/crosswalk.ts';
export * from './dto/education/quality-review.ts';
export * from './dto/education/practice-review.ts';
export * from './dto/education/assessment-draft.ts';
export * from './dto/education/rubric-draft.ts';

// ---- DTO schemas per kind --------------------------------------------------------------------

/** What bindHostedVault answers: the open request (partial: grant_pending), or the grant already held (complete). */
export const vaultBindingResultSchema = z
  .object({ binding: bindingRequestSchema.nullable(), grant: grantedVaultSchema.omit({ name: true, grantedAt: true }).nullable() })
  .meta({ id: 'RuntimeVaultBindingResult' });

// The names a product reads them by; the server's modules import the same objects.
export const runtimeContextDtoSchema = runtimeContextSchema;
export const capabilitiesDtoSchema = capabilitiesSchema;
export const workspaceDtoSchema = workspaceSchema;
export const domainCompositionDtoSchema = domainCompositionSchema;
export const noteListDtoSchema = noteListSchema;
export const noteDtoSchema = noteSchema;
export const publicationDtoSchema = publicationSchema;
export const vaultBindingDtoSchema = vaultBindingResultSchema;
export const vaultBindingListDtoSchema = bindingListSchema;
export const scopeListDtoSchema = scopeListSchema;
export const scopeContextDtoSchema = scopeContextSchema;
export const scopePolicyDtoSchema = scopePolicySchema;
export const scopeIntelligenceDtoSchema = scopeIntelligenceSchema;
export const scopeMemoryDtoSchema = scopeMemorySchema;
export const memoryCandidateDtoSchema = memoryCandidateSchema;

/** What importDriveDocument answers: the Drive file it read, and the judgement (preview) or write (apply) of the note. */
export const driveImportResultSchema = z
  .object({ document: driveDocumentSchema, publication: publicationSchema })
  .meta({ id: 'DriveImport' });

/** The `data` schema of every envelope kind: the hosted adapter parses each answer with its kind's. */
export const dtoSchemas = {
  'runtime.context': runtimeContextSchema,
  'runtime.capabilities': capabilitiesSchema,
  'runtime.workspace': workspaceSchema,
  'runtime.domain-composition': domainCompositionSchema,
  'runtime.note-list': noteListSchema,
  'runtime.note': noteSchema,
  'runtime.note-publication': publicationSchema,
  'runtime.vault-binding': vaultBindingResultSchema,
  'runtime.vault-binding-list': bindingListSchema,
  'runtime.scope-list': scopeListSchema,
  'runtime.scope-context': scopeContextSchema,
  'runtime.scope-policy': scopePolicySchema,
  'runtime.scope-intelligence': scopeIntelligenceSchema,
  'runtime.scope-memory': scopeMemorySchema,
  'runtime.memory-candidate': memoryCandidateSchema,
  'runtime.memory-candidate-status': memoryCandidateStatusSchema,
  // Metered intelligence: the service's kinds (`service.*`), parsed like the runtime's own.
  'service.generation': generationSchema,
  'service.generated-image': generatedImageSchema,
  'service.product-intelligence-usage-list': usageReceiptListSchema,
  'service.product-intelligence-usage': usageReceiptSchema,
  'service.intelligence-budget': intelligenceBudgetSchema,
  // Education operations: deterministic (no model, no metering) and metered.
  'service.intelligence-generation': intelligenceGenerationSchema,
  'service.education-projection': educationProjectionSchema,
  'service.education-artifact-recommendations': artifactRecommendationsSchema,
  'service.education-standards-crosswalk': crosswalkSchema,
  'service.education-student-guidance': studentGuidanceSchema,
  'service.education-quality-review': qualityReviewSchema,
  'service.education-practice-review': practiceReviewSchema,
  'service.education-assessment-draft': assessmentDraftSchema,
  'service.education-rubric-draft': rubricDraftSchema,
  // Private audio media (readAudio answers the bytes themselves, not an envelope: AudioBytes).
  'service.media-audio': audioUploadSchema,
  'service.media-audio-list': audioMediaListSchema,
  'service.media-audio-record': audioMediaSchema,
  'service.media-deletion': mediaDeletionSchema,
  // Delegated Google connections: the OAuth attempt, the connections kept, Drive and Classroom.
  'service.connection-attempt': connectionAttemptSchema,
  'service.connection-list': connectionListSchema,
  'service.connection': connectionSchema,
  'service.connection-revocation': connectionRevocationSchema,
  'service.drive-document': driveDocumentSchema,
  'service.drive-import': driveImportResultSchema,
  'service.classroom-courses': classroomCourseListSchema,
  'service.classroom-roster': classroomRosterSchema,
  'service.classroom-assignment': classroomAssignmentSchema,
  'service.classroom-attachments': classroomAttachmentListSchema,
} as const;
export type RuntimeKind = keyof typeof dtoSchemas;
/** The `data` type of a kind. */
export type DtoOf<K extends RuntimeKind> = z.output<(typeof dtoSchemas)[K]>;
/** The envelope a kind answers with. */
export type RuntimeEnvelope<K extends RuntimeKind> = Envelope<K, DtoOf<K>>;

// ---- operations -----------------------------------------------------------------------------

/** Per-call options: cancellation, and for applied writes the caller's own Idempotency-Key. */
export type CallOptions = { signal?: AbortSignal };
export type WriteOptions = CallOptions & {
  /** Reuse the key of an earlier attempt to retry it safely; one is generated when absent. */
  idempotencyKey?: string;
};
export type PageInput = { limit?: number; cursor?: string };
/**
 * Creates that reach a provider (a Drive file, a Classroom assignment) need the caller's own key:
 * a retry after a lost answer must send the key of the first attempt, so it is never generated.
 */
export type KeyedWriteOptions = CallOptions & { idempotencyKey: string };
/** A page of a provider's list (Classroom's own paging): `pageToken` is the previous page's `nextPageToken`. */
export type ProviderPageInput = { pageSize?: number; pageToken?: string };
/** The request bodies of the connection operations, as a caller writes them (defaults optional). */
export type CreateDriveDocumentInput = z.input<typeof createDriveDocumentInputSchema>;
export type UpdateDriveDocumentInput = z.input<typeof updateDriveDocumentInputSchema>;
export type DriveImportInput = z.input<typeof driveImportInputSchema>;
export type CreateClassroomAssignmentInput = z.input<typeof createAssignmentInputSchema>;
/** A page of usage receipts; `installationId` narrows to one installation of the caller's organization. */
export type UsageReceiptPageInput = PageInput & { installationId?: string };

/**
 * A streamed `generate`: iterate it with `for await` (the request is sent on the first step) to get
 * `ready`, each `delta`, then `done`. `idempotencyKey` is the key it is sent with, known before
 * anything is sent: pass it again to retry (a settled request replays, no second model call).
 * Breaking out of the loop (or `return()`) cancels the body; the service aborts its provider request.
 */
export type GenerationStream = AsyncGenerator<GenerationStreamEvent, void, undefined> & { readonly idempotencyKey: string };

/**
 * The credential scopes an installation may be granted. The spec names the first five; the rest are
 * the core runtime operations' own. getRuntimeContext and getCapabilities need none: they describe
 * the credential itself, including what it lacks.
 */
export const runtimeScopes = [
  'intelligence.execute',
  'media.write',
  'media.read',
  'connections.manage',
  'connections.execute',
  'runtime.read',
  'notes.read',
  'notes.write',
  'vaults.bind',
  'scopes.read',
  'memory.propose',
] as const;
export type RuntimeScope = (typeof runtimeScopes)[number];

/**
 * How an operation takes an Idempotency-Key:
 * - `required`: always; the SDK sends the caller's (`options.idempotencyKey`) or a fresh one;
 * - `caller`: always, and only the caller's own, never generated: a create that reaches a provider
 *   or stores bytes is recognized on retry only by the key of its first attempt;
 * - `apply`: only when the body's `mode` is `apply` (a preview writes nothing and is repeatable);
 * - `none`: never (reads, and writes guarded otherwise, e.g. by an expected version).
 */
export type IdempotencyRule = 'required' | 'caller' | 'apply' | 'none';

/** Everything about an operation that is not its input or output schema: the one place each fact is stated. */
export type OperationFacts = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Under /api/product/v1; `:name` segments are path parameters. */
  path: string;
  /** The envelope kind of its answer (the data schema is dtoSchemas[kind]). */
  kind: RuntimeKind;
  /** The credential scope it needs; null for the two that describe the credential itself. */
  scope: RuntimeScope | null;
  /** Names a vault (`:vaultId`): the chain checks the installation's grant, read for GET, write otherwise. */
  vault: boolean;
  idempotency: IdempotencyRule;
  /** The metered kind its usage receipts name (spec: "metered kind"), or false: no model, no metering. */
  metered: string | false;
  /** The vertical pack whose composition lists it (getDomainComposition), if any. */
  pack?: 'education';
  /** The OpenAPI operationId, where the operation's name is taken in the service's one document (REST's listNotes, readNote). */
  operationId?: string;
  /** One line: what it does. The OpenAPI summary (after the name) and the pack's operation summary. */
  summary: string;
};

/** Where an operation lives on the hosted runtime: the facts an adapter needs to call it. */
export type OperationRoute = Pick<OperationFacts, 'method' | 'path' | 'kind' | 'scope' | 'vault'>;

const unkeyed = { idempotency: 'none', metered: false } as const;
const education = '/intelligence/education';

/**
 * The operations as the spec names them: the one declaration of each operation's facts. The service
 * registers its routes from this table (api/routes/product/operation-route.ts), the education pack
 * lists its operations from it, and the hosted adapter calls and keys requests by it.
 */
export const runtimeOperations = {
  getRuntimeContext: { method: 'GET', path: '/context', kind: 'runtime.context', scope: null, vault: false, ...unkeyed, summary: 'the calling chain and its presentation' },
  getCapabilities: { method: 'GET', path: '/capabilities', kind: 'runtime.capabilities', scope: null, vault: false, ...unkeyed, summary: 'what is available to this credential, and why not' },
  getWorkspace: { method: 'GET', path: '/workspace', kind: 'runtime.workspace', scope: 'runtime.read', vault: false, ...unkeyed, summary: 'the workspace and the vaults granted to the installation' },
  getDomainComposition: {
    method: 'GET',
    path: '/composition',
    kind: 'runtime.domain-composition',
    scope: 'runtime.read',
    vault: false,
    ...unkeyed,
    summary: "the product's vertical and experience packs, composed for this caller",
  },
  listNotes: { method: 'GET', path: '/vaults/:vaultId/notes', kind: 'runtime.note-list', scope: 'notes.read', vault: true, ...unkeyed, operationId: 'runtimeListNotes', summary: 'inventory of a granted vault' },
  readNote: { method: 'GET', path: '/vaults/:vaultId/note', kind: 'runtime.note', scope: 'notes.read', vault: true, ...unkeyed, operationId: 'runtimeReadNote', summary: 'one note of a granted vault, by path' },
  publishNote: {
    method: 'POST',
    path: '/vaults/:vaultId/notes',
    kind: 'runtime.note-publication',
    scope: 'notes.write',
    vault: true,
    idempotency: 'apply',
    metered: false,
    summary: 'preview (default) or apply one note write',
  },
  bindHostedVault: { method: 'POST', path: '/vault-bindings', kind: 'runtime.vault-binding', scope: 'vaults.bind', vault: false, ...unkeyed, summary: 'ask a person to grant a hosted vault' },
  listVaultBindings: { method: 'GET', path: '/vault-bindings', kind: 'runtime.vault-binding-list', scope: 'vaults.bind', vault: false, ...unkeyed, summary: "the installation's vault binding requests" },
  listAvailableScopes: { method: 'GET', path: '/scopes', kind: 'runtime.scope-list', scope: 'scopes.read', vault: false, ...unkeyed, summary: 'the context scopes granted to this installation' },
  getScopeContext: { method: 'GET', path: '/scopes/:scopeId', kind: 'runtime.scope-context', scope: 'scopes.read', vault: false, ...unkeyed, summary: 'one context scope, resolved' },
  getEffectiveScopePolicy: { method: 'GET', path: '/scopes/:scopeId/policy', kind: 'runtime.scope-policy', scope: 'scopes.read', vault: false, ...unkeyed, summary: 'every policy setting of a scope after inheritance' },
  getScopeIntelligence: {
    method: 'GET',
    path: '/scopes/:scopeId/intelligence',
    kind: 'runtime.scope-intelligence',
    scope: 'scopes.read',
    vault: false,
    ...unkeyed,
    summary: 'whether intelligence may run in a scope',
  },
  getScopeMemory: { method: 'GET', path: '/scopes/:scopeId/memory', kind: 'runtime.scope-memory', scope: 'scopes.read', vault: false, ...unkeyed, summary: "a scope's reviewed shared memory" },
  createSharedMemoryCandidate: {
    method: 'POST',
    path: '/scopes/:scopeId/memory-candidates',
    kind: 'runtime.memory-candidate',
    scope: 'memory.propose',
    vault: false,
    idempotency: 'required',
    metered: false,
    summary: 'propose shared memory for review',
  },
  getMemoryCandidate: {
    method: 'GET',
    path: '/scopes/:scopeId/memory-candidates/:candidateId',
    kind: 'runtime.memory-candidate-status',
    scope: 'memory.propose',
    vault: false,
    ...unkeyed,
    summary: 'a memory candidate followed through review to its receipt',
  },
  generate: {
    method: 'POST',
    path: `${education}/generate`,
    kind: 'service.generation',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'generate',
    pack: 'education',
    summary: 'generated planning material with model identity and usage receipt; JSON or an NDJSON stream',
  },
  generateImage: {
    method: 'POST',
    path: `${education}/generate-image`,
    kind: 'service.generated-image',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'generate-image',
    pack: 'education',
    summary: 'a classroom visual from a bounded brief, with accessible alt text and a usage receipt',
  },
  listUsageReceipts: {
    method: 'GET',
    path: '/intelligence/usage',
    kind: 'service.product-intelligence-usage-list',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    summary: "the organization's usage receipts, newest first",
  },
  getUsageReceipt: {
    method: 'GET',
    path: '/intelligence/usage/:receiptId',
    kind: 'service.product-intelligence-usage',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    summary: 'one usage receipt',
  },
  getIntelligenceBudget: {
    method: 'GET',
    path: '/intelligence/budget',
    kind: 'service.intelligence-budget',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    summary: "this month's intelligence budget and what a new request can still reserve",
  },
  getGeneration: {
    method: 'GET',
    path: '/intelligence/generations/:generationId',
    kind: 'service.intelligence-generation',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    summary: "a generation's status, and its result and receipt once it ended",
  },
  cancelGeneration: {
    method: 'POST',
    path: '/intelligence/generations/:generationId/cancel',
    kind: 'service.intelligence-generation',
    scope: 'intelligence.execute',
    vault: false,
    // Idempotent by itself: a cancel asked twice is one cancel.
    ...unkeyed,
    summary: 'stops a generation (its upstream request closes; the text so far is kept)',
  },
  educationProjection: {
    method: 'POST',
    path: `${education}/projection`,
    kind: 'service.education-projection',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    pack: 'education',
    summary: 'deterministic findings over bounded Education entities and provenance-backed relationships, with a Decision Signal handoff; read-only',
  },
  recommendArtifacts: {
    method: 'POST',
    path: `${education}/artifacts/recommend`,
    kind: 'service.education-artifact-recommendations',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    pack: 'education',
    summary: 'a deterministic ranking of at most 250 authorized artifacts with explainable signals and near-duplicate detection; never returns artifact content',
  },
  crosswalkStandards: {
    method: 'POST',
    path: `${education}/standards/crosswalk`,
    kind: 'service.education-standards-crosswalk',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    pack: 'education',
    summary: 'deterministic candidate matches between two authorized framework slices, proposals for qualified human review',
  },
  studentGuidance: {
    method: 'POST',
    path: `${education}/student-guidance`,
    kind: 'service.education-student-guidance',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'education-student-guidance',
    pack: 'education',
    summary: 'one bounded support move for a learner under a fail-closed policy, with safety and usage receipts; the completed answer is withheld',
  },
  educationQualityReview: {
    method: 'POST',
    path: `${education}/quality-review`,
    kind: 'service.education-quality-review',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'education-quality-review',
    pack: 'education',
    summary: 'an advisory evaluation of one artifact revision (alignment, sources, reading level, accessibility, bias risk)',
  },
  educationPracticeReview: {
    method: 'POST',
    path: `${education}/practice-review`,
    kind: 'service.education-practice-review',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'education-practice-review',
    pack: 'education',
    summary: 'bounded practice proposals for one standard from teacher-confirmed aggregate evidence; no learner identity',
  },
  assessmentDraft: {
    method: 'POST',
    path: `${education}/assessment-draft`,
    kind: 'service.education-assessment-draft',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'education-assessment-draft',
    pack: 'education',
    summary: 'a strict structured assessment draft, proposed until an educator reviews it',
  },
  rubricDraft: {
    method: 'POST',
    path: `${education}/rubric-draft`,
    kind: 'service.education-rubric-draft',
    scope: 'intelligence.execute',
    vault: false,
    idempotency: 'required',
    metered: 'education-rubric-draft',
    pack: 'education',
    summary: 'a weighted analytic rubric with observable descriptors, proposed for educator review',
  },
  // The body of uploadAudio is the audio itself; its metadata travels in headers (MEDIA_HEADERS).
  uploadAudio: {
    method: 'POST',
    path: `${education}/media/audio`,
    kind: 'service.media-audio',
    scope: 'media.write',
    vault: false,
    idempotency: 'caller',
    metered: false,
    summary: 'store private WebM, Ogg or MP4 audio',
  },
  listAudio: { method: 'GET', path: `${education}/media`, kind: 'service.media-audio-list', scope: 'media.read', vault: false, ...unkeyed, summary: "the installation's stored media and the organization's storage" },
  getAudioMetadata: {
    method: 'GET',
    path: `${education}/media/:mediaId/metadata`,
    kind: 'service.media-audio-record',
    scope: 'media.read',
    vault: false,
    ...unkeyed,
    summary: 'the record of one stored media, without its bytes',
  },
  deleteAudio: { method: 'DELETE', path: `${education}/media/:mediaId`, kind: 'service.media-deletion', scope: 'media.write', vault: false, ...unkeyed, summary: 'delete stored media and free its bytes' },
  // Delegated Google connections. The OAuth callback is no operation: the person's browser follows it.
  startGoogleConnection: {
    method: 'POST',
    path: '/connections/google',
    kind: 'service.connection-attempt',
    scope: 'connections.manage',
    vault: false,
    ...unkeyed,
    summary: 'start a delegated Google connection (the consent address to send a person to)',
  },
  listConnections: { method: 'GET', path: '/connections', kind: 'service.connection-list', scope: 'connections.manage', vault: false, ...unkeyed, summary: "the installation's connections" },
  getConnection: { method: 'GET', path: '/connections/:connectionId', kind: 'service.connection', scope: 'connections.manage', vault: false, ...unkeyed, summary: 'one connection' },
  revokeConnection: {
    method: 'DELETE',
    path: '/connections/:connectionId',
    kind: 'service.connection-revocation',
    scope: 'connections.manage',
    vault: false,
    ...unkeyed,
    summary: 'revoke the grant at Google and delete the tokens',
  },
  createDriveDocument: {
    method: 'POST',
    path: '/connections/:connectionId/drive/documents',
    kind: 'service.drive-document',
    scope: 'connections.execute',
    vault: false,
    idempotency: 'caller',
    metered: false,
    summary: 'create a Google Doc from Markdown',
  },
  getDriveDocument: {
    method: 'GET',
    path: '/connections/:connectionId/drive/documents/:fileId',
    kind: 'service.drive-document',
    scope: 'connections.execute',
    vault: false,
    ...unkeyed,
    summary: "a Drive file's lineage as Drive has it now",
  },
  // Guarded by expectedVersion, not a key: a retry of an update that landed is a version conflict, never a second write.
  updateDriveDocument: {
    method: 'PUT',
    path: '/connections/:connectionId/drive/documents/:fileId',
    kind: 'service.drive-document',
    scope: 'connections.execute',
    vault: false,
    ...unkeyed,
    summary: "replace a Google Doc if Drive's version is still the expected one",
  },
  importDriveDocument: {
    method: 'POST',
    path: '/vaults/:vaultId/imports/drive',
    kind: 'service.drive-import',
    scope: 'connections.execute',
    vault: true,
    idempotency: 'apply',
    metered: false,
    summary: 'a Drive document into a hosted note: preview (default) or apply',
  },
  listClassroomCourses: {
    method: 'GET',
    path: '/connections/:connectionId/classroom/courses',
    kind: 'service.classroom-courses',
    scope: 'connections.execute',
    vault: false,
    ...unkeyed,
    summary: "the teacher's active Classroom courses",
  },
  listClassroomRoster: {
    method: 'GET',
    path: '/connections/:connectionId/classroom/courses/:courseId/students',
    kind: 'service.classroom-roster',
    scope: 'connections.execute',
    vault: false,
    ...unkeyed,
    summary: "a course's students: user ids and names only",
  },
  createClassroomAssignment: {
    method: 'POST',
    path: '/connections/:connectionId/classroom/courses/:courseId/assignments',
    kind: 'service.classroom-assignment',
    scope: 'connections.execute',
    vault: false,
    idempotency: 'caller',
    metered: false,
    summary: 'create a Classroom assignment',
  },
  listAssignmentAttachments: {
    method: 'GET',
    path: '/connections/:connectionId/classroom/courses/:courseId/assignments/:courseWorkId/attachments',
    kind: 'service.classroom-attachments',
    scope: 'connections.execute',
    vault: false,
    ...unkeyed,
    summary: "the submissions of an assignment and what is attached to them (never a grade)",
  },
} as const satisfies Record<string, OperationFacts>;
export type RuntimeOperationName = keyof typeof runtimeOperations;

/** Operations that answer bytes or events rather than an envelope: their facts, with no kind. */
export const runtimeByteOperations = {
  readAudio: { method: 'GET', path: `${education}/media/:mediaId`, scope: 'media.read', vault: false, ...unkeyed, summary: 'the bytes of stored audio, whole or one range' },
  streamGeneration: {
    method: 'GET',
    path: '/intelligence/generations/:generationId/events',
    scope: 'intelligence.execute',
    vault: false,
    ...unkeyed,
    summary: "a generation's events after an offset (NDJSON or SSE), live until done",
  },
} as const satisfies Record<string, Omit<OperationFacts, 'kind'>>;
export type RuntimeByteOperationName = keyof typeof runtimeByteOperations;

/** The operations a vertical pack lists (`pack` in the table), as a type. */
export type PackOperationName<P extends 'education'> = { [N in RuntimeOperationName]: (typeof runtimeOperations)[N] extends { pack: P } ? N : never }[RuntimeOperationName];

/** The operations called with their JSON body alone (POST, no path parameter): the adapters derive these methods from the table. */
export type BodyOperationName = {
  [N in RuntimeOperationName]: (typeof runtimeOperations)[N] extends { method: 'POST'; path: infer P } ? (P extends `${string}:${string}` ? never : N) : never;
}[RuntimeOperationName];

/** Every operation's facts by name, envelope and byte operations alike. */
export function operationFacts(name: RuntimeOperationName | RuntimeByteOperationName): Omit<OperationFacts, 'kind'> & { kind?: RuntimeKind } {
  return name in runtimeOperations ? runtimeOperations[name as RuntimeOperationName] : runtimeByteOperations[name as RuntimeByteOperationName];
}

/** The OpenAPI operationId of an operation: its name unless the table says otherwise. */
export function operationIdOf(name: RuntimeOperationName | RuntimeByteOperationName): string {
  const facts = operationFacts(name) as { operationId?: string };
  return facts.operationId ?? name;
}

/** The operations a vertical pack lists, in table order. */
export function packOperationNames(pack: 'education'): RuntimeOperationName[] {
  return (Object.keys(runtimeOperations) as RuntimeOperationName[]).filter((name) => (runtimeOperations[name] as OperationFacts).pack === pack);
}

/** A byte range to read: `end` inclusive, to the end of the media when absent. */
export type ByteRange = { start: number; end?: number };
export type ReadAudioOptions = CallOptions & {
  /** One byte range (HTTP Range `bytes=start-end`); the answer is 206 with `range`, or 200 with the whole media if the service ignored it. */
  range?: ByteRange;
  /** An ETag read earlier: an unchanged media answers 304 with no bytes. */
  ifNoneMatch?: string;
};

/**
 * What readAudio answers: the stored bytes (all of them, or the range asked for) and what the
 * service said of them. Browser-safe: a Uint8Array, never a Buffer, and no storage address.
 */
export type AudioBytes = {
  /** 200 the whole media, 206 the range in `range`, 304 unchanged since `ifNoneMatch` (no bytes). */
  status: 200 | 206 | 304;
  /** The type recognized at upload (`audio/webm`, `audio/ogg`, `audio/mp4`); null on 304. */
  mediaType: string | null;
  /** The strong ETag (the quoted SHA-256): pass it as `ifNoneMatch` to revalidate. */
  etag: string;
  /** The whole media's size in bytes (also on 206); null on 304. */
  sizeBytes: number | null;
  /** Which bytes `bytes` holds on 206 (`end` inclusive, `size` the whole media's); null otherwise. */
  range: { start: number; end: number; size: number } | null;
  bytes: Uint8Array;
};

/**
 * One interface, two adapters (hosted: HTTP to /api/product/v1; local: a folder of Markdown).
 * Every operation answers its envelope (complete, partial or unavailable, never made-up data) or
 * throws a RuntimeError carrying the refusal's stable `code`.
 */
export interface RuntimeAdapter {
  /** 'hosted' or 'local': which adapter answers. */
  readonly adapter: 'hosted' | 'local';
  getRuntimeContext(options?: CallOptions): Promise<RuntimeEnvelope<'runtime.context'>>;
  getCapabilities(options?: CallOptions): Promise<RuntimeEnvelope<'runtime.capabilities'>>;
  getWorkspace(options?: CallOptions): Promise<RuntimeEnvelope<'runtime.workspace'>>;
  getDomainComposition(options?: CallOptions): Promise<RuntimeEnvelope<'runtime.domain-composition'>>;
  listNotes(vaultId: string, page?: PageInput, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.note-list'>>;
  readNote(vaultId: string, path: string, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.note'>>;
  /** Preview by default; `mode: 'apply'` writes, with an Idempotency-Key (yours or a generated one). */
  publishNote(vaultId: string, input: PublishNoteInput, options?: WriteOptions): Promise<RuntimeEnvelope<'runtime.note-publication'>>;
  /** Asks a person to grant a hosted vault; grants nothing by itself. */
  bindHostedVault(input: BindVaultInput, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.vault-binding'>>;
  /** The installation's binding requests (pending, granted, declined). */
  listVaultBindings(page?: { limit?: number }, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.vault-binding-list'>>;
  listAvailableScopes(page?: PageInput, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.scope-list'>>;
  getScopeContext(scopeId: string, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.scope-context'>>;
  getEffectiveScopePolicy(scopeId: string, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.scope-policy'>>;
  getScopeIntelligence(scopeId: string, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.scope-intelligence'>>;
  /** Reviewed shared memory only; a candidate appears here after a person approved it and Forge executed it. */
  getScopeMemory(scopeId: string, page?: PageInput, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.scope-memory'>>;
  /** Proposes shared memory; it is never trusted until reviewed (always an applied write: Idempotency-Key). */
  createSharedMemoryCandidate(scopeId: string, input: MemoryCandidateInput, options?: WriteOptions): Promise<RuntimeEnvelope<'runtime.memory-candidate'>>;
  /** Follows a candidate through review to Forge's receipt (the Forge operation a product may watch). */
  getMemoryCandidate(scopeId: string, candidateId: string, options?: CallOptions): Promise<RuntimeEnvelope<'runtime.memory-candidate-status'>>;
  /**
   * Metered generation, answered whole once it settled (always keyed: yours or a generated one).
   * Unavailable (data null) when the service has no model provider (`capability_not_configured`)
   * or on the local adapter (`hosted_only`).
   */
  generate(input: GenerateInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.generation'>>;
  /**
   * The same generation as a stream of ready, delta… and done events. Where `generate` would answer
   * the unavailable envelope, iterating throws RuntimeUnavailableError (its `envelope` is that answer).
   */
  generateStream(input: GenerateInput, options?: WriteOptions): GenerationStream;
  /**
   * The same generation in background mode (`Prefer: respond-async`): answers once it is reserved
   * and logged (HTTP 202), with its status and `eventsUrl`; it then runs with no connection holding
   * it (read it with getGeneration / streamGeneration, stop it with cancelGeneration). The same key
   * answers the same generation. A service without a model answers the unavailable envelope (as
   * generate does); a key first answered without background mode replays as it was: RuntimeResponseError.
   */
  startGeneration(input: GenerateInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.intelligence-generation'>>;
  /** One metered classroom image, base64 in `data.base64` (`generatedImageBytes` decodes it); always keyed. */
  generateImage(input: GenerateImageInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.generated-image'>>;
  /** The organization's usage receipts, newest first. */
  listUsageReceipts(page?: UsageReceiptPageInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.product-intelligence-usage-list'>>;
  getUsageReceipt(receiptId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.product-intelligence-usage'>>;
  /** This month's budget, what is committed against it, and what a new request can still reserve. */
  getIntelligenceBudget(options?: CallOptions): Promise<RuntimeEnvelope<'service.intelligence-budget'>>;
  /** A generation's status (queued, running, completed, failed, cancelled), its result and receipt once it ended. */
  getGeneration(generationId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.intelligence-generation'>>;
  /** Stops a generation; idempotent. Answers the generation as it stands after the ask. */
  cancelGeneration(generationId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.intelligence-generation'>>;
  /**
   * A generation's events after `after` (its seq; default 0: from the start), live until done. Ends
   * at once with no event when nothing follows `after` in an ended generation; a log whose writer died
   * ends without done (RuntimeStreamError). Breaking out of the loop closes the connection only.
   */
  streamGeneration(generationId: string, options?: CallOptions & { after?: number }): AsyncGenerator<GenerationStreamEvent, void, undefined>;
  /** Deterministic findings and Decision Signals over Education entities (no model, no metering, read-only). */
  educationProjection(input: EducationProjectionInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.education-projection'>>;
  /** Deterministic ranking of at most 250 authorized artifacts (no model, no metering; never echoes content). */
  recommendArtifacts(input: RecommendArtifactsInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.education-artifact-recommendations'>>;
  /** Deterministic crosswalk candidates between two CASE slices, each a proposal for qualified review. */
  crosswalkStandards(input: CrosswalkInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.education-standards-crosswalk'>>;
  /** One metered guidance turn for a learner under the fail-closed policy (Idempotency-Key: yours or a fresh one). */
  studentGuidance(input: StudentGuidanceInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.education-student-guidance'>>;
  /** A metered, advisory evaluation of one artifact revision (Idempotency-Key: yours or a fresh one). */
  educationQualityReview(input: QualityReviewInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.education-quality-review'>>;
  /** Metered practice proposals for one standard over two to five sessions, from aggregate evidence only. */
  educationPracticeReview(input: PracticeReviewInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.education-practice-review'>>;
  /** A metered assessment draft, `proposed` until an educator reviews it (answer keys under educatorOnly). */
  assessmentDraft(input: AssessmentDraftInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.education-assessment-draft'>>;
  /** A metered analytic rubric draft: weighted criteria, one observable descriptor per level, `proposed`. */
  rubricDraft(input: RubricDraftInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.education-rubric-draft'>>;
  /**
   * Stores private WebM, Ogg or MP4 audio (at most 3 MiB, 120 s), the bytes sent as they are. Keyed
   * by `input.idempotencyKey`, which is required: a recording is retried with the key it was first
   * sent with, and the same key and bytes replay the same mediaId (`replayed: true`). Hence no
   * WriteOptions: the key is never generated and has one place.
   */
  uploadAudio(input: AudioUploadInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.media-audio'>>;
  /** The bytes of stored audio, whole or one range, revalidated with `ifNoneMatch`; the local adapter throws RuntimeUnavailableError. */
  readAudio(mediaId: string, options?: ReadAudioOptions): Promise<AudioBytes>;
  /** The installation's stored media, newest first, and the organization's storage. */
  listAudio(page?: PageInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.media-audio-list'>>;
  /** The record of one stored media, without its bytes. */
  getAudioMetadata(mediaId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.media-audio-record'>>;
  /** Deletes stored media and frees its bytes; a second delete of the same mediaId is media_not_found. */
  deleteAudio(mediaId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.media-deletion'>>;
  /**
   * Starts a delegated Google connection: send the person to `authorizationUrl` (single-use, until
   * `expiresAt`); after consent their browser returns to `returnTarget` with `connectionId=` (or
   * `error=`) in its query. `returnTarget` must be registered on the product definition.
   */
  startGoogleConnection(input: StartConnectionInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.connection-attempt'>>;
  /** The installation's connections (ids, services, granted scopes, state: never a token or an address). */
  listConnections(page?: PageInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.connection-list'>>;
  /** One connection; another installation's is connection_not_found, like a missing one. */
  getConnection(connectionId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.connection'>>;
  /** Revokes the grant at Google and deletes the tokens (`providerRevocation` says what Google answered). */
  revokeConnection(connectionId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.connection-revocation'>>;
  /**
   * Creates a Google Doc from Markdown. The key is required and never generated: a retry sends the
   * first attempt's key and replays the same fileId (`replayed: true`), so no second file is made.
   */
  createDriveDocument(connectionId: string, input: CreateDriveDocumentInput, options: KeyedWriteOptions): Promise<RuntimeEnvelope<'service.drive-document'>>;
  /** A Drive file's lineage (fileId, name, version, modifiedTime) as Drive has it now. */
  getDriveDocument(connectionId: string, fileId: string, options?: CallOptions): Promise<RuntimeEnvelope<'service.drive-document'>>;
  /** Replaces the document if Drive's version is still `expectedVersion`; otherwise drive_version_conflict (`extensions.current`), nothing written. */
  updateDriveDocument(connectionId: string, fileId: string, input: UpdateDriveDocumentInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.drive-document'>>;
  /** A Drive document into a hosted note: preview by default; `mode: 'apply'` writes, keyed (yours or a generated one) like publishNote. */
  importDriveDocument(vaultId: string, input: DriveImportInput, options?: WriteOptions): Promise<RuntimeEnvelope<'service.drive-import'>>;
  /** The teacher's Classroom courses, a provider page at a time. */
  listClassroomCourses(connectionId: string, page?: ProviderPageInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.classroom-courses'>>;
  /** A course's students: user ids and names only. */
  listClassroomRoster(connectionId: string, courseId: string, page?: ProviderPageInput, options?: CallOptions): Promise<RuntimeEnvelope<'service.classroom-roster'>>;
  /**
   * Creates a Classroom assignment. The key is required and never generated: a retry with the first
   * attempt's key replays the same courseWorkId, or after an ambiguous failure finds it by marker.
   */
  createClassroomAssignment(
    connectionId: string,
    courseId: string,
    input: CreateClassroomAssignmentInput,
    options: KeyedWriteOptions,
  ): Promise<RuntimeEnvelope<'service.classroom-assignment'>>;
  /** The submissions of an assignment and what is attached to them (never a grade). */
  listAssignmentAttachments(
    connectionId: string,
    courseId: string,
    courseWorkId: string,
    page?: ProviderPageInput,
    options?: CallOptions,
  ): Promise<RuntimeEnvelope<'service.classroom-attachments'>>;
}

/** The bytes of a generated image (the service checked their signature against `mediaType`). Browser-safe: no Buffer. */
export function generatedImageBytes(image: Pick<GeneratedImage, 'base64'>): Uint8Array {
  const binary = atob(image.base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export type { BindVaultInput, PublishNoteInput, MemoryCandidateInput };
export { memoryCandidateInputSchema };

// ---- errors ---------------------------------------------------------------------------------

/**
 * The service's problem+json body (RFC 9457): `code` is the stable value to branch on; other
 * members (`failedLink`, `currentRevision`, `supportedVersions`, `resetsAt`, `errors`…) are extensions.
 */
export const problemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  code: z.string().min(1),
  detail: z.string().optional(),
  instance: z.string().optional(),
  requestId: z.string().optional(),
});
export type Problem = z.infer<typeof problemSchema>;

/** The codes a product most often branches on (the service's catalog has more; `code` is any of them). */
export type KnownRuntimeErrorCode =
  | 'invalid_request'
  | 'credential_invalid'
  | 'scope_missing'
  | 'vault_not_granted'
  | 'vault_not_found'
  | 'runtime_version_invalid'
  | 'runtime_version_unsupported'
  | 'organization_quota_exhausted'
  | 'invalid_path'
  | 'note_too_large'
  | 'note_not_found'
  | 'revision_required'
  | 'revision_conflict'
  | 'path_case_conflict'
  | 'idempotency_key_required'
  | 'invalid_idempotency_key'
  | 'idempotency_key_reused'
  | 'idempotency_in_flight'
  | 'context_scope_not_found'
  | 'payload_too_large'
  // Metered intelligence (docs/runtime-sdk.md, "Metered intelligence").
  | 'intelligence_budget_missing'
  | 'intelligence_budget_exhausted'
  | 'intelligence_sublimit_exhausted'
  | 'intelligence_concurrency_exhausted'
  | 'intelligence_reservation_expired'
  | 'intelligence_request_failed'
  | 'intelligence_provider_rate_limited'
  | 'intelligence_provider_refused'
  | 'intelligence_provider_error'
  | 'intelligence_provider_unreachable'
  | 'intelligence_provider_timeout'
  | 'intelligence_provider_misconfigured'
  | 'intelligence_interrupted'
  | 'intelligence_output_invalid'
  | 'intelligence_output_unreadable'
  // The platform's own dependencies (docs/api.md): retry after Retry-After.
  | 'database_unavailable'
  | 'workflow_service_unavailable'
  | 'usage_receipt_not_found'
  // Private audio media (docs/runtime-sdk.md, "Private audio media").
  | 'media_empty'
  | 'media_reference_invalid'
  | 'media_duration_invalid'
  | 'media_duration_exceeded'
  | 'media_duration_mismatch'
  | 'media_type_unsupported'
  | 'media_truncated'
  | 'media_storage_exhausted'
  | 'media_storage_unavailable'
  | 'media_upload_outcome_unknown'
  | 'media_read_unavailable'
  | 'media_deletion_pending'
  | 'media_not_found'
  | 'range_not_satisfiable'
  | 'precondition_failed'
  // Delegated Google connections (docs/runtime-sdk.md, "Delegated Google connections").
  | 'connection_not_found'
  | 'connection_reauthorization_required'
  | 'oauth_return_target_mismatch'
  | 'connections_not_configured'
  | 'drive_version_conflict'
  | 'drive_content_too_large'
  | 'drive_unsupported_file'
  | 'connection_provider_error'
  | 'connection_provider_timeout'
  | 'connection_provider_rate_limited'
  | 'connection_provider_forbidden'
  | 'connection_provider_not_found';
export type RuntimeErrorCode = KnownRuntimeErrorCode | (string & {});

/** A refusal of the runtime: the HTTP status, the stable `code`, and the problem's extensions. */
export class RuntimeError extends Error {
  override readonly name = 'RuntimeError';
  readonly status: number;
  readonly code: RuntimeErrorCode;
  readonly title: string;
  readonly detail: string | undefined;
  readonly requestId: string | undefined;
  /** Every member of the problem beyond type/title/status/code/detail/instance/requestId. */
  readonly extensions: Record<string, unknown>;
  /** The Idempotency-Key the refused write was sent with: pass it again to retry the same write. */
  readonly idempotencyKey: string | undefined;

  constructor(problem: Problem, options: { idempotencyKey?: string | undefined } = {}) {
    super(problem.detail ?? problem.title);
    const { type: _type, title, status, code, detail, instance: _instance, requestId, ...extensions } = problem;
    this.status = status;
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.requestId = requestId;
    this.extensions = extensions;
    this.idempotencyKey = options.idempotencyKey;
  }
}

/**
 * A streamed operation that cannot stream because the capability is absent: the service answered
 * the `unavailable` envelope instead (no model provider: `capability_not_configured`), or the
 * adapter cannot do it (the local adapter: `hosted_only`). Not a refusal: nothing was reserved or
 * charged. `code` is the first missing part's reason; `envelope` is the whole answer.
 */
export class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
  readonly code: MissingReason;
  readonly missing: MissingPart[];
  readonly envelope: Envelope<string, unknown>;
  /** The key the request was (or would have been) sent with. */
  readonly idempotencyKey: string | undefined;

  /** `answer` is an unavailable envelope; it names at least one missing part (the envelope contract). */
  constructor(answer: Envelope<string, unknown>, options: { idempotencyKey?: string | undefined } = {}) {
    const first = answer.missing[0];
    if (answer.status !== 'unavailable' || !first) throw new TypeError('RuntimeUnavailableError needs an unavailable envelope naming what is missing');
    super(answer.missing.map((m) => m.detail).join(' '));
    this.code = first.reason;
    this.missing = answer.missing;
    this.envelope = answer;
    this.idempotencyKey = options.idempotencyKey;
  }
}

/**
 * An answer that is not what the contract promises (not JSON, an envelope or problem that does not
 * parse, another runtime version): the SDK refuses it rather than hand over something unchecked.
 */
export class RuntimeResponseError extends Error {
  override readonly name: string = 'RuntimeResponseError';
  readonly status: number | null;
  /** The zod issues when the body parsed as JSON but not as the expected shape. */
  readonly issues: readonly z.core.$ZodIssue[];

  constructor(message: string, options: { status?: number | null; issues?: readonly z.core.$ZodIssue[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? null;
    this.issues = options.issues ?? [];
  }
}

/** Parses `body` as the envelope of `kind`, or throws RuntimeResponseError naming what does not match. */
export function parseEnvelope<K extends RuntimeKind>(kind: K, body: unknown, schema: z.ZodType, status: number | null = null): RuntimeEnvelope<K> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const first = result.error.issues[0];
    const where = first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'no detail';
    throw new RuntimeResponseError(`The answer is not a ${kind} envelope (${where}).`, { status, issues: result.error.issues });
  }
  return result.data as RuntimeEnvelope<K>;
}
