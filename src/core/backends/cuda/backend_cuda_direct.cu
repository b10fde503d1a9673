/*
 * The CUDA backend's direct method (backend_cuda.h): the taps in a page of
 * the constant bank (shared by every engine of the process, per device)
 * or in global memory, and one FIR kernel a chunk (fir_launch.cu) on the
 * slot's stream.
 */
#include "backend_cuda.h"

#include <pthread.h>

#define CONST_PAGE  1024
#define CONST_PAGES (GF_CONST_TAP_BYTES / CONST_PAGE) /* 64: one bit each */
#define MAX_DEVICES 64

/* Constant-memory pages in use, per device, shared by all engines. */
static pthread_mutex_t const_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long const_used[MAX_DEVICES];

static int const_alloc(int dev, int npages)
{
    if (dev < 0 || dev >= MAX_DEVICES)
        return -1;
    int page = -1;
    pthread_mutex_lock(&const_mu);
    const unsigned long long want = npages >= 64 ? ~0ull : ((1ull << npages) - 1);
    for (int p = 0; p + npages <= CONST_PAGES; p++)
        if ((const_used[dev] & (want << p)) == 0) {
            const_used[dev] |= want << p;
            page = p;
            break;
        }
    pthread_mutex_unlock(&const_mu);
    return page;
}

static void const_free(int dev, int page, int npages)
{
    const unsigned long long want = npages >= 64 ? ~0ull : ((1ull << npages) - 1);
    pthread_mutex_lock(&const_mu);
    const_used[dev] &= ~(want << page);
    pthread_mutex_unlock(&const_mu);
}

/* Direct method: taps in a page of the constant bank where one is free
 * (one filter for every channel), else in global memory; the kernel plan. */
static gf_status setup_direct(cuda_state *s)
{
    const gf_backend_params *p = &s->p;
    const size_t tap_bytes = p->num_taps * s->ss * (p->taps_per_channel ? (size_t)p->channels : 1);
    if (!p->taps_per_channel) {
        s->const_npages = (int)((tap_bytes + CONST_PAGE - 1) / CONST_PAGE);
        s->const_page = const_alloc(s->dev, s->const_npages);
    }
    if (s->const_page >= 0) {
        GF_TRY(s->err, sizeof s->err,
               gf::fir_const_upload(p->taps, tap_bytes, (size_t)s->const_page * CONST_PAGE, s->err,
                                    sizeof s->err));
    } else {
        GF_TRY(s->err, sizeof s->err,
               gf::dev_alloc((void **)&s->d_taps, tap_bytes, "the taps", s->err, sizeof s->err));
        GF_TRY(s->err, sizeof s->err,
               cudaMemcpy(s->d_taps, p->taps, tap_bytes, cudaMemcpyHostToDevice));
    }
    const int const_off = s->const_page < 0 ? -1 : (int)(s->const_page * CONST_PAGE / s->ss);
    const bool taps_per_channel = p->taps_per_channel != 0;
    if (p->precision == GF_PRECISION_F32)
        GF_TRY(s->err, sizeof s->err,
               gf::fir_plan_make<float>((int)p->num_taps, p->channels, const_off, taps_per_channel,
                                        &s->fir, s->err, sizeof s->err));
    else
        GF_TRY(s->err, sizeof s->err,
               gf::fir_plan_make<double>((int)p->num_taps, p->channels, const_off, taps_per_channel,
                                         &s->fir, s->err, sizeof s->err));
    return GF_OK;
}

/* Direct method: one kernel on the slot's stream (nothing when every
 * output of the chunk is skipped). */
static gf_status run_direct(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    const size_t C = (size_t)s->p.channels;
    const long long n0 = (long long)(c->skip * C), n1 = (long long)(c->frames * C);
    if (n1 <= n0)
        return GF_OK;
    /* The check after the launch must see only this launch's error, not
     * one an earlier call on this thread left behind and reported. */
    cudaGetLastError();
    if (s->p.precision == GF_PRECISION_F32)
        gf::fir_launch<float>(s->fir, sl->stream, (const float *)sl->d_in, (float *)sl->d_out, n0,
                              n1, (const float *)s->d_taps);
    else
        gf::fir_launch<double>(s->fir, sl->stream, (const double *)sl->d_in, (double *)sl->d_out,
                               n0, n1, (const double *)s->d_taps);
    GF_TRY_LAUNCH(s->err, sizeof s->err, "fir");
    return GF_OK;
}

/* Direct method: the taps' device memory or constant pages. */
static void release_direct(cuda_state *s)
{
    cudaFree(s->d_taps);
    if (s->const_page >= 0)
        const_free(s->dev, s->const_page, s->const_npages);
}

const cuda_method cuda_direct = {setup_direct, NULL, run_direct, NULL, NULL, NULL, release_direct};
