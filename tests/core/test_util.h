/*
 * Helpers shared by the core tests: failure reporting, running a test
 * program's steps, a deterministic random source, configs and inputs,
 * reading golden files (the vectors' loader, format:
 * tests/golden/gen_golden.py) and drivers that run a whole stream through an
 * engine with a given pattern of push / pull / process sizes; histogram
 * records: collecting, comparing bit for bit, and a driver that takes them
 * as a stream runs.
 *
 * Every check prints one line naming what failed and returns a non-zero
 * count; tests add those up and exit 1 when any is non-zero.
 */
#ifndef GF_TEST_UTIL_H
#define GF_TEST_UTIL_H

#include "gpufilt.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Print "file:line: message" and count one failure. */
#define TU_FAIL(...) tu_fail(__FILE__, __LINE__, __VA_ARGS__)
/* Evaluates to 0 when cond holds, else prints and evaluates to 1. */
#define TU_CHECK(cond, ...) ((cond) ? 0 : TU_FAIL(__VA_ARGS__))

int tu_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Seconds on a monotonic clock. */
double tu_now(void);

/* A test program's part: returns its number of failures. */
typedef int (*tu_step)(void);

/* Run steps in order until one fails, then print "prog: FAILED" to stderr,
 * or "prog: summary, S s" with the seconds taken. Returns the exit status
 * (0 or 1). */
int tu_run_steps(const char *prog, const char *summary, const tu_step *steps, size_t n);

/* splitmix64: deterministic, platform-independent. */
typedef struct tu_rng {
    uint64_t s;
} tu_rng;

uint64_t tu_rng_next(tu_rng *r);
/* Uniform in [0, n), n > 0. */
size_t tu_rng_below(tu_rng *r, size_t n);
/* Uniform in [-1, 1). */
double tu_rng_sym(tu_rng *r);

/* n samples of a test signal in [-1, 1) with about 1% of values up to +-1000,
 * written as float (ss == 4) or double (ss == 8). */
void tu_fill_signal(void *dst, size_t n, size_t ss, uint64_t seed);
/* tu_fill_signal, then about 2% of the samples replaced by NaN, +-inf,
 * +-0.0, 5000 (beyond the rms limit), lo, hi and a tiny value. */
void tu_fill_hist_signal(void *dst, size_t n, size_t ss, uint64_t seed, double lo, double hi);
/* n random taps, mixed signs, about unit gain in total. */
void tu_fill_taps(double *taps, size_t n, uint64_t seed);

/* Bytes per sample for a precision. */
size_t tu_sample_size(gf_precision p);

/* gf_config_default with these fields set, and the direct method: the
 * bit-exact one the golden vectors and seam tests are about. */
gf_config tu_config(int channels, size_t num_taps, const double *taps, gf_mode mode,
                    gf_precision precision, gf_device device);

/* A stream and taps for a test, malloc'd; the caller fills them. */
typedef struct tu_input {
    void *x;      /* the samples */
    double *taps; /* the taps */
} tu_input;

/* Allocate samples samples of ss bytes and num_taps taps. Returns 0, or 1
 * after printing (label names the test). */
int tu_input_alloc(tu_input *in, const char *label, size_t samples, size_t ss, size_t num_taps);
void tu_input_free(tu_input *in);

/* gf_engine_create; when it fails, prints "label: create: status (detail)".
 * Returns 0, or 1. */
int tu_create(const char *label, const gf_config *cfg, gf_engine **e);

/* Index of the first of n samples (ss bytes each) that differ bitwise, or n. */
size_t tu_first_diff(const void *a, const void *b, size_t n, size_t ss);

/*
 * memcmp of n samples; on a difference prints what, the frame and channel of
 * the first mismatching sample, expected and actual (value and bits), and
 * the number of mismatching samples. Returns 0 when equal, else 1.
 */
int tu_compare(const char *what, const void *expected, const void *actual, size_t n, size_t ss,
               size_t channels);

/* ---- golden files ---- */

/* The whole of a file, malloc'd, its length in *size; NULL when it cannot be
 * read. */
unsigned char *tu_read_file(const char *path, size_t *size);

/* Little-endian fields from a buffer, in order. Reading past its end sets
 * bad and gives zeros. */
typedef struct tu_reader {
    const unsigned char *p;
    size_t left;
    int bad;
} tu_reader;

/* A little-endian unsigned integer of 1 to 8 bytes. */
uint64_t tu_read_uint(tu_reader *r, int bytes);
double tu_read_f64(tu_reader *r);
/* n bytes as they are into dst (skipped when dst is NULL). */
void tu_read_bytes(tu_reader *r, void *dst, size_t n);
/* n samples of ss bytes (4 or 8) as host floats or doubles into dst. */
void tu_read_samples(tu_reader *r, void *dst, size_t n, size_t ss);

/* Called for each case of a manifest: its file, in dir, and its name. */
typedef int (*tu_case_fn)(const char *dir, const char *file, const char *name, void *ctx);

/*
 * Call each for every line "FILE NAME" of dir/MANIFEST.txt in order ('#'
 * lines and blank lines skipped) until it returns non-zero; *cases counts
 * the calls. Returns 0, what each returned, or 1 after printing why the
 * manifest cannot be read (what names the set in the message).
 */
int tu_manifest_each(const char *what, const char *dir, tu_case_fn each, void *ctx, size_t *cases);

/* One golden case (see gen_golden.py for the file format). */
typedef struct tu_golden {
    char file[64];
    char name[33];
    gf_precision precision;
    gf_mode mode;
    int channels;
    size_t num_taps;
    size_t frames;
    int mean;     /* 1: config.taps = NULL (mean filter) */
    double *taps; /* explicit taps, or the mean filter's 1/T in the precision */
    void *x, *y;  /* frames * channels samples each */
    size_t ss;
} tu_golden;

/* Load every case named in dir/MANIFEST.txt. Returns the number of cases
 * (> 0) or 0 after printing why it failed. Free with tu_golden_free. */
size_t tu_golden_load(const char *dir, tu_golden **cases);
void tu_golden_free(tu_golden *cases, size_t n);

/* A config for a golden case on a device with a chunk size. */
gf_config tu_golden_config(const tu_golden *g, gf_device dev, size_t chunk);

/*
 * Sizes for successive push / pull / process calls: `fixed` frames each
 * (0 = everything left), or with `random` set, 1 .. max frames drawn from
 * seed, with a 1-frame call every so often and an occasional call for
 * everything left.
 */
typedef struct tu_pattern {
    size_t fixed;
    int random;
    size_t max;
    uint64_t seed;
} tu_pattern;

#define TU_ALL               ((tu_pattern){0, 0, 0, 0})
#define TU_FIXED(n)          ((tu_pattern){(n), 0, 0, 0})
#define TU_RANDOM(max, seed) ((tu_pattern){0, 1, (max), (seed)})

/*
 * Run frames input frames through e with push/pull calls sized by push and
 * pull, then flush and drain. out must hold cap frames (fb bytes each); the
 * output count goes to *produced. Checks the call contracts on the way
 * (consumed <= offered, got <= asked, no stall, push after flush refused).
 * Returns 0 on success, else prints and returns 1.
 */
int tu_run_stream(gf_engine *e, const void *in, size_t frames, void *out, size_t cap, size_t fb,
                  tu_pattern push, tu_pattern pull, size_t *produced);

/* The same where input frames (fb bytes) and output frames (fbo bytes)
 * differ: a matrix of filters (gf_config.outputs). */
int tu_run_stream_io(gf_engine *e, const void *in, size_t frames, size_t fb, void *out, size_t cap,
                     size_t fbo, tu_pattern push, tu_pattern pull, size_t *produced);

/*
 * The same with gf_engine_process calls sized by pieces (each given
 * room for pieces + gf_engine_max_pending frames), then flush and drain.
 */
int tu_run_process(gf_engine *e, const void *in, size_t frames, void *out, size_t cap, size_t fb,
                   tu_pattern pieces, size_t *produced);

/* "ref", "cpu" or "cuda": the backend name gf_engine_backend reports for dev. */
const char *tu_device_name(gf_device dev);

/*
 * Create an engine for cfg and run frames input frames through it: with
 * gf_engine_process calls sized by pattern a when use_process, else with
 * push/pull calls sized by a and b. Checks the backend name (unless cfg asks
 * for auto), that the output length equals the input length exactly and that
 * nothing was written past it in out, which holds out_cap frames (at least
 * frames + gf_engine_max_pending + 1 for process, frames + 1 otherwise).
 * label names the run in messages. Returns the number of failures (0 or 1).
 */
int tu_filter_into(const char *label, const gf_config *cfg, const void *in, size_t frames,
                   int use_process, tu_pattern a, tu_pattern b, void *out, size_t out_cap);

/* The same into a malloc'd buffer, returned (free with free), or NULL after
 * printing what failed. */
void *tu_filter(const char *label, const gf_config *cfg, const void *in, size_t frames,
                int use_process, tu_pattern a, tu_pattern b);

/* tu_filter, then tu_compare with expected. Returns the number of failures. */
int tu_check_run(const char *label, const gf_config *cfg, const void *in, size_t frames,
                 const void *expected, int use_process, tu_pattern a, tu_pattern b);

/*
 * Every golden case through device dev, bit for bit: chunk sizes 0 (default),
 * 1, 7, 64, 1000, frames and frames + 3, each with push/pull (whole, fixed
 * and random sizes) and with gf_engine_process in pieces; also the taps in
 * use. *runs counts the runs compared. Returns the number of failures.
 */
int tu_golden_check_all(const tu_golden *cases, size_t n, gf_device dev, size_t *runs);

/* ---- histogram records ---- */

/* Records taken from an engine, their counts copied: r[i].bins is NULL,
 * tu_recs_bins(l, i) has them. */
typedef struct tu_recs {
    gf_hist_record *r;
    uint64_t *bins; /* n x nbins */
    size_t n, cap, nbins;
} tu_recs;

void tu_recs_free(tu_recs *l);
/* Append a copy of rec (nbins counts). Returns 0, or 1 after printing. */
int tu_recs_add(tu_recs *l, const gf_hist_record *rec, size_t nbins);
uint64_t *tu_recs_bins(const tu_recs *l, size_t i);
/* Take every record e has ready. */
int tu_recs_drain(tu_recs *l, gf_engine *e, size_t nbins);
/* Bitwise equality of doubles (NaN equals the same NaN, -0.0 differs from +0.0). */
int tu_same_double(double a, double b);
/* Every field of every record, doubles bitwise; prints the first difference. */
int tu_recs_compare(const char *label, const tu_recs *want, const tu_recs *got);

/* A filter test on a random stream: its shape and filter. */
typedef struct tu_signal_case {
    const char *name;
    int channels;
    size_t frames;
    gf_precision precision;
    gf_mode mode;
    size_t num_taps;
    int mean; /* the mean filter, else random taps */
} tu_signal_case;

/*
 * The case's stream (tu_fill_signal from seed) and taps (from taps_seed)
 * into in, and into c a config for device dev with them (taps NULL for the
 * mean filter). Returns 0, or 1 after printing.
 */
int tu_signal_case_setup(const tu_signal_case *sc, uint64_t seed, uint64_t taps_seed, gf_device dev,
                         tu_input *in, gf_config *c);

/* A histogram test on a random stream: its shape, filter and histograms. */
typedef struct tu_hist_case {
    const char *name;
    int channels;
    size_t frames, taps;
    gf_mode mode;
    gf_precision precision;
    size_t bins, block;
    int of_input, mix;
} tu_hist_case;

/*
 * The case's stream (tu_fill_hist_signal over [-1, 1] from seed) and taps
 * (from taps_seed) into in, its histograms (over [-1, 1]) into h, and into c
 * a config for device dev with both. Returns 0, or 1 after printing.
 */
int tu_hist_case_setup(const tu_hist_case *hc, uint64_t seed, uint64_t taps_seed, gf_device dev,
                       tu_input *in, gf_hist_config *h, gf_config *c);

typedef enum tu_run_kind { TU_RUN_PUSHPULL, TU_RUN_SUBMIT, TU_RUN_PROCESS } tu_run_kind;

/* How tu_run_hist drives a stream. */
typedef struct tu_run_spec {
    tu_run_kind kind; /* push/pull; push, submit, wait, pull; or gf_engine_process */
    size_t chunk;     /* config chunk_frames; SIZE_MAX: the stream's length */
    size_t a, b;      /* push (or process) and pull sizes, 0 = all; with rnd, 1..a and 1..b */
    int rnd;
    int threads;
    uint64_t seed;
    int pinned; /* input and output in gf_host_alloc memory (cuda's zero-copy path) */
} tu_run_spec;

const char *tu_run_kind_name(tu_run_kind k);

/* The oracles' run: the whole stream in one chunk, one gf_engine_process call. */
extern const tu_run_spec tu_whole_stream;

/*
 * Run frames input frames through an engine for cfg (cfg->hist set) as rs
 * says, taking records at irregular moments (also before the output is
 * pulled) into recs; the output goes to out (frames frames), which may be
 * NULL. Checks that the output length equals the input length and that no
 * record comes after the stream is drained. Returns 0, or 1 after printing.
 */
int tu_run_hist(const char *label, const gf_config *cfg, const void *in, size_t frames,
                const tu_run_spec *rs, tu_recs *recs, void *out);

#endif /* GF_TEST_UTIL_H */
