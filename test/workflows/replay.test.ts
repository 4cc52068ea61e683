// Runs already in flight must replay on the code that picks them up: a review waits up to 30 days
// for its decision, so a deployed worker meets histories its predecessor wrote. Each history in
// test/workflows/histories/ (recorded by record.ts from every platform workflow's paths, open
// ones included) is replayed on the current workflow code; a change that would throw a
// nondeterminism error on a run in flight fails here instead of in production. Make such a change
// with patched() (or under a new workflow type), not by re-recording, once anything is deployed.
import { readdirSync, readFileSync } from 'node:fs';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { workflowsPath } from '../../workers/worker.ts';
import * as platformWorkflows from '../../workflows/index.ts';

const folder = new URL('./histories/', import.meta.url);
const recorded = readdirSync(folder).filter((name) => name.endsWith('.json')).sort();

let workflowBundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: Runtime.instance().logger });
});

/** The workflow type a history ran: its first event, WorkflowExecutionStarted, names it. */
const typeOf = (name: string) =>
  (JSON.parse(readFileSync(new URL(name, folder), 'utf8')) as { events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] }).events[0]
    ?.workflowExecutionStartedEventAttributes?.workflowType?.name;

describe('recorded workflow histories', () => {
  it('cover every workflow the platform worker registers (workflows/index.ts)', () => {
    const registered = Object.keys(platformWorkflows).sort();
    expect(registered.length).toBeGreaterThan(0);
    expect([...new Set(recorded.map(typeOf))].sort()).toEqual(registered);
  });

  it.each(recorded)('%s replays on the current workflow code', async (name) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(new URL(name, folder), 'utf8')) as object);
    await Worker.runReplayHistory({ workflowBundle }, history, name);
  });
});
