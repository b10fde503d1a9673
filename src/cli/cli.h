/*
 * The gpufilt command line: options, exit codes and the pieces main.c
 * wires together (coefficient files, libsndfile source/sink, verification,
 * progress).
 */
#ifndef GF_CLI_H
#define GF_CLI_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>

/* Exit codes (documented in --help and README). */
enum {
    GF_EXIT_OK = 0,
    GF_EXIT_INTERNAL = 1,     /* out of memory, unexpected failure */
    GF_EXIT_USAGE = 2,        /* bad or missing option or argument */
    GF_EXIT_INPUT = 3,        /* input missing, unreadable, empty, not audio, truncated */
    GF_EXIT_OUTPUT = 4,       /* output cannot be created or written */
    GF_EXIT_DEVICE = 5,       /* filter backend failed (no CUDA device, CUDA error) */
    GF_EXIT_VERIFY = 6,       /* --verify found a mismatch */
    GF_EXIT_PARTIAL = 7,      /* input ended inside a frame: trailing bytes dropped */
    GF_EXIT_PIPE = 141,       /* output pipe closed by the reader (EPIPE) */
    GF_EXIT_INTERRUPTED = 130 /* SIGINT or SIGTERM */
};

/* Headerless sample formats (FFmpeg's names), for --raw and --out-raw. */
typedef enum gf_raw_format {
    GF_RAW_NONE = 0,
    GF_RAW_U8,
    GF_RAW_S8,
    GF_RAW_S16LE,
    GF_RAW_S16BE,
    GF_RAW_S24LE,
    GF_RAW_S32LE,
    GF_RAW_F32LE,
    GF_RAW_F64LE
} gf_raw_format;

/* FFmpeg's name of a raw format ("s16le"). */
const char *gf_raw_name(gf_raw_format f);

typedef struct gf_cli_options {
    const char *in_path, *out_path; /* "-": standard input / output */
    size_t taps;                    /* --taps N, 0 if not given */
    const char *coeffs;             /* --coeffs FILE or NULL */
    gf_mode mode;
    int mode_given; /* --mode was on the command line */
    gf_precision precision;
    gf_device device;
    size_t chunk; /* 0 = backend default */
    int threads;
    const char *out_format; /* --out-format MAJOR[:SUBTYPE] or NULL */
    int verify, quiet, allow_truncated, sync;

    /* Raw streams (pipes): --raw, --out-raw, --channels, --rate. channels
     * and rate are 0 when not given; --raw requires --channels. */
    gf_raw_format raw, out_raw;
    int channels, rate;

    /* Histograms: --hist FILE (CSV, or JSON lines for a .json name),
     * --hist-png FILE, and their parameters (defaults filled in). */
    const char *hist_path, *hist_png;
    size_t hist_bins;  /* 1..GF_CLI_MAX_HIST_BINS, default 256 */
    size_t hist_block; /* frames; 0 = one second at the rate (65536 if unknown) */
    double hist_lo, hist_hi;
    int hist_of_input; /* --hist-of input */
    int hist_mix;      /* --hist-channels mix */

    /* Live audio: --live / --list-devices and their options. */
    int live, list_devices, stats;
    const char *live_in, *live_out, *host_api; /* NULL = default device / API */
    size_t live_frames;                        /* frames per callback, 0 = default */
    double duration;                           /* seconds, 0 = until interrupted */
} gf_cli_options;

#define GF_CLI_MAX_HIST_BINS 65536

/*
 * Parse argv. Returns -1 to go on, or an exit code (0 after --help or
 * --version, GF_EXIT_USAGE after printing a one-line error).
 * Afterwards: paths set, exactly one of taps/coeffs, values in range.
 */
int gf_cli_parse(int argc, char **argv, gf_cli_options *o);

/* Print "gpufilt: " + message + newline to stderr. */
void gf_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void gf_cli_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/*
 * Read coefficients from path: one number per line, '#' starts a comment,
 * blank lines ignored. On success *taps (malloc'd) and *n are set and 0 is
 * returned; otherwise a one-line reason is written to err and -1 returned.
 */
int gf_coeffs_load(const char *path, double **taps, size_t *n, char *err, size_t err_size);

/* The engine the options describe (setup.c): channels, taps (NULL: the
 * mean filter of ntaps), mode, precision, chunk, device, threads; no
 * histograms. */
gf_config gf_cli_engine_config(const gf_cli_options *o, int channels, const double *taps,
                               size_t ntaps);
/* Create it; on failure print one line naming the device and return an
 * exit code (else 0). */
int gf_cli_engine_create(const gf_config *c, gf_engine **e);
/* A running engine failed with st: print one line (backend, status,
 * detail) and return the exit code. */
int gf_cli_engine_failed(gf_engine *e, gf_status st);
/* The histograms --hist* describe; the default block is one second at
 * `rate`, or 65536 frames where the rate is unknown (0). */
gf_hist_config gf_cli_hist_config(const gf_cli_options *o, int rate);

/* Seconds on a monotonic clock. */
double gf_now(void);

#endif /* GF_CLI_H */
