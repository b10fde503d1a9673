/* The head of the filter in the audio callback (head.h). */
#include "live/head.h"

#include <stdlib.h>
#include <string.h>

int gf_live_head_init(gf_live_head *hd, const gf_taps *t, size_t H, int channels, gf_precision p,
                      size_t max_frames)
{
    memset(hd, 0, sizeof *hd);
    hd->channels = channels;
    hd->filters = t->h ? t->filters : 1;
    hd->f64 = p == GF_PRECISION_F64;
    hd->taps = H;
    hd->max_frames = max_frames;
    const size_t ss = hd->f64 ? sizeof(double) : sizeof(float), C = (size_t)channels;
    hd->h = malloc((size_t)hd->filters * H * ss);
    hd->x = calloc(C * (H - 1 + max_frames), ss);
    hd->y = malloc(max_frames * C * ss);
    hd->acc = malloc(max_frames * ss);
    if (!hd->h || !hd->x || !hd->y || !hd->acc) {
        gf_live_head_free(hd);
        return -1;
    }
    for (int f = 0; f < hd->filters; f++)
        for (size_t k = 0; k < H; k++) {
            const double v = t->h ? t->h[(size_t)f * t->n + k] : 1.0 / (double)t->n;
            if (hd->f64)
                ((double *)hd->h)[(size_t)f * H + k] = v;
            else
                ((float *)hd->h)[(size_t)f * H + k] = (float)v;
        }
    return 0;
}

/* Channel c in type T: its F new frames after its H - 1 of history, then
 * acc[i] = h[0] x[i] + h[1] x[i-1] + ... in k order for each output (the
 * loop over i inside, so that it vectorises without changing any output's
 * order of operations), interleaved into y; the history moved on. */
#define HEAD_CHANNEL(T)                                            \
    do {                                                           \
        T *xs = (T *)hd->x + c * span, *acc = hd->acc, *y = hd->y; \
        const T *h = (const T *)hd->h + f * H, *x0 = xs + H - 1;   \
        for (size_t i = 0; i < F; i++)                             \
            xs[H - 1 + i] = in[i * C + c];                         \
        for (size_t i = 0; i < F; i++)                             \
            acc[i] = h[0] * x0[i];                                 \
        for (size_t k = 1; k < H; k++) {                           \
            const T hk = h[k], *xk = x0 - k;                       \
            for (size_t i = 0; i < F; i++)                         \
                acc[i] = acc[i] + hk * xk[i];                      \
        }                                                          \
        for (size_t i = 0; i < F; i++)                             \
            y[i * C + c] = acc[i];                                 \
        memmove(xs, xs + F, (H - 1) * sizeof *xs);                 \
    } while (0)

void gf_live_head_run(gf_live_head *hd, const float *in, size_t F)
{
    const size_t C = (size_t)hd->channels, H = hd->taps, span = H - 1 + hd->max_frames;
    for (size_t c = 0; c < C; c++) {
        const size_t f = hd->filters == 1 ? 0 : c;
        if (hd->f64)
            HEAD_CHANNEL(double);
        else
            HEAD_CHANNEL(float);
    }
}

void gf_live_head_free(gf_live_head *hd)
{
    free(hd->h);
    free(hd->x);
    free(hd->y);
    free(hd->acc);
    memset(hd, 0, sizeof *hd);
}

/* Frames a muted output stays silent after dropped input or a period
 * longer than planned: the tail's length, plus the ring's content twice
 * over (what the worker held then, and its input ring's). */
static unsigned long long mute_span(const gf_live_zero *z)
{
    return z->tail_taps + 2 * (unsigned long long)(z->tail ? z->tail->size : 0);
}

void gf_live_zero_dropped(gf_live_zero *z, size_t n)
{
    z->hole += n;
    z->mute = mute_span(z);
}

size_t gf_live_zero_play(gf_live_zero *z, const float *in, float *out, size_t F)
{
    gf_live_head *hd = z->head;
    const size_t C = (size_t)hd->channels;
    if (F > hd->max_frames) { /* a period longer than planned: nothing to play */
        memset(out, 0, F * C * sizeof(float));
        z->mute = mute_span(z);
        return F;
    }
    gf_live_head_run(hd, in, F);
    size_t q = 0, r = F; /* frames [q, q + r) have their tail */
    if (z->tail) {
        q = z->hole < F ? z->hole : F;
        z->hole -= q;
        if (z->skip)
            z->skip -= gf_ring_read(z->tail, NULL, z->skip);
        r = z->skip ? 0 : gf_ring_read(z->tail, z->tail_buf, F - q);
        z->skip += F - q - r;
    }
    size_t quiet = 0;
    for (size_t j = 0; j < F; j++) {
        const int heard = j >= q && j < q + r && z->mute == 0;
        if (z->mute)
            z->mute--;
        quiet += !heard;
        for (size_t c = 0; c < C; c++) {
            const size_t k = j * C + c, t = (j - q) * C + c;
            if (!heard)
                out[k] = 0.0f;
            else if (hd->f64)
                out[k] = (float)(((const double *)hd->y)[k] +
                                 (z->tail ? ((const double *)z->tail_buf)[t] : 0.0));
            else
                out[k] = z->tail ? ((const float *)hd->y)[k] + ((const float *)z->tail_buf)[t]
                                 : ((const float *)hd->y)[k];
        }
    }
    return quiet;
}

int gf_live_tail_taps(const gf_taps *t, size_t H, gf_taps *tail)
{
    memset(tail, 0, sizeof *tail);
    const int filters = t->h ? t->filters : 1;
    const size_t n = t->n - H;
    if (!(tail->h = malloc((size_t)filters * n * sizeof(double))))
        return -1;
    for (int f = 0; f < filters; f++)
        for (size_t k = 0; k < n; k++)
            tail->h[(size_t)f * n + k] = t->h ? t->h[(size_t)f * t->n + H + k] : 1.0 / (double)t->n;
    tail->n = n;
    tail->filters = filters;
    tail->rate = t->rate;
    return 0;
}
