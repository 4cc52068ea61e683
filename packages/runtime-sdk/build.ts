// The package's one build step (`npm run build` here, `npm run sdk:build` at the root, and before
// every `npm pack`): a clean dist/ of ES2022 JavaScript modules and .d.ts from src/ with
// tsconfig.build.json. tsc rewrites the relative `.ts` specifiers of the JavaScript to `.js`
// (rewriteRelativeImportExtensions) but leaves them as written in the declarations
// (microsoft/TypeScript#61037); tsc reads either, other tools only `.js`, so they are rewritten here.
// `--out-dir <folder>` builds elsewhere (a test that must not race another's dist/).
import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, resolve } from 'node:path';

const packageRoot = import.meta.dirname;
const outDirFlag = process.argv.indexOf('--out-dir');
const outDirValue = outDirFlag === -1 ? undefined : process.argv[outDirFlag + 1];
if (outDirFlag !== -1 && (!outDirValue || outDirValue.startsWith('--'))) {
  console.error('runtime-sdk build: --out-dir needs a folder');
  process.exit(2);
}
const dist = outDirValue === undefined ? join(packageRoot, 'dist') : resolve(outDirValue);
// The folder is emptied first: never one that holds the package (its sources) or is inside src/.
const within = (parent: string, child: string) => !relative(parent, child).startsWith('..') && !isAbsolute(relative(parent, child));
if (within(dist, packageRoot) || within(join(packageRoot, 'src'), dist)) {
  console.error(`runtime-sdk build: refusing to empty ${dist}: it holds the package or lies in its sources`);
  process.exit(2);
}

await rm(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-p', join(packageRoot, 'tsconfig.build.json'), '--outDir', dist], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const relativeTs = /(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g;
let declarations = 0;
for (const entry of await readdir(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(relativeTs, '$1$2$3.js$2'));
  declarations++;
}
console.log(`runtime-sdk: built ${dist} (${declarations} declaration files)`);
