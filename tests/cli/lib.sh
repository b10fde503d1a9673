# Shared helpers for the CLI tests. Usage: source lib.sh GPUFILT SFTOOL WORKDIR
set -euo pipefail
GPUFILT=$1
SFTOOL=$2
W=$3
rm -rf "$W"
mkdir -p "$W"
cd "$W"
fails=0
passes=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}
pass() { passes=$((passes + 1)); }

# expect CODE 'EXACT STDERR' args...   (EXACT may end in '*' for a prefix match)
expect() {
    local code=$1 want=$2
    shift 2
    local rc=0
    "$GPUFILT" "$@" >stdout.txt 2>stderr.txt || rc=$?
    local got
    got=$(cat stderr.txt)
    if [ "$rc" != "$code" ]; then
        fail "gpufilt $*: exit $rc, expected $code (stderr: $got)"
        return
    fi
    case "$want" in
    *'*') [[ "$got" == "${want%\*}"* ]] || {
        fail "gpufilt $*: stderr '$got', expected prefix '${want%\*}'"
        return
    } ;;
    *) [ "$got" == "$want" ] || {
        fail "gpufilt $*: stderr '$got', expected '$want'"
        return
    } ;;
    esac
    pass
}

# No output file and no temporary file may be left behind.
expect_no_output() {
    local f
    for f in "$@"; do
        [ ! -e "$f" ] || fail "output '$f' was left behind"
    done
    if compgen -G "$W/.*.gpufilt-*" >/dev/null || compgen -G "$W/*/.*.gpufilt-*" >/dev/null; then
        fail "temporary file left behind: $(ls -a "$W" | grep gpufilt-)"
    fi
}

# assert_eq WHAT GOT WANT
assert_eq() {
    if [ "$2" == "$3" ]; then pass; else fail "$1: got '$2', expected '$3'"; fi
}

finish() {
    echo "$passes passed, $fails failed"
    [ "$fails" -eq 0 ]
}
