/*
 * gpufilt: parse the command line, load the taps, run the action
 * (filter.c for IN -> OUT, live/ for --live and --list-devices).
 */
#include "cli.h"
#include "io/sndfile_format.h"
#ifdef GPUFILT_HAVE_LIVE
#include "live/live.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_signal, g_reload;

/* The first signal asks the run to stop, which it does cleanly between
 * blocks; a second ends gpufilt at once, for a run that cannot get there:
 * one waiting in a read that retries when interrupted (libsndfile's, on a
 * pipe whose writer went quiet inside the header). An output's temporary
 * file is then left, and removed by the next run of that output. */
static void on_signal(int sig)
{
    if (g_signal) {
        static const char msg[] =
            "gpufilt: error: interrupted by a second signal: stopped at once\n";
        if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
            /* nothing more to do about it */
        }
        _exit(GF_EXIT_INTERRUPTED);
    }
    g_signal = sig;
}

static void on_reload(int sig)
{
    (void)sig;
    g_reload = 1;
}

/* Signals that end a run cleanly (g_signal, exit 130): besides SIGINT and
 * SIGTERM, every one whose default action would kill gpufilt with its
 * temporary files left behind and that someone else sends: a closed
 * terminal or SSH session (SIGHUP), Ctrl-\ (SIGQUIT), alarms and timers,
 * the user signals, a CPU-time limit (SIGXCPU). SIGPROF is left to
 * profilers, and SIGHUP where it is ignored already (nohup). A file-size
 * limit must surface as a write error, a closed output pipe as EPIPE.
 * With --live, SIGHUP re-reads the filter instead (g_reload; live/control.h). */
static void install_signals(int live)
{
    static const int stop[] = {
        SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGXCPU,
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++) {
        struct sigaction was;
        if (stop[i] == SIGHUP && sigaction(SIGHUP, NULL, &was) == 0 && was.sa_handler == SIG_IGN)
            continue;
        sigaction(stop[i], &sa, NULL);
    }
    if (live) {
        sa.sa_handler = on_reload;
        sigaction(SIGHUP, &sa, NULL);
    }
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
}

static int run_action(const gf_cli_options *o, gf_taps *t)
{
    if (o->action == GF_ACTION_FILTER)
        return gf_filter_run(o, t, &g_signal);
    if (o->action == GF_ACTION_BATCH)
        return gf_batch_run(o, o->ninputs, o->inputs, t, &g_signal);
    if (o->action == GF_ACTION_DESIGN) /* no input: as many channels as filters */
        return gf_taps_ready(o, t, t->filters, o->rate);
    if (o->action == GF_ACTION_LIST_DEVICES)
        gf_cli_list_gpus();
#ifdef GPUFILT_HAVE_LIVE
    return o->action == GF_ACTION_LIVE ? gf_live_run(o, t, &g_signal, &g_reload)
                                       : gf_live_list_devices();
#else
    if (o->action == GF_ACTION_LIST_DEVICES) {
        printf("audio devices: none (this gpufilt was built without PortAudio)\n");
        return GF_EXIT_OK;
    }
    gf_cli_error("this gpufilt was built without PortAudio: --live and --list-devices "
                 "are not available");
    return GF_EXIT_DEVICE;
#endif
}

int main(int argc, char **argv)
{
    gf_cli_options o;
    int rc = gf_cli_parse(argc, argv, &o);
    if (rc || o.action == GF_ACTION_DONE)
        return rc;
    if (o.action == GF_ACTION_WISDOM)
        return gf_cli_make_wisdom(&o);
    /* While gpufilt has one thread: the process that probes headers
     * (io/sndfile_format.h). */
    gf_header_probe_start();
    install_signals(o.action == GF_ACTION_LIVE);
    char detail[512];
    if (o.fft_wisdom && gf_fft_wisdom_load(o.fft_wisdom, detail, sizeof detail) != GF_OK) {
        gf_cli_error("--fft-wisdom: %s", detail);
        return GF_EXIT_USAGE;
    }
    if (o.json_summary)
        gf_cli_keep_messages();
    gf_taps taps;
    if ((rc = gf_taps_load(&o, &taps)) != 0)
        return rc;
    rc = run_action(&o, &taps);
    gf_taps_free(&taps);
    return rc;
}
