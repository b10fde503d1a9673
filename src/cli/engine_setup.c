/*
 * Engines from the options, shared by files, pipes and live audio: the
 * device policy (cli.h states it), the configuration, creation and failure
 * messages, and the histogram settings.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Measured on an H200 machine (bench/NOTES.md): starting CUDA costs about
 * 0.3 s; the CPU backend does at least 2e9 multiply-adds a second per core. */
#define GPU_STARTUP_S     0.3
#define CPU_MACS_PER_CORE 2e9
/* A file on a GPU already started (a batch's worker): the engine's set-up
 * and the transfers, which a file of less CPU work than this does not
 * repay. */
#define GPU_FILE_S 0.02
/* A stream of unknown length is judged per this many frames (about six
 * minutes at 48 kHz). */
#define STREAM_FRAMES ((int64_t)1 << 24)
/* Live audio: the share of a block's period one core may spend. */
#define LIVE_CPU_SHARE 0.1

/* The method the job runs on `device`. */
static gf_method method_on(const gf_cli_options *o, const gf_job *j, gf_device device)
{
    return o->method != GF_METHOD_AUTO
               ? o->method
               : gf_method_choose(j->taps, j->channels, o->precision, device, o->partition);
}

/* The hand-off applies: a file or pipe, the direct method on the CPU (its
 * output is the same on every backend), and a CUDA backend in this build
 * (asking whether a device is usable is itself start-up). */
static int can_hand_off(const gf_cli_options *o, const gf_job *j)
{
    return j->block == 0 && method_on(o, j, GF_DEVICE_CPU) == GF_METHOD_DIRECT &&
           gf_backend_built(GF_DEVICE_CUDA);
}

gf_device gf_cli_choose_device(const gf_cli_options *o, const gf_job *j, gf_device *handoff,
                               char *why, size_t n)
{
    char buf[160];
    if (!why) {
        why = buf;
        n = sizeof buf;
    }
    why[0] = '\0';
    if (handoff)
        *handoff = GF_DEVICE_NONE;
    if (o->device != GF_DEVICE_AUTO)
        return o->device;
    /* The CPU's work per frame: the method it would run, in direct
     * multiply-adds (the library's cost model); live audio runs the direct
     * method where its block cannot be the FFT partition. */
    const size_t partition = j->block ? gf_cli_live_partition(j->block) : o->partition;
    const gf_method method = j->block && !partition ? GF_METHOD_DIRECT : o->method;
    const double macs_per_frame =
        (double)j->channels * gf_method_cost(j->taps, GF_DEVICE_CPU, method, partition);
    int need_gpu;
    if (j->block > 0) {
        const double cpu_s = (double)j->block * macs_per_frame / CPU_MACS_PER_CORE;
        const double period = (double)j->block / j->rate;
        need_gpu = cpu_s > LIVE_CPU_SHARE * period;
        snprintf(why, n, "auto: about %.2g ms of work per %.2g ms block on one core", 1e3 * cpu_s,
                 1e3 * period);
    } else {
        const int unknown = j->frames < 0;
        const int threads = o->policy_threads > 0 ? o->policy_threads : o->threads;
        long cores = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
        if (cores < 1)
            cores = 1;
        const double frames = (double)(unknown ? STREAM_FRAMES : j->frames);
        const double cpu_s = frames * macs_per_frame / ((double)cores * CPU_MACS_PER_CORE);
        if (o->gpu_warm && method_on(o, j, GF_DEVICE_CPU) == GF_METHOD_DIRECT &&
            method_on(o, j, GF_DEVICE_CUDA) == GF_METHOD_DIRECT) {
            need_gpu = cpu_s >= GPU_FILE_S;
            snprintf(why, n, "auto: about %.3g s of work on the CPU, %s", cpu_s,
                     need_gpu ? "for this batch's worker, whose GPU is started"
                              : "too little to repay even a started GPU");
        } else if (handoff && cpu_s >= GPU_STARTUP_S && can_hand_off(o, j)) {
            /* Start on the CPU at once; the GPU takes the rest once started.
             * `why` says what was decided, not how it turned out: the
             * summary says that (whether the GPU took over, or why not). */
            *handoff = GF_DEVICE_CUDA;
            snprintf(why, n,
                     "auto: about %.3g s of work on the CPU%s, enough to start the GPU and hand "
                     "it the stream",
                     cpu_s, unknown ? " per 2^24 frames" : "");
            return GF_DEVICE_CPU;
        } else {
            need_gpu = cpu_s >= 2 * GPU_STARTUP_S;
            snprintf(why, n, "auto: about %.3g s of work%s%s", cpu_s, need_gpu ? " on the CPU" : "",
                     unknown ? " per 2^24 frames" : "");
            if (!need_gpu) {
                const size_t len = strlen(why);
                snprintf(why + len, n - len, ", too little to repay starting a GPU");
            }
        }
    }
    if (!need_gpu)
        return GF_DEVICE_CPU;
    if (!gf_cuda_available()) {
        snprintf(why, n, "auto: no usable GPU");
        return GF_DEVICE_CPU;
    }
    return GF_DEVICE_CUDA;
}

/* One GPU's direct multiply-adds a second, measured (H200, bench_multi);
 * several GPUs by default above this much work for one. */
#define GPU_MACS    1e13
#define GPU_MULTI_S 1.0

int gf_cli_choose_gpus(const gf_cli_options *o, const gf_job *j, int *out)
{
    if (o->gpu_rank >= 0) { /* gpufilt-mpi: one GPU per rank */
        int n = o->ngpus > 0 ? o->ngpus : 0;
        if (n == 0 && (gf_cuda_device_count(&n) != GF_OK || n == 0))
            return 0;
        out[0] = o->ngpus > 0 ? o->gpus[o->gpu_rank % n] : o->gpu_rank % n;
        return 1;
    }
    if (o->ngpus == 0) {
        const gf_method m = o->method != GF_METHOD_AUTO
                                ? o->method
                                : gf_method_choose(j->taps, j->channels, o->precision,
                                                   GF_DEVICE_CUDA, o->partition);
        const double gpu_s = (double)j->frames * j->channels * (double)j->taps / GPU_MACS;
        if (j->block || j->frames < 0 || m != GF_METHOD_DIRECT || gpu_s < GPU_MULTI_S)
            return 0;
    }
    const int n = gf_cli_gpu_list(o, out);
    return n >= 2 || o->ngpus > 0 ? n : 0; /* all of one GPU: cuda_device alone */
}

int gf_cli_gpu_list(const gf_cli_options *o, int *out)
{
    if (o->ngpus > 0) {
        memcpy(out, o->gpus, (size_t)o->ngpus * sizeof *out);
        return o->ngpus;
    }
    int n = 0;
    if (gf_cuda_device_count(&n) != GF_OK || n <= 0)
        return 0;
    n = n < GF_MAX_DEVICES ? n : GF_MAX_DEVICES;
    for (int d = 0; d < n; d++)
        out[d] = d;
    return n;
}

void gf_cli_list_gpus(void)
{
    int n = 0;
    if (!gf_backend_built(GF_DEVICE_CUDA) || gf_cuda_device_count(&n) != GF_OK || n == 0) {
        printf("GPUs: none (%s)\n", gf_backend_built(GF_DEVICE_CUDA)
                                        ? "no usable CUDA device"
                                        : "this gpufilt was built without CUDA");
        return;
    }
    printf("GPUs (--gpus N[,M...] or all):\n");
    for (int i = 0; i < n; i++) {
        gf_cuda_device d;
        if (gf_cuda_device_info(i, &d) != GF_OK) {
            printf("  %d: (cannot be queried)\n", i);
            continue;
        }
        printf("  %d: %s, %.1f GiB (%.1f free), compute capability %d.%d, %d multiprocessors\n", i,
               d.name, (double)d.total_bytes / (1 << 30), (double)d.free_bytes / (1 << 30), d.major,
               d.minor, d.multiprocessors);
    }
}

int gf_cli_make_wisdom(const gf_cli_options *o)
{
    /* Every size at once would write nothing until the end: one size at a
     * time, each file complete (FFTW's wisdom accumulates). */
    enum { FIRST = 32 };
    /* To the transform of the cpu's largest default partition. */
    const size_t LAST =
        2 * (o->partition ? o->partition : gf_partition_choose(GF_MAX_FFT_TAPS, GF_DEVICE_CPU));
    char detail[512];
    int sizes = 0;
    for (size_t n = FIRST; n <= LAST; n *= 2, sizes++) {
        const double t0 = gf_now();
        const gf_status st = gf_fft_wisdom_make(o->make_wisdom, &n, 1, detail, sizeof detail);
        if (st != GF_OK) {
            gf_cli_error("--make-fft-wisdom: %s", *detail ? detail : gf_strerror(st));
            return st == GF_ERR_INVALID_ARGUMENT ? GF_EXIT_OUTPUT : GF_EXIT_USAGE;
        }
        if (!o->quiet)
            fprintf(stderr, "gpufilt: FFT wisdom: %zu points, f32 and f64: %.2f s\n", n,
                    gf_now() - t0);
    }
    if (!o->quiet)
        fprintf(stderr,
                "gpufilt: FFT wisdom for %d sizes (%d .. %zu points) written to '%s': use it with "
                "--fft-wisdom %s\n",
                sizes, FIRST, LAST, o->make_wisdom, o->make_wisdom);
    return GF_EXIT_OK;
}

size_t gf_cli_live_partition(size_t block)
{
    const int pow2 = (block & (block - 1)) == 0;
    return pow2 && block >= GF_MIN_PARTITION && block <= GF_MAX_PARTITION ? block : 0;
}

/* On the CPU, a filter this many partitions long takes the NUPC method: a
 * period's own work is a few small partitions', the larger ones run on
 * threads of their own ahead of when their outputs are due (cpu_nupc.c),
 * where the FFT method multiplies every partition of the filter every
 * period. */
#define LIVE_NUPC_PERIODS 1024
/* On the GPU, where channels x taps reach this too: below it the FFT
 * method's one pass over its delay line costs the worker as little as the
 * levels' launches or less, with shorter tails (live_bench on an H200,
 * 128-frame blocks, 2^20 taps, p99 of the period, FFT / NUPC: 2 channels
 * 2.9% / 7.6%, 32 6.2 / 7.7, 64 8.4-9.1 / 7.9-10.9, 128 15.5 / 10.3;
 * docs/live.md). */
#define LIVE_GPU_NUPC_WORK ((size_t)1 << 27)

int gf_cli_live_nupc(gf_device device, int channels, size_t taps, size_t partition)
{
    if (partition == 0 || taps / partition < LIVE_NUPC_PERIODS)
        return 0;
    return device == GF_DEVICE_CPU ||
           (device == GF_DEVICE_CUDA && (size_t)channels * taps >= LIVE_GPU_NUPC_WORK);
}

gf_config gf_cli_engine_config(const gf_cli_options *o, int channels, const gf_taps *t,
                               gf_device device, gf_device handoff)
{
    gf_config c = gf_config_default();
    c.channels = channels;
    c.num_taps = t->n;
    c.taps = t->h;
    c.taps_per_channel = t->filters > 1;
    c.mode = o->mode;
    c.method = o->method;
    c.partition = o->partition;
    c.precision = o->precision;
    c.chunk_frames = o->chunk;
    c.device = device;
    c.handoff = handoff;
    c.threads = o->threads;
    return c;
}

int gf_cli_engine_create(const gf_config *c, int fallback, gf_engine **e)
{
    char detail[512];
    gf_status st = gf_engine_create(c, e, detail, sizeof detail);
    if (st == GF_OK)
        return GF_EXIT_OK;
    if (fallback && c->device == GF_DEVICE_CUDA &&
        (st == GF_ERR_NO_MEMORY || st == GF_ERR_CUDA || st == GF_ERR_NO_DEVICE)) {
        gf_cli_warn("the GPU cannot take this filter (%s): filtering on the CPU", detail);
        gf_config cpu = *c;
        cpu.device = GF_DEVICE_CPU;
        return gf_cli_engine_create(&cpu, 0, e);
    }
    if (st == GF_ERR_NO_DEVICE) {
        gf_cli_error("--device %s: %s", gf_device_name(c->device), detail);
        return GF_EXIT_DEVICE;
    }
    if (st == GF_ERR_UNSUPPORTED) {
        gf_cli_error("%s", detail);
        return GF_EXIT_USAGE;
    }
    /* The detail may already say what the status says ("out of GPU memory: ..."). */
    const int says = strncmp(detail, "out of", 6) == 0;
    gf_cli_error("cannot set up the %s filter: %s%s%s", gf_device_name(c->device),
                 says ? "" : gf_strerror(st), *detail && !says ? ": " : "", detail);
    return st == GF_ERR_INVALID_ARGUMENT                           ? GF_EXIT_USAGE
           : st == GF_ERR_NO_MEMORY && c->device != GF_DEVICE_CUDA ? GF_EXIT_INTERNAL
                                                                   : GF_EXIT_DEVICE;
}

static size_t taps_count(const gf_config *c)
{
    const size_t filters = c->outputs            ? (size_t)c->channels * (size_t)c->outputs
                           : c->taps_per_channel ? (size_t)c->channels
                                                 : 1;
    return c->taps ? c->num_taps * filters : 0;
}

static int hist_same(const gf_hist_config *a, const gf_hist_config *b)
{
    if (!a || !b)
        return a == b;
    return a->bins == b->bins && a->block_frames == b->block_frames && a->lo == b->lo &&
           a->hi == b->hi && a->of_input == b->of_input && a->mix == b->mix;
}

static int config_same(const gf_config *a, const gf_config *b)
{
    const size_t n = taps_count(a);
    return a->num_taps == b->num_taps && a->taps_per_channel == b->taps_per_channel &&
           a->outputs == b->outputs && a->mode == b->mode && a->method == b->method &&
           a->partition == b->partition && a->precision == b->precision &&
           a->channels == b->channels && a->chunk_frames == b->chunk_frames &&
           a->device == b->device && a->handoff == b->handoff && a->threads == b->threads &&
           a->cuda_device == b->cuda_device && a->cuda_device_count == b->cuda_device_count &&
           (!a->cuda_device_count || memcmp(a->cuda_devices, b->cuda_devices,
                                            (size_t)a->cuda_device_count * sizeof(int)) == 0) &&
           !a->taps == !b->taps && (!n || memcmp(a->taps, b->taps, n * sizeof(double)) == 0) &&
           hist_same(a->hist, b->hist);
}

int gf_cli_engine_take(gf_engine_keep *k, const gf_config *c, gf_engine **e)
{
    if (!k || !k->e)
        return 0;
    if (!config_same(&k->c, c)) {
        gf_cli_engine_keep_free(k);
        return 0;
    }
    *e = k->e;
    k->e = NULL;
    return 1;
}

void gf_cli_engine_keep(gf_engine_keep *k, const gf_config *c, gf_engine *e)
{
    /* Not an engine the CPU stood in for (its notice is each file's), nor
     * one with a hand-off (each file's begins on the CPU). */
    if (!k || !e || c->outputs || c->handoff != GF_DEVICE_NONE ||
        gf_engine_device(e) != c->device || gf_engine_reset(e) != GF_OK) {
        gf_engine_destroy(e);
        return;
    }
    gf_cli_engine_keep_free(k);
    const size_t n = taps_count(c);
    if (n && !(k->taps = malloc(n * sizeof(double)))) {
        gf_engine_destroy(e);
        return;
    }
    if (n)
        memcpy(k->taps, c->taps, n * sizeof(double));
    k->c = *c;
    k->c.taps = n ? k->taps : NULL;
    if (c->hist) {
        k->hist = *c->hist;
        k->c.hist = &k->hist;
    }
    if (c->cuda_device_count) {
        memcpy(k->gpus, c->cuda_devices, (size_t)c->cuda_device_count * sizeof(int));
        k->c.cuda_devices = k->gpus;
    }
    k->e = e;
}

void gf_cli_engine_keep_free(gf_engine_keep *k)
{
    if (!k)
        return;
    gf_engine_destroy(k->e);
    free(k->taps);
    memset(k, 0, sizeof *k);
}

int gf_cli_engine_failed(gf_engine *e, gf_status st)
{
    const char *detail = gf_engine_error(e);
    gf_cli_error("%s backend failed: %s%s%s", gf_engine_backend(e), gf_strerror(st),
                 *detail ? ": " : "", detail);
    /* Out of memory is the host's (exit 1), unless the GPU's backend ran
     * out of its own (a cuFFT work area, say): a device error (exit 5). */
    return st == GF_ERR_NO_MEMORY && gf_engine_device(e) != GF_DEVICE_CUDA ? GF_EXIT_INTERNAL
                                                                           : GF_EXIT_DEVICE;
}

gf_hist_config gf_cli_hist_config(const gf_cli_options *o, int rate)
{
    return (gf_hist_config){
        .bins = o->hist_bins,
        .block_frames = o->hist_block ? o->hist_block
                        : rate > 0    ? (size_t)rate
                                      : 65536,
        .lo = o->hist_lo,
        .hi = o->hist_hi,
        .of_input = o->hist_of_input,
        .mix = o->hist_mix,
    };
}
