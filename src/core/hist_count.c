/*
 * Partial histograms on the host, for the cpu backend: one partial at a
 * time, its header kept in locals while the samples of its segment (one
 * channel, or all with mix) stream past, so partials can be handed to
 * different threads. The per-sample rules are hist.h's, as on the GPU.
 */
#include "hist.h"

#include <string.h>

/* One partial: frames [f0, f1) of the chunk, channels [c0, c1), samples
 * of type T, counts of type B. */
#define GF_HIST_PART_LOOP(T, B)                                                         \
    do {                                                                                \
        const T *x = data;                                                              \
        B *bins = (B *)(part + 1);                                                      \
        for (size_t f = f0; f < f1; f++)                                                \
            for (size_t ch = c0; ch < c1; ch++) {                                       \
                const uint32_t b = gf_hist_sample(&p->rule, &a, (double)x[f * C + ch]); \
                if (b != GF_HIST_NO_BIN)                                                \
                    bins[b]++;                                                          \
            }                                                                           \
    } while (0)

static void one_part(const gf_hist_plan *p, const void *data, size_t ss, size_t frames,
                     size_t first, size_t seg, size_t rec, gf_hist_part *part)
{
    const size_t C = (size_t)p->channels;
    const size_t f0 = seg == 0 ? 0 : first + (seg - 1) * p->block;
    size_t f1 = seg == 0 ? first : f0 + p->block;
    if (f1 > frames)
        f1 = frames;
    const size_t c0 = p->mix ? 0 : rec, c1 = p->mix ? C : rec + 1;
    memset(part, 0, p->part_bytes);
    gf_hist_part a;
    memset(&a, 0, sizeof a);
    if (ss == sizeof(float) && p->count_bytes == 2)
        GF_HIST_PART_LOOP(float, uint16_t);
    else if (ss == sizeof(float))
        GF_HIST_PART_LOOP(float, uint32_t);
    else if (p->count_bytes == 2)
        GF_HIST_PART_LOOP(double, uint16_t);
    else
        GF_HIST_PART_LOOP(double, uint32_t);
    *part = a;
}

void gf_hist_count_parts(const gf_hist_plan *p, const void *data, size_t ss, size_t frames,
                         size_t first, void *parts, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++) {
        const size_t seg = i / (size_t)p->nrec, rec = i % (size_t)p->nrec;
        one_part(p, data, ss, frames, first, seg, rec, gf_hist_part_at(parts, p, seg, rec));
    }
}
