#!/usr/bin/env python3
"""Peers for the long-filter benchmark, on the same data sizes as bench_long.

Times, on the GPU, with CUDA events after a warm-up (median of REPS):
  cupyx.scipy.signal.oaconvolve(x, h, mode="same")
  torchaudio.functional.fftconvolve(x, h, mode="same")  (65536 taps only)
for x: N f32 samples (2^27 by default), h: each length of --taps (f32;
by default those bench_long timed, from --bench-json, else 65536), and with
--bench-json the gpufilt figures bench_long wrote in the same run, prints
gpufilt's device time as a fraction of cupyx's at each length (targets:
<= 1/2 at 4095 taps, <= 1/3 from 65536 on; judged only when bench_long
found that output within its bound, and not for --quick). Each peer's
output is checked against a float64 reference at a few hundred points
(the peers are not exact either: the relative error is printed).

    bench/peers.py [--samples N] [--taps T,...] [--bench-json FILE]
"""

import argparse
import json
import sys

import numpy as np


def timed(fn, reps, xp_sync, event):
    start, stop = event(), event()
    fn()  # warm-up: plans, kernels, memory pools
    xp_sync()
    times = []
    for _ in range(reps):
        start.record()
        out = fn()
        stop.record()
        stop.synchronize()
        times.append(start_stop_ms(start, stop))
    return float(np.median(times)), out


def start_stop_ms(start, stop):
    if hasattr(start, "elapsed_time"):  # torch
        return start.elapsed_time(stop)
    import cupy

    return cupy.cuda.get_elapsed_time(start, stop)


def check(name, y, x, h, points=300):
    """Relative error at seeded points against a float64 sum (same mode)."""
    rng = np.random.default_rng(5)
    idx = rng.integers(0, len(x), points)
    c = (len(h) - 1) // 2
    hd = h.astype(np.float64)
    err = 0.0
    ref = 0.0
    for i in idx:
        lo, hi = max(0, i + c - len(h) + 1), min(len(x) - 1, i + c)
        seg = x[lo:hi + 1].astype(np.float64)
        taps = hd[i + c - hi:i + c - lo + 1][::-1]
        exact = float(np.dot(seg, taps))
        err = max(err, abs(float(y[i]) - exact))
        ref = max(ref, abs(exact))
    print("  %s: largest error %.3g (relative to the largest output %.3g)" % (name, err,
                                                                              err / max(ref, 1e-30)))


def cupyx_ms(x, h, reps):
    """cupyx's oaconvolve on x and h: (median ms, output on the host)."""
    import cupy
    import cupyx.scipy.signal as cs

    dx, dh = cupy.asarray(x), cupy.asarray(h)
    ms, y = timed(lambda: cs.oaconvolve(dx, dh, mode="same"), reps,
                  cupy.cuda.Device().synchronize, cupy.cuda.Event)
    y = cupy.asnumpy(y)
    del dx, dh
    cupy.get_default_memory_pool().free_all_blocks()
    return ms, y


def torchaudio_ms(x, h, reps):
    import torch
    import torchaudio.functional as taf

    tx, th = torch.from_numpy(x).cuda(), torch.from_numpy(h).cuda()
    ms, y = timed(lambda: taf.fftconvolve(tx, th, mode="same"), reps, torch.cuda.synchronize,
                  lambda: torch.cuda.Event(enable_timing=True))
    y = y.cpu().numpy()
    del tx, th
    torch.cuda.empty_cache()
    return ms, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1 << 27)
    ap.add_argument("--taps", help="T,... (default: the lengths bench_long timed, else 65536)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--bench-json")
    a = ap.parse_args()
    bench = None
    if a.bench_json:
        with open(a.bench_json) as f:
            bench = json.load(f)
    if a.taps:
        lengths = [int(t) for t in a.taps.split(",")]
    elif bench and bench.get("device"):
        lengths = [d["taps"] for d in bench["device"]]
    else:
        lengths = [65536]
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, a.samples).astype(np.float32)
    print("peers: %d f32 samples, same mode, device time (CUDA events), median of %d"
          % (a.samples, a.reps))
    for taps in lengths:
        env = np.exp(-5.0 * np.arange(taps) / taps)
        h = (rng.uniform(-1, 1, taps) * env).astype(np.float32)
        h /= np.abs(h).sum()
        print("%d taps:" % taps)
        cupyx = None
        try:
            cupyx, y = cupyx_ms(x, h, a.reps)
            print("  cupyx.scipy.signal.oaconvolve: %8.3f ms" % cupyx)
            check("cupyx", y, x, h)
        except Exception as e:  # report, do not hide
            print("  cupyx: not measured (%s)" % e)
        if taps == 65536:  # (torchaudio at this length only: 6-10x cupyx's time)
            try:
                ms, y = torchaudio_ms(x, h, a.reps)
                print("  torchaudio.functional.fftconvolve: %8.3f ms" % ms)
                check("torchaudio", y, x, h)
            except Exception as e:
                print("  torchaudio: not measured (%s)" % e)
        judge(bench, taps, cupyx)
    return 0


def judge(bench, taps, cupyx):
    """gpufilt's filter alone (bench_long, same run) against cupyx at this length:
    <= 1/2 of its time at 4095 taps, <= 1/3 from 65536 on."""
    if bench is None or cupyx is None:
        return
    row = [d for d in bench.get("device", []) if d["taps"] == taps]
    if not row:
        print("  target: not checked (bench_long timed no %d-tap filter alone)" % taps)
        return
    ours, limit = row[0]["ms_chunked"], (0.5 if taps < 65536 else 1 / 3)
    ratio = ours / cupyx
    # Only an output bench_long checked within its bound counts; a smoke
    # run (--quick) is not judged.
    if bench.get("quick", False):
        verdict = "info (not judged: --quick is a smoke run)"
    elif not row[0].get("within_bound", False):
        verdict = "MISS (gpufilt's output was not within its bound: no result)"
    else:
        verdict = "PASS" if ratio <= limit else "MISS"
    print("  target: gpufilt's FFT filter alone <= 1/%d of cupyx oaconvolve's device time at %d "
          "taps: %s (gpufilt %.3f ms in engine chunks; %.3f of cupyx)"
          % (round(1 / limit), taps, verdict, ours, ratio))


if __name__ == "__main__":
    sys.exit(main())
