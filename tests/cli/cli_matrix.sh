#!/usr/bin/env bash
# Matrix impulse responses: a 2-channel input through a 2 x 2 (LL, LR, RL,
# RR) filter and a mono input through a 1 x 2 one, against golden outputs
# computed with numpy (matrix/gen.py; samples and taps of few bits, so the
# exact sums are the f32 and f64 results of the direct method, compared
# bit for bit); the FFT method within a stated tolerance; --verify; the
# dry path; the output's channels; the JSON fields; the refusals.
source "$(dirname "$0")/lib.sh" "$@"
D=$(cd "$(dirname "$0")/matrix" && pwd)

# f32le FILE.txt OUT: a text file's numbers (rows of frames) as f32le
# (every number here is exact in f32).
f32le() {
    python3 -c 'import struct, sys
v = [float(t) for t in open(sys.argv[1]).read().split()]
open(sys.argv[2], "wb").write(struct.pack("<%df" % len(v), *v))' "$1" "$2"
}
# against GOLDEN.txt OUT.raw BYTES: "COUNT MAXERR" of a raw output of f32le
# (4) or f64le (8) samples against the golden numbers (count: both's).
against() {
    python3 -c 'import struct, sys
g = [float(t) for t in open(sys.argv[1]).read().split()]
b = open(sys.argv[2], "rb").read()
w = int(sys.argv[3])
y = struct.unpack("<%d%s" % (len(b) // w, "f" if w == 4 else "d"), b)
if len(y) != len(g):
    print("%d of %d" % (len(y), len(g)))
else:
    print(len(y), repr(max(abs(a - c) for a, c in zip(y, g))))' "$1" "$2" "$3"
}
# within NAME "COUNT MAXERR" COUNT TOL
within() {
    local n=${2%% *} e=${2#* }
    if [ "$n" = "$3" ] && awk -v e="$e" -v t="$4" 'BEGIN { exit !(e <= t) }'; then pass
    else fail "$1: got '$2', expected $3 samples within $4"; fi
}

f32le "$D/in2.txt" in2.f32
python3 -c 'import struct, sys
v = [float(l.split()[0]) for l in open(sys.argv[1]) if l.strip()]
open(sys.argv[2], "wb").write(struct.pack("<%df" % len(v), *v))' "$D/in2.txt" in1.f32
N=500 T=17
frames() { [ "$1" = full ] && echo $((N + T - 1)) || echo $N; }

# 2 x 2, direct: the exact sums, bit for bit, in f32 and f64, every mode;
# --verify: bit-exact with the serial reference given the same expansion
# and sums.
for p in f32 f64; do
    w=$([ $p = f32 ] && echo 4 || echo 8)
    for mode in same causal full; do
        "$GPUFILT" in2.f32 y.raw --raw f32le -c 2 --out-raw ${p}le --coeffs "$D/h4.txt" \
            --precision $p --mode $mode --method direct --verify >out.txt 2>&1
        assert_eq "2x2 direct $p $mode" "$(against "$D/y22_$mode.txt" y.raw "$w")" "$((2 * $(frames $mode))) 0.0"
        assert_eq "2x2 direct $p $mode --verify" "$(grep "^verify: [0-9]" out.txt)" \
            "verify: $((2 * $(frames $mode))) samples, max |error| 0, max ulp 0: bit-exact with the reference"
    done
done
# The summary line names the layout.
assert_eq "2x2 summary" "$(grep -o '17 taps ([^)]*)' out.txt)" "17 taps (matrix 2x2: 2 ch out)"

# 2 x 2, FFT: within 1e-4 (f32) and 1e-12 (f64) of the exact sums (outputs
# up to about 10), and --verify's exact sums of the 2 outputs within their
# bound. On the cpu backend the library sums on spectra (gf_config.outputs:
# 2 transforms of input and 2 back a partition, not 4 and 4); partition 16
# makes 2 partitions of the 17 taps, so each output sums 2 x 2 products.
for p in f32 f64; do
    w=$([ $p = f32 ] && echo 4 || echo 8)
    tol=$([ $p = f32 ] && echo 1e-4 || echo 1e-12)
    for mode in same causal full; do
        for part in 64 16; do
            rc=0
            "$GPUFILT" in2.f32 y.raw --raw f32le -c 2 --out-raw ${p}le --coeffs "$D/h4.txt" \
                --precision $p --mode $mode --method fft --partition $part --device cpu --verify \
                --json-summary s.json >out.txt 2>&1 || rc=$?
            assert_eq "2x2 fft $p $mode P $part: exit" "$rc" 0
            within "2x2 fft $p $mode P $part" "$(against "$D/y22_$mode.txt" y.raw "$w")" \
                "$((2 * $(frames "$mode")))" "$tol"
            assert_eq "2x2 fft $p $mode P $part --verify" "$(grep -c 'within the bound' out.txt)" 1
            assert_eq "2x2 fft $p $mode P $part: outputs checked" \
                "$(grep -o 'for all [0-9]* outputs' out.txt)" "for all $((2 * $(frames "$mode"))) outputs"
        done
    done
done
assert_eq "2x2 fft: the summary says where the sums are taken" \
    "$(grep -o '17 taps ([^)]*)' out.txt)" "17 taps (matrix 2x2, summed on spectra: 2 ch out)"
assert_eq "2x2 fft: JSON matrix_sums" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["matrix_sums"])' s.json)" spectra
# The NUPC method has no matrix in the library: the engine filters the 4
# channels and the command sums them (the same sums within the bound).
"$GPUFILT" in2.f32 y.raw --raw f32le -c 2 --out-raw f64le --coeffs "$D/h4.txt" --precision f64 \
    --method nupc --partition 16 --device cpu --quiet --json-summary s.json
within "2x2 nupc f64" "$(against "$D/y22_same.txt" y.raw 8)" "$((2 * N))" 1e-12
assert_eq "2x2 nupc: JSON matrix_sums" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["matrix_sums"])' s.json)" samples

# 1 x 2: mono in, stereo out, the exact sums; a WAV output has 2 channels.
for mode in same causal full; do
    "$GPUFILT" in1.f32 y.raw --raw f32le -c 1 --out-raw f32le --coeffs "$D/h2.txt" --mode $mode \
        --method direct --verify >out.txt 2>&1
    assert_eq "1x2 direct $mode" "$(against "$D/y12_$mode.txt" y.raw 4)" "$((2 * $(frames $mode))) 0.0"
    assert_eq "1x2 direct $mode --verify" "$(grep "^verify: [0-9]" out.txt)" \
        "verify: $((2 * $(frames $mode))) samples, max |error| 0, max ulp 0: bit-exact with the reference"
done
"$GPUFILT" in1.f32 y.raw --raw f32le -c 1 --out-raw f64le --coeffs "$D/h2.txt" --precision f64 \
    --method fft --partition 64 --quiet
within "1x2 fft f64 same" "$(against "$D/y12_same.txt" y.raw 8)" $((2 * N)) 1e-12

# From an impulse response file: the 4-channel taps as a WAV of doubles
# (written by a 1-tap unity filter, a copy), on a 48 kHz input: the same
# bytes as the coefficient file's; the output WAV has 2 channels.
f32le "$D/h4.txt" h4.f32
"$GPUFILT" h4.f32 ir4.wav --raw f32le -c 4 -r 48000 --taps 1 --out-format wav:double --quiet
"$GPUFILT" in1.f32 mono.wav --raw f32le -c 1 -r 48000 --taps 1 --out-format wav:double --quiet
f32le "$D/h2.txt" h2.f32
"$GPUFILT" h2.f32 ir2.wav --raw f32le -c 2 -r 48000 --taps 1 --out-format wav:double --quiet
"$GPUFILT" mono.wav st.wav --ir ir2.wav --precision f64 --out-format wav:double --quiet \
    --json-summary s.json
assert_eq "1x2 --ir: output frames" "$("$SFTOOL" frames st.wav)" $N
assert_eq "1x2 --ir: the golden outputs" "$("$SFTOOL" dump st.wav | tr '\t' ' ')" "$(tr '\t' ' ' <"$D/y12_same.txt")"
json() { python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s["ir_layout"], s["channels"], s["channels_out"], s["frames_out"])' "$1"; }
assert_eq "1x2 JSON" "$(json s.json)" "matrix 1x2 1 2 $N"
"$GPUFILT" in2.f32 y.raw --raw f32le -c 2 -r 48000 --out-raw f64le --ir ir4.wav --precision f64 \
    --mode full --quiet --json-summary s.json
assert_eq "2x2 --ir" "$(against "$D/y22_full.txt" y.raw 8)" "$((2 * (N + T - 1))) 0.0"
assert_eq "2x2 JSON" "$(json s.json)" "matrix 2x2 2 2 $((N + T - 1))"
"$GPUFILT" in2.f32 y.raw --raw f32le -c 2 --out-raw f64le --coeffs "$D/h2.txt" --quiet --json-summary s.json
assert_eq "per-channel JSON" "$(json s.json)" "per channel 2 2 $N"

# Through pipes, mono in and stereo out: the bytes of the file run.
"$GPUFILT" in1.f32 y.raw --raw f32le -c 1 --out-raw f32le --coeffs "$D/h2.txt" --quiet
"$GPUFILT" - - --raw f32le -c 1 --coeffs "$D/h2.txt" --quiet <in1.f32 >ypipe.raw
if cmp -s y.raw ypipe.raw; then pass; else fail "1x2 through pipes: not the file run's bytes"; fi
# --normalize measures and scales both outputs of a 1 x 2: their peak at -1 dBFS
# within 0.01 dB.
"$GPUFILT" in1.f32 n.wav --raw f32le -c 1 -r 48000 --coeffs "$D/h2.txt" --normalize -1dBFS \
    --out-format wav:float --quiet
peak=$("$SFTOOL" dump n.wav | awk '{ for (i = 1; i <= NF; i++) { v = $i < 0 ? -$i : $i; if (v > m) m = v } }
    END { printf "%d %.2f", NF, 20 * log(m) / log(10) }')
assert_eq "1x2 --normalize -1dBFS: channels, peak dBFS" "$peak" "2 -1.00"

# The dry path of a 2 x 2 goes from each input into its own output only:
# --mix 0.5, causal (dry tap 0): y = 0.5 x + 0.5 (the matrix's output),
# exactly (binary fractions).
"$GPUFILT" in2.f32 y.raw --raw f32le -c 2 --out-raw f64le --coeffs "$D/h4.txt" --precision f64 \
    --mode causal --mix 0.5 --quiet
python3 -c 'import sys
x = open(sys.argv[1]).read().split(); w = open(sys.argv[2]).read().split()
print(" ".join(repr(0.5 * float(a) + 0.5 * float(b)) for a, b in zip(x, w)))' "$D/in2.txt" "$D/y22_causal.txt" >mix.txt
python3 -c 'import struct, sys
v = [float(t) for t in open(sys.argv[1]).read().split()]
open(sys.argv[2], "wb").write(struct.pack("<%dd" % len(v), *v))' mix.txt mix.f64
if cmp -s y.raw mix.f64; then pass; else fail "--mix 0.5 with a 2x2: not 0.5 x + 0.5 y"; fi

# --normalize-filter of a matrix measures each output's sum (one signal on
# every input; l1: the sum of its filters' l1, the most full-scale inputs
# reach) and scales by the largest output's: the factor against one computed
# here in Python.
for m in dc l1 l2; do
    want=$(python3 -c 'import math, sys
h = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]  # taps x (LL LR RL RR)
m = sys.argv[2]
outs = []
for o in range(2):
    cols = [(r[o], r[2 + o]) for r in h]
    if m == "l1":
        outs.append(sum(abs(a) + abs(b) for a, b in cols))
    else:
        s = [a + b for a, b in cols]
        outs.append(abs(sum(s)) if m == "dc" else math.sqrt(sum(v * v for v in s)))
print("x%.6g" % (1 / max(outs)))' "$D/h4.txt" "$m")
    "$GPUFILT" in2.f32 y.raw --raw f32le -c 2 -r 48000 --out-raw f32le --coeffs "$D/h4.txt" \
        --normalize-filter "$m" 2>stderr.txt
    got=$(sed -n "s/^gpufilt: levels: filter normalised by $m (\(x[^,]*\),.*/\1/p" stderr.txt)
    assert_eq "2x2 --normalize-filter $m: the factor of the largest output's sum" "$got" "$want"
done

# Refusals: a count that fits no layout, histograms, a dry path of 2 x 3.
printf '1 2 3\n' >c3.txt
printf '1 2 3 4 5 6\n' >c6.txt
E="gpufilt: error: "
expect 2 "${E}coefficient file 'c3.txt' has 3 columns; the input has 2 channels (give one for every channel, one per channel, or a matrix of 2 x OUTPUTS: column i*OUTPUTS+o filters input i into output o)" in2.f32 y.raw --raw f32le -c 2 --coeffs c3.txt
expect 2 "${E}--hist with a matrix response ('c6.txt', 2 x 3): not supported (the engine's histograms are of its 6 channels before they are summed)" in2.f32 y.raw --raw f32le -c 2 --coeffs c6.txt --hist h.csv
expect 2 "${E}--hist-png with a matrix response ('c6.txt', 2 x 3): not supported (the engine's histograms are of its 6 channels before they are summed)" in2.f32 y.raw --raw f32le -c 2 --coeffs c6.txt --hist-png h.png
expect 2 "${E}a dry path (--mix, --dry) needs as many outputs as inputs with a matrix response: 'c6.txt' is 2 x 3" in2.f32 y.raw --raw f32le -c 2 --coeffs c6.txt --mix 0.5

finish
