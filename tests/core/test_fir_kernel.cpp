/*
 * The CUDA FIR kernels (src/core/backends/cuda/fir_kernels.cuh) run on the host, so that a
 * halo, tile or index bug fails where there is no GPU: every kernel against
 * the contract's sum, bit for bit,
 *
 *   y[n - n0] = h[0] x[n], then + h[k] x[n - kC] for k = 1 .. T-1,
 *   x[n] = buf[hs + n], hs = (T-1) C, for n in [n0, n1),
 *
 * in f32 and f64, over channel counts, tap counts, first outputs n0 (frames
 * skipped: n0 need not be 16-byte aligned), chunk lengths around the tile
 * and up to the largest halo whose tile fits sm_90's shared memory:
 *   - fir_tiled with P outputs per thread and with one, taps from global
 *     memory and from a constant bank at an offset;
 *   - fir_global with the launch site's grid and with a short grid (the
 *     grid-stride loop);
 *   - fir_global_channels (one filter per channel).
 * Grids are sized as fir_launch.cu sizes them. Buffers are exactly the
 * backend's (halo + chunk + GF_DEVICE_PAD_SAMPLES, 16-byte aligned), so
 * under AddressSanitizer a read past them is reported; outputs are poisoned
 * (NaN) before each launch and followed by guard words that must survive.
 * The runner (cuda_host/host_grid.h) checks 16-byte loads for alignment and
 * shared memory for writes past the launch's size.
 *
 * Usage: test_fir_kernel [RANDOM_CASES]
 */
#include "cuda_runtime.h"
#include "host_grid.h"

#include "fir_kernels.cuh"
#include "launch.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

/* Dynamic shared memory per block on sm_90 (H100, H200) with the opt-in. */
enum { SMEM_OPTIN = 232448 };

namespace gf
{
alignas(16) unsigned char gf_smem_raw[SMEM_OPTIN];
}

static const gf_host_smem g_smem = {gf::gf_smem_raw, SMEM_OPTIN};

/* Taps in a "constant bank" at an offset, as fir_launch.cu's const_taps. */
alignas(16) static double g_bank[GF_CONST_TAP_BYTES / sizeof(double)];
struct bank_taps {
    template <typename T> static const T *get(const T *gtaps, int coff)
    {
        (void)gtaps;
        return reinterpret_cast<const T *>(g_bank) + coff;
    }
};

struct fir_case {
    bool f64;
    int C, ntaps;
    long long frames, skip;
    std::string why;
};

/* A 16-byte aligned allocation of exactly n T (AddressSanitizer sees its end). */
template <typename T> static T *alloc16(size_t n)
{
    void *p = nullptr;
    if (posix_memalign(&p, 16, (n ? n : 1) * sizeof(T)) != 0) {
        fprintf(stderr, "test_fir_kernel: out of memory\n");
        exit(1);
    }
    return static_cast<T *>(p);
}

enum { GUARD = 16 };
static const unsigned char GUARD_BYTE = 0xA5;

/* The data of one case: the device buffer, taps, the contract's outputs. */
template <typename T> struct fir_data {
    long long hs, n0, n1;
    T *buf;
    std::vector<T> h; /* C x ntaps (per channel) */
    std::vector<T> want, want_pc;
};

template <typename T> static void make_data(const fir_case &k, std::mt19937_64 &rng, fir_data<T> &d)
{
    const int C = k.C, nt = k.ntaps;
    d.hs = (long long)(nt - 1) * C;
    d.n0 = k.skip * C;
    d.n1 = k.frames * C;
    const size_t total = (size_t)(d.hs + d.n1) + GF_DEVICE_PAD_SAMPLES;
    d.buf = alloc16<T>(total);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t i = 0; i < total; i++)
        d.buf[i] = rng() % 50 == 0 ? (T)0 : (T)u(rng);
    d.h.resize((size_t)C * nt);
    for (auto &v : d.h)
        v = (T)u(rng);
    const T *x = d.buf + d.hs;
    for (long long n = d.n0; n < d.n1; n++)
        for (int pc = 0; pc < 2; pc++) {
            const T *h = pc ? &d.h[(size_t)(n % C) * nt] : &d.h[0];
            T acc = h[0] * x[n];
            for (int j = 1; j < nt; j++)
                acc = acc + h[j] * x[n - (long long)j * C];
            (pc ? d.want_pc : d.want).push_back(acc);
        }
}

/* Launch `run` (which launches a kernel into y) and compare y with want:
 * every output bit for bit, guards intact. Returns the failures (0 or 1). */
template <typename T, class Run>
static int check_variant(const fir_case &k, const char *variant, const std::vector<T> &want,
                         Run run)
{
    const size_t n = want.size();
    T *y = alloc16<T>(n + GUARD);
    memset(y, 0xFF, n * sizeof(T));
    memset(y + n, GUARD_BYTE, GUARD * sizeof(T));
    run(y);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&y[i], &want[i], sizeof(T)) != 0 && bad++ == 0)
            first = i;
    bool guard = true;
    for (size_t i = 0; i < GUARD * sizeof(T); i++)
        guard = guard && reinterpret_cast<unsigned char *>(y + n)[i] == GUARD_BYTE;
    if (bad || !guard) {
        fprintf(stderr,
                "test_fir_kernel: %s (%s, C %d, %d taps, %lld frames, skip %lld): %s: %zu of %zu "
                "outputs differ",
                k.why.c_str(), k.f64 ? "f64" : "f32", k.C, k.ntaps, k.frames, k.skip, variant, bad,
                n);
        if (bad)
            fprintf(stderr, " (first: output %zu = %.9g, want %.9g)", first, (double)y[first],
                    (double)want[first]);
        fprintf(stderr, "%s\n", guard ? "" : "; written past the last output");
    }
    free(y);
    return bad || !guard ? 1 : 0;
}

static unsigned blocks_of(long long n, long long per)
{
    return (unsigned)((n + per - 1) / per);
}

/* The tiled kernel, P outputs per thread and one, taps from global memory
 * and from the bank, where its tile and halo fit shared memory. */
template <typename T>
static int check_tiled(const fir_case &k, const fir_data<T> &d, int *ran, std::mt19937_64 &rng)
{
    enum { OUT = gf::tile<T>::out };
    const long long n = d.n1 - d.n0;
    const size_t smem = gf::tiled_smem_bytes<T>(d.hs), smem1 = gf::tiled_smem_bytes<T, 1>(d.hs);
    const T *buf = d.buf, *h = d.h.data();
    const long long n0 = d.n0, n1 = d.n1;
    const int C = k.C, nt = k.ntaps;
    int bad = 0;
    if (smem <= SMEM_OPTIN) {
        ran[0]++;
        bad += check_variant(k, "fir_tiled (P per thread)", d.want, [&](T *y) {
            gf_host_launch(dim3(blocks_of(n, OUT)), gf::TILE_THREADS, g_smem, smem,
                           [&] { gf::fir_tiled<T, gf::global_taps>(buf, y, n0, n1, C, nt, h, 0); });
        });
        /* The bank at an offset that keeps the taps aligned to T. */
        const size_t room = GF_CONST_TAP_BYTES / sizeof(T) - (size_t)nt;
        const int coff = (int)(rng() % (room + 1));
        memcpy(reinterpret_cast<T *>(g_bank) + coff, h, (size_t)nt * sizeof(T));
        bad += check_variant(k, "fir_tiled (constant bank)", d.want, [&](T *y) {
            gf_host_launch(dim3(blocks_of(n, OUT)), gf::TILE_THREADS, g_smem, smem, [&] {
                gf::fir_tiled<T, bank_taps>(buf, y, n0, n1, C, nt, nullptr, coff);
            });
        });
    }
    if (smem1 <= SMEM_OPTIN) {
        ran[1]++;
        bad += check_variant(k, "fir_tiled (1 per thread)", d.want, [&](T *y) {
            gf_host_launch(
                dim3(blocks_of(n, gf::TILE_THREADS)), gf::TILE_THREADS, g_smem, smem1,
                [&] { gf::fir_tiled<T, gf::global_taps, 1>(buf, y, n0, n1, C, nt, h, 0); });
        });
    }
    return bad;
}

/* The global-memory kernels: the launch site's grid (<= 65535 blocks of
 * 256) and a grid of 3 blocks, which the grid-stride loop must cover. */
template <typename T> static int check_global(const fir_case &k, const fir_data<T> &d, int *ran)
{
    const long long n = d.n1 - d.n0, n0 = d.n0, n1 = d.n1;
    const unsigned grid = std::min(blocks_of(n, 256), 65535u);
    const T *buf = d.buf, *h = d.h.data();
    const int C = k.C, nt = k.ntaps;
    const gf_host_smem none = {nullptr, 0};
    int bad = 0;
    ran[2]++;
    for (unsigned g : {grid, std::min(grid, 3u)}) {
        const std::string v = "fir_global, grid " + std::to_string(g);
        bad += check_variant(k, v.c_str(), d.want, [&](T *y) {
            gf_host_launch(dim3(g), 256, none, 0, [&] {
                gf::fir_global<T, gf::global_taps>(buf, y, n0, n1, C, nt, h, 0);
            });
        });
        const std::string vc = "fir_global_channels, grid " + std::to_string(g);
        bad += check_variant(k, vc.c_str(), d.want_pc, [&](T *y) {
            gf_host_launch(dim3(g), 256, none, 0,
                           [&] { gf::fir_global_channels<T>(buf, y, n0, n1, C, nt, h, 0); });
        });
    }
    return bad;
}

template <typename T> static int run_case(const fir_case &k, std::mt19937_64 &rng, int *ran)
{
    fir_data<T> d;
    make_data(k, rng, d);
    int bad = check_tiled(k, d, ran, rng);
    bad += check_global(k, d, ran);
    free(d.buf);
    return bad;
}

/* The largest tap count whose full tile fits shared memory with C channels. */
template <typename T> static int max_tiled_taps(int C)
{
    int nt = 1;
    while (gf::tiled_smem_bytes<T>((long long)nt * C) <= SMEM_OPTIN)
        nt++;
    return nt; /* (nt - 1) C is the largest halo that fits */
}

/* Edges chosen on purpose, for T. */
template <typename T> static void edge_cases(std::vector<fir_case> &v)
{
    enum { OUT = gf::tile<T>::out };
    const bool f64 = sizeof(T) == 8;
    const long long out = OUT;
    v.push_back({f64, 1, 5, out, 0, "one whole tile"});
    v.push_back({f64, 1, 5, out + 1, 0, "a tile and one output"});
    v.push_back({f64, 1, 5, out - 1, 0, "one output short of a tile"});
    v.push_back({f64, 1, 7, 2 * out + 3, 3, "skip 3 (unaligned n0), partial last tile"});
    v.push_back({f64, 3, 4, out / 3 + 5, 1, "3 channels, skip 1"});
    v.push_back({f64, 1, 1, 1000, 0, "one tap (no halo)"});
    v.push_back({f64, 2, 1, 1, 0, "one frame"});
    v.push_back({f64, 5, 255, 900, 254, "255 taps, skip 254"});
    const int mt = max_tiled_taps<T>(61);
    v.push_back({f64, 61, mt, 97, 2, "the largest halo a tile takes"});
    v.push_back({f64, 61, mt + 1, 40, 0, "a halo one frame too large for a tile"});
}

static fir_case random_case(std::mt19937_64 &rng)
{
    static const int Cs[] = {1, 2, 3, 6, 8, 13};
    static const int taps[] = {1, 2, 3, 5, 16, 31, 64, 129};
    fir_case k;
    k.f64 = rng() % 2;
    k.C = Cs[rng() % 6];
    k.ntaps = taps[rng() % 8];
    const long long out =
        k.f64 ? (long long)gf::tile<double>::out : (long long)gf::tile<float>::out;
    k.frames = 1 + (long long)(rng() % (unsigned long long)(3 * out / k.C + 2));
    k.skip = rng() % 3 ? 0 : (long long)(rng() % (unsigned long long)k.frames);
    k.why = "random";
    return k;
}

int main(int argc, char **argv)
{
    const int nrandom = argc > 1 ? atoi(argv[1]) : 40;
    std::mt19937_64 rng(20261123);
    std::vector<fir_case> cases;
    edge_cases<float>(cases);
    edge_cases<double>(cases);
    for (int i = 0; i < nrandom; i++)
        cases.push_back(random_case(rng));
    int bad = 0, ran[3] = {0, 0, 0};
    for (const fir_case &k : cases)
        bad += k.f64 ? run_case<double>(k, rng, ran) : run_case<float>(k, rng, ran);
    if (bad) {
        fprintf(stderr, "test_fir_kernel: FAILED (%d launches wrong)\n", bad);
        return 1;
    }
    printf("test_fir_kernel: %zu cases: fir_tiled (P per thread) on %d, fir_tiled (1 per thread) "
           "on %d, fir_global and fir_global_channels on %d, bit-exact\n",
           cases.size(), ran[0], ran[1], ran[2]);
    return 0;
}
