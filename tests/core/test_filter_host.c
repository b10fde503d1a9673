/*
 * gf_engine_filter: a whole signal in host memory, its whole output in one
 * call, must be byte-identical to the same engine's push/pull stream with
 * a flush (tu_run_stream), and of the mode's exact length: on the ref and
 * cpu backends, direct, FFT (whole and per-channel taps, a matrix) and
 * NUPC, every mode, f32 and f64, inputs from none to several chunks,
 * lengths that end inside a partition and signals shorter than the
 * look-ahead. The chunks carry the look-ahead as zeros the backend makes
 * and the last partition's padding as outputs it does not write
 * (gf_chunk.zero_frames, drop_tail). Also: a second call on the same
 * engine, push refused after, histograms (the staged way) and the
 * arguments refused. With the argument `cuda` (test_filter_host_cuda, a
 * GPU test: 77 without a device), the cuda backend's cases instead: the
 * signal and output page-locked (gf_host_alloc: every chunk straight
 * between them and the GPU) or not (the staged way).
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fcase {
    const char *name;
    gf_device dev;
    gf_method method;
    int channels, outputs, per_channel;
    size_t taps, partition, chunk;
    gf_precision prec;
    int pinned; /* x and the output from gf_host_alloc */
} fcase;

static const fcase cases[] = {
    {"ref direct mono", GF_DEVICE_REF, GF_METHOD_DIRECT, 1, 0, 0, 63, 0, 500, GF_PRECISION_F32, 0},
    {"ref direct 2 ch f64", GF_DEVICE_REF, GF_METHOD_DIRECT, 2, 0, 0, 8, 0, 7, GF_PRECISION_F64, 0},
    {"cpu direct 3 ch, per-channel", GF_DEVICE_CPU, GF_METHOD_DIRECT, 3, 0, 1, 255, 0, 1000,
     GF_PRECISION_F32, 0},
    {"cpu FFT mono", GF_DEVICE_CPU, GF_METHOD_FFT, 1, 0, 0, 1000, 128, 1024, GF_PRECISION_F32, 0},
    {"cpu FFT 2 ch f64, per-channel", GF_DEVICE_CPU, GF_METHOD_FFT, 2, 0, 1, 3001, 256, 0,
     GF_PRECISION_F64, 0},
    {"cpu FFT 2 x 3 matrix", GF_DEVICE_CPU, GF_METHOD_FFT, 2, 3, 0, 700, 128, 2048,
     GF_PRECISION_F32, 0},
    {"cpu NUPC mono", GF_DEVICE_CPU, GF_METHOD_NUPC, 1, 0, 0, 5000, 64, 256, GF_PRECISION_F32, 0},
};

static const fcase cuda_cases[] = {
    {"cuda direct mono", GF_DEVICE_CUDA, GF_METHOD_DIRECT, 1, 0, 0, 255, 0, 4096, GF_PRECISION_F32,
     1},
    {"cuda direct 2 ch f64, staged", GF_DEVICE_CUDA, GF_METHOD_DIRECT, 2, 0, 0, 31, 0, 3000,
     GF_PRECISION_F64, 0},
    {"cuda FFT mono", GF_DEVICE_CUDA, GF_METHOD_FFT, 1, 0, 0, 5000, 512, 4096, GF_PRECISION_F32, 1},
    {"cuda FFT 3 ch, per-channel", GF_DEVICE_CUDA, GF_METHOD_FFT, 3, 0, 1, 3001, 1024, 0,
     GF_PRECISION_F32, 1},
    {"cuda FFT 2 ch f64", GF_DEVICE_CUDA, GF_METHOD_FFT, 2, 0, 0, 2000, 256, 2048, GF_PRECISION_F64,
     1},
    {"cuda FFT 2 x 3 matrix", GF_DEVICE_CUDA, GF_METHOD_FFT, 2, 3, 0, 700, 128, 2048,
     GF_PRECISION_F32, 1},
    {"cuda FFT mono, staged", GF_DEVICE_CUDA, GF_METHOD_FFT, 1, 0, 0, 5000, 512, 4096,
     GF_PRECISION_F32, 0},
    {"cuda NUPC mono", GF_DEVICE_CUDA, GF_METHOD_NUPC, 1, 0, 0, 5000, 64, 256, GF_PRECISION_F32, 1},
};

static const gf_mode modes[] = {GF_MODE_SAME, GF_MODE_CAUSAL, GF_MODE_FULL};
static const char *const mode_names[] = {"same", "causal", "full"};

static size_t filters_of(const fcase *k)
{
    return k->outputs       ? (size_t)k->channels * (size_t)k->outputs
           : k->per_channel ? (size_t)k->channels
                            : 1;
}

/* The reference: the stream of x and then the look-ahead's `zeros` frames
 * of zeros pushed as samples (pieces of 1000 frames) and a flush; its
 * first outputs are the signal's whole output, which owes nothing to the
 * engine's own zeros after it. */
static int stream(gf_engine *e, const unsigned char *x, size_t frames, size_t zeros, size_t fb,
                  unsigned char *y, size_t cap, size_t fbo, size_t *n)
{
    unsigned char *xz = calloc(frames + zeros + 1, fb);
    if (!xz)
        return TU_FAIL("calloc(%zu frames)", frames + zeros + 1);
    memcpy(xz, x, frames * fb);
    const int bad =
        tu_run_stream_io(e, xz, frames + zeros, fb, y, cap, fbo, TU_FIXED(1000), TU_ALL, n);
    free(xz);
    return bad;
}

/* One length through one engine: the stream, then gf_engine_filter twice. */
static int one_length(const fcase *k, gf_engine *e, gf_mode mode, const unsigned char *x,
                      size_t frames, const char *what)
{
    const size_t ss = tu_sample_size(k->prec);
    const size_t O = (size_t)(k->outputs ? k->outputs : k->channels);
    const size_t zeros = mode == GF_MODE_FULL   ? k->taps - 1
                         : mode == GF_MODE_SAME ? (k->taps - 1) / 2
                                                : 0;
    const size_t n = mode == GF_MODE_FULL ? frames + k->taps - 1 : frames;
    const size_t cap = n + 2 * zeros + gf_engine_max_pending(e) + 1;
    unsigned char *want = calloc(cap, O * ss);
    unsigned char *got = k->pinned ? gf_host_alloc(cap * O * ss) : malloc(cap * O * ss);
    size_t nw = 0, ng = 0;
    int bad = gf_engine_reset(e) != GF_OK;
    bad += stream(e, x, frames, zeros, (size_t)k->channels * ss, want, cap, O * ss, &nw);
    bad +=
        TU_CHECK(nw == n + zeros, "%s: the stream gave %zu frames, not %zu", what, nw, n + zeros);
    for (int call = 0; call < 2 && !bad; call++) {
        memset(got, 0xA5, cap * O * ss); /* past the output: must stay so */
        const gf_status st = gf_engine_filter(e, frames ? x : NULL, frames, got, &ng);
        bad += TU_CHECK(st == GF_OK, "%s: call %d: %s: %s", what, call, gf_strerror(st),
                        gf_engine_error(e));
        bad += TU_CHECK(ng == n, "%s: call %d gave %zu frames, not %zu", what, call, ng, n);
        if (!bad)
            bad += tu_compare(what, want, got, n * O, ss, O);
        for (size_t i = n * O * ss; i < cap * O * ss && !bad; i++)
            bad += TU_CHECK(got[i] == 0xA5, "%s: byte %zu past the output written", what, i);
    }
    size_t used = 0;
    bad += TU_CHECK(gf_engine_push(e, x, 1, &used) == GF_ERR_STATE,
                    "%s: push after gf_engine_filter not refused", what);
    free(want);
    if (k->pinned)
        gf_host_free(got);
    else
        free(got);
    return bad;
}

static int one_case(const fcase *k)
{
    const size_t ss = tu_sample_size(k->prec), C = (size_t)k->channels;
    double *taps = malloc(filters_of(k) * k->taps * sizeof *taps);
    for (size_t f = 0; f < filters_of(k); f++)
        tu_fill_taps(taps + f * k->taps, k->taps, 0x51 + f);
    const size_t max_frames = 20000;
    unsigned char *x = k->pinned ? gf_host_alloc(max_frames * C * ss) : malloc(max_frames * C * ss);
    tu_fill_signal(x, max_frames * C, ss, 0xf17e);
    int bad = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        gf_config c = tu_config(k->channels, k->taps, taps, modes[m], k->prec, k->dev);
        c.method = k->method;
        c.outputs = k->outputs;
        c.taps_per_channel = k->per_channel;
        c.partition = k->partition;
        c.chunk_frames = k->chunk;
        gf_engine *e = NULL;
        if (tu_create(k->name, &c, &e)) {
            bad++;
            continue;
        }
        const size_t q = gf_engine_partition(e) ? gf_engine_partition(e) : 1;
        const size_t ch = gf_engine_chunk_frames(e);
        /* none, one, under the look-ahead, a partition +- 1, a chunk +- 1,
         * several chunks ending inside a partition */
        const size_t lengths[] = {0,  1,      k->taps / 3,        q - 1,     q + 1, ch - 1,
                                  ch, ch + 1, 3 * ch + q / 2 + 1, max_frames};
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            if (lengths[i] > max_frames)
                continue;
            char what[160];
            snprintf(what, sizeof what, "%s, %s, %zu frames", k->name, mode_names[m], lengths[i]);
            bad += one_length(k, e, modes[m], x, lengths[i], what);
        }
        gf_engine_destroy(e);
    }
    printf("%-32s %s\n", k->name, bad ? "FAILED" : "the stream's bytes, every mode and length");
    if (k->pinned)
        gf_host_free(x);
    else
        free(x);
    free(taps);
    return bad;
}

static int each_case(const fcase *k, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += one_case(&k[i]);
    return bad;
}

static int test_cases(void)
{
    return each_case(cases, sizeof cases / sizeof cases[0]);
}

static int test_cuda_cases(void)
{
    return each_case(cuda_cases, sizeof cuda_cases / sizeof cuda_cases[0]);
}

/* Histograms take the staged way: the same output, and every block's
 * record once the call returns. */
static int test_histograms(void)
{
    const size_t frames = 10000, block = 1000, taps = 31;
    float *x = malloc(frames * sizeof *x), *y = malloc(frames * sizeof *y);
    float *z = malloc(2 * frames * sizeof *z); /* (pull may be given room for more) */
    tu_fill_signal(x, frames, sizeof *x, 7);
    gf_hist_config h = {.bins = 16, .block_frames = block, .lo = -1.0, .hi = 1.0};
    gf_config c = tu_config(1, taps, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
    c.hist = &h;
    gf_engine *e = NULL;
    int bad = tu_create("histograms", &c, &e);
    size_t n = 0, records = 0;
    if (!bad) {
        bad += tu_run_stream(e, x, frames, z, 2 * frames, sizeof *z, TU_ALL, TU_ALL, &n);
        while (gf_engine_hist_next(e, &(gf_hist_record){0}) == GF_OK)
            ; /* the stream's records */
        bad += TU_CHECK(gf_engine_filter(e, x, frames, y, &n) == GF_OK && n == frames,
                        "histograms: gf_engine_filter: %s", gf_engine_error(e));
        bad += tu_compare("histograms", z, y, frames, sizeof *y, 1);
        gf_hist_record r;
        while (gf_engine_hist_next(e, &r) == GF_OK)
            records++;
        bad += TU_CHECK(records == frames / block, "histograms: %zu records, not %zu", records,
                        frames / block);
        gf_engine_destroy(e);
    }
    free(x);
    free(y);
    free(z);
    return bad;
}

static int test_arguments(void)
{
    gf_config c = tu_config(1, 5, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
    gf_engine *e = NULL;
    if (tu_create("arguments", &c, &e))
        return 1;
    float x[4] = {1, 2, 3, 4}, y[4];
    size_t n = 99;
    int bad = 0;
    bad += TU_CHECK(gf_engine_filter(NULL, x, 4, y, &n) == GF_ERR_INVALID_ARGUMENT,
                    "NULL engine accepted");
    bad += TU_CHECK(gf_engine_filter(e, x, 4, y, NULL) == GF_ERR_INVALID_ARGUMENT,
                    "NULL produced accepted");
    bad += TU_CHECK(gf_engine_filter(e, NULL, 4, y, &n) == GF_ERR_INVALID_ARGUMENT,
                    "NULL input accepted");
    bad += TU_CHECK(gf_engine_filter(e, x, 4, NULL, &n) == GF_ERR_INVALID_ARGUMENT,
                    "NULL output accepted");
    bad += TU_CHECK(gf_engine_filter(e, NULL, 0, NULL, &n) == GF_OK && n == 0,
                    "an empty signal: not 0 frames");
    gf_engine_destroy(e);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (!gf_backend_available(GF_DEVICE_CUDA)) {
            printf("test_filter_host_cuda: no CUDA device: skipped\n");
            return 77;
        }
        static const tu_step gpu[] = {test_cuda_cases};
        return tu_run_steps("test_filter_host_cuda",
                            "gf_engine_filter on the GPU: the stream's bytes", gpu, 1);
    }
    static const tu_step steps[] = {test_cases, test_histograms, test_arguments};
    return tu_run_steps("test_filter_host", "gf_engine_filter: the stream's bytes in one call",
                        steps, sizeof steps / sizeof steps[0]);
}
