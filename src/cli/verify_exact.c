/* --verify for the FFT and NUPC methods: outputs against the exact sum (verify.h). */
#include "cli.h"
#include "verify.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXACT_BUDGET  ((double)((uint64_t)1 << 32)) /* double multiply-adds to check all */
#define SAMPLE_MIN    100000                        /* outputs checked otherwise, at least */
#define STREAM_STRIDE 64                            /* frames per stratum, unknown length */
#define MAX_WORKERS   64

struct gf_verify_exact {
    gf_precision prec;
    int C;      /* input channels */
    int O;      /* output channels: C, or a matrix's outputs (gf_config.outputs) */
    int matrix; /* 1: output o = sum over inputs i of filter i*O + o */
    size_t T, off, P;
    const char *method; /* "FFT" or "NUPC" (P is then its first partition) */
    double *h;          /* C x T (a matrix: C x O x T): each filter's taps in use */
    double *ring;       /* R input frames (C doubles each); frame j at (j % R) */
    size_t R;
    uint64_t in_frames, out_frames;
    int all;          /* every output */
    uint64_t stratum; /* else one frame per stratum of this many */
    uint64_t next;    /* the next frame to check */
    uint64_t checked; /* outputs (frame x channel) compared */
    uint64_t total_out;
    double *max_x;      /* per input channel */
    double *max_err;    /* per output channel, as the rest */
    uint64_t *worst_at; /* the frame of each channel's largest error */
    /* Outputs non-finite where the exact sum is finite, or the reverse, or
     * another non-finite value (NaN against infinity): no bound covers
     * them (the FFT spreads a non-finite sample over whole partitions, and
     * an f32 output may overflow where the sum in double does not). */
    uint64_t *unlike, *unlike_at; /* per channel: how many, and the first */
    double *bound;                /* per output, for |x| <= 1, scaled at the end */
    double seconds;               /* spent computing the exact sums */
    int workers;
};

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The frame drawn from stratum q (seeded, so every run checks the same). */
static uint64_t pick(const gf_verify_exact *v, uint64_t q)
{
    return q * v->stratum + mix64(0x6766u ^ q) % v->stratum;
}

gf_verify_exact *gf_verify_exact_create(gf_engine *e, int64_t total_in, size_t slack)
{
    gf_verify_exact *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    gf_config c;
    gf_engine_get_config(e, &c);
    const size_t T = c.num_taps;
    v->C = c.channels;
    v->matrix = c.outputs > 0;
    v->O = v->matrix ? c.outputs : c.channels;
    const size_t filters = (size_t)v->C * (v->matrix ? (size_t)v->O : 1);
    const size_t wide = (size_t)(v->O > v->C ? v->O : v->C);
    v->T = T;
    v->prec = c.precision;
    v->P = c.partition;
    v->method = c.method == GF_METHOD_NUPC ? "NUPC" : "FFT";
    v->off = gf_engine_latency(e);
    v->R = T + slack;
    v->h = malloc(filters * T * sizeof(double));
    v->ring = calloc(v->R * (size_t)v->C, sizeof(double));
    v->max_x = calloc(wide, sizeof(double));
    v->max_err = calloc(wide, sizeof(double));
    v->worst_at = calloc(wide, sizeof(uint64_t));
    v->bound = calloc(wide, sizeof(double));
    v->unlike = calloc(wide, sizeof(uint64_t));
    v->unlike_at = calloc(wide, sizeof(uint64_t));
    if (!v->h || !v->ring || !v->max_x || !v->max_err || !v->worst_at || !v->bound || !v->unlike ||
        !v->unlike_at) {
        gf_verify_exact_destroy(v);
        return NULL;
    }
    for (size_t f = 0; f < filters; f++)
        gf_engine_channel_taps(e, (int)f, v->h + f * T, T);
    for (int ch = 0; ch < v->O; ch++)
        v->bound[ch] = gf_engine_error_bound(e, ch, 1.0);
    if (total_in >= 0) {
        v->total_out = (uint64_t)total_in + (c.mode == GF_MODE_FULL ? T - 1 : 0);
        /* long double with compensation runs about four times slower */
        const double work = (double)v->total_out * (double)filters * (double)T *
                            (v->prec == GF_PRECISION_F32 ? 1 : 4);
        const uint64_t frames = ((uint64_t)SAMPLE_MIN + (uint64_t)v->O - 1) / (uint64_t)v->O;
        v->all = work <= EXACT_BUDGET || v->total_out <= frames;
        v->stratum = v->all ? 1 : v->total_out / frames;
    } else {
        v->stratum = STREAM_STRIDE;
    }
    v->next = v->all ? 0 : pick(v, 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    v->workers = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (int)cpus;
    return v;
}

void gf_verify_exact_destroy(gf_verify_exact *v)
{
    if (!v)
        return;
    free(v->h);
    free(v->ring);
    free(v->max_x);
    free(v->max_err);
    free(v->worst_at);
    free(v->bound);
    free(v->unlike);
    free(v->unlike_at);
    free(v);
}

void gf_verify_exact_input(gf_verify_exact *v, const void *frames, size_t n)
{
    const size_t C = (size_t)v->C;
    for (size_t f = 0; f < n; f++, v->in_frames++) {
        double *dst = v->ring + (size_t)(v->in_frames % v->R) * C;
        for (size_t c = 0; c < C; c++) {
            const double x = v->prec == GF_PRECISION_F32 ? ((const float *)frames)[f * C + c]
                                                         : ((const double *)frames)[f * C + c];
            dst[c] = x;
            if (isfinite(x) && fabs(x) > v->max_x[c]) /* the bound of the finite part */
                v->max_x[c] = fabs(x);
        }
    }
}

/* sum h[top - j] x_c[j] for j in [lo, hi], x read from the ring in at most
 * two runs. Double with four partial sums (the reference for f32 engines:
 * its error, below T 2^-53 sum|h||x|, is far under the f32 bound). */
static double sum_double(const gf_verify_exact *v, const double *h, int64_t top, int64_t lo,
                         int64_t hi, int c)
{
    const size_t C = (size_t)v->C;
    double a[4] = {0, 0, 0, 0};
    for (int64_t j = lo; j <= hi;) {
        const size_t r = (size_t)((uint64_t)j % v->R);
        int64_t run = (int64_t)(v->R - r); /* up to the end of the ring */
        if (run > hi - j + 1)
            run = hi - j + 1;
        const double *x = v->ring + r * C + (size_t)c;
        const double *hh = h + (top - j);
        int64_t t = 0;
        for (; t + 4 <= run; t += 4)
            for (int q = 0; q < 4; q++)
                a[q] += hh[-(t + q)] * x[(size_t)(t + q) * C];
        for (; t < run; t++)
            a[0] += hh[-t] * x[(size_t)t * C];
        j += run;
    }
    return (a[0] + a[1]) + (a[2] + a[3]);
}

/* The same in long double with Neumaier's compensated summation (the
 * reference for f64 engines). */
static double sum_long(const gf_verify_exact *v, const double *h, int64_t top, int64_t lo,
                       int64_t hi, int c)
{
    const size_t C = (size_t)v->C;
    long double sum = 0, comp = 0;
    for (int64_t j = lo; j <= hi;) {
        const size_t r = (size_t)((uint64_t)j % v->R);
        int64_t run = (int64_t)(v->R - r);
        if (run > hi - j + 1)
            run = hi - j + 1;
        const double *x = v->ring + r * C + (size_t)c;
        for (int64_t t = 0; t < run; t++) {
            const long double p = (long double)h[top - j - t] * x[(size_t)t * C];
            const long double s = sum + p;
            comp += fabsl(sum) >= fabsl(p) ? (sum - s) + p : (p - s) + sum;
            sum = s;
        }
        j += run;
    }
    return (double)(sum + comp);
}

/* The exact output i of channel c (x past what was fed is 0); of a
 * matrix, output c's sum over the inputs (each input's sum rounded to
 * double: C roundings, far under the bound). */
static double exact_sum(const gf_verify_exact *v, uint64_t i, int c)
{
    const int64_t top = (int64_t)(i + v->off);
    int64_t lo = top - (int64_t)v->T + 1, hi = top;
    if (lo < 0)
        lo = 0;
    if (hi > (int64_t)v->in_frames - 1)
        hi = (int64_t)v->in_frames - 1;
    const int i0 = v->matrix ? 0 : c, i1 = v->matrix ? v->C : c + 1;
    double s = 0;
    for (int in = i0; in < i1; in++) {
        const double *h = v->h + (size_t)(v->matrix ? in * v->O + c : c) * v->T;
        s += v->prec == GF_PRECISION_F32 ? sum_double(v, h, top, lo, hi, in)
                                         : sum_long(v, h, top, lo, hi, in);
    }
    return s;
}

typedef struct job {
    const gf_verify_exact *v;
    const void *frames;  /* the batch */
    uint64_t first;      /* its first output frame */
    const uint64_t *idx; /* frames to check (absolute) */
    size_t n;
    double max_err[GF_MAX_CHANNELS]; /* per channel, finite outputs of finite sums */
    uint64_t at[GF_MAX_CHANNELS];
    uint64_t unlike[GF_MAX_CHANNELS], unlike_at[GF_MAX_CHANNELS]; /* as in gf_verify_exact */
} job;

/* y and the exact sum s are alike when both are finite, or both are the
 * same non-finite value (NaN, or an infinity of one sign). */
static int alike(double y, double s)
{
    if (isfinite(y) && isfinite(s))
        return 1;
    return isnan(y) ? isnan(s) : y == s;
}

static void *run_job(void *arg)
{
    job *j = arg;
    const gf_verify_exact *v = j->v;
    const size_t O = (size_t)v->O;
    for (size_t k = 0; k < j->n; k++) {
        const uint64_t i = j->idx[k];
        const size_t row = (size_t)(i - j->first) * O;
        for (int c = 0; c < v->O; c++) {
            const double y = v->prec == GF_PRECISION_F32
                                 ? ((const float *)j->frames)[row + (size_t)c]
                                 : ((const double *)j->frames)[row + (size_t)c];
            const double s = exact_sum(v, i, c);
            if (!alike(y, s)) {
                if (j->unlike[c]++ == 0)
                    j->unlike_at[c] = i;
                continue;
            }
            const double err = isfinite(s) ? fabs(y - s) : 0;
            if (err > j->max_err[c]) {
                j->max_err[c] = err;
                j->at[c] = i;
            }
        }
    }
    return NULL;
}

void gf_verify_exact_output(gf_verify_exact *v, const void *frames, size_t n)
{
    const uint64_t first = v->out_frames, end = first + n;
    v->out_frames = end;
    size_t count = 0;
    for (uint64_t i = v->next; i < end; i = v->all ? i + 1 : pick(v, i / v->stratum + 1))
        count++;
    if (count == 0)
        return;
    uint64_t *idx = malloc(count * sizeof *idx);
    const int nw = count < 64 ? 1 : v->workers;
    job *jobs = calloc((size_t)nw, sizeof *jobs);
    if (!idx || !jobs) {
        free(idx);
        free(jobs);
        return; /* reported as fewer outputs checked */
    }
    size_t k = 0;
    for (uint64_t i = v->next; i < end; i = v->all ? i + 1 : pick(v, i / v->stratum + 1))
        idx[k++] = i;
    v->next = v->all ? end : pick(v, idx[count - 1] / v->stratum + 1);
    const double t0 = gf_now();
    pthread_t th[MAX_WORKERS];
    int started[MAX_WORKERS] = {0};
    for (int w = 0; w < nw; w++) {
        jobs[w] = (job){.v = v, .frames = frames, .first = first};
        jobs[w].idx = idx + count * (size_t)w / (size_t)nw;
        jobs[w].n = count * (size_t)(w + 1) / (size_t)nw - count * (size_t)w / (size_t)nw;
        if (w == 0 || pthread_create(&th[w], NULL, run_job, &jobs[w]) != 0)
            run_job(&jobs[w]);
        else
            started[w] = 1;
    }
    for (int w = 0; w < nw; w++) {
        if (started[w])
            pthread_join(th[w], NULL);
        for (int c = 0; c < v->O; c++) {
            if (jobs[w].max_err[c] > v->max_err[c]) {
                v->max_err[c] = jobs[w].max_err[c];
                v->worst_at[c] = jobs[w].at[c];
            }
            /* jobs are in frame order: the first job with any holds the first */
            if (jobs[w].unlike[c] && v->unlike[c] == 0)
                v->unlike_at[c] = jobs[w].unlike_at[c];
            v->unlike[c] += jobs[w].unlike[c];
        }
    }
    v->seconds += gf_now() - t0;
    v->checked += count * (uint64_t)v->O;
    free(idx);
    free(jobs);
}

gf_verify_exact_result gf_verify_exact_get(const gf_verify_exact *v)
{
    gf_verify_exact_result r = {.checked = v->checked, .all = v->all, .seconds = v->seconds};
    double max_in = 0; /* a matrix's outputs: every input's */
    for (int c = 0; c < v->C; c++)
        max_in = v->max_x[c] > max_in ? v->max_x[c] : max_in;
    for (int c = 0; c < v->O; c++) {
        if (v->unlike[c] && r.unlike == 0) {
            r.unlike_channel = c;
            r.unlike_at = v->unlike_at[c];
        }
        r.unlike += v->unlike[c];
        const double b = v->bound[c] * (v->matrix ? max_in : v->max_x[c]);
        const double ratio = b > 0 ? v->max_err[c] / b : (v->max_err[c] > 0 ? INFINITY : 0);
        if (!(ratio <= r.ratio)) {
            r.ratio = ratio;
            r.max_err = v->max_err[c];
            r.bound = b;
            r.channel = c;
        }
    }
    return r;
}

int gf_verify_exact_report(const gf_verify_exact *v, const char *backend, double t_engine)
{
    const gf_verify_exact_result r = gf_verify_exact_get(v);
    const double worst = r.ratio, err = r.max_err, bound = r.bound;
    const int wc = r.channel;
    gf_cli_print(
        "verify: %s method (partition %zu): exact sums in %s for %s %llu outputs; %s %.3f s, "
        "exact sums %.3f s\n",
        v->method, v->P, v->prec == GF_PRECISION_F32 ? "double" : "long double (compensated)",
        v->all ? "all" : "a seeded stratified sample of", (unsigned long long)v->checked, backend,
        t_engine, v->seconds);
    const int ok = worst <= 1.0 && r.unlike == 0;
    gf_cli_print("verify: largest error %.3g = %.3g of the bound %.3g (channel %d, frame %llu)%s\n",
                 err, worst, bound, wc + 1, (unsigned long long)v->worst_at[wc],
                 worst <= 1.0 ? ": within the bound" : ": ABOVE THE BOUND");
    if (r.unlike)
        fprintf(
            stderr,
            "verify: %llu outputs are not finite where the exact sum is, or the reverse (first: "
            "channel %d, frame %llu): the bound does not cover them (a non-finite input, or "
            "an output beyond the range of %s)\n",
            (unsigned long long)r.unlike, r.unlike_channel + 1, (unsigned long long)r.unlike_at,
            v->prec == GF_PRECISION_F32 ? "f32" : "f64");
    return ok ? GF_EXIT_OK : GF_EXIT_VERIFY;
}
