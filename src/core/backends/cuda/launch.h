/*
 * The CUDA kernels' host side: which kernel runs a chunk and how it is
 * launched, in one place per kernel family (fir_launch.cu, hist_launch.cu).
 * C++ for backend_cuda.cu and the benchmark; the kernels themselves are in
 * fir_kernels.cuh and hist_kernels.cuh.
 *
 * Launch functions queue work on the given stream and do not check for
 * errors: the caller checks cudaGetLastError after each, as after every
 * launch (GF_TRY_LAUNCH). The set-up functions check their CUDA calls
 * (cuda_check.h) and write a failure's detail to err (n bytes).
 */
#ifndef GF_CUDA_LAUNCH_H
#define GF_CUDA_LAUNCH_H

#include "gpufilt.h"
#include "hist_geometry.h"

#include <cuda_runtime.h>

#include <stddef.h>

/* Bytes of __constant__ memory for taps, shared by every engine of the
 * process (backend_cuda.cu hands out pages of it). */
#define GF_CONST_TAP_BYTES 65536
/* Extra samples allocated past the end of every device input buffer so
 * tiled vector loads may run over the end (values never used). */
#define GF_DEVICE_PAD_SAMPLES 8

namespace gf
{

/* How an engine's chunks are filtered: fixed at create. */
struct fir_plan {
    int ntaps, channels;
    long long hs;  /* halo samples, (ntaps - 1) * channels */
    int const_off; /* first tap in the constant bank, in samples; -1: taps in global memory */
    bool taps_per_channel; /* one filter per channel, in global memory (channel c's at c * ntaps) */
    bool tiled;            /* a tile and its halo fit shared memory */
    size_t smem;           /* dynamic shared memory of a full tile */
    size_t smem1;          /* ... of the one-output-per-thread tile */
    int sms;               /* multiprocessors */
};

/* Plan (and set the kernels' shared-memory limits) for T = float or double
 * on the current device. */
template <typename T>
gf_status fir_plan_make(int ntaps, int channels, int const_off, bool taps_per_channel, fir_plan *p,
                        char *err, size_t n);

/* Outputs [n0, n1) of the chunk in buf (halo then chunk, padded) into y;
 * gtaps: the taps in device memory when p.const_off < 0. */
template <typename T>
void fir_launch(const fir_plan &p, cudaStream_t st, const T *buf, T *y, long long n0, long long n1,
                const T *gtaps);

/* Copy taps into the constant bank at byte offset `off`. */
gf_status fir_const_upload(const void *taps, size_t bytes, size_t off, char *err, size_t n);

/* Let the histogram kernels for T use up to smem_cap bytes of dynamic
 * shared memory. */
template <typename T> gf_status hist_allow_smem(size_t smem_cap, char *err, size_t n);

/* The partials of one chunk (geometry g, samples x on the device) into the
 * zeroed device buffer parts. */
template <typename T>
void hist_launch(const hist_geometry &g, bool mix, const T *x, void *parts, cudaStream_t st);

} // namespace gf

#endif /* GF_CUDA_LAUNCH_H */
