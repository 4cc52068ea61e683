// safety-links: whether a text holds a link, in any notation. Domains are told by the public suffix
// list (the `tldts` package, kept current by its maintainers), not by a hand list of endings, so a
// bare "example.co.uk", "mysite.school" or "abc.xyz" is a link like "https://…" is.
//
// Found, after foldText (NFKC, so "ＥＸＡＭＰＬＥ．ＣＯＭ" and "example。com" are plain):
// - a scheme ("https://", "ftp://", "hxxp://", even spaced "h t t p s : / /"), mailto:, tel:, sms:…,
//   "www." (also "www dot", "www ."), localhost;
// - an IPv4 address (four numbers up to 255) or a bracketed IPv6 one;
// - a host name whose ending is on the public suffix list (ICANN or private section), after undoing
//   obfuscations: "[.]", "(.)", "[dot]", "(dot)", "{dot}", " dot " and " . " between labels;
// - invite and short links are host names like any other (discord.gg/…, t.me/…, bit.ly/…).
// Not links: abbreviations and initials ("e.g.", "U.S.", "J.K."), decimals and versions ("3.14",
// "Fig. 3.2", "4.NF.A.1"), names with an ending that is no public suffix ("Node.js", "console.log"),
// a file name with a well-known file extension that is also a country code ("notes.md", "main.py",
// "game.sh", "project.zip", "lesson.mov") when nothing else marks it as an address (no scheme, www,
// path or port), a sentence run on without a space before a capitalized word ("graph.It shows"),
// and "dot" as an ordinary word before a suffix that is also an English word ("a dot in the middle",
// "each dot is one unit").
import { parse } from 'tldts';
import { foldText } from './safety-text.ts';

export type LinkFinding = 'scheme' | 'www' | 'ip-address' | 'domain';

/** File extensions that are also public suffixes: "notes.md" is a file, not Moldova. */
const FILE_EXTENSIONS = new Set(['md', 'py', 'sh', 'pl', 'rs', 'zip', 'mov', 'ps', 'cc', 'so', 'ml', 'gd', 'sb', 'tf']);
/** Public suffixes that are English words: after the word "dot" they are prose, not a domain. */
const WORD_SUFFIXES = new Set(['in', 'is', 'it', 'to', 'at', 'be', 'by', 'do', 'go', 'me', 'my', 'no', 'so', 'us', 'am', 'as', 'an', 'on', 'or', 'of', 'up', 'we', 'he', 'hi', 'ok', 'now', 'one', 'top', 'new', 'fun', 'win', 'art', 'red', 'how', 'out', 'day', 'men', 'map', 'pub', 'run', 'bar', 'ski', 'spa', 'fit', 'eat']);

const SCHEME = /\b(?:h\s?[tx]\s?[tx]\s?p\s?s?|s?ftp|file|wss?)\s?:\s?\/\s?\/|\b(?:mailto|tel|sms|callto|skype|whatsapp|tg|discord|fb-messenger|snapchat|intent|javascript|data):\S/;
const WWW = /\bw\s?w\s?w\s?(?:\.|\s?\[\s?\.\s?\]|\s?\(\s?\.\s?\)|\s+dot\s+)\s?[\p{L}\p{N}-]/u;
const IPV4 = /(?<![\p{N}.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\p{N}]|\.\p{N})/u;
const IPV6 = /\[[0-9a-f:]*:[0-9a-f:]*\]/;
const LOCALHOST = /\blocalhost(?::\d+|\/)/;

/** The host-name candidates of a text, with the original spelling of their last label and what follows. */
function candidates(original: string): { host: string; last: string; explicit: boolean; viaDot: boolean }[] {
  // Letters spelled one by one ("f r a c t i o n s . c o m", "g o o . g l") become words.
  let s = foldText(original)
    .replace(/(?<![\p{L}\p{N}])\p{L}(?: \p{L}){2,}(?![\p{L}\p{N}])/gu, (m) => m.replace(/ /g, ''))
    .replace(/(\.\s?)(\p{L}) (\p{L})(?![\p{L}\p{N}])/gu, '$1$2$3')
    // Bullets and middle dots between labels written for a dot ("www•example•com").
    .replace(/(?<=[\p{L}\p{N}])\s?[•·∙⋅・]\s?(?=[\p{L}\p{N}])/gu, '.');
  // Obfuscated dots: "[.]", "(.)", "{.}", "[dot]", "(dot)", "{dot}", "<dot>".
  s = s.replace(/\s?[[({<]\s?(?:\.|dot)\s?[\])}>]\s?/g, '.');
  let viaDotText = s;
  // " dot " between two labels; " . " with spaces on both sides.
  viaDotText = viaDotText.replace(/([\p{L}\p{N}-]) dot (?=[\p{L}\p{N}])/gu, '$1\u0001');
  // A full stop with a space before or after it joins two labels only when the left one is a word
  // (not a number: "costs 2.99. Pay at the till") and the right one is not a capitalized word
  // starting a sentence in the original ("Use your notes. Info you need is there").
  const sentenceStarts = new Set([...original.normalize('NFKC').matchAll(/[.。．]\s+(\p{Lu}\p{Ll}*)/gu)].map((m) => m[1]!.toLowerCase()));
  viaDotText = viaDotText.replace(/(?<![.\p{L}\p{N}-][\p{L}\p{N}])([\p{L}\p{N}-]{2,}) ?\. ?(?=([\p{L}\p{N}]+))/gu, (m, a: string, b: string) => {
    const spaced = m.startsWith(`${a} `) || m.endsWith(' ');
    if (!spaced || /^\d+$/.test(a) || (m.endsWith(' ') && !m.startsWith(`${a} `) && sentenceStarts.has(b))) return m;
    return `${a}\u0001`;
  });
  const out: { host: string; last: string; explicit: boolean; viaDot: boolean }[] = [];
  const label = /[\p{L}\p{N}_-]+(?:[.\u0001\u0002][\p{L}\p{N}_-]+)+/gu;
  const originalFolded = original.normalize('NFKC').replace(/[\u3002\uff61]/g, '.');
  for (const m of viaDotText.matchAll(label)) {
    const raw = m[0];
    const host = raw.replace(/[\u0001\u0002]/g, '.').replace(/^[-_]+|[-_]+$/g, '');
    const after = viaDotText.slice(m.index + raw.length);
    const before = viaDotText.slice(0, m.index);
    const explicit = /^(?::\d|\s?\/\s?[\p{L}\p{N}@#?]|\?)/u.test(after) || /@$/.test(before);
    const lastLabel = host.split('.').pop() ?? '';
    // The last label as written in the original text (for "graph.It shows": a run-on sentence).
    const written = new RegExp(`[.]\\s?(${lastLabel.replace(/[^\p{L}\p{N}]/gu, '.')})(?![\\p{L}\\p{N}])`, 'iu').exec(originalFolded);
    out.push({ host, last: written?.[1] ?? lastLabel, explicit, viaDot: raw.includes('\u0001') });
  }
  return out;
}

/** The first kind of link in the text, or null (see the module comment). */
export function findLink(text: string): LinkFinding | null {
  const folded = foldText(text);
  if (SCHEME.test(folded)) return 'scheme';
  if (WWW.test(folded)) return 'www';
  if (IPV4.test(folded) || IPV6.test(folded) || LOCALHOST.test(folded)) return 'ip-address';
  for (const c of candidates(text)) {
    const labels = c.host.split('.');
    if (labels.some((l) => l === '') || labels.every((l) => /^\d+$/.test(l))) continue;
    const parsed = parse(c.host, { allowPrivateDomains: true });
    if (!parsed.domain || !(parsed.isIcann || parsed.isPrivate) || !parsed.publicSuffix) continue;
    if (/^\d/.test(parsed.publicSuffix)) continue;
    const suffixLabels = parsed.publicSuffix.split('.').length;
    const last = labels[labels.length - 1]!;
    if (!c.explicit) {
      // Initials and abbreviations: every label a single letter ("u.s", "e.g", "j.k").
      if (labels.every((l) => l.length === 1)) continue;
      // A file name: one label and a file extension that happens to be a country code.
      if (labels.length === 2 && FILE_EXTENSIONS.has(last)) continue;
      // A run-on sentence: the last label written Capitalized and an English word ("graph.It",
      // "end.Now"); "Example.Com" stays a domain.
      if (labels.length === 2 && /^\p{Lu}\p{Ll}+$/u.test(c.last) && (WORD_SUFFIXES.has(last) || last.length > 3)) continue;
      // "dot" as a word ("a dot in the middle", "each dot is one unit") and a full stop before a
      // word ("Fri. at noon", "e.g. in"): a suffix that is also an English word is prose there.
      if (c.viaDot && WORD_SUFFIXES.has(last)) continue;
      // A label that is a number ("5.nbt" is a standard code, not a domain).
      if (labels.slice(0, -suffixLabels).some((l) => /^\d+$/.test(l)) && labels.length - suffixLabels === 1 && /^\d+$/.test(labels[0]!)) continue;
    }
    return 'domain';
  }
  return null;
}
