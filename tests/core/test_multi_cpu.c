/*
 * The several-device code (multi.c: chunks dealt by time, the FFT
 * method's history primed into each instance) without a GPU: with
 * GPUFILT_CPU_INSTANCES=N an engine on the cpu device runs N cpu
 * instances, as N GPUs would run, and its bytes must be one instance's.
 * For the FFT method (whole and per-channel taps, every mode,
 * chunks shorter than the history, where an instance forgets its history
 * and takes in all there is) and the direct method, through one
 * gf_engine_process call (each instance a contiguous segment of it in
 * one-device chunks, primed once, where the call is long enough: seg_min,
 * when set, is the least count of chunks each instance must take then,
 * where dealing chunks in turn would give it a few), through
 * gf_engine_process in pieces, through push/pull of random sizes and
 * through gf_engine_filter (the look-ahead's chunks in the segments too);
 * each run checks that every instance took chunks, and where segments are
 * expected, their lengths: each device moves as many bytes, where a
 * segment's device uploads the history it primes from and the device
 * before takes those frames, its own last ones, from it (the cpu backend
 * copies them out of the other instance's keeping, as the CUDA backend
 * does GPU to GPU, so these bytes check where they are taken from).
 */
#include "gpufilt.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mcase {
    const char *name;
    int instances, channels, per_channel;
    size_t frames, taps, partition, chunk;
    gf_precision prec;
    gf_mode mode;
    gf_method method;
    uint64_t seg_min; /* the least chunks an instance takes in one call (0: not checked) */
} mcase;

static const mcase cases[] = {
    {"FFT mono f32 same, chunks under the history", 2, 1, 0, 20000, 1000, 128, 512,
     GF_PRECISION_F32, GF_MODE_SAME, GF_METHOD_FFT, 0},
    /* segments of 99840 frames in chunks of 6 partitions (1536 frames) */
    {"FFT 3 ch f64 full, default chunks", 3, 3, 0, 300000, 3000, 256, 0, GF_PRECISION_F64,
     GF_MODE_FULL, GF_METHOD_FFT, 65},
    {"FFT 2 ch f32 causal, per-channel taps", 2, 2, 1, 100003, 5000, 512, 2048, GF_PRECISION_F32,
     GF_MODE_CAUSAL, GF_METHOD_FFT, 0},
    /* 2^22 taps x 8 channels in small: segments of 99328 frames in chunks
     * of 4 partitions (4096 frames), where in turn chunks hold 32768 */
    {"FFT 8 ch f32 same, a long call's segments", 2, 8, 0, 200000, 8192, 1024, 0, GF_PRECISION_F32,
     GF_MODE_SAME, GF_METHOD_FFT, 24},
    {"direct mono f32 same", 2, 1, 0, 30000, 63, 0, 1000, GF_PRECISION_F32, GF_MODE_SAME,
     GF_METHOD_DIRECT, 0},
};

static size_t filters_of(const mcase *k)
{
    return k->per_channel ? (size_t)k->channels : 1;
}

/* The run of one engine, instances or not (GPUFILT_CPU_INSTANCES set or
 * unset around its creation), by `how` (0: push/pull, 1: gf_engine_process
 * in pieces, 2: in one call, 3: gf_engine_filter): its output (malloc'd) or NULL; with
 * instances, the least chunks any of them took into *least (0 where the
 * engine does not report them all) and each one's frames into frames[]. */
static void *run(const mcase *k, const gf_config *c, const void *x, int instances, int how,
                 uint64_t *least, uint64_t *frames)
{
    char n[16];
    snprintf(n, sizeof n, "%d", instances);
    if (instances > 1)
        setenv("GPUFILT_CPU_INSTANCES", n, 1);
    gf_engine *e = NULL;
    int bad = tu_create(k->name, c, &e);
    unsetenv("GPUFILT_CPU_INSTANCES");
    if (bad)
        return NULL;
    const size_t O = (size_t)k->channels;
    const size_t ss = tu_sample_size(k->prec), cap = k->frames + gf_engine_max_pending(e) + k->taps;
    void *y = malloc(cap * O * ss);
    size_t got = 0;
    if (how == 3) {
        const gf_status st = gf_engine_filter(e, x, k->frames, y, &got);
        const size_t want = k->mode == GF_MODE_FULL ? k->frames + k->taps - 1 : k->frames;
        bad = TU_CHECK(st == GF_OK, "%s: gf_engine_filter: %s: %s", k->name, gf_strerror(st),
                       gf_engine_error(e));
        bad += TU_CHECK(got == want, "%s: gf_engine_filter gave %zu frames, not %zu", k->name, got,
                        want);
    } else {
        bad = how ? tu_run_process(e, x, k->frames, y, cap, O * ss,
                                   how == 2 ? TU_ALL : TU_RANDOM(7000, 3), &got)
                  : tu_run_stream(e, x, k->frames, y, cap, O * ss, TU_RANDOM(5000, 4),
                                  TU_RANDOM(6000, 5), &got);
    }
    if (instances > 1) {
        *least = gf_engine_cuda_devices(e, NULL, 0) == instances ? UINT64_MAX : 0;
        for (int d = 0; d < instances; d++) {
            const uint64_t took = gf_engine_device_chunks(e, d, &frames[d]);
            *least = took < *least ? took : *least;
        }
    }
    gf_engine_destroy(e);
    if (bad) {
        free(y);
        return NULL;
    }
    return y;
}

static int one_case(const mcase *k)
{
    const size_t ss = tu_sample_size(k->prec), C = (size_t)k->channels;
    const size_t O = C;
    double *taps = malloc(filters_of(k) * k->taps * sizeof *taps);
    for (size_t f = 0; f < filters_of(k); f++)
        tu_fill_taps(taps + f * k->taps, k->taps, 0x77 + f);
    void *x = malloc(k->frames * C * ss);
    tu_fill_signal(x, k->frames * C, ss, 0xabc + k->frames);
    gf_config c = tu_config(k->channels, k->taps, taps, k->mode, k->prec, GF_DEVICE_CPU);
    c.taps_per_channel = k->per_channel;
    c.method = k->method;
    c.partition = k->partition;
    c.chunk_frames = k->chunk;
    const size_t n = k->mode == GF_MODE_FULL ? k->frames + k->taps - 1 : k->frames;
    int bad = 0;
    void *want = run(k, &c, x, 1, 1, NULL, NULL);
    bad += TU_CHECK(want != NULL, "%s: one instance did not run", k->name);
    static const char *const hows[] = {"push/pull", "gf_engine_process in pieces",
                                       "one gf_engine_process", "gf_engine_filter"};
    for (int how = 3; how >= 0 && !bad; how--) {
        uint64_t least = 0, frames[GF_MAX_DEVICES] = {0};
        void *got = run(k, &c, x, k->instances, how, &least, frames);
        char what[160];
        snprintf(what, sizeof what, "%s, %d instances, %s", k->name, k->instances, hows[how]);
        bad += TU_CHECK(got != NULL, "%s: did not run", what);
        bad += TU_CHECK(least > 0, "%s: not every instance took chunks", what);
        if (how >= 2 && k->seg_min) {
            bad += TU_CHECK(least >= k->seg_min,
                            "%s: an instance took %llu chunks, not the %llu of a segment", what,
                            (unsigned long long)least, (unsigned long long)k->seg_min);
            /* Each later segment is primed from the K partitions (h
             * frames) before it, which its device uploads and keeps for
             * the device before, whose last frames they are: so that each
             * moves as many bytes, the first segment is longer than a
             * middle one by h/2 and the last shorter by h/2 (each to the
             * nearest partition; the last takes what is left): with 2, h
             * apart.
             * gf_engine_filter: the whole stream in the segments
             * (gf_engine_process leaves the flush to the last instance). */
            const uint64_t h = (k->taps + k->partition - 1) / k->partition * k->partition;
            const uint64_t P = k->partition, apart = k->instances == 2 ? h : h / 2;
            for (int i = 0; how == 3 && i + 1 < k->instances; i++) {
                const uint64_t d = frames[i] - frames[i + 1];
                bad += TU_CHECK(frames[i] > frames[i + 1] && d < apart + 2 * P && d + 2 * P > apart,
                                "%s: segments %d and %d of %llu and %llu frames, not %llu apart",
                                what, i, i + 1, (unsigned long long)frames[i],
                                (unsigned long long)frames[i + 1], (unsigned long long)apart);
            }
        }
        if (got)
            bad += tu_compare(what, want, got, n * O, ss, O);
        free(got);
    }
    printf("%-44s %6zu frames x %d ch, %d instances: %s\n", k->name, k->frames, k->channels,
           k->instances, bad ? "FAILED" : "one instance's bytes");
    free(want);
    free(x);
    free(taps);
    return bad;
}

static int all_cases(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += one_case(&cases[i]);
    return bad;
}

int main(void)
{
    static const tu_step steps[] = {all_cases};
    return tu_run_steps("test_multi_cpu", "several instances by time, one instance's bytes", steps,
                        sizeof steps / sizeof steps[0]);
}
