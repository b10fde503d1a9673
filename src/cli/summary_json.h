/*
 * --json-summary FILE|-: one JSON object per run, for scripts and batch
 * jobs (README, "Machine-readable summary"). filter.c fills a gf_run_summary
 * at the end of a run, whatever its outcome; this module writes it, with
 * the warnings and errors the run printed (gf_cli_kept_message).
 */
#ifndef GF_SUMMARY_JSON_H
#define GF_SUMMARY_JSON_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gf_run_summary {
    int exit_code;
    const char *input, *output;
    const char *output_format; /* libsndfile's or raw words; NULL: none written */
    int64_t frames_in, frames_out;
    int channels, rate;   /* 0: unknown (null) */
    size_t taps;          /* 0: not known yet (a design not made): null */
    const char *filter;   /* "mean", "coefficients", "impulse response", "design" */
    int taps_per_channel; /* the key "per_channel" */
    /* A matrix response: inputs x outputs (the key "ir_layout": "matrix
     * CxO"; "channels_out": O); matrix_out 0: none ("single" or "per
     * channel", channels_out the input's). */
    int matrix_in, matrix_out;
    int matrix_spectra; /* "matrix_sums": 1 "spectra" (the library's), 0 "samples" */
    const char *mode, *precision, *method; /* NULL method: no engine was made */
    size_t partition;                      /* FFT method (NUPC: its first, B), else 0 */
    const char *fft_wisdom;                /* --fft-wisdom FILE, or NULL */
    const char *backend;                   /* the one in use at the end */
    const char *why;                       /* --device auto's reason, or "" (null) */
    const char *handoff_to;                /* a hand-off asked for: its backend, else NULL */
    int64_t handoff_frame;                 /* where it happened, or -1 */
    const char *handoff_error;             /* why it did not, or "" */
    /* The GPUs that filtered (none: not on cuda): ordinal, chunks, frames,
     * and their channels (the first, 0-based, and how many). */
    int ngpus;
    int gpu[GF_MAX_DEVICES];
    uint64_t gpu_chunks[GF_MAX_DEVICES], gpu_frames[GF_MAX_DEVICES];
    int gpu_first[GF_MAX_DEVICES], gpu_channels[GF_MAX_DEVICES];
    double seconds, engine_seconds; /* engine_seconds: null without an engine (method) */
    uint64_t clipped;
    /* --verify: verify 0 none, 1 direct (against the serial reference),
     * 2 FFT (against exact sums). */
    int verify;
    uint64_t compared, differ, max_ulp;
    double max_abs_error, reference_seconds;
    double bound, ratio; /* FFT: the largest error's bound and ratio */
    int all_checked;     /* FFT: every output (else a sample) */
    /* Levels: --gain in dB; --normalize-filter's measure (norm_by NULL:
     * none) and factor; the mix (mix 0: none) as factors and the dry tap;
     * --normalize (normalize_by NULL: none): the level asked, the output's
     * measured before, the gain applied, in dB. */
    double gain_db;
    const char *norm_by;
    double norm_measure, norm_factor;
    int mix;
    double dry, wet;
    size_t dry_tap;
    const char *normalize_by;
    double normalize_level_db, normalize_measured_db, normalize_gain_db;
    /* An impulse response resampled (--ir-rate): from and to Hz, and its
     * file's taps; ir_from 0: none (the key "ir_resampled" is null). */
    int ir_from, ir_to;
    size_t ir_taps_from;
    /* The dither written ("tpdf", "shaped") and its seed; NULL: none (the
     * key "dither" is null). */
    const char *dither;
    uint64_t seed;
} gf_run_summary;

/* Write s as one line of JSON to path ("-": standard output), under a
 * temporary name until complete. An exit code after a one-line error. */
int gf_summary_json_write(const char *path, const gf_run_summary *s);

#endif /* GF_SUMMARY_JSON_H */
