#!/usr/bin/env python3
"""gpufilt on arrays already in GPU memory against the peers on the same
arrays, in one run: cupyx.scipy.signal.oaconvolve and
torchaudio.functional.fftconvolve, mode "same", N f32 samples (2^27 by
default) made on the GPU, filters of 4095, 65536 and 2^20 taps. Times are
CUDA-event medians of REPS runs after a warm-up; ratios are gpufilt's time
over each peer's (below 1: gpufilt faster). Two gpufilt rows:

  convolve   gpufilt.convolve(x, h, "same"), as a scipy user calls it (the
             engine kept from the warm-up: gpufilt keeps the last two, as
             cupyx keeps its FFT plans)
  engine     one engine made beforehand, its gf_engine_filter_device timed
             alone (convolve's own overhead: the layout, the filter's hash)
  staged     the same with GPUFILT_DEVICE_STAGED=1: every chunk copied into
             and out of the backend's slot buffers, as before the FFT method
             read and wrote the arrays in place; its bytes must be engine's

Each output is compared with cupyx's on the GPU (the largest difference
relative to the largest output, printed; one number comes back to the host
per row). Run under tests/gpu/device-run.sh --only gpuarrays, whose CUDA
activity trace shows that no signal went through host memory.

    bench/gpu_arrays.py [--samples N] [--taps T,...] [--reps R]
"""
import argparse
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1 << 27)
    ap.add_argument("--taps", default="4095,65536,1048576")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    try:
        import cupy
        import cupyx.scipy.signal as cs
    except ImportError:
        print("gpu_arrays: needs cupy (and cupyx): skipped")
        return 77
    import gpufilt
    if not gpufilt.cuda_available():
        print("gpu_arrays: no usable GPU: skipped")
        return 77
    try:
        import torch
        import torchaudio.functional as taf
    except ImportError:
        torch = taf = None

    def ms(fn, reps):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        out = fn()  # warm-up
        cupy.cuda.get_current_stream().synchronize()
        t = []
        for _ in range(reps):
            s.record()
            out = fn()
            e.record()
            e.synchronize()
            t.append(cupy.cuda.get_elapsed_time(s, e))
        return float(np.median(t)), out

    x = cupy.random.default_rng(7).standard_normal(a.samples, dtype=cupy.float32)
    print("gpu_arrays: %d f32 samples in GPU memory (%s), mode same, medians of %d"
          % (a.samples, cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), a.reps))
    print("%9s %-10s %10s %12s %12s   %s" % ("taps", "row", "ms", "x cupyx", "x torchaudio",
                                            "max |diff| / max |y| vs cupyx"))
    wrong = False
    for T in (int(t) for t in a.taps.split(",")):
        h = cupy.random.default_rng(T).standard_normal(T, dtype=cupy.float32) / np.sqrt(T)
        hh = cupy.asnumpy(h).astype(np.float64)
        t_cx, y_cx = ms(lambda: cs.oaconvolve(x, h, mode="same"), a.reps)
        t_ta = ta_failed = None
        if taf is not None:
            # cupy's pool keeps what oaconvolve freed; torch's allocator cannot use it
            cupy.get_default_memory_pool().free_all_blocks()
            xt, ht = torch.as_tensor(x, device="cuda"), torch.as_tensor(h, device="cuda")
            try:
                t_ta, _ = ms(lambda: taf.fftconvolve(xt, ht, mode="same"), a.reps)
            except RuntimeError as err:  # e.g. cuFFT cannot plan its length: stated, not hidden
                ta_failed = "%s (transform of %d points)" % (str(err).splitlines()[0],
                                                             a.samples + T - 1)
            del xt, ht
            torch.cuda.empty_cache()
        scale = float(cupy.max(cupy.abs(y_cx)))
        t_conv, y = ms(lambda: gpufilt.convolve(x, hh, "same"), a.reps)
        rows = [("convolve", t_conv, y)]
        stream = cupy.cuda.get_current_stream().ptr
        for name, staged in (("engine", "0"), ("staged", "1")):
            # (read when the engine is made)
            os.environ["GPUFILT_DEVICE_STAGED"] = staged
            with gpufilt.Engine(taps=hh, mode="same", precision="f32", device="cuda",
                                method="fft") as e:
                out = cupy.empty_like(x)

                def run():
                    e._filter_device(x.data.ptr, a.samples, out.data.ptr, stream)
                    return out
                t_eng, y = ms(run, a.reps)
                rows.append((name, t_eng, y))
        del os.environ["GPUFILT_DEVICE_STAGED"]
        same = bool(cupy.array_equal(rows[-1][2].view(cupy.uint32), rows[-2][2].view(cupy.uint32)))
        wrong = wrong or not same
        for name, t, y in rows:
            d = float(cupy.max(cupy.abs(y - y_cx))) / scale
            print("%9d %-10s %10.2f %11.2fx %12s   %.2e" % (
                T, name, t, t / t_cx, "%.2fx" % (t / t_ta) if t_ta else "-", d))
        print("%9d %-10s %10.2f %12s %12s" % (T, "cupyx", t_cx, "", ""))
        print("%9d engine and staged: %s" % (T, "the same bytes" if same else "WRONG: bytes differ"))
        if t_ta:
            print("%9d %-10s %10.2f" % (T, "torchaudio", t_ta))
        elif ta_failed:
            print("%9d %-10s %10s   %s" % (T, "torchaudio", "failed", ta_failed))
    print("x cupyx, x torchaudio: gpufilt's time over the peer's (target, issue 22/25: "
          "<= 1/3 of cupyx's)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
