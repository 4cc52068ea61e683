// What an upload is, from its bytes only: the committed fixtures (scripts/make-audio-fixtures.sh)
// and bytes derived from them. Accepted containers report their codec and the duration their
// container states; other formats, video and cut or damaged files are refused with their own code.
// No Postgres, no Temporal, no ffmpeg (CI has none: the expected durations below were measured
// once with ffprobe 5.1 and are hard-coded).
import { readFileSync } from 'node:fs';
import { parseBuffer } from 'music-metadata';
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.ts';
import { inspectAudio } from '../domain/media/audio-inspection.ts';
import type { AudioInspection } from '../domain/media/audio-inspection.ts';

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`./fixtures/media/${name}`, import.meta.url)));

/** The AppError inspectAudio throws for these bytes (fails the test if it accepts them). */
async function refusal(bytes: Uint8Array): Promise<AppError> {
  const error: unknown = await inspectAudio(bytes).then(
    (accepted) => new Error(`accepted as ${JSON.stringify(accepted)}`),
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof AppError)) throw error;
  return error;
}

// ffprobe's numbers: `format=duration`, or for files without one (live WebM) the end of the last
// packet (`packet=pts_time,duration_time`). ffprobe does not subtract Opus's pre-skip from an Ogg
// granule position (3.0065 s = 144312 / 48000) where we do (3.000 s); both are within 0.1 s.
const accepted: Array<{ name: string; expected: Omit<AudioInspection, 'containerDurationSeconds'>; ffprobeSeconds: number }> = [
  { name: 'tone-3s.webm', ffprobeSeconds: 3.008, expected: { container: 'webm', mediaType: 'audio/webm', codec: 'opus', durationSource: 'container-header' } },
  { name: 'tone-3s-live.webm', ffprobeSeconds: 2.994 + 0.02, expected: { container: 'webm', mediaType: 'audio/webm', codec: 'opus', durationSource: 'cluster-walk' } },
  { name: 'tone-3s.ogg', ffprobeSeconds: 3.0065, expected: { container: 'ogg', mediaType: 'audio/ogg', codec: 'opus', durationSource: 'granule-position' } },
  { name: 'tone-3s-vorbis.ogg', ffprobeSeconds: 3.0, expected: { container: 'ogg', mediaType: 'audio/ogg', codec: 'vorbis', durationSource: 'granule-position' } },
  { name: 'tone-3s-flac.ogg', ffprobeSeconds: 3.0, expected: { container: 'ogg', mediaType: 'audio/ogg', codec: 'flac', durationSource: 'granule-position' } },
  { name: 'tone-3s.m4a', ffprobeSeconds: 3.0, expected: { container: 'mp4', mediaType: 'audio/mp4', codec: 'aac', durationSource: 'container-header' } },
  { name: 'tone-3s-moov-last.m4a', ffprobeSeconds: 3.0, expected: { container: 'mp4', mediaType: 'audio/mp4', codec: 'aac', durationSource: 'container-header' } },
  // mvhd states 0 in a fragmented file: the duration is the fragments' sample durations.
  { name: 'tone-3s-fragmented.m4a', ffprobeSeconds: 3.04644, expected: { container: 'mp4', mediaType: 'audio/mp4', codec: 'aac', durationSource: 'cluster-walk' } },
  // Over the 120 s limit: the inspection reports it, the caller refuses it.
  { name: 'tone-130s.ogg', ffprobeSeconds: 130.0065, expected: { container: 'ogg', mediaType: 'audio/ogg', codec: 'opus', durationSource: 'granule-position' } },
  { name: 'tone-130s.webm', ffprobeSeconds: 130.008, expected: { container: 'webm', mediaType: 'audio/webm', codec: 'opus', durationSource: 'container-header' } },
  { name: 'tone-130s-live.webm', ffprobeSeconds: 129.954 + 0.06, expected: { container: 'webm', mediaType: 'audio/webm', codec: 'opus', durationSource: 'cluster-walk' } },
];

describe('accepted audio reports its container, codec and stated duration', () => {
  it.each(accepted)('$name', async ({ name, expected, ffprobeSeconds }) => {
    const inspection = await inspectAudio(fixture(name));
    expect(inspection).toMatchObject(expected);
    expect(inspection.containerDurationSeconds).not.toBeNull();
    expect(Math.abs(inspection.containerDurationSeconds! - ffprobeSeconds)).toBeLessThanOrEqual(0.1);
  });

  it('the live WebM has no Duration element, so only the cluster walk could measure it', async () => {
    const bytes = fixture('tone-3s-live.webm');
    const durationId = Buffer.from([0x44, 0x89]);
    expect(Buffer.from(bytes).includes(durationId)).toBe(false);
    expect(Buffer.from(fixture('tone-3s.webm')).includes(durationId)).toBe(true);
    // 3.001 s (last block) + 20 ms (its Opus frame, from the TOC byte) − 6.5 ms (CodecDelay).
    expect((await inspectAudio(bytes)).containerDurationSeconds).toBeCloseTo(3.0145, 6);
  });

  it('accepts bytes that are a view into a larger buffer', async () => {
    const bytes = fixture('tone-3s.ogg');
    const padded = new Uint8Array(bytes.length + 16);
    padded.set(bytes, 8);
    expect(await inspectAudio(padded.subarray(8, 8 + bytes.length))).toMatchObject({ container: 'ogg', codec: 'opus' });
  });
});

// The tracks (their kinds, the audio codec) are read by our walks; music-metadata read them before
// decision 102 and stays here as the oracle: both must say the same of every fixture.
describe('the tracks as music-metadata reads them', () => {
  const mediaTypes = { webm: 'audio/webm', ogg: 'audio/ogg', mp4: 'audio/mp4' } as const;
  it.each([...accepted.map(({ name, expected }) => ({ name, container: expected.container })), { name: 'video-2s.webm', container: 'webm' as const }])('$name', async ({ name, container }) => {
    const bytes = fixture(name);
    const { format } = await parseBuffer(bytes, { mimeType: mediaTypes[container], size: bytes.length }, { skipCovers: true });
    const ours = await inspectAudio(bytes).then(
      (inspection) => ({ video: false, audio: true, codec: inspection.codec }),
      (error: unknown) => ({ video: /video track/.test((error as AppError).detail ?? ''), audio: !/no audio track/.test((error as AppError).detail ?? ''), codec: null }),
    );
    expect(ours.video).toBe(format.hasVideo);
    expect(ours.audio).toBe(format.hasAudio);
    if (!format.hasVideo) expect(ours.codec).toBe(format.codec?.toLowerCase().match(/opus|vorbis|flac|aac/)?.[0]);
  });
});

/** The bytes with the first occurrence of `find` replaced by `replace` (same length). */
function edited(bytes: Uint8Array, find: number[] | string, replace: number[] | string): Uint8Array {
  const copy = bytes.slice();
  const at = indexOf(copy, find);
  if (at < 0) throw new Error(`pattern not found: ${String(find)}`);
  copy.set(typeof replace === 'string' ? Buffer.from(replace, 'latin1') : replace, at);
  return copy;
}

describe('the kinds of track decide, whatever the container', () => {
  // WebM TrackType (0x83, one byte of size, value): 2 audio, 1 video, 0x11 subtitle.
  const WEBM_AUDIO_TYPE = [0x83, 0x81, 0x02];
  it.each([
    ['a WebM whose one track says video', 'tone-3s.webm', WEBM_AUDIO_TYPE, [0x83, 0x81, 0x01], /has a video track/],
    ['a WebM whose one track is subtitles', 'tone-3s.webm', WEBM_AUDIO_TYPE, [0x83, 0x81, 0x11], /has no audio track/],
    ['an MP4 whose one track is video', 'tone-3s.m4a', 'soun', 'vide', /has a video track/],
    ['an MP4 whose one track is text', 'tone-3s.m4a', 'soun', 'text', /has no audio track/],
    ['a fragmented MP4 whose one track is video', 'tone-3s-fragmented.m4a', 'soun', 'vide', /has a video track/],
  ])('%s', async (_label, name, find, replace, detail) => {
    const error = await refusal(edited(fixture(name), find, replace));
    expect(error.code).toBe('media_type_unsupported');
    expect(error.detail).toMatch(detail);
  });

  it("an MP4's codec is read from its esds: an MP3 object type in an mp4a entry is mp3", async () => {
    const bytes = fixture('tone-3s.m4a');
    // ffmpeg writes each descriptor's size in four bytes: the DecoderConfigDescriptor (tag 4) is
    // 04 80 80 80 <size>, then the object type.
    const objectType = indexOf(bytes, [0x04, 0x80, 0x80, 0x80], indexOf(bytes, 'esds')) + 5;
    expect(bytes[objectType]).toBe(0x40); // MPEG-4 audio (AAC)
    const copy = bytes.slice();
    copy[objectType] = 0x6b; // MPEG-1 audio (MP3)
    expect(await inspectAudio(copy)).toMatchObject({ container: 'mp4', codec: 'mp3' });
  });
});

describe('anything else is refused as media_type_unsupported, whatever it claims to be', () => {
  const randomBytes = (() => {
    // A fixed linear congruential sequence: the same "random" bytes on every run.
    const bytes = new Uint8Array(4096);
    let state = 20240514;
    for (let i = 0; i < bytes.length; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      bytes[i] = state >>> 24;
    }
    return bytes;
  })();
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
  const wav = (() => {
    const bytes = Buffer.alloc(44 + 800);
    bytes.write('RIFF', 0, 'latin1');
    bytes.writeUInt32LE(bytes.length - 8, 4);
    bytes.write('WAVEfmt ', 8, 'latin1');
    bytes.writeUInt32LE(16, 16);
    bytes.writeUInt16LE(1, 20); // PCM
    bytes.writeUInt16LE(1, 22); // mono
    bytes.writeUInt32LE(8000, 24);
    bytes.writeUInt32LE(16000, 28);
    bytes.writeUInt16LE(2, 32);
    bytes.writeUInt16LE(16, 34);
    bytes.write('data', 36, 'latin1');
    bytes.writeUInt32LE(800, 40);
    return new Uint8Array(bytes);
  })();

  it.each([
    ['MP3', fixture('tone-3s.mp3'), 'Detected audio/mpeg;'],
    ['WAV', wav, 'Detected audio/wav;'],
    ['a PNG header', png, 'Detected image/png;'],
    ['a text file named .webm', new TextEncoder().encode('this is not audio, whatever its name says\n'), 'The bytes match no known format;'],
    ['random bytes', randomBytes, 'The bytes match no known format;'],
  ])('%s', async (_label, bytes, detail) => {
    const error = await refusal(bytes);
    expect(error.code).toBe('media_type_unsupported');
    expect(error.detail).toMatch(new RegExp(`^${detail.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
  });

  it('a WebM with a video track beside its audio', async () => {
    const error = await refusal(fixture('video-2s.webm'));
    expect(error.code).toBe('media_type_unsupported');
    expect(error.detail).toMatch(/video track/);
  });

  it('no bytes at all is media_empty', async () => {
    expect((await refusal(new Uint8Array(0))).code).toBe('media_empty');
  });
});

const indexOf = (bytes: Uint8Array, pattern: number[] | string, from = 0): number => Buffer.from(bytes).indexOf(typeof pattern === 'string' ? Buffer.from(pattern, 'latin1') : Buffer.from(pattern), from);
const lastIndexOf = (bytes: Uint8Array, pattern: number[] | string): number => Buffer.from(bytes).lastIndexOf(typeof pattern === 'string' ? Buffer.from(pattern, 'latin1') : Buffer.from(pattern));
const CLUSTER_ID = [0x1f, 0x43, 0xb6, 0x75];

describe('a cut file is refused', () => {
  // Too few bytes to recognize: file-type needs the EBML DocType (byte ~30), the Ogg codec magic
  // (bytes 28–35) or an MP4 ftyp box header.
  it.each([
    ['tone-3s.webm', 24],
    ['tone-3s-live.webm', 24],
    ['tone-3s.ogg', 32],
    ['tone-3s-vorbis.ogg', 32],
    ['tone-3s-flac.ogg', 32],
    ['tone-3s.m4a', 8],
    ['tone-3s-fragmented.m4a', 8],
  ])('%s cut to %i bytes is not recognizable: media_type_unsupported', async (name, cut) => {
    expect((await refusal(fixture(name).subarray(0, cut))).code).toBe('media_type_unsupported');
  });

  const names = accepted.map(({ name }) => name).filter((name) => name.startsWith('tone-3s'));
  const cuts: Array<[string, (length: number) => number]> = [
    ['in its first header', () => 40],
    ['a third of the way in', (length) => Math.floor(length / 3)],
    ['half way', (length) => Math.floor(length / 2)],
    ['one byte short of its end', (length) => length - 1],
  ];
  it.each(names.flatMap((name) => cuts.map(([where, at]) => ({ name, where, at }))))('$name cut $where: media_truncated', async ({ name, at }) => {
    const bytes = fixture(name);
    expect((await refusal(bytes.subarray(0, at(bytes.length)))).code).toBe('media_truncated');
  });

  it('an Ogg file cut between pages lacks its end-of-stream page', async () => {
    for (const name of ['tone-3s.ogg', 'tone-3s-vorbis.ogg', 'tone-3s-flac.ogg']) {
      const bytes = fixture(name);
      const error = await refusal(bytes.subarray(0, lastIndexOf(bytes, 'OggS')));
      expect([name, error.code, error.detail]).toEqual([name, 'media_truncated', 'The Ogg stream has no end-of-stream page.']);
    }
  });

  it('an Ogg file missing a page in the middle', async () => {
    const bytes = fixture('tone-3s.ogg');
    const third = indexOf(bytes, 'OggS', indexOf(bytes, 'OggS', 1) + 1);
    const fourth = indexOf(bytes, 'OggS', third + 1);
    const error = await refusal(new Uint8Array([...bytes.subarray(0, third), ...bytes.subarray(fourth)]));
    expect([error.code, error.detail]).toEqual(['media_truncated', 'The Ogg file is missing a page.']);
  });

  it('one flipped byte in an Ogg page fails its checksum', async () => {
    const bytes = fixture('tone-3s.ogg').slice();
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    const error = await refusal(bytes);
    expect([error.code, error.detail]).toEqual(['media_truncated', 'An Ogg page fails its checksum.']);
  });

  it('a WebM of known Segment size cut between Clusters', async () => {
    const bytes = fixture('tone-3s.webm');
    const error = await refusal(bytes.subarray(0, lastIndexOf(bytes, CLUSTER_ID)));
    expect([error.code, error.detail]).toEqual(['media_truncated', 'The WebM file ends inside its Segment.']);
  });

  it('a WebM with bytes after its Segment', async () => {
    const bytes = fixture('tone-3s.webm');
    expect((await refusal(new Uint8Array([...bytes, 0xec, 0x80]))).code).toBe('media_truncated');
  });

  it('an MP4 with moov first cut before its media data', async () => {
    const bytes = fixture('tone-3s.m4a');
    const moovEnd = indexOf(bytes, 'moov') - 4 + Buffer.from(bytes).readUInt32BE(indexOf(bytes, 'moov') - 4);
    expect((await refusal(bytes.subarray(0, moovEnd))).code).toBe('media_truncated');
  });

  it('an MP4 with moov last cut before its moov', async () => {
    const bytes = fixture('tone-3s-moov-last.m4a');
    const error = await refusal(bytes.subarray(0, indexOf(bytes, 'moov') - 4));
    expect([error.code, error.detail]).toEqual(['media_truncated', 'The MP4 file has no moov box (cut before its index).']);
  });

  it('an MP4 box header stating more than the file holds', async () => {
    const bytes = fixture('tone-3s.m4a').slice();
    const moov = indexOf(bytes, 'moov') - 4;
    new DataView(bytes.buffer).setUint32(moov, bytes.length * 2);
    expect((await refusal(bytes)).code).toBe('media_truncated');
  });
});

// A file cut exactly at a block or fragment boundary is indistinguishable from a shorter recording
// when its container states no total (live WebM, fragmented MP4): it is accepted, and its
// duration is what remains.
describe('a stream cut at a boundary reads as a shorter recording', () => {
  it('a live WebM cut before its last Cluster', async () => {
    const bytes = fixture('tone-3s-live.webm');
    const inspection = await inspectAudio(bytes.subarray(0, lastIndexOf(bytes, CLUSTER_ID)));
    expect(inspection.durationSource).toBe('cluster-walk');
    expect(inspection.containerDurationSeconds).toBeGreaterThan(0);
    expect(inspection.containerDurationSeconds).toBeLessThan(3);
  });

  it('a fragmented MP4 cut before its last fragment', async () => {
    const bytes = fixture('tone-3s-fragmented.m4a');
    const inspection = await inspectAudio(bytes.subarray(0, lastIndexOf(bytes, 'moof') - 4));
    expect(inspection.durationSource).toBe('cluster-walk');
    expect(inspection.containerDurationSeconds).toBeGreaterThan(0);
    expect(inspection.containerDurationSeconds).toBeLessThan(3);
  });
});
