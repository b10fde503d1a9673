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

const cuda_method cuda_fft = {setup_fft,      slot_setup_fft, run_fft,
                              run_device_fft, reset_fft,      release_fft};
