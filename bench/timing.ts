// Sequential timing of one request at a time, shared by the suites that drive the app with
// app.inject (media, console): a few warm-up sends, then `samples` timed ones, each of which must
// answer one of the expected statuses.

export type Stats = { n: number; p50: number; p95: number; p99: number };

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { n: samples.length, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

export async function timed(send: () => Promise<{ statusCode: number; body: string }>, samples: number, ok: number[], warmUp = 3): Promise<Stats> {
  for (let i = 0; i < warmUp; i++) await send();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const res = await send();
    times.push(performance.now() - started);
    if (!ok.includes(res.statusCode)) throw new Error(`HTTP ${res.statusCode}: ${res.body.slice(0, 300)}`);
  }
  return stats(times);
}
