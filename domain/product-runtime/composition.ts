// getDomainComposition: the Vertical Intelligence Pack and the Product Experience Pack a product
// definition is assigned (packs/), composed for one admitted caller. The organization's brand
// terminology is applied after authorization (brands.ts), and capability visibility is computed
// from the caller's credential scopes: a navigation item or onboarding step whose capability the
// credential holds no scope for is hidden (removed, with its descendants), and the answer is partial
// with one `scope_missing` part per hidden item. Visibility is presentation, never authority:
// every operation is still checked by the chain on each call.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { domainCompositionSchema } from '@hosted-notes/runtime-sdk';
import type { CapabilityId, MissingPart } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';
import { resolvePresentation } from './brands.ts';
import type { RuntimeContext } from './chain.ts';
import { findPack, packRef, packs, parsePackRef } from './packs/index.ts';
import type { CompositionPack } from './packs/index.ts';
import { getCapabilities } from './runtime-context.ts';
import type { ServiceConfiguration } from './runtime-context.ts';

type Db = CommonQueryMethods;

/** The `data` of runtime.domain-composition: the SDK's schema, so service and SDK read one contract. */
export const domainCompositionDataSchema = domainCompositionSchema;
export type DomainComposition = z.infer<typeof domainCompositionDataSchema>;

const productPackSchema = z.object({ id: z.uuid(), slug: z.string(), packId: z.string().nullable(), packVersion: z.number().nullable() });

async function readProductPack(db: Db, productDefinitionId: string) {
  return db.maybeOne(sql.type(productPackSchema)`
    SELECT pd.id, pd.slug, pd.pack_id AS "packId", pd.pack_version AS "packVersion" FROM product_definitions pd WHERE pd.id = ${productDefinitionId}`);
}

const packOf = (row: { packId: string | null; packVersion: number | null } | null): CompositionPack | undefined =>
  row?.packId && row.packVersion ? findPack(row.packId, row.packVersion) : undefined;

/** Whether the product has a composition the service can serve (getCapabilities' domain-composition). */
export async function hasDomainComposition(db: Db, caller: { productDefinitionId: string }): Promise<boolean> {
  return packOf(await readProductPack(db, caller.productDefinitionId)) !== undefined;
}

/** The packs this service ships, for System Operations (`pack list`). */
export function listPacks() {
  return packs.map((pack) => ({
    ref: packRef(pack),
    verticalPack: { id: pack.vertical.id, version: pack.vertical.version, name: pack.vertical.name },
    experiencePack: { id: pack.experience.id, version: pack.experience.version, name: pack.experience.name },
    termKeys: Object.keys(pack.experience.terminology),
  }));
}

/** Assigns a product definition its pack (`education@1`, or `education` for the newest major), or clears it (null). */
export async function assignProductPack(db: Db, productDefinitionId: string, ref: string | null): Promise<{ productDefinitionId: string; slug: string; pack: string | null }> {
  let assigned: CompositionPack | null = null;
  if (ref !== null) {
    const parsed = parsePackRef(ref);
    const candidates = parsed ? packs.filter((pack) => pack.id === parsed.id && (parsed.major === null || pack.major === parsed.major)) : [];
    assigned = candidates.sort((a, b) => b.major - a.major)[0] ?? null;
    if (!assigned) {
      throw new AppError('invalid_request', `No pack ${ref}; this service ships ${packs.map(packRef).join(', ')}.`, {
        extensions: { errors: [{ pointer: '/pack', message: 'unknown pack', code: 'pack_unknown' }] },
      });
    }
  }
  const row = await db.maybeOne(sql.type(productPackSchema)`
    UPDATE product_definitions pd SET pack_id = ${assigned?.id ?? null}, pack_version = ${assigned?.major ?? null}
     WHERE pd.id = ${productDefinitionId}
    RETURNING pd.id, pd.slug, pd.pack_id AS "packId", pd.pack_version AS "packVersion"`);
  if (!row) throw new AppError('not_found', `No product definition ${productDefinitionId}.`);
  return { productDefinitionId: row.id, slug: row.slug, pack: assigned ? packRef(assigned) : null };
}

/**
 * The composition of one pack for a caller, without I/O: the terminology overlay, the items hidden
 * for scopes the caller lacks (with their descendants) and one scope_missing part per hidden item.
 */
export function composePack(
  pack: CompositionPack,
  input: {
    product: { id: string; slug: string };
    scopes: readonly string[];
    requiredScopes: ReadonlyMap<CapabilityId, readonly string[]>;
    /** Overrides of the organization (keys outside the pack are ignored). */
    terminology: Readonly<Record<string, string>>;
  },
): { data: DomainComposition; missing: MissingPart[] } {
  const lacking = (capability: CapabilityId | null): string | null => {
    if (capability === null) return null;
    const needed = input.requiredScopes.get(capability) ?? [];
    if (needed.length === 0 || needed.some((scope) => input.scopes.includes(scope))) return null;
    return needed[0]!;
  };
  const terminology = { ...pack.experience.terminology };
  for (const [key, value] of Object.entries(input.terminology)) if (Object.hasOwn(terminology, key)) terminology[key] = value;

  const missing: MissingPart[] = [];
  const hiddenScope = new Map<string, string>();
  const navigation: DomainComposition['experiencePack']['navigation'] = [];
  // Parents come before their children in a pack (packs/schema.ts checks parents exist); a child of a hidden item is hidden too.
  for (const item of pack.experience.navigation) {
    const scope = lacking(item.capability) ?? (item.parentId !== null ? (hiddenScope.get(item.parentId) ?? null) : null);
    if (scope !== null) {
      hiddenScope.set(item.id, scope);
      missing.push({ part: `navigation.${item.id}`, reason: 'scope_missing', detail: `Hidden: the credential lacks ${scope}.`, scope });
      continue;
    }
    navigation.push({ id: item.id, label: terminology[item.termKey] ?? item.termKey, termKey: item.termKey, parentId: item.parentId, capability: item.capability });
  }
  const steps = [];
  for (const step of pack.experience.onboarding.steps) {
    const scope = lacking(step.capability);
    if (scope !== null) missing.push({ part: `onboarding.${step.id}`, reason: 'scope_missing', detail: `Hidden: the credential lacks ${scope}.`, scope });
    else steps.push({ ...step });
  }
  const capabilityVisibility = pack.experience.surfacedCapabilities.map((capability) => ({ capability, visible: lacking(capability) === null }));

  const data: DomainComposition = {
    product: input.product,
    packRef: packRef(pack),
    verticalPack: {
      id: pack.vertical.id,
      version: pack.vertical.version,
      name: pack.vertical.name,
      entityKinds: [...pack.vertical.entityKinds],
      semanticKinds: pack.vertical.semanticKinds.map((kind) => ({ ...kind })),
      operations: pack.vertical.operations.map((op) => ({ ...op, path: `/intelligence/${pack.vertical.id}/${op.id}` })),
    },
    experiencePack: {
      id: pack.experience.id,
      version: pack.experience.version,
      name: pack.experience.name,
      navigation,
      terminology,
      onboarding: { intent: pack.experience.onboarding.intent, steps },
      capabilityVisibility,
    },
  };
  return { data, missing };
}

export type CompositionResult = { status: 'unavailable'; missing: [MissingPart, ...MissingPart[]] } | { status: 'available'; data: DomainComposition; missing: MissingPart[] };

/** The composition for an admitted caller, or why there is none. Reads only the caller's product and organization. */
export async function getDomainComposition(db: Db, caller: RuntimeContext, service: Pick<ServiceConfiguration, 'intelligenceProvider'>): Promise<CompositionResult> {
  const product = await readProductPack(db, caller.productDefinitionId);
  if (!product || product.packId === null || product.packVersion === null) {
    return { status: 'unavailable', missing: [{ part: 'domain-composition', reason: 'setting_missing', detail: 'No pack is assigned to this product definition.' }] };
  }
  const pack = packOf(product);
  if (!pack) {
    return {
      status: 'unavailable',
      missing: [{ part: 'domain-composition', reason: 'capability_not_configured', detail: `The assigned pack ${product.packId}@${product.packVersion} is not offered by this service version.` }],
    };
  }
  // What each capability needs, from the same table getCapabilities answers with (one source).
  const { capabilities } = await getCapabilities(db, caller, { ...service, domainComposition: true });
  // Brand terminology overlaid after authorization, for the caller's own organization only.
  const presentation = await resolvePresentation(db, caller);
  const { data, missing } = composePack(pack, {
    product: { id: product.id, slug: product.slug },
    scopes: caller.scopes,
    requiredScopes: new Map(capabilities.map((c) => [c.id, c.requiredScopes])),
    terminology: presentation?.terminology ?? {},
  });
  return { status: 'available', data, missing };
}
