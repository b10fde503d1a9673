#!/usr/bin/env bash
# Downloads (never installs) the Debian packages that a GPU machine without
# libsndfile, libsoxr, PortAudio, FFTW, JACK, sox or groff needs for
# tests/gpu/device-run.sh, into .deps/ (git-ignored). device-run.sh unpacks
# them into a private prefix there, never into /. The list is the libraries'
# own closure less what every glibc-based distribution already has (libc,
# libstdc++, zlib, dbus's expat, ...). The Python package's build backend
# (scikit-build-core, its dependencies, ninja, cmake) comes as wheels in
# .deps/python, where python/check.sh finds it without a network.
#
#   tests/gpu/fetch-deps.sh        # needs apt-get; run 'apt-get update' first
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(
    # libsndfile and its codecs
    libsndfile1 libsndfile1-dev libflac12 libflac-dev libogg0 libogg-dev libvorbis0a libvorbisenc2
    libvorbisfile3 libvorbis-dev libopus0 libopus-dev libmpg123-0 libmpg123-dev libout123-0
    libsyn123-0 libmp3lame0
    # libsoxr (impulse responses at another rate)
    libsoxr0 libsoxr-lsr0 libsoxr-dev
    # FFTW
    libfftw3-single3 libfftw3-double3 libfftw3-long3 libfftw3-quad3 libfftw3-bin libfftw3-dev
    libquadmath0
    # PortAudio, ALSA, JACK (the live test's dummy server)
    libportaudio2 libportaudiocpp0 portaudio19-dev libasound2 libasound2-data libasound2-dev
    libjack-jackd2-0 libjack-jackd2-dev jackd2 libsamplerate0 libzita-alsa-pcmi0
    libzita-resampler1 libdbus-1-3 libreadline8
    # libpng, pkg-config
    libpng16-16 libpng-dev zlib1g-dev pkgconf pkgconf-bin libpkgconf3 pkg-config
    # sox (test signals) and its format plugins
    sox libsox3 libsox-fmt-base libmagic1 libmagic-mgc libltdl7 libgsm1 libwavpack1
    libopencore-amrnb0 libopencore-amrwb0 libgomp1
    # groff (the man page's check)
    groff-base libuchardet0
)
mkdir -p .deps
cd .deps
apt-get download "${packages[@]}"
py=${GPUFILT_PYTHON:-python3}
# (cmake too: where the machine's own cmake is not one scikit-build-core can
# run in its isolated build, it asks for PyPI's)
"$py" -m pip download -q --only-binary=:all: -d python scikit-build-core ninja "cmake>=3.24"
# scikit-build-core's dependencies on Pythons before 3.11, which the GPU
# machine may have: their pure-Python wheels.
"$py" -m pip download -q --only-binary=:all: --python-version 3.9 --platform any -d python \
    tomli exceptiongroup typing-extensions
# cuFFTDx (NVIDIA MathDx, header-only: the CUDA FFT method's fused
# transforms): its headers and the CUTLASS headers they include, from the
# PyPI package, packed (xz: 8 MB of 120).
MATHDX_VERSION=25.6.0
"$py" -m pip download -q --no-deps -d mathdx-whl "nvidia-mathdx==$MATHDX_VERSION"
rm -rf mathdx-x && mkdir mathdx-x
"$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    mathdx-whl/nvidia_mathdx-$MATHDX_VERSION-py3-none-any.whl mathdx-x
tar -C mathdx-x/nvidia -cJf mathdx.tar.xz mathdx/include/cufftdx mathdx/include/commondx \
    mathdx/include/cufftdx.hpp mathdx/external/cutlass/include
rm -rf mathdx-x mathdx-whl
du -sh .
