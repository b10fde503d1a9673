/*
 * gf_engine_filter_device: a whole signal in the caller's GPU memory
 * through the engine (gpufilt.h). The chunks of engine_bulk.c's
 * process_direct, with the caller's device pointers as every chunk's
 * input and output (gf_chunk.device_memory): the backend reads and writes
 * them in place where a chunk needs nothing staged (the CUDA backend's
 * FFT method: every chunk but the last one or two), else copies between
 * them and its own buffers on the device; it takes the look-ahead zeros
 * after the signal (and the padding of a last, partial partition) as
 * counts (gf_chunk.zero_frames), and writes no output past the signal's
 * (gf_chunk.drop_tail). Chunks of the signal's own frames may be longer
 * than the engine's where the backend says so (device_begin: the CUDA
 * FFT method's run in place, up to 2^23 samples). Nothing goes through
 * host memory: the slots' staging buffers are not used.
 *
 * The FFT method keeps its history on the device. The direct method's
 * halo, the T - 1 frames before a chunk, is the caller's input itself,
 * with zeros before the signal's start made on the device
 * (gf_chunk.halo_zeros); a chunk ends where the signal does, so that none
 * begins inside the look-ahead zeros, which are not in the caller's
 * memory, and chunks hold at least T - 1 frames, so that only the first
 * chunk's halo reaches before the start. One GPU (several exchange
 * history through host memory), no histograms.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

/* Why this engine cannot take device memory, into e->err; 0 when it can. */
static int refuse(gf_engine *e)
{
    if (e->ops == &e->multi_ops)
        snprintf(e->err, sizeof e->err,
                 "GPU memory takes one GPU (gf_config.cuda_devices names %d)", e->ndev);
    else if (!e->ops->device_begin)
        snprintf(e->err, sizeof e->err, "the %s backend takes host memory only", e->ops->name);
    else if (e->method != GF_METHOD_FFT && e->method != GF_METHOD_DIRECT)
        snprintf(e->err, sizeof e->err,
                 "GPU memory takes the FFT and direct methods, not the %s method", e->mth->name);
    else if (e->method == GF_METHOD_DIRECT && e->chunk < e->num_taps - 1)
        snprintf(e->err, sizeof e->err,
                 "GPU memory takes the direct method in chunks of at least the filter's %zu "
                 "taps less one, not %zu frames (gf_config.chunk_frames)",
                 e->num_taps, e->chunk);
    else if (e->hist)
        snprintf(e->err, sizeof e->err, "GPU memory takes no histograms in this version");
    else if (e->handoff)
        snprintf(e->err, sizeof e->err, "GPU memory takes no hand-off");
    else
        return 0;
    return 1;
}

gf_status gf_engine_filter_device(gf_engine *e, const void *in, size_t frames, void *out,
                                  size_t *produced, void *stream)
{
    if (!e || !produced || (frames && (!in || !out)))
        return GF_ERR_INVALID_ARGUMENT;
    *produced = 0;
    gf_status st = gf_engine_reset(e); /* also clears e->err */
    if (st != GF_OK)
        return st;
    if (refuse(e))
        return GF_ERR_UNSUPPORTED;
    const size_t C = e->channels, O = e->out_channels, ss = e->sample_bytes;
    /* the direct method's T - 1 frames (the FFT method keeps its own history) */
    const size_t halo = e->method == GF_METHOD_DIRECT ? e->halo_samples / C : 0;
    const size_t zeros = e->cfg.mode == GF_MODE_FULL ? e->num_taps - 1 : e->latency;
    const size_t total = frames + zeros, outs = total - e->skip_left;
    size_t run = e->chunk; /* a chunk of the signal's own frames may be longer (backend.h) */
    if ((st = e->ops->device_begin(e->backend, in, frames * C * ss, out, outs * O * ss, stream,
                                   &run)) != GF_OK) {
        snprintf(e->err, sizeof e->err, "%s", e->ops->error(e->backend));
        return st; /* a refusal (the memory's kind or device): not sticky */
    }
    int inflight[GF_MAX_SLOTS] = {0};
    size_t off = 0;
    int i;
    for (i = 0; off < total; i++) {
        const int s = i % e->nslots;
        if (inflight[s]) {
            if ((st = gf_eng_wait(e, s)) != GF_OK)
                return gf_eng_fail(e, st);
            inflight[s] = 0;
        }
        /* n frames of the stream (the signal, then its look-ahead zeros),
         * rounded up to whole partitions with zeros whose outputs are not
         * written; only the last chunk is short (and with the direct
         * method, the one that ends where the signal does), and those of
         * the signal's own frames may be as long as the backend takes
         * (`run`). */
        size_t n = total - off < e->chunk ? total - off : e->chunk;
        if (halo && off < frames && off + n > frames && off + n < total)
            n = frames - off; /* the next chunk's halo ends at the signal's end */
        if (run > n && off + run <= frames)
            n = run; /* whole partitions of the signal itself (off is on one) */
        const size_t whole = (n + e->quantum - 1) / e->quantum * e->quantum;
        const size_t real = off < frames ? (frames - off < n ? frames - off : n) : 0;
        const size_t skip = n < e->skip_left ? n : e->skip_left;
        const gf_chunk c = {
            .halo = halo && off > 0
                        ? (const unsigned char *)in + (off > halo ? off - halo : 0) * C * ss
                        : NULL,
            .halo_zeros = halo > off ? halo - off : 0,
            .in = real ? (const unsigned char *)in + off * C * ss : NULL,
            .frames = whole,
            .device_memory = 1,
            .zero_frames = whole - real,
            .drop_tail = whole - n,
            .skip = skip,
            .out = (unsigned char *)out + *produced * O * ss,
        };
        e->skip_left -= skip;
        if ((st = gf_eng_submit(e, s, &c)) != GF_OK)
            return gf_eng_fail(e, st);
        inflight[s] = 1;
        *produced += n - skip;
        off += n;
    }
    for (int j = i > e->nslots ? i - e->nslots : 0; j < i; j++) {
        const int s = j % e->nslots;
        if (inflight[s] && (st = gf_eng_wait(e, s)) != GF_OK)
            return gf_eng_fail(e, st);
    }
    e->in_real = e->in_submitted = frames;
    e->flushed = 1; /* the stream is over: push refuses until a reset */
    return GF_OK;
}
