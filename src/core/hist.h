/*
 * Per-block histograms, internal side (docs/histograms.md has the
 * definitions; gpufilt.h the public contract).
 *
 * Division of work:
 *   - the engine (engine.c) tells each chunk which frames of the
 *     histogrammed stream it holds (gf_chunk.hist_pos / hist_frames);
 *   - the backend computes one partial histogram per (segment, record) of
 *     that chunk into host memory (gf_chunk.hist): a segment is the part of
 *     the chunk that falls into one block, a record is one channel (or all
 *     channels with mix). ref and cpu compute them on the host; cuda on the
 *     device, and only the partials come back;
 *   - the engine merges the partials, in stream order, into block
 *     accumulators by integer adds and integer max (hist.c), and queues a
 *     record when a block is complete.
 * Every step is exact, so records do not depend on chunking or backend.
 *
 * This header is plain C, also compiled by nvcc (src/core/backends/cuda/hist_kernels.cuh):
 * the per-sample rules below are __host__ __device__ there, one source for
 * every backend. On the device they use the _rn intrinsics, so no
 * contraction can creep in even if the build flags change.
 */
#ifndef GF_HIST_H
#define GF_HIST_H

#include "gpufilt.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define GF_HD __host__ __device__ __attribute__((always_inline))
#else
#define GF_HD
#endif

/* |x| >= this (or infinite) saturates the block's rms to +inf: below it
 * x*x < 2^24 and a block's 128-bit sum of squares cannot overflow. */
#define GF_HIST_SQ_LIMIT 4096.0
/* Host bytes of partial histograms over all slots (the cuda backend holds
 * the same again on the device). The engine shortens the chunk to stay
 * under it, except that a chunk may always touch two blocks. */
#define GF_HIST_PART_BUDGET ((size_t)64 << 20)
/* gf_hist_sample's result for a sample that falls in no bin. */
#define GF_HIST_NO_BIN 0xffffffffu

/* The bin rule's constants (see gpufilt.h), computed once on the host. */
typedef struct gf_hist_rule {
    double lo, hi;
    double scale; /* bins / (hi - lo) */
    double step;  /* (hi - lo) / bins */
    double binsd; /* (double)bins */
    uint32_t bins;
} gf_hist_rule;

/* Everything a backend needs to know, fixed at create. */
typedef struct gf_hist_plan {
    gf_hist_rule rule;
    size_t bins;
    size_t block; /* frames per block */
    int of_input, mix;
    int channels;
    int nrec;           /* records per block: 1 with mix, else channels */
    size_t count_bytes; /* a partial's counts: 2 (uint16_t) where its samples fit, else 4 */
    size_t part_bytes;  /* one partial: header + counts, a multiple of 8 */
    size_t max_segs;    /* most segments (blocks touched) in one chunk */
} gf_hist_plan;

/*
 * One partial histogram: the header below, then bins[bins] counts of
 * count_bytes each, the whole padded to part_bytes. All zero bytes is the
 * empty partial. A partial covers one segment of one chunk: at most block
 * x (mix ? channels : 1) samples, and 2^30 in all. Where that is at most
 * 65535 (48000-frame blocks of each channel) counts are 16-bit, which
 * halves what comes back from a GPU: at 4096 bins, 8 KiB a partial
 * against 192 KB of f32 samples, instead of 16 KiB.
 *   min_inv  ~key of the smallest non-NaN sample (0: none yet)
 *   max_key  key of the largest non-NaN sample (0: none yet)
 *   sq_hi:sq_lo  sum over the non-NaN samples with |x| < 4096 of
 *            floor(x*x * 2^64): x*x rounded to double once, then taken as
 *            an unsigned 128-bit fixed-point number with 64 fraction bits
 *   big      non-NaN samples with |x| >= 4096 or infinite
 * The partials of a chunk lie segment-major: partial (k, r) at
 * (k * nrec + r) * part_bytes.
 */
typedef struct gf_hist_part {
    uint64_t min_inv;
    uint64_t max_key;
    uint64_t sq_lo, sq_hi;
    uint32_t below, above, nan, big;
} gf_hist_part;

GF_HD static inline uint32_t *gf_hist_part_bins(gf_hist_part *p)
{
    return (uint32_t *)(p + 1);
}

/* Bytes of a partial of `bins` counts of count_bytes each. */
static inline size_t gf_hist_part_size(size_t bins, size_t count_bytes)
{
    return (sizeof(gf_hist_part) + bins * count_bytes + 7) & ~(size_t)7;
}

/* Count one sample in bin b of partial part (plan p's counts). */
static inline void gf_hist_part_count(const gf_hist_plan *p, gf_hist_part *part, uint32_t b)
{
    if (p->count_bytes == 2)
        ((uint16_t *)(part + 1))[b]++;
    else
        ((uint32_t *)(part + 1))[b]++;
}

static inline gf_hist_part *gf_hist_part_at(void *parts, const gf_hist_plan *p, size_t seg,
                                            size_t rec)
{
    return (gf_hist_part *)((unsigned char *)parts + (seg * (size_t)p->nrec + rec) * p->part_bytes);
}

/*
 * Segments of a chunk holding frames [pos, pos + frames) of the
 * histogrammed stream: returns their number (0 when frames is 0) and the
 * length of the first in *first (it may exceed frames). Segment 0 is
 * frames [0, first) of the chunk, segment k > 0 is
 * [first + (k-1)*block, first + k*block), the last one cut at frames.
 */
static inline size_t gf_hist_segments(const gf_hist_plan *p, uint64_t pos, size_t frames,
                                      size_t *first)
{
    *first = p->block - (size_t)(pos % p->block);
    if (frames == 0)
        return 0;
    if (frames <= *first)
        return 1;
    return 1 + (frames - *first + p->block - 1) / p->block;
}

/* Most segments a chunk of n frames can touch at any stream position. */
static inline size_t gf_hist_segs_for(size_t n, size_t block)
{
    return n == 0 ? 0 : (n + block - 2) / block + 1;
}

/* ---- the per-sample rules: one source for host and device ---- */

GF_HD static inline double gf_hist_dmul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

GF_HD static inline double gf_hist_dadd(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

GF_HD static inline double gf_hist_dsub(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

GF_HD static inline uint64_t gf_hist_bits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

GF_HD static inline double gf_hist_from_bits(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* Total-order key of a non-NaN double: unsigned comparison of keys orders
 * the values, with -0.0 below +0.0 and -inf lowest. Never 0. */
GF_HD static inline uint64_t gf_hist_key(double x)
{
    const uint64_t u = gf_hist_bits(x);
    return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

static inline double gf_hist_unkey(uint64_t k)
{
    return gf_hist_from_bits((k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k);
}

/*
 * Conversions without conversion instructions (the GPU runs those at a
 * quarter of its add rate), exact in the ranges used:
 *   (double)i for any uint32_t i: the double 2^52 + i, less 2^52;
 *   floor(t) for 0 <= t < 2^31: m = t + 2^52 is 2^52 + rint(t) (the ulp
 *   there is 1), whose low word is rint(t); one less if that exceeds t.
 */
GF_HD static inline double gf_hist_u32_to_double(uint32_t i)
{
    return gf_hist_dsub(gf_hist_from_bits(UINT64_C(0x4330000000000000) | i), 0x1p52);
}

GF_HD static inline uint32_t gf_hist_floor_u32(double t)
{
    const double m = gf_hist_dadd(t, 0x1p52);
    uint32_t i = (uint32_t)gf_hist_bits(m);
    if (gf_hist_dsub(m, 0x1p52) > t)
        i--;
    return i;
}

/* edge(i) = lo + i * step, for i < bins. */
GF_HD static inline double gf_hist_edge(const gf_hist_rule *r, uint32_t i)
{
    return gf_hist_dadd(r->lo, gf_hist_dmul(gf_hist_u32_to_double(i), r->step));
}

/*
 * The bin of x, lo <= x <= hi (the rule of gpufilt.h, numpy's):
 *   i = (size_t)((x - lo) * scale), clamped to [0, bins - 1];
 *   i-- if x < edge(i), else i++ if i < bins - 1 and x >= edge(i + 1).
 * The clamp is done on the double, before the conversion, so it is
 * defined for every t. (i > 0 in the first test changes nothing: edge(0)
 * is lo and x >= lo.)
 */
GF_HD static inline uint32_t gf_hist_bin(const gf_hist_rule *r, double x)
{
    const double t = gf_hist_dmul(gf_hist_dsub(x, r->lo), r->scale);
    uint32_t i;
    if (t >= r->binsd)
        i = r->bins - 1;
    else if (t >= 1.0)
        i = gf_hist_floor_u32(t); /* 1 <= t < bins <= 65536 */
    else
        i = 0; /* 0 <= t < 1 */
    if (i > 0 && x < gf_hist_edge(r, i))
        i--;
    else if (i + 1 < r->bins && x >= gf_hist_edge(r, i + 1))
        i++;
    return i;
}

/*
 * Add floor(q * 2^64), q = x*x rounded to double, to the 128-bit sum;
 * |x| < 4096, so 0 <= q < 2^24. From q's bits: q = m * 2^(e - 1075) with
 * m the 53-bit significand, so q * 2^64 = m * 2^(e - 1011), a shift of m
 * (at most 35 left; right shifts drop the bits below 2^-64). Zero and
 * subnormal q (e == 0) are below 2^-1022: they add 0.
 */
GF_HD static inline void gf_hist_add_square(gf_hist_part *a, double x)
{
    const uint64_t u = gf_hist_bits(gf_hist_dmul(x, x));
    const int e = (int)(u >> 52); /* the sign bit is 0 */
    if (e == 0)
        return;
    const uint64_t m = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    const int sh = e - 1011;
    uint64_t lo, hi;
    if (sh >= 0) {
        lo = m << sh;
        hi = sh ? m >> (64 - sh) : 0;
    } else {
        lo = sh > -64 ? m >> -sh : 0;
        hi = 0;
    }
    a->sq_lo += lo;
    a->sq_hi += hi + (a->sq_lo < lo);
}

/*
 * Account for sample x (already converted to double) in the header a:
 * nan, min/max, squares, below/above. Returns its bin, or GF_HIST_NO_BIN
 * when it is NaN, below lo or above hi; the caller counts the bin.
 */
GF_HD static inline uint32_t gf_hist_sample(const gf_hist_rule *r, gf_hist_part *a, double x)
{
    if (x != x) {
        a->nan++;
        return GF_HIST_NO_BIN;
    }
    const uint64_t k = gf_hist_key(x);
    if (~k > a->min_inv)
        a->min_inv = ~k;
    if (k > a->max_key)
        a->max_key = k;
    if (fabs(x) < GF_HIST_SQ_LIMIT)
        gf_hist_add_square(a, x);
    else
        a->big++;
    if (x < r->lo) {
        a->below++;
        return GF_HIST_NO_BIN;
    }
    if (x > r->hi) {
        a->above++;
        return GF_HIST_NO_BIN;
    }
    return gf_hist_bin(r, x);
}

/* ---- host side (hist.c, hist_count.c) ---- */

/*
 * The plan for config hc (validated) with `channels` channels and `slots`
 * backend slots. Shortens *chunk_frames where the partials of all slots
 * would exceed GF_HIST_PART_BUDGET, then sets max_segs for it.
 */
void gf_hist_plan_make(const gf_hist_config *hc, int channels, int slots, size_t *chunk_frames,
                       gf_hist_plan *plan);

/* rms of a block from its sums (identical for every backend):
 * NaN when n == 0, +inf when big > 0, else sqrt(S * 2^-64 / n) with
 * S = sq_hi * 2^64 + sq_lo rounded once to double. */
double gf_hist_rms(uint64_t sq_hi, uint64_t sq_lo, uint64_t big, uint64_t n);

/* Partials [i0, i1) of a chunk computed on the host from its samples
 * (frames x channels, float or double by ss), segments as
 * gf_hist_segments gives them. Each partial is written whole. */
void gf_hist_count_parts(const gf_hist_plan *p, const void *data, size_t ss, size_t frames,
                         size_t first, void *parts, size_t i0, size_t i1);

/* The engine's block accumulators and record queue. */
typedef struct gf_hist_state gf_hist_state;
struct gf_copy_pool;

gf_hist_state *gf_hist_state_create(const gf_hist_plan *plan);
/* Large merges widen their counts over pool's threads (copy_pool.h; NULL,
 * the default: the caller's thread alone); the pool must outlive h. */
void gf_hist_state_use_pool(gf_hist_state *h, struct gf_copy_pool *pool);
void gf_hist_state_destroy(gf_hist_state *h);
void gf_hist_state_reset(gf_hist_state *h);
/* Merge a chunk's partials; chunks must come in stream order (pos is
 * checked: GF_ERR_STATE otherwise). GF_ERR_NO_MEMORY when the queue cannot
 * grow. */
gf_status gf_hist_merge(gf_hist_state *h, void *parts, uint64_t pos, size_t frames);
/* End of stream: queue the last, short block (once). */
gf_status gf_hist_finish(gf_hist_state *h);
/* Take the oldest queued record: 1, or 0 when none. rec->bins stays valid
 * until the next gf_hist_pop or reset. */
int gf_hist_pop(gf_hist_state *h, gf_hist_record *rec);

#ifdef __cplusplus
}
#endif

#endif /* GF_HIST_H */
