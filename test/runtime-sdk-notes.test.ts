// The local adapter computes offline what the service computes for a note (path rules, revision,
// title, links, frontmatter, preview diff). The SDK cannot import the server, so it keeps its own
// copy (packages/runtime-sdk/src/notes.ts); this test runs both on the same inputs so any drift
// fails here, before the two adapters disagree in front of a product.
import { describe, expect, it } from 'vitest';
import { deriveNote as serverDerive, unifiedDiff as serverDiff } from '../domain/notes/markdown.ts';
import { pathKey as serverPathKey, pathProblem as serverPathProblem } from '../domain/notes/paths.ts';
import { deriveNote, pathKey, pathProblem, unifiedDiff } from '../packages/runtime-sdk/src/notes.ts';

const paths = [
  'Note.md',
  'Units/Unit 1.md',
  'Ünits/Straße.md',
  '../escape.md',
  'a/../b.md',
  '/abs.md',
  'a\\b.md',
  '.obsidian/app.md',
  'Units/.draft.md',
  'notes.txt',
  'a//b.md',
  'con.md',
  'Units/aux.txt.md',
  'trailing .md',
  'dot./x.md',
  'what?.md',
  'zero\u200bwidth.md',
  'bidi\u202egpj.md',
  'emoji 👩\u200d💻.md',
  'stray\u200djoiner.md',
  'ctl\u0007.md',
  `${'x'.repeat(256)}.md`,
  `${'dir/'.repeat(300)}x.md`,
  '\ud800.md',
  '',
];

const contents = [
  '',
  '# Title\n',
  'no heading\n',
  '---\ntitle: From frontmatter\n---\n# Heading\n',
  '---\ntitle: "Quoted: with colon"\ntags: [a, "b c", 3]\n---\nbody',
  "---\ntitle: 'It''s single'\n---\n",
  '---\ntitle:   \n---\n# Fallback heading\n',
  '---\naliases:\n  - one\n  - two\ncount: 0x1F\nratio: 1.5e3\nflag: True\nnothing: ~\ninf: .inf\n---\n',
  '---\naliases:\n- flush\n- list\n---\n',
  '---\n# only a comment\n---\n# Heading\n',
  '---\ntitle: Bad: yaml\n---\n# Heading wins\n',
  '---\nnested:\n  key: value\n---\n# Nested\n',
  '---\ntitle: &anchor A\n---\n',
  '---\ntitle: |\n  block\n---\n',
  '---\n- a\n- b\n---\n# List frontmatter\n',
  '---\ntitle: one\ntitle: two\n---\n',
  '---\r\ntitle: CRLF\r\n---\r\n# Body\r\n',
  '---\ndate: 2024-01-02\n---\n',
  '---\ntitle: x # comment\n---\n',
  '---\ntitle: "esc \\u00e9 \\x41"\n---\n',
  '```\n# not a heading\n[[not a link]]\n```\n# Real ## \n[[Target#Heading|Alias]] ![[img.png]] [[#Local]] [[Note#^block]] `[[inline]]`\n',
  '~~~md\n# fenced\n~~~\n',
  '#NoSpace\n#  Spaced   #\n',
];

describe('SDK note rules agree with the service', () => {
  it('path rules and case folding', () => {
    for (const path of paths) {
      const nfc = path.normalize('NFC');
      expect({ path, problem: pathProblem(nfc) }).toEqual({ path, problem: serverPathProblem(nfc) });
      expect(pathKey(nfc)).toBe(serverPathKey(nfc));
    }
  });

  it('revision, size, title, links and, where the SDK reads it, frontmatter', () => {
    let unsupported = 0;
    for (const content of contents) {
      const server = serverDerive('Units/File name.md', content);
      const sdk = deriveNote('Units/File name.md', content);
      expect({ content, revision: sdk.revision, sizeBytes: sdk.sizeBytes, links: sdk.links }).toEqual({ content, revision: server.revision, sizeBytes: server.sizeBytes, links: server.links });
      if (sdk.frontmatterSupported) {
        expect({ content, title: sdk.title, frontmatter: sdk.frontmatter }).toEqual({ content, title: server.title, frontmatter: server.frontmatter });
      } else {
        // Beyond the SDK's reader: it says so (the local adapter answers partial), and never has a value of its own.
        unsupported += 1;
        expect(sdk.frontmatter).toBeNull();
      }
    }
    // The corpus does exercise both sides.
    expect(unsupported).toBeGreaterThan(0);
    expect(unsupported).toBeLessThan(contents.length / 2);
  });

  it("the service's title: the frontmatter's, else the body's first heading after the frontmatter block, whether or not its YAML parses, else the file name", () => {
    const title = (content: string) => serverDerive('Units/File name.md', content).title;
    expect(title('---\ntitle: From frontmatter\n---\n# Heading\n')).toBe('From frontmatter');
    expect(title('---\ntags: [a]\n---\n# After frontmatter\n')).toBe('After frontmatter');
    expect(title('---\ntitle: Bad: yaml\n---\n# Heading wins\n')).toBe('Heading wins');
    expect(title('---\n# inside the block\n---\nno heading\n')).toBe('File name');
    expect(title('# Plain\n')).toBe('Plain');
  });

  it('preview diffs are the same text', () => {
    const lines = (n: number, changed: number[]) => Array.from({ length: n }, (_, i) => (changed.includes(i) ? `changed ${i}` : `line ${i}`)).join('\n') + '\n';
    const pairs: Array<[string | null, string]> = [
      [null, 'a\nb\n'],
      ['a\nb\n', 'a\nc\n'],
      ['x', 'y'],
      ['a\n', 'a'],
      ['', 'a\n'],
      ['same\n', 'same\n'],
      [lines(30, []), lines(30, [3, 9])],
      [lines(30, []), lines(30, [3, 10])],
      [lines(30, []), lines(30, [3, 11])],
      [lines(30, []), lines(28, [0, 27])],
      ['a\nb\nc\nd\n', 'd\nc\nb\na\n'],
    ];
    for (const [before, after] of pairs) expect(unifiedDiff('U/p.md', before, after)).toEqual(serverDiff('U/p.md', before, after));
    // File names beyond printable ASCII are C-quoted in the headers.
    for (const name of ['Ünits/Straße — 1.md', 'emoji 👩\u200d💻.md', 'plain name.md']) expect(unifiedDiff(name, 'a\n', 'b\n')).toEqual(serverDiff(name, 'a\n', 'b\n'));
  });
});
