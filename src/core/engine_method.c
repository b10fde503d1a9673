/*
 * The methods as the engine sees them: how each frames a stream into
 * chunks (halo, whole blocks, a least default chunk) and its bound on the
 * error. The engine reads these numbers and never asks which method it
 * runs; the backend computes the method (backend.h). A new method is one
 * entry in `methods` plus its backends' code.
 */
#include "engine_internal.h"

#include <math.h>

/* Direct: every chunk carries the T-1 frames before it; any length will do
 * (the default is at least T - 1, which a chunk shorter than its halo
 * would not repay, and which gf_engine_filter_device needs); bit-identical
 * with the serial reference. */
static void direct_frame(gf_engine *e, size_t partition)
{
    (void)partition;
    e->partition = 0;
    e->max_partition = 0;
    e->halo_samples = (e->num_taps - 1) * e->channels;
    e->quantum = 1;
    e->min_chunk = e->num_taps - 1;
}

static double direct_bound(const gf_engine *e, const double *h, double max_abs_x)
{
    (void)e;
    (void)h;
    (void)max_abs_x;
    return 0;
}

/* FFT: the backend keeps the history; chunks hold whole partitions, by
 * default at least 16 partitions' worth of samples over all channels and
 * at least 4 partitions: their transforms are then large enough to be
 * efficient, the delay line's multiply-accumulate reads the filter's
 * spectra once per 4 blocks or fewer (its tiles: fft_conv.cu), and a job
 * of many channels still makes several chunks, whose upload, transforms
 * and download overlap. Measured on an H200 (bench_multi --chunk), 2^20
 * taps: 16 partitions made 1 GiB chunks at 128 channels, and 4 took 2^29
 * samples in 72 ms instead of 106 (32 channels: 19.5 ms instead of 26.1);
 * 2 partitions made 8 channels at 2^22 taps 1.6x slower than 4, whose
 * speed there equals 16's. The 16 partitions stop at 2^22 samples over
 * all channels (but not below 4): the first chunk's upload and the last's
 * transforms and download do not overlap the rest, and at 2^22 taps
 * (P = 2^19) mono chunks of 2^23 frames took 2^27 samples host to host in
 * 12.00 ms, of 2^22 or 2^21 frames in 11.59 (bench_long --chunks, H200).
 *
 * On several devices (multi.c) a chunk also carries the K partitions
 * before it, which its device takes in first (a forward transform each):
 * then a chunk holds at least 2 K partitions, so that
 * this adds at most half the forward transforms (about a seventh of the
 * work at K = 8) while long filters still make several chunks of an input
 * a few times their length. Shared by channel, each device sees the whole
 * stream of its channels: no history. */
#define MAX_BLOCKS_SAMPLES ((size_t)1 << 22)

static void fft_frame(gf_engine *e, size_t partition)
{
    e->partition = partition ? partition : gf_partition_choose(e->num_taps, e->ops->device);
    e->max_partition = e->partition;
    e->halo_samples = 0;
    e->quantum = e->partition;
    size_t blocks = (16 + e->channels - 1) / e->channels;
    if (blocks > 4 && blocks * e->partition * e->channels > MAX_BLOCKS_SAMPLES)
        blocks = MAX_BLOCKS_SAMPLES / e->channels / e->partition;
    e->min_chunk = e->seg_chunk = (blocks > 4 ? blocks : 4) * e->partition;
    if (e->ops == &e->multi_ops && e->split == GF_SPLIT_TIME) {
        const size_t history = (e->num_taps + e->partition - 1) / e->partition * e->partition;
        e->halo_samples = history * e->channels;
        if (e->min_chunk < 2 * history)
            e->min_chunk = 2 * history;
    }
}

/* gpufilt.h's exactness contract. A matrix's output o (h: input 0's filter
 * into it, input i's O filters further on) sums C K products. */
static double fft_bound(const gf_engine *e, const double *h, double max_abs_x)
{
    const double eps = e->cfg.precision == GF_PRECISION_F32 ? 0x1p-24 : 0x1p-53;
    double log2n = 0;
    for (size_t n = 2 * e->partition; n > 1; n >>= 1)
        log2n += 1;
    const size_t inputs = e->cfg.outputs ? e->channels : 1;
    const double K = (double)((e->num_taps + e->partition - 1) / e->partition * inputs);
    double sum = 0;
    for (size_t i = 0; i < inputs; i++)
        for (size_t k = 0; k < e->num_taps; k++)
            sum += fabs(h[i * e->out_channels * e->num_taps + k]);
    return eps * (2 * log2n + K + 4) * sum * max_abs_x;
}

/* NUPC: chunks hold whole first partitions (B); the backend keeps every
 * level's history and its outputs computed ahead. A chunk holds at least
 * the largest partition M (and 16 B), so that every level's blocks are
 * transformed several at a time where the stream allows. One device only
 * (no halo to prime with). */
static void nupc_frame(gf_engine *e, size_t partition)
{
    const gf_device d = e->ops->device;
    e->partition = partition ? partition : gf_nupc_partition_choose(e->num_taps, d);
    e->max_partition = gf_nupc_max_partition(e->num_taps, e->partition, d);
    e->halo_samples = 0;
    e->quantum = e->partition;
    e->min_chunk = 16 * e->partition > e->max_partition ? 16 * e->partition : e->max_partition;
}

/* gpufilt.h's contract: FFT's bound for each level over its segment of the
 * taps, plus one rounding of the running sum per level after the first. */
static double nupc_bound(const gf_engine *e, const double *h, double max_abs_x)
{
    const double eps = e->cfg.precision == GF_PRECISION_F32 ? 0x1p-24 : 0x1p-53;
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
    const size_t n = gf_nupc_levels(e->num_taps, e->partition, e->max_partition, lv);
    double total = 0, all = 0;
    for (size_t l = 0; l < n; l++) {
        double log2n = 0;
        for (size_t s = 2 * lv[l].size; s > 1; s >>= 1)
            log2n += 1;
        double sum = 0;
        for (size_t k = lv[l].offset; k < lv[l].offset + lv[l].taps; k++)
            sum += fabs(h[k]);
        total += (2 * log2n + (double)lv[l].partitions + 4) * sum;
        all += sum;
    }
    return eps * (total + (double)(n ? n - 1 : 0) * all) * max_abs_x;
}

static const gf_method_ops methods[] = {
    {GF_METHOD_DIRECT, "direct", 0, direct_frame, direct_bound},
    {GF_METHOD_FFT, "FFT", 1, fft_frame, fft_bound},
    {GF_METHOD_NUPC, "NUPC", 1, nupc_frame, nupc_bound},
};

const gf_method_ops *gf_method_ops_of(gf_method m)
{
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (methods[i].method == m)
            return &methods[i];
    return NULL;
}
