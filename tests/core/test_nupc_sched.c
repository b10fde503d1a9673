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
#include <string.h>

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* One stream through the schedule: the levels, which run on streams of
 * their own, what each has queued, what the sums have waited for (own
 * stream), the rings' sizes. */
typedef struct stream {
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    size_t L, F, Rin, R[GF_NUPC_MAX_LEVELS];
    int async[GF_NUPC_MAX_LEVELS];
    uint64_t taken[GF_NUPC_MAX_LEVELS];
    uint64_t joined[GF_NUPC_MAX_LEVELS];
    char what[128];
} stream;

/* The levels of taps T (first partition B, largest M) and the rings for
 * chunks of at most F frames: 0, or 1 where their shapes are wrong. */
static int stream_init(stream *z, size_t T, size_t B, size_t M, size_t F, int random_chunks)
{
    memset(z, 0, sizeof *z);
    snprintf(z->what, sizeof z->what, "T %zu, B %zu, M %zu, F %zu%s", T, B, M, F,
             random_chunks ? " (random chunks)" : "");
    z->F = F;
    if ((z->L = gf_nupc_scheme(T, B, M, z->lv)) == 0) {
        fprintf(stderr, "%s: no levels\n", z->what);
        return 1;
    }
    for (size_t l = 0; l < z->L; l++) {
        z->async[l] = gf_nupc_gpu_async(&z->lv[l], l, F);
        z->R[l] = gf_nupc_out_frames(&z->lv[l], F);
        if (z->R[l] % z->lv[l].size != 0) {
            fprintf(stderr, "%s: level %zu's ring of %zu frames\n", z->what, l, z->R[l]);
            return 1;
        }
    }
    z->Rin = gf_nupc_in_frames(z->lv, z->L, M, F);
    if (z->Rin % M != 0) {
        fprintf(stderr, "%s: input ring of %zu frames, not whole partitions of %zu\n", z->what,
                z->Rin, M);
        return 1;
    }
    return 0;
}

/* The chunk [pos, pos + f) copied into the input ring overwrites input
 * frames up to pos + f - Rin: every level must be done with them (in line:
 * run; on a stream: waited for). */
static int check_copy(const stream *z, uint64_t pos, size_t f)
{
    int bad = 0;
    for (size_t l = 0; l < z->L; l++) {
        const uint64_t done = z->async[l] ? z->joined[l] : z->taken[l];
        if (pos + f > z->Rin && pos + f - z->Rin > done) {
            fprintf(stderr,
                    "%s: chunk at %llu overwrites input up to %llu, level %zu is done "
                    "with %llu\n",
                    z->what, (unsigned long long)pos, (unsigned long long)(pos + f - z->Rin), l,
                    (unsigned long long)done);
            bad = 1;
        }
    }
    return bad;
}

/* Queue level l's complete blocks up to `given` at a chunk starting at
 * stream frame pos: each block's run overwrites the outputs R_l frames
 * before its own, which must have been summed (frames < pos). */
static int queue_level(stream *z, size_t l, uint64_t given, uint64_t pos)
{
    const gf_nupc_level *v = &z->lv[l];
    int bad = 0;
    while (given - z->taken[l] >= v->size) {
        const uint64_t g = z->taken[l];
        if (g + v->size + v->offset > pos + z->R[l]) {
            fprintf(stderr,
                    "%s: level at %zu (S %zu): the run of input %llu overwrites outputs up to "
                    "%llu, not yet summed (chunk at %llu)\n",
                    z->what, v->offset, v->size, (unsigned long long)g,
                    (unsigned long long)(g + v->size + v->offset - z->R[l]),
                    (unsigned long long)pos);
            bad = 1;
        }
        z->taken[l] += v->size;
    }
    return bad;
}

/* A chunk's queueing: the levels gf_nupc_stagger starts on their streams,
 * then those in line. `one`: at most one level may start (chunks of one
 * block); *forced counts the levels whose outputs were due. */
static int queue_chunk(stream *z, uint64_t pos, uint64_t given, int one, size_t *forced)
{
    const uint32_t start = gf_nupc_stagger(z->lv, z->L, z->async, z->taken, given);
    size_t started = 0;
    int bad = 0;
    for (size_t l = 0; l < z->L; l++) {
        if (!z->async[l] && (start >> l & 1)) {
            fprintf(stderr, "%s: level %zu, in line, given to a stream\n", z->what, l);
            bad = 1;
        }
        if (z->async[l] && given > z->lv[l].offset && given - z->lv[l].offset > z->taken[l])
            (*forced)++;
        if (start >> l & 1) {
            started++;
            bad |= queue_level(z, l, given, pos);
        }
    }
    if (one && started > 1) {
        fprintf(stderr, "%s: chunk at %llu queued %zu levels\n", z->what, (unsigned long long)pos,
                started);
        bad = 1;
    }
    for (size_t l = 0; l < z->L; l++)
        if (!z->async[l])
            bad |= queue_level(z, l, given, pos);
    return bad;
}

/* The chunk's sum reads outputs [pos, given): level l's of input up to
 * given - o_l, which must be queued; on a stream, the sum waits for the
 * event at the end of the block holding the last (the least the backend
 * may wait for). */
static int check_sum(stream *z, uint64_t pos, uint64_t given)
{
    int bad = 0;
    for (size_t l = 0; l < z->L; l++) {
        if (given <= z->lv[l].offset)
            continue;
        const uint64_t need = given - z->lv[l].offset;
        if (z->taken[l] < need) {
            fprintf(stderr,
                    "%s: chunk at %llu sums level %zu's outputs of input up to %llu, queued up "
                    "to %llu\n",
                    z->what, (unsigned long long)pos, l, (unsigned long long)need,
                    (unsigned long long)z->taken[l]);
            bad = 1;
        }
        const uint64_t end = (need + z->lv[l].size - 1) / z->lv[l].size * z->lv[l].size;
        if (z->async[l] && end > z->joined[l])
            z->joined[l] = end;
    }
    return bad;
}

/* One stream through taps T with first partition B and largest M, in
 * chunks of F frames, or of random multiples of B up to F, long enough to
 * wrap every ring three times. Returns the failures; *forced counts the
 * levels the stagger forced. */
static int run(size_t T, size_t B, size_t M, size_t F, int random_chunks, size_t *forced)
{
    stream z;
    if (stream_init(&z, T, B, M, F, random_chunks))
        return 1;
    int bad = 0;
    const uint64_t total = 3 * ((uint64_t)z.Rin + T + 2 * M);
    for (uint64_t pos = 0; pos < total && !bad;) {
        const size_t f = random_chunks ? B * (1 + (size_t)(rng() % (F / B))) : F;
        const uint64_t given = pos + f;
        bad |= check_copy(&z, pos, f);
        bad |= queue_chunk(&z, pos, given, !random_chunks && F == B, forced);
        bad |= check_sum(&z, pos, given);
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
