/* The CPU backend's FFT method (cpu_fft.h). */
#include "cpu_fft.h"

#include "fft/fft.h"

#include <stdlib.h>
#include <string.h>

typedef struct fft_thread {
    gf_fft *fft;
    void *win;  /* N reals */
    void *spec; /* stride complex */
    void *time; /* N reals */
} fft_thread;

struct gf_cpu_fft {
    gf_precision prec;
    size_t ss;               /* bytes per real */
    int channels;            /* C */
    size_t taps;             /* T: taps per filter */
    size_t partition;        /* P: frames per partition */
    size_t fft_size;         /* N = 2P: the transform's length */
    size_t partitions;       /* K = ceil(T / P): the filter's partitions */
    size_t chunk_partitions; /* M = chunk frames / P: most partitions in one chunk */
    size_t ring_slots;       /* R = K - 1 + M: spectra the delay line holds per channel */
    size_t bins, stride;     /* P + 1 complex per spectrum; stride >= bins, a multiple of 8 */
    int filters;             /* 1, or C with taps_per_channel */
    void *H;                 /* filters x K spectra */
    void *ring;              /* C x R spectra */
    void *tail;              /* C x P reals: each channel's last block */
    size_t head;             /* ring slot of the next block */
    int nthreads;
    fft_thread th[GF_MAX_THREADS];
};

/* Spectrum k of filter set h, and ring slot s of channel c. */
static void *h_at(const gf_cpu_fft *f, int h, size_t k)
{
    return (unsigned char *)f->H + ((size_t)h * f->partitions + k) * f->stride * 2 * f->ss;
}

static void *ring_at(const gf_cpu_fft *f, int c, size_t s)
{
    return (unsigned char *)f->ring + ((size_t)c * f->ring_slots + s) * f->stride * 2 * f->ss;
}

/* H_k = FFT([h[kP .. kP+P) | zeros]) / N for every filter set, in double
 * where the library has it, rounded to the precision. */
static gf_status make_spectra(gf_cpu_fft *f, const gf_backend_params *p)
{
    const gf_precision hp = gf_fft_available(GF_PRECISION_F64) ? GF_PRECISION_F64 : f->prec;
    const size_t hs = hp == GF_PRECISION_F64 ? sizeof(double) : sizeof(float);
    gf_fft *fft = gf_fft_create(f->fft_size, hp);
    unsigned char *win = gf_fft_alloc(f->fft_size * hs), *spec = gf_fft_alloc(f->stride * 2 * hs);
    gf_status st = fft && win && spec ? GF_OK : GF_ERR_NO_MEMORY;
    const double scale = 1.0 / (double)f->fft_size;
    for (int h = 0; st == GF_OK && h < f->filters; h++)
        for (size_t k = 0; k < f->partitions; k++) {
            memset(win, 0, f->fft_size * hs);
            for (size_t t = 0; t < f->partition && k * f->partition + t < f->taps; t++) {
                const size_t i = (size_t)h * f->taps + k * f->partition + t;
                const double v = f->prec == GF_PRECISION_F32 ? ((const float *)p->taps)[i]
                                                             : ((const double *)p->taps)[i];
                if (hp == GF_PRECISION_F64)
                    ((double *)win)[t] = v;
                else
                    ((float *)win)[t] = (float)v;
            }
            gf_fft_forward(fft, win, spec);
            void *dst = h_at(f, h, k);
            for (size_t i = 0; i < 2 * f->bins; i++) {
                const double v = hp == GF_PRECISION_F64 ? ((double *)spec)[i] * scale
                                                        : (double)((float *)spec)[i] * scale;
                if (f->prec == GF_PRECISION_F32)
                    ((float *)dst)[i] = (float)v;
                else
                    ((double *)dst)[i] = v;
            }
        }
    gf_fft_destroy(fft);
    gf_fft_free(win);
    gf_fft_free(spec);
    return st;
}

void gf_cpu_fft_destroy(gf_cpu_fft *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->nthreads; i++) {
        gf_fft_destroy(f->th[i].fft);
        gf_fft_free(f->th[i].win);
        gf_fft_free(f->th[i].spec);
        gf_fft_free(f->th[i].time);
    }
    gf_fft_free(f->H);
    gf_fft_free(f->ring);
    gf_fft_free(f->tail);
    free(f);
}

void gf_cpu_fft_reset(gf_cpu_fft *f)
{
    memset(f->ring, 0, (size_t)f->channels * f->ring_slots * f->stride * 2 * f->ss);
    memset(f->tail, 0, (size_t)f->channels * f->partition * f->ss);
    f->head = 0;
}

gf_status gf_cpu_fft_create(const gf_backend_params *p, int threads, gf_cpu_fft **out, char *detail,
                            size_t detail_size)
{
    *out = NULL;
    if (!gf_fft_available(p->precision)) {
        gf_detail(detail, detail_size, "the FFT method needs --precision f32 with %s",
                  gf_fft_library());
        return GF_ERR_UNSUPPORTED;
    }
    gf_cpu_fft *f = calloc(1, sizeof *f);
    if (!f)
        return GF_ERR_NO_MEMORY;
    f->prec = p->precision;
    f->ss = p->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    f->channels = p->channels;
    f->taps = p->num_taps;
    f->partition = p->partition;
    f->fft_size = 2 * f->partition;
    f->partitions = (f->taps + f->partition - 1) / f->partition;
    f->chunk_partitions = p->chunk_frames / f->partition;
    f->ring_slots = f->partitions - 1 + f->chunk_partitions;
    f->bins = f->partition + 1;
    f->stride = (f->bins + 7) & ~(size_t)7;
    f->filters = p->taps_per_channel ? p->channels : 1;
    f->nthreads = threads;
    const size_t spec_bytes = f->stride * 2 * f->ss;
    const size_t need =
        ((size_t)f->filters * f->partitions + (size_t)f->channels * f->ring_slots) * spec_bytes +
        (size_t)f->channels * f->partition * f->ss +
        (size_t)threads * (2 * f->fft_size * f->ss + spec_bytes);
    const size_t avail = gf_host_available();
    if (need > avail) {
        gf_detail(detail, detail_size,
                  "the FFT filter needs %.1f MiB of host memory (%zu taps x %d channel%s, "
                  "partition %zu); %.1f MiB are available",
                  (double)need / (1 << 20), f->taps, f->channels, f->channels == 1 ? "" : "s",
                  f->partition, (double)avail / (1 << 20));
        gf_cpu_fft_destroy(f);
        return GF_ERR_NO_MEMORY;
    }
    f->H = gf_fft_alloc((size_t)f->filters * f->partitions * spec_bytes);
    f->ring = gf_fft_alloc((size_t)f->channels * f->ring_slots * spec_bytes);
    f->tail = gf_fft_alloc((size_t)f->channels * f->partition * f->ss);
    gf_status st = f->H && f->ring && f->tail ? GF_OK : GF_ERR_NO_MEMORY;
    for (int i = 0; st == GF_OK && i < threads; i++) {
        fft_thread *t = &f->th[i];
        t->fft = gf_fft_create(f->fft_size, f->prec);
        t->win = gf_fft_alloc(f->fft_size * f->ss);
        t->spec = gf_fft_alloc(spec_bytes);
        t->time = gf_fft_alloc(f->fft_size * f->ss);
        if (!t->fft || !t->win || !t->spec || !t->time)
            st = GF_ERR_NO_MEMORY;
    }
    if (st == GF_OK)
        st = make_spectra(f, p);
    if (st != GF_OK) {
        gf_detail(detail, detail_size,
                  "the FFT filter needs %.1f MiB of host memory (%zu taps x %d channel%s, "
                  "partition %zu): not available",
                  (double)need / (1 << 20), f->taps, f->channels, f->channels == 1 ? "" : "s",
                  f->partition);
        gf_cpu_fft_destroy(f);
        return st;
    }
    gf_cpu_fft_reset(f);
    *out = f;
    return GF_OK;
}

size_t gf_cpu_fft_units(const gf_cpu_fft *f, const gf_chunk *c)
{
    return (size_t)f->channels * (c->frames / f->partition);
}

#define GF_T     float
#define GF_FN(x) x##_f32
#include "cpu_fft_body.h"

#define GF_T     double
#define GF_FN(x) x##_f64
#include "cpu_fft_body.h"

void gf_cpu_fft_forward(gf_cpu_fft *f, const gf_chunk *c, size_t u0, size_t u1, int thread)
{
    const size_t m = c->frames / f->partition;
    for (size_t u = u0; u < u1; u++) {
        const int ch = (int)(u / m);
        const size_t b = u % m;
        fft_thread *t = &f->th[thread];
        if (f->prec == GF_PRECISION_F32)
            window_f32(f, c, ch, b, t->win);
        else
            window_f64(f, c, ch, b, t->win);
        gf_fft_forward(t->fft, t->win, ring_at(f, ch, (f->head + b) % f->ring_slots));
    }
}

void gf_cpu_fft_output(gf_cpu_fft *f, const gf_chunk *c, size_t u0, size_t u1, int thread)
{
    const size_t m = c->frames / f->partition;
    for (size_t u = u0; u < u1; u++) {
        const int ch = (int)(u / m);
        const size_t b = u % m;
        fft_thread *t = &f->th[thread];
        if (f->prec == GF_PRECISION_F32)
            mac_f32(f, ch, b, t->spec);
        else
            mac_f64(f, ch, b, t->spec);
        gf_fft_inverse(t->fft, t->spec, t->time);
        if (f->prec == GF_PRECISION_F32)
            emit_f32(f, c, ch, b, t->time);
        else
            emit_f64(f, c, ch, b, t->time);
    }
}

void gf_cpu_fft_end(gf_cpu_fft *f, const gf_chunk *c)
{
    const size_t m = c->frames / f->partition;
    if (f->prec == GF_PRECISION_F32)
        keep_tail_f32(f, c);
    else
        keep_tail_f64(f, c);
    f->head = (f->head + m) % f->ring_slots;
}
