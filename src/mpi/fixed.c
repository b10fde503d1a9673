/* gpufilt-mpi, fixed-size frames: rank 0's container with the final
 * length, then every rank's data bytes at their offset with MPI-IO. */
#include "mpi.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The peaks of every rank, merged in stream order (the first of the
 * largest), where rank 0 needs them. */
static int merge_peaks(gf_mpi *m, gf_mpi_peak *all)
{
    const int n = m->C * 3;
    double *mine = malloc((size_t)n * sizeof *mine), *every = NULL;
    if (m->rank == 0)
        every = malloc((size_t)n * (size_t)m->size * sizeof *every);
    if (!mine || (m->rank == 0 && !every)) {
        free(mine);
        free(every);
        return -1;
    }
    for (int c = 0; c < m->C; c++) {
        mine[3 * c] = m->pk[c].abs;
        mine[3 * c + 1] = m->pk[c].x;
        mine[3 * c + 2] = (double)m->pk[c].pos; /* exact below 2^53 frames */
    }
    MPI_Gather(mine, n, MPI_DOUBLE, every, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (m->rank == 0)
        for (int c = 0; c < m->C; c++) {
            all[c].pos = -1;
            for (int r = 0; r < m->size; r++) {
                const double *v = every + (size_t)r * (size_t)n + 3 * (size_t)c;
                if (v[2] >= 0 && (all[c].pos < 0 || v[0] > all[c].abs))
                    all[c] = (gf_mpi_peak){.abs = v[0], .x = v[1], .pos = (int64_t)v[2]};
            }
        }
    free(mine);
    free(every);
    return 0;
}

/* Rank 0, fixed-size frames: the rest of OUT's frames as zeros (the
 * peaks in place), so that the sink's header counts them all. */
static int write_rest(gf_mpi *m, const gf_mpi_peak *all)
{
    memset(m->out, 0, BLOCK * m->fb);
    for (int64_t f = m->b; f < m->total;) {
        const size_t n = m->total - f < (int64_t)BLOCK ? (size_t)(m->total - f) : BLOCK;
        for (int c = 0; all && c < m->C; c++)
            if (all[c].pos >= f && all[c].pos < f + (int64_t)n) {
                const size_t i = (size_t)(all[c].pos - f) * (size_t)m->C + (size_t)c;
                if (m->o.precision == GF_PRECISION_F32)
                    ((float *)m->out)[i] = (float)all[c].x;
                else
                    ((double *)m->out)[i] = all[c].x;
            }
        const int rc = gf_mpi_sink_write(m, m->out, n);
        if (rc)
            return rc;
        memset(m->out, 0, n * m->fb);
        f += (int64_t)n;
    }
    return 0;
}

/* Every rank's data bytes at their offset in OUT's temporary file. */
static int write_parts(gf_mpi *m)
{
    /* Rank 0's temporary file and where its data starts. */
    char tmp[PATH_MAX + 64];
    int64_t start = m->data_start;
    memset(tmp, 0, sizeof tmp);
    if (m->rank == 0)
        snprintf(tmp, sizeof tmp, "%s", m->r.sink.out.tmp ? m->r.sink.out.tmp : "");
    MPI_Bcast(tmp, sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&start, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    /* Ranks above 0: their scratch sink finished, its data read back. */
    uint64_t bytes = 0;
    int64_t from = 0;
    unsigned char *buf = NULL;
    if (m->rank > 0 && m->a < m->b) {
        gf_sink *k = &m->r.sink;
        if (k->ops->finish && k->ops->finish(k, m->err, sizeof m->err) != 0)
            gf_mpi_fail(m, GF_EXIT_OUTPUT, "%s", m->err);
        bytes = (uint64_t)(m->b - m->a) * m->out_fb;
        from = m->data_start;
        if (!(buf = malloc(PIECE)))
            gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    }
    if (gf_mpi_settle(m)) {
        free(buf);
        return m->rc;
    }
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        free(buf);
        char why[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, why, &len);
        gf_mpi_fail(m, GF_EXIT_OUTPUT, "MPI-IO cannot open output '%s': %s", m->out_path, why);
        return gf_mpi_settle(m);
    }
    uint64_t rounds = (bytes + PIECE - 1) / PIECE, most = 0;
    MPI_Allreduce(&rounds, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    const int64_t at = start + (m->a) * (int64_t)m->out_fb;
    for (uint64_t i = 0; i < most; i++) {
        size_t len = 0;
        if (i * PIECE < bytes && !m->rc) {
            len = bytes - i * PIECE < PIECE ? (size_t)(bytes - i * PIECE) : PIECE;
            const ssize_t got =
                pread(m->r.sink.out.fd, buf, len, (off_t)(from + (int64_t)(i * PIECE)));
            if (got != (ssize_t)len) {
                gf_mpi_fail(m, GF_EXIT_OUTPUT, "reading back the scratch file: %s",
                            got < 0 ? strerror(errno) : "short read");
                len = 0;
            }
        }
        MPI_Status st;
        if (MPI_File_write_at_all(fh, (MPI_Offset)(at + (int64_t)(i * PIECE)), buf, (int)len,
                                  MPI_BYTE, &st) != MPI_SUCCESS)
            gf_mpi_fail(m, GF_EXIT_OUTPUT, "writing output '%s' at its offset: MPI-IO failed",
                        m->out_path);
    }
    free(buf);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        gf_mpi_fail(m, GF_EXIT_OUTPUT, "closing output '%s' (MPI-IO) failed", m->out_path);
    return gf_mpi_settle(m);
}

/* Fixed-size frames: rank 0 writes the rest of a container (zeros, the
 * merged peaks in place: libsndfile builds the header and the PEAK chunk
 * from the frames written through it), then every rank its bytes at their
 * offset. Headerless output has nothing to count: rank 0 writes only its
 * own frames and the others' bytes make the file whole. */
int gf_mpi_write_fixed(gf_mpi *m)
{
    gf_mpi_peak *all = m->rank == 0 ? calloc((size_t)m->C, sizeof *all) : NULL;
    if ((m->rank == 0 && !all) || (m->peaks_on && merge_peaks(m, all) != 0))
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (!m->peaks_on && all)
        for (int c = 0; c < m->C; c++)
            all[c].pos = -1;
    if (m->rank == 0 && !m->rc && m->r.sink.fmt.container)
        write_rest(m, all);
    free(all);
    if (gf_mpi_settle(m))
        return m->rc;
    return write_parts(m);
}
