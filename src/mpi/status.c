/* gpufilt-mpi: every rank's status, settled at the end of each phase. */
#include "mpi.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gf_mpi_fail(gf_mpi *m, int rc, const char *fmt, ...)
{
    if (!m->rc) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->err, sizeof m->err, fmt, ap);
        va_end(ap);
        m->rc = rc;
    }
    return rc;
}

/* A CLI function failed with rc after printing (kept) one line. */
int gf_mpi_failed_cli(gf_mpi *m, int rc)
{
    const char *msg = NULL;
    for (size_t i = 0; gf_cli_kept_message(1, i); i++)
        msg = gf_cli_kept_message(1, i);
    return gf_mpi_fail(m, rc, "%s", msg ? msg : "failed");
}

/* Every rank's status: the first failed rank's exit code and message on
 * every rank (0 when all succeeded). */
int gf_mpi_settle(gf_mpi *m)
{
    int mine = m->rc ? m->rank : m->size, first = m->size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == m->size)
        return 0;
    int rc = m->rc;
    char err[ERRLEN];
    memcpy(err, m->err, sizeof err);
    MPI_Bcast(&rc, 1, MPI_INT, first, MPI_COMM_WORLD);
    MPI_Bcast(err, sizeof err, MPI_CHAR, first, MPI_COMM_WORLD);
    err[sizeof err - 1] = 0;
    /* Rank 0's one line names the rank that failed. */
    m->rc = rc;
    snprintf(m->err, sizeof m->err, "rank %d: %.*s", first, ERRLEN - 32, err);
    return rc;
}
