/*
 * A lock-free single-producer / single-consumer ring of fixed-size elements
 * (audio frames), after PortAudio's pa_ringbuffer, which PortAudio does not
 * install as a public header.
 *
 * Capacity is a power of two. The read and write positions are free-running
 * counters (size_t, C11 atomics, masked on use), so a full ring and an empty
 * one are told apart without a wasted slot, and wraparound of the counters
 * themselves is harmless: fill = write - read modulo 2^N.
 *
 * Thread safety: exactly one producer thread calls the write functions and
 * exactly one consumer thread calls the read functions, concurrently; no
 * locks, no allocation, no system calls, so both sides may be a real-time
 * audio callback. The producer publishes data with a release store of the
 * write counter, the consumer sees it with an acquire load (and the same in
 * the other direction for freed space). gf_ring_init and gf_ring_reset must
 * not run concurrently with anything else.
 *
 * Regions: gf_ring_write_regions / gf_ring_read_regions expose up to two
 * contiguous spans (the second one starts at the beginning of the storage
 * when the first reaches its end), so data can be produced or consumed in
 * place; gf_ring_write_advance / gf_ring_read_advance then commit it.
 */
#ifndef GF_RING_H
#define GF_RING_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct gf_ring {
    unsigned char *data; /* size * elem bytes, owned by the caller */
    size_t size;         /* capacity in elements, a power of two */
    size_t mask;         /* size - 1 */
    size_t elem;         /* bytes per element, >= 1 */
    atomic_size_t write_pos, read_pos;
} gf_ring;

/*
 * Set up r over caller-owned storage of count * elem_bytes bytes. count must
 * be a power of two (>= 1) and elem_bytes >= 1; returns 0, or -1 when they
 * are not (or when size_t atomics are not lock-free on this machine).
 */
int gf_ring_init(gf_ring *r, size_t elem_bytes, size_t count, void *storage);

/* Smallest power of two >= n (n >= 1), or 0 when it does not fit a size_t. */
size_t gf_ring_pow2(size_t n);

/* Empty the ring (not concurrently with readers or writers). */
void gf_ring_reset(gf_ring *r);

/* Elements that can be read now (consumer side) / written now (producer). */
size_t gf_ring_read_available(const gf_ring *r);
size_t gf_ring_write_available(const gf_ring *r);

/*
 * Producer: up to `count` elements of free space as one or two spans.
 * Returns the number of elements granted (<= count): *n1 at *p1 then *n2 at
 * *p2 (*n2 == 0 and *p2 == NULL when one span suffices). Fill them, then
 * call gf_ring_write_advance with at most the number granted.
 */
size_t gf_ring_write_regions(gf_ring *r, size_t count, void **p1, size_t *n1, void **p2,
                             size_t *n2);
void gf_ring_write_advance(gf_ring *r, size_t count);

/* Consumer: the same for up to `count` readable elements. */
size_t gf_ring_read_regions(gf_ring *r, size_t count, void **p1, size_t *n1, void **p2, size_t *n2);
void gf_ring_read_advance(gf_ring *r, size_t count);

/* Copy in up to count elements from src; returns how many were written. */
size_t gf_ring_write(gf_ring *r, const void *src, size_t count);
/* Copy out up to count elements to dst (NULL: discard them); returns how many. */
size_t gf_ring_read(gf_ring *r, void *dst, size_t count);

#endif /* GF_RING_H */
