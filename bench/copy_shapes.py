#!/usr/bin/env python3
"""How fast a GPU takes some of the channels of interleaved host samples, the
copies that sharing a job's channels among GPUs would need: page-locked
host memory of F frames x C channels (4-byte samples), each GPU taking
C / n of them.

  rows 2D   cudaMemcpy2DAsync of the GPU's channels: one row per frame,
            W = 4 C / n bytes wide, pitch 4 C (the copy engines)
  zero-copy a kernel reading (or writing) them straight from the mapped
            host memory, W bytes per frame
  whole     the whole interleaved block, contiguous (the ceiling)

For each GPU count, channel count and direction, GB/s of useful bytes (the
GPU's channels) in all, medians of --reps after a warm-up. Needs cupy.

    copy_shapes.py [--mib N] [--reps N] [--channels 2,8,32,128]
"""
import argparse
import statistics
import sys
import time

try:
    import cupy as cp
except ImportError:
    print("copy_shapes: needs cupy: skipped")
    sys.exit(77)

rt = cp.cuda.runtime
H2D, D2H = 1, 2

GATHER = cp.RawKernel(r'''
extern "C" __global__ void gather(const float *host, float *dev, long long frames, int C, int c0,
                                  int cn, int to_host)
{
    const long long n = frames * cn;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long f = i / cn;
        const int c = (int)(i - f * cn);
        float *h = (float *)host + f * C + c0 + c;
        if (to_host)
            *h = dev[i];
        else
            dev[i] = *h;
    }
}
''', "gather")


def timed(n, fn, streams, reps):
    """Median seconds of fn(d) queued on GPUs 0..n-1 at once."""
    out = []
    for r in range(reps + 1):
        t0 = time.perf_counter()
        for d in range(n):
            with cp.cuda.Device(d):
                fn(d)
        for d in range(n):
            streams[d].synchronize()
        if r:
            out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=512, help="interleaved block, MiB")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--channels", default="2,8,32,128")
    a = ap.parse_args()
    ngpu = rt.getDeviceCount()
    nbytes = a.mib << 20
    flags = rt.hostAllocPortable | rt.hostAllocMapped
    host = rt.hostAlloc(nbytes, flags)
    hdev = host  # unified addressing: mapped host memory has one address everywhere
    dev = []
    for d in range(ngpu):
        with cp.cuda.Device(d):
            dev.append(cp.empty(nbytes // 4, dtype=cp.float32))
    streams = []
    for d in range(ngpu):
        with cp.cuda.Device(d):
            streams.append(cp.cuda.Stream(non_blocking=True))
    print("copy_shapes: %d GPU(s), %s; %d MiB interleaved, page-locked; GB/s of the GPUs' own "
          "channels in all, medians of %d" % (ngpu, rt.getDeviceProperties(0)["name"].decode(),
                                              a.mib, a.reps))
    print("%-5s %4s %5s %-4s %9s %10s %9s" % ("GPUs", "ch", "W B", "dir", "rows 2D", "zero-copy",
                                              "whole"))
    for n in sorted({1, ngpu}):
        for C in [int(c) for c in a.channels.split(",")]:
            if C % n:
                continue
            cn = C // n
            frames = nbytes // (4 * C)
            useful = frames * cn * 4 * n
            for kind in (H2D, D2H):
                def rows(d):
                    with streams[d]:
                        src = host + d * cn * 4
                        if kind == H2D:
                            rt.memcpy2DAsync(dev[d].data.ptr, cn * 4, src, C * 4, cn * 4, frames,
                                             H2D, streams[d].ptr)
                        else:
                            rt.memcpy2DAsync(src, C * 4, dev[d].data.ptr, cn * 4, cn * 4, frames,
                                             D2H, streams[d].ptr)

                def zero(d):
                    with streams[d]:
                        GATHER((1024,), (256,), (cp.uint64(hdev), dev[d], cp.int64(frames),
                                                 cp.int32(C), cp.int32(d * cn), cp.int32(cn),
                                                 cp.int32(kind == D2H)))

                def whole(d):
                    part = nbytes // n
                    with streams[d]:
                        if kind == H2D:
                            rt.memcpyAsync(dev[d].data.ptr, host + d * part, part, H2D,
                                           streams[d].ptr)
                        else:
                            rt.memcpyAsync(host + d * part, dev[d].data.ptr, part, D2H,
                                           streams[d].ptr)
                g = [useful / timed(n, f, streams, a.reps) / 1e9 for f in (rows, zero)]
                w = nbytes / timed(n, whole, streams, a.reps) / 1e9
                print("%-5d %4d %5d %-4s %9.1f %10.1f %9.1f" %
                      (n, C, cn * 4, "H2D" if kind == H2D else "D2H", g[0], g[1], w))
    rt.freeHost(host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
