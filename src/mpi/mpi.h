/*
 * gpufilt-mpi's shared state and its parts, one file per concern:
 *
 *   status.c   every rank's status, settled at the end of each phase
 *   range.c    the input, the engine and the frames of this rank's range
 *   output.c   OUT's sink (rank 0), scratch files (other ranks), and where
 *              filtered frames go
 *   fixed.c    fixed-size frames: the peaks merged, OUT's other frames,
 *              every rank's bytes at their offset with MPI-IO
 *   gather.c   compressed output: every rank's samples to rank 0 in order
 *   batch.c    --out-dir: whole files dealt to ranks, largest first
 *   reap.c     the temporary files a signal (mpirun ending a job) removes
 *   hist.c     histograms: ranges on block boundaries, the records to
 *              rank 0 in stream order
 *   mpi_main.c the options and the phases in order
 */
#ifndef GF_MPI_H
#define GF_MPI_H

#include "filter_run.h"

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCK  ((size_t)65536)   /* frames per read, push and write */
#define PIECE  ((size_t)4 << 20) /* bytes per MPI message and MPI-IO call */
#define ERRLEN 512

typedef struct gf_mpi_peak {
    double abs;  /* |x| as the container keeps it (float: |(float)x|) */
    double x;    /* the sample */
    int64_t pos; /* output frame; -1: none */
} gf_mpi_peak;

typedef struct gf_mpi {
    int rank, size;
    gf_cli_options o; /* the options; out_path is the scratch file's on ranks above 0 */
    const char *out_path;
    gf_taps *taps;
    volatile sig_atomic_t stop;
    gf_run r; /* the CLI's run: its source and sink */
    int C;
    size_t ss, fb;       /* bytes per sample and per frame, in the engine's precision */
    int64_t n_in, total; /* input and output frames */
    int64_t a, b;        /* this rank's output frames */
    int gathered;        /* the output is compressed: gathered by rank 0 */
    size_t out_fb;       /* bytes per frame in the output's data (uncompressed) */
    int peaks_on;        /* float container: PEAK chunk */
    int peak_float;      /* ... of float samples */
    gf_mpi_peak *pk;     /* per channel */
    int64_t data_start;  /* offset of this sink's first frame */
    int64_t written;     /* frames of the range emitted so far */
    char scratch_dir[PATH_MAX];
    int sfd; /* gathered: the scratch file of samples, or -1 */
    gf_engine *e;
    /* Histograms (hist.c): on every rank when asked for; rank 0's files
     * are r.hout (r.hist is set on rank 0 alone). */
    int hist;
    gf_hist_config hc;
    int64_t ha, hb; /* this rank's frames of the histogrammed stream */
    gf_engine *he;  /* counts them */
    void *hbuf;     /* its output, dropped */
    int hfd;        /* ranks above 0: the scratch file of records, or -1 */
    uint64_t hrecs; /* records this rank counted */
    char *report;   /* a batch: rank 0's lines for the end (batch.c) */
    int batch_rc;   /* ... and its exit code */
    void *in, *out;
    /* --normalize: the gain (gf_mpi_normalize), the scaled output's buffer */
    double gain;
    void *scaled;
    size_t scaled_cap; /* frames */
    char err[ERRLEN];
    int rc;
} gf_mpi;

/* Where filtered frames go: 0, or an exit code after gf_mpi_fail. */
typedef int (*gf_mpi_emit)(gf_mpi *m, const void *frames, size_t n);

/* ---- status.c ---- */

/* Keep the first failure of this rank (exit code rc and the message);
 * returns rc. */
int gf_mpi_fail(gf_mpi *m, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A CLI function failed with rc after printing (kept) one line. */
int gf_mpi_failed_cli(gf_mpi *m, int rc);
/* Collective: the first failed rank's exit code and message on every rank
 * (0 when all succeeded). */
int gf_mpi_settle(gf_mpi *m);

/* ---- range.c ---- */

/* Open the input (a regular file) and the filter; this rank's range. */
int gf_mpi_open_input(gf_mpi *m);
/* The engine one run over the whole file would use, in causal mode. */
int gf_mpi_setup_engine(gf_mpi *m);
/* Filter this rank's range into its sink or scratch file. */
int gf_mpi_filter_range(gf_mpi *m);

/* ---- output.c ---- */

/* Collective: rank 0 opens OUT; every rank learns how it is written. */
int gf_mpi_open_output(gf_mpi *m);
/* Ranks above 0: the scratch file that holds their part. */
int gf_mpi_open_scratch(gf_mpi *m);
/* All len bytes of b to fd, through EINTR: 0, or -1 with errno. */
int gf_mpi_write_fd(int fd, const void *b, size_t len);
/* n frames through this rank's sink. */
int gf_mpi_sink_write(gf_mpi *m, const void *frames, size_t n);
/* The emitters: into the sink (noting where its data starts and the
 * peaks), or into the scratch file of samples (gathered output). */
int gf_mpi_emit_sink(gf_mpi *m, const void *frames, size_t n);
/* --normalize: a first pass over this rank's range that only measures its
 * output, the ranks' measures combined, the gain chosen by rank 0 as
 * gpufilt chooses it (gf_run_norm_gain) and shared; then the engine reset
 * and the input rewound for gf_mpi_filter_range, which scales by it. 0,
 * or an exit code after gf_mpi_fail. */
int gf_mpi_normalize(gf_mpi *m);
int gf_mpi_emit_scratch(gf_mpi *m, const void *frames, size_t n);

/* ---- hist.c ---- */

/* This rank's range on block boundaries of the histogrammed stream (m->hc
 * set, m->total known), and its frames of that stream. */
void gf_mpi_hist_split(gf_mpi *m);
/* The engine that counts this rank's blocks. */
int gf_mpi_hist_setup(gf_mpi *m);
/* Ranks above 0 (after gf_mpi_open_scratch): the scratch file of records. */
int gf_mpi_hist_scratch(gf_mpi *m);
/* n frames of the histogrammed stream from frame pos: those of this
 * rank's counted; then, at the end, the last records. */
int gf_mpi_hist_feed(gf_mpi *m, int64_t pos, const void *frames, size_t n);
int gf_mpi_hist_finish(gf_mpi *m);

/* ---- fixed.c, gather.c, hist.c: collective ---- */

/* Fixed-size frames: OUT complete in rank 0's temporary file. */
int gf_mpi_write_fixed(gf_mpi *m);
/* Compressed output: every rank's samples through rank 0's sink. */
int gf_mpi_gather_parts(gf_mpi *m);
/* Histograms: every rank's records through rank 0's files, in order. */
int gf_mpi_hist_gather(gf_mpi *m);

/* ---- reap.c: the temporary files a signal removes ---- */

/* SIGTERM, SIGINT and SIGHUP remove the files and the directory named
 * below, then end the rank (exit 130), or with `stop` (a batch, whose
 * file runs remove their own) set *stop and return. An MPI error on
 * MPI_COMM_WORLD or a communicator made from it after this (a peer died)
 * removes them and aborts the job (exit 1). */
void gf_mpi_reap_install(volatile sig_atomic_t *stop);
/* A temporary file (copied; up to 8), and the scratch directory. */
void gf_mpi_reap_file(const char *path);
void gf_mpi_reap_dir(const char *dir);
/* The job succeeded: nothing more to remove. */
void gf_mpi_reap_clear(void);

/* ---- batch.c: collective ---- */

/* --out-dir: the files dealt to ranks, largest first; the batch's exit
 * code (gpufilt --out-dir's), rank 0's lines in m->report; the summary
 * line with `summary`. */
int gf_mpi_batch(gf_mpi *m, int summary);

#endif /* GF_MPI_H */
