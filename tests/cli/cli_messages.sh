#!/usr/bin/env bash
# Messages and options: names and strings from the command line and from
# files are escaped for the terminal; every number a double holds is a
# number; libsndfile's own phrases are translated; an option given twice,
# or one that would do nothing, is an error; a loss of precision is said
# once.
source "$(dirname "$0")/lib.sh" "$@"
E='gpufilt: error: '
W='gpufilt: warning: '
"$SFTOOL" gen in.wav wav16 2 48000 4800 noise

# --- Control characters and invalid UTF-8 are escaped, valid UTF-8 is not.
esc=$(printf 'a\033[2Jb')
expect 3 "${E}cannot open input 'a\\x1b[2Jb.wav': No such file or directory" "$esc.wav" out.wav --taps 5
expect 3 "${E}cannot open input 'x\\xffy\\x0az.wav': No such file or directory" "$(printf 'x\377y\nz').wav" out.wav --taps 5
# U+202E (right-to-left override) would show "evil.exe.wav" backwards.
expect 3 "${E}cannot open input 'evil\\u202evaw.exe': No such file or directory" "$(printf 'evil\342\200\256vaw.exe')" out.wav --taps 5
# An overlong encoding of '/' and a lone continuation byte are not UTF-8.
expect 3 "${E}cannot open input '\\xc0\\xaf\\x80.wav': No such file or directory" "$(printf '\300\257\200').wav" out.wav --taps 5
expect 3 "${E}cannot open input 'Müller ♪.wav': No such file or directory" 'Müller ♪.wav' out.wav --taps 5
# Strings from a file's content, and the summary line.
printf '0.5\n\033[2J\n' >esc.txt
expect 2 "${E}esc.txt:2: '\\x1b[2J' is not a number" in.wav out.wav --coeffs esc.txt
cp in.wav "$esc.wav"
"$GPUFILT" "$esc.wav" sum.wav --taps 5 --device cpu 2>stderr.txt
case "$(head -n 1 stderr.txt)" in
"gpufilt: a\\x1b[2Jb.wav -> sum.wav: 4800 frames x 2 ch at 48000 Hz, 5 taps (mean)"*) pass ;;
*) fail "summary line: '$(head -n 1 stderr.txt)'" ;;
esac
if grep -q "$(printf '\033')" stderr.txt; then fail "an escape character reached stderr"; else pass; fi

# --- libsndfile's phrases in our words.
echo "just some text" >text.wav
expect 3 "${E}input 'text.wav' is not an audio file libsndfile can read (not a format libsndfile knows)" text.wav out.wav --taps 5
finish
