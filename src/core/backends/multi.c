/*
 * Several devices as one backend: one instance of a backend per ordinal of
 * gf_backend_params.cuda_devices, sharing the stream by time or by channel
 * (gf_split).
 *
 * By time: the instances take the stream's chunks in turn. The engine
 * fills slots round-robin, so with slot s going to instance s % n and to
 * that instance's slot s / n, chunk i runs on instance i % n. Why the bytes
 * are one instance's: a chunk of the direct method carries its halo, so
 * any instance computes it alone. The FFT method keeps a delay line, which
 * an instance that skipped the chunks before this one lacks: every chunk
 * after the stream's first comes with history_frames of the input before
 * it (the engine's halo, K partitions), and the instance takes them in
 * first (gf_chunk.prime_frames). Near the start, where fewer frames than
 * that exist, the instance forgets its history and takes in all there is,
 * from the stream's first frame, as one instance would. The previous
 * chunk's input is still on the device that filtered it, so the chunk also
 * names that instance and slot (gf_chunk.prime_peer): the CUDA backend
 * copies the history from there, GPU to GPU, rather than up from the host,
 * whose bandwidth the devices share. A chunk that follows its instance's
 * last one in the stream (gf_engine_process's segments, gf_chunk.at:
 * each instance a contiguous part of the call) needs no priming: the
 * instance's own delay line is its history. A segment's device also
 * keeps the history it primed from, and the device of the segment before,
 * whose last frames they are, copies them from there (gf_chunk.keep_prime,
 * lend_peer): the host uploads them once.
 *
 * By channel: every chunk goes to every instance, at the same slot, and
 * instance d filters its share of the channels (gf_multi_share) through a
 * channel window on the same host buffers. Each channel's filter sees all
 * of its stream, as on one device, with no history to exchange: what a job
 * of few chunks needs (a long filter's chunk holds 2^21 frames or more).
 * The bytes are one device's: each channel's arithmetic is the same.
 */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct multi {
    const gf_backend_ops *in; /* every instance's backend */
    int n;
    gf_split split;
    int ordinal[GF_MAX_DEVICES];
    void *st[GF_MAX_DEVICES];
    size_t history;    /* FFT: gf_backend_params.history_frames; 0: direct */
    uint64_t pos;      /* the stream's frames submitted since create or reset (where it ends) */
    int last;          /* the slot of the last chunk submitted by time; -1: none since reset */
    uint64_t last_end; /* the stream frame after that chunk */
    uint64_t next[GF_MAX_DEVICES];     /* each instance's: the frame after its last chunk */
    unsigned char fed[GF_MAX_DEVICES]; /* 1: the instance has had a chunk since reset */
    int peer; /* 1: chunks name the instance that had the one before (prime_peer) */
    unsigned char busy[GF_MAX_SLOTS];
    char err[320]; /* the last failure, its device named */
} multi;

gf_split gf_multi_split(gf_method method, int channels, size_t sample_bytes, int histograms, int n)
{
    if (method != GF_METHOD_FFT || histograms || n < 2 || channels < n)
        return GF_SPLIT_TIME;
    return (size_t)(channels / n) * sample_bytes >= GF_SPLIT_MIN_ROW ? GF_SPLIT_CHANNELS
                                                                     : GF_SPLIT_TIME;
}

int gf_multi_share(int channels, int n, int d, int *first)
{
    const int base = channels / n, more = channels % n;
    *first = d * base + (d < more ? d : more);
    return base + (d < more);
}

/* Instance d's parameters: the device, and with the channel split its
 * channel window and taps. */
static gf_backend_params instance(const gf_backend_params *p, int d)
{
    gf_backend_params one = *p;
    one.cuda_device_count = 0;
    one.multi_inner = NULL;
    one.cuda_device = p->cuda_devices[d];
    if (p->split == GF_SPLIT_CHANNELS) {
        int first = 0;
        one.channels = gf_multi_share(p->channels, p->cuda_device_count, d, &first);
        one.host_channels = p->channels;
        one.channel_offset = first;
        if (p->taps_per_channel)
            one.taps = (const unsigned char *)p->taps +
                       (size_t)first * p->num_taps *
                           (p->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double));
    }
    return one;
}

static gf_status multi_create(const gf_backend_params *p, void **state, char *detail, size_t n)
{
    if (!p->multi_inner->available()) { /* as one device would say it */
        gf_detail(detail, n, "no usable CUDA device");
        return GF_ERR_NO_DEVICE;
    }
    multi *m = calloc(1, sizeof *m);
    if (!m)
        return GF_ERR_NO_MEMORY;
    m->in = p->multi_inner;
    m->n = p->cuda_device_count;
    m->split = p->split;
    m->history = p->split == GF_SPLIT_TIME ? p->history_frames : 0;
    m->last = -1;
    /* GPUFILT_PEER_HISTORY=0: the history from the host, as before there
     * was a peer copy; for measuring what that copy saves (docs/scaling.md). */
    const char *peer = getenv("GPUFILT_PEER_HISTORY");
    m->peer = !(peer && !strcmp(peer, "0"));
    for (int d = 0; d < m->n; d++) {
        const gf_backend_params one = instance(p, d);
        m->ordinal[d] = one.cuda_device;
        char why[256] = "";
        const gf_status st = m->in->create(&one, &m->st[d], why, sizeof why);
        if (st != GF_OK) {
            gf_detail(detail, n, "CUDA device %d: %s", m->ordinal[d], why);
            for (int k = 0; k < d; k++)
                m->in->destroy(m->st[k]);
            free(m);
            return st;
        }
    }
    *state = m;
    return GF_OK;
}

static void multi_destroy(void *state)
{
    multi *m = state;
    for (int d = 0; d < m->n; d++)
        m->in->destroy(m->st[d]);
    free(m);
}

/* A failure of instance d: its detail is the one error() gives. */
static gf_status failed(multi *m, int d, gf_status st)
{
    if (st != GF_OK)
        snprintf(m->err, sizeof m->err, "CUDA device %d: %s", m->ordinal[d],
                 m->in->error(m->st[d]));
    return st;
}

/* The instances slot s's chunk went to: [*d0, *d1), at their slot *is. */
static void route(const multi *m, int slot, int *d0, int *d1, int *is)
{
    if (m->split == GF_SPLIT_CHANNELS) {
        *d0 = 0, *d1 = m->n, *is = slot;
    } else {
        *d0 = slot % m->n, *d1 = *d0 + 1, *is = slot / m->n;
    }
}

static gf_status multi_wait(void *state, int slot)
{
    multi *m = state;
    int d0, d1, is;
    route(m, slot, &d0, &d1, &is);
    gf_status st = GF_OK;
    for (int d = d0; d < d1; d++) { /* every one, even after a failure: none left running */
        const gf_status one = failed(m, d, m->in->wait(m->st[d], is));
        if (st == GF_OK)
            st = one;
    }
    if (st == GF_OK)
        m->busy[slot] = 0;
    return st;
}

static gf_status multi_query(void *state, int slot, int *done)
{
    multi *m = state;
    int d0, d1, is;
    route(m, slot, &d0, &d1, &is);
    *done = 1;
    for (int d = d0; d < d1 && *done; d++) {
        const gf_status st = failed(m, d, m->in->query(m->st[d], is, done));
        if (st != GF_OK)
            return st;
    }
    if (*done)
        m->busy[slot] = 0;
    return GF_OK;
}

/* Instance d with nothing in flight and no history. */
static gf_status restart(multi *m, int d)
{
    for (int s = d; s < m->n * m->in->slots; s += m->n)
        if (m->busy[s]) {
            const gf_status st = multi_wait(m, s);
            if (st != GF_OK)
                return st;
        }
    if (m->in->reset)
        m->in->reset(m->st[d]);
    return GF_OK;
}

static gf_status multi_submit(void *state, int slot, const gf_chunk *c)
{
    multi *m = state;
    if (m->split == GF_SPLIT_CHANNELS) { /* every instance, its channels */
        for (int d = 0; d < m->n; d++) {
            const gf_status st = failed(m, d, m->in->submit(m->st[d], slot, c));
            if (st != GF_OK)
                return st;
            m->busy[slot] = 1;
        }
        return GF_OK;
    }
    const int d = slot % m->n;
    const uint64_t pos = c->at ? c->pos : m->pos;
    gf_chunk one = *c;
    /* A segment's history kept by its device and lent to the one before
     * (engine_bulk.c); GPUFILT_PEER_HISTORY=0 uploads it twice instead. */
    one.keep_prime = m->peer && c->keep_prime;
    one.lend_peer = m->peer && c->lend_index > 0 && c->lend_index <= m->n && c->lend_index - 1 != d
                        ? m->st[c->lend_index - 1]
                        : NULL;
    if (m->history && pos > 0 && !(m->fed[d] && m->next[d] == pos)) {
        if (pos >= m->history) {
            one.prime_frames = m->history;
            if (m->peer && m->last >= 0 && m->last_end == pos) { /* the chunk before, where it is */
                one.prime_peer = m->st[m->last % m->n];
                one.prime_peer_slot = m->last / m->n;
            }
        } else {
            const gf_status st = restart(m, d);
            if (st != GF_OK)
                return st;
            one.prime_frames = (size_t)pos;
        }
    }
    const gf_status st = failed(m, d, m->in->submit(m->st[d], slot / m->n, &one));
    if (st == GF_OK)
        m->busy[slot] = 1;
    m->last = st == GF_OK ? slot : -1;
    m->last_end = m->next[d] = pos + c->frames;
    m->fed[d] = st == GF_OK;
    if (m->pos < pos + c->frames)
        m->pos = pos + c->frames;
    return st;
}

static void multi_reset(void *state)
{
    multi *m = state;
    for (int d = 0; d < m->n; d++)
        if (m->in->reset)
            m->in->reset(m->st[d]);
    m->pos = 0;
    m->last = -1;
    memset(m->fed, 0, sizeof m->fed);
}

/* Host memory: the first instance's (the CUDA backend's is page-locked for
 * every device). */
static void *multi_host_alloc(void *state, size_t bytes)
{
    multi *m = state;
    return m->in->host_alloc(m->st[0], bytes);
}

static void multi_host_free(void *state, void *p)
{
    multi *m = state;
    m->in->host_free(m->st[0], p);
}

static int multi_direct_ok(void *state, const void *p, size_t bytes)
{
    multi *m = state;
    return m->in->direct_ok(m->st[0], p, bytes);
}

static const char *multi_error(void *state)
{
    return ((multi *)state)->err;
}

static gf_status multi_host_register(void *state, void *p, size_t bytes)
{
    multi *m = state;
    return failed(m, 0, m->in->host_register(m->st[0], p, bytes));
}

static void multi_host_unregister(void *state, void *p)
{
    multi *m = state;
    m->in->host_unregister(m->st[0], p);
}

void gf_multi_ops(const gf_backend_ops *inner, int n, gf_split split, gf_backend_ops *out)
{
    *out = *inner;
    out->slots = split == GF_SPLIT_CHANNELS ? inner->slots : inner->slots * n;
    if (!inner->primes) { /* the FFT method's chunks need the history primed */
        out->methods_f32 &= ~GF_METHOD_BIT(GF_METHOD_FFT);
        out->methods_f64 &= ~GF_METHOD_BIT(GF_METHOD_FFT);
    }
    /* NUPC's levels keep more than K partitions of history: no priming. */
    out->methods_f32 &= ~GF_METHOD_BIT(GF_METHOD_NUPC);
    out->methods_f64 &= ~GF_METHOD_BIT(GF_METHOD_NUPC);
    out->primes = 0;
    out->create = multi_create;
    out->destroy = multi_destroy;
    out->host_alloc = multi_host_alloc;
    out->host_free = multi_host_free;
    out->direct_ok = multi_direct_ok;
    out->reset = multi_reset;
    out->submit = multi_submit;
    out->query = multi_query;
    out->wait = multi_wait;
    out->error = multi_error;
    out->device_begin = NULL; /* one device's memory: gf_engine_filter_device takes one GPU */
    out->host_register = inner->host_register ? multi_host_register : NULL;
    out->host_unregister = inner->host_unregister ? multi_host_unregister : NULL;
}
