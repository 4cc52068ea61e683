// The local Temporal dev server as the platform starts it (npm start, the test harness, the bench):
// its search attributes are registered at start and usable, and reading them does not send a
// cluster-metadata read to the server's one SQLite connection for every start (decision 115); a
// task queue's tasks are written to its root partition alone, where every poll reaches them
// (decision 116). The server's own Prometheus series count its persistence requests by operation
// and its tasks written by partition.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProposalState, WorkspaceId } from '../domain/automation/search-attributes.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import type { DevServer } from '../platform/local-stack/temporal-dev-server.ts';

let server: DevServer;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  server = await startTemporalDevServer({ cliPath: resolveTemporalCli(), headless: true });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
});

afterAll(async () => {
  await connection?.close();
  await server?.stop();
});

/** persistence_requests by operation, summed over the series' other labels. */
async function persistenceRequests(): Promise<Map<string, number>> {
  const text = await (await fetch(server.metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^persistence_requests\{([^}]*)\} (\S+)$/gm)) {
    const operation = /operation="([^"]+)"/.exec(match[1]!)?.[1];
    if (operation) counts.set(operation, (counts.get(operation) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** A matching series' values by partition, for one task queue (metric labels spell `-` as `_`: name it without). */
async function byPartition(metric: string, taskQueue: string): Promise<Map<string, number>> {
  const text = await (await fetch(server.metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    if (!match[1]!.includes(`taskqueue="${taskQueue}"`)) continue;
    const partition = /partition="([^"]+)"/.exec(match[1]!)?.[1];
    if (partition) counts.set(partition, (counts.get(partition) ?? 0) + Number(match[2]));
  }
  return counts;
}

describe('the local Temporal dev server', () => {
  it("writes a task queue's tasks to its root partition alone (no wait for a forward to the root)", async () => {
    // No worker polls this queue: each start's first workflow task is written to the backlog of the
    // partition it is put on. Under the server's default (4 write partitions, picked at random for
    // each task) eight of them all land on partition 0 once in 65,536 runs.
    const taskQueue = `rootonly${randomUUID().replaceAll('-', '')}`;
    const tasks = 8;
    for (let i = 0; i < tasks; i++) await client.workflow.start('proposalReview', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [] });
    let written = new Map<string, number>();
    const total = () => [...written.values()].reduce((a, b) => a + b, 0);
    await expect.poll(async () => ((written = await byPartition('task_write_latency_count', taskQueue)), total()), { timeout: 15_000 }).toBe(tasks);
    expect([...written.keys()]).toEqual(['0']);
    for (let i = 0; i < tasks; i++) await client.workflow.getHandle(`${taskQueue}-${i}`).terminate('test over');
  });

  it('serves its search attributes without re-reading cluster metadata for each start', async () => {
    const workspaceId = randomUUID();
    const startReview = (i: number) =>
      client.workflow.start('proposalReview', {
        taskQueue: `nobody-${workspaceId}`,
        workflowId: `dev-server-${workspaceId}-${i}`,
        args: [],
        typedSearchAttributes: [
          { key: WorkspaceId, value: workspaceId },
          { key: ProposalState, value: 'pending_review' },
        ],
      });
    // A first start, counted before the window opens: the server's start-up reads are reported by then.
    await startReview(0);
    // The server reports its series on an interval: wait until they show the start.
    let before = new Map<string, number>();
    await expect.poll(async () => (before = await persistenceRequests()).get('CreateWorkflowExecution') ?? 0, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    // Five reviews started with the attributes a review is started with; no worker runs them: the
    // start validates and records the attributes, which is what read cluster metadata each time.
    const starts = 5;
    for (let i = 1; i <= starts; i++) await startReview(i);
    // Visibility is written behind the start: the attributes are there, and filter, once it has been.
    const query = `WorkspaceId = "${workspaceId}" AND ProposalState = "pending_review"`;
    await expect.poll(async () => (await client.workflow.count(query)).count, { timeout: 15_000 }).toBe(starts + 1);
    // The series are read once they show the five starts (the window's reads are reported with them).
    let after = new Map<string, number>();
    const startsReported = (before.get('CreateWorkflowExecution') ?? 0) + starts;
    await expect.poll(async () => (after = await persistenceRequests()).get('CreateWorkflowExecution') ?? 0, { timeout: 15_000 }).toBeGreaterThanOrEqual(startsReported);
    const delta = (operation: string) => (after.get(operation) ?? 0) - (before.get(operation) ?? 0);
    // With the CLI's default (refresh on every read) these were 3 or more per start; a periodic
    // refresh of the cache may fall inside the window once.
    expect(delta('GetCurrentClusterMetadata')).toBeLessThanOrEqual(1);
    for (const handle of Array.from({ length: starts + 1 }, (_, i) => client.workflow.getHandle(`dev-server-${workspaceId}-${i}`))) await handle.terminate('test over');
  });
});
