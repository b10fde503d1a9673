/*
 * live_bench: the live worker's cost per block, without an audio device.
 *
 * For each row (backend, channels, block size, taps) an engine set up
 * exactly as gpufilt --live sets it up (causal, f32, one block per chunk,
 * the FFT method's partition equal to the block where the cost model picks
 * FFT) filters a stream block by block with push + submit + wait + pull,
 * the worker's round trip. After a warm-up, each block is timed; the
 * median, p99 and maximum are printed as a fraction of the block's period
 * at 48 kHz (block / 48000 s), the budget a real-time stream gives it.
 *
 *   live_bench [--blocks N] [--warmup N] [--device cpu|cuda|both]
 *
 * Targets, each a PASS/FAIL line (SKIP without a usable GPU):
 *   cuda, 2 ch, 64-frame blocks, 4095 taps:        p99 <= 10% of the period
 *   cuda, 2 ch, 128-frame blocks, 2^20 taps:       p99 <= 10%
 *   cuda, 128 ch, 128-frame blocks, 2^20 taps:     p99 <= 50%
 *   cpu, 2 ch, 256-frame blocks, 65536 taps:       p99 <= 50%
 * The exit code is 0 unless an engine fails.
 */
#include "gpufilt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct result {
    double median, p99, max; /* seconds */
} result;

typedef struct row {
    gf_device dev;
    int channels;
    size_t block, taps;
    double target; /* p99 / period at most, or 0: no target */
} row;

/* The table: the short filters on both backends, then the long ones. */
static const row rows[] = {
    {GF_DEVICE_CPU, 2, 64, 5, 0},
    {GF_DEVICE_CPU, 2, 64, 255, 0},
    {GF_DEVICE_CPU, 2, 64, 4095, 0},
    {GF_DEVICE_CPU, 2, 256, 5, 0},
    {GF_DEVICE_CPU, 2, 256, 255, 0},
    {GF_DEVICE_CPU, 2, 256, 4095, 0},
    {GF_DEVICE_CPU, 2, 1024, 4095, 0},
    {GF_DEVICE_CPU, 2, 256, 65536, 0.50},
    {GF_DEVICE_CUDA, 2, 64, 5, 0},
    {GF_DEVICE_CUDA, 2, 64, 255, 0},
    {GF_DEVICE_CUDA, 2, 64, 4095, 0.10},
    {GF_DEVICE_CUDA, 2, 256, 255, 0},
    {GF_DEVICE_CUDA, 2, 256, 4095, 0},
    {GF_DEVICE_CUDA, 2, 1024, 4095, 0},
    {GF_DEVICE_CUDA, 2, 128, 65536, 0},
    {GF_DEVICE_CUDA, 2, 128, 1 << 20, 0.10},
    {GF_DEVICE_CUDA, 128, 128, 1 << 20, 0.50},
};

/* Returns 0, or -1 after printing why. */
static int run(const row *w, int warmup, int blocks, result *r, gf_method *method)
{
    const size_t block = w->block, taps = w->taps;
    const int CHANNELS = w->channels;
    double *h = malloc(taps * sizeof *h);
    if (!h) {
        printf("live_bench: out of memory\n");
        return -1;
    }
    for (size_t k = 0; k < taps; k++) /* a decaying response, as a room's */
        h[k] = (double)((k * 2654435761u) % 1000 - 500) / 500.0 / (1.0 + (double)k / 64.0);
    gf_config c = gf_config_default();
    c.channels = CHANNELS;
    c.num_taps = taps;
    c.taps = h;
    c.mode = GF_MODE_CAUSAL;
    c.precision = GF_PRECISION_F32;
    c.chunk_frames = block;
    c.partition = block; /* a power of two here: one block in, one block out */
    c.device = w->dev;
    char detail[256];
    gf_engine *e = NULL;
    gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    free(h);
    if (st != GF_OK) {
        printf("live_bench: cannot create the engine: %s: %s\n", gf_strerror(st), detail);
        return -1;
    }
    const size_t n = block * CHANNELS;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *t = malloc((size_t)blocks * sizeof *t);
    if (!in || !out || !t) {
        printf("live_bench: out of memory\n");
        free(in);
        free(out);
        free(t);
        gf_engine_destroy(e);
        return -1;
    }
    unsigned s = 1;
    int rc = 0;
    for (int b = 0; b < warmup + blocks && rc == 0; b++) {
        for (size_t i = 0; i < n; i++) {
            s = s * 1664525u + 1013904223u;
            in[i] = (float)((double)(s >> 8) / 16777216.0 - 0.5);
        }
        const double t0 = now_s();
        size_t used = 0, got = 0, total = 0;
        st = gf_engine_push(e, in, block, &used);
        if (st == GF_OK && used != block)
            st = GF_ERR_STATE;
        if (st == GF_OK)
            st = gf_engine_submit(e);
        if (st == GF_OK)
            st = gf_engine_wait(e);
        while (st == GF_OK && total < block &&
               (st = gf_engine_pull(e, out + total * CHANNELS, block - total, &got)) == GF_OK &&
               got > 0)
            total += got;
        const double dt = now_s() - t0;
        if (st != GF_OK || total != block) {
            printf("live_bench: engine failed: %s: %s\n", gf_strerror(st), gf_engine_error(e));
            rc = -1;
        } else if (b >= warmup) {
            t[b - warmup] = dt;
        }
    }
    if (rc == 0) {
        *method = gf_engine_method(e);
        qsort(t, (size_t)blocks, sizeof *t, cmp_double);
        r->median = t[blocks / 2];
        r->p99 = t[((size_t)blocks * 99 + 99) / 100 - 1]; /* nearest rank */
        r->max = t[blocks - 1];
    }
    free(in);
    free(out);
    free(t);
    gf_engine_destroy(e);
    return rc;
}

int main(int argc, char **argv)
{
    int blocks = 2000, warmup = 200, want_cpu = 1, want_cuda = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--blocks") == 0)
            blocks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0)
            warmup = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--device") == 0) {
            want_cpu = strcmp(argv[i + 1], "cuda") != 0;
            want_cuda = strcmp(argv[i + 1], "cpu") != 0;
        } else {
            fprintf(stderr,
                    "usage: live_bench [--blocks N] [--warmup N] [--device cpu|cuda|both]\n");
            return 2;
        }
    }
    if (blocks < 100 || warmup < 0) {
        fprintf(stderr, "live_bench: --blocks >= 100, --warmup >= 0\n");
        return 2;
    }
    const int have_cuda = want_cuda && gf_cuda_available();
    printf("live_bench: gpufilt %s; f32, causal, %.0f Hz; %d blocks timed after %d of "
           "warm-up;\n",
           gf_version(), RATE, blocks, warmup);
    printf("live_bench: per-block worker time (push + submit + wait + pull) as %% of the block "
           "period\n");
    printf("%-6s %4s %6s %8s %-7s %10s %9s %9s %9s %11s\n", "device", "ch", "block", "taps",
           "method", "period ms", "median %", "p99 %", "max %", "p99 us");
    char targets[2048] = "";
    size_t tl = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *w = &rows[i];
        const int cuda = w->dev == GF_DEVICE_CUDA;
        if ((!cuda && !want_cpu) || (cuda && !want_cuda))
            continue;
        const double period = (double)w->block / RATE;
        char name[96];
        snprintf(name, sizeof name, "%s, %d ch, %zu-frame blocks, %zu taps", cuda ? "cuda" : "cpu",
                 w->channels, w->block, w->taps);
        if (cuda && !have_cuda) {
            if (w->target > 0)
                tl += (size_t)snprintf(targets + tl, sizeof targets - tl,
                                       "live_bench: target p99 <= %.0f%% of the period, %s: SKIP "
                                       "(no CUDA device)\n",
                                       100 * w->target, name);
            continue;
        }
        result r;
        gf_method m = GF_METHOD_DIRECT;
        if (run(w, warmup, blocks, &r, &m) != 0)
            return 1;
        printf("%-6s %4d %6zu %8zu %-7s %10.3f %9.2f %9.2f %9.2f %11.1f\n", cuda ? "cuda" : "cpu",
               w->channels, w->block, w->taps, m == GF_METHOD_FFT ? "fft" : "direct", 1e3 * period,
               100 * r.median / period, 100 * r.p99 / period, 100 * r.max / period, 1e6 * r.p99);
        fflush(stdout);
        if (w->target > 0 && tl < sizeof targets)
            tl += (size_t)snprintf(targets + tl, sizeof targets - tl,
                                   "live_bench: target p99 <= %.0f%% of the period, %s: %s (p99 = "
                                   "%.2f%%)\n",
                                   100 * w->target, name,
                                   r.p99 / period <= w->target ? "PASS" : "FAIL",
                                   100 * r.p99 / period);
    }
    fputs(targets, stdout);
    return 0;
}
