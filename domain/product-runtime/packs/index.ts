// The packs this service ships, by id and major version. Parsed once when loaded: a pack that
// breaks its own rules (packs/schema.ts) stops the process at start-up instead of at a request.
import { educationPackV1 } from './education-v1.ts';
import { compositionPackSchema } from './schema.ts';
import type { CompositionPack } from './schema.ts';

export type { CompositionPack, ExperiencePack, PackOperation, VerticalPack } from './schema.ts';

export const packs: readonly CompositionPack[] = [educationPackV1].map((pack) => compositionPackSchema.parse(pack));

/** `education@1` → the pack, or undefined. */
export function findPack(id: string, major: number): CompositionPack | undefined {
  return packs.find((pack) => pack.id === id && pack.major === major);
}

/** The reference a product definition is assigned by, `id@major`. */
export const packRef = (pack: { id: string; major: number }) => `${pack.id}@${pack.major}`;

/** Parses `education@1` (or `education`, meaning the newest major). */
export function parsePackRef(ref: string): { id: string; major: number | null } | null {
  const match = /^([a-z][a-z0-9-]{0,62})(?:@([1-9][0-9]{0,5}))?$/.exec(ref);
  if (!match) return null;
  return { id: match[1]!, major: match[2] ? Number(match[2]) : null };
}

/** Every term key some pack's terminology defines: the keys a brand profile may override. */
export const knownTermKeys: ReadonlySet<string> = new Set(packs.flatMap((pack) => Object.keys(pack.experience.terminology)));
