// The local Temporal dev server as the platform starts it (npm start, the test harness, the bench):
// its search attributes are registered at start and usable, and reading them does not send a
// cluster-metadata read to the server's one SQLite connection for every start (decision 115). The
// server's own Prometheus series count its persistence requests by operation.
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

/** The counts once the reporter has flushed `operation` to at least `atLeast` (it reports on an interval). */
async function persistenceRequestsOnce(operation: string, atLeast: number): Promise<Map<string, number>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const counts = await persistenceRequests();
    if ((counts.get(operation) ?? 0) >= atLeast || Date.now() > deadline) return counts;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the local Temporal dev server', () => {
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
    const before = await persistenceRequestsOnce('CreateWorkflowExecution', 1);
    // Five reviews started with the attributes a review is started with; no worker runs them: the
    // start validates and records the attributes, which is what read cluster metadata each time.
    const starts = 5;
    for (let i = 1; i <= starts; i++) await startReview(i);
    // Visibility is written behind the start: the attributes are there, and filter, once it has been.
    const query = `WorkspaceId = "${workspaceId}" AND ProposalState = "pending_review"`;
    const deadline = Date.now() + 15_000;
    let found = 0;
    while ((found = (await client.workflow.count(query)).count) < starts + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(found).toBe(starts + 1);
    const after = await persistenceRequestsOnce('CreateWorkflowExecution', (before.get('CreateWorkflowExecution') ?? 0) + starts);
    const delta = (operation: string) => (after.get(operation) ?? 0) - (before.get(operation) ?? 0);
    // The series are read: each start created an execution (the server's own start-up may add one).
    expect(delta('CreateWorkflowExecution')).toBeGreaterThanOrEqual(starts);
    // With the CLI's default (refresh on every read) these were 3 or more per start; a periodic
    // refresh of the cache may fall inside the window once.
    expect(delta('GetCurrentClusterMetadata')).toBeLessThanOrEqual(1);
    for (const handle of Array.from({ length: starts + 1 }, (_, i) => client.workflow.getHandle(`dev-server-${workspaceId}-${i}`))) await handle.terminate('test over');
  });
});
