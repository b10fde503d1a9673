/*
 * Live filtering: capture -> filter -> playback through PortAudio.
 *
 * The PortAudio callback never allocates, locks, logs, does I/O or touches
 * the GPU: it moves frames through lock-free single-producer/single-consumer
 * rings to a worker thread that runs the engine in causal mode and back.
 * Built only when CMake finds PortAudio (GPUFILT_HAVE_LIVE).
 */
#ifndef GF_LIVE_H
#define GF_LIVE_H

#include "cli.h"

#include <signal.h>
#include <stddef.h>

/* Print host APIs and devices (index, name, channels, default rate) to
 * stdout. Returns an exit code. */
int gf_live_list_devices(void);

/*
 * Run until o->duration seconds have passed or *stop becomes non-zero (the
 * SIGINT/SIGTERM handler sets it); then stop and close the stream, print the
 * xrun counts and return GF_EXIT_OK. taps[0..ntaps) are the explicit
 * coefficients, or NULL for the mean filter of o->taps taps. Returns an exit
 * code, with a one-line error printed on failure.
 */
int gf_live_run(const gf_cli_options *o, const double *taps, size_t ntaps,
                volatile sig_atomic_t *stop);

#endif /* GF_LIVE_H */
