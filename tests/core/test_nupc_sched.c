/*
 * The CUDA backend's schedule of the NUPC levels (nupc_scheme.h:
 * gf_nupc_gpu_async, gf_nupc_out_frames, gf_nupc_in_frames,
 * gf_nupc_stagger, as backend_cuda_nupc.cu uses them), checked on the host
 * by following a stream through it, chunk by chunk, for many level schemes
 * and chunkings, against the orderings the backend relies on:
 *
 *   - every output a chunk's sum reads was queued by then (in line, or on
 *     a level's stream, where the sum waits only for queued runs);
 *   - a chunk's copy into the input ring overwrites only input every level
 *     is done with: in line, what it ran; on its own stream, what the sums
 *     so far waited for (the least waiting the backend may do: an event at
 *     every block's end);
 *   - a block's run overwrites only outputs that earlier chunks summed;
 *   - with chunks of one first partition, as live audio's, no level is
 *     ever forced: a chunk queues at most one level's blocks on the
 *     streams, and every level is queued before its outputs are due;
 *   - gf_nupc_stagger by hand: nothing without a complete block, the level
 *     due first, every level whose outputs are due (a branch the streams
 *     above never need, kept for chunkings they do not try).
 *
 * Usage: test_nupc_sched (no arguments; exit 0 when every check holds).
 */
#include "backends/nupc_scheme.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct level_state {
    uint64_t taken;  /* frames queued to run */
    uint64_t joined; /* frames the sums have waited for (own stream) */
} level_state;

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Queue level l's complete blocks up to `given` at a chunk starting at
 * stream frame pos: each block's run overwrites the outputs R_l frames
 * before its own, which must have been summed (frames < pos). */
static int queue_level(const gf_nupc_level *v, level_state *st, size_t R, uint64_t given,
                       uint64_t pos, const char *what)
{
    int bad = 0;
    while (given - st->taken >= v->size) {
        const uint64_t g = st->taken;
        if (g + v->size + v->offset > pos + R) {
            fprintf(stderr,
                    "%s: level at %zu (S %zu): the run of input %llu overwrites outputs up to "
                    "%llu, not yet summed (chunk at %llu)\n",
                    what, v->offset, v->size, (unsigned long long)g,
                    (unsigned long long)(g + v->size + v->offset - R), (unsigned long long)pos);
            bad = 1;
        }
        st->taken += v->size;
    }
    return bad;
}

/* One stream through taps T with first partition B and largest M, in
 * chunks of F frames, or of random multiples of B up to F, long enough to
 * wrap every ring three times. Returns the failures; *forced counts the
 * levels the stagger forced. */
static int run(size_t T, size_t B, size_t M, size_t F, int random_chunks, size_t *forced)
{
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    const size_t L = gf_nupc_scheme(T, B, M, lv);
    char what[128];
    snprintf(what, sizeof what, "T %zu, B %zu, M %zu, F %zu%s", T, B, M, F,
             random_chunks ? " (random chunks)" : "");
    if (L == 0) {
        fprintf(stderr, "%s: no levels\n", what);
        return 1;
    }
    int async[GF_NUPC_MAX_LEVELS];
    uint64_t taken[GF_NUPC_MAX_LEVELS];
    size_t R[GF_NUPC_MAX_LEVELS];
    level_state st[GF_NUPC_MAX_LEVELS] = {{0, 0}};
    for (size_t l = 0; l < L; l++) {
        async[l] = gf_nupc_gpu_async(&lv[l], l, F);
        R[l] = gf_nupc_out_frames(&lv[l], F);
        if (R[l] % lv[l].size != 0) {
            fprintf(stderr, "%s: level %zu's ring of %zu frames\n", what, l, R[l]);
            return 1;
        }
    }
    const size_t Rin = gf_nupc_in_frames(lv, L, M, F);
    if (Rin % M != 0) {
        fprintf(stderr, "%s: input ring of %zu frames, not whole partitions of %zu\n", what, Rin,
                M);
        return 1;
    }
    int bad = 0;
    const uint64_t total = 3 * ((uint64_t)Rin + T + 2 * M);
    for (uint64_t pos = 0; pos < total && !bad;) {
        const size_t f = random_chunks ? B * (1 + (size_t)(rng() % (F / B))) : F;
        /* the copy overwrites input frames [pos + f - Rin - f, pos + f - Rin) */
        for (size_t l = 0; l < L; l++) {
            const uint64_t done = async[l] ? st[l].joined : st[l].taken;
            if (pos + f > Rin && pos + f - Rin > done) {
                fprintf(stderr,
                        "%s: chunk at %llu overwrites input up to %llu, level %zu is done with "
                        "%llu\n",
                        what, (unsigned long long)pos, (unsigned long long)(pos + f - Rin), l,
                        (unsigned long long)done);
                bad = 1;
            }
        }
        const uint64_t given = pos + f;
        for (size_t l = 0; l < L; l++)
            taken[l] = st[l].taken;
        const uint32_t start = gf_nupc_stagger(lv, L, async, taken, given);
        size_t started = 0;
        for (size_t l = 0; l < L; l++) {
            if (!async[l] && (start >> l & 1)) {
                fprintf(stderr, "%s: level %zu, in line, given to a stream\n", what, l);
                bad = 1;
            }
            if (async[l] && given > lv[l].offset && given - lv[l].offset > st[l].taken)
                (*forced)++;
            if (start >> l & 1) {
                started++;
                bad |= queue_level(&lv[l], &st[l], R[l], given, pos, what);
            }
        }
        if (started > 1 && !random_chunks && F == B) {
            fprintf(stderr, "%s: chunk at %llu queued %zu levels\n", what, (unsigned long long)pos,
                    started);
            bad = 1;
        }
        for (size_t l = 0; l < L; l++)
            if (!async[l])
                bad |= queue_level(&lv[l], &st[l], R[l], given, pos, what);
        /* the sum reads outputs [pos, given): inputs up to given - o_l */
        for (size_t l = 0; l < L; l++) {
            if (given <= lv[l].offset)
                continue;
            const uint64_t need = given - lv[l].offset;
            if (st[l].taken < need) {
                fprintf(stderr,
                        "%s: chunk at %llu sums level %zu's outputs of input up to %llu, "
                        "queued up to %llu\n",
                        what, (unsigned long long)pos, l, (unsigned long long)need,
                        (unsigned long long)st[l].taken);
                bad = 1;
            }
            const uint64_t end = (need + lv[l].size - 1) / lv[l].size * lv[l].size;
            if (async[l] && end > st[l].joined)
                st[l].joined = end; /* the event at the end of the block holding need - 1 */
        }
        pos = given;
    }
    return bad;
}

/* gf_nupc_stagger on states made by hand: 1000 taps, B = 16, M = 256:
 * levels of 16, 32, 64, 128, 256 frames at taps 0, 32, 96, 224, 480; the
 * last three on streams of their own. */
static int by_hand(void)
{
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    const size_t L = gf_nupc_scheme(1000, 16, 256, lv);
    const int async[] = {0, 0, 1, 1, 1};
    int bad = 0;
    if (L != 5 || lv[2].offset != 96 || lv[3].offset != 224 || lv[4].offset != 480) {
        fprintf(stderr, "by hand: the levels of 1000 taps are not as this test has them\n");
        return 1;
    }
    const struct {
        uint64_t taken[5], given;
        uint32_t want;
        const char *what;
    } cases[] = {
        {{1024, 1024, 1024, 1024, 1024}, 1024, 0, "no complete block"},
        {{1024, 1024, 1008, 1008, 1008}, 1024, 0, "partial blocks only"},
        {{1024, 1024, 960, 896, 768}, 1024, 1u << 2, "the one due first (64 at 960)"},
        {{1024, 1024, 1024, 896, 768}, 1024, 1u << 3, "the one due first (128 at 896)"},
        {{0, 0, 960, 768, 512}, 1024, 1u << 3 | 1u << 4, "both levels whose outputs are due"},
        {{0, 0, 0, 0, 0}, 48, 0, "the stream's first frames: no block complete"},
        {{0, 0, 0, 0, 0}, 64, 1u << 2, "the stream's first block of 64, not yet due"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t got = gf_nupc_stagger(lv, L, async, cases[i].taken, cases[i].given);
        if (got != cases[i].want) {
            fprintf(stderr, "by hand, %s: levels %#x, expected %#x\n", cases[i].what, (unsigned)got,
                    (unsigned)cases[i].want);
            bad++;
        }
    }
    return bad;
}

int main(void)
{
    static const size_t taps[] = {1, 100, 1000, 5000, 30000, 70000, 65536, 1 << 20, 1 << 22};
    static const size_t firsts[] = {16, 64, 128, 256};
    int bad = by_hand();
    size_t cases = 0, forced_live = 0, forced_other = 0;
    for (size_t i = 0; i < sizeof taps / sizeof taps[0]; i++)
        for (size_t j = 0; j < sizeof firsts / sizeof firsts[0]; j++) {
            const size_t T = taps[i], B = firsts[j];
            const size_t M = gf_nupc_max_partition(T, B, GF_DEVICE_CUDA);
            /* a live engine's chunk, a few blocks, the engine's least chunk
             * for NUPC (16 B or M), and one of 2^21 samples of stereo */
            const size_t most = 16 * B > M ? 16 * B : M;
            const size_t Fs[] = {B, 3 * B, 16 * B, most, (size_t)1 << 20};
            for (size_t f = 0; f < sizeof Fs / sizeof Fs[0]; f++) {
                const size_t F = Fs[f] / B * B;
                bad += run(T, B, M, F, 0, F == B ? &forced_live : &forced_other);
                if (F > B)
                    bad += run(T, B, M, F, 1, &forced_other);
                cases += F > B ? 2 : 1;
            }
        }
    if (forced_live) {
        fprintf(stderr, "chunks of one block forced a level %zu times\n", forced_live);
        bad++;
    }
    printf("test_nupc_sched: %zu streams; levels forced: %zu with chunks of one block, %zu with "
           "longer or random chunks: %s\n",
           cases, forced_live, forced_other, bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}
