/*
 * FFTW's wisdom (gf_fft_wisdom_make, gf_fft_wisdom_load): engines made
 * before any wisdom (FFTW_ESTIMATE plans), then wisdom measured for the
 * two transform sizes used and loaded, then two engines with it: the two
 * give the same bytes, and every output of all three is within the FFT
 * method's bound of the exact sum (long double), f32 and f64. The file
 * holds both precisions' wisdom; bad sizes, a missing file, text that is
 * not wisdom and a file with one precision's wisdom only are refused with
 * their reasons. A build whose FFT is KissFFT says it has no wisdom.
 */
#include "gpufilt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

enum { T = 300, N = 6000 };
static double h[T], x[N];

/* The filter of x by h (causal), as P-partition FFT engine output in
 * precision p: a malloc'd array of N samples, or NULL. */
static void *run(size_t P, gf_precision p, gf_engine **keep)
{
    gf_config c = gf_config_default();
    c.channels = 1;
    c.taps = h;
    c.num_taps = T;
    c.mode = GF_MODE_CAUSAL;
    c.method = GF_METHOD_FFT;
    c.partition = P;
    c.precision = p;
    c.device = GF_DEVICE_CPU;
    const size_t ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    gf_engine *e = NULL;
    char detail[256];
    if (gf_engine_create(&c, &e, detail, sizeof detail) != GF_OK) {
        fprintf(stderr, "engine: %s\n", detail);
        return NULL;
    }
    unsigned char *in = malloc(N * ss), *out = malloc((N + 2 * P) * ss);
    for (size_t i = 0; in && i < N; i++) {
        if (p == GF_PRECISION_F32)
            ((float *)in)[i] = (float)x[i];
        else
            ((double *)in)[i] = x[i];
    }
    size_t got = 0, more = 1;
    gf_status st = in && out ? gf_engine_process(e, in, N, out, &got) : GF_ERR_NO_MEMORY;
    if (st == GF_OK)
        st = gf_engine_flush(e);
    while (st == GF_OK && more && got < N) {
        st = gf_engine_pull(e, out + got * ss, N - got, &more);
        got += more;
    }
    if (st != GF_OK || got != N) {
        free(out);
        out = NULL;
    }
    free(in);
    *keep = e;
    return out;
}

/* Outputs farther from the exact sum than the engine's bound. */
static size_t beyond_bound(const gf_engine *e, const void *y, gf_precision p)
{
    const double bound = gf_engine_error_bound(e, 0, 1.0);
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        long double s = 0;
        for (size_t k = 0; k < T && k <= i; k++) {
            const double xv = p == GF_PRECISION_F32 ? (double)(float)x[i - k] : x[i - k];
            const double hv = p == GF_PRECISION_F32 ? (double)(float)h[k] : h[k];
            s += (long double)hv * xv;
        }
        const double v = p == GF_PRECISION_F32 ? ((const float *)y)[i] : ((const double *)y)[i];
        bad += fabsl((long double)v - s) > bound;
    }
    return bad;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void test_errors(const char *dir)
{
    char detail[512], path[600];
    const size_t odd = 63;
    CHECK(gf_fft_wisdom_make("w.txt", &odd, 1, detail, sizeof detail) == GF_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(detail, "transform size 63 is not even in 2..16777216") == 0);
    CHECK(gf_fft_wisdom_load("/nonexistent/w.txt", detail, sizeof detail) ==
          GF_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(detail, "cannot read '/nonexistent/w.txt': No such file or directory") == 0);
    snprintf(path, sizeof path, "%s/garbage.txt", dir);
    CHECK(write_text(path, "(not wisdom)\n") == 0);
    CHECK(gf_fft_wisdom_load(path, detail, sizeof detail) == GF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(detail, "garbage.txt' is not wisdom that this FFTW (fftw-3") != NULL);
    remove(path);
}

int main(void)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < N + T; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        if (i < N)
            x[i] = u;
        else
            h[i - N] = u / 8;
    }
    char dir[] = "/tmp/gf_wisdom_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[600], detail[512];
    snprintf(path, sizeof path, "%s/w.txt", dir);
    const size_t sizes[] = {64, 1024}; /* partitions 32 and 512 */
    /* KissFFT: no wisdom to make */
    if (gf_fft_wisdom_load(path, detail, sizeof detail) == GF_ERR_UNSUPPORTED) {
        CHECK(strcmp(detail, "this build's FFT is KissFFT: no FFTW wisdom") == 0);
        CHECK(gf_fft_wisdom_make(path, sizes, 2, detail, sizeof detail) == GF_ERR_UNSUPPORTED);
        rmdir(dir);
        printf("test_fft_wisdom: KissFFT build: %s\n", failures ? "FAILED" : "OK");
        return failures != 0;
    }
    test_errors(dir);
    static const gf_precision precs[] = {GF_PRECISION_F32, GF_PRECISION_F64};
    /* before any wisdom: FFTW_ESTIMATE */
    gf_engine *est[2][2] = {{NULL}};
    void *y_est[2][2];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            y_est[a][b] = run(sizes[a] / 2, precs[b], &est[a][b]);
    CHECK(gf_fft_wisdom_make(path, sizes, 2, detail, sizeof detail) == GF_OK);
    FILE *f = fopen(path, "r");
    char text[1 << 16] = "";
    if (f) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    CHECK(strstr(text, " fftw_wisdom") != NULL && strstr(text, " fftwf_wisdom") != NULL);
    CHECK(gf_fft_wisdom_load(path, detail, sizeof detail) == GF_OK);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            gf_engine *e1 = NULL, *e2 = NULL;
            void *y1 = run(sizes[a] / 2, precs[b], &e1), *y2 = run(sizes[a] / 2, precs[b], &e2);
            const size_t ss = precs[b] == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
            CHECK(y_est[a][b] && y1 && y2);
            if (y_est[a][b] && y1 && y2) {
                CHECK(memcmp(y1, y2, N * ss) == 0); /* the same wisdom, the same bytes */
                CHECK(beyond_bound(est[a][b], y_est[a][b], precs[b]) == 0);
                CHECK(beyond_bound(e1, y1, precs[b]) == 0);
            }
            free(y1);
            free(y2);
            free(y_est[a][b]);
            gf_engine_destroy(e1);
            gf_engine_destroy(e2);
            gf_engine_destroy(est[a][b]);
        }
    /* one precision's wisdom only: refused */
    char *fl = strstr(text, " fftwf_wisdom");
    while (fl && fl > text && *fl != '(')
        fl--;
    if (fl)
        *fl = '\0';
    CHECK(write_text(path, text) == 0);
    CHECK(gf_fft_wisdom_load(path, detail, sizeof detail) == GF_ERR_INVALID_ARGUMENT);
    remove(path);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "test_fft_wisdom: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_fft_wisdom: OK\n");
    return 0;
}
