/*
 * The FFT method (or, with a third argument "nupc", the NUPC method: the
 * same checks, B for the partition, and its own API checks) against
 * gpufilt.h's contract, on the backend argv[2] ("cpu", or "cuda": exit 77
 * without a usable GPU):
 *   - golden cases (tests/golden/fft: exact integer convolutions, made with
 *     numpy outside the project): every output within
 *     gf_engine_error_bound, in f32 and f64, for several partition sizes;
 *   - seams: one configuration over chunk sizes, push/pull sizes, submit
 *     calls and gf_engine_process pieces gives the same bytes;
 *   - random cases against an exact sum in long double;
 *   - the relative L2 error of long f32 filters (up to 2^20 taps) stays
 *     below 1e-6;
 *   - the API: the method and partition in use, the cost model, refused
 *     configurations, reset.
 * Usage: test_fft GOLDEN_DIR DEVICE [nupc]
 */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gf_device g_dev = GF_DEVICE_CPU;
static int g_f64 = 1; /* this build's backend has the FFT method in f64 (KissFFT: not) */
static gf_method g_method = GF_METHOD_FFT; /* or GF_METHOD_NUPC */

/* Whether an FFT engine in precision p can be made at all. */
static int fft_available(gf_precision p)
{
    gf_config c = gf_config_default();
    c.device = g_dev;
    c.precision = p;
    c.method = g_method;
    gf_engine *e = NULL;
    const gf_status st = gf_engine_create(&c, &e, NULL, 0);
    gf_engine_destroy(e);
    return st == GF_OK;
}

/* ---- golden cases ---- */

typedef struct fcase {
    char name[33];
    gf_mode mode;
    int C, per_channel;
    size_t T, N, outputs;
    double *h;     /* F x T */
    double *x;     /* N x C */
    double *y;     /* outputs x C, exact */
    double *max_x; /* C */
} fcase;

static void fcase_free(fcase *f)
{
    free(f->h);
    free(f->x);
    free(f->y);
    free(f->max_x);
}

static int read_exact(FILE *fp, void *p, size_t bytes)
{
    return fread(p, 1, bytes, fp) == bytes ? 0 : -1;
}

static int fcase_load(const char *path, fcase *f)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    unsigned char head[64];
    if (!fp || read_exact(fp, head, sizeof head) != 0 || memcmp(head, "GFFFT001", 8) != 0) {
        if (fp)
            fclose(fp);
        return TU_FAIL("%s: not a golden FFT case", path);
    }
    uint32_t v[6];
    memcpy(v, head + 8, sizeof v);
    f->mode = (gf_mode)v[0];
    f->C = (int)v[1];
    f->T = v[2];
    f->N = v[3];
    f->per_channel = (int)v[4];
    f->outputs = v[5];
    memcpy(f->name, head + 32, 32);
    const size_t F = f->per_channel ? (size_t)f->C : 1, C = (size_t)f->C;
    int32_t *a = malloc(F * f->T * 4), *b = malloc(f->N * C * 4);
    int64_t *c = malloc(f->outputs * C * 8);
    f->h = malloc(F * f->T * sizeof(double));
    f->x = malloc(f->N * C * sizeof(double));
    f->y = malloc(f->outputs * C * sizeof(double));
    f->max_x = calloc(C, sizeof(double));
    int bad = !a || !b || !c || !f->h || !f->x || !f->y || !f->max_x ||
              read_exact(fp, a, F * f->T * 4) || read_exact(fp, b, f->N * C * 4) ||
              read_exact(fp, c, f->outputs * C * 8);
    fclose(fp);
    if (!bad) {
        for (size_t i = 0; i < F * f->T; i++)
            f->h[i] = ldexp(a[i], -10);
        for (size_t i = 0; i < f->N * C; i++) {
            f->x[i] = ldexp(b[i], -15);
            if (fabs(f->x[i]) > f->max_x[i % C])
                f->max_x[i % C] = fabs(f->x[i]);
        }
        for (size_t i = 0; i < f->outputs * C; i++)
            f->y[i] = ldexp((double)c[i], -25);
    }
    free(a);
    free(b);
    free(c);
    return bad ? TU_FAIL("%s: short or unreadable", path) : 0;
}

static gf_config fcase_config(const fcase *f, gf_precision p, size_t partition)
{
    gf_config c = gf_config_default();
    c.channels = f->C;
    c.num_taps = f->T;
    c.taps = f->h;
    c.taps_per_channel = f->per_channel;
    c.mode = f->mode;
    c.precision = p;
    c.device = g_dev;
    c.method = g_method;
    c.partition = partition;
    return c;
}

/* The input in the precision (exact: the values are 16-bit). */
static void *to_precision(const double *x, size_t n, gf_precision p)
{
    void *v = malloc(n * tu_sample_size(p));
    for (size_t i = 0; v && i < n; i++) {
        if (p == GF_PRECISION_F32)
            ((float *)v)[i] = (float)x[i];
        else
            ((double *)v)[i] = x[i];
    }
    return v;
}

static double sample(const void *v, size_t i, gf_precision p)
{
    return p == GF_PRECISION_F32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* Run cfg over in (N frames) with push/pull patterns; returns the output
 * (cap frames) or NULL after a failure; *got receives its length. */
static void *run_engine(const gf_config *cfg, const void *in, size_t N, size_t cap, tu_pattern push,
                        tu_pattern pull, size_t *got, gf_engine **keep)
{
    gf_engine *e = NULL;
    char detail[256];
    gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        TU_FAIL("create (T %zu, P %zu): %s: %s", cfg->num_taps, cfg->partition, gf_strerror(st),
                detail);
        return NULL;
    }
    const size_t fb = (size_t)cfg->channels * tu_sample_size(cfg->precision);
    void *out = malloc(cap * fb);
    if (!out || tu_run_stream(e, in, N, out, cap, fb, push, pull, got) != 0) {
        free(out);
        gf_engine_destroy(e);
        return NULL;
    }
    if (keep)
        *keep = e;
    else
        gf_engine_destroy(e);
    return out;
}

/* One golden case in precision p with partition P: length, and every output
 * within the bound. *worst receives the largest error / bound. */
static int golden_run(const fcase *f, gf_precision p, size_t P, double *worst)
{
    const gf_config cfg = fcase_config(f, p, P);
    void *in = to_precision(f->x, f->N * (size_t)f->C, p);
    size_t got = 0;
    gf_engine *e = NULL;
    void *out = run_engine(&cfg, in, f->N, f->outputs + 1, TU_ALL, TU_ALL, &got, &e);
    int bad = !out;
    if (out && got != f->outputs)
        bad = TU_FAIL("%s: %zu outputs, expected %zu", f->name, got, f->outputs);
    for (int c = 0; out && !bad && c < f->C; c++) {
        const double bound = gf_engine_error_bound(e, c, f->max_x[c]);
        for (size_t i = 0; i < f->outputs; i++) {
            const double err = fabs(sample(out, i * (size_t)f->C + (size_t)c, p) -
                                    f->y[i * (size_t)f->C + (size_t)c]);
            if (err > bound) {
                bad = TU_FAIL("%s %s P %zu: output %zu of channel %d is off by %g, bound %g",
                              f->name, p == GF_PRECISION_F32 ? "f32" : "f64",
                              gf_engine_partition(e), i, c, err, bound);
                break;
            }
            if (bound > 0 && err / bound > *worst)
                *worst = err / bound;
        }
    }
    gf_engine_destroy(e);
    free(out);
    free(in);
    return bad;
}

static int test_golden(const char *dir)
{
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/fft/MANIFEST.txt", dir);
    FILE *m = fopen(path, "r");
    if (!m)
        return TU_FAIL("cannot open %s", path);
    int bad = 0, cases = 0, runs = 0;
    double worst = 0;
    while (fgets(line, sizeof line, m)) {
        char file[128];
        if (line[0] == '#' || sscanf(line, "%127s", file) != 1)
            continue;
        snprintf(path, sizeof path, "%s/fft/%s", dir, file);
        fcase f;
        if (fcase_load(path, &f) != 0) {
            bad++;
            fcase_free(&f);
            continue;
        }
        cases++;
        const size_t parts[] = {16, 64, 1024, 0};
        for (int pi = 0; pi < 4; pi++)
            for (int prec = 0; prec < 1 + g_f64; prec++) {
                bad +=
                    golden_run(&f, prec ? GF_PRECISION_F64 : GF_PRECISION_F32, parts[pi], &worst);
                runs++;
            }
        fcase_free(&f);
    }
    fclose(m);
    bad += TU_CHECK(cases == 10, "%d golden FFT cases, expected 10", cases);
    printf("golden: %d cases, %d runs, largest error %.3g of the bound\n", cases, runs, worst);
    return bad;
}

/* ---- seams ---- */

/* Push in random pieces, submitting and waiting after some of them and
 * pulling in random sizes, then flush and drain. */
static int run_submits(gf_engine *e, const void *in, size_t N, void *out, size_t cap, size_t fb,
                       uint64_t seed, size_t *got)
{
    tu_rng r = {seed};
    size_t off = 0;
    *got = 0;
    for (int flushed = 0;;) {
        if (off < N) {
            size_t n = 1 + tu_rng_below(&r, 3000), used = 0;
            n = n < N - off ? n : N - off;
            if (gf_engine_push(e, (const unsigned char *)in + off * fb, n, &used) != GF_OK)
                return TU_FAIL("push");
            off += used;
            if (tu_rng_below(&r, 3) == 0 &&
                (gf_engine_submit(e) != GF_OK || gf_engine_wait(e) != GF_OK))
                return TU_FAIL("submit/wait");
        } else if (!flushed) {
            if (gf_engine_flush(e) != GF_OK)
                return TU_FAIL("flush");
            flushed = 1;
        }
        size_t g = 0, want = 1 + tu_rng_below(&r, 5000);
        want = want < cap - *got ? want : cap - *got;
        if (gf_engine_pull(e, (unsigned char *)out + *got * fb, want, &g) != GF_OK)
            return TU_FAIL("pull");
        *got += g;
        if (flushed && g == 0)
            return 0;
    }
}

/* One configuration, many ways of feeding it: identical bytes. */
static int seams_case(size_t T, size_t P, int C, int per_channel, gf_mode mode, gf_precision p,
                      size_t N)
{
    double *h = malloc((size_t)C * T * sizeof(double));
    tu_fill_taps(h, (size_t)C * T, 31 + T);
    const size_t ss = tu_sample_size(p), fb = (size_t)C * ss, cap = N + T + 1;
    void *in = malloc(N * fb);
    tu_fill_signal(in, N * (size_t)C, ss, 77 + T);
    gf_config cfg = gf_config_default();
    cfg.channels = C;
    cfg.num_taps = T;
    cfg.taps = h;
    cfg.taps_per_channel = per_channel;
    cfg.mode = mode;
    cfg.precision = p;
    cfg.device = g_dev;
    cfg.method = g_method;
    cfg.partition = P;
    size_t n0 = 0;
    void *want = run_engine(&cfg, in, N, cap, TU_ALL, TU_ALL, &n0, NULL);
    int bad = !want;
    char label[160];
    const size_t chunks[] = {0, P, 3 * P, 1000};
    for (int ci = 0; want && ci < 4; ci++) {
        cfg.chunk_frames = chunks[ci];
        for (int v = 0; v < 4; v++) {
            gf_engine *e = NULL;
            if (gf_engine_create(&cfg, &e, NULL, 0) != GF_OK) {
                bad += TU_FAIL("create for seams");
                break;
            }
            const size_t room = cap + gf_engine_max_pending(e); /* process wants that much */
            void *out = malloc(room * fb);
            size_t got = 0;
            int rc;
            if (v == 0)
                rc = tu_run_stream(e, in, N, out, room, fb, TU_RANDOM(777, 5 + ci),
                                   TU_RANDOM(555, 9), &got);
            else if (v == 1)
                rc = tu_run_process(e, in, N, out, room, fb, TU_RANDOM(2 * P + 5, 3), &got);
            else if (v == 2)
                rc = run_submits(e, in, N, out, room, fb, 11 + ci, &got);
            else
                rc = tu_run_stream(e, in, N, out, room, fb, TU_FIXED(1), TU_FIXED(7), &got);
            snprintf(label, sizeof label, "seams T %zu P %zu C %d mode %d %s chunk %zu way %d", T,
                     P, C, (int)mode, p == GF_PRECISION_F32 ? "f32" : "f64",
                     gf_engine_chunk_frames(e), v);
            if (rc != 0)
                bad++;
            else if (got != n0)
                bad += TU_FAIL("%s: %zu outputs, expected %zu", label, got, n0);
            else
                bad += tu_compare(label, want, out, got * (size_t)C, ss, (size_t)C);
            free(out);
            gf_engine_destroy(e);
        }
    }
    free(want);
    free(in);
    free(h);
    return bad;
}

static int test_seams(void)
{
    int bad = 0;
    if (g_method == GF_METHOD_NUPC) { /* many levels, partial blocks of each at every seam */
        bad += seams_case(5000, 16, 2, 1, GF_MODE_CAUSAL, GF_PRECISION_F32, 12000);
        /* Levels up to 2048 frames: at chunks of 16 and 48 frames those of
         * 1024 and 2048 run on threads of their own (cpu_nupc.c), on the GPU
         * those from 128 (chunks of 16) or 256 (48) on streams of their own
         * (backend_cuda_nupc.cu), against the default chunk's in line. */
        bad += seams_case(20000, 16, 2, 1, GF_MODE_SAME, GF_PRECISION_F32, 40000);
        bad += seams_case(2000, 32, 1, 0, GF_MODE_SAME, g_f64 ? GF_PRECISION_F64 : GF_PRECISION_F32,
                          6001);
    }
    bad += seams_case(100, 32, 1, 0, GF_MODE_SAME, GF_PRECISION_F32, 5000);
    bad += seams_case(1000, 64, 2, 1, GF_MODE_CAUSAL, GF_PRECISION_F32, 7001);
    bad += seams_case(3000, 1024, 3, 1, GF_MODE_FULL, g_f64 ? GF_PRECISION_F64 : GF_PRECISION_F32,
                      9000);
    bad += seams_case(1, 16, 1, 0, GF_MODE_SAME, g_f64 ? GF_PRECISION_F64 : GF_PRECISION_F32, 999);
    /* More than one run of MAC_KS = 128 partitions (fft_kernels.cuh): chunks
     * of 1 and 3 blocks split the runs over threads, one block a thread
     * (and, on the GPU, transformed by plans of their own few windows), the
     * others not; one filter for 3 channels, then one each. */
    bad += seams_case(2500, 16, 3, 0, GF_MODE_CAUSAL, GF_PRECISION_F32, 12000);
    bad +=
        seams_case(2500, 16, 2, 1, GF_MODE_SAME, g_f64 ? GF_PRECISION_F64 : GF_PRECISION_F32, 9000);
    return bad;
}

/* ---- random cases against an exact sum ---- */

/* The exact output i of channel c (long double, x outside [0, N) is 0). */
static long double exact(const double *h, const double *x, size_t T, size_t N, int C, int c, long i)
{
    long double acc = 0;
    for (size_t k = 0; k < T; k++) {
        const long j = i - (long)k;
        if (j >= 0 && j < (long)N)
            acc += (long double)h[k] * (long double)x[(size_t)j * (size_t)C + (size_t)c];
    }
    return acc;
}

/* Random taps and input (made exact in the precision), sampled outputs
 * against the exact sum: within the bound, and the relative L2 error over
 * them. */
static int random_case(size_t T, size_t P, size_t N, gf_precision p, size_t samples, double *rel_l2)
{
    double *h = malloc(T * sizeof(double)), *x = malloc(N * sizeof(double));
    tu_fill_taps(h, T, 3 + T);
    for (size_t k = 0; k < T; k++) /* a decaying response, as a room's */
        h[k] *= exp(-4.0 * (double)k / (double)T);
    tu_fill_signal(x, N, sizeof(double), 5 + T);
    for (size_t i = 0; i < N; i++)
        x[i] = p == GF_PRECISION_F32 ? (double)(float)x[i] : x[i];
    gf_config cfg = gf_config_default();
    cfg.num_taps = T;
    cfg.taps = h;
    cfg.mode = GF_MODE_CAUSAL;
    cfg.precision = p;
    cfg.device = g_dev;
    cfg.method = g_method;
    cfg.partition = P;
    void *in = to_precision(x, N, p);
    size_t got = 0;
    gf_engine *e = NULL;
    void *out = run_engine(&cfg, in, N, N + 1, TU_ALL, TU_ALL, &got, &e);
    int bad = !out;
    double *hr = malloc(T * sizeof(double));
    if (out) {
        gf_engine_taps(e, hr, T);
        double max_x = 0;
        for (size_t i = 0; i < N; i++)
            max_x = fabs(x[i]) > max_x ? fabs(x[i]) : max_x;
        const double bound = gf_engine_error_bound(e, 0, max_x);
        long double se = 0, sy = 0;
        tu_rng r = {T};
        for (size_t s = 0; s < samples && !bad; s++) {
            const long i =
                s < 10 ? (long)s : (long)tu_rng_below(&r, N); /* the start, then anywhere */
            const long double y = exact(hr, x, T, N, 1, 0, i);
            const double err = fabs(sample(out, (size_t)i, p) - (double)y);
            if (err > bound)
                bad = TU_FAIL("random T %zu P %zu: output %ld off by %g, bound %g", T,
                              gf_engine_partition(e), i, err, bound);
            se += (long double)err * err;
            sy += y * y;
        }
        *rel_l2 = sy > 0 ? (double)sqrtl(se / sy) : 0;
    }
    gf_engine_destroy(e);
    free(hr);
    free(out);
    free(in);
    free(x);
    free(h);
    return bad;
}

static int test_random(void)
{
    int bad = 0;
    double l2 = 0;
    if (g_f64)
        bad += random_case(777, 64, 20000, GF_PRECISION_F64, 3000, &l2);
    bad += random_case(777, 256, 20000, GF_PRECISION_F32, 3000, &l2);
    if (g_method == GF_METHOD_NUPC) { /* 2^16+ taps over 8 levels of 64 .. 8192 */
        if (g_f64)
            bad += random_case(70000, 64, 90000, GF_PRECISION_F64, 400, &l2);
        bad += random_case(70000, 64, 90000, GF_PRECISION_F32, 400, &l2);
        bad += random_case(777, 16, 5000, GF_PRECISION_F32, 2000, &l2);
    }
    /* The accuracy target: relative L2 error of f32 below 1e-6 for
     * every length up to 2^20 taps (auto partition). */
    const size_t Ts[] = {4096, 65536, (size_t)1 << 20};
    /* NUPC: not 2^20 (10 levels over a million frames: seconds under the
     * sanitizers); its 70,000-tap cases above span 8 levels. */
    for (int i = 0; i < (g_method == GF_METHOD_NUPC ? 2 : 3); i++) {
        bad += random_case(Ts[i], 0, Ts[i] + 50000, GF_PRECISION_F32, 300, &l2);
        printf("f32, %zu taps: relative L2 error %.3g over 300 outputs\n", Ts[i], l2);
        bad +=
            TU_CHECK(l2 <= 1e-6, "f32 relative L2 error %.3g at %zu taps exceeds 1e-6", l2, Ts[i]);
    }
    return bad;
}

/* ---- the API ---- */

static int expect_status(const char *what, const gf_config *c, gf_status want, const char *word)
{
    gf_engine *e = NULL;
    char detail[256] = "";
    const gf_status st = gf_engine_create(c, &e, detail, sizeof detail);
    int bad = TU_CHECK(st == want, "%s: status %s, expected %s (%s)", what, gf_strerror(st),
                       gf_strerror(want), detail);
    bad +=
        TU_CHECK(!word || strstr(detail, word), "%s: detail '%s' lacks '%s'", what, detail, word);
    gf_engine_destroy(e);
    return bad;
}

/* The cost model's choices (machine-independent). */
static int cost_model(void)
{
    int bad = 0;
    bad += TU_CHECK(gf_method_choose(5, 1, GF_PRECISION_F32, GF_DEVICE_CPU, 0) == GF_METHOD_DIRECT,
                    "auto: 5 taps on cpu should be direct");
    bad += TU_CHECK(gf_method_choose(4095, 2, GF_PRECISION_F32, GF_DEVICE_CPU, 0) == GF_METHOD_FFT,
                    "auto: 4095 taps on cpu should be FFT");
    bad +=
        TU_CHECK(gf_method_choose(255, 1, GF_PRECISION_F32, GF_DEVICE_CUDA, 0) == GF_METHOD_DIRECT,
                 "auto: 255 taps on cuda should be direct");
    bad +=
        TU_CHECK(gf_method_choose(65536, 1, GF_PRECISION_F32, GF_DEVICE_REF, 0) == GF_METHOD_DIRECT,
                 "auto: ref has only direct");
    bad += TU_CHECK(gf_method_choose(8193, 1, GF_PRECISION_F64, GF_DEVICE_CUDA, 0) == GF_METHOD_FFT,
                    "auto: beyond 8192 taps is FFT");
    bad += TU_CHECK(gf_partition_choose(65536, GF_DEVICE_CPU) == 8192 &&
                        gf_partition_choose((size_t)1 << 20, GF_DEVICE_CPU) == 131072 &&
                        gf_partition_choose(65536, GF_DEVICE_CUDA) == 8192 &&
                        gf_partition_choose(10, GF_DEVICE_CPU) == 256 &&
                        gf_partition_choose((size_t)1 << 21, GF_DEVICE_CUDA) == ((size_t)1 << 18) &&
                        gf_partition_choose((size_t)1 << 22, GF_DEVICE_CUDA) == ((size_t)1 << 19) &&
                        gf_partition_choose(GF_MAX_FFT_TAPS, GF_DEVICE_CUDA) == ((size_t)1 << 19) &&
                        gf_partition_choose(GF_MAX_FFT_TAPS, GF_DEVICE_CPU) == ((size_t)1 << 18),
                    "default partitions");
    return bad;
}

/* The default chunk: 16 partitions over all channels, at most 2^22
 * samples' worth of them, at least 4 partitions. */
static int default_chunks(void)
{
    int bad = 0;
    const struct {
        size_t partition;
        int channels;
        size_t chunk;
    } dc[] = {{(size_t)1 << 17, 1, (size_t)1 << 21},
              {(size_t)1 << 18, 1, (size_t)1 << 22},
              {(size_t)1 << 19, 1, (size_t)1 << 22},
              {(size_t)1 << 19, 2, (size_t)1 << 21},
              {(size_t)1 << 19, 16, (size_t)1 << 21}};
    for (size_t i = 0; i < sizeof dc / sizeof dc[0]; i++) {
        gf_config d = gf_config_default();
        d.device = g_dev;
        d.method = GF_METHOD_FFT;
        d.num_taps = (size_t)1 << 20; /* the mean filter */
        d.partition = dc[i].partition;
        d.channels = dc[i].channels;
        gf_engine *e = NULL;
        if (gf_engine_create(&d, &e, NULL, 0) != GF_OK) {
            bad += TU_FAIL("create: partition %zu, %d channels", dc[i].partition, dc[i].channels);
            continue;
        }
        bad += TU_CHECK(gf_engine_chunk_frames(e) == dc[i].chunk,
                        "partition %zu, %d channels: chunk %zu, expected %zu", dc[i].partition,
                        dc[i].channels, gf_engine_chunk_frames(e), dc[i].chunk);
        gf_engine_destroy(e);
    }
    return bad;
}

static int test_api(void)
{
    int bad = 0;
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_CPU;
    c.num_taps = 100;
    c.method = GF_METHOD_FFT;
    c.partition = 100;
    bad += expect_status("partition 100", &c, GF_ERR_INVALID_ARGUMENT, "power of two");
    c.partition = 8;
    bad += expect_status("partition 8", &c, GF_ERR_INVALID_ARGUMENT, "16..1048576");
    c.partition = GF_MAX_PARTITION * 2;
    bad += expect_status("partition 2^21", &c, GF_ERR_INVALID_ARGUMENT, "partition");
    c.partition = 0;
    c.num_taps = GF_MAX_FFT_TAPS + 1;
    bad += expect_status("taps 2^22 + 1", &c, GF_ERR_INVALID_ARGUMENT, "4194304");
    c.num_taps = GF_MAX_TAPS + 1;
    c.method = GF_METHOD_DIRECT;
    bad += expect_status("direct 8193 taps", &c, GF_ERR_INVALID_ARGUMENT, "direct method");
    c.method = GF_METHOD_FFT;
    c.device = GF_DEVICE_REF;
    bad += expect_status("ref with fft", &c, GF_ERR_UNSUPPORTED, "no FFT method");
    c.device = GF_DEVICE_CPU;
    c.taps_per_channel = 1;
    bad += expect_status("per-channel without taps", &c, GF_ERR_INVALID_ARGUMENT, "taps");

    bad += cost_model();

    double h[300];
    tu_fill_taps(h, 300, 1);
    c = gf_config_default();
    c.device = g_dev;
    c.num_taps = 300;
    c.taps = h;
    c.method = GF_METHOD_FFT;
    c.partition = 128;
    c.chunk_frames = 1000; /* rounded up to whole partitions */
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return bad + TU_FAIL("create FFT engine");
    bad += TU_CHECK(gf_engine_method(e) == GF_METHOD_FFT && gf_engine_partition(e) == 128 &&
                        gf_engine_chunk_frames(e) == 1024,
                    "method %d, partition %zu, chunk %zu", (int)gf_engine_method(e),
                    gf_engine_partition(e), gf_engine_chunk_frames(e));
    bad += TU_CHECK(gf_engine_error_bound(e, 0, 1.0) > 0, "an FFT engine has a bound");
    /* reset: the same stream gives the same bytes again */
    float in[5000], out1[5000 + 2048], out2[5000 + 2048];
    tu_fill_signal(in, 5000, sizeof(float), 3);
    size_t g1 = 0, g2 = 0;
    bad += tu_run_stream(e, in, 5000, out1, 5000 + 2048, sizeof(float), TU_ALL, TU_ALL, &g1);
    gf_engine_reset(e);
    bad += tu_run_stream(e, in, 5000, out2, 5000 + 2048, sizeof(float), TU_FIXED(333), TU_ALL, &g2);
    bad += TU_CHECK(g1 == 5000 && g2 == 5000, "lengths %zu, %zu", g1, g2);
    bad += tu_compare("after reset", out1, out2, 5000, sizeof(float), 1);
    gf_engine_destroy(e);
    bad += default_chunks();
    c.method = GF_METHOD_DIRECT;
    if (gf_engine_create(&c, &e, NULL, 0) == GF_OK) {
        bad += TU_CHECK(gf_engine_error_bound(e, 0, 1.0) == 0 && gf_engine_partition(e) == 0,
                        "direct: no bound, no partition");
        gf_engine_destroy(e);
    }
    return bad;
}

/* ---- the NUPC method's API: levels, defaults, bound, latency ---- */

static int levels_are(size_t T, size_t B, size_t M, const size_t (*want)[4], size_t n)
{
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    const size_t got = gf_nupc_levels(T, B, M, lv);
    int bad =
        TU_CHECK(got == n, "levels(%zu, %zu, %zu): %zu levels, expected %zu", T, B, M, got, n);
    for (size_t l = 0; !bad && l < n; l++)
        bad += TU_CHECK(lv[l].size == want[l][0] && lv[l].offset == want[l][1] &&
                            lv[l].partitions == want[l][2] && lv[l].taps == want[l][3],
                        "levels(%zu, %zu, %zu) level %zu: {%zu, %zu, %zu, %zu}, expected {%zu, "
                        "%zu, %zu, %zu}",
                        T, B, M, l, lv[l].size, lv[l].offset, lv[l].partitions, lv[l].taps,
                        want[l][0], want[l][1], want[l][2], want[l][3]);
    return bad;
}

/* Outputs available after pushing `frames` causal frames and waiting. */
static size_t ready_after(gf_method m, size_t T, size_t B, size_t frames)
{
    gf_config c = gf_config_default();
    c.device = g_dev;
    c.num_taps = T;
    c.mode = GF_MODE_CAUSAL;
    c.method = m;
    c.partition = B;
    gf_engine *e = NULL;
    float *in = calloc(frames, sizeof(float)), *out = calloc(frames, sizeof(float));
    size_t used = 0, got = 0;
    if (!in || !out || gf_engine_create(&c, &e, NULL, 0) != GF_OK ||
        gf_engine_push(e, in, frames, &used) != GF_OK || gf_engine_submit(e) != GF_OK ||
        gf_engine_wait(e) != GF_OK || gf_engine_pull(e, out, frames, &got) != GF_OK)
        got = (size_t)-1;
    gf_engine_destroy(e);
    free(in);
    free(out);
    return got;
}

/* The NUPC level scheme: by hand, its properties over random shapes, the
 * ranges gf_nupc_levels refuses, the default partitions and the cost. */
static int nupc_levels_checks(void)
{
    int bad = 0;
    /* The scheme: sizes double, 2 partitions below M, the rest at M. */
    const size_t a[][4] = {
        {16, 0, 2, 32}, {32, 32, 2, 64}, {64, 96, 2, 128}, {128, 224, 2, 256}, {256, 480, 3, 520}};
    bad += levels_are(1000, 16, 256, a, 5);
    const size_t b[][4] = {{256, 0, 2, 300}};
    bad += levels_are(300, 256, 256, b, 1);
    const size_t c1[][4] = {{64, 0, 1, 64}};
    bad += levels_are(64, 64, 1024, c1, 1);
    const size_t d[][4] = {{16, 0, 2, 32}, {32, 32, 1, 1}};
    bad += levels_are(33, 16, 1 << 20, d, 2);
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    /* What the deadlines rest on, over many shapes: levels contiguous from
     * tap 0 to T, sizes doubling from B to M, 2 partitions below M, and
     * o_l >= S_l for l >= 1 (a level's block is due after it completes). */
    tu_rng r = {2026};
    for (int i = 0; i < 2000 && !bad; i++) {
        const size_t B = (size_t)16 << tu_rng_below(&r, 8), M = B << tu_rng_below(&r, 10);
        const size_t T = 1 + tu_rng_below(&r, i < 1000 ? 4 * M : GF_MAX_FFT_TAPS);
        const size_t L = gf_nupc_levels(T, B, M, lv);
        size_t end = 0;
        for (size_t l = 0; l < L && !bad; l++) {
            const size_t S = lv[l].size;
            bad += TU_CHECK(lv[l].offset == end && lv[l].taps >= 1 &&
                                lv[l].taps <= lv[l].partitions * S &&
                                lv[l].taps > (lv[l].partitions - 1) * S &&
                                S == (l ? 2 * lv[l - 1].size < M ? 2 * lv[l - 1].size : M : B) &&
                                (S == M || lv[l].partitions <= 2) &&
                                (l + 1 == L || lv[l].partitions == 2 || S == M) &&
                                (l == 0 || lv[l].offset >= S),
                            "levels(%zu, %zu, %zu): level %zu {%zu, %zu, %zu, %zu}", T, B, M, l, S,
                            lv[l].offset, lv[l].partitions, lv[l].taps);
            end = lv[l].offset + lv[l].taps;
        }
        bad += TU_CHECK(L >= 1 && end == T, "levels(%zu, %zu, %zu): %zu levels end at %zu", T, B, M,
                        L, end);
    }
    bad += TU_CHECK(gf_nupc_levels(100, 32, 16, lv) == 0 && gf_nupc_levels(100, 24, 64, lv) == 0 &&
                        gf_nupc_levels(0, 16, 16, lv) == 0 && gf_nupc_levels(100, 8, 16, lv) == 0 &&
                        gf_nupc_levels(GF_MAX_FFT_TAPS, 16, GF_MAX_PARTITION, lv) == 17,
                    "gf_nupc_levels' ranges");
    bad += TU_CHECK(gf_nupc_partition_choose((size_t)1 << 20, GF_DEVICE_CPU) == 256 &&
                        gf_nupc_max_partition(65536, 256, GF_DEVICE_CPU) == 8192 &&
                        gf_nupc_max_partition((size_t)1 << 20, 256, GF_DEVICE_CPU) == 131072 &&
                        gf_nupc_max_partition(GF_MAX_FFT_TAPS, 256, GF_DEVICE_CUDA) ==
                            ((size_t)1 << 18) &&
                        gf_nupc_max_partition(100, 1024, GF_DEVICE_CPU) == 1024,
                    "NUPC's default partitions");
    /* Never the cost model's choice, and its cost is the levels' FFT costs. */
    bad += TU_CHECK(gf_method_choose((size_t)1 << 20, 1, GF_PRECISION_F32, GF_DEVICE_CPU, 256) ==
                        GF_METHOD_FFT,
                    "auto never picks NUPC");
    bad += TU_CHECK(gf_method_cost(300, GF_DEVICE_CPU, GF_METHOD_NUPC, 256) ==
                        gf_method_cost(300, GF_DEVICE_CPU, GF_METHOD_FFT, 256),
                    "one level costs what FFT costs");
    return bad;
}

/* A NUPC engine: its bound worked out by hand, the method, partition and
 * chunk in use, reset, and the devices that run it. */
static int nupc_engine_checks(void)
{
    int bad = 0;
    /* The bound, by hand: h = 1, f64, |x| <= 1; levels as `a` in nupc_levels_checks
     * (M = gf_partition_choose(1000) = 256): sum (2 log2(2S) + K + 4) taps_l
     * = 16*32 + 18*64 + 20*128 + 22*256 + 25*520 = 22856, plus (5 - 1) * 1000. */
    double *h = malloc(1000 * sizeof(double));
    for (size_t k = 0; k < 1000; k++)
        h[k] = 1;
    gf_config c = gf_config_default();
    c.device = g_dev;
    c.num_taps = 1000;
    c.taps = h;
    c.method = GF_METHOD_NUPC;
    c.partition = 16;
    c.precision = g_f64 ? GF_PRECISION_F64 : GF_PRECISION_F32;
    gf_engine *e = NULL;
    char detail[256] = "";
    if (gf_engine_create(&c, &e, detail, sizeof detail) != GF_OK)
        bad += TU_FAIL("create NUPC engine: %s", detail);
    else {
        const double eps = g_f64 ? 0x1p-53 : 0x1p-24;
        bad += TU_CHECK(gf_engine_error_bound(e, 0, 1.0) == 26856 * eps,
                        "NUPC bound %.17g, expected %.17g", gf_engine_error_bound(e, 0, 1.0),
                        26856 * eps);
        bad +=
            TU_CHECK(gf_engine_method(e) == GF_METHOD_NUPC && gf_engine_partition(e) == 16 &&
                         gf_engine_chunk_frames(e) == (g_dev == GF_DEVICE_CPU ? 262144 : 2097152) &&
                         gf_engine_device(e) == g_dev,
                     "method %d, partition %zu, chunk %zu", (int)gf_engine_method(e),
                     gf_engine_partition(e), gf_engine_chunk_frames(e));
        gf_config got;
        gf_engine_get_config(e, &got);
        bad += TU_CHECK(got.method == GF_METHOD_NUPC && got.partition == 16, "config in use");
        /* reset: every level's history and ring start again (small
         * chunks, so that the stream wraps every level's ring) */
        gf_engine_destroy(e);
        c.chunk_frames = 64;
        c.mode = GF_MODE_CAUSAL; /* no skipped outputs: level l's first o_l are read */
        e = NULL;
        if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
            return bad + TU_FAIL("create NUPC engine, chunk 64");
        c.chunk_frames = 0;
        c.mode = GF_MODE_SAME;
        const size_t N = 3000, ss = tu_sample_size(c.precision);
        const size_t cap = N + gf_engine_max_pending(e);
        void *in = malloc(N * ss), *o1 = malloc(cap * ss), *o2 = malloc(cap * ss);
        tu_fill_signal(in, N, ss, 9);
        size_t g1 = 0, g2 = 0;
        bad += tu_run_stream(e, in, N, o1, cap, ss, TU_ALL, TU_ALL, &g1);
        gf_engine_reset(e);
        bad += tu_run_stream(e, in, N, o2, cap, ss, TU_FIXED(77), TU_ALL, &g2);
        bad += TU_CHECK(g1 == N && g2 == N, "lengths %zu, %zu after reset", g1, g2);
        bad += tu_compare("NUPC after reset", o1, o2, N, ss, 1);
        free(in);
        free(o1);
        free(o2);
    }
    gf_engine_destroy(e);
    /* The automatic device runs it: the GPU where there is one (both
     * backends have it); ref cannot. */
    c.device = GF_DEVICE_AUTO;
    e = NULL;
    const gf_device want = gf_cuda_available() ? GF_DEVICE_CUDA : GF_DEVICE_CPU;
    bad += TU_CHECK(gf_engine_create(&c, &e, NULL, 0) == GF_OK && gf_engine_device(e) == want,
                    "auto device with NUPC: %s", want == GF_DEVICE_CUDA ? "cuda" : "cpu");
    gf_engine_destroy(e);
    c.device = GF_DEVICE_REF;
    bad += expect_status("ref with nupc", &c, GF_ERR_UNSUPPORTED, "no NUPC method");
    free(h);
    return bad;
}

/* The NUPC queries and refusals: levels, an engine, latency. */
static int test_nupc_api(void)
{
    int bad = nupc_levels_checks() + nupc_engine_checks();
    /* Latency: output comes in partitions of B, FFT's in partitions of P
     * (gf_partition_choose(1000) = 256). */
    const size_t n1 = ready_after(GF_METHOD_NUPC, 1000, 64, 1000);
    const size_t n2 = ready_after(GF_METHOD_FFT, 1000, 0, 1000);
    bad += TU_CHECK(n1 == 960 && n2 == 768,
                    "after 1000 frames: NUPC %zu ready (960), FFT %zu (768)", n1, n2);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "nupc") == 0)) {
        fprintf(stderr, "usage: test_fft GOLDEN_DIR cpu|cuda [nupc]\n");
        return 2;
    }
    if (argc == 4)
        g_method = GF_METHOD_NUPC;
    if (strcmp(argv[2], "cuda") == 0) {
        if (!gf_cuda_available()) {
            printf("test_fft: no usable CUDA device: skipped\n");
            return 77;
        }
        g_dev = GF_DEVICE_CUDA;
    }
    if (!fft_available(GF_PRECISION_F32)) {
        printf("test_fft: this build has no FFT method on %s\n", argv[2]);
        return 1;
    }
    g_f64 = fft_available(GF_PRECISION_F64);
    if (!g_f64)
        printf("test_fft: no f64 FFT in this build (KissFFT is float only): f32 only\n");
    int bad = g_method == GF_METHOD_NUPC ? test_nupc_api() : test_api();
    bad += test_golden(argv[1]);
    bad += test_seams();
    bad += test_random();
    printf("test_fft (%s%s): %s\n", argv[2], argc == 4 ? ", nupc" : "", bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}
