/*
 * CUDA kernels of the FFT method (CUDA C++; included by fft_conv.cu, their
 * launch site). Uniformly partitioned overlap-save (gpufilt.h): blocks of P
 * frames, windows of N = 2P samples, spectra of P + 1 bins.
 *
 * Layouts (T = float or double, V = float2 or double2), channel-major with
 * W = M + 1 windows per channel (M: the chunk's blocks, so a short chunk
 * packs its channels close), so that the windows are a run with a
 * constant stride the transforms read in place:
 *   in      the chunk, interleaved: frames x C samples
 *   xp      planar: channel c at c W P: [its previous block | the chunk's],
 *           so window (c, b) = the 2P samples at (c W + b) P
 *   spec    spectrum of window (c, b) at (c W + b) sstride
 *   ring    spectra of earlier blocks: (c R + slot) sstride, block j at slot
 *           (head + j - j0) mod R, j0 the chunk's first
 *   H       the filter's partitions, (h K + k) sstride, scaled by 1/N
 *   part    split-K partial sums of chunks of few blocks, (s C pw + c pw + b)
 *           sstride, pw = FFT_PART_BLOCKS
 *   Y       output spectrum (c, b) at (c W + b) sstride
 *   win     inverse transform (c, b) at (c W + b) N
 *
 * Summation order, the same whatever the chunk or launch geometry: the
 * partitions k = 0 .. K-1 are cut into S = ceil(K / MAC_KS) runs of MAC_KS;
 * each run is summed in k order with explicit fused multiply-adds, and the
 * runs' sums are added in s order. S depends only on K.
 */
#ifndef GF_FFT_KERNELS_CUH
#define GF_FFT_KERNELS_CUH

#include <cuda_runtime.h>

namespace gf
{

template <typename T> struct cplx;
template <> struct cplx<float> {
    typedef float2 type;
};
template <> struct cplx<double> {
    typedef double2 type;
};

__device__ __forceinline__ float fma_rn(float a, float b, float c)
{
    return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fma_rn(double a, double b, double c)
{
    return __fma_rn(a, b, c);
}

enum {
    FFT_THREADS = 256,
    MAC_KS = 128,        /* partitions per split-K run */
    FFT_PART_BLOCKS = 16 /* chunks of fewer blocks split the runs over threads */
};

/* fft_mac's tile: BT blocks per thread, KT partitions loaded per step.
 * Measured on an H100 (bench_long --partitions, 4095 to 2^20 taps): 16 x 8
 * beat 8 x 8 by 3-5%, and 32 x 8, 8 x 16, 16 x 16 and 4 x 32 were slower
 * (registers, occupancy). f64 keeps 8 x 8: half the registers. */
template <typename T> struct mac_tile {
    enum { BT = 16, KT = 8 };
};
template <> struct mac_tile<double> {
    enum { BT = 8, KT = 8 };
};

/* fft_planar and fft_emit turn interleaved frames into a row per channel
 * and back: a transpose, one tile per block through shared memory, so
 * that both sides are read and written in runs (a thread per frame
 * looping over the channels wrote 128 channels at 4-byte steps of 512
 * bytes: a tenth of the device's bandwidth). A tile is tc = min(C, 32)
 * channels by tf = FFT_TILE / tc frames: a frame's tc samples are
 * contiguous on the interleaved side (all of its channels where C <= 32),
 * a channel's tf frames on the planar side. Shared memory holds a column
 * of tf + 1 per channel (the + 1: no bank conflicts). One channel needs
 * no transpose: its blocks copy their tiles straight across. */
enum { FFT_TILE = 1024 };

/* The launch of a transpose over `frames` frames of C channels: its grid
 * (x: frame tiles, y: channel tiles) and dynamic shared memory. */
static inline dim3 fft_tile_grid(long long frames, int C)
{
    const int tc = C < 32 ? C : 32, tf = FFT_TILE / tc;
    return dim3((unsigned)((frames + tf - 1) / tf), (unsigned)((C + tc - 1) / tc), 1);
}
template <typename T> static inline size_t fft_tile_smem()
{
    return (FFT_TILE + 32) * sizeof(T);
}

/* e / d and e % d for e = e0, e0 + step, ...: two divisions, then adds. */
struct tile_walk {
    int q, r, dq, dr, d;
    __device__ tile_walk(int e0, int d_, int step)
        : q(e0 / d_), r(e0 % d_), dq(step / d_), dr(step % d_), d(d_)
    {
    }
    __device__ void next()
    {
        q += dq;
        r += dr;
        if (r >= d) {
            r -= d;
            q++;
        }
    }
};

/* The chunk's m blocks, deinterleaved into xp behind each channel's
 * previous block (from tail_in); tail_out receives each channel's last
 * block (different buffers: no thread reads what another writes). Grid:
 * fft_tile_grid(m P, C) (lp = log2 P); every block also copies a share of
 * tail_in. */
template <typename T>
__global__ void __launch_bounds__(FFT_THREADS)
    fft_planar(const T *__restrict__ in, long long m, int C, int lp, long long W,
               const T *__restrict__ tail_in, T *__restrict__ xp, T *__restrict__ tail_out)
{
    extern __shared__ __align__(16) unsigned char gf_fft_smem[];
    T *tile = reinterpret_cast<T *>(gf_fft_smem);
    const long long P = 1LL << lp, WP = W << lp, F = m << lp, last = F - P;
    const long long stride = (long long)gridDim.x * gridDim.y * blockDim.x;
    for (long long i = ((long long)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
         i < ((long long)C << lp); i += stride)
        xp[(i >> lp) * WP + (i & (P - 1))] = tail_in[i];
    if (C == 1) { /* both sides contiguous: the block's tile, copied */
        for (long long f = (long long)blockIdx.x * FFT_TILE + threadIdx.x;
             f < F && f < (long long)(blockIdx.x + 1) * FFT_TILE; f += blockDim.x) {
            xp[P + f] = in[f];
            if (f >= last)
                tail_out[f - last] = in[f];
        }
        return;
    }
    const int tc = C < 32 ? C : 32, tf = FFT_TILE / tc, c0 = (int)blockIdx.y * tc;
    const long long f0 = (long long)blockIdx.x * tf;
    tile_walk a((int)threadIdx.x, tc, (int)blockDim.x); /* q: frame, r: channel */
    for (int e = (int)threadIdx.x; e < tf * tc; e += (int)blockDim.x, a.next())
        if (f0 + a.q < F && c0 + a.r < C)
            tile[a.r * (tf + 1) + a.q] = in[(f0 + a.q) * C + c0 + a.r];
    __syncthreads();
    tile_walk b((int)threadIdx.x, tf, (int)blockDim.x); /* q: channel, r: frame */
    for (int e = (int)threadIdx.x; e < tf * tc; e += (int)blockDim.x, b.next()) {
        const long long f = f0 + b.r;
        const int c = c0 + b.q;
        if (f < F && c < C) {
            const T v = tile[b.q * (tf + 1) + b.r];
            xp[c * WP + P + f] = v;
            if (f >= last)
                tail_out[c * P + f - last] = v;
        }
    }
}

/* acc += h x, as four rounded fused multiply-adds. */
template <typename V> __device__ __forceinline__ void cmac(V &acc, const V h, const V x)
{
    acc.x = fma_rn(h.x, x.x, acc.x);
    acc.x = fma_rn(-h.y, x.y, acc.x);
    acc.y = fma_rn(h.x, x.y, acc.y);
    acc.y = fma_rn(h.y, x.x, acc.y);
}

/* Where fft_mac reads and writes for one bin f of one channel c. */
template <typename V> struct mac_view {
    const V *sc; /* this chunk's spectra: block d at d sstride */
    V *rc;       /* the ring: slot at slot sstride */
    const V *hc; /* the filter: partition k at k sstride */
    long long m, K, R, head, sstride;
};

/* mac_run for one block b (BT = 1; chunks of few blocks, live audio's
 * one): no X is reused, so the loads only need to be many in flight. The
 * partitions k <= b read this chunk's spectra; the rest the ring, from
 * slot (head + b - k) mod R down, in runs without a wrap, KT at a time.
 * (R >= K: a partition's X is never before the ring's oldest.) The same
 * fused multiply-adds in the same order as mac_run's tiles. Measured at
 * 128 channels x 2^20 taps, one block of 128 (H200): 0.33 ms a block,
 * where the tiles' code (64-bit slot arithmetic per step, 91 registers)
 * took 0.67 ms. */
template <typename V, int KT>
__device__ __forceinline__ V mac_one(const mac_view<V> &v, long long b, long long k_lo,
                                     long long k_hi)
{
    V acc = V{0, 0};
    const int ss = (int)v.sstride;
    const V *hp = v.hc + (size_t)k_lo * v.sstride;
    long long k = k_lo;
    for (; k < k_hi && k <= b; k++, hp += ss)
        cmac(acc, *hp, v.sc[(size_t)(b - k) * v.sstride]);
    if (k == k_hi)
        return acc;
    int slot = (int)(((v.head + b - k) % v.R + v.R) % v.R);
    const V *xp = v.rc + (size_t)slot * v.sstride;
    while (k < k_hi) {
        /* slot down to 0 without a wrap */
        long long n = k_hi - k < (long long)slot + 1 ? k_hi - k : (long long)slot + 1;
        k += n;
        slot -= (int)n;
        for (; n >= KT; n -= KT, hp += KT * ss, xp -= KT * ss) {
            V h[KT], x[KT];
#pragma unroll
            for (int i = 0; i < KT; i++) {
                h[i] = hp[i * ss];
                x[i] = xp[-i * ss];
            }
#pragma unroll
            for (int i = 0; i < KT; i++)
                cmac(acc, h[i], x[i]);
        }
        for (; n > 0; n--, hp += ss, xp -= ss)
            cmac(acc, *hp, *xp);
        if (slot < 0) {
            slot = (int)v.R - 1;
            xp = v.rc + (size_t)slot * v.sstride;
        }
    }
    return acc;
}

/* acc[i] = sum over partitions k in [k_lo, k_hi), in k order, of H_k X_(b0+i-k):
 * H and X loaded once per step of KT partitions and reused from registers
 * (one block, BT = 1: the overload below). */
template <typename V, int KT, int BT>
__device__ __forceinline__ void mac_run(const mac_view<V> &v, long long b0, long long k_lo,
                                        long long k_hi, V (&acc)[BT])
{
#pragma unroll
    for (int i = 0; i < BT; i++)
        acc[i] = V{0, 0};
    for (long long k0 = k_lo; k0 < k_hi; k0 += KT) {
        /* X_{j0+d} for d = b0 - (k0 + KT - 1) .. b0 + BT - 1 - k0 */
        V x[BT + KT - 1], h[KT];
#pragma unroll
        for (int i = 0; i < KT; i++)
            h[i] = k0 + i < k_hi ? v.hc[(size_t)(k0 + i) * v.sstride] : V{0, 0};
        long long d = b0 - (k0 + KT - 1);
        long long slot = ((v.head + d) % v.R + v.R) % v.R;
#pragma unroll
        for (int i = 0; i < BT + KT - 1; i++, d++) {
            V xv = V{0, 0};
            if (d >= 0 && d < v.m)
                xv = v.sc[(size_t)d * v.sstride];
            else if (d < 0 && d > -v.R)
                xv = v.rc[(size_t)slot * v.sstride];
            x[i] = xv;
            slot = slot + 1 == v.R ? 0 : slot + 1;
        }
#pragma unroll
        for (int bi = 0; bi < BT; bi++)
#pragma unroll
            for (int ki = 0; ki < KT; ki++)
                if (k0 + ki < k_hi)
                    cmac(acc[bi], h[ki], x[bi + KT - 1 - ki]);
    }
}

template <typename V, int KT>
__device__ __forceinline__ void mac_run(const mac_view<V> &v, long long b0, long long k_lo,
                                        long long k_hi, V (&acc)[1])
{
    acc[0] = mac_one<V, KT>(v, b0, k_lo, k_hi);
}

/*
 * The delay-line multiply-accumulate, for MAC_BT blocks of one bin of one
 * output channel per thread. Summation order, whatever the tile or the
 * mode: the partitions in runs of MAC_KS, each run summed from zero in k
 * order, the runs' sums added in run order; with a matrix (inputs > 0:
 * output c is the sum over `inputs` inputs of filter i*C + c, C the
 * outputs) the runs of input 0, then input 1's, and so on. Two modes, the
 * same arithmetic:
 *   split = 0: a thread sums every run of its tile and writes Y;
 *   split = 1 (chunks of few blocks, e.g. live audio: more threads): a
 *     thread sums one run and writes it to part (pw blocks per channel),
 *     and fft_reduce adds the runs (with one run, part is Y).
 * The threads of output 0 that sum an input's run 0 then store that
 * input's spectra later chunks will need (the last K - 1 blocks) into the
 * ring, in slots this chunk does not read. MULTI: a thread may sum more
 * than one run (split = 0 and more than one run); without it the kernel
 * keeps one set of accumulators. Grid: x striding over the (row, output
 * channel, bin) triples, bins fastest, a row a block tile (a (run, tile)
 * pair when split): mac_grid_x. (A grid of (channel, bin) pairs by rows
 * left idle lanes in the last block of every row: 513 bins in three
 * blocks of 256, the third with one live thread, a third of the blocks.)
 */
template <typename T, int MAC_BT, int MAC_KT, bool MULTI>
__global__ void __launch_bounds__(FFT_THREADS)
    fft_mac(const typename cplx<T>::type *__restrict__ spec, typename cplx<T>::type *ring,
            const typename cplx<T>::type *__restrict__ H, typename cplx<T>::type *__restrict__ out,
            long long m, long long W, int C, long long K, long long R, long long head,
            long long bins, long long sstride, int taps_per_channel, int split, long long pw,
            int inputs)
{
    typedef typename cplx<T>::type V;
    const long long tiles = (m + MAC_BT - 1) / MAC_BT, S = (K + MAC_KS - 1) / MAC_KS;
    const long long runs = S * (inputs > 0 ? inputs : 1);
    const long long items = tiles * (split ? runs : 1) * C * bins;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < items;
         g += (long long)gridDim.x * blockDim.x) {
        const long long f = g % bins, cy = g / bins, yy = cy / C;
        const int c = (int)(cy - yy * C);
        /* run r: its input's spectra and ring, and the filter into c */
        auto view = [&](long long r) {
            const int in = inputs > 0 ? (int)(r / S) : c;
            const size_t h = inputs > 0 ? (size_t)in * C + c : taps_per_channel ? (size_t)c : 0;
            return mac_view<V>{spec + (size_t)in * W * sstride + f,
                               ring + (size_t)in * R * sstride + f,
                               H + h * K * sstride + f,
                               m,
                               K,
                               R,
                               head,
                               sstride};
        };
        const long long r0 = split ? yy / tiles : 0, r1 = split ? r0 + 1 : runs;
        const long long b0 = (yy % tiles) * MAC_BT;
        V total[MAC_BT];
        {
            const long long s = r0 % S;
            mac_run<V, MAC_KT>(view(r0), b0, s * MAC_KS, min(s * MAC_KS + MAC_KS, K), total);
        }
        if (MULTI)
            for (long long r = r0 + 1; r < r1; r++) {
                const long long s = r % S;
                V acc[MAC_BT];
                mac_run<V, MAC_KT>(view(r), b0, s * MAC_KS, min(s * MAC_KS + MAC_KS, K), acc);
#pragma unroll
                for (int bi = 0; bi < MAC_BT; bi++)
                    total[bi] = V{total[bi].x + acc[bi].x, total[bi].y + acc[bi].y};
            }
        V *oc = split && runs > 1 ? out + ((size_t)r0 * C * pw + (size_t)c * pw) * sstride + f
                                  : out + (size_t)c * W * sstride + f;
#pragma unroll
        for (int bi = 0; bi < MAC_BT; bi++) {
            const long long b = b0 + bi;
            if (b >= m)
                break;
            oc[(size_t)b * sstride] = total[bi];
        }
        /* the ring: each input's spectra once, by the threads of its run 0
         * (of output 0 with a matrix) */
        for (long long r = r0; r < r1; r++) {
            if (r % S != 0 || (inputs > 0 && c != 0))
                continue;
            const mac_view<V> v = view(r);
            for (int bi = 0; bi < MAC_BT; bi++) {
                const long long b = b0 + bi;
                if (b >= m)
                    break;
                if (b >= m - (K - 1))
                    v.rc[(size_t)((head + b) % R) * sstride] = v.sc[(size_t)b * sstride];
            }
        }
    }
}

/* The x of fft_mac's grid for `rows` rows (block tiles, or (run, tile)
 * pairs when split) of C output channels' bins: a thread each, in at most
 * 2^20 blocks (the rest by striding). */
static inline unsigned mac_grid_x(long long rows, long long channels, long long bins)
{
    const long long n = (rows * channels * bins + FFT_THREADS - 1) / FFT_THREADS;
    return (unsigned)(n < (1LL << 20) ? n : 1LL << 20);
}

/* fft_mac_walk's bounds: MAC_WK, the most partitions it holds; and
 * MAC_WALK_BLOCKS, the least chunk, in blocks, that takes it. Measured on
 * H200s (bench_long --device-only, 2^27 f32 samples, K = 8, 2^21-frame
 * chunks; the walk in two runs, the tiles on the same grid in the run
 * before): 4095 taps (4096 blocks a chunk) 17.2 against 18.5 us a chunk,
 * 65536 taps (256 blocks) even (4.34-4.38 against 4.43 ms in all); but
 * 2^20 taps (16 blocks) 8.02 against 7.69 ms and 2^22 (4 blocks) 10.05
 * against 9.16, where a tile loads its chunk's few spectra at once and a
 * walk's run is as short as the chunk. */
enum { MAC_WK = 8, MAC_WALK_BLOCKS = 64 };

/*
 * fft_mac where the filter's partitions fit in registers (K <= MAC_WK, one
 * run, no matrix; chunks of MAC_WALK_BLOCKS or more): a thread per (run of
 * L blocks, channel, bin), walking its run's blocks in order with the last
 * K spectra in registers, so that each is loaded once per run (and K - 1
 * before it) and the filter once per thread: 80 registers, where fft_mac's
 * tile of 16 blocks x 8 partitions, holding 23 spectra and 16 sums at
 * once, takes 128 (two thread blocks an SM). The same sums, bit for bit:
 * each from zero, k ascending, and the ring stored as fft_mac stores it.
 * Grid: mac_grid_x over ceil(m / L) runs.
 */
template <typename T>
__global__ void __launch_bounds__(FFT_THREADS)
    fft_mac_walk(const typename cplx<T>::type *__restrict__ spec, typename cplx<T>::type *ring,
                 const typename cplx<T>::type *__restrict__ H,
                 typename cplx<T>::type *__restrict__ out, long long m, long long W, int C, int K,
                 long long R, long long head, long long bins, long long sstride,
                 int taps_per_channel, long long L)
{
    typedef typename cplx<T>::type V;
    const long long items = (m + L - 1) / L * C * bins;
    const size_t ss = (size_t)sstride;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < items;
         g += (long long)gridDim.x * blockDim.x) {
        const long long f = g % bins, cy = g / bins, run = cy / C;
        const int c = (int)(cy - run * C);
        const V *sc = spec + (size_t)c * W * ss + f;
        V *rc = ring + (size_t)c * R * ss + f, *oc = out + (size_t)c * W * ss + f;
        const V *hc = H + (taps_per_channel ? (size_t)c : 0) * K * ss + f;
        V h[MAC_WK], x[MAC_WK]; /* x[k]: the spectrum of block b - k */
#pragma unroll
        for (int k = 0; k < MAC_WK; k++) {
            h[k] = k < K ? hc[k * ss] : V{0, 0};
            x[k] = V{0, 0};
        }
        const long long b0 = run * L, b1 = b0 + L < m ? b0 + L : m;
        /* blocks b0 - 1 .. b0 - (K - 1): this chunk's, else the ring's */
#pragma unroll
        for (int k = 1; k < MAC_WK; k++)
            if (k < K) {
                const long long d = b0 - k;
                x[k] = d >= 0 ? sc[(size_t)d * ss] : rc[(size_t)(((head + d) % R + R) % R) * ss];
            }
        const V *sp = sc + (size_t)b0 * ss;
        V *op = oc + (size_t)b0 * ss;
#pragma unroll 4
        for (long long b = b0; b < b1; b++, sp += ss, op += ss) {
            x[0] = *sp;
            V acc = V{0, 0};
#pragma unroll
            for (int k = 0; k < MAC_WK; k++)
                if (k < K)
                    cmac(acc, h[k], x[k]);
            *op = acc;
            if (b >= m - (K - 1)) /* what later chunks read, into the ring */
                rc[(size_t)((head + b) % R) * ss] = x[0];
#pragma unroll
            for (int k = MAC_WK - 1; k > 0; k--)
                x[k] = x[k - 1];
        }
    }
}

/* fft_mac_walk's run: long enough that the K - 1 spectra a run loads
 * before its first block are a small part of its loads, short enough that
 * the runs give the GPU about 2^18 threads (what 128 SMs hold at full
 * occupancy). */
static inline long long mac_walk_run(long long m, long long channels, long long bins)
{
    long long L = 8;
    while (L < 64 && (m + 2 * L - 1) / (2 * L) * channels * bins >= (1LL << 18))
        L *= 2;
    return L;
}

/* Y = the runs' partial sums (pw blocks per channel in part) added in run
 * order (S runs: a matrix's inputs' runs in turn). Grid: x over bins, y
 * striding over blocks, z over output channels. */
template <typename T>
__global__ void fft_reduce(const typename cplx<T>::type *__restrict__ part,
                           typename cplx<T>::type *__restrict__ Y, long long m, long long W, int C,
                           long long S, long long pw, long long bins, long long sstride)
{
    typedef typename cplx<T>::type V;
    const long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = (int)blockIdx.z;
    if (f >= bins)
        return;
    for (long long b = blockIdx.y; b < m; b += gridDim.y) {
        const size_t at = ((size_t)c * pw + (size_t)b) * sstride + f;
        V acc = part[at];
        for (long long s = 1; s < S; s++) {
            const V p = part[(size_t)s * C * pw * sstride + at];
            acc.x = acc.x + p.x;
            acc.y = acc.y + p.y;
        }
        Y[((size_t)c * W + (size_t)b) * sstride + f] = acc;
    }
}

/* The second half of each inverse transform, interleaved into out from
 * chunk frame `skip` on. Grid: fft_tile_grid(m P - skip, C) (lp = log2 P). */
template <typename T>
__global__ void __launch_bounds__(FFT_THREADS)
    fft_emit(const T *__restrict__ win, long long m, int C, int lp, long long W, long long skip,
             T *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char gf_fft_smem[];
    T *tile = reinterpret_cast<T *>(gf_fft_smem);
    const long long P = 1LL << lp, N = (m << lp) - skip;
    if (C == 1) { /* both sides contiguous: the block's tile, copied */
        for (long long i = (long long)blockIdx.x * FFT_TILE + threadIdx.x;
             i < N && i < (long long)(blockIdx.x + 1) * FFT_TILE; i += blockDim.x) {
            const long long n = skip + i;
            out[i] = win[((n >> lp) << (lp + 1)) + P + (n & (P - 1))];
        }
        return;
    }
    const int tc = C < 32 ? C : 32, tf = FFT_TILE / tc, c0 = (int)blockIdx.y * tc;
    const long long i0 = (long long)blockIdx.x * tf;
    tile_walk a((int)threadIdx.x, tf, (int)blockDim.x); /* q: channel, r: frame */
    for (int e = (int)threadIdx.x; e < tf * tc; e += (int)blockDim.x, a.next()) {
        const long long n = skip + i0 + a.r;
        const int c = c0 + a.q;
        if (i0 + a.r < N && c < C)
            tile[a.q * (tf + 1) + a.r] = win[((c * W + (n >> lp)) << (lp + 1)) + P + (n & (P - 1))];
    }
    __syncthreads();
    tile_walk b((int)threadIdx.x, tc, (int)blockDim.x); /* q: frame, r: channel */
    for (int e = (int)threadIdx.x; e < tf * tc; e += (int)blockDim.x, b.next())
        if (i0 + b.q < N && c0 + b.r < C)
            out[(i0 + b.q) * C + c0 + b.r] = tile[b.r * (tf + 1) + b.q];
}

/* Priming (fft_conv_prime): the spectra the delay line keeps of a chunk
 * that is not filtered, where fft_mac would keep them: the last K - 1 of
 * its m blocks at ring slot (head + b) mod R. Grid: x over bins, y striding
 * over those blocks, z over channels. */
template <typename T>
__global__ void fft_ring_store(const typename cplx<T>::type *__restrict__ spec,
                               typename cplx<T>::type *ring, long long m, long long W, long long K,
                               long long R, long long head, long long bins, long long sstride)
{
    const long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = (int)blockIdx.z;
    if (f >= bins)
        return;
    const long long first = m - (K - 1) > 0 ? m - (K - 1) : 0;
    for (long long b = first + blockIdx.y; b < m; b += gridDim.y)
        ring[((size_t)c * R + (size_t)((head + b) % R)) * sstride + f] =
            spec[((size_t)c * W + (size_t)b) * sstride + f];
}

/* H_k = the filter's spectra from double-precision transforms, scaled and
 * rounded to T. Grid over the n values. */
template <typename T>
__global__ void fft_scale_spectra(const double2 *__restrict__ src, typename cplx<T>::type *dst,
                                  long long n, double scale)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = typename cplx<T>::type{(T)(src[i].x * scale), (T)(src[i].y * scale)};
}

} // namespace gf

#endif /* GF_FFT_KERNELS_CUH */
