/*
 * Live filtering: capture -> filter -> playback through PortAudio.
 *
 * The PortAudio callback never allocates, locks, logs, does I/O or touches
 * the GPU: it moves frames through lock-free single-producer/single-consumer
 * rings (ring.h, portaudio_io.c) to a worker thread that runs the engine in
 * causal mode and back (worker.c). Built only when CMake finds PortAudio
 * (GPUFILT_HAVE_LIVE).
 * docs/live.md describes the options, the latency and the xrun counters.
 *
 * Both functions first run Pa_Initialize in a forked child, because
 * PortAudio 19.6's ALSA backend aborts where no ALSA configuration exists;
 * call them before the process starts any thread.
 */
#ifndef GF_LIVE_H
#define GF_LIVE_H

#include "cli.h"

#include <signal.h>
#include <stddef.h>

/* Print host APIs and devices (index, name, host API, max input/output
 * channels, default rate) to stdout. Returns GF_EXIT_OK, or GF_EXIT_DEVICE
 * when PortAudio cannot be initialised. */
int gf_live_list_devices(void);

/*
 * Run until o->duration seconds have passed or *stop becomes non-zero (the
 * SIGINT/SIGTERM handler sets it); *reload (SIGHUP's handler sets it)
 * re-reads the command line's filter and crossfades to it, as --control's
 * commands change the filter (control.h); then stop and close the stream, print the
 * xrun counts and return GF_EXIT_OK. t holds the taps (t->h NULL: the mean
 * filter of t->n taps). Always causal
 * (o->mode and o->chunk are ignored); one engine chunk per --frames block.
 * Returns an exit code, with a one-line error printed on failure:
 * GF_EXIT_DEVICE for no or unusable audio devices (the message lists what
 * they support), a backend failure, or a stream that stopped by itself;
 * GF_EXIT_USAGE / GF_EXIT_INTERNAL as for files.
 */
int gf_live_run(const gf_cli_options *o, gf_taps *t, volatile sig_atomic_t *stop,
                volatile sig_atomic_t *reload);

#endif /* GF_LIVE_H */
