/*
 * Internal backend interface. A backend filters chunks; the engine
 * (engine_internal.h) cuts the stream into chunks, carries the halo between them (or,
 * for the FFT method, feeds whole partitions in order) and orders their
 * output.
 *
 * What the engine guarantees to every backend (validated once in
 * gf_engine_create and gf_config_check): 1 <= channels <= GF_MAX_CHANNELS;
 * the method is one the backend supports for the precision; direct:
 * 1 <= T <= GF_MAX_TAPS; FFT: 1 <= T <= GF_MAX_FFT_TAPS, the partition P
 * is a power of two in GF_MIN_PARTITION .. GF_MAX_PARTITION and every chunk
 * holds a whole number of partitions, submitted in stream order (NUPC: the
 * same with B for P, and B <= M, a power of two no larger than
 * GF_MAX_PARTITION; no prime_frames); chunk
 * frames, chunk samples and halo samples fit in size_t and int32
 * arithmetic on the device; taps are already rounded to the precision.
 */
#ifndef GF_BACKEND_H
#define GF_BACKEND_H

#include "gpufilt.h"
#include "hist.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most chunks one backend keeps in flight (several devices: each one's). */
#define GF_MAX_SLOTS (4 * GF_MAX_DEVICES)

/* How several devices share a stream (multi.c): by time, chunk i to
 * device i mod n; or by channel, every chunk to every device, each
 * filtering its own channels (no history to exchange, but each device's
 * copies are rows of its channels, which need a wide enough row). */
typedef enum gf_split { GF_SPLIT_TIME = 0, GF_SPLIT_CHANNELS } gf_split;

typedef struct gf_backend_params {
    int channels;
    size_t num_taps;
    /* float or double (by precision): T values, or channels * T with
     * taps_per_channel (channel c's at c * T) */
    const void *taps;
    int taps_per_channel;
    /* A matrix (gf_config.outputs; FFT method, backends with `matrix`): 0,
     * or O outputs, taps then holding channels x O filters (input i to
     * output o at (i*O + o) * T), chunks' out O samples a frame. */
    int outputs;
    gf_method method;     /* GF_METHOD_DIRECT, _FFT or _NUPC, never AUTO */
    size_t partition;     /* FFT: P frames; NUPC: the first, B; direct: 0 */
    size_t max_partition; /* NUPC: the largest, M (gf_nupc_levels); FFT: P; direct: 0 */
    gf_precision precision;
    size_t chunk_frames; /* most frames in one chunk */
    int threads;         /* cpu: workers, 0 = auto */
    int cuda_device;
    /* Several devices (multi.c): the ordinals, one backend instance each;
     * 0 for cuda_device alone (what every instance is given). */
    int cuda_devices[GF_MAX_DEVICES];
    int cuda_device_count;
    const struct gf_backend_ops *multi_inner; /* their backend (multi.c's create) */
    gf_split split;                           /* how they share the stream */
    /* A channel window (the CUDA backend; multi.c's channel split): host
     * buffers (halo, in, out) interleave host_channels channels, of which
     * the instance filters `channels` from channel_offset on. 0: no window
     * (host_channels = channels). */
    int host_channels;
    int channel_offset;
    /* FFT method: most frames of gf_chunk.prime_frames (0: chunks never
     * come with any). */
    size_t history_frames;
    /* Histograms, or NULL for none: the backend copies the plan and fills
     * gf_chunk.hist for every chunk (hist.h). */
    const gf_hist_plan *hist;
} gf_backend_params;

/*
 * One chunk: the causal filter z[j] = sum_k h[k] x[j-k] for j in
 * [0, frames), where x[-1..-(T-1)] are the halo frames and x[0..] the input.
 * Samples are interleaved; the halo is (T-1)*channels samples that end right
 * before in[0] (direct method; NULL for the FFT method, whose backend keeps
 * the history itself, and frames is then a multiple of the partition;
 * with prime_frames, halo holds history the backend is to take in first).
 * Outputs [skip, frames) are written to out[0..].
 *
 * With histograms on: frames [0, hist_frames) of in (plan.of_input) or of
 * out are frames hist_pos .. of the histogrammed stream; the backend writes
 * their partial histograms (every one of gf_hist_segments' segments times
 * nrec, whole) to hist, host memory from host_alloc, by the time the slot
 * is done. Input histograms count real input only: hist_frames may exceed
 * frames - skip, and is 0 for a chunk of same mode's flush zeros.
 */
typedef struct gf_chunk {
    /* FFT method with gf_backend_params.history_frames: the prime_frames
     * frames that end at in[0] (the end of halo's history_frames) are run
     * through the delay line before the chunk, their outputs dropped, so
     * that the chunk's output is what one instance that saw the whole
     * stream gives (a forward transform each suffices: only the last K - 1
     * spectra and the last block are kept). 0: the history is the
     * backend's own. */
    size_t prime_frames;
    /* With prime_frames, several instances by time (multi.c): the state of
     * the instance (of the same backend) that was given the chunk just
     * before this one, and its slot; NULL when there is none. A backend may
     * copy the history from what that slot still holds on its device (GPU
     * to GPU) instead of from halo, where it holds all of it: the same
     * samples, so the same bytes. */
    void *prime_peer;
    int prime_peer_slot;
    /* Several instances by time in segments (engine_bulk.c), with
     * gf_backend_ops.lends: keep_prime = 1 on a segment's primed first
     * chunk: the instance keeps those prime_frames frames of history on
     * its device until the next keep or a reset, for the instance of the
     * segment before, whose last frames they are. lend_index (0: none;
     * else the instance of another segment, plus 1) on that segment's
     * last chunks: the chunk's frames [lend_first, frames), real input,
     * are frames lend_offset .. of what that instance kept, which it was
     * asked to keep by a chunk submitted before this one. They are in
     * `in` as well: a backend may read either (the same samples, so the
     * same bytes); the CUDA backend copies them GPU to GPU, so the host
     * uploads them once. multi.c turns lend_index into lend_peer, that
     * instance's state. */
    int keep_prime;
    int lend_index;
    const void *lend_peer;
    size_t lend_first, lend_offset;
    /* Several instances by time (multi.c): with `at` set, the chunk begins
     * at frame `pos` of the stream, its instance's last chunk or not
     * (gf_engine_process's segments); else it follows the chunk submitted
     * before it. */
    int at;
    uint64_t pos;
    const void *halo;
    /* The first halo_zeros frames of the halo are zeros the engine did not
     * write (before the stream's start, gf_engine_filter_device's direct
     * method): halo points at the frame after them (NULL: all are zeros),
     * and the backend makes them where it reads them. Device-memory chunks
     * only (gf_backend_ops.device_begin); 0 elsewhere. */
    size_t halo_zeros;
    const void *in;
    size_t frames;
    /* 1: in, out and halo are GPU memory of the backend's device
     * (gf_engine_filter_device, after device_begin); 0: host memory. */
    int device_memory;
    /* With gf_backend_ops.zero_tail: the last zero_frames of the frames
     * are zeros (the look-ahead after a flush, a last chunk's padding)
     * that the engine did not write into `in`: the backend makes them
     * where it reads them (a device memset) rather than copying them.
     * `in` is NULL where all are. */
    size_t zero_frames;
    /* With gf_backend_ops.zero_tail: the last drop_tail outputs are not
     * written to `out` (a chunk padded to whole partitions past the end
     * of the stream: gf_engine_filter, gf_engine_filter_device). */
    size_t drop_tail;
    size_t skip;
    void *out;
    void *hist;
    uint64_t hist_pos;
    size_t hist_frames;
} gf_chunk;

/* A backend is a table of facts and functions; the engine asks it, and
 * never compares tables to decide anything. Every backend is listed once,
 * in registry.c, which is how the library finds it. */
typedef struct gf_backend_ops {
    const char *name;     /* what gf_engine_backend reports */
    gf_device device;     /* GF_DEVICE_REF, _CPU or _CUDA: what the engine's config records */
    int slots;            /* chunks that may be in flight at once, 1 .. GF_MAX_SLOTS */
    size_t chunk_samples; /* default chunk (frames x channels) when the config gives none */
    /* Methods it can run, as bits (GF_METHOD_BIT), for f32 and for f64. */
    unsigned methods_f32, methods_f64;
    int histograms; /* 1: fills gf_chunk.hist (gf_backend_params.hist) */
    /* GF_DEVICE_AUTO's preference: the available backend with the highest
     * rank is chosen; 0: never chosen automatically. */
    int auto_rank;
    /* 1: the engine splits its staging copies over threads (one thread
     * moves a fraction of what PCIe can take). */
    int split_copies;
    /* 1: honours gf_chunk.prime_frames (FFT method), so chunks of one
     * stream may go to several instances (multi.c). */
    int primes;
    /* 1: its FFT method takes a matrix (gf_backend_params.outputs). */
    int matrix;
    /* 1: honours gf_chunk.zero_frames (never reads those frames of `in`)
     * and gf_chunk.drop_tail. */
    int zero_tail;
    /* 1: honours gf_chunk.keep_prime and lend_peer (several instances by
     * time in segments: a segment's history uploaded once). */
    int lends;
    /* 1 when it can be used on this machine now (cached where asking is
     * slow); called before create, from any thread. */
    int (*available)(void);
    gf_status (*create)(const gf_backend_params *p, void **state, char *detail, size_t detail_size);
    void (*destroy)(void *state);
    /* Host buffers for staging: pinned where the backend benefits. */
    void *(*host_alloc)(void *state, size_t bytes);
    void (*host_free)(void *state, void *p);
    /* Non-zero when caller memory p..p+bytes may be handed to submit
     * directly (the cuda backend needs it page-locked). */
    int (*direct_ok)(void *state, const void *p, size_t bytes);
    /* Forget the stream's history (FFT: the delay line); NULL when the
     * backend keeps none. Called with no chunk in flight. */
    void (*reset)(void *state);
    /* Start filtering chunk c in slot s (0 <= s < slots). The pointers stay
     * valid until wait(s) returns. May run synchronously. */
    gf_status (*submit)(void *state, int slot, const gf_chunk *c);
    /* Non-blocking: *done = 1 when slot's output is in host memory. */
    gf_status (*query)(void *state, int slot, int *done);
    /* Block until slot's output is in host memory. */
    gf_status (*wait)(void *state, int slot);
    /* Detail of the last failure ("" if none). */
    const char *(*error)(void *state);
    /* Optional (NULL: the backend takes host memory only): chunks whose in
     * and out are the caller's device memory follow (gf_engine_filter_device):
     * check that in[0, in_bytes) and out[0, out_bytes) are memory of this
     * instance's device (GF_ERR_INVALID_ARGUMENT, the reason in error()),
     * and order what follows after the work already queued on the caller's
     * stream (a cudaStream_t; NULL: the legacy default stream). *chunk: in,
     * the engine's chunk; out, the longest chunk of the signal's own frames
     * (whole partitions before its end: no zero_frames, no drop_tail) the
     * backend takes from here on, at least the engine's. Every other chunk
     * stays within the engine's. */
    gf_status (*device_begin)(void *state, const void *in, size_t in_bytes, const void *out,
                              size_t out_bytes, void *stream, size_t *chunk);
    /* Optional (NULL: not needed): make host memory another backend
     * allocated usable for fast transfers (hand-off, handoff.h), and undo
     * it before that memory is freed. */
    gf_status (*host_register)(void *state, void *p, size_t bytes);
    void (*host_unregister)(void *state, void *p);
} gf_backend_ops;

/* The cost model of a device kind (method.c): per output sample, in
 * multiply-adds of its direct kernel, the FFT method costs
 * a log2(2P) + b K + f; both methods cost at least floor_t; the default
 * partition is about T / k0, at most max_p. */
typedef struct gf_cost_model {
    double a, b, f;
    double floor_t;
    size_t k0;
    size_t max_p;
    int direct_only; /* 1: the cost model always chooses the direct method */
} gf_cost_model;

/* The registry (registry.c): every device kind the library knows, and the
 * backend this build has for it. */
typedef struct gf_backend_entry {
    gf_device device;
    /* The kind's name, the one spelling of it (gf_device_name): the same
     * as its backend's gf_backend_ops.name. */
    const char *name;
    /* Why there is no backend when ops and load are NULL (one line). */
    const char *absent;
    gf_cost_model cost;        /* known whether or not this build has the backend */
    const gf_backend_ops *ops; /* built into the library; NULL: see load */
    /* A backend in a module loaded at run time (the CUDA one, gf_cuda.h):
     * its ops, loaded on the first call (once, thread-safe), or NULL with
     * *why (NULL-safe) the one-line reason. NULL: no module in this build. */
    const gf_backend_ops *(*load)(const char **why);
} gf_backend_entry;

/* The registry's entries, in order, and how many (at least one). */
const gf_backend_entry *gf_backends(size_t *count);
/* The entry of a device kind, or NULL when the library knows no such kind
 * (GF_DEVICE_AUTO included). */
const gf_backend_entry *gf_backend_entry_of(gf_device device);
/* The entry's backend, built in or loaded (which may load a module), or
 * NULL with *why (NULL-safe) saying what is missing, in one line. */
const gf_backend_ops *gf_backend_entry_ops(const gf_backend_entry *b, const char **why);
/* The backend of a device kind in this build (loaded if it is a module's),
 * or NULL. */
const gf_backend_ops *gf_backend_of(gf_device device);
/* GF_DEVICE_AUTO's choice: the available backend of highest auto_rank. */
const gf_backend_ops *gf_backend_auto(void);

/* Several devices (multi.c): a backend whose instances, one per ordinal
 * of gf_backend_params.cuda_devices, take the chunks in turn (GF_SPLIT_TIME:
 * slot s to instance s % n; n * inner->slots slots) or each filter a share
 * of every chunk's channels (GF_SPLIT_CHANNELS: inner->slots slots, no
 * histograms). *out is filled from inner (which must live as long as out);
 * create needs params with the devices and this split. */
void gf_multi_ops(const gf_backend_ops *inner, int n, gf_split split, gf_backend_ops *out);
/* The split for a job on n devices: by channel for the FFT method without
 * histograms where each device's share of a frame is at least
 * GF_SPLIT_MIN_ROW bytes (its copies run at full speed: bench/copy_shapes.py
 * measured rows of 16 bytes at a fifth of PCIe's rate up and a thousandth
 * down, rows of 64 bytes at four fifths), by time otherwise. */
#define GF_SPLIT_MIN_ROW 64
gf_split gf_multi_split(gf_method method, int channels, size_t sample_bytes, int histograms, int n);
/* Device d's share of the channels with the channel split: *first and the
 * count (the first channels % n devices take one more). */
int gf_multi_share(int channels, int n, int d, int *first);

/* Availability for backends that need nothing but the CPU (sync.c). */
int gf_sync_available(void);

/* Callbacks for backends that finish every chunk inside submit
 * (sync.c): aligned malloc, direct access always allowed, every slot
 * always done, no error detail. */
void *gf_sync_host_alloc(void *state, size_t bytes);
void gf_sync_host_free(void *state, void *p);
int gf_sync_direct_ok(void *state, const void *p, size_t bytes);
gf_status gf_sync_query(void *state, int slot, int *done);
gf_status gf_sync_wait(void *state, int slot);
const char *gf_sync_error(void *state);

/* The bit of a method in gf_backend_ops.methods_*. */
#define GF_METHOD_BIT(m) (1u << (unsigned)(m))

/* Check every rule of gf_config that the library relies on (config.c):
 * GF_OK, or GF_ERR_INVALID_ARGUMENT with the parameter named in detail. */
gf_status gf_config_check(const gf_config *c, char *detail, size_t n);

/* Write a one-line failure reason into detail (NULL-safe) (status.c). */
void gf_detail(char *detail, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Bytes of host memory available to a new allocation without swapping:
 * MemAvailable where /proc/meminfo has it, else free physical pages;
 * SIZE_MAX when neither is known (host_mem.c). */
size_t gf_host_available(void);

#ifdef __cplusplus
}
#endif

#endif /* GF_BACKEND_H */
