#!/usr/bin/env bash
# --json-summary: one JSON object per run, success or failure, with the
# numbers the run had and the warnings and errors it printed.
source "$(dirname "$0")/lib.sh" "$@"

"$SFTOOL" gen in.wav wav16 2 48000 48000 noise
E='gpufilt: error: '

# field FILE KEY[.KEY...]: the value, as JSON (strings quoted).
field() {
    python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v))' "$1" "$2"
}

# A plain run, the summary on standard output (one line).
"$GPUFILT" in.wav out.wav --taps 5 --device cpu --quiet --json-summary - >s.json
assert_eq "one line" "$(wc -l <s.json)" 1
assert_eq "exit_code" "$(field s.json exit_code)" 0
assert_eq "frames_in" "$(field s.json frames_in)" 48000
assert_eq "frames_out" "$(field s.json frames_out)" 48000
assert_eq "channels, rate" "$(field s.json channels) $(field s.json rate)" "2 48000"
assert_eq "taps, filter" "$(field s.json taps) $(field s.json filter)" '5 "mean"'
assert_eq "method, backend" "$(field s.json method) $(field s.json backend)" '"direct" "cpu"'
assert_eq "fft_wisdom" "$(field s.json fft_wisdom)" null
assert_eq "output format" "$(field s.json output_format)" '"WAV (Microsoft) / Signed 16 bit PCM"'
assert_eq "verify, warnings, errors" \
    "$(field s.json verify) $(field s.json warnings) $(field s.json errors)" "null [] []"

# Clipping: the count and the warning as printed.
printf '4\n' >gain.txt
expect 0 "gpufilt: warning: *" in.wav loud.wav --coeffs gain.txt \
    --quiet --json-summary loud.json
clipped=$(sed -n "s/^gpufilt: warning: \([0-9]*\) samples clipped.*/\1/p" stderr.txt)
[ "${clipped:-0}" -gt 0 ] && pass || fail "no clip count in: $(cat stderr.txt)"
assert_eq "clipped" "$(field loud.json clipped)" "$clipped"
assert_eq "warnings" "$(field loud.json warnings)" "[\"$clipped samples clipped in 'loud.wav'\"]"

# --verify, direct method: against the serial reference.
expect 0 "*" in.wav v.wav --taps 63 --verify --json-summary v.json
assert_eq "verify: against" "$(field v.json verify.against)" '"serial reference"'
assert_eq "verify: compared, differ" \
    "$(field v.json verify.compared) $(field v.json verify.differ)" "96000 0"

# --verify, FFT method: against exact sums, within the bound.
expect 0 "*" in.wav f.wav --taps 5000 --method fft --verify --json-summary f.json
assert_eq "fft: method, partition" "$(field f.json method) $(field f.json partition)" '"fft" 512'
assert_eq "fft verify: every output" \
    "$(field f.json verify.against) $(field f.json verify.all) $(field f.json verify.compared)" \
    '"exact sums" true 96000'
python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["verify"]
sys.exit(0 if 0 <= v["max_abs_error"] <= v["bound"] and v["ratio"] <= 1
         and v["nonfinite_differ"] == 0 else 1)' f.json &&
    pass || fail "fft verify: error above its bound in f.json"

# --verify, NUPC method (--device auto runs it on the cpu): exact sums too,
# within its bound; partition is its first, B.
expect 0 "*" in.wav n.wav --taps 5000 --method nupc --partition 64 --verify --json-summary n.json
assert_eq "nupc: method, partition, backend" \
    "$(field n.json method) $(field n.json partition) $(field n.json backend)" '"nupc" 64 "cpu"'
assert_eq "nupc verify: every output" \
    "$(field n.json verify.against) $(field n.json verify.all) $(field n.json verify.compared)" \
    '"exact sums" true 96000'
python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["verify"]
sys.exit(0 if 0 <= v["max_abs_error"] <= v["bound"] and v["ratio"] <= 1
         and v["nonfinite_differ"] == 0 else 1)' n.json &&
    pass || fail "nupc verify: error above its bound in n.json"

# A failure: the exit code and the error; no engine, so no method.
expect 3 "${E}cannot open input 'nothere.wav': No such file or directory" nothere.wav x.wav \
    --taps 5 --json-summary fail.json
assert_eq "failure: exit_code" "$(field fail.json exit_code)" 3
assert_eq "failure: errors" "$(field fail.json errors)" \
    "[\"cannot open input 'nothere.wav': No such file or directory\"]"
assert_eq "failure: method, output_format" \
    "$(field fail.json method) $(field fail.json output_format)" "null null"
expect_no_output x.wav
# What a run that failed before its input was open never learned is null,
# as the README says, not 0 or "": a design's taps, channels, rate, the
# backend, why it was chosen, the engine's time.
expect 3 "${E}cannot open input 'nothere.wav': No such file or directory" nothere.wav x.wav \
    --lowpass 1k --json-summary fail2.json
python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
print(" ".join(k + "=" + json.dumps(v[k]) for k in sys.argv[2:]))' fail2.json taps filter channels \
    rate method partition backend why handoff engine_seconds frames_in frames_out verify >fields.txt
assert_eq "failure: nulls" "$(cat fields.txt)" 'taps=null filter="design" channels=null rate=null method=null partition=null backend=null why=null handoff=null engine_seconds=null frames_in=0 frames_out=0 verify=null'
# --device cpu: no choice made, so no reason for one.
"$GPUFILT" in.wav out.wav --taps 5 --device cpu --quiet --json-summary cpu.json
assert_eq "--device cpu: why" "$(field cpu.json why) $(field cpu.json backend)" 'null "cpu"'

# Names are escaped as on the terminal, and the result is valid JSON.
cp in.wav "$(printf 'a"b\\c\001.wav')"
expect 0 "" "$(printf 'a"b\\c\001.wav')" esc.wav --taps 1 --quiet --json-summary esc.json
assert_eq "escaped name" "$(field esc.json input)" '"a\"b\\c\\x01.wav"'

# Usage errors.
expect 2 "${E}--json-summary -: standard output is OUT already (give the summary a file)" \
    in.wav - --out-raw f32le --taps 5 --json-summary -
expect 2 "${E}--json-summary names OUT: give the summary its own file" \
    in.wav same.json --taps 5 --json-summary same.json
expect 2 "${E}--json-summary is for IN and OUT, not --live" --live --taps 5 --json-summary s.json
finish
