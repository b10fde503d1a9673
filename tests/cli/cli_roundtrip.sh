#!/usr/bin/env bash
# A 1-tap identity filter gives back every sample exactly, in every format,
# for several channel counts, and the output keeps the input's format.
source "$(dirname "$0")/lib.sh" "$@"

for fmt in wav16 wav24 wavu8 wavf wavd aiff16 flac16 flac24; do
    case $fmt in aiff*) ext=aiff ;; flac*) ext=flac ;; *) ext=wav ;; esac
    for ch in 1 2 6; do
        "$SFTOOL" gen "in_$fmt$ch.$ext" "$fmt" "$ch" 44100 30011 noise
        # Doubles need f64 arithmetic to come back exactly.
        prec=f32
        [ $fmt != wavd ] || prec=f64
        "$GPUFILT" "in_$fmt$ch.$ext" "out_$fmt$ch.$ext" --taps 1 --precision $prec --quiet
        if "$SFTOOL" cmp "in_$fmt$ch.$ext" "out_$fmt$ch.$ext"; then pass; else fail "$fmt x $ch"; fi
        # Same container and sample type as the input.
        assert_eq "$fmt x $ch format" "$("$SFTOOL" format "out_$fmt$ch.$ext")" \
            "$("$SFTOOL" format "in_$fmt$ch.$ext")"
    done
done
# 32-bit PCM needs f64 to be exact.
"$SFTOOL" gen in32.wav wav32 2 48000 20000 noise
"$GPUFILT" in32.wav out32.wav --taps 1 --precision f64 --quiet
if "$SFTOOL" cmp in32.wav out32.wav; then pass; else fail "wav32 f64 identity"; fi
# Every backend and chunk size, f32 and f64, the same bytes.
for dev in ref cpu; do
    for chunk in 1 7 4096; do
        "$GPUFILT" in_wav242.wav "o_$dev$chunk.wav" --taps 1 --device $dev --chunk $chunk --quiet
        if "$SFTOOL" cmp in_wav242.wav "o_$dev$chunk.wav"; then pass; else fail "$dev chunk $chunk"; fi
    done
done
# Ogg: Vorbis by default, Opus for a .opus name or --out-format opus.
"$SFTOOL" gen in_ogg.wav wav16 2 48000 4800 noise
for o in "o.ogg" "o.opus" "o2.oga --out-format opus" "o3.ogg --out-format ogg:opus"; do
    set -- $o
    "$GPUFILT" in_ogg.wav "$@" --taps 5 --quiet
    want="OGG (OGG Container format) / $([ "$1" = o.ogg ] && echo Vorbis || echo Opus)"
    assert_eq "codec of $o" "$("$SFTOOL" format "$1")" "$want"
done
finish
