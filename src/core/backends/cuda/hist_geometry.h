/*
 * The histogram kernel's launch geometry, planned on the host for each
 * chunk (C++: backend_cuda.cu, the benchmark, and the host test of the
 * kernel, which provides dim3 and nextafterf through its shim).
 */
#ifndef GF_HIST_GEOMETRY_H
#define GF_HIST_GEOMETRY_H

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

#include "hist.h"

#include <math.h>
#include <stddef.h>

namespace gf
{

enum { HIST_THREADS = 256 };

/* One launch over one chunk (hist_geometry computes it). */
struct hist_args {
    gf_hist_rule rule;
    long long frames;       /* frames histogrammed */
    long long first;        /* frames in segment 0 (may exceed frames) */
    long long block;        /* frames per block */
    long long F;            /* frames per thread block, within a segment */
    unsigned nb0, nbB;      /* thread blocks for segment 0, for every later segment */
    int C;                  /* channels */
    int G;                  /* channels per group (each, <= HIST_THREADS); C with mix */
    int nrec;               /* partials per segment: C (each) or 1 (mix) */
    size_t part_bytes;      /* a partial in global memory */
    size_t smem_part_bytes; /* one in shared memory: 32-bit counts */
    int half;               /* the global partials' counts are 16-bit (hist.h) */
    int priv;               /* partials of the thread block in shared memory */
    /* For float samples: the smallest float >= lo and the largest <= hi,
     * so that float v < lo, v > hi are the float compares v < lo_f,
     * v > hi_f (no float lies between lo and lo_f, or hi_f and hi). */
    float lo_f, hi_f;
};

struct hist_geometry {
    hist_args a;
    dim3 grid;
    size_t smem;  /* dynamic shared memory of the launch */
    size_t nseg;  /* segments */
    size_t bytes; /* bytes of partials: to zero before, to copy back after */
};

/* The smallest float >= d, the largest float <= d (d finite). */
static inline float hist_float_up(double d)
{
    float f = (float)d;
    return (double)f < d ? nextafterf(f, INFINITY) : f;
}
static inline float hist_float_down(double d)
{
    float f = (float)d;
    return (double)f > d ? nextafterf(f, -INFINITY) : f;
}

/*
 * Plan the launch for frames [pos, pos + frames) of the histogrammed
 * stream: sms = multiprocessors, smem_cap = the most dynamic shared memory
 * the kernel may use (its attribute raised to that where above 48 KiB).
 * Aim: about 4 blocks per SM, yet at least 2 * bins samples per partial in
 * a block, so the final merge (one global atomic per non-zero bin) stays
 * small against the counting.
 */
static inline hist_geometry hist_geometry_for(const gf_hist_plan *p, uint64_t pos, size_t frames,
                                              int sms, size_t smem_cap)
{
    hist_geometry g = hist_geometry(); /* zeroed; grid (1, 1, 1) */
    hist_args &a = g.a;
    size_t first = 0;
    g.nseg = gf_hist_segments(p, pos, frames, &first);
    g.bytes = g.nseg * (size_t)p->nrec * p->part_bytes;
    a.rule = p->rule;
    a.lo_f = hist_float_up(p->rule.lo);
    a.hi_f = hist_float_down(p->rule.hi);
    a.frames = (long long)frames;
    a.first = (long long)first;
    a.block = (long long)p->block;
    a.C = p->channels;
    a.nrec = p->nrec;
    a.part_bytes = p->part_bytes;
    a.smem_part_bytes = gf_hist_part_size(p->bins, 4);
    a.half = p->count_bytes == 2;
    int groups = 1;
    if (p->mix) {
        a.G = p->channels;
        a.priv = a.smem_part_bytes <= smem_cap;
        g.smem = a.priv ? a.smem_part_bytes : 0;
    } else {
        size_t fit = smem_cap / a.smem_part_bytes;
        a.priv = fit >= 1;
        size_t G = a.priv ? fit : (size_t)HIST_THREADS;
        if (G > (size_t)HIST_THREADS)
            G = HIST_THREADS;
        if (G > (size_t)p->channels)
            G = (size_t)p->channels;
        a.G = (int)G;
        groups = (p->channels + a.G - 1) / a.G;
        g.smem = a.priv ? G * a.smem_part_bytes : 0;
    }
    if (g.nseg == 0)
        return g;
    const long long spf = p->mix ? p->channels : 1; /* samples per frame in one partial */
    long long want = 4LL * (sms > 0 ? sms : 1) / groups;
    if (want < 1)
        want = 1;
    long long F = (a.frames + want - 1) / want;
    long long minF = ((long long)(2 * p->bins > 1024 ? 2 * p->bins : 1024) + spf - 1) / spf;
    if (F < minF)
        F = minF;
    a.F = F;
    const long long len0 = a.first < a.frames ? a.first : a.frames;
    const long long lenB = a.block < a.frames ? a.block : a.frames;
    a.nb0 = (unsigned)((len0 + F - 1) / F);
    a.nbB = (unsigned)((lenB + F - 1) / F);
    g.grid = dim3((unsigned)(a.nb0 + (g.nseg - 1) * (size_t)a.nbB), (unsigned)groups, 1);
    return g;
}

} // namespace gf

#endif /* GF_HIST_GEOMETRY_H */
