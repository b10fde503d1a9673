/*
 * A matrix of filters (gf_config.outputs): C inputs, O outputs, filter
 * i*O + o from input i into output o, y_o = sum_i h_(i*O+o) * x_i, summed on
 * spectra by the FFT method.
 *
 *   test_matrix cpu|cuda
 *
 * For each shape (true stereo 2 x 2, mono to stereo 1 x 2, 3 x 1, 2 x 3),
 * precision and mode, at sizes that take several partitions and several
 * chunks:
 *   - every output within gf_engine_error_bound of the exact sum (long
 *     double, compensated), and exactly as many frames as the mode gives;
 *   - the same bytes whatever the chunk size and the push/pull pattern;
 *   - the bound's formula: the FFT method's with C K terms;
 * and the refusals, each with its exact detail: a matrix with the direct
 * or NUPC method, without taps, with histograms or a hand-off, outputs out
 * of range; the queries' ranges (error bound per output, taps per filter).
 * cuda (exit 77 without a GPU): the same outputs, and a 2 x 2 of 2^20
 * taps in short chunks (several split-K runs per input, summed by
 * fft_reduce) within the bound.
 */
#include "gpufilt.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gf_device device;

typedef struct shape {
    int C, O;
    size_t taps, partition, frames;
} shape;

static const shape shapes[] = {
    {2, 2, 2000, 256, 12000}, /* true stereo */
    {1, 2, 777, 128, 9000},   /* mono to stereo */
    {3, 1, 3000, 256, 12000},
    {2, 3, 40, 16, 3000},
};

/* The exact output o of the causal filter at z[j], compensated in long double. */
static long double exact(const double *h, const double *x, const shape *s, int o, long long j)
{
    long double sum = 0, comp = 0;
    for (int i = 0; i < s->C; i++) {
        const double *hi = h + ((size_t)i * s->O + o) * s->taps;
        for (size_t k = 0; k < s->taps; k++) {
            const long long n = j - (long long)k;
            if (n < 0 || n >= (long long)s->frames)
                continue;
            const long double t = (long double)hi[k] * x[(size_t)n * s->C + i];
            const long double y = t - comp, u = sum + y;
            comp = (u - sum) - y;
            sum = u;
        }
    }
    return sum;
}

static size_t out_frames(const shape *s, gf_mode mode)
{
    return mode == GF_MODE_FULL ? s->frames + s->taps - 1 : s->frames;
}

/* The whole input through an engine: pushes of `step` frames (0: one
 * gf_engine_process), pulls of at most `pull` frames; returns the frames out. */
static size_t run(gf_engine *e, const void *in, const shape *s, size_t ss, size_t step, size_t pull,
                  unsigned char *out, size_t cap)
{
    size_t got = 0, n = 0;
    if (step == 0) {
        if (gf_engine_process(e, in, s->frames, out, &got) != GF_OK)
            return 0;
    } else {
        for (size_t off = 0; off < s->frames;) {
            size_t take = s->frames - off < step ? s->frames - off : step, used = 0;
            if (gf_engine_push(e, (const unsigned char *)in + off * s->C * ss, take, &used) !=
                GF_OK)
                return 0;
            off += used;
            do {
                if (gf_engine_pull(e, out + got * s->O * ss, pull, &n) != GF_OK)
                    return 0;
                got += n;
            } while (n > 0 && got < cap);
        }
    }
    if (gf_engine_flush(e) != GF_OK)
        return 0;
    do {
        if (gf_engine_pull(e, out + got * s->O * ss, cap - got, &n) != GF_OK)
            return 0;
        got += n;
    } while (n > 0);
    return got;
}

static gf_config matrix_config(const shape *s, const double *h, gf_precision prec, gf_mode mode)
{
    gf_config c = gf_config_default();
    c.taps = h;
    c.num_taps = s->taps;
    c.outputs = s->O;
    c.channels = s->C;
    c.mode = mode;
    c.method = GF_METHOD_FFT;
    c.partition = s->partition;
    c.precision = prec;
    c.device = device;
    c.threads = 2;
    return c;
}

/* Shape s's filters (decaying, like a response) and input, in the
 * precision: h (C x O x T doubles), in (the engine's samples) and x (the
 * same as doubles). Returns max |x|. */
static double make_inputs(const shape *s, gf_precision prec, gf_mode mode, double *h,
                          unsigned char *in, double *x)
{
    const size_t nf = (size_t)s->C * s->O * s->taps;
    tu_rng r = {(uint64_t)s->C * 1000 + s->O * 100 + mode * 10 + prec};
    for (size_t k = 0; k < nf; k++) {
        h[k] = tu_rng_sym(&r) * exp(-3.0 * (double)(k % s->taps) / (double)s->taps);
        if (prec == GF_PRECISION_F32)
            h[k] = (float)h[k];
    }
    double max_x = 0;
    for (size_t n = 0; n < s->frames * s->C; n++) {
        const double v = tu_rng_sym(&r);
        if (prec == GF_PRECISION_F32) {
            ((float *)in)[n] = (float)v;
            x[n] = (float)v;
        } else {
            ((double *)in)[n] = v;
            x[n] = v;
        }
        max_x = fabs(x[n]) > max_x ? fabs(x[n]) : max_x;
    }
    return max_x;
}

/* Every output of y (got frames) against the exact sum, within engine e's
 * bound, and that bound against its formula: FFT's with C K terms and
 * every input's filter into the output. */
static int check_against_exact(gf_engine *e, const shape *s, gf_precision prec, gf_mode mode,
                               const double *h, const double *x, double max_x,
                               const unsigned char *y, size_t got)
{
    int bad = 0;
    const long long delay = mode == GF_MODE_SAME ? (long long)(s->taps - 1) / 2 : 0;
    for (int o = 0; o < s->O; o++) {
        const double bound = gf_engine_error_bound(e, o, max_x);
        double worst = 0;
        for (size_t j = 0; j < got; j++) {
            const double v = prec == GF_PRECISION_F32 ? ((const float *)y)[j * s->O + o]
                                                      : ((const double *)y)[j * s->O + o];
            const double err =
                fabs((double)((long double)v - exact(h, x, s, o, (long long)j + delay)));
            worst = err > worst ? err : worst;
        }
        bad +=
            TU_CHECK(worst <= bound && bound > 0, "%dx%d %s mode %d output %d: error %g, bound %g",
                     s->C, s->O, prec == GF_PRECISION_F32 ? "f32" : "f64", mode, o, worst, bound);
        const double eps = prec == GF_PRECISION_F32 ? 0x1p-24 : 0x1p-53;
        double sum = 0, log2n = 0;
        for (size_t n = 2 * s->partition; n > 1; n >>= 1)
            log2n++;
        for (int i = 0; i < s->C; i++)
            for (size_t k = 0; k < s->taps; k++)
                sum += fabs(h[((size_t)i * s->O + o) * s->taps + k]);
        const double K = (double)((s->taps + s->partition - 1) / s->partition);
        const double want = eps * (2 * log2n + s->C * K + 4) * sum * max_x;
        bad += TU_CHECK(fabs(bound - want) <= 1e-12 * want,
                        "%dx%d output %d: bound %.17g, not %.17g", s->C, s->O, o, bound, want);
    }
    return bad;
}

static int check_shape(const shape *s, gf_precision prec, gf_mode mode)
{
    const size_t ss = prec == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    const size_t nf = (size_t)s->C * s->O * s->taps, cap = out_frames(s, mode) + 1;
    double *h = malloc(nf * sizeof *h), *x = malloc(s->frames * s->C * sizeof *x);
    unsigned char *in = malloc(s->frames * s->C * ss);
    unsigned char *out[3] = {malloc(cap * s->O * ss), malloc(cap * s->O * ss),
                             malloc(cap * s->O * ss)};
    const double max_x = make_inputs(s, prec, mode, h, in, x);
    int bad = 0;
    /* three chunkings: the default chunk, 3 partitions a chunk pushed in
     * pieces of 1000 frames pulled 333 at a time, and one process call */
    const size_t chunks[3] = {0, 3 * s->partition, 7 * s->partition};
    const size_t steps[3] = {0, 1000, 0}, pulls[3] = {0, 333, 0};
    size_t got[3] = {0, 0, 0};
    gf_engine *e = NULL;
    for (int v = 0; v < 3; v++) {
        gf_config c = matrix_config(s, h, prec, mode);
        c.chunk_frames = chunks[v];
        char detail[256] = "";
        gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
        bad += TU_CHECK(st == GF_OK, "%dx%d create: %s: %s", s->C, s->O, gf_strerror(st), detail);
        if (st != GF_OK)
            goto done;
        got[v] = run(e, in, s, ss, steps[v], pulls[v] ? pulls[v] : cap, out[v], cap);
        bad += TU_CHECK(got[v] == out_frames(s, mode),
                        "%dx%d mode %d chunking %d: %zu frames, not %zu", s->C, s->O, mode, v,
                        got[v], out_frames(s, mode));
        if (v > 0)
            bad += TU_CHECK(got[v] == got[0] && !memcmp(out[v], out[0], got[0] * s->O * ss),
                            "%dx%d mode %d: chunking %d's bytes differ from the default chunk's",
                            s->C, s->O, mode, v);
        if (v < 2)
            gf_engine_destroy(e), e = NULL;
    }
    if (got[0] == out_frames(s, mode)) /* e: the last chunking's engine, the same filter */
        bad += check_against_exact(e, s, prec, mode, h, x, max_x, out[0], got[0]);
done:
    gf_engine_destroy(e);
    free(h), free(x), free(in);
    for (int v = 0; v < 3; v++)
        free(out[v]);
    return bad;
}

static int test_outputs(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int prec = 0; prec < 2; prec++)
            for (int mode = 0; mode < 3; mode++)
                bad += check_shape(&shapes[i], (gf_precision)prec, (gf_mode)mode);
    return bad;
}

/* create's status and detail for config c. */
static int refused(gf_config *c, gf_status want, const char *detail_want)
{
    gf_engine *e = NULL;
    char detail[256] = "";
    const gf_status st = gf_engine_create(c, &e, detail, sizeof detail);
    gf_engine_destroy(e);
    return TU_CHECK(st == want && !strcmp(detail, detail_want), "got %s '%s', want %s '%s'",
                    gf_strerror(st), detail, gf_strerror(want), detail_want);
}

static int test_refusals(void)
{
    static const double h[4 * 8] = {[0] = 1, [1] = 0.5, [8] = 0.25, [24] = -1};
    const shape s = {2, 2, 8, 16, 100};
    int bad = 0;
    gf_config c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_SAME);
    c.method = GF_METHOD_DIRECT;
    bad += refused(&c, GF_ERR_UNSUPPORTED,
                   "a matrix (outputs 2) needs the FFT method, not the direct method");
    c.method = GF_METHOD_NUPC;
    c.device = GF_DEVICE_CPU;
    bad += refused(&c, GF_ERR_UNSUPPORTED,
                   "a matrix (outputs 2) needs the FFT method, not the NUPC method");
    c = matrix_config(&s, NULL, GF_PRECISION_F32, GF_MODE_SAME);
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT, "a matrix (outputs 2) needs explicit taps");
    c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_SAME);
    const gf_hist_config hc = {16, 100, -1, 1, 0, 0};
    c.hist = &hc;
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT, "a matrix (outputs 2) takes no histograms");
    c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_SAME);
    c.device = GF_DEVICE_CPU;
    c.handoff = GF_DEVICE_CUDA;
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT, "a matrix (outputs 2) takes no hand-off");
    c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_SAME);
    c.outputs = -1;
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT, "outputs -1 out of range 0..1024");
    c.outputs = GF_MAX_CHANNELS + 1;
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT, "outputs 1025 out of range 0..1024");
    double nan_taps[4 * 8] = {0};
    nan_taps[2 * 8 + 3] = NAN; /* filter 3: input 2 to output 1 */
    c = matrix_config(&s, nan_taps, GF_PRECISION_F32, GF_MODE_SAME);
    bad += refused(&c, GF_ERR_INVALID_ARGUMENT,
                   "coefficient 4 of filter 3 (input 2 to output 1) (nan) is not finite in the "
                   "precision");

    /* the queries: an error bound per output, taps per filter */
    c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_SAME);
    c.method = GF_METHOD_AUTO; /* a matrix: the FFT method */
    gf_engine *e = NULL;
    char detail[256] = "";
    if (TU_CHECK(gf_engine_create(&c, &e, detail, sizeof detail) == GF_OK, "create: %s", detail))
        return bad + 1;
    bad += TU_CHECK(gf_engine_method(e) == GF_METHOD_FFT, "auto chose method %d",
                    (int)gf_engine_method(e));
    bad += TU_CHECK(gf_engine_error_bound(e, 1, 1.0) > 0, "no bound for output 1");
    bad += TU_CHECK(isnan(gf_engine_error_bound(e, 2, 1.0)), "a bound for output 2 of 2");
    double t[8];
    bad += TU_CHECK(gf_engine_channel_taps(e, 3, t, 8) == GF_OK, "filter 3's taps refused");
    bad += TU_CHECK(gf_engine_channel_taps(e, 4, t, 8) == GF_ERR_INVALID_ARGUMENT,
                    "filter 4 of 4 given");
    gf_config got;
    gf_engine_get_config(e, &got);
    bad += TU_CHECK(got.outputs == 2 && got.channels == 2, "config: outputs %d, channels %d",
                    got.outputs, got.channels);
    gf_engine_destroy(e);
    return bad;
}

/* cuda: a long filter in short chunks, where the multiply-accumulate
 * splits each input's 2^20 / 512 = 2048 partitions into 16 runs (fft_mac's
 * split mode, then fft_reduce over the 2 x 16 runs). Checked at a sample of
 * outputs: every 97th frame. */
static int test_cuda_long(void)
{
    const shape s = {2, 2, (size_t)1 << 20, 512, 40000};
    const size_t nf = 4 * s.taps, cap = s.frames + 1;
    double *h = malloc(nf * sizeof *h), *x = malloc(s.frames * 2 * sizeof *x);
    float *in = malloc(s.frames * 2 * sizeof *in), *out = malloc(cap * 2 * sizeof *out);
    tu_rng r = {2020};
    for (size_t k = 0; k < nf; k++)
        h[k] = (float)(tu_rng_sym(&r) * exp(-8.0 * (double)(k % s.taps) / (double)s.taps));
    for (size_t n = 0; n < s.frames * 2; n++)
        x[n] = in[n] = (float)tu_rng_sym(&r);
    gf_config c = matrix_config(&s, h, GF_PRECISION_F32, GF_MODE_CAUSAL);
    c.chunk_frames = 4 * s.partition; /* fewer blocks than FFT_PART_BLOCKS: split */
    gf_engine *e = NULL;
    char detail[256] = "";
    int bad =
        TU_CHECK(gf_engine_create(&c, &e, detail, sizeof detail) == GF_OK, "create: %s", detail);
    if (!bad) {
        const size_t got = run(e, in, &s, sizeof(float), 0, cap, (unsigned char *)out, cap);
        bad += TU_CHECK(got == s.frames, "2^20 taps: %zu frames, not %zu", got, s.frames);
        for (int o = 0; o < 2 && got == s.frames; o++) {
            const double bound = gf_engine_error_bound(e, o, 1.0);
            double worst = 0;
            for (size_t j = 0; j < got; j += 97) {
                const double err =
                    fabs((double)((long double)out[j * 2 + o] - exact(h, x, &s, o, (long long)j)));
                worst = err > worst ? err : worst;
            }
            bad += TU_CHECK(worst <= bound, "2^20 taps, output %d: error %g, bound %g", o, worst,
                            bound);
        }
    }
    gf_engine_destroy(e);
    free(h), free(x), free(in), free(out);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "cuda"))) {
        fprintf(stderr, "usage: test_matrix cpu|cuda\n");
        return 2;
    }
    if (!strcmp(argv[1], "cuda")) {
        if (!gf_cuda_available()) {
            printf("test_matrix: SKIP: no usable CUDA device\n");
            return 77;
        }
        device = GF_DEVICE_CUDA;
        const tu_step steps[] = {test_outputs, test_cuda_long};
        return tu_run_steps("test_matrix", "cuda: the same shapes, and 2^20 taps in short chunks",
                            steps, 2);
    }
    device = GF_DEVICE_CPU;
    const tu_step steps[] = {test_outputs, test_refusals};
    return tu_run_steps("test_matrix", "4 shapes x 2 precisions x 3 modes x 3 chunkings, refusals",
                        steps, 2);
}
