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
    !defined(__SANITIZE_ADDRESS__)
#define GF_QUANTISE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GF_QUANTISE_CLONES
#endif

/* One sample: t (scaled, noise added) to its integer times shift; *clip
 * set where it was clipped. */
#define QUANTISE_ONE(t, out_i)                                                  \
    do {                                                                        \
        const int in = ((t) >= lo) & ((t) < hi); /* NaN: 0 */                   \
        const double r = ((t) + 0x1.8p52) - 0x1.8p52;                           \
        const double c = ((t) >= hi ? scale - 1 : 0) + ((t) < lo ? -scale : 0); \
        clipped += (uint64_t)!in;                                               \
        (out_i) = (int32_t)((in ? r : c) * shift);                              \
    } while (0)

/* k: the span's key, j: 2 x the first sample's index in the span. */
#define QUANTISE_LOOPS(T, SUFFIX)                                                                  \
    GF_QUANTISE_CLONES static uint64_t plain_##SUFFIX(const T *restrict x, size_t n, double scale, \
                                                      double shift, int32_t *restrict out)         \
    {                                                                                              \
        const double lo = -scale - 0.5, hi = scale - 0.5;                                          \
        uint64_t clipped = 0;                                                                      \
        for (size_t i = 0; i < n; i++) {                                                           \
            const double t = (double)x[i] * scale;                                                 \
            QUANTISE_ONE(t, out[i]);                                                               \
        }                                                                                          \
        return clipped;                                                                            \
    }                                                                                              \
    GF_QUANTISE_CLONES static uint64_t tpdf_##SUFFIX(const T *restrict x, size_t n, double scale,  \
                                                     double shift, uint32_t k, uint32_t j,         \
                                                     int32_t *restrict out)                        \
    {                                                                                              \
        const double lo = -scale - 0.5, hi = scale - 0.5;                                          \
        uint64_t clipped = 0;                                                                      \
        for (size_t i = 0; i < n; i++, j += 2) {                                                   \
            const double t = (double)x[i] * scale + gf_dither_tpdf_at(k, j);                       \
            QUANTISE_ONE(t, out[i]);                                                               \
        }                                                                                          \
        return clipped;                                                                            \
    }

QUANTISE_LOOPS(float, f32)
QUANTISE_LOOPS(double, f64)

uint64_t gf_quantise_block(gf_precision p, const void *x, size_t n, double scale, double shift,
                           int tpdf, uint64_t key, uint64_t index, int32_t *out)
{
    const size_t ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    uint64_t clipped = 0;
    while (n > 0) {
        size_t m = n;
        if (tpdf) { /* within one span of 2^31 samples (gf_dither_span_key) */
            const uint64_t left = (((index >> 31) + 1) << 31) - index;
            if (m > left)
                m = (size_t)left;
        }
        if (!tpdf)
            clipped += p == GF_PRECISION_F32 ? plain_f32(x, m, scale, shift, out)
                                             : plain_f64(x, m, scale, shift, out);
        else {
            const uint32_t k = gf_dither_span_key(key, index), j = (uint32_t)index << 1;
            clipped += p == GF_PRECISION_F32 ? tpdf_f32(x, m, scale, shift, k, j, out)
                                             : tpdf_f64(x, m, scale, shift, k, j, out);
        }
        x = (const unsigned char *)x + m * ss;
        out += m;
        index += m;
        n -= m;
    }
    return clipped;
}
