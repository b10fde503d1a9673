/*
 * The NUPC method's level scheme (gpufilt.h: gf_nupc_levels) and a level's
 * segment of the taps, for the library and for the backends built as
 * modules, which link nothing of it (gf_cuda.h): one definition, inline.
 */
#ifndef GF_NUPC_SCHEME_H
#define GF_NUPC_SCHEME_H

#include "backend.h"

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

#endif /* GF_NUPC_SCHEME_H */
