/*
 * live_bench: the live worker's cost per block, without an audio device.
 *
 * For each backend (cpu, cuda), block size (64, 256, 1024 frames) and
 * filter length (5, 255, 4095 taps): an engine set up exactly as
 * gpufilt --live sets it up (2 channels, causal, f32, one block per chunk)
 * filters a stream block by block with push + submit + wait + pull, the
 * worker's round trip. After a warm-up, each block is timed; the median,
 * p99 and maximum are printed as a fraction of the block's period at
 * 48 kHz (block / 48000 s), the budget a real-time stream gives it.
 *
 *   live_bench [--blocks N] [--warmup N] [--device cpu|cuda|both]
 *
 * Target (issue): p99 <= 10% of the period at 64-frame blocks with 4095
 * taps on cuda; a PASS/FAIL line says whether it is met (SKIP without a
 * usable GPU). The exit code is 0 unless the engine fails.
 */
#include "gpufilt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE     48000.0
#define CHANNELS 2

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

/* Returns 0, or -1 after printing why. */
static int run(gf_device dev, size_t block, size_t taps, int warmup, int blocks, result *r)
{
    gf_config c = gf_config_default();
    c.channels = CHANNELS;
    c.num_taps = taps;
    c.mode = GF_MODE_CAUSAL;
    c.precision = GF_PRECISION_F32;
    c.chunk_frames = block;
    c.device = dev;
    char detail[256];
    gf_engine *e = NULL;
    gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
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
    const size_t sizes[] = {64, 256, 1024}, tapss[] = {5, 255, 4095};
    const int have_cuda = want_cuda && gf_cuda_available();
    printf("live_bench: gpufilt %s; %d ch, f32, causal, %.0f Hz; %d blocks timed after %d of "
           "warm-up;\n",
           gf_version(), CHANNELS, RATE, blocks, warmup);
    printf("live_bench: per-block worker time (push + submit + wait + pull) as %% of the block "
           "period\n");
    printf("%-6s %6s %6s %10s %9s %9s %9s %11s\n", "device", "block", "taps", "period ms",
           "median %", "p99 %", "max %", "p99 us");
    int target = -1; /* -1 not measured, 0 fail, 1 pass */
    double target_p99 = 0;
    for (int d = 0; d < 2; d++) {
        const gf_device dev = d == 0 ? GF_DEVICE_CPU : GF_DEVICE_CUDA;
        if ((d == 0 && !want_cpu) || (d == 1 && !want_cuda))
            continue;
        if (d == 1 && !have_cuda) {
            printf("cuda   (skipped: no usable CUDA device in this build or machine)\n");
            continue;
        }
        for (size_t bi = 0; bi < 3; bi++)
            for (size_t ti = 0; ti < 3; ti++) {
                result r;
                if (run(dev, sizes[bi], tapss[ti], warmup, blocks, &r) != 0)
                    return 1;
                const double period = (double)sizes[bi] / RATE;
                printf("%-6s %6zu %6zu %10.3f %9.2f %9.2f %9.2f %11.1f\n", d ? "cuda" : "cpu",
                       sizes[bi], tapss[ti], 1e3 * period, 100 * r.median / period,
                       100 * r.p99 / period, 100 * r.max / period, 1e6 * r.p99);
                fflush(stdout);
                if (d == 1 && sizes[bi] == 64 && tapss[ti] == 4095) {
                    target_p99 = r.p99 / period;
                    target = target_p99 <= 0.10;
                }
            }
    }
    if (target < 0)
        printf("live_bench: target p99 <= 10%% of the period at 64-frame blocks, 4095 taps, cuda: "
               "SKIP (no CUDA device)\n");
    else
        printf("live_bench: target p99 <= 10%% of the period at 64-frame blocks, 4095 taps, cuda: "
               "%s (p99 = %.2f%%)\n",
               target ? "PASS" : "FAIL", 100 * target_p99);
    return 0;
}
