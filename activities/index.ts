// Activities registered on the platform task queue: thin adapters from workflows to the domain
// core. createActivities closes over the dependencies so there is no module-level state.
import type { DatabasePool } from 'slonik';

export type ActivityDeps = { db: DatabasePool };

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
