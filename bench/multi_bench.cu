/*
 * Several GPUs against one, host to host, measured in one run.
 *
 * The ceiling: page-locked host to device and device to host at once on
 * every GPU together (one stream each way per GPU), for 1 GPU and for all.
 * Then each case through the library (the whole signal in one
 * gf_engine_filter call on page-locked buffers from gf_host_alloc; with
 * --staged, gf_engine_process, gf_engine_flush and pulls as before 0.6's
 * gf_engine_filter; one engine created beforehand) on GPU 0 alone and on GPUs 0 .. n-1
 * (gf_config.cuda_devices): the medians, the speed-up, the traffic as a share of the ceiling of
 * that many GPUs, and whether the bytes equal one GPU's (they must).
 *
 *   bench_multi [--quick] [--reps N] [--devices N] [--case TEXT] [--on I,J,...]
 *               [--chunk FRAMES] [--staged]
 * (--case: only the cases whose name holds TEXT; --on: these ordinals as
 * the several devices, e.g. 0,0 for two instances on one GPU; --chunk:
 * gf_config.chunk_frames for every engine, instead of the default;
 * --staged: the flush's chunks the staged way, for comparison)
 * Exit: 0, 1 when an output differs from one GPU's, 2 on an error, 77
 * with fewer than two GPUs.
 */
#include "gpufilt.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "bench_multi: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/* Bytes each way per second, H2D and D2H of `bytes` at once on GPUs 0 ..
 * n-1 together: the median of reps. */
static double ceiling_gbs(int n, size_t bytes, int reps)
{
    std::vector<void *> host(2 * (size_t)n), dev(2 * (size_t)n);
    std::vector<cudaStream_t> st(2 * (size_t)n);
    for (int d = 0; d < n; d++) {
        CK(cudaSetDevice(d));
        for (int k = 0; k < 2; k++) {
            CK(cudaHostAlloc(&host[2 * d + k], bytes, cudaHostAllocPortable));
            memset(host[2 * d + k], 1, bytes);
            CK(cudaMalloc(&dev[2 * d + k], bytes));
            CK(cudaStreamCreateWithFlags(&st[2 * d + k], cudaStreamNonBlocking));
        }
    }
    std::vector<double> t;
    for (int r = 0; r <= reps; r++) {
        const double t0 = now_s();
        for (int d = 0; d < n; d++) {
            CK(cudaSetDevice(d));
            CK(cudaMemcpyAsync(dev[2 * d], host[2 * d], bytes, cudaMemcpyHostToDevice, st[2 * d]));
            CK(cudaMemcpyAsync(host[2 * d + 1], dev[2 * d + 1], bytes, cudaMemcpyDeviceToHost,
                               st[2 * d + 1]));
        }
        for (int d = 0; d < n; d++) {
            CK(cudaSetDevice(d));
            CK(cudaDeviceSynchronize());
        }
        if (r > 0) /* the first is a warm-up */
            t.push_back(now_s() - t0);
    }
    for (int d = 0; d < n; d++) {
        CK(cudaSetDevice(d));
        for (int k = 0; k < 2; k++) {
            CK(cudaFreeHost(host[2 * d + k]));
            CK(cudaFree(dev[2 * d + k]));
            CK(cudaStreamDestroy(st[2 * d + k]));
        }
    }
    return (double)n * (double)bytes / median(t) / 1e9;
}

typedef struct bcase {
    const char *name;
    gf_method method;
    size_t taps;
    int channels;
    size_t samples, quick_samples; /* f32 samples in all */
} bcase;

static int g_staged; /* --staged */

/* The median seconds of reps runs of the whole input through e (after one
 * untimed run), and the output of the last: one gf_engine_filter call, or
 * with --staged gf_engine_process, gf_engine_flush and pulls (the flush's
 * part in *t_flush). */
static double run_engine(gf_engine *e, const float *in, size_t frames, int channels, float *out,
                         size_t cap, int reps, size_t *produced, double *t_flush)
{
    std::vector<double> t, tf;
    for (int r = 0; r <= reps; r++) {
        size_t got = 0, more = 0;
        const double t0 = now_s();
        gf_status st;
        double t1 = t0;
        if (!g_staged) {
            st = gf_engine_filter(e, in, frames, out, &got);
        } else if ((st = gf_engine_reset(e)) == GF_OK &&
                   (st = gf_engine_process(e, in, frames, out, &got)) == GF_OK) {
            t1 = now_s();
            st = gf_engine_flush(e);
            while (st == GF_OK &&
                   (st = gf_engine_pull(e, out + got * (size_t)channels, cap - got, &more)) ==
                       GF_OK &&
                   more > 0)
                got += more;
        }
        if (st != GF_OK) {
            fprintf(stderr, "bench_multi: %s: %s\n", gf_strerror(st), gf_engine_error(e));
            exit(2);
        }
        if (r > 0) {
            t.push_back(now_s() - t0);
            tf.push_back(now_s() - t1);
        }
        *produced = got;
    }
    *t_flush = median(tf);
    return median(t);
}

/* The cases, f32 samples in all (and under --quick). */
static const bcase cases[] = {
    {"direct 63 taps, 1 ch (PCIe-bound)", GF_METHOD_DIRECT, 63, 1, (size_t)1 << 28,
     (size_t)1 << 26},
    {"direct 4095 taps, 8 ch", GF_METHOD_DIRECT, 4095, 8, (size_t)1 << 27, (size_t)1 << 25},
    {"FFT 2^20 taps, 128 ch", GF_METHOD_FFT, (size_t)1 << 20, 128, (size_t)1 << 27,
     (size_t)1 << 27},
    {"FFT 2^20 taps, 128 ch, 4x longer", GF_METHOD_FFT, (size_t)1 << 20, 128, (size_t)1 << 29,
     (size_t)1 << 28},
    {"FFT 2^20 taps, 32 ch", GF_METHOD_FFT, (size_t)1 << 20, 32, (size_t)1 << 27, (size_t)1 << 26},
    {"FFT 2^22 taps, 8 ch", GF_METHOD_FFT, (size_t)1 << 22, 8, (size_t)1 << 27, (size_t)1 << 26},
    {"FFT 2^22 taps, 8 ch, 4x longer", GF_METHOD_FFT, (size_t)1 << 22, 8, (size_t)1 << 29,
     (size_t)1 << 27},
};

/* One case on GPU 0 alone and on devs[0 .. n-1]: a table row (and one of
 * each GPU's chunks); 1 when the outputs differ, exits 2 on an error. */
static size_t g_chunk; /* --chunk */

static int run_case(const bcase *b, const int *devs, int n, int reps, int quick, double cn)
{
    const size_t samples = quick ? b->quick_samples : b->samples;
    const size_t frames = samples / (size_t)b->channels;
    std::vector<double> taps(b->taps);
    for (size_t k = 0; k < b->taps; k++)
        taps[k] =
            exp(-3.0 * (double)k / (double)b->taps) * (k % 2 ? -0.5 : 1.0) / sqrt((double)b->taps);
    gf_config cfg = gf_config_default();
    cfg.channels = b->channels;
    cfg.num_taps = b->taps;
    cfg.taps = taps.data();
    cfg.method = b->method;
    cfg.device = GF_DEVICE_CUDA;
    cfg.chunk_frames = g_chunk;
    gf_engine *one = NULL, *many = NULL;
    char why[256];
    if (gf_engine_create(&cfg, &one, why, sizeof why) != GF_OK) {
        fprintf(stderr, "bench_multi: %s, 1 GPU: %s\n", b->name, why);
        exit(2);
    }
    cfg.cuda_devices = devs;
    cfg.cuda_device_count = n;
    if (gf_engine_create(&cfg, &many, why, sizeof why) != GF_OK) {
        fprintf(stderr, "bench_multi: %s, %d GPUs: %s\n", b->name, n, why);
        exit(2);
    }
    const size_t cap = frames + gf_engine_max_pending(many) + b->taps;
    float *in = (float *)gf_host_alloc(samples * sizeof(float));
    float *o1 = (float *)gf_host_alloc(cap * (size_t)b->channels * sizeof(float));
    float *on = (float *)gf_host_alloc(cap * (size_t)b->channels * sizeof(float));
    if (!in || !o1 || !on) {
        fprintf(stderr, "bench_multi: %s: gf_host_alloc failed\n", b->name);
        exit(2);
    }
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < samples; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (float)((double)(x >> 11) * 0x1p-53 * 2.0 - 1.0);
    }
    size_t p1 = 0, pn = 0;
    double f1 = 0, fn = 0;
    const double t1 = run_engine(one, in, frames, b->channels, o1, cap, reps, &p1, &f1);
    const double tn = run_engine(many, in, frames, b->channels, on, cap, reps, &pn, &fn);
    const int same = p1 == pn && !memcmp(o1, on, p1 * (size_t)b->channels * sizeof(float));
    const double gbs = (double)samples * sizeof(float) / tn / 1e9;
    printf("%-34s %10.2f %10.2f %7.2fx %10.1f %7.0f%%  %s\n", b->name, t1 * 1e3, tn * 1e3, t1 / tn,
           gbs, 100.0 * gbs / cn, same ? "= 1 GPU" : "DIFFER");
    if (!same)
        fprintf(stderr, "bench_multi: %s: %d GPUs wrote %zu frames, 1 GPU %zu%s\n", b->name, n, pn,
                p1, p1 == pn ? ", different bytes" : "");
    uint64_t n0 = 0, n1 = 0;
    const uint64_t k0 = gf_engine_device_chunks(many, 0, &n0);
    const uint64_t k1 = gf_engine_device_chunks(many, 1, &n1);
    int first1 = 0;
    const int c0 = gf_engine_device_channels(many, 0, NULL);
    const int c1 = gf_engine_device_channels(many, 1, &first1);
    char by[64] = "time";
    if (first1 > 0) /* by time, every device's channels start at 0 */
        snprintf(by, sizeof by, "channel: %d + %d channels", c0, c1);
    char flush[64] = "one gf_engine_filter";
    if (g_staged)
        snprintf(flush, sizeof flush, "flush + pull %.2f / %.2f ms", f1 * 1e3, fn * 1e3);
    printf("%-34s %s; chunks of %zu frames: GPU 0 %llu (%llu frames), GPU 1 %llu (%llu); by "
           "%s\n",
           "", flush, gf_engine_chunk_frames(many), (unsigned long long)k0, (unsigned long long)n0,
           (unsigned long long)k1, (unsigned long long)n1, by);
    gf_host_free(in);
    gf_host_free(o1);
    gf_host_free(on);
    gf_engine_destroy(one);
    gf_engine_destroy(many);
    return !same;
}

/* --on I,J,...: the ordinals into devs (at most GF_MAX_DEVICES); their
 * count. */
static int parse_devices(const char *on, int *devs)
{
    int n = 0;
    for (char *p = (char *)on; *p && n < GF_MAX_DEVICES;) {
        devs[n++] = (int)strtol(p, &p, 10);
        if (*p++ != ',')
            break;
    }
    return n;
}

int main(int argc, char **argv)
{
    int quick = 0, reps = 5, want = 0;
    const char *only = NULL, *on = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            want = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--on") && i + 1 < argc)
            on = argv[++i];
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc)
            g_chunk = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--staged"))
            g_staged = 1;
        else {
            fprintf(stderr, "usage: bench_multi [--quick] [--reps N] [--devices N] [--case TEXT] "
                            "[--on I,J,...] [--chunk FRAMES] [--staged]\n");
            return 2;
        }
    }
    int n = 0;
    if (gf_cuda_device_count(&n) != GF_OK || n < 2) {
        printf("bench_multi: needs two GPUs (%d here): skipped\n", n);
        return 77;
    }
    if (want > 1 && want < n)
        n = want;
    if (n > GF_MAX_DEVICES)
        n = GF_MAX_DEVICES;
    gf_cuda_device info;
    gf_cuda_device_info(0, &info);
    printf("bench_multi: %d x %s; medians of %d runs after a warm-up\n\n", n, info.name, reps);

    const size_t cbytes = (size_t)(quick ? 256 : 1024) << 20;
    const double c1 = ceiling_gbs(1, cbytes, reps), cn = ceiling_gbs(n, cbytes, reps);
    printf("ceiling: pinned H2D + D2H at once, %zu MiB each way per GPU\n", cbytes >> 20);
    printf("  1 GPU:  %6.1f GB/s each way\n", c1);
    printf("  %d GPUs: %6.1f GB/s each way in all (%.2fx one)\n\n", n, cn, cn / c1);

    printf("%-34s %10s %10s %8s %10s %8s  %s\n", "case (f32, same mode, host to host)", "1 GPU ms",
           "n GPU ms", "speedup", "GB/s in", "%ceil", "bytes");
    int wrong = 0;
    int devs[GF_MAX_DEVICES];
    for (int d = 0; d < n; d++)
        devs[d] = d;
    if (on) /* --on: the list as given */
        n = parse_devices(on, devs);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        if (!only || strstr(cases[ci].name, only))
            wrong |= run_case(&cases[ci], devs, n, reps, quick, cn);
    printf("\nGB/s in: input bytes per second (as many go out); %%ceil: of the %d-GPU ceiling "
           "each way.\n",
           n);
    return wrong ? 1 : 0;
}
