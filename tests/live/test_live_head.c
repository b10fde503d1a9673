/*
 * --latency zero's head filter (src/cli/live/head.c), against a plain
 * serial loop of the direct method's rule (gpufilt.h: acc = h[0] x[i], then
 * acc = acc + h[k] x[i-k], each operation rounded on its own): bit for bit
 * in f32 and f64, one filter for every channel and one per channel, heads
 * of 1, 5, 64 and 512 taps, the input in callbacks of uneven sizes (1 to
 * the most planned), so that outputs do not depend on how the host cuts
 * the stream. And the tail's taps (gf_live_tail_taps): the rest of each
 * filter, the mean filter's 1/T made explicit.
 */
#include "live/head.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static uint64_t rng = 88172645463325252ULL;

static double uniform(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

enum { C = 2, N = 3000, MAXF = 300 };

/* Output i of channel c by the direct rule, taps h (H of them), in f32. */
static float serial_f32(const float *h, size_t H, const float *x, size_t i, size_t c)
{
    float acc = h[0] * x[i * C + c];
    for (size_t k = 1; k < H; k++) {
        const float xv = k <= i ? x[(i - k) * C + c] : 0.0f;
        const float prod = h[k] * xv;
        acc = acc + prod;
    }
    return acc;
}

static double serial_f64(const double *h, size_t H, const float *x, size_t i, size_t c)
{
    double acc = h[0] * (double)x[i * C + c];
    for (size_t k = 1; k < H; k++) {
        const double xv = k <= i ? (double)x[(i - k) * C + c] : 0.0;
        const double prod = h[k] * xv;
        acc = acc + prod;
    }
    return acc;
}

/* The head of H taps of t over x, in callbacks of uneven sizes: every
 * output bit for bit as the serial loop. Returns the outputs that differ. */
static size_t run_case(const gf_taps *t, size_t H, gf_precision p, const float *x)
{
    gf_live_head hd;
    if (gf_live_head_init(&hd, t, H, C, p, MAXF) != 0) {
        CHECK(!"out of memory");
        return 1;
    }
    size_t bad = 0;
    for (size_t at = 0, F; at < N; at += F) {
        F = 1 + (size_t)((uniform() + 1.0) * 0.5 * MAXF);
        F = F > MAXF ? MAXF : F;
        F = F > N - at ? N - at : F;
        gf_live_head_run(&hd, x + at * C, F);
        for (size_t j = 0; j < F; j++)
            for (size_t c = 0; c < C; c++) {
                const size_t f = hd.filters == 1 ? 0 : c;
                if (p == GF_PRECISION_F32) {
                    const float want = serial_f32((const float *)hd.h + f * H, H, x, at + j, c);
                    const float got = ((const float *)hd.y)[j * C + c];
                    bad += memcmp(&want, &got, sizeof got) != 0;
                } else {
                    const double want = serial_f64((const double *)hd.h + f * H, H, x, at + j, c);
                    const double got = ((const double *)hd.y)[j * C + c];
                    bad += memcmp(&want, &got, sizeof got) != 0;
                }
            }
    }
    gf_live_head_free(&hd);
    return bad;
}

static void test_heads(void)
{
    float *x = malloc(N * C * sizeof *x);
    double *h = malloc(2 * 600 * sizeof *h);
    if (!x || !h) {
        CHECK(!"out of memory");
        free(x);
        free(h);
        return;
    }
    for (size_t i = 0; i < N * C; i++)
        x[i] = (float)(0.7 * uniform());
    for (size_t k = 0; k < 2 * 600; k++)
        h[k] = uniform() / 8;
    static const size_t heads[] = {1, 5, 64, 512};
    for (size_t a = 0; a < sizeof heads / sizeof heads[0]; a++)
        for (int filters = 1; filters <= C; filters++)
            for (int f64 = 0; f64 <= 1; f64++) {
                const gf_taps t = {.h = h, .n = 600, .filters = filters};
                const size_t bad =
                    run_case(&t, heads[a], f64 ? GF_PRECISION_F64 : GF_PRECISION_F32, x);
                if (bad)
                    fprintf(stderr, "head %zu taps, %d filter(s), %s: %zu outputs differ\n",
                            heads[a], filters, f64 ? "f64" : "f32", bad);
                CHECK(bad == 0);
            }
    /* the mean filter (h NULL): taps of 1/T, T = 9 */
    const gf_taps mean = {.h = NULL, .n = 9, .filters = 1};
    CHECK(run_case(&mean, 9, GF_PRECISION_F32, x) == 0);
    gf_live_head hd;
    CHECK(gf_live_head_init(&hd, &mean, 9, C, GF_PRECISION_F32, 4) == 0);
    CHECK(((const float *)hd.h)[8] == (float)(1.0 / 9));
    gf_live_head_free(&hd);
    free(x);
    free(h);
}

static void test_tail_taps(void)
{
    double h[2 * 6] = {1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16};
    const gf_taps t = {.h = h, .n = 6, .filters = 2, .rate = 44100};
    gf_taps tail;
    CHECK(gf_live_tail_taps(&t, 4, &tail) == 0);
    CHECK(tail.n == 2 && tail.filters == 2 && tail.rate == 44100);
    CHECK(tail.h && tail.h[0] == 5 && tail.h[1] == 6 && tail.h[2] == 15 && tail.h[3] == 16);
    gf_taps_free(&tail);
    const gf_taps mean = {.h = NULL, .n = 10, .filters = 1};
    CHECK(gf_live_tail_taps(&mean, 3, &tail) == 0);
    CHECK(tail.n == 7 && tail.filters == 1 && tail.h && tail.h[6] == 1.0 / 10);
    gf_taps_free(&tail);
}

int main(void)
{
    test_heads();
    test_tail_taps();
    if (failures) {
        fprintf(stderr, "test_live_head: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_live_head: OK\n");
    return 0;
}
