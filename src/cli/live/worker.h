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
#include "live/portaudio_io.h"

#include <pthread.h>
#include <stdatomic.h>

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
    atomic_int failed; /* set (release) after err is written */
    char err[512];
    atomic_ullong blocks, busy_ns_total, busy_ns_max;
} gf_live;

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
