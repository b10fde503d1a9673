/*
 * The live worker thread and the state it shares with live.c: it reads
 * blocks from the capture source, runs them through the engine (causal;
 * push, submit, wait, pull) and writes them to the playback sink, then
 * writes the histogram records the block completed. It never runs on the
 * audio thread; the audio callback only moves frames (portaudio_io.h).
 */
#ifndef GF_LIVE_WORKER_H
#define GF_LIVE_WORKER_H

#include "cli.h"
#include "hist_out/hist_out.h"
#include "io/io.h"
#include "live/head.h"
#include "live/portaudio_io.h"

#include <pthread.h>
#include <stdatomic.h>

/*
 * A change of filter (control.h), handed from the control thread to the
 * worker through `state` (release on each change, acquire on reading):
 *
 *   GF_SWITCH_IDLE    the control thread owns everything
 *   GF_SWITCH_POSTED  the control thread has set e, warm_blocks, fade and
 *                     command; the worker takes it at its next block
 *   GF_SWITCH_TAKEN   the worker feeds e as well as the playing engine:
 *                     warm_blocks blocks of warm-up (output discarded) from
 *                     frame `warm_from`, then the crossfade over frames
 *                     fade_from .. fade_from + fade - 1
 *   GF_SWITCH_DONE    e plays; the old engine is in `old` for the control
 *                     thread to destroy (off the audio and worker threads)
 *
 * Frames count the worker's blocks from the start of the stream (the
 * engine's input and output frame index: live filtering is causal).
 */
enum { GF_SWITCH_IDLE, GF_SWITCH_POSTED, GF_SWITCH_TAKEN, GF_SWITCH_DONE };

typedef struct gf_live_switch {
    atomic_int state;
    gf_engine *e, *old;
    size_t warm_blocks;           /* blocks the new engine hears before the fade */
    size_t fade;                  /* frames of crossfade; 0: a cut at a block boundary */
    unsigned long long warm_from; /* set by the worker */
    unsigned long long fade_from; /* set by the worker */
    char command[256];            /* what asked for it, for the log */
} gf_live_switch;

typedef struct gf_live {
    const gf_cli_options *o;
    int channels;
    size_t period_frames; /* frames per period: each callback's, and the engine's chunk */
    double rate;          /* Hz */
    gf_precision prec;
    gf_pa_link *link;
    gf_source capture;
    gf_sink playback;
    gf_engine *e;
    /* --hist: records go to the files from the worker (never the callback) */
    gf_hist_config hc;
    gf_hist_out *hout;
    int hist_failed; /* worker only; read after it is joined */
    char hist_err[512];
    /* the worker */
    void *in, *out; /* one block each, in the engine's precision */
    pthread_t thread;
    int thread_started, realtime;
    atomic_int worker_tid; /* set by the worker as it starts */
    /* memory locked (rt.h), or why not; page faults of the worker and the
     * callbacks when the start-up ended (faults_base_set: taken) */
    int locked;
    char lock_why[160];
    int faults_base_set;
    unsigned long long faults_base[3]; /* callback in, callback out, worker */
    atomic_int failed;                 /* set (release) after err is written */
    char err[512];
    atomic_ullong blocks, busy_ns_total, busy_ns_max;
    /* changes of filter (--control, SIGHUP): the worker's side */
    gf_live_switch sw;
    void *out2;                /* the incoming engine's block */
    unsigned long long frames; /* worker only: frames filtered so far */
    gf_device device;          /* the backend every engine of the run uses */
    /* --latency zero: the head the callback filters (head.taps 0 otherwise);
     * e is the tail's engine, NULL where the head is the whole filter */
    gf_live_head head;
    int zero_period_told;    /* the monitor said the host's periods outrun the head */
    size_t taps;             /* the whole filter's */
    atomic_size_t most_taps; /* the longest whole filter played yet (raised before it plays) */
    size_t tail_taps;        /* --latency zero: the worker's (a silent one with --control) */
    gf_live_latency latency; /* what plays: --latency, or what auto chose */
    int mean;                /* it is the mean filter (--taps N) */
} gf_live;

/*
 * An engine for taps t as live audio runs it (causal, one block per chunk,
 * the FFT method's partition the block), on `device`, histograms when hc
 * is not NULL, run once over a block of silence and reset so that lazy
 * start-up work is done. The first engine (first = 1, the main thread,
 * before the stream starts) falls back to the CPU under --device auto when
 * the GPU cannot take it; a later one (the control thread, while the first
 * plays) stays on `device` and on the GPU is refused first when its free
 * memory clearly cannot hold it. Returns an exit code after a one-line
 * error.
 */
int gf_live_make_engine(gf_live *lv, const gf_taps *t, gf_device device, int first,
                        gf_hist_config *hc, gf_engine **out);

/* Start the worker, at a modest real-time priority where allowed (below
 * JACK's own threads). Returns 0, or GF_EXIT_INTERNAL after an error. */
int gf_live_worker_start(gf_live *lv);

/* Interrupt the capture source and join the worker (no-op if not started). */
void gf_live_worker_stop(gf_live *lv);

/* After the worker has stopped: end the stream so that the last, short
 * block is complete, write its records and put the files in place.
 * Returns an exit code after a one-line error. */
int gf_live_finish_hist(gf_live *lv);

#endif /* GF_LIVE_WORKER_H */
