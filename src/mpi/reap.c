/*
 * gpufilt-mpi: what a killed rank leaves. When a rank dies (SIGKILL, a
 * crash), mpirun ends the job: it sends the other ranks SIGCONT, a second
 * later SIGTERM, and a second after that SIGKILL. A rank can do nothing
 * about its own SIGKILL, so every rank knows every temporary file the job
 * has made that it can reach (rank 0's beside OUT and beside the histogram
 * files, shared with every rank; its own scratch file and directory) and
 * removes them when SIGTERM, SIGINT or SIGHUP comes: whichever rank
 * survives cleans up, rank 0's files included when rank 0 was the one
 * killed. Only async-signal-safe calls (unlink, rmdir, _exit) run in the
 * handler, on names copied in before the count that publishes them.
 *
 * A rank talking to the killed one often learns first, from MPI: its
 * connection broke. MPI's default handler (errors are fatal) would end the
 * rank there, before mpirun's SIGTERM, with its files left (seen on a
 * loaded machine); so an MPI error handler removes them too, then aborts
 * the job.
 */
#include "mpi.h"

#include <mpi.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

enum { REAP_MAX = 8 };

static char g_path[REAP_MAX][PATH_MAX + 64];
static volatile sig_atomic_t g_npath;
static char g_dir[PATH_MAX];
static volatile sig_atomic_t g_has_dir;
static volatile sig_atomic_t *g_stop; /* a batch: stop instead of exit */

/* The files and the directory, gone. */
static void reap_now(void)
{
    for (sig_atomic_t i = 0; i < g_npath; i++)
        unlink(g_path[i]);
    if (g_has_dir)
        rmdir(g_dir);
}

static void on_signal(int sig)
{
    reap_now();
    if (g_stop) {
        *g_stop = sig;
        return;
    }
    _exit(GF_EXIT_INTERRUPTED);
}

static void on_mpi_error(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    reap_now();
    MPI_Abort(*comm, GF_EXIT_INTERNAL);
}

void gf_mpi_reap_install(volatile sig_atomic_t *stop)
{
    MPI_Errhandler eh;
    if (MPI_Comm_create_errhandler(on_mpi_error, &eh) == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh); /* communicators made later inherit it */
        MPI_Errhandler_free(&eh);
    }
    g_stop = stop;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void gf_mpi_reap_file(const char *path)
{
    if (!path || !*path || g_npath >= REAP_MAX || strlen(path) >= sizeof g_path[0])
        return;
    memcpy(g_path[g_npath], path, strlen(path) + 1);
    g_npath = g_npath + 1;
}

void gf_mpi_reap_dir(const char *dir)
{
    if (!dir || !*dir || strlen(dir) >= sizeof g_dir)
        return;
    g_has_dir = 0;
    memcpy(g_dir, dir, strlen(dir) + 1);
    g_has_dir = 1;
}

void gf_mpi_reap_clear(void)
{
    g_npath = 0;
    g_has_dir = 0;
}
