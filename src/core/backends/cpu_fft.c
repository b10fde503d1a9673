/* The CPU backend's FFT method (cpu_fft.h). */
#include "cpu_fft.h"

#include "fft/fft.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GF_FFT_AVX 1
#else
#define GF_FFT_AVX 0
#endif

typedef struct fft_thread {
    gf_fft *fft;
    void *win;   /* N reals */
    void *spec;  /* stride complex */
    void *spec2; /* stride complex: the second block of a pair */
    void *time;  /* N reals */
    void **hs;   /* K (a matrix: C K): the filter spectra of the block being accumulated */
    void **xs;   /* K + 1 (C K): the input spectra they multiply (a pair's) */
} fft_thread;

struct gf_cpu_fft {
    gf_precision prec;
    size_t ss;               /* bytes per real */
    int channels;            /* C: the inputs */
    int outputs;             /* the outputs: C, or a matrix's O */
    int matrix;              /* 1: filter i*O + o takes input i into output o */
    size_t taps;             /* T: taps per filter */
    size_t partition;        /* P: frames per partition */
    size_t fft_size;         /* N = 2P: the transform's length */
    size_t partitions;       /* K = ceil(T / P): the filter's partitions */
    size_t chunk_partitions; /* M = chunk frames / P: most partitions in one chunk */
    size_t ring_slots;       /* R = K - 1 + M: spectra the delay line holds per channel */
    size_t bins, stride;     /* P + 1 complex per spectrum; stride >= bins, a multiple of 8 */
    int filters;             /* 1, C with taps_per_channel, C x O with a matrix */
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
        gf_fft_free(f->th[i].spec2);
        gf_fft_free(f->th[i].time);
        free(f->th[i].hs);
        free(f->th[i].xs);
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
    f->matrix = p->outputs > 0;
    f->outputs = f->matrix ? p->outputs : p->channels;
    f->filters = f->matrix ? p->channels * p->outputs : p->taps_per_channel ? p->channels : 1;
    f->nthreads = threads;
    const size_t terms = f->partitions * (f->matrix ? (size_t)f->channels : 1); /* per output */
    const size_t spec_bytes = f->stride * 2 * f->ss;
    const size_t need =
        ((size_t)f->filters * f->partitions + (size_t)f->channels * f->ring_slots) * spec_bytes +
        (size_t)f->channels * f->partition * f->ss +
        (size_t)threads * (2 * f->fft_size * f->ss + 2 * spec_bytes);
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
        t->spec2 = gf_fft_alloc(spec_bytes);
        t->time = gf_fft_alloc(f->fft_size * f->ss);
        t->hs = malloc(terms * sizeof *t->hs);
        t->xs = malloc((terms + 1) * sizeof *t->xs);
        if (!t->fft || !t->win || !t->spec || !t->spec2 || !t->time || !t->hs || !t->xs)
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

size_t gf_cpu_fft_output_units(const gf_cpu_fft *f, const gf_chunk *c)
{
    return (size_t)f->outputs * ((c->frames / f->partition + 1) / 2);
}

/* The multiply-accumulate's vector body: the first `return value` reals of
 * y (a multiple of the tile), the scalar loop does the rest. With AVX, 8
 * floats or 4 doubles (4 or 2 complex) a register, 4 registers of y held
 * across all K partitions: per lane the same multiplies, then
 * (hr xr) - (hi xi) and (hr xi) + (hi xr) via addsub (x - y is x + -y
 * exactly), then y + p, in k order: the scalar loop's bytes. AVX without
 * FMA: nothing is contracted. Chosen at run time, so the build runs on any
 * x86-64. */
#if GF_FFT_AVX
__attribute__((target("avx"))) static size_t
mac_avx_f32(const float *const *hs, const float *const *xs, size_t K, float *y, size_t n)
{
    const size_t tile = 32, end = n / tile * tile;
    for (size_t i = 0; i < end; i += tile) {
        /* set, though k = 0 overwrites them: GCC 13 cannot see K >= 1 */
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                         _mm256_setzero_ps()};
        for (size_t k = 0; k < K; k++)
            for (int r = 0; r < 4; r++) {
                const __m256 h = _mm256_loadu_ps(hs[k] + i + 8 * r);
                const __m256 x = _mm256_loadu_ps(xs[k] + i + 8 * r);
                const __m256 a = _mm256_mul_ps(_mm256_moveldup_ps(h), x);
                const __m256 c = _mm256_mul_ps(_mm256_movehdup_ps(h), _mm256_permute_ps(x, 0xb1));
                const __m256 p = _mm256_addsub_ps(a, c);
                acc[r] = k == 0 ? p : _mm256_add_ps(acc[r], p);
            }
        for (int r = 0; r < 4; r++)
            _mm256_storeu_ps(y + i + 8 * r, acc[r]);
    }
    return end;
}

__attribute__((target("avx"))) static size_t
mac_avx_f64(const double *const *hs, const double *const *xs, size_t K, double *y, size_t n)
{
    const size_t tile = 16, end = n / tile * tile;
    for (size_t i = 0; i < end; i += tile) {
        __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                          _mm256_setzero_pd()};
        for (size_t k = 0; k < K; k++)
            for (int r = 0; r < 4; r++) {
                const __m256d h = _mm256_loadu_pd(hs[k] + i + 4 * r);
                const __m256d x = _mm256_loadu_pd(xs[k] + i + 4 * r);
                const __m256d a = _mm256_mul_pd(_mm256_movedup_pd(h), x);
                const __m256d c =
                    _mm256_mul_pd(_mm256_permute_pd(h, 0xf), _mm256_permute_pd(x, 0x5));
                const __m256d p = _mm256_addsub_pd(a, c);
                acc[r] = k == 0 ? p : _mm256_add_pd(acc[r], p);
            }
        for (int r = 0; r < 4; r++)
            _mm256_storeu_pd(y + i + 4 * r, acc[r]);
    }
    return end;
}

/* Two neighbouring blocks at once: y0 from xs[1 .. K], y1 from xs[0 .. K-1]
 * (block b1 = b0 + 1 reads one partition further on), each filter
 * spectrum loaded once for both; per block the operations above. */
__attribute__((target("avx"))) static size_t mac2_avx_f32(const float *const *hs,
                                                          const float *const *xs, size_t K,
                                                          float *y0, float *y1, size_t n)
{
    const size_t tile = 32, end = n / tile * tile;
    for (size_t i = 0; i < end; i += tile) {
        __m256 a0[4], a1[4];
        for (int r = 0; r < 4; r++) /* as in mac_avx_f32 */
            a0[r] = a1[r] = _mm256_setzero_ps();
        for (size_t k = 0; k < K; k++)
            for (int r = 0; r < 4; r++) {
                const __m256 h = _mm256_loadu_ps(hs[k] + i + 8 * r);
                const __m256 hr = _mm256_moveldup_ps(h), hi = _mm256_movehdup_ps(h);
                const __m256 x0 = _mm256_loadu_ps(xs[k + 1] + i + 8 * r);
                const __m256 x1 = _mm256_loadu_ps(xs[k] + i + 8 * r);
                const __m256 p0 = _mm256_addsub_ps(_mm256_mul_ps(hr, x0),
                                                   _mm256_mul_ps(hi, _mm256_permute_ps(x0, 0xb1)));
                const __m256 p1 = _mm256_addsub_ps(_mm256_mul_ps(hr, x1),
                                                   _mm256_mul_ps(hi, _mm256_permute_ps(x1, 0xb1)));
                a0[r] = k == 0 ? p0 : _mm256_add_ps(a0[r], p0);
                a1[r] = k == 0 ? p1 : _mm256_add_ps(a1[r], p1);
            }
        for (int r = 0; r < 4; r++) {
            _mm256_storeu_ps(y0 + i + 8 * r, a0[r]);
            _mm256_storeu_ps(y1 + i + 8 * r, a1[r]);
        }
    }
    return end;
}

__attribute__((target("avx"))) static size_t mac2_avx_f64(const double *const *hs,
                                                          const double *const *xs, size_t K,
                                                          double *y0, double *y1, size_t n)
{
    const size_t tile = 16, end = n / tile * tile;
    for (size_t i = 0; i < end; i += tile) {
        __m256d a0[4], a1[4];
        for (int r = 0; r < 4; r++)
            a0[r] = a1[r] = _mm256_setzero_pd();
        for (size_t k = 0; k < K; k++)
            for (int r = 0; r < 4; r++) {
                const __m256d h = _mm256_loadu_pd(hs[k] + i + 4 * r);
                const __m256d hr = _mm256_movedup_pd(h), hi = _mm256_permute_pd(h, 0xf);
                const __m256d x0 = _mm256_loadu_pd(xs[k + 1] + i + 4 * r);
                const __m256d x1 = _mm256_loadu_pd(xs[k] + i + 4 * r);
                const __m256d p0 = _mm256_addsub_pd(_mm256_mul_pd(hr, x0),
                                                    _mm256_mul_pd(hi, _mm256_permute_pd(x0, 0x5)));
                const __m256d p1 = _mm256_addsub_pd(_mm256_mul_pd(hr, x1),
                                                    _mm256_mul_pd(hi, _mm256_permute_pd(x1, 0x5)));
                a0[r] = k == 0 ? p0 : _mm256_add_pd(a0[r], p0);
                a1[r] = k == 0 ? p1 : _mm256_add_pd(a1[r], p1);
            }
        for (int r = 0; r < 4; r++) {
            _mm256_storeu_pd(y0 + i + 4 * r, a0[r]);
            _mm256_storeu_pd(y1 + i + 4 * r, a1[r]);
        }
    }
    return end;
}

static int have_avx(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}
#endif

static size_t mac_vector_f32(const float *const *hs, const float *const *xs, size_t K, float *y,
                             size_t n)
{
#if GF_FFT_AVX
    if (have_avx())
        return mac_avx_f32(hs, xs, K, y, n);
#endif
    (void)hs, (void)xs, (void)K, (void)y, (void)n;
    return 0;
}

static size_t mac_vector_f64(const double *const *hs, const double *const *xs, size_t K, double *y,
                             size_t n)
{
#if GF_FFT_AVX
    if (have_avx())
        return mac_avx_f64(hs, xs, K, y, n);
#endif
    (void)hs, (void)xs, (void)K, (void)y, (void)n;
    return 0;
}

static size_t mac2_vector_f32(const float *const *hs, const float *const *xs, size_t K, float *y0,
                              float *y1, size_t n)
{
#if GF_FFT_AVX
    if (have_avx())
        return mac2_avx_f32(hs, xs, K, y0, y1, n);
#endif
    (void)hs, (void)xs, (void)K, (void)y0, (void)y1, (void)n;
    return 0;
}

static size_t mac2_vector_f64(const double *const *hs, const double *const *xs, size_t K,
                              double *y0, double *y1, size_t n)
{
#if GF_FFT_AVX
    if (have_avx())
        return mac2_avx_f64(hs, xs, K, y0, y1, n);
#endif
    (void)hs, (void)xs, (void)K, (void)y0, (void)y1, (void)n;
    return 0;
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
    const size_t m = c->frames / f->partition, pairs = (m + 1) / 2;
    fft_thread *t = &f->th[thread];
    for (size_t u = u0; u < u1; u++) {
        const int ch = (int)(u / pairs);
        const size_t b = 2 * (u % pairs), nb = m - b < 2 ? m - b : 2;
        if (f->matrix) /* each block alone: its C K terms */
            for (size_t j = 0; j < nb; j++) {
                if (f->prec == GF_PRECISION_F32)
                    mac_matrix_f32(f, t, ch, b + j, j ? t->spec2 : t->spec);
                else
                    mac_matrix_f64(f, t, ch, b + j, j ? t->spec2 : t->spec);
            }
        else if (f->prec == GF_PRECISION_F32)
            mac_f32(f, t, ch, b, nb);
        else
            mac_f64(f, t, ch, b, nb);
        for (size_t j = 0; j < nb; j++) {
            gf_fft_inverse(t->fft, j ? t->spec2 : t->spec, t->time);
            if (f->prec == GF_PRECISION_F32)
                emit_f32(f, c, ch, b + j, t->time);
            else
                emit_f64(f, c, ch, b + j, t->time);
        }
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

size_t gf_cpu_fft_partition(const gf_cpu_fft *f)
{
    return f->partition;
}

size_t gf_cpu_fft_taps(const gf_cpu_fft *f)
{
    return f->taps;
}
