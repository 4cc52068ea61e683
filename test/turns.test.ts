// Turns per key (domain/turns.ts), the mechanism under the notes' group commit and the uploads'
// group claims: one run per key at a time, what waits shares the next run, keys run apart, and a
// run that throws fails only the items it held, while the key's later items still run.
import { describe, expect, it } from 'vitest';
import { Turns } from '../domain/turns.ts';

type Item = { n: number; bytes: number; resolve: (runNo: number) => void; reject: (error: unknown) => void };

function recorder(fail: (batch: Item[]) => boolean = () => false) {
  const runs: Array<{ key: string; items: number[] }> = [];
  let gate: Promise<void> = Promise.resolve();
  const turns = new Turns<Item>({ maxItems: 100, maxBytes: 1_000 }, async (key, batch) => {
    runs.push({ key, items: batch.map((w) => w.n) });
    await gate;
    if (fail(batch)) throw new Error('run failed');
    batch.forEach((w) => w.resolve(runs.length));
  });
  const add = (key: string, n: number) => new Promise<number>((resolve, reject) => turns.add(key, { n, bytes: 1, resolve, reject }));
  return {
    runs,
    add,
    hold: (p: Promise<void>) => {
      gate = p;
    },
  };
}

describe('turns per key', () => {
  it('runs the first item at once and every item that arrived meanwhile in the next run', async () => {
    const { runs, add } = recorder();
    await Promise.all([add('a', 0), add('a', 1), add('a', 2), add('a', 3)]);
    expect(runs).toEqual([{ key: 'a', items: [0] }, { key: 'a', items: [1, 2, 3] }]);
  });

  it('runs keys apart: one key waiting does not hold another', async () => {
    const { runs, add, hold } = recorder();
    let release!: () => void;
    hold(new Promise<void>((r) => (release = r)));
    const a = add('a', 0);
    const b = add('b', 1);
    await new Promise((r) => setTimeout(r, 10));
    expect(runs.map((r) => r.key).sort()).toEqual(['a', 'b']);
    release();
    await Promise.all([a, b]);
  });

  it('a run that throws rejects the items it held; the key goes on with the next', async () => {
    const { runs, add } = recorder((batch) => batch.some((w) => w.n === 1));
    const outcomes = await Promise.allSettled([add('a', 0), add('a', 1), add('a', 2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(await add('a', 3)).toBe(runs.length);
    expect(runs.at(-1)).toEqual({ key: 'a', items: [3] });
  });
});
