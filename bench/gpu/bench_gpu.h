/*
 * What the parts of bench_gpu share: exit codes and error checks, the
 * options, the result rows every section appends to, timing and
 * statistics, random data, the serial reference, gpufilt's launch as the
 * backend does it, the device's facts and the ceilings, and each section's
 * entry point. main.cu says what the benchmark measures.
 */
#ifndef GF_BENCH_GPU_H
#define GF_BENCH_GPU_H

#include "gpufilt.h"
#include "launch.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#define EXIT_WRONG     1
#define EXIT_ERROR     2
#define EXIT_NO_DEVICE 77

/* Check a CUDA call; on failure print the call and the error and exit. */
#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "bench_gpu: %s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                               \
            exit(EXIT_ERROR);                                                                    \
        }                                                                                        \
    } while (0)

/* Check a gpufilt call likewise; e (may be NULL) supplies the detail. */
#define GF_CK(e, call)                                                                          \
    do {                                                                                        \
        gf_status s_ = (call);                                                                  \
        if (s_ != GF_OK) {                                                                      \
            fprintf(stderr, "bench_gpu: %s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, \
                    gf_strerror(s_), (e) ? gf_engine_error(e) : "");                            \
            exit(EXIT_ERROR);                                                                   \
        }                                                                                       \
    } while (0)

void *xmalloc(size_t bytes);
double now_s(void);

/* ---------------------------------------------------------------- options */

typedef struct options {
    int quick;
    int hist_only; /* only section h */
    int reps;      /* timed repetitions of every GPU measurement */
    int pipe_reps; /* timed runs of each pipeline configuration */
    int device;
    long long n;            /* samples of the seeds' experiment */
    size_t pcie_bytes;      /* PCIe transfer size */
    size_t d2d_big_bytes;   /* the large device copy */
    size_t pipe_bytes;      /* f32 bytes through the pipeline */
    const char *json, *csv; /* machine-readable copies, or NULL */
} options;

options parse_options(int argc, char **argv);

/* ------------------------------------------------------------ result rows */

typedef struct row {
    std::string sec, name;
    double mb; /* MB (1e6 bytes) counted for GB/s */
    double ms; /* median */
    double ms_min, ms_max;
    double gbs; /* GB/s (1e9 bytes per second) */
    double pct; /* % of `ceiling` */
    std::string ceiling;
    double speedup; /* over the section's baseline */
    double maxerr;
    std::string check;
} row;

extern std::vector<row> g_rows;
extern int g_wrong; /* a result differed: exit 1 at the end */

row make_row(const char *sec, const std::string &name);
std::string size_name(size_t bytes);

/* ------------------------------------------------------------- statistics */

typedef struct stats {
    double med, min, max;
    int reps, inner;
} stats;

stats summarise(std::vector<double> t, int inner);

/* Aim for batches of about this many ms so launch gaps and event resolution
 * stay small against the time measured. */
#define BATCH_MS  2.0
#define MAX_INNER 64

/*
 * Time op(i), which enqueues operation number i on stream st: `warm`
 * operations first, then `reps` batches of `inner` back-to-back operations,
 * each batch bracketed by events; returns the median per-operation time in
 * ms. inner is chosen so that a batch lasts about BATCH_MS.
 */
template <class Op> stats time_op(cudaStream_t st, int reps, int warm, Op op)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    long long k = 0;
    for (int w = 0; w < warm; w++)
        op(k++);
    CK(cudaEventRecord(a, st));
    op(k++);
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float one = 0;
    CK(cudaEventElapsedTime(&one, a, b));
    int inner = one > 0 ? (int)ceil(BATCH_MS / one) : MAX_INNER;
    inner = std::min(std::max(inner, 1), MAX_INNER);
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < inner; i++)
            op(k++);
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back((double)ms / inner);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return summarise(t, inner);
}

void fill_stats(row *r, const stats &s);

/* ----------------------------------------------------------- random data */

/* Uniform in [-1, 1), every sample a different non-zero-ish value. */
void fill_random_f64(double *x, size_t n, uint64_t seed);
void fill_random_f32(float *x, size_t n, uint64_t seed);
void fill_random_bytes(void *p, size_t bytes, uint64_t seed);

/* ------------------------------------------------------ serial reference */

/*
 * The seeds' serial reference, a plain loop in the contract's order: same
 * mode, y[i] = sum_k h[k] x[i + c - k] with c = (T-1)/2 and x outside
 * [0, n) taken as 0, computed as acc = h[0]*x[j]; acc = acc + h[k]*x[j-k]
 * (j = i + c). Outputs i0 .. i1-1 go to y[0 ..). bench_gpu is compiled with
 * contraction off, so every multiply and add is rounded on its own.
 */
template <typename T>
void serial_fir(const T *x, long long n, const T *h, int ntaps, long long i0, long long i1, T *y)
{
    const int c = (ntaps - 1) / 2;
    for (long long i = i0; i < i1; i++) {
        const long long j = i + c;
        T acc = h[0] * (j >= 0 && j < n ? x[j] : (T)0);
        for (int k = 1; k < ntaps; k++) {
            const long long m = j - k;
            acc = acc + h[k] * (m >= 0 && m < n ? x[m] : (T)0);
        }
        y[i - i0] = acc;
    }
}

/* Compare bit for bit; returns the number of differing outputs and the
 * largest |difference| (infinite where one side is NaN, e.g. unwritten). */
template <typename T> size_t compare(const T *got, const T *want, size_t n, double *maxerr)
{
    size_t bad = 0;
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&got[i], &want[i], sizeof(T)) != 0) {
            bad++;
            const double d = fabs((double)got[i] - (double)want[i]);
            m = std::max(m, isnan(d) ? (double)INFINITY : d);
        }
    }
    *maxerr = m;
    return bad;
}

/* ------------------------------------------------------ gpufilt's kernel */

/* The production launch site (fir_launch.cu) with taps at the start of the library's constant bank,
 * for a chunk whose buffer is [halo | samples] and outputs n in [n0, n1). */
template <typename T> gf::fir_plan gpufilt_plan(const T *h, int ntaps, int C)
{
    gf::fir_plan p;
    char err[256];
    if (gf::fir_const_upload(h, (size_t)ntaps * sizeof(T), 0, err, sizeof err) != GF_OK ||
        gf::fir_plan_make<T>(ntaps, C, 0, false, &p, err, sizeof err) != GF_OK) {
        fprintf(stderr, "bench_gpu: gpufilt's kernel set-up: %s\n", err);
        exit(EXIT_ERROR);
    }
    CK(cudaDeviceSynchronize());
    return p;
}

template <typename T>
void launch_gpufilt(const gf::fir_plan &p, cudaStream_t st, const T *buf, T *y, long long n0,
                    long long n1)
{
    gf::fir_launch<T>(p, st, buf, y, n0, n1, NULL);
    CK(cudaGetLastError());
}

/* ------------------------------------------------------------ the engine */

/* gf_engine_create, or exit(EXIT_ERROR) after a message naming the call
 * as "gf_engine_create<what>". */
gf_engine *create_engine(const gf_config *cfg, const char *what);

/* One whole stream through the engine, as the CLI runs one: reset, then,
 * timed, process, flush and pull until nothing comes; after(e) runs after
 * the process and after the last pull (to take histogram records).
 * Returns wall seconds; *total receives the frames written to out. */
template <class After>
double run_stream_with(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                       size_t *total, After after)
{
    GF_CK(e, gf_engine_reset(e));
    const double t0 = now_s();
    size_t produced = 0, got = 0;
    GF_CK(e, gf_engine_process(e, in, frames, out, &produced));
    after(e);
    GF_CK(e, gf_engine_flush(e));
    do {
        GF_CK(e, gf_engine_pull(e, out + produced, cap - produced, &got));
        produced += got;
    } while (got > 0 && produced < cap);
    after(e);
    const double t = now_s() - t0;
    *total = produced;
    return t;
}

/* ------------------------------------------------------------ the device */

typedef struct device_info {
    std::string name;
    int cc_major, cc_minor, sms;
    int sm_clock_khz, mem_clock_khz, bus_bits;
    int l2_bytes;
    size_t total_mem;
    int ecc;
    int driver, runtime;
    double peak_gbs; /* 2 * memory clock * bus width */
    char pci[32];
} device_info;

typedef struct ceilings {
    double d2d_f64_gbs, d2d_f32_gbs; /* same-size device copies */
    std::string d2d_f64_name, d2d_f32_name;
    double both_each_gbs; /* H2D and D2H at once, per direction */
} ceilings;

/* The best row of a kind so far among the rows checked exact: only those
 * count toward a target (pct -1 and no name: none yet). */
typedef struct best {
    double pct = -1;
    std::string name;
} best;

/* Make row r the best when its check reads "exact" and its pct is higher. */
void note_best(best *b, const row &r);

/* Section b's bests: of every kernel (the textbook ones included: shown,
 * not a target) and of gpufilt's own fir_tiled f64 (the kernel target). */
typedef struct kernel_best {
    best any, gpufilt;
} kernel_best;

typedef struct hist_result {
    double kernel_ratio[2]; /* (filter + hist) / filter, device, 256 and 4096 bins */
    bool kernel_exact[2];   /* ... and its partials matched the host's */
    double pipe_ratio[2];   /* the same through the engine, wall time */
    bool pipe_exact[2];     /* ... and its records matched the cpu backend's */
} hist_result;

typedef struct target {
    const char *name;
    std::string what;
    double ratio, goal;
} target;

/* ---------------------------------------------------------- the sections */

/* a. transfer ceilings (transfers.cu) */
void bench_transfers(const options &o, const device_info &d, cudaStream_t st, ceilings *ce);
/* b. the seeds' kernel experiment (seeds.cu) */
void bench_seeds(const options &o, const device_info &d, cudaStream_t st, ceilings *ce,
                 kernel_best *kb);
/* c. the host-to-host pipeline (pipeline.cu) */
/* Section c; the best pinned row, the best pageable row (staged or
 * registered with gf_host_register). */
void bench_pipeline(const options &o, const ceilings &ce, best *best_pipe, best *best_pageable);
/* h. histograms (hist.cu) */
void bench_hist(const options &o, const device_info &d, cudaStream_t st, hist_result *res);

/* The table, and its machine-readable copies (report.cu). */
void print_table(FILE *f);
void write_csv(const char *path);
void write_json(const char *path, const options &o, const device_info &d,
                const std::vector<target> &tg);

#endif /* GF_BENCH_GPU_H */
