/*
 * The live path's lock-free SPSC ring (src/cli/ring.c): parameter checks,
 * two-span regions at the wrap point, counters that wrap past SIZE_MAX, and
 * a two-thread stress test in which every element carries a sequence number
 * and a check word, read back in order with a running checksum.
 */
#include "live/ring.h"

#include <pthread.h>
#include <sched.h>
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

static void test_init(void)
{
    unsigned char buf[64];
    gf_ring r;
    CHECK(gf_ring_init(&r, 1, 0, buf) == -1);
    CHECK(gf_ring_init(&r, 1, 3, buf) == -1);
    CHECK(gf_ring_init(&r, 1, 12, buf) == -1);
    CHECK(gf_ring_init(&r, 0, 8, buf) == -1);
    CHECK(gf_ring_init(&r, 1, 8, NULL) == -1);
    CHECK(gf_ring_init(&r, 1, 1, buf) == 0);
    CHECK(gf_ring_init(&r, 8, 8, buf) == 0);
    CHECK(r.size == 8 && r.mask == 7 && r.elem == 8);
    CHECK(gf_ring_read_available(&r) == 0 && gf_ring_write_available(&r) == 8);
    CHECK(gf_ring_pow2(1) == 1 && gf_ring_pow2(2) == 2 && gf_ring_pow2(3) == 4);
    CHECK(gf_ring_pow2(4096) == 4096 && gf_ring_pow2(4097) == 8192);
    CHECK(gf_ring_pow2(SIZE_MAX) == 0);
}

/* Elements of 3 bytes (not a power of two) in a ring of 8. */
static void put3(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v ^ 0x5a);
}

static int get3_ok(const unsigned char *p, unsigned v)
{
    return p[0] == (unsigned char)v && p[1] == (unsigned char)(v >> 8) &&
           p[2] == (unsigned char)(v ^ 0x5a);
}

static void test_wrap_regions(void)
{
    unsigned char store[8 * 3], tmp[16 * 3];
    gf_ring r;
    CHECK(gf_ring_init(&r, 3, 8, store) == 0);
    for (unsigned i = 0; i < 5; i++)
        put3(tmp + 3 * i, i);
    CHECK(gf_ring_write(&r, tmp, 5) == 5);
    CHECK(gf_ring_read(&r, tmp, 3) == 3);
    CHECK(get3_ok(tmp, 0) && get3_ok(tmp + 3, 1) && get3_ok(tmp + 6, 2));
    /* write = 5, read = 3: 6 free, as [5, 8) then [0, 3). */
    CHECK(gf_ring_write_available(&r) == 6 && gf_ring_read_available(&r) == 2);
    void *p1, *p2;
    size_t n1, n2;
    CHECK(gf_ring_write_regions(&r, 100, &p1, &n1, &p2, &n2) == 6);
    CHECK(p1 == store + 5 * 3 && n1 == 3 && p2 == store && n2 == 3);
    /* Asking for less than the first span gives one span. */
    CHECK(gf_ring_write_regions(&r, 2, &p1, &n1, &p2, &n2) == 2);
    CHECK(p1 == store + 5 * 3 && n1 == 2 && p2 == NULL && n2 == 0);
    /* Fill 4 in place across the wrap: elements 5..8. */
    CHECK(gf_ring_write_regions(&r, 4, &p1, &n1, &p2, &n2) == 4);
    CHECK(n1 == 3 && n2 == 1);
    for (unsigned i = 0; i < n1; i++)
        put3((unsigned char *)p1 + 3 * i, 5 + i);
    put3(p2, 8);
    gf_ring_write_advance(&r, 4);
    CHECK(gf_ring_read_available(&r) == 6 && gf_ring_write_available(&r) == 2);
    /* Elements 3, 4 (never read) were written by the first gf_ring_write. */
    put3(tmp, 9);
    put3(tmp + 3, 10);
    put3(tmp + 6, 11);
    CHECK(gf_ring_write(&r, tmp, 3) == 2); /* only 2 fit */
    CHECK(gf_ring_write_available(&r) == 0 && gf_ring_read_available(&r) == 8);
    CHECK(gf_ring_write(&r, tmp, 1) == 0);
    /* Read regions across the wrap: [3, 8) then [0, 3). */
    CHECK(gf_ring_read_regions(&r, 8, &p1, &n1, &p2, &n2) == 8);
    CHECK(p1 == store + 3 * 3 && n1 == 5 && p2 == store && n2 == 3);
    const unsigned want[8] = {3, 4, 5, 6, 7, 8, 9, 10};
    for (unsigned i = 0; i < 8; i++) {
        const unsigned char *p =
            i < n1 ? (unsigned char *)p1 + 3 * i : (unsigned char *)p2 + 3 * (i - n1);
        CHECK(get3_ok(p, want[i]));
    }
    gf_ring_read_advance(&r, 0); /* nothing consumed yet */
    CHECK(gf_ring_read_available(&r) == 8);
    CHECK(gf_ring_read(&r, NULL, 2) == 2); /* discard 3, 4 */
    CHECK(gf_ring_read(&r, tmp, 16) == 6);
    for (unsigned i = 0; i < 6; i++)
        CHECK(get3_ok(tmp + 3 * i, want[2 + i]));
    CHECK(gf_ring_read(&r, tmp, 1) == 0);
    CHECK(gf_ring_read_regions(&r, 4, &p1, &n1, &p2, &n2) == 0 && n1 == 0 && n2 == 0);
    gf_ring_reset(&r);
    CHECK(gf_ring_read_available(&r) == 0 && gf_ring_write_available(&r) == 8);
}

/* The free-running counters overflow size_t: fill levels stay right. */
static void test_counter_wrap(void)
{
    uint32_t store[16], v[16];
    gf_ring r;
    CHECK(gf_ring_init(&r, sizeof(uint32_t), 16, store) == 0);
    atomic_store(&r.write_pos, SIZE_MAX - 20);
    atomic_store(&r.read_pos, SIZE_MAX - 20);
    uint32_t next_w = 0, next_r = 0;
    for (int round = 0; round < 40; round++) {
        const size_t nw = (size_t)(round * 7 % 11) + 1;
        for (size_t i = 0; i < nw; i++)
            v[i] = next_w + (uint32_t)i;
        const size_t w = gf_ring_write(&r, v, nw);
        next_w += (uint32_t)w;
        CHECK(gf_ring_read_available(&r) + gf_ring_write_available(&r) == 16);
        const size_t nr = (size_t)(round * 5 % 13) + 1;
        const size_t got = gf_ring_read(&r, v, nr);
        for (size_t i = 0; i < got; i++)
            CHECK(v[i] == next_r + i);
        next_r += (uint32_t)got;
        CHECK(gf_ring_read_available(&r) == (size_t)(next_w - next_r));
    }
    CHECK(atomic_load(&r.write_pos) < 1000); /* it did wrap */
}

/* Two threads: a producer of (seq, check) pairs and a consumer that checks
 * order and contents, through a small ring so the wrap is crossed often. */
typedef struct elem {
    uint64_t seq, check;
} elem;

#define STRESS_N   3000000u
#define STRESS_CAP 64u

typedef struct stress {
    gf_ring r;
    elem store[STRESS_CAP];
    uint64_t sum_in, sum_out, bad;
} stress;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static uint32_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

static void *producer(void *arg)
{
    stress *st = arg;
    uint64_t rs = 88172645463325252ULL, seq = 0, idle = 0;
    elem tmp[STRESS_CAP];
    while (seq < STRESS_N) {
        size_t want = rnd(&rs) % 40 + 1;
        if (want > STRESS_N - seq)
            want = (size_t)(STRESS_N - seq);
        if (rnd(&rs) & 1) {
            /* in place, through the regions */
            void *p1, *p2;
            size_t n1, n2;
            const size_t n = gf_ring_write_regions(&st->r, want, &p1, &n1, &p2, &n2);
            for (size_t i = 0; i < n; i++) {
                elem *e = i < n1 ? (elem *)p1 + i : (elem *)p2 + (i - n1);
                e->seq = seq + i;
                e->check = mix(seq + i);
                st->sum_in += e->check;
            }
            gf_ring_write_advance(&st->r, n);
            seq += n;
            if (n == 0 && ++idle % 4096 == 0)
                sched_yield(); /* full: let the consumer run */
        } else {
            for (size_t i = 0; i < want; i++) {
                tmp[i].seq = seq + i;
                tmp[i].check = mix(seq + i);
            }
            const size_t n = gf_ring_write(&st->r, tmp, want);
            for (size_t i = 0; i < n; i++)
                st->sum_in += tmp[i].check;
            seq += n;
            if (n == 0 && ++idle % 4096 == 0)
                sched_yield();
        }
    }
    return NULL;
}

static void *consumer(void *arg)
{
    stress *st = arg;
    uint64_t rs = 0x9e3779b97f4a7c15ULL, seq = 0, idle = 0;
    elem tmp[STRESS_CAP];
    while (seq < STRESS_N) {
        const size_t want = rnd(&rs) % 50 + 1;
        size_t n;
        if (rnd(&rs) & 1) {
            void *p1, *p2;
            size_t n1, n2;
            n = gf_ring_read_regions(&st->r, want, &p1, &n1, &p2, &n2);
            for (size_t i = 0; i < n; i++)
                tmp[i] = i < n1 ? ((elem *)p1)[i] : ((elem *)p2)[i - n1];
            gf_ring_read_advance(&st->r, n);
        } else {
            n = gf_ring_read(&st->r, tmp, want);
        }
        for (size_t i = 0; i < n; i++) {
            if (tmp[i].seq != seq + i || tmp[i].check != mix(seq + i))
                st->bad++;
            st->sum_out += tmp[i].check;
        }
        seq += n;
        /* Empty: poll hard (to catch data read before it is complete),
         * but let the producer run when it seems descheduled. */
        if (n == 0 && ++idle % 4096 == 0)
            sched_yield();
    }
    return NULL;
}

static void test_stress(void)
{
    stress *st = calloc(1, sizeof *st);
    CHECK(st != NULL);
    if (!st)
        return;
    CHECK(gf_ring_init(&st->r, sizeof(elem), STRESS_CAP, st->store) == 0);
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, producer, st) == 0);
    CHECK(pthread_create(&b, NULL, consumer, st) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK(st->bad == 0);
    CHECK(st->sum_in == st->sum_out);
    CHECK(gf_ring_read_available(&st->r) == 0);
    printf("stress: %u elements through a ring of %u, %llu out of order or torn, checksums "
           "%016llx / %016llx\n",
           STRESS_N, STRESS_CAP, (unsigned long long)st->bad, (unsigned long long)st->sum_in,
           (unsigned long long)st->sum_out);
    free(st);
}

int main(void)
{
    test_init();
    test_wrap_regions();
    test_counter_wrap();
    test_stress();
    if (failures) {
        fprintf(stderr, "test_ring: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_ring: all checks passed\n");
    return 0;
}
