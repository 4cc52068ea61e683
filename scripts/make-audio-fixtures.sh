#!/usr/bin/env bash
# Regenerates the audio fixtures in test/fixtures/media/ (test/fixtures/media/README.md says which
# test uses which file). Needs Debian's ffmpeg (`apt-get install ffmpeg`; made with 5.1): CI has no
# ffmpeg, so the outputs are committed and the tests hard-code the durations ffprobe measured.
#
# Deterministic where ffmpeg allows: synthetic sources only (sine, silence, a flat colour), no
# metadata, and the bitexact flags on the output so no encoder version string, random Matroska
# SegmentUID or random Ogg serial number lands in the bytes. Every file is mono and low bitrate so
# the fixtures stay small.
set -euo pipefail

out="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/media"
mkdir -p "$out"
cd "$out"

ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
# Output options every file gets (they must come after the inputs to apply to the output).
clean=(-map_metadata -1 -fflags +bitexact -flags:a +bitexact -flags:v +bitexact)
tone48=(-f lavfi -i "sine=frequency=440:sample_rate=48000:duration=3")
tone22=(-f lavfi -i "sine=frequency=440:sample_rate=22050:duration=3")
silence130=(-f lavfi -i "anullsrc=r=48000:cl=mono" -t 130)

# Opus in WebM written to a seekable file: the muxer goes back and writes Info/Duration, the
# Segment size, SeekHead and Cues.
ff "${tone48[@]}" -ac 1 -c:a libopus -b:a 12k "${clean[@]}" -f webm tone-3s.webm
# The same written to a pipe in live mode, as a browser's MediaRecorder writes: no Duration, a
# Segment and Clusters of unknown size, no Cues.
ff "${tone48[@]}" -ac 1 -c:a libopus -b:a 12k "${clean[@]}" -live 1 -f webm pipe:1 > tone-3s-live.webm
ff "${tone48[@]}" -ac 1 -c:a libopus -b:a 12k "${clean[@]}" -f ogg tone-3s.ogg
ff "${tone22[@]}" -ac 1 -c:a libvorbis -q:a -1 "${clean[@]}" -f ogg tone-3s-vorbis.ogg
ff -f lavfi -i "sine=frequency=440:sample_rate=8000:duration=3" -ac 1 -sample_fmt s16 -c:a flac -compression_level 12 "${clean[@]}" -f ogg tone-3s-flac.ogg
# AAC in MP4, moov moved before mdat (what a server that streams it wants) and left at the end.
ff "${tone22[@]}" -ac 1 -c:a aac -b:a 16k "${clean[@]}" -movflags +faststart -f mp4 tone-3s.m4a
ff "${tone22[@]}" -ac 1 -c:a aac -b:a 16k "${clean[@]}" -f mp4 tone-3s-moov-last.m4a
# Fragmented MP4 written to a pipe, as a browser's MediaRecorder writes audio/mp4: an empty moov
# (mvhd duration 0) and then moof+mdat pairs.
ff "${tone22[@]}" -ac 1 -c:a aac -b:a 16k "${clean[@]}" -movflags empty_moov+default_base_moof+frag_keyframe -frag_duration 1000000 -f mp4 pipe:1 > tone-3s-fragmented.m4a
# Refused: MP3 is not an accepted container.
ff "${tone22[@]}" -ac 1 -c:a libmp3lame -b:a 8k "${clean[@]}" -f mp3 tone-3s.mp3
# Over the 120 s limit by their own headers; silence at Opus's lowest bitrate in 60 ms frames
# keeps them small.
ff "${silence130[@]}" -c:a libopus -b:a 6k -frame_duration 60 "${clean[@]}" -f ogg tone-130s.ogg
ff "${silence130[@]}" -c:a libopus -b:a 6k -frame_duration 60 "${clean[@]}" -f webm tone-130s.webm
# Over the limit with no Duration element: only the cluster walk can tell.
ff "${silence130[@]}" -c:a libopus -b:a 6k -frame_duration 60 "${clean[@]}" -live 1 -f webm pipe:1 > tone-130s-live.webm
# Refused: a video track beside the audio.
ff -f lavfi -i "color=c=gray:s=32x32:r=5:d=2" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=2" \
  -ac 1 -c:v libvpx -b:v 20k -c:a libopus -b:a 8k "${clean[@]}" -f webm video-2s.webm

# The live files must have no Duration element (EBML ID 0x4489) in their Info.
for live in tone-3s-live.webm tone-130s-live.webm; do
  if [ "$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$live")" != "N/A" ]; then
    echo "$live unexpectedly states a duration" >&2
    exit 1
  fi
done

ls -l "$out"
