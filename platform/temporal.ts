// Temporal connection settings shared by the API (client) and the worker.
import { Connection } from '@temporalio/client';

export type TemporalSettings = { address: string; namespace: string; taskQueue: string };

/**
 * The API connects lazily: it starts and serves reads while Temporal is down, and /readyz
 * reports the outage instead of the process crashing.
 */
export function lazyTemporalConnection(address: string): Connection {
  return Connection.lazy({ address });
}
