#!/usr/bin/env bash
# Install a build into a scratch prefix and use it as a user would:
#   1. pkg-config, shared library:  cc embed.c $(pkg-config --cflags --libs gpufilt)
#   2. pkg-config, static library:  the same with -Bstatic and --static
#   3. CMake: find_package(gpufilt) with gpufilt::gpufilt and gpufilt::gpufilt_static
#   4. the installed gpufilt command runs (its RPATH finds what it needs)
#   5. libgpufilt.a is position-independent (links into a shared object)
#   6. one build for machines with and without CUDA: libgpufilt.so needs no
#      CUDA library (the CUDA module, libgpufilt-cuda.so, is installed
#      beside it and loaded at run time); a shared link needs no FFT or
#      CUDA development files (pkg-config and CMake with nothing else in
#      sight); the installed gpufilt finds the module, and says in one
#      line, exit 5, when --device cuda cannot have it
# Each program's output must equal the build tree's embed_example output;
# the shared library must carry its SONAME and export only gf_* functions.
#
#   examples/check_install.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=${2:-$(mktemp -d)}
rm -rf "$W" && mkdir -p "$W"
fails=0
fail() { echo "check_install: FAIL: $*" >&2 && fails=$((fails + 1)); }
ok() { echo "check_install: ok: $*"; }

PREFIX=$W/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$W/install.log"
LIBDIR=$(dirname "$(find "$PREFIX" -name libgpufilt.a | head -n 1)")
[ -n "$LIBDIR" ] || { fail "no libgpufilt.a installed" && exit 1; }
want=$("$BUILD/embed_example" cpu)

# The shared library: SONAME, and nothing but gpufilt.h's functions exported.
so=$(readlink -f "$LIBDIR/libgpufilt.so")
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libgpufilt.so.0.6" ] && ok "SONAME $soname" || fail "SONAME '$soname'"
others=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^gf_/ { print $3 }' | grep -v '^GPUFILT_' || true)
[ -z "$others" ] && ok "exports only gf_*" || fail "exports besides gf_*: $(echo "$others" | head -5 | tr '\n' ' ')"

# No CUDA library needed by libgpufilt.so: a machine without them runs it.
cuda_needed=$(readelf -d "$so" | grep -E "NEEDED.*(libcufft|libcudart|libcuda\.)" || true)
[ -z "$cuda_needed" ] && ok "libgpufilt.so needs no CUDA library" ||
    fail "libgpufilt.so needs CUDA libraries: $(echo "$cuda_needed" | sed 's/.*\[//; s/\]//' | tr '\n' ' ')"
if [ -f "$BUILD/libgpufilt-cuda.so" ]; then
    [ -f "$LIBDIR/libgpufilt-cuda.so" ] && ok "CUDA module installed beside libgpufilt.so" ||
        fail "no libgpufilt-cuda.so installed in $LIBDIR"
fi

# The static library is position-independent: it links into a plugin.
cc -shared -o "$W/plugin.so" -Wl,--whole-archive "$LIBDIR/libgpufilt.a" -Wl,--no-whole-archive \
    2>"$W/plugin.log" && ok "libgpufilt.a links into a shared object" ||
    fail "libgpufilt.a is not position-independent: $(head -n 2 "$W/plugin.log")"

run() { # run NAME PROGRAM: its output must be the build's
    local got
    got=$("$2" cpu) || { fail "$1: exit $?" && return; }
    [ "$got" = "$want" ] && ok "$1" || fail "$1: output differs: $got"
}

export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
# shellcheck disable=SC2046
cc "$SRC/examples/embed.c" -o "$W/pc_shared" $(pkg-config --cflags --libs gpufilt) -lm \
    -Wl,-rpath,"$LIBDIR" && run "pkg-config, shared" "$W/pc_shared"
! readelf -d "$W/pc_shared" | grep -q "libgpufilt.so.0.6" && fail "pkg-config, shared: not linked to libgpufilt.so.0.6"
# A shared link asks for nothing but gpufilt: with only its .pc in sight
# (no FFTW or CUDA development files), pkg-config answers.
if flags=$(PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig PKG_CONFIG_PATH= pkg-config --cflags --libs gpufilt 2>&1); then
    case $flags in
    *fftw* | *cufft* | *cudart*) fail "pkg-config --libs gpufilt asks for more than -lgpufilt: $flags" ;;
    *-lgpufilt*) ok "pkg-config --cflags --libs gpufilt with nothing else installed" ;;
    *) fail "pkg-config --libs gpufilt: $flags" ;;
    esac
else
    fail "pkg-config --cflags --libs gpufilt needs other packages: $flags"
fi
# The shared program's closure holds no CUDA library, and it runs without
# any library path set.
if ldd "$W/pc_shared" | grep -qE "libcufft|libcudart"; then
    fail "pkg-config, shared: loads CUDA libraries: $(ldd "$W/pc_shared" | grep -E "libcufft|libcudart" | tr -s ' \t' ' ')"
else
    env -u LD_LIBRARY_PATH "$W/pc_shared" cpu >/dev/null && ok "pkg-config, shared: no CUDA library loaded" ||
        fail "pkg-config, shared: does not run without LD_LIBRARY_PATH"
fi
# shellcheck disable=SC2046
cc "$SRC/examples/embed.c" -o "$W/pc_static" $(pkg-config --cflags gpufilt) \
    -Wl,--push-state,-Bstatic -lgpufilt -Wl,--pop-state \
    $(pkg-config --static --libs gpufilt | sed 's/ -lgpufilt / /') -lm &&
    run "pkg-config, static" "$W/pc_static"
readelf -d "$W/pc_static" | grep -q "libgpufilt.so" && fail "pkg-config, static: linked to libgpufilt.so"

cmake -S "$SRC/examples/consumer" -B "$W/consumer" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_BUILD_RPATH="$LIBDIR" >"$W/consumer.log" 2>&1 &&
    cmake --build "$W/consumer" >>"$W/consumer.log" 2>&1 ||
    { fail "CMake consumer did not build (see $W/consumer.log)" && tail -5 "$W/consumer.log"; }
[ -x "$W/consumer/embed_shared" ] && run "CMake gpufilt::gpufilt" "$W/consumer/embed_shared"
[ -x "$W/consumer/embed_static" ] && run "CMake gpufilt::gpufilt_static" "$W/consumer/embed_static"
# find_package(gpufilt) for the shared library alone, with no other
# package's pkg-config files in sight (no FFTW, no CUDA toolkit needed).
PKG_CONFIG_LIBDIR=$W/nothing PKG_CONFIG_PATH= cmake -S "$SRC/examples/consumer" -B "$W/consumer-shared" \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_RPATH="$LIBDIR" -DWITH_STATIC=OFF \
    >"$W/consumer-shared.log" 2>&1 && cmake --build "$W/consumer-shared" >>"$W/consumer-shared.log" 2>&1 &&
    run "CMake gpufilt::gpufilt, nothing else installed" "$W/consumer-shared/embed_shared" ||
    { fail "CMake shared-only consumer did not build (see $W/consumer-shared.log)" && tail -5 "$W/consumer-shared.log"; }

if [ -x "$PREFIX/bin/gpufilt" ]; then
    v=$(env -u LD_LIBRARY_PATH "$PREFIX/bin/gpufilt" --version | head -n 1) &&
        ok "installed gpufilt runs: $v" || fail "installed gpufilt does not run"
    if [ -f "$LIBDIR/libgpufilt-cuda.so" ]; then
        case $v in
        *cuda*) ok "installed gpufilt loads the installed CUDA module" ;;
        *) fail "installed gpufilt does not list cuda: $v" ;;
        esac
    fi
    # Without the module: --device cuda says so in one line, exit 5;
    # --device auto runs on the cpu.
    rc=0
    printf '\0\0\200\77' | GPUFILT_CUDA_MODULE=$W/none/libgpufilt-cuda.so "$PREFIX/bin/gpufilt" - - \
        --raw f32le --channels 1 --taps 1 --device cuda >"$W/nomod.out" 2>"$W/nomod.err" || rc=$?
    if [ -f "$LIBDIR/libgpufilt-cuda.so" ]; then
        want_err="gpufilt: error: --device cuda: the CUDA module $W/none/libgpufilt-cuda.so could not be loaded: cannot open shared object file: No such file or directory"
    else
        want_err="gpufilt: error: --device cuda: this gpufilt was built without CUDA"
    fi
    [ "$rc" = 5 ] && [ "$(cat "$W/nomod.err")" = "$want_err" ] && ok "no CUDA module: --device cuda, exit 5, one line" ||
        fail "no CUDA module: --device cuda: exit $rc, '$(cat "$W/nomod.err")', not exit 5 '$want_err'"
    got=$(printf '\0\0\200\77' | GPUFILT_CUDA_MODULE=$W/none/libgpufilt-cuda.so "$PREFIX/bin/gpufilt" - - \
        --raw f32le --channels 1 --taps 1 --device auto 2>"$W/nomod-auto.err" | od -An -tx1 | tr -d ' \n')
    [ "$got" = "0000803f" ] && ok "no CUDA module: --device auto runs on the cpu" ||
        fail "no CUDA module: --device auto gave '$got' ($(cat "$W/nomod-auto.err"))"
fi
# Bash completion: options from the installed gpufilt's --help, fixed values.
comp=$PREFIX/share/bash-completion/completions/gpufilt
if [ -x "$PREFIX/bin/gpufilt" ]; then
    if [ -f "$comp" ]; then
        got=$(bash -c 'source "$1"; COMP_WORDS=("$2" in.wav out.wav --meth); COMP_CWORD=3; _gpufilt
                       printf "%s " "${COMPREPLY[@]}"; COMP_WORDS=("$2" --method ""); COMP_CWORD=2
                       _gpufilt; printf "| %s " "${COMPREPLY[@]}"' _ "$comp" "$PREFIX/bin/gpufilt")
        [ "$got" = "--method | auto | direct | fft | nupc " ] && ok "bash completion" ||
            fail "bash completion gave '$got'"
    else
        fail "no bash completion installed"
    fi
fi
# The manual page, installed with the command, where man finds it.
if [ -x "$PREFIX/bin/gpufilt" ]; then
    [ -f "$PREFIX/share/man/man1/gpufilt.1" ] && ok "man page share/man/man1/gpufilt.1" ||
        fail "no man page installed (share/man/man1/gpufilt.1)"
fi
[ "$fails" -eq 0 ] && echo "check_install: all passed" || echo "check_install: $fails failed"
[ "$fails" -eq 0 ]
