/*
 * The CUDA FFT method's kernels (src/core/backends/cuda/fft_kernels.cuh) run on the host, so
 * that an index, tile or ring-slot bug fails where there is no GPU.
 *
 * Each kernel against the layouts its header states, bit for bit, in f32
 * and f64, with the grids fft_conv.cu launches and with short grids (the
 * grid-stride loops), every buffer poisoned (NaN) where the kernel must not
 * write:
 *   fft_planar  xp = [each channel's previous block | its chunk] at c W P,
 *               tail_out = each channel's last block;
 *   fft_mac     run s of the partitions, in k order, for every block, bin
 *               and channel: X of this chunk from spec, of earlier chunks
 *               from ring slot (head + d) mod R; then the last K - 1 blocks
 *               into their ring slots, every other slot kept; with the
 *               three tiles the launch picks (BT = 16 or 8, 4, 1) and
 *               S = 1, 2, 3 runs; one filter or one per channel;
 *   fft_reduce  Y = the runs' partial sums in run order;
 *   fft_emit    the second half of each inverse transform, from frame skip,
 *               interleaved;
 *   fft_scale_spectra;
 *   the fused transforms' reads and writes (fft_dx.h): each window's reals
 *               against the planar layout, the tail, the spectra's places,
 *               the inverse's second halves against fft_emit's output.
 * The sums use the kernel's own cmac (four fused multiply-adds): what is
 * checked is which values meet in which order, not the arithmetic.
 *
 * Then whole streams through the kernels as fft_conv_run chains them
 * (planar, forward transform, mac, reduce, inverse transform, emit; head
 * and tail parity moved on per chunk), chunks of 1 .. M blocks, long enough
 * for the ring to wrap, with exact discrete Fourier transforms (long
 * double) standing in for cuFFT: the output against the direct causal
 * convolution, within gpufilt.h's error bound.
 *
 * Usage: test_fft_kernel
 */
#include "cuda_runtime.h"
#include "host_grid.h"

#include "fft_dx.h"
#include "fft_kernels.cuh"

#include <cstring>
#include <random>
#include <string>
#include <vector>

static int g_bad;

#define FAIL(...)                                         \
    do {                                                  \
        fprintf(stderr, "test_fft_kernel: " __VA_ARGS__); \
        fputc('\n', stderr);                              \
        g_bad++;                                          \
    } while (0)

static const gf_host_smem NO_SMEM = {nullptr, 0};

namespace gf
{
alignas(16) unsigned char gf_fft_smem[(FFT_TILE + 32) * sizeof(double)];
}

/* The shared memory of the transposes (fft_planar, fft_emit). */
static const gf_host_smem TILE_SMEM = {gf::gf_fft_smem, sizeof gf::gf_fft_smem};

/* A flat grid for n items, as fft_conv.cu's flat_grid. */
static unsigned flat_grid(long long n)
{
    const long long blocks = (n + gf::FFT_THREADS - 1) / gf::FFT_THREADS;
    return (unsigned)(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

template <typename T> static T nan_of()
{
    T v;
    memset(&v, 0xFF, sizeof v);
    return v;
}

template <typename T> static bool same_bits(const T &a, const T &b)
{
    return memcmp(&a, &b, sizeof(T)) == 0;
}

/* Index of the first element where a and b differ bitwise, or -1. */
template <typename T> static long long first_diff(const std::vector<T> &a, const std::vector<T> &b)
{
    for (size_t i = 0; i < a.size(); i++)
        if (!same_bits(a[i], b[i]))
            return (long long)i;
    return -1;
}

/* first_diff over out's first want.size() elements. */
template <typename T>
static long long first_diff_head(const std::vector<T> &out, const std::vector<T> &want)
{
    return first_diff(std::vector<T>(out.begin(), out.begin() + (long)want.size()), want);
}

/* Whether out is still NaN (as poisoned) from element n on. */
template <typename T> static bool untouched_after(const std::vector<T> &out, size_t n)
{
    for (size_t i = n; i < out.size(); i++)
        if (!same_bits(out[i], nan_of<T>()))
            return false;
    return true;
}

template <typename T> static const char *tname()
{
    return sizeof(T) == 4 ? "f32" : "f64";
}

template <typename T> struct cx {
    typedef typename gf::cplx<T>::type V;
};

template <typename T> static void fill(std::vector<T> &v, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto &e : v)
        e = (T)u(rng);
}

template <typename V> static void fill_c(std::vector<V> &v, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto &e : v) {
        e.x = (decltype(e.x))u(rng);
        e.y = (decltype(e.y))u(rng);
    }
}

/* ---- fft_planar ---- */

/* The header's planar layout of the chunk `in` (m blocks of P frames, C
 * channels) behind tail_in, W windows a channel (the rest NaN), and the
 * tail it leaves: what fft_planar makes and the forward transform reads. */
template <typename T>
static void planar_want(const std::vector<T> &in, const std::vector<T> &tail_in, int C, long long P,
                        long long W, long long m, std::vector<T> &want_xp,
                        std::vector<T> &want_tail)
{
    want_xp.assign((size_t)(C * W * P), nan_of<T>());
    want_tail.assign((size_t)(C * P), T(0));
    for (int c = 0; c < C; c++) {
        for (long long n = 0; n < P; n++)
            want_xp[(size_t)(c * W * P + n)] = tail_in[(size_t)(c * P + n)];
        for (long long f = 0; f < m * P; f++)
            want_xp[(size_t)(c * W * P + P + f)] = in[(size_t)(f * C + c)];
        for (long long t = 0; t < P; t++)
            want_tail[(size_t)(c * P + t)] = in[(size_t)(((m - 1) * P + t) * C + c)];
    }
}

/* The output from chunk frame skip on, interleaved: the second half of
 * each inverse transform in win ((c W + b) 2P), as fft_emit writes it. */
template <typename T>
static std::vector<T> emit_want(const std::vector<T> &win, int C, long long P, long long W,
                                long long m, long long skip)
{
    const long long outs = m * P - skip > 0 ? m * P - skip : 0;
    std::vector<T> want((size_t)(outs * C));
    for (long long i = 0; i < outs; i++)
        for (int c = 0; c < C; c++) {
            const long long n = skip + i, b = n / P, t = n % P;
            want[(size_t)(i * C + c)] = win[(size_t)((c * W + b) * 2 * P + P + t)];
        }
    return want;
}

template <typename T> static void check_planar(int C, int lp, long long M, long long m)
{
    const long long P = 1LL << lp, W = M + 1;
    std::mt19937_64 rng(7 + (unsigned)(C * 1000 + lp * 100 + m));
    std::vector<T> in((size_t)(m * P * C)), tail_in((size_t)(C * P));
    fill(in, rng);
    fill(tail_in, rng);
    std::vector<T> want_xp, want_tail;
    planar_want(in, tail_in, C, P, W, m, want_xp, want_tail);
    std::vector<T> xp(want_xp.size(), nan_of<T>()), tail_out(want_tail.size(), nan_of<T>());
    const dim3 grid = gf::fft_tile_grid(m * P, C);
    gf_host_launch(grid, gf::FFT_THREADS, TILE_SMEM, gf::fft_tile_smem<T>(), [&] {
        gf::fft_planar<T>(in.data(), m, C, lp, W, tail_in.data(), xp.data(), tail_out.data());
    });
    const long long dx = first_diff(xp, want_xp), dt = first_diff(tail_out, want_tail);
    if (dx >= 0 || dt >= 0)
        FAIL("fft_planar<%s> C %d P %lld M %lld m %lld grid %u x %u: xp differs at %lld, tail at "
             "%lld",
             tname<T>(), C, P, M, m, grid.x, grid.y, dx, dt);
}

/* ---- fft_mac ---- */

/* One launch's inputs, and the state the header's rules give after it:
 * each run's partial sums (part's layout, pw = FFT_PART_BLOCKS: only for
 * m <= pw), their total in run order (Y's layout) and the ring. C is the
 * output channels; a matrix (inputs I > 0) sums input i's filter i*C + c
 * into output c, its runs input by input (runs = I S). */
template <typename T> struct mac_io {
    typedef typename cx<T>::V V;
    int C, per_channel, inputs;
    long long m, W, K, R, head, bins, sstride, S, runs;
    std::vector<V> spec, ring, H, want_part, want_Y, want_ring;
};

static const long long PW = gf::FFT_PART_BLOCKS;

template <typename T>
static void mac_setup(mac_io<T> &io, int C, long long P, long long K, long long M, long long m,
                      int per_channel, int inputs, std::mt19937_64 &rng)
{
    typedef typename cx<T>::V V;
    io.C = C;
    io.per_channel = per_channel;
    io.inputs = inputs;
    io.m = m;
    io.W = M + 1;
    io.K = K;
    io.R = K - 1 + M;
    io.head = (long long)(rng() % (unsigned long long)io.R);
    io.bins = P + 1;
    io.sstride = (io.bins + 7) & ~7LL;
    io.S = (K + gf::MAC_KS - 1) / gf::MAC_KS;
    io.runs = io.S * (inputs > 0 ? inputs : 1);
    const int I = inputs > 0 ? inputs : C; /* channels of spectra and ring */
    const size_t ss = (size_t)io.sstride;
    io.spec.resize(I * io.W * ss);
    io.ring.resize(I * io.R * ss);
    io.H.resize((inputs > 0 ? I * C : per_channel ? C : 1) * K * ss);
    fill_c(io.spec, rng);
    fill_c(io.ring, rng);
    fill_c(io.H, rng);
    const V poison = {nan_of<T>(), nan_of<T>()};
    io.want_part.assign(io.runs * C * PW * ss, poison);
    io.want_Y.assign(C * io.W * ss, poison);
    io.want_ring = io.ring;
    for (int c = 0; c < C; c++)
        for (long long b = 0; b < m; b++)
            for (long long f = 0; f < io.bins; f++) {
                V total = {0, 0};
                for (long long r = 0; r < io.runs; r++) {
                    const int in = inputs > 0 ? (int)(r / io.S) : c;
                    const long long h = inputs > 0 ? in * C + c : per_channel ? c : 0, s = r % io.S;
                    /* X of block j0 + d: this chunk's spectra, else the ring. */
                    auto X = [&](long long d) {
                        return d >= 0 ? io.spec[(in * io.W + d) * ss + f]
                                      : io.ring[(in * io.R + ((io.head + d) % io.R + io.R) % io.R) *
                                                    ss +
                                                f];
                    };
                    V acc = {0, 0};
                    for (long long k = s * gf::MAC_KS; k < std::min((s + 1) * gf::MAC_KS, K); k++)
                        gf::cmac(acc, io.H[(h * K + k) * ss + f], X(b - k));
                    if (b < PW)
                        io.want_part[((r * C + c) * PW + b) * ss + f] = acc;
                    total = r == 0 ? acc : V{total.x + acc.x, total.y + acc.y};
                }
                io.want_Y[(c * io.W + b) * ss + f] = total;
            }
    for (int in = 0; in < I; in++) /* each input's last K - 1 blocks into the ring */
        for (long long b = 0; b < m; b++)
            for (long long f = 0; f < io.bins && b >= m - (K - 1); f++)
                io.want_ring[(in * io.R + (io.head + b) % io.R) * ss + f] =
                    io.spec[(in * io.W + b) * ss + f];
}

/* The instance fft_conv.cu's pick_mac takes: several runs per thread
 * unless split or a single run. */
template <typename T, int BT>
static void mac_launch(const mac_io<T> &io, unsigned gx, int split,
                       std::vector<typename cx<T>::V> &out, std::vector<typename cx<T>::V> &ring)
{
    auto mac = io.runs > 1 && !split ? gf::fft_mac<T, BT, gf::mac_tile<T>::KT, true>
                                     : gf::fft_mac<T, BT, gf::mac_tile<T>::KT, false>;
    gf_host_launch(dim3(gx), gf::FFT_THREADS, NO_SMEM, 0, [&] {
        mac(io.spec.data(), ring.data(), io.H.data(), out.data(), io.m, io.W, io.C, io.K, io.R,
            io.head, io.bins, io.sstride, io.per_channel, split, PW, io.inputs);
    });
}

/* Both ways of summing the runs: in one thread (into Y) and split over
 * threads (into part, for chunks of at most pw blocks), each with the
 * launch's grid (mac_grid_x: a thread per (tile, channel, bin), x runs
 * when split) and with one block striding over them all. */
template <typename T, int BT> static void mac_check_tile(const mac_io<T> &io, const char *what)
{
    typedef typename cx<T>::V V;
    const long long tiles = (io.m + BT - 1) / BT;
    for (int split = 0; split < 2; split++) {
        if (split && (io.runs == 1 || io.m > PW))
            continue;
        const std::vector<V> &want = split ? io.want_part : io.want_Y;
        const long long ty = tiles * (split ? io.runs : 1);
        for (unsigned g : {gf::mac_grid_x(ty, io.C, io.bins), 1u}) {
            std::vector<V> out(want.size(), V{nan_of<T>(), nan_of<T>()}), ring = io.ring;
            mac_launch<T, BT>(io, g, split, out, ring);
            const long long dp = first_diff(out, want), dr = first_diff(ring, io.want_ring);
            if (dp >= 0 || dr >= 0)
                FAIL("fft_mac<%s, BT %d> %s: C %d inputs %d K %lld (S %lld) m %lld R %lld head "
                     "%lld bins %lld per-channel %d split %d grid.x %u: sums differ at %lld, ring "
                     "at %lld",
                     tname<T>(), BT, what, io.C, io.inputs, io.K, io.S, io.m, io.R, io.head,
                     io.bins, io.per_channel, split, g, dp, dr);
        }
    }
}

/* fft_mac_walk, for what fft_conv.cu may give it (one run, no matrix, K
 * <= MAC_WK; here chunks of any length): the same sums and ring as
 * fft_mac's, with runs of 1, 3 and 8 blocks and the length the launch
 * picks, each with the launch's grid and with one block striding over it
 * all. */
template <typename T> static void mac_check_walk(const mac_io<T> &io, const char *what)
{
    typedef typename cx<T>::V V;
    if (io.runs != 1 || io.inputs > 0 || io.K > gf::MAC_WK)
        return;
    for (long long L : {1LL, 3LL, 8LL, gf::mac_walk_run(io.m, io.C, io.bins)})
        for (unsigned g : {gf::mac_grid_x((io.m + L - 1) / L, io.C, io.bins), 1u}) {
            std::vector<V> out(io.want_Y.size(), V{nan_of<T>(), nan_of<T>()}), ring = io.ring;
            gf_host_launch(dim3(g), gf::FFT_THREADS, NO_SMEM, 0, [&] {
                gf::fft_mac_walk<T>(io.spec.data(), ring.data(), io.H.data(), out.data(), io.m,
                                    io.W, io.C, (int)io.K, io.R, io.head, io.bins, io.sstride,
                                    io.per_channel, L);
            });
            const long long dp = first_diff(out, io.want_Y), dr = first_diff(ring, io.want_ring);
            if (dp >= 0 || dr >= 0)
                FAIL("fft_mac_walk<%s> %s: C %d K %lld m %lld R %lld head %lld bins %lld "
                     "per-channel %d run %lld grid.x %u: sums differ at %lld, ring at %lld",
                     tname<T>(), what, io.C, io.K, io.m, io.R, io.head, io.bins, io.per_channel, L,
                     g, dp, dr);
        }
}

template <typename T>
static void check_mac(int C, long long P, long long K, long long M, long long m, int per_channel,
                      int inputs, std::mt19937_64 &rng)
{
    mac_io<T> io;
    mac_setup(io, C, P, K, M, m, per_channel, inputs, rng);
    const std::string what = "P " + std::to_string(P) + " M " + std::to_string(M);
    mac_check_tile<T, gf::mac_tile<T>::BT>(io, what.c_str());
    mac_check_tile<T, 4>(io, what.c_str());
    mac_check_tile<T, 1>(io, what.c_str());
    mac_check_walk<T>(io, what.c_str());
}

/* ---- fft_reduce, fft_emit, fft_scale_spectra ---- */

template <typename T>
static void check_reduce(int C, long long bins, long long M, long long m, long long S,
                         std::mt19937_64 &rng)
{
    typedef typename cx<T>::V V;
    const long long W = M + 1, ss = (bins + 7) & ~7LL;
    std::vector<V> part((size_t)(S * C * PW * ss));
    fill_c(part, rng);
    const V poison = {nan_of<T>(), nan_of<T>()};
    std::vector<V> want((size_t)(C * W * ss), poison);
    for (int c = 0; c < C; c++)
        for (long long b = 0; b < m; b++)
            for (long long f = 0; f < bins; f++) {
                const size_t at = (size_t)((c * PW + b) * ss + f);
                V acc = part[at];
                for (long long s = 1; s < S; s++) {
                    acc.x = acc.x + part[(size_t)(s * C * PW * ss) + at].x;
                    acc.y = acc.y + part[(size_t)(s * C * PW * ss) + at].y;
                }
                want[(size_t)((c * W + b) * ss + f)] = acc;
            }
    const unsigned bx = (unsigned)((bins + gf::FFT_THREADS - 1) / gf::FFT_THREADS);
    for (unsigned gy : {(unsigned)std::min(m, 65535LL), 1u}) {
        std::vector<V> Y(want.size(), poison);
        gf_host_launch(dim3(bx, gy, (unsigned)C), gf::FFT_THREADS, NO_SMEM, 0,
                       [&] { gf::fft_reduce<T>(part.data(), Y.data(), m, W, C, S, PW, bins, ss); });
        const long long d = first_diff(Y, want);
        if (d >= 0)
            FAIL("fft_reduce<%s> C %d bins %lld m %lld S %lld grid.y %u: differs at %lld",
                 tname<T>(), C, bins, m, S, gy, d);
    }
}

template <typename T>
static void check_emit(int C, int lp, long long M, long long m, long long skip,
                       std::mt19937_64 &rng)
{
    const long long P = 1LL << lp, W = M + 1, N = 2 * P;
    std::vector<T> win((size_t)(C * W * N));
    fill(win, rng);
    const long long outs = m * P - skip;
    const std::vector<T> want = emit_want(win, C, P, W, m, skip);
    if (outs <= 0)
        return; /* fft_conv.cu launches nothing */
    std::vector<T> out(want.size() + 8, nan_of<T>());
    const dim3 grid = gf::fft_tile_grid(outs, C);
    gf_host_launch(grid, gf::FFT_THREADS, TILE_SMEM, gf::fft_tile_smem<T>(),
                   [&] { gf::fft_emit<T>(win.data(), m, C, lp, W, skip, out.data()); });
    const long long d = first_diff_head(out, want);
    const bool tail_kept = untouched_after(out, want.size());
    if (d >= 0 || !tail_kept)
        FAIL("fft_emit<%s> C %d P %lld m %lld skip %lld grid %u x %u: differs at %lld%s",
             tname<T>(), C, P, m, skip, grid.x, grid.y, d,
             tail_kept ? "" : ", written past the end");
}

/* ---- the fused transforms' reads and writes (fft_dx.h) ---- */

/* What the fused forward kernel reads for every window (its reals, pairs
 * at a time) and where it puts the spectrum and the tail, against the
 * planar layout fft_planar makes and the R2C reads (check_planar's
 * want_xp); what the fused inverse kernel writes from every window's
 * inverse transform, against fft_emit's output (check_emit's), nothing
 * written past it. C channels in, O out. */
static void check_dx(int C, int O, int lp, long long M, long long m, long long skip,
                     std::mt19937_64 &rng)
{
    const long long P = 1LL << lp, W = M + 1, N = 2 * P, sstride = ((P + 1) + 7) & ~7LL;
    std::vector<float> in((size_t)(m * P * C)), tail_in((size_t)(C * P));
    fill(in, rng);
    fill(tail_in, rng);
    std::vector<float> want_xp, want_tail;
    planar_want(in, tail_in, C, P, W, m, want_xp, want_tail);
    std::vector<float> tail_out(want_tail.size(), nan_of<float>());
    std::vector<float2> spec((size_t)(C * W * sstride));
    gf::dx_forward_args a = {in.data(),       m,           C,      W, tail_in.data(),
                             tail_out.data(), spec.data(), sstride};
    long long bad_read = -1, bad_spec = -1;
    for (long long w = 0; w < m * C; w++) {
        const long long b = w / C, c = w % C;
        for (unsigned j = 0; j < P; j++) {
            float v[2];
            gf::dx_window_pair(a, P, b, (int)c, j, v);
            for (int h = 0; h < 2; h++)
                if (bad_read < 0 &&
                    !same_bits(v[h], want_xp[(size_t)((c * W + b) * P + 2 * j + h)]))
                    bad_read = w;
        }
        if (bad_spec < 0 && gf::dx_spectrum(a, b, (int)c) != spec.data() + (c * W + b) * sstride)
            bad_spec = w;
    }
    const long long dt = first_diff(tail_out, want_tail);
    if (bad_read >= 0 || bad_spec >= 0 || dt >= 0)
        FAIL("dx forward C %d P %lld M %lld m %lld: window %lld read wrong, window %lld's spectrum "
             "misplaced, tail differs at %lld",
             C, P, M, m, bad_read, bad_spec, dt);

    std::vector<float> win((size_t)(O * W * N));
    fill(win, rng);
    const std::vector<float> want = emit_want(win, O, P, W, m, skip);
    std::vector<float> out(want.size() + 8, nan_of<float>());
    std::vector<float2> Y((size_t)(O * W * sstride));
    const gf::dx_inverse_args r = {Y.data(), m, O, W, sstride, skip, out.data()};
    long long bad_y = -1;
    for (long long w = 0; w < m * O; w++) {
        const long long b = w / O, c = w % O;
        const float *x = win.data() + (c * W + b) * N;
        for (unsigned j = 0; j < P; j++)
            gf::dx_output_pair(r, P, b, (int)c, j, x[2 * j], x[2 * j + 1]);
        if (bad_y < 0 && gf::dx_product(r, b, (int)c) != Y.data() + (c * W + b) * sstride)
            bad_y = w;
    }
    const long long d = first_diff_head(out, want);
    const bool tail_kept = untouched_after(out, want.size());
    if (d >= 0 || !tail_kept || bad_y >= 0)
        FAIL("dx inverse O %d P %lld M %lld m %lld skip %lld: differs at %lld%s, window %lld's "
             "spectrum misplaced",
             O, P, M, m, skip, d, tail_kept ? "" : ", written past the end", bad_y);
}

template <typename T> static void check_scale(long long n, std::mt19937_64 &rng)
{
    typedef typename cx<T>::V V;
    std::vector<double2> src((size_t)n);
    fill_c(src, rng);
    const double scale = 1.0 / 64;
    std::vector<V> want((size_t)n + 4, V{nan_of<T>(), nan_of<T>()}), got = want;
    for (long long i = 0; i < n; i++)
        want[(size_t)i] = V{(T)(src[(size_t)i].x * scale), (T)(src[(size_t)i].y * scale)};
    gf_host_launch(dim3((unsigned)((n + gf::FFT_THREADS - 1) / gf::FFT_THREADS)), gf::FFT_THREADS,
                   NO_SMEM, 0, [&] { gf::fft_scale_spectra<T>(src.data(), got.data(), n, scale); });
    const long long d = first_diff(got, want);
    if (d >= 0)
        FAIL("fft_scale_spectra<%s> n %lld: differs at %lld", tname<T>(), n, d);
}

template <typename T> static void kernel_cases()
{
    std::mt19937_64 rng(sizeof(T) == 4 ? 11 : 12);
    const int BT = gf::mac_tile<T>::BT;
    /* C: a tile of all channels (tf > m P for C = 1), several frame tiles
     * (3, 8), and several channel tiles with a partial one (40). */
    for (int C : {1, 3, 8, 40})
        for (int lp : {2, 5})
            for (long long M : {1LL, 5LL, (long long)BT + 3})
                for (long long m : {1LL, M / 2 + 1, M}) {
                    check_planar<T>(C, lp, M, m);
                    check_emit<T>(C, lp, M, m, 0, rng);
                    check_emit<T>(C, lp, M, m, (1LL << lp) + 1, rng);
                    check_emit<T>(C, lp, M, m, m << lp, rng); /* every output skipped */
                }
    /* mac: K = 1 (no history), K < M, K > M, the walk's largest K, and K
     * over 1, 2 and 3 runs. */
    const long long Ks[] = {1, 2, 7, gf::MAC_WK, gf::MAC_KS, gf::MAC_KS + 1, 2 * gf::MAC_KS + 5};
    for (long long K : Ks)
        for (long long M : {1LL, 6LL, 2LL * BT + 1})
            for (long long m : {1LL, M})
                for (int pc = 0; pc < 2; pc++)
                    check_mac<T>(pc ? 2 : 1 + (int)(K % 3), 8, K, M, m, pc, 0, rng);
    /* A matrix (gf_config.outputs): 2 x 2, 1 x 2, 3 x 1, over 1 and 2 runs. */
    for (long long K : {1LL, 7LL, (long long)gf::MAC_KS + 1})
        for (long long M : {1LL, 6LL, 2LL * BT + 1}) {
            check_mac<T>(2, 8, K, M, M, 0, 2, rng);
            check_mac<T>(2, 8, K, M, 1, 0, 1, rng);
            check_mac<T>(1, 8, K, M, M, 0, 3, rng);
        }
    /* One filter for 2 and 3 channels over 2 and 3 runs, chunks of 1 and 3
     * blocks (one-block tiles, split: threads of one channel and bin, their
     * blocks sharing channels). */
    for (int C : {2, 3})
        for (long long K : {(long long)gf::MAC_KS + 1, 2LL * gf::MAC_KS + 5})
            for (long long m : {1LL, 3LL})
                check_mac<T>(C, 8, K, 6, m, 0, 0, rng);
    /* Bins past one thread block (P = 512: 513 bins, 3 blocks in x). */
    check_mac<T>(2, 512, 3, 4, 3, 0, 0, rng);
    check_mac<T>(1, 512, gf::MAC_KS + 2, 2, 2, 1, 0, rng);
    check_mac<T>(2, 512, 3, 4, 3, 0, 2, rng);
    for (long long S : {1LL, 2LL, 3LL})
        for (long long bins : {9LL, 300LL})
            check_reduce<T>(2, bins, 6, 4, S, rng);
    check_scale<T>(1000, rng);
}

/* ---- whole streams ---- */

/* Exact DFTs (long double), standing in for cuFFT's R2C and C2R. */
struct dft {
    long long N;
    std::vector<long double> cs, sn;
    explicit dft(long long n) : N(n), cs((size_t)n), sn((size_t)n)
    {
        const long double pi = 3.141592653589793238462643383279502884L;
        for (long long j = 0; j < n; j++) {
            cs[(size_t)j] = cosl(2 * pi * (long double)j / (long double)n);
            sn[(size_t)j] = sinl(2 * pi * (long double)j / (long double)n);
        }
    }
    /* X[f] = sum_t x[t] e^(-2 pi i f t / N), f = 0 .. N/2 */
    template <typename T, typename V> void r2c(const T *x, V *X) const
    {
        for (long long f = 0; f <= N / 2; f++) {
            long double re = 0, im = 0;
            for (long long t = 0; t < N; t++) {
                re += (long double)x[t] * cs[(size_t)(f * t % N)];
                im -= (long double)x[t] * sn[(size_t)(f * t % N)];
            }
            X[f].x = (decltype(X[f].x))re;
            X[f].y = (decltype(X[f].y))im;
        }
    }
    /* x[t] = sum over all N bins (Hermitian) of X[f] e^(2 pi i f t / N), unscaled. */
    template <typename V, typename T> void c2r(const V *X, T *x) const
    {
        for (long long t = 0; t < N; t++) {
            long double v = (long double)X[0].x + (long double)X[N / 2].x * ((t % 2) ? -1 : 1);
            for (long long f = 1; f < N / 2; f++)
                v += 2 * ((long double)X[f].x * cs[(size_t)(f * t % N)] -
                          (long double)X[f].y * sn[(size_t)(f * t % N)]);
            x[t] = (T)v;
        }
    }
};

/* A filter set up as fft_conv.cu does: partitions' double spectra, scaled
 * by 1/N and rounded to T by fft_scale_spectra. */
template <typename T>
static std::vector<typename cx<T>::V> filter_spectra(const std::vector<double> &h, int nh,
                                                     long long T_, long long P, long long K,
                                                     long long ss, const dft &d)
{
    typedef typename cx<T>::V V;
    const long long N = 2 * P;
    std::vector<V> H((size_t)(nh * K * ss));
    for (int s = 0; s < nh; s++) {
        std::vector<double2> spec((size_t)(K * ss), double2{0, 0});
        std::vector<double> win((size_t)N);
        for (long long k = 0; k < K; k++) {
            for (long long t = 0; t < N; t++)
                win[(size_t)t] = t < P && k * P + t < T_ ? h[(size_t)(s * T_ + k * P + t)] : 0.0;
            d.r2c(win.data(), &spec[(size_t)(k * ss)]);
        }
        V *dst = &H[(size_t)(s * K * ss)];
        gf_host_launch(dim3(flat_grid(K * ss)), gf::FFT_THREADS, NO_SMEM, 0, [&] {
            gf::fft_scale_spectra<T>(spec.data(), dst, K * ss, 1.0 / (double)N);
        });
    }
    return H;
}

struct stream_case {
    int C, per_channel;
    long long taps, P, M, frames, skip;
};

/* The device state of fft_conv.h, on the host. */
template <typename T> struct conv_state {
    typedef typename cx<T>::V V;
    long long P, N, K, M, W, R, bins, ss, S, head = 0;
    int C, nh, par = 0, lp = 0;
    std::vector<V> H, ring, spec, Y, part;
    std::vector<T> xp, win, tail[2];
};

template <typename T> static void conv_init(conv_state<T> &f, const stream_case &k)
{
    typedef typename cx<T>::V V;
    f.C = k.C;
    f.nh = k.per_channel ? k.C : 1;
    f.P = k.P;
    f.N = 2 * k.P;
    f.K = (k.taps + k.P - 1) / k.P;
    f.M = k.M;
    f.W = k.M + 1;
    f.R = f.K - 1 + f.M;
    f.bins = k.P + 1;
    f.ss = (f.bins + 7) & ~7LL;
    f.S = (f.K + gf::MAC_KS - 1) / gf::MAC_KS;
    while ((1LL << f.lp) < f.P)
        f.lp++;
    const size_t cw = (size_t)(f.C * f.W);
    f.ring.assign((size_t)(f.C * f.R * f.ss), V{0, 0});
    f.spec.assign(cw * f.ss, V{0, 0});
    f.Y.assign(cw * f.ss, V{0, 0});
    f.part.assign((size_t)(f.S * f.C * PW * f.ss), V{0, 0});
    f.xp.assign(cw * f.P, 0);
    f.win.assign(cw * f.N, 0);
    f.tail[0].assign((size_t)(f.C * f.P), 0);
    f.tail[1].assign((size_t)(f.C * f.P), 0);
}

/* conv_chunk's multiply-accumulate as fft_mac's tiles (with fft_reduce
 * where split). */
template <typename T> static void conv_mac(conv_state<T> &f, long long m, long long W)
{
    typedef typename cx<T>::V V;
    const int bt = m >= gf::mac_tile<T>::BT ? gf::mac_tile<T>::BT : m >= 4 ? 4 : 1;
    const int split = f.S > 1 && m < PW;
    const long long rows = (m + bt - 1) / bt * (split ? f.S : 1);
    const dim3 grid(gf::mac_grid_x(rows, f.C, f.bins));
    const unsigned bx = (unsigned)((f.bins + gf::FFT_THREADS - 1) / gf::FFT_THREADS);
    V *sums = split ? f.part.data() : f.Y.data();
    const bool multi = f.S > 1 && !split;
    typedef void (*mac_fn)(const V *, V *, const V *, V *, long long, long long, int, long long,
                           long long, long long, long long, long long, int, int, long long, int);
    const int BT = gf::mac_tile<T>::BT, KT = gf::mac_tile<T>::KT;
    const mac_fn mac = multi ? (bt == BT  ? gf::fft_mac<T, BT, KT, true>
                                : bt == 4 ? gf::fft_mac<T, 4, KT, true>
                                          : gf::fft_mac<T, 1, KT, true>)
                             : (bt == BT  ? gf::fft_mac<T, BT, KT, false>
                                : bt == 4 ? gf::fft_mac<T, 4, KT, false>
                                          : gf::fft_mac<T, 1, KT, false>);
    gf_host_launch(grid, gf::FFT_THREADS, NO_SMEM, 0, [&] {
        mac(f.spec.data(), f.ring.data(), f.H.data(), sums, m, W, f.C, f.K, f.R, f.head, f.bins,
            f.ss, f.nh > 1, split, PW, 0);
    });
    if (split)
        gf_host_launch(dim3(bx, (unsigned)std::min(m, 65535LL), (unsigned)f.C), gf::FFT_THREADS,
                       NO_SMEM, 0, [&] {
                           gf::fft_reduce<T>(f.part.data(), f.Y.data(), m, W, f.C, f.S, PW, f.bins,
                                             f.ss);
                       });
}

/* One chunk of m blocks (in: m P frames x C) as fft_conv_run runs it. */
template <typename T>
static void conv_chunk(conv_state<T> &f, const dft &d, const T *in, long long m, long long skip,
                       T *out)
{
    /* channels m + 1 windows apart, as fft_conv.cu lays out a chunk in
     * buffers of f.W (M + 1) windows a channel: shorter chunks pack closer */
    const long long P = f.P, W = m + 1;
    gf_host_launch(gf::fft_tile_grid(m * P, f.C), gf::FFT_THREADS, TILE_SMEM,
                   gf::fft_tile_smem<T>(), [&] {
                       gf::fft_planar<T>(in, m, f.C, f.lp, W, f.tail[f.par].data(), f.xp.data(),
                                         f.tail[f.par ^ 1].data());
                   });
    for (int c = 0; c < f.C; c++) /* window (c, b) = 2P samples at (c W + b) P */
        for (long long b = 0; b < m; b++)
            d.r2c(&f.xp[(size_t)((c * W + b) * P)], &f.spec[(size_t)((c * W + b) * f.ss)]);
    /* (fft_conv.cu walks only chunks of MAC_WALK_BLOCKS or more; the sums
     * are the tiles' either way, mac_check_walk, so streams walk every
     * chunk they can) */
    if (f.S == 1 && f.K <= gf::MAC_WK) {
        const long long L = gf::mac_walk_run(m, f.C, f.bins);
        gf_host_launch(
            dim3(gf::mac_grid_x((m + L - 1) / L, f.C, f.bins)), gf::FFT_THREADS, NO_SMEM, 0, [&] {
                gf::fft_mac_walk<T>(f.spec.data(), f.ring.data(), f.H.data(), f.Y.data(), m, W, f.C,
                                    (int)f.K, f.R, f.head, f.bins, f.ss, f.nh > 1, L);
            });
    } else
        conv_mac(f, m, W);
    for (int c = 0; c < f.C; c++)
        for (long long b = 0; b < m; b++)
            d.c2r(&f.Y[(size_t)((c * W + b) * f.ss)], &f.win[(size_t)((c * W + b) * f.N)]);
    if (m * P > skip)
        gf_host_launch(gf::fft_tile_grid(m * P - skip, f.C), gf::FFT_THREADS, TILE_SMEM,
                       gf::fft_tile_smem<T>(),
                       [&] { gf::fft_emit<T>(f.win.data(), m, f.C, f.lp, W, skip, out); });
    f.head = (f.head + m) % f.R;
    f.par ^= 1;
}

/* A whole stream in chunks of 1 .. M blocks against the direct causal
 * convolution (from frame skip on), within gpufilt.h's bound. */
template <typename T> static void check_stream(const stream_case &k)
{
    std::mt19937_64 rng(1000 + (unsigned)(k.taps * 7 + k.C));
    conv_state<T> f;
    conv_init(f, k);
    const dft d(f.N);
    const int nh = f.nh;
    std::vector<double> h((size_t)(nh * k.taps));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto &v : h)
        v = (double)(T)u(rng);
    f.H = filter_spectra<T>(h, nh, k.taps, k.P, f.K, f.ss, d);
    std::vector<T> x((size_t)(k.frames * k.C)), y((size_t)((k.frames - k.skip) * k.C));
    fill(x, rng);
    long long done = 0, nchunks = 0;
    while (done < k.frames) {
        const long long m =
            std::min(1 + (long long)(rng() % (unsigned long long)k.M), (k.frames - done) / k.P);
        const long long skip = done == 0 ? k.skip : 0;
        conv_chunk(f, d, &x[(size_t)(done * k.C)], m, skip,
                   &y[(size_t)((done + skip - k.skip) * k.C)]);
        done += m * k.P;
        nchunks++;
    }
    const double eps = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
    long long worst_i = -1;
    double worst = 0;
    for (int c = 0; c < k.C; c++) {
        const double *hc = &h[(size_t)((nh > 1 ? c : 0) * k.taps)];
        double sum_h = 0, max_x = 0;
        for (long long j = 0; j < k.taps; j++)
            sum_h += fabs(hc[j]);
        for (long long i = 0; i < k.frames; i++)
            max_x = std::max(max_x, fabs((double)x[(size_t)(i * k.C + c)]));
        const double bound = eps * (2 * (f.lp + 1) + (double)f.K + 4) * sum_h * max_x;
        for (long long i = k.skip; i < k.frames; i++) {
            long double e = 0;
            for (long long j = 0; j < k.taps && j <= i; j++)
                e += (long double)hc[j] * (long double)x[(size_t)((i - j) * k.C + c)];
            const double err = fabs((double)((long double)y[(size_t)((i - k.skip) * k.C + c)] - e));
            if (!(err <= bound) && !(err / bound <= worst)) {
                worst = err / bound;
                worst_i = i;
            }
        }
    }
    if (worst_i >= 0)
        FAIL("stream<%s> C %d taps %lld P %lld M %lld per-channel %d skip %lld (%lld chunks): "
             "frame %lld off by %.3g x the bound",
             tname<T>(), k.C, k.taps, k.P, k.M, k.per_channel, k.skip, nchunks, worst_i, worst);
}

template <typename T> static void stream_cases()
{
    /* C, per-channel, taps, P, M, frames, skip: K = 1, 2, several, 8 (the
     * walk's most), 38 and 263 (3 runs); streams of more blocks than the
     * ring holds. */
    const stream_case cases[] = {
        {1, 0, 1, 4, 3, 64, 0},      {2, 0, 5, 4, 3, 200, 2},     {3, 1, 37, 16, 4, 1200, 7},
        {1, 0, 300, 8, 20, 2400, 0}, {2, 1, 2100, 8, 5, 4800, 3}, {3, 0, 2100, 8, 5, 4800, 1},
        {2, 1, 64, 8, 5, 1600, 3},
    };
    for (const stream_case &k : cases)
        check_stream<T>(k);
}

/* The fused transforms' reads and writes: 1, 3 and 8 channels in, a matrix's
 * 2 in and 4 out; chunks of 1 .. M blocks; outputs from frame 0, from
 * inside a block and none. */
static void dx_cases()
{
    std::mt19937_64 rng(13);
    for (int C : {1, 3, 8})
        for (int lp : {1, 2, 5})
            for (long long M : {1LL, 5LL})
                for (long long m : {1LL, M})
                    for (long long skip : {0LL, (1LL << lp) + 1, m << lp}) {
                        check_dx(C, C, lp, M, m, skip, rng);
                        check_dx(2, 4, lp, M, m, skip, rng);
                    }
}

int main()
{
    dx_cases();
    kernel_cases<float>();
    kernel_cases<double>();
    stream_cases<float>();
    stream_cases<double>();
    if (g_bad) {
        fprintf(stderr, "test_fft_kernel: FAILED (%d checks)\n", g_bad);
        return 1;
    }
    printf(
        "test_fft_kernel: fft_planar, fft_mac (3 tiles, 1-3 runs, the walk), fft_reduce, fft_emit, "
        "fft_scale_spectra exact; the fused transforms' reads and writes; whole streams "
        "within the error bound\n");
    return 0;
}
