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

#endif /* GF_VERIFY_H */
