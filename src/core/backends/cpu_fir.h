/*
 * CPU FIR kernel, instantiated once per sample type by cpu.c:
 *
 *   #define GF_T      float          sample and arithmetic type
 *   #define GF_FN(x)  x##_f32        name suffix
 *   #include "cpu_fir.h"
 *
 * Output n (flat, interleaved index within the chunk) is
 *   acc = h[0] * x[n]; for k in 1..T-1: acc = acc + h[k] * x[n - k*C]
 * exactly as the reference computes it; vectorising runs that loop for
 * neighbouring outputs at once, which changes no rounding.
 */

/* Outputs [n0, n1) that read the halo: plain scalar loop. */
static void GF_FN(range_edge)(const GF_T *restrict h, ptrdiff_t T, ptrdiff_t C,
                              const GF_T *restrict halo, const GF_T *restrict in,
                              GF_T *restrict out, ptrdiff_t n0, ptrdiff_t n1)
{
    const ptrdiff_t hs = (T - 1) * C;
    for (ptrdiff_t n = n0; n < n1; n++) {
        GF_T acc = h[0] * in[n]; /* n >= 0: output positions are in the chunk */
        for (ptrdiff_t k = 1; k < T; k++) {
            const ptrdiff_t i = n - k * C;
            acc = acc + h[k] * (i < 0 ? halo[hs + i] : in[i]);
        }
        out[n] = acc;
    }
}

/* Outputs [n0, n1) with n0 >= (T-1)*C: every input lies in `in`. Blocks of
 * B outputs keep their accumulators in vector registers; the fixed trip
 * counts let the compiler vectorise at the machine's width (an AVX2 clone is
 * chosen at run time where available). Lanes are independent outputs, so
 * the rounding is exactly the scalar loop's. */
GF_CPU_CLONES
static void GF_FN(range_body)(const GF_T *restrict h, ptrdiff_t T, ptrdiff_t C,
                              const GF_T *restrict in, GF_T *restrict out, ptrdiff_t n0,
                              ptrdiff_t n1)
{
    enum { B = 128 / sizeof(GF_T) }; /* 4 AVX accumulators: hides the add latency */
    ptrdiff_t n = n0;
    for (; n + B <= n1; n += B) {
        GF_T acc[B];
        const GF_T *x = in + n;
        for (int i = 0; i < B; i++)
            acc[i] = h[0] * x[i];
        for (ptrdiff_t k = 1; k < T; k++) {
            const GF_T hk = h[k];
            const GF_T *xk = x - k * C;
            for (int i = 0; i < B; i++)
                acc[i] = acc[i] + hk * xk[i];
        }
        for (int i = 0; i < B; i++)
            out[n + i] = acc[i];
    }
    for (; n < n1; n++) {
        GF_T acc = h[0] * in[n];
        for (ptrdiff_t k = 1; k < T; k++)
            acc = acc + h[k] * in[n - k * C];
        out[n] = acc;
    }
}

/* Per-channel filters: output n uses channel n % C's taps. One output at a
 * time, in the same order of operations. */
static void GF_FN(range_channels)(const GF_T *restrict taps, ptrdiff_t T, ptrdiff_t C,
                                  const GF_T *restrict halo, const GF_T *restrict in,
                                  GF_T *restrict out, ptrdiff_t n0, ptrdiff_t n1)
{
    const ptrdiff_t hs = (T - 1) * C;
    for (ptrdiff_t n = n0; n < n1; n++) {
        const GF_T *h = taps + (n % C) * T;
        GF_T acc = h[0] * in[n];
        for (ptrdiff_t k = 1; k < T; k++) {
            const ptrdiff_t i = n - k * C;
            acc = acc + h[k] * (i < 0 ? halo[hs + i] : in[i]);
        }
        out[n] = acc;
    }
}

static void GF_FN(run_range)(const gf_backend_params *p, const gf_chunk *c, ptrdiff_t n0,
                             ptrdiff_t n1)
{
    const ptrdiff_t C = p->channels, T = (ptrdiff_t)p->num_taps;
    const ptrdiff_t hs = (T - 1) * C;
    /* out[] is indexed by n; the first skip frames are not stored. */
    GF_T *out = (GF_T *)c->out - (ptrdiff_t)c->skip * C;
    if (p->taps_per_channel) {
        GF_FN(range_channels)(p->taps, T, C, c->halo, c->in, out, n0, n1);
        return;
    }
    const ptrdiff_t edge = n1 < hs ? n1 : hs;
    if (n0 < edge) {
        GF_FN(range_edge)(p->taps, T, C, c->halo, c->in, out, n0, edge);
        n0 = edge;
    }
    if (n0 < n1)
        GF_FN(range_body)(p->taps, T, C, c->in, out, n0, n1);
}

#undef GF_T
#undef GF_FN
