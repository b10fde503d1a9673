/*
 * CUDA backend. Each of its slots owns a stream, an event and a pair of
 * device buffers (allocated at create, never per chunk): a chunk's upload
 * (halo + frames), kernel and download are queued on its slot's stream, so
 * with three slots the upload of chunk k+1, the filtering of chunk k and the
 * download of chunk k-1 overlap. Host buffers come from the engine: pinned
 * staging (host_alloc) or page-locked caller memory (direct_ok).
 *
 * Kernels are chosen and launched in fir_launch.cu and hist_launch.cu
 * (launch.h); this file moves data and keeps the streams.
 *
 * Methods are small interfaces inside the backend (cuda_method in
 * backend_cuda.h: set-up, per-slot set-up, run one chunk, reset, release),
 * chosen once at create, each in a file of its own (backend_cuda_direct.cu,
 * backend_cuda_fft.cu, backend_cuda_nupc.cu); the slot streams, uploads
 * and downloads are the same for every method.
 *
 * FFT method (fft_conv.h): the delay line makes every chunk depend on the
 * one before, so the filtering of every chunk runs on one compute stream,
 * in order, while uploads and downloads stay on the slot streams: chunk
 * k+1's upload, chunk k's transforms and chunk k-1's download still
 * overlap. Events order each slot's upload before its compute and its
 * compute before its download.
 *
 * Histograms: a slot also owns a device buffer of partial histograms.
 * After its filter kernel, a chunk's histogram kernel (hist_kernels.cuh)
 * reads the samples already on the device (the output, or the input past
 * the halo), and the partials, never the samples, are copied back to the
 * engine's pinned buffer on the same stream, before the slot's event.
 *
 * Every CUDA call is checked (cuda_check.h); the failing call and its
 * message are kept in the state and returned as a status (GF_ERR_CUDA, or
 * GF_ERR_NO_MEMORY where memory ran out), never printed or exited on.
 *
 * The backend is built as a module, libgpufilt-cuda.so, which libgpufilt
 * loads at run time (gf_cuda.h); the module links nothing of the library,
 * so this file and the ones it calls use no function of src/core.
 */
#include "backend_cuda.h"
#include "gf_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most dynamic shared memory for a histogram block: leaves room for two
 * blocks per SM on sm_80/sm_90 while 4096 bins x 5 channels still fit. */
#define HIST_SMEM_CAP (96 * 1024)

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_result;

/* A one-line failure reason into detail (NULL-safe). */
static void set_detail(char *detail, size_t size, const char *msg)
{
    if (detail && size > 0)
        snprintf(detail, size, "%s", msg);
}

static void probe(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaGetLastError();
        return;
    }
    /* A device is usable only if a context can be made on it. */
    probe_result = cudaFree(0) == cudaSuccess;
    cudaGetLastError();
}

static int cuda_probe(void)
{
    pthread_once(&probe_once, probe);
    return probe_result;
}

static void *cuda_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

static void cuda_pinned_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

static gf_status cuda_register(void *p, size_t bytes, char *why, size_t why_len)
{
    const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
    if (e == cudaSuccess)
        return GF_OK;
    cudaGetLastError();
    snprintf(why, why_len, "cudaHostRegister of %zu bytes: %s", bytes, cudaGetErrorString(e));
    return GF_ERR_CUDA;
}

/* (gf_host_unregister's, and the hand-off's through cuda_host_unregister) */
static void cuda_unregister(void *p)
{
    if (cudaHostUnregister(p) != cudaSuccess)
        cudaGetLastError(); /* not registered here, or teardown: nothing to report */
}

static int cuda_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { /* no driver, or no device */
        cudaGetLastError();
        return 0;
    }
    return n > 0 ? n : 0;
}

static gf_status cuda_describe(int index, gf_cuda_device *info)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
        cudaGetLastError();
        return GF_ERR_CUDA;
    }
    /* Free memory is known only to a context on the device. */
    int prev = -1;
    size_t free_b = 0, total_b = 0;
    gf_status st = GF_OK;
    if (cudaGetDevice(&prev) != cudaSuccess || cudaSetDevice(index) != cudaSuccess ||
        cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        st = GF_ERR_CUDA;
    if (prev >= 0 && prev != index && cudaSetDevice(prev) != cudaSuccess)
        st = GF_ERR_CUDA;
    cudaGetLastError(); /* leave no error for the caller's next check */
    if (st != GF_OK)
        return st;
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->total_bytes = prop.totalGlobalMem;
    info->free_bytes = free_b;
    info->major = prop.major;
    info->minor = prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    return GF_OK;
}

static void cuda_destroy(void *state)
{
    cuda_state *s = (cuda_state *)state;
    if (!s)
        return;
    /* Teardown reports nothing; leave no error for the next caller's check.
     * Without a device set (an ordinal that does not exist), nothing was
     * made on one: no CUDA call at all. */
    if (s->dev_set && cudaSetDevice(s->dev) != cudaSuccess)
        cudaGetLastError();
    if (!s->dev_set) {
        free(s);
        return;
    }
    if (s->compute)
        cudaStreamSynchronize(s->compute);
    for (int i = 0; i < CUDA_SLOTS; i++) {
        if (s->slot[i].stream)
            cudaStreamSynchronize(s->slot[i].stream);
        if (s->slot[i].done)
            cudaEventDestroy(s->slot[i].done);
        if (s->slot[i].uploaded)
            cudaEventDestroy(s->slot[i].uploaded);
        if (s->slot[i].computed)
            cudaEventDestroy(s->slot[i].computed);
        if (s->slot[i].lent)
            cudaEventDestroy(s->slot[i].lent);
        if (s->slot[i].stream)
            cudaStreamDestroy(s->slot[i].stream);
        cudaFree(s->slot[i].d_in);
        cudaFree(s->slot[i].d_out);
        cudaFree(s->slot[i].d_hist);
    }
    if (s->joined)
        cudaEventDestroy(s->joined);
    if (s->kept_ready)
        cudaEventDestroy(s->kept_ready);
    cudaFree(s->d_kept);
    s->m->release(s);
    cudaGetLastError();
    free(s);
}

static gf_status setup(cuda_state *s)
{
    const gf_backend_params *p = &s->p;
    int n = 0;
    GF_TRY(s->err, sizeof s->err, cudaGetDeviceCount(&n));
    if (s->dev < 0 || s->dev >= n) {
        snprintf(s->err, sizeof s->err, "CUDA device %d does not exist (%d present)", s->dev, n);
        return GF_ERR_NO_DEVICE;
    }
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    s->dev_set = 1;
    GF_TRY(s->err, sizeof s->err,
           cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, s->dev));
    const gf_status st = s->m->setup(s);
    if (st != GF_OK)
        return st;

    if (s->has_hist) {
        int optin = 0;
        GF_TRY(s->err, sizeof s->err,
               cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, s->dev));
        s->hist_smem = (size_t)optin < HIST_SMEM_CAP ? (size_t)optin : HIST_SMEM_CAP;
        if (p->precision == GF_PRECISION_F32)
            GF_TRY(s->err, sizeof s->err,
                   gf::hist_allow_smem<float>(s->hist_smem, s->err, sizeof s->err));
        else
            GF_TRY(s->err, sizeof s->err,
                   gf::hist_allow_smem<double>(s->hist_smem, s->err, sizeof s->err));
    }

    const size_t chunk = p->chunk_frames * (size_t)p->channels;
    const size_t chunk_out = p->chunk_frames * (size_t)s->out_channels;
    for (int i = 0; i < CUDA_SLOTS; i++) {
        cuda_slot *sl = &s->slot[i];
        GF_TRY(s->err, sizeof s->err,
               cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->done, cudaEventDisableTiming));
        if (s->m->slot_setup)
            GF_TRY(s->err, sizeof s->err, s->m->slot_setup(s, sl));
        GF_TRY(s->err, sizeof s->err,
               gf::dev_alloc((void **)&sl->d_in, (s->hs + chunk + GF_DEVICE_PAD_SAMPLES) * s->ss,
                             "a chunk's input", s->err, sizeof s->err));
        GF_TRY(s->err, sizeof s->err,
               gf::dev_alloc((void **)&sl->d_out, chunk_out * s->ss, "a chunk's output", s->err,
                             sizeof s->err));
        /* The padding is read by vector loads; keep it defined. */
        GF_TRY(s->err, sizeof s->err,
               cudaMemset(sl->d_in, 0, (s->hs + chunk + GF_DEVICE_PAD_SAMPLES) * s->ss));
        if (s->has_hist)
            GF_TRY(s->err, sizeof s->err,
                   gf::dev_alloc((void **)&sl->d_hist,
                                 s->hist.max_segs * (size_t)s->hist.nrec * s->hist.part_bytes,
                                 "a chunk's histograms", s->err, sizeof s->err));
    }
    /* The memsets and the tap upload above ran on the legacy default stream,
     * which the non-blocking slot streams do not wait for: finish them here,
     * or a first chunk's upload could be zeroed behind its back. */
    GF_TRY(s->err, sizeof s->err, cudaDeviceSynchronize());
    return GF_OK;
}

static gf_status cuda_create(const gf_backend_params *p, void **state, char *detail,
                             size_t detail_size)
{
    if (!cuda_probe()) {
        set_detail(detail, detail_size, "no usable CUDA device");
        return GF_ERR_NO_DEVICE;
    }
    cuda_state *s = (cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return GF_ERR_NO_MEMORY;
    s->p = *p;
    s->m = p->method == GF_METHOD_FFT    ? &cuda_fft
           : p->method == GF_METHOD_NUPC ? &cuda_nupc
                                         : &cuda_direct;
    s->dev = p->cuda_device;
    s->ss = p->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    s->host_channels = p->host_channels ? p->host_channels : p->channels;
    s->channel_offset = p->channel_offset;
    s->out_channels = p->outputs ? p->outputs : p->channels;
    s->host_out = p->outputs ? p->outputs : s->host_channels;
    /* The halo: the direct method's T-1 frames, or the FFT method's
     * history to prime with (multi.c; usually none); NUPC keeps its own. */
    s->hs = (p->method == GF_METHOD_FFT    ? p->history_frames
             : p->method == GF_METHOD_NUPC ? 0
                                           : p->num_taps - 1) *
            (size_t)p->channels;
    s->const_page = -1;
    const char *staged = getenv("GPUFILT_DEVICE_STAGED");
    s->stage_device = staged && strcmp(staged, "1") == 0;
    if (p->hist) {
        s->hist = *p->hist;
        s->has_hist = 1;
    }
    s->p.hist = NULL;
    gf_status st = setup(s); /* uploads p->taps; no pointer to them is kept */
    s->p.taps = NULL;
    if (st != GF_OK) {
        set_detail(detail, detail_size, s->err);
        cuda_destroy(s);
        return st;
    }
    *state = s;
    return GF_OK;
}

/* Queue the chunk's histogram on the slot's stream: zero the partials, count
 * the samples where they lie on the device, copy the partials back. */
static gf_status hist_submit(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    const gf::hist_geometry g =
        gf::hist_geometry_for(&s->hist, c->hist_pos, c->hist_frames, s->sms, s->hist_smem);
    const unsigned char *data = s->hist.of_input ? (const unsigned char *)sl->d_in + s->hs * s->ss
                                                 : (const unsigned char *)sl->d_out;
    GF_TRY(s->err, sizeof s->err, cudaMemsetAsync(sl->d_hist, 0, g.bytes, sl->stream));
    cudaGetLastError(); /* the check below sees this launch only */
    if (s->p.precision == GF_PRECISION_F32)
        gf::hist_launch<float>(g, s->hist.mix != 0, (const float *)data, sl->d_hist, sl->stream);
    else
        gf::hist_launch<double>(g, s->hist.mix != 0, (const double *)data, sl->d_hist, sl->stream);
    GF_TRY_LAUNCH(s->err, sizeof s->err, "hist_chunk");
    GF_TRY(s->err, sizeof s->err,
           cudaMemcpyAsync(c->hist, sl->d_hist, g.bytes, cudaMemcpyDeviceToHost, sl->stream));
    return GF_OK;
}

/* `frames` frames of the instance's channels between the caller's buffer
 * and a device one (kind says which way: into the device or out of it):
 * one contiguous copy, or through a channel window (the host interleaves
 * host_channels, multi.c) one row of the instance's channels per frame,
 * which the copy engines take at full speed from rows of 64 bytes up
 * (bench/copy_shapes.py). `host` points at the instance's first channel of
 * the first frame; it is host memory, or the caller's device memory
 * (gf_engine_filter_device): the copy is cudaMemcpyDefault, which tells
 * them apart by address (unified addressing). */
static gf_status copy_frames(cuda_state *s, void *dev, const void *host, size_t frames,
                             cudaMemcpyKind way, cudaStream_t st)
{
    const int h2d = way == cudaMemcpyHostToDevice;
    const cudaMemcpyKind kind = cudaMemcpyDefault;
    const size_t w = (size_t)(h2d ? s->p.channels : s->out_channels) * s->ss;
    const size_t hp = (size_t)(h2d ? s->host_channels : s->host_out) * s->ss;
    if (hp == w)
        GF_TRY(s->err, sizeof s->err,
               cudaMemcpyAsync(h2d ? dev : (void *)host, h2d ? host : dev, frames * w, kind, st));
    else if (h2d)
        GF_TRY(s->err, sizeof s->err, cudaMemcpy2DAsync(dev, w, host, hp, w, frames, kind, st));
    else
        GF_TRY(s->err, sizeof s->err,
               cudaMemcpy2DAsync((void *)host, hp, dev, w, w, frames, kind, st));
    return GF_OK;
}

/* 1 when this instance's device may copy from device `from` directly: the
 * same device, or peer access (NVLink or PCIe) enabled, which is asked once
 * per pair and then left on for the process. The current device is s->dev. */
static int peer_access(cuda_state *s, int from)
{
    if (from == s->dev)
        return 1;
    if (from < 0 || from >= 64)
        return 0;
    const unsigned long long bit = 1ull << from;
    if (!(s->peer_asked & bit)) {
        s->peer_asked |= bit;
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, s->dev, from) == cudaSuccess && can) {
            const cudaError_t e = cudaDeviceEnablePeerAccess(from, 0);
            if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled)
                s->peer_ok |= bit;
        }
        cudaGetLastError(); /* a refusal only means the copy goes through the host */
    }
    return (s->peer_ok & bit) != 0;
}

/* The slot of the instance that had the chunk before (gf_chunk
 * .prime_peer) when it still holds the FFT method's pre_f frames of history
 * that end where chunk c begins, and this device may copy from its device
 * directly; else NULL (the history comes up from the host). */
static cuda_slot *peer_source(cuda_state *s, const cuda_slot *sl, const gf_chunk *c, size_t pre_f)
{
    cuda_state *from = (cuda_state *)c->prime_peer;
    const int fi = c->prime_peer_slot;
    if (!from || s->m != &cuda_fft || fi < 0 || fi >= CUDA_SLOTS ||
        (from == s && &s->slot[fi] == sl))
        return NULL;
    cuda_slot *fs = &from->slot[fi];
    return fs->held >= pre_f && peer_access(s, from->dev) ? fs : NULL;
}

/* Queue the copy of that history, from fs (of instance `from`) into d_pre,
 * once fs's upload is done; fs's next upload waits for the copy (its
 * `reader`). Queued after this chunk's own upload, so that the two GPUs'
 * uploads of neighbouring chunks run at once. */
static gf_status peer_prime(cuda_state *s, cuda_slot *sl, const cuda_state *from, cuda_slot *fs,
                            unsigned char *d_pre, size_t pre_f)
{
    const size_t bytes = pre_f * (size_t)s->p.channels * s->ss;
    const unsigned char *src = (const unsigned char *)fs->d_in +
                               (from->hs + fs->end * (size_t)s->p.channels) * s->ss - bytes;
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(sl->stream, fs->uploaded, 0));
    GF_TRY(s->err, sizeof s->err,
           cudaMemcpyPeerAsync(d_pre, s->dev, src, from->dev, bytes, sl->stream));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->lent, sl->stream));
    fs->reader = sl->lent;
    return GF_OK;
}

/* gf_chunk.keep_prime: the whole history just uploaded to d_pre (the FFT
 * method's), copied aside on the device for another instance's chunks;
 * where there is no room for it, nothing is kept (they upload it). */
static gf_status keep_prime(cuda_state *s, cuda_slot *sl, const unsigned char *d_pre, size_t pre_f)
{
    const size_t bytes = pre_f * (size_t)s->p.channels * s->ss;
    s->kept_frames = 0;
    if (s->m != &cuda_fft || pre_f != s->p.history_frames)
        return GF_OK;
    if (s->kept_cap < bytes) {
        cudaFree(s->d_kept); /* (nothing reads it: kept_frames was 0 since the last call) */
        s->d_kept = NULL;
        s->kept_cap = 0;
        if (cudaMalloc(&s->d_kept, bytes) != cudaSuccess) {
            cudaGetLastError();
            s->d_kept = NULL;
            return GF_OK;
        }
        s->kept_cap = bytes;
    }
    if (!s->kept_ready)
        GF_TRY(s->err, sizeof s->err,
               cudaEventCreateWithFlags(&s->kept_ready, cudaEventDisableTiming));
    GF_TRY(s->err, sizeof s->err,
           cudaMemcpyAsync(s->d_kept, d_pre, bytes, cudaMemcpyDeviceToDevice, sl->stream));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(s->kept_ready, sl->stream));
    s->kept_frames = pre_f;
    return GF_OK;
}

/* The instance (gf_chunk.lend_peer) whose kept history holds chunk c's
 * frames [lend_first, real), where this device may copy from its device
 * directly; else NULL (they come up from the host with the rest). */
static const cuda_state *lend_source(cuda_state *s, const gf_chunk *c, size_t pre_f, size_t real)
{
    cuda_state *from = (cuda_state *)c->lend_peer;
    if (!from || s->m != &cuda_fft || pre_f || c->lend_first >= real ||
        from->kept_frames < c->lend_offset + (real - c->lend_first) ||
        s->host_channels != s->p.channels)
        return NULL;
    return peer_access(s, from->dev) ? from : NULL;
}

/* Whether chunk c goes from the caller's GPU memory straight through the
 * method (cuda_method.run_device): nothing staged, its frames all real
 * and all its outputs kept, no history to prime, keep or lend, no channel
 * window, no histogram. */
static int in_place(const cuda_state *s, const gf_chunk *c)
{
    return c->device_memory && s->m->run_device && !s->stage_device && c->in && !c->zero_frames &&
           !c->drop_tail && !c->prime_frames && !c->keep_prime && !c->lend_peer &&
           s->host_channels == s->p.channels && s->host_out == s->out_channels &&
           !(s->has_hist && c->hist_frames);
}

/* Upload chunk c into slot sl's d_in with what the method reads before
 * it: the direct method's whole halo, the FFT method's history to prime
 * with (its end; from another GPU where it is there); one copy when they
 * are contiguous in memory. Host frames are host_channels samples apart,
 * the instance's from channel_offset. The zeros the engine did not write
 * are made on the device. */
static gf_status upload_chunk(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    const size_t C = (size_t)s->p.channels, ss = s->ss, hs = s->hs;
    unsigned char *d_in = (unsigned char *)sl->d_in;
    const size_t hs_f = hs / C, pre_f = s->m == &cuda_fft ? c->prime_frames : hs_f;
    const size_t hp = (size_t)s->host_channels * ss, first = (size_t)s->channel_offset * ss;
    const unsigned char *h_in = c->in ? (const unsigned char *)c->in + first : NULL;
    int joined = 0; /* the frames uploaded with the halo */
    unsigned char *d_pre = d_in + (hs_f - pre_f) * C * ss;
    cuda_slot *peer = pre_f ? peer_source(s, sl, c, pre_f) : NULL;
    const size_t real = c->frames - c->zero_frames; /* the rest are zeros, not in c->in */
    if (pre_f && !peer) {
        /* halo frames [hs_f - pre_f, hs_f): zeros up to c->halo_zeros, the
         * rest from c->halo (which points at frame halo_zeros) */
        const size_t from = hs_f - pre_f > c->halo_zeros ? hs_f - pre_f : c->halo_zeros;
        if (from > hs_f - pre_f)
            GF_TRY(s->err, sizeof s->err,
                   cudaMemsetAsync(d_pre, 0, (from - (hs_f - pre_f)) * C * ss, sl->stream));
        if (from < hs_f) {
            const unsigned char *h_pre =
                (const unsigned char *)c->halo + (from - c->halo_zeros) * hp + first;
            joined = h_pre + (hs_f - from) * hp == h_in;
            GF_TRY(s->err, sizeof s->err,
                   copy_frames(s, d_in + from * C * ss, h_pre, hs_f - from + (joined ? real : 0),
                               cudaMemcpyHostToDevice, sl->stream));
        }
    }
    /* The frames another instance kept (its segment's history) come from
     * it once their upload there is done; the rest from the host. */
    const cuda_state *lender = lend_source(s, c, pre_f, real);
    const size_t up = lender ? c->lend_first : real;
    if (!joined && up)
        GF_TRY(s->err, sizeof s->err,
               copy_frames(s, d_in + hs * ss, h_in, up, cudaMemcpyHostToDevice, sl->stream));
    if (lender) {
        GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(sl->stream, lender->kept_ready, 0));
        GF_TRY(s->err, sizeof s->err,
               cudaMemcpyPeerAsync(d_in + (hs + up * C) * ss, s->dev,
                                   (const unsigned char *)lender->d_kept + c->lend_offset * C * ss,
                                   lender->dev, (real - up) * C * ss, sl->stream));
    }
    if (c->zero_frames)
        GF_TRY(
            s->err, sizeof s->err,
            cudaMemsetAsync(d_in + (hs + real * C) * ss, 0, c->zero_frames * C * ss, sl->stream));
    if (peer)
        GF_TRY(s->err, sizeof s->err,
               peer_prime(s, sl, (const cuda_state *)c->prime_peer, peer, d_pre, pre_f));
    if (c->keep_prime)
        GF_TRY(s->err, sizeof s->err, keep_prime(s, sl, d_pre, pre_f));
    sl->held = pre_f + c->frames;
    sl->end = c->frames;
    return GF_OK;
}

static gf_status cuda_submit(void *state, int slot, const gf_chunk *c)
{
    cuda_state *s = (cuda_state *)state;
    cuda_slot *sl = &s->slot[slot];
    if (s->reset_failed != GF_OK)
        return s->reset_failed;
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    if (sl->reader) { /* another instance copies history out of d_in */
        GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(sl->stream, sl->reader, 0));
        sl->reader = NULL;
    }
    if (in_place(s, c)) {
        sl->held = 0; /* (d_in holds nothing of this chunk) */
        return s->m->run_device(s, sl, c);
    }
    if (c->frames > s->p.chunk_frames) { /* (only in place: device_reserve) */
        snprintf(s->err, sizeof s->err, "a chunk of %zu frames for buffers of %zu", c->frames,
                 s->p.chunk_frames);
        return GF_ERR_STATE;
    }
    GF_TRY(s->err, sizeof s->err, upload_chunk(s, sl, c));
    const gf_status run = s->m->run(s, sl, c);
    if (run != GF_OK)
        return run;
    /* Right after the filter, while its output (or input) is still in L2. */
    if (s->has_hist && c->hist_frames > 0) {
        gf_status st = hist_submit(s, sl, c);
        if (st != GF_OK)
            return st;
    }
    if (c->frames > c->skip + c->drop_tail)
        GF_TRY(s->err, sizeof s->err,
               copy_frames(s, sl->d_out,
                           (unsigned char *)c->out + (size_t)s->channel_offset * s->ss,
                           c->frames - c->skip - c->drop_tail, cudaMemcpyDeviceToHost, sl->stream));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->done, sl->stream));
    return GF_OK;
}

static gf_status cuda_query(void *state, int slot, int *done)
{
    cuda_state *s = (cuda_state *)state;
    const cudaError_t e = gf::fault(cudaEventQuery(s->slot[slot].done), "cudaEventQuery");
    if (e == cudaErrorNotReady) {
        *done = 0;
        return GF_OK;
    }
    if (e != cudaSuccess)
        return gf::failed(e, "cudaEventQuery", s->err, sizeof s->err);
    *done = 1;
    return GF_OK;
}

static gf_status cuda_wait(void *state, int slot)
{
    cuda_state *s = (cuda_state *)state;
    GF_TRY(s->err, sizeof s->err, cudaEventSynchronize(s->slot[slot].done));
    return GF_OK;
}

static void cuda_reset(void *state)
{
    cuda_state *s = (cuda_state *)state;
    /* Nothing is in flight (backend.h); a failure is returned by the next
     * chunk's submit. */
    if (s->m->reset)
        s->reset_failed = s->m->reset(s);
    s->kept_frames = 0;
}

static void *cuda_host_alloc(void *state, size_t bytes)
{
    (void)state;
    return cuda_pinned_alloc(bytes);
}

static void cuda_host_free(void *state, void *p)
{
    (void)state;
    cuda_pinned_free(p);
}

static int pinned(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

static int cuda_direct_ok(void *state, const void *p, size_t bytes)
{
    (void)state;
    return bytes > 0 && pinned(p) && pinned((const unsigned char *)p + bytes - 1);
}

/* 1 when p .. p + bytes - 1 is memory of this instance's device (or
 * managed memory); else 0, why not in s->err. */
static int on_device(cuda_state *s, const void *p, size_t bytes, const char *what)
{
    const void *ends[2] = {p, (const unsigned char *)p + bytes - 1};
    for (int i = 0; i < 2; i++) {
        cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, ends[i]) != cudaSuccess) {
            cudaGetLastError();
            a.type = cudaMemoryTypeUnregistered;
        }
        if (a.type == cudaMemoryTypeManaged)
            continue;
        if (a.type != cudaMemoryTypeDevice) {
            snprintf(s->err, sizeof s->err, "the %s is not GPU memory but %s memory", what,
                     a.type == cudaMemoryTypeHost ? "page-locked host" : "host");
            return 0;
        }
        if (a.device != s->dev) {
            snprintf(s->err, sizeof s->err,
                     "the %s is on CUDA device %d, the engine on device %d (gf_config.cuda_device)",
                     what, a.device, s->dev);
            return 0;
        }
    }
    return 1;
}

static gf_status cuda_device_begin(void *state, const void *in, size_t in_bytes, const void *out,
                                   size_t out_bytes, void *stream, size_t *chunk)
{
    cuda_state *s = (cuda_state *)state;
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    if ((in_bytes && !on_device(s, in, in_bytes, "input")) ||
        (out_bytes && !on_device(s, out, out_bytes, "output")))
        return GF_ERR_INVALID_ARGUMENT;
    /* The caller's work queued so far on its stream first: an event there,
     * which every slot's stream waits for before its next copy. */
    if (!s->joined)
        GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&s->joined, cudaEventDisableTiming));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(s->joined, (cudaStream_t)stream));
    for (int i = 0; i < CUDA_SLOTS; i++)
        GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(s->slot[i].stream, s->joined, 0));
    /* (and the compute stream, which the method's in-place chunks run on) */
    if (s->compute)
        GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(s->compute, s->joined, 0));
    if (s->m->device_reserve)
        GF_TRY(s->err, sizeof s->err,
               s->m->device_reserve(s, in_bytes / ((size_t)s->p.channels * s->ss), chunk));
    return GF_OK;
}

static const char *cuda_error(void *state)
{
    return ((cuda_state *)state)->err;
}

/* Hand-off: page-lock the engine's buffers (allocated by the backend it
 * started on) for asynchronous copies. */
static gf_status cuda_host_register(void *state, void *p, size_t bytes)
{
    cuda_state *s = (cuda_state *)state;
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    GF_TRY(s->err, sizeof s->err, cudaHostRegister(p, bytes, cudaHostRegisterPortable));
    return GF_OK;
}

static void cuda_host_unregister(void *state, void *p)
{
    (void)state;
    cuda_unregister(p);
}

static const gf_backend_ops gf_backend_cuda = {
    .name = "cuda",
    .device = GF_DEVICE_CUDA,
    .slots = CUDA_SLOTS,
    .chunk_samples = (size_t)1 << 21, /* a few MB per transfer amortises its fixed cost */
    .methods_f32 = GF_METHOD_BIT(GF_METHOD_DIRECT) | GF_METHOD_BIT(GF_METHOD_FFT) |
                   GF_METHOD_BIT(GF_METHOD_NUPC),
    .methods_f64 = GF_METHOD_BIT(GF_METHOD_DIRECT) | GF_METHOD_BIT(GF_METHOD_FFT) |
                   GF_METHOD_BIT(GF_METHOD_NUPC),
    .histograms = 1,
    .auto_rank = 2, /* preferred wherever a device is usable */
    .split_copies = 1,
    .primes = 1,
    .matrix = 1,
    .zero_tail = 1,
    .lends = 1,
    .available = cuda_probe,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .direct_ok = cuda_direct_ok,
    .reset = cuda_reset,
    .submit = cuda_submit,
    .query = cuda_query,
    .wait = cuda_wait,
    .error = cuda_error,
    .device_begin = cuda_device_begin,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
};

static const gf_cuda_module cuda_module = {
    .interface = GF_CUDA_MODULE_INTERFACE,
    .ops_size = sizeof(gf_backend_ops),
    .params_size = sizeof(gf_backend_params),
    .ops = &gf_backend_cuda,
    .probe = cuda_probe,
    .pinned_alloc = cuda_pinned_alloc,
    .pinned_free = cuda_pinned_free,
    .host_register = cuda_register,
    .host_unregister = cuda_unregister,
    .count = cuda_count,
    .describe = cuda_describe,
};

/* The module's one export (gf_cuda.h). */
extern "C" __attribute__((visibility("default"))) const gf_cuda_module *gf_cuda_module_entry(void)
{
    return &cuda_module;
}
