/*
 * The reference's direct sum, instantiated once per sample type by ref.c
 * (as cpu.c does with cpu_fir.h):
 *
 *   #define GF_T      float          sample and arithmetic type
 *   #define GF_FN(x)  x##_f32        name suffix
 *   #include "ref_fir.h"
 *
 * Deliberately plain: one output at a time, channel by channel, taps in
 * order, acc = h[0] * x[j]; acc = acc + h[k] * x[j - k], each multiply and
 * add rounded on its own (the build forbids contraction).
 */

static void GF_FN(ref_run)(const ref_state *s, const gf_chunk *c)
{
    const GF_T *taps = s->p.taps, *halo = c->halo, *in = c->in;
    GF_T *out = c->out;
    const ptrdiff_t C = s->p.channels, T = (ptrdiff_t)s->p.num_taps;
    const ptrdiff_t hs = (T - 1) * C, z = (ptrdiff_t)(c->frames - c->zero_frames) * C;
    for (ptrdiff_t j = (ptrdiff_t)c->skip; j < (ptrdiff_t)(c->frames - c->drop_tail); j++)
        for (ptrdiff_t ch = 0; ch < C; ch++) {
            const GF_T *h = taps + (s->p.taps_per_channel ? ch * T : 0);
            GF_T acc = h[0] * REF_SAMPLE(halo, in, hs, j * C + ch, z);
            for (ptrdiff_t k = 1; k < T; k++)
                acc = acc + h[k] * REF_SAMPLE(halo, in, hs, (j - k) * C + ch, z);
            *out++ = acc;
        }
}

#undef GF_T
#undef GF_FN
