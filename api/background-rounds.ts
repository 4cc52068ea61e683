// A process's background work in rounds (the workflow relay, the substring indexer): a round at once
// while the last one said more is waiting, else one every `intervalMs`; a failed round (Postgres or
// Temporal away, most likely) is reported to `failed` with whether it is the first of a run of
// failures, so a caller logs once per outage, not once a round. `stop` ends the rounds and waits
// for the one under way.
export type Rounds = { stop(): Promise<void> };

export function runInRounds(round: () => Promise<{ more: boolean }>, options: { intervalMs: number; failed: (error: unknown, firstOfRun: boolean) => void }): Rounds {
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    let failing = false;
    while (!stopped) {
      let more = false;
      try {
        ({ more } = await round());
        failing = false;
      } catch (error) {
        options.failed(error, !failing);
        failing = true;
      }
      if (!more && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.intervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
