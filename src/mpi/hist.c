/*
 * gpufilt-mpi, histograms (--hist, --hist-png): every block counted whole
 * by one rank, the records to rank 0 in stream order, written by the
 * CLI's writers (hist_out.h), so the files are one gpufilt run's.
 *
 * Ranges start on block boundaries of the histogrammed stream (gf_mpi_split):
 * a block's rms needs the exact sum of all its samples, so blocks are never
 * split between ranks and never merged from parts. A rank counts its blocks
 * with an engine of its own, the identity filter (one tap of 1, causal)
 * with input histograms, fed the frames it owns: its kept output frames,
 * or with --hist-of input the input frames [a, b) (which every rank reads,
 * since its range's history lies before a and same mode's (T-1)/2 frames of
 * look-ahead after it). The engine counts exactly the samples pushed, in
 * the run's precision, by the rule every backend shares (docs/histograms.md),
 * so its records are the ones one run's engine gives, numbered from the
 * rank's first block. Rank 0 writes its own records as they come; the
 * others keep theirs in a scratch file and send them in rank order after
 * the range is filtered.
 */
#include "mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A record as the ranks exchange it (one build on every rank), followed
 * by its bins. */
typedef struct hrec {
    uint64_t block, first_frame, frames, below, above, nan;
    int64_t channel;
    double min, max, rms;
} hrec;

static size_t rec_bytes(const gf_mpi *m)
{
    return sizeof(hrec) + m->hc.bins * sizeof(uint64_t);
}

/* The ranges on block boundaries: blocks of the histogrammed stream (L
 * frames) dealt to ranks as evenly as whole blocks allow; the last rank's
 * range ends at the output's end (full mode outputs T-1 frames past the
 * input). */
static int64_t boundary(const gf_mpi *m, int k)
{
    if (k >= m->size)
        return m->total;
    const int64_t B = (int64_t)m->hc.block_frames;
    const int64_t L = m->hc.of_input ? m->n_in : m->total;
    const int64_t nb = (L + B - 1) / B, q = nb / m->size, rem = nb % m->size;
    const int64_t at = ((int64_t)k * q + (k < rem ? k : rem)) * B;
    return at < m->total ? at : m->total;
}

void gf_mpi_hist_split(gf_mpi *m)
{
    m->a = boundary(m, m->rank);
    m->b = boundary(m, m->rank + 1);
    const int64_t end = m->hc.of_input ? m->n_in : m->total;
    m->ha = m->a < end ? m->a : end;
    m->hb = m->b < end ? m->b : end;
}

int gf_mpi_hist_setup(gf_mpi *m)
{
    const double one = 1.0;
    gf_config c = gf_config_default();
    c.taps = &one;
    c.num_taps = 1;
    c.mode = GF_MODE_CAUSAL;
    c.method = GF_METHOD_DIRECT;
    c.precision = m->o.precision;
    c.channels = m->C;
    c.device = GF_DEVICE_CPU;
    c.threads = 1;
    gf_hist_config hc = m->hc;
    hc.of_input = 1; /* exactly the samples pushed */
    c.hist = &hc;
    char why[256];
    const gf_status st = gf_engine_create(&c, &m->he, why, sizeof why);
    if (st != GF_OK)
        return gf_mpi_fail(m, st == GF_ERR_NO_MEMORY ? GF_EXIT_INTERNAL : GF_EXIT_USAGE,
                           "histograms: %s", why);
    if (!(m->hbuf = malloc(BLOCK * m->fb)))
        return gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    return 0;
}

/* Ranks above 0: the scratch file of records (in the scratch directory). */
int gf_mpi_hist_scratch(gf_mpi *m)
{
    if (m->rank == 0 || m->ha == m->hb)
        return 0;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/hist", m->scratch_dir);
    if ((m->hfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
        return gf_mpi_fail(m, GF_EXIT_OUTPUT, "scratch file '%s': %s", path, strerror(errno));
    unlink(path);
    return 0;
}

/* Every record the engine has completed: numbered in the whole stream,
 * written (rank 0) or kept for rank 0. */
static int collect(gf_mpi *m)
{
    const uint64_t first = (uint64_t)m->ha / m->hc.block_frames;
    gf_hist_record rec;
    gf_status st;
    while ((st = gf_engine_hist_next(m->he, &rec)) == GF_OK) {
        rec.block += first;
        rec.first_frame += (uint64_t)m->ha;
        m->hrecs++;
        if (m->rank == 0) {
            const int rc = gf_hist_out_write(m->r.hout, &rec, m->err, sizeof m->err);
            if (rc)
                return gf_mpi_fail(m, rc, "%s", m->err);
            continue;
        }
        const hrec h = {rec.block, rec.first_frame, rec.frames, rec.below, rec.above,
                        rec.nan,   rec.channel,     rec.min,    rec.max,   rec.rms};
        if (gf_mpi_write_fd(m->hfd, &h, sizeof h) != 0 ||
            gf_mpi_write_fd(m->hfd, rec.bins, m->hc.bins * sizeof *rec.bins) != 0)
            return gf_mpi_fail(m, GF_EXIT_OUTPUT, "scratch file under '%s': %s", m->scratch_dir,
                               strerror(errno));
    }
    if (st != GF_NO_RECORD)
        return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->he, st));
    return 0;
}

/* Pull (and drop: the identity's output is its input) what the engine has
 * ready, then its records. */
static int drain(gf_mpi *m)
{
    for (;;) {
        size_t got = 0;
        const gf_status st = gf_engine_pull(m->he, m->hbuf, BLOCK, &got);
        if (st != GF_OK)
            return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->he, st));
        if (got == 0)
            return collect(m);
    }
}

int gf_mpi_hist_feed(gf_mpi *m, int64_t pos, const void *frames, size_t n)
{
    /* Only the frames of [ha, hb) are this rank's to count. */
    int64_t from = pos < m->ha ? m->ha : pos, to = pos + (int64_t)n;
    if (to > m->hb)
        to = m->hb;
    const unsigned char *p = (const unsigned char *)frames + (size_t)(from - pos) * m->fb;
    for (int64_t left = to - from; left > 0;) {
        size_t used = 0;
        const gf_status st = gf_engine_push(m->he, p, (size_t)left, &used);
        if (st != GF_OK)
            return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->he, st));
        p += used * m->fb;
        left -= (int64_t)used;
        const int rc = drain(m);
        if (rc)
            return rc;
    }
    return 0;
}

int gf_mpi_hist_finish(gf_mpi *m)
{
    const gf_status st = gf_engine_flush(m->he);
    if (st != GF_OK)
        return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->he, st));
    return drain(m);
}

/* Collective: ranks above 0 send their records to rank 0 in rank order,
 * which writes them; then rank 0 checks that every block came, once. */
int gf_mpi_hist_gather(gf_mpi *m)
{
    const size_t rb = rec_bytes(m), per = PIECE / rb ? PIECE / rb : 1;
    unsigned char *buf = NULL;
    if (m->rank == 0 || m->hrecs > 0)
        if (!(buf = malloc(per * rb)))
            gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (gf_mpi_settle(m)) {
        free(buf);
        return m->rc;
    }
    uint64_t total = m->hrecs;
    for (int r = 1; r < m->size; r++) {
        uint64_t recs = m->rank == r ? m->hrecs : 0;
        if (m->rank == r)
            MPI_Send(&recs, 1, MPI_UINT64_T, 0, 3, MPI_COMM_WORLD);
        else if (m->rank == 0)
            MPI_Recv(&recs, 1, MPI_UINT64_T, r, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (m->rank != r && m->rank != 0)
            continue;
        total += m->rank == 0 ? recs : 0;
        for (uint64_t i = 0; i < recs; i += per) {
            const size_t k = recs - i < per ? (size_t)(recs - i) : per;
            const size_t len = k * rb;
            if (m->rank == r) {
                if (pread(m->hfd, buf, len, (off_t)(i * rb)) != (ssize_t)len)
                    memset(buf, 0, len); /* cannot happen after a good write; rank 0 checks */
                MPI_Send(buf, (int)len, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
                continue;
            }
            MPI_Recv(buf, (int)len, MPI_BYTE, r, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t j = 0; j < k && !m->rc; j++) {
                hrec h;
                memcpy(&h, buf + j * rb, sizeof h);
                const gf_hist_record rec = {
                    .block = h.block,
                    .first_frame = h.first_frame,
                    .frames = h.frames,
                    .channel = (int)h.channel,
                    .below = h.below,
                    .above = h.above,
                    .nan = h.nan,
                    .min = h.min,
                    .max = h.max,
                    .rms = h.rms,
                    .bins = (const uint64_t *)(void *)(buf + j * rb + sizeof h),
                };
                const int rc = gf_hist_out_write(m->r.hout, &rec, m->err, sizeof m->err);
                if (rc)
                    gf_mpi_fail(m, rc, "%s", m->err);
            }
        }
    }
    free(buf);
    if (m->rank == 0 && !m->rc) {
        const int64_t L = m->hc.of_input ? m->n_in : m->total;
        const uint64_t B = m->hc.block_frames;
        const uint64_t want = ((uint64_t)L + B - 1) / B * (m->hc.mix ? 1 : (uint64_t)m->C);
        if (total != want)
            gf_mpi_fail(m, GF_EXIT_INTERNAL,
                        "internal error: %llu histogram records, expected %llu",
                        (unsigned long long)total, (unsigned long long)want);
    }
    return gf_mpi_settle(m);
}
