/* Float samples to integer PCM a block at a time (quantise.h). The loops
 * are branch-free so that the compiler vectorises them (this file is built
 * with -O3 -fno-trapping-math where the compiler is GCC: see
 * src/cli/CMakeLists.txt), and built twice, for AVX2 and the baseline,
 * where the toolchain has function multi-versioning. Every operation is
 * an exactly rounded IEEE one or an integer one, so each build gives the
 * same bits as the scalar gf_quantise and gf_dither_tpdf_quantise. */
#include "io/quantise.h"

#include "io/dither.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GF_QUANTISE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GF_QUANTISE_CLONES
#endif

/* One sample: t (scaled, noise added) to its integer times shift, of type
 * O; clipped samples counted. */
#define QUANTISE_ONE(t, O, out_i)                                               \
    do {                                                                        \
        const int in = ((t) >= lo) & ((t) < hi); /* NaN: 0 */                   \
        const double r = ((t) + 0x1.8p52) - 0x1.8p52;                           \
        const double c = ((t) >= hi ? scale - 1 : 0) + ((t) < lo ? -scale : 0); \
        clipped += (uint64_t)!in;                                               \
        (out_i) = (O)((in ? r : c) * shift);                                    \
    } while (0)

/* T samples in, O integers out; k: the span's key, j: 2 x the first
 * sample's index in the span. */
#define QUANTISE_LOOPS(T, O, SUFFIX)                                                               \
    GF_QUANTISE_CLONES static uint64_t plain_##SUFFIX(const T *restrict x, size_t n, double scale, \
                                                      double shift, O *restrict out)               \
    {                                                                                              \
        const double lo = -scale - 0.5, hi = scale - 0.5;                                          \
        uint64_t clipped = 0;                                                                      \
        for (size_t i = 0; i < n; i++) {                                                           \
            const double t = (double)x[i] * scale;                                                 \
            QUANTISE_ONE(t, O, out[i]);                                                            \
        }                                                                                          \
        return clipped;                                                                            \
    }                                                                                              \
    GF_QUANTISE_CLONES static uint64_t tpdf_##SUFFIX(const T *restrict x, size_t n, double scale,  \
                                                     double shift, uint32_t k, uint32_t j,         \
                                                     O *restrict out)                              \
    {                                                                                              \
        const double lo = -scale - 0.5, hi = scale - 0.5;                                          \
        uint64_t clipped = 0;                                                                      \
        for (size_t i = 0; i < n; i++, j += 2) {                                                   \
            const double t = (double)x[i] * scale + gf_dither_tpdf_at(k, j);                       \
            QUANTISE_ONE(t, O, out[i]);                                                            \
        }                                                                                          \
        return clipped;                                                                            \
    }

QUANTISE_LOOPS(float, int32_t, f32)
QUANTISE_LOOPS(double, int32_t, f64)
QUANTISE_LOOPS(float, int16_t, f32_s16)
QUANTISE_LOOPS(double, int16_t, f64_s16)

/* The samples of one call at most: n, or up to the end of the dither's
 * span of 2^31 samples (gf_dither_span_key). */
static size_t run_length(size_t n, int tpdf, uint64_t index)
{
    const uint64_t left = (((index >> 31) + 1) << 31) - index;
    return tpdf && n > left ? (size_t)left : n;
}

uint64_t gf_quantise_block(gf_precision p, const void *x, size_t n, double scale, double shift,
                           int tpdf, uint64_t key, uint64_t index, int32_t *out)
{
    const size_t ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    uint64_t clipped = 0;
    for (size_t m; n > 0; x = (const unsigned char *)x + m * ss, out += m, index += m, n -= m) {
        m = run_length(n, tpdf, index);
        const uint32_t k = gf_dither_span_key(key, index), j = (uint32_t)index << 1;
        if (p == GF_PRECISION_F32)
            clipped +=
                tpdf ? tpdf_f32(x, m, scale, shift, k, j, out) : plain_f32(x, m, scale, shift, out);
        else
            clipped +=
                tpdf ? tpdf_f64(x, m, scale, shift, k, j, out) : plain_f64(x, m, scale, shift, out);
    }
    return clipped;
}

uint64_t gf_quantise_block16(gf_precision p, const void *x, size_t n, int tpdf, uint64_t key,
                             uint64_t index, int16_t *out)
{
    const size_t ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    const double scale = 32768.0;
    uint64_t clipped = 0;
    for (size_t m; n > 0; x = (const unsigned char *)x + m * ss, out += m, index += m, n -= m) {
        m = run_length(n, tpdf, index);
        const uint32_t k = gf_dither_span_key(key, index), j = (uint32_t)index << 1;
        if (p == GF_PRECISION_F32)
            clipped += tpdf ? tpdf_f32_s16(x, m, scale, 1.0, k, j, out)
                            : plain_f32_s16(x, m, scale, 1.0, out);
        else
            clipped += tpdf ? tpdf_f64_s16(x, m, scale, 1.0, k, j, out)
                            : plain_f64_s16(x, m, scale, 1.0, out);
    }
    return clipped;
}
