/*
 * The FFT method's per-sample loops, instantiated once per sample type by
 * cpu_fft.c:
 *
 *   #define GF_T      float          sample and arithmetic type
 *   #define GF_FN(x)  x##_f32        name suffix
 *   #include "cpu_fft_body.h"
 */

/* The window of block b of channel ch: the previous block, then this one. */
static void GF_FN(window)(const gf_cpu_fft *f, const gf_chunk *c, int ch, size_t b, void *win)
{
    const size_t C = (size_t)f->channels, P = f->partition;
    const GF_T *in = (const GF_T *)c->in + ch;
    GF_T *w = win;
    if (b == 0)
        memcpy(w, (const GF_T *)f->tail + (size_t)ch * P, P * sizeof(GF_T));
    else
        for (size_t t = 0; t < P; t++)
            w[t] = in[((b - 1) * P + t) * C];
    for (size_t t = 0; t < P; t++)
        w[P + t] = in[(b * P + t) * C];
}

/* Interleaved complex values [i0, i1) (reals, even) of
 * y = sum_{k=0..K-1} H_k X_{j-k}, from the K spectra pairs hs[k], xs[k], in
 * k order, each complex product and sum rounded as written:
 *   p = (hr xr - hi xi, hr xi + hi xr), y = p_0, then y = y + p_k. */
static void GF_FN(mac_scalar)(const GF_T *const *hs, const GF_T *const *xs, size_t K, GF_T *y,
                              size_t i0, size_t i1)
{
    for (size_t k = 0; k < K; k++) {
        const GF_T *restrict hk = hs[k];
        const GF_T *restrict x = xs[k];
        GF_T *restrict acc = y;
        if (k == 0) {
            for (size_t i = i0; i < i1; i += 2) {
                acc[i] = hk[i] * x[i] - hk[i + 1] * x[i + 1];
                acc[i + 1] = hk[i] * x[i + 1] + hk[i + 1] * x[i];
            }
        } else {
            for (size_t i = i0; i < i1; i += 2) {
                acc[i] = acc[i] + (hk[i] * x[i] - hk[i + 1] * x[i + 1]);
                acc[i + 1] = acc[i + 1] + (hk[i] * x[i + 1] + hk[i + 1] * x[i]);
            }
        }
    }
}

/* y for blocks b .. b + nb - 1 (nb: 1 or 2) of channel ch into the
 * thread's spec (and spec2): the vector body where the CPU has one
 * (cpu_fft.c; the same operations in the same order, so the same bytes,
 * whether a block is done alone or in a pair), the scalar loop for the
 * rest. xs[i] is the spectrum of block b + nb - 1 - i. */
static void GF_FN(mac)(const gf_cpu_fft *f, fft_thread *t, int ch, size_t b, size_t nb)
{
    const size_t n = 2 * f->bins, K = f->partitions;
    const int h = f->filters == 1 ? 0 : ch;
    const GF_T **hs = (const GF_T **)t->hs, **xs = (const GF_T **)t->xs;
    for (size_t k = 0; k < K; k++)
        hs[k] = h_at(f, h, k);
    for (size_t i = 0; i < K + nb - 1; i++)
        xs[i] = ring_at(f, ch, (f->head + b + nb - 1 + f->ring_slots - i) % f->ring_slots);
    GF_T *y0 = t->spec, *y1 = t->spec2;
    if (nb == 1) {
        const size_t done = GF_FN(mac_vector)(hs, xs, K, y0, n);
        GF_FN(mac_scalar)(hs, xs, K, y0, done, n);
    } else {
        const size_t done = GF_FN(mac2_vector)(hs, xs, K, y0, y1, n);
        GF_FN(mac_scalar)(hs, xs + 1, K, y0, done, n);
        GF_FN(mac_scalar)(hs, xs, K, y1, done, n);
    }
}

/* A matrix's output o, block b, into y: sum over inputs i = 0 .. C-1 and
 * k = 0 .. K-1, in that order, of H_(i*O+o),k X_i,(b-k): the C K terms as
 * one run of mac's operations (vector body, then scalar), so the same
 * bytes whichever blocks a thread takes. */
static void GF_FN(mac_matrix)(const gf_cpu_fft *f, fft_thread *t, int o, size_t b, void *y)
{
    const size_t n = 2 * f->bins, K = f->partitions;
    const GF_T **hs = (const GF_T **)t->hs, **xs = (const GF_T **)t->xs;
    for (int i = 0; i < f->channels; i++)
        for (size_t k = 0; k < K; k++) {
            hs[(size_t)i * K + k] = h_at(f, i * f->outputs + o, k);
            xs[(size_t)i * K + k] =
                ring_at(f, i, (f->head + b + f->ring_slots - k) % f->ring_slots);
        }
    const size_t terms = (size_t)f->channels * K;
    const size_t done = GF_FN(mac_vector)(hs, xs, terms, y, n);
    GF_FN(mac_scalar)(hs, xs, terms, y, done, n);
}

/* The second half of block b's inverse transform is its output (channel
 * ch of the outputs). */
static void GF_FN(emit)(const gf_cpu_fft *f, const gf_chunk *c, int ch, size_t b, const void *time)
{
    const size_t C = (size_t)f->outputs, P = f->partition;
    const GF_T *src = (const GF_T *)time + P;
    GF_T *out = (GF_T *)c->out + ch;
    const size_t n0 = b * P;
    for (size_t t = n0 < c->skip ? c->skip - n0 : 0; t < P; t++)
        out[(n0 + t - c->skip) * C] = src[t];
}

/* The chunk's last block becomes the next window's first half. */
static void GF_FN(keep_tail)(gf_cpu_fft *f, const gf_chunk *c)
{
    const size_t C = (size_t)f->channels, P = f->partition, last = c->frames - P;
    for (int ch = 0; ch < f->channels; ch++) {
        GF_T *t = (GF_T *)f->tail + (size_t)ch * P;
        const GF_T *in = (const GF_T *)c->in + ch;
        for (size_t i = 0; i < P; i++)
            t[i] = in[(last + i) * C];
    }
}

#undef GF_T
#undef GF_FN
