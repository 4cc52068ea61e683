// Note path rules, enforced for every write and every route (REST, MCP, Forge). A path is
// vault-relative, `/`-separated, NFC-normalised, and safe to materialise on any desktop OS.
import { AppError } from '../errors.ts';

export const noteLimits = {
  /** Bytes of one path segment (UTF-8). */
  maxSegmentBytes: 255,
  /** Bytes of a whole path (UTF-8). */
  maxPathBytes: 1024,
  /** Bytes of one note's content (UTF-8); larger writes answer 413. */
  maxContentBytes: 1_048_576,
  /** Actions in one transaction. */
  maxTransactionActions: 100,
  /** Total content bytes of one transaction. */
  maxTransactionContentBytes: 8 * 1_048_576,
  /** Notes in one inventory page. */
  maxInventoryPage: 1000,
  /** Events in one feed page. */
  maxEventsPage: 1000,
} as const;

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$|clock\$)$/i;
const FORBIDDEN_CHARS = /[<>:"|?*\\]/;
// C0 controls, DEL and C1 controls.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

// Bidirectional controls reorder what a reader sees ("invoice\u202Egpj.md" displays as a .jpg), and
// invisible characters make two different paths look identical: neither belongs in a file name.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const INVISIBLE_CHARS = /[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u2060-\u2064\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
// The two joiners are invisible too, but written text needs them: ZWJ inside emoji sequences
// (👩‍💻), ZWNJ between letters (Persian, Indic scripts). Anywhere else they are refused.
const STRAY_JOINER = /(?<!\p{Extended_Pictographic}\ufe0f?)\u200d|\u200d(?!\p{Extended_Pictographic})|(?<!\p{L}\p{M}*)\u200c|\u200c(?!\p{L})/u;

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * The scans a path of printable ASCII skips, in order, each with its refusal: none can match such a
 * path, and such a path is its own NFC, so most paths skip them (every read validates its path).
 * test/dev-paths-limits.test.ts holds every scan to matching no printable ASCII.
 */
export const nonAsciiScans: readonly { pattern: RegExp; problem: string }[] = [
  { pattern: CONTROL_CHARS, problem: 'the path contains NUL or a control character' },
  { pattern: BIDI_CONTROLS, problem: 'the path contains a bidirectional control character (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)' },
  { pattern: INVISIBLE_CHARS, problem: 'the path contains an invisible character (such as U+200B or U+FEFF)' },
  { pattern: STRAY_JOINER, problem: 'the path contains an invisible character (such as U+200B or U+FEFF)' },
];
export const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Returns why a path is invalid, or null. `path` must already be NFC. */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'the path is empty';
  const ascii = PRINTABLE_ASCII.test(path);
  if (!ascii && !path.isWellFormed()) return 'the path contains an unpaired surrogate (not valid Unicode)';
  if (utf8Length(path) > noteLimits.maxPathBytes) return `the path is longer than ${noteLimits.maxPathBytes} bytes`;
  if (!ascii) for (const scan of nonAsciiScans) if (scan.pattern.test(path)) return scan.problem;
  if (path.includes('\\')) return 'the path contains a backslash; use / as the only separator';
  if (path.startsWith('/')) return 'the path starts with /; paths are relative to the vault';
  if (!path.endsWith('.md')) return 'the path must end in .md';
  const segments = path.split('/');
  for (const segment of segments) {
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

/**
 * Normalises to NFC and validates; throws `invalid_path` with the reason and a JSON pointer to the
 * offending field.
 */
export function validateNotePath(raw: string, pointer = '/path'): string {
  const path = PRINTABLE_ASCII.test(raw) ? raw : raw.normalize('NFC');
  const problem = pathProblem(path);
  if (problem) throw new AppError('invalid_path', `Invalid note path: ${problem}.`, { extensions: { errors: [{ pointer, message: problem, code: 'invalid_path' }] } });
  return path;
}

/**
 * Case-folded key: two paths with the same key cannot both exist in a vault. Simple (per
 * character) folding: each character upper- then lower-cased on its own, so context rules such as
 * the Greek final sigma cannot keep "ΟΔΟΣ" and "οδος" apart; characters whose upper case expands
 * (ß → SS) keep their own lower case, as case-insensitive file systems do.
 */
export function pathKey(path: string): string {
  let key = '';
  for (const ch of path) {
    const upper = ch.toUpperCase();
    key += [...upper].length === 1 ? upper.toLowerCase() : ch.toLowerCase();
  }
  return key;
}

/** A note's file name key: lower-cased, without folder and `.md` (WikiLink basename matching). */
export function basenameKey(pathOrTarget: string): string {
  return pathKey((pathOrTarget.split('/').pop() ?? '').replace(/\.md$/i, ''));
}

export function contentBytes(content: string): number {
  return utf8Length(content);
}

export function assertContentSize(content: string, pointer = '/content'): number {
  const size = contentBytes(content);
  if (size > noteLimits.maxContentBytes) {
    throw new AppError('note_too_large', `The note is ${size} bytes; the limit is ${noteLimits.maxContentBytes} bytes.`, {
      extensions: { limit: noteLimits.maxContentBytes, size, errors: [{ pointer, message: 'content too large', code: 'note_too_large' }] },
    });
  }
  return size;
}
