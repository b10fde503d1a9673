/* Lock-free SPSC ring: see ring.h for the contract. */
#include "live/ring.h"

#include <stdint.h>
#include <string.h>

int gf_ring_init(gf_ring *r, size_t elem_bytes, size_t count, void *storage)
{
    if (!r || !storage || elem_bytes == 0 || count == 0 || (count & (count - 1)) != 0 ||
        count > SIZE_MAX / elem_bytes)
        return -1;
    r->data = storage;
    r->size = count;
    r->mask = count - 1;
    r->elem = elem_bytes;
    atomic_init(&r->write_pos, 0);
    atomic_init(&r->read_pos, 0);
    /* The audio callback must never take a hidden lock. */
    if (!atomic_is_lock_free(&r->write_pos))
        return -1;
    return 0;
}

size_t gf_ring_pow2(size_t n)
{
    size_t p = 1;
    while (p < n) {
        if (p > SIZE_MAX / 2)
            return 0;
        p *= 2;
    }
    return p;
}

void gf_ring_reset(gf_ring *r)
{
    atomic_store(&r->write_pos, 0);
    atomic_store(&r->read_pos, 0);
}

/* Each side reads its own counter relaxed (only it writes it) and the other
 * side's with acquire, pairing with that side's release in _advance: the
 * consumer sees the bytes the producer wrote before publishing them, and the
 * producer never overwrites bytes the consumer is still copying. */
size_t gf_ring_read_available(const gf_ring *r)
{
    const size_t w = atomic_load_explicit(&r->write_pos, memory_order_acquire);
    const size_t rd = atomic_load_explicit(&r->read_pos, memory_order_acquire);
    return w - rd;
}

size_t gf_ring_write_available(const gf_ring *r)
{
    const size_t rd = atomic_load_explicit(&r->read_pos, memory_order_acquire);
    const size_t w = atomic_load_explicit(&r->write_pos, memory_order_acquire);
    return r->size - (w - rd);
}

/* One or two spans of `n` elements starting at counter value `pos`. */
static size_t regions(const gf_ring *r, size_t pos, size_t n, void **p1, size_t *n1, void **p2,
                      size_t *n2)
{
    const size_t idx = pos & r->mask;
    if (idx + n > r->size) {
        *p1 = r->data + idx * r->elem;
        *n1 = r->size - idx;
        *p2 = r->data;
        *n2 = n - *n1;
    } else {
        *p1 = r->data + idx * r->elem;
        *n1 = n;
        *p2 = NULL;
        *n2 = 0;
    }
    return n;
}

size_t gf_ring_write_regions(gf_ring *r, size_t count, void **p1, size_t *n1, void **p2, size_t *n2)
{
    const size_t avail = gf_ring_write_available(r);
    if (count > avail)
        count = avail;
    return regions(r, atomic_load_explicit(&r->write_pos, memory_order_relaxed), count, p1, n1, p2,
                   n2);
}

void gf_ring_write_advance(gf_ring *r, size_t count)
{
    const size_t w = atomic_load_explicit(&r->write_pos, memory_order_relaxed);
    atomic_store_explicit(&r->write_pos, w + count, memory_order_release);
}

size_t gf_ring_read_regions(gf_ring *r, size_t count, void **p1, size_t *n1, void **p2, size_t *n2)
{
    const size_t avail = gf_ring_read_available(r);
    if (count > avail)
        count = avail;
    return regions(r, atomic_load_explicit(&r->read_pos, memory_order_relaxed), count, p1, n1, p2,
                   n2);
}

void gf_ring_read_advance(gf_ring *r, size_t count)
{
    const size_t rd = atomic_load_explicit(&r->read_pos, memory_order_relaxed);
    atomic_store_explicit(&r->read_pos, rd + count, memory_order_release);
}

size_t gf_ring_write(gf_ring *r, const void *src, size_t count)
{
    void *p1, *p2;
    size_t n1, n2;
    const size_t n = gf_ring_write_regions(r, count, &p1, &n1, &p2, &n2);
    const unsigned char *s = src;
    if (n1)
        memcpy(p1, s, n1 * r->elem);
    if (n2)
        memcpy(p2, s + n1 * r->elem, n2 * r->elem);
    gf_ring_write_advance(r, n);
    return n;
}

size_t gf_ring_read(gf_ring *r, void *dst, size_t count)
{
    void *p1, *p2;
    size_t n1, n2;
    const size_t n = gf_ring_read_regions(r, count, &p1, &n1, &p2, &n2);
    if (dst && n1) {
        unsigned char *d = dst;
        memcpy(d, p1, n1 * r->elem);
        if (n2)
            memcpy(d + n1 * r->elem, p2, n2 * r->elem);
    }
    gf_ring_read_advance(r, n);
    return n;
}
