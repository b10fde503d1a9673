/*
 * Test oracle for the CLI's output: the exact FIR sums of an input file,
 * computed here with libsndfile and long double, independently of gpufilt's
 * code, compared with gpufilt's output file after its encoding.
 *
 *   exactsum IN OUT MODE TAPS P PREC
 *       MODE  same, causal or full (gpufilt's --mode)
 *       TAPS  mean:T (T taps of 1/T, gpufilt's --taps T) or a file of
 *             numbers (gpufilt's --coeffs FILE, one channel)
 *       P     the FFT partition gpufilt used, 0 for the direct method, or
 *             nupc:B:M for the NUPC method with partitions B .. M
 *       PREC  f32 or f64 (gpufilt's --precision)
 *
 * IN must hold integer PCM of at most 24 bits, so that every sample is an
 * integer times 2^-24. The mean filter's sums are then exact in int64 and
 * divided by T once in long double; other taps are summed in long double,
 * which is exact for dyadic taps of a few bits (those the tests use).
 *
 * The direct method must give exactly the sum rounded to the precision
 * (the tests pick taps whose sums are exact in f32); the FFT method may be
 * off by its stated bound (gpufilt.h, gf_engine_error_bound):
 *   eps x (2 log2(2P) + ceil(T/P) + 4) x sum|h| x max|x| (per channel);
 * the NUPC method by the sum of that bound over its levels (partition S,
 * K partitions of the taps from offset o: sizes double from B, 2 partitions
 * a level below M, the rest at M) plus (levels - 1) x sum|h| x max|x|.
 * Then, for the output's encoding:
 *   float, double       |out - y| <= bound (0: out == y rounded)
 *   integer PCM, FLAC   Q(y - bound) <= out <= Q(y + bound), Q rounding to
 *                       nearest (ties to even) and clipping, as documented
 *   mu-law, A-law       dec(y - bound) <= out <= dec(y + bound), dec the
 *                       value libsndfile's encoder gives for the sample
 *                       clipped to [-1, 1] (the encodings are monotonic)
 * The frame and channel counts must match: N frames, N + T - 1 in full.
 * Exit 0 when everything matches, 1 (with the first differences) if not,
 * 2 on a usage or file error.
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "exactsum: out of memory\n");
        exit(2);
    }
    return p;
}

/* The whole file as doubles (libsndfile's normalisation: PCM / 2^(bits-1),
 * exact). */
static double *read_all(const char *path, SF_INFO *info)
{
    memset(info, 0, sizeof *info);
    SNDFILE *f = sf_open(path, SFM_READ, info);
    if (!f) {
        fprintf(stderr, "exactsum: %s: %s\n", path, sf_strerror(NULL));
        exit(2);
    }
    double *x = xmalloc((size_t)info->frames * (size_t)info->channels * sizeof *x);
    sf_count_t got = sf_readf_double(f, x, info->frames);
    sf_close(f);
    if (got != info->frames) {
        fprintf(stderr, "exactsum: %s: read %lld of %lld frames\n", path, (long long)got,
                (long long)info->frames);
        exit(2);
    }
    return x;
}

static long double *read_taps(const char *spec, size_t *T, int *mean)
{
    *mean = strncmp(spec, "mean:", 5) == 0;
    if (*mean) {
        *T = (size_t)strtoull(spec + 5, NULL, 10);
        if (*T == 0)
            exit(2);
        long double *h = xmalloc(*T * sizeof *h);
        for (size_t k = 0; k < *T; k++)
            h[k] = 1.0L / (long double)*T;
        return h;
    }
    FILE *f = fopen(spec, "r");
    if (!f) {
        fprintf(stderr, "exactsum: cannot read taps '%s'\n", spec);
        exit(2);
    }
    size_t cap = 64, n = 0;
    long double *h = xmalloc(cap * sizeof *h);
    double v;
    while (fscanf(f, "%lf", &v) == 1) {
        if (n == cap)
            h = realloc(h, (cap *= 2) * sizeof *h);
        if (!h)
            exit(2);
        h[n++] = v;
    }
    fclose(f);
    if (n == 0)
        exit(2);
    *T = n;
    return h;
}

/* Round to nearest, ties to even, and clip to [-scale, scale - 1]. */
static int64_t quantise(long double v, long double scale)
{
    const long double s = v * scale;
    if (s >= scale - 0.5L)
        return (int64_t)scale - 1;
    if (s < -scale - 0.5L)
        return -(int64_t)scale;
    long double r = floorl(s);
    const long double frac = s - r;
    if (frac > 0.5L || (frac == 0.5L && fmodl(r, 2.0L) != 0))
        r += 1;
    return (int64_t)r;
}

/* What libsndfile makes of `n` samples (clipped to [-1, 1], rounded to the
 * precision as gpufilt hands them over) in the encoding `format`. */
static double *through_codec(const long double *v, size_t n, int format, int f32)
{
    FILE *tmp = tmpfile();
    if (!tmp)
        exit(2);
    SF_INFO info = {.samplerate = 8000, .channels = 1, .format = format};
    SNDFILE *w = sf_open_fd(fileno(tmp), SFM_WRITE, &info, SF_FALSE);
    if (!w) {
        fprintf(stderr, "exactsum: codec: %s\n", sf_strerror(NULL));
        exit(2);
    }
    float *fs = xmalloc(n * sizeof *fs);
    double *ds = xmalloc(n * sizeof *ds);
    for (size_t i = 0; i < n; i++) {
        const long double c = v[i] > 1 ? 1 : v[i] < -1 ? -1 : v[i];
        fs[i] = (float)c;
        ds[i] = (double)c;
    }
    const sf_count_t wrote =
        f32 ? sf_writef_float(w, fs, (sf_count_t)n) : sf_writef_double(w, ds, (sf_count_t)n);
    free(fs);
    free(ds);
    sf_close(w);
    if (wrote != (sf_count_t)n)
        exit(2);
    rewind(tmp);
    memset(&info, 0, sizeof info);
    SNDFILE *r = sf_open_fd(fileno(tmp), SFM_READ, &info, SF_TRUE);
    if (!r || info.frames != (sf_count_t)n)
        exit(2);
    double *out = xmalloc(n * sizeof *out);
    sf_readf_double(r, out, (sf_count_t)n);
    sf_close(r);
    return out;
}

/* The bound's factor of eps max|x| (gpufilt.h): the FFT method's with
 * partition P, or with B > 0 the NUPC method's, level by level (first
 * partition B, largest PM), plus its levels' sum; 0 for the direct method
 * (P = B = 0). */
static long double bound_factor(const long double *h, size_t T, size_t P, size_t B, size_t PM)
{
    long double sum_h = 0;
    for (size_t k = 0; k < T; k++)
        sum_h += fabsl(h[k]);
    unsigned log2n = 0;
    for (size_t n = 2 * P; n > 1; n >>= 1)
        log2n++;
    long double factor = P ? (2.0L * log2n + (long double)((T + P - 1) / P) + 4) * sum_h : 0;
    if (B) {
        size_t o = 0, S = B, levels = 0;
        while (o < T) {
            size_t K = (T - o + S - 1) / S;
            if (S < PM && K > 2)
                K = 2;
            unsigned lg = 0;
            for (size_t n = 2 * S; n > 1; n >>= 1)
                lg++;
            long double seg = 0;
            for (size_t k = o; k < o + K * S && k < T; k++)
                seg += fabsl(h[k]);
            factor += (2.0L * lg + (long double)K + 4) * seg;
            levels++;
            o += K * S;
            if (S < PM)
                S *= 2;
        }
        factor += (long double)(levels - 1) * sum_h;
    }
    return factor;
}

/* The output as read: integer PCM as left-justified ints (exact; obits
 * its bits), mu- and A-law (law) and float as doubles. */
typedef struct {
    int format, obits, law;
    int32_t *ints;
    double *dbls;
} output;

/* Opens path, checks that it holds M frames of C channels in an encoding
 * handled here, and reads it whole. */
static output read_output(const char *path, size_t C, size_t M)
{
    SF_INFO oi;
    /* (libsndfile reads the format field on open: zero, or it takes the
     * stack's garbage for a RAW file's format and fails now and then) */
    memset(&oi, 0, sizeof oi);
    SNDFILE *of = sf_open(path, SFM_READ, &oi);
    if (!of) {
        fprintf(stderr, "exactsum: %s: %s\n", path, sf_strerror(NULL));
        exit(2);
    }
    if ((size_t)oi.channels != C || (size_t)oi.frames != M) {
        fprintf(stderr, "exactsum: %s holds %lld frames x %d channels, expected %zu x %zu\n", path,
                (long long)oi.frames, oi.channels, M, C);
        exit(1);
    }
    const int sub = oi.format & SF_FORMAT_SUBMASK;
    output o = {.format = oi.format,
                .obits = sub == SF_FORMAT_PCM_16   ? 16
                         : sub == SF_FORMAT_PCM_24 ? 24
                                                   : 0,
                .law = sub == SF_FORMAT_ULAW || sub == SF_FORMAT_ALAW};
    const int is_float = sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE;
    if (!o.obits && !is_float && !o.law) {
        fprintf(stderr, "exactsum: %s: output encoding 0x%x not handled\n", path, sub);
        exit(2);
    }
    if (o.obits) {
        o.ints = xmalloc(M * C * sizeof *o.ints);
        if (sf_readf_int(of, o.ints, (sf_count_t)M) != (sf_count_t)M)
            exit(2);
    } else {
        o.dbls = xmalloc(M * C * sizeof *o.dbls);
        if (sf_readf_double(of, o.dbls, (sf_count_t)M) != (sf_count_t)M)
            exit(2);
    }
    sf_close(of);
    return o;
}

/* Channel c's exact outputs y[0..M): y[i] = sum_k h[k] x[i + off - k] over
 * the N input frames; a mean filter's (mean) from prefix sums of its
 * samples as integers of 2^-24, in pre (N + 1). */
static void exact_sums(const double *x, size_t N, size_t C, size_t c, const long double *h,
                       size_t T, int mean, size_t off, size_t M, int64_t *pre, long double *y)
{
    if (mean) {
        pre[0] = 0;
        for (size_t i = 0; i < N; i++) {
            const double v = ldexp(x[i * C + c], 24);
            if (v != floor(v)) {
                fprintf(stderr, "exactsum: input sample not a multiple of 2^-24\n");
                exit(2);
            }
            pre[i + 1] = pre[i] + (int64_t)v;
        }
    }
    for (size_t i = 0; i < M; i++) {
        /* Input frames j = i + off - k for k in [0, T): j in [a, b). */
        const int64_t b0 = (int64_t)(i + off) + 1, a0 = b0 - (int64_t)T;
        if (mean) {
            const int64_t a = a0 < 0 ? 0 : a0, b = b0 > (int64_t)N ? (int64_t)N : b0;
            const int64_t s = b > a ? pre[b] - pre[a] : 0;
            y[i] = ldexpl((long double)s, -24) / (long double)T;
        } else {
            long double s = 0;
            for (size_t k = 0; k < T; k++) {
                const int64_t j = (int64_t)(i + off) - (int64_t)k;
                if (j >= 0 && j < (int64_t)N)
                    s += h[k] * (long double)x[(size_t)j * C + c];
            }
            y[i] = s;
        }
    }
}

/* Channel c's M outputs against its exact sums y: within y +- bound (after
 * the output's quantisation or codec), or for the direct method (direct)
 * in float the exact sum rounded once. Prints the first of the wrong ones
 * (five in all: *bad counts them) and keeps the largest |error| in *worst. */
static void check_channel(const output *o, size_t C, size_t c, size_t M, const long double *y,
                          long double bound, int f32, int direct, size_t *bad, long double *worst)
{
    long double *lo = xmalloc(M * sizeof *lo), *hi = xmalloc(M * sizeof *hi);
    for (size_t i = 0; i < M; i++) {
        lo[i] = y[i] - bound;
        hi[i] = y[i] + bound;
    }
    double *dlo = NULL, *dhi = NULL;
    if (o->law) {
        dlo = through_codec(lo, M, o->format, f32);
        dhi = through_codec(hi, M, o->format, f32);
    }
    for (size_t i = 0; i < M; i++) {
        int ok;
        long double got;
        if (o->obits) {
            const long double scale = ldexpl(1.0L, o->obits - 1);
            const int64_t q = (int64_t)(o->ints[i * C + c] >> (32 - o->obits));
            got = (long double)q / scale;
            ok = quantise(lo[i], scale) <= q && q <= quantise(hi[i], scale);
        } else if (o->law) {
            got = o->dbls[i * C + c];
            ok = dlo[i] <= got && got <= dhi[i];
        } else {
            got = o->dbls[i * C + c];
            if (direct) /* the exact sum, rounded once to the precision */
                ok = f32 ? (double)(float)y[i] == got : (double)y[i] == got;
            else
                ok = lo[i] <= got && got <= hi[i];
        }
        const long double e = fabsl(got - y[i]);
        if (e > *worst)
            *worst = e;
        if (!ok && (*bad)++ < 5)
            fprintf(stderr,
                    "exactsum: frame %zu channel %zu: got %.17Lg, exact %.17Lg (bound "
                    "%.3Lg)\n",
                    i, c, got, y[i], bound);
    }
    free(dlo);
    free(dhi);
    free(lo);
    free(hi);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: exactsum IN OUT same|causal|full mean:T|TAPSFILE P f32|f64\n");
        exit(2);
    }
    const char *mode = argv[3];
    size_t P = (size_t)strtoull(argv[5], NULL, 10), B = 0, PM = 0;
    if (sscanf(argv[5], "nupc:%zu:%zu", &B, &PM) == 2)
        P = 0;
    const int f32 = strcmp(argv[6], "f32") == 0;
    const int same = strcmp(mode, "same") == 0, full = strcmp(mode, "full") == 0;
    if (!same && !full && strcmp(mode, "causal") != 0)
        exit(2);
    size_t T;
    int mean;
    long double *h = read_taps(argv[4], &T, &mean);

    SF_INFO ii;
    double *x = read_all(argv[1], &ii);
    const int ibits = (ii.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16   ? 16
                      : (ii.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_24 ? 24
                                                                            : 0;
    if (!ibits) {
        fprintf(stderr, "exactsum: %s: 16- or 24-bit PCM input expected\n", argv[1]);
        exit(2);
    }
    const size_t C = (size_t)ii.channels, N = (size_t)ii.frames;
    const size_t M = full ? N + T - 1 : N;
    output o = read_output(argv[2], C, M);

    const size_t off = same ? (T - 1) / 2 : 0; /* y[i] = sum_k h[k] x[i + off - k] */
    const long double eps = f32 ? 0x1p-24L : 0x1p-53L;
    const long double factor = bound_factor(h, T, P, B, PM);
    long double *y = xmalloc(M * sizeof *y);
    int64_t *pre = mean ? xmalloc((N + 1) * sizeof *pre) : NULL;
    size_t bad = 0;
    long double worst = 0;
    for (size_t c = 0; c < C; c++) {
        long double maxx = 0;
        for (size_t i = 0; i < N; i++)
            if (fabsl((long double)x[i * C + c]) > maxx)
                maxx = fabsl((long double)x[i * C + c]);
        exact_sums(x, N, C, c, h, T, mean, off, M, pre, y);
        check_channel(&o, C, c, M, y, eps * factor * maxx, f32, !P && !B, &bad, &worst);
    }
    free(h);
    free(x);
    free(o.ints);
    free(o.dbls);
    free(y);
    free(pre);
    if (bad) {
        fprintf(stderr, "exactsum: %s: %zu of %zu samples wrong (largest |error| %.3Lg)\n", argv[2],
                bad, M * C, worst);
        return 1;
    }
    return 0;
}
