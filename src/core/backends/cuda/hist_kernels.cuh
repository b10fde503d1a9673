/*
 * CUDA histogram kernel (CUDA C++; included by hist_launch.cu, its launch
 * site, and by tests/core/test_hist_kernel.cpp). The launch geometry is
 * planned on the host (hist_geometry.h). It reads a chunk's samples where they already are on the
 * device (the output buffer, or the input buffer past the halo) and writes
 * the chunk's partial histograms (src/core/hist.h: one per block segment and
 * record) into a zeroed device buffer; only those come back to the host.
 *
 * Work split: every thread block covers frames [f0, f1) inside ONE segment
 * and a group of G channels (each), or all channels (mix), so it touches
 * exactly G (or 1) partials. Those are privatised in shared memory, laid
 * out as in global memory but always with 32-bit counts: the block zeroes
 * them, counts bins with shared atomics, and at the end adds its non-zero
 * bins to the global partials with global atomics (16-bit global counts,
 * hist.h: two to a 32-bit atomic). Where even one partial does not fit shared
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
 * Per sample the kernel runs hist_fast below: hist.h's rule, reformulated
 * without branches and proved (and tested, test_hist_kernel) equal to
 * gf_hist_sample.
 *
 * Without __CUDACC__ (tests/core/test_hist_kernel.cpp) the kernel is
 * compiled as host C++ over a shim of the CUDA built-ins, so that CI
 * machines without a GPU run the kernel's logic too.
 */
#ifndef GF_HIST_KERNELS_CUH
#define GF_HIST_KERNELS_CUH

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

#include "hist_geometry.h"

#include <stdint.h>

static_assert(sizeof(uint64_t) == sizeof(unsigned long long), "64-bit atomics on uint64_t");
static_assert(sizeof(gf_hist_part) % 8 == 0, "partial header keeps the bins aligned");

namespace gf
{

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

/* ---- the per-sample path ----
 *
 * Branch-free: every lane does the same work for every sample and only the
 * shared atomic is predicated, so a warp never runs the NaN / below / above
 * / big cases one after another (branching per case costs about three
 * times the instructions). Each result equals hist.h's
 * rule for the sample, exactly:
 *   - counts: nan, big (non-NaN, |x| >= 4096 or inf), below (x < lo),
 *     above (x > hi) from comparisons, which are false for NaN;
 *   - min/max: float samples keep 32-bit order keys of the float, widened
 *     to the double's 64-bit key once at the end (float -> double is exact
 *     and keeps the total order, -0.0 below +0.0 included); double samples
 *     keep hist.h's 64-bit keys. NaN lanes offer key 0, which never wins;
 *   - squares: q = x*x (0 for NaN / big lanes); floor(q * 2^64) is added as
 *     hi = floor(q), from 2^52 + q rounded toward zero, and
 *     lo = trunc(frac * 2^64), frac = q - floor(q): both steps exact (frac
 *     is on q's grid; scaling by 2^64 is exact), so hi * 2^64 + lo is
 *     exactly hist.h's shifted significand, including the truncation below
 *     2^-64 and 0 for subnormal q;
 *   - bin: i = floor(min(t, bins - 1)), t = (x - lo) * scale, again from
 *     2^52 + t rounded toward zero, then the same single correction by
 *     edge(i) = lo + i * step and edge(i + 1), each rounded as in hist.h
 *     (edge(i) <= edge(i + 1), so at most one of the two tests holds). On
 *     Hopper FP64 runs at half the FP32 rate: recomputing the two edges
 *     (5 FP64 operations) is cheaper than two bank-conflicting 8-byte
 *     shared loads from an edge table next to the shared atomics.
 */

static inline __device__ uint32_t hist_fbits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

static inline __device__ float hist_ffrom(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* The bin rule's constants, in registers. */
struct hist_consts {
    double lo, hi, scale, step, tmax; /* tmax = bins - 1 */
    uint32_t bins;
    float lo_f, hi_f; /* hist_args' */
};

static __device__ __forceinline__ hist_consts hist_consts_of(const hist_args &a)
{
    const gf_hist_rule &r = a.rule;
    hist_consts c;
    c.lo_f = a.lo_f;
    c.hi_f = a.hi_f;
    c.lo = r.lo;
    c.hi = r.hi;
    c.scale = r.scale;
    c.step = r.step;
    c.tmax = gf_hist_dsub(r.binsd, 1.0);
    c.bins = r.bins;
    return c;
}

/* Order keys as the thread keeps them: 32-bit for float samples. */
template <typename T> struct hist_keys;
template <> struct hist_keys<float> {
    typedef uint32_t key;
    static __device__ __forceinline__ key of(float v)
    {
        const uint32_t u = hist_fbits(v);
        return u ^ ((0u - (u >> 31)) | 0x80000000u);
    }
    /* v < lo, v > hi, |v| < 4096, as float compares (see lo_f). */
    static __device__ __forceinline__ bool below(float v, const hist_consts &c)
    {
        return v < c.lo_f;
    }
    static __device__ __forceinline__ bool above(float v, const hist_consts &c)
    {
        return v > c.hi_f;
    }
    static __device__ __forceinline__ bool small(float v)
    {
        return fabsf(v) < (float)GF_HIST_SQ_LIMIT;
    }
    /* The 64-bit key of the double of the float with key k (k != 0). */
    static __device__ __forceinline__ uint64_t widen(key k)
    {
        return gf_hist_key((double)hist_ffrom((k >> 31) ? (k & 0x7fffffffu) : ~k));
    }
};
template <> struct hist_keys<double> {
    typedef uint64_t key;
    static __device__ __forceinline__ key of(double v) { return gf_hist_key(v); }
    static __device__ __forceinline__ bool below(double v, const hist_consts &c)
    {
        return v < c.lo;
    }
    static __device__ __forceinline__ bool above(double v, const hist_consts &c)
    {
        return v > c.hi;
    }
    static __device__ __forceinline__ bool small(double v) { return fabs(v) < GF_HIST_SQ_LIMIT; }
    static __device__ __forceinline__ uint64_t widen(key k) { return k; }
};

/* A thread's running header. */
template <typename T> struct hist_thread {
    typename hist_keys<T>::key kmax, kmin_inv; /* 0: no non-NaN sample yet */
    uint64_t sq_lo, sq_hi;
    uint32_t below, above, nan, big;
};

/* sq_hi:sq_lo += hi:lo (128-bit). */
static __device__ __forceinline__ void hist_add128(uint64_t &sq_lo, uint64_t &sq_hi, uint64_t lo,
                                                   uint64_t hi)
{
#ifdef __CUDA_ARCH__
    asm("add.cc.u64 %0, %0, %2;\n\taddc.u64 %1, %1, %3;"
        : "+l"(sq_lo), "+l"(sq_hi)
        : "l"(lo), "l"(hi));
#else
    sq_lo += lo;
    sq_hi += hi + (sq_lo < lo);
#endif
}

/* One sample v into the thread's header h and its bin of bins: 32-bit
 * counts, or (HALF) 16-bit ones, two to a 32-bit word, the bin's half of
 * its word added to (a partial holds at most 65535 samples: hist.h, so
 * neither half carries into the other). */
template <typename T, bool HALF>
__device__ __forceinline__ void hist_fast(const hist_consts &c, hist_thread<T> &h, unsigned *bins,
                                          T v)
{
    typedef hist_keys<T> K;
    const double x = (double)v;
    const bool isnan_ = x != x;
    const typename K::key k = K::of(v);
    const typename K::key kx = isnan_ ? 0 : k, kn = isnan_ ? 0 : ~k;
    h.kmax = kx > h.kmax ? kx : h.kmax;
    h.kmin_inv = kn > h.kmin_inv ? kn : h.kmin_inv;
    const bool small = K::small(v); /* false for NaN */
    const bool below = K::below(v, c), above = K::above(v, c);
    h.nan += isnan_;
    h.big += !isnan_ && !small;
    h.below += below;
    h.above += above;

    const double q = small ? gf_hist_dmul(x, x) : 0.0;
    const double qm = __dadd_rz(q, 0x1p52); /* 2^52 + floor(q), q < 2^24 */
    const double fr = gf_hist_dsub(q, gf_hist_dsub(qm, 0x1p52));
    hist_add128(h.sq_lo, h.sq_hi, (uint64_t)__double2ull_rz(gf_hist_dmul(fr, 0x1p64)),
                (uint32_t)gf_hist_bits(qm));

    /* Lanes outside [lo, hi] or NaN compute a clamped, unused bin. */
    const double t0 = gf_hist_dmul(gf_hist_dsub(x, c.lo), c.scale);
    const double t = t0 < c.tmax ? t0 : c.tmax; /* NaN -> tmax */
    const double tm = __dadd_rz(t, 0x1p52);     /* 2^52 + floor(t) when t >= 0 */
    uint32_t i = (uint32_t)gf_hist_bits(tm);
    i = i < c.bins - 1 ? i : c.bins - 1;
    const double id = gf_hist_dsub(tm, 0x1p52);
    const double e0 = gf_hist_dadd(c.lo, gf_hist_dmul(id, c.step));
    const double e1 = gf_hist_dadd(c.lo, gf_hist_dmul(gf_hist_dadd(id, 1.0), c.step));
    const uint32_t b = i - (uint32_t)(x < e0) + (uint32_t)(i + 1 < c.bins && x >= e1);
    if (!(below | above | isnan_)) {
        if (HALF)
            atomicAdd(bins + (b >> 1), 1u << ((b & 1u) << 4));
        else
            atomicAdd(bins + b, 1u);
    }
}

/* A thread's header in hist.h's form. */
template <typename T>
__device__ __forceinline__ void hist_thread_out(const hist_thread<T> &h, gf_hist_part &out)
{
    out.below = h.below;
    out.above = h.above;
    out.nan = h.nan;
    out.big = h.big;
    out.sq_lo = h.sq_lo;
    out.sq_hi = h.sq_hi;
    out.max_key = h.kmax ? hist_keys<T>::widen(h.kmax) : 0;
    out.min_inv = h.kmin_inv ? ~hist_keys<T>::widen(~h.kmin_inv) : 0;
}

/* Samples x[i], i = i0, i0 + st, ... < i1, into header out and bins, with
 * four loads issued before they are counted; the header comes back in
 * hist.h's form. */
template <typename T, bool HALF>
__device__ __forceinline__ void hist_run_fast(const T *__restrict__ x, long long i0, long long st,
                                              long long i1, const hist_args &a, gf_hist_part &out,
                                              unsigned *bins)
{
    const hist_consts c = hist_consts_of(a);
    hist_thread<T> h = {};
    long long i = i0;
    for (; i + 3 * st < i1; i += 4 * st) {
        const T v0 = __ldg(x + i), v1 = __ldg(x + i + st), v2 = __ldg(x + i + 2 * st),
                v3 = __ldg(x + i + 3 * st);
        hist_fast<T, HALF>(c, h, bins, v0);
        hist_fast<T, HALF>(c, h, bins, v1);
        hist_fast<T, HALF>(c, h, bins, v2);
        hist_fast<T, HALF>(c, h, bins, v3);
    }
    for (; i < i1; i += st)
        hist_fast<T, HALF>(c, h, bins, __ldg(x + i));
    hist_thread_out(h, out);
}

/*
 * One thread block's work: frames [f0, f1) of segment seg, channels
 * [c0, c0 + G) (each) or all (mix, G = 1 partial). PRIV: its partials in
 * shared memory (a separate instantiation, so the compiler sees shared
 * addresses and emits shared atomics), with 32-bit counts, else straight
 * in global memory. HALF: the global partials' counts are 16-bit.
 */
template <typename T, bool MIX, bool PRIV, bool HALF>
__device__ __forceinline__ void hist_block(const T *__restrict__ x, unsigned char *global0,
                                           const hist_args &a, long long f0, long long f1, int c0,
                                           int G)
{
    extern __shared__ __align__(16) unsigned char gf_hist_smem[];
    const int tid = threadIdx.x;
    unsigned char *mine = PRIV ? gf_hist_smem : global0;
    const size_t pb = PRIV ? a.smem_part_bytes : a.part_bytes; /* partials of `mine` */
    if (PRIV) {
        unsigned *w = reinterpret_cast<unsigned *>(gf_hist_smem);
        const int words = (int)((size_t)G * pb / 4);
        for (int i = tid; i < words; i += HIST_THREADS)
            w[i] = 0;
        __syncthreads();
    }

    gf_hist_part h = {};
    gf_hist_part *p;
    int lowest; /* lanes this far apart and more share a partial; 64: none do */
    if (MIX) {
        p = reinterpret_cast<gf_hist_part *>(mine);
        hist_run_fast<T, HALF && !PRIV>(x, f0 * a.C + tid, HIST_THREADS, f1 * a.C, a, h,
                                        gf_hist_part_bins(p));
        lowest = 1;
    } else {
        /* Thread tid < S reads channel c0 + tid % G of frames f0 + tid / G,
         * then every S / G frames: S is a multiple of G. The others keep an
         * empty header. */
        const int S = (HIST_THREADS / G) * G;
        const int g = tid % G;
        p = reinterpret_cast<gf_hist_part *>(mine + (size_t)g * pb);
        const long long i0 = (f0 + tid / G) * a.C + c0 + g, st = (long long)(S / G) * a.C;
        if (tid < S)
            hist_run_fast<T, HALF && !PRIV>(x, i0, st, f1 * a.C, a, h, gf_hist_part_bins(p));
        lowest = G <= 32 && (G & (G - 1)) == 0 ? G : 64;
    }
    hist_warp_reduce(h, lowest);
    if ((tid & 31) < lowest)
        hist_flush(p, h);

    if (PRIV) {
        __syncthreads();
        const unsigned bins = a.rule.bins;
        for (int j = 0; j < G; j++) {
            const unsigned *sb =
                gf_hist_part_bins(reinterpret_cast<gf_hist_part *>(mine + (size_t)j * pb));
            unsigned *gb = gf_hist_part_bins(
                reinterpret_cast<gf_hist_part *>(global0 + (size_t)j * a.part_bytes));
            if (HALF) /* two counts to a word: bins 2w (low half) and 2w + 1 */
                for (unsigned w = tid; w < (bins + 1) / 2; w += HIST_THREADS) {
                    const unsigned c = sb[2 * w] | (2 * w + 1 < bins ? sb[2 * w + 1] << 16 : 0u);
                    if (c)
                        atomicAdd(gb + w, c);
                }
            else
                for (unsigned i = tid; i < bins; i += HIST_THREADS) {
                    const unsigned c = sb[i];
                    if (c)
                        atomicAdd(gb + i, c);
                }
        }
        for (int j = tid; j < G; j += HIST_THREADS)
            hist_flush(reinterpret_cast<gf_hist_part *>(global0 + (size_t)j * a.part_bytes),
                       *reinterpret_cast<const gf_hist_part *>(mine + (size_t)j * pb));
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
    if (a.priv && a.half)
        hist_block<T, MIX, true, true>(x, global0, a, f0, f1, c0, G);
    else if (a.priv)
        hist_block<T, MIX, true, false>(x, global0, a, f0, f1, c0, G);
    else if (a.half)
        hist_block<T, MIX, false, true>(x, global0, a, f0, f1, c0, G);
    else
        hist_block<T, MIX, false, false>(x, global0, a, f0, f1, c0, G);
}

} // namespace gf

#endif /* GF_HIST_KERNELS_CUH */
