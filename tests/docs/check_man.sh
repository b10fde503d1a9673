#!/usr/bin/env bash
# The manual page docs/gpufilt.1 against the program:
#   1. groff formats it without a single warning (-ww; tbl for its table);
#   2. rendered at 80 columns, no line is wider than 80;
#   3. every long option `gpufilt --help` prints is in the page, and every
#      long option the page names is one --help prints (the page writes
#      them as \-\-name, never as a bare --name, which roff may render with
#      hyphens that cannot be copied into a shell);
#   4. every short option --help pairs with a long one (-t, --taps) is in
#      the page as \-t.
# Prints what is wrong and exits 1; needs groff (Debian: groff-base) or man
# (man-db, which depends on groff-base).
#
#   tests/docs/check_man.sh GPUFILT_BINARY [PAGE]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 GPUFILT_BINARY [PAGE]" >&2 && exit 2; }
BIN=$1
PAGE=${2:-$(cd "$(dirname "$0")/../.." && pwd)/docs/gpufilt.1}
[ -f "$PAGE" ] || { echo "check_man: FAIL: no manual page '$PAGE'" >&2 && exit 1; }
fails=0
fail() { echo "check_man: FAIL: $*" >&2 && fails=$((fails + 1)); }
ok() { echo "check_man: ok: $*"; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# 1. Warnings: any output on stderr fails.
if command -v groff >/dev/null; then
    lint="groff -t -man -ww -z (-Tutf8 and -Tascii)"
    for dev in utf8 ascii; do
        groff -t -man -T"$dev" -ww -z "$PAGE" 2>>"$W/lint" >/dev/null || true
    done
    render() { groff -t -man -Tascii -rLL=78n -P-cbou "$PAGE" 2>/dev/null; }
elif command -v man >/dev/null; then
    lint="man --warnings -l"
    man --warnings -l -Tutf8 "$PAGE" 2>"$W/lint" >/dev/null || true
    render() { MANWIDTH=80 man -l -Tascii -P-cbou "$PAGE" 2>/dev/null; }
else
    echo "check_man: FAIL: neither groff nor man is installed: cannot check $PAGE" \
        "(Debian: apt-get install groff-base, or man-db)" >&2
    exit 1
fi
if [ -s "$W/lint" ]; then
    fail "$lint $PAGE warns:"
    sed 's/^/    /' "$W/lint" >&2
else
    ok "$lint: no warnings"
fi

# 2. Readable at 80 columns (ASCII rendering: one byte a column).
render >"$W/page.txt"
[ -s "$W/page.txt" ] || fail "rendering $PAGE gave no text"
wide=$(awk 'length > 80 { printf "    line %d (%d columns): %s\n", NR, length, $0 }' "$W/page.txt")
if [ -n "$wide" ]; then
    fail "lines wider than 80 columns:"
    echo "$wide" >&2
else
    ok "fits 80 columns"
fi

# 3. Long options, both ways. The page's come from its roff source without
# comment lines: \-\-name with \- inside, the help's from --help's text.
"$BIN" --help >"$W/help.txt" || { fail "'$BIN --help' failed" && exit 1; }
grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' "$W/help.txt" | sort -u >"$W/help.opts"
[ -s "$W/help.opts" ] || { fail "no options in '$BIN --help'" && exit 1; }
grep -vE '^[.'"'"']\\"' "$PAGE" >"$W/page.roff"
grep -oE '\\-\\-[a-z][a-z0-9]*(\\-[a-z0-9]+)*' "$W/page.roff" | sed 's/\\-/-/g' |
    sort -u >"$W/page.opts"
missing=$(comm -23 "$W/help.opts" "$W/page.opts")
unknown=$(comm -13 "$W/help.opts" "$W/page.opts")
if [ -n "$missing" ]; then
    fail "options --help lists that the page lacks: ${missing//$'\n'/ }"
else
    ok "all $(wc -l <"$W/help.opts") long options of --help are in the page"
fi
if [ -n "$unknown" ]; then
    fail "options the page names that --help does not list: ${unknown//$'\n'/ }"
else
    ok "the page names no option --help lacks"
fi
# A bare --name (or \-name-with-hyphens) in the text is not an option's roff.
bare=$(grep -nE -- '(^|[^\\a-zA-Z0-9])--[a-z]|\\-\\-[a-z0-9]+-[a-z]' "$W/page.roff" || true)
if [ -n "$bare" ]; then
    fail "options not written as \\-\\-name:"
    while IFS= read -r line; do echo "    $line"; done <<<"$bare" >&2
else
    ok "every option is written as \\-\\-name"
fi

# 4. Short options, as --help pairs them: "  -t, --taps N".
short_missing=""
while read -r s; do
    grep -qE -- "\\\\${s}([^a-zA-Z0-9]|$)" "$W/page.roff" || short_missing="$short_missing $s"
done < <(sed -nE 's/^ +(-[a-zA-Z]), --[a-z].*/\1/p' "$W/help.txt" | sort -u)
if [ -n "$short_missing" ]; then
    fail "short options --help lists that the page lacks:$short_missing"
else
    ok "short options of --help are in the page"
fi

[ "$fails" -eq 0 ] && echo "check_man: all passed" || echo "check_man: $fails failed"
[ "$fails" -eq 0 ]
