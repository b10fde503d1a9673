/*
 * copy_pool.c: split copies give the bytes memcpy gives, for sizes around
 * the split threshold, odd lengths and odd alignments, many times in a row
 * (the pool's hand-over between jobs), with 2 to 9 threads and with none;
 * and gf_pool_run calls each piece once, as many as the pool has threads.
 */
#include "copy_pool.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int copy_sizes(gf_copy_pool *p, int threads)
{
    const size_t sizes[] = {
        0, 1, 63, 64, 65, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3000017, 16u << 20};
    const size_t max = (16u << 20) + 64;
    unsigned char *src = malloc(max), *dst = malloc(max);
    int bad = TU_CHECK(src && dst, "out of memory");
    tu_rng r = {(uint64_t)threads};
    for (size_t i = 0; !bad && i < max; i++)
        src[i] = (unsigned char)tu_rng_next(&r);
    for (size_t k = 0; !bad && k < sizeof sizes / sizeof sizes[0]; k++)
        for (size_t off = 0; off < 3 && !bad; off++) {
            memset(dst, 0xA5, max);
            gf_copy(p, dst + off, src + 2 * off + 1, sizes[k]);
            bad += TU_CHECK(memcmp(dst + off, src + 2 * off + 1, sizes[k]) == 0,
                            "%d threads: %zu bytes at offset %zu differ", threads, sizes[k], off);
            bad += TU_CHECK(dst[off + sizes[k]] == 0xA5 && (off == 0 || dst[off - 1] == 0xA5),
                            "%d threads: %zu bytes: written outside", threads, sizes[k]);
        }
    free(src);
    free(dst);
    return bad;
}

typedef struct run_count {
    int calls[32]; /* piece i's calls (each its own element: no race) */
    int pieces[32];
} run_count;

static void count_piece(void *arg, int i, int pieces)
{
    run_count *r = arg;
    r->calls[i]++;
    r->pieces[i] = pieces;
}

/* gf_pool_run on pool p of `threads` threads (1: no pool). */
static int run_pieces(gf_copy_pool *p, int threads)
{
    int bad = 0;
    for (int round = 0; round < 50 && !bad; round++) {
        run_count r = {{0}, {0}};
        gf_pool_run(p, count_piece, &r);
        for (int i = 0; i < 32; i++)
            bad += TU_CHECK(r.calls[i] == (i < threads) && (i >= threads || r.pieces[i] == threads),
                            "%d threads: piece %d called %d times with %d pieces", threads, i,
                            r.calls[i], r.pieces[i]);
    }
    return bad;
}

static int test_pools(void)
{
    int bad = copy_sizes(NULL, 1) + run_pieces(NULL, 1);
    bad += TU_CHECK(gf_copy_pool_create(1) == NULL, "a pool of one thread");
    for (int threads = 2; threads <= 9 && !bad; threads++) {
        gf_copy_pool *p = gf_copy_pool_create(threads);
        bad += TU_CHECK(p != NULL, "no pool of %d threads", threads);
        for (int round = 0; round < 3 && !bad; round++)
            bad += copy_sizes(p, threads) + run_pieces(p, threads);
        gf_copy_pool_destroy(p);
    }
    return bad;
}

int main(void)
{
    const tu_step steps[] = {test_pools};
    return tu_run_steps("test_copy_pool", "split copies equal memcpy", steps, 1);
}
