// The SDK as a partner gets it: built and packed here (`npm pack`, whose prepack runs the package's
// one build), installed from the tarball into a fresh folder outside the repository, and the
// README's partner example ("A partner product in a few lines", verbatim) run there on Node 20
// (/usr/bin/node) and on the pinned Node 24, against the app on loopback with an installation's
// service credential, then offline on the local adapter. The partner's environment has none of
// this repository's: no source condition, no npm_* variables of the npm that runs the tests.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/harness.ts';
import { node20Binary } from './support/node20.ts';
import { buildRuntimeChain } from './support/product-runtime.ts';
import type { RuntimeChain } from './support/product-runtime.ts';

const execFileAsync = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
// Resolved in beforeAll: the machine's Node 20, or the official build fetched from npm (test/support/node20.ts).
let node20 = '';
const node24 = process.execPath;
const issueErrors = /ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING|ERR_UNKNOWN_FILE_EXTENSION/;

/** The environment of someone outside this repository: no NODE_OPTIONS (the source condition), no npm_* of the npm running vitest. */
function partnerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && name !== 'NODE_COMPILE_CACHE' && !/^npm_/i.test(name) && !name.startsWith('HNP_')));
  return { ...env, ...extra };
}

type Run = { code: number; stdout: string; stderr: string };
async function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number }): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { ...options, timeout: options.timeout ?? 120_000, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** The first ```ts block under "## A partner product in a few lines" in README.md, as written. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(repo, 'README.md'), 'utf8');
  const section = readme.split(/^## A partner product in a few lines$/m)[1]?.split(/^## /m)[0];
  const code = section?.match(/^```ts\n([\s\S]*?)^```$/m)?.[1];
  if (!code) throw new Error('README.md has no ```ts block under "## A partner product in a few lines"');
  return code;
}

const ctx = useTestApp({ listen: true });
let chain: RuntimeChain;
let work: string;
let partner: string;
let packed: { filename: string; files: { path: string }[] };

beforeAll(async () => {
  node20 = await node20Binary();
  chain = await buildRuntimeChain(ctx.db.pool);
  work = await mkdtemp(join(tmpdir(), 'hnp-sdk-install-'));
  partner = join(work, 'partner-product');
  await mkdir(partner);

  // npm pack runs prepack (the package's build) with the pinned Node first on PATH, as `npm run` has it.
  const pathWithNode24 = `${dirname(node24)}${delimiter}${process.env['PATH'] ?? ''}`;
  const pack = await run('npm', ['pack', '-w', '@hosted-notes/runtime-sdk', '--pack-destination', work, '--json'], { cwd: repo, env: { ...process.env, PATH: pathWithNode24 } });
  expect(pack.code, pack.stderr).toBe(0);
  // npm prints the build's own lines before the JSON report.
  packed = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as (typeof packed)[])[0]!;

  await writeFile(join(partner, 'package.json'), JSON.stringify({ name: 'partner-product', private: true, type: 'module' }, null, 2));
  const install = await run('npm', ['install', join(work, packed.filename), '--no-audit', '--no-fund', '--prefer-offline'], { cwd: partner, env: partnerEnv() });
  expect(install.code, install.stderr).toBe(0);
  await writeFile(join(partner, 'example.mjs'), await readmeExample());
  // The local adapter's folder (the example's ./my-vault): one note.
  await mkdir(join(partner, 'my-vault/Units'), { recursive: true });
  await writeFile(join(partner, 'my-vault/Units/Unit 1.md'), '# Unit 1\n');
}, 240_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the built JavaScript and declarations, the README and the CHANGELOG: no TypeScript source', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/local.js', 'dist/local.d.ts']));
    expect(files.filter((f) => !/^dist\/.+\.(js|d\.ts)$/.test(f))).toEqual(['CHANGELOG.md', 'README.md', 'package.json']);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('every export of the installed package resolves to a built file that is in the tarball', async () => {
    const manifest = JSON.parse(await readFile(join(partner, 'node_modules/@hosted-notes/runtime-sdk/package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const installed = join(partner, 'node_modules/@hosted-notes/runtime-sdk');
    const present = new Set((await readdir(installed, { recursive: true })).map((f) => f.replaceAll('\\', '/')));
    const targets: string[] = [];
    const collect = (value: unknown, conditions: string[]) => {
      if (typeof value === 'string') {
        if (!conditions.includes('@hosted-notes/source')) targets.push(value);
      } else for (const [condition, nested] of Object.entries(value as Record<string, unknown>)) collect(nested, [...conditions, condition]);
    };
    collect(manifest.exports, []);
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((target) => !present.has(target.replace(/^\.\//, '')))).toEqual([]);
  });

  it("its declarations import the built .js files, never the sources' .ts (build.ts rewrites what tsc leaves)", async () => {
    const dist = join(partner, 'node_modules/@hosted-notes/runtime-sdk/dist');
    const declarations = (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(10);
    const offenders: string[] = [];
    for (const file of declarations) {
      const text = await readFile(join(dist, file), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) if (!m[1]!.endsWith('.js')) offenders.push(`${file}: ${m[1]}`);
    }
    expect(offenders).toEqual([]);
  });
});

describe.each([
  ['Node 20', () => node20],
  ['Node 24', () => node24],
])('the README partner example, installed from the tarball, on %s', (name, binaryOf) => {
  it('is the Node it says', async () => {
    const version = await run(binaryOf(), ['--version'], { cwd: partner, env: partnerEnv() });
    expect(version.stdout.trim()).toMatch(name === 'Node 20' ? /^v20\./ : /^v24\./);
  });

  it('imports every entry point (the local adapter under the node condition)', async () => {
    const script = `
      const entries = ['@hosted-notes/runtime-sdk', '@hosted-notes/runtime-sdk/hosted', '@hosted-notes/runtime-sdk/local', '@hosted-notes/runtime-sdk/envelope', '@hosted-notes/runtime-sdk/ndjson'];
      for (const entry of entries) console.log(entry, import.meta.resolve(entry), Object.keys(await import(entry)).length);`;
    const result = await run(binaryOf(), ['--input-type=module', '-e', script], { cwd: partner, env: partnerEnv() });
    expect(result.stderr).not.toMatch(issueErrors);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    for (const line of lines) {
      const [, url, exported] = line.split(' ');
      expect(relative(partner, new URL(url!).pathname)).toMatch(/^node_modules\/@hosted-notes\/runtime-sdk\/dist\/[a-z]+\.js$/);
      expect(Number(exported)).toBeGreaterThan(0);
    }
  });

  it('hosted (HNP_SERVICE_CREDENTIAL set): reports the capabilities and the granted vault of the live API', async () => {
    const result = await run(binaryOf(), ['example.mjs'], { cwd: partner, env: partnerEnv({ HNP_SERVICE_CREDENTIAL: chain.secret, HNP_BASE_URL: ctx.url }) });
    expect(result.stderr).not.toMatch(issueErrors);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^hosted runtime, available: .*\bnotes\.read\b.*\bnotes\.write\b/m);
    // buildRuntimeChain's one granted vault, "Curriculum <8 hex>".
    expect(result.stdout).toMatch(/^workspace complete \[ 'Curriculum [0-9a-f]{8}' \]$/m);
  });

  it('local (no credential): the same example runs offline on the local adapter from the /local entry', async () => {
    const result = await run(binaryOf(), ['example.mjs'], { cwd: partner, env: partnerEnv() });
    expect(result.stderr).not.toMatch(issueErrors);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^local runtime, available: notes\.read, notes\.write$/m);
    expect(result.stdout).toMatch(/^workspace unavailable \[\s*\{[\s\S]*reason: 'hosted_only'/m);
  });
});
