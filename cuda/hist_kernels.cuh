/*
 * CUDA histogram kernel (CUDA C++; included by backend_cuda.cu and the
 * benchmark). It reads a chunk's samples where they already are on the
 * device (the output buffer, or the input buffer past the halo) and writes
 * the chunk's partial histograms (src/hist.h: one per block segment and
 * record) into a zeroed device buffer; only those come back to the host.
 *
 * Work split: every thread block covers frames [f0, f1) inside ONE segment
 * and a group of G channels (each), or all channels (mix), so it touches
 * exactly G (or 1) partials. Those are privatised in shared memory, same
 * layout as in global memory: the block zeroes them, counts bins with
 * shared atomics, and at the end adds its non-zero bins to the global
 * partials with global atomics. Where even one partial does not fit shared
 * memory (very many bins), bins are counted with global atomics directly.
 *
 * Each thread keeps its own header (below/above/nan/big, min/max keys, the
 * 128-bit sum of squares) in registers: with G <= 256 channels per group a
 * thread always reads the same channel (it strides by a multiple of G
 * frames). At the end the headers of lanes that share a partial are
 * combined across the warp with shuffles (mix: the whole warp; G a power of
 * two up to 32: lanes G apart), and one lane per partial adds the result
 * with atomics: integer adds, integer max of order keys, and a 128-bit add
 * whose carry out of the low word is detected from atomicAdd's old value.
 * All of it is exact and order-independent, so the result equals the
 * host's bit for bit.
 *
 * The per-sample rules are hist.h's (__host__ __device__, _rn intrinsics).
 *
 * Without __CUDACC__ (tests/core/test_hist_kernel.cpp) only the kernel and
 * its geometry are compiled, as host C++ over a shim of the CUDA built-ins,
 * so that CI machines without a GPU run the kernel's logic too.
 */
#ifndef GF_HIST_KERNELS_CUH
#define GF_HIST_KERNELS_CUH

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

#include <stdint.h>

/* Relative to this file, so the benchmark (which has only cuda/ on its
 * include path) finds it too. */
#include "../src/hist.h"

static_assert(sizeof(uint64_t) == sizeof(unsigned long long), "64-bit atomics on uint64_t");
static_assert(sizeof(gf_hist_part) % 8 == 0, "partial header keeps the bins aligned");

namespace gf
{

enum { HIST_THREADS = 256 };

/* One launch over one chunk (hist_geometry computes it). */
struct hist_args {
    gf_hist_rule rule;
    long long frames;  /* frames histogrammed */
    long long first;   /* frames in segment 0 (may exceed frames) */
    long long block;   /* frames per block */
    long long F;       /* frames per thread block, within a segment */
    unsigned nb0, nbB; /* thread blocks for segment 0, for every later segment */
    int C;             /* channels */
    int G;             /* channels per group (each, <= HIST_THREADS); C with mix */
    int nrec;          /* partials per segment: C (each) or 1 (mix) */
    size_t part_bytes;
    int priv; /* partials of the thread block in shared memory */
};

struct hist_geometry {
    hist_args a;
    dim3 grid;
    size_t smem;  /* dynamic shared memory of the launch */
    size_t nseg;  /* segments */
    size_t bytes; /* bytes of partials: to zero before, to copy back after */
};

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
    a.frames = (long long)frames;
    a.first = (long long)first;
    a.block = (long long)p->block;
    a.C = p->channels;
    a.nrec = p->nrec;
    a.part_bytes = p->part_bytes;
    int groups = 1;
    if (p->mix) {
        a.G = p->channels;
        a.priv = p->part_bytes <= smem_cap;
        g.smem = a.priv ? p->part_bytes : 0;
    } else {
        size_t fit = smem_cap / p->part_bytes;
        a.priv = fit >= 1;
        size_t G = a.priv ? fit : (size_t)HIST_THREADS;
        if (G > (size_t)HIST_THREADS)
            G = HIST_THREADS;
        if (G > (size_t)p->channels)
            G = (size_t)p->channels;
        a.G = (int)G;
        groups = (p->channels + a.G - 1) / a.G;
        g.smem = a.priv ? G * p->part_bytes : 0;
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

/* Add a thread's header h to partial p (shared or global) with atomics. */
__device__ __forceinline__ void hist_flush(gf_hist_part *p, const gf_hist_part &h)
{
    if (h.below)
        atomicAdd(&p->below, h.below);
    if (h.above)
        atomicAdd(&p->above, h.above);
    if (h.nan)
        atomicAdd(&p->nan, h.nan);
    if (h.big)
        atomicAdd(&p->big, h.big);
    if (h.max_key) { /* some non-NaN sample */
        atomicMax((unsigned long long *)&p->max_key, (unsigned long long)h.max_key);
        atomicMax((unsigned long long *)&p->min_inv, (unsigned long long)h.min_inv);
    }
    if (h.sq_lo | h.sq_hi) {
        const unsigned long long old =
            atomicAdd((unsigned long long *)&p->sq_lo, (unsigned long long)h.sq_lo);
        const unsigned long long carry = old + h.sq_lo < old;
        if (h.sq_hi + carry)
            atomicAdd((unsigned long long *)&p->sq_hi, (unsigned long long)(h.sq_hi + carry));
    }
}

/* Combine the headers of lanes lowest apart and more (16, 8, .., lowest):
 * afterwards every lane holds its group's total. All 32 lanes must call. */
__device__ __forceinline__ void hist_warp_reduce(gf_hist_part &h, int lowest)
{
    const unsigned all = 0xffffffffu;
    for (int off = 16; off >= lowest; off >>= 1) {
        h.below += __shfl_xor_sync(all, h.below, off);
        h.above += __shfl_xor_sync(all, h.above, off);
        h.nan += __shfl_xor_sync(all, h.nan, off);
        h.big += __shfl_xor_sync(all, h.big, off);
        const unsigned long long mx = __shfl_xor_sync(all, (unsigned long long)h.max_key, off);
        const unsigned long long mi = __shfl_xor_sync(all, (unsigned long long)h.min_inv, off);
        const unsigned long long lo = __shfl_xor_sync(all, (unsigned long long)h.sq_lo, off);
        const unsigned long long hi = __shfl_xor_sync(all, (unsigned long long)h.sq_hi, off);
        if (mx > h.max_key)
            h.max_key = mx;
        if (mi > h.min_inv)
            h.min_inv = mi;
        h.sq_lo += lo;
        h.sq_hi += hi + (h.sq_lo < lo);
    }
}

template <typename T>
__device__ __forceinline__ void hist_one(const gf_hist_rule &r, gf_hist_part &h, unsigned *bins,
                                         T v)
{
    const uint32_t b = gf_hist_sample(&r, &h, (double)v);
    if (b != GF_HIST_NO_BIN)
        atomicAdd(bins + b, 1u);
}

/* Samples x[i], i = i0, i0 + st, ... < i1, into header h and bins. Four
 * loads are issued before they are counted. */
template <typename T>
__device__ __forceinline__ void hist_run(const T *__restrict__ x, long long i0, long long st,
                                         long long i1, const gf_hist_rule &r, gf_hist_part &h,
                                         unsigned *bins)
{
    long long i = i0;
    for (; i + 3 * st < i1; i += 4 * st) {
        const T v0 = __ldg(x + i), v1 = __ldg(x + i + st), v2 = __ldg(x + i + 2 * st),
                v3 = __ldg(x + i + 3 * st);
        hist_one(r, h, bins, v0);
        hist_one(r, h, bins, v1);
        hist_one(r, h, bins, v2);
        hist_one(r, h, bins, v3);
    }
    for (; i < i1; i += st)
        hist_one(r, h, bins, __ldg(x + i));
}

/*
 * One thread block's work: frames [f0, f1) of segment seg, channels
 * [c0, c0 + G) (each) or all (mix, G = 1 partial). PRIV: its partials in
 * shared memory (a separate instantiation, so the compiler sees shared
 * addresses and emits shared atomics), else straight in global memory.
 */
template <typename T, bool MIX, bool PRIV>
__device__ __forceinline__ void hist_block(const T *__restrict__ x, unsigned char *global0,
                                           const hist_args &a, long long f0, long long f1, int c0,
                                           int G)
{
    extern __shared__ __align__(16) unsigned char gf_hist_smem[];
    const int tid = threadIdx.x;
    unsigned char *mine = PRIV ? gf_hist_smem : global0;
    if (PRIV) {
        unsigned *w = reinterpret_cast<unsigned *>(gf_hist_smem);
        const int words = (int)((size_t)G * a.part_bytes / 4);
        for (int i = tid; i < words; i += HIST_THREADS)
            w[i] = 0;
        __syncthreads();
    }

    gf_hist_part h = {};
    gf_hist_part *p;
    int lowest; /* lanes this far apart and more share a partial; 64: none do */
    if (MIX) {
        p = reinterpret_cast<gf_hist_part *>(mine);
        hist_run(x, f0 * a.C + tid, HIST_THREADS, f1 * a.C, a.rule, h, gf_hist_part_bins(p));
        lowest = 1;
    } else {
        /* Thread tid < S reads channel c0 + tid % G of frames f0 + tid / G,
         * then every S / G frames: S is a multiple of G. The others keep an
         * empty header. */
        const int S = (HIST_THREADS / G) * G;
        const int g = tid % G;
        p = reinterpret_cast<gf_hist_part *>(mine + (size_t)g * a.part_bytes);
        if (tid < S)
            hist_run(x, (f0 + tid / G) * a.C + c0 + g, (long long)(S / G) * a.C, f1 * a.C, a.rule,
                     h, gf_hist_part_bins(p));
        lowest = G <= 32 && (G & (G - 1)) == 0 ? G : 64;
    }
    hist_warp_reduce(h, lowest);
    if ((tid & 31) < lowest)
        hist_flush(p, h);

    if (PRIV) {
        __syncthreads();
        for (int j = 0; j < G; j++) {
            const unsigned *sb = gf_hist_part_bins(
                reinterpret_cast<gf_hist_part *>(mine + (size_t)j * a.part_bytes));
            unsigned *gb = gf_hist_part_bins(
                reinterpret_cast<gf_hist_part *>(global0 + (size_t)j * a.part_bytes));
            for (unsigned i = tid; i < a.rule.bins; i += HIST_THREADS) {
                const unsigned c = sb[i];
                if (c)
                    atomicAdd(gb + i, c);
            }
        }
        for (int j = tid; j < G; j += HIST_THREADS)
            hist_flush(reinterpret_cast<gf_hist_part *>(global0 + (size_t)j * a.part_bytes),
                       *reinterpret_cast<const gf_hist_part *>(mine + (size_t)j * a.part_bytes));
    }
}

/*
 * Partials of one chunk: x holds frames x C samples, interleaved; parts is
 * the zeroed partial buffer (nseg * nrec partials). Grid: x = segment
 * pieces (nb0 for segment 0, then nbB per segment), y = channel groups.
 */
template <typename T, bool MIX>
__global__ void __launch_bounds__(HIST_THREADS)
    hist_chunk(const T *__restrict__ x, unsigned char *__restrict__ parts, hist_args a)
{
    long long seg, piece;
    if (blockIdx.x < a.nb0) {
        seg = 0;
        piece = blockIdx.x;
    } else {
        const long long b = blockIdx.x - a.nb0;
        seg = 1 + b / a.nbB;
        piece = b % a.nbB;
    }
    const long long s0 = seg == 0 ? 0 : a.first + (seg - 1) * a.block;
    long long s1 = seg == 0 ? a.first : s0 + a.block;
    if (s1 > a.frames)
        s1 = a.frames;
    const long long f0 = s0 + piece * a.F;
    const long long f1 = f0 + a.F < s1 ? f0 + a.F : s1;
    if (f0 >= f1)
        return; /* the whole block: a piece past the end of a short last segment */
    const int c0 = MIX ? 0 : (int)blockIdx.y * a.G;
    const int G = MIX ? 1 : (a.C - c0 < a.G ? a.C - c0 : a.G); /* partials of this block */
    unsigned char *global0 = parts + ((size_t)seg * a.nrec + c0) * a.part_bytes;
    if (a.priv)
        hist_block<T, MIX, true>(x, global0, a, f0, f1, c0, G);
    else
        hist_block<T, MIX, false>(x, global0, a, f0, f1, c0, G);
}

#ifdef __CUDACC__
/* Launch hist_chunk<T, mix> for geometry g on stream st (no error check:
 * the caller checks cudaGetLastError, as for every launch). */
template <typename T>
static inline void hist_launch(const hist_geometry &g, bool mix, const T *x, void *parts,
                               cudaStream_t st)
{
    if (g.nseg == 0)
        return;
    unsigned char *pp = static_cast<unsigned char *>(parts);
    if (mix)
        hist_chunk<T, true><<<g.grid, HIST_THREADS, g.smem, st>>>(x, pp, g.a);
    else
        hist_chunk<T, false><<<g.grid, HIST_THREADS, g.smem, st>>>(x, pp, g.a);
}

/* Allow the kernels for T up to smem_cap bytes of dynamic shared memory. */
template <typename T> static inline cudaError_t hist_allow_smem(size_t smem_cap)
{
    if (smem_cap <= 48 * 1024)
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(
        hist_chunk<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_cap);
    if (e != cudaSuccess)
        return e;
    return cudaFuncSetAttribute(hist_chunk<T, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem_cap);
}
#endif /* __CUDACC__ */

} // namespace gf

#endif /* GF_HIST_KERNELS_CUH */
