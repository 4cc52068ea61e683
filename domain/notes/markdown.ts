// What we derive from a note's Markdown on every write: revision, title, frontmatter and links.
import { createHash } from 'node:crypto';
import { createTwoFilesPatch } from 'diff';
import { parseDocument } from 'yaml';
import { AppError } from '../errors.ts';

/** The revision is the SHA-256 of the exact UTF-8 bytes; used as strong ETag, expectedHash and If-Match. */
export function revisionOf(content: string): string {
  return `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;
}

export const etagOf = (revision: string) => `"${revision}"`;

const REVISION_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Accepts a revision quoted (ETag form) or bare; a weak validator (W/) never matches a strong one. */
export function parseRevision(raw: string, pointer: string): string {
  const trimmed = raw.trim();
  const bare = trimmed.startsWith('"') && trimmed.endsWith('"') && trimmed.length >= 2 ? trimmed.slice(1, -1) : trimmed;
  if (!REVISION_PATTERN.test(bare)) {
    throw new AppError('invalid_revision', `${pointer} is not a revision.`, { extensions: { errors: [{ pointer, message: 'expected sha256:<64 hex>', code: 'invalid_revision' }] } });
  }
  return bare;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export type Frontmatter = Record<string, unknown>;

/** The YAML frontmatter mapping, or null when absent, not a mapping, or unparsable. */
export function parseFrontmatter(content: string): { frontmatter: Frontmatter | null; body: string } {
  const match = FRONTMATTER.exec(content);
  if (!match) return { frontmatter: null, body: content };
  const body = bodyAfter(content, match);
  try {
    // Bounded: no alias bombs, no custom tags.
    const doc = parseDocument(match[1]!, { uniqueKeys: false, customTags: [] });
    if (doc.errors.length > 0) return { frontmatter: null, body };
    const value: unknown = doc.toJS({ maxAliasCount: 50 });
    if (value && typeof value === 'object' && !Array.isArray(value)) return { frontmatter: jsonSafe(value) as Frontmatter, body };
    return { frontmatter: null, body };
  } catch {
    return { frontmatter: null, body };
  }
}

/** The text after the frontmatter block, whether or not its YAML parses (the frontmatter's own reading is above). */
function bodyAfter(content: string, match: RegExpExecArray | null = FRONTMATTER.exec(content)): string {
  return match ? content.slice(match[0].length) : content;
}

/** YAML dates become ISO strings and non-finite numbers strings, so frontmatter fits jsonb. */
function jsonSafe(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), jsonSafe(v)]));
  if (value instanceof Set) return [...value].map(jsonSafe);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  return value;
}

/** Removes fenced code blocks and inline code, where Obsidian does not see headings or links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm, '').replace(/`[^`\n]*`/g, '');
}

export function titleOf(path: string, content: string, frontmatter: Frontmatter | null): string {
  const fmTitle = frontmatter?.['title'];
  if (typeof fmTitle === 'string' && fmTitle.trim()) return fmTitle.trim().slice(0, 500);
  // The body only: its YAML was read by the caller, and parsing it again was a third of a prose
  // import's Node time (decision 114).
  const body = bodyAfter(content);
  const heading = /^# +(.+?)\s*#*\s*$/m.exec(withoutCode(body));
  if (heading?.[1]?.trim()) return heading[1].trim().slice(0, 500);
  const file = path.split('/').pop() ?? path;
  return file.replace(/\.md$/, '');
}

export type NoteLink = {
  kind: 'link' | 'embed';
  /** The link target as written, without heading, block or alias. */
  target: string;
  heading: string | null;
  block: string | null;
  alias: string | null;
};

const WIKILINK = /(!?)\[\[([^\]\n]+?)\]\]/g;

/** Extracts `[[note]]`, `[[note|alias]]`, `[[note#heading]]`, `[[note#^block]]` and `![[…]]`. */
export function extractLinks(content: string): NoteLink[] {
  const links: NoteLink[] = [];
  for (const match of withoutCode(content).matchAll(WIKILINK)) {
    const inner = match[2]!;
    const pipe = inner.indexOf('|');
    const ref = (pipe >= 0 ? inner.slice(0, pipe) : inner).trim();
    const alias = pipe >= 0 ? inner.slice(pipe + 1).trim() || null : null;
    const hash = ref.indexOf('#');
    const target = (hash >= 0 ? ref.slice(0, hash) : ref).trim();
    const fragment = hash >= 0 ? ref.slice(hash + 1).trim() : null;
    const block = fragment?.startsWith('^') ? fragment.slice(1) || null : null;
    const heading = fragment && !fragment.startsWith('^') ? fragment : null;
    if (!target && !heading && !block) continue;
    links.push({ kind: match[1] ? 'embed' : 'link', target, heading, block, alias });
  }
  return links;
}

export type DerivedNote = {
  title: string;
  revision: string;
  sizeBytes: number;
  frontmatter: Frontmatter | null;
  links: NoteLink[];
};

export function deriveNote(path: string, content: string): DerivedNote {
  const { frontmatter } = parseFrontmatter(content);
  return {
    title: titleOf(path, content, frontmatter),
    revision: revisionOf(content),
    sizeBytes: Buffer.byteLength(content, 'utf8'),
    frontmatter,
    links: extractLinks(content),
  };
}

/** Bytes of diff text a preview returns before cutting it (and saying so). */
export const MAX_DIFF_BYTES = 256 * 1024;

export function unifiedDiff(path: string, before: string | null, after: string | null): { diff: string; diffTruncated: boolean } {
  const patch = createTwoFilesPatch(before === null ? '/dev/null' : `a/${path}`, after === null ? '/dev/null' : `b/${path}`, before ?? '', after ?? '', '', '', { context: 3 });
  if (Buffer.byteLength(patch, 'utf8') <= MAX_DIFF_BYTES) return { diff: patch, diffTruncated: false };
  return { diff: Buffer.from(patch, 'utf8').subarray(0, MAX_DIFF_BYTES).toString('utf8'), diffTruncated: true };
}
