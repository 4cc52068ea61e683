// The versioned DTO envelope: every Product Runtime operation answers with one, from both adapters.
// The server serializes its answers with these schemas and the SDK parses them with the same ones,
// so the contract is written once.
//
//   { runtimeVersion: "1", kind: "runtime.note", status: "complete", data: {…}, missing: [] }
//
// `status` says how much of the answer is there: `complete` (everything asked for), `partial`
// (`data` is present but some parts are absent; `missing` lists each one and why) or `unavailable`
// (`data` is null; `missing` says why). Nothing is ever made up to fill a gap.
import { z } from 'zod';

/** The runtime contract versions this SDK and the service speak. */
export const supportedRuntimeVersions = ['1'] as const;
export type RuntimeVersion = (typeof supportedRuntimeVersions)[number];
export const RUNTIME_VERSION: RuntimeVersion = '1';
export const RUNTIME_VERSION_HEADER = 'X-Service-Runtime-Version';

export const envelopeStatuses = ['complete', 'partial', 'unavailable'] as const;
export type EnvelopeStatus = (typeof envelopeStatuses)[number];

/**
 * Why a part of an answer is absent. Stable values a product may branch on:
 * - `capability_not_configured`: the service has no provider/configuration for it (e.g. no model API);
 * - `scope_missing`: the credential lacks the scope that part needs;
 * - `grant_missing`: no logical-vault grant (or a read-only one where write is needed);
 * - `grant_pending`: a binding was requested and waits for a person to grant it;
 * - `budget_missing`: the organization has no (or a zero) intelligence budget: fails closed;
 * - `budget_exhausted`: the budget or quota for this period is used up;
 * - `setting_missing`: an organization or installation setting the capability needs is absent;
 * - `hosted_only`: the local adapter cannot do this (it never uploads to give hosted symmetry);
 * - `not_supported`: this adapter or runtime version does not offer the operation;
 * - `review_pending`: the data exists only as an unreviewed proposal, which is never returned as trusted.
 */
export const missingReasons = [
  'capability_not_configured',
  'scope_missing',
  'grant_missing',
  'grant_pending',
  'budget_missing',
  'budget_exhausted',
  'setting_missing',
  'hosted_only',
  'not_supported',
  'review_pending',
] as const;
export type MissingReason = (typeof missingReasons)[number];

export const missingPartSchema = z
  .object({
    /** What is absent: a capability id (`intelligence`), a field path (`workspace.vaults`), a scope id. */
    part: z.string().min(1).max(200),
    reason: z.enum(missingReasons),
    /** One human sentence; never branch on it. */
    detail: z.string().max(500),
    /** The scope that would unlock it, for `scope_missing`. */
    scope: z.string().max(100).optional(),
  })
  .meta({ id: 'RuntimeMissingPart' });
export type MissingPart = z.infer<typeof missingPartSchema>;

/** The DTO kinds of the runtime's operations (the `kind` of each envelope). */
export const dtoKinds = [
  'runtime.context',
  'runtime.capabilities',
  'runtime.workspace',
  'runtime.domain-composition',
  'runtime.note-list',
  'runtime.note',
  'runtime.note-publication',
  'runtime.vault-binding',
  'runtime.vault-binding-list',
  'runtime.scope-list',
  'runtime.scope-context',
  'runtime.scope-policy',
  'runtime.scope-intelligence',
  'runtime.scope-memory',
  'runtime.memory-candidate',
  'runtime.memory-candidate-status',
  'service.generation',
  'service.generated-image',
  'service.product-intelligence-usage',
  'service.product-intelligence-usage-list',
  'service.intelligence-budget',
  'service.education-projection',
  'service.education-artifact-recommendations',
  'service.education-standards-crosswalk',
  'service.education-student-guidance',
  'service.education-quality-review',
  'service.education-practice-review',
  'service.education-assessment-draft',
  'service.education-rubric-draft',
  'service.media-audio',
  'service.media-audio-list',
  'service.media-audio-record',
  'service.media-deletion',
  'service.connection-attempt',
  'service.connection-list',
  'service.connection',
  'service.connection-revocation',
  'service.drive-document',
  'service.drive-import',
  'service.classroom-courses',
  'service.classroom-roster',
  'service.classroom-assignment',
  'service.classroom-attachments',
] as const;
export type DtoKind = (typeof dtoKinds)[number] | `service.${string}`;

/** The envelope schema of one DTO kind around `data`. */
export function envelopeSchema<K extends string, D extends z.ZodType>(kind: K, data: D) {
  return z.object({
    runtimeVersion: z.enum(supportedRuntimeVersions),
    kind: z.literal(kind),
    status: z.enum(envelopeStatuses),
    data: data.nullable(),
    missing: z.array(missingPartSchema),
  });
}

export type Envelope<K extends string, D> = {
  runtimeVersion: RuntimeVersion;
  kind: K;
  status: EnvelopeStatus;
  data: D | null;
  missing: MissingPart[];
};

/** A complete answer, or partial when `missing` is not empty. */
export function envelope<K extends string, D>(kind: K, data: D, missing: MissingPart[] = []): Envelope<K, D> {
  return { runtimeVersion: RUNTIME_VERSION, kind, status: missing.length > 0 ? 'partial' : 'complete', data, missing };
}

/** No data at all, and why. `missing` must name at least one reason. */
export function unavailable<K extends string>(kind: K, missing: [MissingPart, ...MissingPart[]]): Envelope<K, never> {
  return { runtimeVersion: RUNTIME_VERSION, kind, status: 'unavailable', data: null, missing };
}
