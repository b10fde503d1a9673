/*
 * bench_long: long filters on the GPU, against ceilings measured in the
 * same process.
 *
 *   1. ceilings: pinned host-to-device and device-to-host at once on two
 *      streams (each way, GB/s), and a device-to-device copy;
 *   2. the pipeline: gf_engine_filter on the cuda backend, --method auto,
 *      over 2^27 f32 mono samples in page-locked buffers, host to host (and
 *      beside it, "staged ms", gf_engine_process, flush and pulls), for
 *      T in {5, 255, 4095, 65536, 2^20, 2^22}: input GB/s against the
 *      both-directions each-way rate (target: >= 95% at every T); each run's
 *      output checked at 200-2000 seeded frames against the exact sum (double)
 *      within gf_engine_error_bound (FFT) or the float round-off of a
 *      T-term sum (direct);
 *   3. the FFT filter alone on the device (fft_conv.h: data already there),
 *      2^27 f32 samples at 65536 taps, chunked as the engine chunks them and
 *      as one chunk (every length as one chunk too, but under --quick,
 *      where the profile runs it: 65536 only), event-timed; beside it a
 *      batched 4096-point R2C over the same samples and a same-size device
 *      copy, the memory floor (the samples read once and written once:
 *      target within 4x of it at every length). bench/peers.py times
 *      cupyx.scipy.signal.oaconvolve and torchaudio's fftconvolve on the
 *      same data and prints the ratio
 *      (target: <= 1/3 of cupyx). Each run's output is checked at 200-2000
 *      seeded frames against the exact causal sum within the FFT bound; a
 *      run outside it is no result.
 *
 * Targets count only runs whose output was within its bound; under
 * --quick (smaller sizes: a smoke run) nothing is judged.
 *
 *   bench_long [--quick] [--device-only] [--taps T,...] [--partitions P,...]
 *              [--chunks F,...] [--json FILE]
 *     --device-only: section 3 alone (for a profiler)
 *     --chunks:      section 2 also at 2^20 and 2^22 taps with these
 *                    gf_config.chunk_frames (rounded up to whole partitions
 *                    by the engine; its chunk printed as c=)
 *     --taps:        the lengths of section 3 (default 65536; the target's)
 *     --partitions:  section 3 also at these partition sizes (where
 *                    T/32768 <= P < 2T): to calibrate the cost model
 *
 * Exit status: 0 (targets missed included), 1 wrong results, 2 CUDA or
 * library error, 77 no CUDA device.
 */
#include "fft_conv.h"
#include "gpufilt.h"

#include <cuda_runtime.h>
#include <cufft.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#define CK(call)                                                                           \
    do {                                                                                   \
        const cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "bench_long: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

static int g_wrong = 0;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((double)(mix64(seed + i) >> 11) * 0x1p-53 * 2 - 1);
}

/* A decaying response, as a room's: T taps, sum |h| about 1. */
static std::vector<double> room(size_t T)
{
    std::vector<double> h(T);
    double s = 0;
    for (size_t k = 0; k < T; k++) {
        h[k] = ((double)(mix64(7 * T + k) >> 11) * 0x1p-53 * 2 - 1) * exp(-5.0 * (double)k / T);
        s += fabs(h[k]);
    }
    for (size_t k = 0; k < T; k++)
        h[k] /= s;
    return h;
}

/* ---- 1. ceilings ---- */

typedef struct ceilings {
    double both_each; /* GB/s each way, H2D and D2H at once */
    double d2d;       /* GB/s read + written */
} ceilings;

static ceilings measure_ceilings(size_t bytes)
{
    ceilings c;
    void *h1, *h2, *d1, *d2;
    CK(cudaHostAlloc(&h1, bytes, cudaHostAllocDefault));
    CK(cudaHostAlloc(&h2, bytes, cudaHostAllocDefault));
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    memset(h1, 1, bytes);
    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreate(&s2));
    std::vector<double> t;
    for (int r = 0; r < 7; r++) {
        const double t0 = now_s();
        CK(cudaMemcpyAsync(d1, h1, bytes, cudaMemcpyHostToDevice, s1));
        CK(cudaMemcpyAsync(h2, d2, bytes, cudaMemcpyDeviceToHost, s2));
        CK(cudaDeviceSynchronize());
        if (r > 0)
            t.push_back(now_s() - t0);
    }
    c.both_each = (double)bytes / median(t) / 1e9;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    t.clear();
    for (int r = 0; r < 11; r++) {
        CK(cudaEventRecord(e0, s1));
        CK(cudaMemcpyAsync(d2, d1, bytes, cudaMemcpyDeviceToDevice, s1));
        CK(cudaEventRecord(e1, s1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0)
            t.push_back(ms * 1e-3);
    }
    c.d2d = 2.0 * (double)bytes / median(t) / 1e9;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFreeHost(h1);
    cudaFreeHost(h2);
    cudaFree(d1);
    cudaFree(d2);
    printf("ceilings: pinned H2D + D2H at once %.1f GB/s each way; device copy %.0f GB/s (read + "
           "written)\n",
           c.both_each, c.d2d);
    return c;
}

/* ---- 2. the pipeline ---- */

/* Output frame i of a same-mode filter, exactly (double accumulation). */
static double exact_same(const std::vector<double> &h, const float *x, size_t N, size_t i)
{
    const long top = (long)i + (long)(h.size() - 1) / 2;
    double acc = 0;
    for (size_t k = 0; k < h.size(); k++) {
        const long j = top - (long)k;
        if (j >= 0 && j < (long)N)
            acc += h[k] * x[j];
    }
    return acc;
}

/* Output checked at 2000 seeded frames: the FFT bound, or for direct the
 * float round-off of a T-term sum. Returns the largest error / allowed. */
static double check_output(gf_engine *e, const std::vector<double> &h, const float *x,
                           const float *y, size_t N)
{
    std::vector<double> used(h.size());
    gf_engine_taps(e, used.data(), used.size());
    double bound = gf_engine_error_bound(e, 0, 1.0);
    if (bound == 0) {
        double s = 0;
        for (size_t k = 0; k < h.size(); k++)
            s += fabs(used[k]);
        bound = 2.0 * (double)(h.size() + 1) * 0x1p-24 * s;
    }
    double worst = 0;
    const size_t samples =
        std::max<size_t>(200, std::min<size_t>(2000, ((size_t)1 << 30) / h.size()));
    for (size_t q = 0; q < samples; q++) {
        const size_t i = q < 10 ? q : (size_t)(mix64(99 + q) % N);
        const double err = fabs(y[i] - exact_same(used, x, N, i));
        worst = std::max(worst, err / bound);
    }
    if (!(worst <= 1.0)) {
        fprintf(stderr, "bench_long: WRONG: error %.3g of the bound at %zu taps\n", worst,
                h.size());
        g_wrong = 1;
    }
    return worst;
}

/* The pipeline target: >= 95% of PCIe at every T, counting only outputs
 * within their bound (pct[i], worst[i] of the rows); "info" under --quick. */
static void pipeline_target(const std::vector<double> &pct, const std::vector<double> &worst,
                            const std::vector<size_t> &taps, bool quick)
{
    size_t lo = 0;
    bool all_within = true;
    for (size_t i = 0; i < pct.size(); i++) {
        all_within = all_within && worst[i] <= 1.0;
        if (pct[i] < pct[lo])
            lo = i;
    }
    const char *v = quick ? "info" : all_within && pct[lo] >= 95.0 ? "PASS" : "MISS";
    printf("target%s: pipeline >= 95%% of PCIe at every T: %s (lowest %.1f%% at %zu taps%s)\n",
           quick ? " (not judged: --quick is a smoke run)" : "", v, pct[lo], taps[lo],
           all_within ? "" : "; an output outside its bound: no result");
}

/* One row of the pipeline: T taps (chunk: gf_config.chunk_frames, 0 for
 * the engine's), timed through gf_engine_filter and the staged flush in
 * turn; its % of PCIe returned and its error against the bound in *worst. */
static double pipeline_row(const ceilings &ce, const float *x, float *y, size_t N, int reps,
                           size_t T, size_t chunk, double *worst, FILE *json, bool first)
{
    const std::vector<double> h = room(T);
    gf_config c = gf_config_default();
    c.num_taps = T;
    c.taps = h.data();
    c.device = GF_DEVICE_CUDA;
    c.chunk_frames = chunk;
    gf_engine *e = NULL;
    char detail[512];
    const gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_long: %zu taps: %s: %s\n", T, gf_strerror(st), detail);
        exit(2);
    }
    /* One gf_engine_filter call (the target's), and beside it the staged
     * flush: gf_engine_process, gf_engine_flush and pulls. */
    std::vector<double> t, ts;
    for (int r = 0; r < 2 * (reps + 1); r++) {
        const bool staged = r % 2 == 0; /* (the last run gf_engine_filter: checked below) */
        size_t got = 0, more = 0, n = 0;
        const double t0 = now_s();
        gf_status st = GF_OK;
        if (!staged) {
            st = gf_engine_filter(e, x, N, y, &got);
        } else if ((st = gf_engine_reset(e)) == GF_OK &&
                   (st = gf_engine_process(e, x, N, y, &got)) == GF_OK) {
            st = gf_engine_flush(e);
            while (st == GF_OK && (st = gf_engine_pull(e, y + got + more, N, &n)) == GF_OK && n > 0)
                more += n;
        }
        if (st != GF_OK) {
            fprintf(stderr, "bench_long: engine: %s\n", gf_engine_error(e));
            exit(2);
        }
        if (r > 1)
            (staged ? ts : t).push_back(now_s() - t0);
        if (got + more != N) {
            fprintf(stderr, "bench_long: %zu outputs, expected %zu\n", got + more, N);
            g_wrong = 1;
        }
    }
    const double s = median(t), gbs = (double)N * sizeof(float) / s / 1e9;
    const double pct = 100 * gbs / ce.both_each;
    *worst = check_output(e, h, x, y, N);
    char method[48] = "direct";
    if (gf_engine_method(e) == GF_METHOD_FFT)
        snprintf(method, sizeof method, "fft P=%zu", gf_engine_partition(e));
    if (chunk) /* the row of a --chunks sweep: its chunk beside the method */
        snprintf(method + strlen(method), sizeof method - strlen(method), " c=%zu",
                 gf_engine_chunk_frames(e));
    printf("%9zu %-22s %9.2f %9.1f %8.1f%% %12.3g %10.2f\n", T, method, 1e3 * s, gbs, pct, *worst,
           1e3 * median(ts));
    if (json)
        fprintf(json,
                "%s{\"taps\": %zu, \"method\": \"%s\", \"chunk\": %zu, \"ms\": %.4f, "
                "\"pcie_pct\": %.2f, \"within_bound\": %s}",
                first ? "" : ", ", T, method, gf_engine_chunk_frames(e), 1e3 * s, pct,
                *worst <= 1.0 ? "true" : "false");
    gf_engine_destroy(e);
    fflush(stdout);
    return pct;
}

static void bench_pipeline(const ceilings &ce, size_t N, int reps, bool quick,
                           const std::vector<size_t> &chunks, FILE *json)
{
    float *x = (float *)gf_host_alloc(N * sizeof(float));
    float *y = (float *)gf_host_alloc((N + ((size_t)1 << 24)) * sizeof(float));
    if (!x || !y) {
        fprintf(stderr, "bench_long: cannot allocate page-locked buffers\n");
        exit(2);
    }
    fill(x, N, 1);
    const std::vector<size_t> Ts = {5, 255, 4095, 65536, (size_t)1 << 20, (size_t)1 << 22};
    printf("\npipeline: %zu f32 samples (mono, same mode), page-locked host to host, --method "
           "auto\n",
           N);
    printf("%9s %-22s %9s %9s %9s %12s %10s\n", "taps", "method", "ms", "GB/s", "% PCIe",
           "err/bound", "staged ms");
    std::vector<double> pcts, worsts;
    for (size_t T : Ts) {
        double worst = 0;
        pcts.push_back(pipeline_row(ce, x, y, N, reps, T, 0, &worst, json, pcts.empty()));
        worsts.push_back(worst);
    }
    pipeline_target(pcts, worsts, Ts, quick);
    /* --chunks: the long filters again at those chunk sizes (not judged). */
    for (size_t chunk : chunks)
        for (size_t T : {(size_t)1 << 20, (size_t)1 << 22}) {
            double worst = 0;
            pipeline_row(ce, x, y, N, reps, T, chunk, &worst, json, false);
        }
    gf_host_free(x);
    gf_host_free(y);
}

/* ---- 3. the FFT filter alone, on the device ---- */

/* Median event time of op over reps runs after one warm-up. */
template <class Op> static double time_device(int reps, Op op)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int r = 0; r < reps + 1; r++) {
        CK(cudaEventRecord(e0, 0));
        op();
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0)
            t.push_back(ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return median(t);
}

/* The FFT filter alone's output d_y (causal, from input hx) at 200-2000
 * seeded frames against the exact sum of taps hf (double), as a fraction
 * of gpufilt.h's bound eps (2 log2(2P) + K + 4) sum|h| max|x|. The output
 * is the last of several timed runs over hx without a reset in between,
 * so the input before frame 0 is the end of hx. */
static double check_device_output(const float *hx, const float *d_y, size_t N,
                                  const std::vector<float> &hf, size_t P)
{
    const size_t T = hf.size(), K = (T + P - 1) / P;
    double sum_h = 0, max_x = 0;
    for (size_t k = 0; k < T; k++)
        sum_h += fabs((double)hf[k]);
    for (size_t i = 0; i < N; i++)
        max_x = std::max(max_x, fabs((double)hx[i]));
    double lp = 0;
    while (((size_t)1 << (size_t)lp) < 2 * P)
        lp++;
    const double bound = 0x1p-24 * (2 * lp + (double)K + 4) * sum_h * max_x;
    const size_t samples = std::max<size_t>(200, std::min<size_t>(2000, ((size_t)1 << 30) / T));
    double worst = 0;
    for (size_t q = 0; q < samples; q++) {
        const size_t i = q < 10 ? q : (size_t)(mix64(77 + q) % N);
        float y = 0;
        CK(cudaMemcpy(&y, d_y + i, sizeof y, cudaMemcpyDeviceToHost));
        double exact = 0; /* the timed runs follow one another unreset: x repeats */
        for (size_t k = 0; k < T; k++)
            exact += (double)hf[k] * (double)hx[(i + N - k % N) % N];
        worst = std::max(worst, fabs((double)y - exact) / bound);
    }
    if (!(worst <= 1.0)) {
        fprintf(stderr,
                "bench_long: WRONG: the FFT filter alone at %zu taps, partition %zu: error "
                "%.3g of the bound\n",
                T, P, worst);
        g_wrong = 1;
    }
    return worst;
}

/* The FFT filter alone over d_x (hx on the host): partition *P, or the
 * cost model's if 0; its output checked once (*worst: error / bound). */
static double device_filter(const float *d_x, const float *hx, float *d_y, size_t N, size_t T,
                            size_t chunk, int reps, size_t *P, double *worst)
{
    const std::vector<double> h = room(T);
    std::vector<float> hf(T);
    for (size_t k = 0; k < T; k++)
        hf[k] = (float)h[k];
    gf_backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = 1;
    p.num_taps = T;
    p.taps = hf.data();
    p.method = GF_METHOD_FFT;
    p.partition = *P ? *P : gf_partition_choose(T, GF_DEVICE_CUDA);
    p.precision = GF_PRECISION_F32;
    p.chunk_frames = chunk / p.partition * p.partition;
    gf::fft_conv *f = NULL;
    char err[512];
    if (gf::fft_conv_create(&p, &f, err, sizeof err) != GF_OK) {
        fprintf(stderr, "bench_long: device FFT set-up: %s\n", err);
        exit(2);
    }
    *P = p.partition;
    const double ms = time_device(reps, [&] {
        for (size_t off = 0; off < N; off += p.chunk_frames) {
            const size_t n = std::min(p.chunk_frames, N - off);
            if (gf::fft_conv_run(f, 0, d_x + off, n, 0, d_y + off, err, sizeof err) != GF_OK) {
                fprintf(stderr, "bench_long: %s\n", err);
                exit(2);
            }
        }
    });
    gf::fft_conv_destroy(f);
    *worst = check_device_output(hx, d_y, N, hf, p.partition);
    return ms;
}

/* The floor target: the filter alone within 4x of the memory floor at
 * every length (floor_x[i]: Ts[i]'s chunked time over it), as
 * pipeline_target judges its own. */
static void floor_target(const std::vector<double> &floor_x, const std::vector<size_t> &Ts,
                         bool all_within, bool quick)
{
    std::string rows;
    bool within4 = true;
    for (size_t i = 0; i < floor_x.size(); i++) {
        char one[64];
        snprintf(one, sizeof one, "%s%.1fx at %zu", i ? ", " : "", floor_x[i], Ts[i]);
        rows += one;
        within4 = within4 && floor_x[i] <= 4.0;
    }
    printf("target%s: FFT filter alone within 4x of the memory floor: %s (%s taps)\n",
           quick ? " (not judged: --quick is a smoke run)" : "",
           quick         ? "info"
           : !all_within ? "no result (an output outside its bound)"
           : within4     ? "PASS"
                         : "MISS",
           rows.c_str());
}

static void bench_device(const ceilings &ce, size_t N, const std::vector<size_t> &Ts,
                         const std::vector<size_t> &Ps, int reps, bool quick, FILE *json)
{
    float *hx = (float *)malloc(N * sizeof(float));
    float *d_x, *d_y;
    CK(cudaMalloc(&d_x, N * sizeof(float)));
    CK(cudaMalloc(&d_y, N * sizeof(float)));
    fill(hx, N, 3);
    CK(cudaMemcpy(d_x, hx, N * sizeof(float), cudaMemcpyHostToDevice));
    /* A batched 4096-point R2C over the same samples. */
    cufftHandle plan;
    cufftComplex *d_c;
    CK(cudaMalloc(&d_c, (N / 4096) * 2049 * sizeof(cufftComplex)));
    if (cufftPlan1d(&plan, 4096, CUFFT_R2C, (int)(N / 4096)) != CUFFT_SUCCESS) {
        fprintf(stderr, "bench_long: cufftPlan1d failed\n");
        exit(2);
    }
    const double r2c = time_device(reps, [&] { cufftExecR2C(plan, d_x, d_c); });
    cufftDestroy(plan);
    cudaFree(d_c);
    const double copy_ms = 2.0 * (double)N * sizeof(float) / ce.d2d / 1e6;
    const double pcie_ms = (double)N * sizeof(float) / ce.both_each / 1e6;
    printf("\nFFT filter alone on the device: %zu f32 samples\n", N);
    printf("  batched 4096-point R2C, same samples:         %8.3f ms\n", r2c);
    printf("  same-size device copy (at the measured rate): %8.3f ms\n", copy_ms);
    printf("  the samples over PCIe (both ways at once):    %8.3f ms\n", pcie_ms);
    printf("  memory floor (the samples read once and written once): the copy's time;\n"
           "  x floor: the chunked time over it (target <= 4x)\n");
    printf("%9s %8s %12s %12s %12s %10s %8s\n", "taps", "P", "chunked ms", "1 chunk ms",
           "% of PCIe", "err/bound", "x floor");
    if (json)
        fprintf(json, "\"r2c4096_ms\": %.4f, \"device\": [", r2c);
    std::vector<double> floor_x;
    bool all_within = true;
    for (size_t i = 0; i < Ts.size(); i++) {
        /* Any partitions asked for (--partitions), then the cost model's. */
        for (size_t j = 0; j < Ps.size(); j++) {
            size_t P = Ps[j];
            if (P >= 2 * Ts[i] || P * 32768 < Ts[i])
                continue;
            double worst = 0;
            const double ms =
                device_filter(d_x, hx, d_y, N, Ts[i], (size_t)1 << 21, reps, &P, &worst);
            printf("%9zu %8zu %12.3f %12s %11.1f%% %10.3g   (--partitions)\n", Ts[i], P, ms, "-",
                   100 * ms / pcie_ms, worst);
        }
        size_t P1 = 0, P2 = 0;
        double worst = 0, worst2 = 0;
        const double chunked =
            device_filter(d_x, hx, d_y, N, Ts[i], (size_t)1 << 21, reps, &P1, &worst);
        const double whole = !quick || Ts[i] == 65536
                                 ? device_filter(d_x, hx, d_y, N, Ts[i], N, reps, &P2, &worst2)
                                 : 0.0;
        char whole_s[32] = "-";
        if (whole > 0)
            snprintf(whole_s, sizeof whole_s, "%.3f", whole);
        const double err = std::max(worst, worst2);
        floor_x.push_back(chunked / copy_ms);
        printf("%9zu %8zu %12.3f %12s %11.1f%% %10.3g %8.1f\n", Ts[i], P1, chunked, whole_s,
               100 * chunked / pcie_ms, err, floor_x.back());
        all_within = all_within && err <= 1.0;
        if (json)
            fprintf(json,
                    "%s{\"taps\": %zu, \"partition\": %zu, \"ms_chunked\": %.4f, "
                    "\"x_floor\": %.3f, \"within_bound\": %s}",
                    i ? ", " : "", Ts[i], P1, chunked, floor_x.back(),
                    worst <= 1.0 ? "true" : "false");
        fflush(stdout);
    }
    if (json)
        fprintf(json, "]");
    floor_target(floor_x, Ts, all_within, quick);
    cudaFree(d_x);
    cudaFree(d_y);
    free(hx);
}

int main(int argc, char **argv)
{
    int quick = 0, device_only = 0;
    const char *json_path = NULL;
    std::vector<size_t> device_taps, partitions, chunks;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--device-only") == 0)
            device_only = 1;
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if ((strcmp(argv[i], "--taps") == 0 || strcmp(argv[i], "--partitions") == 0 ||
                  strcmp(argv[i], "--chunks") == 0) &&
                 i + 1 < argc) {
            std::vector<size_t> &list = argv[i][2] == 't'   ? device_taps
                                        : argv[i][2] == 'p' ? partitions
                                                            : chunks;
            for (char *t = argv[++i]; *t;) {
                char *end;
                list.push_back(strtoull(t, &end, 10));
                if (end == t || list.back() < 1 || (*end && *end != ','))
                    return fprintf(stderr, "bench_long: bad list '%s'\n", argv[i]), 2;
                t = *end ? end + 1 : end;
            }
        } else {
            fprintf(stderr, "usage: bench_long [--quick] [--device-only] [--taps T,...] "
                            "[--partitions P,...] [--chunks F,...] [--json FILE]\n");
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1 || !gf_cuda_available()) {
        fprintf(stderr, "bench_long: no usable CUDA device\n");
        return 77;
    }
    CK(cudaFree(0));
    const size_t N = quick ? (size_t)1 << 24 : (size_t)1 << 27;
    const int reps = quick ? 2 : 3;
    printf("bench_long: gpufilt %s\n", gf_version());
    const ceilings ce = measure_ceilings(N * sizeof(float));
    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if (json)
        fprintf(json, "{\"samples\": %zu, \"quick\": %s, \"pcie_each_gbs\": %.3f, \"pipeline\": [",
                N, quick ? "true" : "false", ce.both_each);
    if (!device_only)
        bench_pipeline(ce, N, reps, quick != 0, chunks, json);
    if (json)
        fprintf(json, "], ");
    if (device_taps.empty())
        device_taps.push_back(65536);
    bench_device(ce, N, device_taps, partitions, quick ? 3 : 7, quick != 0, json);
    if (json) {
        fprintf(json, "}\n");
        fclose(json);
    }
    printf("\nresults: %s\n",
           g_wrong ? "WRONG (see stderr)" : "every checked output within its bound");
    return g_wrong ? 1 : 0;
}
