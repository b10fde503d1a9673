/*
 * The gpufilt command line: exit codes, options, and the pieces main.c
 * wires together.
 *
 * One return convention: a function that can fail returns an exit code
 * (GF_EXIT_OK, 0, on success) and has printed or written (into an err
 * buffer) a one-line message by then; functions that deliver data (a
 * source's read) return a count, or -1 with err set.
 */
#ifndef GF_CLI_H
#define GF_CLI_H

#include "design/design_cli.h"
#include "gpufilt.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    GF_EXIT_INTERRUPTED = 130 /* a signal: SIGINT, SIGTERM, SIGHUP, ... (main.c) */
};

/* The default --hist-limit: 1 GiB of CSV or JSON lines. */
#define GF_HIST_DEFAULT_LIMIT ((uint64_t)1 << 30)

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

/* --dither: what is added before integer PCM is rounded (io/dither.h).
 * AUTO, the command's default, is SoX's: TPDF for outputs of fewer than 24
 * bits. NONE is 0: a sink opened with zeroed options rounds plainly. */
typedef enum gf_dither_kind {
    GF_DITHER_NONE = 0,
    GF_DITHER_AUTO,
    GF_DITHER_TPDF,
    GF_DITHER_SHAPED
} gf_dither_kind;

/* FFmpeg's name of a raw format ("s16le"); "none" for GF_RAW_NONE. */
const char *gf_raw_name(gf_raw_format f);
/* A raw format by FFmpeg's or SoX's name ("s16le", "s16"), or GF_RAW_NONE. */
gf_raw_format gf_raw_parse(const char *name);

/* --latency: the output's priming (docs/live.md). */
typedef enum gf_live_latency {
    GF_LATENCY_DEFAULT = 0, /* not given: two blocks of priming */
    GF_LATENCY_BLOCK,       /* one block: the worker has one period */
    GF_LATENCY_ZERO,        /* none: the head of the filter in the audio callback (live/head.h) */
    GF_LATENCY_AUTO         /* the lowest of those this machine holds (docs/live.md) */
} gf_live_latency;

/* What the command line asks for. */
typedef enum gf_cli_action {
    GF_ACTION_FILTER,       /* IN -> OUT (files, pipes) */
    GF_ACTION_LIVE,         /* --live */
    GF_ACTION_LIST_DEVICES, /* --list-devices */
    GF_ACTION_DESIGN,       /* design options and --rate, no IN or OUT: the files only */
    GF_ACTION_BATCH,        /* --out-dir DIR IN...: many files */
    GF_ACTION_WISDOM,       /* --make-fft-wisdom FILE: FFTW's measured plans, written */
    GF_ACTION_DONE          /* --help or --version: printed, nothing more to do */
} gf_cli_action;

#define GF_GPUS_ALL (-1)

/* --normalize-filter: the measure of a filter scaled to 0 dB. */
typedef enum gf_norm_filter {
    GF_NORM_NONE = 0,
    GF_NORM_PEAK, /* the largest magnitude of the frequency response */
    GF_NORM_DC,   /* |sum h|, the gain at DC */
    GF_NORM_L1,   /* sum |h|: a full-scale input can never clip */
    GF_NORM_L2    /* sqrt(sum h^2), the gain for white noise */
} gf_norm_filter;

typedef struct gf_cli_options {
    gf_cli_action action;
    const char *in_path, *out_path; /* "-": standard input / output */
    size_t taps;                    /* --taps N, 0 if not given */
    const char *coeffs;             /* --coeffs FILE or NULL */
    const char *ir;                 /* --ir FILE or NULL */
    int ir_strict;                  /* --ir-rate strict: refuse another rate (else resample) */
    gf_mode mode;
    int mode_given; /* --mode was on the command line */
    gf_method method;
    size_t partition; /* --partition FRAMES, 0 = the cost model's */
    gf_precision precision;
    gf_device device;
    size_t chunk; /* 0 = backend default */
    int threads;
    /* The threads the device policy counts as the CPU's cores (0: threads):
     * a batch's worker runs its file on fewer threads than the one file
     * alone would get, but decides its device (and so its bytes) the same. */
    int policy_threads;
    /* A batch's worker on a GPU (batch.c; gpufilt-mpi: a batch's rank):
     * its GPU is started once for all of its files, so a file whose bytes
     * are the same on every device (the direct method on both) goes to it
     * above GPU_FILE_S of CPU work, rather than twice the start-up's. */
    int gpu_warm;
    /* A batch's worker: the engine of its last file, taken again where the
     * next wants the very same one (gf_cli_engine_take); NULL: none. */
    struct gf_engine_keep *keep;
    /* --gpus: ngpus ordinals in gpus; GF_GPUS_ALL for every device; 0 when
     * not given (gf_cli_choose_gpus decides). */
    int gpus[GF_MAX_DEVICES];
    int ngpus;
    /* gpufilt-mpi: the process's rank on its node, which picks its one GPU
     * (gf_cli_choose_gpus); -1 in gpufilt. */
    int gpu_rank;
    const char *out_format; /* --out-format MAJOR[:SUBTYPE] or NULL */
    gf_dither_kind dither;  /* --dither, GF_DITHER_AUTO when not given */
    size_t seed;            /* --seed: the dither's noise (0 when not given) */
    int verify, quiet, allow_truncated, sync;
    const char *json_summary; /* --json-summary FILE or "-", or NULL */
    const char *fft_wisdom;   /* --fft-wisdom FILE: FFTW plans from it (gf_fft_wisdom_load) */
    const char *make_wisdom;  /* --make-fft-wisdom FILE */

    /* Many files: --out-dir DIR, the inputs (positional) and --in-list. */
    const char *out_dir, *in_list;
    int skip_existing;
    int jobs; /* --jobs N: files at once on the CPU, 1..GF_MAX_THREADS; 0: not given (1) */
    char **inputs;
    int ninputs;
    int force; /* --force: replace a read-only OUT (or histogram file) */

    /* Raw streams (pipes): --raw, --out-raw, --channels, --rate. channels
     * and rate are 0 when not given; --raw requires --channels. */
    gf_raw_format raw, out_raw;
    int channels, rate;

    /* Histograms: --hist FILE (CSV, or JSON lines for a .json name),
     * --hist-png FILE, and their parameters (defaults filled in). */
    const char *hist_path, *hist_png;
    size_t hist_bins;  /* 1..GF_HIST_MAX_BINS, default 256 */
    size_t hist_block; /* frames; 0 = one second at the rate (65536 if unknown) */
    double hist_lo, hist_hi;
    int hist_of_input;   /* --hist-of input */
    int hist_mix;        /* --hist-channels mix */
    uint64_t hist_limit; /* --hist-limit: bytes of --hist FILE at most; UINT64_MAX: none */

    /* Live audio: --live / --list-devices and their options. */
    int stats;
    int no_mlock; /* --no-mlock: leave the live process's memory unlocked */
    const char *live_in, *live_out, *host_api; /* NULL = default device / API */
    size_t live_frames;                        /* frames per callback, 0 = default */
    double duration;                           /* seconds, 0 = until interrupted */
    const char *control;                       /* --control FILE ("-": standard input) or NULL */
    size_t crossfade_ms;                       /* --crossfade MS, 0..10000, default 20 */
    gf_live_latency latency;                   /* --latency */

    /* Filter design: --lowpass ... --response-png (design_cli.h). */
    gf_design_request design;

    /* Levels. Folded into the taps (gf_taps_shape): --normalize-filter,
     * --gain DB, the mix (--mix WET in 0..1, or --dry DB / --wet DB, where
     * -INFINITY is off). Of the output, files only: --normalize LEVEL (dBFS,
     * <= 0) by its peak, or with --normalize-by rms its RMS. NAN: not given. */
    gf_norm_filter norm_filter;
    double gain_db; /* 0 when not given */
    double mix, dry_db, wet_db;
    double normalize_db;
    int normalize_rms;
} gf_cli_options;

/*
 * Parse argv (options.c). Returns GF_EXIT_OK with o->action set (after
 * --help or --version: GF_ACTION_DONE, the text printed), or GF_EXIT_USAGE
 * after printing a one-line error. Afterwards: paths set for
 * GF_ACTION_FILTER, at most one of taps/coeffs/ir and a filter (one of them
 * or a design), every value in range, the options consistent with each
 * other; --phase minimum without --mode has made the mode causal.
 */
int gf_cli_parse(int argc, char **argv, gf_cli_options *o);

/* The --help text (help.c). */
void gf_cli_help(FILE *f);

/* "gpufilt: error: " / "gpufilt: warning: " / "gpufilt: " + message +
 * newline on stderr (messages.c). The message is escaped for the terminal
 * (gf_cli_escape): names and strings from the command line and from files
 * can be put in it as they are. */
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
void gf_cli_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Text of whole lines, as it is (not escaped, no prefix: the caller's
 * "verify: ..." reports), on stderr or into this thread's capture. */
void gf_cli_print(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A thread's lines held back (a batch's worker, whose files' lines are
 * printed whole, in the batch's order): text holds len bytes of complete
 * lines, NUL-terminated (NULL while empty). Zero it before use. */
typedef struct gf_cli_lines {
    char *text;
    size_t len, cap;
} gf_cli_lines;
/* From now on this thread's gf_cli_error/warn/say lines go into *l (NULL:
 * printed again, as every other thread's are). */
void gf_cli_capture(gf_cli_lines *l);
/* Print l's lines on stderr in one piece (thread-safe), then free and zero
 * it. Every line printed by gf_cli_error/warn/say is printed whole, never
 * interleaved with another thread's. */
void gf_cli_print_lines(gf_cli_lines *l);

/* From now on keep every warning and error (up to 64 of each) as printed,
 * without the prefix: gf_cli_kept_message(errors, i) gives the i-th, or
 * NULL. For --json-summary. */
void gf_cli_keep_messages(void);
const char *gf_cli_kept_message(int errors, size_t i);

/*
 * src as the terminal should show it: valid UTF-8 text as it is; C0 and C1
 * control characters, DEL and the marks and overrides that reorder text
 * (U+061C, U+200E/F, U+202A..E, U+2066..9) as \xNN or \uNNNN; a byte that
 * is not valid UTF-8 as \xNN. Writes at most n bytes (NUL included) to dst
 * (may be NULL when n is 0) and returns the length of the whole result.
 */
size_t gf_cli_escape(char *dst, size_t n, const char *src);

/* A size for messages: "512 bytes", "1 GiB", "6.13 GiB" (powers of 1024,
 * three significant digits) into buf; returns buf. Inline: the histogram
 * writer and the output files use it without the rest of the CLI. */
static inline const char *gf_cli_bytes(char *buf, size_t n, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes / 1024;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (bytes < 1024)
        snprintf(buf, n, "%llu byte%s", (unsigned long long)bytes, bytes == 1 ? "" : "s");
    else
        snprintf(buf, n, "%.3g %s", v, units[u]);
    return buf;
}

/* Seconds on a monotonic clock (clock.c). */
double gf_now(void);

/*
 * The filter's taps (taps.c): the mean filter of --taps N, a coefficient
 * file (--coeffs: numbers separated by blanks, one row per tap, one column
 * for every channel or one per channel; '#' starts a comment, blank lines
 * are ignored), or an impulse response from any audio file libsndfile reads
 * (--ir: one channel for every channel, or one per channel). Either may
 * also be a matrix of C x O filters (gf_taps_fit): output o is the sum over
 * the inputs i of input i filtered by filter i*O + o (filter.c).
 */
typedef struct gf_taps {
    double *h;   /* filters x n coefficients, filter-major; NULL: the mean filter */
    size_t n;    /* taps per filter */
    int filters; /* 1 (every channel), one per channel, or C x outputs */
    /* A matrix (gf_taps_fit): the outputs O >= 2, filters = C x O, filter
     * i*O + o from input channel i into output o (LL, LR, RL, RR for
     * stereo); 0: each channel filtered into itself. */
    int outputs;
    int rate;           /* an impulse response's rate in Hz, else 0 */
    const char *source; /* the file they came from, or NULL */
    /* What gf_taps_shape folded in: the factors (norm: 1/measure, with
     * measure the largest of the filters' --normalize-filter measures),
     * and the dry path's factor and tap. shaped: 0 when nothing was; mean:
     * the taps were the mean filter's. */
    struct {
        int shaped, mean;
        double measure, norm, gain, dry, wet;
        size_t dry_tap;
    } shape;
    int resampled_from; /* resampled (gf_taps_resample): the file's rate, else 0 */
    size_t taps_from;   /* resampled: the file's taps per filter */
} gf_taps;
/* Load them; an exit code after a one-line error naming the file (and line). */
int gf_taps_load(const gf_cli_options *o, gf_taps *t);
/* The parsers gf_taps_load uses (exposed for the fuzz tests): a coefficient
 * file's text from f (`path` names it in messages), or an impulse response
 * file; taps beyond f32's range are refused when p is f32. *t must be
 * zeroed; on success t->h, n and filters (and for an impulse response, the
 * rate) are set. An exit code with a one-line message in err. */
int gf_coeffs_parse(FILE *f, const char *path, gf_precision p, gf_taps *t, char *err, size_t n);
int gf_ir_load(const char *path, gf_precision p, gf_taps *t, char *err, size_t n);
/* Check them against the input's channels and rate (0: unknown), and set
 * t->outputs for a matrix (refused with --live); an impulse response at another rate is resampled
 * to `rate` (gf_taps_resample, with a one-line notice unless quiet) or, with
 * --ir-rate strict, refused. An exit code after a one-line error. */
int gf_taps_fit(gf_taps *t, int channels, int rate, const gf_cli_options *o);
/* An impulse response (t->rate set) resampled to `rate` by libsoxr at its
 * very high quality, linear phase, in double precision
 * (taps_resample.c): round(n * rate / t->rate) taps (at least 1), scaled
 * by t->rate / rate so that its gain at every frequency is kept; t->rate
 * becomes `rate`, resampled_from and taps_from say what it was. Taps
 * beyond p's range are refused. An exit code with a message in err. */
int gf_taps_resample(gf_taps *t, int rate, gf_precision p, char *err, size_t n);
/* Fit them (gf_taps_fit), then cascade the designs o asks for at `rate`
 * (gf_design_cli_apply): the filter to run (design_cli.c). An exit code
 * after one line. */
int gf_taps_ready(const gf_cli_options *o, gf_taps *t, int channels, int rate);
void gf_taps_free(gf_taps *t);
/*
 * Fold o's levels into t's taps in double (taps_shape.c), in this order:
 * --normalize-filter (one factor for every filter: the largest filter's
 * measure becomes 0 dB, so channels keep their balance), the mix
 * (h = wet h + dry at the tap of the mode's delay: 0 in causal and full
 * mode, (T-1)/2 in same mode), then --gain on the whole. The mean filter
 * becomes taps of 1/T first. Nothing asked: t unchanged. gf_taps_ready
 * calls it after the designs; an exit code after one line.
 */
int gf_taps_shape(const gf_cli_options *o, gf_taps *t);

/* ---- engines (engine_setup.c) ---- */

/* A job, as the device policy sees it. */
typedef struct gf_job {
    int64_t frames; /* frames to filter; < 0 for a stream of unknown length */
    int channels;
    size_t taps;
    size_t block; /* live audio: frames per block; 0 for files and pipes */
    double rate;  /* live audio: Hz */
} gf_job;

/*
 * The one device policy, for files, pipes and live audio, written out here
 * only (engine_setup.c codes it; README and docs/design.md point here): the
 * device the options name, or for --device auto the CPU unless the job is
 * too much for it:
 *   files and pipes: with the direct method, the CPU at once and the GPU
 *     handed the stream once it has started (*handoff = GF_DEVICE_CUDA),
 *     when the CPU would need more than the GPU's start-up time (~0.3 s)
 *     for the whole job (a stream is judged per 2^24 frames); with the FFT
 *     method (whose output depends on its backend) one of them up front:
 *     the GPU when the CPU would need more than twice that;
 *   a batch's worker on a GPU (gf_cli_options.gpu_warm), a file whose
 *     method is direct on both devices (the same bytes either way): its
 *     worker's GPU, already started, when the CPU would need more than
 *     0.02 s (the engine's set-up and the transfers);
 *   live audio: the GPU when one CPU core would need more than a tenth of
 *     each block's period (the worker runs blocks one at a time).
 * The CPU estimate is frames x channels x the cost model's multiply-adds
 * per sample (gf_method_cost: T for direct, less for long filters by FFT)
 * at 2e9 a second per core. No CUDA call is made unless the GPU is chosen (asking
 * whether one exists is itself most of its start-up); without a usable GPU
 * the answer is cpu. `why` (may be NULL) receives the reason for auto;
 * handoff (NULL: none wanted, as for live audio) the hand-off device. A GPU
 * chosen here whose set-up then fails (out of its memory, a CUDA or cuFFT
 * error, no usable device) gives way to the CPU with a notice
 * (gf_cli_engine_create); a failure once the stream has begun ends it. The library's own
 * GF_DEVICE_AUTO, for embedders, is simpler: cuda when a usable GPU exists.
 */
gf_device gf_cli_choose_device(const gf_cli_options *o, const gf_job *j, gf_device *handoff,
                               char *why, size_t n);

/*
 * The CUDA devices a file's or pipe's engine runs on, into out (at least
 * GF_MAX_DEVICES): the --gpus list; every device present for --gpus all;
 * without --gpus, every device when the job is big enough to repay
 * starting them and to gain from them: a file (known length) filtered by
 * the direct method with more than GPU_MULTI_S (1 s) of work for one GPU
 * at the rate measured on an H200 (about 1e13 multiply-adds a second;
 * bench_multi: 1.98x on two), else one. The FFT method stays on one GPU
 * unless --gpus names more: on several, each chunk re-sends the K
 * partitions before it, which costs more than it gains where transfers
 * bound the job (bench_multi). gpufilt-mpi's ranks take one each: node
 * rank r the (r mod n)-th of the --gpus list, or of the node's n GPUs.
 * Returns the count, 0 for one GPU (the config's cuda_device); asks the
 * driver only for --gpus all, the default's big jobs and gpufilt-mpi.
 */
int gf_cli_choose_gpus(const gf_cli_options *o, const gf_job *j, int *out);
/* The GPUs --gpus names, or (--gpus all, or none given) every GPU present,
 * at most GF_MAX_DEVICES, into out: their count, 0 when there is none. */
int gf_cli_gpu_list(const gf_cli_options *o, int *out);

/* --list-devices' first part, on standard output: the GPUs (--gpus
 * numbers, names, memory), or why there are none. */
void gf_cli_list_gpus(void);

/* --make-fft-wisdom FILE: measure FFTW's plans of every power-of-two
 * transform size from 32 to 262,144, or to 2 x --partition
 * (gf_fft_wisdom_make), saying how long each took; an exit code. */
int gf_cli_make_wisdom(const gf_cli_options *o);

/* Live audio filters one block in, one block out, so the FFT method's
 * partition is the block (and --partition is refused with --live): `block`
 * where it can be a partition (a power of two in GF_MIN_PARTITION ..
 * GF_MAX_PARTITION), else 0, which leaves the direct method. The device
 * policy and live audio's set-up both ask here. */
size_t gf_cli_live_partition(size_t block);

/* Whether live audio, unless --method says otherwise, takes the NUPC
 * method (its first partition the block's `partition`, from
 * gf_cli_live_partition) for `channels` x `taps` on `device`: a filter of
 * 1024 partitions or more, and on the GPU one of 2^27 channel-taps or more
 * too (engine_setup.c says why). live_bench asks here as gpufilt does. */
int gf_cli_live_nupc(gf_device device, int channels, size_t taps, size_t partition);

/* The engine the options describe: channels, taps (t->h NULL: the mean
 * filter of t->n), mode, precision, chunk, threads, `device` and the
 * hand-off (GF_DEVICE_AUTO: none); no histograms. */
gf_config gf_cli_engine_config(const gf_cli_options *o, int channels, const gf_taps *t,
                               gf_device device, gf_device handoff);
/* Create it; on failure print one line naming the device and return an
 * exit code (else 0): GF_EXIT_USAGE for a configuration the library or
 * backend refuses, GF_EXIT_DEVICE for the GPU (also out of its memory),
 * GF_EXIT_INTERNAL for host memory. With `fallback` (--device auto chose
 * the GPU), a GPU whose set-up fails (GF_ERR_NO_MEMORY, GF_ERR_CUDA,
 * GF_ERR_NO_DEVICE) gives way to the CPU with a one-line notice. */
int gf_cli_engine_create(const gf_config *c, int fallback, gf_engine **e);

/* A batch worker's engine kept from one file to the next: a GPU engine's
 * set-up (page-locked buffers, streams, the filter's upload or spectra)
 * costs more than a short file's filtering. Taken only by a configuration
 * equal to the one it was made with, field by field and tap by tap, and
 * reset in between (gf_engine_reset: a new stream, the bytes of a new
 * engine). Zero-initialised; freed with gf_cli_engine_keep_free. */
typedef struct gf_engine_keep {
    gf_engine *e;
    gf_config c; /* its pointers into the copies below */
    double *taps;
    gf_hist_config hist;
    int gpus[GF_MAX_DEVICES];
} gf_engine_keep;
/* The kept engine into *e (1) if `c` is its configuration, else 0 (*e
 * untouched; a different one is destroyed: the next file is likely alike). */
int gf_cli_engine_take(gf_engine_keep *k, const gf_config *c, gf_engine **e);
/* Keep `e`, made with `c` and used without failure, for the next file:
 * reset, or destroyed where it cannot be (or k is NULL). */
void gf_cli_engine_keep(gf_engine_keep *k, const gf_config *c, gf_engine *e);
void gf_cli_engine_keep_free(gf_engine_keep *k);
/* A running engine failed with st: print one line (backend, status,
 * detail) and return the exit code: GF_EXIT_DEVICE for the GPU (also out
 * of its memory), GF_EXIT_INTERNAL for the host's memory. */
int gf_cli_engine_failed(gf_engine *e, gf_status st);
/* The histograms --hist* describe; the default block is one second at
 * `rate`, or 65536 frames where the rate is unknown (0). */
gf_hist_config gf_cli_hist_config(const gf_cli_options *o, int rate);

/* ---- the actions ---- */

/* IN -> OUT (filter.c); *stop is set by a signal. */
int gf_filter_run(const gf_cli_options *o, gf_taps *t, volatile sig_atomic_t *stop);

/* --out-dir: o->inputs and --in-list's files, each with its own copy of t
 * (batch.c). 0 when every file was filtered or skipped; else the first
 * failed file's exit code (130 after a signal). */
int gf_batch_run(const gf_cli_options *o, int nin, char **in, const gf_taps *t,
                 volatile sig_atomic_t *stop);

#endif /* GF_CLI_H */
