#!/usr/bin/env bash
# Install a build into a scratch prefix and use it as a user would:
#   1. pkg-config, shared library:  cc embed.c $(pkg-config --cflags --libs gpufilt)
#   2. pkg-config, static library:  the same with -Bstatic and --static
#   3. CMake: find_package(gpufilt) with gpufilt::gpufilt and gpufilt::gpufilt_static
#   4. the installed gpufilt command runs (its RPATH finds what it needs)
#   5. libgpufilt.a is position-independent (links into a shared object)
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
[ "$soname" = "libgpufilt.so.0.3" ] && ok "SONAME $soname" || fail "SONAME '$soname'"
others=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBR]/ && $3 !~ /^gf_/ { print $3 }' | grep -v '^GPUFILT_' || true)
[ -z "$others" ] && ok "exports only gf_*" || fail "exports besides gf_*: $(echo "$others" | head -5 | tr '\n' ' ')"

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
! readelf -d "$W/pc_shared" | grep -q "libgpufilt.so.0.3" && fail "pkg-config, shared: not linked to libgpufilt.so.0.3"
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

if [ -x "$PREFIX/bin/gpufilt" ]; then
    v=$(env -u LD_LIBRARY_PATH "$PREFIX/bin/gpufilt" --version | head -n 1) &&
        ok "installed gpufilt runs: $v" || fail "installed gpufilt does not run"
fi
# Bash completion: options from the installed gpufilt's --help, fixed values.
comp=$PREFIX/share/bash-completion/completions/gpufilt
if [ -x "$PREFIX/bin/gpufilt" ]; then
    if [ -f "$comp" ]; then
        got=$(bash -c 'source "$1"; COMP_WORDS=("$2" in.wav out.wav --meth); COMP_CWORD=3; _gpufilt
                       printf "%s " "${COMPREPLY[@]}"; COMP_WORDS=("$2" --method ""); COMP_CWORD=2
                       _gpufilt; printf "| %s " "${COMPREPLY[@]}"' _ "$comp" "$PREFIX/bin/gpufilt")
        [ "$got" = "--method | auto | direct | fft " ] && ok "bash completion" ||
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
