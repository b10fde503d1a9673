/*
 * Histograms, engine side: the plan, the block accumulators the chunks'
 * partials are merged into, and the queue of finished records.
 *
 * Merging is exact: counts are added as integers, min/max are integer
 * maxima of order keys, the sums of squares are 128-bit integer adds. So
 * a block's record is the same however its frames were cut into chunks.
 *
 * The queue is a growable array (doubling) of records and, beside it, one
 * array of their counts; records are taken from the front. It grows without
 * bound when nobody takes the records (gpufilt.h says so).
 */
#include "hist.h"

#include "copy_pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One record's accumulator: 64-bit counts (a block may hold 2^38 samples). */
typedef struct hist_acc {
    uint64_t min_inv, max_key, sq_lo, sq_hi;
    uint64_t below, above, nan, big;
} hist_acc;

/* One partial's counts (16- or 32-bit) to widen into a record's u64
 * counts: stored (fresh: the block's first partial; the buffer holds
 * garbage) or added. */
typedef struct widen {
    uint64_t *dst;
    const void *src;
    int fresh;
} widen;

/*
 * Counts live in buffers of `bins` uint64_t, one per record, that move
 * instead of being copied: a block's accumulator buffer becomes its queued
 * record's when the block is emitted (a recycled one takes its place), and
 * the record handed out by gf_hist_pop keeps its buffer until the next pop
 * or reset, which recycle it. Nothing bins-sized is copied or cleared per
 * record: a block's first partial is stored, not added (add_part's
 * `fresh`), so a recycled buffer needs no zeroing: with 4096 bins, copying
 * and clearing would cost ~100 KB per record on the host's critical path.
 */
struct gf_hist_state {
    gf_hist_plan p;
    hist_acc *acc;      /* nrec */
    uint64_t **acc_buf; /* nrec count buffers of the block being accumulated */
    uint64_t acc_block; /* the block being accumulated */
    size_t acc_frames;  /* its frames so far (0: none; its buffers hold garbage) */
    uint64_t next_pos;  /* stream position the next chunk must start at */
    int finished;       /* the last block was queued */
    gf_hist_record *q;  /* queued records [qhead, qcount), bins pointing at their buffer */
    uint64_t **qbuf;    /* the same buffers, writable */
    size_t qhead, qcount, qcap;
    uint64_t *out_buf; /* the buffer of the record handed out last (NULL: none) */
    uint64_t **spare;  /* recycled buffers [0, nspare) */
    size_t nspare, spare_cap;
    gf_copy_pool *pool; /* widens large merges' counts, or NULL */
    widen *jobs;        /* a merge's counts to widen */
    size_t njobs, jobs_cap;
};
void gf_hist_plan_make(const gf_hist_config *hc, int channels, int slots, size_t *chunk_frames,
                       gf_hist_plan *plan)
{
    gf_hist_plan *p = plan;
    memset(p, 0, sizeof *p);
    p->rule.lo = hc->lo;
    p->rule.hi = hc->hi;
    p->rule.scale = (double)hc->bins / (hc->hi - hc->lo);
    p->rule.step = (hc->hi - hc->lo) / (double)hc->bins;
    p->rule.binsd = (double)hc->bins;
    p->rule.bins = (uint32_t)hc->bins;
    p->bins = hc->bins;
    p->block = hc->block_frames;
    p->of_input = hc->of_input;
    p->mix = hc->mix;
    p->channels = channels;
    p->nrec = hc->mix ? 1 : channels;
    p->count_bytes = hc->block_frames * (size_t)(hc->mix ? channels : 1) <= UINT16_MAX ? 2 : 4;
    p->part_bytes = gf_hist_part_size(hc->bins, p->count_bytes);

    /* Segments that fit the budget, at least 2; then the longest chunk that
     * touches no more: n frames touch at most (n + B - 2) / B + 1 blocks. */
    const size_t per_seg = (size_t)slots * (size_t)p->nrec * p->part_bytes;
    size_t segs = GF_HIST_PART_BUDGET / per_seg;
    if (segs < 2)
        segs = 2;
    if (gf_hist_segs_for(*chunk_frames, p->block) > segs)
        *chunk_frames = (segs - 1) * p->block + 1;
    p->max_segs = gf_hist_segs_for(*chunk_frames, p->block);
}

/* S = hi * 2^64 + lo rounded to nearest double, ties to even: the top 64
 * significant bits, with a sticky bit for any lower ones, then one
 * correctly rounded uint64 -> double conversion and an exact scaling. */
static double u128_to_double(uint64_t hi, uint64_t lo)
{
    if (hi == 0)
        return (double)lo;
    int s = 0; /* significant bits of hi */
    for (uint64_t t = hi; t; t >>= 1)
        s++;
    uint64_t top, rest;
    if (s == 64) {
        top = hi;
        rest = lo;
    } else {
        top = hi << (64 - s) | lo >> s;
        rest = lo & (((uint64_t)1 << s) - 1);
    }
    return ldexp((double)(top | (rest != 0)), s);
}

double gf_hist_rms(uint64_t sq_hi, uint64_t sq_lo, uint64_t big, uint64_t n)
{
    if (n == 0)
        return NAN;
    if (big > 0)
        return INFINITY;
    return sqrt(u128_to_double(sq_hi, sq_lo) * 0x1p-64 / (double)n);
}

gf_hist_state *gf_hist_state_create(const gf_hist_plan *plan)
{
    gf_hist_state *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->p = *plan;
    h->acc = calloc((size_t)plan->nrec, sizeof *h->acc);
    h->acc_buf = calloc((size_t)plan->nrec, sizeof *h->acc_buf);
    if (!h->acc || !h->acc_buf) {
        gf_hist_state_destroy(h);
        return NULL;
    }
    for (int r = 0; r < plan->nrec; r++)
        if (!(h->acc_buf[r] = malloc(plan->bins * sizeof(uint64_t)))) {
            gf_hist_state_destroy(h);
            return NULL;
        }
    return h;
}

void gf_hist_state_use_pool(gf_hist_state *h, gf_copy_pool *pool)
{
    h->pool = pool;
}

void gf_hist_state_destroy(gf_hist_state *h)
{
    if (!h)
        return;
    if (h->acc_buf)
        for (int r = 0; r < h->p.nrec; r++)
            free(h->acc_buf[r]);
    for (size_t i = h->qhead; i < h->qcount; i++)
        free(h->qbuf[i]);
    for (size_t i = 0; i < h->nspare; i++)
        free(h->spare[i]);
    free(h->out_buf);
    free(h->jobs);
    free(h->acc);
    free(h->acc_buf);
    free(h->q);
    free(h->qbuf);
    free(h->spare);
    free(h);
}

/* Keep buffer b for reuse. The spare stack has room for every buffer ever
 * allocated (ensured when one is allocated), so this cannot fail. */
static void recycle(gf_hist_state *h, uint64_t *b)
{
    if (b)
        h->spare[h->nspare++] = b;
}

/* A count buffer (contents undefined): a recycled one, else a new one. */
static uint64_t *take_buf(gf_hist_state *h)
{
    if (h->nspare > 0)
        return h->spare[--h->nspare];
    /* Buffers in existence: nrec accumulators, the queue, the one handed
     * out, the spares; the stack must hold all but the accumulators. */
    const size_t need = h->qcap + 2;
    if (h->spare_cap < need) {
        uint64_t **s = realloc(h->spare, need * sizeof *s);
        if (!s)
            return NULL;
        h->spare = s;
        h->spare_cap = need;
    }
    return malloc(h->p.bins * sizeof(uint64_t));
}

static void clear_acc(gf_hist_state *h)
{
    memset(h->acc, 0, (size_t)h->p.nrec * sizeof *h->acc);
    h->acc_frames = 0;
}

void gf_hist_state_reset(gf_hist_state *h)
{
    clear_acc(h);
    h->acc_block = 0;
    h->next_pos = 0;
    h->finished = 0;
    for (size_t i = h->qhead; i < h->qcount; i++)
        recycle(h, h->qbuf[i]);
    recycle(h, h->out_buf);
    h->out_buf = NULL;
    h->qhead = h->qcount = 0;
}

/* Room for n more records at the back of the queue. */
static gf_status queue_room(gf_hist_state *h, size_t n)
{
    if (h->qhead == h->qcount)
        h->qhead = h->qcount = 0;
    if (h->qcount + n <= h->qcap)
        return GF_OK;
    if (h->qhead > 0) { /* slide the waiting records to the front first */
        const size_t live = h->qcount - h->qhead;
        memmove(h->q, h->q + h->qhead, live * sizeof *h->q);
        memmove(h->qbuf, h->qbuf + h->qhead, live * sizeof *h->qbuf);
        h->qhead = 0;
        h->qcount = live;
        if (h->qcount + n <= h->qcap)
            return GF_OK;
    }
    size_t cap = h->qcap ? 2 * h->qcap : 16;
    while (cap < h->qcount + n)
        cap *= 2;
    if (cap > SIZE_MAX / sizeof(gf_hist_record))
        return GF_ERR_NO_MEMORY;
    gf_hist_record *q = realloc(h->q, cap * sizeof *q);
    if (!q)
        return GF_ERR_NO_MEMORY;
    h->q = q;
    uint64_t **qb = realloc(h->qbuf, cap * sizeof *qb);
    if (!qb)
        return GF_ERR_NO_MEMORY;
    h->qbuf = qb;
    h->qcap = cap;
    return GF_OK;
}

/* Queue the accumulated block (one record per channel, or one with mix):
 * its count buffers go to the queue, recycled ones take their place. */
static gf_status emit(gf_hist_state *h)
{
    const gf_hist_plan *p = &h->p;
    gf_status st = queue_room(h, (size_t)p->nrec);
    if (st != GF_OK)
        return st;
    /* The replacements first, so that a failure leaves the state as it was. */
    for (int r = 0; r < p->nrec; r++) {
        uint64_t *b = take_buf(h);
        if (!b) {
            while (r-- > 0)
                recycle(h, h->qbuf[h->qcount + (size_t)r]);
            return GF_ERR_NO_MEMORY;
        }
        h->qbuf[h->qcount + (size_t)r] = b; /* parked in the new slots meanwhile */
    }
    const uint64_t samples = (uint64_t)h->acc_frames * (p->mix ? (uint64_t)p->channels : 1);
    for (int r = 0; r < p->nrec; r++) {
        const hist_acc *a = &h->acc[r];
        gf_hist_record *rec = &h->q[h->qcount];
        memset(rec, 0, sizeof *rec);
        rec->block = h->acc_block;
        rec->first_frame = h->acc_block * p->block;
        rec->frames = h->acc_frames;
        rec->channel = p->mix ? -1 : r;
        rec->below = a->below;
        rec->above = a->above;
        rec->nan = a->nan;
        rec->min = a->max_key ? gf_hist_unkey(~a->min_inv) : NAN;
        rec->max = a->max_key ? gf_hist_unkey(a->max_key) : NAN;
        rec->rms = gf_hist_rms(a->sq_hi, a->sq_lo, a->big, samples - a->nan);
        uint64_t *b = h->acc_buf[r];
        h->acc_buf[r] = h->qbuf[h->qcount];
        h->qbuf[h->qcount] = b;
        rec->bins = b;
        h->qcount++;
    }
    clear_acc(h);
    return GF_OK;
}

/* Add a partial's header to a record's accumulator (its counts are
 * widened after: widen_piece). */
static void add_head(hist_acc *a, const gf_hist_part *part)
{
    if (part->min_inv > a->min_inv)
        a->min_inv = part->min_inv;
    if (part->max_key > a->max_key)
        a->max_key = part->max_key;
    a->sq_lo += part->sq_lo;
    a->sq_hi += part->sq_hi + (a->sq_lo < part->sq_lo);
    a->below += part->below;
    a->above += part->above;
    a->nan += part->nan;
    a->big += part->big;
}

/* Below this many counts a merge widens them on the caller's thread alone
 * (waking the pool costs tens of microseconds; 2 channels x 256 bins x a
 * few blocks is a few microseconds' work). */
#define WIDEN_SPLIT_MIN ((size_t)1 << 16)

/* Counts [lo, hi) of src, of type S, stored or added into d. */
#define WIDEN(S, src)                        \
    do {                                     \
        S s = (src);                         \
        if (fresh)                           \
            for (size_t k = lo; k < hi; k++) \
                d[k] = s[k];                 \
        else                                 \
            for (size_t k = lo; k < hi; k++) \
                d[k] += s[k];                \
    } while (0)

/* Piece i of `pieces` of a merge's widening: bins [lo, hi), cache-line
 * aligned in the u64 counts, of every job, so each thread writes its own
 * lines of every record whatever the number of jobs. */
static void widen_piece(void *arg, int i, int pieces)
{
    const gf_hist_state *h = arg;
    const size_t n = h->p.bins;
    const size_t per = ((n + (size_t)pieces - 1) / (size_t)pieces + 7) & ~(size_t)7;
    const size_t lo = (size_t)i * per, hi = lo + per < n ? lo + per : n;
    for (size_t j = 0; j < h->njobs && lo < hi; j++) {
        uint64_t *restrict d = h->jobs[j].dst;
        const int fresh = h->jobs[j].fresh;
        if (h->p.count_bytes == 2)
            WIDEN(const uint16_t *restrict, h->jobs[j].src);
        else
            WIDEN(const uint32_t *restrict, h->jobs[j].src);
    }
}

gf_status gf_hist_merge(gf_hist_state *h, void *parts, uint64_t pos, size_t frames)
{
    const gf_hist_plan *p = &h->p;
    if (pos != h->next_pos || h->finished)
        return GF_ERR_STATE;
    size_t first;
    const size_t nseg = gf_hist_segments(p, pos, frames, &first);
    size_t off = 0;
    if (nseg * (size_t)p->nrec > h->jobs_cap) { /* room for this merge's jobs */
        widen *j = realloc(h->jobs, nseg * (size_t)p->nrec * sizeof *j);
        if (!j)
            return GF_ERR_NO_MEMORY;
        h->jobs = j;
        h->jobs_cap = nseg * (size_t)p->nrec;
    }
    gf_status st = GF_OK;
    /* Headers and records in order here; the counts (the bulk: a 16- or
     * 32-bit count per bin read, a u64 written) after, at once, split over
     * the pool where it is worth waking. A record's buffer is widened into
     * after its block was queued, before this returns and anyone can pop
     * it. */
    h->njobs = 0;
    for (size_t k = 0; k < nseg && st == GF_OK; k++) {
        size_t len = k == 0 ? first : p->block;
        if (len > frames - off)
            len = frames - off;
        const int fresh = h->acc_frames == 0;
        if (fresh)
            h->acc_block = (pos + off) / p->block;
        for (int r = 0; r < p->nrec; r++) {
            const gf_hist_part *part = gf_hist_part_at(parts, p, k, (size_t)r);
            add_head(&h->acc[r], part);
            h->jobs[h->njobs++] = (widen){h->acc_buf[r], part + 1, fresh};
        }
        h->acc_frames += len;
        off += len;
        if (h->acc_frames == p->block)
            st = emit(h);
    }
    if (st != GF_OK) /* the engine fails; the records are not handed out */
        return st;
    gf_pool_run(h->njobs * p->bins >= WIDEN_SPLIT_MIN ? h->pool : NULL, widen_piece, h);
    h->next_pos = pos + frames;
    return GF_OK;
}

gf_status gf_hist_finish(gf_hist_state *h)
{
    if (h->finished)
        return GF_OK;
    if (h->acc_frames > 0) {
        gf_status st = emit(h);
        if (st != GF_OK)
            return st;
    }
    h->finished = 1;
    return GF_OK;
}

int gf_hist_pop(gf_hist_state *h, gf_hist_record *rec)
{
    if (h->qhead == h->qcount)
        return 0;
    recycle(h, h->out_buf);
    *rec = h->q[h->qhead];
    h->out_buf = h->qbuf[h->qhead];
    h->qhead++;
    if (h->qhead == h->qcount)
        h->qhead = h->qcount = 0;
    return 1;
}
