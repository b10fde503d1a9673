/*
 * The seamless-chunk contract on long streams (> 1,000,000 frames): any
 * chunk size, any pattern of push / pull / process sizes, the ref and the
 * cpu backend all give the same bytes, and exactly as many output frames as
 * input frames, in same and causal mode. Also reset, repeated flush and the
 * calls refused after flush.
 *
 * The oracle for each signal is the cpu backend over the whole signal in one
 * chunk; the ref backend over the whole signal must equal it, and for short
 * filters every variant also runs on ref (a 255-tap ref run at chunk 1 over
 * 1.2M frames would cost too much in a Debug build).
 */
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHOLE SIZE_MAX /* chunk = the signal's length */

typedef struct seam_case {
    tu_signal_case s;
    int ref_all;   /* every variant on ref as well as cpu */
    unsigned mask; /* which of variants[] to run: bit v for variants[v] */
} seam_case;

typedef struct variant {
    size_t chunk;
    int process; /* gf_engine_process in pieces of a, else push a / pull b */
    tu_pattern a, b;
    int threads;
} variant;

/* The case's config c on device dev with a chunk size (WHOLE: the signal's
 * length). */
static gf_config case_config(gf_config c, const seam_case *sc, gf_device dev, size_t chunk)
{
    c.device = dev;
    c.chunk_frames = chunk == WHOLE ? sc->s.frames : chunk;
    return c;
}

/* Chunk sizes 1, 7, 4096, 1,000,000 and whole, each through push/pull with
 * irregular sizes (1 frame, random, everything) and through process in
 * pieces. The even and odd halves each hold every chunk size. */
static const variant variants[] = {
    {1, 0, {1, 0, 0, 0}, {0, 1, 3000, 1}, 0},
    {1, 1, {0, 1, 100000, 2}, {0, 0, 0, 0}, 0},
    {7, 0, {0, 1, 10000, 3}, {1, 0, 0, 0}, 3},
    {7, 1, {0, 1, 5000, 4}, {0, 0, 0, 0}, 1},
    {4096, 0, {0, 1, 100000, 5}, {0, 1, 50000, 6}, 0},
    {4096, 1, {4095, 0, 0, 0}, {0, 0, 0, 0}, 2},
    {1000000, 0, {0, 0, 0, 0}, {0, 1, 300000, 7}, 0},
    {1000000, 1, {0, 1, 700000, 8}, {0, 0, 0, 0}, 3},
    {WHOLE, 0, {1, 0, 0, 0}, {0, 0, 0, 0}, 0},
    {WHOLE, 1, {0, 1, 400000, 9}, {0, 0, 0, 0}, 0},
};

static void describe_pattern(char *buf, size_t size, tu_pattern p)
{
    if (p.random)
        snprintf(buf, size, "random 1..%zu", p.max);
    else if (p.fixed)
        snprintf(buf, size, "%zu", p.fixed);
    else
        snprintf(buf, size, "all");
}

static int run_case(const seam_case *sc)
{
    const double t0 = tu_now();
    const tu_signal_case *s = &sc->s;
    tu_input input;
    gf_config c0;
    if (tu_signal_case_setup(s, 0x5eed0000u + s->num_taps, 77 + s->num_taps, GF_DEVICE_CPU, &input,
                             &c0))
        return 1;
    const void *in = input.x;

    int bad = 0;
    size_t runs = 0;
    char label[256];
    gf_config c = case_config(c0, sc, GF_DEVICE_CPU, WHOLE);
    snprintf(label, sizeof label, "%s: cpu whole", s->name);
    void *base = tu_filter(label, &c, in, s->frames, 1, TU_ALL, TU_ALL);
    if (!base) {
        tu_input_free(&input);
        return 1;
    }
    c = case_config(c0, sc, GF_DEVICE_REF, WHOLE);
    snprintf(label, sizeof label, "%s: ref whole vs cpu whole", s->name);
    bad += tu_check_run(label, &c, in, s->frames, base, 1, TU_ALL, TU_ALL);
    runs += 2;

    for (size_t v = 0; v < sizeof variants / sizeof variants[0] && !bad; v++) {
        const variant *va = &variants[v];
        if (!(sc->mask & (1u << v)))
            continue;
        for (int d = 0; d < 2 && !bad; d++) {
            const gf_device dev = d ? GF_DEVICE_REF : GF_DEVICE_CPU;
            if (dev == GF_DEVICE_REF && !sc->ref_all)
                continue;
            c = case_config(c0, sc, dev, va->chunk);
            c.threads = va->threads;
            char pa[32], pb[32];
            describe_pattern(pa, sizeof pa, va->a);
            describe_pattern(pb, sizeof pb, va->b);
            if (va->process)
                snprintf(label, sizeof label, "%s: %s chunk %zu, process pieces %s", s->name,
                         tu_device_name(dev), c.chunk_frames, pa);
            else
                snprintf(label, sizeof label, "%s: %s chunk %zu, push %s / pull %s", s->name,
                         tu_device_name(dev), c.chunk_frames, pa, pb);
            bad += tu_check_run(label, &c, in, s->frames, base, va->process, va->a, va->b);
            runs++;
        }
    }
    free(base);
    tu_input_free(&input);
    printf("%-40s %zu frames x %d ch: %zu runs identical, %.2f s\n", s->name, s->frames,
           s->channels, runs, tu_now() - t0);
    return bad;
}

/* Push/pull and process calls interleaved in one stream, in random order. */
static int run_mixed(gf_engine *e, const void *in, size_t frames, void *out, size_t cap, size_t fb,
                     uint64_t seed, size_t *produced)
{
    tu_rng r = {seed};
    const unsigned char *src = in;
    unsigned char *dst = out;
    const size_t pending = gf_engine_max_pending(e);
    size_t off = 0, total = 0;
    gf_status st;
    while (off < frames) {
        size_t n = 1 + tu_rng_below(&r, 20000), got = 0;
        if (n > frames - off)
            n = frames - off;
        const size_t op = tu_rng_below(&r, 4);
        if (op == 3) {
            /* Streaming: push, submit the short chunk, wait, pull all. Every
             * output the input so far determines must come out. */
            size_t left = n;
            while (left > 0) {
                size_t used = 0;
                if ((st = gf_engine_push(e, src + off * fb, left, &used)) != GF_OK ||
                    (st = gf_engine_submit(e)) != GF_OK || (st = gf_engine_wait(e)) != GF_OK)
                    return TU_FAIL("mixed: push/submit/wait: %s", gf_strerror(st));
                off += used;
                left -= used;
                for (;;) {
                    if ((st = gf_engine_pull(e, dst + total * fb, cap - total, &got)) != GF_OK)
                        return TU_FAIL("mixed: pull after wait: %s", gf_strerror(st));
                    if (got == 0)
                        break;
                    total += got;
                }
            }
            const size_t lat = gf_engine_latency(e);
            const size_t want = off > lat ? off - lat : 0;
            if (total != want)
                return TU_FAIL("mixed: after submit+wait %zu frames out of %zu in, want %zu", total,
                               off, want);
            continue;
        }
        if (op == 0) {
            if (cap - total < n + pending)
                return TU_FAIL("mixed: test bug, output buffer too small");
            if ((st = gf_engine_process(e, src + off * fb, n, dst + total * fb, &got)) != GF_OK)
                return TU_FAIL("mixed: process: %s", gf_strerror(st));
            off += n;
        } else {
            size_t used = 0;
            if ((st = gf_engine_push(e, src + off * fb, n, &used)) != GF_OK)
                return TU_FAIL("mixed: push: %s", gf_strerror(st));
            off += used;
            const size_t m = 1 + tu_rng_below(&r, 30000);
            if ((st = gf_engine_pull(e, dst + total * fb, m < cap - total ? m : cap - total,
                                     &got)) != GF_OK)
                return TU_FAIL("mixed: pull: %s", gf_strerror(st));
        }
        total += got;
    }
    if ((st = gf_engine_flush(e)) != GF_OK)
        return TU_FAIL("mixed: flush: %s", gf_strerror(st));
    for (;;) {
        size_t got = 0;
        if ((st = gf_engine_pull(e, dst + total * fb, cap - total, &got)) != GF_OK)
            return TU_FAIL("mixed: pull after flush: %s", gf_strerror(st));
        if (got == 0)
            break;
        total += got;
    }
    *produced = total;
    return 0;
}

/* Push everything, flush, pull everything: the output count goes to *n. */
static gf_status stream_all(gf_engine *e, const void *in, size_t frames, void *out, size_t cap,
                            size_t fb, size_t *n)
{
    return tu_run_stream(e, in, frames, out, cap, fb, TU_RANDOM(50000, 99), TU_RANDOM(40000, 98), n)
               ? GF_ERR_STATE
               : GF_OK;
}

/* test_lifecycle's stream: N frames of C channels. */
enum { LIFE_N = 300000, LIFE_C = 2 };

/* One engine of test_lifecycle, its input, and the output of the whole
 * stream in one chunk to compare with. */
typedef struct life {
    const char *what;
    gf_engine *e;
    void *in, *base;
    unsigned char *out;
    size_t cap, fb, ss;
} life;

static void life_close(life *l)
{
    gf_engine_destroy(l->e);
    free(l->out);
    free(l->base);
    free(l->in);
}

static int life_open(life *l, const gf_config *c, const char *what)
{
    enum { N = LIFE_N, C = LIFE_C };
    memset(l, 0, sizeof *l);
    l->what = what;
    l->ss = tu_sample_size(c->precision);
    l->fb = C * l->ss;
    l->in = malloc(N * l->fb);
    if (!l->in)
        return TU_FAIL("out of memory");
    tu_fill_signal(l->in, (size_t)N * C, l->ss, 31337);
    gf_config cw = *c;
    cw.chunk_frames = N;
    l->base = tu_filter(what, &cw, l->in, N, 1, TU_ALL, TU_ALL);
    if (!l->base || gf_engine_create(c, &l->e, NULL, 0) != GF_OK) {
        life_close(l);
        return TU_FAIL("%s: setup", what);
    }
    l->cap = N + gf_engine_max_pending(l->e) + 1;
    l->out = malloc(l->cap * l->fb);
    if (!l->out) {
        life_close(l);
        return TU_FAIL("out of memory");
    }
    return 0;
}

/* A stream that ended with st after n frames out: the whole stream's output. */
static int life_output(const life *l, const char *label, gf_status st, size_t n)
{
    enum { N = LIFE_N, C = LIFE_C };
    int bad = TU_CHECK(st == GF_OK && n == N, "%s: %zu frames out", label, n);
    if (st == GF_OK && n == N)
        bad += tu_compare(label, l->base, l->out, (size_t)N * C, l->ss, C);
    return bad;
}

/* 1. A full stream, reset, the same stream again. */
static int life_restart(const life *l)
{
    int bad = 0;
    char label[192];
    for (int round = 0; round < 2; round++) {
        size_t n = 0;
        memset(l->out, 0, l->cap * l->fb);
        gf_status st = stream_all(l->e, l->in, LIFE_N, l->out, l->cap, l->fb, &n);
        snprintf(label, sizeof label, "%s: stream %d of 2 (the second after reset)", l->what,
                 round + 1);
        bad += life_output(l, label, st, n);
        bad += TU_CHECK(gf_engine_reset(l->e) == GF_OK, "%s: reset", label);
    }
    return bad;
}

/* 2. Reset in the middle of a stream forgets the input. */
static int life_mid_reset(const life *l)
{
    enum { N = LIFE_N };
    size_t n = 0, got = 0, used = 0;
    int bad = TU_CHECK(gf_engine_push(l->e, l->in, N / 3, &used) == GF_OK, "%s: push", l->what);
    bad += TU_CHECK(gf_engine_pull(l->e, l->out, N, &got) == GF_OK, "%s: pull", l->what);
    bad += TU_CHECK(gf_engine_reset(l->e) == GF_OK, "%s: reset mid-stream", l->what);
    gf_status st = stream_all(l->e, l->in, N, l->out, l->cap, l->fb, &n);
    char label[192];
    snprintf(label, sizeof label, "%s: stream after a mid-stream reset", l->what);
    bad += life_output(l, label, st, n);
    gf_engine_reset(l->e);
    return bad;
}

/* 3. Flush twice, pull part, flush again, pull the rest; push and process
 * are refused after flush. */
static int life_flushes(const life *l)
{
    enum { N = LIFE_N };
    gf_engine *e = l->e;
    const char *what = l->what;
    unsigned char *out = l->out;
    const size_t cap = l->cap, fb = l->fb;
    size_t off = 0, n = 0, got = 0, used = 0;
    int bad = 0;
    while (off < N) {
        bad +=
            TU_CHECK(gf_engine_push(e, (unsigned char *)l->in + off * fb, N - off, &used) == GF_OK,
                     "%s: push", what);
        off += used;
        bad += TU_CHECK(gf_engine_pull(e, out + n * fb, cap - n, &got) == GF_OK, "%s: pull", what);
        n += got;
    }
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: flush", what);
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: second flush", what);
    bad += TU_CHECK(gf_engine_pull(e, out + n * fb, 5, &got) == GF_OK, "%s: pull", what);
    n += got;
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: third flush", what);
    gf_status st = gf_engine_push(e, l->in, 1, &used);
    bad += TU_CHECK(st == GF_ERR_STATE && used == 0, "%s: push after flush: %d, consumed %zu", what,
                    (int)st, used);
    st = gf_engine_process(e, l->in, 1, out + n * fb, &got);
    bad += TU_CHECK(st == GF_ERR_STATE && got == 0, "%s: process after flush: %d, produced %zu",
                    what, (int)st, got);
    while ((st = gf_engine_pull(e, out + n * fb, cap - n, &got)) == GF_OK && got > 0)
        n += got;
    bad += TU_CHECK(st == GF_OK, "%s: pull after flush: %s", what, gf_strerror(st));
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: flush after the end", what);
    bad += TU_CHECK(gf_engine_pull(e, out + n * fb, cap - n, &got) == GF_OK && got == 0,
                    "%s: pull after the end gave %zu frames", what, got);
    char label[192];
    snprintf(label, sizeof label, "%s: repeated flush", what);
    return bad + life_output(l, label, GF_OK, n);
}

/* 4. After reset, pushes are accepted again; mixed call patterns. */
static int life_mixed(const life *l)
{
    int bad = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        bad += TU_CHECK(gf_engine_reset(l->e) == GF_OK, "%s: reset", l->what);
        char label[192];
        snprintf(label, sizeof label, "%s: mixed push/pull/process, seed %llu", l->what,
                 (unsigned long long)seed);
        size_t n = 0;
        if (run_mixed(l->e, l->in, LIFE_N, l->out, l->cap, l->fb, seed, &n)) {
            bad += TU_FAIL("%s: run failed", label);
            continue;
        }
        bad += life_output(l, label, GF_OK, n);
    }
    return bad;
}

/* 5. An empty stream: flush at once, nothing out. */
static int life_empty(const life *l)
{
    size_t got = 0;
    gf_engine_reset(l->e);
    int bad = TU_CHECK(gf_engine_flush(l->e) == GF_OK, "%s: flush empty", l->what);
    bad += TU_CHECK(gf_engine_pull(l->e, l->out, l->cap, &got) == GF_OK && got == 0,
                    "%s: empty stream gave %zu frames", l->what, got);
    return bad;
}

/* Reset, repeated flush, refused calls after flush, and mixed call patterns,
 * on a shorter stream (both backends, f32 and f64, both modes). */
static int test_lifecycle(void)
{
    const double t0 = tu_now();
    int bad = 0;
    double taps[25];
    tu_fill_taps(taps, 25, 4242);
    for (int p = 0; p < 2; p++)
        for (int m = 0; m < 2; m++)
            for (int d = 0; d < 2; d++) {
                gf_config c = tu_config(LIFE_C, 25, taps, m ? GF_MODE_CAUSAL : GF_MODE_SAME,
                                        p ? GF_PRECISION_F64 : GF_PRECISION_F32,
                                        d ? GF_DEVICE_REF : GF_DEVICE_CPU);
                c.chunk_frames = 10007;
                char what[128];
                snprintf(what, sizeof what, "lifecycle %s %s %s", tu_device_name(c.device),
                         p ? "f64" : "f32", m ? "causal" : "same");
                life l;
                if (life_open(&l, &c, what))
                    return bad + 1;
                bad += life_restart(&l);
                bad += life_mid_reset(&l);
                bad += life_flushes(&l);
                bad += life_mixed(&l);
                bad += life_empty(&l);
                life_close(&l);
            }
    printf("%-40s %d frames x %d ch: %.2f s\n", "lifecycle (reset, flush, mixed calls)", LIFE_N,
           LIFE_C, tu_now() - t0);
    return bad;
}

#define ALL  0x3ffu
#define EVEN 0x199u /* variants 0, 3, 4, 7, 8 */
#define ODD  0x266u /* variants 1, 2, 5, 6, 9 */

/* Every case through every variant it names. */
static int seam_cases(void)
{
    const seam_case cases[] = {
        {{"f32 stereo T=5 same", 2, 1200000, GF_PRECISION_F32, GF_MODE_SAME, 5, 0}, 1, ALL},
        {{"f32 stereo T=5 causal mean", 2, 1200000, GF_PRECISION_F32, GF_MODE_CAUSAL, 5, 1},
         1,
         ALL},
        {{"f32 stereo T=255 same", 2, 1200000, GF_PRECISION_F32, GF_MODE_SAME, 255, 0}, 0, EVEN},
        {{"f32 mono T=255 causal mean", 1, 1050000, GF_PRECISION_F32, GF_MODE_CAUSAL, 255, 1},
         0,
         ODD},
        {{"f64 mono T=5 causal", 1, 1100000, GF_PRECISION_F64, GF_MODE_CAUSAL, 5, 0}, 1, ALL},
        {{"f64 mono T=255 same mean", 1, 1100000, GF_PRECISION_F64, GF_MODE_SAME, 255, 1}, 0, ODD},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !bad; i++)
        bad += run_case(&cases[i]);
    return bad;
}

int main(void)
{
    static const tu_step steps[] = {seam_cases, test_lifecycle};
    return tu_run_steps("test_seams", "all identical", steps, sizeof steps / sizeof steps[0]);
}
