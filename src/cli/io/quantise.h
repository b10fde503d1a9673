/*
 * Float samples to integer PCM a block at a time, with or without TPDF
 * dither: the loops of the sinks' hot path, vectorised (quantise.c). The
 * same numbers, sample by sample, as gf_quantise and
 * gf_dither_tpdf_quantise (sample_conv.h, dither.h).
 */
#ifndef GF_QUANTISE_H
#define GF_QUANTISE_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The n samples of x (float or double, as p says) times scale (2^(bits-1)),
 * plus the TPDF noise of samples index, index+1, ... of the stream keyed
 * by `key` where tpdf is not 0, rounded to nearest (ties to even), clipped
 * to [-scale, scale-1] (NaN as 0), then times shift (2^(32-bits), as
 * libsndfile's int samples are), into out. Returns how many were clipped.
 */
uint64_t gf_quantise_block(gf_precision p, const void *x, size_t n, double scale, double shift,
                           int tpdf, uint64_t key, uint64_t index, int32_t *out);
/* The same for 16-bit output (scale 2^15), as the integers themselves
 * (sf_writef_short's), not shifted. */
uint64_t gf_quantise_block16(gf_precision p, const void *x, size_t n, int tpdf, uint64_t key,
                             uint64_t index, int16_t *out);

#endif /* GF_QUANTISE_H */
