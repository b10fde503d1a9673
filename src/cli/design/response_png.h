/*
 * The picture of a filter's response (--response-png): against frequency
 * on a log axis from below the lowest band edge to Nyquist,
 *   - the gain in dB, each pixel column spanning the lowest to the highest
 *     gain within it (so no stopband lobe hides between pixels), over the
 *     designs' passbands (green) and stopbands (red), with each design's
 *     attenuation target dashed across its stopbands and EQ curves drawn
 *     as the target they are;
 *   - the passbands magnified, with Kaiser's ripple bound dashed (band
 *     designs only);
 *   - the group delay in ms where the gain is within 40 dB of its peak.
 * Up to 8 filters (one per channel) in distinct colours. Drawn on the
 * canvas the histogram picture uses too (draw/canvas.h), written by the
 * one PNG writer (draw/png_write.h).
 */
#ifndef GF_RESPONSE_PNG_H
#define GF_RESPONSE_PNG_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One design whose bands and target are marked. */
typedef struct gf_response_section {
    const gf_design_spec *spec; /* band; for EQ, the curve */
    const gf_design_info *info; /* bands, attenuation, ripple bound */
    const char *label;          /* "--lowpass 1000" */
} gf_response_section;

/* What to draw. */
typedef struct gf_response_plot {
    const double *h; /* filters x n taps, filter-major */
    size_t n;
    int filters;
    double rate; /* Hz, > 0 */
    const gf_response_section *sections;
    int nsections;
    const char *title; /* what the filter is, e.g. "--lowpass 1000" */
} gf_response_plot;

/* A rendered picture, RGB, and where its magnitude panel lies (for tests:
 * gf_response_x and gf_response_y give pixel positions). */
typedef struct gf_response_image {
    uint8_t *px;
    int w, h;
    int plot_x, plot_w;    /* the plots' first column and width */
    int mag_y, mag_h;      /* the magnitude plot's first row and height */
    double f_lo, f_hi;     /* Hz at the left and right edges */
    double db_top, db_bot; /* dB at the magnitude plot's top and bottom */
} gf_response_image;

/* The colours the tests look for. */
extern const uint8_t gf_response_curve_rgb[3];  /* the first filter */
extern const uint8_t gf_response_target_rgb[3]; /* attenuation targets */

/* Render p. Returns 0, or an exit code (cli.h) with err set. Free with
 * gf_response_image_free. */
int gf_response_render(const gf_response_plot *p, gf_response_image *img, char *err, size_t n);
void gf_response_image_free(gf_response_image *img);
/* The column of frequency f and the row of gain db in the magnitude plot. */
int gf_response_x(const gf_response_image *img, double f);
int gf_response_y(const gf_response_image *img, double db);

/* Render p and write it to f as PNG. Returns 0, or an exit code with err
 * set (GF_EXIT_OUTPUT when writing failed). */
int gf_response_png_write(FILE *f, const gf_response_plot *p, char *err, size_t n);

#endif /* GF_RESPONSE_PNG_H */
