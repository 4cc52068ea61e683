// Organization Brand Profiles and branded hosts: bounded presentation overrides, applied after
// authorization. Nothing here is an input of the chain check (chain.ts): a hostname or a brand
// never grants anything. The public side (resolvePublicPresentation) answers a custom host with
// safe presentation only, and one indistinguishable refusal for every host it will not present.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import type { ErrorPointer } from '../errors.ts';
import { findPack, knownTermKeys } from './packs/index.ts';

type Db = CommonQueryMethods;

export const brandLimits = {
  displayNameChars: 80,
  terminologyEntries: 40,
  termChars: 60,
  logoUrlChars: 2048,
  /** WCAG 2.x AA for normal text. */
  minimumContrast: 4.5,
  hostnameChars: 253,
  hostsListed: 1000,
} as const;

export const colorRoles = ['primary', 'accent', 'background', 'text'] as const;
export type ColorRole = (typeof colorRoles)[number];

const hexColor = z.string().regex(/^#[0-9a-f]{6}$/);

/** What a presentation is: the same shape on the public route and in getRuntimeContext. */
export const presentationSchema = z
  .strictObject({
    /** The organization's display name for this presentation; null when it sets none. */
    displayName: z.string().nullable(),
    /** `#rrggbb` per role; null where the organization sets none (text and background come as a pair). */
    colors: z.strictObject({ primary: hexColor.nullable(), accent: hexColor.nullable(), background: hexColor.nullable(), text: hexColor.nullable() }),
    /** An https URL or an opaque asset id; the service never fetches it. */
    logo: z.strictObject({ kind: z.enum(['url', 'asset']), ref: z.string() }).nullable(),
    /** Term key → display string: the product's pack defaults overlaid by the organization's overrides. */
    terminology: z.record(z.string(), z.string()),
  })
  .meta({ id: 'BrandPresentation', description: 'Safe public presentation: never authority, never an id.' });
export type Presentation = z.infer<typeof presentationSchema>;

export const brandProfileSchema = z.object({
  organizationId: z.uuid(),
  displayName: z.string().nullable(),
  colors: z.object({ primary: z.string().nullable(), accent: z.string().nullable(), background: z.string().nullable(), text: z.string().nullable() }),
  terminology: z.record(z.string(), z.string()),
  logoRef: z.string().nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type BrandProfile = z.infer<typeof brandProfileSchema>;

const profileColumns = sql.fragment`p.organization_id AS "organizationId", p.display_name AS "displayName",
  jsonb_build_object('primary', p.color_primary, 'accent', p.color_accent, 'background', p.color_background, 'text', p.color_text) AS colors,
  p.terminology, p.logo_ref AS "logoRef", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

// ---- validation -------------------------------------------------------------------------------

// C0/C1 controls and the bidirectional overrides/isolates (which can make a name read as another).
const UNSAFE_TEXT = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;
const chars = (s: string) => [...s].length;

/** The WCAG 2.x contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * A change to an organization's profile: a field given replaces it, null clears it, an absent
 * field stays. `terminology` replaces the whole map. Types are checked here; bounds and meaning by
 * validateProfile, so every refusal names its field (pointer) and a stable code.
 */
const optionalText = z.string().nullable().optional();
export const brandProfilePatchSchema = z
  .strictObject({
    displayName: z.string().nullable().optional(),
    colors: z
      .strictObject({ primary: optionalText, accent: optionalText, background: optionalText, text: optionalText })
      .optional(),
    terminology: z.record(z.string(), z.string()).nullable().optional(),
    logo: z.string().nullable().optional(),
  })
  .meta({ id: 'BrandProfilePatch' });
export type BrandProfilePatch = z.input<typeof brandProfilePatchSchema>;

type ProfileValues = { displayName: string | null; colors: Record<ColorRole, string | null>; terminology: Record<string, string>; logoRef: string | null };

function refuse(errors: ErrorPointer[]): never {
  const first = errors[0]!;
  throw new AppError('invalid_request', `${first.pointer}: ${first.message}`, { extensions: { errors } });
}

/** `https://…` (no credentials, no fragment) or an opaque asset id; null when neither. */
export function parseLogoRef(raw: string): { kind: 'url' | 'asset'; ref: string } | null {
  if (/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(raw)) return { kind: 'asset', ref: raw };
  if (raw.length > brandLimits.logoUrlChars || !/^https:\/\//i.test(raw)) return null;
  const url = URL.parse(raw);
  if (!url || url.protocol !== 'https:' || !url.hostname || url.username || url.password || url.hash) return null;
  return { kind: 'url', ref: url.href };
}

/** Checks a whole profile (after a patch is merged): every bound, the text/background contrast, known term keys. */
function validateProfile(values: ProfileValues): ProfileValues {
  const errors: ErrorPointer[] = [];
  let displayName = values.displayName;
  if (displayName !== null) {
    displayName = displayName.trim();
    if (chars(displayName) < 1 || chars(displayName) > brandLimits.displayNameChars) {
      errors.push({ pointer: '/displayName', message: `1 to ${brandLimits.displayNameChars} characters`, code: 'display_name_invalid' });
    } else if (UNSAFE_TEXT.test(displayName)) {
      errors.push({ pointer: '/displayName', message: 'no control or bidirectional-override characters', code: 'display_name_invalid' });
    }
  }
  const colors = { ...values.colors };
  for (const role of colorRoles) {
    const value = colors[role];
    if (value === null) continue;
    if (!/^#[0-9a-fA-F]{6}$/.test(value)) errors.push({ pointer: `/colors/${role}`, message: 'a colour is #rrggbb', code: 'color_invalid' });
    else colors[role] = value.toLowerCase();
  }
  const { text, background } = colors;
  if ((text === null) !== (background === null)) {
    errors.push({ pointer: text === null ? '/colors/text' : '/colors/background', message: 'text and background are set together (their contrast is checked)', code: 'color_pair_incomplete' });
  } else if (text && background && hexColor.safeParse(text).success && hexColor.safeParse(background).success) {
    const ratio = contrastRatio(text, background);
    if (ratio < brandLimits.minimumContrast) {
      errors.push({
        pointer: '/colors/text',
        message: `contrast with the background is ${ratio.toFixed(2)}:1; at least ${brandLimits.minimumContrast}:1 is needed (WCAG AA)`,
        code: 'contrast_too_low',
      });
    }
  }
  const terminology: Record<string, string> = {};
  const entries = Object.entries(values.terminology);
  if (entries.length > brandLimits.terminologyEntries) {
    errors.push({ pointer: '/terminology', message: `at most ${brandLimits.terminologyEntries} entries`, code: 'terminology_too_large' });
  }
  for (const [key, raw] of entries) {
    const pointer = `/terminology/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    const value = raw.trim();
    if (!knownTermKeys.has(key)) errors.push({ pointer, message: 'not a term key of any pack (see `pack list`)', code: 'term_unknown' });
    else if (chars(value) < 1 || chars(value) > brandLimits.termChars) errors.push({ pointer, message: `1 to ${brandLimits.termChars} characters`, code: 'term_invalid' });
    else if (UNSAFE_TEXT.test(value)) errors.push({ pointer, message: 'no control or bidirectional-override characters', code: 'term_invalid' });
    else terminology[key] = value;
  }
  let logoRef = values.logoRef;
  if (logoRef !== null) {
    const logo = parseLogoRef(logoRef);
    if (!logo) errors.push({ pointer: '/logo', message: `an https URL (at most ${brandLimits.logoUrlChars} characters, no credentials or fragment) or an asset id ([A-Za-z0-9_-], at most 128)`, code: 'logo_invalid' });
    else logoRef = logo.ref;
  }
  if (errors.length > 0) refuse(errors);
  return { displayName, colors, terminology, logoRef };
}

// ---- profiles ---------------------------------------------------------------------------------

export async function getBrandProfile(db: Db, organizationId: string): Promise<BrandProfile | null> {
  return db.maybeOne(sql.type(brandProfileSchema)`SELECT ${profileColumns} FROM organization_brand_profiles p WHERE p.organization_id = ${organizationId}`);
}

/** Merges `patch` into the organization's profile (creating it) and checks the result as a whole. */
export async function setBrandProfile(db: Db, organizationId: string, input: BrandProfilePatch): Promise<BrandProfile> {
  const parsed = brandProfilePatchSchema.safeParse(input);
  if (!parsed.success) refuse(parsed.error.issues.map((issue) => ({ pointer: `/${issue.path.join('/')}`, message: issue.message, code: 'brand_profile_invalid' })));
  const patch = parsed.data;
  return db.transaction(async (tx) => {
    // The organization row serializes concurrent changes of one profile (the merge reads, then writes).
    const org = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM organizations WHERE id = ${organizationId} FOR NO KEY UPDATE`);
    if (!org) throw new AppError('not_found', `No organization ${organizationId}.`);
    const current = await getBrandProfile(tx, organizationId);
    const merged: ProfileValues = {
      displayName: patch.displayName === undefined ? (current?.displayName ?? null) : patch.displayName,
      colors: Object.fromEntries(
        colorRoles.map((role) => [role, patch.colors?.[role] === undefined ? (current?.colors[role] ?? null) : patch.colors[role]]),
      ) as Record<ColorRole, string | null>,
      terminology: patch.terminology === undefined ? (current?.terminology ?? {}) : (patch.terminology ?? {}),
      logoRef: patch.logo === undefined ? (current?.logoRef ?? null) : patch.logo,
    };
    const v = validateProfile(merged);
    return tx.one(sql.type(brandProfileSchema)`
      INSERT INTO organization_brand_profiles AS p (organization_id, display_name, color_primary, color_accent, color_background, color_text, terminology, logo_ref)
      VALUES (${organizationId}, ${v.displayName}, ${v.colors.primary}, ${v.colors.accent}, ${v.colors.background}, ${v.colors.text}, ${sql.jsonb(v.terminology)}, ${v.logoRef})
      ON CONFLICT (organization_id) DO UPDATE SET
        display_name = EXCLUDED.display_name, color_primary = EXCLUDED.color_primary, color_accent = EXCLUDED.color_accent,
        color_background = EXCLUDED.color_background, color_text = EXCLUDED.color_text, terminology = EXCLUDED.terminology,
        logo_ref = EXCLUDED.logo_ref, updated_at = now()
      RETURNING ${profileColumns}`);
  });
}

/** Removes the organization's profile; its hosts then present nothing (404) until a profile is set again. */
export async function clearBrandProfile(db: Db, organizationId: string): Promise<{ organizationId: string; cleared: boolean }> {
  const row = await db.maybeOne(sql.type(z.object({ organizationId: z.uuid() }))`
    DELETE FROM organization_brand_profiles WHERE organization_id = ${organizationId} RETURNING organization_id AS "organizationId"`);
  return { organizationId, cleared: row !== null };
}

// ---- hosts ------------------------------------------------------------------------------------

/**
 * A custom hostname, lower-cased: dot-separated labels of letters, digits and inner hyphens (1–63
 * each, 253 in all), at least two labels, an alphabetic top-level label (so no IP address), no
 * port, no trailing dot, no wildcard. Punycode (`xn--`) is how an internationalized name is given.
 * Null when it is not one.
 */
export function normalizeHostname(raw: string): string | null {
  const host = raw.toLowerCase();
  if (host.length < 1 || host.length > brandLimits.hostnameChars) return null;
  const labels = host.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))) return null;
  if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(labels.at(-1)!)) return null;
  return host;
}

export const brandHostSchema = z.object({
  hostname: z.string(),
  organizationId: z.uuid(),
  productDefinitionId: z.uuid().nullable(),
  createdAt: isoTimestamp,
});
export type BrandHost = z.infer<typeof brandHostSchema>;

const hostColumns = sql.fragment`h.hostname, h.organization_id AS "organizationId", h.product_definition_id AS "productDefinitionId", h.created_at AS "createdAt"`;

/**
 * Maps a custom hostname to an organization (and optionally one of the products it has installed).
 * A hostname belongs to one organization across the platform: adding a taken one is a conflict.
 */
export async function addBrandHost(db: Db, input: { hostname: string; organizationId: string; productDefinitionId?: string | null }): Promise<BrandHost> {
  const hostname = normalizeHostname(input.hostname);
  if (!hostname) refuse([{ pointer: '/hostname', message: 'a hostname like learn.example.org (letters, digits, inner hyphens; no port, IP address or wildcard)', code: 'hostname_invalid' }]);
  const productDefinitionId = input.productDefinitionId ?? null;
  return db.transaction(async (tx) => {
    const org = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`SELECT id FROM organizations WHERE id = ${input.organizationId}`);
    if (!org) throw new AppError('not_found', `No organization ${input.organizationId}.`);
    if (productDefinitionId !== null) {
      const installed = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
        SELECT i.id FROM product_installations i WHERE i.organization_id = ${input.organizationId} AND i.product_definition_id = ${productDefinitionId} LIMIT 1`);
      if (!installed) throw new AppError('not_found', `The organization has no installation of product definition ${productDefinitionId}.`);
    }
    const row = await tx.maybeOne(sql.type(brandHostSchema)`
      INSERT INTO brand_hosts AS h (hostname, organization_id, product_definition_id)
      VALUES (${hostname}, ${input.organizationId}, ${productDefinitionId})
      ON CONFLICT (hostname) DO NOTHING
      RETURNING ${hostColumns}`);
    if (!row) {
      throw new AppError('conflict', `${hostname} is already a brand host (a hostname maps to one organization).`, {
        extensions: { errors: [{ pointer: '/hostname', message: 'already mapped', code: 'hostname_taken' }] },
      });
    }
    return row;
  });
}

export async function removeBrandHost(db: Db, hostname: string): Promise<BrandHost> {
  const row = await db.maybeOne(sql.type(brandHostSchema)`DELETE FROM brand_hosts h WHERE h.hostname = ${hostname.toLowerCase()} RETURNING ${hostColumns}`);
  if (!row) throw new AppError('not_found', `No brand host ${hostname}.`);
  return row;
}

export async function listBrandHosts(db: Db, filter: { organizationId?: string | undefined } = {}): Promise<readonly BrandHost[]> {
  return db.any(sql.type(brandHostSchema)`
    SELECT ${hostColumns} FROM brand_hosts h
     WHERE (${filter.organizationId ?? null}::uuid IS NULL OR h.organization_id = ${filter.organizationId ?? null}::uuid)
     ORDER BY h.organization_id, h.hostname
     LIMIT ${brandLimits.hostsListed}`);
}

// ---- presentation -----------------------------------------------------------------------------

const presentationRowSchema = z.object({
  profile: z.boolean(),
  displayName: z.string().nullable(),
  colors: z.object({ primary: z.string().nullable(), accent: z.string().nullable(), background: z.string().nullable(), text: z.string().nullable() }),
  terminology: z.record(z.string(), z.string()),
  logoRef: z.string().nullable(),
  packId: z.string().nullable(),
  packVersion: z.number().nullable(),
});
type PresentationRow = z.infer<typeof presentationRowSchema>;

/** Pack defaults, overlaid by the organization's overrides (only keys the pack defines, when there is one). */
function toPresentation(row: PresentationRow): Presentation {
  const pack = row.packId !== null && row.packVersion !== null ? findPack(row.packId, row.packVersion) : undefined;
  const defaults: Record<string, string> = pack ? { ...pack.experience.terminology } : {};
  const overrides = Object.entries(row.terminology).filter(([key]) => !pack || Object.hasOwn(defaults, key));
  const logo = row.logoRef === null ? null : parseLogoRef(row.logoRef);
  return presentationSchema.parse({
    displayName: row.displayName,
    colors: row.colors,
    logo,
    terminology: { ...defaults, ...Object.fromEntries(overrides) },
  });
}

/**
 * The presentation of an authorized caller (getRuntimeContext): the product's pack terminology
 * overlaid by its organization's brand profile. Resolved after the chain admitted the caller, from
 * the caller's own ids only; null when neither a profile nor a pack exists.
 */
export async function resolvePresentation(db: Db, caller: { organizationId: string; productDefinitionId: string }): Promise<Presentation | null> {
  const row = await db.one(sql.type(presentationRowSchema)`
    SELECT p.organization_id IS NOT NULL AS profile, p.display_name AS "displayName",
           jsonb_build_object('primary', p.color_primary, 'accent', p.color_accent, 'background', p.color_background, 'text', p.color_text) AS colors,
           coalesce(p.terminology, '{}'::jsonb) AS terminology, p.logo_ref AS "logoRef", pd.pack_id AS "packId", pd.pack_version AS "packVersion"
      FROM (SELECT 1) AS one
      LEFT JOIN organization_brand_profiles p ON p.organization_id = ${caller.organizationId}
      LEFT JOIN product_definitions pd ON pd.id = ${caller.productDefinitionId}`);
  if (!row.profile && row.packId === null) return null;
  return toPresentation(row);
}

/** The one refusal for every host the public route will not present: unknown, malformed, suspended, unbranded. */
export const presentationNotFound = () => new AppError('presentation_not_found', 'No public presentation is configured for this host.');

// A hostname no row can hold (brand_hosts requires lower case): malformed hosts still run the
// same statement, so they take the same path as unknown ones.
const NO_HOST = 'INVALID';

/**
 * A custom branded host's public presentation, without a credential. Only an active
 * organization with a brand profile presents; a host naming a product presents that product's pack
 * terminology while the product is active. Every other case is the same presentation_not_found.
 * The answer never carries an id, an installation, a setting or another host.
 */
export async function resolvePublicPresentation(db: Db, rawHost: string | null): Promise<Presentation> {
  const hostname = (rawHost === null ? null : normalizeHostname(rawHost)) ?? NO_HOST;
  const row = await db.maybeOne(sql.type(presentationRowSchema)`
    SELECT true AS profile, p.display_name AS "displayName",
           jsonb_build_object('primary', p.color_primary, 'accent', p.color_accent, 'background', p.color_background, 'text', p.color_text) AS colors,
           p.terminology, p.logo_ref AS "logoRef", pd.pack_id AS "packId", pd.pack_version AS "packVersion"
      FROM brand_hosts h
      JOIN organizations o ON o.id = h.organization_id AND o.status = 'active'
      JOIN organization_brand_profiles p ON p.organization_id = h.organization_id
      LEFT JOIN product_definitions pd ON pd.id = h.product_definition_id
     WHERE h.hostname = ${hostname} AND (h.product_definition_id IS NULL OR pd.status = 'active')`);
  if (!row) throw presentationNotFound();
  return toPresentation(row);
}
