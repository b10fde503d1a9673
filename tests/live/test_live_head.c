/*
 * --latency zero's head filter (src/cli/live/head.c), against a plain
 * serial loop of the direct method's rule (gpufilt.h: acc = h[0] x[i], then
 * acc = acc + h[k] x[i-k], each operation rounded on its own): bit for bit
 * in f32 and f64, one filter for every channel and one per channel, heads
 * of 1, 5, 64 and 512 taps, the input in callbacks of uneven sizes (1 to
 * the most planned), so that outputs do not depend on how the host cuts
 * the stream. And the tail's taps (gf_live_tail_taps): the rest of each
 * filter, the mean filter's 1/T made explicit. And the callback's side
 * (gf_live_zero_play) with a simulated worker: right or silent, and right
 * again after an xrun (test_zero_play).
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

/*
 * --latency zero's callback (gf_live_zero_play) against a simulated worker
 * that filters the tail taps by the serial rule into the output ring
 * (primed with H frames of silence), one block after each callback: every
 * frame played equals head + tail of the whole stream, or is silent --
 * with the worker on time; late for three blocks, then catching up (the
 * frames it missed silent, the ones after exact again); and after input
 * it never got (silent while the tail may depend on it, exact after).
 */
enum { ZB = 8, ZH = 2 * ZB, ZT = 40, ZN = 120 * ZB, ZCAP = 256 };

typedef struct worker_sim {
    const float *h; /* the tail's taps, ZT - ZH */
    float x[ZN];    /* the input it got */
    size_t got, done;
    gf_ring *ring;
} worker_sim;

/* The worker's pending whole blocks, filtered into the ring. */
static void worker_run(worker_sim *w)
{
    for (; w->done + ZB <= w->got; w->done += ZB)
        for (size_t i = w->done; i < w->done + ZB; i++) {
            float acc = 0.0f;
            for (size_t k = 0; k < ZT - ZH; k++) {
                const float prod = w->h[k] * (k <= i ? w->x[i - k] : 0.0f);
                acc = k == 0 ? prod : acc + prod;
            }
            CHECK(gf_ring_write(w->ring, &acc, 1) == 1);
        }
}

/* Runs ZN frames; late: the worker skips callbacks [late, late + 3);
 * drop: at that callback its input ring is full; bad: that callback's
 * input is not the stream's (the host's xrun: noise in its place), with
 * `flag` flagged before it plays. Returns the frames neither exact nor silent; *quiet the
 * silent ones, *exact_after whether every frame from `after` on is exact. */
static size_t zero_case(int late, int drop, int bad, int flag, size_t after, size_t *quiet,
                        int *exact_after)
{
    float h[ZT], x[ZN], y[ZN];
    uint64_t s = 99;
    for (size_t i = 0; i < ZT + ZN; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const float u = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
        if (i < ZT)
            h[i] = u / 4;
        else
            x[i - ZT] = u;
    }
    for (size_t n = 0; n < ZN; n++) { /* the oracle: head + tail, each summed alone */
        float part[2] = {0, 0};
        for (size_t k = 0; k < ZT; k++) {
            const float prod = h[k] * (k <= n ? x[n - k] : 0.0f);
            part[k >= ZH] = k == 0 || k == ZH ? prod : part[k >= ZH] + prod;
        }
        y[n] = part[0] + part[1];
    }
    double hd[ZT];
    for (size_t k = 0; k < ZT; k++)
        hd[k] = h[k];
    const gf_taps t = {.h = hd, .n = ZT, .filters = 1};
    gf_live_head head;
    static float store[ZCAP], tail_buf[ZB];
    gf_ring ring;
    CHECK(gf_ring_init(&ring, sizeof(float), ZCAP, store) == 0);
    float zeros[ZH] = {0};
    CHECK(gf_ring_write(&ring, zeros, ZH) == ZH);
    if (gf_live_head_init(&head, &t, ZH, 1, GF_PRECISION_F32, ZB) != 0) {
        CHECK(!"out of memory");
        return 1;
    }
    static worker_sim w;
    memset(&w, 0, sizeof w);
    w.h = h + ZH;
    w.ring = &ring;
    gf_live_zero z = {.head = &head, .tail = &ring, .tail_buf = tail_buf, .tail_taps = ZT - ZH};
    size_t wrong = 0;
    *quiet = 0;
    *exact_after = 1;
    for (int cb = 0; cb * ZB < ZN; cb++) {
        float out[ZB], noise[ZB];
        const size_t at = (size_t)cb * ZB;
        const float *in = x + at;
        if (cb == bad) {
            for (size_t j = 0; j < ZB; j++)
                noise[j] = 0.5f - x[at + j];
            in = noise;
            if (flag)
                gf_live_zero_suspect(&z, ZB);
        }
        *quiet += gf_live_zero_play(&z, in, out, ZB);
        for (size_t j = 0; j < ZB; j++) {
            const int exact = memcmp(&out[j], &y[at + j], sizeof(float)) == 0;
            wrong += !exact && out[j] != 0.0f;
            if (at + j >= after && !exact)
                *exact_after = 0;
        }
        if (cb == drop)
            gf_live_zero_dropped(&z, ZB); /* the worker never gets this block */
        else {
            memcpy(w.x + w.got, in, ZB * sizeof(float));
            w.got += ZB;
        }
        if (cb < late || cb >= late + 3)
            worker_run(&w);
    }
    gf_live_head_free(&head);
    return wrong;
}

static void test_zero_play(void)
{
    size_t quiet;
    int exact_after;
    CHECK(zero_case(-10, -1, -1, 0, 0, &quiet, &exact_after) == 0);
    CHECK(quiet == 0 && exact_after);
    /* late for callbacks 10..12: the frames of callbacks 12 and 13 (their
     * tails were due from blocks 10 and 11) silent, every later one exact */
    CHECK(zero_case(10, -1, -1, 0, 14 * ZB, &quiet, &exact_after) == 0);
    CHECK(quiet == 2 * ZB && exact_after);
    /* block 20 never reaches the worker: silent for the tail's length plus
     * twice the ring, then exact (the hole realigns the ring) */
    const size_t mute = ZT - ZH + 2 * ZCAP;
    CHECK(zero_case(-10, 20, -1, 0, 21 * ZB + mute, &quiet, &exact_after) == 0);
    CHECK(quiet == mute && exact_after); /* (the hole is within the mute) */
    /* block 30 noise in the stream's place, flagged before it plays: it
     * and the filter's length after it silent (ZB + ZT frames), then exact */
    CHECK(zero_case(-10, -1, 30, 1, 30 * ZB + ZB + ZT, &quiet, &exact_after) == 0);
    CHECK(quiet == ZB + ZT && exact_after);
    /* unflagged, the same frames play wrong (what the flag is for) */
    CHECK(zero_case(-10, -1, 30, 0, 30 * ZB + ZB + ZT, &quiet, &exact_after) > 0);
    CHECK(quiet == 0 && exact_after);
}

int main(void)
{
    test_heads();
    test_tail_taps();
    test_zero_play();
    if (failures) {
        fprintf(stderr, "test_live_head: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_live_head: OK\n");
    return 0;
}
