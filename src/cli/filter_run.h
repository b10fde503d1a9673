/*
 * One run of IN -> OUT (gpufilt's files and pipes): its state, shared by
 * filter.c, which drives it, and report.c, which says what it did.
 */
#ifndef GF_FILTER_RUN_H
#define GF_FILTER_RUN_H

#include "cli.h"
#include "hist_out/hist_out.h"
#include "io/io.h"
#include "io/stages.h"
#include "verify.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Frames per block between the reader, the engines and the writer. */
#define GF_RUN_BLOCK_FRAMES 65536

/* The run's two engines: the backend under test, and with --verify of the
 * direct method the serial reference. The index is also the side of
 * gf_verify_feed and gf_hist_verify_feed. */
enum { GF_RUN_MAIN = 0, GF_RUN_REF = 1, GF_RUN_ENGINES = 2 };

typedef struct gf_run {
    const gf_cli_options *o;
    gf_taps *taps;
    gf_device handoff; /* --device auto's hand-off device, GF_DEVICE_NONE: none */
    volatile sig_atomic_t *stop;
    double t_start;
    gf_source src;
    gf_engine *e[GF_RUN_ENGINES]; /* e[GF_RUN_REF]: NULL without --verify (direct) */
    double t[GF_RUN_ENGINES];     /* seconds inside each engine's calls */
    /* e[GF_RUN_MAIN]'s configuration, for a batch worker to keep it
     * (gf_cli_options.keep) once the file is done; made: 1 once it is set */
    gf_config made_with;
    int made_gpus[GF_MAX_DEVICES];
    int made;
    int in_place;           /* the backend filters from input blocks into output blocks */
    gf_verify_exact *exact; /* with --verify of the FFT method: the exact sums */
    char why[160];          /* why --device auto chose the backend, or "" */
    gf_sink sink;
    gf_stages stages;
    gf_block *cur; /* output block being filled, or NULL */
    size_t fb;     /* bytes per output frame */
    /* A matrix response (taps->outputs O, C input channels) with the FFT
     * method, on a backend that has the library's matrix: the engine takes
     * C channels and gives O, summed on spectra (lib_matrix). Otherwise the
     * engines run C x O channels, engine channel i*O + o with filter
     * i*O + o. Each input block is expanded into mx_in (input i's sample
     * repeated O times), and what an engine gives (mx_out) summed into O
     * outputs, i ascending, in double, rounded once (matrix_sum). Without a
     * matrix, efb == fb and nothing is expanded. */
    int out_ch;     /* the output's channels: O, or the input's */
    int lib_matrix; /* 1: the engine itself sums a matrix (gf_config.outputs): no mx_ */
    size_t efb;     /* bytes per engine input frame */
    void *mx_in, *mx_out;
    gf_verify verify;
    void *ref_out; /* a block's frames for the reference's output */
    gf_hist_config hc;
    int hist;             /* histograms asked for */
    gf_hist_out *hout;    /* their files */
    gf_hist_verify hv;    /* --verify of the histograms */
    uint64_t hist_blocks; /* records written (backend) */
    /* --normalize (normalize.c): the stages write the filtered output to
     * scratch (raw samples of the run's precision, a temporary file beside
     * OUT) while it is measured; gf_run_normalize scales it into sink, and
     * with hist_late counts the output's histograms then. */
    int normalize, hist_late;
    gf_sink scratch;
    double peak, peak_pos, sumsq; /* largest |y|, largest y, sum of y^2 */
    uint64_t samples;
    double norm_measured_db, norm_gain_db; /* the measure (peak or RMS), the gain applied */
    char err[512];
} gf_run;

/* The sink the stages write to: the scratch file with --normalize. */
static inline gf_sink *gf_run_stage_sink(gf_run *r)
{
    return r->normalize ? &r->scratch : &r->sink;
}

/* ---- the run's files (filter_io.c); each an exit code after one line ---- */

/* Open IN (r->o) into r->src and check it: a terminal refused, a truncated
 * input without --allow-truncated refused, what precision loses warned of. */
int gf_run_open_input(gf_run *r);
/* Open OUT into r->sink, and the histogram files when r->hist (checked
 * against --hist-limit first); never over the input. */
int gf_run_open_outputs(gf_run *r);
/* Put the outputs in place; then what the run still has to say: samples
 * clipped, a partial last frame (GF_EXIT_PARTIAL), a signal
 * (GF_EXIT_INTERRUPTED). */
int gf_run_commit(gf_run *r);

/* --normalize (normalize.c): count frames of output into the measures;
 * after the stream (and --verify), scale the scratch file into OUT. */
void gf_run_measure(gf_run *r, const void *frames, size_t count);
/* After the stream (with hist_late, after the scaling): one histogram
 * record for every block, none missing; an exit code after one line. */
int gf_run_check_hist(gf_run *r);
int gf_run_normalize(gf_run *r);
/* --normalize's gain from what gf_run_measure saw (r->peak, ...) and OUT's
 * encoding (r->sink): LEVEL over the measure, lowered until neither the
 * peak passes LEVEL (or full scale) nor the largest positive sample OUT's
 * largest code, and rounded down to the precision; sets
 * r->norm_measured_db. 1 (with a warning) for a silent output. */
double gf_run_norm_gain(gf_run *r);

#endif /* GF_FILTER_RUN_H */
