/*
 * The CUDA backend's FFT method (backend_cuda.h): the transforms and delay
 * line of fft_conv.h on one compute stream, in chunk order, with events
 * that order each slot's upload before its compute and its compute before
 * its download.
 */
#include "backend_cuda.h"

/* FFT method: the compute stream, and the transforms and delay line. */
static gf_status setup_fft(cuda_state *s)
{
    GF_TRY(s->err, sizeof s->err, cudaStreamCreateWithFlags(&s->compute, cudaStreamNonBlocking));
    return gf::fft_conv_create(&s->p, &s->fft, s->err, sizeof s->err);
}

/* The events that order a slot's upload before the compute stream's work
 * and that work before the slot's download, and the one that says when
 * another instance has its history copied out of this slot. */
static gf_status slot_setup_fft(cuda_state *s, cuda_slot *sl)
{
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->uploaded, cudaEventDisableTiming));
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->computed, cudaEventDisableTiming));
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->lent, cudaEventDisableTiming));
    return GF_OK;
}

/* Every chunk, even one whose outputs are all skipped: the delay line must
 * see every block. The chunk is at d_in + hs; the history to prime with
 * (gf_chunk.prime_frames) ends there. */
static gf_status run_fft(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    const unsigned char *in = (const unsigned char *)sl->d_in + s->hs * s->ss;
    const size_t pre = c->prime_frames * (size_t)s->p.channels;
    cudaGetLastError();
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->uploaded, sl->stream));
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(s->compute, sl->uploaded, 0));
    if (pre)
        GF_TRY(s->err, sizeof s->err,
               gf::fft_conv_prime(s->fft, s->compute, in - pre * s->ss, c->prime_frames, s->err,
                                  sizeof s->err));
    GF_TRY(s->err, sizeof s->err,
           gf::fft_conv_run(s->fft, s->compute, in, c->frames, c->skip, sl->d_out, s->err,
                            sizeof s->err));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->computed, s->compute));
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(sl->stream, sl->computed, 0));
    return GF_OK;
}

/* A chunk of the caller's GPU memory with nothing to stage: the
 * transforms read its input and write its output where they are, on the
 * compute stream, which device_begin set waiting for the caller's work. No
 * copy into or out of the slot's buffers (two of the chunk's bytes each
 * way), and the slot's stream is not used. */
static gf_status run_device_fft(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    cudaGetLastError();
    GF_TRY(s->err, sizeof s->err,
           gf::fft_conv_run(s->fft, s->compute, c->in, c->frames, c->skip, c->out, s->err,
                            sizeof s->err));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->done, s->compute));
    return GF_OK;
}

/* The chunks of a call's GPU memory that run in place are as long as the
 * signal's whole partitions allow, up to DEVICE_CHUNK_SAMPLES over all
 * channels: their kernels' fixed cost (three launches, and grids that
 * fill the GPU once per chunk) is then paid a few times a signal rather
 * than every 2^21 samples (bench_long: 65536 taps over 2^27 samples took
 * 4.37 ms in 2^21-frame chunks, 3.54 ms as one). The fused transforms'
 * buffers grow for them once (fft_conv_reserve, where memory allows; about
 * 200 MB at most) and stay; elsewhere, and with GPUFILT_DEVICE_STAGED=1,
 * the engine's chunk stays. */
#define DEVICE_CHUNK_SAMPLES ((size_t)1 << 23)

static gf_status reserve_device_fft(cuda_state *s, size_t frames, size_t *chunk)
{
    const size_t P = s->p.partition;
    const size_t wide = (size_t)(s->out_channels > s->p.channels ? s->out_channels : s->p.channels);
    const size_t cap = DEVICE_CHUNK_SAMPLES / wide / P * P;
    const size_t want = frames / P * P < cap ? frames / P * P : cap;
    if (s->stage_device || want <= *chunk)
        return GF_OK;
    GF_TRY(s->err, sizeof s->err, gf::fft_conv_reserve(s->fft, want, s->err, sizeof s->err));
    const size_t got = gf::fft_conv_chunk_frames(s->fft);
    const size_t run = got < want ? got : want;
    if (run > *chunk)
        *chunk = run;
    return GF_OK;
}

static gf_status reset_fft(cuda_state *s)
{
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    GF_TRY(s->err, sizeof s->err, gf::fft_conv_reset(s->fft, s->compute, s->err, sizeof s->err));
    GF_TRY(s->err, sizeof s->err, cudaStreamSynchronize(s->compute));
    return GF_OK;
}

/* FFT method: the transforms and delay line, the compute stream. */
static void release_fft(cuda_state *s)
{
    gf::fft_conv_destroy(s->fft);
    if (s->compute)
        cudaStreamDestroy(s->compute);
}

const cuda_method cuda_fft = {setup_fft,          slot_setup_fft, run_fft,    run_device_fft,
                              reserve_device_fft, reset_fft,      release_fft};
