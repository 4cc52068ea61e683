// What a pack is made of: versioned, serializable data (never UI code). A Vertical Intelligence
// Pack names a domain's entities, the relationships it reasons over and the operations it offers; a
// Product Experience Pack names navigation, terminology, onboarding intent and which capabilities
// the experience surfaces. A pack grants nothing: visibility is computed from the caller's scopes,
// and every operation is still checked by the chain on each call.
import { z } from 'zod';
import { capabilityIds, dtoSchemas, packOperationNames, runtimeOperations } from '@hosted-notes/runtime-sdk';
import type { RuntimeKind } from '@hosted-notes/runtime-sdk';
import { scopeSchema } from '../entities.ts';

/** A term key: lower-case words joined by dots or dashes (`course`, `nav.library`, `learning-target`). */
export const termKeySchema = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*$/, 'a term key is lower-case words joined by dots or dashes');

const semver = z.string().regex(/^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/, 'a pack version is MAJOR.MINOR.PATCH');
const packId = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/);
const itemId = z.string().regex(/^[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*$/).max(100);
const capability = z.enum(capabilityIds);

const runtimeKinds = Object.keys(dtoSchemas) as [RuntimeKind, ...RuntimeKind[]];

export const packOperationSchema = z.strictObject({
  /** The operation's path under /api/product/v1/intelligence/<pack id>/ (the spec's path suffix). */
  id: z.string().regex(/^[a-z][a-z0-9-]*(?:\/[a-z][a-z0-9-]*)*$/),
  /** The SDK method and OpenAPI operation name. */
  operation: z.string().min(1).max(100),
  method: z.literal('POST'),
  /** The credential scope the operation needs. */
  requiredScope: scopeSchema,
  /** Deterministic: same input, same answer, no model call. */
  deterministic: z.boolean(),
  /** Metered: reserves against the organization's intelligence budget (a model call). */
  metered: z.boolean(),
  /** Calls need an Idempotency-Key. */
  idempotencyKeyRequired: z.boolean(),
  /** The envelope kind of its answer. */
  resultKind: z.enum(runtimeKinds),
  summary: z.string().min(1).max(300),
});
export type PackOperation = z.infer<typeof packOperationSchema>;

/**
 * A vertical pack's operations, as the SDK's operation table states them (every operation marked
 * with the pack): a pack never restates a scope, key rule or result kind, so it cannot drift.
 */
export function packOperations(pack: 'education'): PackOperation[] {
  const prefix = `/intelligence/${pack}/`;
  return packOperationNames(pack).map((name) => {
    const op = runtimeOperations[name];
    if (op.method !== 'POST' || !op.path.startsWith(prefix) || op.scope === null) throw new Error(`${name} is marked for the ${pack} pack but is not a POST under ${prefix} with a scope`);
    return {
      id: op.path.slice(prefix.length),
      operation: name,
      method: op.method,
      requiredScope: op.scope,
      deterministic: op.metered === false,
      metered: op.metered !== false,
      idempotencyKeyRequired: op.idempotency === 'required' || op.idempotency === 'caller',
      resultKind: op.kind,
      summary: `${op.summary.charAt(0).toUpperCase()}${op.summary.slice(1)}.`,
    };
  });
}

export const verticalPackSchema = z.strictObject({
  id: packId,
  version: semver,
  name: z.string().min(1).max(100),
  /** The domain entities the pack's operations take and return. */
  entityKinds: z.array(itemId).min(1).max(50),
  /** The relationships between entities it reasons over (provenance-backed in the operations' inputs). */
  semanticKinds: z.array(z.strictObject({ id: itemId, from: itemId, to: itemId, summary: z.string().max(300) })).max(50),
  operations: z.array(packOperationSchema).max(50),
});
export type VerticalPack = z.infer<typeof verticalPackSchema>;

export const packNavigationItemSchema = z.strictObject({
  id: itemId,
  /** The terminology entry the item's label is read from (after the organization's overrides). */
  termKey: termKeySchema,
  parentId: itemId.nullable(),
  /** The capability the item leads to; null for items every caller sees. */
  capability: capability.nullable(),
});

export const experiencePackSchema = z.strictObject({
  id: packId,
  version: semver,
  name: z.string().min(1).max(100),
  /** Term key → the default display string; the organization's brand profile may override these keys only. */
  terminology: z.record(termKeySchema, z.string().min(1).max(60)),
  navigation: z.array(packNavigationItemSchema).max(50),
  onboarding: z.strictObject({
    intent: z.string().min(1).max(300),
    steps: z.array(z.strictObject({ id: itemId, title: z.string().min(1).max(120), capability: capability.nullable() })).max(20),
  }),
  /** The capabilities this experience surfaces; each is visible when the credential holds one of its scopes. */
  surfacedCapabilities: z.array(capability),
});
export type ExperiencePack = z.infer<typeof experiencePackSchema>;

/** What a product definition is assigned (`pack_id`, `pack_version`): a vertical and an experience pack, one major version. */
export const compositionPackSchema = z
  .strictObject({
    id: packId,
    /** The major version a product is assigned (`education@1`); minor versions only add. */
    major: z.number().int().positive(),
    vertical: verticalPackSchema,
    experience: experiencePackSchema,
  })
  .superRefine((pack, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    const ids = new Set<string>();
    for (const item of pack.experience.navigation) {
      if (ids.has(item.id)) issue(`navigation item ${item.id} is repeated`);
      ids.add(item.id);
      if (!(item.termKey in pack.experience.terminology)) issue(`navigation item ${item.id} names unknown term ${item.termKey}`);
      if (item.capability && !pack.experience.surfacedCapabilities.includes(item.capability)) issue(`navigation item ${item.id} leads to unsurfaced ${item.capability}`);
    }
    for (const item of pack.experience.navigation) if (item.parentId !== null && !ids.has(item.parentId)) issue(`navigation item ${item.id} has unknown parent ${item.parentId}`);
    for (const step of pack.experience.onboarding.steps) {
      if (step.capability && !pack.experience.surfacedCapabilities.includes(step.capability)) issue(`onboarding step ${step.id} needs unsurfaced ${step.capability}`);
    }
    if (!pack.vertical.version.startsWith(`${pack.major}.`) || !pack.experience.version.startsWith(`${pack.major}.`)) issue(`pack versions must be ${pack.major}.x.y`);
  });
export type CompositionPack = z.infer<typeof compositionPackSchema>;
