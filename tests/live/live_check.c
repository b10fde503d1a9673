/*
 * live_check: the oracle for the live test. Computes the causal filter of
 * the signal jack_feed played with a plain serial loop (the arithmetic
 * contract of gpufilt.h: acc = h[0]*x[i], then acc = acc + h[k]*x[i-k], each
 * operation rounded on its own, x[i<0] = 0), finds where it starts in the
 * recording, and compares bit for bit.
 *
 *   live_check --signal X.f32 --record Y.f32 --channels C
 *              (--taps N | --coeffs FILE) [--precision f32|f64]
 *              [--latency L [--exact-latency 1]] [--xruns N]
 *   live_check --make-coeffs N SEED            (random taps, one per line)
 *
 * Alignment: the offset o with rec[o + i] == y[i] for the first 64 frames
 * is searched in [0, 16384] and must be unique. Then every frame of y must
 * equal rec[o + i]. If --latency is given it is reported against o; with
 * --exact-latency 1 and no xruns, o must equal it.
 *
 * Exit codes: 0 pass; 1 wrong samples; 2 usage or I/O error; 3 mismatch
 * while xruns were reported (--xruns > 0) that piecewise checking could not
 * explain (the caller may run again). With xruns, a mismatch is checked
 * piecewise: after each discontinuity the next 256 frames of y must be found
 * again exactly (within +-8192 frames of the old offset, resuming no more
 * than taps + 4096 frames later); at most 2 discontinuities per reported
 * xrun and at most 10% of the frames skipped, every frame outside the
 * skipped stretches must match exactly, and a stretch after which the
 * offset is unchanged must be silence (an xrun loses or inserts frames; it
 * does not change values in place).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH     16384
#define HEAD       64
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

/* Frame equality, bit for bit. */
static int frame_eq(const float *a, const float *b, int C)
{
    return memcmp(a, b, (size_t)C * sizeof(float)) == 0;
}

static int span_eq(const sig *rec, size_t o, const float *y, size_t i, size_t len, int C)
{
    if (o + i + len > rec->frames)
        return 0;
    return memcmp(rec->p + (o + i) * (size_t)C, y + i * (size_t)C,
                  len * (size_t)C * sizeof(float)) == 0;
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

/* Free everything main allocated and return rc. */
static int finish(int rc, sig *x, sig *rec, double *h, float *y, float *hf, double *hd)
{
    free(x->p);
    free(rec->p);
    free(h);
    free(y);
    free(hf);
    free(hd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--make-coeffs") == 0) {
        const int n = atoi(argv[2]);
        uint64_t s = strtoull(argv[3], NULL, 10) * 2654435761u + 1;
        printf("# %d random taps, seed %s\n", n, argv[3]);
        for (int k = 0; k < n; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            const double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
            printf("%.17g\n", (u - 0.5) * 2.0 / sqrt((double)n));
        }
        return 0;
    }
    const char *sig_path = NULL, *rec_path = NULL, *coeffs = NULL;
    int C = 2, f64 = 0;
    size_t T = 0;
    long latency = -1, xruns = 0;
    int exact_latency = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--signal") == 0)
            sig_path = v;
        else if (strcmp(a, "--record") == 0)
            rec_path = v;
        else if (strcmp(a, "--channels") == 0)
            C = atoi(v);
        else if (strcmp(a, "--taps") == 0)
            T = (size_t)atol(v);
        else if (strcmp(a, "--coeffs") == 0)
            coeffs = v;
        else if (strcmp(a, "--precision") == 0)
            f64 = strcmp(v, "f64") == 0;
        else if (strcmp(a, "--latency") == 0)
            latency = atol(v);
        else if (strcmp(a, "--xruns") == 0)
            xruns = atol(v);
        else if (strcmp(a, "--exact-latency") == 0)
            exact_latency = atoi(v);
        else {
            fprintf(stderr, "live_check: unknown option %s\n", a);
            return 2;
        }
    }
    if (!sig_path || !rec_path || C < 1 || (!T && !coeffs) || (argc % 2) == 0) {
        fprintf(stderr, "usage: live_check --signal X --record Y --channels C (--taps N | "
                        "--coeffs FILE) [--precision f32|f64] [--latency L] [--xruns N]\n");
        return 2;
    }
    double *h = NULL;
    if (coeffs) {
        h = load_coeffs(coeffs, &T);
        if (!h || T == 0) {
            fprintf(stderr, "live_check: cannot read taps from %s\n", coeffs);
            return 2;
        }
    }
    sig x = {NULL, 0}, rec = {NULL, 0};
    if (load(sig_path, C, &x) != 0 || load(rec_path, C, &rec) != 0) {
        free(x.p);
        free(rec.p);
        free(h);
        return 2;
    }
    const size_t N = x.frames;

    /* The oracle, in the engine's precision; output as float (what the
     * live path plays). */
    float *y = malloc(N * (size_t)C * sizeof(float));
    float *hf = malloc(T * sizeof(float));
    double *hd = malloc(T * sizeof(double));
    if (!y || !hf || !hd)
        return finish(2, &x, &rec, h, y, hf, hd);
    for (size_t k = 0; k < T; k++) {
        hf[k] = h ? (float)h[k] : 1.0f / (float)T;
        hd[k] = h ? h[k] : 1.0 / (double)T;
    }
    for (int c = 0; c < C; c++)
        for (size_t i = 0; i < N; i++) {
            if (!f64) {
                float acc = hf[0] * x.p[i * (size_t)C + (size_t)c];
                for (size_t k = 1; k < T; k++) {
                    const float xv = k <= i ? x.p[(i - k) * (size_t)C + (size_t)c] : 0.0f;
                    const float prod = hf[k] * xv;
                    acc = acc + prod;
                }
                y[i * (size_t)C + (size_t)c] = acc;
            } else {
                double acc = hd[0] * (double)x.p[i * (size_t)C + (size_t)c];
                for (size_t k = 1; k < T; k++) {
                    const double xv = k <= i ? (double)x.p[(i - k) * (size_t)C + (size_t)c] : 0.0;
                    const double prod = hd[k] * xv;
                    acc = acc + prod;
                }
                y[i * (size_t)C + (size_t)c] = (float)acc;
            }
        }

    /* Where does y start in the recording? */
    size_t o = 0;
    int found = 0;
    for (size_t cand = 0; cand <= SEARCH; cand++)
        if (span_eq(&rec, cand, y, 0, HEAD, C)) {
            if (!found)
                o = cand;
            found++;
        }
    if (found != 1) {
        printf("live_check: FAIL: the first %d filtered frames were found %d times in the first "
               "%d frames of the recording (want exactly once)\n",
               HEAD, found, SEARCH);
        return finish(xruns > 0 ? 3 : 1, &x, &rec, h, y, hf, hd);
    }
    printf("live_check: %zu frames x %d ch, %zu taps, %s; y starts at recording frame %zu", N, C, T,
           f64 ? "f64" : "f32", o);
    if (latency >= 0)
        printf(" (gpufilt reported %ld frames of latency: %s)", latency,
               (long)o == latency ? "equal" : "DIFFERENT");
    printf("\n");

    /* Strict: every frame at one offset. */
    size_t bad = 0, first_bad = N;
    for (size_t i = 0; i < N; i++)
        if (o + i >= rec.frames || !frame_eq(rec.p + (o + i) * (size_t)C, y + i * (size_t)C, C)) {
            if (!bad)
                first_bad = i;
            bad++;
        }
    if (bad == 0) {
        if (exact_latency && xruns == 0 && latency >= 0 && (long)o != latency) {
            printf("live_check: FAIL: bit-exact, but %zu frames late instead of the %ld gpufilt "
                   "reported\n",
                   o, latency);
            return finish(1, &x, &rec, h, y, hf, hd);
        }
        printf("live_check: PASS: all %zu frames bit-exact at offset %zu\n", N, o);
        return finish(0, &x, &rec, h, y, hf, hd);
    }
    printf("live_check: %zu of %zu frames differ at offset %zu, the first at frame %zu\n", bad, N,
           o, first_bad);
    if (xruns <= 0) {
        printf("live_check: FAIL: wrong samples with no xrun reported\n");
        return finish(1, &x, &rec, h, y, hf, hd);
    }

    /* Piecewise, since xruns were reported. */
    size_t i = 0, verified = 0, skipped = 0, disc = 0;
    while (i < N) {
        if (o + i < rec.frames && frame_eq(rec.p + (o + i) * (size_t)C, y + i * (size_t)C, C)) {
            verified++;
            i++;
            continue;
        }
        disc++;
        int ok = 0;
        const size_t i_end = i + T + 4096 < N - RESYNC_LEN ? i + T + 4096 : N - RESYNC_LEN;
        for (size_t i2 = i; i2 <= i_end && i2 + RESYNC_LEN <= N && !ok; i2++) {
            const size_t lo = o + i2 > RESYNC_WIN ? o + i2 - RESYNC_WIN : 0;
            for (size_t p = lo; p <= o + i2 + RESYNC_WIN && p + RESYNC_LEN <= rec.frames; p++) {
                if (memcmp(rec.p + p * (size_t)C, y + i2 * (size_t)C, sizeof(float)) != 0)
                    continue;
                if (p >= i2 && span_eq(&rec, p - i2, y, i2, RESYNC_LEN, C)) {
                    /* An xrun shifts the stream (frames lost or silence
                     * inserted); resuming at the same offset is only
                     * excused over silence (a cycle nobody recorded). */
                    if (p - i2 == o && !silent(&rec, o + i, i2 - i, C)) {
                        printf("live_check: piecewise: frames %zu..%zu are wrong, not shifted "
                               "and not silent\n",
                               i, i2);
                        return finish(1, &x, &rec, h, y, hf, hd);
                    }
                    skipped += i2 - i;
                    o = p - i2;
                    i = i2;
                    ok = 1;
                    break;
                }
            }
        }
        if (!ok) {
            printf("live_check: piecewise: no exact resumption within %zu frames after frame %zu\n",
                   (size_t)(T + 4096), i);
            return finish(3, &x, &rec, h, y, hf, hd);
        }
    }
    printf("live_check: piecewise: %zu frames verified exactly, %zu skipped around %zu "
           "discontinuities (%ld xruns reported)\n",
           verified, skipped, disc, xruns);
    if (disc > 2 * (size_t)xruns || skipped * 10 > N) {
        printf("live_check: too many discontinuities or frames skipped for the xruns reported\n");
        return finish(3, &x, &rec, h, y, hf, hd);
    }
    printf("live_check: PASS (piecewise, xruns reported)\n");
    return finish(0, &x, &rec, h, y, hf, hd);
}
