// The bounds of an upload's metadata and the one judgement between what a product declares and
// what its container states. The declared duration is bounded but is not an attestation of the
// decoded audio (spec, Limits rule 3): we do not decode. Where the container states a duration we
// record it beside the declared one and refuse only a gross contradiction.
import { MEDIA_LIMITS } from '@hosted-notes/runtime-sdk';
import { AppError } from '../errors.ts';
import type { AudioInspection } from './audio-inspection.ts';

const REFERENCE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const DURATION = /^(?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,3})?$/;
const MAX_DURATION_MS = MEDIA_LIMITS.maxDurationSeconds * 1000;

/**
 * Container durations come from frame counts and granule positions, which overshoot the recorded
 * time by a frame or an encoder's padding; a 120 s recording may state 120.02 s. One second of
 * slack keeps honest recordings at the limit acceptable without opening a real gap.
 */
export const CONTAINER_DURATION_SLACK_MS = 1_000;
/**
 * A gross contradiction: declared and stated durations differ by more than 2 s AND by more than a
 * quarter of the longer one. Products time recordings with their own clocks (start/stop latency,
 * rounding to whole seconds), so small and proportionally small differences are expected.
 */
export const MISMATCH_ABSOLUTE_MS = 2_000;
export const MISMATCH_RELATIVE = 0.25;

/** X-Media-Reference: the product's opaque reference, 1–200 visible ASCII (inner spaces allowed). */
export function parseReference(raw: string | undefined): string {
  if (raw === undefined || raw.length > MEDIA_LIMITS.referenceChars || !REFERENCE.test(raw)) {
    throw new AppError('media_reference_invalid', raw === undefined ? 'Send X-Media-Reference with the product\'s reference for this recording.' : undefined);
  }
  return raw;
}

/** X-Media-Duration-Seconds as whole milliseconds: positive, at most 3 decimals, at most 120 s. */
export function parseDeclaredDuration(raw: string | undefined): number {
  const value = raw?.trim();
  if (value === undefined || !DURATION.test(value)) {
    throw new AppError('media_duration_invalid', value === undefined ? 'Send X-Media-Duration-Seconds, the recording\'s duration in seconds (e.g. 42.5).' : undefined);
  }
  const [whole, fraction = ''] = value.split('.');
  const ms = Number(whole) * 1000 + Number(fraction.padEnd(3, '0'));
  if (ms <= 0) throw new AppError('media_duration_invalid', 'The declared duration must be more than 0 seconds.');
  if (ms > MAX_DURATION_MS) {
    throw new AppError('media_duration_exceeded', `Declared ${value} s; at most ${MEDIA_LIMITS.maxDurationSeconds} s is accepted.`, {
      extensions: { declaredDurationSeconds: ms / 1000, maxDurationSeconds: MEDIA_LIMITS.maxDurationSeconds },
    });
  }
  return ms;
}

/** Refuses a container that states more than 120 s, or a duration grossly unlike the declared one. */
export function checkDuration(declaredMs: number, inspection: Pick<AudioInspection, 'containerDurationSeconds' | 'durationSource'>): void {
  if (inspection.containerDurationSeconds === null) return;
  const statedMs = Math.round(inspection.containerDurationSeconds * 1000);
  const extensions = { declaredDurationSeconds: declaredMs / 1000, containerDurationSeconds: statedMs / 1000, durationSource: inspection.durationSource };
  if (statedMs > MAX_DURATION_MS + CONTAINER_DURATION_SLACK_MS) {
    throw new AppError('media_duration_exceeded', `The container states ${statedMs / 1000} s; at most ${MEDIA_LIMITS.maxDurationSeconds} s is accepted.`, {
      extensions: { ...extensions, maxDurationSeconds: MEDIA_LIMITS.maxDurationSeconds },
    });
  }
  const difference = Math.abs(statedMs - declaredMs);
  if (difference > MISMATCH_ABSOLUTE_MS && difference > MISMATCH_RELATIVE * Math.max(statedMs, declaredMs)) {
    throw new AppError('media_duration_mismatch', `Declared ${declaredMs / 1000} s, but the container states ${statedMs / 1000} s.`, { extensions });
  }
}
