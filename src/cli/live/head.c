/* The head of the filter in the audio callback (head.h). */
#include "live/head.h"

#include <stdlib.h>
#include <string.h>

int gf_live_head_taps(const gf_live_head *hd, const gf_taps *t, void **h, int *filters)
{
    const size_t H = hd->taps, ss = hd->f64 ? sizeof(double) : sizeof(float);
    const int n = t->h ? t->filters : 1;
    unsigned char *g = malloc((size_t)n * H * ss);
    if (!g)
        return -1;
    for (int f = 0; f < n; f++)
        for (size_t k = 0; k < H; k++) {
            const double v = k >= t->n ? 0.0
                             : t->h    ? t->h[(size_t)f * t->n + k]
                                       : 1.0 / (double)t->n;
            if (hd->f64)
                ((double *)g)[(size_t)f * H + k] = v;
            else
                ((float *)g)[(size_t)f * H + k] = (float)v;
        }
    *h = g;
    *filters = n;
    return 0;
}

int gf_live_head_init(gf_live_head *hd, const gf_taps *t, size_t H, int channels, gf_precision p,
                      size_t max_frames)
{
    memset(hd, 0, sizeof *hd);
    hd->channels = channels;
    hd->f64 = p == GF_PRECISION_F64;
    hd->taps = H;
    hd->max_frames = max_frames;
    const size_t ss = hd->f64 ? sizeof(double) : sizeof(float), C = (size_t)channels;
    hd->x = calloc(C * (H - 1 + max_frames), ss);
    hd->y = malloc(max_frames * C * ss);
    hd->y2 = malloc(max_frames * C * ss);
    hd->acc = malloc(max_frames * ss);
    if (!hd->x || !hd->y || !hd->y2 || !hd->acc || gf_live_head_taps(hd, t, &hd->h, &hd->filters)) {
        gf_live_head_free(hd);
        return -1;
    }
    return 0;
}

/* Channel c's sums in type T over its history and new frames x0[0 .. F)
 * (x0[-1], x0[-2], ... before them) by taps h: acc[i] = h[0] x[i] + h[1]
 * x[i-1] + ... in k order for each output (the loop over i inside, so that
 * it vectorises without changing any output's order of operations),
 * interleaved into channel c of y. */
#define HEAD_SUMS(T, taps, out)                                         \
    do {                                                                \
        T *acc = hd->acc, *y = (out);                                   \
        const T *h = (taps), *x0 = (const T *)hd->x + c * span + H - 1; \
        for (size_t i = 0; i < F; i++)                                  \
            acc[i] = h[0] * x0[i];                                      \
        for (size_t k = 1; k < H; k++) {                                \
            const T hk = h[k], *xk = x0 - k;                            \
            for (size_t i = 0; i < F; i++)                              \
                acc[i] = acc[i] + hk * xk[i];                           \
        }                                                               \
        for (size_t i = 0; i < F; i++)                                  \
            y[i * C + c] = acc[i];                                      \
    } while (0)

/* Channel c in type T: its F new frames after its H - 1 of history, the
 * sums (and the incoming head's), then the history moved on. */
#define HEAD_CHANNEL(T)                                                                     \
    do {                                                                                    \
        T *xs = (T *)hd->x + c * span;                                                      \
        for (size_t i = 0; i < F; i++)                                                      \
            xs[H - 1 + i] = in[i * C + c];                                                  \
        HEAD_SUMS(T, (const T *)hd->h + (hd->filters == 1 ? 0 : c) * H, (T *)hd->y);        \
        if (hd->h2)                                                                         \
            HEAD_SUMS(T, (const T *)hd->h2 + (hd->filters2 == 1 ? 0 : c) * H, (T *)hd->y2); \
        memmove(xs, xs + F, (H - 1) * sizeof *xs);                                          \
    } while (0)

void gf_live_head_run(gf_live_head *hd, const float *in, size_t F)
{
    const size_t C = (size_t)hd->channels, H = hd->taps, span = H - 1 + hd->max_frames;
    for (size_t c = 0; c < C; c++) {
        if (hd->f64)
            HEAD_CHANNEL(double);
        else
            HEAD_CHANNEL(float);
    }
}

void gf_live_head_free(gf_live_head *hd)
{
    free(hd->h);
    free(hd->h2);
    free(hd->x);
    free(hd->y);
    free(hd->y2);
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

void gf_live_zero_suspect(gf_live_zero *z, size_t F)
{
    /* head and tail still line up: what hears these F frames is wrong
     * until the filter's length after them */
    const unsigned long long span = F + z->head->taps + z->tail_taps;
    if (span > z->mute)
        z->mute = span;
}

/* A change of filter posted (head.h): the crossfade starts at output
 * frame fade_at, past every input frame the worker can have had (all up to
 * this period's end), its warm-up and the tail's delay H; both heads run
 * from now on. */
static void fade_begin(gf_live_zero *z, size_t F)
{
    gf_live_head *hd = z->head;
    if (hd->h2 || !z->switch_state ||
        atomic_load_explicit(&z->head_state, memory_order_relaxed) != GF_HEAD_IDLE ||
        atomic_load_explicit(z->switch_state, memory_order_acquire) != z->switch_posted)
        return;
    hd->h2 = z->next_h;
    hd->filters2 = z->next_filters;
    z->next_h = NULL;
    z->fade_at = z->played + F + z->warm + hd->taps;
    atomic_store_explicit(&z->head_state, GF_HEAD_CHOSEN, memory_order_release);
}

void gf_live_crossfade(void *old, const void *incoming, size_t frames, int channels, int f64,
                       unsigned long long first, unsigned long long fade_from, size_t fade)
{
    const size_t C = (size_t)channels;
    for (size_t j = 0; j < frames; j++) {
        const unsigned long long g = first + j;
        if (g < fade_from)
            continue;
        const unsigned long long p = g - fade_from;
        const double w = p >= fade ? 1.0 : (double)(p + 1) / (double)(fade + 1);
        for (size_t c = 0; c < C; c++) {
            const size_t k = j * C + c;
            if (f64) {
                double *a = old;
                const double *b = incoming;
                a[k] = w == 1.0 ? b[k] : a[k] * (1.0 - w) + b[k] * w;
            } else {
                float *a = old;
                const float *b = incoming;
                a[k] = w == 1.0 ? b[k] : (float)((double)a[k] * (1.0 - w) + (double)b[k] * w);
            }
        }
    }
}

/* The head's output during a change: faded from fade_at as the worker
 * fades the tail (worker.c), H frames later in its own count; once the
 * fade is over the new head is the head. */
static void fade_mix(gf_live_zero *z, size_t F)
{
    gf_live_head *hd = z->head;
    if (!hd->h2)
        return;
    gf_live_crossfade(hd->y, hd->y2, F, hd->channels, hd->f64, z->played, z->fade_at, z->fade);
    if (z->played + F >= z->fade_at + z->fade) { /* over: the new head plays alone */
        z->old_h = hd->h;
        hd->h = hd->h2;
        hd->filters = hd->filters2;
        hd->h2 = NULL;
        atomic_store_explicit(&z->head_state, GF_HEAD_DONE, memory_order_release);
    }
}

size_t gf_live_zero_play(gf_live_zero *z, const float *in, float *out, size_t F)
{
    gf_live_head *hd = z->head;
    const size_t C = (size_t)hd->channels;
    fade_begin(z, F);
    if (F > hd->max_frames) { /* a period longer than planned: nothing to play */
        memset(out, 0, F * C * sizeof(float));
        z->mute = mute_span(z);
        z->played += F;
        return F;
    }
    gf_live_head_run(hd, in, F);
    fade_mix(z, F);
    z->played += F;
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

int gf_live_pad_taps(gf_taps *t, size_t n)
{
    if (t->n >= n)
        return 0;
    const int filters = t->h ? t->filters : 1;
    double *h = calloc((size_t)filters * n, sizeof *h);
    if (!h)
        return -1;
    for (int f = 0; f < filters; f++)
        for (size_t k = 0; k < t->n; k++)
            h[(size_t)f * n + k] = t->h ? t->h[(size_t)f * t->n + k] : 1.0 / (double)t->n;
    gf_taps_free(t);
    t->h = h;
    t->n = n;
    t->filters = filters;
    return 0;
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
