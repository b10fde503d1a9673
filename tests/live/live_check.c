/*
 * live_check: the oracle for the live test. Computes the causal filter of
 * the signal jack_feed played with a plain serial loop (the arithmetic
 * contract of gpufilt.h: acc = h[0]*x[i], then acc = acc + h[k]*x[i-k], each
 * operation rounded on its own, x[i<0] = 0), finds where it starts in the
 * recording, and compares bit for bit.
 *
 *   live_check --signal X.f32 --record Y.f32 --channels C
 *              (--taps N | --coeffs FILE) [--precision f32|f64]
 *              [--latency L [--exact-latency 1]] [--xruns N] [--fft-partition P]
 *              [--head H] [--loop L.f32 --loop-offset LB [--period P]]
 *   live_check --make-coeffs N SEED            (random taps, one per line)
 *
 * Alignment: the offset o with rec[o + i] == y[i] for the first 64 frames
 * is searched in [0, 16384] and must be unique (with --fft-partition, the
 * offset where the first 8192 frames differ least, by far: find_offset).
 * Then every frame of y must equal rec[o + i]. If --latency is given it is
 * reported against o; with --exact-latency 1 and no xruns, o must equal it.
 *
 * With --fft-partition P (gpufilt's FFT method), "equal" means within the
 * error bound gpufilt.h states for that method, eps * (2 log2(2P) + K + 4)
 * * sum|h| * max|x| with K = ceil(T / P), plus the output's own rounding,
 * against the sum accumulated in double.
 *
 * With --head H (gpufilt --live --latency zero, whose audio callback sums
 * the first H taps and adds the worker's sum of the rest), each output is
 * the sum over taps [0, H) plus the sum over [H, T), each summed by the
 * rule above from its own first product, the two added once.
 *
 * Changes of filter (gpufilt --control, SIGHUP): --switch SPEC, once per
 * change in order, names each new filter: taps:N (the mean filter),
 * coeffs:FILE or one (bypass: one tap of 1), with @DB for a gain (the taps
 * times 10^(DB/20) in double, as gpufilt scales them); --fade F is the
 * crossfade in frames. The recording must then equal, bit for bit, the old
 * filter's causal output before each change, from its first frame s the
 * crossfade old * (1 - w) + new * w with w = (p + 1) / (F + 1) at p = i - s
 * (in double, rounded once to float, as gpufilt's worker computes it) and
 * the new filter's causal output of the whole signal from s + F on. s is
 * where the recording first leaves the old filter's output; --reported
 * S1,S2,... (gpufilt's frame of each change, in its own count) must differ
 * from the s found by one constant (where the signal started in gpufilt's
 * count). f32 only; with --fft-partition every sample within twice the
 * largest of the filters' bounds, and with --heard A1,A2,... (gpufilt's
 * "heard from" frame of each change) a filter that heard the signal for
 * fewer frames than its length before its crossfade (S - A < T - 1: one
 * longer than a second) is that filter's output of the signal from frame
 * s - (S - A) on, not of the whole signal (not with --head, whose
 * callback's sums hear the whole history). --first SPEC gives the first
 * filter the same way (instead of --taps or --coeffs). With xruns reported
 * a bit-exact schedule is checked piecewise too (below): a departure from
 * it that no change explains is an xrun where the schedule resumes, the
 * changes are found on from there, and gpufilt's count may differ from
 * the signal's by a new constant after it (an xrun may lose input).
 *
 * Exit codes: 0 pass; 1 wrong samples; 2 usage or I/O error; 3 mismatch
 * while xruns were reported (--xruns > 0) that piecewise checking could not
 * explain (the caller may run again). With xruns, a mismatch is checked
 * piecewise: after each discontinuity the next 256 frames of y must be found
 * again exactly (within +-8192 frames of the old offset, resuming no more
 * than taps + 4096 frames later, or the stretch runs to the end of y); at
 * most 2 discontinuities per reported xrun, at least half of the frames
 * verified, and at most 10% of them recorded not silent in the skipped
 * stretches (gpufilt mutes what heard input it suspects: silence is its
 * answer, what sounds is what could hide an error), every frame outside the
 * skipped stretches must match exactly, and a stretch after which the
 * offset is unchanged must be silence, or silence then at most taps - 1
 * frames (the filter's transient over input the xrun lost), or silence and
 * fragments of the stream cleanly shifted (a burst of xruns: exact frames
 * of y within 8192 frames of the old offset); an xrun loses or inserts
 * frames, it does not change values in place.
 *
 * --loop L.f32 (jack_feed's recording of the plain JACK connection from
 * the player to the recorder, one channel, the signal's first at frame
 * LB = --loop-offset): where it is not the signal, the server itself was
 * disturbed (a period it ran late, a client it skipped: a machine that
 * starves the server), and what gpufilt heard or the recorder took in
 * that period need not be the signal. A stretch that no rule above
 * explains is then excused where the plain connection was disturbed
 * within 2 periods (P, default 256 frames) of the input its frames heard
 * (signal frames i - taps + 1 .. i2, heard at loop frames LB on) or of
 * the recording frames it stands at; not elsewhere. Such stretches do
 * not count towards the 10%.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef LIVE_CHECK_FFTW
#include <fftw3.h>
#endif

#define MAX_SWITCHES 64

#define SEARCH     16384
#define HEAD       64
#define ALIGN      8192
#define RESYNC_LEN 256
#define RESYNC_WIN 8192

typedef struct sig {
    float *p;
    size_t frames;
} sig;

static int load(const char *path, int C, sig *s)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "live_check: cannot open %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    const long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    const size_t fb = (size_t)C * sizeof(float);
    s->frames = bytes > 0 ? (size_t)bytes / fb : 0;
    s->p = malloc(s->frames * fb + 1);
    const int ok = s->p && fread(s->p, fb, s->frames, f) == s->frames;
    fclose(f);
    if (!ok || s->frames == 0) {
        fprintf(stderr, "live_check: cannot read %s\n", path);
        return -1;
    }
    return 0;
}

/* One number per line, '#' comments, blank lines skipped (as gpufilt). */
static double *load_coeffs(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 64;
    double *h = malloc(cap * sizeof *h);
    char line[512];
    *n = 0;
    while (h && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *end;
        const double v = strtod(line, &end);
        if (end == line)
            continue;
        if (*n == cap) {
            double *g = realloc(h, 2 * cap * sizeof *h);
            if (!g) {
                free(h);
                h = NULL;
                break;
            }
            h = g;
            cap *= 2;
        }
        h[(*n)++] = v;
    }
    fclose(f);
    return h;
}

/* Allowed |difference| of a sample: 0 (bit for bit) unless --fft-partition. */
static double g_tol = 0;

/* --head H (gpufilt --live --latency zero): taps [0, H) and [H, T) are
 * summed apart, each by the direct method's rule, and the two sums added
 * (head + tail, rounded once); 0: one sum. */
static size_t g_head;

/* --loop: prefix counts of the frames where the plain JACK connection was
 * not the signal (g_disturbed[t], frames [0, t) of it; NULL without
 * --loop), its length, and the slack around them (two periods). */
static size_t *g_disturbed, g_loop_frames, g_slack = 512;
static long long g_loop_offset;

static int sample_eq(float a, float b)
{
    return g_tol == 0 ? memcmp(&a, &b, sizeof a) == 0 : fabs((double)a - (double)b) <= g_tol;
}

/* Frame equality: bit for bit, or within the FFT bound. */
static int frame_eq(const float *a, const float *b, int C)
{
    for (int c = 0; c < C; c++)
        if (!sample_eq(a[c], b[c]))
            return 0;
    return 1;
}

/* How many of the N frames of y differ from the recording's from frame o
 * on (a frame past its end counts); the first such frame into *first. */
static size_t frames_unlike(const sig *rec, const float *y, size_t o, size_t N, int C,
                            size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        if (o + i >= rec->frames || !frame_eq(rec->p + (o + i) * (size_t)C, y + i * (size_t)C, C)) {
            if (!bad)
                *first = i;
            bad++;
        }
    return bad;
}

static int span_eq(const sig *rec, size_t o, const float *y, size_t i, size_t len, int C)
{
    if (o + i + len > rec->frames)
        return 0;
    for (size_t k = 0; k < len; k++)
        if (!frame_eq(rec->p + (o + i + k) * (size_t)C, y + (i + k) * (size_t)C, C))
            return 0;
    return 1;
}

/* Whether recording frames [from, from + n) are all zero. */
static int silent(const sig *rec, size_t from, size_t n, int C)
{
    for (size_t k = from * (size_t)C; k < (from + n) * (size_t)C && k < rec->frames * (size_t)C;
         k++)
        if (rec->p[k] != 0.0f)
            return 0;
    return 1;
}

typedef struct options {
    const char *sig_path, *rec_path, *coeffs;
    int C, f64;
    size_t T;
    long latency, xruns;
    int exact_latency;
    size_t fft_partition;
    /* changes of filter */
    const char *sw[MAX_SWITCHES];
    int nsw;
    size_t fade;
    const char *reported;
    const char *heard; /* --heard A1,A2,...: gpufilt's "heard from" frame of each change */
    const char *first; /* --first SPEC: the first filter as a --switch SPEC */
    const char *loop;  /* --loop FILE: the plain JACK connection, recorded */
} options;

/* --make-coeffs N SEED: N random taps, one per line. */
static int make_coeffs(const char *count, const char *seed)
{
    const int n = atoi(count);
    uint64_t s = strtoull(seed, NULL, 10) * 2654435761u + 1;
    printf("# %d random taps, seed %s\n", n, seed);
    for (int k = 0; k < n; k++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
        printf("%.17g\n", (u - 0.5) * 2.0 / sqrt((double)n));
    }
    return 0;
}

/* Returns 0, or 2 (the exit code) after printing. */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.C = 2, .latency = -1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--signal") == 0)
            o->sig_path = v;
        else if (strcmp(a, "--record") == 0)
            o->rec_path = v;
        else if (strcmp(a, "--channels") == 0)
            o->C = atoi(v);
        else if (strcmp(a, "--taps") == 0)
            o->T = (size_t)atol(v);
        else if (strcmp(a, "--coeffs") == 0)
            o->coeffs = v;
        else if (strcmp(a, "--precision") == 0)
            o->f64 = strcmp(v, "f64") == 0;
        else if (strcmp(a, "--latency") == 0)
            o->latency = atol(v);
        else if (strcmp(a, "--xruns") == 0)
            o->xruns = atol(v);
        else if (strcmp(a, "--exact-latency") == 0)
            o->exact_latency = atoi(v);
        else if (strcmp(a, "--fft-partition") == 0)
            o->fft_partition = (size_t)atol(v);
        else if (strcmp(a, "--switch") == 0 && o->nsw < MAX_SWITCHES)
            o->sw[o->nsw++] = v;
        else if (strcmp(a, "--fade") == 0)
            o->fade = (size_t)atol(v);
        else if (strcmp(a, "--reported") == 0)
            o->reported = v;
        else if (strcmp(a, "--heard") == 0)
            o->heard = v;
        else if (strcmp(a, "--first") == 0)
            o->first = v;
        else if (strcmp(a, "--head") == 0)
            g_head = (size_t)atol(v);
        else if (strcmp(a, "--loop") == 0)
            o->loop = v;
        else if (strcmp(a, "--loop-offset") == 0)
            g_loop_offset = atoll(v);
        else if (strcmp(a, "--period") == 0)
            g_slack = 2 * (size_t)atol(v);
        else {
            fprintf(stderr, "live_check: unknown option %s\n", a);
            return 2;
        }
    }
    if (!o->sig_path || !o->rec_path || o->C < 1 || (!o->T && !o->coeffs && !o->first) ||
        (argc % 2) == 0) {
        fprintf(stderr, "usage: live_check --signal X --record Y --channels C (--taps N | "
                        "--coeffs FILE) [--precision f32|f64] [--latency L] [--xruns N]\n");
        return 2;
    }
    return 0;
}

#ifdef LIVE_CHECK_FFTW
/* Channel c of the exact sums (taps hd) by one FFT in double of L >= N + T
 * - 1 points, into y: what the O(N T) loop below sums, within about
 * 1e-14 of sum|h| max|x|, far inside the FFT method's bound (a 2^20-tap
 * filter over a minute of audio takes seconds, not days). 0, or -1 when
 * out of memory. */
static int exact_by_fft(const sig *x, int C, int c, size_t T, const double *hd, float *y,
                        double *yd)
{
    const size_t N = x->frames;
    size_t L = 2;
    while (L < N + T - 1)
        L <<= 1;
    double *a = fftw_alloc_real(L), *b = fftw_alloc_real(L);
    fftw_complex *A = fftw_alloc_complex(L / 2 + 1), *B = fftw_alloc_complex(L / 2 + 1);
    int rc = -1;
    if (a && b && A && B) {
        fftw_plan pa = fftw_plan_dft_r2c_1d((int)L, a, A, FFTW_ESTIMATE);
        fftw_plan pb = fftw_plan_dft_r2c_1d((int)L, b, B, FFTW_ESTIMATE);
        fftw_plan pi = fftw_plan_dft_c2r_1d((int)L, A, a, FFTW_ESTIMATE);
        for (size_t i = 0; i < L; i++) {
            a[i] = i < N ? (double)x->p[i * (size_t)C + (size_t)c] : 0.0;
            b[i] = i < T ? hd[i] : 0.0;
        }
        fftw_execute(pa);
        fftw_execute(pb);
        for (size_t k = 0; k <= L / 2; k++) {
            const double re = A[k][0] * B[k][0] - A[k][1] * B[k][1];
            const double im = A[k][0] * B[k][1] + A[k][1] * B[k][0];
            A[k][0] = re;
            A[k][1] = im;
        }
        fftw_execute(pi);
        for (size_t i = 0; i < N; i++) {
            if (yd)
                yd[i * (size_t)C + (size_t)c] = a[i] / (double)L;
            else
                y[i * (size_t)C + (size_t)c] = (float)(a[i] / (double)L);
        }
        fftw_destroy_plan(pa);
        fftw_destroy_plan(pb);
        fftw_destroy_plan(pi);
        rc = 0;
    }
    fftw_free(a);
    fftw_free(b);
    fftw_free(A);
    fftw_free(B);
    return rc;
}
#endif

/* The oracle: the causal filter of x (taps h, or the mean filter when h is
 * NULL) in the engine's precision, output as float (what the live path
 * plays); with `exact`, the taps of the precision summed in double (the
 * FFT method's reference: by FFT in double for long filters, where built
 * with FFTW). NULL when out of memory. */
static float *filter_oracle(const sig *x, int C, size_t T, const double *h, int f64, int exact)
{
    const size_t split = !exact && g_head > 0 && g_head < T ? g_head : T;
    const size_t N = x->frames;
    float *y = malloc(N * (size_t)C * sizeof(float));
    float *hf = malloc(T * sizeof(float));
    double *hd = malloc(T * sizeof(double));
    if (!y || !hf || !hd) {
        free(y);
        free(hf);
        free(hd);
        return NULL;
    }
    for (size_t k = 0; k < T; k++) {
        hf[k] = h ? (float)h[k] : 1.0f / (float)T;
        hd[k] = h ? h[k] : 1.0 / (double)T;
        if (exact && !f64)
            hd[k] = hf[k];
    }
#ifdef LIVE_CHECK_FFTW
    if (exact && T >= 1024) {
        int bad = 0;
        for (int c = 0; c < C && !bad; c++)
            bad = exact_by_fft(x, C, c, T, hd, y, NULL) != 0;
        free(hf);
        free(hd);
        if (bad)
            free(y);
        return bad ? NULL : y;
    }
#endif
    for (int c = 0; c < C; c++)
        for (size_t i = 0; i < N; i++) {
            /* sums over [0, split) and [split, T), each from its first product */
            if (!f64 && !exact) {
                float part[2] = {0.0f, 0.0f};
                for (size_t k = 0; k < T; k++) {
                    const float xv = k <= i ? x->p[(i - k) * (size_t)C + (size_t)c] : 0.0f;
                    const float prod = hf[k] * xv;
                    float *acc = &part[k >= split];
                    *acc = k == 0 || k == split ? prod : *acc + prod;
                }
                y[i * (size_t)C + (size_t)c] = split < T ? part[0] + part[1] : part[0];
            } else {
                double part[2] = {0.0, 0.0};
                for (size_t k = 0; k < T; k++) {
                    const double xv = k <= i ? (double)x->p[(i - k) * (size_t)C + (size_t)c] : 0.0;
                    const double prod = hd[k] * xv;
                    double *acc = &part[k >= split];
                    *acc = k == 0 || k == split ? prod : *acc + prod;
                }
                y[i * (size_t)C + (size_t)c] = (float)(split < T ? part[0] + part[1] : part[0]);
            }
        }
    free(hf);
    free(hd);
    return y;
}

/* A filter that began hearing the signal at frame a (gpufilt's engine for
 * a change of filter hears at most a second of it before it fades in:
 * docs/live.md): its exact outputs at frames [from, to), the sums over
 * j = a .. i of h[i - j] x[j], into out ((to - from) x C, in double); by
 * FFT where built with FFTW. 0, or -1 when out of memory. */
static int heard_from(const sig *x, int C, size_t a, size_t from, size_t to, const double *h,
                      size_t T, double *out)
{
    const size_t L = to - a;
#ifdef LIVE_CHECK_FFTW
    const sig part = {x->p + a * (size_t)C, L};
    double *all = malloc(L * (size_t)C * sizeof(double));
    int bad = !all;
    for (int c = 0; c < C && !bad; c++)
        bad = exact_by_fft(&part, C, c, T < L ? T : L, h, NULL, all) != 0;
    if (!bad)
        memcpy(out, all + (from - a) * (size_t)C, (to - from) * (size_t)C * sizeof(double));
    free(all);
    return bad ? -1 : 0;
#else
    for (size_t i = from; i < to; i++)
        for (int c = 0; c < C; c++) {
            double acc = 0;
            for (size_t j = a; j <= i; j++)
                acc += i - j < T ? h[i - j] * (double)x->p[j * (size_t)C + (size_t)c] : 0.0;
            out[(i - from) * (size_t)C + (size_t)c] = acc;
        }
    (void)L;
    return 0;
#endif
}

/* The FFT method's bound (gpufilt.h) plus the float output's rounding. */
static double fft_bound(const options *o, const double *h, const sig *x)
{
    const double eps = o->f64 ? 0x1p-53 : 0x1p-24;
    const double P = (double)o->fft_partition, K = ceil((double)o->T / P);
    double sum_h = 0, max_x = 0;
    for (size_t k = 0; k < o->T; k++)
        sum_h += h ? fabs(o->f64 ? h[k] : (double)(float)h[k]) : 1.0 / (double)o->T;
    for (size_t i = 0; i < x->frames * (size_t)o->C; i++)
        max_x = fmax(max_x, fabs((double)x->p[i]));
    /* (with --head, the tail's bound, the head's sum of up to H products
     * and their addition: within this one with K + H + 1 for K) */
    const double bound = eps * (2 * log2(2 * P) + K + (double)g_head + 5) * sum_h * max_x;
    printf("live_check: FFT method (partition %.0f, K %.0f): samples equal within %.3g\n", P, K,
           bound + 0x1p-24 * sum_h * max_x);
    return bound + 0x1p-24 * sum_h * max_x;
}

/* Within a tolerance (--fft-partition), where the first ALIGN frames of y
 * (N frames) differ least from the recording in [0, SEARCH]: the bound
 * grows with K, and at 2^20 taps in partitions of 256 it is as large as
 * the output itself, which equality within it can no longer place. The
 * difference at an offset is the sum of squared differences over the
 * quarter of its RESYNC_LEN-frame blocks that differ least (xruns in
 * those frames, a shift or a stale period, spoil the others), and the
 * least must be 1000 times below the next offset's (at the right one it
 * is the arithmetic's error, elsewhere the signal's energy). 1 with the
 * offset in *o, else 0 (a line says why). */
static int least_squares_offset(const sig *rec, const float *y, size_t N, int C, size_t *o)
{
    enum { NB = ALIGN / RESYNC_LEN };
    const size_t F = N < ALIGN ? N : ALIGN, len = F < RESYNC_LEN ? F : RESYNC_LEN, nb = F / len,
                 keep = nb / 4 ? nb / 4 : 1, Cz = (size_t)C;
    double best = INFINITY, next = INFINITY;
    for (size_t cand = 0; cand <= SEARCH && (cand + nb * len) <= rec->frames; cand++) {
        double kept[NB]; /* the `keep` least block differences so far, in order */
        size_t nk = 0;
        for (size_t b = 0; b < nb; b++) {
            const float *r = rec->p + (cand + b * len) * Cz, *q = y + b * len * Cz;
            double d = 0;
            for (size_t i = 0; i < len * Cz; i++)
                d += ((double)r[i] - (double)q[i]) * ((double)r[i] - (double)q[i]);
            size_t at = nk < keep ? nk++ : keep;
            for (; at > 0 && kept[at - 1] > d; at--)
                if (at < keep)
                    kept[at] = kept[at - 1];
            if (at < keep)
                kept[at] = d;
        }
        double sum = 0;
        for (size_t k = 0; k < nk; k++)
            sum += kept[k];
        if (sum < best) {
            next = best;
            best = sum;
            *o = cand;
        } else if (sum < next) {
            next = sum;
        }
    }
    if (best * 1000 < next)
        return 1;
    printf("live_check: FAIL: the least squared difference over the best quarter of the first "
           "%zu filtered frames' blocks in the first %d of the recording, %.3g, is not 1000 times "
           "below the next offset's, %.3g\n",
           nb * len, SEARCH, best, next);
    return 0;
}

/* 1 where exactly one offset in [0, SEARCH] holds the first HEAD frames of
 * y (N frames), into *o; within a tolerance, where the least squares place
 * y. Else 0, and a line says why. */
static int find_offset(const sig *rec, const float *y, size_t N, int C, size_t *o)
{
    if (g_tol)
        return least_squares_offset(rec, y, N, C, o);
    int found = 0;
    for (size_t cand = 0; cand <= SEARCH; cand++)
        if (span_eq(rec, cand, y, 0, HEAD, C)) {
            if (!found)
                *o = cand;
            found++;
        }
    if (found == 1)
        return 1;
    printf("live_check: FAIL: the first %d filtered frames were found %d times in the first %d "
           "frames of the recording (want exactly once)\n",
           HEAD, found, SEARCH);
    return 0;
}

/* Recording frames [r0, r1), disturbed by xruns: whether every one is
 * silent or equals a frame of y at an offset within RESYNC_WIN of o (a
 * fragment of the stream, cleanly shifted: a burst of xruns leaves
 * fragments of a few frames between its silences, too short for
 * find_resumption). Bit-exact schedules only: of a noise signal's stereo
 * frames, an exact match by chance is out of the question. */
static int stretch_clean(const sig *rec, const float *y, size_t N, int C, size_t r0, size_t r1,
                         size_t o)
{
    if (g_tol)
        return 0;
    size_t d = SIZE_MAX; /* the fragment's offset */
    for (size_t r = r0; r < r1 && r < rec->frames; r++) {
        const float *f = rec->p + r * (size_t)C;
        if (silent(rec, r, 1, C)) {
            d = SIZE_MAX;
            continue;
        }
        if (d != SIZE_MAX && r >= d && r - d < N && frame_eq(f, y + (r - d) * (size_t)C, C))
            continue;
        d = SIZE_MAX;
        for (size_t cand = o > RESYNC_WIN ? o - RESYNC_WIN : 0; cand <= o + RESYNC_WIN; cand++)
            if (r >= cand && r - cand < N && frame_eq(f, y + (r - cand) * (size_t)C, C)) {
                d = cand;
                break;
            }
        if (d == SIZE_MAX)
            return 0;
    }
    return 1;
}

/* After a mismatch at frame i of y (at offset o): the first i2 from i to
 * T + 4096 frames later whose next RESYNC_LEN frames stand exactly in the
 * recording within RESYNC_WIN frames of o. Returns 1 with i2 and the new
 * offset, or 0. */
static int find_resumption(const sig *rec, const float *y, size_t N, int C, size_t T, size_t i,
                           size_t o, size_t *i2_out, size_t *o_out)
{
    const size_t i_end = i + T + 4096 < N - RESYNC_LEN ? i + T + 4096 : N - RESYNC_LEN;
    for (size_t i2 = i; i2 <= i_end && i2 + RESYNC_LEN <= N; i2++) {
        const size_t lo = o + i2 > RESYNC_WIN ? o + i2 - RESYNC_WIN : 0;
        for (size_t p = lo; p <= o + i2 + RESYNC_WIN && p + RESYNC_LEN <= rec->frames; p++) {
            if (!sample_eq(rec->p[p * (size_t)C], y[i2 * (size_t)C]))
                continue;
            if (p >= i2 && span_eq(rec, p - i2, y, i2, RESYNC_LEN, C)) {
                *i2_out = i2;
                *o_out = p - i2;
                return 1;
            }
        }
    }
    return 0;
}

/* Whether the plain JACK connection was disturbed anywhere in its frames
 * [lo, hi), widened by the slack (--loop; else 0). */
static int server_disturbed(long long lo, long long hi)
{
    if (!g_disturbed)
        return 0;
    const long long n = (long long)g_loop_frames, s = (long long)g_slack;
    const long long a = lo - s < 0 ? 0 : lo - s > n ? n : lo - s;
    const long long b = hi + s < 0 ? 0 : hi + s > n ? n : hi + s;
    return b > a && g_disturbed[b] > g_disturbed[a];
}

/* y's frames [i, i2), skipped by find_resumption, the offset o before
 * them and o2 after (T: the most taps): whether an xrun explains them
 * (the rules at the top). *server is set where only the server's own
 * disturbance does: the plain connection disturbed near the input those
 * frames heard or the recording frames they stand at. */
static int stretch_excused(const sig *rec, const float *y, size_t N, int C, size_t T, size_t i,
                           size_t i2, size_t o, size_t o2, int *server)
{
    *server = 0;
    if (o2 != o) /* shifted: frames lost or silence inserted */
        return 1;
    size_t quiet = 0;
    while (quiet < i2 - i && silent(rec, o + i + quiet, 1, C))
        quiet++;
    if ((quiet > 0 && i2 - i - quiet <= T - 1) || stretch_clean(rec, y, N, C, o + i, o2 + i2, o))
        return 1;
    const long long heard = (long long)i - (long long)T + 1 + g_loop_offset;
    *server = server_disturbed(heard, (long long)i2 + g_loop_offset) ||
              server_disturbed((long long)(o + i), (long long)(o2 + i2));
    return *server;
}

/* The check for a recording with xruns: piecewise, from offset o. Returns
 * the exit code. */
static int check_piecewise(const options *opt, const sig *rec, const float *y, size_t N, size_t o)
{
    const int C = opt->C;
    size_t i = 0, verified = 0, skipped = 0, disc = 0, by_server = 0, server_disc = 0;
    size_t sounding = 0; /* frames not silent in those stretches (the server's aside) */
    while (i < N) {
        if (o + i < rec->frames && frame_eq(rec->p + (o + i) * (size_t)C, y + i * (size_t)C, C)) {
            verified++;
            i++;
            continue;
        }
        disc++;
        size_t i2 = 0, o2 = 0;
        const int tail = N - i <= opt->T + 4096 + RESYNC_LEN; /* may end disturbed */
        if (!find_resumption(rec, y, N, C, opt->T, i, o, &i2, &o2)) {
            if (!tail) {
                printf("live_check: piecewise: no exact resumption within %zu frames after frame "
                       "%zu\n",
                       (size_t)(opt->T + 4096), i);
                return 3;
            }
            i2 = N; /* the rest, as if it resumed at the end */
            o2 = o;
        }
        /* An xrun shifts the stream (frames lost or silence inserted);
         * resuming at the same offset is only excused over silence (a cycle
         * nobody recorded), or silence and then at most T - 1 frames of the
         * filter's transient: where JACK's xrun lost input as well as
         * output (PortAudio flags both), the filter's first T - 1 outputs
         * after the gap in its input sum input from both sides of it; or
         * where the server itself was disturbed there (--loop). */
        int server;
        if (!stretch_excused(rec, y, N, C, opt->T, i, i2, o, o2, &server)) {
            printf(
                "live_check: piecewise: frames %zu..%zu are wrong, not shifted and not silent%s\n",
                i, i2,
                g_disturbed ? ", and the plain JACK connection was not disturbed near them" : "");
            return 1;
        }
        if (server) {
            by_server += i2 - i;
            server_disc++;
        } else {
            skipped += i2 - i;
            for (size_t r = o + i; r < o2 + i2; r++)
                sounding += !silent(rec, r, 1, C);
        }
        o = o2;
        i = i2;
    }
    printf("live_check: piecewise: %zu frames verified exactly, %zu skipped around %zu "
           "discontinuities (%ld xruns reported)\n",
           verified, skipped + by_server, disc, opt->xruns);
    if (server_disc)
        printf("live_check: piecewise: %zu of those frames, in %zu stretches, where the plain JACK "
               "connection was disturbed too (the server's own xruns)\n",
               by_server, server_disc);
    if (disc > 2 * (size_t)opt->xruns || sounding * 10 > N || verified * 2 < N) {
        printf("live_check: too many discontinuities (%zu), frames not silent in skipped stretches "
               "(%zu) or too few verified for the xruns reported\n",
               disc, sounding);
        return 3;
    }
    printf("live_check: PASS (piecewise, xruns reported)\n");
    return 0;
}

/* The recording against y (N frames): aligned, then strictly or, with
 * xruns, piecewise. Returns the exit code. */
static int check(const options *opt, const sig *rec, const float *y, size_t N)
{
    const int C = opt->C;
    size_t o = 0;
    if (!find_offset(rec, y, N, C, &o))
        return opt->xruns > 0 ? 3 : 1;
    printf("live_check: %zu frames x %d ch, %zu taps, %s; y starts at recording frame %zu", N, C,
           opt->T, opt->f64 ? "f64" : "f32", o);
    if (opt->latency >= 0)
        printf(" (gpufilt reported %ld frames of latency: %s)", opt->latency,
               (long)o == opt->latency ? "equal" : "DIFFERENT");
    printf("\n");

    /* Strict: every frame at one offset. */
    size_t first_bad = N;
    const size_t bad = frames_unlike(rec, y, o, N, C, &first_bad);
    if (bad == 0) {
        if (opt->exact_latency && opt->xruns == 0 && opt->latency >= 0 && (long)o != opt->latency) {
            printf("live_check: FAIL: %s, but %zu frames late instead of the %ld gpufilt "
                   "reported\n",
                   g_tol ? "within the bound" : "bit-exact", o, opt->latency);
            return 1;
        }
        if (g_tol) {
            double worst = 0;
            for (size_t i = 0; i < N * (size_t)C; i++)
                worst = fmax(worst, fabs((double)rec->p[o * (size_t)C + i] - (double)y[i]));
            printf("live_check: PASS: all %zu frames within the bound at offset %zu (largest "
                   "error %.3g of it)\n",
                   N, o, worst / g_tol);
        } else
            printf("live_check: PASS: all %zu frames bit-exact at offset %zu\n", N, o);
        return 0;
    }
    printf("live_check: %zu of %zu frames differ at offset %zu, the first at frame %zu\n", bad, N,
           o, first_bad);
    if (opt->xruns <= 0) {
        printf("live_check: FAIL: wrong samples with no xrun reported\n");
        return 1;
    }
    return check_piecewise(opt, rec, y, N, o);
}

/* A --switch SPEC's filter: its taps (n of them) in double, or NULL for
 * the mean filter without a gain. Returns 0, or -1 for a bad SPEC. */
static int switch_taps(const char *spec, double **h, size_t *n)
{
    char kind[512];
    snprintf(kind, sizeof kind, "%s", spec);
    double gain_db = 0;
    char *at = strrchr(kind, '@');
    if (at) {
        *at = '\0';
        gain_db = atof(at + 1);
    }
    *h = NULL;
    if (strcmp(kind, "one") == 0) {
        *n = 1;
        if (!(*h = malloc(sizeof **h)))
            return -1;
        (*h)[0] = 1.0;
    } else if (strncmp(kind, "taps:", 5) == 0) {
        *n = (size_t)atol(kind + 5);
        if (*n == 0)
            return -1;
        if (gain_db != 0) {
            if (!(*h = malloc(*n * sizeof **h)))
                return -1;
            for (size_t k = 0; k < *n; k++)
                (*h)[k] = 1.0 / (double)*n;
        }
    } else if (strncmp(kind, "coeffs:", 7) == 0) {
        if (!(*h = load_coeffs(kind + 7, n)) || *n == 0)
            return -1;
    } else
        return -1;
    if (gain_db != 0) {
        const double g = pow(10.0, gain_db / 20.0);
        for (size_t k = 0; k < *n; k++)
            (*h)[k] *= g;
    }
    return 0;
}

/* The schedule's sample j (frame i, channel c folded in) for a change
 * whose crossfade of F frames starts at frame s: old before, the crossfade
 * (as gpufilt's worker computes it), new after. */
static float crossfade(float old, float nu, size_t p, size_t F)
{
    if (p >= F)
        return nu;
    const double w = (double)(p + 1) / (double)(F + 1);
    return (float)((double)old * (1.0 - w) + (double)nu * w);
}

static float scheduled(const float *old, const float *nu, size_t i, size_t j, size_t s, size_t F)
{
    return i < s ? old[j] : crossfade(old[j], nu[j], i - s, F);
}

/* Each change's filter output into ys[k] (one per distinct filter: a
 * repeated SPEC shares the earlier one's, same_as[k] its index, else -1),
 * its taps into hk[k] (as the exact oracle sums them: rounded to f32) and
 * their count into tk[k], the largest FFT bound into *tol and the most
 * taps into *max_taps. 0, or 2 (the exit code) after a bad SPEC or out of
 * memory; what was made stays for the caller to free. */
static int make_oracles(const options *opt, const sig *x, float **ys, double **hk, size_t *tk,
                        int *same_as, double *tol, size_t *max_taps)
{
    for (int k = 0; k < opt->nsw; k++)
        same_as[k] = -1;
    for (int k = 0; k < opt->nsw; k++) {
        for (int j = 0; j < k && same_as[k] < 0; j++)
            if (strcmp(opt->sw[j], opt->sw[k]) == 0)
                same_as[k] = j;
        if (same_as[k] >= 0) {
            ys[k] = ys[same_as[k]];
            hk[k] = hk[same_as[k]];
            tk[k] = tk[same_as[k]];
            continue;
        }
        double *h = NULL;
        options ok = *opt;
        if (switch_taps(opt->sw[k], &h, &ok.T) != 0) {
            fprintf(stderr, "live_check: bad --switch %s\n", opt->sw[k]);
            free(h);
            return 2;
        }
        *max_taps = ok.T > *max_taps ? ok.T : *max_taps;
        ys[k] = filter_oracle(x, opt->C, ok.T, h, 0, opt->fft_partition > 0);
        if (opt->fft_partition)
            *tol = fmax(*tol, fft_bound(&ok, h, x));
        const int mean = !h; /* taps:N */
        if (mean && !(h = malloc(ok.T * sizeof *h)))
            return 2;
        for (size_t i = 0; i < ok.T; i++) /* as the exact oracle sums them */
            h[i] = mean ? (double)(1.0f / (float)ok.T) : (double)(float)h[i];
        hk[k] = h;
        tk[k] = ok.T;
        if (!ys[k])
            return 2;
    }
    return 0;
}

/* With xruns reported, where the recording leaves the schedule y (at
 * offset *o) at frame s and no change starts there: whether an xrun
 * explains it, the schedule resuming exactly further on (find_resumption),
 * shifted, or at the same offset after silence and at most T - 1 frames of
 * transient (check_piecewise's rules, T the most taps of the filters);
 * bit-exact schedules only (within a bound as loose as a 2^20-tap FFT
 * method's, a stretch of 256 frames would resume almost anywhere). 1 with
 * *o and *from moved past it, else 0. */
static int xrun_explains(const options *po, const sig *rec, const float *y, size_t N, size_t s,
                         size_t *o, size_t *from)
{
    size_t i2 = 0, o2 = 0;
    if (po->xruns <= 0 || g_tol || s >= N ||
        !find_resumption(rec, y, N, po->C, po->T, s, *o, &i2, &o2))
        return 0;
    int server;
    if (!stretch_excused(rec, y, N, po->C, po->T, s, i2, *o, o2, &server))
        return 0;
    printf("live_check: frames %zu..%zu: an xrun (the schedule resumes at offset %zu, was %zu%s)\n",
           s, i2, o2, *o, server ? "; the plain JACK connection disturbed there too" : "");
    *o = o2;
    *from = i2;
    return 1;
}

/* Where the recording (at offset o) first leaves y, the old output
 * settled before `from` (N: nowhere); and the window a change's start is
 * looked for in: the start in [*lo, that frame], up to `back` frames
 * earlier (its first weights may move a sample less than the tolerance),
 * and it must fit up to *hi (a crossfade and RESYNC_LEN frames past). */
static size_t leaves_at(const sig *rec, size_t o, const float *y, int C, size_t N, size_t F,
                        size_t from, size_t back, size_t *lo, size_t *hi)
{
    size_t s = from;
    while (s < N && o + s < rec->frames &&
           frame_eq(rec->p + (o + s) * (size_t)C, y + s * (size_t)C, C))
        s++;
    *lo = s < N && s - from > back ? s - back : from;
    *hi = s + F + RESYNC_LEN < N ? s + F + RESYNC_LEN : N;
    return s;
}

/* Whether recording frames o + [cand, hi) hold the change from y to nu
 * (nu: the new output over [lo, hi)) starting at cand; within the bound,
 * the sum of squared differences over [lo, hi) into *d (bit for bit, 0). */
static int start_fits(const sig *rec, size_t o, const float *y, const float *nu, int C, size_t lo,
                      size_t hi, size_t cand, size_t F, double *d)
{
    const size_t Cz = (size_t)C;
    *d = 0;
    for (size_t i = g_tol ? lo : cand; i < hi; i++)
        for (size_t c = 0; c < Cz; c++) {
            const float old = y[i * Cz + c], got = rec->p[(o + i) * Cz + c];
            const float want = i < cand ? old : crossfade(old, nu[(i - lo) * Cz + c], i - cand, F);
            if (i >= cand && !sample_eq(got, want))
                return 0;
            *d += g_tol ? ((double)got - (double)want) * ((double)got - (double)want) : 0.0;
        }
    return 1;
}

/* Where the change to nu's output starts, the recording leaving y (the
 * old output settled before `from`) at *left: that frame, or earlier
 * where the crossfade's first weights moved a sample less than the
 * tolerance (bit for bit, up to 64 frames earlier; within a bound as
 * loose as a 2^20-tap FFT method's, up to a few crossfades). Of the starts
 * that fit, the one whose schedule differs least from the recording (at
 * the right one, by the arithmetic's error; a frame off, by a crossfade
 * step of the filters' difference), the earliest of equals (bit for bit,
 * every start that fits differs by 0). N where none fits. */
static size_t change_start(const sig *rec, size_t o, const float *y, const float *nu, int C,
                           size_t N, size_t F, size_t from, size_t *left)
{
    size_t lo, hi, found = N;
    /* bit for bit, the first weight already moves a sample: 64 */
    const size_t s = *left = leaves_at(rec, o, y, C, N, F, from, g_tol ? 4 * F + 64 : 64, &lo, &hi);
    if (s >= N || o + hi > rec->frames)
        return N;
    double best = INFINITY, d;
    for (size_t cand = lo; cand <= s; cand++)
        if (start_fits(rec, o, y, nu + lo * (size_t)C, C, lo, hi, cand, F, &d) && d < best) {
            best = d;
            found = cand;
        }
    return found;
}

/*
 * change_start for a filter that heard the signal only from `gap` frames
 * before its crossfade (gap < T - 1: its output is not the whole signal's
 * filtered, docs/live.md): each candidate start s has its own new output,
 * heard from s - gap. That output is kept in double over the window
 * [lo, hi) and moved from one candidate to the next by taking out the
 * one input frame the later start no longer heard. N where none fits (or
 * out of memory).
 */
static size_t heard_start(const sig *rec, size_t o, const float *y, const sig *x, int C, size_t N,
                          size_t F, size_t from, size_t gap, const double *h, size_t T,
                          size_t *left)
{
    size_t lo, hi, found = N;
    const size_t s = *left = leaves_at(rec, o, y, C, N, F, from, 4 * F + 64, &lo, &hi);
    const size_t Cz = (size_t)C, n = s < N ? (hi - lo) * Cz : 0;
    if (s >= N || o + hi > rec->frames)
        return N;
    double *z = malloc(n * sizeof(double)), best = INFINITY, d;
    float *nu = malloc(n * sizeof(float));
    if (!z || !nu || heard_from(x, C, lo > gap ? lo - gap : 0, lo, hi, h, T, z) != 0) {
        free(z);
        free(nu);
        return N;
    }
    for (size_t cand = lo; cand <= s; cand++) {
        if (cand > lo && cand - 1 >= gap) { /* frame cand - 1 - gap is no longer heard */
            const size_t j = cand - 1 - gap;
            for (size_t i = lo > j ? lo : j; i < hi && i - j < T; i++)
                for (size_t c = 0; c < Cz; c++)
                    z[(i - lo) * Cz + c] -= h[i - j] * (double)x->p[j * Cz + c];
        }
        for (size_t k = 0; k < n; k++)
            nu[k] = (float)z[k];
        if (start_fits(rec, o, y, nu, C, lo, hi, cand, F, &d) && d < best) {
            best = d;
            found = cand;
        }
    }
    free(z);
    free(nu);
    return found;
}

/* The whole schedule y against the recording from offset o0, once every
 * change is found: strictly, or piecewise with xruns (po: the most taps);
 * the latency gpufilt reported held to. Returns the exit code. */
static int schedule_verdict(const options *opt, const options *po, const sig *rec, const float *y,
                            size_t N, size_t o0)
{
    size_t first_bad = N;
    const size_t bad = frames_unlike(rec, y, o0, N, opt->C, &first_bad);
    if (bad) {
        printf("live_check: %s: %zu of %zu frames differ from the schedule of changes at offset "
               "%zu, the first at frame %zu%s\n",
               opt->xruns > 0 ? "MISMATCH (xruns reported)" : "FAIL", bad, N, o0, first_bad,
               opt->xruns > 0 && !g_tol ? ": checked piecewise" : "");
        return opt->xruns <= 0 ? 1 : g_tol ? 3 : check_piecewise(po, rec, y, N, o0);
    }
    if (opt->exact_latency && opt->xruns == 0 && opt->latency >= 0 && (long)o0 != opt->latency) {
        printf("live_check: FAIL: as scheduled, but %zu frames late instead of the %ld gpufilt "
               "reported\n",
               o0, opt->latency);
        return 1;
    }
    printf("live_check: PASS: all %zu frames %s at offset %zu through %d change%s of filter\n", N,
           g_tol ? "within the bound" : "bit-exact", o0, opt->nsw, opt->nsw == 1 ? "" : "s");
    return 0;
}

/* From change s on, where its filter heard the signal only from s - gap:
 * the crossfade into that filter's output, then its output, up to where
 * the next change may start (span: the frames gpufilt reported between
 * the two, and some; 0: to the end), into the schedule y. 0, or 2 (the
 * exit code) when out of memory. */
static int schedule_heard(const sig *x, int C, size_t N, size_t F, size_t s, size_t gap,
                          const double *h, size_t T, long long span, float *y)
{
    const size_t far = span > 0 ? s + (size_t)span + 4 * F + 16384 : N, end = far < N ? far : N;
    double *z = malloc((end - s) * (size_t)C * sizeof(double));
    if (!z || heard_from(x, C, s > gap ? s - gap : 0, s, end, h, T, z) != 0) {
        free(z);
        fprintf(stderr, "live_check: out of memory\n");
        return 2;
    }
    for (size_t i = s; i < end; i++)
        for (size_t c = 0; c < (size_t)C; c++) {
            float *v = &y[i * (size_t)C + c];
            *v = crossfade(*v, (float)z[(i - s) * (size_t)C + c], i - s, F);
        }
    free(z);
    return 0;
}

/* From change s on, where its filter heard the whole signal: the
 * crossfade into nu, that filter's output, then nu, into the schedule y. */
static void schedule_whole(int C, size_t N, size_t F, size_t s, const float *nu, float *y)
{
    for (size_t i = s; i < N; i++)
        for (size_t c = 0; c < (size_t)C; c++) {
            const size_t j = i * (size_t)C + c;
            y[j] = scheduled(y, nu, i, j, s, F);
        }
}

/* gpufilt's frame r of a change the recording has at signal frame s:
 * whether the two differ by the constant of the change before (*shift,
 * once *anchored: after an xrun it is found again), which becomes r - s.
 * A line says why not. */
static int shift_holds(long long r, size_t s, long long *shift, int *anchored)
{
    if (r < 0 || (*anchored && r - (long long)s != *shift)) {
        printf("live_check: FAIL: gpufilt's frames of the changes and the signal's "
               "differ by %lld, not %lld as at the change before\n",
               r - (long long)s, *shift);
        return 0;
    }
    *shift = r - (long long)s;
    *anchored = 1;
    return 1;
}

/* A comma-separated list of frames into v (up to n; -1 where missing). */
static void frame_list(const char *s, long long *v, int n)
{
    for (int k = 0; k < n; k++) {
        v[k] = s && *s >= '0' && *s <= '9' ? atoll(s) : -1;
        s = s ? strchr(s, ',') : NULL;
        s = s ? s + 1 : NULL;
    }
}

/* With --switch: the schedule of changes
 * (see the top). y holds the first filter's output and becomes the whole
 * schedule's. With --fft-partition a sample may differ by twice the
 * largest of the filters' bounds: each engine's output within its own,
 * the crossfade's weights sum to 1, and the crossfade's rounding is within
 * the output rounding each bound holds. With xruns reported, a departure
 * that is no change may be an xrun (xrun_explains): the changes are found
 * on from where the schedule resumes, gpufilt's frame count may differ
 * from the signal's by a new constant after it, and the whole schedule is
 * then checked piecewise (check_piecewise). Returns the exit code. */
static int check_switches(const options *opt, const sig *x, const sig *rec, float *y)
{
    const int C = opt->C;
    const size_t N = x->frames, F = opt->fade;
    float *ys[MAX_SWITCHES] = {NULL};
    double *hk[MAX_SWITCHES] = {NULL};
    size_t tk[MAX_SWITCHES] = {0};
    long long at[MAX_SWITCHES], heard[MAX_SWITCHES]; /* --reported, --heard */
    frame_list(opt->reported, at, opt->nsw);
    frame_list(opt->heard, heard, opt->nsw);
    int same_as[MAX_SWITCHES]; /* an earlier change to the same filter, whose oracle serves */
    int rc = 2;
    if (opt->f64) {
        fprintf(stderr, "live_check: --switch checks f32 only\n");
        return 2;
    }
    double tol = g_tol;
    options po = *opt; /* T: the most taps of the filters, for xruns' transients */
    if (make_oracles(opt, x, ys, hk, tk, same_as, &tol, &po.T) != 0)
        goto done;
    g_tol = 2 * tol;
    if (g_tol)
        printf("live_check: through the changes, samples equal within %.3g\n", g_tol);
    size_t o = 0;
    if (!find_offset(rec, y, N, C, &o)) {
        rc = opt->xruns > 0 ? 3 : 1;
        goto done;
    }
    const size_t o0 = o;
    long long shift = 0;
    int anchored = 0; /* the constant is found (again after an xrun) */
    size_t from = 0;  /* frames before this are settled */
    for (int k = 0; k < opt->nsw; k++) {
        size_t s = from;
        /* within the bound, a filter that heard less than its length */
        const long long gap = at[k] >= 0 && heard[k] >= 0 ? at[k] - heard[k] : -1;
        const int part = g_tol && !g_head && gap >= 0 && (size_t)gap + 1 < tk[k];
        const size_t found =
            part ? heard_start(rec, o, y, x, C, N, F, from, (size_t)gap, hk[k], tk[k], &s)
                 : change_start(rec, o, y, ys[k], C, N, F, from, &s);
        if (found >= N && xrun_explains(&po, rec, y, N, s, &o, &from)) {
            anchored = 0;
            k--; /* the same change, from where the schedule resumes */
            continue;
        }
        if (found >= N) {
            printf("live_check: FAIL: change %d (%s) is not heard in the recording as scheduled "
                   "(it leaves the old output at signal frame %zu)\n",
                   k + 1, opt->sw[k], s);
            rc = opt->xruns > 0 ? 3 : 1;
            goto done;
        }
        s = found;
        const long long span = k + 1 < opt->nsw && at[k + 1] > at[k] ? at[k + 1] - at[k] : 0;
        if (!part)
            schedule_whole(C, N, F, s, ys[k], y);
        else if (schedule_heard(x, C, N, F, s, (size_t)gap, hk[k], tk[k], span, y) != 0)
            goto done;
        printf("live_check: change %d (%s): the crossfade of %zu frames starts at signal frame "
               "%zu (gpufilt reported frame %lld)",
               k + 1, opt->sw[k], F, s, at[k]);
        if (part)
            printf("; its filter heard the signal from frame %zu",
                   s > (size_t)gap ? s - (size_t)gap : 0);
        printf("\n");
        if (opt->reported && !shift_holds(at[k], s, &shift, &anchored)) {
            rc = 1;
            goto done;
        }
        from = s + F;
    }
    rc = schedule_verdict(opt, &po, rec, y, N, o0);
done:
    for (int k = 0; k < opt->nsw; k++)
        if (same_as[k] < 0)
            free(ys[k]), free(hk[k]);
    return rc;
}

/* --loop: the plain connection's recording against the signal's first
 * channel (from frame g_loop_offset on, silence around it), as prefix
 * counts of the frames that differ (g_disturbed); a line says how many.
 * 0, or -1 after a line. */
static int load_loop(const char *path, const sig *x, int C)
{
    sig l = {NULL, 0};
    if (load(path, 1, &l) != 0)
        return -1;
    g_disturbed = malloc((l.frames + 1) * sizeof *g_disturbed);
    if (!g_disturbed) {
        free(l.p);
        fprintf(stderr, "live_check: out of memory\n");
        return -1;
    }
    g_loop_frames = l.frames;
    g_disturbed[0] = 0;
    size_t stretches = 0;
    for (size_t t = 0; t < l.frames; t++) {
        const long long j = (long long)t - g_loop_offset;
        const float want = j >= 0 && (size_t)j < x->frames ? x->p[(size_t)j * (size_t)C] : 0.0f;
        const int bad = memcmp(&l.p[t], &want, sizeof want) != 0;
        stretches += bad && (t == 0 || g_disturbed[t] == g_disturbed[t - 1]);
        g_disturbed[t + 1] = g_disturbed[t] + (size_t)bad;
    }
    printf("live_check: the plain JACK connection (from frame %lld): %zu frames disturbed in %zu "
           "stretches\n",
           g_loop_offset, g_disturbed[l.frames], stretches);
    free(l.p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--make-coeffs") == 0)
        return make_coeffs(argv[2], argv[3]);
    options opt;
    int rc = parse_options(argc, argv, &opt);
    if (rc)
        return rc;
    double *h = NULL;
    if (opt.first && switch_taps(opt.first, &h, &opt.T) != 0) {
        fprintf(stderr, "live_check: bad --first %s\n", opt.first);
        free(h);
        return 2;
    }
    if (opt.coeffs && !opt.first) {
        h = load_coeffs(opt.coeffs, &opt.T);
        if (!h || opt.T == 0) {
            fprintf(stderr, "live_check: cannot read taps from %s\n", opt.coeffs);
            free(h);
            return 2;
        }
    }
    sig x = {NULL, 0}, rec = {NULL, 0};
    float *y = NULL;
    if (load(opt.sig_path, opt.C, &x) != 0 || load(opt.rec_path, opt.C, &rec) != 0 ||
        (opt.loop && load_loop(opt.loop, &x, opt.C) != 0))
        rc = 2;
    else if (!(y = filter_oracle(&x, opt.C, opt.T, h, opt.f64, opt.fft_partition > 0)))
        rc = 2;
    else {
        if (opt.fft_partition)
            g_tol = fft_bound(&opt, h, &x);
        rc = opt.nsw ? check_switches(&opt, &x, &rec, y) : check(&opt, &rec, y, x.frames);
    }
    free(x.p);
    free(rec.p);
    free(h);
    free(y);
    free(g_disturbed);
    return rc;
}
