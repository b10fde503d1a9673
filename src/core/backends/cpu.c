/*
 * Threaded, vectorised CPU backend: the fallback where no GPU is present.
 *
 * A chunk's outputs are split into contiguous ranges, one per worker; the
 * calling thread takes the first range itself. Workers are started at create
 * time and sleep on a condition variable between chunks. Each output is
 * summed in the reference's order (cpu_fir.h), so results are
 * bit-identical to the reference whatever the thread count.
 *
 * Methods are small interfaces inside the backend (cpu_method: set-up,
 * filter one chunk, reset), chosen once at create, as in the cuda
 * backend; the threads, their jobs and the histograms are the same for
 * every method. A job is a function over units that the threads share out
 * (cpu_job). The direct method is one job over the chunk's outputs; the
 * FFT method (cpu_fft.c) is two, the forward transforms and then the
 * outputs, each a set of units (a block of one channel) that the threads
 * take one at a time; each unit's arithmetic does not depend on which
 * thread runs it. The NUPC method (cpu_nupc.c) runs those two jobs for each
 * of its levels in turn, on the level's own FFT state.
 *
 * Histograms run after the filter, as a further job: the chunk's partials
 * (one per block segment and channel) are shared out among the threads,
 * each computed whole by one of them (hist_count.c), so the counts do not
 * depend on the thread count either.
 */
#include "backend.h"
#include "cpu_fft.h"
#include "cpu_nupc.h"
#include "fft/fft.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the toolchain supports function multi-versioning, build the
 * vector body twice (AVX2 and baseline) and let the loader pick. AVX2 does
 * not imply FMA, and -ffp-contract=off forbids contraction anyway. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GF_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GF_CPU_CLONES
#endif

#define GF_T     float
#define GF_FN(x) x##_f32
#include "cpu_fir.h"

#define GF_T     double
#define GF_FN(x) x##_f64
#include "cpu_fir.h"

/* The FFT method where the build has an FFT library (CMake's GPUFILT_FFT):
 * FFTW for both precisions, KissFFT for f32. */
#if defined(GPUFILT_FFT_FFTW)
#define GF_CPU_FFT_F32 (GF_METHOD_BIT(GF_METHOD_FFT) | GF_METHOD_BIT(GF_METHOD_NUPC))
#define GF_CPU_FFT_F64 (GF_METHOD_BIT(GF_METHOD_FFT) | GF_METHOD_BIT(GF_METHOD_NUPC))
#elif defined(GPUFILT_FFT_KISS)
#define GF_CPU_FFT_F32 (GF_METHOD_BIT(GF_METHOD_FFT) | GF_METHOD_BIT(GF_METHOD_NUPC))
#define GF_CPU_FFT_F64 0u
#else
#define GF_CPU_FFT_F32 0u
#define GF_CPU_FFT_F64 0u
#endif

/* Below this many multiply-adds a chunk is filtered on the calling thread:
 * waking workers costs more than it saves. */
#define CPU_PARALLEL_MIN_MACS (1u << 18)
/* Likewise for histograms: samples per chunk below which one thread does
 * them all. */
#define CPU_PARALLEL_MIN_HIST (1u << 15)

typedef struct cpu_state cpu_state;

/* Work the threads share out: units [a, b) of chunk c on thread `thread`
 * (0: the calling thread). */
typedef struct cpu_job {
    void (*run)(cpu_state *s, const gf_chunk *c, ptrdiff_t a, ptrdiff_t b, int thread);
    /* 1: shares end on 64-sample multiples (flat outputs, so neighbouring
     * threads do not share cache lines); 0: even shares of whole units. */
    int aligned;
    /* 1: instead, each thread takes one unit at a time from a shared
     * counter until none is left (large units: a thread the reader, the
     * writer or another program holds up does not keep the others
     * waiting at the end of the job). */
    int dynamic;
} cpu_job;

/* A method inside the backend. */
typedef struct cpu_method {
    /* At create, before the workers start; NULL for nothing to set up. */
    gf_status (*setup)(cpu_state *s, char *detail, size_t detail_size);
    /* Filter chunk c (its histograms follow, whatever the method). */
    void (*run)(cpu_state *s, const gf_chunk *c);
    /* Forget the stream's history; NULL: keeps none. */
    void (*reset)(cpu_state *s);
} cpu_method;
static const cpu_method cpu_direct, cpu_fft, cpu_nupc; /* below */

typedef struct cpu_worker {
    cpu_state *s;
    int index;
    pthread_t thread;
} cpu_worker;

struct cpu_state {
    gf_backend_params p;
    const cpu_method *m; /* the method: direct, FFT or NUPC */
    int nthreads;        /* including the calling thread */
    int nworkers;        /* started threads: nthreads - 1 */
    cpu_worker workers[GF_MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;
    int busy; /* workers still on the current job */
    int stop;
    const gf_chunk *chunk;    /* the job's chunk */
    const cpu_job *job;       /* what the threads do with it */
    ptrdiff_t job_n0, job_n1; /* the job's units */
    atomic_ptrdiff_t next;    /* a dynamic job's next unit */
    gf_cpu_fft *fft;          /* the FFT method's state, or NULL */
    gf_cpu_nupc *nupc;        /* the NUPC method's state, or NULL */
    gf_cpu_fft *job_fft;      /* the FFT jobs' state: fft, or a NUPC level's */
    gf_hist_plan hist;
    int has_hist;
    size_t hist_first; /* the job's first segment length */
    /* A chunk's frames and outputs where the engine left zeros to make or
     * outputs not to write, or frames to take from another instance
     * (cpu_submit): made at the first such chunk. */
    unsigned char *zin, *zout;
    /* gf_chunk.keep_prime: the history this instance primed its segment
     * with (kept_frames of it), for another instance's lend_peer. Several
     * cpu instances are a test of multi.c (GPUFILT_CPU_INSTANCES): taking
     * frames from here rather than from `in` checks the engine's offsets
     * without a GPU. */
    unsigned char *kept;
    size_t kept_frames;
};

/* Direct method: flat outputs [n0, n1). */
static void run_range(cpu_state *s, const gf_chunk *c, ptrdiff_t n0, ptrdiff_t n1, int thread)
{
    (void)thread;
    if (s->p.precision == GF_PRECISION_F32)
        run_range_f32(&s->p, c, n0, n1);
    else
        run_range_f64(&s->p, c, n0, n1);
}

/* Histogram partials [i0, i1). */
static void run_parts(cpu_state *s, const gf_chunk *c, ptrdiff_t i0, ptrdiff_t i1, int thread)
{
    (void)thread;
    const size_t ss = s->p.precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    gf_hist_count_parts(&s->hist, s->hist.of_input ? c->in : c->out, ss, c->hist_frames,
                        s->hist_first, c->hist, (size_t)i0, (size_t)i1);
}

/* FFT method: forward units, then output units (cpu_fft.h). */
static void run_fft_forward(cpu_state *s, const gf_chunk *c, ptrdiff_t u0, ptrdiff_t u1, int thread)
{
    gf_cpu_fft_forward(s->job_fft, c, (size_t)u0, (size_t)u1, thread);
}

static void run_fft_output(cpu_state *s, const gf_chunk *c, ptrdiff_t u0, ptrdiff_t u1, int thread)
{
    gf_cpu_fft_output(s->job_fft, c, (size_t)u0, (size_t)u1, thread);
}

static const cpu_job job_fir = {run_range, 1, 0};
static const cpu_job job_hist = {run_parts, 0, 0};
static const cpu_job job_fft_forward = {run_fft_forward, 0, 1};
static const cpu_job job_fft_output = {run_fft_output, 0, 1};

/* Part `index` of `parts` of the partials [n0, n1): contiguous, even shares. */
static void split_parts(ptrdiff_t n0, ptrdiff_t n1, int index, int parts, ptrdiff_t *a,
                        ptrdiff_t *b)
{
    *a = n0 + (n1 - n0) * index / parts;
    *b = n0 + (n1 - n0) * (index + 1) / parts;
}

/* Part `index` of `parts` of [n0, n1), boundaries on 64-sample multiples so
 * neighbouring threads do not share cache lines of output. */
static void split(ptrdiff_t n0, ptrdiff_t n1, int index, int parts, ptrdiff_t *a, ptrdiff_t *b)
{
    const ptrdiff_t len = n1 - n0;
    ptrdiff_t per = (len + parts - 1) / parts;
    per = (per + 63) & ~(ptrdiff_t)63;
    *a = n0 + per * index;
    *b = *a + per;
    if (*a > n1)
        *a = n1;
    if (*b > n1)
        *b = n1;
}

/* Share `index` of `parts` of a job (the whole with parts = 1). */
static void run_share(cpu_state *s, const gf_chunk *c, const cpu_job *job, ptrdiff_t n0,
                      ptrdiff_t n1, int index, int parts)
{
    ptrdiff_t a, b;
    if (job->dynamic && parts > 1) {
        for (a = atomic_fetch_add(&s->next, 1); a < n1; a = atomic_fetch_add(&s->next, 1))
            job->run(s, c, a, a + 1, index);
        return;
    }
    if (job->aligned)
        split(n0, n1, index, parts, &a, &b);
    else
        split_parts(n0, n1, index, parts, &a, &b);
    if (a < b)
        job->run(s, c, a, b, index);
}

static void *worker_main(void *arg)
{
    cpu_worker *w = arg;
    cpu_state *s = w->s;
    unsigned long seen = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->generation == seen)
            pthread_cond_wait(&s->wake, &s->mu);
        if (s->stop)
            break;
        seen = s->generation;
        const gf_chunk *c = s->chunk;
        const cpu_job *job = s->job;
        const ptrdiff_t n0 = s->job_n0, n1 = s->job_n1;
        pthread_mutex_unlock(&s->mu);
        run_share(s, c, job, n0, n1, w->index, s->nthreads);
        pthread_mutex_lock(&s->mu);
        if (--s->busy == 0)
            pthread_cond_signal(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void cpu_destroy(void *state)
{
    cpu_state *s = state;
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nworkers; i++)
        pthread_join(s->workers[i].thread, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->mu);
    gf_cpu_fft_destroy(s->fft);
    gf_cpu_nupc_destroy(s->nupc);
    free(s->zin);
    free(s->zout);
    free(s->kept);
    free(s);
}

static gf_status cpu_create(const gf_backend_params *p, void **state, char *detail,
                            size_t detail_size)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return GF_ERR_NO_MEMORY;
    s->p = *p;
    if (p->hist) {
        s->hist = *p->hist;
        s->has_hist = 1;
    }
    s->p.hist = NULL;
    int n = p->threads;
    if (n <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int)online : 1;
    }
    s->nthreads = n > GF_MAX_THREADS ? GF_MAX_THREADS : n;
    s->m = p->method == GF_METHOD_FFT    ? &cpu_fft
           : p->method == GF_METHOD_NUPC ? &cpu_nupc
                                         : &cpu_direct;
    if (s->m->setup) {
        const gf_status st = s->m->setup(s, detail, detail_size);
        if (st != GF_OK) {
            free(s);
            return st;
        }
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    pthread_cond_init(&s->done, NULL);
    for (int i = 1; i < s->nthreads; i++) {
        cpu_worker *w = &s->workers[s->nworkers];
        w->s = s;
        w->index = i;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            gf_detail(detail, detail_size, "cpu backend: cannot start worker thread %d", i);
            cpu_destroy(s);
            return GF_ERR_THREAD;
        }
        s->nworkers++;
    }
    *state = s;
    return GF_OK;
}

/* Run a job over [n0, n1) on every thread; the caller takes the first share. */
static void run_job(cpu_state *s, const gf_chunk *c, const cpu_job *job, ptrdiff_t n0, ptrdiff_t n1)
{
    pthread_mutex_lock(&s->mu);
    s->chunk = c;
    s->job = job;
    s->job_n0 = n0;
    s->job_n1 = n1;
    atomic_store(&s->next, n0);
    s->busy = s->nworkers;
    s->generation++;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->mu);

    run_share(s, c, job, n0, n1, 0, s->nthreads);

    pthread_mutex_lock(&s->mu);
    while (s->busy > 0)
        pthread_cond_wait(&s->done, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void cpu_hist(cpu_state *s, const gf_chunk *c)
{
    const size_t nseg = gf_hist_segments(&s->hist, c->hist_pos, c->hist_frames, &s->hist_first);
    const ptrdiff_t nparts = (ptrdiff_t)(nseg * (size_t)s->hist.nrec);
    if (s->nworkers == 0 || nparts < 2 ||
        c->hist_frames * (size_t)s->p.channels < CPU_PARALLEL_MIN_HIST)
        run_parts(s, c, 0, nparts, 0);
    else
        run_job(s, c, &job_hist, 0, nparts);
}

/* A job of n units of about `work` multiply-adds each, on the calling
 * thread alone when waking workers would cost more than it saves. */
static void run_units(cpu_state *s, const gf_chunk *c, const cpu_job *job, size_t n, size_t work)
{
    if (s->nworkers == 0 || n < 2 || n * work < CPU_PARALLEL_MIN_MACS)
        run_share(s, c, job, 0, (ptrdiff_t)n, 0, 1);
    else
        run_job(s, c, job, 0, (ptrdiff_t)n);
}

/* Direct method: the chunk's outputs past skip, one job (nothing to do
 * when every output is skipped). */
static void run_direct(cpu_state *s, const gf_chunk *c)
{
    const ptrdiff_t C = s->p.channels;
    const ptrdiff_t n0 = (ptrdiff_t)c->skip * C, n1 = (ptrdiff_t)c->frames * C;
    if (n1 <= n0)
        return;
    if (s->nworkers == 0 || (size_t)(n1 - n0) * s->p.num_taps < CPU_PARALLEL_MIN_MACS)
        run_range(s, c, n0, n1, 0);
    else
        run_job(s, c, &job_fir, n0, n1);
}

static const cpu_method cpu_direct = {NULL, run_direct, NULL};

/* FFT method: transforms and delay line, one set of plans per thread. */
static gf_status setup_fft(cpu_state *s, char *detail, size_t detail_size)
{
    return gf_cpu_fft_create(&s->p, s->nthreads, &s->fft, detail, detail_size);
}

/* Chunk c through FFT state f (P-frame partitions of T taps) on the
 * threads. Every chunk, even one whose outputs are all skipped: the delay
 * line must see every block. */
static void run_fft_on(cpu_state *s, gf_cpu_fft *f, size_t P, size_t T, const gf_chunk *c)
{
    const size_t K = (T + P - 1) / P;
    s->job_fft = f;
    run_units(s, c, &job_fft_forward, gf_cpu_fft_units(f, c), 8 * P);
    run_units(s, c, &job_fft_output, gf_cpu_fft_output_units(f, c), 2 * (K + 8) * P);
    gf_cpu_fft_end(f, c);
}

/* gf_chunk.prime_frames (several instances by time, multi.c): the delay
 * line forgets its history and takes in the prime_frames frames that end
 * at c->in (the end of the halo's history_frames), forward transforms
 * only, in pieces of a chunk: what one instance that saw the stream holds
 * where it matters (the oldest block's spectrum, windowed over zeros, is
 * K blocks back: no output reads it). */
static void prime_fft(cpu_state *s, const gf_chunk *c)
{
    gf_cpu_fft *f = s->fft;
    const size_t C = (size_t)s->p.channels, P = s->p.partition;
    const size_t ss = s->p.precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    const size_t piece = s->p.chunk_frames / P * P, bytes = C * ss;
    const unsigned char *from =
        (const unsigned char *)c->halo + (s->p.history_frames - c->prime_frames) * bytes;
    gf_cpu_fft_reset(f);
    s->job_fft = f;
    for (size_t done = 0; done < c->prime_frames;) {
        const size_t n = c->prime_frames - done < piece ? c->prime_frames - done : piece;
        const gf_chunk pc = {.in = from + done * bytes, .frames = n};
        run_units(s, &pc, &job_fft_forward, gf_cpu_fft_units(f, &pc), 8 * P);
        gf_cpu_fft_end(f, &pc);
        done += n;
    }
}

static void run_fft(cpu_state *s, const gf_chunk *c)
{
    if (c->prime_frames)
        prime_fft(s, c);
    run_fft_on(s, s->fft, s->p.partition, s->p.num_taps, c);
}

static void reset_fft(cpu_state *s)
{
    gf_cpu_fft_reset(s->fft);
}

static const cpu_method cpu_fft = {setup_fft, run_fft, reset_fft};

/* NUPC method: one FFT state per level (cpu_nupc.h), each level's blocks
 * on the threads as the FFT method's. */
static gf_status setup_nupc(cpu_state *s, char *detail, size_t detail_size)
{
    return gf_cpu_nupc_create(&s->p, s->nthreads, &s->nupc, detail, detail_size);
}

static void run_nupc_level(void *ctx, gf_cpu_fft *f, const gf_chunk *lc)
{
    cpu_state *s = ctx;
    /* K only sizes the work for run_units' threshold: a level's own. */
    run_fft_on(s, f, gf_cpu_fft_partition(f), gf_cpu_fft_taps(f), lc);
}

static void run_nupc(cpu_state *s, const gf_chunk *c)
{
    gf_cpu_nupc_chunk(s->nupc, c, run_nupc_level, s);
}

static void reset_nupc(cpu_state *s)
{
    gf_cpu_nupc_reset(s->nupc);
}

static const cpu_method cpu_nupc = {setup_nupc, run_nupc, reset_nupc};

static void cpu_reset(void *state)
{
    cpu_state *s = state;
    if (s->m->reset)
        s->m->reset(s);
    s->kept_frames = 0;
}

static void run_chunk(cpu_state *s, const gf_chunk *c)
{
    s->m->run(s, c);
    if (s->has_hist)
        cpu_hist(s, c);
}

/* gf_chunk.keep_prime: the whole history this chunk primes with (the FFT
 * method's), kept; where there is no room, nothing is (lenders then read
 * `in`). */
static void keep_prime(cpu_state *s, const gf_chunk *c, size_t fb)
{
    s->kept_frames = 0;
    if (s->m != &cpu_fft || c->prime_frames != s->p.history_frames || !c->halo)
        return;
    if (!s->kept && !(s->kept = malloc(s->p.history_frames * fb)))
        return;
    memcpy(s->kept, c->halo, s->p.history_frames * fb);
    s->kept_frames = s->p.history_frames;
}

/* The instance whose kept history holds chunk c's frames [lend_first,
 * real), or NULL. */
static const cpu_state *lender(const cpu_state *s, const gf_chunk *c, size_t real)
{
    const cpu_state *from = c->lend_peer;
    if (!from || s->m != &cpu_fft || c->prime_frames || c->lend_first >= real ||
        from->kept_frames < c->lend_offset + (real - c->lend_first))
        return NULL;
    return from;
}

/* A chunk that ends in zeros the engine did not write (gf_chunk.zero_frames)
 * or in outputs not to write (drop_tail), a stream's last, or whose frames
 * come in part from another instance (lend_peer): filtered in the
 * backend's own buffers, the zeros made there, the outputs copied out. */
static gf_status cpu_submit(void *state, int slot, const gf_chunk *c)
{
    cpu_state *s = state;
    (void)slot;
    const size_t ss = s->p.precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    const size_t fb = (size_t)s->p.channels * ss;
    const size_t fbo = (size_t)(s->p.outputs ? s->p.outputs : s->p.channels) * ss;
    const size_t real = c->frames - c->zero_frames;
    if (c->keep_prime)
        keep_prime(s, c, fb);
    const cpu_state *from = lender(s, c, real);
    if (!c->zero_frames && !c->drop_tail && !from) {
        run_chunk(s, c);
        return GF_OK;
    }
    if (!s->zin && (!(s->zin = malloc(s->p.chunk_frames * fb)) ||
                    !(s->zout = malloc(s->p.chunk_frames * fbo)))) {
        free(s->zin);
        s->zin = NULL;
        return GF_ERR_NO_MEMORY;
    }
    const size_t up = from ? c->lend_first : real; /* the frames read from `in` */
    if (up)
        memcpy(s->zin, c->in, up * fb);
    if (from)
        memcpy(s->zin + up * fb, from->kept + c->lend_offset * fb, (real - up) * fb);
    memset(s->zin + real * fb, 0, c->zero_frames * fb);
    gf_chunk w = *c;
    w.in = s->zin;
    w.zero_frames = 0;
    const int own_out = c->zero_frames || c->drop_tail; /* (not for lent frames alone) */
    if (own_out) {
        w.out = s->zout;
        w.drop_tail = 0;
    }
    run_chunk(s, &w);
    if (own_out)
        memcpy(c->out, s->zout, (c->frames - c->skip - c->drop_tail) * fbo);
    return GF_OK;
}

const gf_backend_ops gf_backend_cpu = {
    .name = "cpu",
    .device = GF_DEVICE_CPU,
    .slots = 1,
    .chunk_samples = (size_t)1 << 18,
    .methods_f32 = GF_METHOD_BIT(GF_METHOD_DIRECT) | GF_CPU_FFT_F32,
    .methods_f64 = GF_METHOD_BIT(GF_METHOD_DIRECT) | GF_CPU_FFT_F64,
    .histograms = 1,
    .matrix = 1,
    .primes = 1,    /* the FFT method's (prime_fft); GPUFILT_CPU_INSTANCES runs multi.c on it */
    .zero_tail = 1, /* (cpu_submit) */
    .lends = 1,     /* (cpu_submit: several instances, a test of multi.c) */
    .auto_rank = 1, /* the fallback */
    .available = gf_sync_available,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .reset = cpu_reset,
    .host_alloc = gf_sync_host_alloc,
    .host_free = gf_sync_host_free,
    .direct_ok = gf_sync_direct_ok,
    .submit = cpu_submit,
    .query = gf_sync_query,
    .wait = gf_sync_wait,
    .error = gf_sync_error,
};
