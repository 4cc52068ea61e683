// System Operations for presentation: Organization Brand Profiles, branded hosts and the pack a
// product definition composes (domain/product-runtime/brands.ts, composition.ts). Spread into the
// CLI's commands by scripts/ops.ts. None of these grants anything: presentation is never authority.
import { z } from 'zod';
import { addBrandHost, clearBrandProfile, getBrandProfile, listBrandHosts, removeBrandHost, setBrandProfile } from '../../domain/product-runtime/brands.ts';
import type { BrandProfilePatch } from '../../domain/product-runtime/brands.ts';
import { assignProductPack, listPacks } from '../../domain/product-runtime/composition.ts';
import { command } from './commands.ts';
import type { Command } from './commands.ts';
import { UsageError } from './errors.ts';

const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);
/** A field to set, or `none` to clear it; absent leaves it as it is. */
const settable = (what: string) => z.string().optional().describe(`${what}, or none to clear`);
const orNone = (value: string | undefined) => (value === undefined ? undefined : value === 'none' ? null : value);

/** `--term key=value` (repeatable) → the terminology map; `--term none` clears it. */
function parseTerms(terms: readonly string[] | undefined): Record<string, string> | null | undefined {
  if (terms === undefined) return undefined;
  if (terms.length === 1 && terms[0] === 'none') return null;
  const map: Record<string, string> = {};
  for (const term of terms) {
    const at = term.indexOf('=');
    if (at <= 0) throw new UsageError(`--term takes key=value (e.g. --term learners=Pupils), got ${JSON.stringify(term)}.`);
    map[term.slice(0, at)] = term.slice(at + 1);
  }
  return map;
}

export const presentationCommands: Record<string, Record<string, Command>> = {
  brand: {
    set: command(
      "Set fields of an organization's brand profile (others unchanged; created if absent). Text and background are set together (contrast ≥ 4.5:1)",
      z.object({
        org: id('organization'),
        displayName: settable('display name (at most 80 characters)'),
        primary: settable('primary colour #rrggbb'),
        accent: settable('accent colour #rrggbb'),
        background: settable('background colour #rrggbb'),
        text: settable('text colour #rrggbb'),
        logo: settable('logo: an https URL or an asset id (never fetched)'),
        term: z.array(z.string()).optional().describe('terminology override key=value (repeatable; replaces all overrides; none clears; keys: `pack list`)'),
      }),
      async (db, o) => {
        const colors = { primary: orNone(o.primary), accent: orNone(o.accent), background: orNone(o.background), text: orNone(o.text) };
        const patch: BrandProfilePatch = {
          ...(o.displayName !== undefined ? { displayName: orNone(o.displayName) } : {}),
          ...(Object.values(colors).some((v) => v !== undefined) ? { colors: Object.fromEntries(Object.entries(colors).filter(([, v]) => v !== undefined)) } : {}),
          ...(o.logo !== undefined ? { logo: orNone(o.logo) } : {}),
          ...(o.term !== undefined ? { terminology: parseTerms(o.term) } : {}),
        };
        return setBrandProfile(db, o.org, patch);
      },
    ),
    show: command("Show an organization's brand profile and its branded hosts", z.object({ org: id('organization') }), async (db, o) => ({
      profile: await getBrandProfile(db, o.org),
      hosts: await listBrandHosts(db, { organizationId: o.org }),
    })),
    clear: command("Remove an organization's brand profile (its hosts then present nothing until one is set)", z.object({ org: id('organization') }), (db, o) =>
      clearBrandProfile(db, o.org),
    ),
  },
  host: {
    add: command(
      'Map a custom hostname to an organization (and optionally one product it has installed); unique across the platform',
      z.object({ host: z.string().describe('hostname, e.g. learn.example.org'), org: id('organization'), product: id('product definition').optional() }),
      (db, o) => addBrandHost(db, { hostname: o.host, organizationId: o.org, productDefinitionId: o.product ?? null }),
    ),
    remove: command('Remove a branded host', z.object({ host: z.string().describe('hostname') }), (db, o) => removeBrandHost(db, o.host)),
    list: command('List branded hosts (of one organization, or all)', z.object({ org: id('organization').optional() }), (db, o) => listBrandHosts(db, { organizationId: o.org })),
  },
  pack: {
    list: command('List the packs this service ships (id@major, versions, term keys a brand may override)', z.object({}), async () => listPacks()),
    assign: command(
      "Assign a product definition its domain composition pack (education@1), or none to clear it",
      z.object({ product: id('product definition'), pack: z.string().describe('pack reference id@major (e.g. education@1), or none') }),
      (db, o) => assignProductPack(db, o.product, o.pack === 'none' ? null : o.pack),
    ),
  },
};
