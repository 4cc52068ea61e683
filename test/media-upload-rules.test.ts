// The bounds of an upload's metadata and the judgement between declared and stated durations
// (domain/media/upload-rules.ts), at their edges.
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.ts';
import { checkDuration, parseDeclaredDuration, parseReference } from '../domain/media/upload-rules.ts';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof AppError ? error.code : String(error);
  }
};

describe('X-Media-Duration-Seconds', () => {
  it.each([
    ['120', 120_000],
    ['120.000', 120_000],
    ['0.001', 1],
    ['42.5', 42_500],
    ['3', 3_000],
    [' 7.25 ', 7_250],
  ])('%j is %i ms', (raw, ms) => expect(parseDeclaredDuration(raw)).toBe(ms));

  it.each([
    ['120.001', 'media_duration_exceeded'],
    ['999999', 'media_duration_exceeded'],
    ['0', 'media_duration_invalid'],
    ['0.0004', 'media_duration_invalid'],
    ['-1', 'media_duration_invalid'],
    ['1,5', 'media_duration_invalid'],
    ['1.', 'media_duration_invalid'],
    ['.5', 'media_duration_invalid'],
    ['01', 'media_duration_invalid'],
    ['Infinity', 'media_duration_invalid'],
    ['', 'media_duration_invalid'],
    [undefined, 'media_duration_invalid'],
  ])('%j → %s', (raw, code) => expect(codeOf(() => parseDeclaredDuration(raw))).toBe(code));
});

describe('X-Media-Reference', () => {
  it('keeps 1–200 visible ASCII characters with inner spaces as sent', () => {
    expect(parseReference('a')).toBe('a');
    expect(parseReference('lesson 42 / take 3')).toBe('lesson 42 / take 3');
    expect(parseReference('x'.repeat(200))).toBe('x'.repeat(200));
  });
  it.each([undefined, '', ' ', 'x'.repeat(201), 'trailing ', '\u0000', 'tab\there', 'ünï'])('refuses %j', (raw) =>
    expect(codeOf(() => parseReference(raw))).toBe('media_reference_invalid'),
  );
});

describe('declared against stated duration', () => {
  const stated = (seconds: number | null) => ({ containerDurationSeconds: seconds, durationSource: seconds === null ? ('none' as const) : ('container-header' as const) });
  it.each([
    [3_000, 3.0, 'accepted'],
    [4_500, 3.0, 'accepted'], // 1.5 s apart: within the 2 s every product clock may be off
    [5_000, 3.0, 'accepted'], // exactly 2 s apart
    [5_100, 3.0, 'media_duration_mismatch'], // 2.1 s and 41 % apart
    [10_000, 3.0, 'media_duration_mismatch'],
    [100_000, 90.0, 'accepted'], // 10 s but only 10 % apart
    [120_000, 80.0, 'media_duration_mismatch'], // 40 s and 33 % apart
    [60_000, null, 'accepted'], // nothing stated: the declared bound is all there is
    [119_000, 121.0, 'accepted'], // within the 1 s of padding slack at the limit
    [119_000, 121.01, 'media_duration_exceeded'],
    [3_000, 130.0, 'media_duration_exceeded'],
  ])('declared %i ms, container %s s → %s', (declared, container, outcome) => expect(codeOf(() => checkDuration(declared, stated(container)))).toBe(outcome));
});
