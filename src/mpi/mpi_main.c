/*
 * gpufilt-mpi: one file filtered by many processes (mpirun -np N
 * gpufilt-mpi IN OUT FILTER [options]), with the bytes of one gpufilt run.
 *
 * Rank r owns a contiguous range [a, b) of the output frames. Every output
 * frame is a frame of the causal filter (same mode: shifted by (T-1)/2;
 * full mode: the input followed by T-1 zeros), so a rank runs a causal
 * engine over the input from a start s before its range and discards the
 * first outputs: s = a - (T-1) for the direct method (the halo), and for
 * the FFT method the partition boundary K partitions before the one that
 * holds a, so that every block it keeps sees the same input blocks as one
 * run does (the partition, like the method and the device, is chosen from
 * the filter and the whole job, as gpufilt chooses it). The input is read
 * from the file itself: a pipe is refused.
 *
 * Writing, through the CLI's own sinks (so quantisation, clipping, headers
 * and metadata are gpufilt's):
 *   uncompressed containers (WAV, W64, RF64, AIFF, CAF with PCM or float
 *   samples) and --out-raw: rank 0 writes OUT's temporary file through the
 *   ordinary sink with the final length, its own frames and zeros for the
 *   others' (with the float containers' peaks put where they are, so the
 *   PEAK chunk is one run's); every other rank encodes its range through
 *   the same sink into a scratch file under TMPDIR and writes its data
 *   bytes at their offset with MPI-IO (MPI_File_write_at_all); rank 0 then
 *   finishes the header and renames the file into place.
 *   other outputs (FLAC, Ogg, ...): every rank filters its range at once
 *   (ranks above 0 into a scratch file of samples), then sends it to rank 0
 *   in rank order, which writes it through the ordinary sink.
 * Every phase ends with an MPI_Allreduce of the ranks' status: a failure on
 * any rank ends the job on every rank with that exit code, one line from
 * rank 0 naming the rank and the reason, and no file under OUT's name.
 */
#include "io/sndfile_format.h"
#include "mpi.h"

#include <fcntl.h>
#include <mpi.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run(gf_mpi *m)
{
    m->r.o = &m->o;
    m->r.taps = m->taps;
    m->r.stop = &m->stop;
    m->r.sink.out.fd = -1;
    m->sfd = -1;
    m->hfd = -1;
    m->hist = m->o.hist_path || m->o.hist_png;
    gf_mpi_open_input(m);
    if (gf_mpi_settle(m))
        return m->rc;
    gf_mpi_setup_engine(m);
    if (gf_mpi_settle(m))
        return m->rc;
    if (gf_mpi_open_output(m))
        return m->rc;
    /* Buffers of the gathered path hold PIECE bytes. */
    if (m->gathered && PIECE > BLOCK * m->fb) {
        void *in = realloc(m->in, PIECE), *out = in ? realloc(m->out, PIECE) : NULL;
        if (in)
            m->in = in;
        if (out)
            m->out = out;
        if (!in || !out)
            gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    }
    if (!gf_mpi_open_scratch(m) && m->hist)
        gf_mpi_hist_scratch(m);
    if (gf_mpi_settle(m))
        return m->rc;
    if (!isnan(m->o.normalize_db)) { /* a pass that measures: the gain */
        gf_mpi_normalize(m);
        if (gf_mpi_settle(m))
            return m->rc;
    }
    gf_mpi_filter_range(m);
    if (gf_mpi_settle(m))
        return m->rc;
    if (m->hist && gf_mpi_hist_gather(m))
        return m->rc;
    if (m->gathered) {
        if (gf_mpi_gather_parts(m))
            return m->rc;
    } else if (gf_mpi_write_fixed(m)) {
        return m->rc;
    }
    /* Rank 0 finishes the header and renames OUT into place. */
    uint64_t clipped = m->r.sink.clipped, all_clipped = 0;
    if (m->rank > 0)
        gf_sink_abort(&m->r.sink);
    MPI_Reduce(&clipped, &all_clipped, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (m->rank == 0) {
        m->r.sink.clipped = all_clipped;
        const int rc = gf_run_commit(&m->r);
        if (rc)
            gf_mpi_failed_cli(m, rc);
    }
    return gf_mpi_settle(m);
}

static void cleanup(gf_mpi *m)
{
    gf_sink_abort(&m->r.sink);
    gf_source_close(&m->r.src);
    gf_hist_out_abort(&m->r.hout); /* no-op after a commit */
    gf_engine_destroy(m->e);
    gf_engine_destroy(m->he);
    if (m->sfd >= 0)
        close(m->sfd);
    if (m->hfd >= 0)
        close(m->hfd);
    if (m->scratch_dir[0])
        rmdir(m->scratch_dir);
    if (m->o.out_path != m->out_path)
        free((char *)m->o.out_path);
    free(m->in);
    free(m->out);
    free(m->hbuf);
    free(m->pk);
    free(m->scaled);
}

/* stderr to /dev/null; returns the saved descriptor, or -1. */
static int quiet_stderr(void)
{
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0)
        return -1;
    const int saved = dup(STDERR_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
    return saved;
}

/* What gpufilt-mpi does not do (yet): refused before any work. */
static const char *refused(const gf_cli_options *o)
{
    if (o->action != GF_ACTION_FILTER && o->action != GF_ACTION_BATCH)
        return "gpufilt-mpi filters one file (IN OUT) or a batch (--out-dir DIR IN...) with a "
               "filter (--live, --list-devices and design-only runs are gpufilt's)";
    if (o->verify)
        return "--verify is not supported by gpufilt-mpi: run gpufilt --verify";
    if (o->json_summary)
        return "--json-summary is not supported by gpufilt-mpi";
    if (o->jobs)
        return "--jobs is gpufilt's: gpufilt-mpi's workers are its ranks (mpirun -np N)";
    if (!isnan(o->normalize_db) && (o->hist_path || o->hist_png))
        return "--normalize with --hist is not supported by gpufilt-mpi: run gpufilt";
    if (!isnan(o->normalize_db) && o->action == GF_ACTION_BATCH)
        return "--normalize with --out-dir is not supported by gpufilt-mpi: run gpufilt";
    if (o->method == GF_METHOD_NUPC && o->action == GF_ACTION_FILTER)
        return "--method nupc filters one file on one rank: run gpufilt, or a batch";
    return NULL;
}

/* Rank 0's last words: the first `warned` warnings kept, a batch's
 * report, the failure. */
static void speak(gf_mpi *m, size_t warned)
{
    for (size_t i = 0; i < warned && gf_cli_kept_message(0, i); i++)
        fprintf(stderr, "gpufilt-mpi: warning: %s\n", gf_cli_kept_message(0, i));
    if (m->report)
        fputs(m->report, stderr);
    free(m->report);
    if (m->rc)
        fprintf(stderr, "gpufilt-mpi: error: %s\n", m->err);
}

int main(int argc, char **argv)
{
    gf_header_probe_start(); /* before MPI's threads (io/sndfile_format.h) */
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    gf_mpi m;
    memset(&m, 0, sizeof m);
    m.sfd = m.hfd = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.size);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    /* One voice: while the job runs every rank's messages are kept, not
     * printed; in the end rank 0 prints its warnings and, on failure, the
     * one line naming the rank that failed. Usage errors come first, from
     * rank 0. */
    int saved_err = -1;
    gf_cli_options o;
    if (m.rank > 0)
        saved_err = quiet_stderr();
    int rc = gf_cli_parse(argc, argv, &o);
    if (rc || o.action == GF_ACTION_DONE) {
        MPI_Finalize();
        return rc;
    }
    const char *no = refused(&o);
    if (no) {
        if (m.rank == 0)
            fprintf(stderr, "gpufilt-mpi: error: %s\n", no);
        MPI_Finalize();
        return GF_EXIT_USAGE;
    }
    const int summary = !o.quiet;
    o.quiet = 1;
    /* Each rank's GPU: its rank on its node picks one of --gpus's, or of
     * all the node's GPUs (gf_cli_choose_gpus). */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &o.gpu_rank);
    MPI_Comm_free(&node);
    m.o = o;
    /* A batch's file runs stop at a signal and remove their own files. */
    gf_mpi_reap_install(o.action == GF_ACTION_BATCH ? &m.stop : NULL);
    gf_cli_keep_messages();
    if (m.rank == 0)
        saved_err = quiet_stderr();
    m.out_path = o.out_path;
    gf_taps taps;
    memset(&taps, 0, sizeof taps);
    if ((rc = gf_taps_load(&o, &taps)) != 0)
        gf_mpi_failed_cli(&m, rc);
    m.taps = &taps;
    /* A batch's runs say their own warnings, in its report. */
    size_t warned = 0;
    while (gf_cli_kept_message(0, warned))
        warned++;
    rc = m.rc                          ? gf_mpi_settle(&m)
         : o.action == GF_ACTION_BATCH ? gf_mpi_batch(&m, summary)
                                       : run(&m);
    if (o.action != GF_ACTION_BATCH)
        warned = SIZE_MAX;
    if (!m.rc)
        gf_mpi_reap_clear();
    cleanup(&m);
    gf_taps_free(&taps);
    if (saved_err >= 0) {
        dup2(saved_err, STDERR_FILENO);
        close(saved_err);
    }
    if (m.rank == 0)
        speak(&m, warned);
    MPI_Finalize();
    return rc;
}
