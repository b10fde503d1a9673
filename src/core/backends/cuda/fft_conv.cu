/* The CUDA backend's FFT method (fft_conv.h). */
#include "fft_conv.h"

#include "cuda_check.h"
#include "fft_dx.h"
#include "fft_kernels.cuh"

#include <cufft.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace gf
{

/* The letters of fft_conv.h and fft_kernels.cuh are given beside each field. */
struct fft_conv {
    gf_precision prec;
    size_t ss;           /* bytes per real */
    int C, nh;           /* input channels; filters (1, C per channel, C x O a matrix) */
    int O;               /* output channels: C, or a matrix's outputs */
    int inputs;          /* a matrix: C, the inputs summed into each output; else 0 */
    size_t T, P;         /* taps; partition (frames per block) */
    size_t fft_size;     /* N = 2P: the transform's length */
    size_t partitions;   /* K = ceil(T / P): the filter's partitions */
    size_t chunk_blocks; /* M = chunk frames / P: most blocks in one chunk */
    size_t windows;      /* M + 1: the most windows per channel the chunk buffers hold */
    size_t ring_slots;   /* R = K - 1 + M: spectra the delay line holds per channel */
    size_t bins;         /* P + 1: bins of one spectrum */
    size_t sstride;      /* bins rounded up to 8: one spectrum's stride */
    size_t k_runs;       /* S = ceil(K / MAC_KS): split-K runs of the multiply-accumulate */
    size_t runs;         /* runs an output sums: S, or a matrix's C S */
    size_t group;        /* transforms per cuFFT call: from P alone, never from the chunk */
    size_t few;          /* max(C, O) W where less than group (live audio's chunks), else 0 */
    size_t slots;        /* windows the buffers hold: max(C, O) W rounded up to whole groups */
    /* planar: the chunk's blocks per channel behind its previous one (xp
     * in fft_kernels.cuh); win, spec, Y: windows, their spectra, output
     * spectra; part: split-K sums; ring: the delay line; H: the filter's
     * spectra; tail: each channel's last block, twice (read one, write the
     * other). */
    void *planar, *win, *spec, *Y, *part, *ring, *H, *tail[2];
    int tail_cur; /* tail[tail_cur] holds each channel's last block */
    size_t head;  /* ring slot of the next block */
    cufftHandle r2c, c2r;
    int have_r2c, have_c2r;
    /* plans of `few` transforms, kept only where they compute every
     * transform as the group's plans do (check_few) */
    cufftHandle r2c_few, c2r_few;
    int have_r2c_few, have_c2r_few;
    void *work;
    int dx; /* the fused transforms (fft_dx.h) instead of planar, cuFFT and emit */
};

void fft_conv_destroy(fft_conv *f)
{
    if (!f)
        return;
    if (f->have_r2c)
        cufftDestroy(f->r2c);
    if (f->have_c2r)
        cufftDestroy(f->c2r);
    if (f->have_r2c_few)
        cufftDestroy(f->r2c_few);
    if (f->have_c2r_few)
        cufftDestroy(f->c2r_few);
    void *bufs[] = {f->planar, f->win, f->spec,    f->Y,       f->part,
                    f->ring,   f->H,   f->tail[0], f->tail[1], f->work};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    cudaGetLastError(); /* teardown reports nothing */
    free(f);
}

/* A forward (R2C) and an inverse (C2R) plan of `batch` transforms, without
 * work areas; *work receives the larger one's size if larger. The forward
 * plan reads overlapping windows in place (distance P). */
static gf_status make_pair(fft_conv *f, int batch, cufftHandle *r2c, int *have_r2c,
                           cufftHandle *c2r, int *have_c2r, size_t *work, char *err, size_t n)
{
    int N = (int)f->fft_size, inembed = (int)f->fft_size, onembed = (int)f->sstride;
    const int f32 = f->prec == GF_PRECISION_F32;
    size_t w1 = 0, w2 = 0;
    GF_TRY(err, n, cufftCreate(r2c));
    *have_r2c = 1;
    GF_TRY(err, n, cufftCreate(c2r));
    *have_c2r = 1;
    GF_TRY(err, n, cufftSetAutoAllocation(*r2c, 0));
    GF_TRY(err, n, cufftSetAutoAllocation(*c2r, 0));
    GF_TRY(err, n,
           cufftMakePlanMany(*r2c, 1, &N, &inembed, 1, (int)f->P, &onembed, 1, (int)f->sstride,
                             f32 ? CUFFT_R2C : CUFFT_D2Z, batch, &w1));
    GF_TRY(err, n,
           cufftMakePlanMany(*c2r, 1, &N, &onembed, 1, (int)f->sstride, &inembed, 1,
                             (int)f->fft_size, f32 ? CUFFT_C2R : CUFFT_Z2D, batch, &w2));
    *work = w1 > *work ? w1 : *work;
    *work = w2 > *work ? w2 : *work;
    return GF_OK;
}

/* The batched plans; *work receives the largest work area. Every transform
 * goes through a plan of f->group transforms, whatever the chunk: cuFFT
 * may compute a transform differently in plans of different batch sizes,
 * and output must not depend on the chunk. Where every chunk has fewer
 * (f->few), plans of that many too, kept if check_few finds them the same. */
static gf_status make_plans(fft_conv *f, size_t *work, char *err, size_t n)
{
    *work = 0;
    GF_TRY(err, n,
           make_pair(f, (int)f->group, &f->r2c, &f->have_r2c, &f->c2r, &f->have_c2r, work, err, n));
    if (f->few)
        GF_TRY(err, n,
               make_pair(f, (int)f->few, &f->r2c_few, &f->have_r2c_few, &f->c2r_few,
                         &f->have_c2r_few, work, err, n));
    return GF_OK;
}

/* One cuFFT call of plan: forward (w: reals, sp: spectra) or back. */
static gf_status exec_plan(const fft_conv *f, cufftHandle plan, int forward, void *w, void *sp,
                           char *err, size_t n)
{
    const int f32 = f->prec == GF_PRECISION_F32;
    if (forward && f32)
        GF_TRY(err, n, cufftExecR2C(plan, (cufftReal *)w, (cufftComplex *)sp));
    else if (forward)
        GF_TRY(err, n, cufftExecD2Z(plan, (cufftDoubleReal *)w, (cufftDoubleComplex *)sp));
    else if (f32)
        GF_TRY(err, n, cufftExecC2R(plan, (cufftComplex *)sp, (cufftReal *)w));
    else
        GF_TRY(err, n, cufftExecZ2D(plan, (cufftDoubleComplex *)sp, (cufftDoubleReal *)w));
    return GF_OK;
}

/* Whether `few` transforms of pseudo-random windows come out of the few
 * plans with the same bits as out of the group's, forward and back (*same);
 * h: host room for the windows, both sets of spectra and of outputs. */
static gf_status few_same(fft_conv *f, unsigned char *h, int *same, char *err, size_t n)
{
    const size_t cb = 2 * f->ss, reals = (f->few + 1) * f->P, nspec = f->few * f->sstride;
    const size_t nwin = f->few * f->fft_size;
    unsigned char *s1 = h + reals * f->ss, *s2 = s1 + nspec * cb, *w1 = s2 + nspec * cb,
                  *w2 = w1 + nwin * f->ss;
    unsigned x = 12345;
    for (size_t i = 0; i < reals; i++) {
        x = x * 1664525u + 1013904223u;
        const double v = (double)(x >> 8) / 16777216.0 - 0.5;
        if (f->prec == GF_PRECISION_F32)
            ((float *)h)[i] = (float)v;
        else
            ((double *)h)[i] = v;
    }
    GF_TRY(err, n, cudaMemcpy(f->planar, h, reals * f->ss, cudaMemcpyHostToDevice));
    GF_TRY(err, n, exec_plan(f, f->r2c, 1, f->planar, f->spec, err, n));
    GF_TRY(err, n, exec_plan(f, f->r2c_few, 1, f->planar, f->Y, err, n));
    GF_TRY(err, n, cudaMemcpy(s1, f->spec, nspec * cb, cudaMemcpyDeviceToHost));
    GF_TRY(err, n, cudaMemcpy(s2, f->Y, nspec * cb, cudaMemcpyDeviceToHost));
    *same = 1;
    for (size_t t = 0; t < f->few; t++)
        *same &= memcmp(s1 + t * f->sstride * cb, s2 + t * f->sstride * cb, f->bins * cb) == 0;
    /* back from the same spectra (a C2R may overwrite its input: a copy each) */
    GF_TRY(err, n, cudaMemcpy(f->Y, f->spec, f->slots * f->sstride * cb, cudaMemcpyDeviceToDevice));
    GF_TRY(err, n, exec_plan(f, f->c2r, 0, f->win, f->spec, err, n));
    GF_TRY(err, n, cudaMemcpy(w1, f->win, nwin * f->ss, cudaMemcpyDeviceToHost));
    GF_TRY(err, n, exec_plan(f, f->c2r_few, 0, f->win, f->Y, err, n));
    GF_TRY(err, n, cudaMemcpy(w2, f->win, nwin * f->ss, cudaMemcpyDeviceToHost));
    *same &= memcmp(w1, w2, nwin * f->ss) == 0;
    return GF_OK;
}

/* Keep the few plans only if they compute as the group's (few_same). cuFFT
 * promises nothing across batch sizes; measured (an H200, CUDA 13, sizes
 * 128 to 8192, batches 1 to 1000 against 2^22 reals): the same bits at
 * every batch but 1, where one size in f32 and one in f64 differ. The
 * buffers are left as alloc_buffers made them. */
static gf_status check_few(fft_conv *f, char *err, size_t n)
{
    if (!f->few)
        return GF_OK;
    const size_t bytes = (f->few + 1) * f->P * f->ss +
                         2 * (f->few * f->sstride * 2 * f->ss + f->few * f->fft_size * f->ss);
    unsigned char *h = (unsigned char *)malloc(bytes);
    if (!h) {
        snprintf(err, n, "cannot allocate %zu bytes to check the FFT plans", bytes);
        return GF_ERR_NO_MEMORY;
    }
    int same = 0;
    const gf_status st = few_same(f, h, &same, err, n);
    free(h);
    GF_TRY(err, n, st);
    if (!same) {
        cufftDestroy(f->r2c_few);
        cufftDestroy(f->c2r_few);
        f->have_r2c_few = f->have_c2r_few = 0;
    }
    GF_TRY(err, n, cudaMemset(f->planar, 0, (f->slots + 1) * f->P * f->ss));
    GF_TRY(err, n, cudaMemset(f->Y, 0, f->slots * f->sstride * 2 * f->ss));
    return GF_OK;
}

/* The spectra's set-up: host partitions, device scratch and a plan, kept
 * apart so that make_spectra frees them on every path. */
struct spectra_scratch {
    double *hwin;
    double *d_win;
    double2 *d_spec;
    cufftHandle plan;
    int have_plan;
};

static gf_status spectra_run(fft_conv *f, const gf_backend_params *p, spectra_scratch *s, char *err,
                             size_t n)
{
    const size_t win_n = f->partitions * f->fft_size, spec_n = f->partitions * f->sstride;
    int N = (int)f->fft_size, inembed = (int)f->fft_size, onembed = (int)f->sstride;
    s->hwin = (double *)calloc(win_n, sizeof(double));
    if (!s->hwin) {
        snprintf(err, n, "cannot allocate %zu bytes for the filter's partitions",
                 win_n * sizeof(double));
        return GF_ERR_NO_MEMORY;
    }
    GF_TRY(
        err, n,
        dev_alloc((void **)&s->d_win, win_n * sizeof(double), "the filter's partitions", err, n));
    GF_TRY(err, n,
           dev_alloc((void **)&s->d_spec, spec_n * sizeof(double2), "the filter's first spectra",
                     err, n));
    /* (the spectra's padding past P + 1 bins is scaled too: define it) */
    GF_TRY(err, n, cudaMemset(s->d_spec, 0, spec_n * sizeof(double2)));
    GF_TRY(err, n,
           cufftPlanMany(&s->plan, 1, &N, &inembed, 1, (int)f->fft_size, &onembed, 1,
                         (int)f->sstride, CUFFT_D2Z, (int)f->partitions));
    s->have_plan = 1;
    for (int h = 0; h < f->nh; h++) {
        for (size_t k = 0; k < f->partitions; k++)
            for (size_t t = 0; t < f->P; t++) {
                const size_t i = k * f->P + t;
                double v = 0;
                if (i < f->T)
                    v = f->prec == GF_PRECISION_F32 ? ((const float *)p->taps)[h * f->T + i]
                                                    : ((const double *)p->taps)[h * f->T + i];
                s->hwin[k * f->fft_size + t] = v;
            }
        GF_TRY(err, n,
               cudaMemcpy(s->d_win, s->hwin, win_n * sizeof(double), cudaMemcpyHostToDevice));
        GF_TRY(err, n, cufftExecD2Z(s->plan, s->d_win, s->d_spec));
        unsigned char *dst = (unsigned char *)f->H + (size_t)h * spec_n * 2 * f->ss;
        const unsigned grid = (unsigned)((spec_n + FFT_THREADS - 1) / FFT_THREADS);
        cudaGetLastError(); /* the check below sees this launch only */
        if (f->prec == GF_PRECISION_F32)
            fft_scale_spectra<float><<<grid, FFT_THREADS>>>(s->d_spec, (float2 *)dst,
                                                            (long long)spec_n, 1.0 / f->fft_size);
        else
            fft_scale_spectra<double><<<grid, FFT_THREADS>>>(s->d_spec, (double2 *)dst,
                                                             (long long)spec_n, 1.0 / f->fft_size);
        GF_TRY_LAUNCH(err, n, "fft_scale_spectra");
        GF_TRY(err, n, cudaDeviceSynchronize());
    }
    return GF_OK;
}

/* H_k of every filter set: double-precision transforms of the zero-padded
 * partitions on the device, scaled by 1/N and rounded to the precision. */
static gf_status make_spectra(fft_conv *f, const gf_backend_params *p, char *err, size_t n)
{
    spectra_scratch s = {};
    const gf_status st = spectra_run(f, p, &s, err, n);
    if (s.have_plan)
        cufftDestroy(s.plan);
    cudaFree(s.d_win);
    cudaFree(s.d_spec);
    free(s.hwin);
    return st;
}

static double mib(size_t bytes)
{
    return (double)bytes / (1 << 20);
}

/* Allocate everything, after checking that it fits the free memory. */
static gf_status alloc_buffers(fft_conv *f, size_t work, char *err, size_t n)
{
    const size_t cbytes = 2 * f->ss; /* one complex */
    const size_t h_bytes = (size_t)f->nh * f->partitions * f->sstride * cbytes;
    const size_t ring_bytes = (size_t)f->C * f->ring_slots * f->sstride * cbytes;
    const size_t part_bytes =
        f->runs > 1 ? f->runs * (size_t)FFT_PART_BLOCKS * (size_t)f->O * f->sstride * cbytes : 0;
    /* (the fused transforms read the chunk and write the output themselves) */
    const size_t planar_bytes = f->dx ? 0 : (f->slots + 1) * f->P * f->ss;
    const size_t win_bytes = f->dx ? 0 : f->slots * f->fft_size * f->ss;
    const size_t chunk_bytes =
        planar_bytes + win_bytes + f->slots * 2 * f->sstride * cbytes + part_bytes;
    const size_t tail_bytes = (size_t)f->C * f->P * f->ss;
    /* the spectra's double-precision scratch at create */
    const size_t scratch =
        f->partitions * (f->fft_size * sizeof(double) + f->sstride * 2 * sizeof(double));
    const size_t need = h_bytes + ring_bytes + chunk_bytes + 2 * tail_bytes + work + scratch;
    size_t free_b = 0, total_b = 0;
    GF_TRY(err, n, cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b) {
        snprintf(err, n,
                 "the FFT filter needs %.0f MiB of GPU memory (spectra %.0f, delay line %.0f, "
                 "chunk buffers %.0f, cuFFT %.0f, set-up %.0f); the GPU has %.0f MiB free of "
                 "%.0f",
                 mib(need), mib(h_bytes), mib(ring_bytes), mib(chunk_bytes), mib(work),
                 mib(scratch), mib(free_b), mib(total_b));
        return GF_ERR_NO_MEMORY;
    }
    GF_TRY(err, n, dev_alloc(&f->H, h_bytes, "the filter's spectra", err, n));
    GF_TRY(err, n, dev_alloc(&f->ring, ring_bytes, "the delay line", err, n));
    if (!f->dx) {
        GF_TRY(err, n, dev_alloc(&f->planar, planar_bytes, "a chunk's blocks", err, n));
        GF_TRY(err, n, dev_alloc(&f->win, win_bytes, "a chunk's windows", err, n));
    }
    GF_TRY(err, n,
           dev_alloc(&f->spec, f->slots * f->sstride * cbytes, "a chunk's spectra", err, n));
    GF_TRY(err, n, dev_alloc(&f->Y, f->slots * f->sstride * cbytes, "a chunk's products", err, n));
    if (part_bytes)
        GF_TRY(err, n, dev_alloc(&f->part, part_bytes, "the split-K sums", err, n));
    /* Transforms past a chunk's end read whatever is there, and check_few
     * copies whole spectra, padding past the bins included: make it defined. */
    if (planar_bytes)
        GF_TRY(err, n, cudaMemset(f->planar, 0, planar_bytes));
    GF_TRY(err, n, cudaMemset(f->spec, 0, f->slots * f->sstride * cbytes));
    GF_TRY(err, n, cudaMemset(f->Y, 0, f->slots * f->sstride * cbytes));
    GF_TRY(err, n, dev_alloc(&f->tail[0], tail_bytes, "the last blocks", err, n));
    GF_TRY(err, n, dev_alloc(&f->tail[1], tail_bytes, "the last blocks", err, n));
    if (work) {
        GF_TRY(err, n, dev_alloc(&f->work, work, "cuFFT's work area", err, n));
        GF_TRY(err, n, cufftSetWorkArea(f->r2c, f->work));
        GF_TRY(err, n, cufftSetWorkArea(f->c2r, f->work));
        if (f->few) {
            GF_TRY(err, n, cufftSetWorkArea(f->r2c_few, f->work));
            GF_TRY(err, n, cufftSetWorkArea(f->c2r_few, f->work));
        }
    }
    return GF_OK;
}

/* Plans, buffers, spectra, a clear delay line, all finished on the device. */
static gf_status setup(fft_conv *f, const gf_backend_params *p, char *err, size_t n)
{
    size_t work = 0;
    if (f->prec == GF_PRECISION_F32 && f->fft_size >= GF_DX_MIN_N && f->fft_size <= GF_DX_MAX_N)
        GF_TRY(err, n, dx_prepare(f->fft_size, &f->dx, err, n));
    if (!f->dx)
        GF_TRY(err, n, make_plans(f, &work, err, n));
    GF_TRY(err, n, alloc_buffers(f, work, err, n));
    if (!f->dx)
        GF_TRY(err, n, check_few(f, err, n));
    GF_TRY(err, n, make_spectra(f, p, err, n));
    GF_TRY(err, n, fft_conv_reset(f, 0, err, n));
    GF_TRY(err, n, cudaDeviceSynchronize());
    return GF_OK;
}

gf_status fft_conv_create(const gf_backend_params *p, fft_conv **out, char *err, size_t n)
{
    *out = NULL;
    fft_conv *f = (fft_conv *)calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "cannot allocate the FFT method's state");
        return GF_ERR_NO_MEMORY;
    }
    f->prec = p->precision;
    f->ss = p->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    f->C = p->channels;
    f->inputs = p->outputs > 0 ? p->channels : 0;
    f->O = p->outputs > 0 ? p->outputs : p->channels;
    f->nh = p->outputs > 0 ? p->channels * p->outputs : p->taps_per_channel ? p->channels : 1;
    f->T = p->num_taps;
    f->P = p->partition;
    f->fft_size = 2 * f->P;
    f->partitions = (f->T + f->P - 1) / f->P;
    /* (a chunk to prime with may be longer than the chunk) */
    f->chunk_blocks =
        (p->chunk_frames > p->history_frames ? p->chunk_frames : p->history_frames) / f->P;
    f->windows = f->chunk_blocks + 1;
    f->ring_slots = f->partitions - 1 + f->chunk_blocks;
    f->bins = f->P + 1;
    f->sstride = (f->bins + 7) & ~(size_t)7;
    f->k_runs = (f->partitions + MAC_KS - 1) / MAC_KS;
    f->runs = f->k_runs * (f->inputs > 0 ? (size_t)f->inputs : 1);
    /* 2^22 reals per call: few calls for a whole chunk of the default size
     * (2^21 samples), little wasted where a chunk holds fewer (live blocks). */
    f->group = f->fft_size >= ((size_t)1 << 22) ? 1 : ((size_t)1 << 22) / f->fft_size;
    const size_t wide = (size_t)(f->O > f->C ? f->O : f->C);
    f->slots = (wide * f->windows + f->group - 1) / f->group * f->group;
    f->few = wide * f->windows < f->group ? wide * f->windows : 0;
    const gf_status st = setup(f, p, err, n);
    if (st != GF_OK) {
        fft_conv_destroy(f);
        return st;
    }
    *out = f;
    return GF_OK;
}

size_t fft_conv_chunk_frames(const fft_conv *f)
{
    return f->chunk_blocks * f->P;
}

gf_status fft_conv_reserve(fft_conv *f, size_t frames, char *err, size_t n)
{
    const size_t M = frames / f->P;
    if (!f->dx || M <= f->chunk_blocks)
        return GF_OK;
    const size_t cbytes = 2 * f->ss, wide = (size_t)(f->O > f->C ? f->O : f->C);
    const size_t slots = wide * (M + 1); /* (no cuFFT batches to round to) */
    const size_t ring_slots = f->partitions - 1 + M;
    const size_t spec_bytes = slots * f->sstride * cbytes;
    const size_t ring_bytes = (size_t)f->C * ring_slots * f->sstride * cbytes;
    size_t free_b = 0, total_b = 0;
    GF_TRY(err, n, cudaMemGetInfo(&free_b, &total_b));
    /* (an eighth of the free memory left over, for everyone else) */
    if (2 * spec_bytes + ring_bytes > free_b - free_b / 8)
        return GF_OK;
    /* the new chunk buffers beside the old, which stay where they cannot */
    void *spec = NULL, *Y = NULL, *ring = NULL;
    if (cudaMalloc(&spec, spec_bytes) != cudaSuccess || cudaMalloc(&Y, spec_bytes) != cudaSuccess ||
        cudaMalloc(&ring, ring_bytes) != cudaSuccess) {
        cudaGetLastError(); /* no room after all */
        cudaFree(spec);
        cudaFree(Y);
        cudaFree(ring);
        return GF_OK;
    }
    cudaFree(f->spec);
    cudaFree(f->Y);
    cudaFree(f->ring);
    f->spec = spec;
    f->Y = Y;
    f->ring = ring;
    f->chunk_blocks = M;
    f->windows = M + 1;
    f->ring_slots = ring_slots;
    f->slots = slots;
    /* defined, as alloc_buffers leaves them; the history zeroed */
    GF_TRY(err, n, cudaMemset(f->spec, 0, spec_bytes));
    GF_TRY(err, n, cudaMemset(f->Y, 0, spec_bytes));
    GF_TRY(err, n, fft_conv_reset(f, 0, err, n));
    GF_TRY(err, n, cudaDeviceSynchronize());
    return GF_OK;
}

gf_status fft_conv_reset(fft_conv *f, cudaStream_t st, char *err, size_t n)
{
    f->head = 0;
    f->tail_cur = 0;
    GF_TRY(err, n,
           cudaMemsetAsync(f->ring, 0, (size_t)f->C * f->ring_slots * f->sstride * 2 * f->ss, st));
    GF_TRY(err, n, cudaMemsetAsync(f->tail[0], 0, (size_t)f->C * f->P * f->ss, st));
    return GF_OK;
}

enum stage { PLANAR, MAC, EMIT, STORE };

/* An fft_mac instance: tiles of bt blocks; multi: a thread sums several runs. */
template <typename T, typename V = typename cplx<T>::type>
using mac_fn = void (*)(const V *, V *, const V *, V *, long long, long long, int, long long,
                        long long, long long, long long, long long, int, int, long long, int);

template <typename T> static mac_fn<T> pick_mac(int bt, bool multi)
{
    const int BT = mac_tile<T>::BT, KT = mac_tile<T>::KT;
    if (multi)
        return bt == BT  ? fft_mac<T, BT, KT, true>
               : bt == 4 ? fft_mac<T, 4, KT, true>
                         : fft_mac<T, 1, KT, true>;
    return bt == BT  ? fft_mac<T, BT, KT, false>
           : bt == 4 ? fft_mac<T, 4, KT, false>
                     : fft_mac<T, 1, KT, false>;
}

template <typename T>
static gf_status launch_kernel(fft_conv *f, cudaStream_t st, const void *d_in, long long m,
                               long long skip, void *d_out, stage which, char *err, size_t n)
{
    typedef typename cplx<T>::type V;
    const unsigned ymax = 65535;
    const unsigned C = (unsigned)f->C, O = (unsigned)f->O, my = (unsigned)(m < ymax ? m : ymax);
    /* W = m + 1 windows a channel: this chunk's, whatever the buffers hold */
    const long long P = (long long)f->P, W = m + 1;
    int lp = 0;
    while ((1LL << lp) < P)
        lp++;
    if (which == PLANAR) {
        fft_planar<T><<<fft_tile_grid(m * P, f->C), FFT_THREADS, fft_tile_smem<T>(), st>>>(
            (const T *)d_in, m, f->C, lp, W, (const T *)f->tail[f->tail_cur], (T *)f->planar,
            (T *)f->tail[f->tail_cur ^ 1]);
        GF_TRY_LAUNCH(err, n, "fft_planar");
    } else if (which == MAC) {
        if (f->runs == 1 && f->inputs == 0 && f->partitions <= MAC_WK && m >= MAC_WALK_BLOCKS) {
            const long long L = mac_walk_run(m, O, (long long)f->bins);
            fft_mac_walk<T><<<mac_grid_x((m + L - 1) / L, O, f->bins), FFT_THREADS, 0, st>>>(
                (const V *)f->spec, (V *)f->ring, (const V *)f->H, (V *)f->Y, m, W, f->O,
                (int)f->partitions, (long long)f->ring_slots, (long long)f->head,
                (long long)f->bins, (long long)f->sstride, f->nh > 1, L);
            GF_TRY_LAUNCH(err, n, "fft_mac_walk");
            return GF_OK;
        }
        /* Chunks of few blocks (live audio: one) take smaller tiles, and
         * split the runs over threads (the same sums: fft_kernels.cuh). */
        const int bt = m >= mac_tile<T>::BT ? mac_tile<T>::BT : m >= 4 ? 4 : 1;
        const int split = f->runs > 1 && m < FFT_PART_BLOCKS;
        const long long rows = (m + bt - 1) / bt * (split ? (long long)f->runs : 1);
        const unsigned grid = mac_grid_x(rows, O, f->bins);
        V *out = split ? (V *)f->part : (V *)f->Y;
        auto mac = pick_mac<T>(bt, f->runs > 1 && !split);
        mac<<<grid, FFT_THREADS, 0, st>>>((const V *)f->spec, (V *)f->ring, (const V *)f->H, out, m,
                                          W, f->O, (long long)f->partitions,
                                          (long long)f->ring_slots, (long long)f->head,
                                          (long long)f->bins, (long long)f->sstride, f->nh > 1,
                                          split, (long long)FFT_PART_BLOCKS, f->inputs);
        GF_TRY_LAUNCH(err, n, "fft_mac");
        if (split) {
            const unsigned bx = (unsigned)((f->bins + FFT_THREADS - 1) / FFT_THREADS);
            fft_reduce<T><<<dim3(bx, my, O), FFT_THREADS, 0, st>>>(
                (const V *)f->part, (V *)f->Y, m, W, f->O, (long long)f->runs,
                (long long)FFT_PART_BLOCKS, (long long)f->bins, (long long)f->sstride);
            GF_TRY_LAUNCH(err, n, "fft_reduce");
        }
    } else if (which == STORE) {
        const unsigned bx = (unsigned)((f->bins + FFT_THREADS - 1) / FFT_THREADS);
        const long long kept = m < (long long)f->partitions - 1 ? m : (long long)f->partitions - 1;
        if (kept > 0) {
            fft_ring_store<T>
                <<<dim3(bx, (unsigned)(kept < ymax ? kept : ymax), C), FFT_THREADS, 0, st>>>(
                    (const V *)f->spec, (V *)f->ring, m, W, (long long)f->partitions,
                    (long long)f->ring_slots, (long long)f->head, (long long)f->bins,
                    (long long)f->sstride);
            GF_TRY_LAUNCH(err, n, "fft_ring_store");
        }
    } else if (m * P > skip) {
        fft_emit<T><<<fft_tile_grid(m * P - skip, f->O), FFT_THREADS, fft_tile_smem<T>(), st>>>(
            (const T *)f->win, m, f->O, lp, W, skip, (T *)d_out);
        GF_TRY_LAUNCH(err, n, "fft_emit");
    }
    return GF_OK;
}

/* The transforms of the chunk's first `count` windows (or spectra), in
 * calls of f->group, or in one call of the few plans where they were kept. */
static gf_status transform(fft_conv *f, cudaStream_t st, int forward, size_t count, char *err,
                           size_t n)
{
    /* (the few plans: every chunk's count) */
    const int few = f->have_r2c_few;
    cufftHandle plan = forward ? (few ? f->r2c_few : f->r2c) : (few ? f->c2r_few : f->c2r);
    GF_TRY(err, n, cufftSetStream(plan, st));
    for (size_t g = 0; g < count; g += few ? f->few : f->group) {
        unsigned char *w = forward ? (unsigned char *)f->planar + g * f->P * f->ss
                                   : (unsigned char *)f->win + g * f->fft_size * f->ss;
        unsigned char *sp =
            (unsigned char *)(forward ? f->spec : f->Y) + g * f->sstride * 2 * f->ss;
        GF_TRY(err, n, exec_plan(f, plan, forward, w, sp, err, n));
    }
    return GF_OK;
}

/* PLANAR and its forward transforms, or the inverse transforms and EMIT,
 * as the fused kernels (fft_dx.h). */
static gf_status run_dx(fft_conv *f, cudaStream_t st, const void *d_in, long long m, long long skip,
                        void *d_out, stage which, char *err, size_t n)
{
    const long long W = m + 1, sstride = (long long)f->sstride;
    if (which == PLANAR) {
        dx_forward_args a;
        a.in = (const float *)d_in;
        a.m = m;
        a.C = f->C;
        a.W = W;
        a.tail_in = (const float *)f->tail[f->tail_cur];
        a.tail_out = (float *)f->tail[f->tail_cur ^ 1];
        a.spec = (float2 *)f->spec;
        a.sstride = sstride;
        return dx_forward(f->fft_size, st, a, err, n);
    }
    if (m * (long long)f->P <= skip)
        return GF_OK;
    const dx_inverse_args a = {(const float2 *)f->Y, m, f->O, W, sstride, skip, (float *)d_out};
    return dx_inverse(f->fft_size, st, a, err, n);
}

/* The stages of a chunk, in order: filtered (run), or only taken into the
 * delay line (prime). A forward transform follows PLANAR, an inverse MAC. */
static gf_status run_stages(fft_conv *f, cudaStream_t st, const void *d_in, size_t frames,
                            size_t skip, void *d_out, const stage *stages, int nstages, char *err,
                            size_t n)
{
    const long long m = (long long)(frames / f->P);
    /* through the last channel's last: C inputs forward, O outputs back;
     * channels W = m + 1 windows apart (launch_kernel), so a chunk shorter
     * than the buffers transforms its own windows and one more a channel,
     * not the buffers' every window (with chunks of 4 blocks in buffers
     * of 32, 7 times as many transforms at 8 channels) */
    const size_t count_in = (size_t)(f->C - 1) * (size_t)(m + 1) + (size_t)m;
    const size_t count_out = (size_t)(f->O - 1) * (size_t)(m + 1) + (size_t)m;
    /* Each launch's check must see that launch only, not an error an
     * earlier call on this thread left behind and reported. */
    cudaGetLastError();
    for (int i = 0; i < nstages; i++) {
        if (f->dx && (stages[i] == PLANAR || stages[i] == EMIT))
            GF_TRY(err, n, run_dx(f, st, d_in, m, (long long)skip, d_out, stages[i], err, n));
        else if (f->prec == GF_PRECISION_F32)
            GF_TRY(err, n,
                   launch_kernel<float>(f, st, d_in, m, (long long)skip, d_out, stages[i], err, n));
        else
            GF_TRY(
                err, n,
                launch_kernel<double>(f, st, d_in, m, (long long)skip, d_out, stages[i], err, n));
        if ((stages[i] == PLANAR || stages[i] == MAC) && !f->dx)
            GF_TRY(err, n,
                   transform(f, st, stages[i] == PLANAR, stages[i] == PLANAR ? count_in : count_out,
                             err, n));
    }
    f->head = (f->head + (size_t)m) % f->ring_slots;
    f->tail_cur ^= 1;
    return GF_OK;
}

gf_status fft_conv_run(fft_conv *f, cudaStream_t st, const void *d_in, size_t frames, size_t skip,
                       void *d_out, char *err, size_t n)
{
    static const stage stages[] = {PLANAR, MAC, EMIT};
    return run_stages(f, st, d_in, frames, skip, d_out, stages, 3, err, n);
}

gf_status fft_conv_prime(fft_conv *f, cudaStream_t st, const void *d_in, size_t frames, char *err,
                         size_t n)
{
    static const stage stages[] = {PLANAR, STORE};
    return run_stages(f, st, d_in, frames, frames, NULL, stages, 2, err, n);
}

} // namespace gf
