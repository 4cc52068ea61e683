// What both adapters must agree on about a note, for the local adapter to compute offline: path
// rules, revision, title, links, frontmatter and the preview diff. These mirror the service's
// domain/notes/paths.ts and domain/notes/markdown.ts (the SDK imports nothing from the server);
// test/runtime-sdk-notes.test.ts runs both on the same inputs so a drift fails the suite.
import { createHash } from 'node:crypto';

// ---- paths (domain/notes/paths.ts) ----------------------------------------------------------

export const noteLimits = {
  maxSegmentBytes: 255,
  maxPathBytes: 1024,
  maxContentBytes: 1_048_576,
  maxInventoryPage: 1000,
} as const;

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$|clock\$)$/i;
const FORBIDDEN_CHARS = /[<>:"|?*\\]/;
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const INVISIBLE_CHARS = /[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u2060-\u2064\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
const STRAY_JOINER = /(?<!\p{Extended_Pictographic}\ufe0f?)\u200d|\u200d(?!\p{Extended_Pictographic})|(?<!\p{L}\p{M}*)\u200c|\u200c(?!\p{L})/u;

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

/** Why a (NFC) note path is invalid, or null: the service's rules, word for word. */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'the path is empty';
  if (!path.isWellFormed()) return 'the path contains an unpaired surrogate (not valid Unicode)';
  if (utf8Length(path) > noteLimits.maxPathBytes) return `the path is longer than ${noteLimits.maxPathBytes} bytes`;
  if (CONTROL_CHARS.test(path)) return 'the path contains NUL or a control character';
  if (BIDI_CONTROLS.test(path)) return 'the path contains a bidirectional control character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)';
  if (INVISIBLE_CHARS.test(path) || STRAY_JOINER.test(path)) return 'the path contains an invisible character (such as U+200B or U+FEFF)';
  if (path.includes('\\')) return 'the path contains a backslash; use / as the only separator';
  if (path.startsWith('/')) return 'the path starts with /; paths are relative to the vault';
  if (!path.endsWith('.md')) return 'the path must end in .md';
  for (const segment of path.split('/')) {
    if (segment === '') return 'the path has an empty segment';
    if (segment === '.' || segment === '..') return `the path has a "${segment}" segment`;
    if (FORBIDDEN_CHARS.test(segment)) return `the segment "${segment}" contains one of < > : " | ? *`;
    if (segment.startsWith('.')) return `the segment "${segment}" starts with a dot`;
    if (/[. ]$/.test(segment)) return `the segment "${segment}" ends with a dot or a space`;
    if (utf8Length(segment) > noteLimits.maxSegmentBytes) return `a segment is longer than ${noteLimits.maxSegmentBytes} bytes`;
    const stem = segment.split('.')[0]!.trimEnd();
    if (WINDOWS_RESERVED.test(stem)) return `the segment "${segment}" is a reserved device name on Windows`;
  }
  return null;
}

/** Case-folded key: two paths with the same key cannot both exist in a vault (as the service folds). */
export function pathKey(path: string): string {
  let key = '';
  for (const ch of path) {
    const upper = ch.toUpperCase();
    key += [...upper].length === 1 ? upper.toLowerCase() : ch.toLowerCase();
  }
  return key;
}

/** Bytewise (UTF-8) order, as the service lists notes (COLLATE "C"). */
export const compareBytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

// ---- derived fields (domain/notes/markdown.ts) ----------------------------------------------

/** The revision: SHA-256 of the content's exact UTF-8 bytes. */
export function revisionOf(content: string): string {
  return `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;
}

export const REVISION_PATTERN = /^sha256:[0-9a-f]{64}$/;

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export type Frontmatter = Record<string, unknown>;

/**
 * The YAML frontmatter mapping. The service parses full YAML; the SDK reads the flat subset notes
 * use (`key: scalar`, flow `[a, b]` and block `- item` lists, comments) with YAML 1.2 core types.
 * Anything beyond it answers `supported: false` (the local adapter then says so in `missing`
 * rather than guess). Absent, empty or not a mapping: null, as the service.
 */
export function parseFrontmatter(content: string): { frontmatter: Frontmatter | null; body: string; supported: boolean } {
  const match = FRONTMATTER.exec(content);
  if (!match) return { frontmatter: null, body: content, supported: true };
  const body = content.slice(match[0].length);
  const parsed = parseFlatYaml(match[1]!);
  if (parsed === undefined) return { frontmatter: null, body, supported: false };
  return { frontmatter: parsed, body, supported: true };
}

const NOT_SUPPORTED = Symbol('not supported');
type Scalar = string | number | boolean | null;

/** A YAML 1.2 core-schema scalar as `yaml` resolves it (jsonSafe: non-finite numbers become strings). */
function plainScalar(raw: string): Scalar | typeof NOT_SUPPORTED {
  const text = raw.replace(/\s+#.*$/, '').trim();
  if (text === '' || /^(~|null|Null|NULL)$/.test(text)) return null;
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  if (/^[-+]?\.(inf|Inf|INF)$/.test(text)) return text.startsWith('-') ? '-Infinity' : 'Infinity';
  if (/^\.(nan|NaN|NAN)$/.test(text)) return 'NaN';
  // Indicators that start other YAML constructs (anchors, aliases, tags, block scalars, flow maps…).
  if (/^[&*!|>%@`{}\]?,]/.test(text) || /^-(\s|$)/.test(text)) return NOT_SUPPORTED;
  // ": " or a trailing ":" inside a plain scalar is a nested mapping or an error in YAML.
  if (/:(\s|$)/.test(text)) return NOT_SUPPORTED;
  return text;
}

function quoted(raw: string): Scalar | typeof NOT_SUPPORTED | undefined {
  const text = raw.trim();
  const rest = (end: number) => text.slice(end + 1).trim();
  if (text.startsWith("'")) {
    const m = /^'((?:[^']|'')*)'/.exec(text);
    if (!m || (rest(m[0].length - 1) !== '' && !rest(m[0].length - 1).startsWith('#'))) return NOT_SUPPORTED;
    return m[1]!.replace(/''/g, "'");
  }
  if (text.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\.)*)"/.exec(text);
    if (!m || (rest(m[0].length - 1) !== '' && !rest(m[0].length - 1).startsWith('#'))) return NOT_SUPPORTED;
    // JSON escapes are a subset of YAML's; the others (\x, \U, \e…) are beyond this reader.
    try {
      return JSON.parse(`"${m[1]!}"`) as string;
    } catch {
      return NOT_SUPPORTED;
    }
  }
  return undefined;
}

function scalar(raw: string): Scalar | typeof NOT_SUPPORTED {
  const q = quoted(raw);
  return q === undefined ? plainScalar(raw) : q;
}

function flowSequence(raw: string): Scalar[] | typeof NOT_SUPPORTED {
  const text = raw.replace(/\s+#.*$/, '').trim();
  const inner = text.slice(1, -1);
  if (!text.endsWith(']') || /[[\]{}]/.test(inner)) return NOT_SUPPORTED;
  if (inner.trim() === '') return [];
  const items: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const ch of inner) {
    if (quote) {
      current += ch;
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      items.push(current);
      current = '';
    } else current += ch;
  }
  if (quote) return NOT_SUPPORTED;
  items.push(current);
  // A trailing comma ends the list in YAML flow style.
  if (items.length > 1 && items[items.length - 1]!.trim() === '') items.pop();
  const values: Scalar[] = [];
  for (const item of items) {
    if (item.trim() === '') return NOT_SUPPORTED;
    const value = scalar(item);
    if (value === NOT_SUPPORTED) return NOT_SUPPORTED;
    values.push(value);
  }
  return values;
}

/** The flat subset of YAML above; undefined when the block is beyond it. */
function parseFlatYaml(block: string): Frontmatter | null | undefined {
  const lines = block.split(/\r?\n/);
  const result: Frontmatter = {};
  let keys = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    i += 1;
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    if (/^\s/.test(line) || line.includes('\t')) return undefined;
    const m = /^([^\s#'"\-?:,[\]{}&*!|>%@`][^:#]*?)[ ]*:(?:[ ]+(.*))?$/.exec(line);
    if (!m) return undefined;
    const key = m[1]!;
    const rawValue = (m[2] ?? '').trim();
    let value: unknown;
    if (rawValue === '' || rawValue.startsWith('#')) {
      // A block list may follow (`- item` lines, indented or not); otherwise the value is null.
      const items: Scalar[] = [];
      while (i < lines.length) {
        const next = lines[i]!;
        if (next.trim() === '' || /^\s*#/.test(next)) {
          i += 1;
          continue;
        }
        const item = /^\s*-(?:[ ]+(.*))?$/.exec(next);
        if (!item) break;
        const itemValue = scalar(item[1] ?? '');
        if (itemValue === NOT_SUPPORTED || (item[1] ?? '').trim().startsWith('[')) return undefined;
        items.push(itemValue);
        i += 1;
      }
      value = items.length > 0 ? items : null;
    } else if (rawValue.startsWith('[')) {
      const list = flowSequence(rawValue);
      if (list === NOT_SUPPORTED) return undefined;
      value = list;
    } else if (rawValue === '{}') {
      value = {};
    } else {
      const single = scalar(rawValue);
      if (single === NOT_SUPPORTED) return undefined;
      value = single;
    }
    // Like the service (uniqueKeys: false), a repeated key keeps its last value.
    result[key] = value;
    keys += 1;
  }
  return keys > 0 ? result : null;
}

/** Removes fenced code blocks and inline code, where Obsidian does not see headings or links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(?:^\1[^\n]*$|(?![\s\S]))/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Frontmatter `title`, else the first `# ` heading outside code, else the file name without `.md`. */
export function titleOf(path: string, content: string, frontmatter: Frontmatter | null): string {
  const fmTitle = frontmatter?.['title'];
  if (typeof fmTitle === 'string' && fmTitle.trim()) return fmTitle.trim().slice(0, 500);
  const { body } = parseFrontmatter(content);
  const heading = /^# +(.+?)\s*#*\s*$/m.exec(withoutCode(body));
  if (heading?.[1]?.trim()) return heading[1].trim().slice(0, 500);
  const file = path.split('/').pop() ?? path;
  return file.replace(/\.md$/, '');
}

export type NoteLink = { kind: 'link' | 'embed'; target: string; heading: string | null; block: string | null; alias: string | null };

const WIKILINK = /(!?)\[\[([^\]\n]+?)\]\]/g;

/** `[[note]]`, `[[note|alias]]`, `[[note#heading]]`, `[[note#^block]]` and `![[…]]`. */
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

export type DerivedNote = { title: string; revision: string; sizeBytes: number; frontmatter: Frontmatter | null; frontmatterSupported: boolean; links: NoteLink[] };

export function deriveNote(path: string, content: string): DerivedNote {
  const { frontmatter, supported } = parseFrontmatter(content);
  return {
    title: titleOf(path, content, frontmatter),
    revision: revisionOf(content),
    sizeBytes: utf8Length(content),
    frontmatter,
    frontmatterSupported: supported,
    links: extractLinks(content),
  };
}

// ---- preview diff ---------------------------------------------------------------------------

export const MAX_DIFF_BYTES = 256 * 1024;
/** Above this many line pairs the diff is one replacing hunk (a full LCS table would be too large). */
const MAX_LCS_CELLS = 4_000_000;

type Line = { text: string; newline: boolean };

function splitLines(content: string | null): Line[] {
  if (content === null || content === '') return [];
  const parts = content.split('\n');
  const endsWithNewline = parts[parts.length - 1] === '';
  if (endsWithNewline) parts.pop();
  return parts.map((text, i) => ({ text, newline: i < parts.length - 1 || endsWithNewline }));
}

const sameLine = (a: Line, b: Line) => a.text === b.text && a.newline === b.newline;

/** The edit script old → new: ' ' kept, '-' removed, '+' added (LCS over lines). */
function editScript(a: Line[], b: Line[]): Array<{ op: ' ' | '-' | '+'; line: Line }> {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_LCS_CELLS) return [...a.map((line) => ({ op: '-' as const, line })), ...b.map((line) => ({ op: '+' as const, line }))];
  const table = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[at(i, j)] = sameLine(a[i]!, b[j]!) ? table[at(i + 1, j + 1)]! + 1 : Math.max(table[at(i + 1, j)]!, table[at(i, j + 1)]!);
    }
  }
  const script: Array<{ op: ' ' | '-' | '+'; line: Line }> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && sameLine(a[i]!, b[j]!)) {
      script.push({ op: ' ', line: a[i]! });
      i += 1;
      j += 1;
      // On a tie the removal comes first, as unified diffs print it.
    } else if (j < m && (i >= n || table[at(i, j + 1)]! > table[at(i + 1, j)]!)) {
      script.push({ op: '+', line: b[j]! });
      j += 1;
    } else {
      script.push({ op: '-', line: a[i]! });
      i += 1;
    }
  }
  return script;
}

const C_ESCAPES: Record<number, string> = { 0x07: '\\a', 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0b: '\\v', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** A file name in a diff header, C-quoted (UTF-8 bytes as octal escapes) when not plain printable ASCII, as Git and diffutils print it. */
function quoteFileName(name: string): string {
  if (!/[^\x20-\x7e]|["\\]/.test(name)) return name;
  let quotedName = '"';
  for (const byte of Buffer.from(name, 'utf8')) {
    quotedName += C_ESCAPES[byte] ?? (byte >= 0x20 && byte <= 0x7e ? String.fromCharCode(byte) : `\\${byte.toString(8).padStart(3, '0')}`);
  }
  return `${quotedName}"`;
}

/** A unified diff of one note (3 lines of context), cut at MAX_DIFF_BYTES and saying so. */
export function unifiedDiff(path: string, before: string | null, after: string | null): { diff: string; diffTruncated: boolean } {
  const script = editScript(splitLines(before), splitLines(after));
  const out = ['===================================================================', `--- ${quoteFileName(before === null ? '/dev/null' : `a/${path}`)}`, `+++ ${quoteFileName(after === null ? '/dev/null' : `b/${path}`)}`];
  const context = 3;
  const changed = script.map((s, index) => (s.op === ' ' ? -1 : index)).filter((index) => index >= 0);
  let k = 0;
  while (k < changed.length) {
    // One hunk holds changes at most 2 × context unchanged lines apart.
    let last = changed[k]!;
    let next = k + 1;
    while (next < changed.length && changed[next]! - last - 1 <= 2 * context) last = changed[next++]!;
    const start = Math.max(0, changed[k]! - context);
    const end = Math.min(script.length, last + context + 1);
    let oldStart = 0;
    let newStart = 0;
    for (const s of script.slice(0, start)) {
      if (s.op !== '+') oldStart += 1;
      if (s.op !== '-') newStart += 1;
    }
    const hunk = script.slice(start, end);
    const oldCount = hunk.filter((s) => s.op !== '+').length;
    const newCount = hunk.filter((s) => s.op !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@`);
    for (const s of hunk) {
      out.push(`${s.op}${s.line.text}`);
      if (!s.line.newline) out.push('\\ No newline at end of file');
    }
    k = next;
  }
  const patch = `${out.join('\n')}\n`;
  if (utf8Length(patch) <= MAX_DIFF_BYTES) return { diff: patch, diffTruncated: false };
  return { diff: Buffer.from(patch, 'utf8').subarray(0, MAX_DIFF_BYTES).toString('utf8'), diffTruncated: true };
}
