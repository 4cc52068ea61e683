// Workflow tests on Temporal's time-skipping test server with stubbed activities, as the Temporal
// samples do: no Postgres, no dev server, and timers (backoff, expiry) pass in skipped time.
//
//   const temporal = useTimeSkipping();            // at file level: one server + one bundle per file
//
//   it('retries', async () => {
//     const result = await temporal.run({ deliverWebhook: async () => 'delivered' }, ({ client, taskQueue }) =>
//       client.workflow.execute(webhookDelivery, { taskQueue, workflowId: randomUUID(), args: [input] }),
//     );
//   });
//
// run(activities, fn) starts a worker on a task queue of its own (so tests never share one) with
// the given stub activities — typed against the real ones, only those the test needs — and stops
// it once fn settles. Awaiting a workflow's result inside fn skips time until the workflow's next
// event; `temporal.env.sleep(ms)` skips time by hand. Tests in one file run one after another
// (vitest's default), which the shared clock of one server requires.
// The server binary comes from the `workflows` project's global setup (test/support/
// time-skipping-setup.ts); when used outside that project it is resolved here instead.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import * as searchAttributeKeys from '../../workflows/search-attributes.ts';
import { resolveTemporalTestServer } from '../../platform/local-stack/temporal-test-server.ts';
import { workflowsPath } from '../../workers/worker.ts';

export type StubActivities = Partial<Activities>;

export type TimeSkippingRun = { client: Client; taskQueue: string; env: TestWorkflowEnvironment };

export type TimeSkipping = {
  /** The environment: `env.sleep(ms)` skips time, `env.currentTimeMs()` reads the skipped clock. */
  readonly env: TestWorkflowEnvironment;
  readonly client: Client;
  /** Runs fn while a worker with these stub activities polls a fresh task queue. */
  run<T>(activities: StubActivities, fn: (run: TimeSkippingRun) => Promise<T>): Promise<T>;
};

export function useTimeSkipping(): TimeSkipping {
  let env: TestWorkflowEnvironment | undefined;
  let bundle: WorkflowBundleWithSourceMap | undefined;

  beforeAll(async () => {
    const path = inject('temporalTestServerPath') ?? resolveTemporalTestServer(process.env, (msg) => console.log(msg));
    // The production workflows, bundled once per file (what workers/worker.ts does per worker).
    [env, bundle] = await Promise.all([
      TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } }),
      bundleWorkflowCode({ workflowsPath, logger: Runtime.instance().logger }),
    ]);
    const types = Object.fromEntries(Object.values(searchAttributeKeys).map((key) => [key.name, temporalProto.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${key.type}`]]));
    await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes: types });
  });
  afterAll(async () => {
    await env?.teardown();
  });

  const ready = (): TestWorkflowEnvironment => {
    if (!env) throw new Error('useTimeSkipping(): the environment is created in beforeAll; use it inside tests.');
    return env;
  };

  return {
    get env() {
      return ready();
    },
    get client() {
      return ready().client;
    },
    async run(activities, fn) {
      const current = ready();
      const taskQueue = `time-skipping-${randomUUID()}`;
      const worker = await Worker.create({ connection: current.nativeConnection, taskQueue, workflowBundle: bundle!, activities });
      return worker.runUntil(fn({ client: current.client, taskQueue, env: current }));
    },
  };
}
