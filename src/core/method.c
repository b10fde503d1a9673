/*
 * The cost model behind GF_METHOD_AUTO and the default partition size
 * (gpufilt.h). Both depend only on their arguments, never on timing, so
 * the same configuration always computes the same way.
 *
 * Costs are per output sample, in units of one multiply-add of the
 * backend's direct kernel:
 *   direct  T
 *   fft     A log2(2P) + B K + F,  K = ceil(T / P)
 *   nupc    the sum of fft's over its levels (S_l, K_l)
 * (nupc is never chosen: it buys latency, not speed).
 * A weighs the two transforms of 2P points per P samples, B one complex
 * multiply-add per partition per frequency bin, F the framing and
 * interleaving passes. The constants come from measurements of this
 * implementation (bench/NOTES.md, "Long filters"). On the GPU both costs
 * are floored at the copies to and from the host, which both methods pay:
 * where neither rises above it, direct is as fast, and exact.
 */
#include "backends/backend.h"
#include "backends/nupc_scheme.h"

/* Direct up to this many taps whatever the model says: short filters are
 * cheap either way, and direct is exact. */
#define DIRECT_ALWAYS 32

/* The device kind's model (registry.c: A, B, F above, the floor of
 * both methods in taps' worth, and the default partitions per filter); the
 * CPU's for GF_DEVICE_AUTO or a kind the library does not know. */
static gf_cost_model model_for(gf_device device)
{
    const gf_backend_entry *b = gf_backend_entry_of(device);
    return b ? b->cost : gf_backend_entry_of(GF_DEVICE_CPU)->cost;
}

static size_t pow2_nearest(double v)
{
    size_t p = 1;
    while ((double)p * 1.5 < v && p < ((size_t)1 << 40))
        p <<= 1;
    return p;
}

size_t gf_partition_choose(size_t taps, gf_device device)
{
    const gf_cost_model m = model_for(device);
    size_t p = pow2_nearest((double)taps / (double)m.k0);
    const size_t lo = 256, hi = m.max_p;
    p = p < lo ? lo : p > hi ? hi : p;
    p = p < GF_MIN_PARTITION ? GF_MIN_PARTITION : p > GF_MAX_PARTITION ? GF_MAX_PARTITION : p;
    return p;
}

size_t gf_nupc_partition_choose(size_t taps, gf_device device)
{
    (void)taps;
    (void)device;
    return 256;
}

/* NUPC's largest level stays at most 2^18 frames, where live audio was
 * measured (bench/NOTES.md, "Pipes and live audio"): a level of 2^19 would double the
 * burst of work one period's callback may have to wait on. */
#define NUPC_MAX_LEVEL ((size_t)1 << 18)

size_t gf_nupc_max_partition(size_t taps, size_t first, gf_device device)
{
    size_t m = gf_partition_choose(taps, device);
    m = m < NUPC_MAX_LEVEL ? m : NUPC_MAX_LEVEL;
    return m > first ? m : first;
}

size_t gf_nupc_levels(size_t taps, size_t first, size_t max, gf_nupc_level *out)
{
    return gf_nupc_scheme(taps, first, max, out);
}

static double log2_size(size_t n)
{
    double l = 0;
    while (n > 1) {
        n >>= 1;
        l += 1;
    }
    return l;
}

double gf_method_cost(size_t taps, gf_device device, gf_method method, size_t partition)
{
    if (method == GF_METHOD_AUTO)
        method = gf_method_choose(taps, 1, GF_PRECISION_F32, device, partition);
    if (method == GF_METHOD_DIRECT)
        return (double)taps;
    const gf_cost_model m = model_for(device);
    if (method == GF_METHOD_NUPC) { /* each level an FFT method of its own */
        gf_nupc_level lv[GF_NUPC_MAX_LEVELS];
        const size_t b = partition ? partition : gf_nupc_partition_choose(taps, device);
        const size_t n = gf_nupc_levels(taps, b, gf_nupc_max_partition(taps, b, device), lv);
        double cost = 0;
        for (size_t l = 0; l < n; l++)
            cost += m.a * log2_size(2 * lv[l].size) + m.b * (double)lv[l].partitions + m.f;
        return cost;
    }
    const size_t p = partition ? partition : gf_partition_choose(taps, device);
    const double k = (double)((taps + p - 1) / p);
    return m.a * log2_size(2 * p) + m.b * k + m.f;
}

gf_method gf_method_choose(size_t taps, int channels, gf_precision precision, gf_device device,
                           size_t partition)
{
    (void)channels;  /* both methods scale with the channels alike */
    (void)precision; /* and with the precision alike, on both backends */
    if (model_for(device).direct_only || taps <= DIRECT_ALWAYS)
        return GF_METHOD_DIRECT;
    if (taps > GF_MAX_TAPS)
        return GF_METHOD_FFT;
    const gf_cost_model m = model_for(device);
    double fft = gf_method_cost(taps, device, GF_METHOD_FFT, partition);
    double direct = (double)taps;
    fft = fft > m.floor_t ? fft : m.floor_t;
    direct = direct > m.floor_t ? direct : m.floor_t;
    return fft < direct ? GF_METHOD_FFT : GF_METHOD_DIRECT;
}
