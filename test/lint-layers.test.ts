// The layer rule (eslint.config.js, docs/architecture.md "Layers"): an upward import fails lint,
// workflows take activities and domain modules by type only, and the real tree obeys it. Only
// no-restricted-imports runs here, without type information, so this needs no database.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../platform/project-root.ts';

const eslint = new ESLint({
  cwd: projectRoot,
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});

/** Each layer and the folders above it, as docs/architecture.md draws them; stated here, not read from the config. */
const above: Record<string, string[]> = {
  db: ['domain', 'activities', 'workflows', 'platform', 'api', 'workers', 'scripts'],
  domain: ['activities', 'workflows', 'platform', 'api', 'workers', 'scripts'],
  activities: ['workflows', 'platform', 'api', 'workers', 'scripts'],
  workflows: ['db', 'platform', 'api', 'workers', 'scripts'],
  platform: ['activities', 'workflows', 'api', 'workers', 'scripts'],
  api: ['workers', 'scripts'],
  workers: ['api', 'scripts'],
};

/** The layer-rule messages for `code` as if it were the file at `filePath` (which need not exist). */
async function restrictions(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  const fatal = result!.messages.filter((m) => m.fatal);
  expect(fatal, 'the probe must parse').toEqual([]);
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('an upward import fails lint', () => {
  it.each([
    ['domain/probe.ts', 'domain/ may not import from api/', "import { buildApp } from '../api/app.ts';\nexport const probe = buildApp;\n"],
    ['domain/notes/probe.ts', 'domain/ may not import from platform/', "import type { Config } from '../../platform/config.ts';\nexport type Probe = Config;\n"],
    ['domain/automation/probe.ts', 'domain/ may not import from workflows/', "import { proposalReview } from '../../workflows/proposal-review.ts';\nexport const probe = proposalReview;\n"],
    ['db/probe.ts', 'db/ may not import from domain/', "export { AppError } from '../domain/errors.ts';\n"],
    ['db/probe.ts', 'db/ may not import from platform/', "import { projectRoot } from '../platform/project-root.ts';\nexport const probe = projectRoot;\n"],
    ['platform/local-stack/probe.ts', 'platform/ may not import from api/', "import { startApi } from '../../api/compose.ts';\nexport const probe = startApi;\n"],
    ['api/routes/dev/probe.ts', 'api/ may not import from workers/', "import { startWorker } from '../../../workers/compose.ts';\nexport const probe = startWorker;\n"],
    ['api/probe.ts', 'api/ may not import from scripts/', "import '../scripts/ops.ts';\n"],
    ['workflows/probe.ts', 'workflows/ may not import from workers/', "import { createPlatformWorker } from '../workers/worker.ts';\nexport const probe = createPlatformWorker;\n"],
    ['domain/probe.ts', 'HTTP belongs to api/', "import type { FastifyRequest } from 'fastify';\nexport type Probe = FastifyRequest;\n"],
  ])('%s: %s', async (filePath, expected, code) => {
    const messages = await restrictions(filePath, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(expected);
  });

  it('for every layer and every folder above it, by value and by type, at any depth', async () => {
    for (const [layer, folders] of Object.entries(above)) {
      for (const folder of folders) {
        for (const [filePath, up] of [
          [`${layer}/probe.ts`, '../'],
          [`${layer}/nested/probe.ts`, '../../'],
        ]) {
          const byValue = await restrictions(filePath!, `import { x } from '${up}${folder}/x.ts';\nexport const probe = x;\n`);
          const byType = await restrictions(filePath!, `import type { X } from '${up}${folder}/x.ts';\nexport type Probe = X;\n`);
          expect([byValue.length, byType.length], `${filePath} importing ${folder}/`).toEqual([1, 1]);
        }
      }
    }
  });
});

describe('workflows', () => {
  it('may not import activities by value', async () => {
    const messages = await restrictions('workflows/probe.ts', "import { createActivities } from '../activities/index.ts';\nexport const probe = createActivities;\n");
    expect(messages).toEqual([expect.stringContaining('`import type` only')]);
  });

  it('import activities by type, as proxyActivities needs', async () => {
    const code = "import { proxyActivities } from '@temporalio/workflow';\nimport type { Activities } from '../activities/index.ts';\nexport const probe = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });\n";
    expect(await restrictions('workflows/probe.ts', code)).toEqual([]);
  });

  it('may not import a domain module by value (it may pull in Node or the database)', async () => {
    const messages = await restrictions('workflows/probe.ts', "import { applyWrite } from '../domain/notes/knowledge.ts';\nexport const probe = applyWrite;\n");
    expect(messages).toEqual([expect.stringContaining('domain modules by type only')]);
    expect(await restrictions('workflows/probe.ts', "import type { Target } from '../domain/notes/knowledge.ts';\nexport type Probe = Target;\n")).toEqual([]);
  });

  it('stay in the deterministic sandbox', async () => {
    expect(await restrictions('workflows/probe.ts', "import { randomUUID } from 'node:crypto';\nexport const probe = randomUUID;\n")).toEqual([expect.stringContaining('no Node builtins')]);
    expect(await restrictions('workflows/probe.ts', "import { sql } from 'slonik';\nexport const probe = sql;\n")).toEqual([expect.stringContaining('No I/O')]);
  });
});

it('allows the intended direction', async () => {
  const cases: Array<[string, string]> = [
    ['api/routes/dev/probe.ts', "import { applyWrite } from '../../../domain/notes/knowledge.ts';\nimport { loadConfig } from '../../../platform/config.ts';\nexport const probe = [applyWrite, loadConfig];\n"],
    ['api/routes/automation/probe.ts', "import { proposalReview } from '../../../workflows/proposal-review.ts';\nexport const probe = proposalReview;\n"],
    ['domain/notes/probe.ts', "import { emptyRow } from '../../db/row-schemas.ts';\nexport const probe = emptyRow;\n"],
    ['platform/local-stack/probe.ts', "import { createVault } from '../../domain/identity/vaults.ts';\nexport const probe = createVault;\n"],
    ['workers/probe.ts', "import { createActivities } from '../activities/index.ts';\nexport const probe = createActivities;\n"],
    ['scripts/probe.ts', "import { startApi } from '../api/compose.ts';\nimport { startWorker } from '../workers/compose.ts';\nexport const probe = [startApi, startWorker];\n"],
  ];
  for (const [filePath, code] of cases) expect(await restrictions(filePath, code), filePath).toEqual([]);
});

it('holds for the real tree', { timeout: 120_000 }, async () => {
  const results = await eslint.lintFiles(['.']);
  const violations = results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(projectRoot.length)}:${m.line} ${m.message}`));
  expect(violations).toEqual([]);
});
