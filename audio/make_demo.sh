#!/usr/bin/env bash
# Regenerates audio/demo.wav: 4 s, 48 kHz, stereo, 16-bit PCM. A short
# melody of sine tones with white noise on top, so a low-pass (mean) filter
# audibly removes the hiss while the tune stays. Needs sox; -R makes sox's
# noise and dither repeatable, so the file is the same on every run.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
notes=(262 330 392 523 392 330 262 196)
parts=()
for i in "${!notes[@]}"; do
    sox -R -n -r 48000 -c 1 -b 16 "$tmp/n$i.wav" synth 0.5 sine "${notes[$i]}" fade 0.02 0.5 0.05 vol 0.5
    parts+=("$tmp/n$i.wav")
done
sox -R "${parts[@]}" "$tmp/tune.wav"
# Left: tune + noise; right: the tune a touch later + its own noise.
sox -R -n -r 48000 -c 1 -b 16 "$tmp/noiseL.wav" synth 4 whitenoise vol 0.12
sox -R -n -r 48000 -c 1 -b 16 "$tmp/noiseR.wav" synth 4 pinknoise vol 0.15
sox -R -m "$tmp/tune.wav" "$tmp/noiseL.wav" "$tmp/left.wav"
sox -R "$tmp/tune.wav" "$tmp/tune_late.wav" pad 0.03 trim 0 4
sox -R -m "$tmp/tune_late.wav" "$tmp/noiseR.wav" "$tmp/right.wav"
sox -R -M "$tmp/left.wav" "$tmp/right.wav" -b 16 demo.wav
soxi demo.wav
