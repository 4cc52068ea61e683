// The layer rule (eslint.config.js, docs/architecture.md "Layers"): an upward import fails lint,
// workflows take activities and domain modules by type only, and the real tree obeys it. So do the
// import-graph rules (eslint-rules.js, issue 49): no import cycle, type imports included, and no
// module the interfaces share imports an interface. Only these rules run here, without type
// information, so this needs no database.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../platform/project-root.ts';

const eslint = new ESLint({
  cwd: projectRoot,
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports' || ruleId.startsWith('local/'),
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

/** The import-graph rules' messages for `code` as if it were the file at `filePath` (an existing one: the graph is read from disk). */
async function graphFindings(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  expect(result!.messages.filter((m) => m.fatal), 'the probe must parse').toEqual([]);
  return result!.messages.filter((m) => m.ruleId?.startsWith('local/')).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the import graph', () => {
  it('has no cycle: an import that closes one fails lint, by value, by type and as a re-export', async () => {
    for (const code of [
      "import { buildApp } from './app.ts';\nexport const probe = buildApp;\n",
      "import type { AppDeps } from './app.ts';\nexport type Probe = AppDeps;\n",
      "export { buildApp } from './app.ts';\n",
    ]) {
      expect(await graphFindings('api/edge.ts', code), code).toEqual([expect.stringMatching(/^local\/no-import-cycle: Import cycle: api\/edge\.ts → api\/app\.ts → api\/edge\.ts\b/)]);
    }
    // The two domain pairs issue 49 found, were they tied again.
    expect(await graphFindings('domain/automation/event-contract.ts', "import type { IngestResult } from './events.ts';\nexport type Probe = IngestResult;\n")).toEqual([
      expect.stringContaining('Import cycle: domain/automation/event-contract.ts → domain/automation/events.ts → domain/automation/event-contract.ts'),
    ]);
    expect(await graphFindings('domain/media/upload-input.ts', "import type { UploadClaims } from './upload-claims.ts';\nexport type Probe = UploadClaims;\n")).toEqual([
      expect.stringContaining('Import cycle: domain/media/upload-input.ts → domain/media/upload-claims.ts → domain/media/upload-input.ts'),
    ]);
    // A longer way round is named whole (this one also breaks the layers, which say so on their own).
    const long = await graphFindings('domain/automation/event-contract.ts', "import type { AppDeps } from '../../api/app.ts';\nexport type Probe = AppDeps;\n");
    expect(long).toEqual([expect.stringMatching(/^local\/no-import-cycle: Import cycle: domain\/automation\/event-contract\.ts → api\/app\.ts → .+ → domain\/automation\/event-contract\.ts\./)]);
  });

  it('lets an import that closes no cycle pass', async () => {
    expect(await graphFindings('api/app.ts', "import { registerEdgeRules } from './edge.ts';\nexport const probe = registerEdgeRules;\n")).toEqual([]);
    expect(await graphFindings('domain/automation/events.ts', "import type { AutomationEvent } from './event-contract.ts';\nexport type Probe = AutomationEvent;\n")).toEqual([]);
  });

  it('keeps the shared modules free of the interfaces, by value and by type', async () => {
    const cases: Array<[string, string]> = [
      ['api/edge.ts', "import { runtimeMountHeaders } from './routes/product/kit.ts';\nexport const probe = runtimeMountHeaders;\n"],
      ['api/openapi.ts', "import type { Revision } from './routes/mcp/protocol.ts';\nexport type Probe = Revision;\n"],
      ['api/problems.ts', "import { devApi } from './routes/dev/index.ts';\nexport const probe = devApi;\n"],
      ['api/routes/shared/headers.ts', "import type { ConsoleSession } from '../console/session.ts';\nexport type Probe = ConsoleSession;\n"],
      ['api/routes/shared/probe.ts', "import { automationGateway } from '../automation/index.ts';\nexport const probe = automationGateway;\n"],
      ['api/auth.ts', "export { mcpGateway } from './routes/mcp/index.ts';\n"],
    ];
    for (const [filePath, code] of cases) {
      const findings = (await graphFindings(filePath, code)).filter((m) => m.startsWith('local/shared-imports-no-interface'));
      expect(findings, filePath).toEqual([expect.stringContaining(`${filePath} is shared by the interfaces and may not import`)]);
    }
  });

  it('lets the interfaces import the shared modules, and the composition roots compose the interfaces', async () => {
    const cases: Array<[string, string]> = [
      ['api/routes/product/probe.ts', "import { headerValue } from '../shared/headers.ts';\nimport { answerNoRoute } from '../../problems.ts';\nexport const probe = [headerValue, answerNoRoute];\n"],
      ['api/routes/mcp/probe.ts', "import { runtimeCaller } from '../product/kit.ts';\nexport const probe = runtimeCaller;\n"],
      ['api/app.ts', "import { devApi } from './routes/dev/index.ts';\nexport const probe = devApi;\n"],
      ['api/compose.ts', "import type { RuntimeCaller } from './routes/product/kit.ts';\nexport type Probe = RuntimeCaller;\n"],
    ];
    for (const [filePath, code] of cases) expect(await graphFindings(filePath, code), filePath).toEqual([]);
  });
});

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
