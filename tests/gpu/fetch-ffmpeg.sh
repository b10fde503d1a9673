#!/usr/bin/env bash
# The CPU benchmark's peer for the GPU machine, which has no FFmpeg: the
# release of FFmpeg this Debian ships (its source package, so that afir is
# the one bench/cpu_peers.sh meets here), built as one static binary with
# what that benchmark uses and nothing else (the wav demuxer and muxer, PCM
# codecs, afir, aformat, aresample; x86 assembly, the hardened toolchain
# and position-independent code, as Debian builds it), into
# .deps/ffmpeg/ffmpeg (git-ignored; tests/gpu/device-run.sh --only cpupeers
# puts it on PATH). About 3 MB; half a minute on two cores. On the 2-CPU
# machine its afir took 0.71 s where Debian's package took 0.82 s (a
# 10-minute stereo WAV, 65,536 taps; 0.05 s of that is loading the
# package's hundred shared libraries): a peer a little faster than the
# package, not slower.
#
#   tests/gpu/fetch-ffmpeg.sh
# Needs apt-get (with network), a C compiler, make and nasm.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$PWD/.deps/ffmpeg
command -v nasm >/dev/null || { echo "fetch-ffmpeg: nasm is needed (apt-get install nasm)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Debian's source package, through a private source list and package
# lists: the machine's apt configuration is left as it is.
. /etc/os-release
mkdir -p "$tmp/lists/partial"
printf 'deb-src http://deb.debian.org/debian %s main\n' "$VERSION_CODENAME" >"$tmp/src.list"
apt_opts=(-o "Dir::Etc::SourceList=$tmp/src.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$tmp/lists")
apt-get "${apt_opts[@]}" update -qq
(cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only ffmpeg >/dev/null 2>&1)
tar -C "$tmp" -xf "$tmp"/ffmpeg_*.orig.tar.xz
src=$(find "$tmp" -maxdepth 1 -type d -name 'ffmpeg-*' | head -n 1)
(
    cd "$src"
    ./configure --disable-everything --disable-doc --disable-network --disable-autodetect \
        --toolchain=hardened --enable-pic --enable-static --disable-shared --disable-ffplay \
        --disable-ffprobe \
        --enable-filter=afir,aformat,aresample,anull,abuffer,abuffersink \
        --enable-demuxer=wav --enable-muxer=wav --enable-decoder=pcm_s16le,pcm_f32le,pcm_f64le \
        --enable-encoder=pcm_s16le --enable-protocol=file,pipe --enable-swresample \
        --extra-ldflags=-static >"$tmp/configure.log" 2>&1 ||
        { tail -n 20 "$tmp/configure.log" >&2; exit 1; }
    make -j "$(nproc)" ffmpeg >"$tmp/make.log" 2>&1 || { tail -n 20 "$tmp/make.log" >&2; exit 1; }
)
mkdir -p "$out"
strip -o "$out/ffmpeg" "$src/ffmpeg"
echo "fetch-ffmpeg: $("$out/ffmpeg" -version | head -n 1 | cut -d' ' -f1-3), static, in $out/ffmpeg"
