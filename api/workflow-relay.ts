// The relay of durable workflow starts (docs/decisions.md, "durable starts"): every API process runs
// one. It claims the start intents still pending (domain/workflow-intents.ts: FOR UPDATE SKIP
// LOCKED with a lease, so relays in many processes never take one intent at once), makes each start
// (api/routes/shared/workflow-starts.ts: conflict policies make a repeat a no-op), marks what was
// made and backs off what Temporal refused. Whatever a request acknowledged is started once Temporal
// answers, with no client retry. While Temporal is down every claim fails fast and backs off
// (1 s doubling to 60 s, jittered), and a warning is logged once per outage, not per intent; the
// first start Temporal takes again makes every backed-off intent due at once, so an outage's
// backlog drains in a round or two.
import type { FastifyBaseLogger } from 'fastify';
import { runInRounds } from './background-rounds.ts';
import type { Rounds } from './background-rounds.ts';
import { backoffMs, claimDueIntents, markAttemptFailed, markStarted, pruneStartedIntents, reviveBackedOffIntents } from '../domain/workflow-intents.ts';
import { reasonOf, startIntent } from './routes/shared/workflow-starts.ts';
import type { WorkflowStarter } from './routes/shared/workflow-starts.ts';

export type RelayOptions = {
  /** How often an idle relay looks for due intents. */
  intervalMs?: number;
  /** Intents claimed per round. */
  batch?: number;
  /** How long a claim keeps an intent from other relays (a relay that died leaves it this long). */
  leaseMs?: number;
  /** The deadline of one start. */
  startTimeoutMs?: number;
};

export type Relay = {
  /** One round now: claim, start, mark; resolves with how many were started and how many failed. */
  runOnce(): Promise<{ started: number; failed: number }>;
};

const PRUNE_EVERY_MS = 60_000;

export function createWorkflowRelay(starter: WorkflowStarter, log: FastifyBaseLogger, options: RelayOptions = {}): Relay {
  const batch = options.batch ?? 50;
  const leaseMs = options.leaseMs ?? 30_000;
  const startTimeoutMs = options.startTimeoutMs ?? 5_000;
  let failing = false;
  const temporalAnswers = () =>
    starter.temporal.connection
      .withDeadline(Date.now() + 2_000, () => starter.temporal.connection.workflowService.getSystemInfo({}))
      .then(
        () => true,
        () => false,
      );

  async function runOnce(): Promise<{ started: number; failed: number }> {
    const claimed = await claimDueIntents(starter.db, batch, leaseMs);
    if (claimed.length === 0) {
      // Everything is waiting out a backoff: ask Temporal directly whether it is back, so the
      // backlog does not wait for the next intent's backoff to end.
      if (failing && (await temporalAnswers())) {
        failing = false;
        log.info({ revived: await reviveBackedOffIntents(starter.db) }, 'workflow relay: Temporal answers again');
      }
      return { started: 0, failed: 0 };
    }
    const deadline = Date.now() + startTimeoutMs;
    const outcomes = await Promise.allSettled(claimed.map((intent) => starter.temporal.connection.withDeadline(deadline, () => startIntent(starter, intent))));
    const started: string[] = [];
    let firstFailure: unknown = null;
    for (const [i, outcome] of outcomes.entries()) {
      const intent = claimed[i]!;
      if (outcome.status === 'fulfilled') started.push(intent.workflowId);
      else {
        firstFailure ??= outcome.reason;
        await markAttemptFailed(starter.db, intent.workflowId, reasonOf(outcome.reason), backoffMs(intent.attempts));
      }
    }
    await markStarted(starter.db, started);
    if (firstFailure && !failing) log.warn({ reason: reasonOf(firstFailure), pending: claimed.length - started.length }, 'workflow relay: Temporal is not taking starts; retrying with backoff');
    if (started.length > 0 && failing) {
      const revived = await reviveBackedOffIntents(starter.db);
      log.info({ started: started.length, revived }, 'workflow relay: Temporal takes starts again');
    }
    failing = firstFailure !== null && started.length === 0;
    if (started.length > 0) log.info({ started: started.length }, 'workflow relay: started pending workflows');
    return { started: started.length, failed: claimed.length - started.length };
  }
  return { runOnce };
}

/** The relay of this process, running rounds until stopped (when the app closes). */
export function startWorkflowRelay(starter: WorkflowStarter, log: FastifyBaseLogger, options: RelayOptions = {}): Rounds {
  const relay = createWorkflowRelay(starter, log, options);
  const batch = options.batch ?? 50;
  let lastPrune = 0;
  return runInRounds(
    async () => {
      const { started, failed } = await relay.runOnce();
      if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        await pruneStartedIntents(starter.db);
      }
      // A full batch means more is due: go again at once.
      return { more: started + failed >= batch };
    },
    {
      intervalMs: options.intervalMs ?? 1_000,
      // Postgres unreachable, most likely (the pool logs the outage itself): one line per run of failures.
      failed: (error, firstOfRun) => {
        if (firstOfRun) log.warn({ reason: reasonOf(error) }, 'workflow relay round failed; retrying every round');
      },
    },
  );
}
