/*
 * Exact sample conversions shared by the libsndfile and raw sinks.
 */
#ifndef GF_SAMPLE_CONV_H
#define GF_SAMPLE_CONV_H

#include <stdint.h>

/* Round x*scale to the nearest integer (ties to even) and clip to
 * [-scale, scale-1]; NaN becomes 0 and counts as clipped. Clipping is
 * decided before rounding: round(v) > scale-1 exactly when v >= scale - 0.5
 * (scale - 0.5 itself rounds up to the even scale), and round(v) < -scale
 * exactly when v < -scale - 0.5. In range, |v| < 2^32, adding and
 * subtracting 1.5 * 2^52 rounds to an integer under the default rounding
 * mode (the build forbids contraction and fast-math): no libm call on the
 * per-sample path. */
static inline int64_t gf_quantise(double x, double scale, uint64_t *clipped)
{
    const double v = x * scale;
    double q;
    if (v >= -scale - 0.5 && v < scale - 0.5) {
        q = (v + 0x1.8p52) - 0x1.8p52;
    } else {
        ++*clipped;
        q = v >= scale - 0.5 ? scale - 1 : v < -scale - 0.5 ? -scale : 0;
    }
    return (int64_t)q;
}

#endif /* GF_SAMPLE_CONV_H */
