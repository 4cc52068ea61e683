// Lint rules that catch what the type checker does not: unawaited promises, and anything in
// workflows/ that would break Temporal's deterministic sandbox (Node builtins, I/O, clients).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**'] },
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
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflows are deterministic: no Node builtins.' },
            { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'Workflows import only @temporalio/workflow (and types).', allowTypeImports: true },
            { group: ['../activities', '../activities/*', '../../activities/*'], message: 'Import activities with `import type` only (proxyActivities).', allowTypeImports: true },
            { group: ['slonik', 'pg', 'fastify', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process'], message: 'No I/O inside workflows.' },
          ],
        },
      ],
    },
  },
);
