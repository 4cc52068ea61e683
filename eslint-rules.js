// The project's own lint rules, on the import graph (issue 49; eslint.config.js applies them):
// - no-import-cycle: no module reaches itself through its imports, type imports and re-exports
//   included (a type-only circle still ties two modules into one unit nobody can read or move alone);
// - shared-imports-no-interface: the modules every interface stands on (api/ outside the interface
//   folders and the composition roots) import no interface: an interface hands its facts to them
//   (registration, parameters), never the other way.
// The graph is read with TypeScript's pre-processor (imports, `import type`, `export … from`,
// `import()`), one file at a time as it is reached, and kept for the process; the file being linted
// is read from its current text, so a probe (test/lint-layers.test.ts) is judged like a real file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Relative specifiers of a module's static and dynamic imports and re-exports. */
function specifiersOf(text) {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'));
}

/** The file a relative specifier names (the project writes extensions; a folder means its index.ts). */
function resolveSpecifier(from, specifier) {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target, `${target}.ts`, `${target}${sep}index.ts`]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Each file's imported files, read from disk once per process. */
const edgesOnDisk = new Map();
function importsOf(file) {
  let edges = edgesOnDisk.get(file);
  if (!edges) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // A file that cannot be read imports nothing here; the type checker reports it.
    }
    edges = specifiersOf(text).map((specifier) => resolveSpecifier(file, specifier)).filter((target) => target !== undefined);
    edgesOnDisk.set(file, edges);
  }
  return edges;
}

/** The shortest import path from `start` back to `file` (both ends included), or undefined. */
function pathBack(start, file) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === file) {
      const path = [];
      for (let at = current; at !== null; at = previous.get(at)) path.unshift(at);
      return path;
    }
    for (const next of importsOf(current)) {
      if (previous.has(next)) continue;
      previous.set(next, current);
      queue.push(next);
    }
  }
  return undefined;
}

/** Every node of the file that names a module: imports, re-exports, `import()`, `import('…').T`. */
function moduleSources(node) {
  switch (node.type) {
    case 'ImportDeclaration':
    case 'ExportAllDeclaration':
      return node.source;
    case 'ExportNamedDeclaration':
      return node.source ?? undefined;
    case 'ImportExpression':
      return node.source.type === 'Literal' ? node.source : undefined;
    case 'TSImportType':
      return node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.source;
    default:
      return undefined;
  }
}

/** Calls `check(node, target)` for every relative import of the file that resolves to a file. */
function onImports(context, check) {
  const visit = (node) => {
    const source = moduleSources(node);
    if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
    const target = resolveSpecifier(context.filename, source.value);
    if (target) check(source, target);
  };
  return { ImportDeclaration: visit, ExportAllDeclaration: visit, ExportNamedDeclaration: visit, ImportExpression: visit, TSImportType: visit };
}

const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbids import cycles, type imports and re-exports included.' },
    schema: [],
    messages: { cycle: 'Import cycle: {{path}}. Type imports count too: move what both need into a module of its own, or hand it in (docs/architecture.md, "Layers").' },
  },
  create(context) {
    const root = context.cwd;
    const file = context.filename;
    const name = (path) => relative(root, path).split(sep).join('/');
    return onImports(context, (source, target) => {
      // The linted file's own imports come from its current text (the node being visited), the rest from disk.
      const back = target === file ? [file] : pathBack(target, file);
      if (back) context.report({ node: source, messageId: 'cycle', data: { path: [file, ...back].map(name).join(' → ') } });
    });
  },
};

const sharedImportsNoInterface = {
  meta: {
    type: 'problem',
    docs: { description: 'The modules interfaces share import no interface folder.' },
    schema: [
      {
        type: 'object',
        properties: {
          interfaces: { type: 'array', items: { type: 'string' } },
          exceptions: { type: 'array', items: { type: 'string' } },
        },
        required: ['interfaces'],
        additionalProperties: false,
      },
    ],
    messages: {
      interface:
        '{{file}} is shared by the interfaces and may not import {{target}} from the interface {{folder}}/: the interface hands its facts to the shared module (registration, parameters) or the composition root (api/app.ts) composes them.',
    },
  },
  create(context) {
    const root = context.cwd;
    const name = (path) => relative(root, path).split(sep).join('/');
    const { interfaces, exceptions = [] } = context.options[0];
    const file = name(context.filename);
    const within = (path, folder) => path === folder || path.startsWith(`${folder}/`);
    if (exceptions.includes(file) || interfaces.some((folder) => within(file, folder))) return {};
    return onImports(context, (source, target) => {
      const targetName = name(target);
      const folder = interfaces.find((candidate) => within(targetName, candidate));
      if (folder) context.report({ node: source, messageId: 'interface', data: { file, target: targetName, folder } });
    });
  },
};

export default { meta: { name: 'hosted-notes-local' }, rules: { 'no-import-cycle': noImportCycle, 'shared-imports-no-interface': sharedImportsNoInterface } };
