/*
 * The CUDA backend's parts (C++, for nvcc): its state, a slot's device
 * buffers and streams, and the interface of its methods. backend_cuda.cu
 * creates the state, moves the data and keeps the streams; each method
 * queues a chunk's filtering in its own file: backend_cuda_direct.cu (one
 * FIR kernel, taps in the constant bank), backend_cuda_fft.cu (fft_conv.h
 * on a compute stream of its own), backend_cuda_nupc.cu (one fft_conv a
 * level of the NUPC method, the levels due later on streams of their own).
 */
#ifndef GF_BACKEND_CUDA_H
#define GF_BACKEND_CUDA_H

#include "backend.h"
#include "cuda_check.h"
#include "fft_conv.h"
#include "launch.h"

#include <cuda_runtime.h>

#define CUDA_SLOTS 3

typedef struct cuda_slot {
    cudaStream_t stream;
    cudaEvent_t done;
    cudaEvent_t uploaded, computed; /* FFT method: ordering with the compute stream */
    /* FFT method, several instances by time (multi.c): `lent` is recorded
     * after this slot copied its history from another instance's slot;
     * `reader` is that event of the instance that last copied from this
     * slot (or NULL), which the next upload here waits for. `held` frames
     * of input end where the last chunk, of `end` frames, ends. */
    cudaEvent_t lent, reader;
    size_t held, end;
    void *d_in;   /* hs + chunk samples + pad */
    void *d_out;  /* chunk samples */
    void *d_hist; /* partial histograms: max_segs x nrec x part_bytes */
} cuda_slot;

typedef struct cuda_method cuda_method;
typedef struct nupc_levels nupc_levels;

typedef struct cuda_state {
    gf_backend_params p;
    const cuda_method *m; /* the method: direct or FFT */
    int dev;
    int dev_set; /* cudaSetDevice(dev) succeeded: there is something to tear down */
    size_t ss, hs;
    /* The channel window (gf_backend_params): host frames hold
     * host_channels samples, this instance's from channel_offset. */
    int host_channels, channel_offset;
    /* The output's frames: out_channels samples on the device, host_out
     * on the host (the channels and the window's, or a matrix's outputs). */
    int out_channels, host_out;
    int const_page, const_npages; /* -1: taps in global memory */
    void *d_taps;
    gf::fir_plan fir;     /* which kernel, how launched (direct method) */
    gf::fft_conv *fft;    /* transforms and delay line (FFT method), or NULL */
    nupc_levels *nupc;    /* the levels (NUPC method), or NULL */
    cudaStream_t compute; /* FFT and NUPC methods: every chunk's filtering, in order */
    int sms;              /* multiprocessors: sizes the histogram grid */
    gf_hist_plan hist;
    int has_hist;
    size_t hist_smem; /* dynamic shared memory a histogram block may use */
    cuda_slot slot[CUDA_SLOTS];
    gf_status reset_failed; /* the last reset's status, returned by the next submit */
    /* Devices this one may copy from directly (bit = ordinal), and those
     * asked already (peer_access in backend_cuda.cu). */
    unsigned long long peer_ok, peer_asked;
    cudaEvent_t joined; /* device_begin: the caller's stream's work so far; NULL until used */
    /* GPUFILT_DEVICE_STAGED=1 at create: GPU-memory chunks staged through
     * the slots' buffers like host ones, never in place (for comparing the
     * two: bench/gpu_arrays.py) */
    int stage_device;
    /* gf_chunk.keep_prime: the history this instance primed its segment
     * with, kept_frames of it (0: none) in d_kept (kept_cap bytes), there
     * once `kept_ready` is done; another instance's chunk copies from it
     * (lend_peer in backend_cuda.cu). */
    void *d_kept;
    size_t kept_cap, kept_frames;
    cudaEvent_t kept_ready;
    char err[256];
} cuda_state;

/* A method inside the backend. The backend uploads each chunk to its
 * slot's d_in and downloads d_out; the method queues the filtering in
 * between, on the device, ordered before whatever the slot's stream does
 * next. */
struct cuda_method {
    /* At create, on the device already set: taps, plans, streams. */
    gf_status (*setup)(cuda_state *s);
    /* At create, for each slot after its stream and event: what else the
     * method needs per slot; NULL for nothing. */
    gf_status (*slot_setup)(cuda_state *s, cuda_slot *sl);
    /* Queue the filtering of chunk c, uploaded to sl->d_in, into sl->d_out. */
    gf_status (*run)(cuda_state *s, cuda_slot *sl, const gf_chunk *c);
    /* Queue the filtering of chunk c in GPU memory (gf_chunk.device_memory)
     * from c->in straight into c->out, with nothing to stage (no zeros to
     * make, outputs to drop, history to prime or channel window), and
     * record sl->done after it; NULL: such chunks are staged through the
     * slot's buffers like any other. */
    gf_status (*run_device)(cuda_state *s, cuda_slot *sl, const gf_chunk *c);
    /* At device_begin, for a signal of `frames` frames: *chunk (the
     * engine's chunk) raised to the longest chunk of the signal's own
     * frames that run_device takes, where the method makes room for more
     * than the engine's; NULL: the engine's chunk. */
    gf_status (*device_reserve)(cuda_state *s, size_t frames, size_t *chunk);
    /* Forget the stream's history, nothing in flight; NULL: keeps none. */
    gf_status (*reset)(cuda_state *s);
    /* At destroy, after the slots are gone: free what setup made (all or
     * part of it, after a failed create); reports nothing. */
    void (*release)(cuda_state *s);
};

/* The methods (backend_cuda_direct.cu, backend_cuda_fft.cu,
 * backend_cuda_nupc.cu). */
extern const cuda_method cuda_direct;
extern const cuda_method cuda_fft;
extern const cuda_method cuda_nupc;

#endif /* GF_BACKEND_CUDA_H */
