#include "verify.h"

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gf_verify_init(gf_verify *v, gf_precision p, size_t channels)
{
    memset(v, 0, sizeof *v);
    v->precision = p;
    v->channels = channels;
}

void gf_verify_free(gf_verify *v)
{
    free(v->pending[0]);
    free(v->pending[1]);
    v->pending[0] = v->pending[1] = NULL;
}

/* Distance in units in the last place: each float's bits mapped onto a
 * monotonic unsigned scale (negatives inverted), so -0 and +0 are 1 apart. */
static uint64_t ulp_f32(float a, float b)
{
    uint32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    ia = ia >> 31 ? ~ia : ia | 0x80000000u;
    ib = ib >> 31 ? ~ib : ib | 0x80000000u;
    return ia > ib ? ia - ib : ib - ia;
}

static uint64_t ulp_f64(double a, double b)
{
    uint64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    ia = ia >> 63 ? ~ia : ia | (uint64_t)1 << 63;
    ib = ib >> 63 ? ~ib : ib | (uint64_t)1 << 63;
    return ia > ib ? ia - ib : ib - ia;
}

static void compare(gf_verify *v, const void *a, const void *b, size_t samples)
{
    const size_t ss = v->precision == GF_PRECISION_F32 ? 4 : 8;
    for (size_t i = 0; i < samples; i++) {
        const unsigned char *pa = (const unsigned char *)a + i * ss;
        const unsigned char *pb = (const unsigned char *)b + i * ss;
        if (memcmp(pa, pb, ss) == 0)
            continue;
        v->differ++;
        double x, y;
        uint64_t u;
        if (ss == 4) {
            float fa, fb;
            memcpy(&fa, pa, 4);
            memcpy(&fb, pb, 4);
            x = fa, y = fb, u = ulp_f32(fa, fb);
        } else {
            memcpy(&x, pa, 8);
            memcpy(&y, pb, 8);
            u = ulp_f64(x, y);
        }
        const double d = isnan(x) || isnan(y) ? INFINITY : fabs(x - y);
        if (!(d <= v->max_abs))
            v->max_abs = d;
        if (u > v->max_ulp)
            v->max_ulp = u;
    }
    v->compared += samples;
}

int gf_verify_feed(gf_verify *v, int side, const void *frames, size_t n)
{
    const size_t fb = v->channels * (v->precision == GF_PRECISION_F32 ? 4 : 8);
    const unsigned char *src = frames;
    const int other = !side;
    /* Match against what the other side already produced. */
    if (v->count[other] > 0) {
        const size_t m = n < v->count[other] ? n : v->count[other];
        compare(v, src, v->pending[other], m * v->channels);
        memmove(v->pending[other], v->pending[other] + m * fb, (v->count[other] - m) * fb);
        v->count[other] -= m;
        src += m * fb;
        n -= m;
    }
    if (n == 0)
        return 0;
    /* The rest waits for the other side. */
    if (v->count[side] + n > v->cap[side]) {
        size_t cap = (v->count[side] + n) * 2;
        unsigned char *p = realloc(v->pending[side], cap * fb);
        if (!p)
            return GF_EXIT_INTERNAL;
        v->pending[side] = p;
        v->cap[side] = cap;
    }
    memcpy(v->pending[side] + v->count[side] * fb, src, n * fb);
    v->count[side] += n;
    return 0;
}

void gf_hist_verify_init(gf_hist_verify *v, size_t bins)
{
    memset(v, 0, sizeof *v);
    v->bins = bins;
}

void gf_hist_verify_free(gf_hist_verify *v)
{
    for (int i = 0; i < 2; i++) {
        free(v->rec[i]);
        free(v->counts[i]);
        v->rec[i] = NULL;
        v->counts[i] = NULL;
    }
}

static int same_record(const gf_hist_record *a, const gf_hist_record *b, size_t bins)
{
    return a->block == b->block && a->first_frame == b->first_frame && a->frames == b->frames &&
           a->channel == b->channel && a->below == b->below && a->above == b->above &&
           a->nan == b->nan && memcmp(&a->min, &b->min, sizeof a->min) == 0 &&
           memcmp(&a->max, &b->max, sizeof a->max) == 0 &&
           memcmp(&a->rms, &b->rms, sizeof a->rms) == 0 &&
           memcmp(a->bins, b->bins, bins * sizeof *a->bins) == 0;
}

int gf_hist_verify_feed(gf_hist_verify *v, int side, const gf_hist_record *r)
{
    const int other = !side;
    if (v->count[other] > 0) {
        gf_hist_record *o = &v->rec[other][v->head[other]];
        o->bins = v->counts[other] + v->head[other] * v->bins;
        v->compared++;
        if (!same_record(o, r, v->bins) && v->differ++ == 0) {
            /* Channels from 1, as every message numbers them; the block
             * as --hist FILE numbers it, from 0. */
            if (r->channel < 0)
                snprintf(v->first, sizeof v->first, "block %llu, all channels (mix)",
                         (unsigned long long)r->block);
            else
                snprintf(v->first, sizeof v->first, "block %llu, channel %d",
                         (unsigned long long)r->block, r->channel + 1);
        }
        v->head[other]++;
        if (--v->count[other] == 0)
            v->head[other] = 0;
        return 0;
    }
    /* Append, compacting first: this side is ahead. */
    if (v->head[side] > 0) {
        memmove(v->rec[side], v->rec[side] + v->head[side],
                v->count[side] * sizeof(gf_hist_record));
        memmove(v->counts[side], v->counts[side] + v->head[side] * v->bins,
                v->count[side] * v->bins * sizeof(uint64_t));
        v->head[side] = 0;
    }
    if (v->count[side] == v->cap[side]) {
        const size_t cap = v->cap[side] ? 2 * v->cap[side] : 16;
        gf_hist_record *nr = realloc(v->rec[side], cap * sizeof *nr);
        if (!nr)
            return GF_EXIT_INTERNAL;
        v->rec[side] = nr;
        uint64_t *nc = realloc(v->counts[side], cap * v->bins * sizeof *nc);
        if (!nc)
            return GF_EXIT_INTERNAL;
        v->counts[side] = nc;
        v->cap[side] = cap;
    }
    v->rec[side][v->count[side]] = *r;
    memcpy(v->counts[side] + v->count[side] * v->bins, r->bins, v->bins * sizeof(uint64_t));
    v->count[side]++;
    return 0;
}
