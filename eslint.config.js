// Lint rules that catch what the type checker does not: unawaited promises, imports that run
// against the layers (docs/architecture.md), and anything in workflows/ that would break
// Temporal's deterministic sandbox (Node builtins, I/O, clients).
import { posix } from 'node:path';
import tseslint from 'typescript-eslint';
import local from './eslint-rules.js';

// The layers, bottom to top, and what each may not import (by value or by type). A layer imports
// only layers below it; scripts/ (the local stack, the ops CLI) may import anything. bench/ and
// test/ are outside the layering.
//
//   scripts/
//   api/       workers/                          interfaces, composition roots (compose.ts, main.ts)
//   platform/  workflows/ ──type only──▶ activities/
//   domain/
//   db/
//
// Within a row only along the arrow; workflows/ also imports nothing from db/.
const layers = {
  db: ['domain', 'activities', 'workflows', 'platform', 'api', 'workers', 'scripts'],
  domain: ['activities', 'workflows', 'platform', 'api', 'workers', 'scripts'],
  activities: ['workflows', 'platform', 'api', 'workers', 'scripts'],
  workflows: ['db', 'platform', 'api', 'workers', 'scripts'],
  platform: ['activities', 'workflows', 'api', 'workers', 'scripts'],
  api: ['workers', 'scripts'],
  workers: ['api', 'scripts'],
};

// Domain modules workflows may import by value: deterministic code only. Each is linted with the
// workflow sandbox rules below and may import by value only the others listed here, so whatever a
// workflow pulls in stays free of Node, I/O and the database.
const workflowSafeDomainModules = ['domain/automation/search-attributes.ts', 'domain/automation/review-rules.ts'];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A relative specifier that climbs to the top-level folder. `(\.\./)+` does not count the levels,
// so a same-named subfolder (domain/notes/api/) would match too: top-level folder names are not
// reused below it.
const upwardImport = (folder, message, extra = {}) => ({ regex: `^(\\.\\./)+${escape(folder)}(/|$)`, message, ...extra });

const layerPatterns = (layer) =>
  layers[layer].map((folder) => upwardImport(folder, `${layer}/ may not import from ${folder}/ (docs/architecture.md, "Layers").`));

// The Temporal sandbox: no Node builtins, no I/O, no clients; shared by workflows/ and the
// workflow-safe domain modules.
const sandboxPatterns = [
  { group: ['node:*'], message: 'Workflows are deterministic: no Node builtins.' },
  { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'Workflows import only @temporalio/workflow (and types).', allowTypeImports: true },
  { group: ['slonik', 'pg', 'fastify', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process'], message: 'No I/O inside workflows.' },
];

const httpPatterns = [{ group: ['fastify', 'fastify-*', '@fastify/*'], message: 'HTTP belongs to api/: the domain and the database know nothing of it.' }];

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

/** Specifier from one repository file to another, as written in an import. */
const specifierBetween = (from, to) => {
  const relative = posix.relative(posix.dirname(from), to);
  return relative.startsWith('.') ? relative : `./${relative}`;
};

const layerBlocks = Object.keys(layers).map((layer) => {
  const patterns = [...layerPatterns(layer)];
  if (layer === 'db' || layer === 'domain') patterns.push(...httpPatterns);
  if (layer === 'workflows') {
    const safe = workflowSafeDomainModules.map((file) => escape(posix.relative('domain', file)));
    patterns.push(
      ...sandboxPatterns,
      upwardImport('activities', 'Import activities with `import type` only (proxyActivities).', { allowTypeImports: true }),
      {
        regex: `^(\\.\\./)+domain/${safe.length ? `(?!(${safe.join('|')})$)` : ''}`,
        message: 'Workflows import domain modules by type only, except the workflow-safe ones listed in eslint.config.js.',
        allowTypeImports: true,
      },
    );
  }
  return { files: [`${layer}/**/*.ts`], rules: restrict(patterns) };
});

const workflowSafeBlocks = workflowSafeDomainModules.map((file) => {
  const others = workflowSafeDomainModules.filter((other) => other !== file).map((other) => escape(specifierBetween(file, other)));
  return {
    files: [file],
    rules: restrict([
      ...layerPatterns('domain'),
      ...httpPatterns,
      ...sandboxPatterns,
      {
        regex: `^${others.length ? `(?!(${others.join('|')})$)` : ''}\\.{1,2}/`,
        message: 'A workflow-safe module imports by value only the other workflow-safe modules (eslint.config.js).',
        allowTypeImports: true,
      },
    ]),
  };
});

// The runtime SDK is a package partners install: zod, Node builtins and its own files only, never
// the service's folders (test/runtime-sdk-package.test.ts checks the same from the outside).
const sdkBlock = {
  files: ['packages/runtime-sdk/**/*.ts'],
  rules: restrict([
    { regex: '^(?!zod$|node:|\\.{1,2}/)', message: 'The runtime SDK imports only zod, node: builtins and its own files.' },
    { regex: '^(\\.\\./){2,}', message: 'The runtime SDK never reaches outside its package (its sources are at most one folder deep).' },
  ]),
};

// The interfaces (one folder each) and what they share (issue 49): api/ outside these folders is
// shared by them (the edge, problems, the OpenAPI module, routes/shared/, auth, metrics…) and imports
// none of them; the composition roots are the exceptions, they compose the interfaces. domain/ and
// db/ import nothing of api/ at all (the layers above). eslint-rules.js holds both rules.
const interfaceFolders = ['api/routes/dev', 'api/routes/mcp', 'api/routes/automation', 'api/routes/product', 'api/routes/console'];
const compositionRoots = ['api/app.ts', 'api/compose.ts', 'api/main.ts', 'api/openapi-export.ts'];

const importGraphBlocks = [
  { files: ['**/*.ts'], plugins: { local }, rules: { 'local/no-import-cycle': 'error' } },
  {
    files: ['api/**/*.ts'],
    rules: { 'local/shared-imports-no-interface': ['error', { interfaces: interfaceFolders, exceptions: compositionRoots }] },
  },
];

export default tseslint.config(
  // packages/*/dist/: the runtime SDK's build (docs/decisions.md 84), never the sources.
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**', 'packages/*/dist/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // One no-restricted-imports block per file: a later block would replace, not extend, an earlier one.
  ...layerBlocks,
  ...workflowSafeBlocks,
  sdkBlock,
  ...importGraphBlocks,
);
