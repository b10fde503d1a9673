/*
 * The files of a run of IN -> OUT: the input opened and checked, the
 * outputs (the sink and the histogram files) opened, and in the end
 * committed (filter_run.h).
 */
#include "filter_run.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_FRAMES GF_RUN_BLOCK_FRAMES

int gf_run_open_input(gf_run *r)
{
    const gf_cli_options *o = r->o;
    if (strcmp(o->in_path, "-") == 0 && isatty(STDIN_FILENO)) {
        gf_cli_error("standard input is a terminal: pipe audio in, e.g. "
                     "sox in.flac -t wav - | gpufilt - out.wav --taps 5 (headerless samples: "
                     "--raw FMT -c CHANNELS, and -r RATE to write a container)");
        return GF_EXIT_USAGE;
    }
    if (strcmp(o->out_path, "-") == 0 && isatty(STDOUT_FILENO)) {
        gf_cli_error("standard output is a terminal: redirect it to a file or a pipe");
        return GF_EXIT_USAGE;
    }
    int rc = o->raw
                 ? gf_raw_source_open(&r->src, o->in_path, o->raw, o->channels, o->rate,
                                      BLOCK_FRAMES, r->err, sizeof r->err)
                 : gf_sndfile_source_open(&r->src, o->in_path, BLOCK_FRAMES, r->err, sizeof r->err);
    if (rc) {
        gf_cli_error("%s", r->err);
        return rc;
    }
    const gf_raw_format sample = r->src.fmt.sample;
    if (o->precision == GF_PRECISION_F32 && (sample == GF_RAW_S32LE || sample == GF_RAW_F64LE)) {
        const int dash = r->src.is_stdin;
        gf_cli_warn("%s%s%s holds %s samples: f32 arithmetic keeps 24 bits of each "
                    "(--precision f64 keeps them all)",
                    dash ? "standard input" : "input '", dash ? "" : r->src.path, dash ? "" : "'",
                    sample == GF_RAW_S32LE ? "32-bit" : "64-bit float");
    }
    if (o->rate && !o->raw && o->rate != r->src.fmt.rate)
        gf_cli_warn("--rate %d ignored: %s says %d Hz", o->rate, r->src.path, r->src.fmt.rate);
    if (r->src.header_note[0] && !o->allow_truncated) {
        gf_cli_error("input '%s' is truncated: %s; --allow-truncated filters the %lld frames "
                     "that exist",
                     o->in_path, r->src.header_note, (long long)r->src.fmt.frames);
        return GF_EXIT_INPUT;
    }
    if (r->src.stray) {
        char size[32];
        gf_cli_warn("input '%s': %s after the %lld frames its header gives are neither chunks nor "
                    "padding (the header may say too little); only those frames are filtered",
                    o->in_path, gf_cli_bytes(size, sizeof size, r->src.stray),
                    (long long)r->src.fmt.frames);
    }
    return GF_EXIT_OK;
}

static void warn_notice(const char *msg)
{
    gf_cli_warn("%s", msg);
}

/* How every output of the run is opened: never over the input, read-only
 * files only with --force, notices as warnings. */
static gf_outfile_opts out_opts(const gf_run *r)
{
    return (gf_outfile_opts){
        .in_path = r->src.is_stdin ? NULL : r->o->in_path,
        .force = r->o->force,
        .notice = warn_notice,
    };
}

/* Frames the output will hold, or -1 for a stream. */
static int64_t output_frames(const gf_run *r)
{
    if (r->src.fmt.frames < 0)
        return -1;
    return r->src.fmt.frames + (r->o->mode == GF_MODE_FULL ? (int64_t)r->taps->n - 1 : 0);
}

/* A --hist file of this many bytes or more gets a warning up front. */
#define HIST_WARN_BYTES ((uint64_t)256 << 20)

/* Before anything is written, for an input of known length: a --hist file
 * that would be huge (bins x channels x blocks) is refused past
 * --hist-limit, and from HIST_WARN_BYTES gets a warning. (The limit also
 * holds while writing, for streams.) */
static int check_hist_size(const gf_run *r)
{
    const gf_cli_options *o = r->o;
    if (!o->hist_path || r->src.fmt.frames < 0)
        return GF_EXIT_OK;
    const uint64_t frames = (uint64_t)(r->hc.of_input ? r->src.fmt.frames : output_frames(r));
    const uint64_t records = (frames + r->hc.block_frames - 1) / r->hc.block_frames *
                             (r->hc.mix ? 1 : (uint64_t)r->src.fmt.channels);
    const uint64_t least = gf_hist_out_min_bytes(records, r->hc.bins);
    char size[32], limit[32];
    gf_cli_bytes(size, sizeof size, least);
    if (o->hist_limit != UINT64_MAX && least > o->hist_limit) {
        gf_cli_error("--hist '%s' would hold at least %s (%llu records of %zu bins), past "
                     "--hist-limit %s: raise the limit (--hist-limit SIZE, or none), or use "
                     "fewer bins or longer blocks",
                     o->hist_path, size, (unsigned long long)records, r->hc.bins,
                     gf_cli_bytes(limit, sizeof limit, o->hist_limit));
        return GF_EXIT_USAGE;
    }
    if (least >= HIST_WARN_BYTES)
        gf_cli_warn("--hist '%s' will hold at least %s (%llu records of %zu bins)", o->hist_path,
                    size, (unsigned long long)records, r->hc.bins);
    return GF_EXIT_OK;
}

static int open_hist_files(gf_run *r)
{
    const gf_cli_options *o = r->o;
    const char *paths[] = {o->hist_path, o->hist_png};
    for (int i = 0; i < 2; i++)
        if (paths[i] && (strcmp(paths[i], o->out_path) == 0 || strcmp(paths[i], o->in_path) == 0)) {
            gf_cli_error("%s '%s' is also the %s", i ? "--hist-png" : "--hist", paths[i],
                         strcmp(paths[i], o->out_path) == 0 ? "output" : "input");
            return GF_EXIT_USAGE;
        }
    int rc = check_hist_size(r);
    if (rc)
        return rc;
    const gf_hist_out_opts ho = {
        .out = out_opts(r),
        .csv_limit = o->hist_limit == UINT64_MAX ? 0 : o->hist_limit,
    };
    rc = gf_hist_out_create(&r->hout, o->hist_path, o->hist_png, &r->hc, r->src.fmt.channels,
                            r->src.fmt.rate > 0 ? r->src.fmt.rate : 0, &ho, r->err, sizeof r->err);
    if (rc)
        gf_cli_error("%s", r->err);
    return rc;
}

/* --normalize: OUT is written once the whole output is measured, from a
 * scratch file of raw samples in the run's precision beside it. */
static int open_scratch(gf_run *r, const gf_format *fmt, const gf_sink_opts *so)
{
    const gf_raw_format raw = r->o->precision == GF_PRECISION_F32 ? GF_RAW_F32LE : GF_RAW_F64LE;
    const int rc = gf_raw_sink_open(&r->scratch, r->o->out_path, raw, fmt, so, BLOCK_FRAMES, r->err,
                                    sizeof r->err);
    if (rc)
        gf_cli_error("%s", r->err);
    return rc;
}

/* The bits of the input's integer samples when the filter changes nothing
 * (one tap of exactly 1 in every filter: the output is the input), else 0:
 * such an output is a copy, never dithered (dither.h). */
static int unchanged_bits(const gf_run *r)
{
    const gf_taps *t = r->taps;
    if (t->n != 1 || (t->outputs && t->filters != t->outputs)) /* a matrix sums inputs */
        return 0;
    for (int f = 0; t->h && f < t->filters; f++)
        if (t->h[f] != 1.0)
            return 0;
    const gf_raw_format s = r->src.fmt.sample;
    return s == GF_RAW_F32LE || s == GF_RAW_F64LE ? 0 : (int)gf_raw_sample_bytes(s) * 8;
}

int gf_run_open_outputs(gf_run *r)
{
    const gf_cli_options *o = r->o;
    struct stat st;
    /* Before anything is opened: a FIFO would wait for its reader first. */
    if (r->normalize && stat(o->out_path, &st) == 0 && !S_ISREG(st.st_mode)) {
        gf_cli_error("--normalize writes OUT once the whole output is measured: '%s' is not a "
                     "regular file",
                     o->out_path);
        return GF_EXIT_USAGE;
    }
    int rc = r->hist ? open_hist_files(r) : GF_EXIT_OK;
    if (rc)
        return rc;
    /* Standard output without a container asked for: raw samples in the
     * input's sample format (a WAV header cannot be finished on a pipe). */
    gf_raw_format out_raw = o->out_raw;
    if (strcmp(o->out_path, "-") == 0 && !out_raw && !o->out_format)
        out_raw = r->src.fmt.sample;
    /* A matrix response: O channels out, and the input's channel layout
     * (with the rest of its metadata) no longer describes them. */
    gf_format fmt = r->src.fmt;
    if (r->out_ch > 0)
        fmt.channels = r->out_ch;
    const gf_sink_opts so = {
        .out = out_opts(r),
        .frames = output_frames(r),
        .meta = r->taps->outputs ? NULL : r->src.meta,
        .dither = {.kind = o->dither, .seed = o->seed, .unchanged_bits = unchanged_bits(r)},
    };
    /* The sinks take output blocks of any length (io.h): BLOCK_FRAMES only
     * sizes their conversion buffers; filter.c sizes the writer's blocks. */
    rc = out_raw ? gf_raw_sink_open(&r->sink, o->out_path, out_raw, &fmt, &so, BLOCK_FRAMES, r->err,
                                    sizeof r->err)
                 : gf_sndfile_sink_open(&r->sink, o->out_path, &fmt, o->out_format, &so,
                                        BLOCK_FRAMES, r->err, sizeof r->err);
    if (rc) {
        gf_cli_error("%s", r->err);
        return rc;
    }
    r->sink.sync = o->sync;
    return r->normalize ? open_scratch(r, &fmt, &so) : GF_EXIT_OK;
}

int gf_run_commit(gf_run *r)
{
    if (gf_hist_out_commit(&r->hout, r->err, sizeof r->err) != 0) {
        gf_cli_error("%s", r->err);
        return GF_EXIT_OUTPUT;
    }
    const uint64_t clipped = r->sink.clipped;
    int rc = gf_sink_commit(&r->sink, r->err, sizeof r->err);
    if (rc) {
        gf_cli_error("%s", r->err);
        return rc;
    }
    if (clipped) {
        const int dash = strcmp(r->o->out_path, "-") == 0;
        gf_cli_warn("%llu samples clipped in %s%s%s", (unsigned long long)clipped, dash ? "" : "'",
                    dash ? "standard output" : r->o->out_path, dash ? "" : "'");
    }
    if (r->src.trailing) {
        const size_t fbytes = r->src.frame_bytes;
        gf_cli_warn("input ended inside a frame: dropped the last %llu byte%s (a frame is %zu "
                    "bytes); filtered the %lld complete frames",
                    (unsigned long long)r->src.trailing, r->src.trailing == 1 ? "" : "s", fbytes,
                    (long long)r->src.frames_read);
        rc = GF_EXIT_PARTIAL;
    }
    if (*r->stop) {
        gf_cli_error("interrupted by signal %d; wrote the %lld frames filtered so far",
                     (int)*r->stop, (long long)r->sink.frames_written);
        rc = GF_EXIT_INTERRUPTED;
    }
    return rc;
}
