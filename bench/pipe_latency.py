#!/usr/bin/env python3
"""Latency of gpufilt on a pipe whose input arrives in real time.

Writes N frames of f32 mono noise to `gpufilt - - --raw f32le` in pieces of
PIECE frames, each when the stream's clock (RATE frames a second) reaches
it, reads the output as it comes, and reports for every output frame that
arrived before the input ended: its arrival time minus the time its input
frame was written (median, 99th percentile, largest, in ms), and how many
frames came out before the end of input.

    bench/pipe_latency.py GPUFILT [gpufilt options...]
    e.g. bench/pipe_latency.py build/gpufilt --taps 65536 --method nupc --mode causal
"""
import subprocess
import sys
import threading
import time

import numpy as np

RATE, PIECE, SECONDS = 48000, 480, 3


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    n = RATE * SECONDS
    x = (np.random.default_rng(1).random(n, dtype=np.float32) - 0.5).astype("<f4")
    cmd = [sys.argv[1], "-", "-", "--raw", "f32le", "-c", "1", "-r", str(RATE), "--quiet"]
    p = subprocess.Popen(cmd + sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         bufsize=0)
    written = np.zeros(n)
    arrivals = []  # (time, frames so far)

    def reader():
        total = 0
        while True:
            b = p.stdout.read(1 << 16)
            if not b:
                break
            total += len(b)
            arrivals.append((time.monotonic(), total // 4))

    th = threading.Thread(target=reader)
    th.start()
    t0 = time.monotonic()
    for i in range(0, n, PIECE):
        wait = t0 + i / RATE - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        p.stdin.write(x[i:i + PIECE].tobytes())
        written[i:i + PIECE] = time.monotonic()
    end = time.monotonic()
    p.stdin.close()
    th.join()
    rc = p.wait()
    lat, prev = [], 0
    for t, frames in arrivals:
        if t > end:
            break
        lat.extend(t - written[prev:frames])
        prev = frames
    lat = np.array(lat) * 1e3
    args = " ".join(sys.argv[2:])
    if rc != 0 or not len(lat):
        sys.exit(f"{args}: exit {rc}, {prev} frames before the end of input")
    print(f"{args}: {prev} of {n} frames out before the end of input; latency ms "
          f"median {np.median(lat):.1f}, p99 {np.percentile(lat, 99):.1f}, max {lat.max():.1f}")


if __name__ == "__main__":
    main()
