/*
 * gf_engine_filter_device (gpufilt.h): signals in GPU memory, filtered with
 * no copy through host memory, against the same engine's host path
 * (gf_engine_process, flush, pull) byte for byte, for every mode, both
 * precisions, several chunks and a last partial partition, several
 * channels, per-channel taps and a matrix; the direct method, whose halo
 * is the input itself (zeros before its start, also past the first chunk
 * where the signal is shorter than the filter; a chunk cut where the
 * signal ends, before the look-ahead zeros); nothing written past the
 * output; the caller's stream honoured; and the refusals, each with its
 * reason and none sticky. The FFT method's chunks that need nothing
 * staged are read and written in place; test_device_arrays_staged runs
 * the same cases with GPUFILT_DEVICE_STAGED=1, every chunk staged.
 * Labelled gpu: exits 77 without a usable device.
 */
#include "gpufilt.h"
#include "test_util.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 4096 /* bytes after each output, which must keep their poison */

#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "test_device_arrays: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

typedef struct dcase {
    const char *name;
    int channels, outputs, per_channel;
    size_t frames, taps, partition, chunk;
    gf_precision prec;
    gf_mode mode;
    gf_method method;
} dcase;

static const dcase cases[] = {
    {"mono f32 same, 4095 taps", 1, 0, 0, 100003, 4095, 0, 0, GF_PRECISION_F32, GF_MODE_SAME,
     GF_METHOD_FFT},
    {"3 ch f64 full, chunks of 4 partitions", 3, 0, 0, 5001, 1000, 256, 1024, GF_PRECISION_F64,
     GF_MODE_FULL, GF_METHOD_FFT},
    {"2 ch f32 causal, 65536 taps, 9 chunks", 2, 0, 0, 300001, 65536, 8192, 32768, GF_PRECISION_F32,
     GF_MODE_CAUSAL, GF_METHOD_FFT},
    {"mono f32 same, shorter than a partition", 1, 0, 0, 50, 300, 128, 0, GF_PRECISION_F32,
     GF_MODE_SAME, GF_METHOD_FFT},
    {"mono f64 full, no input at all", 1, 0, 0, 0, 77, 64, 0, GF_PRECISION_F64, GF_MODE_FULL,
     GF_METHOD_FFT},
    {"2 ch f32 same, per-channel taps", 2, 0, 1, 20000, 3000, 1024, 4096, GF_PRECISION_F32,
     GF_MODE_SAME, GF_METHOD_FFT},
    {"matrix 2 x 3 f32 same", 2, 3, 0, 30000, 2000, 512, 2048, GF_PRECISION_F32, GF_MODE_SAME,
     GF_METHOD_FFT},
    /* the direct method: 7 chunks, the last cut at the signal's end */
    {"direct mono f32 full, 255 taps, cut at the end", 1, 0, 0, 4096 * 7 - 100, 255, 0, 4096,
     GF_PRECISION_F32, GF_MODE_FULL, GF_METHOD_DIRECT},
    /* 700 frames, then a chunk of look-ahead zeros whose halo is 300 zeros
     * and the whole signal */
    {"direct 3 ch f64 full, shorter than the filter", 3, 0, 0, 700, 1001, 0, 1000, GF_PRECISION_F64,
     GF_MODE_FULL, GF_METHOD_DIRECT},
    {"direct mono f64 same, chunks of 64 frames", 1, 0, 0, 5000, 63, 0, 64, GF_PRECISION_F64,
     GF_MODE_SAME, GF_METHOD_DIRECT},
    {"direct 2 ch f32 causal, per-channel taps", 2, 0, 1, 100003, 31, 0, 0, GF_PRECISION_F32,
     GF_MODE_CAUSAL, GF_METHOD_DIRECT},
    /* chunks of exactly T - 1 frames: each halo is the chunk before */
    {"direct 4 ch f32 same, chunks of T - 1", 4, 0, 0, 10000, 2047, 0, 2046, GF_PRECISION_F32,
     GF_MODE_SAME, GF_METHOD_DIRECT},
};

static gf_config case_config(const dcase *k, double *taps)
{
    gf_config c = gf_config_default();
    c.channels = k->channels;
    c.outputs = k->outputs;
    c.taps_per_channel = k->per_channel;
    c.num_taps = k->taps;
    c.taps = taps;
    c.method = k->method;
    c.device = GF_DEVICE_CUDA;
    c.partition = k->partition;
    c.chunk_frames = k->chunk;
    c.precision = k->prec;
    c.mode = k->mode;
    return c;
}

static size_t filters_of(const dcase *k)
{
    return k->outputs       ? (size_t)k->channels * (size_t)k->outputs
           : k->per_channel ? (size_t)k->channels
                            : 1;
}

/* One case: the host path's output, then the device path's twice (the
 * caller's stream, then the default one), then the host path's again,
 * each equal to the first. */
static int one_case(const dcase *k)
{
    const size_t ss = tu_sample_size(k->prec), C = (size_t)k->channels;
    const size_t O = k->outputs ? (size_t)k->outputs : C;
    double *taps = malloc(filters_of(k) * k->taps * sizeof *taps);
    for (size_t f = 0; f < filters_of(k); f++)
        tu_fill_taps(taps + f * k->taps, k->taps, 0xd5 + f);
    const gf_config c = case_config(k, taps);
    gf_engine *e = NULL;
    if (tu_create(k->name, &c, &e)) {
        free(taps);
        return 1;
    }
    const size_t cap = k->frames + gf_engine_max_pending(e) + k->taps;
    void *x = malloc(k->frames * C * ss + 1), *want = malloc(cap * O * ss),
         *got = malloc(cap * O * ss + GUARD);
    tu_fill_signal(x, k->frames * C, ss, 0x5eed + k->frames);
    size_t nwant = 0;
    int bad = tu_run_process(e, x, k->frames, want, cap, O * ss, TU_ALL, &nwant);
    const size_t expect = k->mode == GF_MODE_FULL ? k->frames + k->taps - 1 : k->frames;
    bad += TU_CHECK(nwant == expect, "%s: host path gave %zu frames, expected %zu", k->name, nwant,
                    expect);
    void *din = NULL, *dout = NULL;
    CK(cudaMalloc(&din, k->frames * C * ss + 1));
    CK(cudaMalloc(&dout, nwant * O * ss + GUARD));
    CK(cudaMemcpy(din, x, k->frames * C * ss, cudaMemcpyHostToDevice));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int pass = 0; pass < 2 && !bad; pass++) {
        CK(cudaMemset(dout, 0xAB, nwant * O * ss + GUARD));
        size_t n = 0;
        const gf_status s =
            gf_engine_filter_device(e, din, k->frames, dout, &n, pass == 0 ? (void *)st : NULL);
        if (s != GF_OK) {
            bad +=
                TU_FAIL("%s: pass %d: %s (%s)", k->name, pass, gf_strerror(s), gf_engine_error(e));
            break;
        }
        bad += TU_CHECK(n == nwant, "%s: pass %d: %zu frames, the host path %zu", k->name, pass, n,
                        nwant);
        CK(cudaMemcpy(got, dout, nwant * O * ss + GUARD, cudaMemcpyDeviceToHost));
        char what[160];
        snprintf(what, sizeof what, "%s: pass %d", k->name, pass);
        bad += tu_compare(what, want, got, nwant * O, ss, O);
        const unsigned char *g = (const unsigned char *)got + nwant * O * ss;
        size_t spoilt = 0;
        for (size_t b = 0; b < GUARD; b++)
            spoilt += g[b] != 0xAB;
        bad += TU_CHECK(spoilt == 0, "%s: pass %d: %zu bytes written past the output", k->name,
                        pass, spoilt);
        /* as after a flush: push refuses until a reset */
        size_t used = 0;
        bad += TU_CHECK(gf_engine_push(e, x, k->frames ? 1 : 0, &used) == GF_ERR_STATE,
                        "%s: push after gf_engine_filter_device is not refused", k->name);
    }
    /* the host path again, after the device path (whose chunk buffers may
     * have grown): its bytes as before */
    if (!bad) {
        size_t again = 0;
        bad += TU_CHECK(gf_engine_reset(e) == GF_OK, "%s: reset: %s", k->name, gf_engine_error(e));
        bad += tu_run_process(e, x, k->frames, got, cap, O * ss, TU_ALL, &again);
        bad += TU_CHECK(again == nwant, "%s: host path after: %zu frames, before %zu", k->name,
                        again, nwant);
        if (!bad)
            bad += tu_compare("host path after the device path", want, got, nwant * O, ss, O);
    }
    CK(cudaStreamDestroy(st));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    free(x);
    free(want);
    free(got);
    free(taps);
    gf_engine_destroy(e);
    printf("%-48s %7zu frames x %d ch -> %zu: %s\n", k->name, k->frames, k->channels, nwant,
           bad ? "FAILED" : "equal to the host path");
    return bad;
}

static int device_cases(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += one_case(&cases[i]);
    return bad;
}

/* A refusal: status st, a detail holding `needle`, and the engine still
 * filtering host memory afterwards. */
static int refused(const char *label, gf_engine *e, const void *in, void *out, gf_status st,
                   const char *needle)
{
    size_t n = 7;
    const gf_status s = gf_engine_filter_device(e, in, 1000, out, &n, NULL);
    int bad = TU_CHECK(s == st && n == 0 && strstr(gf_engine_error(e), needle),
                       "%s: %s (%s) with %zu frames, expected %s and '%s'", label, gf_strerror(s),
                       gf_engine_error(e), n, gf_strerror(st), needle);
    float x[1000] = {0};
    float *y = malloc((1000 + gf_engine_max_pending(e)) * sizeof *y);
    size_t got = 0;
    bad += TU_CHECK(y && gf_engine_reset(e) == GF_OK &&
                        gf_engine_process(e, x, 1000, y, &got) == GF_OK,
                    "%s: the engine does not filter host memory after the refusal", label);
    free(y);
    return bad;
}

static int refusals(void)
{
    double taps[64];
    tu_fill_taps(taps, 64, 3);
    gf_config c = tu_config(1, 64, taps, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CUDA);
    c.method = GF_METHOD_FFT;
    void *din = NULL, *dout = NULL;
    CK(cudaMalloc(&din, 1000 * sizeof(float)));
    CK(cudaMalloc(&dout, 1000 * sizeof(float)));
    float *host = malloc(1000 * sizeof(float)), *pinned = gf_host_alloc(1000 * sizeof(float));
    gf_engine *e = NULL;
    int bad = 0;
    if (!tu_create("refusals: cuda fft", &c, &e)) {
        bad += refused("host input", e, host, dout, GF_ERR_INVALID_ARGUMENT,
                       "the input is not GPU memory but host memory");
        bad += refused("page-locked output", e, din, pinned, GF_ERR_INVALID_ARGUMENT,
                       "the output is not GPU memory but page-locked host memory");
        size_t n = 0;
        bad += TU_CHECK(
            gf_engine_filter_device(NULL, din, 1, dout, &n, NULL) == GF_ERR_INVALID_ARGUMENT &&
                gf_engine_filter_device(e, NULL, 1, dout, &n, NULL) == GF_ERR_INVALID_ARGUMENT &&
                gf_engine_filter_device(e, din, 1, dout, NULL, NULL) == GF_ERR_INVALID_ARGUMENT,
            "NULL arguments are not refused");
        gf_engine_destroy(e);
    }
    c.method = GF_METHOD_DIRECT;
    c.chunk_frames = 62;
    if (!tu_create("refusals: cuda direct, chunks of 62 frames", &c, &e)) {
        bad += refused("direct method, short chunks", e, din, dout, GF_ERR_UNSUPPORTED,
                       "GPU memory takes the direct method in chunks of at least the filter's 64 "
                       "taps less one, not 62 frames (gf_config.chunk_frames)");
        gf_engine_destroy(e);
    }
    c.chunk_frames = 0;
    c.method = GF_METHOD_FFT;
    c.device = GF_DEVICE_CPU;
    if (!tu_create("refusals: cpu", &c, &e)) {
        bad += refused("cpu backend", e, din, dout, GF_ERR_UNSUPPORTED,
                       "the cpu backend takes host memory only");
        gf_engine_destroy(e);
    }
    const int twice[2] = {0, 0}; /* two instances on GPU 0: the several-GPU code */
    c.device = GF_DEVICE_CUDA;
    c.cuda_devices = twice;
    c.cuda_device_count = 2;
    if (!tu_create("refusals: two instances", &c, &e)) {
        bad +=
            refused("several GPUs", e, din, dout, GF_ERR_UNSUPPORTED, "GPU memory takes one GPU");
        gf_engine_destroy(e);
    }
    CK(cudaFree(din));
    CK(cudaFree(dout));
    free(host);
    gf_host_free(pinned);
    return bad;
}

int main(void)
{
    if (!gf_cuda_available()) {
        printf("test_device_arrays: no usable CUDA device, skipped\n");
        return 77;
    }
    static const tu_step steps[] = {device_cases, refusals};
    return tu_run_steps("test_device_arrays", "GPU memory in and out, equal to the host path",
                        steps, sizeof steps / sizeof steps[0]);
}
