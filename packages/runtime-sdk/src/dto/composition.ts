// The `data` of getDomainComposition: the Vertical Intelligence Pack and the Product Experience
// Pack composed for the calling product, as versioned serializable data (never UI code). A product
// renders its navigation, terminology and onboarding from it; nothing in it is authority: a visible
// capability is still checked by getCapabilities and by the chain on every call.
import { z } from 'zod';
import { capabilityIds } from './core.ts';

const packRef = z.object({
  id: z.string().min(1).max(100),
  /** The pack's own version (semver); a product may pin what it understands. */
  version: z.string().min(1).max(50),
  name: z.string(),
});

export const navigationItemSchema = z
  .object({
    id: z.string().min(1).max(100),
    /** The terminology entry of termKey (after the organization's brand overrides). */
    label: z.string(),
    termKey: z.string(),
    /** The parent item's id; null for a top-level item. */
    parentId: z.string().nullable(),
    /** The capability the item leads to; a product hides it when that capability is unavailable. */
    capability: z.enum(capabilityIds).nullable(),
  })
  .meta({ id: 'RuntimeNavigationItem' });

export const packOperationSchema = z
  .object({
    id: z.string(),
    /** The SDK method that calls it (also its OpenAPI operationId). */
    operation: z.string(),
    method: z.literal('POST'),
    /** Under /api/product/v1/intelligence/<pack id>/. */
    path: z.string(),
    requiredScope: z.string(),
    deterministic: z.boolean(),
    metered: z.boolean(),
    idempotencyKeyRequired: z.boolean(),
    /** The envelope kind of its answer (a kind the SDK's dtoSchemas parse). */
    resultKind: z.string(),
    summary: z.string(),
  })
  .meta({ id: 'RuntimePackOperation' });

export const domainCompositionSchema = z
  .object({
    product: z.object({ id: z.string(), slug: z.string() }),
    /** The assignment, `id@major` (e.g. education@1). */
    packRef: z.string(),
    /** Domain semantics and deterministic intelligence (e.g. education). */
    verticalPack: packRef.extend({
      entityKinds: z.array(z.string()),
      semanticKinds: z.array(z.object({ id: z.string(), from: z.string(), to: z.string(), summary: z.string() })),
      operations: z.array(packOperationSchema),
    }),
    /** Presentation: navigation, terminology, onboarding intent, capability visibility. */
    experiencePack: packRef.extend({
      navigation: z.array(navigationItemSchema),
      /** Term → the word this product shows for it (after the organization's brand overrides). */
      terminology: z.record(z.string(), z.string()),
      onboarding: z.object({ intent: z.string(), steps: z.array(z.object({ id: z.string(), title: z.string(), capability: z.enum(capabilityIds).nullable() })) }),
      capabilityVisibility: z.array(z.object({ capability: z.enum(capabilityIds), visible: z.boolean() })),
    }),
  })
  .meta({ id: 'RuntimeDomainComposition' });
export type DomainCompositionDto = z.infer<typeof domainCompositionSchema>;
