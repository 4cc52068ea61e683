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
    const manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; exports: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(['zod']);
    expect(Object.keys(manifest.exports)).toEqual(expect.arrayContaining(['.', './hosted', './local', './envelope', './ndjson']));
  });
});
