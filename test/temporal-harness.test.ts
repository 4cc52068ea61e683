// The harness's Temporal server is real: a client reaches it, and the platform worker is seen
// polling its task queue through the server's own task-queue description.
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { expect, inject, it } from 'vitest';
import { createPlatformWorker } from '../workers/worker.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

it('reaches the dev server and sees the platform worker polling its task queue', async () => {
  const address = inject('temporalAddress');
  const connection = await Connection.connect({ address });
  const info = await connection.workflowService.getSystemInfo({});
  expect(info.serverVersion).toMatch(/^\d+\.\d+/);

  const taskQueue = `harness-${process.pid}-${Date.now()}`;
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await createPlatformWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps: { db: db.pool }, shutdownGraceTime: '1s' });
  const running = worker.run();
  try {
    let pollers: string[] = [];
    for (let i = 0; i < 100 && pollers.length === 0; i++) {
      const description = await connection.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue, kind: 1 },
        taskQueueType: 1, // workflow task queue
      });
      pollers = (description.pollers ?? []).map((p) => p.identity ?? '');
      if (pollers.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(pollers.length).toBeGreaterThan(0);
    expect(pollers[0]).toContain(String(process.pid));
  } finally {
    worker.shutdown();
    await running;
    await workerConnection.close();
    await connection.close();
  }
});
