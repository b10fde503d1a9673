/*
 * gpufilt — streaming FIR filtering on the GPU or CPU: bit-exact across
 * backends and chunk sizes in direct form, and fast for long filters (up to
 * 2^22 taps) by partitioned FFT convolution.
 *
 * The library knows nothing of files, pipes or sound cards: it takes
 * interleaved frames in and gives filtered frames out.
 *
 * Kept whole, though long, on purpose: the public API and its contract, two thirds comments.
 *
 * Filter semantics (taps h[0..T-1], input x[0..N-1] per channel, channels
 * filtered independently, each with its own taps or all with the same, x
 * outside [0, N) taken as 0):
 *
 *   GF_MODE_SAME    y[i] = sum_k h[k] * x[i + (T-1)/2 - k], i < N    (scipy "same")
 *   GF_MODE_CAUSAL  y[i] = sum_k h[k] * x[i - k],           i < N    (lfilter(h, 1, x))
 *   GF_MODE_FULL    y[i] = sum_k h[k] * x[i - k],           i < N+T-1 (scipy "full")
 *
 * Methods. GF_METHOD_DIRECT computes every output as
 *
 *   acc = h[0] * x[i'];  for k = 1 .. T-1: acc = acc + h[k] * x[i' - k]
 *
 * in the engine's precision, each multiply and each add rounded separately
 * (no fused multiply-add, no reassociation). Starting from the first product
 * (not from 0) makes a 1-tap identity filter exact, -0.0 included. Every
 * backend follows it, so direct output is bit-identical across backends,
 * chunk sizes and call patterns. Up to GF_MAX_TAPS taps.
 *
 * GF_METHOD_FFT is uniformly partitioned overlap-save convolution: the taps
 * are cut into K partitions of P frames (P a power of two, the partition
 * size), each transformed once at create (FFT size 2P, computed in double
 * and rounded to the precision); each partition of P input frames is
 * transformed once and kept in a frequency-domain delay line of K spectra;
 * input partition j's output is the second half of the inverse transform of
 * sum_k H_k X_{j-k}, summed in an order that depends only on K and the
 * backend (cpu: k = 0 .. K-1; cuda: runs of 128 partitions in k order,
 * the runs added in order). Exactness contract:
 *   - output bytes do not depend on chunk size, read sizes or call pattern,
 *     for a given backend, precision and partition size (the cpu and cuda
 *     backends' FFT libraries differ, so they agree only within the bound);
 *   - every output's error against the exact sum is at most
 *       eps * (2 * log2(2P) + K + 4) * sum_k |h[k]| * max |x|
 *     with eps = 2^-24 (f32) or 2^-53 (f64) and max |x| over the channel's
 *     input (gf_engine_error_bound computes it);
 *   - output comes in whole partitions: an output frame is available once
 *     the partition holding its input (plus the same-mode look-ahead) is
 *     complete, or at flush.
 * Up to GF_MAX_FFT_TAPS taps; memory (see gf_engine_create) grows with the
 * taps, not with the stream.
 *
 * GF_METHOD_NUPC (since 0.5) is non-uniformly partitioned convolution: the
 * taps are cut into segments, each filtered by its own uniformly partitioned
 * overlap-save convolution (a level), and the levels' outputs are summed.
 * Level 0 has partitions of B frames (gf_config.partition, or
 * gf_nupc_partition_choose), level l of B 2^l, up to a largest size M that
 * the cost model picks (gf_nupc_max_partition); each level below M takes 2
 * partitions of the taps and the level of size M all the rest:
 *   level l: partition S_l = min(B 2^l, M), taps h[o_l .. o_l + K_l S_l),
 *            o_0 = 0, o_(l+1) = o_l + K_l S_l, K_l = 2 below M
 * (gf_nupc_levels lists them). Level l's output for frame n is
 * sum_k h[o_l + k] x[n - o_l - k], computed a block of S_l frames at a time
 * once that block of input is complete; as o_l >= S_l for l >= 1, the block
 * of input ending at frame t feeds outputs from t - S_l + o_l >= t on, so it
 * can be computed ahead: it is due (o_l - S_l)/B + 1 partitions of B later
 * (1 for level 1, 2^l - 1 for level l below M). Every output is
 *   y = y_0 + y_1 + ... + y_(L-1)   (in that order, rounded as written),
 * so, as for FFT:
 *   - output bytes do not depend on chunk size, read sizes or call pattern,
 *     for a given backend, precision, B and taps (which fix M);
 *   - every output's error against the exact sum is at most
 *       eps * (sum_l (2 log2(2 S_l) + K_l + 4) * sum_(k in level l) |h[k]|
 *              + (L - 1) * sum_k |h[k]|) * max |x|
 *     (each level's bound as FFT's over its segment, plus the L - 1 sums);
 *   - output comes in whole partitions of B frames: the latency is B, where
 *     FFT's is its partition (about T/8 by default).
 * On the cpu backend a level whose slack o_l - S_l is 32 chunks or more
 * (gf_config.chunk_frames of a few B, as a live engine's) runs on a thread
 * of its own, created with the engine (at nice 10 on Linux), and the call
 * that needs its outputs waits for it; on the cuda backend (since 0.6) one
 * whose slack is 4 chunks or more runs on a CUDA stream of its own at the
 * device's lowest priority (the chunk's own work at its highest), its
 * blocks queued one such level a chunk, and a chunk waits only for the
 * blocks it sums. Either way its bytes are the same. The cpu and cuda
 * backends (GF_ERR_UNSUPPORTED elsewhere), one device; never chosen by
 * GF_METHOD_AUTO.
 *
 * Lifecycle: gf_engine_create / gf_engine_push + gf_engine_pull (any number
 * of frames per call) / gf_engine_flush / gf_engine_reset /
 * gf_engine_destroy. One engine must not be used from two threads at once;
 * distinct engines are independent.
 */
#ifndef GPUFILT_H
#define GPUFILT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUFILT_VERSION_MAJOR 0
#define GPUFILT_VERSION_MINOR 6
#define GPUFILT_VERSION_PATCH 0

/** Most taps of the direct method (the whole f64 filter fits in 64 KiB of GPU constant memory). */
#define GF_MAX_TAPS 8192
/** Most taps per channel of the FFT method. */
#define GF_MAX_FFT_TAPS ((size_t)1 << 22)
/** FFT partition sizes (frames): powers of two in this range. */
#define GF_MIN_PARTITION ((size_t)16)
#define GF_MAX_PARTITION ((size_t)1 << 20)
/** Largest number of interleaved channels. */
#define GF_MAX_CHANNELS 1024
/** Largest chunk (gf_config.chunk_frames): frames, and frames x channels. */
#define GF_MAX_CHUNK_FRAMES  ((size_t)1 << 28)
#define GF_MAX_CHUNK_SAMPLES ((size_t)1 << 30)
/** Most CPU backend threads used (gf_config.threads above it is capped). */
#define GF_MAX_THREADS 64
/** Most CUDA devices one engine runs on (gf_config.cuda_devices). Since 0.4. */
#define GF_MAX_DEVICES 8
/** Histogram limits (gf_hist_config.bins and .block_frames). */
#define GF_HIST_MAX_BINS  ((size_t)65536)
#define GF_HIST_MAX_BLOCK ((size_t)1 << 28)

typedef enum gf_status {
    GF_OK = 0,
    GF_ERR_INVALID_ARGUMENT, /* a parameter is out of range; detail names it */
    GF_ERR_NO_MEMORY,        /* host or pinned allocation failed */
    GF_ERR_NO_DEVICE,        /* cuda asked for, but no usable GPU (or built without CUDA, or
                                without its module, libgpufilt-cuda.so; detail says which) */
    GF_ERR_CUDA,             /* a CUDA call failed; detail names the call */
    GF_ERR_STATE,            /* call not allowed now (e.g. push after flush) */
    GF_ERR_THREAD,           /* a worker thread could not be started */
    GF_ERR_UNSUPPORTED,      /* the backend (or this build) cannot do what was asked */
    GF_NO_RECORD             /* not a failure: no histogram record is ready (gf_engine_hist_next) */
} gf_status;

/** Static English message for a status; never NULL. */
const char *gf_strerror(gf_status status);

/** "MAJOR.MINOR.PATCH" plus the backends compiled in, e.g. "0.6.0 (ref, cpu, cuda)". */
const char *gf_version(void);

typedef enum gf_mode { GF_MODE_SAME = 0, GF_MODE_CAUSAL = 1, GF_MODE_FULL = 2 } gf_mode;

typedef enum gf_method {
    GF_METHOD_AUTO = 0,   /* the cost model's choice (gf_method_choose) */
    GF_METHOD_DIRECT = 1, /* direct form: bit-exact, up to GF_MAX_TAPS taps */
    GF_METHOD_FFT = 2,    /* partitioned FFT convolution: cpu and cuda backends */
    GF_METHOD_NUPC = 3    /* non-uniformly partitioned FFT convolution: cpu (0.5), cuda (0.6) */
} gf_method;

typedef enum gf_precision {
    GF_PRECISION_F32 = 0, /* samples are float, arithmetic in float */
    GF_PRECISION_F64 = 1  /* samples are double, arithmetic in double */
} gf_precision;

typedef enum gf_device {
    GF_DEVICE_NONE = -1, /* no device: gf_config.handoff's "no hand-off" (since 0.3) */
    GF_DEVICE_AUTO = 0,  /* cuda when a usable GPU exists, else cpu */
    GF_DEVICE_CPU = 1,   /* threaded, vectorised CPU backend */
    GF_DEVICE_CUDA = 2,  /* CUDA backend; GF_ERR_NO_DEVICE without a GPU */
    GF_DEVICE_REF = 3    /* the serial reference: slow, plain, the oracle */
} gf_device;

/**
 * Per-block histograms, computed while filtering (on the GPU with the cuda
 * backend; only counts come back). Blocks are defined on the stream: block b
 * holds frames [b * block_frames, (b + 1) * block_frames) of the output (or
 * input) stream, whatever the chunk size, call pattern or device, and the
 * last block may be short. Output frames are numbered after same mode's
 * dropped look-ahead (frame 0 is the first output); input histograms count
 * the real input only, never the look-ahead zeros fed at flush. Records are
 * identical, every field, on every backend (docs/histograms.md).
 *
 * Samples are converted to double first. Bin rule, in double precision with
 * each operation rounded separately:
 *   step = (hi - lo) / bins,  edge(i) = lo + i * step for i < bins,  edge(bins) = hi
 *   i = (size_t)((x - lo) * (bins / (hi - lo))), clamped to [0, bins - 1];
 *   then i-- if x < edge(i), else i++ if i < bins - 1 and x >= edge(i + 1).
 * This is numpy.histogram's rule (numpy >= 1.13, float64 samples): bin i
 * holds edge(i) <= x < edge(i + 1), and x == hi lands in the last bin
 * (exactly so while the bins are wider than a few ulps of lo and hi).
 * x < lo counts as below, x > hi as above (infinities included), NaN only
 * as nan.
 *
 * Memory: the engine keeps one block's counts per record (bins x 8 bytes
 * each) and the queued records; the backend keeps each chunk's partial
 * counts, which the engine bounds to 64 MiB by shortening the chunk where
 * blocks are short (gf_engine_chunk_frames tells; output does not change).
 */
typedef struct gf_hist_config {
    size_t bins;         /* 1 .. GF_HIST_MAX_BINS */
    size_t block_frames; /* frames per block, 1 .. GF_HIST_MAX_BLOCK */
    double lo, hi;       /* finite, lo < hi, hi - lo and bins / (hi - lo) finite */
    int of_input;        /* 0: histograms of the output stream; 1: of the input */
    int mix;             /* 0: one record per channel; 1: one record of all channels */
} gf_hist_config;

/**
 * One block's histogram (of one channel, or of all channels with mix).
 * Samples counted: frames, or frames * channels with mix; each lands in
 * exactly one of bins, below, above, nan.
 *
 * rms, the same on every backend whatever the chunking: with n the non-NaN
 * samples, NaN when n == 0; +inf (it saturates) when one of them has
 * |x| >= 4096 or is infinite; else sqrt(S * 2^-64 / n), where S is the
 * exact sum over them of floor(x*x * 2^64) (x*x one rounded double
 * product), rounded once to double; each of *, / and sqrt rounded once.
 * That is the root mean square to within about an ulp, except that each
 * square is first truncated to a multiple of 2^-64 (so signals below about
 * 1e-10 read low, down to 0).
 */
typedef struct gf_hist_record {
    uint64_t block;       /* block index from 0 */
    uint64_t first_frame; /* block * block_frames */
    uint64_t frames;      /* frames in this block; the last block may be short */
    int channel;          /* channel from 0, or -1 with mix */
    uint64_t below;       /* samples < lo */
    uint64_t above;       /* samples > hi (clipping) */
    uint64_t nan;         /* NaN samples */
    double min, max;      /* over the non-NaN samples, -0.0 below +0.0; NaN when there are none */
    double rms;           /* see above */
    /* `bins` counts, owned by the engine: valid until the next
     * gf_engine_hist_next, gf_engine_reset or gf_engine_destroy. */
    const uint64_t *bins;
} gf_hist_record;

/**
 * An engine's configuration, grouped by meaning: the filter, the stream,
 * where it runs, the histograms. Start from gf_config_default() and set
 * what differs (the layout changed in 0.3; see README, "ABI").
 */
typedef struct gf_config {
    /* ---- The filter ---- */
    /**
     * Explicit coefficients, or NULL. Copied at create, rounded to the
     * precision. One filter h[0..num_taps-1] for every channel, or with
     * taps_per_channel channels * num_taps values: channel c's filter at
     * taps + c * num_taps.
     * The caller's obligation: the array holds at least that many doubles
     * (num_taps, or channels * num_taps with taps_per_channel). A pointer
     * carries no length, so the library cannot check it: gf_engine_create
     * reads all of them, and a shorter array is read past its end. A
     * binding that takes arrays (a taps x channels matrix, say) checks
     * their shape against channels before it fills this in.
     */
    const double *taps;
    /**
     * Number of taps T per channel: 1 .. GF_MAX_TAPS for the direct method,
     * 1 .. GF_MAX_FFT_TAPS for the FFT method. With taps == NULL the filter
     * is the mean filter h[k] = 1/T (1/T rounded to the engine's precision).
     */
    size_t num_taps;
    /** 0: taps is one filter for every channel; 1: one filter per channel. */
    int taps_per_channel;
    /**
     * A matrix of filters (since 0.6): 0 (the default) for none, or O
     * outputs, 1 .. GF_MAX_CHANNELS, from the `channels` (C) inputs. taps
     * then holds C x O filters of num_taps (taps_per_channel is implied):
     * filter i*O + o, at taps + (i*O + o) * num_taps, takes input i into
     * output o, and every output is the sum over the inputs,
     *   y_o = sum_i h_(i*O+o) * x_i
     * (true stereo: C = O = 2, filters LL, LR, RL, RR). Frames pushed have
     * C channels, frames pulled O. The FFT method only (GF_METHOD_AUTO
     * chooses it; the direct and NUPC methods: GF_ERR_UNSUPPORTED), on the
     * cpu and cuda backends: each input is transformed once, each output's
     * spectra summed over its inputs and partitions and transformed back
     * once: C + O transforms per partition of input where filtering C x O
     * channels takes 2 C O. Summation order: the inputs in turn, each as
     * the FFT method sums one filter (cpu: k = 0 .. K-1 continuing one
     * sum; cuda: each input's runs of 128 partitions, the runs of every
     * input added in order). Its bound is the FFT method's with C K terms,
     *   eps * (2 * log2(2P) + C K + 4) * sum_i sum_k |h_(i*O+o)[k]| * max |x|
     * with max |x| over every input (gf_engine_error_bound's channel is
     * the output o). No histograms, no hand-off; several CUDA devices
     * share it by time.
     */
    int outputs;
    gf_mode mode;
    /** GF_METHOD_AUTO (default), _DIRECT, _FFT or _NUPC. */
    gf_method method;
    /**
     * FFT partition size P in frames: a power of two in GF_MIN_PARTITION ..
     * GF_MAX_PARTITION, or 0 for the cost model's choice
     * (gf_partition_choose). Chunks are rounded up to whole partitions.
     * GF_METHOD_NUPC: its first (smallest) partition B, 0 for
     * gf_nupc_partition_choose. Ignored by the direct method.
     */
    size_t partition;
    gf_precision precision;

    /* ---- The stream ---- */
    /** Interleaved channels per frame, 1 .. GF_MAX_CHANNELS. */
    int channels;
    /**
     * Frames per processing chunk, 0 for the backend's default. Output does
     * not depend on it; it trades latency and memory against throughput.
     * At most GF_MAX_CHUNK_FRAMES frames and GF_MAX_CHUNK_SAMPLES samples
     * (frames * channels).
     */
    size_t chunk_frames;

    /* ---- Where it runs ---- */
    gf_device device;
    /**
     * Hand-off: GF_DEVICE_NONE (the default) for none. GF_DEVICE_CUDA: start
     * filtering on `device` (GF_DEVICE_CPU or _REF) at once while the CUDA
     * backend is set up on a background thread (its start-up costs a few
     * tenths of a second); from the first chunk after it is ready, chunks
     * go to it. Direct method only: with the FFT method (whose output
     * depends on its backend) the hand-off is not made. Output bytes are the
     * same whoever filtered which chunk. gf_engine_handoff_frame says where
     * it happened. GF_DEVICE_AUTO is refused (GF_ERR_INVALID_ARGUMENT): it
     * is a policy, not a device to hand off to (before 0.3 it meant none).
     */
    gf_device handoff;
    /** CPU backend worker threads; 0 = one per online CPU; at most GF_MAX_THREADS are used. */
    int threads;
    /** CUDA device ordinal for GF_DEVICE_CUDA / AUTO (when cuda_devices is empty). */
    int cuda_device;
    /**
     * Several GPUs (since 0.4): cuda_device_count ordinals, 1 ..
     * GF_MAX_DEVICES, copied at create; 0 (the default) for cuda_device
     * alone. Chunks are dealt to them in turn, so the output is the same
     * bytes as on one GPU: each chunk of the direct method carries its halo;
     * for the FFT method a device first runs the K partitions before its
     * chunk through its delay line (a forward transform each, their output
     * dropped) and every device uses the same partition and plans. An
     * ordinal may repeat (two instances on one GPU). Ignored unless the
     * engine runs (or hands off) to cuda.
     */
    const int *cuda_devices;
    int cuda_device_count;

    /* ---- Histograms ---- */
    /**
     * Per-block histograms, or NULL for none. Copied at create. May shorten
     * the chunk (see gf_hist_config).
     */
    const gf_hist_config *hist;
} gf_config;

/** A config with defaults: 1 channel, 1 tap, same mode, f32, auto device and method, no
 * hand-off (GF_DEVICE_NONE), no histograms. */
gf_config gf_config_default(void);

/**
 * The cost model behind GF_METHOD_AUTO, which depends only on its arguments
 * (never on timing), so the same configuration always computes the same
 * way. device is the backend that will run it (GF_DEVICE_CPU or _CUDA;
 * _REF has only the direct method). Per output sample the direct method
 * costs T multiply-adds; the FFT method about 2 log2(2P) + 4 K operations
 * for the transforms and the delay line (P from gf_partition_choose when
 * partition is 0, K = ceil(T / P)), weighted by what each backend measured
 * (README, "Long filters"). Direct is chosen where it is not slower, and
 * always up to 32 taps; FFT beyond GF_MAX_TAPS.
 */
gf_method gf_method_choose(size_t taps, int channels, gf_precision precision, gf_device device,
                           size_t partition);

/**
 * The cost model's figure for one output sample of `method` (AUTO: the
 * method gf_method_choose picks) on `device`, in multiply-adds of its direct
 * kernel: T for direct, A log2(2P) + B K + F for FFT (not floored at the
 * host copies). For sizing jobs, e.g. choosing a device.
 */
double gf_method_cost(size_t taps, gf_device device, gf_method method, size_t partition);

/**
 * The partition size the FFT method uses for `taps` taps on `device` when
 * gf_config.partition is 0: the power of two nearest taps / K0 (K0 = 8 on
 * cpu and cuda), kept within 256 .. 2^18 on cpu (2^19 on cuda since 0.6)
 * and GF_MIN_PARTITION .. GF_MAX_PARTITION.
 */
size_t gf_partition_choose(size_t taps, gf_device device);

/**
 * GF_METHOD_NUPC's first partition B when gf_config.partition is 0: 256
 * frames (the least the FFT method chooses), whatever the taps. Since 0.5.
 */
size_t gf_nupc_partition_choose(size_t taps, gf_device device);

/**
 * GF_METHOD_NUPC's largest partition M for `taps` taps and first partition
 * `first` (B): the FFT method's partition for those taps
 * (gf_partition_choose) up to 2^18, at least B. Since 0.5.
 */
size_t gf_nupc_max_partition(size_t taps, size_t first, gf_device device);

/** One level of GF_METHOD_NUPC (see the method above). Since 0.5. */
typedef struct gf_nupc_level {
    size_t size;       /* S: its partition, frames */
    size_t offset;     /* o: its first tap */
    size_t partitions; /* K: partitions of S frames in its segment */
    size_t taps;       /* taps of the filter in it: min(K S, T - o) */
} gf_nupc_level;

/** Most levels of GF_METHOD_NUPC (GF_MIN_PARTITION to GF_MAX_PARTITION). */
#define GF_NUPC_MAX_LEVELS 17

/**
 * The levels of GF_METHOD_NUPC for `taps` taps (>= 1), first partition
 * `first` and largest `max` (powers of two, first <= max, in
 * GF_MIN_PARTITION .. GF_MAX_PARTITION), at most GF_NUPC_MAX_LEVELS into
 * `out`; returns their number (0 for arguments out of range). Since 0.5.
 */
size_t gf_nupc_levels(size_t taps, size_t first, size_t max, gf_nupc_level *out);

typedef struct gf_engine gf_engine;

/**
 * Create an engine. On success *out holds a new engine; on failure *out is
 * NULL and, when detail is not NULL, a one-line reason (naming the bad
 * parameter or failing CUDA call) is written to detail[0..detail_size).
 * All device and pinned buffers are allocated here, never later.
 */
gf_status gf_engine_create(const gf_config *config, gf_engine **out, char *detail,
                           size_t detail_size);

/** Destroy an engine; NULL is a no-op. */
void gf_engine_destroy(gf_engine *e);

/**
 * Feed up to `frames` interleaved frames (float or double, by precision).
 * *consumed receives how many were taken: fewer than offered only when the
 * engine's buffers are full, in which case gf_engine_pull makes room.
 */
gf_status gf_engine_push(gf_engine *e, const void *in, size_t frames, size_t *consumed);

/**
 * Take up to max_frames filtered frames into out. Returns at once with what is
 * ready; it waits for the device only when nothing else could make progress
 * (every buffer is in flight, or after flush), so a push/pull loop never
 * spins. *got == 0 after flush means the stream is complete. `out` must not
 * overlap the engine's input.
 */
gf_status gf_engine_pull(gf_engine *e, void *out, size_t max_frames, size_t *got);

/**
 * End of input: the remaining frames (a partial chunk, and in same mode the
 * (T-1)/2 look-ahead frames) are filtered and become available to pull.
 * In same and causal mode the total output equals the total input exactly;
 * in full mode it is T-1 frames more.
 * Further pushes are refused (GF_ERR_STATE) until gf_engine_reset.
 */
gf_status gf_engine_flush(gf_engine *e);

/**
 * Submit the frames pushed so far as a chunk now, without waiting for a full
 * chunk, so their output can be pulled soon: for input that arrives slowly
 * (pipes, live audio). Output does not change (chunk seams are exact at any
 * size); each call costs one backend round trip. A no-op when nothing is
 * pending or after flush.
 */
gf_status gf_engine_submit(gf_engine *e);

/**
 * Block until every submitted chunk's output is ready, so that pull returns
 * all of it without waiting. With gf_engine_submit: push, submit, wait, pull
 * gives every output the input so far determines.
 */
gf_status gf_engine_wait(gf_engine *e);

/** Forget all input and output; start a new stream with zero history. */
gf_status gf_engine_reset(gf_engine *e);

/**
 * Bulk form: push all `frames` frames from `in` and write every frame that
 * becomes ready to `out` (capacity `frames` + the engine's latency bound, see
 * gf_engine_max_pending), returning the count in *produced. Blocks until done.
 * Equivalent to a push/pull loop, byte for byte. With the CUDA backend and
 * page-locked `in` and `out` (gf_host_alloc, or gf_host_register of the
 * caller's memory) chunks are copied straight between those buffers and
 * the GPU, with no staging copy.
 */
gf_status gf_engine_process(gf_engine *e, const void *in, size_t frames, void *out,
                            size_t *produced);

/**
 * A whole signal in host memory: the engine is reset, `frames` frames are
 * read from `in` and the mode's whole output is written to `out` (same and
 * causal: `frames` frames; full: frames + T - 1), as gf_engine_process,
 * gf_engine_flush and gf_engine_pull until nothing is left would give it,
 * byte for byte; *produced says how many frames were written. Blocks until
 * done. With the CUDA backend and page-locked `in` and `out` (gf_host_alloc,
 * gf_host_register), every chunk, the flush's look-ahead among them, goes
 * straight between those buffers and the GPU(s), pipelined, the
 * look-ahead's zeros made on the GPU: no staging copy and no wait between
 * the input's end and the flush (with histograms or a hand-off, the staged
 * way). Afterwards the engine is as after a flush whose output was pulled
 * (push refuses until gf_engine_reset); the next call resets it again.
 * Since 0.6.
 */
gf_status gf_engine_filter(gf_engine *e, const void *in, size_t frames, void *out,
                           size_t *produced);

/**
 * A whole signal in GPU memory, filtered on the GPU, its output written to
 * GPU memory: the engine is reset, `frames` frames are read from `in` and
 * the mode's whole output is written to `out` (same and causal: `frames`
 * frames; full: frames + T - 1), as gf_engine_process then
 * gf_engine_flush and gf_engine_pull would give it, byte for byte, with
 * no copy through host memory. *produced says how many frames were
 * written. Since 0.6.
 *
 * The engine: the cuda backend on one GPU, the FFT or the direct method
 * (the direct method's bytes are gf_engine_process's on any backend; its
 * chunks, gf_config.chunk_frames, must hold at least T - 1 frames, as the
 * default ones do), no histograms, no hand-off; else GF_ERR_UNSUPPORTED
 * and gf_engine_error says why, nothing done. `in` (frames x channels
 * interleaved samples of the engine's precision) and `out` (frames x the
 * output channels) must be memory of the engine's GPU (cudaMalloc'd, or
 * managed), not overlapping; else GF_ERR_INVALID_ARGUMENT with the reason
 * in gf_engine_error (host memory, another GPU), nothing done.
 *
 * Streams and ownership: `stream` is the caller's cudaStream_t (NULL: the
 * legacy default stream). The engine's own streams wait for the work
 * already queued on it, so `in` may be written by the caller's kernels just
 * before the call; the call returns once `out` is written (it blocks, as
 * gf_engine_process does), so work queued on any stream after it sees the
 * output. The caller keeps `in` and `out`: the engine neither frees nor
 * holds them after returning. Afterwards the engine is as after a flush
 * whose output was pulled (push refuses until gf_engine_reset); the next
 * call resets it again. Not for several threads at once on one engine.
 *
 * GPU memory: with the FFT method's fused transforms (f32, partitions of
 * 512 to 32768 frames), the first call on a signal longer than the
 * engine's chunk grows the engine's GPU buffers to take chunks of up to
 * 2^23 samples (about 200 MB), where the GPU has that free; they stay
 * until gf_engine_destroy. The bytes are the same either way.
 */
gf_status gf_engine_filter_device(gf_engine *e, const void *in, size_t frames, void *out,
                                  size_t *produced, void *stream);

/**
 * The next completed histogram record, in stream order (by block, then by
 * channel). Returns GF_OK with *rec filled; GF_NO_RECORD, with *rec left as
 * it was, when no block is complete yet (or every record has been taken);
 * GF_ERR_INVALID_ARGUMENT when e or rec is NULL; GF_ERR_STATE when
 * histograms are off; and once the records completed before a failure of
 * the engine have been taken, that failure's status (gf_engine_error says
 * why). So `while ((st = gf_engine_hist_next(e, &rec)) == GF_OK)` takes
 * every record, and st == GF_NO_RECORD afterwards means none failed. (Before
 * 0.3 it returned 1 or 0.) A block is complete once all
 * its frames have been filtered and the engine has seen their chunks
 * finished: pull, wait and process notice that, and so does this call,
 * without waiting (submit + wait + hist_next gives every record the input so
 * far completes). After flush, once every chunk is finished, the last
 * (short) block is complete too. Records wait in the engine, in a queue that
 * grows without bound, until taken; gf_engine_reset drops them.
 */
gf_status gf_engine_hist_next(gf_engine *e, gf_hist_record *rec);

/** Most frames the engine can hold back between input and output. */
size_t gf_engine_max_pending(const gf_engine *e);

/** Frames by which output lags input: (T-1)/2 in same mode, 0 in causal
 * and full (the FFT method also holds back an incomplete partition, the
 * NUPC method an incomplete first partition: at most B - 1 frames). */
size_t gf_engine_latency(const gf_engine *e);

/** The backend actually in use: "ref", "cpu" or "cuda" (after a hand-off, the
 * one handed to). For people to read; programs ask gf_engine_device. */
const char *gf_engine_backend(const gf_engine *e);

/** The device kind of the backend actually in use: GF_DEVICE_REF, _CPU or
 * _CUDA, never _AUTO (after a hand-off, the one handed to); GF_DEVICE_AUTO
 * when e is NULL. Since 0.2. */
gf_device gf_engine_device(const gf_engine *e);

/**
 * The CUDA devices the engine runs on: up to cap ordinals into out, and the
 * count (0 when it does not run on cuda, or e is NULL). Several devices
 * share the stream by time (chunk i to out[i % count]) or, for the FFT
 * method with enough channels per device and no histograms, by channel
 * (every chunk to each, each filtering its channels: see
 * gf_engine_device_channels); the bytes are one device's either way.
 * (For tests without a GPU, the environment's GPUFILT_CPU_INSTANCES=N runs
 * an engine on the cpu device as N cpu instances sharing the stream by
 * time the same way; they are counted here as devices 0 .. N-1.)
 * Since 0.4.
 */
int gf_engine_cuda_devices(const gf_engine *e, int *out, int cap);

/**
 * Chunks (and input frames, flush zeros included) the engine has given to
 * its i-th CUDA device (0 .. gf_engine_cuda_devices - 1) since create or
 * the last reset; 0 for another i. Since 0.4.
 */
uint64_t gf_engine_device_chunks(const gf_engine *e, int i, uint64_t *frames);

/**
 * The channels the engine's i-th CUDA device filters: their count, from
 * channel *first (0-based; first may be NULL). Every channel, from 0, when
 * the devices share the stream by time; 0 for another i. Since 0.5.
 */
int gf_engine_device_channels(const gf_engine *e, int i, int *first);

/**
 * The configuration in use: the one given, with the automatic choices
 * resolved (device, method, partition, chunk_frames); taps and hist are
 * NULL (see gf_engine_channel_taps).
 */
void gf_engine_get_config(const gf_engine *e, gf_config *config);

/** The method actually in use: GF_METHOD_DIRECT, _FFT or _NUPC. */
gf_method gf_engine_method(const gf_engine *e);

/** The FFT partition size in frames (GF_METHOD_NUPC: the first, B; 0 for the direct method). */
size_t gf_engine_partition(const gf_engine *e);

/**
 * The FFT or NUPC method's bound on |error| of any output of channel c
 * against the exact sum, for input of magnitude at most max_abs_x (see the
 * exactness contracts above). 0 for the direct method, whose contract is bit-identity
 * with the serial reference. With a matrix (gf_config.outputs) c is an
 * output, 0 .. outputs-1, and max_abs_x bounds every input. NAN when e is
 * NULL, channel is outside 0 .. channels-1 (outputs-1) or max_abs_x is not
 * a number >= 0.
 */
double gf_engine_error_bound(const gf_engine *e, int channel, double max_abs_x);

/** Chunk size in frames actually in use. */
size_t gf_engine_chunk_frames(const gf_engine *e);

/**
 * The input frame from which the hand-off backend (gf_config.handoff)
 * filtered the stream, or -1 while the first backend filters all of it.
 */
int64_t gf_engine_handoff_frame(const gf_engine *e);

/** Why the hand-off backend could not be set up ("" if it was, or is still
 * being set up, or none was asked for); the first backend then goes on. */
const char *gf_engine_handoff_error(const gf_engine *e);

/** The last error's detail for this engine ("" if none); owned by the engine. */
const char *gf_engine_error(const gf_engine *e);

/**
 * Copy the taps in use, as doubles, into taps[0..num_taps) (channel 0's
 * with per-channel taps; see gf_engine_channel_taps). `capacity` is how
 * many doubles the caller's array holds. GF_ERR_INVALID_ARGUMENT, with
 * nothing written, when e or taps is NULL or capacity < num_taps. (The
 * capacity came in 0.3.)
 */
gf_status gf_engine_taps(const gf_engine *e, double *taps, size_t capacity);

/**
 * Channel c's taps in use, as doubles, into taps[0..num_taps) (num_taps as
 * configured; gf_engine_get_config gives it); `capacity` is how many doubles
 * the caller's array holds. With a matrix (gf_config.outputs) c is a
 * filter, i*O + o, 0 .. channels*outputs-1. GF_ERR_INVALID_ARGUMENT, with
 * nothing written, when e or taps is NULL, capacity < num_taps or channel
 * is outside 0 .. channels-1 (channels*outputs-1). (The capacity came in 0.3.)
 */
gf_status gf_engine_channel_taps(const gf_engine *e, int channel, double *taps, size_t capacity);

/**
 * True when a CUDA device is usable (built with CUDA, a device present and a
 * context can be created). The first call may take a moment.
 */
int gf_cuda_available(void);

/**
 * 1 when this build has the backend of kind `device` and it can be used
 * now: GF_DEVICE_REF and _CPU always; _CUDA as gf_cuda_available (the first
 * call may take a moment). 0 for a backend this build lacks, for
 * GF_DEVICE_AUTO (a policy, not a backend) and for any other value. Since 0.2.
 */
int gf_backend_available(gf_device device);

/**
 * 1 when this build has the backend of kind `device`, whether or not it
 * can be used on this machine; asks no device (no device query, no
 * start-up). For GF_DEVICE_CUDA: the CUDA module (libgpufilt-cuda.so) is
 * loaded, which the first call does. 0 for GF_DEVICE_AUTO and any other
 * value. Since 0.2.
 */
int gf_backend_built(gf_device device);

/**
 * The name of a device value, the one spelling the library, the command
 * line and its reports use: "auto" for GF_DEVICE_AUTO, "none" for
 * GF_DEVICE_NONE, the backend's name for a kind the library knows ("ref",
 * "cpu", "cuda"; the name gf_engine_backend reports), whether or not this
 * build has its backend; NULL for any other value. A static string.
 * Thread-safe. Since 0.4.
 */
const char *gf_device_name(gf_device device);

/**
 * The device value whose gf_device_name is `name` (exact, case-sensitive:
 * "auto", "none" and each kind's name) into *out. GF_ERR_INVALID_ARGUMENT,
 * with *out untouched, for any other name and when name or out is NULL.
 * Thread-safe. Since 0.4.
 */
gf_status gf_device_from_name(const char *name, gf_device *out);

/**
 * The device kinds the library knows (each with a backend, whether or not
 * this build has it; not GF_DEVICE_AUTO or _NONE), in ascending gf_device
 * value: the first min(count, cap) into out[] (out may be NULL when cap is
 * 0). Returns count, the number of kinds. Thread-safe. Since 0.4.
 */
size_t gf_device_kinds(gf_device *out, size_t cap);

/** One CUDA device, as gf_cuda_device_info describes it. Since 0.2. */
typedef struct gf_cuda_device {
    char name[256];     /* the driver's name, e.g. "NVIDIA H100 80GB HBM3"; NUL-terminated */
    size_t total_bytes; /* global memory */
    size_t free_bytes;  /* global memory free at the time of the call */
    int major, minor;   /* compute capability */
    int multiprocessors;
} gf_cuda_device;

/**
 * The number of CUDA devices present, into *count, without creating an
 * engine. GF_OK with *count = 0 when this build has no CUDA, no driver is
 * loaded or no device is present; GF_ERR_INVALID_ARGUMENT when count is
 * NULL. Devices are numbered 0 .. count-1, the ordinals gf_config.cuda_device
 * takes. Thread-safe. Since 0.2.
 */
gf_status gf_cuda_device_count(int *count);

/**
 * Device `index` (0 .. gf_cuda_device_count - 1) into *info, without
 * creating an engine. GF_ERR_NO_DEVICE, with *info zeroed, when index is
 * outside that range (every index in a build without CUDA, or where no
 * device is present); GF_ERR_INVALID_ARGUMENT when info is NULL;
 * GF_ERR_CUDA, with *info zeroed, when the device cannot be asked (no
 * context can be made on it). free_bytes needs a context on the device, so
 * the first call for a device costs CUDA's start-up (a few tenths of a
 * second); the calling thread's current CUDA device is left as it was.
 * Thread-safe. Since 0.2.
 */
gf_status gf_cuda_device_info(int index, gf_cuda_device *info);

/**
 * The CPU backend's FFT plans (builds with FFTW; since 0.5). By default
 * every plan is FFTW_ESTIMATE: chosen without timing, so a build computes
 * the same bytes on every run. Plans FFTW picks by timing (FFTW_MEASURE)
 * are faster (bench/NOTES.md), but two runs could pick different ones and
 * so round differently; FFTW's wisdom fixes the choice:
 *
 *   gf_fft_wisdom_make  measures the plans of the transform sizes given
 *                       (2 x the partition: even, 2 .. 2^24), forward and
 *                       inverse, f32 and f64, and writes them to path
 *                       (text, replaced whole), once per machine;
 *   gf_fft_wisdom_load  reads such a file: from then on every plan of a
 *                       size it holds is the plan it records, and any
 *                       other stays FFTW_ESTIMATE.
 *
 * So the same wisdom file gives the same plans and the same bytes (on the
 * machine it was made on; elsewhere still within the bound). Either call
 * affects the whole process (FFTW's wisdom is global) and the engines
 * created after it. GF_OK; GF_ERR_INVALID_ARGUMENT with the reason in
 * detail (a file that cannot be read or written, text that is not this
 * FFTW's wisdom, a bad size); GF_ERR_UNSUPPORTED in a build whose FFT is
 * not FFTW. Thread-safe.
 */
gf_status gf_fft_wisdom_make(const char *path, const size_t *sizes, size_t count, char *detail,
                             size_t detail_len);
gf_status gf_fft_wisdom_load(const char *path, char *detail, size_t detail_len);

/**
 * Page-locked host memory when CUDA is available (faster transfers, and the
 * zero-copy path of gf_engine_process), else ordinary aligned memory.
 * Returns NULL on failure. Free with gf_host_free (NULL is a no-op).
 */
void *gf_host_alloc(size_t bytes);
void gf_host_free(void *p);

/**
 * Page-lock `bytes` of the caller's own memory at `p` (cudaHostRegister)
 * where CUDA is available, so that gf_engine_process takes it as it takes
 * gf_host_alloc's: straight between it and the GPU, with no staging copy.
 * Staging copies every byte twice on the host (in and out), which bounds
 * it by the host's memory traffic; registered buffers run at PCIe rate. Registering
 * costs about as much as copying the buffer a few times: it pays for
 * buffers used for several calls. The memory must stay allocated until
 * gf_host_unregister(p), and two registrations may not share a memory
 * page (give each buffer pages of its own: posix_memalign to 4096).
 * Where CUDA is not available it does nothing and returns GF_OK (the CPU
 * backends take any memory). GF_ERR_INVALID_ARGUMENT for a NULL `p` or 0
 * bytes; GF_ERR_CUDA when the driver refuses (the reason in detail, which
 * may be NULL). Thread-safe.
 */
gf_status gf_host_register(void *p, size_t bytes, char *detail, size_t detail_len);
/** Undo gf_host_register(p) (before the memory is freed); NULL: a no-op. */
void gf_host_unregister(void *p);

/* ---- Filter design ----------------------------------------------------
 *
 * gf_design makes the taps of a filter from a specification, computed in
 * double precision with scipy.signal's methods (golden vectors from scipy
 * check each step, tests/golden/design):
 *
 *   low-pass, high-pass, band-pass, band-reject: a Kaiser-windowed sinc
 *     (scipy.signal.firwin with window ("kaiser", beta)), with the window's
 *     beta and the length from the attenuation and transition width by
 *     Kaiser's formulas (scipy.signal.kaiserord), made odd so that the
 *     delay is a whole number of frames ((T-1)/2: same mode then shifts
 *     nothing). Cutoffs are the -6 dB points; each transition band is
 *     centred on its cutoff.
 *   EQ: an arbitrary magnitude curve by frequency sampling with a Kaiser
 *     window (scipy.signal.firwin2's method on a grid of 1 + 2^ceil(log2 T)
 *     points). The curve's gains (dB) are interpolated linearly against
 *     log frequency between its points (linearly against frequency between
 *     a point at 0 Hz and the next), and held at the first and last
 *     point's gain beyond them.
 *   minimum phase: the linear-phase design h converted by the homomorphic
 *     (cepstral) method of scipy.signal.minimum_phase applied to h * h,
 *     which keeps h's length and magnitude response (the method alone gives
 *     the square root of the magnitude): FFT size the power of two >=
 *     32 (2T - 1), at most max(2^22, the power of two >= 8 (2T - 1)).
 *
 * Kaiser's formulas are estimates and fall short of the specification by
 * up to a few dB (more above 120 dB). So every band design is measured
 * (gain on a grid 16 times denser than 1/T, extremes refined, band edges
 * evaluated exactly) and, where it misses, designed again for that much
 * more attenuation (design_atten) until it meets both: passband gain
 * within 1 +- 10^(-atten/20) (Kaiser's ripple bound) and stopband gain at
 * most -atten dB, from the band edges on. With a fixed number of taps
 * (spec.taps) the transition follows from Kaiser's formula instead and
 * what was reached is reported (info.met).
 *
 * Frequencies are in Hz at spec.rate. Thread safety: no shared state;
 * calls may run concurrently.
 */

/** Stopband attenuation (dB): the range gf_design takes, and its default. */
#define GF_DESIGN_MIN_ATTEN     20.0
#define GF_DESIGN_MAX_ATTEN     200.0
#define GF_DESIGN_DEFAULT_ATTEN 120.0
/** The default transition width: this fraction of the distance from each
 * cutoff to 0 Hz or to Nyquist, whichever is nearer (bands: and of the
 * band's width); for EQ curves, of the lowest listed frequency above 0. */
#define GF_DESIGN_TRANSITION_FRACTION 0.1
/** Most taps of a minimum-phase design (its FFT size stays within 2^23). */
#define GF_DESIGN_MAX_MINPHASE_TAPS ((size_t)1 << 19)
/** EQ curve gains (dB). */
#define GF_DESIGN_MIN_GAIN_DB (-200.0)
#define GF_DESIGN_MAX_GAIN_DB 60.0

typedef enum gf_band {
    GF_BAND_LOWPASS = 0,    /* passes 0 .. f1 */
    GF_BAND_HIGHPASS = 1,   /* passes f1 .. Nyquist */
    GF_BAND_BANDPASS = 2,   /* passes f1 .. f2 */
    GF_BAND_BANDREJECT = 3, /* stops f1 .. f2 */
    GF_BAND_EQ = 4          /* follows the curve eq_freq / eq_gain_db */
} gf_band;

typedef enum gf_phase {
    GF_PHASE_LINEAR = 0, /* symmetric taps, delay (T-1)/2 frames at every frequency */
    GF_PHASE_MINIMUM = 1 /* least delay for the magnitude; use causal mode */
} gf_phase;

/** What to design. A zeroed struct asks for the defaults where it can. */
typedef struct gf_design_spec {
    gf_band band;
    double rate; /* sample rate in Hz, finite, > 0 */
    /* Cutoffs in Hz (-6 dB points): 0 < f1 < rate/2; bands also f1 < f2 < rate/2. */
    double f1, f2;
    /* Stopband attenuation in dB, GF_DESIGN_MIN_ATTEN .. GF_DESIGN_MAX_ATTEN;
     * 0 for GF_DESIGN_DEFAULT_ATTEN. EQ: sets the window's beta (the
     * sidelobe level) and, with the transition, the length. */
    double atten;
    /* Width of each transition band in Hz, centred on its cutoff, so that
     * 0 < f - transition/2 and f + transition/2 < rate/2 (bands: also
     * transition < f2 - f1); 0 for the default
     * (GF_DESIGN_TRANSITION_FRACTION). EQ: the frequency resolution. */
    double transition;
    /* 0: as few taps as meet atten and transition (odd). Otherwise exactly
     * this many, 1 .. GF_MAX_FFT_TAPS (odd for high-pass, band-reject and
     * EQ), and transition must be 0. */
    size_t taps;
    gf_phase phase;
    /* GF_BAND_EQ: eq_points (>= 1) frequencies in Hz, >= 0 and strictly
     * increasing (points beyond rate/2 shape the curve up to it), and
     * their gains in dB, GF_DESIGN_MIN_GAIN_DB .. GF_DESIGN_MAX_GAIN_DB.
     * Read during the call only. */
    const double *eq_freq, *eq_gain_db;
    size_t eq_points;
} gf_design_spec;

/** What was designed, and what it measures. Frequencies in Hz. */
typedef struct gf_design_info {
    size_t taps;
    double beta;         /* the Kaiser window's parameter */
    double atten;        /* the attenuation asked for (dB), default resolved */
    double design_atten; /* the attenuation the length and beta came from (>= atten) */
    double transition;   /* Hz; with spec.taps, Kaiser's width for that length */
    /* The specification's bands, [lo, hi] pairs (none for EQ). */
    double pass[2][2], stop[2][2];
    int npass, nstop;
    /* Measured on the taps: */
    double ripple;       /* largest |gain - 1| over the passbands (linear) */
    double ripple_bound; /* 10^(-atten/20), Kaiser's bound on it */
    double stop_db;      /* largest gain over the stopbands, dB */
    double cutoff_db[2]; /* gain at f1 (and f2), dB: about -6.02 */
    int met; /* ripple <= ripple_bound and stop_db <= -atten (always without spec.taps) */
    double eq_error_db; /* EQ: largest |gain - curve| in dB at the curve's points in (0, rate/2) */
} gf_design_info;

/**
 * Design a filter. On success *taps holds *num_taps coefficients (free them
 * with gf_design_free) and, when info is not NULL, *info is filled. On
 * failure *taps is NULL, *num_taps 0, and detail (may be NULL) says why in
 * one line naming the parameter and its valid range:
 *   GF_ERR_INVALID_ARGUMENT  a parameter out of range (a cutoff at or
 *     above Nyquist, f1 >= f2, attenuation outside 20 .. 200 dB, a
 *     transition that does not fit, an unsorted EQ curve, ...), or a
 *     design that would need more than GF_MAX_FFT_TAPS taps (or
 *     GF_DESIGN_MAX_MINPHASE_TAPS for minimum phase; detail says how many);
 *   GF_ERR_NO_MEMORY;
 *   GF_ERR_UNSUPPORTED  the specification could not be met (not seen in
 *     the tested range).
 * Designing takes a few FFTs of up to 16 times the taps (about 0.1 s for
 * 200,000 taps).
 */
gf_status gf_design(const gf_design_spec *spec, double **taps, size_t *num_taps,
                    gf_design_info *info, char *detail, size_t detail_size);

/** Free taps from gf_design; NULL is a no-op. */
void gf_design_free(double *taps);

/**
 * The EQ curve of spec (eq_freq, eq_gain_db, eq_points; checked as
 * gf_design checks them) at count frequencies in Hz, interpolated as
 * gf_design interpolates it, into gain_db. For drawing the target.
 */
gf_status gf_design_curve(const gf_design_spec *spec, const double *freq, size_t count,
                          double *gain_db);

/**
 * The response of taps h[0..n) at count frequencies (Hz at `rate`, 0 ..
 * rate/2): gain in dB into mag_db and group delay in frames into delay
 * (either may be NULL), each by a direct sum (n multiply-adds per
 * frequency). The delay is -d(phase)/d(omega), computed as Re(sum k h[k]
 * z^-k / H); where |H| is 0 it is NAN, and mag_db -INFINITY.
 */
gf_status gf_design_response(const double *h, size_t n, double rate, const double *freq,
                             size_t count, double *mag_db, double *delay);

/**
 * The same on the uniform grid f_k = k / (bins - 1) x rate/2, k = 0 ..
 * bins-1, by FFT (bins - 1 a power of two, 2 .. 2^29; any n: the
 * transform folds h exactly onto 2 (bins - 1) points). Rate-free: delay in
 * frames, frequency k / (bins - 1) of Nyquist.
 */
gf_status gf_design_response_grid(const double *h, size_t n, size_t bins, double *mag_db,
                                  double *delay);

/**
 * Cascade two filters: out[0 .. na + nb - 1) = a * b, the full
 * convolution, in double (directly when short, else by FFT, with an error
 * of about 1e-15 x log2(na + nb) x sum|a| x sum|b|). out must not overlap
 * a or b.
 */
gf_status gf_design_convolve(const double *a, size_t na, const double *b, size_t nb, double *out);

#ifdef __cplusplus
}
#endif

#endif /* GPUFILT_H */
