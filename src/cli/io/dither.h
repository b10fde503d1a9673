/*
 * Dither for integer PCM outputs (--dither, --seed): what is added to a
 * sample, in units of the output's least significant bit (LSB), before it
 * is rounded to the nearest integer and clipped (sample_conv.h).
 *
 *   TPDF    the difference of two uniform random numbers in [0, 1): a
 *           triangular density on (-1, 1) LSB, mean 0, variance 1/6 LSB^2.
 *   SHAPED  the same TPDF noise inside an error-feedback loop that pushes
 *           the error (noise and rounding) towards high frequencies, where
 *           the ear is least sensitive: y = x + e[n] - sum_j c_j e[n-j].
 *           The five coefficients c_j are Lipshitz, Vanderkooy and
 *           Wannamaker's E-weighted curve ("Minimally audible noise
 *           shaping", J. Audio Eng. Soc. 39(11), 1991; SoX's "lipshitz"),
 *           designed for 44.1 kHz and used at 48 kHz too (its notches 9%
 *           higher); at other rates TPDF with a warning, as SoX does.
 *
 * The noise is counter-based: a hash of the seed and the sample's place in
 * the stream (frame x channels + channel), so the
 * same command gives the same bytes however the stream is cut into
 * blocks, on whichever backend and threads. Shaped dither also carries
 * each channel's last five errors from sample to sample, in order: the
 * sink sees every frame once, in order, so that is the same too.
 */
#ifndef GF_DITHER_H
#define GF_DITHER_H

#include "cli.h"
#include "io/sample_conv.h"

#include <stddef.h>
#include <stdint.h>

#define GF_SHAPE_TAPS 5

/* What the sink's opener asks for (gf_sink_opts.dither). */
typedef struct gf_dither_opts {
    gf_dither_kind kind; /* as --dither says (GF_DITHER_AUTO when not given) */
    uint64_t seed;       /* --seed */
    /* Nothing changes the samples (a 1-tap unity filter) and the input's
     * samples are integers of this many bits; 0 otherwise. An output of at
     * least this many bits is then a bit-exact copy, never dithered. */
    int unchanged_bits;
} gf_dither_opts;

typedef struct gf_dither {
    gf_dither_kind kind; /* NONE, TPDF or SHAPED (resolved by gf_dither_open) */
    uint64_t key;        /* the seed, hashed */
    size_t channels;
    size_t channel; /* SHAPED: the next sample's channel */
    uint64_t index; /* the next sample's: frame x channels + channel */
    double *err;    /* SHAPED: channels x GF_SHAPE_TAPS past errors (LSB), newest first */
} gf_dither;

/*
 * Decide and set up the dither of an output of `bits` bits per integer
 * sample (0: not integer PCM: float, or an encoding libsndfile converts
 * from float) at `rate` Hz (0: unknown): none for such an output, for a
 * bit-exact copy (o->unchanged_bits <= bits) and for --dither none; AUTO
 * is SoX's default: TPDF below 24 bits, else none. Shaped at a rate
 * without a curve is TPDF, with a warning. Returns 0, or GF_EXIT_INTERNAL
 * (out of memory) with err set. The first sample is frame 0's, channel 0.
 */
int gf_dither_open(gf_dither *d, const gf_dither_opts *o, int bits, int channels, int rate,
                   char *err, size_t n);
/* Free its memory; kind and key stay, to say what was written. */
void gf_dither_close(gf_dither *d);
/* The dither's name for messages and the JSON summary: "none", "tpdf",
 * "shaped". */
const char *gf_dither_name(gf_dither_kind k);

/* A 32-bit integer hash with full avalanche (Wellons' "lowbias32",
 * hash-prospector): 32-bit operations only, so a loop of them vectorises
 * (quantise.c). */
static inline uint32_t gf_dither_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* The key of the span of 2^31 samples that holds sample `index`. */
static inline uint32_t gf_dither_span_key(uint64_t key, uint64_t index)
{
    return (uint32_t)key ^ gf_dither_hash((uint32_t)(key >> 32) ^ (uint32_t)(index >> 31));
}

/* The triangular noise of the sample at `j` = 2 x (its index mod 2^31) in
 * the span keyed by `k`, in LSB: in (-1, 1), the difference of two 24-bit
 * uniforms (exact in a double), each the hash of its own counter, so the
 * n-th sample's noise depends on n alone. */
static inline double gf_dither_tpdf_at(uint32_t k, uint32_t j)
{
    const int32_t a = (int32_t)(gf_dither_hash(j + k) >> 8),
                  b = (int32_t)(gf_dither_hash(j + 1 + k) >> 8);
    return (double)(a - b) * 0x1p-24;
}

/* The triangular noise of sample `index` (frame x channels + channel) of
 * the stream keyed by `key`, in LSB: in (-1, 1). */
static inline double gf_dither_tpdf(uint64_t key, uint64_t index)
{
    return gf_dither_tpdf_at(gf_dither_span_key(key, index), (uint32_t)index << 1);
}

/* Lipshitz's E-weighted coefficients (see above). */
extern const double gf_dither_shape[GF_SHAPE_TAPS];

/* x (full scale +-1) to an integer of the output's (scale = 2^(bits-1))
 * with the TPDF noise of sample `index`: rounded to nearest (ties to even)
 * and clipped as gf_quantise does, NaN as 0, clipped samples counted. For
 * loops that keep the index (and the count) in locals. */
static inline int64_t gf_dither_tpdf_quantise(uint64_t key, uint64_t index, double x, double scale,
                                              uint64_t *clipped)
{
    const double t = x * scale + gf_dither_tpdf(key, index);
    if (t >= -scale - 0.5 && t < scale - 0.5)
        return (int64_t)((t + 0x1.8p52) - 0x1.8p52);
    ++*clipped;
    return t >= scale - 0.5 ? (int64_t)scale - 1 : t < -scale - 0.5 ? -(int64_t)scale : 0;
}

/*
 * x (full scale +-1) to an integer of the output's (scale = 2^(bits-1)),
 * dithered: rounded to nearest (ties to even) and clipped to [-scale,
 * scale-1] as gf_quantise does, NaN as 0; clipped samples counted. Called
 * for every sample in order (interleaved frames); with kind NONE it is
 * gf_quantise. A clipped sample feeds no error back (the loop restarts),
 * so a clipped stretch cannot make the shaping run away.
 */
static inline int64_t gf_dither_quantise(gf_dither *d, double x, double scale, uint64_t *clipped)
{
    if (d->kind == GF_DITHER_NONE)
        return gf_quantise(x, scale, clipped);
    if (!d->err)
        return gf_dither_tpdf_quantise(d->key, d->index++, x, scale, clipped);
    double v = x * scale, *e = NULL;
    if (d->err) {
        e = d->err + d->channel * GF_SHAPE_TAPS;
        for (int j = 0; j < GF_SHAPE_TAPS; j++)
            v = v - gf_dither_shape[j] * e[j];
        if (++d->channel == d->channels)
            d->channel = 0;
    }
    const double t = v + gf_dither_tpdf(d->key, d->index++);
    double q, fed = 0;
    if (t >= -scale - 0.5 && t < scale - 0.5) {
        q = (t + 0x1.8p52) - 0x1.8p52;
        fed = q - v;
    } else {
        ++*clipped;
        q = t >= scale - 0.5 ? scale - 1 : t < -scale - 0.5 ? -scale : 0;
    }
    if (e) {
        for (int j = GF_SHAPE_TAPS - 1; j > 0; j--)
            e[j] = e[j - 1];
        e[0] = fed;
    }
    return (int64_t)q;
}

#endif /* GF_DITHER_H */
