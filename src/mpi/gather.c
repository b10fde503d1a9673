/* gpufilt-mpi, compressed output: every rank's samples to rank 0 in rank
 * order, written through OUT's sink. */
#include "mpi.h"

#include <mpi.h>
#include <string.h>
#include <unistd.h>

/* Gathered output: each rank's samples to rank 0 in order, through OUT's
 * sink. */
int gf_mpi_gather_parts(gf_mpi *m)
{
    for (int r = 1; r < m->size; r++) {
        int64_t frames = m->rank == r ? m->written : 0;
        if (m->rank == r)
            MPI_Send(&frames, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
        else if (m->rank == 0)
            MPI_Recv(&frames, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (m->rank != r && m->rank != 0)
            continue;
        const size_t per = PIECE / m->fb ? PIECE / m->fb : 1;
        for (int64_t f = 0; f < frames; f += (int64_t)per) {
            const size_t n = frames - f < (int64_t)per ? (size_t)(frames - f) : per;
            const size_t len = n * m->fb;
            unsigned char *buf = m->rank == 0 ? m->out : m->in;
            if (m->rank == r) {
                if (pread(m->sfd, buf, len, (off_t)(f * (int64_t)m->fb)) != (ssize_t)len)
                    memset(buf, 0, len); /* cannot happen after a good write; rank 0 checks count */
                MPI_Send(buf, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, (int)len, MPI_BYTE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (!m->rc)
                    gf_mpi_sink_write(m, buf, n);
            }
        }
    }
    return gf_mpi_settle(m);
}
