/*
 * Capture and playback through PortAudio, as a source and a sink (io.h),
 * with the stream session around them.
 *
 *   audio callback ──in ring──► capture source ──► (the live worker)
 *   audio callback ◄──out ring── playback sink  ◄──
 *
 * The callback only copies frames and counts (C11 atomics) -- and with
 * --latency zero filters the head of the filter (live/head.h); it wakes a
 * reader of the capture source with sem_post, which is async-signal-safe
 * and on Linux (glibc, futex) an atomic increment plus, only when the reader
 * sleeps, one non-blocking FUTEX_WAKE: no lock, no allocation. The output
 * ring starts with `prime` frames of silence: the worker's time budget and
 * the latency gpufilt adds. During the first half second a short output
 * raises that latency instead of counting as an xrun (the host may deliver
 * blocks in bursts).
 *
 * The capture source's read waits for frames (at most one block), converts
 * them to the engine's precision and returns 0 once interrupted. The
 * playback sink's write converts to float and counts what does not fit the
 * ring. One thread reads, one thread writes (the same one, the worker).
 */
#ifndef GF_PORTAUDIO_IO_H
#define GF_PORTAUDIO_IO_H

#include "io/io.h"

#include <stdatomic.h>

/* Counters: written by the callback or the worker, read by anyone. */
typedef struct gf_pa_counts {
    /* callbacks whose status flags carried each PortAudio xrun */
    atomic_ullong pa_in_underflow, pa_in_overflow, pa_out_underflow, pa_out_overflow;
    atomic_ullong in_full, in_dropped;     /* input ring full: frames dropped */
    atomic_ullong out_empty, out_silence;  /* output ring short: silence played */
    atomic_ullong late_events, late_drops; /* frames that came too late, dropped */
    atomic_ullong out_full, out_lost;      /* the worker found the output ring full */
    atomic_ullong clock_jumps;             /* input callbacks a period off the host's clock */
    /* the clock check: 0 none with this host API, 1 not yet on (16
     * callbacks in a row a block apart turn it on), 2 on */
    atomic_int clock_state;
    atomic_ullong muted;                 /* frames silenced after a gap in the input */
    atomic_ullong frames_in, frames_out; /* frames captured / played from the ring */
    atomic_ullong raised;                /* latency added during start-up, frames */
    /* --latency zero: the callback's own work (the head), per callback */
    atomic_ullong head_calls, head_ns_total, head_ns_max;
    atomic_ullong head_frames_max; /* the most frames one callback brought */
    atomic_int warm;               /* start-up phase over */
    /* the threads that call back with input and with output (the same one
     * for a duplex stream), from their first call; 0: none yet */
    atomic_int tid_in, tid_out;
} gf_pa_counts;

typedef struct gf_pa_config {
    int in_device, out_device; /* PortAudio device indexes */
    int channels;
    double rate;      /* Hz */
    size_t block;     /* frames per callback */
    int duplex;       /* try one full-duplex stream first (same host API) */
    int prime_blocks; /* blocks of silence primed into the output ring: 1 or 2 */
    /* --latency zero (live/head.h): the callback filters each period with
     * `head` and adds the worker's output for the tail, primed with
     * head->taps frames of silence and held in the engine's precision; the
     * callback takes the host's buffer size as it comes (PortAudio's
     * paFramesPerBufferUnspecified: no buffering of its own). tail_taps is
     * the tail's length (0: no tail, no worker); after input the worker
     * missed, the output is silent for as long as the tail may be wrong. */
    struct gf_live_head *head;
    size_t tail_taps;
    gf_precision precision;
    /* --latency zero with changes of filter: the switch's state and its
     * value for a posted switch (head.h), or NULL. */
    const atomic_int *switch_state;
    int switch_posted;
    /* The longest filter played yet, in taps (raised before a longer one
     * plays). Input lost before the engine saw it (PortAudio's input
     * overflow: a period the host did not deliver; or the input ring full)
     * leaves a gap in the stream, and each of the most_taps - 1 outputs
     * after it would mix input from both sides: they play silent. */
    const atomic_size_t *most_taps;
} gf_pa_config;

typedef struct gf_pa_link gf_pa_link;

/*
 * Open the streams (one full-duplex stream where c->duplex and the host API
 * allow, else an input and an output stream) and the rings, and wire the
 * capture source and playback sink to them. Returns 0, or GF_EXIT_DEVICE /
 * GF_EXIT_INTERNAL after a one-line error. PortAudio must be initialised.
 */
int gf_pa_open(gf_pa_link **out, const gf_pa_config *c, gf_source *capture, gf_sink *playback);

/* Start the streams; 0 or GF_EXIT_DEVICE after a one-line error. */
int gf_pa_start(gf_pa_link *l);

/* 1 while every stream runs; 0 once one stopped by itself (a device lost,
 * a JACK server gone). */
int gf_pa_active(gf_pa_link *l);

/* Stop the streams (letting queued output play), once they ran. */
void gf_pa_stop(gf_pa_link *l);

/* Close everything. After a lost stream (lost = 1) the streams are left to
 * the process exit: PortAudio 19.6 waits 10 s and then asserts when a stream
 * whose JACK server died is stopped or closed. */
void gf_pa_close(gf_pa_link *l, int lost);

/* What the session reports. */
gf_pa_counts *gf_pa_counts_of(gf_pa_link *l);
/* --latency zero: the callback's state (head.h), or NULL. */
struct gf_live_zero *gf_pa_zero_of(gf_pa_link *l);
int gf_pa_is_duplex(const gf_pa_link *l);
size_t gf_pa_prime(const gf_pa_link *l);                              /* frames of silence primed */
void gf_pa_latency(const gf_pa_link *l, double *in_s, double *out_s); /* PortAudio's */
size_t gf_pa_buffered(const gf_pa_link *l, size_t *out_frames);       /* ring fill: in, out */

#endif /* GF_PORTAUDIO_IO_H */
