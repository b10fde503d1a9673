/* The PortAudio capture source and playback sink (portaudio_io.h). */
#include "live/portaudio_io.h"

#include "live/devices.h"
#include "live/head.h"
#include "live/ring.h"
#include "live/rt.h"

#include <portaudio.h>

#include <errno.h>
#include <math.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_MIN 8192 /* frames; rings hold at least 16 blocks */

struct gf_pa_link {
    int channels;
    size_t period_frames; /* frames per period (each callback's) */
    double rate;          /* Hz */
    size_t prime;         /* frames of silence primed into the output ring */
    /* The output callback's own state (no other thread touches it once
     * started): */
    size_t hold;    /* most frames the output ring holds at a callback */
    size_t warmup;  /* frames of output still in the start-up phase */
    size_t pending; /* frames of extra silence still to play (latency margin) */
    /* Stream frames: written to the input ring (by the input side), and
     * taken from the output ring, played or dropped (by the output side),
     * which are the same frames' outputs; those in [mute_from, mute_to)
     * play silent (gf_pa_config.most_taps). With two streams the sides
     * are two threads: the span is atomic (relaxed: a span read half
     * updated mutes a few frames more or less, once). */
    unsigned long long in_pos, out_pos;
    atomic_ullong mute_from, mute_to;
    const atomic_size_t *most_taps;
    gf_ring in, out;
    void *in_store, *out_store;
    sem_t wake; /* posted by the callback after each input block */
    int sem_ok;
    atomic_int quit; /* the capture source was interrupted */
    /* --latency zero (gf_pa_config): the callback's state (head.h) */
    gf_live_head *head;
    gf_live_zero zero;
    /* The host's clock at each input callback (JACK's frame time), against
     * the frames taken (clock_jumped): the input callback's own state. */
    int clock_watch;           /* the JACK host API */
    int clock_seen, clock_run; /* a callback seen; callbacks in a row a block apart */
    int clock_aligned;         /* clock_run reached CLOCK_ALIGNED: the check is on */
    uint32_t clock_prev;       /* the clock at the last input callback, frames */
    size_t clock_prev_frames;  /* and the frames it brought */
    long long clock_dev;       /* the clock's advance less the frames taken, since the first */
    long long clock_base;      /* its lowest since the check began or last moved */
    size_t tail_taps;          /* 0: no tail, the rings are not used */
    size_t out_ss;             /* bytes per sample in the output ring: 4, or 8 for f64 tails */
    PaStream *duplex, *s_in, *s_out;
    int started;
    gf_pa_counts n;
};

static void bump(atomic_ullong *c, unsigned long long v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* ---- the real-time side: copies and counts, nothing else ---- */

/* Input that is not the stream's around stream frame in_pos: `before`
 * frames before it and `after` from it are suspect, and every output that
 * reads one of them (the most_taps - 1 after each as well) plays silent. */
static void input_gap(gf_pa_link *l, size_t before, size_t after)
{
    const size_t T = l->most_taps ? atomic_load_explicit(l->most_taps, memory_order_relaxed) : 1;
    const unsigned long long from = l->in_pos - (l->in_pos < before ? l->in_pos : before);
    const unsigned long long to = l->in_pos + after + (T > 1 ? T - 1 : 0);
    const unsigned long long end = atomic_load_explicit(&l->mute_to, memory_order_relaxed);
    if (end < from)
        atomic_store_explicit(&l->mute_from, from, memory_order_relaxed);
    if (to > end)
        atomic_store_explicit(&l->mute_to, to, memory_order_relaxed);
}

/* This period's input (frames) and the `periods` before it are suspect:
 * what hears them plays silent (with --latency zero, from this period on). */
static void input_suspect(gf_pa_link *l, size_t periods, size_t frames)
{
    if (l->head)
        gf_live_zero_suspect(&l->zero, frames);
    else
        input_gap(l, periods * l->period_frames, frames);
}

/* Callbacks in a row whose clock advanced by about their block before the
 * clock check is trusted (a host that calls back several times a period,
 * or once in several, never gets there). */
#define CLOCK_ALIGNED 16

/* Input skipped or repeated by the host, seen on its clock: JACK's frame
 * time (PortAudio's currentTime) advances one period a cycle, and each
 * cycle brings one period of input. clock_dev, the clock's advance less
 * the frames taken, is the callback's lateness within its cycle plus a
 * whole period for every cycle skipped (a callback run a cycle late reads
 * the next cycle's input) and less one for every cycle read twice (a late
 * client runs its missed cycles back to back, reading the same buffers).
 * So against the lowest lateness seen (clock_base), a callback is in its
 * own cycle within [0, 7/8) of a period (a callback merely late comes back:
 * nothing was lost); at 7/8 or more, or half a period early, input was
 * skipped or repeated: the last period and this one are suspect, and the
 * base moves by whole periods. PortAudio's input-overflow flag for the
 * same xrun comes from JACK's notification thread, periods later on a
 * loaded machine. Only where each callback is one host period (JACK, with
 * gpufilt's block the server's): CLOCK_ALIGNED callbacks in a row one
 * block apart turn the check on. Non-zero: input skipped or repeated. */
static int clock_jumped(gf_pa_link *l, const PaStreamCallbackTimeInfo *t, size_t frames)
{
    if (!l->clock_watch || !t)
        return 0;
    /* jack_frame_time is a 32-bit count of frames: differences modulo 2^32 */
    const uint32_t now = (uint32_t)(unsigned long long)llround(t->currentTime * l->rate);
    const long long H = (long long)frames;
    int jumped = 0;
    if (l->clock_seen) {
        const long long d = (int32_t)(now - l->clock_prev);
        l->clock_dev += d - (long long)l->clock_prev_frames;
        if (!l->clock_aligned) {
            const int one_block = d >= H / 2 && d <= H + H / 2 && l->clock_prev_frames == frames;
            l->clock_run = one_block ? l->clock_run + 1 : 0;
            if (one_block && (l->clock_run == 1 || l->clock_dev < l->clock_base))
                l->clock_base = l->clock_dev;
            l->clock_aligned = l->clock_run >= CLOCK_ALIGNED;
            if (l->clock_aligned)
                atomic_store_explicit(&l->n.clock_state, 2, memory_order_relaxed);
        } else {
            const long long r = l->clock_dev - l->clock_base;
            if (r >= H - H / 8 || r < -H / 2) {
                /* whole periods: floor((r + H/8) / H) */
                const long long q = r + H / 8, shift = q >= 0 ? q / H : -((-q + H - 1) / H);
                l->clock_base += shift * H;
                jumped = 1;
            } else if (r < 0) {
                l->clock_base = l->clock_dev;
            }
        }
    }
    l->clock_seen = 1;
    l->clock_prev = now;
    l->clock_prev_frames = frames;
    return jumped;
}

/* Silence the frames of out[0 .. n) (stream frames from l->out_pos) that
 * lie in the muted span; then count them as taken. */
static void mute_taken(gf_pa_link *l, float *out, size_t n)
{
    const size_t C = (size_t)l->channels;
    const unsigned long long a = l->out_pos, b = a + n;
    const unsigned long long from = atomic_load_explicit(&l->mute_from, memory_order_relaxed);
    const unsigned long long to = atomic_load_explicit(&l->mute_to, memory_order_relaxed);
    const unsigned long long lo = from > a ? from : a, hi = to < b ? to : b;
    if (lo < hi) {
        memset(out + (size_t)(lo - a) * C, 0, (size_t)(hi - lo) * C * sizeof(float));
        bump(&l->n.muted, hi - lo);
    }
    l->out_pos = b;
}

/* Output first: once the input is posted, the worker may finish that block
 * before this callback returns, and its output must not count as late. */
static void play(gf_pa_link *l, float *out, size_t frames)
{
    const size_t C = (size_t)l->channels;
    /* Extra start-up silence: played without taking from the ring. */
    const size_t quiet = l->pending < frames ? l->pending : frames;
    if (quiet) {
        memset(out, 0, quiet * C * sizeof(float));
        l->pending -= quiet;
    }
    /* After the ring ran empty, the frames that were late arrive on top of
     * the primed level: drop them to keep the latency fixed. */
    const size_t avail = gf_ring_read_available(&l->out);
    if (avail > l->hold) {
        l->out_pos += gf_ring_read(&l->out, NULL, avail - l->hold);
        bump(&l->n.late_events, 1);
        bump(&l->n.late_drops, avail - l->hold);
    }
    const size_t want = frames - quiet;
    const size_t r = gf_ring_read(&l->out, out + quiet * C, want);
    mute_taken(l, out + quiet * C, r);
    if (r < want) {
        memset(out + (quiet + r) * C, 0, (want - r) * C * sizeof(float));
        if (l->warmup > 0 && l->hold + (want - r) + 2 * l->period_frames <= l->out.size / 2) {
            /* Start-up: the host delivers blocks in bursts (a period longer
             * than a block) or the first blocks were slow. Keep the silence
             * as latency, plus one block of margin (up to half the ring: a
             * worker that is simply too slow for the stream shows as xruns
             * instead). */
            l->hold += want - r + l->period_frames;
            l->pending += l->period_frames;
            bump(&l->n.raised, want - r + l->period_frames);
        } else {
            bump(&l->n.out_empty, 1);
            bump(&l->n.out_silence, want - r);
        }
    }
    bump(&l->n.frames_out, r);
    if (l->warmup > 0) {
        l->warmup -= l->warmup < frames ? l->warmup : frames;
        if (l->warmup == 0)
            atomic_store_explicit(&l->n.warm, 1, memory_order_release);
    }
}

static int on_audio(const void *input, void *output, unsigned long frames,
                    const PaStreamCallbackTimeInfo *time_info, PaStreamCallbackFlags flags,
                    void *user)
{
    gf_pa_link *l = user;
    /* Who calls: one system call, on each thread's first call only. */
    if (input && !atomic_load_explicit(&l->n.tid_in, memory_order_relaxed))
        atomic_store_explicit(&l->n.tid_in, gf_live_tid(), memory_order_relaxed);
    if (output && !atomic_load_explicit(&l->n.tid_out, memory_order_relaxed))
        atomic_store_explicit(&l->n.tid_out, gf_live_tid(), memory_order_relaxed);
    if (flags & paInputUnderflow)
        bump(&l->n.pa_in_underflow, 1);
    if (flags & paInputOverflow) {
        /* The host missed a period (JACK: an xrun). Its input came in
         * late, stale or not at all: seen on JACK's dummy driver, one
         * period of stale input in place, the next or this one, so 256
         * frames wrong and the filter's T - 1 after them (tests/live, the
         * soak); and, on a loaded 2-CPU machine, a period of the next
         * input two periods before the one flagged (live_jack's
         * control_f32 under AddressSanitizer: 256 frames played a period
         * early, just before the muted span). This period and the two
         * before are suspect. */
        bump(&l->n.pa_in_overflow, 1);
        input_suspect(l, 2, frames);
    }
    if (input && clock_jumped(l, time_info, frames)) {
        bump(&l->n.clock_jumps, 1);
        input_suspect(l, 1, frames);
    }
    if (flags & paOutputUnderflow)
        bump(&l->n.pa_out_underflow, 1);
    if (flags & paOutputOverflow)
        bump(&l->n.pa_out_overflow, 1);
    if (l->head) { /* --latency zero: one full-duplex stream */
        /* (CLOCK_MONOTONIC is read in user space, the vDSO: no system call) */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const size_t quiet = gf_live_zero_play(&l->zero, input, output, frames);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const unsigned long long ns = (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
                                                           (t1.tv_nsec - t0.tv_nsec));
        bump(&l->n.head_calls, 1);
        bump(&l->n.head_ns_total, ns);
        unsigned long long m = atomic_load_explicit(&l->n.head_ns_max, memory_order_relaxed);
        while (ns > m && !atomic_compare_exchange_weak(&l->n.head_ns_max, &m, ns)) {
        }
        unsigned long long f = atomic_load_explicit(&l->n.head_frames_max, memory_order_relaxed);
        while (frames > f && !atomic_compare_exchange_weak(&l->n.head_frames_max, &f, frames)) {
        }
        if (quiet) {
            bump(&l->n.out_empty, 1);
            bump(&l->n.out_silence, quiet);
        }
        bump(&l->n.frames_out, frames - quiet);
        if (l->warmup > 0 && (l->warmup -= l->warmup < frames ? l->warmup : frames) == 0)
            atomic_store_explicit(&l->n.warm, 1, memory_order_release);
        if (!l->tail_taps) {
            bump(&l->n.frames_in, frames);
            return paContinue;
        }
    } else if (output)
        play(l, output, frames);
    if (input) {
        const size_t w = gf_ring_write(&l->in, input, frames);
        l->in_pos += w;
        if (w < frames) {
            bump(&l->n.in_full, 1);
            bump(&l->n.in_dropped, frames - w);
            if (l->head) /* the tail's engine never hears those frames */
                gf_live_zero_dropped(&l->zero, frames - w);
            else /* the frames after the w taken never reach the engine */
                input_gap(l, 0, 0);
        }
        bump(&l->n.frames_in, w);
        sem_post(&l->wake);
    }
    return paContinue;
}

/* ---- the capture source and the playback sink ---- */

/* float samples a[0..n) to the engine's precision at out. */
static void from_float(gf_precision p, const float *a, size_t n, void *out)
{
    if (p == GF_PRECISION_F32)
        memcpy(out, a, n * sizeof(float));
    else
        for (size_t i = 0; i < n; i++)
            ((double *)out)[i] = a[i];
}

static void to_float(gf_precision p, const void *in, size_t n, float *a)
{
    if (p == GF_PRECISION_F32)
        memcpy(a, in, n * sizeof(float));
    else
        for (size_t i = 0; i < n; i++)
            a[i] = (float)((const double *)in)[i];
}

static int64_t capture_read(gf_source *s, gf_precision p, void *out, size_t frames, char *err,
                            size_t n)
{
    (void)err;
    (void)n;
    gf_pa_link *l = s->state;
    const size_t C = (size_t)l->channels,
                 ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    for (;;) {
        if (atomic_load(&l->quit))
            return 0;
        size_t k = gf_ring_read_available(&l->in);
        /* (the tail's engine takes whole blocks: the FFT method's partition) */
        if (k > 0 && (!l->head || k >= frames)) {
            k = k < frames ? k : frames;
            void *p1, *p2;
            size_t n1, n2;
            gf_ring_read_regions(&l->in, k, &p1, &n1, &p2, &n2);
            from_float(p, p1, n1 * C, out);
            if (n2)
                from_float(p, p2, n2 * C, (unsigned char *)out + n1 * C * ss);
            gf_ring_read_advance(&l->in, k);
            s->frames_read += (int64_t)k;
            return (int64_t)k;
        }
        sem_wait(&l->wake); /* EINTR: a signal; quit is checked above */
    }
}

static void capture_interrupt(gf_source *s)
{
    gf_pa_link *l = s->state;
    atomic_store(&l->quit, 1);
    sem_post(&l->wake);
}

static void nothing_to_close(gf_source *s)
{
    s->state = NULL; /* the link owns everything */
}

static const gf_source_ops capture_ops = {
    .read = capture_read,
    .interrupt = capture_interrupt,
    .close = nothing_to_close,
};

static int playback_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                          size_t n)
{
    (void)err;
    (void)n;
    gf_pa_link *l = k->state;
    const size_t C = (size_t)l->channels,
                 ss = p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    void *p1, *p2;
    size_t n1, n2;
    const size_t granted = gf_ring_write_regions(&l->out, count, &p1, &n1, &p2, &n2);
    if (l->head) { /* a tail, in the engine's precision: the callback adds the head */
        memcpy(p1, frames, n1 * C * ss);
        if (n2)
            memcpy(p2, (const unsigned char *)frames + n1 * C * ss, n2 * C * ss);
    } else {
        to_float(p, frames, n1 * C, p1);
        if (n2)
            to_float(p, (const unsigned char *)frames + n1 * C * ss, n2 * C, p2);
    }
    gf_ring_write_advance(&l->out, granted);
    if (granted < count) {
        bump(&l->n.out_full, 1);
        bump(&l->n.out_lost, count - granted);
    }
    k->frames_written += (int64_t)count;
    return GF_EXIT_OK;
}

static void playback_close(gf_sink *k)
{
    k->state = NULL; /* the link owns everything */
}

static void playback_describe(const gf_sink *k, char *buf, size_t n)
{
    (void)k;
    snprintf(buf, n, "PortAudio playback (float)");
}

static const gf_sink_ops playback_ops = {
    .write = playback_write,
    .finish = NULL,
    .close = playback_close,
    .describe = playback_describe,
};

/* ---- the session ---- */

static int pa_failed(const char *what, PaError err)
{
    if (err == paUnanticipatedHostError) {
        const PaHostErrorInfo *h = Pa_GetLastHostErrorInfo();
        gf_cli_error("PortAudio: %s: %s%s%s", what, Pa_GetErrorText(err),
                     h && h->errorText && *h->errorText ? ": " : "",
                     h && h->errorText ? h->errorText : "");
    } else {
        gf_cli_error("PortAudio: %s: %s", what, Pa_GetErrorText(err));
    }
    return GF_EXIT_DEVICE;
}

/* Rings, and the output's priming silence (prime frames). */
static int make_rings(gf_pa_link *l, size_t prime)
{
    const size_t cap =
        gf_ring_pow2(l->period_frames * 16 > RING_MIN ? l->period_frames * 16 : RING_MIN);
    const size_t fb = (size_t)l->channels * sizeof(float), ofb = (size_t)l->channels * l->out_ss;
    l->in_store = calloc(cap, fb);
    l->out_store = calloc(cap, ofb);
    if (!cap || !l->in_store || !l->out_store || gf_ring_init(&l->in, fb, cap, l->in_store) != 0 ||
        gf_ring_init(&l->out, ofb, cap, l->out_store) != 0)
        return -1;
    /* The output starts with silence: the worker's time budget (with
     * --latency zero, the tail's delay). */
    l->prime = prime;
    void *p1, *p2;
    size_t n1, n2;
    gf_ring_write_regions(&l->out, l->prime, &p1, &n1, &p2, &n2);
    gf_ring_write_advance(&l->out, l->prime); /* the storage is zeroed */
    return 0;
}

static int open_streams(gf_pa_link *l, const gf_pa_config *c)
{
    const PaStreamParameters pin = gf_pa_stream_params(c->in_device, l->channels, 1),
                             pout = gf_pa_stream_params(c->out_device, l->channels, 0);
    /* --latency zero takes the host's buffers as they come: a size of our
     * own would make PortAudio buffer a block (its JACK host API does). */
    const unsigned long F =
        l->head ? paFramesPerBufferUnspecified : (unsigned long)l->period_frames;
    PaError err;
    if (c->duplex) {
        l->hold = l->prime;
        err = Pa_OpenStream(&l->duplex, &pin, &pout, l->rate, F, paNoFlag, on_audio, l);
        if (err == paNoError)
            return GF_EXIT_OK;
        l->duplex = NULL;
        if (err != paBadIODeviceCombination || l->head)
            return pa_failed("cannot open the full-duplex stream", err);
    }
    if (l->head) {
        gf_cli_error("--latency zero needs one full-duplex stream: an input and an output of "
                     "the same host API that open together");
        return GF_EXIT_DEVICE;
    }
    /* Two callbacks on two clocks: allow one block of phase between them. */
    l->hold = l->prime + l->period_frames;
    if ((err = Pa_OpenStream(&l->s_in, &pin, NULL, l->rate, F, paNoFlag, on_audio, l)) !=
        paNoError) {
        l->s_in = NULL;
        return pa_failed("cannot open the input stream", err);
    }
    if ((err = Pa_OpenStream(&l->s_out, NULL, &pout, l->rate, F, paNoFlag, on_audio, l)) !=
        paNoError) {
        l->s_out = NULL;
        return pa_failed("cannot open the output stream", err);
    }
    return GF_EXIT_OK;
}

int gf_pa_open(gf_pa_link **out, const gf_pa_config *c, gf_source *capture, gf_sink *playback)
{
    *out = NULL;
    gf_pa_link *l = calloc(1, sizeof *l);
    if (!l) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    l->channels = c->channels;
    l->period_frames = c->block;
    l->rate = c->rate;
    l->head = c->head;
    l->tail_taps = c->tail_taps;
    l->most_taps = c->most_taps;
    l->out_ss = c->head && c->precision == GF_PRECISION_F64 ? sizeof(double) : sizeof(float);
    const size_t prime = c->head ? c->head->taps : (c->prime_blocks == 1 ? 1 : 2) * c->block;
    if (make_rings(l, prime) != 0 ||
        (c->head &&
         !(l->zero.tail_buf = malloc(c->head->max_frames * (size_t)l->channels * l->out_ss)))) {
        gf_cli_error("out of memory");
        gf_pa_close(l, 0);
        return GF_EXIT_INTERNAL;
    }
    l->zero.head = c->head;
    l->zero.tail = c->head && c->tail_taps ? &l->out : NULL;
    l->zero.tail_taps = c->tail_taps;
    l->zero.switch_state = c->switch_state;
    l->zero.switch_posted = c->switch_posted;
    if (sem_init(&l->wake, 0, 0) != 0) {
        gf_cli_error("cannot create a semaphore: %s", strerror(errno));
        gf_pa_close(l, 0);
        return GF_EXIT_INTERNAL;
    }
    l->sem_ok = 1;
    const PaDeviceInfo *din = Pa_GetDeviceInfo(c->in_device);
    const PaHostApiInfo *api = din ? Pa_GetHostApiInfo(din->hostApi) : NULL;
    l->clock_watch = api && api->type == paJACK;
    atomic_store_explicit(&l->n.clock_state, l->clock_watch, memory_order_relaxed);
    const int rc = open_streams(l, c);
    if (rc) {
        gf_pa_close(l, 0);
        return rc;
    }
    /* Half a second of start-up in which a short output becomes latency. */
    l->warmup =
        (size_t)(l->rate / 2) > 8 * l->period_frames ? (size_t)(l->rate / 2) : 8 * l->period_frames;
    memset(capture, 0, sizeof *capture);
    capture->ops = &capture_ops;
    capture->state = l;
    capture->path = "audio input";
    capture->streaming = 1;
    capture->fmt = (gf_format){
        .channels = l->channels, .rate = (int)l->rate, .frames = -1, .sample = GF_RAW_F32LE};
    memset(playback, 0, sizeof *playback);
    playback->out.fd = -1;
    playback->ops = &playback_ops;
    playback->state = l;
    playback->fmt = capture->fmt;
    *out = l;
    return GF_EXIT_OK;
}

int gf_pa_start(gf_pa_link *l)
{
    PaError err;
    if (l->duplex)
        err = Pa_StartStream(l->duplex);
    else if ((err = Pa_StartStream(l->s_out)) == paNoError)
        err = Pa_StartStream(l->s_in);
    if (err != paNoError)
        return pa_failed("cannot start the stream", err);
    l->started = 1;
    return GF_EXIT_OK;
}

int gf_pa_active(gf_pa_link *l)
{
    if (l->duplex)
        return Pa_IsStreamActive(l->duplex) == 1;
    return Pa_IsStreamActive(l->s_in) == 1 && Pa_IsStreamActive(l->s_out) == 1;
}

void gf_pa_stop(gf_pa_link *l)
{
    if (!l->started)
        return;
    if (l->duplex)
        Pa_StopStream(l->duplex);
    else {
        Pa_StopStream(l->s_in);
        Pa_StopStream(l->s_out);
    }
    l->started = 0;
}

void gf_pa_close(gf_pa_link *l, int lost)
{
    if (!l || lost)
        return; /* lost: see portaudio_io.h */
    PaStream *streams[3] = {l->duplex, l->s_in, l->s_out};
    for (int i = 0; i < 3; i++)
        if (streams[i]) {
            if (l->started)
                Pa_AbortStream(streams[i]);
            Pa_CloseStream(streams[i]);
        }
    if (l->sem_ok)
        sem_destroy(&l->wake);
    free(l->in_store);
    free(l->out_store);
    free(l->zero.tail_buf);
    free(l);
}

gf_pa_counts *gf_pa_counts_of(gf_pa_link *l)
{
    return &l->n;
}

gf_live_zero *gf_pa_zero_of(gf_pa_link *l)
{
    return l->head ? &l->zero : NULL;
}

int gf_pa_is_duplex(const gf_pa_link *l)
{
    return l->duplex != NULL;
}

size_t gf_pa_prime(const gf_pa_link *l)
{
    return l->prime;
}

void gf_pa_latency(const gf_pa_link *l, double *in_s, double *out_s)
{
    const PaStreamInfo *si = Pa_GetStreamInfo(l->duplex ? l->duplex : l->s_in);
    const PaStreamInfo *so = Pa_GetStreamInfo(l->duplex ? l->duplex : l->s_out);
    *in_s = si ? si->inputLatency : 0.0;
    *out_s = so ? so->outputLatency : 0.0;
}

size_t gf_pa_buffered(const gf_pa_link *l, size_t *out_frames)
{
    *out_frames = gf_ring_read_available(&l->out);
    return gf_ring_read_available(&l->in);
}
