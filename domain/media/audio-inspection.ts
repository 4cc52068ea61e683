// What an upload IS, decided from its bytes only (the declared Content-Type is never trusted).
// `file-type` recognizes the container; our own short structural walks check the container is
// complete (the libraries are lenient and report partial data for a cut file), read the duration
// it states, saying where it came from, and read its tracks: their kinds (audio, video) and the
// audio codec. Everything is linear in the input (at most MEDIA_LIMITS.maxAudioBytes, refused by
// the HTTP layer while reading) and nests to a fixed depth. The tracks were music-metadata's
// reading until decision 102: its fixed cost per parse was a quarter of an upload's CPU; a test
// holds our reading to music-metadata's on every fixture.
import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../errors.ts';

export type AudioContainer = 'webm' | 'ogg' | 'mp4';

export type AudioInspection = {
  container: AudioContainer;
  /** The type we serve it back with. */
  mediaType: 'audio/webm' | 'audio/ogg' | 'audio/mp4';
  /** e.g. 'opus', 'vorbis', 'aac'; null if unknown. */
  codec: string | null;
  /** Null when the container states no duration we could read. */
  containerDurationSeconds: number | null;
  durationSource: 'container-header' | 'cluster-walk' | 'granule-position' | 'none';
};

type Stated = Pick<AudioInspection, 'containerDurationSeconds' | 'durationSource'>;

const NO_DURATION: Stated = { containerDurationSeconds: null, durationSource: 'none' };

/** What the container's tracks are: a label for the audio codec as the container names it. */
type Tracks = { hasAudio: boolean; hasVideo: boolean; codecLabel: string | null };

/** file-type's extension → what we accept. Matroska (mkv), QuickTime, 3GP and Speex are not. */
const ACCEPTED: Record<string, Pick<AudioInspection, 'container' | 'mediaType'>> = {
  webm: { container: 'webm', mediaType: 'audio/webm' },
  opus: { container: 'ogg', mediaType: 'audio/ogg' }, // Opus in Ogg
  ogg: { container: 'ogg', mediaType: 'audio/ogg' }, // Vorbis in Ogg
  oga: { container: 'ogg', mediaType: 'audio/ogg' }, // FLAC in Ogg
  mp4: { container: 'mp4', mediaType: 'audio/mp4' }, // any ISO BMFF brand; the tracks decide
  m4a: { container: 'mp4', mediaType: 'audio/mp4' },
};

const ACCEPTED_TEXT = 'only WebM, Ogg (Opus, Vorbis, FLAC) or MP4 audio is accepted';

const truncated = (detail: string) => new AppError('media_truncated', detail);
const unsupported = (detail: string) => new AppError('media_type_unsupported', detail);

export async function inspectAudio(bytes: Uint8Array): Promise<AudioInspection> {
  if (bytes.length === 0) throw new AppError('media_empty');
  // The detail names only file-type's own label for what it saw, never anything read from the bytes.
  const detected = await fileTypeFromBuffer(bytes);
  const accepted = detected === undefined ? undefined : ACCEPTED[detected.ext];
  if (accepted === undefined) {
    throw unsupported(detected === undefined ? `The bytes match no known format; ${ACCEPTED_TEXT}.` : `Detected ${detected.mime}; ${ACCEPTED_TEXT}.`);
  }

  const { hasAudio, hasVideo, codecLabel, ...stated } = accepted.container === 'webm' ? walkWebm(bytes) : accepted.container === 'ogg' ? walkOgg(bytes) : walkMp4(bytes);
  if (hasVideo) throw unsupported('The file has a video track; audio only is accepted.');
  if (!hasAudio) throw unsupported('The file has no audio track; audio only is accepted.');

  return { ...accepted, codec: codecName(codecLabel), ...stated };
}

/** The container's codec label ('OPUS', 'VORBIS', 'mp4a.40', 'fLaC') as a short lowercase name. */
function codecName(label: string | null): string | null {
  if (label === null) return null;
  for (const name of ['opus', 'vorbis', 'flac', 'aac', 'alac', 'pcm']) {
    if (label.toLowerCase().includes(name)) return name;
  }
  // Another codec: keep the label only if it is short printable ASCII (it is stored and served).
  return /^[\x20-\x7e]{1,40}$/.test(label) ? label.toLowerCase() : null;
}

const dataView = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

// ---------------------------------------------------------------------------------------------
// Ogg (RFC 3533): every page is whole and passes its CRC, pages follow each other in sequence to
// the exact end of the buffer, one logical stream, the last page carries end-of-stream. Duration
// from the last granule position (RFC 7845 for Opus: minus the pre-skip, at 48 kHz).

const OGG_CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32 (polynomial 0x04C11DB7, no reflection, initial 0) with the checksum field as zeros. */
function oggPageCrc(bytes: Uint8Array, start: number, end: number): number {
  const crc = crcUpdate(0, bytes, start, start + 22);
  return crcUpdate(crcUpdate(crc, ZERO_CHECKSUM, 0, 4), bytes, start + 26, end);
}

const ZERO_CHECKSUM = new Uint8Array(4);

function crcUpdate(crc: number, bytes: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) crc = (crc << 8) ^ OGG_CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!;
  return crc >>> 0;
}

function walkOgg(bytes: Uint8Array): Stated & Tracks {
  const view = dataView(bytes);
  let pos = 0;
  let serial: number | null = null;
  let expectedSequence = 0;
  let endOfStream = false;
  let lastGranule: bigint | null = null;
  let clock: OggCodec | null = null;
  while (pos < bytes.length) {
    if (bytes.length - pos < 27) throw truncated('The Ogg file ends inside a page header.');
    if (view.getUint32(pos) !== 0x4f676753 || bytes[pos + 4] !== 0) throw truncated('The Ogg file has a damaged page.');
    if (endOfStream) throw truncated('The Ogg file continues after its end-of-stream page.');
    const flags = bytes[pos + 5]!;
    const segments = bytes[pos + 26]!;
    const headerEnd = pos + 27 + segments;
    if (headerEnd > bytes.length) throw truncated('The Ogg file ends inside a page header.');
    let pageEnd = headerEnd;
    for (let i = pos + 27; i < headerEnd; i++) pageEnd += bytes[i]!;
    if (pageEnd > bytes.length) throw truncated('The Ogg file ends inside a page.');
    if (oggPageCrc(bytes, pos, pageEnd) !== view.getUint32(pos + 22, true)) throw truncated('An Ogg page fails its checksum.');

    const pageSerial = view.getUint32(pos + 14, true);
    const beginsStream = (flags & 0x02) !== 0;
    if (serial === null) {
      if (!beginsStream) throw truncated('The Ogg file does not begin a stream.');
      serial = pageSerial;
      clock = oggClock(bytes.subarray(headerEnd, pageEnd));
    } else if (pageSerial !== serial || beginsStream) {
      throw unsupported('The Ogg file holds more than one logical stream; one audio stream is accepted.');
    }
    if (view.getUint32(pos + 18, true) !== expectedSequence) throw truncated('The Ogg file is missing a page.');
    expectedSequence++;
    // -1 means no packet ends on this page.
    const granule = view.getBigInt64(pos + 6, true);
    if (granule !== -1n) lastGranule = granule;
    endOfStream = (flags & 0x04) !== 0;
    pos = pageEnd;
  }
  // ffmpeg, libopusenc/libvorbis and Firefox's MediaRecorder all flag the last page; without the
  // flag, a file cut at a page boundary would look complete.
  if (!endOfStream) throw truncated('The Ogg stream has no end-of-stream page.');
  // One logical stream whose codec is an audio codec (oggClock refuses any other): audio only.
  const tracks: Tracks = { hasAudio: true, hasVideo: false, codecLabel: clock?.codec ?? null };
  if (lastGranule === null || clock === null) return { ...NO_DURATION, ...tracks };
  const samples = Math.max(0, Number(lastGranule) - clock.preSkip);
  return { containerDurationSeconds: samples / clock.rate, durationSource: 'granule-position', ...tracks };
}

type OggCodec = { codec: string; rate: number; preSkip: number };

/** The codec and granule clock from the stream's first packet (its identification header). */
function oggClock(packet: Uint8Array): OggCodec {
  const view = dataView(packet);
  const startsWith = (text: string) => packet.length >= text.length && [...text].every((c, i) => packet[i] === c.charCodeAt(0));
  // RFC 7845: granule positions count 48 kHz samples including the pre-skip.
  if (startsWith('OpusHead') && packet.length >= 19) return { codec: 'opus', rate: 48_000, preSkip: view.getUint16(10, true) };
  if (startsWith('\x01vorbis') && packet.length >= 30) return checkedRate('vorbis', view.getUint32(12, true));
  // FLAC-in-Ogg mapping: 9-byte header, 'fLaC', a metadata block header, then STREAMINFO whose
  // sample rate is the 20 bits at its byte 10.
  if (startsWith('\x7fFLAC') && packet.length >= 30) return checkedRate('flac', (packet[27]! << 12) | (packet[28]! << 4) | (packet[29]! >> 4));
  throw unsupported(`The Ogg stream's codec is not Opus, Vorbis or FLAC; ${ACCEPTED_TEXT}.`);
}

function checkedRate(codec: string, rate: number): OggCodec {
  if (rate === 0) throw truncated('The Ogg stream states a sample rate of 0.');
  return { codec, rate, preSkip: 0 };
}

// ---------------------------------------------------------------------------------------------
// WebM (EBML/Matroska): the EBML header, then one Segment whose top-level children tile it. The
// Segment and Clusters may have unknown size (all ones) as MediaRecorder writes them; a known size
// running past the end, or an end inside an element header or a block, is truncation.

const EBML_HEADER = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const INFO = 0x1549a966;
const TIMECODE_SCALE = 0x2ad7b1;
const DURATION = 0x4489;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const TRACK_NUMBER = 0xd7;
const TRACK_TYPE = 0x83;
const CODEC_ID = 0x86;
const CODEC_DELAY = 0x56aa;
const CLUSTER = 0x1f43b675;
const CLUSTER_TIMECODE = 0xe7;
const SIMPLE_BLOCK = 0xa3;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
const BLOCK_DURATION = 0x9b;
/** Segment-level IDs: one of these ends a Cluster of unknown size. */
const SEGMENT_CHILDREN = new Set([CLUSTER, INFO, TRACKS, 0x114d9b74, 0x1c53bb6b, 0x1254c367, 0x1043a770, 0x1941a469, EBML_HEADER, SEGMENT]);

type EbmlElement = { id: number; dataStart: number; size: number | null };

/** The element header at pos: its ID (marker kept) and size (null when unknown), within `end`. */
function readElementHeader(bytes: Uint8Array, pos: number, end: number): EbmlElement {
  const id = readVint(bytes, pos, end, 4);
  const size = readVint(bytes, pos + id.length, end, 8);
  // The ID keeps its length marker, as the specification writes IDs.
  const idWithMarker = id.value + 2 ** (7 * id.length);
  return { id: idWithMarker, dataStart: pos + id.length + size.length, size: size.allOnes ? null : size.value };
}

function readVint(bytes: Uint8Array, pos: number, end: number, maxLength: number): { value: number; length: number; allOnes: boolean } {
  if (pos >= end) throw truncated('The WebM file ends inside an element header.');
  const first = bytes[pos]!;
  const length = Math.clz32(first) - 23;
  if (first === 0 || length > maxLength) throw truncated('The WebM file has a malformed element header.');
  if (pos + length > end) throw truncated('The WebM file ends inside an element header.');
  let value = first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const byte = bytes[pos + i]!;
    value = value * 256 + byte;
    allOnes &&= byte === 0xff;
  }
  return { value, length, allOnes };
}

function readUint(bytes: Uint8Array, start: number, size: number): number {
  if (size > 8) throw truncated('The WebM file has a malformed integer.');
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + bytes[start + i]!;
  return value;
}

/** Calls visit for each child of known size tiling [start, end); refuses a child that does not fit. */
function forEachEbmlChild(bytes: Uint8Array, start: number, end: number, visit: (id: number, dataStart: number, dataEnd: number) => void): void {
  let pos = start;
  while (pos < end) {
    const element = readElementHeader(bytes, pos, end);
    if (element.size === null) throw truncated('The WebM file has an element of unknown size where none is allowed.');
    const dataEnd = element.dataStart + element.size;
    if (dataEnd > end) throw truncated('The WebM file ends inside an element.');
    visit(element.id, element.dataStart, dataEnd);
    pos = dataEnd;
  }
}

/** TrackType 1 is video, 2 audio (Matroska's track types). */
type WebmTrack = { type: number | null; codecId: string | null; codecDelayNs: number };
/** The block that ends last: its timestamp in ticks and what we know of its own duration. */
type LastBlock = { ticks: number; durationTicks: number | null; track: number; lacing: number; payload: Uint8Array };

function walkWebm(bytes: Uint8Array): Stated & Tracks {
  const header = readElementHeader(bytes, 0, bytes.length);
  if (header.id !== EBML_HEADER || header.size === null) throw truncated('The WebM file has a malformed EBML header.');
  const headerEnd = header.dataStart + header.size;
  if (headerEnd > bytes.length) throw truncated('The WebM file ends inside its EBML header.');
  const segment = readElementHeader(bytes, headerEnd, bytes.length);
  if (segment.id !== SEGMENT) throw truncated('The WebM file has no Segment after its EBML header.');
  const segmentEnd = segment.size === null ? bytes.length : segment.dataStart + segment.size;
  if (segmentEnd > bytes.length) throw truncated('The WebM file ends inside its Segment.');
  if (segmentEnd < bytes.length) throw truncated('The WebM file has bytes after its Segment.');

  const view = dataView(bytes);
  // Filled in by the walk's callbacks (an object, so the compiler does not narrow them to null).
  const found: { timecodeScale: number; durationTicks: number | null; last: LastBlock | null } = { timecodeScale: 1_000_000, durationTicks: null, last: null };
  const tracks = new Map<number, WebmTrack>();
  /** Every TrackEntry, numbered or not: an entry without a number still says what kind it is. */
  const entries: Array<{ number: number; track: WebmTrack }> = [];

  const readBlock = (start: number, end: number, clusterTicks: number | null, blockDuration: number | null) => {
    const track = readVint(bytes, start, end, 8);
    const flagsAt = start + track.length + 2;
    if (flagsAt >= end) throw truncated('The WebM file has a block cut short.');
    if (clusterTicks === null) throw truncated('The WebM file has a block before its Cluster timecode.');
    const ticks = clusterTicks + view.getInt16(start + track.length);
    if (found.last === null || ticks >= found.last.ticks) {
      found.last = { ticks, durationTicks: blockDuration, track: track.value, lacing: (bytes[flagsAt]! >> 1) & 0x03, payload: bytes.subarray(flagsAt + 1, end) };
    }
  };

  // Walks one Cluster's children from start; a Cluster of unknown size ends at the next
  // segment-level element or at the end of the Segment. Returns where the Cluster ends.
  const walkCluster = (start: number, end: number, unknownSize: boolean): number => {
    let clusterTicks: number | null = null;
    let pos = start;
    while (pos < end) {
      const element = readElementHeader(bytes, pos, end);
      if (unknownSize && SEGMENT_CHILDREN.has(element.id)) return pos;
      if (element.size === null) throw truncated('The WebM file has an element of unknown size inside a Cluster.');
      const dataEnd = element.dataStart + element.size;
      if (dataEnd > end) throw truncated('The WebM file ends inside a Cluster.');
      if (element.id === CLUSTER_TIMECODE) clusterTicks = readUint(bytes, element.dataStart, element.size);
      else if (element.id === SIMPLE_BLOCK) readBlock(element.dataStart, dataEnd, clusterTicks, null);
      else if (element.id === BLOCK_GROUP) {
        const group: { block: [number, number] | null; duration: number | null } = { block: null, duration: null };
        forEachEbmlChild(bytes, element.dataStart, dataEnd, (id, childStart, childEnd) => {
          if (id === BLOCK) group.block = [childStart, childEnd];
          else if (id === BLOCK_DURATION) group.duration = readUint(bytes, childStart, childEnd - childStart);
        });
        if (group.block === null) throw truncated('The WebM file has a BlockGroup without a Block.');
        readBlock(group.block[0], group.block[1], clusterTicks, group.duration);
      }
      pos = dataEnd;
    }
    return pos;
  };

  let pos = segment.dataStart;
  while (pos < segmentEnd) {
    const element = readElementHeader(bytes, pos, segmentEnd);
    if (element.size === null) {
      if (element.id !== CLUSTER) throw truncated('The WebM file has an element of unknown size where none is allowed.');
      pos = walkCluster(element.dataStart, segmentEnd, true);
      continue;
    }
    const dataEnd = element.dataStart + element.size;
    if (dataEnd > segmentEnd) throw truncated('The WebM file ends inside an element.');
    if (element.id === INFO) {
      forEachEbmlChild(bytes, element.dataStart, dataEnd, (id, start, end) => {
        if (id === TIMECODE_SCALE) found.timecodeScale = readUint(bytes, start, end - start);
        else if (id === DURATION) found.durationTicks = readEbmlFloat(view, start, end - start);
      });
    } else if (element.id === TRACKS) {
      forEachEbmlChild(bytes, element.dataStart, dataEnd, (id, start, end) => {
        if (id !== TRACK_ENTRY) return;
        let number: number | null = null;
        const track: WebmTrack = { type: null, codecId: null, codecDelayNs: 0 };
        forEachEbmlChild(bytes, start, end, (childId, childStart, childEnd) => {
          if (childId === TRACK_NUMBER) number = readUint(bytes, childStart, childEnd - childStart);
          else if (childId === TRACK_TYPE) track.type = readUint(bytes, childStart, childEnd - childStart);
          else if (childId === CODEC_ID) track.codecId = String.fromCharCode(...bytes.subarray(childStart, Math.min(childEnd, childStart + 32)));
          else if (childId === CODEC_DELAY) track.codecDelayNs = readUint(bytes, childStart, childEnd - childStart);
        });
        entries.push({ number: number ?? Number.MAX_SAFE_INTEGER, track });
        if (number !== null) tracks.set(number, track);
      });
    } else if (element.id === CLUSTER) {
      walkCluster(element.dataStart, dataEnd, false);
    }
    pos = dataEnd;
  }

  const { timecodeScale, durationTicks, last: lastBlock } = found;
  if (timecodeScale === 0) throw truncated('The WebM file states a TimecodeScale of 0.');
  // The audio track with the lowest number names the codec ('A_OPUS' → 'OPUS').
  const audio = entries.filter(({ track }) => track.type === 2).sort((a, b) => a.number - b.number)[0]?.track;
  const content: Tracks = {
    hasAudio: audio !== undefined,
    hasVideo: entries.some(({ track }) => track.type === 1),
    codecLabel: audio?.codecId?.replace(/^A_/, '') ?? null,
  };
  if (durationTicks !== null) {
    return { containerDurationSeconds: (durationTicks * timecodeScale) / 1e9, durationSource: 'container-header', ...content };
  }
  if (lastBlock === null) return { ...NO_DURATION, ...content };
  // No Duration element (MediaRecorder, live muxing): the end of the last block. Matroska block
  // timestamps include the codec's delay (CodecDelay, e.g. Opus's pre-skip), which is subtracted.
  const track = tracks.get(lastBlock.track);
  const endNs = lastBlock.ticks * timecodeScale + blockDurationNs(lastBlock, track, timecodeScale) - (track?.codecDelayNs ?? 0);
  return { containerDurationSeconds: Math.max(0, endNs) / 1e9, durationSource: 'cluster-walk', ...content };
}

function readEbmlFloat(view: DataView, start: number, size: number): number {
  const value = size === 4 ? view.getFloat32(start) : size === 8 ? view.getFloat64(start) : Number.NaN;
  if (!Number.isFinite(value) || value < 0) throw truncated('The WebM file states a malformed Duration.');
  return value;
}

/** The last block's own duration: its BlockDuration, else an unlaced Opus packet's TOC, else 0. */
function blockDurationNs(block: LastBlock, track: WebmTrack | undefined, timecodeScale: number): number {
  if (block.durationTicks !== null) return block.durationTicks * timecodeScale;
  if (track?.codecId === 'A_OPUS' && block.lacing === 0) return opusPacketNs(block.payload);
  return 0;
}

/**
 * An Opus packet's duration from its TOC byte (RFC 6716 §3.1): the configuration gives the frame
 * size (2.5–60 ms; MediaRecorder writes 20 ms), the code how many frames the packet holds.
 */
function opusPacketNs(packet: Uint8Array): number {
  if (packet.length === 0) return 0;
  const toc = packet[0]!;
  const config = toc >> 3;
  const frameUs = config < 12 ? [10_000, 20_000, 40_000, 60_000][config & 3]! : config < 16 ? [10_000, 20_000][config & 1]! : [2_500, 5_000, 10_000, 20_000][config & 3]!;
  const code = toc & 0x03;
  const frames = code === 0 ? 1 : code < 3 ? 2 : packet.length > 1 ? packet[1]! & 0x3f : 0;
  return frameUs * frames * 1000;
}

// ---------------------------------------------------------------------------------------------
// MP4 (ISO BMFF): top-level boxes tile the buffer exactly, `ftyp` first, one `moov`, some `mdat`,
// and the sample data the index points to lies inside the buffer. Duration from mvhd (or mehd);
// for a fragmented file whose header states none (MediaRecorder), from the fragments' sample
// durations (reported as 'cluster-walk': movie fragments are MP4's clusters).

/** Boxes we descend into; everything else is skipped by size. */
const MP4_CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'mvex', 'moof', 'traf']);
const MP4_MAX_DEPTH = 5;

type Mp4Box = { type: string; start: number; dataStart: number; end: number };

function readBoxHeader(view: DataView, pos: number, end: number, topLevel: boolean): Mp4Box {
  if (end - pos < 8) throw truncated('The MP4 file ends inside a box header.');
  let size = view.getUint32(pos);
  const type = String.fromCharCode(view.getUint8(pos + 4), view.getUint8(pos + 5), view.getUint8(pos + 6), view.getUint8(pos + 7));
  let headerSize = 8;
  if (size === 1) {
    if (end - pos < 16) throw truncated('The MP4 file ends inside a box header.');
    size = Number(view.getBigUint64(pos + 8));
    headerSize = 16;
  } else if (size === 0) {
    // "Extends to the end of the file": only meaningful for the last top-level box.
    if (!topLevel) throw truncated('The MP4 file has a malformed box.');
    size = end - pos;
  }
  if (size < headerSize) throw truncated('The MP4 file has a malformed box.');
  if (pos + size > end) throw truncated('The MP4 file ends inside a box.');
  return { type, start: pos, dataStart: pos + headerSize, end: pos + size };
}

type Mp4Track = { timescale: number; chunkOffsets: number[]; defaultDuration: number; defaultSize: number; fragmentEnd: number };

/** A `trak` box's kind (its media handler: 'soun', 'vide', …) and its first sample entry's codec label. */
type Mp4Trak = { handler: string | null; codecLabel: string | null };

/** Audio sample entries' four-character codes as codec labels; 'mp4a' is told by its esds. */
const MP4_AUDIO_ENTRIES: Record<string, string> = {
  Opus: 'opus', fLaC: 'flac', alac: 'alac', 'ac-3': 'ac-3', 'ec-3': 'e-ac-3', '.mp3': 'mp3',
  lpcm: 'pcm', ipcm: 'pcm', fpcm: 'pcm', sowt: 'pcm', twos: 'pcm', in24: 'pcm', in32: 'pcm', fl32: 'pcm', fl64: 'pcm', 'raw ': 'pcm',
};

/** MPEG-4 Systems objectTypeIndication values of the audio codecs an 'mp4a' entry carries. */
const MP4A_OBJECT_TYPES: Record<number, string> = { 0x40: 'aac', 0x66: 'aac', 0x67: 'aac', 0x68: 'aac', 0x69: 'mp3', 0x6b: 'mp3', 0xa5: 'ac-3', 0xa6: 'e-ac-3', 0xad: 'opus', 0xdd: 'vorbis' };

/** The codec label of an `stsd` box's first sample entry; null when it cannot be told. */
function mp4SampleEntryCodec(view: DataView, stsd: Mp4Box): string | null {
  if (stsd.end - stsd.dataStart < 16) return null;
  const entry = readBoxHeader(view, stsd.dataStart + 8, stsd.end, false);
  if (entry.type !== 'mp4a') return MP4_AUDIO_ENTRIES[entry.type] ?? entry.type;
  // AudioSampleEntry: 28 bytes of fields (QuickTime's sound description version 1 adds 16, version
  // 2 adds 36), then boxes, among them the esds.
  if (entry.end - entry.dataStart < 28) return null;
  const version = view.getUint16(entry.dataStart + 8);
  for (let pos = entry.dataStart + 28 + (version === 1 ? 16 : version === 2 ? 36 : 0); pos + 8 <= entry.end;) {
    const child = readBoxHeader(view, pos, entry.end, false);
    if (child.type === 'esds') return mp4aObjectType(view, child.dataStart + 4, child.end);
    pos = child.end;
  }
  return null;
}

/** The esds's ES_Descriptor (tag 3) → its DecoderConfigDescriptor (tag 4) → the object type's codec. */
function mp4aObjectType(view: DataView, start: number, end: number): string | null {
  // A descriptor: its tag, a size of 1–4 bytes (7 bits each, the high bit says another follows).
  const descriptor = (at: number, tag: number, within: number): { dataStart: number; dataEnd: number } | null => {
    if (at >= within || view.getUint8(at) !== tag) return null;
    let size = 0;
    let pos = at + 1;
    for (let i = 0; i < 4; i++) {
      if (pos >= within) return null;
      const byte = view.getUint8(pos++);
      size = size * 128 + (byte & 0x7f);
      if (!(byte & 0x80)) break;
    }
    return pos + size <= within ? { dataStart: pos, dataEnd: pos + size } : null;
  };
  const es = descriptor(start, 0x03, end);
  if (es === null || es.dataEnd - es.dataStart < 3) return null;
  // ES_ID (2 bytes), then flags: a depended-on ES_ID, a URL (length-prefixed), an OCR ES_ID.
  const flags = view.getUint8(es.dataStart + 2);
  let at = es.dataStart + 3 + (flags & 0x80 ? 2 : 0);
  if (flags & 0x40) {
    if (at >= es.dataEnd) return null;
    at += 1 + view.getUint8(at);
  }
  if (flags & 0x20) at += 2;
  const config = descriptor(at, 0x04, es.dataEnd);
  if (config === null || config.dataEnd === config.dataStart) return null;
  return MP4A_OBJECT_TYPES[view.getUint8(config.dataStart)] ?? null;
}

function walkMp4(bytes: Uint8Array): Stated & Tracks {
  const view = dataView(bytes);
  const need = (box: Mp4Box, length: number) => {
    if (box.end - box.dataStart < length) throw truncated(`The MP4 file has a malformed ${box.type} box.`);
  };
  const u64 = (at: number) => Number(view.getBigUint64(at));

  let movie: { timescale: number; duration: number } | null = null;
  let fragmentDuration: number | null = null;
  let moovCount = 0;
  let mdatCount = 0;
  let fragmented = false;
  const tracks = new Map<number, Mp4Track>();
  const trackOf = (id: number): Mp4Track => {
    let track = tracks.get(id);
    if (track === undefined) {
      track = { timescale: 0, chunkOffsets: [], defaultDuration: 0, defaultSize: 0, fragmentEnd: 0 };
      tracks.set(id, track);
    }
    return track;
  };
  let currentTrack: Mp4Track | null = null;
  const traks: Mp4Trak[] = [];
  let currentTrak: Mp4Trak | null = null;
  let currentMoofStart = 0;
  let fragment: { track: Mp4Track; flags: number; baseOffset: number; defaultDuration: number; defaultSize: number; decodeTime: number | null } | null = null;

  const visit = (box: Mp4Box, depth: number, parent: string | null) => {
    switch (box.type) {
      case 'moov': moovCount++; break;
      case 'trak': traks.push((currentTrak = { handler: null, codecLabel: null })); break;
      // The media's handler (mdia/hdlr); QuickTime's minf may hold a data handler's hdlr too.
      case 'hdlr':
        if (currentTrak && parent === 'mdia') {
          need(box, 12);
          currentTrak.handler = String.fromCharCode(...bytes.subarray(box.dataStart + 8, box.dataStart + 12));
        }
        break;
      case 'stsd': if (currentTrak) currentTrak.codecLabel = mp4SampleEntryCodec(view, box); break;
      case 'mdat': mdatCount++; break;
      case 'moof': fragmented = true; currentMoofStart = box.start; break;
      case 'mvhd': {
        need(box, 32);
        const v1 = view.getUint8(box.dataStart) === 1;
        movie = v1
          ? { timescale: view.getUint32(box.dataStart + 20), duration: u64(box.dataStart + 24) }
          : { timescale: view.getUint32(box.dataStart + 12), duration: view.getUint32(box.dataStart + 16) };
        // All ones means "unknown".
        if ((v1 && movie.duration === 2 ** 64) || (!v1 && movie.duration === 0xffffffff)) movie.duration = 0;
        break;
      }
      case 'mehd': need(box, 12); fragmentDuration = view.getUint8(box.dataStart) === 1 ? u64(box.dataStart + 4) : view.getUint32(box.dataStart + 4); break;
      case 'tkhd': need(box, 24); currentTrack = trackOf(view.getUint32(box.dataStart + (view.getUint8(box.dataStart) === 1 ? 20 : 12))); break;
      case 'mdhd': need(box, 24); if (currentTrack) currentTrack.timescale = view.getUint32(box.dataStart + (view.getUint8(box.dataStart) === 1 ? 20 : 12)); break;
      case 'stco':
      case 'co64': {
        need(box, 8);
        const count = view.getUint32(box.dataStart + 4);
        const width = box.type === 'stco' ? 4 : 8;
        if (count > (box.end - box.dataStart - 8) / width) throw truncated('The MP4 file has a malformed chunk table.');
        for (let i = 0, at = box.dataStart + 8; i < count; i++, at += width) currentTrack?.chunkOffsets.push(width === 4 ? view.getUint32(at) : u64(at));
        break;
      }
      case 'trex': {
        need(box, 24);
        const track = trackOf(view.getUint32(box.dataStart + 4));
        track.defaultDuration = view.getUint32(box.dataStart + 12);
        track.defaultSize = view.getUint32(box.dataStart + 16);
        break;
      }
      case 'tfhd': {
        need(box, 8);
        const flags = view.getUint32(box.dataStart) & 0xffffff;
        const track = trackOf(view.getUint32(box.dataStart + 4));
        let at = box.dataStart + 8;
        const optional = (flag: number, width: 4 | 8) => {
          if (!(flags & flag)) return null;
          if (at + width > box.end) throw truncated('The MP4 file has a malformed tfhd box.');
          const value = width === 8 ? u64(at) : view.getUint32(at);
          at += width;
          return value;
        };
        const baseOffset = optional(0x01, 8) ?? currentMoofStart;
        optional(0x02, 4);
        const defaultDuration = optional(0x08, 4) ?? track.defaultDuration;
        const defaultSize = optional(0x10, 4) ?? track.defaultSize;
        fragment = { track, flags, baseOffset, defaultDuration, defaultSize, decodeTime: null };
        break;
      }
      case 'tfdt': {
        const v1 = box.end - box.dataStart >= 1 && view.getUint8(box.dataStart) === 1;
        need(box, v1 ? 12 : 8);
        if (fragment) fragment.decodeTime = v1 ? u64(box.dataStart + 4) : view.getUint32(box.dataStart + 4);
        break;
      }
      case 'trun': {
        if (fragment === null) throw truncated('The MP4 file has a trun box outside a track fragment.');
        need(box, 8);
        const flags = view.getUint32(box.dataStart) & 0xffffff;
        const count = view.getUint32(box.dataStart + 4);
        let at = box.dataStart + 8;
        const dataOffset = flags & 0x01 ? view.getInt32(at) : 0;
        at += (flags & 0x01 ? 4 : 0) + (flags & 0x04 ? 4 : 0);
        const perSample = [0x100, 0x200, 0x400, 0x800].filter((flag) => flags & flag).length * 4;
        if (at > box.end || count * perSample > box.end - at) throw truncated('The MP4 file has a malformed trun box.');
        let duration = 0;
        let size = 0;
        for (let i = 0; i < count; i++, at += perSample) {
          duration += flags & 0x100 ? view.getUint32(at) : fragment.defaultDuration;
          size += flags & 0x200 ? view.getUint32(at + (flags & 0x100 ? 4 : 0)) : fragment.defaultSize;
        }
        if (fragment.baseOffset + dataOffset + size > bytes.length) throw truncated('The MP4 file ends inside a fragment\'s samples.');
        const track = fragment.track;
        const start = fragment.decodeTime ?? track.fragmentEnd;
        track.fragmentEnd = start + duration;
        fragment.decodeTime = track.fragmentEnd;
        break;
      }
    }
    if (MP4_CONTAINERS.has(box.type)) {
      if (depth >= MP4_MAX_DEPTH) throw truncated('The MP4 file nests boxes too deeply.');
      for (let pos = box.dataStart; pos < box.end;) {
        const child = readBoxHeader(view, pos, box.end, false);
        visit(child, depth + 1, box.type);
        pos = child.end;
      }
    }
    if (box.type === 'trak') {
      currentTrack = null;
      currentTrak = null;
    }
    if (box.type === 'traf') fragment = null;
  };

  for (let pos = 0; pos < bytes.length;) {
    const box = readBoxHeader(view, pos, bytes.length, true);
    if (pos === 0 && box.type !== 'ftyp') throw truncated('The MP4 file does not begin with ftyp.');
    visit(box, 0, null);
    pos = box.end;
  }
  if (moovCount !== 1) throw truncated(moovCount === 0 ? 'The MP4 file has no moov box (cut before its index).' : 'The MP4 file has more than one moov box.');
  if (mdatCount === 0) throw truncated('The MP4 file has no media data.');
  for (const track of tracks.values()) {
    if (track.chunkOffsets.some((offset) => offset >= bytes.length)) throw truncated('The MP4 file ends before the media data its index points to.');
  }

  const audio = traks.find((trak) => trak.handler === 'soun');
  const content: Tracks = { hasAudio: audio !== undefined, hasVideo: traks.some((trak) => trak.handler === 'vide'), codecLabel: audio?.codecLabel ?? null };
  const header = movie as { timescale: number; duration: number } | null;
  if (header !== null && header.timescale > 0 && header.duration > 0) {
    return { containerDurationSeconds: header.duration / header.timescale, durationSource: 'container-header', ...content };
  }
  if (header !== null && header.timescale > 0 && fragmentDuration !== null && fragmentDuration > 0) {
    return { containerDurationSeconds: fragmentDuration / header.timescale, durationSource: 'container-header', ...content };
  }
  if (fragmented) {
    let seconds: number | null = null;
    for (const track of tracks.values()) {
      if (track.timescale > 0 && track.fragmentEnd > 0) seconds = Math.max(seconds ?? 0, track.fragmentEnd / track.timescale);
    }
    if (seconds !== null) return { containerDurationSeconds: seconds, durationSource: 'cluster-walk', ...content };
  }
  return { ...NO_DURATION, ...content };
}
