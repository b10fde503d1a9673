/*
 * The engine's insides, shared by its parts:
 *   engine.c         create (in its steps), destroy, reset; the backend calls
 *   engine_method.c  the methods as the engine sees them (framing, bound)
 *   engine_stream.c  the slot ring: push, pull, flush, submit, wait
 *   engine_bulk.c    gf_engine_process, zero-copy where nothing is buffered
 *   engine_hist.c    histogram glue: positions, merging in stream order
 *   engine_query.c   what an engine is and does (getters)
 *
 * Every mode is computed as the causal filter z[j] = sum_k h[k] x[j-k] with
 * zero initial history. Same mode is z delayed by its latency c = (T-1)/2:
 * the first c outputs are dropped and c zero frames are fed at flush, so the
 * output length equals the input length; full mode feeds T-1 zero frames at
 * flush and drops nothing. One mechanism for every mode keeps chunk seams
 * identical everywhere.
 *
 * Chunks are framed by the method (engine_method.c): the direct method
 * carries the T-1 halo frames from each chunk to the next; the FFT method's
 * backend keeps the history itself (a delay line of spectra), so its chunks
 * carry no halo and hold whole partitions of P frames, in stream order.
 * Frames past the last whole block wait in `carry` until more input
 * completes it, or flush pads it with zeros (whose outputs are dropped).
 *
 * Slot ring: slots are used in round-robin order. Submitted slots occupy
 * [head, head + nsub); the slot after them is the one being filled. A slot's
 * input buffer is [halo | chunk frames]; the halo of the next chunk is the
 * tail of the previous slot's buffer, which stays intact until that slot
 * comes round again.
 *
 * Hand-off (gf_config.handoff, handoff.h): the engine starts on a backend
 * that finishes chunks in submit (cpu, ref) while another is set up on a
 * background thread with the same parameters; at the first chunk boundary
 * after it is ready, chunks go to it. The slot buffers (allocated by the
 * first, registered with the second) and the halo in them carry on as they
 * are; each slot remembers which backend took its chunk.
 *
 * Histograms (hist.h): every chunk is told which frames of the
 * histogrammed stream it holds (gf_eng_hist_chunk) and its partials are
 * merged when its slot is seen ready, which happens in stream order (pull
 * and the staged process take the head slot; wait, gf_engine_hist_next and
 * the direct path go from the oldest chunk on). The last short block is
 * queued once the stream has been flushed and every chunk is ready.
 */
#ifndef GF_ENGINE_INTERNAL_H
#define GF_ENGINE_INTERNAL_H

#include "backends/backend.h"
#include "copy_pool.h"
#include "handoff.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gf_slot {
    unsigned char *in;  /* halo_samples + chunk samples */
    unsigned char *out; /* chunk frames of out_channels */
    size_t frames;      /* input frames of the submitted chunk */
    size_t out_frames;  /* outputs it produces (frames - skip) */
    size_t out_pos;     /* outputs already pulled */
    int ready;          /* backend reported the output in host memory */
    void *hparts;       /* partial histograms of its chunk (NULL: histograms off) */
    uint64_t hpos;      /* first histogrammed stream frame of its chunk */
    size_t hframes;     /* histogrammed frames in its chunk */
    size_t zero_from;   /* frames from here on are zeros not written to `in` (zero_tail) */
} gf_slot;

typedef struct gf_method_ops gf_method_ops;

struct gf_engine {
    gf_config cfg; /* cfg.taps is not kept: see taps_d */
    const gf_backend_ops *ops;
    void *backend;            /* the backend's state */
    size_t channels;          /* interleaved channels per input frame */
    size_t out_channels;      /* per output frame: channels, or a matrix's outputs */
    size_t num_taps;          /* taps per filter, T */
    gf_method method;         /* GF_METHOD_DIRECT, _FFT or _NUPC */
    const gf_method_ops *mth; /* the method's framing and bound */
    size_t partition;         /* FFT partition in frames, P (NUPC: the first, B); 0 for direct */
    size_t max_partition;     /* NUPC: the largest partition, M; FFT: P; 0 for direct */
    size_t quantum;           /* a submitted chunk holds a whole number of these frames */
    size_t min_chunk;         /* the default chunk is at least this many frames */
    size_t seg_chunk;         /* FFT: one device's least chunk (engine_bulk.c's segments) */
    int no_segments;          /* GPUFILT_SEGMENTS=0: several devices' chunks in turn */
    size_t chunk;             /* frames per chunk (a multiple of quantum) */
    size_t halo_samples;      /* (T-1) * channels for direct, 0 for FFT */
    size_t sample_bytes;      /* bytes per sample */
    size_t latency;           /* (T-1)/2 in same mode, else 0 */
    size_t filters;           /* 1, channels with taps_per_channel, channels x outputs */
    double *taps_d;           /* filters x T taps as doubles (after rounding to precision) */
    void *taps;               /* the same in the precision, handed to the backend */
    unsigned char *carry;     /* frames past the last whole quantum (quantum > 1) */
    size_t carried;           /* frames in carry (< quantum) */
    int nslots;
    gf_slot slot[GF_MAX_SLOTS];
    unsigned char *history; /* the last halo_samples input samples, for the direct path */
    int head, nsub;
    int filling;       /* slot (head + nsub) % nslots is being filled */
    size_t filled;     /* frames in it */
    int history_slot;  /* slot whose buffer tail holds the last halo_samples; -1: zeros */
    size_t skip_left;  /* same-mode outputs still to drop */
    size_t zeros_left; /* look-ahead zero frames still to feed after flush */
    int flushed;
    /* 1: the backend takes trailing zero frames as a count
     * (gf_chunk.zero_frames) and nothing else reads the slots' input, so
     * the zeros after a flush are not written to host memory (the FFT
     * method's look-ahead can be hundreds of MiB: a memset, and an upload,
     * of nothing). */
    int zero_tail;
    gf_status failed; /* sticky: a backend failure ends the stream */
    char err[256];
    gf_hist_config hist_config; /* cfg.hist points here when histograms are on */
    gf_hist_plan hist_plan;
    gf_hist_state *hist;               /* NULL: histograms off */
    uint64_t in_real;                  /* input frames taken (flush zeros not counted) */
    uint64_t in_submitted;             /* input frames submitted, flush zeros included */
    uint64_t out_submitted;            /* output frames submitted */
    gf_handoff *handoff;               /* the hand-off backend being set up, or NULL */
    const gf_backend_ops *handoff_ops; /* its functions (NULL: no hand-off) */
    void *handoff_backend;             /* the hand-off backend's state once taken */
    int64_t handoff_frame;             /* input frame where it took over; -1 */
    unsigned char owner[GF_MAX_SLOTS]; /* 1: the slot's chunk went to handoff_backend */
    int err_owner;                     /* whose error detail gf_eng_fail reports */
    gf_copy_pool *copies;              /* staging copies split over threads, or NULL */
    /* Several CUDA devices (multi.c): ops (and handoff_ops) point at these
     * tables wrapping the CUDA backend; by time, chunk i goes to
     * devices[i % ndev]; by channel (ops only), every chunk to each. */
    gf_backend_ops multi_ops, multi_handoff_ops;
    gf_split split; /* ops's, with several devices */
    int ndev;       /* CUDA devices (1 with one, or none) */
    int multi_cpu;  /* GPUFILT_CPU_INSTANCES: ndev cpu instances (engine.c, for tests) */
    const gf_backend_ops *multi_inner; /* several devices' backend: cuda, or cpu */
    int devices[GF_MAX_DEVICES];
    uint64_t dev_chunks[GF_MAX_DEVICES], dev_frames[GF_MAX_DEVICES];
};

/* A method as the engine sees it (engine_method.c): how it frames chunks,
 * and its bound on |error|. The backend runs it (backend.h). */
struct gf_method_ops {
    gf_method method;
    const char *name; /* in messages: "direct", "FFT" */
    /* 1: a halo (if framing gives one) is history a backend primes with
     * (FFT on several devices), so there is none before the stream's first
     * frame: no zeros, and the stream's first chunk gets none. 0: the halo
     * is input the filter reads, zeros before the stream (direct). */
    int halo_primes;
    /* Set e->partition, e->halo_samples, e->quantum and e->min_chunk from
     * e->num_taps, e->channels, the backend and the configured partition
     * (0: the cost model's). */
    void (*frame)(gf_engine *e, size_t partition);
    /* The bound on |error| of channel filter h (T taps) for |x| <= max_abs_x. */
    double (*error_bound)(const gf_engine *e, const double *h, double max_abs_x);
};

/* The method of a gf_method value, or NULL (GF_METHOD_AUTO included). */
const gf_method_ops *gf_method_ops_of(gf_method m);

/* engine.c: the backend of slot s's chunk (the first, or the hand-off's). */
gf_status gf_eng_submit(gf_engine *e, int s, const gf_chunk *c);
gf_status gf_eng_query(gf_engine *e, int s, int *done);
gf_status gf_eng_wait(gf_engine *e, int s);
/* Record a backend failure (sticky) with its detail; returns st. */
gf_status gf_eng_fail(gf_engine *e, gf_status st);
/* The stream's state back to its start (buffers kept). */
void gf_eng_reset_state(gf_engine *e);

/* engine_stream.c */
gf_status gf_eng_submit_fill(gf_engine *e);
/* The halo_samples samples that end slot h's frames (the next chunk's
 * halo) into dst, which may be h->in: what h->in holds, and zeros where h
 * has zeros that were never written (zero_from). */
void gf_eng_slot_tail(gf_engine *e, unsigned char *dst, const gf_slot *h);

/* engine_hist.c: fill the histogram fields of chunk c, about to be
 * submitted in slot sl with `frames` input frames (flush zeros included)
 * and `out_frames` outputs, and count them as submitted. */
void gf_eng_hist_chunk(gf_engine *e, gf_slot *sl, gf_chunk *c, size_t frames, size_t out_frames);
/* Merge the partials of slot sl's chunk, which the backend has finished. */
gf_status gf_eng_hist_merge(gf_engine *e, gf_slot *sl);
/* The backend is done with submitted slot s (callers go in stream order). */
gf_status gf_eng_set_ready(gf_engine *e, int s);
/* After flush, once every chunk is submitted and ready: the last block. */
gf_status gf_eng_hist_check_end(gf_engine *e);

#endif /* GF_ENGINE_INTERNAL_H */
