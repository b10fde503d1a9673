/*
 * The CUDA histogram kernel (src/core/backends/cuda/hist_kernels.cuh) run on the host: its
 * grid geometry, segment and channel-group mapping, shared-memory
 * privatisation, warp reductions, 128-bit carries and the merge into the
 * global partials, against the host partials of the cpu backend
 * (hist_count.c), byte for byte, over random geometries.
 *
 * A shim stands in for the CUDA built-ins (cuda_host/cuda_runtime.h, and
 * here what only this kernel uses): each thread block runs as 256 real
 * threads (a pool, reused), __syncthreads and the warp shuffles meet on
 * barriers, atomics are real atomics, shared memory is one buffer (blocks
 * run one after another). What it cannot check (intrinsics,
 * launches, streams, copies) test_cuda checks on a GPU.
 *
 * Usage: test_hist_kernel [CASES]
 */
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

/* ---- the shim: cuda_host/cuda_runtime.h, and here the rest ---- */
#include "cuda_runtime.h"

static std::barrier<> *g_block_bar;
static std::barrier<> *g_warp_bar[8];
static unsigned long long g_xch[8][32];

void __syncthreads()
{
    g_block_bar->arrive_and_wait();
}
static inline unsigned atomicAdd(unsigned *p, unsigned v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v &&
           !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
/* Rounding toward zero, from the round-to-nearest sum and its exact error
 * (TwoSum): step back one ulp where nearest rounded away from zero. */
static inline double __dadd_rz(double a, double b)
{
    const double s = a + b;
    if (!std::isfinite(s))
        return s;
    const double bb = s - a, err = (a - (s - bb)) + (b - bb);
    if (err != 0 && (err < 0) != (s < 0))
        return std::nextafter(s, 0.0);
    return s;
}
static inline unsigned long long __double2ull_rz(double d)
{
    if (!(d >= 0))
        return 0;
    if (d >= 0x1p64)
        return ~0ull;
    return (unsigned long long)d;
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int off)
{
    (void)mask;
    const int w = (int)threadIdx.x / 32, l = (int)threadIdx.x % 32;
    unsigned long long u = 0;
    std::memcpy(&u, &v, sizeof v);
    g_xch[w][l] = u;
    g_warp_bar[w]->arrive_and_wait();
    u = g_xch[w][l ^ off];
    g_warp_bar[w]->arrive_and_wait();
    T r;
    std::memcpy(&r, &u, sizeof r);
    return r;
}

#include "hist_kernels.cuh"

namespace gf
{
alignas(16) unsigned char gf_hist_smem[96 * 1024];
}

/* 256 threads that run one thread block at a time. */
class block_pool
{
  public:
    block_pool() : start_(gf::HIST_THREADS + 1), end_(gf::HIST_THREADS + 1)
    {
        g_block_bar = &block_;
        for (int w = 0; w < 8; w++)
            g_warp_bar[w] = &warp_[w];
        for (unsigned t = 0; t < (unsigned)gf::HIST_THREADS; t++)
            threads_.emplace_back([this, t] {
                threadIdx = dim3(t);
                for (;;) {
                    start_.arrive_and_wait();
                    if (stop_)
                        return;
                    blockIdx = block_idx_;
                    body_();
                    end_.arrive_and_wait();
                }
            });
    }
    ~block_pool()
    {
        stop_ = true;
        start_.arrive_and_wait();
        for (auto &t : threads_)
            t.join();
    }
    void run(dim3 b, const std::function<void()> &body)
    {
        block_idx_ = b;
        body_ = body;
        start_.arrive_and_wait();
        end_.arrive_and_wait();
    }

  private:
    std::barrier<> start_, end_;
    std::barrier<> block_{gf::HIST_THREADS};
    std::barrier<> warp_[8] = {std::barrier<>(32), std::barrier<>(32), std::barrier<>(32),
                               std::barrier<>(32), std::barrier<>(32), std::barrier<>(32),
                               std::barrier<>(32), std::barrier<>(32)};
    std::vector<std::thread> threads_;
    std::function<void()> body_;
    dim3 block_idx_;
    bool stop_ = false;
};

template <typename T>
static void run_grid(block_pool &pool, const gf::hist_geometry &g, bool mix, const T *x,
                     unsigned char *parts)
{
    for (unsigned by = 0; by < g.grid.y; by++)
        for (unsigned bx = 0; bx < g.grid.x; bx++)
            pool.run(dim3(bx, by), [&] {
                if (mix)
                    gf::hist_chunk<T, true>(x, parts, g.a);
                else
                    gf::hist_chunk<T, false>(x, parts, g.a);
            });
}

/*
 * hist_fast (the kernel's branch-free per-sample path) against hist.h's
 * gf_hist_sample, one sample at a time, on values chosen to break it:
 * every edge and its neighbours (as doubles and as the floats around
 * them), lo and hi and their neighbours, zeros, subnormals, squares just
 * below and above 2^-64 and 1, |x| around 4096, infinities, NaN, huge
 * values. Headers are compared after every sample, bins per sample, and
 * the 16-bit counting (two counts to a word) adds to the same bin.
 */
template <typename T>
static int check_samples(const gf_hist_rule &r, const std::vector<double> &vals)
{
    gf_hist_plan p;
    memset(&p, 0, sizeof p);
    p.rule = r;
    p.bins = r.bins;
    p.block = 1;
    p.channels = 1;
    p.nrec = 1;
    p.count_bytes = 4;
    p.part_bytes = gf_hist_part_size(r.bins, 4);
    p.max_segs = 1;
    const gf::hist_geometry g = gf::hist_geometry_for(&p, 0, 1, 1, 96 * 1024);
    const gf::hist_consts c = gf::hist_consts_of(g.a);
    gf::hist_thread<T> h = {};
    gf_hist_part want = {};
    gf::hist_thread<T> h16 = {};
    std::vector<unsigned> bins(r.bins, 0u), words((r.bins + 1) / 2, 0u);
    for (double dv : vals) {
        const T v = (T)dv;
        const uint32_t wb = gf_hist_sample(&r, &want, (double)v);
        std::fill(bins.begin(), bins.end(), 0u);
        std::fill(words.begin(), words.end(), 0u);
        gf::hist_fast<T, false>(c, h, bins.data(), v);
        gf::hist_fast<T, true>(c, h16, words.data(), v);
        for (uint32_t i = 0; i < r.bins; i++)
            if (bins[i] != ((words[i / 2] >> (16 * (i % 2))) & 0xffffu)) {
                fprintf(stderr,
                        "test_hist_kernel: hist_fast<%s> with 16-bit counts on %a: bin "
                        "%u differs\n",
                        sizeof(T) == 4 ? "float" : "double", (double)v, i);
                return 1;
            }
        gf_hist_part got;
        gf::hist_thread_out(h, got);
        uint32_t gb = GF_HIST_NO_BIN;
        for (uint32_t i = 0; i < r.bins; i++)
            if (bins[i]) {
                if (gb != GF_HIST_NO_BIN || bins[i] != 1)
                    gb = GF_HIST_NO_BIN - 1;
                else
                    gb = i;
            }
        if (gb != wb || memcmp(&got, &want, sizeof got) != 0) {
            fprintf(stderr,
                    "test_hist_kernel: hist_fast<%s> differs from gf_hist_sample on %a (%.17g) "
                    "with %u bins over [%.17g, %.17g]: bin %u, want %u; header %s\n",
                    sizeof(T) == 4 ? "float" : "double", (double)v, (double)v, r.bins, r.lo, r.hi,
                    gb, wb, memcmp(&got, &want, sizeof got) ? "differs" : "same");
            return 1;
        }
    }
    return 0;
}

static int per_sample_tests(std::mt19937_64 &rng)
{
    const size_t binsv[] = {1, 2, 3, 7, 10, 100, 256, 1000, 4096, 65536};
    const double lohi[][2] = {{-1, 1},          {-1, 0.7},      {-0.1, 0.3},   {0, 1},
                              {1e-3, 2e-3},     {-5000, 5000},  {-1e30, 1e30}, {-3, -1},
                              {0.1, 0.1000001}, {-1e-40, 1e-40}};
    int n = 0;
    for (size_t bins : binsv)
        for (const auto &lh : lohi) {
            gf_hist_config hc;
            memset(&hc, 0, sizeof hc);
            hc.bins = bins;
            hc.block_frames = 1;
            hc.lo = lh[0];
            hc.hi = lh[1];
            size_t chunk = 1;
            gf_hist_plan p;
            gf_hist_plan_make(&hc, 1, 3, &chunk, &p);
            const gf_hist_rule &r = p.rule;
            std::vector<double> v = {0.0,      -0.0,    INFINITY,  -INFINITY, NAN,     -NAN,
                                     4096.0,   -4096.0, 4095.999,  0x1p-32,   0x1p-33, 0x1p-31,
                                     1.0,      -1.0,    0x1p-149,  0x1p-1074, 1e300,   -1e300,
                                     0x1p-126, 5e-324,  1.0000001, 0.9999999, 3e38,    -3e38};
            auto around = [&](double e) {
                v.push_back(e);
                v.push_back(std::nextafter(e, INFINITY));
                v.push_back(std::nextafter(e, -INFINITY));
                const float f = (float)e;
                v.push_back(f);
                v.push_back(std::nextafterf(f, INFINITY));
                v.push_back(std::nextafterf(f, -INFINITY));
            };
            around(r.lo);
            around(r.hi);
            const uint32_t stride = r.bins > 300 ? r.bins / 300 : 1;
            for (uint32_t i = 1; i < r.bins; i += stride)
                around(gf_hist_edge(&r, i));
            std::uniform_real_distribution<double> u(r.lo - (r.hi - r.lo) * 0.1,
                                                     r.hi + (r.hi - r.lo) * 0.1);
            for (int k = 0; k < 200; k++)
                v.push_back(u(rng));
            std::shuffle(v.begin(), v.end(), rng);
            if (check_samples<float>(r, v) || check_samples<double>(r, v))
                return 1;
            n += 2 * (int)v.size();
        }
    printf("test_hist_kernel: hist_fast = gf_hist_sample on %d adversarial samples\n", n);
    return 0;
}

/* One random case: a histogram config and plan, a chunk of a stream at
 * some position, and its samples. */
struct random_case {
    gf_hist_config hc;
    int C;
    gf_hist_plan p;
    size_t frames;
    uint64_t pos;
    bool f32;
    std::vector<float> xf;
    std::vector<double> xd;
};

/* The config, plan, chunk and position of a case, drawn from rng; wide:
 * 65536 bins in blocks of 100000 frames (global partials, 32-bit counts:
 * the rarest draw). */
static void draw_case(std::mt19937_64 &rng, random_case &k, bool wide)
{
    static const size_t binsv[] = {1, 3, 64, 256, 4096, 16384, 65536};
    static const size_t blockv[] = {1, 3, 100, 777, 4096, 100000};
    gf_hist_config &hc = k.hc;
    hc.bins = binsv[rng() % 7];
    hc.block_frames = blockv[rng() % 6];
    const int lh = (int)(rng() % 4);
    hc.lo = lh == 3 ? -0.1 : -1.0;
    hc.hi = lh == 3 ? 0.3 : lh % 2 ? 1.0 : 0.7;
    hc.of_input = 0;
    hc.mix = (int)(rng() % 2);
    k.C = 1 + (int)(rng() % (rng() % 3 == 0 ? 40 : 4));
    /* Every thread block costs barrier round trips: keep the grids small. */
    size_t chunk = 1 + rng() % 8000;
    if (hc.block_frames < 10 && chunk > 150)
        chunk = 1 + rng() % 150;
    if (wide) {
        hc.bins = 65536;
        hc.block_frames = 100000;
    }
    gf_hist_plan_make(&hc, k.C, 3, &chunk, &k.p);
    k.frames = 1 + rng() % chunk;
    k.pos = rng() % 1000000;
    k.f32 = rng() % 2;
}

/* The case's samples: in and around the range, with NaN, infinities, signed
 * zeros, 5000, lo, hi, values on and next to edges, and repeats. */
static void draw_samples(std::mt19937_64 &rng, random_case &k)
{
    const size_t ns = k.frames * (size_t)k.C;
    k.xf.assign(ns, 0.0f);
    k.xd.assign(ns, 0.0);
    std::uniform_real_distribution<double> u(-1.3, 1.3);
    for (size_t i = 0; i < ns; i++) {
        double v = u(rng);
        const int r = (int)(rng() % 100);
        if (r == 0)
            v = NAN;
        else if (r == 1)
            v = rng() % 2 ? INFINITY : -INFINITY;
        else if (r == 2)
            v = rng() % 2 ? 0.0 : -0.0;
        else if (r == 3)
            v = 5000.0;
        else if (r == 4)
            v = k.hc.lo;
        else if (r == 5)
            v = k.hc.hi;
        else if (r < 9) /* on or next to an edge */
            v = std::nextafter(gf_hist_edge(&k.p.rule, (uint32_t)(rng() % k.p.rule.bins)),
                               r == 6   ? 0.0
                               : r == 7 ? INFINITY
                                        : -INFINITY);
        else if (r < 30)
            v = std::round(v * 4) / 4; /* repeats: contended atomics */
        k.xf[i] = (float)v;
        k.xd[i] = k.f32 ? (double)k.xf[i] : v;
    }
}

/* Which of the kernel's ways of holding partials the cases took. */
struct kernel_paths {
    int priv[2] = {0, 0}, global[2] = {0, 0}; /* [0]: 32-bit counts, [1]: 16-bit */
    int groups = 0, big = 0;
};

/* Case c's partials from the kernel on the pool (on a grid for 1 to 3 SMs)
 * against the host's, byte for byte. */
static int check_case(block_pool &pool, std::mt19937_64 &rng, int c, random_case &k,
                      kernel_paths &seen)
{
    const int sms = 1 + (int)(rng() % 3);
    gf::hist_geometry g = gf::hist_geometry_for(&k.p, k.pos, k.frames, sms, 96 * 1024);
    std::vector<unsigned char> want(g.bytes), got(g.bytes, 0);
    size_t first = 0;
    gf_hist_segments(&k.p, k.pos, k.frames, &first);
    gf_hist_count_parts(&k.p, k.f32 ? (const void *)k.xf.data() : (const void *)k.xd.data(),
                        k.f32 ? 4 : 8, k.frames, first, want.data(), 0, g.nseg * (size_t)k.p.nrec);
    if (k.f32)
        run_grid(pool, g, k.p.mix != 0, k.xf.data(), got.data());
    else
        run_grid(pool, g, k.p.mix != 0, k.xd.data(), got.data());
    seen.priv[g.a.half] |= g.a.priv;
    seen.global[g.a.half] |= !g.a.priv;
    seen.groups |= g.grid.y > 1;
    seen.big |= g.smem > 48 * 1024;
    if (want == got)
        return 0;
    size_t i = 0;
    while (want[i] == got[i])
        i++;
    fprintf(stderr,
            "test_hist_kernel: case %d (%s, %d ch, %zu bins, block %zu, %s, %zu frames at "
            "%llu; grid %ux%u, F %lld, G %d, priv %d, %zu-byte counts): partial %zu differs "
            "at byte %zu\n",
            c, k.f32 ? "f32" : "f64", k.C, k.hc.bins, k.hc.block_frames, k.hc.mix ? "mix" : "each",
            k.frames, (unsigned long long)k.pos, g.grid.x, g.grid.y, g.a.F, g.a.G, g.a.priv,
            k.p.count_bytes, i / k.p.part_bytes, i % k.p.part_bytes);
    return 1;
}

int main(int argc, char **argv)
{
    const int cases = argc > 1 ? atoi(argv[1]) : 40;
    std::mt19937_64 rng(20261122);
    if (per_sample_tests(rng))
        return 1;
    block_pool pool;
    kernel_paths seen;
    int bad = 0;
    for (int c = 0; c < cases && !bad; c++) {
        random_case k{};
        draw_case(rng, k, c == 0);
        draw_samples(rng, k);
        bad = check_case(pool, rng, c, k, seen);
    }
    if (!bad && cases >= 40 &&
        !(seen.priv[0] && seen.priv[1] && seen.global[0] && seen.global[1] && seen.groups &&
          seen.big)) {
        fprintf(stderr,
                "test_hist_kernel: the cases missed a kernel path (shared 32/16-bit %d %d, "
                "global %d %d, groups %d, big %d)\n",
                seen.priv[0], seen.priv[1], seen.global[0], seen.global[1], seen.groups, seen.big);
        bad = 1;
    }
    if (bad) {
        fprintf(stderr, "test_hist_kernel: FAILED\n");
        return 1;
    }
    printf("test_hist_kernel: %d random geometries, the kernel's partials equal the host's\n",
           cases);
    return 0;
}
