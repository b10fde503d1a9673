/*
 * bench_gpu section b: the seeds' experiment. The teaching kernels live
 * here with the constant bank they read (device variables belong to one
 * translation unit).
 */
#include "bench_gpu.h"

/* ------------------------------------------------------ teaching kernels */

/* Kernels (1)-(4) are the textbook's, each written out as the book has it:
 * they differ in a line or two on purpose, since those lines are what the
 * experiment measures. */

#define MAX_TEACH_TAPS 64
#define TEACH_BLOCK    256
#define SEEDS_TAPS     5 /* the seeds' filter: the 5-tap mean */

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

/* Buffer sets to rotate through so one pass touches at least 4x L2. */
static int sets_for(size_t set_bytes, const device_info &d)
{
    const size_t want = 4 * (size_t)std::max(d.l2_bytes, 1 << 20);
    int n = (int)((want + set_bytes - 1) / set_bytes);
    return std::min(std::max(n, 2), 64);
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

/*
 * One precision's run: the mean filter's taps, the random input x, the
 * serial loop's output (want), a host buffer to check outputs in, the
 * device sets and the serial loop's time.
 */
template <typename T> struct seeds_run {
    T h[MAX_TEACH_TAPS];
    T *x, *want, *host;
    sample_sets<T> s;
    double serial_ms;
};

static void fill_random(double *x, size_t n, uint64_t seed)
{
    fill_random_f64(x, n, seed);
}

static void fill_random(float *x, size_t n, uint64_t seed)
{
    fill_random_f32(x, n, seed);
}

template <typename T>
static void seeds_prepare(seeds_run<T> *r, long long n, uint64_t seed, const device_info &d)
{
    for (int k = 0; k < SEEDS_TAPS; k++)
        r->h[k] = (T)1 / (T)SEEDS_TAPS; /* the mean filter, as gpufilt --taps 5 makes it */
    r->x = (T *)xmalloc((size_t)n * sizeof(T));
    r->want = (T *)xmalloc((size_t)n * sizeof(T));
    r->host = (T *)xmalloc((size_t)n * sizeof(T));
    fill_random(r->x, (size_t)n, seed);
    r->s = make_sets(r->x, n, SEEDS_TAPS, d);
}

/* The kernels' ceiling, the same-size device copy (a row of section a),
 * and their baseline, the serial loop, which also computes want. prec:
 * "f64" or "f32". */
template <typename T>
static void seeds_baselines(const options &o, cudaStream_t st, const char *prec, seeds_run<T> *r,
                            double *ceil_gbs, std::string *ceil_name)
{
    const std::string copy = std::string(prec) + " size",
                      serial = std::string("serial CPU ") + prec;
    *ceil_gbs = bench_d2d_same(o, r->s, st, copy.c_str(), ceil_name);
    r->serial_ms = bench_serial(o, r->x, r->s.n, r->h, SEEDS_TAPS, r->want, serial.c_str(),
                                *ceil_gbs, *ceil_name);
}

template <typename T> static void seeds_release(seeds_run<T> *r)
{
    free_sets(&r->s);
    free(r->x);
    free(r->want);
    free(r->host);
}

/* Time launch(buf, y) over the rotating sets, check every set's output
 * against the serial loop's and add the row; where it is exact, its % of
 * the ceiling counts for *b and *own (either may be NULL). */
template <typename T, class Launch>
static void bench_kernel(const options &o, cudaStream_t st, const seeds_run<T> &run,
                         const char *name, double ceiling, const std::string &cname, best *b,
                         best *own, Launch launch)
{
    const sample_sets<T> &s = run.s;
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
    r.speedup = run.serial_ms / r.ms;
    check_outputs(s, run.want, run.host, &r);
    g_rows.push_back(r);
    if (b)
        note_best(b, r);
    if (own)
        note_best(own, r);
}

/* The five kernels on the f64 run, against the f64 copy. Kernels 1-4 read
 * x = buf + hs with their own ghosts; gpufilt reads the chunk layout. */
static void seeds_f64_kernels(const options &o, cudaStream_t st, const seeds_run<double> &r,
                              const ceilings &ce, kernel_best *kb)
{
    const int T = SEEDS_TAPS;
    const long long n = r.s.n, hs = r.s.hs, c = r.s.c;
    double *d_h = NULL;
    CK(cudaMalloc(&d_h, T * sizeof(double)));
    CK(cudaMemcpy(d_h, r.h, T * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbol(c_mask, r.h, T * sizeof(double), 0)); /* the teaching kernels' taps */
    const gf::fir_plan plan64 = gpufilt_plan(r.h, T, 1);
    const unsigned grid = (unsigned)((n + TEACH_BLOCK - 1) / TEACH_BLOCK);
    const size_t smem3 = (TEACH_BLOCK + T - 1) * sizeof(double),
                 smem4 = TEACH_BLOCK * sizeof(double);
    const double G = ce.d2d_f64_gbs;
    const std::string &G_name = ce.d2d_f64_name;
    best *any = &kb->any;
    bench_kernel(o, st, r, "basic f64", G, G_name, any, NULL, [&](const double *buf, double *y) {
        k_basic<<<grid, TEACH_BLOCK, 0, st>>>(buf + hs, y, d_h, T, n);
        CK(cudaGetLastError());
    });
    bench_kernel(o, st, r, "constant f64", G, G_name, any, NULL, [&](const double *buf, double *y) {
        k_constant<<<grid, TEACH_BLOCK, 0, st>>>(buf + hs, y, T, n);
        CK(cudaGetLastError());
    });
    bench_kernel(o, st, r, "constant+shared f64", G, G_name, any, NULL,
                 [&](const double *buf, double *y) {
                     k_shared<<<grid, TEACH_BLOCK, smem3, st>>>(buf + hs, y, T, n);
                     CK(cudaGetLastError());
                 });
    bench_kernel(o, st, r, "tiled-caching f64", G, G_name, any, NULL,
                 [&](const double *buf, double *y) {
                     k_cached<<<grid, TEACH_BLOCK, smem4, st>>>(buf + hs, y, T, n);
                     CK(cudaGetLastError());
                 });
    bench_kernel(o, st, r, "gpufilt fir_tiled f64", G, G_name, any, &kb->gpufilt,
                 [&](const double *buf, double *y) {
                     launch_gpufilt<double>(plan64, st, buf, y, c, n + c);
                 });
    CK(cudaFree(d_h));
}

/* gpufilt in f32, against its own same-size copy. The target is defined on
 * the f64 experiment: f32 rows inform only. */
static void seeds_f32(const options &o, const device_info &d, cudaStream_t st, ceilings *ce)
{
    seeds_run<float> r;
    seeds_prepare(&r, o.n, 2027, d);
    seeds_baselines(o, st, "f32", &r, &ce->d2d_f32_gbs, &ce->d2d_f32_name);
    CK(cudaDeviceSynchronize());
    const gf::fir_plan plan32 = gpufilt_plan(r.h, SEEDS_TAPS, 1);
    const long long n = r.s.n, c = r.s.c;
    bench_kernel(
        o, st, r, "gpufilt fir_tiled f32", ce->d2d_f32_gbs, ce->d2d_f32_name, NULL, NULL,
        [&](const float *buf, float *y) { launch_gpufilt<float>(plan32, st, buf, y, c, n + c); });
    seeds_release(&r);
}

void bench_seeds(const options &o, const device_info &d, cudaStream_t st, ceilings *ce,
                 kernel_best *kb)
{
    seeds_run<double> r;
    seeds_prepare(&r, o.n, 2026, d);
    fprintf(stderr, "bench_gpu: seeds' experiment: %lld doubles, %d buffer sets\n", o.n, r.s.nsets);
    seeds_baselines(o, st, "f64", &r, &ce->d2d_f64_gbs, &ce->d2d_f64_name);
    seeds_f64_kernels(o, st, r, *ce, kb);
    seeds_release(&r);
    seeds_f32(o, d, st, ce);
}
