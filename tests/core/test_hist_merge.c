/*
 * hist.c's merge of chunk partials into block records, with the widening
 * of counts split over a pool's threads (the CUDA engine's case, which CI
 * cannot run) and without: both give every record of a plain sum of the
 * partials that cover its block, for random chunk lengths from 1 frame to
 * the plan's chunk, 4096 bins and odd bin counts, each channel and mix,
 * 16- and 32-bit counts, with 2 to 5 threads. Large chunks reach the pool (a merge of at least
 * 2^16 counts), small ones widen on the caller's thread: both are here.
 */
#include "copy_pool.h"
#include "hist.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct merge_case {
    size_t bins, block, chunk, frames;
    int channels, mix;
    int pools;          /* some merges are large enough for the pool */
    size_t count_bytes; /* the plan's */
} merge_case;

/* Count i of partial h (plan p's width). */
static uint32_t count_at(const gf_hist_plan *p, gf_hist_part *h, size_t i)
{
    return p->count_bytes == 2 ? ((uint16_t *)(h + 1))[i] : gf_hist_part_bins(h)[i];
}

/* Random partials for the segments of frames [pos, pos + n): small header
 * counts, random order keys and sums, counts of every width's range. */
static void fill_parts(const gf_hist_plan *p, void *parts, size_t nseg, tu_rng *r)
{
    for (size_t k = 0; k < nseg; k++)
        for (int c = 0; c < p->nrec; c++) {
            gf_hist_part *h = gf_hist_part_at(parts, p, k, (size_t)c);
            h->min_inv = tu_rng_next(r);
            h->max_key = tu_rng_next(r);
            h->sq_lo = tu_rng_next(r);
            h->sq_hi = tu_rng_next(r) >> 40;
            h->below = (uint32_t)tu_rng_below(r, 100);
            h->above = (uint32_t)tu_rng_below(r, 100);
            h->nan = (uint32_t)tu_rng_below(r, 3);
            h->big = 0;
            for (size_t i = 0; i < p->bins; i++)
                if (p->count_bytes == 2)
                    ((uint16_t *)(h + 1))[i] = (uint16_t)(tu_rng_next(r) >> 48);
                else
                    gf_hist_part_bins(h)[i] = (uint32_t)(tu_rng_next(r) >> 32);
        }
}

/* The partials' counts added into want (blocks x nrec x bins) and the
 * below counts into below (blocks x nrec), the plain way. */
static void add_oracle(const gf_hist_plan *p, const void *parts, uint64_t pos, size_t n,
                       uint64_t *want, uint64_t *below)
{
    size_t first;
    const size_t nseg = gf_hist_segments(p, pos, n, &first);
    const uint64_t b0 = pos / p->block;
    for (size_t k = 0; k < nseg; k++)
        for (int c = 0; c < p->nrec; c++) {
            gf_hist_part *h = gf_hist_part_at((void *)parts, p, k, (size_t)c);
            const size_t rec = (size_t)(b0 + k) * (size_t)p->nrec + (size_t)c;
            below[rec] += h->below;
            for (size_t i = 0; i < p->bins; i++)
                want[rec * p->bins + i] += count_at(p, h, i);
        }
}

/* Every record the state has ready against the oracle; counts them. */
static int pop_check(gf_hist_state *h, const gf_hist_plan *p, const uint64_t *want,
                     const uint64_t *below, size_t *popped, const char *what)
{
    int bad = 0;
    gf_hist_record rec;
    while (!bad && gf_hist_pop(h, &rec)) {
        const size_t i = *popped;
        const size_t b = i / (size_t)p->nrec, c = i % (size_t)p->nrec;
        bad += TU_CHECK(rec.block == b && rec.channel == (p->mix ? -1 : (int)c),
                        "%s: record %zu is "
                        "block %llu channel %d",
                        what, i, (unsigned long long)rec.block, rec.channel);
        bad += TU_CHECK(!bad && rec.below == below[i], "%s: record %zu: below %llu, want %llu",
                        what, i, (unsigned long long)rec.below, (unsigned long long)below[i]);
        for (size_t k = 0; !bad && k < p->bins; k++)
            bad += TU_CHECK(rec.bins[k] == want[i * p->bins + k],
                            "%s: record %zu bin %zu: %llu, want %llu", what, i, k,
                            (unsigned long long)rec.bins[k],
                            (unsigned long long)want[i * p->bins + k]);
        (*popped)++;
    }
    return bad;
}

static int merge_run(const merge_case *mc, int threads)
{
    gf_hist_config hc = {
        .bins = mc->bins, .block_frames = mc->block, .lo = -1, .hi = 1, .mix = mc->mix};
    gf_hist_plan p;
    size_t chunk = mc->chunk;
    gf_hist_plan_make(&hc, mc->channels, 3, &chunk, &p);
    const size_t blocks = (mc->frames + mc->block - 1) / mc->block, nrec = (size_t)p.nrec;
    uint64_t *want = calloc(blocks * nrec * p.bins, sizeof *want);
    uint64_t *below = calloc(blocks * nrec, sizeof *below);
    void *parts = malloc(p.max_segs * nrec * p.part_bytes);
    gf_copy_pool *pool = threads > 1 ? gf_copy_pool_create(threads) : NULL;
    gf_hist_state *h = gf_hist_state_create(&p);
    char what[96];
    snprintf(what, sizeof what, "%zu bins, %d ch%s, %zu-byte counts, %d thread(s)", mc->bins,
             mc->channels, mc->mix ? " mixed" : "", p.count_bytes, threads);
    int bad =
        TU_CHECK(want && below && parts && h && (threads < 2 || pool), "%s: out of memory", what);
    bad += TU_CHECK(p.count_bytes == mc->count_bytes, "%s: want %zu-byte counts", what,
                    mc->count_bytes);
    if (!bad)
        gf_hist_state_use_pool(h, pool);
    tu_rng r = {mc->bins * 31 + (size_t)mc->channels};
    size_t popped = 0, pooled = 0;
    for (uint64_t pos = 0; !bad && pos < mc->frames;) {
        /* a third of the chunks whole, the rest 1 frame to whole */
        size_t n = tu_rng_below(&r, 3) ? 1 + tu_rng_below(&r, chunk) : chunk;
        if (n > mc->frames - pos)
            n = (size_t)(mc->frames - pos);
        size_t first;
        const size_t nseg = gf_hist_segments(&p, pos, n, &first);
        pooled += nseg * nrec * p.bins >= (1u << 16);
        fill_parts(&p, parts, nseg, &r);
        add_oracle(&p, parts, pos, n, want, below);
        bad += TU_CHECK(gf_hist_merge(h, parts, pos, n) == GF_OK, "%s: merge at %llu", what,
                        (unsigned long long)pos);
        /* the partials' buffer is the next chunk's: a record must not point into it */
        memset(parts, 0xA5, nseg * nrec * p.part_bytes);
        bad += pop_check(h, &p, want, below, &popped, what);
        pos += n;
    }
    if (!bad) {
        bad += TU_CHECK(gf_hist_finish(h) == GF_OK, "%s: finish", what);
        bad += pop_check(h, &p, want, below, &popped, what);
        bad += TU_CHECK(popped == blocks * nrec, "%s: %zu records, want %zu", what, popped,
                        blocks * nrec);
        bad += TU_CHECK((pooled > 0) == mc->pools, "%s: %zu merges large enough for the pool", what,
                        pooled);
    }
    gf_hist_state_destroy(h);
    gf_copy_pool_destroy(pool);
    free(parts);
    free(below);
    free(want);
    return bad;
}

static int test_merges(void)
{
    static const merge_case cases[] = {
        {4096, 700, 5000, 23000, 3, 0, 1, 2},
        {1000, 200, 8000, 40000, 3, 0, 1, 2},
        {4096, 100, 20000, 61000, 2, 1, 1, 2},
        {4096, 40000, 700000, 2100000, 3, 1, 1, 4}, /* 120000 samples a block */
        {8192, 65535, 700000, 1400000, 1, 0, 1, 2}, /* the most 16 bits hold */
        {8192, 65536, 700000, 1400000, 1, 0, 1, 4},
        {7, 50, 30000, 30001, 1, 0, 0, 2},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !bad; i++)
        for (int threads = 1; threads <= 5 && !bad; threads++)
            bad += merge_run(&cases[i], threads);
    return bad;
}

int main(void)
{
    const tu_step steps[] = {test_merges};
    return tu_run_steps("test_hist_merge", "pooled merges equal plain sums", steps, 1);
}
