#!/usr/bin/env bash
# What OUT names: regular files are replaced through a temporary file and a
# rename (through symbolic links: the link stays, its target is replaced);
# FIFOs, character devices, /dev/stdout and /dev/fd/N are written in place,
# never replaced; block devices, sockets and directories are refused.
source "$(dirname "$0")/lib.sh" "$@"

"$SFTOOL" gen in.wav wav16 2 48000 48000 noise
E='gpufilt: error: '
"$GPUFILT" in.wav ref.wav --taps 5 --quiet
"$GPUFILT" in.wav - --taps 5 --out-raw s16le --quiet >ref.raw
"$GPUFILT" in.wav - --taps 5 --out-format au --quiet | cat >ref.au # on a pipe: length unknown
assert_eq "reference raw size" "$(stat -c %s ref.raw)" 192000

is_link() { [ -L "$1" ] && pass || fail "$1 is no longer a symbolic link"; }
same() { cmp -s "$1" "$2" && pass || fail "$1 differs from $2"; }

# A symbolic link: its target is replaced, the link stays. Relative links
# are relative to the link's directory; a chain is followed to its end; a
# dangling link creates its target.
cp in.wav target.wav
ln -s target.wav link.wav
expect 0 "" in.wav link.wav --taps 5 --quiet
is_link link.wav
same target.wav ref.wav
mkdir -p sub/deeper
ln -s ../sub/deeper/t2.wav sub/rel.wav
ln -s sub/rel.wav chain.wav
expect 0 "" in.wav chain.wav --taps 5 --quiet
is_link chain.wav
is_link sub/rel.wav
same sub/deeper/t2.wav ref.wav
ln -s nodir/t3.wav dangling.wav
expect 4 "${E}cannot create output 'dangling.wav': directory 'nodir' does not exist" in.wav dangling.wav --taps 5
is_link dangling.wav
ln -s loop2.wav loop1.wav
ln -s loop1.wav loop2.wav
expect 4 "${E}cannot create output 'loop1.wav': Too many levels of symbolic links" in.wav loop1.wav --taps 5
mkdir adir
ln -s adir dirlink
expect 4 "${E}output 'dirlink' is a directory" in.wav dirlink --taps 5
ln -s in.wav inlink.wav
expect 4 "${E}output 'inlink.wav' is the input file" in.wav inlink.wav --taps 5
assert_eq "input untouched" "$("$SFTOOL" frames in.wav)" 48000
expect_no_output

# A FIFO with a reader waiting: written in place, and still a FIFO after.
mkfifo fifo
timeout 20 cat fifo >fifo.got &
reader=$!
expect 0 "" in.wav fifo --taps 5 --out-raw s16le --quiet
wait "$reader" || fail "the FIFO's reader got no end of stream"
[ -p fifo ] && pass || fail "the FIFO was replaced"
same fifo.got ref.raw
# A container that cannot be finished on a pipe: refused before writing,
# and the reader sees the end of the stream rather than waiting for ever.
timeout 20 cat fifo >fifo2.got &
reader=$!
expect 2 "${E}cannot write WAV (Microsoft) / Signed 16 bit PCM to 'fifo' (*" in.wav fifo --taps 5
wait "$reader" || fail "the FIFO's reader got no end of stream"
assert_eq "bytes the FIFO's reader got" "$(stat -c %s fifo2.got)" 0
[ -p fifo ] && pass || fail "the FIFO was replaced"

# /dev/stdout redirected to a file: the file gets the output (a WAV header
# can be finished there); /dev/stdout itself is not touched. A link to
# /proc/self/fd/1 takes the same path without /dev.
dev_stdout_kept() {
    if [ ! -L /dev/stdout ] && [ "$(id -u)" = 0 ]; then
        rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout # repair what a regression broke
        fail "/dev/stdout was replaced"
    fi
}
expect 0 "" in.wav /dev/stdout --taps 5 --quiet
dev_stdout_kept
cp stdout.txt devstdout.wav
same devstdout.wav ref.wav
ln -s /proc/self/fd/1 mystdout
expect 0 "" in.wav mystdout --taps 5 --quiet
same stdout.txt ref.wav
is_link mystdout
# /dev/stdout and /dev/fd/N on pipes (process substitution), raw and AU.
"$GPUFILT" in.wav /dev/stdout --taps 5 --out-raw s16le --quiet | cat >pipe.got
dev_stdout_kept
same pipe.got ref.raw
"$GPUFILT" in.wav >(cat >procsub.au) --taps 5 --out-format au --quiet
wait
sleep 0.2 # the substituted process may still be writing
same procsub.au ref.au
expect 4 "${E}output '/dev/fd/7': descriptor 7 is not open for writing" in.wav /dev/fd/7 --taps 5
rc=0
"$GPUFILT" in.wav /dev/fd/0 --taps 5 --out-raw s16le </dev/null 2>stderr.txt || rc=$?
assert_eq "exit writing to a read-only descriptor" "$rc" 4
assert_eq "message writing to a read-only descriptor" "$(cat stderr.txt)" "${E}output '/dev/fd/0': descriptor 0 is not open for writing"

# Character devices are written to, not replaced; block devices refused.
# As root, nodes made here (a null device, a loop device) keep /dev safe
# from a regression; otherwise /dev/null, which a user cannot replace.
if [ "$(id -u)" = 0 ]; then
    mknod nulldev c 1 3
    expect 0 "" in.wav nulldev --taps 5 --quiet
    [ -c nulldev ] && pass || fail "the character device was replaced"
    mknod blkdev b 7 200
    expect 4 "${E}output 'blkdev' is a block device: refusing to write audio over it" in.wav blkdev --taps 5
    [ -b blkdev ] && pass || fail "the block device was replaced"
else
    expect 0 "" in.wav /dev/null --taps 5 --quiet
fi
expect_no_output
finish
