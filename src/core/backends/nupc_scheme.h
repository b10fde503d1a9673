/*
 * The NUPC method's level scheme (gpufilt.h: gf_nupc_levels), a level's
 * segment of the taps, and the CUDA backend's schedule of the levels
 * (backend_cuda_nupc.cu), for the library and for the backends built as
 * modules, which link nothing of it (gf_cuda.h): one definition, inline,
 * which a host test (tests/core/test_nupc_sched.c) checks too.
 */
#ifndef GF_NUPC_SCHEME_H
#define GF_NUPC_SCHEME_H

#include "backend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int gf_nupc_pow2_in_range(size_t p)
{
    return p >= GF_MIN_PARTITION && p <= GF_MAX_PARTITION && (p & (p - 1)) == 0;
}

/* gf_nupc_levels: sizes double from `first` to `max`; below max a level
 * takes 2 partitions, so level l >= 1 starts at o_l = 2 (2^l - 1) B >= S_l
 * (and below 2 S_l), and its blocks can be computed ahead of their outputs. */
static inline size_t gf_nupc_scheme(size_t taps, size_t first, size_t max, gf_nupc_level *out)
{
    if (taps < 1 || taps > GF_MAX_FFT_TAPS || !gf_nupc_pow2_in_range(first) ||
        !gf_nupc_pow2_in_range(max) || first > max || !out)
        return 0;
    size_t n = 0, offset = 0, size = first;
    while (offset < taps && n < GF_NUPC_MAX_LEVELS) {
        const size_t rest = taps - offset;
        size_t k = (rest + size - 1) / size;
        if (size < max && k > 2)
            k = 2;
        out[n++] = (gf_nupc_level){size, offset, k, k * size < rest ? k * size : rest};
        offset += k * size;
        if (size < max)
            size *= 2;
    }
    return n;
}

/* Level lv's taps: h[o .. o + taps) of every filter of p (one, or one a
 * channel), in the precision (ss bytes a tap); malloc'd, NULL if out of
 * memory. */
static inline void *gf_nupc_segment(const gf_backend_params *p, const gf_nupc_level *lv, size_t ss)
{
    const int filters = p->taps_per_channel ? p->channels : 1;
    unsigned char *g = (unsigned char *)malloc((size_t)filters * lv->taps * ss);
    if (!g)
        return NULL;
    for (int h = 0; h < filters; h++)
        memcpy(g + (size_t)h * lv->taps * ss,
               (const unsigned char *)p->taps + ((size_t)h * p->num_taps + lv->offset) * ss,
               lv->taps * ss);
    return g;
}

/* The params of level lv's FFT method, from the NUPC method's p: its
 * segment of the taps (gf_nupc_segment), partition S_l, chunks of `cap`
 * frames (whole blocks), no history to prime, no histograms (the NUPC
 * method counts its output). */
static inline gf_backend_params gf_nupc_level_params(const gf_backend_params *p,
                                                     const gf_nupc_level *lv, const void *taps,
                                                     size_t cap)
{
    gf_backend_params q = *p;
    q.method = GF_METHOD_FFT;
    q.num_taps = lv->taps;
    q.taps = taps;
    q.partition = lv->size;
    q.max_partition = lv->size;
    q.chunk_frames = cap;
    q.history_frames = 0;
    q.hist = NULL;
    return q;
}

/* ---- the CUDA backend's schedule; F: the most frames of an engine chunk ---- */

/* A level runs on a stream of its own where its slack o_l - S_l holds this
 * many chunks: the GPU then has that many periods of a live engine to run
 * it in. */
#define GF_NUPC_ASYNC_CHUNKS 4

static inline int gf_nupc_gpu_async(const gf_nupc_level *lv, size_t l, size_t F)
{
    return l > 0 && lv->offset - lv->size >= GF_NUPC_ASYNC_CHUNKS * F;
}

/* Level lv's ring of outputs, in frames (those of input frame t at slot t
 * mod R): whole blocks, at least o_l + F + S_l, so that a block's run
 * overwrites only outputs summed chunks before. */
static inline size_t gf_nupc_out_frames(const gf_nupc_level *lv, size_t F)
{
    return ((lv->offset + F + lv->size - 1) / lv->size + 1) * lv->size;
}

/* The levels' shared ring of input, in frames: a multiple of the largest
 * partition M (so every level's block is contiguous in it), at least F +
 * o_l + S_l for every level, so that a chunk's copy overwrites only input
 * every level is done with. */
static inline size_t gf_nupc_in_frames(const gf_nupc_level *lv, size_t L, size_t M, size_t F)
{
    size_t reach = 0;
    for (size_t l = 0; l < L; l++)
        reach = lv[l].offset + lv[l].size > reach ? lv[l].offset + lv[l].size : reach;
    return (F + reach + M - 1) / M * M;
}

/* The levels on streams of their own (async[l]) that queue their complete
 * blocks in a chunk that brings the input to `given` frames, each having
 * queued taken[l]: every one whose outputs the chunk's sum reads and are
 * not queued (given - o_l > taken[l]), and where none is, the one due
 * first (least taken[l] + o_l) with a complete block: one level's launches
 * a chunk, not every level's that a block boundary completes at once, as
 * zita-convolver staggers its larger partitions. A bit mask of levels. */
static inline uint32_t gf_nupc_stagger(const gf_nupc_level *lv, size_t L, const int *async,
                                       const uint64_t *taken, uint64_t given)
{
    uint32_t forced = 0;
    size_t due = L;
    for (size_t l = 0; l < L; l++) {
        if (!async[l] || given - taken[l] < lv[l].size)
            continue;
        if (given > lv[l].offset && given - lv[l].offset > taken[l])
            forced |= (uint32_t)1 << l;
        else if (due == L || taken[l] + lv[l].offset < taken[due] + lv[due].offset)
            due = l;
    }
    return forced ? forced : due < L ? (uint32_t)1 << due : 0;
}

#endif /* GF_NUPC_SCHEME_H */
