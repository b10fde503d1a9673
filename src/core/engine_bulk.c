/*
 * The bulk path: gf_engine_process. Where nothing is buffered and the
 * backend may read and write the caller's memory, chunks go straight from
 * `in` to `out` (no staging copy, halo taken from the input itself);
 * otherwise, and for the rest, the push/pull loop of engine_stream.c.
 */
#include "engine_internal.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* Copy to dst the halo_samples samples that end at sample n of this call's
 * stream: the history before the call (n < halo_samples), then the input,
 * whose first `real` samples are in `in`, the rest zeros (gf_engine_filter's
 * look-ahead). */
static void tail_samples(const gf_engine *e, unsigned char *dst, const unsigned char *history,
                         const unsigned char *in, size_t n, size_t real)
{
    const size_t ss = e->sample_bytes, hs = e->halo_samples;
    size_t k = 0; /* samples written */
    if (n < hs) {
        gf_copy(e->copies, dst, history + n * ss, (hs - n) * ss);
        k = hs - n;
    }
    const size_t from = n > hs ? n - hs : 0, to = n < real ? n : real;
    if (to > from) {
        gf_copy(e->copies, dst + k * ss, in + from * ss, (to - from) * ss);
        k += to - from;
    }
    memset(dst + k * ss, 0, (hs - k) * ss);
}

/* e->history: the halo_samples samples before this call's input (zeros at
 * the stream's start), loaded once per call when first needed (the FFT
 * method's history, on several devices, can be hundreds of MiB). */
static void load_history(gf_engine *e, int *loaded)
{
    const size_t hs = e->halo_samples, ss = e->sample_bytes;
    if (*loaded)
        return;
    *loaded = 1;
    if (e->history_slot < 0) {
        memset(e->history, 0, hs * ss);
    } else {
        gf_eng_slot_tail(e, e->history, &e->slot[e->history_slot]);
    }
}

/* The halo of the chunk at frame off of this call (C channels; the input's
 * first `frames` frames in `in`, zeros after them): the input just before
 * it, or (near the start, or past the input's end) history, input and
 * zeros assembled in slot s's own buffer; none for a chunk at the stream's
 * start that only primes (the FFT method on several devices takes in
 * history, of which there is none yet). */
static const unsigned char *chunk_halo(gf_engine *e, int s, const unsigned char *in, size_t frames,
                                       size_t off, uint64_t pos, int *loaded)
{
    const size_t C = e->channels, ss = e->sample_bytes, hs = e->halo_samples;
    if (!hs || (e->mth->halo_primes && pos == 0))
        return NULL;
    if (off * C >= hs && off <= frames)
        return in + (off * C - hs) * ss;
    if (off * C < hs)
        load_history(e, loaded);
    tail_samples(e, e->slot[s].in, e->history, in, off * C, frames * C);
    return e->slot[s].in;
}

/* After the call's chunks: the new history goes to slot `next` (the one
 * the next chunk fills: several devices keep taking chunks in turn), as
 * the tail of an empty chunk, where begin_fill looks for it. */
static void keep_history(gf_engine *e, const unsigned char *in, size_t frames, int next,
                         int *loaded)
{
    e->head = next;
    gf_slot *f = &e->slot[e->head];
    if (frames * e->channels < e->halo_samples)
        load_history(e, loaded);
    tail_samples(e, f->in, e->history, in, frames * e->channels, frames * e->channels);
    f->frames = 0;
    f->zero_from = SIZE_MAX;
    e->history_slot = e->head;
    e->filling = 0;
}

/* Slot s's chunk in flight, waited for and its histograms merged. */
static gf_status retire(gf_engine *e, int s, int *inflight)
{
    const gf_status st = gf_eng_wait(e, s);
    if (st != GF_OK)
        return gf_eng_fail(e, st);
    inflight[s] = 0;
    return gf_eng_hist_merge(e, &e->slot[s]);
}

/* Waits for the chunks in flight (inflight[s] set), merging histograms in
 * the order of slots head, head + 1, ... (stream order, where chunks went
 * to the slots in turn). */
static gf_status drain(gf_engine *e, int *inflight)
{
    gf_status st;
    for (int j = 0; j < e->nslots; j++) {
        const int s = (e->head + j) % e->nslots;
        if (inflight[s] && (st = retire(e, s, inflight)) != GF_OK)
            return st;
    }
    return GF_OK;
}

/*
 * Several devices by time with the FFT method prime a device's delay line
 * at every chunk that does not follow that device's last one (multi.c):
 * chunks in turn are all primed, and the several-device chunk must hold
 * 2 K partitions to bear it, so a long filter's call is a few big chunks,
 * each uploaded, filtered and downloaded in turn. A call long enough
 * instead gives each device one contiguous segment of it, in chunks of the
 * one-device size (e->seg_chunk: pipelined), primed once, at the segment's
 * start, from the input itself. The bytes are one device's: each output
 * still sees the very spectra one device would. Used where each segment
 * holds at least 2 chunks and 2 K partitions, and without histograms
 * (merged in stream order): the chunk size, or 0 where it does not apply.
 * GPUFILT_SEGMENTS=0 in the environment (read at create): chunks in turn
 * as before, for measuring what segments save (tests/gpu/device-run.sh).
 */
static size_t segment_chunk(const gf_engine *e, size_t frames)
{
    if (e->ops != &e->multi_ops || e->split != GF_SPLIT_TIME || !e->mth->halo_primes || e->hist ||
        !e->seg_chunk || e->no_segments)
        return 0;
    const size_t n = (size_t)e->ndev, piece = e->seg_chunk < e->chunk ? e->seg_chunk : e->chunk;
    const size_t seg = frames / n, history = e->halo_samples / e->channels;
    return seg >= 2 * piece && seg >= 2 * history ? piece : 0;
}

/*
 * The segments of a call of `padded` frames on n devices (n = 1: one, the
 * whole call): segment j is frames [next[j], end[j]). Every segment after
 * the first is primed first from the h frames before it (K partitions),
 * the end of the segment before; its device uploads them, which costs
 * about as much as filtering as many frames. Where the backend lends
 * (gf_chunk.keep_prime, lend_index), the device before then takes those
 * frames from it instead of from the host: each middle segment uploads h
 * more and h less, the first h less, the last h more, so the first is
 * longer by h/2 and the last shorter by h/2 for every device to move as
 * many bytes. Otherwise every later segment is shorter than the first by
 * h. Either way where each segment holds 2 chunks and the first its
 * history twice; else the segments are alike. 0 where the last segment
 * would begin past the input (primed from the look-ahead's zeros, which
 * are not in memory): no segments.
 */
static int split_segments(const gf_engine *e, size_t n, size_t padded, size_t frames, size_t piece,
                          size_t *next, size_t *end)
{
    const size_t q = e->quantum, h = (e->halo_samples / e->channels + q - 1) / q * q;
    size_t first = padded / n / q * q, rest = first; /* the last takes what is left */
    if (n > 1) {
        const size_t a = e->ops->lends ? ((2 * padded + n * h) / (2 * n) + q / 2) / q * q
                                       : (padded + (n - 1) * h) / n / q * q;
        const size_t b = e->ops->lends ? (padded / n + q / 2) / q * q : a > h ? a - h : 0;
        const size_t before_last = a + (n - 2) * b; /* where the last segment begins */
        if (a >= 2 * h && b >= 2 * piece && before_last + 2 * piece <= padded) {
            first = a;
            rest = b;
        }
    }
    for (size_t j = 0; j < n; j++) {
        next[j] = j ? first + (j - 1) * rest : 0;
        end[j] = j + 1 == n ? padded : next[j] + (j ? rest : first);
    }
    return n == 1 || next[n - 1] < frames;
}

/*
 * The length of the next chunk of a run (a segment, or the whole call) at
 * frame off, its k-th, the run ending at `end`: `piece`, except that on a
 * pipelined backend the FFT method's first chunks ramp up from piece / 8
 * (doubling) and its last ones down (each half what is left), in whole
 * partitions, none under one. Filtering starts only once the first chunk
 * is uploaded, downloads once it is filtered, and the last chunk's
 * filtering and download come after every upload: with the host's copies
 * the limit, those are the time the run adds to its transfers (at 2^22
 * taps x 8 channels a 4-partition chunk, 64 MiB, took 2.5 ms to upload and
 * filter). The bytes do not depend on chunk sizes. Not where chunks go to
 * several devices in turn (each chunk primed, however short).
 */
static size_t chunk_len(const gf_engine *e, size_t n, size_t piece, size_t k, size_t off,
                        size_t end)
{
    const size_t left = end - off, q = e->quantum;
    size_t len = left < piece ? left : piece;
    if (e->method != GF_METHOD_FFT || e->ops->slots < 2 ||
        (n == 1 && e->ops == &e->multi_ops && e->split == GF_SPLIT_TIME))
        return len;
    const size_t least = piece / 8 / q * q > q ? piece / 8 / q * q : q;
    const size_t up = k < 3 ? (piece >> (3 - k)) / q * q : piece;
    const size_t down = (left / 2 + q - 1) / q * q;
    size_t r = up < down ? up : down;
    r = r > least ? r : least;
    return r < len ? r : len;
}

/* Round r's slot of segment j (n segments): head + r n + j, whose device
 * is (head + j) mod n. */
static int segment_slot(const gf_engine *e, size_t n, size_t j, size_t r)
{
    return (int)(((size_t)e->head + r * n + j) % (size_t)e->nslots);
}

/* *pick: the segment to give a chunk next, one whose next slot is free
 * (its chunk there retired), n when every chunk is submitted. With
 * several devices the segments are tried in turn from the one after
 * *pick, and where every slot is in flight, polled until one is done:
 * each device keeps its own pace (a segment's priming would otherwise
 * hold the others' chunks back). */
static gf_status free_segment(gf_engine *e, size_t n, const size_t *next, const size_t *end,
                              const size_t *round, int *inflight, size_t *pick)
{
    gf_status st;
    for (;;) {
        int left = 0;
        for (size_t i = 1; i <= n; i++) {
            const size_t j = (*pick + i) % n;
            if (next[j] >= end[j])
                continue;
            left = 1;
            const int s = segment_slot(e, n, j, round[j]);
            int done = !inflight[s] || n == 1; /* one device: wait for it (retire) */
            if (!done && (st = gf_eng_query(e, s, &done)) != GF_OK)
                return gf_eng_fail(e, st);
            if (done) {
                *pick = j;
                return inflight[s] ? retire(e, s, inflight) : GF_OK;
            }
        }
        if (!left) {
            *pick = n;
            return GF_OK;
        }
        const struct timespec poll = {0, 50 * 1000}; /* a chunk takes a millisecond or so */
        nanosleep(&poll, NULL);
    }
}

/*
 * Bulk path with nothing buffered: chunks go from `in` to `out` with no
 * staging copy, to the slots in turn; or, in segments (segment_chunk,
 * split_segments), each segment's to its device's slots in turn, the
 * segments fed as their devices free slots (gf_chunk.at: chunks out of
 * stream order). `frames` frames of input (whole quanta), or where the
 * stream `ends` here (gf_engine_filter), those, the `zeros` frames of its
 * look-ahead and the padding to whole quanta, the zeros made by the
 * backend (gf_chunk.zero_frames) and the padding's outputs not written
 * (gf_chunk.drop_tail).
 */
static gf_status process_direct(gf_engine *e, const unsigned char *in, size_t frames, int ends,
                                size_t zeros, unsigned char *out, size_t *produced)
{
    const size_t C = e->channels, ss = e->sample_bytes, total = frames + zeros;
    const size_t padded = (total + e->quantum - 1) / e->quantum * e->quantum;
    const size_t seg_piece = segment_chunk(e, padded);
    size_t n = seg_piece ? (size_t)e->ndev : 1, piece = seg_piece ? seg_piece : e->chunk;
    size_t next[GF_MAX_DEVICES], end[GF_MAX_DEVICES], round[GF_MAX_DEVICES] = {0};
    if (!split_segments(e, n, padded, frames, piece, next, end)) {
        n = 1;
        piece = e->chunk;
        split_segments(e, n, padded, frames, piece, next, end);
    }
    /* Segment j + 1's device keeps the h frames it primes from, the end of
     * segment j from lent[j] (real input: the last segment begins before
     * the input ends), and segment j's device takes them from there. */
    const size_t h = e->halo_samples / C;
    size_t lent[GF_MAX_DEVICES];
    for (size_t j = 0; j + 1 < n; j++)
        lent[j] = e->ops->lends ? next[j + 1] - h : SIZE_MAX;
    const size_t skip0 = e->skip_left < total ? e->skip_left : total;
    const uint64_t pos0 = e->in_submitted;
    gf_status st;
    int loaded = 0, last = e->head; /* the last segment's latest slot */
    int inflight[GF_MAX_SLOTS] = {0};
    for (size_t j = n - 1;;) {
        if ((st = free_segment(e, n, next, end, round, inflight, &j)) != GF_OK)
            return st;
        if (j == n) /* every chunk submitted */
            break;
        const int s = segment_slot(e, n, j, round[j]);
        const size_t off = next[j], len = chunk_len(e, n, piece, round[j], off, end[j]);
        const size_t real = off < frames ? (frames - off < len ? frames - off : len) : 0;
        const size_t drop = off + len > total ? off + len - total : 0;
        const size_t skip = off < skip0 ? (skip0 - off < len ? skip0 - off : len) : 0;
        gf_chunk c = {
            .at = n > 1,
            .pos = pos0 + off,
            /* a segment's later chunks follow their device's last: no
             * priming, so no halo (near the call's start, making one
             * copies the history: 128 MiB at 2^22 taps x 8 ch) */
            .halo = round[j] > 0 && n > 1 ? NULL
                                          : chunk_halo(e, s, in, frames, off, pos0 + off, &loaded),
            .in = real ? in + off * C * ss : NULL,
            .frames = len,
            .zero_frames = len - real,
            .drop_tail = drop,
            .skip = skip,
            .out = out + (off + skip > skip0 ? off + skip - skip0 : 0) * e->out_channels * ss,
        };
        if (n > 1 && j > 0 && round[j] == 0)
            c.keep_prime = e->ops->lends;
        if (j + 1 < n && round[j] > 0 && round[j + 1] > 0 && off + len > lent[j]) {
            c.lend_index = segment_slot(e, n, j + 1, 0) % (int)n + 1;
            c.lend_first = off < lent[j] ? lent[j] - off : 0;
            c.lend_offset = off + c.lend_first - lent[j];
        }
        e->in_real += real;
        gf_eng_hist_chunk(e, &e->slot[s], &c, len - drop, len - skip - drop);
        if ((st = gf_eng_submit(e, s, &c)) != GF_OK)
            return gf_eng_fail(e, st);
        inflight[s] = 1;
        next[j] += len;
        round[j]++;
        if (j + 1 == n)
            last = s;
    }
    e->skip_left -= skip0;
    *produced = total - skip0;
    /* The chunks still in flight, from the oldest in turn (slot last + 1);
     * then the next chunk goes to the last segment's device (slot last +
     * n), whose delay line ends where the stream does. */
    e->head = (last + (int)n) % e->nslots;
    if ((st = drain(e, inflight)) != GF_OK)
        return st;
    if (ends) {
        e->flushed = 1; /* push refuses until a reset */
        return GF_OK;
    }
    keep_history(e, in, frames, e->head, &loaded);
    return GF_OK;
}

gf_status gf_engine_process(gf_engine *e, const void *in, size_t frames, void *out,
                            size_t *produced)
{
    if (!e || !produced || (frames && (!in || !out)))
        return GF_ERR_INVALID_ARGUMENT;
    *produced = 0;
    if (e->failed)
        return e->failed;
    if (e->flushed)
        return GF_ERR_STATE;
    if (frames == 0)
        return GF_OK;
    const size_t fb = e->channels * e->sample_bytes, fbo = e->out_channels * e->sample_bytes;
    const unsigned char *src = in;
    unsigned char *dst = out;
    gf_status st;
    /* Straight from `in` to `out` where nothing is buffered: whole quanta
     * of the method (FFT: partitions); the rest goes the staged way. */
    const size_t whole = frames - frames % e->quantum;
    if (whole && !e->handoff && e->nsub == 0 && !(e->filling && e->filled > 0) && e->carried == 0 &&
        e->ops->direct_ok(e->backend, in, whole * fb) &&
        e->ops->direct_ok(e->backend, out, whole * fbo)) {
        if ((st = process_direct(e, in, whole, 0, 0, out, produced)) != GF_OK)
            return st;
        src += whole * fb;
        dst += *produced * fbo;
        frames -= whole;
    }

    /* Staged: a push/pull loop, then every submitted chunk drained. */
    while (frames > 0 || e->nsub > 0) {
        size_t used = 0, got = 0;
        if (frames > 0) {
            if ((st = gf_engine_push(e, src, frames, &used)) != GF_OK)
                return st;
            src += used * fb;
            frames -= used;
        }
        /* Once everything is pushed, wait for each chunk still in flight. */
        if (frames == 0 && e->nsub > 0 && !e->slot[e->head].ready) {
            if ((st = gf_eng_wait(e, e->head)) != GF_OK)
                return gf_eng_fail(e, st);
            if ((st = gf_eng_set_ready(e, e->head)) != GF_OK)
                return st;
        }
        if ((st = gf_engine_pull(e, dst, SIZE_MAX / fbo, &got)) != GF_OK)
            return st;
        dst += got * fbo;
        *produced += got;
    }
    return GF_OK;
}

gf_status gf_engine_filter(gf_engine *e, const void *in, size_t frames, void *out, size_t *produced)
{
    if (!e || !produced || (frames && (!in || !out)))
        return GF_ERR_INVALID_ARGUMENT;
    *produced = 0;
    gf_status st = gf_engine_reset(e);
    if (st != GF_OK)
        return st;
    const size_t fb = e->channels * e->sample_bytes, fbo = e->out_channels * e->sample_bytes;
    const size_t zeros = e->cfg.mode == GF_MODE_FULL ? e->num_taps - 1 : e->latency;
    const size_t outs = frames + zeros - e->skip_left; /* (skip_left: same mode's latency) */
    /* Every chunk straight from `in` to `out`, the look-ahead's among them,
     * where the backend makes zeros itself (the histograms' records and a
     * hand-off take the staged way) */
    if (frames && e->zero_tail && !e->hist && !e->handoff &&
        e->ops->direct_ok(e->backend, in, frames * fb) &&
        e->ops->direct_ok(e->backend, out, outs * fbo))
        return process_direct(e, in, frames, 1, zeros, out, produced);
    /* Otherwise as the bulk form, a flush and pulls would do it. */
    if ((st = gf_engine_process(e, in, frames, out, produced)) != GF_OK ||
        (st = gf_engine_flush(e)) != GF_OK)
        return st;
    for (;;) {
        size_t got = 0;
        if ((st = gf_engine_pull(e, (unsigned char *)out + *produced * fbo, outs - *produced,
                                 &got)) != GF_OK)
            return st;
        if (got == 0)
            return GF_OK;
        *produced += got;
    }
}
