/*
 * gpufilt --live: capture -> filter -> playback through PortAudio, and
 * --list-devices.
 *
 * gf_live_run goes through phases, each returning an exit code: begin the
 * PortAudio session; choose devices and format; set up the engine (and
 * histogram files); open the streams, whose capture source and playback
 * sink the worker connects (worker.c, portaudio_io.c); start; wait for the
 * end (duration, signal, failure, lost device) printing statistics; stop
 * and report. One cleanup path. docs/live.md describes the options, the
 * latency and the xrun counters.
 */
#include "live/live.h"

#include "live/control.h"
#include "live/devices.h"
#include "live/pa_session.h"
#include "live/rt.h"
#include "live/worker.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_FRAMES 256

int gf_live_list_devices(void)
{
    gf_pa_session pa;
    int rc = gf_pa_begin(&pa);
    if (rc)
        return rc;
    gf_pa_print_devices();
    gf_pa_end(&pa);
    return GF_EXIT_OK;
}

/* Devices from the chosen host API, or anywhere; channels, rate, block. */
static int choose_devices(gf_live *lv, gf_pa_config *cfg)
{
    const gf_cli_options *o = lv->o;
    int api = -1, rc;
    if (o->host_api && (rc = gf_pa_find_host_api(o->host_api, &api)) != 0)
        return rc;
    if ((rc = gf_pa_find_device(o->live_in, 1, api, &cfg->in_device)) != 0 ||
        (rc = gf_pa_find_device(o->live_out, 0, api, &cfg->out_device)) != 0)
        return rc;
    const PaDeviceInfo *di = Pa_GetDeviceInfo(cfg->in_device);
    const PaDeviceInfo *dO = Pa_GetDeviceInfo(cfg->out_device);
    const int maxc =
        di->maxInputChannels < dO->maxOutputChannels ? di->maxInputChannels : dO->maxOutputChannels;
    lv->channels = o->channels ? o->channels : (maxc < 2 ? 1 : 2);
    if (lv->channels > di->maxInputChannels || lv->channels > dO->maxOutputChannels) {
        gf_cli_error("--channels %d: input '%s' has %d channel%s, output '%s' has %d", lv->channels,
                     di->name, di->maxInputChannels, di->maxInputChannels == 1 ? "" : "s", dO->name,
                     dO->maxOutputChannels);
        return GF_EXIT_DEVICE;
    }
    lv->rate = o->rate ? (double)o->rate : dO->defaultSampleRate;
    lv->period_frames = o->live_frames ? o->live_frames : DEFAULT_FRAMES;
    lv->prec = o->precision;
    /* One full-duplex stream where the host API allows it (same API); two
     * half streams otherwise. */
    const int want_duplex = di->hostApi == dO->hostApi;
    cfg->duplex =
        want_duplex && gf_pa_supported(cfg->in_device, cfg->out_device, lv->channels, lv->rate, 1);
    if (!cfg->duplex &&
        !gf_pa_supported(cfg->in_device, cfg->out_device, lv->channels, lv->rate, 0)) {
        gf_pa_explain_unsupported(cfg->in_device, cfg->out_device, lv->channels, lv->rate,
                                  want_duplex);
        return GF_EXIT_DEVICE;
    }
    cfg->channels = lv->channels;
    cfg->rate = lv->rate;
    cfg->block = lv->period_frames;
    return GF_EXIT_OK;
}

/* The method for a period of period_frames frames: the FFT method's
 * partition is the period (gf_cli_live_partition); a period that cannot be
 * one leaves the direct method. Unless --method says otherwise, a long
 * filter takes the NUPC method with the period as its first partition
 * (gf_cli_live_nupc). */
static int live_method(const gf_live *lv, const gf_taps *t, gf_config *c)
{
    if ((c->partition = gf_cli_live_partition(lv->period_frames)) != 0) {
        if (c->method == GF_METHOD_AUTO &&
            gf_cli_live_nupc(c->device, lv->channels, t->n, c->partition))
            c->method = GF_METHOD_NUPC;
        return GF_EXIT_OK;
    }
    if (c->method == GF_METHOD_FFT || c->method == GF_METHOD_NUPC || t->n > GF_MAX_TAPS) {
        gf_cli_error("the %s method needs --frames to be a power of two from %zu (%zu taps, "
                     "--frames %zu)",
                     c->method == GF_METHOD_NUPC ? "NUPC" : "FFT", GF_MIN_PARTITION, t->n,
                     lv->period_frames);
        return GF_EXIT_USAGE;
    }
    c->method = GF_METHOD_DIRECT;
    return GF_EXIT_OK;
}

/* A second engine while one plays (a change of filter) on the GPU: ask for
 * its free memory first and refuse, before anything is allocated, what
 * clearly cannot fit: twice the spectra of the filter and of the input's
 * partitions (each K x (P + 1) complex values), plus 64 MiB. Creation
 * itself still fails cleanly for what this misses. */
static int gpu_room(const gf_live *lv, const gf_taps *t, const gf_config *c)
{
    gf_cuda_device info;
    if (c->device != GF_DEVICE_CUDA || gf_cuda_device_info(c->cuda_device, &info) != GF_OK)
        return GF_EXIT_OK;
    const size_t P = lv->period_frames, K = (t->n + P - 1) / P;
    const size_t complex_bytes = lv->prec == GF_PRECISION_F32 ? 8 : 16;
    const double need = 2.0 * (double)K * (double)(P + 1) * (double)complex_bytes *
                            (double)(t->filters + lv->channels) +
                        64.0 * 1024 * 1024;
    if ((double)info.free_bytes >= need)
        return GF_EXIT_OK;
    char freeb[32], needb[32];
    gf_cli_error("GPU %d has %s free; the new filter needs about %s", c->cuda_device,
                 gf_cli_bytes(freeb, sizeof freeb, info.free_bytes),
                 gf_cli_bytes(needb, sizeof needb, (uint64_t)need));
    return GF_EXIT_DEVICE;
}

int gf_live_make_engine(gf_live *lv, const gf_taps *t, gf_device device, int first,
                        gf_hist_config *hc, gf_engine **out)
{
    const gf_cli_options *o = lv->o;
    *out = NULL;
    gf_config c = gf_cli_engine_config(o, lv->channels, t, device, GF_DEVICE_NONE);
    c.mode = GF_MODE_CAUSAL;
    c.chunk_frames = lv->period_frames;
    c.hist = hc;
    int rc = live_method(lv, t, &c);
    if (rc || (!first && (rc = gpu_room(lv, t, &c)) != 0))
        return rc;
    const size_t bytes =
        lv->period_frames * (size_t)lv->channels * (lv->prec == GF_PRECISION_F32 ? 4 : 8);
    void *in = calloc(1, bytes), *scratch = malloc(bytes);
    if (!in || !scratch) {
        free(in);
        free(scratch);
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    gf_engine *e = NULL;
    rc = gf_cli_engine_create(&c, o->device == GF_DEVICE_AUTO && first, &e);
    if (!rc) {
        /* A block of silence: lazy start-up work (CUDA module loading,
         * first launches) is done before the engine plays. */
        size_t used = 0, got = 0;
        gf_status st = gf_engine_push(e, in, lv->period_frames, &used);
        if (st == GF_OK)
            st = gf_engine_submit(e);
        if (st == GF_OK)
            st = gf_engine_wait(e);
        while (st == GF_OK && (st = gf_engine_pull(e, scratch, lv->period_frames, &got)) == GF_OK &&
               got > 0) {
        }
        if (st == GF_OK)
            st = gf_engine_reset(e);
        if (st != GF_OK) {
            rc = gf_cli_engine_failed(e, st);
            gf_engine_destroy(e);
            e = NULL;
        }
    }
    free(in);
    free(scratch);
    *out = e;
    return rc;
}

/* The most frames one callback may bring with --latency zero (the host's
 * buffer size, which PortAudio then passes as it comes). */
#define ZERO_MAX_FRAMES 16384

/* The filter may change while playing: by --control, or by SIGHUP
 * re-reading the command line's coefficient or impulse response file. */
static int may_change(const gf_cli_options *o)
{
    return o->control || o->coeffs || o->ir;
}

/* The head's taps for a filter of T taps: min(T, 2 x --frames), and 2 x
 * --frames where it may change (split_head). */
static size_t head_taps(const gf_live *lv, size_t T)
{
    const size_t F2 = 2 * lv->period_frames;
    return T < F2 && !may_change(lv->o) ? T : F2;
}

/* --latency zero: the head of H = min(T, 2 x --frames) taps for the
 * callback, and the rest as t for the worker's engine (none: t->n = 0).
 * Where the filter may change, one of at most 2 x --frames taps gets a
 * tail of one zero tap, so that a change has an engine to fade the new
 * filter's tail in with (control.c). */
static int split_head(gf_live *lv, gf_taps *t)
{
    const size_t H = head_taps(lv, t->n);
    if (may_change(lv->o) && gf_live_pad_taps(t, H + 1) != 0) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    gf_taps tail;
    memset(&tail, 0, sizeof tail);
    if (gf_live_head_init(&lv->head, t, H, lv->channels, lv->prec, ZERO_MAX_FRAMES) != 0 ||
        (t->n > H && gf_live_tail_taps(t, H, &tail) != 0)) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    gf_taps_free(t);
    *t = tail;
    lv->tail_taps = tail.n;
    return GF_EXIT_OK;
}

/* --latency auto's measures: the most time, in s, of `rounds` runs of the
 * head (H = min(T, 2 x block) taps, one block of noise each) or of the
 * engine's round trip (then reset); -1 where it cannot be measured. */
static double time_head(const gf_live *lv, const gf_taps *t, int rounds)
{
    const size_t B = lv->period_frames, n = B * (size_t)lv->channels;
    gf_live_head hd;
    float *x = malloc(n * sizeof *x);
    if (!x || gf_live_head_init(&hd, t, head_taps(lv, t->n), lv->channels, lv->prec, B)) {
        free(x);
        return -1;
    }
    double most = 0;
    unsigned s = 1;
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        const double t0 = gf_now();
        gf_live_head_run(&hd, x, B);
        const double dt = gf_now() - t0;
        most = dt > most ? dt : most;
    }
    gf_live_head_free(&hd);
    free(x);
    return most;
}

static double time_worker(gf_live *lv, int rounds)
{
    const size_t B = lv->period_frames,
                 fb = (size_t)lv->channels * (lv->prec == GF_PRECISION_F32 ? 4 : 8);
    double most = 0;
    gf_status st = GF_OK;
    for (int r = 0; r < rounds && st == GF_OK; r++) {
        const double t0 = gf_now();
        size_t used = 0, got = 1, total = 0;
        st = gf_engine_push(lv->e, lv->in, B, &used);
        if (st == GF_OK)
            st = gf_engine_submit(lv->e);
        if (st == GF_OK)
            st = gf_engine_wait(lv->e);
        while (st == GF_OK && total < B && got > 0 &&
               (st = gf_engine_pull(lv->e, (unsigned char *)lv->out + total * fb, B - total,
                                    &got)) == GF_OK)
            total += got;
        const double dt = gf_now() - t0;
        most = dt > most ? dt : most;
    }
    return gf_engine_reset(lv->e) == GF_OK && st == GF_OK ? most : -1;
}

/* --latency auto, before the engine: zero where it can be (one full-duplex
 * stream, no --control or --hist) and the head takes at most a quarter of
 * the period here. 1 for zero, else 0; why into buf. */
static int auto_zero(const gf_live *lv, const gf_pa_config *cfg, const gf_taps *t, char *buf,
                     size_t n)
{
    const gf_cli_options *o = lv->o;
    const double period = (double)lv->period_frames / lv->rate;
    if (!cfg->duplex || o->hist_path || o->hist_png) {
        snprintf(buf, n, "not zero: %s",
                 !cfg->duplex ? "the input and output are not one full-duplex stream"
                              : "--hist records the engine");
        return 0;
    }
    const double head = time_head(lv, t, 64);
    const size_t H = head_taps(lv, t->n);
    snprintf(buf, n, "the head's %zu taps take at most %.1f%% of the %.3f ms period here", H,
             100 * head / period, 1e3 * period);
    return head >= 0 && head <= period / 4;
}

/* The first engine (gf_live_make_engine), then the histogram files and the
 * worker's buffers; the latency --latency auto settles on. */
static int setup_engine(gf_live *lv, gf_pa_config *cfg, gf_taps *t)
{
    const gf_cli_options *o = lv->o;
    int rc = gf_taps_ready(o, t, lv->channels, (int)lv->rate);
    if (rc)
        return rc;
    lv->taps = t->n;
    atomic_store(&lv->most_taps, t->n);
    lv->mean = !t->h;
    if (t->shape.shaped && !o->quiet) /* --gain, --normalize-filter, the mix: as for files */
        gf_report_levels(o, t);
    char why[160] = "";
    lv->latency = o->latency;
    if (o->latency == GF_LATENCY_AUTO && auto_zero(lv, cfg, t, why, sizeof why))
        lv->latency = GF_LATENCY_ZERO;
    if (lv->latency == GF_LATENCY_ZERO && (rc = split_head(lv, t)) != 0)
        return rc;
    if (lv->latency == GF_LATENCY_ZERO && !o->quiet && o->latency == GF_LATENCY_AUTO)
        fprintf(stderr, "gpufilt: live: --latency auto: zero (%s)\n", why);
    if (lv->latency == GF_LATENCY_ZERO && t->n == 0)
        return GF_EXIT_OK;
    const gf_job job = {.frames = -1,
                        .channels = lv->channels,
                        .taps = t->n,
                        .block = lv->period_frames,
                        .rate = lv->rate};
    const gf_device dev = gf_cli_choose_device(o, &job, NULL, NULL, 0);
    if (o->hist_path || o->hist_png)
        lv->hc = gf_cli_hist_config(o, (int)lv->rate);
    if ((rc = gf_live_make_engine(lv, t, dev, 1, o->hist_path || o->hist_png ? &lv->hc : NULL,
                                  &lv->e)) != 0)
        return rc;
    lv->device = gf_engine_device(lv->e); /* every later engine's, for the same bytes */
    const size_t bytes =
        lv->period_frames * (size_t)lv->channels * (lv->prec == GF_PRECISION_F32 ? 4 : 8);
    if (!(lv->in = calloc(1, bytes)) || !(lv->out = malloc(bytes)) || !(lv->out2 = malloc(bytes))) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    if (lv->latency == GF_LATENCY_AUTO) { /* not zero: one block where the worker has room */
        const double period = (double)lv->period_frames / lv->rate, w = time_worker(lv, 32);
        lv->latency = w >= 0 && w <= period / 2 ? GF_LATENCY_BLOCK : GF_LATENCY_DEFAULT;
        if (!o->quiet)
            fprintf(stderr,
                    "gpufilt: live: --latency auto: %s (%s; the worker takes at most %.1f%% of "
                    "the period here)\n",
                    lv->latency == GF_LATENCY_BLOCK ? "block" : "two blocks", why,
                    100 * w / period);
    }
    if ((o->hist_path || o->hist_png) &&
        (rc = gf_hist_out_open(&lv->hout, o->hist_path, o->hist_png, &lv->hc, lv->channels,
                               (int)lv->rate, lv->hist_err, sizeof lv->hist_err)) != 0)
        gf_cli_error("%s", lv->hist_err);
    return rc;
}

static unsigned long long get(atomic_ullong *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static unsigned long long xrun_total(gf_pa_counts *n)
{
    return get(&n->pa_in_underflow) + get(&n->pa_in_overflow) + get(&n->pa_out_underflow) +
           get(&n->pa_out_overflow) + get(&n->in_full) + get(&n->out_empty) + get(&n->late_events) +
           get(&n->out_full) + get(&n->clock_jumps);
}

static void print_counts(gf_live *lv, const char *prefix)
{
    gf_pa_counts *n = gf_pa_counts_of(lv->link);
    /* (a count of 0 from a check that never ran is said so; by clock_state) */
    static const char *const clock_note[] = {
        " (not checked with this host API)",
        " (not checked: never 16 callbacks in a row one period apart, on time)", ""};
    const int cs = atomic_load_explicit(&n->clock_state, memory_order_relaxed);
    fprintf(stderr,
            "gpufilt: live: %sxruns %llu (PortAudio: input underflow %llu, input overflow %llu, "
            "output underflow %llu, output overflow %llu; input ring full %llu [%llu frames "
            "dropped], output ring empty %llu [%llu frames of silence], late output dropped "
            "%llu [%llu frames], worker found output full %llu [%llu frames], input a period "
            "off the host's clock %llu%s; %llu frames silent after gaps in the input)\n",
            prefix, xrun_total(n), get(&n->pa_in_underflow), get(&n->pa_in_overflow),
            get(&n->pa_out_underflow), get(&n->pa_out_overflow), get(&n->in_full),
            get(&n->in_dropped), get(&n->out_empty), get(&n->out_silence), get(&n->late_events),
            get(&n->late_drops), get(&n->out_full), get(&n->out_lost), get(&n->clock_jumps),
            clock_note[cs], get(&n->muted));
}

/* Page faults (minor and major) so far of the callback's threads (input,
 * output) and the worker's; 0 for one not known, gone, or the output's
 * when it is the input's (a duplex stream). */
static void thread_faults(gf_live *lv, unsigned long long f[3])
{
    gf_pa_counts *n = gf_pa_counts_of(lv->link);
    const int tid[3] = {atomic_load_explicit(&n->tid_in, memory_order_relaxed),
                        atomic_load_explicit(&n->tid_out, memory_order_relaxed),
                        lv->e ? atomic_load_explicit(&lv->worker_tid, memory_order_relaxed) : 0};
    for (int i = 0; i < 3; i++) {
        unsigned long long minor = 0, major = 0;
        f[i] = 0;
        if (tid[i] && !(i == 1 && tid[1] == tid[0]) &&
            gf_live_thread_faults(tid[i], &minor, &major) == 0)
            f[i] = minor + major;
    }
}

/* "page faults since start-up: ...; " into buf, once the start-up is over
 * (faults_base taken); else empty. */
static void faults_text(gf_live *lv, char *buf, size_t n)
{
    buf[0] = 0;
    if (!lv->faults_base_set)
        return;
    unsigned long long f[3], d[3];
    thread_faults(lv, f);
    for (int i = 0; i < 3; i++)
        d[i] = f[i] >= lv->faults_base[i] ? f[i] - lv->faults_base[i] : 0;
    gf_pa_counts *c = gf_pa_counts_of(lv->link);
    const int in = atomic_load_explicit(&c->tid_in, memory_order_relaxed);
    const int out = atomic_load_explicit(&c->tid_out, memory_order_relaxed);
    int k;
    if (in && out && in != out)
        k = snprintf(buf, n, "page faults since start-up: callbacks %llu (input), %llu (output)",
                     d[0], d[1]);
    else
        k = snprintf(buf, n, "page faults since start-up: callback %llu", d[0] + d[1]);
    if (k > 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, lv->e ? ", worker %llu; " : "; ", d[2]);
}

/* --latency zero: the tail of output frame n needs input up to n - H, so a
 * callback of more than H frames (the host's period, as it comes) cannot
 * have its tail in time, and plays it silent. Said once, when seen. */
static void check_zero_period(gf_live *lv)
{
    if (!lv->head.taps || !lv->e || lv->zero_period_told)
        return;
    const unsigned long long most = get(&gf_pa_counts_of(lv->link)->head_frames_max);
    if (most <= lv->head.taps)
        return;
    lv->zero_period_told = 1;
    gf_cli_warn("live: --latency zero: the host's callbacks bring up to %llu frames, more than "
                "the %zu taps filtered in the callback (2 x --frames), so their tail comes too "
                "late and plays silent: use --frames %llu or more, or --latency block",
                most, lv->head.taps, (most + 1) / 2);
}

/* One line, once the start-up phase is over: what gpufilt adds (priming,
 * plus what start-up added), and what PortAudio reports for the host's side
 * (which includes its own buffering: one block on the output side where it
 * adapts the host's buffer size, as for JACK). */
static void tell_latency(gf_live *lv)
{
    double lat_in, lat_out;
    gf_pa_latency(lv->link, &lat_in, &lat_out);
    const size_t prime = gf_pa_prime(lv->link);
    const size_t raised = (size_t)get(&gf_pa_counts_of(lv->link)->raised), total = prime + raised;
    if (lv->head.taps) {
        char how[160];
        if (lv->e)
            snprintf(how, sizeof how,
                     "the first %zu taps in the audio callback, the other %zu by the worker "
                     "%zu frames ahead",
                     lv->head.taps, lv->tail_taps, prime);
        else
            snprintf(how, sizeof how, "all %zu taps in the audio callback", lv->head.taps);
        fprintf(stderr,
                "gpufilt: live: latency 0 frames (0.000 ms) added by gpufilt (%s), plus "
                "PortAudio's input %.3f ms and output %.3f ms\n",
                how, 1e3 * lat_in, 1e3 * lat_out);
        return;
    }
    char extra[96] = "";
    if (raised)
        snprintf(extra, sizeof extra, " + %zu found needed at start-up", raised);
    fprintf(stderr,
            "gpufilt: live: latency %zu frames (%.3f ms) added by gpufilt (%zu frames of "
            "priming%s), plus PortAudio's input %.3f ms and output %.3f ms\n",
            total, 1e3 * (double)total / lv->rate, prime, extra, 1e3 * lat_in, 1e3 * lat_out);
}

static void announce(gf_live *lv, const gf_pa_config *cfg)
{
    const gf_cli_options *o = lv->o;
    const PaDeviceInfo *di = Pa_GetDeviceInfo(cfg->in_device);
    const PaDeviceInfo *dO = Pa_GetDeviceInfo(cfg->out_device);
    const gf_engine *e = lv->e;
    fprintf(stderr,
            "gpufilt: live: %s: in %d '%s', out %d '%s'%s, %d ch, %.0f Hz, %zu frames per "
            "block, %zu tap%s%s, causal, %s, %s%s, %s backend\n",
            gf_pa_api_name(dO->hostApi), cfg->in_device, di->name, cfg->out_device, dO->name,
            gf_pa_is_duplex(lv->link) ? "" : " (two streams)", lv->channels, lv->rate,
            lv->period_frames, lv->taps, lv->taps == 1 ? "" : "s", lv->mean ? " (mean)" : "",
            lv->prec == GF_PRECISION_F32 ? "f32" : "f64",
            lv->head.taps ? "head direct in the callback, tail " : "",
            !e                                      ? "none"
            : gf_engine_method(e) == GF_METHOD_FFT  ? "fft"
            : gf_engine_method(e) == GF_METHOD_NUPC ? "nupc"
                                                    : "direct",
            e ? gf_engine_backend(e) : "cpu");
    if (o->stats)
        fprintf(stderr, "gpufilt: live: worker thread at %s priority; memory %s%s%s\n",
                lv->realtime ? "real-time (SCHED_FIFO)" : "normal",
                lv->locked ? "locked" : "not locked (", lv->locked ? "" : lv->lock_why,
                lv->locked ? "" : ")");
}

static void print_stats(gf_live *lv, gf_live_control *ctl, double elapsed)
{
    const unsigned long long b = get(&lv->blocks);
    const double mx = 1e-6 * (double)atomic_exchange(&lv->busy_ns_max, 0);
    const double mean = b ? 1e-6 * (double)get(&lv->busy_ns_total) / (double)b : 0.0;
    const double period_ms = 1e3 * (double)lv->period_frames / lv->rate;
    size_t out_frames;
    const size_t in_frames = gf_pa_buffered(lv->link, &out_frames);
    char prefix[640], now[64], head[128] = "", faults[160];
    gf_live_control_now(ctl, now, sizeof now);
    gf_pa_counts *n = gf_pa_counts_of(lv->link);
    const unsigned long long calls = get(&n->head_calls);
    if (lv->head.taps) { /* --latency zero: the callback's own work */
        const double hmx = 1e-6 * (double)atomic_exchange(&n->head_ns_max, 0);
        snprintf(head, sizeof head, "callback's head mean %.3f ms, max %.3f ms (%.1f%%), ",
                 calls ? 1e-6 * (double)get(&n->head_ns_total) / (double)calls : 0.0, hmx,
                 100.0 * hmx / period_ms);
    }
    faults_text(lv, faults, sizeof faults);
    snprintf(prefix, sizeof prefix,
             "%.0f s: %llu frames in, %s, %sworker per block mean %.3f ms, max %.3f ms "
             "(%.1f%% of %.3f ms), rings in %zu out %zu frames; %s",
             elapsed, get(&n->frames_in), now, head, mean, mx, 100.0 * mx / period_ms, period_ms,
             in_frames, out_frames, faults);
    print_counts(lv, prefix);
}

/* Until the duration has passed, a signal, a failed worker or a lost
 * stream (*lost = 1); the latency is told once the start-up is over
 * (*told = 1). */
static int wait_for_end(gf_live *lv, gf_live_control *ctl, volatile sig_atomic_t *stop,
                        double t_start, int *lost, int *told)
{
    const gf_cli_options *o = lv->o;
    double next_stats = t_start + 1.0;
    for (;;) {
        if (*stop)
            return GF_EXIT_INTERRUPTED; /* the exit table's 130, as for files and pipes */
        const double t = gf_now();
        if (o->duration > 0 && t - t_start >= o->duration)
            return GF_EXIT_OK;
        if (atomic_load_explicit(&lv->failed, memory_order_acquire)) {
            gf_cli_error("%s", lv->err);
            return GF_EXIT_DEVICE;
        }
        if (!gf_pa_active(lv->link)) {
            gf_cli_error("the audio stream stopped by itself (device lost, or the JACK server "
                         "went away)");
            *lost = 1;
            return GF_EXIT_DEVICE;
        }
        if (!*told &&
            atomic_load_explicit(&gf_pa_counts_of(lv->link)->warm, memory_order_acquire)) {
            *told = 1;
            thread_faults(lv, lv->faults_base); /* from here on, none is wanted */
            lv->faults_base_set = 1;
            if (!o->quiet)
                tell_latency(lv);
        }
        check_zero_period(lv);
        if (o->stats && t >= next_stats) {
            print_stats(lv, ctl, t - t_start);
            next_stats += 1.0;
            if (next_stats < t)
                next_stats = t + 1.0;
        }
        const struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL); /* a signal cuts it short: fine */
    }
}

static void report_end(gf_live *lv, volatile sig_atomic_t *stop, double t_start, int lost, int told)
{
    check_zero_period(lv);
    gf_pa_counts *n = gf_pa_counts_of(lv->link);
    char prefix[320], faults[160];
    faults_text(lv, faults, sizeof faults); /* while the threads are there */
    snprintf(prefix, sizeof prefix, "stopped after %.1f s (%llu frames in, %llu out)%s; %s",
             gf_now() - t_start, get(&n->frames_in), get(&n->frames_out),
             *stop ? " by a signal" : "", faults);
    if (!told && !lv->o->quiet)
        tell_latency(lv);
    if (!lost)
        gf_pa_stop(lv->link);
    print_counts(lv, prefix);
}

int gf_live_run(const gf_cli_options *o, gf_taps *t, volatile sig_atomic_t *stop,
                volatile sig_atomic_t *reload)
{
    /* Validated by gf_cli_parse: one of taps/coeffs; channels, rate, frames
     * and duration in range (0 = not given). o->mode and o->chunk do not
     * apply: live filtering is causal with one chunk per block. */
    gf_live *lv = calloc(1, sizeof *lv);
    if (!lv) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    lv->o = o;
    gf_pa_session pa;
    gf_pa_config cfg;
    memset(&cfg, 0, sizeof cfg);
    gf_live_control *ctl = NULL;
    int lost = 0, told = 0;
    int rc = gf_pa_begin(&pa);
    if (!rc)
        rc = choose_devices(lv, &cfg);
    if (!rc)
        rc = setup_engine(lv, &cfg, t);
    if (!rc && lv->o->no_mlock)
        snprintf(lv->lock_why, sizeof lv->lock_why, "--no-mlock");
    else if (!rc) /* the engines made, before the streams and threads start */
        lv->locked = gf_live_lock_memory(lv->lock_why, sizeof lv->lock_why);
    /* The worker turns a block around within the priming: one block leaves
     * it one period (output is taken before input is posted). */
    cfg.prime_blocks = lv->latency == GF_LATENCY_BLOCK ? 1 : 2;
    if (!rc)
        rc = gf_live_control_start(&ctl, lv, reload);
    if (!rc && lv->head.taps) {
        cfg.head = &lv->head;
        cfg.tail_taps = lv->e ? lv->tail_taps : 0;
        cfg.precision = lv->prec;
        cfg.switch_state = lv->e ? &lv->sw.state : NULL; /* no tail: the filter stays */
        cfg.switch_posted = GF_SWITCH_POSTED;
    }
    cfg.most_taps = &lv->most_taps;
    if (!rc)
        rc = gf_pa_open(&lv->link, &cfg, &lv->capture, &lv->playback);
    if (!rc && lv->e)
        rc = gf_live_worker_start(lv);
    if (!rc)
        rc = gf_pa_start(lv->link);
    if (!rc) {
        const double t_start = gf_now();
        if (!o->quiet)
            announce(lv, &cfg);
        rc = wait_for_end(lv, ctl, stop, t_start, &lost, &told);
        gf_live_control_stop(ctl);
        report_end(lv, stop, t_start, lost, told);
        gf_live_control_summary(ctl);
    }
    gf_live_control_stop(ctl);
    gf_live_worker_stop(lv);
    gf_live_control_destroy(ctl);
    if (lv->hout && (rc == GF_EXIT_OK || rc == GF_EXIT_INTERRUPTED)) {
        const int hist_rc = gf_live_finish_hist(lv);
        rc = hist_rc ? hist_rc : rc;
    }
    gf_hist_out_abort(&lv->hout); /* no-op after a commit */
    gf_engine_destroy(lv->e);
    gf_live_head_free(&lv->head);
    free(lv->in);
    free(lv->out);
    free(lv->out2);
    if (lost) {
        /* The streams and what their callback uses are left to the
         * process exit (portaudio_io.h), and so is PortAudio itself. */
        if (pa.stand_in[0])
            unlink(pa.stand_in);
        return rc;
    }
    gf_pa_close(lv->link, 0);
    gf_pa_end(&pa);
    free(lv);
    return rc;
}
