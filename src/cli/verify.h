/*
 * --verify: compares the backend's output stream with the serial
 * reference's, sample by sample, as the two arrive (either may run ahead).
 */
#ifndef GF_VERIFY_H
#define GF_VERIFY_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gf_verify {
    gf_precision precision;
    size_t channels;
    unsigned char *pending[2]; /* frames one side has produced beyond the other */
    size_t count[2], cap[2];
    uint64_t compared, differ;
    double max_abs;
    uint64_t max_ulp;
} gf_verify;

void gf_verify_init(gf_verify *v, gf_precision p, size_t channels);
/* side 0: the backend under test, side 1: the reference. 0, or
 * GF_EXIT_INTERNAL when out of memory. */
int gf_verify_feed(gf_verify *v, int side, const void *frames, size_t n);
void gf_verify_free(gf_verify *v);

/*
 * --verify for histograms: the records of both sides are compared as they
 * arrive: exact equality of every count and the bits of min, max and rms.
 */
typedef struct gf_hist_verify {
    size_t bins;
    gf_hist_record *rec[2]; /* records one side has produced beyond the other */
    uint64_t *counts[2];    /* their bins, `bins` each */
    size_t head[2], count[2], cap[2];
    uint64_t compared, differ;
    char first[160]; /* the first difference, or "" */
} gf_hist_verify;

void gf_hist_verify_init(gf_hist_verify *v, size_t bins);
/* 0, or GF_EXIT_INTERNAL when out of memory. */
int gf_hist_verify_feed(gf_hist_verify *v, int side, const gf_hist_record *r);
void gf_hist_verify_free(gf_hist_verify *v);

/*
 * --verify for the FFT method (verify_exact.c): outputs against the exact
 * sum y[i] = sum_k h_c[k] x_c[i + off - k] (off = (T-1)/2 in same mode,
 * else 0; x outside the input is 0), computed in double for f32 engines and
 * in long double with compensated summation for f64. Every output is
 * checked when the work (outputs x channels x taps) is at most 2^32
 * multiply-adds (2^30 in long double); otherwise a seeded stratified
 * sample: the output frames cut
 * into strata, one frame (all its channels) drawn from each, at least
 * 100,000 outputs in all (one frame in 64 for a stream of unknown length).
 * The largest error of each channel is compared at the end with
 * gf_engine_error_bound for the channel's largest |x|.
 */
typedef struct gf_verify_exact gf_verify_exact;

/* For engine e (FFT method) over total_in input frames (< 0: unknown);
 * inputs run at most `slack` frames ahead of the outputs given. NULL when
 * out of memory. */
gf_verify_exact *gf_verify_exact_create(gf_engine *e, int64_t total_in, size_t slack);
void gf_verify_exact_destroy(gf_verify_exact *v);
/* The next n input frames, as fed to the engine. */
void gf_verify_exact_input(gf_verify_exact *v, const void *frames, size_t n);
/* The next n output frames, as pulled from the engine. */
void gf_verify_exact_output(gf_verify_exact *v, const void *frames, size_t n);
/* The outcome so far: the largest error's ratio to its channel's bound. */
typedef struct gf_verify_exact_result {
    uint64_t checked;             /* outputs compared */
    int all;                      /* every output (else a seeded sample) */
    double max_err, bound, ratio; /* of the channel with the largest ratio */
    int channel;
    uint64_t unlike;    /* outputs non-finite where the exact sum is not, or the reverse */
    int unlike_channel; /* the first of them: its channel (lowest) and frame */
    uint64_t unlike_at;
    double seconds; /* spent on the exact sums */
} gf_verify_exact_result;
gf_verify_exact_result gf_verify_exact_get(const gf_verify_exact *v);
/* Print the report (two lines on stderr, a third for outputs whose
 * finiteness differs from the exact sum's); GF_EXIT_OK, or GF_EXIT_VERIFY
 * when an error exceeds the bound or such outputs exist. */
int gf_verify_exact_report(const gf_verify_exact *v, const char *backend, double t_engine);

#endif /* GF_VERIFY_H */
