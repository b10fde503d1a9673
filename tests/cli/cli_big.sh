#!/usr/bin/env bash
# Outputs past 4 GiB: a WAV becomes RF64 (libsndfile's automatic
# downgrade keeps it a WAV while it stays under 4 GiB); a container whose
# sizes are 32 bits (AIFF) is refused up front when the length is known
# and stops with exit 4 before its limit otherwise; AU writes "length
# unknown" and reads back whole. Never exit 0 with a file that reads back
# short.
#
# Writes up to 4.4 GB at a time: skipped (77) with less than 6 GiB free
# where the test runs. Not registered in sanitizer builds (CMakeLists.txt).
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
BYTES=4400000000 # 1.1e9 stereo 16-bit frames
FRAMES=$((BYTES / 4))

if [ "$(df -Pk . | awk 'NR == 2 { print $4 }')" -lt $((6 << 20)) ]; then
    echo "cli_big: skipped: less than 6 GiB free in $W"
    exit 77
fi

# --- A WAV from a stream past 4 GiB: RF64, every frame there.
set +e +o pipefail
head -c $BYTES /dev/zero | "$GPUFILT" - big.wav --raw s16le -c 2 -r 48000 --taps 5 2>stderr.txt
rc=${PIPESTATUS[1]}
set -e -o pipefail
assert_eq "WAV past 4 GiB: exit status" "$rc" 0
assert_eq "WAV past 4 GiB: format reported" "$(tail -n 1 stderr.txt)" "gpufilt: output format RF64 (RIFF 64) / Signed 16 bit PCM"
assert_eq "WAV past 4 GiB: format read back" "$("$SFTOOL" format big.wav)" "RF64 (RIFF 64) / Signed 16 bit PCM"
assert_eq "WAV past 4 GiB: frames read back" "$("$SFTOOL" frames big.wav)" $FRAMES
if command -v soxi >/dev/null; then
    assert_eq "WAV past 4 GiB: samples SoX reads" "$(soxi -s big.wav)" $FRAMES
fi
rm -f big.wav

# --- AIFF: refused before anything is written when the length is known ...
truncate -s $BYTES sparse.raw
expect 4 "${E}output 'big.aiff' would hold 4.1 GiB of samples: AIFF (Apple/SGI) cannot describe more than 4 GiB; write W64, CAF or RF64 instead (e.g. --out-format caf)" \
    sparse.raw big.aiff --raw s16le -c 2 -r 48000 --taps 5
expect_no_output big.aiff
# ... a stream stops short of the limit, with nothing left behind.
set +e +o pipefail
head -c $BYTES /dev/zero | "$GPUFILT" - big.aiff --raw s16le -c 2 -r 48000 --taps 5 2>stderr.txt
rc=${PIPESTATUS[1]}
set -e -o pipefail
assert_eq "AIFF stream past 4 GiB: exit status" "$rc" 4
case "$(cat stderr.txt)" in
"${E}output 'big.aiff': AIFF (Apple/SGI) cannot describe more than 4 GiB; stopped after "*" frames (write W64, CAF or RF64 instead, e.g. --out-format caf)") pass ;;
*) fail "AIFF stream past 4 GiB: message '$(cat stderr.txt)'" ;;
esac
expect_no_output big.aiff

# --- AU: "length unknown" past 2 GiB, read back to the end.
expect 0 "" sparse.raw big.au --raw s16le -c 2 -r 48000 --taps 5 --quiet
assert_eq "AU past 4 GiB: frames read back" "$("$SFTOOL" frames big.au)" $FRAMES
rm -f big.au sparse.raw
finish
