// What an operator must see when a workflow fails on purpose: the result rejects with a typed,
// non-retryable ApplicationFailure (the stable code as its type), and describe() says FAILED.
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'vitest';

export async function expectTypedFailure(handle: WorkflowHandle, type: string, details: Record<string, unknown>): Promise<void> {
  const error = await handle.result().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause).toMatchObject({ type, nonRetryable: true, details: [details] });
  expect((await handle.describe()).status.name).toBe('FAILED');
}
