// What the SDK package may depend on: zod and Node's builtins, never the server's folders (a partner
// gets the package, not the service). And its root entry, which docs/runtime-sdk.md says bundles for
// a browser, reaches no Node module at all (the local adapter is its own entry point).
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const packageRoot = resolve(import.meta.dirname, '../packages/runtime-sdk');
const sourceRoot = join(packageRoot, 'src');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(entries.map((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [join(dir, e.name)] : []))));
  return files.flat();
}

async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
}

describe('runtime-sdk package boundaries', () => {
  it('imports only zod, node: builtins and its own files', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(sourceRoot)) {
      for (const specifier of await importsOf(file)) {
        if (specifier === 'zod' || specifier.startsWith('node:')) continue;
        const target = resolve(dirname(file), specifier);
        if (specifier.startsWith('.') && !relative(sourceRoot, target).startsWith('..')) continue;
        offenders.push(`${relative(packageRoot, file)} → ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('its root entry reaches no Node module (browser-safe); only the local adapter does', async () => {
    const seen = new Set<string>();
    const nodeImports: string[] = [];
    const visit = async (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const specifier of await importsOf(file)) {
        if (specifier.startsWith('node:')) nodeImports.push(`${relative(packageRoot, file)} → ${specifier}`);
        else if (specifier.startsWith('.')) await visit(resolve(dirname(file), specifier));
      }
    };
    await visit(join(sourceRoot, 'index.ts'));
    expect(nodeImports).toEqual([]);
    expect(seen.has(join(sourceRoot, 'local.ts'))).toBe(false);
  });

  it('declares zod as its only dependency and exports its entry points', async () => {
    const manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; exports: Record<string, unknown> };
    expect(Object.keys(manifest.dependencies)).toEqual(['zod']);
    expect(Object.keys(manifest.exports)).toEqual(expect.arrayContaining(['.', './hosted', './local', './envelope', './ndjson']));
  });

  // What a partner installs (test/runtime-sdk-install.test.ts packs and installs it): the build in
  // dist/, each entry point's sources under the repository's own condition first (docs/decisions.md 84).
  it('is publishable: ESM, semver, Node >= 20, only dist/ README CHANGELOG in the tarball', async () => {
    const manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest['private']).toBeUndefined();
    expect(manifest['type']).toBe('module');
    expect(manifest['version']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest['engines']).toEqual({ node: '>=20' });
    expect(manifest['files']).toEqual(['dist', 'README.md', 'CHANGELOG.md']);
    const changelog = await readFile(join(packageRoot, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`## ${String(manifest['version'])}`);
  });

  it('maps each entry point to its source (repository condition), then its declarations and JavaScript in dist/; ./local only under node', async () => {
    const manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, unknown>> };
    const entries = { '.': 'index', './hosted': 'hosted', './envelope': 'envelope', './ndjson': 'ndjson', './local': 'local' };
    for (const [entry, file] of Object.entries(entries)) {
      const conditions = entry === './local' ? manifest.exports[entry]!['node'] : manifest.exports[entry];
      if (entry === './local') expect(Object.keys(manifest.exports[entry]!)).toEqual(['node']);
      expect(conditions, entry).toEqual({ '@hosted-notes/source': `./src/${file}.ts`, types: `./dist/${file}.d.ts`, default: `./dist/${file}.js` });
      expect(Object.keys(conditions as object), entry).toEqual(['@hosted-notes/source', 'types', 'default']);
      await expect(readFile(join(packageRoot, `src/${file}.ts`), 'utf8')).resolves.toBeTruthy();
    }
    expect(Object.keys(manifest.exports).filter((entry) => !(entry in entries))).toEqual(['./package.json']);
  });
});
