// The pool's timestamptz parser rewrites Postgres's UTC text form without a Date round trip; it must
// print exactly what the Date path printed (milliseconds truncated), and fall back to it otherwise.
import { describe, expect, it } from 'vitest';
import { timestampToIso } from '../db/pool.ts';

const viaDate = (value: string) => new Date(Date.parse(value)).toISOString();

describe('timestampToIso', () => {
  it('agrees with the Date path on every fraction length and across the calendar', () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const pad = (n: number, width: number) => String(n).padStart(width, '0');
    for (let i = 0; i < 5_000; i++) {
      const millis = Date.UTC(1970 + next(130), next(12), 1 + next(28), next(24), next(60), next(60));
      const base = new Date(millis).toISOString().slice(0, 19).replace('T', ' ');
      const digits = next(7); // 0: no fraction, 1–6 digits as Postgres trims them
      const fraction = digits === 0 ? '' : `.${pad(next(10 ** digits), digits)}`;
      const value = `${base}${fraction}+00`;
      expect(timestampToIso(value), value).toBe(viaDate(value));
    }
  });

  it('takes any other offset through Date', () => {
    for (const value of ['2026-11-25 01:42:18.123456+01', '2026-11-25 01:42:18-05:30', '2026-11-25 01:42:18.5+00:00']) expect(timestampToIso(value)).toBe(viaDate(value));
  });
});
