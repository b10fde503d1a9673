/*
 * Changing the filter while playing (--control FILE, SIGHUP).
 *
 * A control thread reads commands, one a line, from a FIFO, a file or
 * standard input ("-"):
 *
 *   ir PATH | coeffs PATH | taps N | a design (lowpass 1000 ...)
 *       a new filter, in the command line's own grammar: NAME VALUE pairs
 *       of --taps, --coeffs, --ir and the design options, the "--" optional
 *       (`lowpass 1000 transition 200`, `--ir room.wav --highpass 40`);
 *       words have no blanks, and "-" (standard input) is no file here
 *   gain DB        the filter times 10^(DB/20) (-120 .. 40)
 *   bypass on|off  pass the input through (one tap of 1), or back
 *   reload         re-read the command line's filter files (as SIGHUP does)
 *   # ...          a comment; blank lines are skipped
 *
 * Each command builds the whole new filter (its taps, the gain, bypass)
 * and a second engine for it on the backend that plays, off the audio and
 * worker threads, then hands it to the worker (worker.h), which lets it
 * hear the input for up to its length (at most a second) before
 * crossfading from the old engine over --crossfade MS; then the old engine
 * is destroyed here. One change at a time, in order. A command that fails
 * (bad syntax, a file that cannot be read, no memory for the engine) is
 * refused with one line, "gpufilt: control: ...", and the old filter plays
 * on. Each change is logged when it completes: "gpufilt: live: filter N
 * from frame F ...".
 */
#ifndef GF_LIVE_CONTROL_H
#define GF_LIVE_CONTROL_H

#include "live/worker.h"

#include <signal.h>

typedef struct gf_live_control gf_live_control;

/*
 * Open --control's FILE (NULL: none; SIGHUP still works) and start the
 * control thread; *reload is the SIGHUP flag the signal handler sets.
 * Returns 0, or an exit code after a one-line error (GF_EXIT_INPUT for a
 * FILE that cannot be opened).
 */
int gf_live_control_start(gf_live_control **out, gf_live *lv, volatile sig_atomic_t *reload);

/* Stop and join the thread (a change under way is left to
 * gf_live_control_destroy, after the worker has stopped). NULL: no-op. */
void gf_live_control_stop(gf_live_control *c);

/* After the worker has stopped: destroy an engine a change left behind,
 * close the file, free. NULL: no-op. */
void gf_live_control_destroy(gf_live_control *c);

/* "filter 2 (from frame 96000)" or "filter 0" for --stats, into buf. */
void gf_live_control_now(gf_live_control *c, char *buf, size_t n);

/* The exit summary's line of changes (none: nothing printed). */
void gf_live_control_summary(gf_live_control *c);

#endif /* GF_LIVE_CONTROL_H */
