/*
 * The CPU backend's NUPC method: non-uniformly partitioned convolution
 * (gpufilt.h states the method, its levels and its exactness contract).
 *
 * Each level is the FFT method of cpu_fft.h over its segment of the taps,
 * with partition S_l, run on whole blocks of S_l input frames in stream
 * order: its own frequency-domain delay line and plans, so its outputs
 * depend only on its input blocks. A level's outputs go to its own ring of
 * output frames, at their stream position plus its offset o_l; a chunk's
 * output frame n is then y = y_0[n] + y_1[n] + ... in level order. Since
 * every level writes each of its outputs once and the sum's order is fixed,
 * the bytes depend only on the input, the taps, B, M and the FFT library,
 * never on how the stream was cut into chunks.
 *
 * Deadlines (what lets a live engine run the big levels on other threads):
 * level l's block of input [t - S_l, t) yields outputs [t - S_l + o_l,
 * t + o_l), and o_l >= S_l for l >= 1, so the block may be transformed at
 * any time from when frame t - 1 arrives until output frame t - S_l + o_l
 * is due: (o_l - S_l)/B + 1 partitions of B frames later. Level 0's block
 * is due with the partition that completes it. A level takes its input and
 * runs its blocks on its own (level_take in cpu_nupc.c), and nothing reads
 * a level's ring before output reaches it, so a scheduler can move each
 * level's work anywhere inside its window.
 */
#ifndef GF_CPU_NUPC_H
#define GF_CPU_NUPC_H

#include "backend.h"
#include "cpu_fft.h"

typedef struct gf_cpu_nupc gf_cpu_nupc;

/* Runs one level's chunk lc (whole blocks of the level's partition, in
 * stream order) through fft: its forward units, then its output units
 * (cpu_fft.h), then gf_cpu_fft_end. The backend does it on its threads. */
typedef void (*gf_cpu_nupc_run)(void *ctx, gf_cpu_fft *fft, const gf_chunk *lc);

/* For params p (method NUPC: partition B, max_partition M) and `threads`
 * threads that may run a level's units at once. Errors as
 * gf_cpu_fft_create's. */
gf_status gf_cpu_nupc_create(const gf_backend_params *p, int threads, gf_cpu_nupc **out,
                             char *detail, size_t detail_size);
void gf_cpu_nupc_destroy(gf_cpu_nupc *n);

/* Zero history: the stream starts again. */
void gf_cpu_nupc_reset(gf_cpu_nupc *n);

/* Filter chunk c (whole partitions of B, in stream order; no halo): every
 * level takes its input and runs the blocks it completes (through run),
 * then the chunk's outputs past c->skip are the levels' sums. */
void gf_cpu_nupc_chunk(gf_cpu_nupc *n, const gf_chunk *c, gf_cpu_nupc_run run, void *ctx);

#endif /* GF_CPU_NUPC_H */
