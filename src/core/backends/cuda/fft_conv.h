/*
 * The CUDA backend's FFT method (fft_conv.cu): uniformly partitioned
 * overlap-save with a frequency-domain delay line on the device, cuFFT
 * plans made at create with a fixed batch (2^22 reals a call, from P
 * alone), so every block is transformed by the same plan whatever the
 * chunk; where the chunk buffers hold fewer windows than that (live
 * audio), plans of that many too, used only if a check at create finds
 * every transform's bits the same as the fixed batch's.
 *
 * A chunk runs on one stream, in stream order: the chunk deinterleaved
 * behind each channel's previous block (fft_planar), a batched R2C reading
 * the overlapping windows in place, the delay-line multiply-accumulate
 * (fft_mac), a batched C2R, the output (fft_emit). Where the fused
 * transforms exist for the size (fft_dx.h: f32, builds with cuFFTDx), one
 * kernel does fft_planar's and the R2C's work and one the C2R's and
 * fft_emit's, and no plans, blocks or windows are made. Device memory,
 * allocated at create:
 *   filter spectra  nh x K x (P+1) complex   (nh = 1, or C per-channel)
 *   delay line      C x (K-1+M) x (P+1) complex
 *   chunk buffers   C x (M+1) x (P reals + 2P reals + 2 x (P+1) complex),
 *                   each rounded up to whole cuFFT batches (the fused
 *                   transforms: the complex ones only), tails 2 x C x P
 *   split-K sums    S x C x 16 x (P+1) complex, S = ceil(K / 128), if S > 1
 *   cuFFT work areas
 * with K = ceil(T/P) and M = chunk frames / P. C++ for backend_cuda_fft.cu.
 */
#ifndef GF_FFT_CONV_H
#define GF_FFT_CONV_H

#include "backend.h"

#include <cuda_runtime.h>

namespace gf
{

struct fft_conv;

/* Every call below checks its CUDA and cuFFT calls (cuda_check.h): a
 * failure's detail, in that header's format, goes to err (n bytes). */

/* For params p (method FFT, chunk a multiple of the partition) on the
 * current device. GF_ERR_NO_MEMORY names what was needed and what is free
 * (or the cuFFT call that ran out); GF_ERR_CUDA names the failing call. */
gf_status fft_conv_create(const gf_backend_params *p, fft_conv **out, char *err, size_t n);
void fft_conv_destroy(fft_conv *f);

/* Frames the chunk buffers take in one chunk (fft_conv_run, at most). */
size_t fft_conv_chunk_frames(const fft_conv *f);

/* Chunk buffers for chunks of up to `frames` frames (a multiple of P),
 * where they are larger than the present ones, the fused transforms are in
 * use (the cuFFT plans' buffers stay) and the free memory holds the new
 * ones beside the old: then the old are freed and the history is zeroed,
 * as by fft_conv_reset. Anything in flight must be finished. Otherwise
 * nothing changes: GF_OK either way (fft_conv_chunk_frames says which);
 * an error only from a CUDA call that failed for another reason. */
gf_status fft_conv_reserve(fft_conv *f, size_t frames, char *err, size_t n);

/* Zero the history (queued on stream st). */
gf_status fft_conv_reset(fft_conv *f, cudaStream_t st, char *err, size_t n);

/* Queue the chunk d_in (frames x C, frames a multiple of P) on stream st:
 * outputs [skip, frames) to d_out. Checks each launch and cuFFT call as it
 * is queued; a failure while the work runs shows at the stream's next
 * synchronisation. */
gf_status fft_conv_run(fft_conv *f, cudaStream_t st, const void *d_in, size_t frames, size_t skip,
                       void *d_out, char *err, size_t n);

/* Queue the K partitions (or fewer) of input before a chunk, d_in (frames
 * x C, frames a multiple of P, at most the chunk or the params'
 * history_frames): they become the delay line's history, their outputs are
 * not computed; the first block's spectrum (made against whatever history
 * there was) is not kept when there are K of them. */
gf_status fft_conv_prime(fft_conv *f, cudaStream_t st, const void *d_in, size_t frames, char *err,
                         size_t n);

} // namespace gf

#endif /* GF_FFT_CONV_H */
