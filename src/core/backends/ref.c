/*
 * The serial reference backend: the oracle every other backend is checked
 * against. Deliberately plain: one output at a time, taps in order, each
 * multiply and add rounded on its own (the build forbids contraction); the
 * sum is written once for both sample types (ref_fir.h).
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct ref_state {
    gf_backend_params p;
    gf_hist_plan hist;
    int has_hist;
} ref_state;

static gf_status ref_create(const gf_backend_params *p, void **state, char *detail,
                            size_t detail_size)
{
    (void)detail;
    (void)detail_size;
    ref_state *s = calloc(1, sizeof *s);
    if (!s)
        return GF_ERR_NO_MEMORY;
    s->p = *p;
    if (p->hist) {
        s->hist = *p->hist;
        s->has_hist = 1;
    }
    s->p.hist = NULL;
    *state = s;
    return GF_OK;
}

static void ref_destroy(void *state)
{
    free(state);
}

/* Sample n of the chunk, n >= -halo_samples: the halo precedes in[0], and
 * from sample z on the chunk is zeros the engine did not write
 * (gf_chunk.zero_frames: the reference takes them as a count too, so
 * that every test of it runs the engine's zero_tail logic). */
#define REF_SAMPLE(halo, in, hs, n, z) ((n) < 0 ? (halo)[(hs) + (n)] : (n) >= (z) ? 0 : (in)[(n)])

#define GF_T     float
#define GF_FN(x) x##_f32
#include "ref_fir.h"

#define GF_T     double
#define GF_FN(x) x##_f64
#include "ref_fir.h"

/*
 * Histograms, the plainest way: every sample in stream order, its block
 * found by division, straight into its partial.
 */
static void ref_hist(const ref_state *s, const gf_chunk *c)
{
    const gf_hist_plan *hp = &s->hist;
    const size_t C = (size_t)s->p.channels, B = hp->block;
    const void *data = hp->of_input ? c->in : c->out;
    const size_t zero_at = hp->of_input ? (c->frames - c->zero_frames) * C : SIZE_MAX;
    size_t first;
    const size_t nseg = gf_hist_segments(hp, c->hist_pos, c->hist_frames, &first);
    memset(c->hist, 0, nseg * (size_t)hp->nrec * hp->part_bytes);
    for (size_t f = 0; f < c->hist_frames; f++) {
        const size_t seg = (size_t)((c->hist_pos + f) / B - c->hist_pos / B);
        for (size_t ch = 0; ch < C; ch++) {
            const double x = f * C + ch >= zero_at ? 0.0
                             : s->p.precision == GF_PRECISION_F32
                                 ? (double)((const float *)data)[f * C + ch]
                                 : ((const double *)data)[f * C + ch];
            gf_hist_part *part = gf_hist_part_at(c->hist, hp, seg, hp->mix ? 0 : ch);
            const uint32_t b = gf_hist_sample(&hp->rule, part, x);
            if (b != GF_HIST_NO_BIN)
                gf_hist_part_count(hp, part, b);
        }
    }
}

static gf_status ref_submit(void *state, int slot, const gf_chunk *c)
{
    const ref_state *s = state;
    (void)slot;
    if (s->p.precision == GF_PRECISION_F32)
        ref_run_f32(s, c);
    else
        ref_run_f64(s, c);
    if (s->has_hist)
        ref_hist(s, c);
    return GF_OK;
}

const gf_backend_ops gf_backend_ref = {
    .name = "ref",
    .device = GF_DEVICE_REF,
    .slots = 1,
    .chunk_samples = (size_t)1 << 16,
    .methods_f32 = GF_METHOD_BIT(GF_METHOD_DIRECT),
    .methods_f64 = GF_METHOD_BIT(GF_METHOD_DIRECT),
    .histograms = 1,
    .zero_tail = 1,
    .auto_rank = 0, /* the oracle: asked for by name only */
    .available = gf_sync_available,
    .reset = NULL,
    .create = ref_create,
    .destroy = ref_destroy,
    .host_alloc = gf_sync_host_alloc,
    .host_free = gf_sync_host_free,
    .direct_ok = gf_sync_direct_ok,
    .submit = ref_submit,
    .query = gf_sync_query,
    .wait = gf_sync_wait,
    .error = gf_sync_error,
};
