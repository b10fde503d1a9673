/*
 * live_bench: the live worker's cost per block, without an audio device.
 *
 * For each row (backend, channels, block size, taps) an engine set up
 * exactly as gpufilt --live sets it up (causal, f32, one block per chunk,
 * the FFT method's partition equal to the block where the cost model picks
 * FFT; the NUPC method with the block as its first partition for a
 * filter of 1024 blocks or more, on the GPU of 2^27 channel-taps or more
 * too (gf_cli_live_nupc), its larger levels on threads (CPU) or streams
 * (GPU) of their own, whose work is not the worker's unless it waits for
 * them; a row may name the method instead, to compare) filters a stream block
 * by block with push + submit + wait + pull,
 * the worker's round trip. After a warm-up, each block is timed; the
 * median, p99 and maximum are printed as a fraction of the block's period
 * at 48 kHz (block / 48000 s), the budget a real-time stream gives it.
 *
 *   live_bench [--blocks N] [--warmup N] [--device cpu|cuda|both] [--channels N]
 *
 * --channels N: only the rows of N channels (e.g. to profile one row).
 *
 * Each row's output is checked once: the last block's, channels 0 and C-1,
 * against the exact causal filter of the stream (double), within
 * 2^-24 (T + 2 log2(2T) + 8) sum|h| max|x|, which bounds the direct form's
 * round-off and the FFT method's (gpufilt.h). A row whose output is wrong
 * is no result.
 *
 * Rows marked "zero" are gpufilt --live --latency zero: the first 2 x
 * block taps filtered as the audio callback filters them (live/head.c),
 * timed on their own, and the rest by the engine (its taps 2 x block ..
 * T-1, partition = block), timed as the worker; each output frame is the
 * head's plus the tail's from 2 blocks before, checked the same way. The
 * percentages are then the larger of the two, the callback and the worker
 * (each has the period). NUPC rows feed a block every period, as audio
 * does (their larger levels' threads or streams work in that time); the others run
 * their blocks back to back.
 *
 * Targets, each a PASS/MISS line (SKIP without a usable GPU):
 *   cuda, 2 ch, 64-frame blocks, 4095 taps:        p99 <= 10% of the period
 *   cuda, 2 ch, 128-frame blocks, 2^20 taps:       p99 <= 10%
 *   cuda, 128 ch, 128-frame blocks, 2^20 taps:     p99 <= 15% (issue "Live audio")
 *   cpu, 2 ch, 256-frame blocks, 65536 taps:       p99 <= 50%
 *   zero: cuda, 2 ch, 64-frame blocks, 2^20 taps:  p99 <= 25% (callback and worker)
 *   zero: cpu, 2 ch, 128-frame blocks, 2^20 taps:  p99 <= 50%
 * The exit code is 0 unless an engine fails (2) or an output is wrong (1).
 */
#include "gpufilt.h"
#include "live/head.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct result {
    double median, p99, max; /* seconds */
    double err;              /* the output check: largest error / allowed */
} result;

typedef struct row {
    gf_device dev;
    int channels;
    size_t block, taps;
    double target;    /* p99 / period at most, or 0: no target */
    int zero;         /* --latency zero: a head in the callback, the tail on the worker */
    gf_method method; /* GF_METHOD_AUTO: as gpufilt --live; else this one (to compare) */
} row;

/* The table: the short filters on both backends, then the long ones. */
static const row rows[] = {
    {GF_DEVICE_CPU, 2, 64, 5, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 64, 255, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 64, 4095, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 256, 5, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 256, 255, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 256, 4095, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 1024, 4095, 0, 0, 0},
    {GF_DEVICE_CPU, 2, 256, 65536, 0.50, 0, 0},
    {GF_DEVICE_CUDA, 2, 64, 5, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 64, 255, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 64, 4095, 0.10, 0, 0},
    {GF_DEVICE_CUDA, 2, 256, 255, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 256, 4095, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 1024, 4095, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 128, 65536, 0, 0, 0},
    {GF_DEVICE_CUDA, 2, 128, 1 << 20, 0.10, 0, 0},
    {GF_DEVICE_CUDA, 128, 128, 1 << 20, 0.15, 0, 0},
    {GF_DEVICE_CUDA, 2, 128, 1 << 20, 0, 0, GF_METHOD_NUPC},
    {GF_DEVICE_CUDA, 32, 128, 1 << 20, 0, 0, GF_METHOD_FFT},
    {GF_DEVICE_CUDA, 32, 128, 1 << 20, 0, 0, GF_METHOD_NUPC},
    {GF_DEVICE_CUDA, 64, 128, 1 << 20, 0, 0, GF_METHOD_FFT},
    {GF_DEVICE_CUDA, 64, 128, 1 << 20, 0, 0, GF_METHOD_NUPC},
    {GF_DEVICE_CUDA, 128, 128, 1 << 20, 0, 0, GF_METHOD_FFT},
    {GF_DEVICE_CPU, 2, 128, 4095, 0, 1, 0},
    {GF_DEVICE_CPU, 2, 256, 65536, 0, 1, 0},
    {GF_DEVICE_CPU, 2, 128, 1 << 20, 0.50, 1, 0},
    {GF_DEVICE_CPU, 2, 128, 1 << 20, 0, 1, GF_METHOD_FFT},
    {GF_DEVICE_CUDA, 2, 64, 4095, 0, 1, 0},
    {GF_DEVICE_CUDA, 2, 64, 1 << 20, 0.25, 1, 0},
    {GF_DEVICE_CUDA, 2, 64, 1 << 20, 0, 1, GF_METHOD_NUPC},
};

/* What the output check needs: every input frame of channels 0 and C-1,
 * and the taps as the engine uses them (f32). */
typedef struct history {
    float *x[2];
    float *h;
    size_t frames; /* frames so far */
} history;

/* The block `out` (frames [f0, f0 + block) of the stream, C channels):
 * channels 0 and C-1 against the exact causal sums; returns the largest
 * error as a fraction of the allowed. */
static double check_block(const history *hs, size_t taps, int C, const float *out, size_t block,
                          size_t f0)
{
    double sum_h = 0, max_x = 0, worst = 0;
    for (size_t k = 0; k < taps; k++)
        sum_h += fabs((double)hs->h[k]);
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < hs->frames; i++)
            max_x = fmax(max_x, fabs((double)hs->x[s][i]));
    const double allowed = 0x1p-24 * ((double)taps + 2 * log2(2.0 * (double)taps) + 8) * sum_h *
                           (max_x > 0 ? max_x : 1);
    for (int s = 0; s < 2; s++)
        for (size_t t = 0; t < block; t++) {
            const size_t n = f0 + t;
            double e = 0;
            for (size_t k = 0; k < taps && k <= n; k++)
                e += (double)hs->h[k] * (double)hs->x[s][n - k];
            const double err = fabs((double)out[t * (size_t)C + (s ? (size_t)C - 1 : 0)] - e);
            worst = fmax(worst, isnan(err) ? INFINITY : err / allowed);
        }
    return worst;
}

/* The row's engine, set up as gpufilt --live sets it up; the taps as the
 * engine uses them (f32) into h. NULL after printing why. */
static gf_engine *make_engine(const row *w, float *h, gf_live_head *head)
{
    double *hd = malloc(w->taps * sizeof *hd);
    if (!hd) {
        printf("live_bench: out of memory\n");
        return NULL;
    }
    for (size_t k = 0; k < w->taps; k++) { /* a decaying response, as a room's */
        hd[k] = (double)((k * 2654435761u) % 1000 - 500) / 500.0 / (1.0 + (double)k / 64.0);
        h[k] = (float)hd[k];
    }
    /* --latency zero: the head's taps to the callback's filter, the rest
     * to the engine */
    const size_t H = w->zero ? 2 * w->block : 0;
    const gf_taps all = {.h = hd, .n = w->taps, .filters = 1};
    if (w->zero && gf_live_head_init(head, &all, H, w->channels, GF_PRECISION_F32, w->block)) {
        free(hd);
        printf("live_bench: out of memory\n");
        return NULL;
    }
    gf_config c = gf_config_default();
    c.channels = w->channels;
    c.num_taps = w->taps - H;
    c.taps = hd + H;
    c.mode = GF_MODE_CAUSAL;
    c.precision = GF_PRECISION_F32;
    c.chunk_frames = w->block;
    c.partition = w->block; /* a power of two here: one block in, one block out */
    c.device = w->dev;
    /* As gpufilt --live: NUPC for a long filter (the block its first
     * partition), unless the row names a method. */
    if (w->method != GF_METHOD_AUTO)
        c.method = w->method;
    else if (gf_cli_live_nupc(w->dev, w->channels, c.num_taps, w->block))
        c.method = GF_METHOD_NUPC;
    char detail[256];
    gf_engine *e = NULL;
    const gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    free(hd);
    if (st != GF_OK)
        printf("live_bench: cannot create the engine: %s: %s\n", gf_strerror(st), detail);
    return st == GF_OK ? e : NULL;
}

/* The worker's round trip for one block: push, submit, wait, pull it all. */
static gf_status round_trip(gf_engine *e, const float *in, float *out, size_t block, int C)
{
    size_t used = 0, got = 0, total = 0;
    gf_status st = gf_engine_push(e, in, block, &used);
    if (st == GF_OK && used != block)
        st = GF_ERR_STATE;
    if (st == GF_OK)
        st = gf_engine_submit(e);
    if (st == GF_OK)
        st = gf_engine_wait(e);
    while (st == GF_OK && total < block &&
           (st = gf_engine_pull(e, out + total * (size_t)C, block - total, &got)) == GF_OK &&
           got > 0)
        total += got;
    return st == GF_OK && total != block ? GF_ERR_STATE : st;
}

/* The next block of the stream (an LCG, state *s) into in; channels 0 and
 * C-1 also into the history. */
static void next_block(unsigned *s, float *in, size_t block, int C, history *hs)
{
    for (size_t i = 0; i < block * (size_t)C; i++) {
        *s = *s * 1664525u + 1013904223u;
        in[i] = (float)((double)(*s >> 8) / 16777216.0 - 0.5);
    }
    for (size_t t = 0; t < block; t++) {
        hs->x[0][hs->frames + t] = in[t * (size_t)C];
        hs->x[1][hs->frames + t] = in[t * (size_t)C + (size_t)C - 1];
    }
    hs->frames += block;
}

/* The method column: the engine's method, "zero+" the tail's with
 * --latency zero. */
static const char *method_label(const row *w, gf_method m)
{
    if (m == GF_METHOD_NUPC)
        return w->zero ? "zero+n" : "nupc";
    if (m == GF_METHOD_FFT)
        return w->zero ? "zero+f" : "fft";
    return w->zero ? "zero+d" : "direct";
}

/* Sleep until *due + period_ns, which becomes *due. */
static void wait_period(struct timespec *due, long period_ns)
{
    due->tv_nsec += period_ns;
    while (due->tv_nsec >= 1000000000L) {
        due->tv_nsec -= 1000000000L;
        due->tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, due, NULL) == EINTR) {
    }
}

/* Returns 0, or -1 after printing why (an engine failed). */
static int run(const row *w, int warmup, int blocks, result *r, gf_method *method)
{
    const size_t block = w->block, n = block * (size_t)w->channels;
    const size_t total_frames = (size_t)(warmup + blocks) * block;
    history hs = {{malloc(total_frames * sizeof(float)), malloc(total_frames * sizeof(float))},
                  malloc(w->taps * sizeof(float)),
                  0};
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    /* zero: the tail's last three blocks (it is added 2 blocks late) */
    float *tail = malloc(3 * n * sizeof *tail);
    double *t = malloc((size_t)blocks * sizeof *t);
    gf_engine *e = NULL;
    gf_live_head head;
    memset(&head, 0, sizeof head);
    int rc = -1;
    if (!hs.x[0] || !hs.x[1] || !hs.h || !in || !out || !tail || !t) {
        printf("live_bench: out of memory\n");
        goto done;
    }
    if (!(e = make_engine(w, hs.h, &head)))
        goto done;
    memset(tail, 0, 3 * n * sizeof *tail);
    unsigned s = 1;
    /* NUPC: its larger levels run on threads of their own in the time the
     * stream gives them, so its blocks come at the period, as audio's do
     * (the others' work is all in the round trip: they run back to back). */
    const int paced = gf_engine_method(e) == GF_METHOD_NUPC;
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (int b = 0; b < warmup + blocks; b++) {
        if (paced)
            wait_period(&due, (long)((double)block / RATE * 1e9));
        next_block(&s, in, block, w->channels, &hs);
        double dt = 0;
        if (w->zero) { /* the callback's own work: the head */
            const double t0 = now_s();
            gf_live_head_run(&head, in, block);
            dt = now_s() - t0;
        }
        float *dst = w->zero ? tail + (size_t)(b % 3) * n : out;
        const double t0 = now_s();
        const gf_status st = round_trip(e, in, dst, block, w->channels);
        const double dw = now_s() - t0;
        dt = dw > dt ? dw : dt;
        if (st != GF_OK) {
            printf("live_bench: engine failed: %s: %s\n", gf_strerror(st), gf_engine_error(e));
            goto done;
        }
        if (w->zero) { /* this block's head + the tail of two blocks before */
            const float *late = tail + (size_t)((b + 1) % 3) * n, *hy = head.y;
            for (size_t i = 0; i < n; i++)
                out[i] = hy[i] + (b >= 2 ? late[i] : 0.0f);
        }
        if (b >= warmup)
            t[b - warmup] = dt;
    }
    *method = gf_engine_method(e);
    qsort(t, (size_t)blocks, sizeof *t, cmp_double);
    r->median = t[blocks / 2];
    r->p99 = t[((size_t)blocks * 99 + 99) / 100 - 1]; /* nearest rank */
    r->max = t[blocks - 1];
    /* causal, one block in and one out: out holds the stream's last block */
    r->err = check_block(&hs, w->taps, w->channels, out, block, total_frames - block);
    rc = 0;
done:
    gf_engine_destroy(e);
    gf_live_head_free(&head);
    free(tail);
    free(hs.x[0]);
    free(hs.x[1]);
    free(hs.h);
    free(in);
    free(out);
    free(t);
    return rc;
}

int main(int argc, char **argv)
{
    int blocks = 2000, warmup = 200, want_cpu = 1, want_cuda = 1, only_channels = 0;
    gf_device dev = GF_DEVICE_AUTO;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--blocks") == 0)
            blocks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0)
            warmup = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--device") == 0 && strcmp(argv[i + 1], "both") == 0)
            want_cpu = want_cuda = 1;
        else if (strcmp(argv[i], "--device") == 0 &&
                 gf_device_from_name(argv[i + 1], &dev) == GF_OK &&
                 (dev == GF_DEVICE_CPU || dev == GF_DEVICE_CUDA)) {
            want_cpu = dev == GF_DEVICE_CPU;
            want_cuda = dev == GF_DEVICE_CUDA;
        } else if (strcmp(argv[i], "--channels") == 0 && atoi(argv[i + 1]) > 0) {
            only_channels = atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: live_bench [--blocks N] [--warmup N] [--device cpu|cuda|both] "
                            "[--channels N]\n");
            return 2;
        }
    }
    if (blocks < 100 || warmup < 0) {
        fprintf(stderr, "live_bench: --blocks >= 100, --warmup >= 0\n");
        return 2;
    }
    const int have_cuda = want_cuda && gf_cuda_available();
    printf("live_bench: gpufilt %s; f32, causal, %.0f Hz; %d blocks timed after %d of "
           "warm-up;\n",
           gf_version(), RATE, blocks, warmup);
    printf("live_bench: per-block worker time (push + submit + wait + pull) as %% of the block "
           "period\n");
    printf("%-6s %4s %6s %8s %-7s %10s %9s %9s %9s %11s %17s\n", "device", "ch", "block", "taps",
           "method", "period ms", "median %", "p99 %", "max %", "p99 us", "output (err/allowed)");
    char targets[2048] = "";
    size_t tl = 0;
    int wrong = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *w = &rows[i];
        const int cuda = w->dev == GF_DEVICE_CUDA;
        if ((!cuda && !want_cpu) || (cuda && !want_cuda) ||
            (only_channels && w->channels != only_channels))
            continue;
        const double period = (double)w->block / RATE;
        char name[96];
        snprintf(name, sizeof name, "%s%s, %d ch, %zu-frame blocks, %zu taps",
                 w->zero ? "zero: " : "", gf_device_name(w->dev), w->channels, w->block, w->taps);
        if (cuda && !have_cuda) {
            if (w->target > 0)
                tl += (size_t)snprintf(targets + tl, sizeof targets - tl,
                                       "live_bench: target p99 <= %.0f%% of the period, %s: SKIP "
                                       "(no CUDA device)\n",
                                       100 * w->target, name);
            continue;
        }
        result r = {0};
        gf_method m = GF_METHOD_DIRECT;
        if (run(w, warmup, blocks, &r, &m) != 0)
            return 2;
        const int ok = r.err <= 1.0;
        wrong |= !ok;
        printf("%-6s %4d %6zu %8zu %-7s %10.3f %9.2f %9.2f %9.2f %11.1f %8s %8.2g\n",
               gf_device_name(w->dev), w->channels, w->block, w->taps, method_label(w, m),
               1e3 * period, 100 * r.median / period, 100 * r.p99 / period, 100 * r.max / period,
               1e6 * r.p99, ok ? "ok" : "WRONG", r.err);
        fflush(stdout);
        if (w->target > 0 && tl < sizeof targets)
            tl += (size_t)snprintf(targets + tl, sizeof targets - tl,
                                   "live_bench: target p99 <= %.0f%% of the period, %s: %s (p99 = "
                                   "%.2f%%)%s\n",
                                   100 * w->target, name,
                                   ok && r.p99 / period <= w->target ? "PASS" : "MISS",
                                   100 * r.p99 / period, ok ? "" : "; output WRONG: no result");
    }
    fputs(targets, stdout);
    if (wrong)
        printf("live_bench: WRONG: an output differs from the exact filter beyond its bound\n");
    return wrong ? 1 : 0;
}
