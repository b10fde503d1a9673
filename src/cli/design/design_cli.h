/*
 * Filter design on the command line (README, "Filter design"): the design
 * options' values, the --eq file, the cascade of every design with the
 * taps of --taps, --coeffs or --ir, and the files --design-out and
 * --response-png. The library designs (gf_design, gpufilt.h); this module
 * turns options into specifications and results into files and messages.
 *
 * Options, in command-line order:
 *   --lowpass F, --highpass F          cutoff in Hz (-6 dB), e.g. 1000 or 1k
 *   --bandpass F1:F2, --bandreject F1:F2
 *   --eq FILE                          a magnitude curve: "frequency gain_dB" lines
 *   --atten DB, --transition HZ, --design-taps N
 *                                      settings of the design option before
 *                                      them; given before any, of every
 *                                      design option without its own
 *   --phase linear|minimum             of every design
 *   --design-out FILE                  the taps in use: text, or WAV (.wav)
 *   --response-png FILE                their response, drawn
 * Several design options cascade into one filter, in their order; with
 * --taps, --coeffs or --ir the design is cascaded with those taps (every
 * channel's filter).
 *
 * design_options.c holds the values, their checks and --eq; design_cli.c
 * the designing and the files.
 *
 * Every function that can fail prints one line (gf_cli_error) and returns
 * an exit code (cli.h): GF_EXIT_USAGE for bad values, files and designs,
 * GF_EXIT_OUTPUT when a file cannot be written, GF_EXIT_INTERNAL for
 * memory.
 */
#ifndef GF_DESIGN_CLI_H
#define GF_DESIGN_CLI_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdio.h>

struct gf_taps;

/* Most design options in one command. */
#define GF_DESIGN_MAX_SECTIONS 16

/* One design option and the settings given for it (0: not given). */
typedef struct gf_design_section {
    gf_band band;
    double f1, f2;       /* Hz */
    const char *eq_path; /* --eq FILE */
    char label[80];      /* the option as given, "--lowpass 1000", for messages */
    double atten, transition;
    size_t taps;
} gf_design_section;

/* The design options of a command line; zeroed means none. */
typedef struct gf_design_request {
    gf_design_section section[GF_DESIGN_MAX_SECTIONS];
    int sections;
    /* Settings given before the first design option: every section's
     * default (0: not given). */
    double atten, transition;
    size_t taps;
    gf_phase phase;
    int phase_given;
    const char *design_out, *response_png;
} gf_design_request;

/* Non-zero when `name` (without the leading "--") is a design option. */
int gf_design_cli_is_option(const char *name);

/* One design option's value into r (name without "--"). Values are checked
 * here where they can be without the sample rate: numbers, F1 < F2, the
 * attenuation's range, the taps' range, a setting given twice. */
int gf_design_cli_option(gf_design_request *r, const char *name, const char *value);

/*
 * After every option: settings without a design option, and the sample
 * rate. have_rate: the rate will be known (an input file, --rate, or a
 * live device); otherwise rate_hint ends the message, e.g. "give --rate
 * (headerless input carries none)".
 */
int gf_design_cli_check(const gf_design_request *r, int have_rate, const char *rate_hint);

/* Non-zero when r asks for anything: a design option, --design-out or
 * --response-png. */
int gf_design_cli_any(const gf_design_request *r);

/*
 * Design every section at `rate` Hz, cascade them in order and with the taps
 * in t (the mean filter of t->n taps when t->h is NULL; nothing when t->n
 * is 0), leave the result in t (t->h allocated, one filter or one per
 * channel), print a line per design (unless quiet), and write
 * --design-out and --response-png (the mean filter's taps are 1/T, which
 * the engine rounds to the precision as it does its own). filtering: the
 * taps are for a filter run, which a --response-png that cannot be made
 * must not stop: a warning, and the run goes on (without IN and OUT the
 * picture is the product: an error). Called once the rate is known and the
 * taps fit the input (gf_taps_fit).
 */
int gf_design_cli_apply(const gf_design_request *r, int rate, struct gf_taps *t, int quiet,
                        int filtering);

/*
 * The --eq file: the first two numbers of each line, frequency (Hz) and
 * gain (dB); blanks, tabs, commas or semicolons between numbers; further
 * columns ignored; '#' starts a comment, and so does '*' at the start of
 * a line (as REW writes); blank lines skipped. Frequencies >= 0, strictly
 * increasing; gains GF_DESIGN_MIN_GAIN_DB .. GF_DESIGN_MAX_GAIN_DB. On
 * success *freq and *gain (free both) hold *n >= 1 points.
 */
int gf_design_cli_read_eq(const char *path, double **freq, double **gain, size_t *n);

/*
 * Write taps (filters x n, filter-major) to path: a WAV of 64-bit float
 * samples, one channel per filter, at `rate`, when the name ends in .wav
 * (any case); otherwise text, a column per filter, every value with 17
 * significant digits (read back by --coeffs exactly), after '#' lines
 * saying what they are (`about`, may hold several lines).
 */
int gf_design_cli_write_taps(const char *path, const double *h, size_t n, int filters, int rate,
                             const char *about);

/* A name ending in .wav (any case): --design-out writes audio. */
int gf_design_cli_is_wav(const char *path);

/* The --help section of the design options. */
void gf_design_cli_help(FILE *f);

#endif /* GF_DESIGN_CLI_H */
