/*
 * The CUDA backend's NUPC method (backend_cuda.h; gpufilt.h states the
 * method, its levels and its contract). Each level is the FFT method of
 * fft_conv.h over its segment of the taps with partition S_l, run on whole
 * blocks of S_l frames in stream order, as on the CPU (cpu_nupc.h):
 *
 *   input ring   every chunk is copied in at its stream frames (modulo
 *                R_in, a multiple of the largest partition M, so that every
 *                level's block is contiguous in it); each level reads its
 *                blocks from there as they complete.
 *   level rings  level l writes the outputs of its block of input [t, t +
 *                S_l) at ring slots t mod R_l (R_l a multiple of S_l),
 *                holding output frames t + o_l ..; zero at reset, so the
 *                first o_l frames read as zeros.
 *   the sum      a chunk's output frame n is y_0[n] + y_1[n] + ... in level
 *                order, each add rounded (nupc_sum), as the CPU sums.
 *
 * Level 0 and the levels due soon run on the compute stream, in line. A
 * level whose slack o_l - S_l holds GF_NUPC_ASYNC_CHUNKS chunks runs on a
 * stream of its own at the device's lowest priority (the compute stream has
 * the highest). Its complete blocks are queued there by one chunk, at
 * most one such level a chunk, the one due first (the launches cost the
 * calling thread tens of microseconds a level), or all that a chunk's sum
 * needs where one would be late (gf_nupc_stagger, nupc_scheme.h, with the
 * rings' sizes; test_nupc_sched checks the orderings below over many
 * schemes and chunkings); the compute stream waits, through an
 * event recorded after the level's run, only for the blocks a chunk's sum
 * reads, which were queued chunks before. So a big level's transforms and
 * multiply-adds run beside the small levels' of later chunks instead of
 * delaying one chunk's output. The arithmetic, and so the bytes, are the
 * same wherever and whenever a level runs, and do not depend on the
 * chunks (each level's fft_conv does not).
 *
 * Ordering (every level l >= 1 has S_l <= o_l < 2 S_l):
 *   - a level's run reads input that the compute stream copied before
 *     recording `staged`, which the level's stream waits for;
 *   - the copy of chunk [pos, pos + F) overwrites frames up to pos + F -
 *     R_in; the sums before it waited for every block ending by pos - o_l,
 *     so R_in >= F + o_l + S_l keeps every block still being read;
 *   - a run for input g overwrites the slot of output frame g + o_l - R_l,
 *     summed by an earlier chunk (before `staged`) where R_l >= o_l + F.
 */
#include "backend_cuda.h"
#include "nupc_scheme.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events a level on its own stream keeps: the runs a sum may need are
 * those of the last o_l + F frames, two or three; more is only a choice
 * among more (the latest always covers what a sum needs). */
#define LEVEL_EVENTS 8

/* Level l's device state; its scheme, stream flag and progress are the
 * arrays of nupc_levels, as gf_nupc_stagger reads them. */
typedef struct nupc_level {
    gf::fft_conv *fft;
    size_t cap;          /* most frames of one run: whole blocks */
    unsigned char *ring; /* R x C outputs: those of input frame t at slot t mod R */
    size_t R;
    cudaStream_t stream; /* its own (low priority), or NULL: the compute stream */
    cudaEvent_t ev[LEVEL_EVENTS];
    uint64_t ev_end[LEVEL_EVENTS]; /* ev[i]: the level's runs up to this input frame */
    int nev, next_ev;              /* events recorded (at most LEVEL_EVENTS), the next one */
    uint64_t joined;               /* the compute stream has waited for its runs up to here */
} nupc_level;

struct nupc_levels {
    size_t L;
    gf_nupc_level lv[GF_NUPC_MAX_LEVELS]; /* partition S, offset o, partitions K, taps */
    int async[GF_NUPC_MAX_LEVELS];        /* level l runs on a stream of its own */
    uint64_t taken[GF_NUPC_MAX_LEVELS];   /* input frames level l has queued (whole blocks) */
    nupc_level level[GF_NUPC_MAX_LEVELS];
    unsigned char *in; /* R_in x C input */
    size_t R_in;
    uint64_t pos;       /* stream frame of the next chunk's first */
    cudaEvent_t staged; /* the last chunk's input is in the ring */
};

/* The sum's view of the levels: level l's output for frame skip + j of the
 * chunk is at slot base[l] + j (minus R[l] past the ring's end). */
template <typename T> struct sum_args {
    const T *ring[GF_NUPC_MAX_LEVELS];
    long long base[GF_NUPC_MAX_LEVELS];
    long long R[GF_NUPC_MAX_LEVELS];
    int L;
};

/* out[j C + c] = y_0 + y_1 + ... for the chunk's frames skip + j, j < n /
 * C: each add rounded as written, in level order. */
template <typename T>
__global__ void __launch_bounds__(256) nupc_sum(const sum_args<T> a, long long n, int C, T *out)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const long long j = i / C, c = i - j * C;
    T acc = 0;
    for (int l = 0; l < a.L; l++) {
        long long slot = a.base[l] + j;
        if (slot >= a.R[l])
            slot -= a.R[l];
        const T v = a.ring[l][slot * C + c];
        acc = l == 0 ? v : acc + v;
    }
    out[i] = acc;
}

/* Queue the sum of chunk frames [skip, frames) into d_out on the compute
 * stream. */
template <typename T>
static gf_status sum_queue(cuda_state *s, const nupc_levels *n, size_t frames, size_t skip,
                           void *d_out)
{
    sum_args<T> a;
    a.L = (int)n->L;
    for (size_t l = 0; l < n->L; l++) {
        const nupc_level *v = &n->level[l];
        /* the input frame of output pos + skip, pos + skip - o, mod R */
        const long long R = (long long)v->R;
        const long long t = (long long)(n->pos + skip) - (long long)n->lv[l].offset;
        a.ring[l] = (const T *)v->ring;
        a.base[l] = (t % R + R) % R;
        a.R[l] = R;
    }
    const long long count = (long long)(frames - skip) * s->p.channels;
    cudaGetLastError(); /* the check below sees this launch only */
    nupc_sum<T><<<(unsigned)((count + 255) / 256), 256, 0, s->compute>>>(a, count, s->p.channels,
                                                                         (T *)d_out);
    GF_TRY_LAUNCH(s->err, sizeof s->err, "nupc_sum");
    return GF_OK;
}

/* Copy `frames` frames from src into the input ring at stream frame `at`
 * (wrapping), on the compute stream. */
static gf_status ring_put(cuda_state *s, nupc_levels *n, uint64_t at, const unsigned char *src,
                          size_t frames)
{
    const size_t fb = (size_t)s->p.channels * s->ss;
    size_t r = (size_t)(at % n->R_in);
    while (frames > 0) {
        const size_t k = frames < n->R_in - r ? frames : n->R_in - r;
        GF_TRY(s->err, sizeof s->err,
               cudaMemcpyAsync(n->in + r * fb, src, k * fb, cudaMemcpyDeviceToDevice, s->compute));
        src += k * fb;
        frames -= k;
        r = 0;
    }
    return GF_OK;
}

/* A level's failure at create: its detail, said to be that level's (after
 * it, so that an "out of ..." detail still opens the message). */
static gf_status level_failed(cuda_state *s, size_t l, const gf_nupc_level *lv, gf_status st)
{
    const size_t used = strlen(s->err);
    snprintf(s->err + used, sizeof s->err - used, ", in NUPC level %zu (partition %zu)", l,
             lv->size);
    return st;
}

/* Level l: its FFT method over its segment of the taps, its output ring,
 * and its stream and events where it runs on its own. */
static gf_status level_make(cuda_state *s, nupc_levels *n, size_t l, int low_priority)
{
    nupc_level *v = &n->level[l];
    const gf_nupc_level *lv = &n->lv[l];
    const size_t S = lv->size, F = s->p.chunk_frames, fb = (size_t)s->p.channels * s->ss;
    v->cap = (F + S - 1) / S * S;
    v->R = gf_nupc_out_frames(lv, F);
    void *g = gf_nupc_segment(&s->p, lv, s->ss);
    if (!g) {
        snprintf(s->err, sizeof s->err, "cannot allocate a level's taps");
        return GF_ERR_NO_MEMORY;
    }
    const gf_backend_params q = gf_nupc_level_params(&s->p, lv, g, v->cap);
    const gf_status st = gf::fft_conv_create(&q, &v->fft, s->err, sizeof s->err);
    free(g);
    if (st != GF_OK)
        return level_failed(s, l, lv, st);
    const gf_status a =
        gf::dev_alloc((void **)&v->ring, v->R * fb, "a level's outputs", s->err, sizeof s->err);
    if (a != GF_OK) /* out of GPU memory, or the device's error */
        return level_failed(s, l, lv, a);
    if (!(n->async[l] = gf_nupc_gpu_async(lv, l, F)))
        return GF_OK;
    GF_TRY(s->err, sizeof s->err,
           cudaStreamCreateWithPriority(&v->stream, cudaStreamNonBlocking, low_priority));
    for (int i = 0; i < LEVEL_EVENTS; i++)
        GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&v->ev[i], cudaEventDisableTiming));
    return GF_OK;
}

static gf_status reset_nupc(cuda_state *s);

/* The levels (gf_nupc_levels), the input ring, the compute stream at the
 * device's highest priority and the levels' own at its lowest. */
static gf_status setup_nupc(cuda_state *s)
{
    int least = 0, greatest = 0;
    GF_TRY(s->err, sizeof s->err, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GF_TRY(s->err, sizeof s->err,
           cudaStreamCreateWithPriority(&s->compute, cudaStreamNonBlocking, greatest));
    nupc_levels *n = (nupc_levels *)calloc(1, sizeof *n);
    if (!n) {
        snprintf(s->err, sizeof s->err, "cannot allocate the NUPC method's state");
        return GF_ERR_NO_MEMORY;
    }
    s->nupc = n;
    const size_t L = gf_nupc_scheme(s->p.num_taps, s->p.partition, s->p.max_partition, n->lv);
    for (size_t l = 0; l < L; l++) {
        n->L = l + 1;
        GF_TRY(s->err, sizeof s->err, level_make(s, n, l, least));
    }
    n->R_in = gf_nupc_in_frames(n->lv, L, s->p.max_partition, s->p.chunk_frames);
    GF_TRY(s->err, sizeof s->err,
           gf::dev_alloc((void **)&n->in, n->R_in * (size_t)s->p.channels * s->ss,
                         "the NUPC method's input", s->err, sizeof s->err));
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&n->staged, cudaEventDisableTiming));
    return reset_nupc(s);
}

/* As the FFT method's: the events that order a slot's upload before the
 * compute stream's work and that work before the slot's download. */
static gf_status slot_setup_nupc(cuda_state *s, cuda_slot *sl)
{
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->uploaded, cudaEventDisableTiming));
    GF_TRY(s->err, sizeof s->err, cudaEventCreateWithFlags(&sl->computed, cudaEventDisableTiming));
    return GF_OK;
}

/* Queue level l's runs of the blocks the input ring completes (up to
 * `given`) on its stream (or the compute stream), each a run of at most cap
 * frames that crosses neither ring's end; on its own stream, an event
 * after each run. */
static gf_status level_queue(cuda_state *s, nupc_levels *n, size_t l, uint64_t given)
{
    nupc_level *v = &n->level[l];
    cudaStream_t st = v->stream ? v->stream : s->compute;
    uint64_t *taken = &n->taken[l];
    const size_t S = n->lv[l].size, fb = (size_t)s->p.channels * s->ss;
    while (given - *taken >= S) {
        const size_t at_in = (size_t)(*taken % n->R_in), at_out = (size_t)(*taken % v->R);
        size_t k = (size_t)(given - *taken);
        k = k < v->cap ? k : v->cap;
        k = k < n->R_in - at_in ? k : n->R_in - at_in;
        k = k < v->R - at_out ? k : v->R - at_out;
        k = k / S * S; /* >= S: the rings are whole blocks */
        GF_TRY(s->err, sizeof s->err,
               gf::fft_conv_run(v->fft, st, n->in + at_in * fb, k, 0, v->ring + at_out * fb, s->err,
                                sizeof s->err));
        *taken += k;
        if (v->stream) {
            GF_TRY(s->err, sizeof s->err, cudaEventRecord(v->ev[v->next_ev], v->stream));
            v->ev_end[v->next_ev] = *taken;
            v->next_ev = (v->next_ev + 1) % LEVEL_EVENTS;
            v->nev += v->nev < LEVEL_EVENTS;
        }
    }
    return GF_OK;
}

/* Level l, on its own stream: its complete blocks, after the input ring's
 * last copy. */
static gf_status level_start(cuda_state *s, nupc_levels *n, size_t l, uint64_t given)
{
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(n->level[l].stream, n->staged, 0));
    return level_queue(s, n, l, given);
}

/* The compute stream waits for level v's runs up to input frame `need`:
 * the event of the earliest run kept that covers it (the latest does);
 * nothing where it has waited for one that does (a run covers S_l frames,
 * a chunk's need moves by F). */
static gf_status level_join(cuda_state *s, nupc_level *v, uint64_t need)
{
    if (v->joined >= need)
        return GF_OK;
    int best = -1;
    for (int i = 0; i < v->nev; i++)
        if (v->ev_end[i] >= need && (best < 0 || v->ev_end[i] < v->ev_end[best]))
            best = i;
    if (best >= 0) {
        GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(s->compute, v->ev[best], 0));
        v->joined = v->ev_end[best];
    }
    return GF_OK;
}

/* The chunk at sl->d_in (whole blocks of B; no halo): into the input ring;
 * the levels on their own streams queue what it completes, the others run
 * in line; the compute stream waits for the outputs the chunk's sum reads
 * and sums them into sl->d_out. */
static gf_status run_nupc(cuda_state *s, cuda_slot *sl, const gf_chunk *c)
{
    nupc_levels *n = s->nupc;
    const uint64_t given = n->pos + c->frames;
    cudaGetLastError();
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->uploaded, sl->stream));
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(s->compute, sl->uploaded, 0));
    GF_TRY(s->err, sizeof s->err,
           ring_put(s, n, n->pos, (const unsigned char *)sl->d_in, c->frames));
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(n->staged, s->compute));
    /* The levels on their own streams, staggered (gf_nupc_stagger). */
    const uint32_t start = gf_nupc_stagger(n->lv, n->L, n->async, n->taken, given);
    for (size_t l = 0; l < n->L; l++)
        if (start >> l & 1)
            GF_TRY(s->err, sizeof s->err, level_start(s, n, l, given));
    for (size_t l = 0; l < n->L; l++)
        if (!n->async[l])
            GF_TRY(s->err, sizeof s->err, level_queue(s, n, l, given));
    for (size_t l = 0; l < n->L; l++)
        if (n->async[l] && given > n->lv[l].offset) /* its outputs up to `given` */
            GF_TRY(s->err, sizeof s->err, level_join(s, &n->level[l], given - n->lv[l].offset));
    if (c->frames > c->skip)
        GF_TRY(s->err, sizeof s->err,
               s->p.precision == GF_PRECISION_F32
                   ? sum_queue<float>(s, n, c->frames, c->skip, sl->d_out)
                   : sum_queue<double>(s, n, c->frames, c->skip, sl->d_out));
    n->pos = given;
    GF_TRY(s->err, sizeof s->err, cudaEventRecord(sl->computed, s->compute));
    GF_TRY(s->err, sizeof s->err, cudaStreamWaitEvent(sl->stream, sl->computed, 0));
    return GF_OK;
}

/* Zero history: every stream idle, each level's delay line and outputs
 * cleared (the first o_l output frames read as zeros), the stream at 0. */
static gf_status reset_nupc(cuda_state *s)
{
    nupc_levels *n = s->nupc;
    GF_TRY(s->err, sizeof s->err, cudaSetDevice(s->dev));
    for (size_t l = 0; l < n->L; l++)
        if (n->level[l].stream)
            GF_TRY(s->err, sizeof s->err, cudaStreamSynchronize(n->level[l].stream));
    for (size_t l = 0; l < n->L; l++) {
        nupc_level *v = &n->level[l];
        GF_TRY(s->err, sizeof s->err,
               gf::fft_conv_reset(v->fft, s->compute, s->err, sizeof s->err));
        GF_TRY(s->err, sizeof s->err,
               cudaMemsetAsync(v->ring, 0, v->R * (size_t)s->p.channels * s->ss, s->compute));
        n->taken[l] = 0;
        v->nev = 0;
        v->next_ev = 0;
        v->joined = 0;
    }
    n->pos = 0;
    GF_TRY(s->err, sizeof s->err, cudaStreamSynchronize(s->compute));
    return GF_OK;
}

/* At destroy (or after a failed create): the levels, their streams and
 * events, the ring, the compute stream. */
static void release_nupc(cuda_state *s)
{
    nupc_levels *n = s->nupc;
    if (n) {
        for (size_t l = 0; l < n->L; l++) {
            nupc_level *v = &n->level[l];
            if (v->stream) {
                cudaStreamSynchronize(v->stream);
                cudaStreamDestroy(v->stream);
            }
            for (int i = 0; i < LEVEL_EVENTS; i++)
                if (v->ev[i])
                    cudaEventDestroy(v->ev[i]);
            gf::fft_conv_destroy(v->fft);
            cudaFree(v->ring);
        }
        if (n->staged)
            cudaEventDestroy(n->staged);
        cudaFree(n->in);
        free(n);
        s->nupc = NULL;
    }
    if (s->compute)
        cudaStreamDestroy(s->compute);
    cudaGetLastError(); /* teardown reports nothing */
}

const cuda_method cuda_nupc = {setup_nupc, slot_setup_nupc, run_nupc,    NULL,
                               NULL,       reset_nupc,      release_nupc};
