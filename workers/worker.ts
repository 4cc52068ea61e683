// The platform worker: one task queue, the workflows in workflows/ and the activities in
// activities/. Kept small; start-up and shutdown live in workers/main.ts.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { createActivities } from '../activities/index.ts';
import type { ActivityDeps } from '../activities/index.ts';
import type { Tracing } from '../platform/tracing.ts';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export type PlatformWorkerOptions = {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** A prebuilt bundle (tests build it once per run); otherwise workflows are bundled now. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Trace workflows and activities into this process's span processor (platform/tracing.ts), joined
   * to the trace of whoever started or signalled them. Needs the workflows bundled with the plugin's
   * workflow interceptors, so it cannot be combined with a prebuilt `workflowBundle`.
   */
  tracing?: Tracing | null;
};

export async function createPlatformWorker(options: PlatformWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    activities: createActivities(options.deps),
    // In-flight activities get this long to finish before they are cancelled on shutdown.
    shutdownGraceTime: options.shutdownGraceTime ?? '10s',
    ...(options.tracing ? { plugins: [new OpenTelemetryPlugin({ resource: options.tracing.resource, spanProcessor: options.tracing.spanProcessor })] } : {}),
  });
}

export { NativeConnection };
