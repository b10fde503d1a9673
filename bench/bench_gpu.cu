/*
 * bench_gpu: gpufilt's GPU benchmark. One run prints one table:
 *
 *   a. ceilings measured in the same process: device-to-device copy (bytes
 *      read + written), pinned host-to-device, device-to-host, and both at
 *      once on two streams;
 *   b. the seeds' experiment: 10,000,000 doubles through a 5-tap mean filter
 *      (same mode) on the CPU (serial reference) and with five kernels, from
 *      the textbook basic kernel to gpufilt's production gf::fir_tiled, each
 *      checked bit for bit against the serial reference; plus gpufilt in f32;
 *   c. the host-to-host pipeline: gf_engine_process on the CUDA backend over
 *      1 GiB of f32, pinned (zero-copy path) and pageable (staging path), at
 *      several chunk sizes, checked bit for bit against the CPU backend;
 *   d. the targets: best kernel against the device copy, best pipeline
 *      against PCIe with both directions busy;
 *   h. per-block histograms (hist_kernels.cuh) over 100M f32 samples
 *      (2 channels x 50M frames, 5 taps, blocks of 48000 frames): the filter
 *      alone against filter + histogram at 256 and 4096 bins, on the device
 *      (chunk by chunk as the engine runs them, 3 streams, captured in a
 *      CUDA graph so launch gaps do not count) and through the engine
 *      (pinned host to host); the histogram kernel alone in GB/s against a
 *      textbook 256-bin shared-atomic histogram and a same-size D2D copy;
 *      PASS/FAIL for "the histogram adds <= 10% at 256 bins".
 *
 * Every CUDA call is checked (CK); kernel times are medians of event-timed
 * batches over rotating buffer sets several times the size of L2, on
 * random data. Exit status: 0 (targets missed included), 1 wrong results,
 * 2 CUDA or library error or bad usage, 77 no CUDA device.
 */
#include "gpufilt.h"
#include "launch.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bench_gpu: out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_ERROR);
    }
    return p;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_gpu [--quick] [--hist-only] [--reps N] [--pipe-reps N] [--pipe-mib N]\n"
            "                 [--device N]\n"
            "                 [--json PATH] [--csv PATH]\n"
            "  --quick       small sizes and few repetitions (a smoke run, not a measurement)\n"
            "  --hist-only   only section h (histograms)\n"
            "  --reps N      timed repetitions of each GPU measurement (default 20; quick 5)\n"
            "  --pipe-reps N timed runs of each pipeline configuration (default 5; quick 2)\n"
            "  --pipe-mib N  MiB of f32 samples through the pipeline (default 1024; quick 64)\n"
            "  --device N    CUDA device ordinal (default 0)\n"
            "  --json PATH   also write the table (and device, targets) as JSON\n"
            "  --csv PATH    also write the table as CSV\n"
            "Exit status: 0 ok (also when a target is missed), 1 wrong results,\n"
            "2 CUDA or library error, 77 no CUDA device.\n");
}

static long long parse_num(const char *opt, const char *s, long long lo, long long hi)
{
    char *end = NULL;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || *s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "bench_gpu: %s needs an integer in %lld..%lld\n", opt, lo, hi);
        exit(EXIT_ERROR);
    }
    return v;
}

static options parse_options(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int reps = -1, pipe_reps = -1;
    long long pipe_mib = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* The value of an option that takes one. */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--reps"))
            reps = (int)parse_num(a, v, 1, 100000);
        else if (!strcmp(a, "--pipe-reps"))
            pipe_reps = (int)parse_num(a, v, 1, 1000);
        else if (!strcmp(a, "--pipe-mib"))
            pipe_mib = parse_num(a, v, 1, 16384);
        else if (!strcmp(a, "--device"))
            o.device = (int)parse_num(a, v, 0, 1023);
        else if (!strcmp(a, "--json") || !strcmp(a, "--csv")) {
            if (!v) {
                fprintf(stderr, "bench_gpu: %s needs a path\n", a);
                exit(EXIT_ERROR);
            }
            *(a[2] == 'j' ? &o.json : &o.csv) = v;
        } else {
            takes = 0;
            if (!strcmp(a, "--quick"))
                o.quick = 1;
            else if (!strcmp(a, "--hist-only"))
                o.hist_only = 1;
            else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                usage(stdout);
                exit(0);
            } else {
                fprintf(stderr, "bench_gpu: unknown argument '%s'\n", a);
                usage(stderr);
                exit(EXIT_ERROR);
            }
        }
        i += takes;
    }
    const size_t MiB = (size_t)1 << 20;
    o.n = o.quick ? 1000000 : 10000000;
    o.pcie_bytes = o.quick ? 64 * MiB : 1024 * MiB;
    o.d2d_big_bytes = o.quick ? 256 * MiB : 1024 * MiB;
    o.pipe_bytes = (size_t)(pipe_mib > 0 ? pipe_mib : o.quick ? 64 : 1024) * MiB;
    o.reps = reps > 0 ? reps : o.quick ? 5 : 20;
    o.pipe_reps = pipe_reps > 0 ? pipe_reps : o.quick ? 2 : 5;
    return o;
}

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

static std::vector<row> g_rows;
static int g_wrong = 0; /* a result differed: exit 1 at the end */

static row make_row(const char *sec, const std::string &name)
{
    row r;
    r.sec = sec;
    r.name = name;
    r.mb = r.ms = r.ms_min = r.ms_max = r.gbs = r.pct = r.speedup = r.maxerr = NAN;
    r.check = "-";
    return r;
}

static std::string fmt(const char *f, double v)
{
    if (isnan(v))
        return "-";
    char b[64];
    snprintf(b, sizeof b, f, v);
    return b;
}

static std::string size_name(size_t bytes)
{
    char b[64];
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(b, sizeof b, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(b, sizeof b, "%zu MiB", bytes >> 20);
    else
        snprintf(b, sizeof b, "%.1f MB", (double)bytes / 1e6);
    return b;
}

static std::string pow2_name(size_t v)
{
    char b[64];
    if (v && (v & (v - 1)) == 0) {
        int e = 0;
        while (((size_t)1 << e) != v)
            e++;
        snprintf(b, sizeof b, "2^%d", e);
    } else
        snprintf(b, sizeof b, "%zu", v);
    return b;
}

static const char *const k_cols[] = {"sec",   "case",    "MB moved", "ms",       "GB/s",
                                     "%ceil", "ceiling", "speedup",  "max|err|", "check"};
enum { NCOLS = 10 };

static std::vector<std::string> row_cells(const row &r)
{
    std::vector<std::string> c;
    c.push_back(r.sec);
    c.push_back(r.name);
    c.push_back(fmt("%.1f", r.mb));
    c.push_back(fmt(r.ms < 1 ? "%.4f" : r.ms < 100 ? "%.3f" : "%.1f", r.ms));
    c.push_back(fmt(r.gbs < 10 ? "%.3f" : "%.1f", r.gbs));
    c.push_back(fmt("%.1f%%", r.pct));
    c.push_back(r.ceiling);
    c.push_back(fmt(r.speedup < 10 ? "%.2fx" : "%.0fx", r.speedup));
    c.push_back(isnan(r.maxerr) ? "-" : r.maxerr == 0 ? "0" : fmt("%.3g", r.maxerr));
    c.push_back(r.check);
    return c;
}

static void print_table(FILE *f)
{
    std::vector<std::vector<std::string>> cells;
    size_t w[NCOLS];
    for (int j = 0; j < NCOLS; j++)
        w[j] = strlen(k_cols[j]);
    for (size_t i = 0; i < g_rows.size(); i++) {
        cells.push_back(row_cells(g_rows[i]));
        for (int j = 0; j < NCOLS; j++)
            w[j] = std::max(w[j], cells.back()[j].size());
    }
    /* Text columns left-aligned, numbers right-aligned. */
    const bool left[NCOLS] = {true, true, false, false, false, false, true, false, false, true};
    size_t total = 0;
    for (int j = 0; j < NCOLS; j++)
        total += w[j] + (j ? 2 : 0);
    for (int j = 0; j < NCOLS; j++)
        fprintf(f, "%s%-*s", j ? "  " : "", (int)w[j], k_cols[j]);
    fprintf(f, "\n%s\n", std::string(total, '-').c_str());
    for (size_t i = 0; i < cells.size(); i++) {
        if (i > 0 && g_rows[i].sec != g_rows[i - 1].sec)
            fprintf(f, "\n");
        for (int j = 0; j < NCOLS; j++)
            fprintf(f, left[j] ? "%s%-*s" : "%s%*s", j ? "  " : "", (int)w[j], cells[i][j].c_str());
        fprintf(f, "\n");
    }
}

static std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (size_t i = 0; i < s.size(); i++) {
        const unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            o += '\\';
            o += (char)ch;
        } else if (ch < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", ch);
            o += b;
        } else
            o += (char)ch;
    }
    return o + "\"";
}

static std::string json_num(double v)
{
    if (!isfinite(v))
        return "null";
    char b[64];
    snprintf(b, sizeof b, "%.9g", v);
    return b;
}

static std::string csv_str(const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string o = "\"";
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '"')
            o += '"';
        o += s[i];
    }
    return o + "\"";
}

static std::string csv_num(double v)
{
    return isfinite(v) ? json_num(v) : "";
}

/* ------------------------------------------------------------- statistics */

typedef struct stats {
    double med, min, max;
    int reps, inner;
} stats;

static stats summarise(std::vector<double> t, int inner)
{
    stats s;
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    s.med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.min = t.front();
    s.max = t.back();
    s.reps = (int)n;
    s.inner = inner;
    return s;
}

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
template <class Op> static stats time_op(cudaStream_t st, int reps, int warm, Op op)
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

static void fill_stats(row *r, const stats &s)
{
    r->ms = s.med;
    r->ms_min = s.min;
    r->ms_max = s.max;
    r->gbs = r->mb / s.med; /* 1e6 bytes per 1e-3 s = 1e9 bytes/s */
}

/* ----------------------------------------------------------- random data */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1), every sample a different non-zero-ish value. */
static void fill_random_f64(double *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(splitmix64(&seed) >> 11) * 0x1.0p-52 - 1.0;
}

static void fill_random_f32(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(splitmix64(&seed) >> 40) * 0x1.0p-23f - 1.0f;
}

static void fill_random_bytes(void *p, size_t bytes, uint64_t seed)
{
    unsigned char *c = (unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t v = splitmix64(&seed);
        memcpy(c + i, &v, 8);
    }
    for (; i < bytes; i++)
        c[i] = (unsigned char)splitmix64(&seed);
}

/* ------------------------------------------------------ serial reference */

/*
 * The seeds' serial reference, a plain loop in the contract's order: same
 * mode, y[i] = sum_k h[k] x[i + c - k] with c = (T-1)/2 and x outside
 * [0, n) taken as 0, computed as acc = h[0]*x[j]; acc = acc + h[k]*x[j-k]
 * (j = i + c). Outputs i0 .. i1-1 go to y[0 ..). The file is compiled with
 * contraction off, so every multiply and add is rounded on its own.
 */
template <typename T>
static void serial_fir(const T *x, long long n, const T *h, int ntaps, long long i0, long long i1,
                       T *y)
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
template <typename T> static size_t compare(const T *got, const T *want, size_t n, double *maxerr)
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

/* ------------------------------------------------------ teaching kernels */

#define MAX_TEACH_TAPS 64
#define TEACH_BLOCK    256

/* Kernels 2-4 read their taps from this translation unit's own constant
 * bank; gpufilt's kernel from the library's (gf::fir_const_upload). */
__constant__ double c_mask[MAX_TEACH_TAPS];

/* x[j], or 0 outside [0, n) (the ghost elements). */
__device__ __forceinline__ double ghost(const double *x, long long j, long long n)
{
    return j >= 0 && j < n ? x[j] : 0.0;
}

/* (1) basic: one thread per output, taps and x from global memory. */
__global__ void k_basic(const double *x, double *y, const double *h, int ntaps, long long n)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const long long j = i + (ntaps - 1) / 2;
    double acc = __dmul_rn(h[0], ghost(x, j, n));
    for (int k = 1; k < ntaps; k++)
        acc = __dadd_rn(acc, __dmul_rn(h[k], ghost(x, j - k, n)));
    y[i] = acc;
}

/* (2) constant: taps in constant memory, x from global memory. */
__global__ void k_constant(const double *x, double *y, int ntaps, long long n)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const long long j = i + (ntaps - 1) / 2;
    double acc = __dmul_rn(c_mask[0], ghost(x, j, n));
    for (int k = 1; k < ntaps; k++)
        acc = __dadd_rn(acc, __dmul_rn(c_mask[k], ghost(x, j - k, n)));
    y[i] = acc;
}

/*
 * (3) constant+shared, the textbook tiled kernel: a block loads its tile
 * plus the halo on either side (ghosts as 0) into shared memory with scalar
 * loads, then each thread computes one output from shared memory.
 * Shared memory: blockDim.x + ntaps - 1 doubles.
 */
__global__ void k_shared(const double *x, double *y, int ntaps, long long n)
{
    extern __shared__ double s_tile[];
    const long long base = blockIdx.x * (long long)blockDim.x; /* first output */
    const int c = (ntaps - 1) / 2;
    const long long start = base + c - (ntaps - 1); /* x index of s_tile[0] */
    for (int t = threadIdx.x; t < (int)blockDim.x + ntaps - 1; t += blockDim.x)
        s_tile[t] = ghost(x, start + t, n);
    __syncthreads();
    const long long i = base + threadIdx.x;
    if (i >= n)
        return;
    /* x[i + c - k] = s_tile[threadIdx.x + ntaps - 1 - k] */
    const int s = threadIdx.x + ntaps - 1;
    double acc = __dmul_rn(c_mask[0], s_tile[s]);
    for (int k = 1; k < ntaps; k++)
        acc = __dadd_rn(acc, __dmul_rn(c_mask[k], s_tile[s - k]));
    y[i] = acc;
}

/*
 * (4) tiled-caching (PMPP's "tiled 1D convolution using general caching"):
 * a block stages only its own tile in shared memory; halo elements are read
 * straight from global memory, where the neighbouring blocks' loads have
 * most likely left them in L1/L2. Shared memory: blockDim.x doubles.
 */
__device__ __forceinline__ double cached_x(const double *x, const double *tile, long long m,
                                           long long base, long long n)
{
    if (m >= base && m < base + blockDim.x)
        return tile[m - base];
    return ghost(x, m, n);
}

__global__ void k_cached(const double *x, double *y, int ntaps, long long n)
{
    extern __shared__ double s_tile[];
    const long long base = blockIdx.x * (long long)blockDim.x;
    const long long i = base + threadIdx.x;
    s_tile[threadIdx.x] = i < n ? x[i] : 0.0;
    __syncthreads();
    if (i >= n)
        return;
    const long long j = i + (ntaps - 1) / 2;
    double acc = __dmul_rn(c_mask[0], cached_x(x, s_tile, j, base, n));
    for (int k = 1; k < ntaps; k++)
        acc = __dadd_rn(acc, __dmul_rn(c_mask[k], cached_x(x, s_tile, j - k, base, n)));
    y[i] = acc;
}

/* (5) gpufilt: the production launch site (fir_launch.cu) with taps at
 * the start of the library's constant bank, for a chunk whose buffer is
 * [halo | samples] and outputs n in [n0, n1). */
template <typename T> static gf::fir_plan gpufilt_plan(const T *h, int ntaps, int C)
{
    gf::fir_plan p;
    CK(gf::fir_const_upload(h, (size_t)ntaps * sizeof(T), 0));
    CK(gf::fir_plan_make<T>(ntaps, C, 0, &p));
    CK(cudaDeviceSynchronize());
    return p;
}

template <typename T>
static void launch_gpufilt(const gf::fir_plan &p, cudaStream_t st, const T *buf, T *y, long long n0,
                           long long n1)
{
    gf::fir_launch<T>(p, st, buf, y, n0, n1, NULL);
    CK(cudaGetLastError());
}

/* ----------------------------------------------------------- the context */

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

static device_info query_device(int dev)
{
    device_info d;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sms = p.multiProcessorCount;
    d.total_mem = p.totalGlobalMem;
    d.ecc = p.ECCEnabled;
    CK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, dev));
    CK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
    CK(cudaDeviceGetAttribute(&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
    CK(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, dev));
    CK(cudaDriverGetVersion(&d.driver));
    CK(cudaRuntimeGetVersion(&d.runtime));
    CK(cudaDeviceGetPCIBusId(d.pci, (int)sizeof d.pci, dev));
    d.peak_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.bus_bits / 8.0) / 1e9;
    return d;
}

/* Buffer sets to rotate through so one pass touches at least 4x L2. */
static int sets_for(size_t set_bytes, const device_info &d)
{
    const size_t want = 4 * (size_t)std::max(d.l2_bytes, 1 << 20);
    int n = (int)((want + set_bytes - 1) / set_bytes);
    return std::min(std::max(n, 2), 64);
}

typedef struct ceilings {
    double d2d_f64_gbs, d2d_f32_gbs; /* same-size device copies */
    std::string d2d_f64_name, d2d_f32_name;
    double both_each_gbs; /* H2D and D2H at once, per direction */
} ceilings;

/* --------------------------------------------------- a. large ceilings */

static void bench_transfers(const options &o, const device_info &d, cudaStream_t st, ceilings *ce)
{
    const size_t big = std::max(o.d2d_big_bytes, o.pcie_bytes);
    void *da = NULL, *db = NULL, *ha = NULL, *hb = NULL;
    CK(cudaMalloc(&da, big));
    CK(cudaMalloc(&db, big));
    CK(cudaHostAlloc(&ha, o.pcie_bytes, cudaHostAllocDefault));
    CK(cudaHostAlloc(&hb, o.pcie_bytes, cudaHostAllocDefault));
    fill_random_bytes(ha, o.pcie_bytes, 11);
    fill_random_bytes(hb, o.pcie_bytes, 12);
    CK(cudaMemcpy(da, ha, o.pcie_bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, o.pcie_bytes, cudaMemcpyHostToDevice));

    {
        const size_t bytes = o.d2d_big_bytes;
        row r = make_row("a", "D2D copy " + size_name(bytes));
        r.mb = 2.0 * (double)bytes / 1e6; /* read + written */
        const stats s = time_op(st, o.reps, 2, [&](long long) {
            CK(cudaMemcpyAsync(db, da, bytes, cudaMemcpyDeviceToDevice, st));
        });
        fill_stats(&r, s);
        r.pct = 100.0 * r.gbs / d.peak_gbs;
        r.ceiling = "DRAM peak (clock x bus)";
        g_rows.push_back(r);
    }

    const size_t pb = o.pcie_bytes;
    const std::string pn = size_name(pb);
    {
        row r = make_row("a", "H2D pinned " + pn);
        r.mb = (double)pb / 1e6;
        fill_stats(&r, time_op(st, o.reps, 1, [&](long long) {
            CK(cudaMemcpyAsync(da, ha, pb, cudaMemcpyHostToDevice, st));
        }));
        g_rows.push_back(r);
    }
    {
        row r = make_row("a", "D2H pinned " + pn);
        r.mb = (double)pb / 1e6;
        fill_stats(&r, time_op(st, o.reps, 1, [&](long long) {
            CK(cudaMemcpyAsync(hb, db, pb, cudaMemcpyDeviceToHost, st));
        }));
        g_rows.push_back(r);
    }
    {
        /* Both directions at once: H2D on one stream, D2H on another, both
         * starting at one event; each direction timed to its own end. */
        cudaStream_t up, down;
        cudaEvent_t e0, e_up, e_down;
        CK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e_up));
        CK(cudaEventCreate(&e_down));
        std::vector<double> t_up, t_down, t_both;
        for (int r = -1; r < o.reps; r++) { /* r == -1: warm-up */
            CK(cudaEventRecord(e0, up));
            CK(cudaStreamWaitEvent(down, e0, 0));
            CK(cudaMemcpyAsync(da, ha, pb, cudaMemcpyHostToDevice, up));
            CK(cudaMemcpyAsync(hb, db, pb, cudaMemcpyDeviceToHost, down));
            CK(cudaEventRecord(e_up, up));
            CK(cudaEventRecord(e_down, down));
            CK(cudaEventSynchronize(e_up));
            CK(cudaEventSynchronize(e_down));
            float mu = 0, md = 0;
            CK(cudaEventElapsedTime(&mu, e0, e_up));
            CK(cudaEventElapsedTime(&md, e0, e_down));
            if (r >= 0) {
                t_up.push_back(mu);
                t_down.push_back(md);
                t_both.push_back(std::max(mu, md));
            }
        }
        row ru = make_row("a", "H2D while D2H " + pn);
        ru.mb = (double)pb / 1e6;
        fill_stats(&ru, summarise(t_up, 1));
        row rd = make_row("a", "D2H while H2D " + pn);
        rd.mb = (double)pb / 1e6;
        fill_stats(&rd, summarise(t_down, 1));
        row rb = make_row("a", "H2D+D2H at once, total");
        rb.mb = 2.0 * (double)pb / 1e6;
        fill_stats(&rb, summarise(t_both, 1));
        /* The pipeline moves its input up while its output comes down: its
         * ceiling is one direction's share of the pair, bytes / max time. */
        row re = make_row("a", "H2D+D2H at once, each way");
        re.mb = (double)pb / 1e6;
        fill_stats(&re, summarise(t_both, 1));
        re.ceiling = "= pipeline ceiling";
        ce->both_each_gbs = re.gbs;
        g_rows.push_back(ru);
        g_rows.push_back(rd);
        g_rows.push_back(rb);
        g_rows.push_back(re);
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e_up));
        CK(cudaEventDestroy(e_down));
        CK(cudaStreamDestroy(up));
        CK(cudaStreamDestroy(down));
    }
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFreeHost(ha));
    CK(cudaFreeHost(hb));
}

/* ------------------------------------------------ b. the seeds' experiment */

/*
 * Device buffer sets for n samples of T: buf = [hs zeros | x (n) | c zeros |
 * pad zeros] (gf::fir_tiled's layout: the whole signal as one chunk, the
 * look-ahead zeros of same mode appended) and y (n outputs). Kernels 1-4
 * read x = buf + hs with their own ghost handling.
 */
template <typename T> struct sample_sets {
    int nsets;
    long long n, hs, c;
    std::vector<T *> buf, y;
};

template <typename T>
static sample_sets<T> make_sets(const T *hx, long long n, int ntaps, const device_info &d)
{
    sample_sets<T> s;
    s.n = n;
    s.hs = ntaps - 1;
    s.c = (ntaps - 1) / 2;
    const size_t buf_len = (size_t)(s.hs + n + s.c + GF_DEVICE_PAD_SAMPLES);
    s.nsets = sets_for((buf_len + (size_t)n) * sizeof(T), d);
    for (int i = 0; i < s.nsets; i++) {
        T *b = NULL, *y = NULL;
        CK(cudaMalloc(&b, buf_len * sizeof(T)));
        CK(cudaMalloc(&y, (size_t)n * sizeof(T)));
        CK(cudaMemset(b, 0, buf_len * sizeof(T)));
        CK(cudaMemcpy(b + s.hs, hx, (size_t)n * sizeof(T), cudaMemcpyHostToDevice));
        s.buf.push_back(b);
        s.y.push_back(y);
    }
    return s;
}

template <typename T> static void free_sets(sample_sets<T> *s)
{
    for (int i = 0; i < s->nsets; i++) {
        CK(cudaFree(s->buf[i]));
        CK(cudaFree(s->y[i]));
    }
}

template <typename T> static void poison_outputs(const sample_sets<T> &s)
{
    for (int i = 0; i < s.nsets; i++)
        CK(cudaMemset(s.y[i], 0xFF, (size_t)s.n * sizeof(T))); /* all-ones: NaN */
    CK(cudaDeviceSynchronize());
}

/* Check every set's output against the serial reference (every set was
 * written during the timed runs: warm-up covers them all). */
template <typename T>
static void check_outputs(const sample_sets<T> &s, const T *want, T *host, row *r)
{
    size_t bad = 0;
    double m = 0;
    for (int i = 0; i < s.nsets; i++) {
        CK(cudaMemcpy(host, s.y[i], (size_t)s.n * sizeof(T), cudaMemcpyDeviceToHost));
        double mi = 0;
        bad += compare(host, want, (size_t)s.n, &mi);
        m = std::max(m, mi);
    }
    r->maxerr = m;
    if (bad == 0)
        r->check = "exact";
    else {
        char b[64];
        snprintf(b, sizeof b, "DIFF %zu", bad);
        r->check = b;
        g_wrong = 1;
        fprintf(stderr, "bench_gpu: %s: %zu outputs differ from the serial reference\n",
                r->name.c_str(), bad);
    }
}

/* Same-size device copy over the same rotating sets: the kernel's ceiling. */
template <typename T>
static double bench_d2d_same(const options &o, const sample_sets<T> &s, cudaStream_t st,
                             const char *what, std::string *name)
{
    const size_t bytes = (size_t)s.n * sizeof(T);
    char b[128];
    snprintf(b, sizeof b, "D2D copy %s (%s)", size_name(bytes).c_str(), what);
    row r = make_row("a", b);
    r.mb = 2.0 * (double)bytes / 1e6;
    fill_stats(&r, time_op(st, o.reps, s.nsets + 2, [&](long long k) {
        const int i = (int)(k % s.nsets);
        CK(cudaMemcpyAsync(s.y[i], s.buf[i], bytes, cudaMemcpyDeviceToDevice, st));
    }));
    g_rows.push_back(r);
    *name = "D2D " + size_name(bytes);
    return r.gbs;
}

template <typename T>
static double bench_serial(const options &o, const T *hx, long long n, const T *h, int ntaps,
                           T *want, const char *name, double ceiling, const std::string &cname)
{
    const int runs = o.quick ? 1 : 3;
    std::vector<double> t;
    for (int r = 0; r < runs; r++) {
        const double t0 = now_s();
        serial_fir(hx, n, h, ntaps, 0, n, want);
        t.push_back((now_s() - t0) * 1e3);
    }
    row r = make_row("b", name);
    r.mb = 2.0 * (double)n * sizeof(T) / 1e6;
    fill_stats(&r, summarise(t, 1));
    r.pct = 100.0 * r.gbs / ceiling;
    r.ceiling = cname;
    r.speedup = 1.0;
    r.maxerr = 0;
    r.check = "reference";
    g_rows.push_back(r);
    return r.ms;
}

template <typename T, class Launch>
static double bench_kernel(const options &o, const sample_sets<T> &s, cudaStream_t st,
                           const char *name, const T *want, T *host, double serial_ms,
                           double ceiling, const std::string &cname, Launch launch)
{
    poison_outputs(s);
    row r = make_row("b", name);
    r.mb = 2.0 * (double)s.n * sizeof(T) / 1e6; /* one read + one write per output */
    fill_stats(&r, time_op(st, o.reps, s.nsets + 2, [&](long long k) {
        const int i = (int)(k % s.nsets);
        launch(s.buf[i], s.y[i]);
    }));
    CK(cudaStreamSynchronize(st));
    r.pct = 100.0 * r.gbs / ceiling;
    r.ceiling = cname;
    r.speedup = serial_ms / r.ms;
    check_outputs(s, want, host, &r);
    g_rows.push_back(r);
    return r.pct;
}

typedef struct best {
    double pct;
    std::string name;
} best;

static void bench_seeds(const options &o, const device_info &d, cudaStream_t st, ceilings *ce,
                        best *best_kernel)
{
    const int T = 5;
    const long long n = o.n;
    best_kernel->pct = -1;

    /* ---- f64 ---- */
    double h[MAX_TEACH_TAPS];
    for (int k = 0; k < T; k++)
        h[k] = 1.0 / T; /* the mean filter, as gpufilt --taps 5 makes it */
    double *hx = (double *)xmalloc((size_t)n * sizeof(double));
    double *want = (double *)xmalloc((size_t)n * sizeof(double));
    double *host = (double *)xmalloc((size_t)n * sizeof(double));
    fill_random_f64(hx, (size_t)n, 2026);

    sample_sets<double> s = make_sets(hx, n, T, d);
    fprintf(stderr, "bench_gpu: seeds' experiment: %lld doubles, %d buffer sets\n", n, s.nsets);
    ce->d2d_f64_gbs = bench_d2d_same(o, s, st, "f64 size", &ce->d2d_f64_name);
    const double serial_ms =
        bench_serial(o, hx, n, h, T, want, "serial CPU f64", ce->d2d_f64_gbs, ce->d2d_f64_name);

    double *d_h = NULL;
    CK(cudaMalloc(&d_h, T * sizeof(double)));
    CK(cudaMemcpy(d_h, h, T * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbol(c_mask, h, T * sizeof(double), 0)); /* the teaching kernels' taps */
    const gf::fir_plan plan64 = gpufilt_plan(h, T, 1);

    const long long hs = s.hs;
    const unsigned grid = (unsigned)((n + TEACH_BLOCK - 1) / TEACH_BLOCK);
    const double G = ce->d2d_f64_gbs;
    const std::string &G_name = ce->d2d_f64_name;
    struct kv {
        const char *name;
        double pct;
    } res[5];
    res[0].name = "basic f64";
    res[0].pct = bench_kernel(o, s, st, res[0].name, want, host, serial_ms, G, G_name,
                              [&](const double *buf, double *y) {
                                  k_basic<<<grid, TEACH_BLOCK, 0, st>>>(buf + hs, y, d_h, T, n);
                                  CK(cudaGetLastError());
                              });
    res[1].name = "constant f64";
    res[1].pct = bench_kernel(o, s, st, res[1].name, want, host, serial_ms, G, G_name,
                              [&](const double *buf, double *y) {
                                  k_constant<<<grid, TEACH_BLOCK, 0, st>>>(buf + hs, y, T, n);
                                  CK(cudaGetLastError());
                              });
    res[2].name = "constant+shared f64";
    const size_t smem3 = (TEACH_BLOCK + T - 1) * sizeof(double);
    res[2].pct = bench_kernel(o, s, st, res[2].name, want, host, serial_ms, G, G_name,
                              [&](const double *buf, double *y) {
                                  k_shared<<<grid, TEACH_BLOCK, smem3, st>>>(buf + hs, y, T, n);
                                  CK(cudaGetLastError());
                              });
    res[3].name = "tiled-caching f64";
    const size_t smem4 = TEACH_BLOCK * sizeof(double);
    res[3].pct = bench_kernel(o, s, st, res[3].name, want, host, serial_ms, G, G_name,
                              [&](const double *buf, double *y) {
                                  k_cached<<<grid, TEACH_BLOCK, smem4, st>>>(buf + hs, y, T, n);
                                  CK(cudaGetLastError());
                              });
    res[4].name = "gpufilt fir_tiled f64";
    const long long c = s.c;
    res[4].pct = bench_kernel(o, s, st, res[4].name, want, host, serial_ms, G, G_name,
                              [&](const double *buf, double *y) {
                                  launch_gpufilt<double>(plan64, st, buf, y, c, n + c);
                              });
    for (int i = 0; i < 5; i++)
        if (res[i].pct > best_kernel->pct) {
            best_kernel->pct = res[i].pct;
            best_kernel->name = res[i].name;
        }
    CK(cudaFree(d_h));
    free_sets(&s);
    free(hx);
    free(want);
    free(host);

    /* ---- f32: gpufilt only, against its own same-size copy ---- */
    float hf[MAX_TEACH_TAPS];
    for (int k = 0; k < T; k++)
        hf[k] = 1.0f / (float)T;
    float *fx = (float *)xmalloc((size_t)n * sizeof(float));
    float *fwant = (float *)xmalloc((size_t)n * sizeof(float));
    float *fhost = (float *)xmalloc((size_t)n * sizeof(float));
    fill_random_f32(fx, (size_t)n, 2027);
    sample_sets<float> sf = make_sets(fx, n, T, d);
    ce->d2d_f32_gbs = bench_d2d_same(o, sf, st, "f32 size", &ce->d2d_f32_name);
    const double serial32_ms =
        bench_serial(o, fx, n, hf, T, fwant, "serial CPU f32", ce->d2d_f32_gbs, ce->d2d_f32_name);
    CK(cudaDeviceSynchronize());
    const gf::fir_plan plan32 = gpufilt_plan(hf, T, 1);
    const long long cf = sf.c;
    const double pct32 =
        bench_kernel(o, sf, st, "gpufilt fir_tiled f32", fwant, fhost, serial32_ms, ce->d2d_f32_gbs,
                     ce->d2d_f32_name, [&](const float *buf, float *y) {
                         launch_gpufilt<float>(plan32, st, buf, y, cf, n + cf);
                     });
    /* The target is defined on the f64 experiment: f32 rows inform only. */
    (void)pct32;
    free_sets(&sf);
    free(fx);
    free(fwant);
    free(fhost);
}

/* ------------------------------------------------------------ c. pipeline */

/* One whole stream through the engine: reset, process, flush, drain.
 * Returns wall seconds; *total receives the frames written to out. */
static double run_stream(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                         size_t *total)
{
    GF_CK(e, gf_engine_reset(e));
    const double t0 = now_s();
    size_t produced = 0, got = 0;
    GF_CK(e, gf_engine_process(e, in, frames, out, &produced));
    GF_CK(e, gf_engine_flush(e));
    do {
        GF_CK(e, gf_engine_pull(e, out + produced, cap - produced, &got));
        produced += got;
    } while (got > 0 && produced < cap);
    const double t = now_s() - t0;
    *total = produced;
    return t;
}

static gf_engine *make_engine(const options &o, gf_device dev, size_t chunk_frames)
{
    gf_config cfg = gf_config_default();
    cfg.channels = 1;
    cfg.num_taps = 5; /* taps NULL: the mean filter 1/5 */
    cfg.mode = GF_MODE_SAME;
    cfg.precision = GF_PRECISION_F32;
    cfg.device = dev;
    cfg.chunk_frames = chunk_frames;
    cfg.cuda_device = o.device;
    gf_engine *e = NULL;
    char detail[256];
    const gf_status st = gf_engine_create(&cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_engine_create(%s, chunk %zu) failed: %s: %s\n",
                dev == GF_DEVICE_CPU ? "cpu" : "cuda", chunk_frames, gf_strerror(st), detail);
        exit(EXIT_ERROR);
    }
    return e;
}

/* Check a pipeline output against the CPU backend's; record it in r. */
static void check_stream(const float *got, size_t total, const float *want, size_t frames, row *r,
                         const char *when)
{
    double m = 0;
    size_t bad = total == frames ? compare(got, want, frames, &m) : frames;
    if (total != frames)
        m = INFINITY;
    r->maxerr = std::max(isnan(r->maxerr) ? 0.0 : r->maxerr, m);
    if (bad == 0) {
        if (r->check == "-")
            r->check = "exact";
        return; /* else an earlier failure stays */
    }
    char b[96];
    snprintf(b, sizeof b, "DIFF %zu", bad);
    r->check = b;
    g_wrong = 1;
    fprintf(stderr,
            "bench_gpu: %s (%s): %zu of %zu frames differ from the cpu backend (%zu produced)\n",
            r->name.c_str(), when, bad, frames, total);
}

static void bench_pipeline(const options &o, const ceilings &ce, best *best_pipe)
{
    const size_t frames = o.pipe_bytes / sizeof(float);
    const size_t chunks[] = {0, (size_t)1 << 20, (size_t)1 << 22, (size_t)1 << 24};
    size_t max_chunk = (size_t)1 << 21;
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        max_chunk = std::max(max_chunk, chunks[i]);
    /* Output capacity: frames + the engine's latency bound (4 chunks). */
    const size_t cap = frames + 4 * max_chunk;
    const double in_mb = (double)frames * sizeof(float) / 1e6;
    best_pipe->pct = -1;

    fprintf(stderr, "bench_gpu: pipeline: %zu f32 frames (%s)\n", frames,
            size_name(frames * sizeof(float)).c_str());
    float *in_p = (float *)gf_host_alloc(frames * sizeof(float));
    float *out_p = (float *)gf_host_alloc(cap * sizeof(float));
    float *ref = (float *)xmalloc(cap * sizeof(float));
    if (!in_p || !out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name(frames * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    fill_random_f32(in_p, frames, 2028);

    /* The oracle: the CPU backend over the whole stream, itself checked
     * against the serial loop at both ends. */
    memset(ref, 0xFF, cap * sizeof(float));
    gf_engine *cpu = make_engine(o, GF_DEVICE_CPU, 0);
    size_t total = 0;
    const double t_cpu = run_stream(cpu, in_p, frames, ref, cap, &total);
    if (total != frames) {
        fprintf(stderr, "bench_gpu: cpu backend produced %zu of %zu frames\n", total, frames);
        exit(EXIT_WRONG);
    }
    {
        double hd[8];
        gf_engine_taps(cpu, hd);
        float h[5];
        for (int k = 0; k < 5; k++)
            h[k] = (float)hd[k];
        const long long F = (long long)frames;
        const long long P = std::min(F, 1LL << 20), Q = std::min(F, 1LL << 16);
        float *y = (float *)xmalloc((size_t)P * sizeof(float));
        double m1 = 0, m2 = 0;
        serial_fir(in_p, F, h, 5, 0, P, y);
        size_t bad = compare(ref, y, (size_t)P, &m1);
        serial_fir(in_p, F, h, 5, F - Q, F, y);
        bad += compare(ref + (F - Q), y, (size_t)Q, &m2);
        free(y);
        row r = make_row("c", "cpu backend f32 (oracle)");
        r.mb = in_mb;
        r.ms = r.ms_min = r.ms_max = t_cpu * 1e3;
        r.gbs = in_mb / r.ms;
        r.pct = 100.0 * r.gbs / ce.both_each_gbs;
        r.ceiling = "PCIe both-dir each way";
        r.speedup = 1.0;
        r.maxerr = std::max(m1, m2);
        r.check = bad ? "DIFF vs serial" : "ref (1 run)";
        if (bad) {
            g_wrong = 1;
            fprintf(stderr,
                    "bench_gpu: the cpu backend differs from the serial loop in %zu of "
                    "the %lld frames checked\n",
                    bad, P + Q);
        }
        g_rows.push_back(r);
    }
    gf_engine_destroy(cpu);

    float *in_m = NULL, *out_m = NULL; /* pageable copies, made on first use */
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
        if (chunks[ci] > frames)
            continue;
        gf_engine *e = make_engine(o, GF_DEVICE_CUDA, chunks[ci]);
        const size_t L = gf_engine_chunk_frames(e);
        if (strcmp(gf_engine_backend(e), "cuda") != 0) {
            fprintf(stderr, "bench_gpu: asked for cuda, got backend %s\n", gf_engine_backend(e));
            exit(EXIT_ERROR);
        }
        for (int pageable = 0; pageable < 2; pageable++) {
            if (pageable && !in_m) {
                in_m = (float *)xmalloc(frames * sizeof(float));
                out_m = (float *)xmalloc(cap * sizeof(float));
                memcpy(in_m, in_p, frames * sizeof(float)); /* faults the pages in too */
                memset(out_m, 0, cap * sizeof(float));
            }
            const float *in = pageable ? in_m : in_p;
            float *out = pageable ? out_m : out_p;
            char name[128];
            snprintf(name, sizeof name, "cuda %s chunk %s%s",
                     pageable ? "pageable (staged)" : "pinned (zero-copy)", pow2_name(L).c_str(),
                     chunks[ci] == 0 ? " (default)" : "");
            row r = make_row("c", name);
            r.mb = in_mb;
            /* Warm-up on a poisoned output, checked. */
            memset(out, 0xFF, cap * sizeof(float));
            run_stream(e, in, frames, out, cap, &total);
            check_stream(out, total, ref, frames, &r, "warm-up");
            std::vector<double> t;
            for (int k = 0; k < o.pipe_reps; k++)
                t.push_back(run_stream(e, in, frames, out, cap, &total) * 1e3);
            check_stream(out, total, ref, frames, &r, "last timed run");
            fill_stats(&r, summarise(t, 1));
            r.pct = 100.0 * r.gbs / ce.both_each_gbs;
            r.ceiling = "PCIe both-dir each way";
            r.speedup = t_cpu * 1e3 / r.ms;
            g_rows.push_back(r);
            if (r.pct > best_pipe->pct) {
                best_pipe->pct = r.pct;
                best_pipe->name = name;
            }
        }
        gf_engine_destroy(e);
    }
    free(in_m);
    free(out_m);
    free(ref);
    gf_host_free(in_p);
    gf_host_free(out_p);
}

/* ------------------------------------------------------------------ main */

/* ---------------------------------------------------------- h. histograms */

/*
 * The textbook histogram (the CUDA samples' idea): 256 bins privatised in
 * shared memory, a grid-stride loop of shared atomics, then one global
 * atomic per bin and block. Float arithmetic, no edge correction, no
 * min/max/rms: the floor of what a 256-bin histogram can cost.
 */
__global__ void k_hist256_textbook(const float *__restrict__ x, long long n, float lo, float hi,
                                   float scale, unsigned *bins)
{
    __shared__ unsigned s[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        s[i] = 0;
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float v = __ldg(x + i);
        if (v >= lo && v <= hi)
            atomicAdd(&s[min((int)__fmul_rn(__fsub_rn(v, lo), scale), 255)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (s[i])
            atomicAdd(&bins[i], s[i]);
}

typedef struct hist_result {
    double kernel_ratio[2]; /* (filter + hist) / filter, device, 256 and 4096 bins */
    double pipe_ratio[2];   /* the same through the engine, wall time */
} hist_result;

/* Capture one pass over nchunks chunks as a graph: chunk k runs body(k,
 * stream) on side[k % 3] (as the engine's three slots do), all forked from
 * and joined back to st. Launches inside are checked as usual. */
template <class Body>
static cudaGraphExec_t capture_pass(cudaStream_t st, cudaStream_t side[3], long long nchunks,
                                    Body body)
{
    cudaEvent_t fork, join[3];
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    for (int i = 0; i < 3; i++)
        CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    CK(cudaEventRecord(fork, st));
    for (int i = 0; i < 3; i++)
        CK(cudaStreamWaitEvent(side[i], fork, 0));
    for (long long k = 0; k < nchunks; k++)
        body(k, side[k % 3]);
    for (int i = 0; i < 3; i++) {
        CK(cudaEventRecord(join[i], side[i]));
        CK(cudaStreamWaitEvent(st, join[i], 0));
    }
    cudaGraph_t g;
    CK(cudaStreamEndCapture(st, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(fork));
    for (int i = 0; i < 3; i++)
        CK(cudaEventDestroy(join[i]));
    return ge;
}

/* A histogram plan as the engine makes it for C channels of f32. */
static gf_hist_plan hist_plan(size_t bins, size_t block, int C, size_t chunk_frames)
{
    gf_hist_config hc;
    memset(&hc, 0, sizeof hc);
    hc.bins = bins;
    hc.block_frames = block;
    hc.lo = -1.0;
    hc.hi = 1.0;
    gf_hist_plan p;
    size_t L = chunk_frames;
    gf_hist_plan_make(&hc, C, 3, &L, &p);
    if (L != chunk_frames) {
        fprintf(stderr, "bench_gpu: histogram plan shortened the chunk (%zu -> %zu)\n",
                chunk_frames, L);
        exit(EXIT_ERROR);
    }
    return p;
}

/* Take the engine's ready records: count them, and keep them (header,
 * then counts) when recs is not NULL. */
static void take_records(gf_engine *e, size_t nbins, size_t *nrec,
                         std::vector<gf_hist_record> *recs, std::vector<uint64_t> *counts)
{
    gf_hist_record r;
    while (gf_engine_hist_next(e, &r)) {
        ++*nrec;
        if (recs) {
            recs->push_back(r);
            counts->insert(counts->end(), r.bins, r.bins + nbins);
        }
    }
}

/* One stream through an engine with histograms: process (pinned, zero
 * copy), flush, pull, records taken as they come (as the CLI does).
 * Returns wall seconds. */
static double run_hist_stream(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                              size_t nbins, size_t *nrec, std::vector<gf_hist_record> *recs,
                              std::vector<uint64_t> *counts)
{
    GF_CK(e, gf_engine_reset(e));
    const double t0 = now_s();
    size_t produced = 0, got = 0;
    *nrec = 0;
    GF_CK(e, gf_engine_process(e, in, frames, out, &produced));
    take_records(e, nbins, nrec, recs, counts);
    GF_CK(e, gf_engine_flush(e));
    do {
        GF_CK(e, gf_engine_pull(e, out + produced, cap - produced, &got));
        produced += got;
    } while (got > 0 && produced < cap);
    take_records(e, nbins, nrec, recs, counts);
    const double t = now_s() - t0;
    if (produced != frames) {
        fprintf(stderr, "bench_gpu: histogram pipeline produced %zu of %zu frames\n", produced,
                frames);
        exit(EXIT_WRONG);
    }
    return t;
}

static gf_engine *make_hist_engine(const gf_config *cfg)
{
    gf_engine *e = NULL;
    char detail[256];
    const gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_engine_create (histograms) failed: %s: %s\n",
                gf_strerror(st), detail);
        exit(EXIT_ERROR);
    }
    return e;
}

static void bench_hist(const options &o, const device_info &d, cudaStream_t st, hist_result *res)
{
    const int C = 2, T = 5;
    const long long frames = o.quick ? 2500000 : 50000000;
    const long long n = frames * C;       /* samples */
    const size_t block = 48000;           /* one second at 48 kHz */
    const long long Lf = (1LL << 21) / C; /* the engine's default cuda chunk, in frames */
    const long long nchunks = (frames + Lf - 1) / Lf;
    const long long hs = (long long)(T - 1) * C;
    const size_t bins_list[2] = {256, 4096};
    const double mb_in = (double)n * sizeof(float) / 1e6;
    fprintf(stderr, "bench_gpu: histograms: %lld f32 samples (%d ch x %lld frames), %lld chunks\n",
            n, C, frames, nchunks);

    float *hx = (float *)xmalloc((size_t)n * sizeof(float));
    fill_random_f32(hx, (size_t)n, 2029);
    for (long long i = 0; i < n; i++)
        hx[i] *= 1.2f; /* about 1/6 of the samples fall outside [-1, 1] */
    float *buf = NULL, *y = NULL, *y2 = NULL;
    CK(cudaMalloc(&buf, (size_t)(hs + n + GF_DEVICE_PAD_SAMPLES) * sizeof(float)));
    CK(cudaMalloc(&y, (size_t)n * sizeof(float)));
    CK(cudaMalloc(&y2, (size_t)n * sizeof(float)));
    CK(cudaMemset(buf, 0, (size_t)(hs + n + GF_DEVICE_PAD_SAMPLES) * sizeof(float)));
    CK(cudaMemcpy(buf + hs, hx, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    float hf[T];
    for (int k = 0; k < T; k++)
        hf[k] = 1.0f / (float)T;
    CK(cudaDeviceSynchronize());
    const gf::fir_plan plan = gpufilt_plan(hf, T, C);
    /* The backend's shared-memory cap for histogram blocks (backend_cuda.cu). */
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, o.device));
    const size_t smem_cap = std::min((size_t)optin, (size_t)96 * 1024);
    CK(gf::hist_allow_smem<float>(smem_cap));
    CK(cudaDeviceSynchronize());
    cudaStream_t side[3];
    for (int i = 0; i < 3; i++)
        CK(cudaStreamCreateWithFlags(&side[i], cudaStreamNonBlocking));

    /* Chunk k: outputs [k*Lf*C, ...) from buf + k*Lf*C (its halo right before). */
    auto filter_chunk = [&](long long k, cudaStream_t s) {
        const long long f0 = k * Lf, nf = std::min(Lf, frames - f0);
        launch_gpufilt<float>(plan, s, buf + f0 * C, y + f0 * C, 0, nf * C);
    };

    /* 1. The filter alone, chunk by chunk. */
    cudaGraphExec_t g_filter = capture_pass(st, side, nchunks, filter_chunk);
    row rf = make_row("h", "filter alone, 2^21-sample chunks x3 streams");
    rf.mb = 2.0 * mb_in;
    fill_stats(&rf, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g_filter, st)); }));
    rf.pct = 100.0;
    rf.ceiling = "= this row";
    g_rows.push_back(rf);

    /* 2. Filter + histogram of the output, per chunk, at 256 and 4096 bins. */
    for (int bi = 0; bi < 2; bi++) {
        const size_t bins = bins_list[bi];
        const gf_hist_plan p = hist_plan(bins, block, C, (size_t)Lf);
        const size_t per_chunk = p.max_segs * (size_t)p.nrec * p.part_bytes;
        unsigned char *d_parts = NULL;
        CK(cudaMalloc(&d_parts, per_chunk * (size_t)nchunks));
        std::vector<gf::hist_geometry> geo((size_t)nchunks);
        for (long long k = 0; k < nchunks; k++) {
            geo[(size_t)k] = gf::hist_geometry_for(
                &p, (uint64_t)(k * Lf), (size_t)std::min(Lf, frames - k * Lf), d.sms, smem_cap);
        }
        cudaGraphExec_t g_both = capture_pass(st, side, nchunks, [&](long long k, cudaStream_t s) {
            filter_chunk(k, s);
            const gf::hist_geometry &g = geo[(size_t)k];
            unsigned char *pk = d_parts + (size_t)k * per_chunk;
            CK(cudaMemsetAsync(pk, 0, g.bytes, s));
            gf::hist_launch<float>(g, false, y + k * Lf * C, pk, s);
            CK(cudaGetLastError());
        });
        char name[128];
        snprintf(name, sizeof name, "filter + hist %zu bins (each), same chunks", bins);
        row r = make_row("h", name);
        r.mb = 2.0 * mb_in;
        fill_stats(&r, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g_both, st)); }));
        r.pct = 100.0 * rf.ms / r.ms;
        r.ceiling = "filter alone (time ratio)";
        res->kernel_ratio[bi] = r.ms / rf.ms;
        /* The last chunk's partials against the host's, from its filtered output. */
        CK(cudaStreamSynchronize(st));
        {
            const long long k = nchunks - 1, f0 = k * Lf, nf = frames - f0;
            const gf::hist_geometry &g = geo[(size_t)k];
            std::vector<float> yk((size_t)(nf * C));
            std::vector<unsigned char> want(g.bytes), got(g.bytes);
            CK(cudaMemcpy(yk.data(), y + f0 * C, yk.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(got.data(), d_parts + (size_t)k * per_chunk, g.bytes,
                          cudaMemcpyDeviceToHost));
            size_t first;
            gf_hist_segments(&p, (uint64_t)f0, (size_t)nf, &first);
            gf_hist_count_parts(&p, yk.data(), sizeof(float), (size_t)nf, first, want.data(), 0,
                                g.nseg * (size_t)p.nrec);
            r.check = want == got ? "exact" : "DIFF vs host";
            if (want != got) {
                g_wrong = 1;
                fprintf(stderr,
                        "bench_gpu: %s: partials of the last chunk differ from the host's\n", name);
            }
        }
        g_rows.push_back(r);
        CK(cudaGraphExecDestroy(g_both));

        /* 3. The histogram kernel alone, one launch over the whole stream
         *    (its input comes from DRAM, not from L2 after the filter). */
        const gf::hist_geometry gw = gf::hist_geometry_for(&p, 0, (size_t)frames, d.sms, smem_cap);
        unsigned char *d_whole = NULL;
        CK(cudaMalloc(&d_whole, gw.bytes));
        snprintf(name, sizeof name, "hist %zu bins alone, one launch (read GB/s)", bins);
        row rh = make_row("h", name);
        rh.mb = mb_in;
        fill_stats(&rh, time_op(st, o.reps, 2, [&](long long) {
            CK(cudaMemsetAsync(d_whole, 0, gw.bytes, st));
            gf::hist_launch<float>(gw, false, y, d_whole, st);
            CK(cudaGetLastError());
        }));
        g_rows.push_back(rh);
        CK(cudaFree(d_whole));
        CK(cudaFree(d_parts));
    }
    CK(cudaGraphExecDestroy(g_filter));

    /* 4. The textbook 256-bin histogram and the same-size copy, same data. */
    unsigned *d_tb = NULL;
    CK(cudaMalloc(&d_tb, 256 * sizeof(unsigned)));
    row rt = make_row("h", "textbook 256-bin shared-atomic hist (read GB/s)");
    rt.mb = mb_in;
    const unsigned tgrid = (unsigned)(8 * d.sms);
    fill_stats(&rt, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemsetAsync(d_tb, 0, 256 * sizeof(unsigned), st));
        k_hist256_textbook<<<tgrid, 256, 0, st>>>(y, n, -1.0f, 1.0f, 128.0f, d_tb);
        CK(cudaGetLastError());
    }));
    g_rows.push_back(rt);
    CK(cudaFree(d_tb));
    const double textbook_gbs = rt.gbs;
    row rc = make_row("h", "D2D copy of the same samples");
    rc.mb = 2.0 * mb_in; /* read + written, as in section a */
    fill_stats(&rc, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemcpyAsync(y2, y, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, st));
    }));
    g_rows.push_back(rc);
    /* Express the histogram rows against the textbook and the copy. */
    for (size_t i = 0; i < g_rows.size(); i++) {
        row &r = g_rows[i];
        if (r.sec == "h" && r.name.compare(0, 5, "hist ") == 0) {
            r.pct = 100.0 * r.gbs / textbook_gbs;
            r.ceiling = "textbook 256 (read GB/s)";
            r.speedup = rc.ms / r.ms; /* > 1: faster than copying the samples */
        }
    }
    CK(cudaFree(buf));
    CK(cudaFree(y));
    CK(cudaFree(y2));
    for (int i = 0; i < 3; i++)
        CK(cudaStreamDestroy(side[i]));

    /* 5. Through the engine: pinned host to host, histograms off / 256 / 4096,
     *    records taken as they come; the cuda records checked once against
     *    the cpu backend's, every field. */
    const size_t cap = (size_t)frames + 8 * (size_t)Lf;
    float *in_p = (float *)gf_host_alloc((size_t)n * sizeof(float));
    float *out_p = (float *)gf_host_alloc(cap * C * sizeof(float));
    if (!in_p || !out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name((size_t)n * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    memcpy(in_p, hx, (size_t)n * sizeof(float));
    double t_off = 0;
    for (int bi = -1; bi < 2; bi++) {
        gf_hist_config hc;
        memset(&hc, 0, sizeof hc);
        gf_config cfg = gf_config_default();
        cfg.channels = C;
        cfg.num_taps = T;
        cfg.precision = GF_PRECISION_F32;
        cfg.device = GF_DEVICE_CUDA;
        cfg.cuda_device = o.device;
        if (bi >= 0) {
            hc.bins = bins_list[bi];
            hc.block_frames = block;
            hc.lo = -1.0;
            hc.hi = 1.0;
            cfg.hist = &hc;
        }
        gf_engine *e = make_hist_engine(&cfg);
        size_t nrec = 0;
        std::vector<gf_hist_record> recs, crecs;
        std::vector<uint64_t> counts, ccounts;
        run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, NULL, NULL);
        std::vector<double> t;
        for (int k = 0; k < o.pipe_reps; k++)
            t.push_back(
                run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, NULL, NULL) *
                1e3);
        char name[128];
        if (bi < 0)
            snprintf(name, sizeof name, "engine pinned, histograms off");
        else
            snprintf(name, sizeof name, "engine pinned, hist %zu bins (each)", hc.bins);
        row r = make_row("h", name);
        r.mb = mb_in;
        fill_stats(&r, summarise(t, 1));
        if (bi < 0) {
            t_off = r.ms;
            r.pct = 100.0;
            r.ceiling = "= this row";
        } else {
            r.pct = 100.0 * t_off / r.ms;
            r.ceiling = "hist off (time ratio)";
            res->pipe_ratio[bi] = r.ms / t_off;
            /* Records: cuda against cpu, every field. */
            const size_t want_rec =
                (size_t)((frames + (long long)block - 1) / (long long)block) * C;
            run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, &recs, &counts);
            gf_config cc = cfg;
            cc.device = GF_DEVICE_CPU;
            gf_engine *ec = make_hist_engine(&cc);
            size_t cn = 0;
            run_hist_stream(ec, in_p, (size_t)frames, out_p, cap, hc.bins, &cn, &crecs, &ccounts);
            gf_engine_destroy(ec);
            bool same = recs.size() == want_rec && crecs.size() == want_rec && counts == ccounts;
            for (size_t i = 0; same && i < recs.size(); i++) {
                const gf_hist_record &a = recs[i], &b = crecs[i];
                same = a.block == b.block && a.frames == b.frames && a.channel == b.channel &&
                       a.below == b.below && a.above == b.above && a.nan == b.nan &&
                       memcmp(&a.min, &b.min, sizeof a.min) == 0 &&
                       memcmp(&a.max, &b.max, sizeof a.max) == 0 &&
                       memcmp(&a.rms, &b.rms, sizeof a.rms) == 0;
            }
            r.check = same ? "records = cpu" : "DIFF records";
            if (!same) {
                g_wrong = 1;
                fprintf(stderr,
                        "bench_gpu: %s: cuda records (%zu) differ from the cpu backend's (%zu), "
                        "%zu expected\n",
                        name, recs.size(), crecs.size(), want_rec);
            }
        }
        g_rows.push_back(r);
        gf_engine_destroy(e);
    }
    gf_host_free(in_p);
    gf_host_free(out_p);
    free(hx);
}

typedef struct target {
    const char *name;
    std::string what;
    double ratio, goal;
} target;

static void write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        exit(EXIT_ERROR);
    }
    fprintf(f, "section,case,mb_moved,ms_median,ms_min,ms_max,gb_per_s,pct_of_ceiling,ceiling,"
               "speedup,max_abs_err,check\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const row &r = g_rows[i];
        fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.sec.c_str(), csv_str(r.name).c_str(),
                csv_num(r.mb).c_str(), csv_num(r.ms).c_str(), csv_num(r.ms_min).c_str(),
                csv_num(r.ms_max).c_str(), csv_num(r.gbs).c_str(), csv_num(r.pct).c_str(),
                csv_str(r.ceiling).c_str(), csv_num(r.speedup).c_str(),
                isnan(r.maxerr)   ? ""
                : isinf(r.maxerr) ? "inf"
                                  : json_num(r.maxerr).c_str(),
                csv_str(r.check).c_str());
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: error writing %s\n", path);
        exit(EXIT_ERROR);
    }
}

static void write_json(const char *path, const options &o, const device_info &d,
                       const std::vector<target> &tg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        exit(EXIT_ERROR);
    }
    fprintf(f, "{\n  \"program\": \"bench_gpu\",\n  \"gpufilt\": %s,\n  \"quick\": %s,\n",
            json_str(gf_version()).c_str(), o.quick ? "true" : "false");
    fprintf(f,
            "  \"device\": {\"name\": %s, \"compute_capability\": \"%d.%d\", \"sms\": %d, "
            "\"sm_clock_khz\": %d, \"mem_clock_khz\": %d, \"bus_bits\": %d, \"peak_gb_s\": %s, "
            "\"l2_bytes\": %d, \"total_mem\": %zu, \"ecc\": %d, \"pci\": %s, \"driver\": %d, "
            "\"runtime\": %d},\n",
            json_str(d.name).c_str(), d.cc_major, d.cc_minor, d.sms, d.sm_clock_khz,
            d.mem_clock_khz, d.bus_bits, json_num(d.peak_gbs).c_str(), d.l2_bytes, d.total_mem,
            d.ecc, json_str(d.pci).c_str(), d.driver, d.runtime);
    fprintf(f,
            "  \"params\": {\"samples\": %lld, \"taps\": 5, \"reps\": %d, \"pipe_reps\": %d, "
            "\"pcie_bytes\": %zu, \"d2d_big_bytes\": %zu, \"pipe_bytes\": %zu},\n",
            o.n, o.reps, o.pipe_reps, o.pcie_bytes, o.d2d_big_bytes, o.pipe_bytes);
    fprintf(f, "  \"units\": {\"mb_moved\": \"1e6 bytes counted for GB/s\", \"gb_per_s\": \"1e9 "
               "bytes/s\", \"ms\": \"median per operation\"},\n");
    fprintf(f, "  \"rows\": [\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const row &r = g_rows[i];
        fprintf(f,
                "    {\"section\": %s, \"case\": %s, \"mb_moved\": %s, \"ms_median\": %s, "
                "\"ms_min\": %s, \"ms_max\": %s, \"gb_per_s\": %s, \"pct_of_ceiling\": %s, "
                "\"ceiling\": %s, \"speedup\": %s, \"max_abs_err\": %s, \"check\": %s}%s\n",
                json_str(r.sec).c_str(), json_str(r.name).c_str(), json_num(r.mb).c_str(),
                json_num(r.ms).c_str(), json_num(r.ms_min).c_str(), json_num(r.ms_max).c_str(),
                json_num(r.gbs).c_str(), json_num(r.pct).c_str(), json_str(r.ceiling).c_str(),
                json_num(r.speedup).c_str(),
                isinf(r.maxerr) ? "\"inf\"" : json_num(r.maxerr).c_str(), json_str(r.check).c_str(),
                i + 1 < g_rows.size() ? "," : "");
    }
    fprintf(f, "  ],\n  \"targets\": [\n");
    for (size_t i = 0; i < tg.size(); i++)
        fprintf(f,
                "    {\"target\": %s, \"best\": %s, \"ratio\": %s, \"goal\": %s, \"pass\": "
                "%s}%s\n",
                json_str(tg[i].name).c_str(), json_str(tg[i].what).c_str(),
                json_num(tg[i].ratio).c_str(), json_num(tg[i].goal).c_str(),
                tg[i].ratio >= tg[i].goal ? "true" : "false", i + 1 < tg.size() ? "," : "");
    fprintf(f, "  ],\n  \"results_exact\": %s\n}\n", g_wrong ? "false" : "true");
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: error writing %s\n", path);
        exit(EXIT_ERROR);
    }
}

int main(int argc, char **argv)
{
    const options o = parse_options(argc, argv);

    int ndev = 0;
    const cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        fprintf(stderr, "bench_gpu: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none present");
        return EXIT_NO_DEVICE;
    }
    if (o.device >= ndev) {
        fprintf(stderr, "bench_gpu: device %d does not exist (%d present)\n", o.device, ndev);
        return EXIT_ERROR;
    }
    CK(cudaSetDevice(o.device));
    CK(cudaFree(0)); /* create the context now, outside any timing */
    if (!gf_cuda_available()) {
        fprintf(stderr, "bench_gpu: gpufilt sees no usable CUDA device\n");
        return EXIT_NO_DEVICE;
    }
    const device_info d = query_device(o.device);

    printf("bench_gpu: gpufilt %s%s\n", gf_version(), o.quick ? "  [--quick: smoke run]" : "");
    printf("device %d: %s (sm_%d%d), %d SMs at %.0f MHz, %.1f GiB, L2 %.0f MiB, ECC %s, PCI %s\n",
           o.device, d.name.c_str(), d.cc_major, d.cc_minor, d.sms, d.sm_clock_khz / 1e3,
           (double)d.total_mem / (1 << 30), d.l2_bytes / 1048576.0, d.ecc ? "on" : "off", d.pci);
    printf("memory: %.0f MHz x %d-bit bus = %.0f GB/s peak; driver %d.%d, runtime %d.%d\n",
           d.mem_clock_khz / 1e3, d.bus_bits, d.peak_gbs, d.driver / 1000, (d.driver % 1000) / 10,
           d.runtime / 1000, (d.runtime % 1000) / 10);
    printf("method: medians of %d event-timed batches (batch ~%.0f ms, back-to-back ops over "
           "rotating buffer sets >= 4x L2), random data, outputs poisoned then checked bit for "
           "bit; pipeline: wall clock, median of %d runs\n",
           o.reps, BATCH_MS, o.pipe_reps);
    printf("units: MB = 1e6 bytes counted (copies and kernels: read + written; PCIe rows: bytes "
           "transferred; pipeline: input bytes), GB/s = 1e9 bytes/s\n\n");
    fflush(stdout);

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ceilings ce;
    best best_kernel, best_pipe;
    if (!o.hist_only) {
        fprintf(stderr, "bench_gpu: a. transfer ceilings\n");
        bench_transfers(o, d, st, &ce);
        fprintf(stderr, "bench_gpu: b. kernels\n");
        bench_seeds(o, d, st, &ce, &best_kernel);
        fprintf(stderr, "bench_gpu: c. pipeline\n");
        bench_pipeline(o, ce, &best_pipe);
    }
    fprintf(stderr, "bench_gpu: h. histograms\n");
    hist_result hr = hist_result();
    bench_hist(o, d, st, &hr);
    CK(cudaStreamDestroy(st));

    /* a-rows first (the same-size copies were measured during b). */
    std::stable_sort(g_rows.begin(), g_rows.end(),
                     [](const row &x, const row &y) { return x.sec < y.sec; });
    print_table(stdout);

    std::vector<target> tg(o.hist_only ? 0 : 2);
    if (!o.hist_only) {
        tg[0].name = "kernel >= 85% of same-size D2D copy";
        tg[0].what = best_kernel.name;
        tg[0].ratio = best_kernel.pct / 100;
        tg[0].goal = 0.85;
        tg[1].name = "pipeline >= 80% of PCIe both-directions each-way rate";
        tg[1].what = best_pipe.name;
        tg[1].ratio = best_pipe.pct / 100;
        tg[1].goal = 0.80;
        printf("\ntargets:\n");
    }
    for (size_t i = 0; i < tg.size(); i++)
        printf("  %-4s %-54s best: %s at %.3f (%.1f%%)\n",
               tg[i].ratio >= tg[i].goal ? "PASS" : "MISS", tg[i].name, tg[i].what.c_str(),
               tg[i].ratio, 100 * tg[i].ratio);
    /* Histograms: the cost they add, against the filter without them. */
    printf("\nhistograms (2 ch x %s frames f32, 5 taps, blocks of 48000 frames, each channel):\n",
           o.quick ? "2.5M" : "50M");
    const char *what[2] = {"kernel: device time of filter + hist vs filter, per engine chunk",
                           "pipeline: engine wall time, pinned host to host, hist on vs off"};
    for (int w = 0; w < 2; w++)
        for (int b = 0; b < 2; b++) {
            const double ratio = w ? hr.pipe_ratio[b] : hr.kernel_ratio[b];
            const bool pass = ratio <= 1.10;
            if (b == 0)
                printf("  %-4s histogram adds <= 10%% at 256 bins (%s): %.3fx\n",
                       pass ? "PASS" : "FAIL", what[w], ratio);
            else
                printf("  info histogram at 4096 bins (%s): %.3fx\n", what[w], ratio);
            target t;
            t.name = w ? (b ? "pipeline hist 4096 bins: hist off time / hist on time (info)"
                            : "pipeline hist 256 bins adds <= 10%: hist off time / hist on time")
                       : (b ? "kernel hist 4096 bins: filter time / filter+hist time (info)"
                            : "kernel hist 256 bins adds <= 10%: filter time / filter+hist time");
            t.what = what[w];
            t.ratio = 1.0 / ratio;
            t.goal = b ? 0.0 : 1.0 / 1.10;
            tg.push_back(t);
        }
    printf("results: %s\n", g_wrong ? "WRONG (some outputs differ; see stderr)"
                                    : "every output bit-identical to its reference");
    if (o.csv)
        write_csv(o.csv);
    if (o.json)
        write_json(o.json, o, d, tg);
    return g_wrong ? EXIT_WRONG : 0;
}
