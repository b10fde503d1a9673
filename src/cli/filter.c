/*
 * gpufilt IN OUT: files and pipes.
 *
 * A reader thread decodes blocks, this thread pushes them through the engine
 * and pulls the filtered frames straight into blocks for a writer thread
 * (io/stages.c), so reading, filtering and writing overlap. With --verify
 * the serial reference runs over the same blocks here and the two output
 * streams are compared.
 *
 * Streams (pipes, terminals) are filtered as they arrive: whenever input
 * pauses (2 ms), the engine submits the short chunk it holds and everything
 * the input so far determines is written out at once.
 *
 * gf_filter_run goes through phases, each returning an exit code: open the
 * input; set up the engines; open the outputs; stream; finish the stream;
 * verify; commit; report. One cleanup path releases what was opened.
 */
#include "cli.h"
#include "hist_out.h"
#include "io.h"
#include "progress.h"
#include "stages.h"
#include "summary_json.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_FRAMES 65536
/* A stream: when input pauses this long, everything it determines goes
 * out. Waiting rather than catching up at the first empty queue keeps
 * chunks large while data flows. */
#define CATCH_UP_S 0.002

typedef struct run {
    const gf_cli_options *o;
    gf_taps *taps;
    gf_device handoff; /* --device auto's hand-off device, GF_DEVICE_AUTO: none */
    volatile sig_atomic_t *stop;
    double t_start;
    gf_source src;
    gf_engine *e, *ref;     /* the backend, and with --verify (direct) the serial reference */
    int in_place;           /* the backend filters from input blocks into output blocks */
    gf_verify_exact *exact; /* with --verify of the FFT method: the exact sums */
    char why[160];          /* why --device auto chose the backend, or "" */
    gf_sink sink;
    gf_stages stages;
    gf_block *cur; /* output block being filled, or NULL */
    size_t fb;     /* bytes per frame */
    gf_verify verify;
    void *ref_out;   /* BLOCK_FRAMES frames for the reference's output */
    double t_engine; /* seconds inside the backend engine's calls */
    double t_ref;    /* seconds inside the reference engine's calls */
    gf_hist_config hc;
    int hist;             /* histograms asked for */
    gf_hist_out *hout;    /* their files */
    gf_hist_verify hv;    /* --verify of the histograms */
    uint64_t hist_blocks; /* records written (backend) */
    char err[512];
} run;

/* ---- moving frames ---- */

/* A file in and a file out is all or nothing: after a signal nothing more
 * is worth computing or writing. A stream (or a stream output, which
 * cannot be taken back) ends with every frame filtered so far written. */
static int abandoned(const run *r)
{
    return *r->stop && !r->src.streaming && !r->sink.out.stream;
}

/* The writer failed: a closed pipe ends the run quietly (like SIGPIPE
 * would, without the noise); anything else is an error. */
static int output_failed(run *r)
{
    if (r->stages.write_rc == GF_EXIT_PIPE)
        return GF_EXIT_PIPE;
    gf_cli_error("%s", r->stages.write_err);
    return GF_EXIT_OUTPUT;
}

/* A signal while the output's reader took nothing (a stalled pipe): stop
 * now rather than wait for it. */
static int stalled(run *r)
{
    gf_stages_abort(&r->stages);
    gf_cli_error("interrupted by signal %d; %s was not being read: wrote %lld frames",
                 (int)*r->stop, r->sink.out.name ? r->sink.out.name : "the output",
                 (long long)r->sink.frames_written);
    return GF_EXIT_INTERRUPTED;
}

/* Take every completed histogram record: the backend's to the files, and
 * with --verify both sides' to the comparison. */
static int collect_hist(run *r, gf_engine *e, int side)
{
    gf_hist_record rec;
    /* Records can be many per chunk (small blocks, many bins): a signal is
     * looked at before each. */
    while (r->hist && !abandoned(r) && gf_engine_hist_next(e, &rec)) {
        if (side == 0) {
            r->hist_blocks++;
            int rc = gf_hist_out_write(r->hout, &rec, r->err, sizeof r->err);
            if (rc) {
                gf_cli_error("%s", r->err);
                return rc;
            }
        }
        if (r->ref && gf_hist_verify_feed(&r->hv, side, &rec) != 0) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
    }
    return GF_EXIT_OK;
}

/* An output block in r->cur for the writer (the one being filled, or a
 * new one). */
static int out_block(run *r)
{
    if (!r->cur && !(r->cur = gf_stages_output(&r->stages, r->stop)))
        return *r->stop && !r->stages.write_failed ? stalled(r) : output_failed(r);
    return GF_EXIT_OK;
}

/* got filtered frames from engine `side`: to --verify's comparisons. */
static int checked(run *r, int side, const void *frames, size_t got)
{
    if (r->ref && gf_verify_feed(&r->verify, side, frames, got) != 0) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    if (r->exact && side == 0)
        gf_verify_exact_output(r->exact, frames, got);
    return GF_EXIT_OK;
}

/* Pull everything the engine has ready (or, after flush, everything): the
 * backend's output goes straight into blocks for the writer. */
static int drain(run *r, gf_engine *e, int side)
{
    for (;;) {
        unsigned char *dst = r->ref_out;
        size_t cap = BLOCK_FRAMES, got = 0;
        if (side == 0) {
            const int rc = out_block(r);
            if (rc)
                return rc;
            dst = (unsigned char *)r->cur->data + r->cur->frames * r->fb;
            cap = BLOCK_FRAMES - r->cur->frames;
        }
        const double t0 = gf_now();
        gf_status st = gf_engine_pull(e, dst, cap, &got);
        *(side ? &r->t_ref : &r->t_engine) += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(e, st);
        if (got == 0)
            return collect_hist(r, e, side);
        int rc = checked(r, side, dst, got);
        if (rc)
            return rc;
        if (side == 0 && (r->cur->frames += got) == BLOCK_FRAMES) {
            gf_stages_write(&r->stages, r->cur);
            r->cur = NULL;
        }
    }
}

/* The backend filters n frames from `in` straight into an output block
 * of their own (gf_engine_process), handed to the writer. */
static int feed_in_place(run *r, const unsigned char *in, size_t n)
{
    if (r->cur && r->cur->frames > 0) { /* what a catch-up left */
        gf_stages_write(&r->stages, r->cur);
        r->cur = NULL;
    }
    int rc = out_block(r);
    if (rc)
        return rc;
    size_t got = 0;
    const double t0 = gf_now();
    gf_status st = gf_engine_process(r->e, in, n, r->cur->data, &got);
    r->t_engine += gf_now() - t0;
    if (st != GF_OK)
        return gf_cli_engine_failed(r->e, st);
    if ((rc = checked(r, 0, r->cur->data, got)) != 0)
        return rc;
    if ((r->cur->frames = got) > 0) {
        gf_stages_write(&r->stages, r->cur);
        r->cur = NULL;
    }
    return collect_hist(r, r->e, 0);
}

/* Push n frames into engine e (side 0: backend, 1: reference). */
static int feed(run *r, gf_engine *e, int side, const unsigned char *in, size_t n)
{
    if (side == 0 && r->in_place)
        return feed_in_place(r, in, n);
    while (n > 0 && !abandoned(r)) {
        size_t used = 0;
        const double t0 = gf_now();
        gf_status st = gf_engine_push(e, in, n, &used);
        *(side ? &r->t_ref : &r->t_engine) += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(e, st);
        in += used * r->fb;
        n -= used;
        int rc = drain(r, e, side);
        if (rc)
            return rc;
    }
    return GF_EXIT_OK;
}

/* End of input for engine e: flush and drain. */
static int flush(run *r, gf_engine *e, int side)
{
    const double t0 = gf_now();
    gf_status st = gf_engine_flush(e);
    *(side ? &r->t_ref : &r->t_engine) += gf_now() - t0;
    if (st != GF_OK)
        return gf_cli_engine_failed(e, st);
    return drain(r, e, side);
}

/* The input is idle: submit the short chunk each engine holds, wait for
 * it, and pass every frame out to the writer now. */
static int catch_up(run *r)
{
    gf_engine *es[2] = {r->e, r->ref};
    for (int side = 0; side < 2; side++) {
        if (!es[side])
            continue;
        const double t0 = gf_now();
        gf_status st = gf_engine_submit(es[side]);
        if (st == GF_OK)
            st = gf_engine_wait(es[side]);
        *(side ? &r->t_ref : &r->t_engine) += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(es[side], st);
        int rc = drain(r, es[side], side);
        if (rc)
            return rc;
    }
    if (r->cur && r->cur->frames > 0) {
        gf_stages_write(&r->stages, r->cur);
        r->cur = NULL;
    }
    return GF_EXIT_OK;
}

/* ---- the phases ---- */

static int open_input(run *r)
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

static int setup_engines(run *r)
{
    const gf_cli_options *o = r->o;
    const int C = r->src.fmt.channels;
    int rc = gf_taps_ready(o, r->taps, C, r->src.fmt.rate);
    if (rc)
        return rc;
    const gf_job job = {.frames = r->src.fmt.frames, .channels = C, .taps = r->taps->n};
    const gf_device device = gf_cli_choose_device(o, &job, &r->handoff, r->why, sizeof r->why);
    if (o->hist_path || o->hist_png) {
        r->hist = 1;
        r->hc = gf_cli_hist_config(o, r->src.fmt.rate);
    }
    gf_config c = gf_cli_engine_config(o, C, r->taps, device, r->handoff);
    c.hist = r->hist ? &r->hc : NULL;
    if ((rc = gf_cli_engine_create(&c, o->device == GF_DEVICE_AUTO, &r->e)) != 0)
        return rc;
    if (device == GF_DEVICE_CUDA && gf_engine_device(r->e) != GF_DEVICE_CUDA)
        snprintf(r->why, sizeof r->why, "auto: the GPU could not take the filter");
    if (o->verify && gf_engine_method(r->e) == GF_METHOD_FFT) {
        /* The engines may hold this many input frames before their output. */
        const size_t slack = gf_engine_max_pending(r->e) + BLOCK_FRAMES + gf_engine_latency(r->e);
        if (!(r->exact = gf_verify_exact_create(r->e, r->src.fmt.frames, slack))) {
            gf_cli_error("out of memory for --verify's exact sums (%zu taps)", r->taps->n);
            return GF_EXIT_INTERNAL;
        }
    } else if (o->verify) {
        c.device = GF_DEVICE_REF;
        c.handoff = GF_DEVICE_AUTO;
        c.method = GF_METHOD_DIRECT;
        if ((rc = gf_cli_engine_create(&c, 0, &r->ref)) != 0)
            return rc;
    }
    gf_verify_init(&r->verify, o->precision, (size_t)C);
    gf_hist_verify_init(&r->hv, r->hc.bins);
    return GF_EXIT_OK;
}

static void warn_notice(const char *msg)
{
    gf_cli_warn("%s", msg);
}

/* How every output of the run is opened: never over the input, read-only
 * files only with --force, notices as warnings. */
static gf_outfile_opts out_opts(const run *r)
{
    return (gf_outfile_opts){
        .in_path = r->src.is_stdin ? NULL : r->o->in_path,
        .force = r->o->force,
        .notice = warn_notice,
    };
}

/* Frames the output will hold, or -1 for a stream. */
static int64_t output_frames(const run *r)
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
static int check_hist_size(const run *r)
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

static int open_hist_files(run *r)
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

static int open_outputs(run *r)
{
    const gf_cli_options *o = r->o;
    int rc = r->hist ? open_hist_files(r) : GF_EXIT_OK;
    if (rc)
        return rc;
    /* Standard output without a container asked for: raw samples in the
     * input's sample format (a WAV header cannot be finished on a pipe). */
    gf_raw_format out_raw = o->out_raw;
    if (strcmp(o->out_path, "-") == 0 && !out_raw && !o->out_format)
        out_raw = r->src.fmt.sample;
    const gf_sink_opts so = {.out = out_opts(r), .frames = output_frames(r), .meta = r->src.meta};
    /* The sinks take output blocks of any length (io.h): BLOCK_FRAMES only
     * sizes their conversion buffers, out_cap below is the writer's. */
    rc = out_raw ? gf_raw_sink_open(&r->sink, o->out_path, out_raw, &r->src.fmt, &so, BLOCK_FRAMES,
                                    r->err, sizeof r->err)
                 : gf_sndfile_sink_open(&r->sink, o->out_path, &r->src.fmt, o->out_format, &so,
                                        BLOCK_FRAMES, r->err, sizeof r->err);
    if (rc) {
        gf_cli_error("%s", r->err);
        return rc;
    }
    r->sink.sync = o->sync;
    r->fb = (size_t)r->src.fmt.channels * (o->precision == GF_PRECISION_F32 ? 4 : 8);
    /* A backend on the host filters each input block straight into an
     * output block (gf_engine_process: no copies into and out of its own
     * buffers), which then holds up to max_pending frames more than it was
     * given. The GPU keeps its own page-locked buffers, and the push/pull
     * loop keeps its transfers overlapping the reading and writing. */
    r->in_place = r->handoff == GF_DEVICE_AUTO && gf_engine_device(r->e) != GF_DEVICE_CUDA;
    const size_t out_cap = BLOCK_FRAMES + (r->in_place ? gf_engine_max_pending(r->e) : 0);
    if (!(r->ref_out = malloc(BLOCK_FRAMES * r->fb)) ||
        gf_stages_start(&r->stages, &r->src, &r->sink, o->precision, BLOCK_FRAMES, out_cap) != 0) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

/* Input to the engines until the end of the input or a signal. */
static int stream(run *r)
{
    gf_progress bar;
    gf_progress_init(&bar, r->src.fmt.frames, r->o->quiet);
    int64_t frames_in = 0;
    int owed = 0; /* input fed since the last catch-up */
    int rc = GF_EXIT_OK;
    /* A reader faster than the engine always has a block ready: the stop
     * flag is looked at on every one, not only while waiting. */
    while (!*r->stop) {
        gf_block *b = gf_stages_input(&r->stages, r->stop, owed ? CATCH_UP_S : -1);
        if (!b && owed && !*r->stop) {
            if ((rc = catch_up(r)) != 0)
                break;
            owed = 0;
            continue;
        }
        if (!b)
            break; /* a signal */
        if (b->frames == 0) {
            if (r->stages.read_failed) {
                gf_progress_end(&bar);
                gf_cli_error("%s", r->stages.read_err);
                return GF_EXIT_INPUT;
            }
            break;
        }
        if (r->exact)
            gf_verify_exact_input(r->exact, b->data, b->frames);
        if ((rc = feed(r, r->e, 0, b->data, b->frames)) != 0 ||
            (r->ref && (rc = feed(r, r->ref, 1, b->data, b->frames)) != 0))
            break;
        frames_in += (int64_t)b->frames;
        gf_stages_done_input(&r->stages, b);
        gf_progress_update(&bar, frames_in);
        owed = r->src.streaming;
    }
    gf_progress_end(&bar);
    return rc;
}

/* After the input: the engines' last frames to the writer, then check that
 * nothing was lost. */
static int finish_stream(run *r)
{
    const gf_cli_options *o = r->o;
    int rc;
    if (*r->stop) {
        /* A file is all or nothing. A stream (or a stream output, which
         * cannot be taken back) ends here: what was filtered so far is
         * written, and an output file completed. */
        if (!r->src.streaming && !r->sink.out.stream) {
            gf_cli_error("interrupted by signal %d; no output written", (int)*r->stop);
            return GF_EXIT_INTERRUPTED;
        }
        if ((rc = catch_up(r)) != 0)
            return rc;
    } else {
        if (gf_source_truncated(&r->src)) {
            char why[sizeof r->src.header_note];
            if (r->src.header_note[0])
                snprintf(why, sizeof why, "%s", r->src.header_note);
            else
                snprintf(why, sizeof why, "its header promises %lld frames, the file holds %lld",
                         (long long)r->src.fmt.frames, (long long)r->src.frames_read);
            if (!o->allow_truncated) {
                gf_cli_error("input '%s' is truncated: %s; --allow-truncated filters the %lld "
                             "frames that exist",
                             o->in_path, why, (long long)r->src.frames_read);
                return GF_EXIT_INPUT;
            }
            gf_cli_warn("input '%s' is truncated (%s); filtered the %lld frames that exist",
                        o->in_path, why, (long long)r->src.frames_read);
        }
        if ((rc = flush(r, r->e, 0)) != 0 || (r->ref && (rc = flush(r, r->ref, 1)) != 0))
            return rc;
    }
    if (r->cur && r->cur->frames > 0)
        gf_stages_write(&r->stages, r->cur);
    r->cur = NULL;
    if ((rc = gf_stages_finish(&r->stages, r->stop)) != 0)
        return rc == GF_EXIT_INTERRUPTED ? stalled(r) : output_failed(r);
    const int64_t tail = r->o->mode == GF_MODE_FULL ? (int64_t)r->taps->n - 1 : 0;
    const int64_t expect_out = *r->stop ? r->sink.frames_written : r->src.frames_read + tail;
    if (r->sink.frames_written != expect_out) {
        gf_cli_error("internal error: %lld frames in, %lld frames out",
                     (long long)r->src.frames_read, (long long)r->sink.frames_written);
        return GF_EXIT_INTERNAL;
    }
    if (!r->hist || *r->stop)
        return GF_EXIT_OK;
    /* One record per block (per channel unless mixed): the last block may
     * be short, none may be missing. */
    const uint64_t blocks = ((uint64_t)r->sink.frames_written + r->hc.block_frames - 1) /
                            r->hc.block_frames * (r->hc.mix ? 1 : (uint64_t)r->src.fmt.channels);
    if (r->hist_blocks != blocks) {
        gf_cli_error("internal error: %llu histogram records, expected %llu",
                     (unsigned long long)r->hist_blocks, (unsigned long long)blocks);
        return GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

/* --verify failed: a file is not committed, but a stream (a pipe,
 * standard output, a device) has its frames already. */
static void verify_failed(const run *r)
{
    const gf_outfile *out = &r->sink.out;
    if (out->stream && r->sink.frames_written > 0)
        gf_cli_error("verification failed; %lld frame%s had already been written to %s%s%s",
                     (long long)r->sink.frames_written, r->sink.frames_written == 1 ? "" : "s",
                     strcmp(r->o->out_path, "-") == 0 ? "" : "'", out->name,
                     strcmp(r->o->out_path, "-") == 0 ? "" : "'");
    else
        gf_cli_error("verification failed; no output written");
}

/* --verify: report both engines' times and every difference (the FFT
 * method: the largest error against the exact sums, and its bound). */
static int check_verify(run *r)
{
    if (r->exact) {
        const int rc = gf_verify_exact_report(r->exact, gf_engine_backend(r->e), r->t_engine);
        if (rc)
            verify_failed(r);
        return rc;
    }
    const gf_verify *v = &r->verify;
    const double speedup = r->t_engine > 0 ? r->t_ref / r->t_engine : 0;
    fprintf(stderr, "verify: reference (serial) %.3f s, %s %.3f s, speedup %.1fx\n", r->t_ref,
            gf_engine_backend(r->e), r->t_engine, speedup);
    if (v->differ == 0)
        fprintf(stderr,
                "verify: %llu samples, max |error| 0, max ulp 0: bit-exact with the reference\n",
                (unsigned long long)v->compared);
    else
        fprintf(stderr,
                "verify: MISMATCH: %llu of %llu samples differ, max |error| %.3g, max ulp %llu\n",
                (unsigned long long)v->differ, (unsigned long long)v->compared, v->max_abs,
                (unsigned long long)v->max_ulp);
    int bad = v->differ != 0 ||
              v->compared != (uint64_t)r->sink.frames_written * (size_t)r->src.fmt.channels;
    if (r->hist) {
        if (r->hv.differ)
            fprintf(stderr, "verify: histograms: MISMATCH in %llu of %llu records (first: %s)\n",
                    (unsigned long long)r->hv.differ, (unsigned long long)r->hv.compared,
                    r->hv.first);
        else
            fprintf(stderr, "verify: histograms: %llu records identical to the reference\n",
                    (unsigned long long)r->hv.compared);
        bad |= r->hv.differ != 0 || r->hv.compared != r->hist_blocks;
    }
    if (bad) {
        verify_failed(r);
        return GF_EXIT_VERIFY;
    }
    return GF_EXIT_OK;
}

/* Put the outputs in place; then what the run still has to say: clipping,
 * a partial last frame, a signal. */
static int commit(run *r)
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

static const char *mode_name(gf_mode m)
{
    return m == GF_MODE_SAME ? "same" : m == GF_MODE_CAUSAL ? "causal" : "full";
}

/* Which backend filtered how many frames: "cpu backend", or after a
 * hand-off "cpu backend for N frames, then cuda for M"; a hand-off that did
 * not happen says why ("cpu backend for all N frames: the GPU could not
 * take over (no usable CUDA device)"). */
static void backend_summary(const run *r, char *buf, size_t n)
{
    const int64_t at = gf_engine_handoff_frame(r->e), total = r->src.frames_read;
    const char *err = gf_engine_handoff_error(r->e);
    if (r->handoff == GF_DEVICE_AUTO)
        snprintf(buf, n, "%s backend", gf_engine_backend(r->e));
    else if (at >= 0)
        snprintf(buf, n, "cpu backend for %lld frames, then cuda for %lld", (long long)at,
                 (long long)(total - at));
    else if (*err)
        snprintf(buf, n, "cpu backend for all %lld frames: the GPU could not take over (%s)",
                 (long long)total, err);
    else
        snprintf(buf, n, "cpu backend for all %lld frames: done before the GPU had started",
                 (long long)total);
}

static void report(const run *r, const char *out_format)
{
    const gf_cli_options *o = r->o;
    char rate[32] = "";
    if (r->src.fmt.rate > 0)
        snprintf(rate, sizeof rate, " at %d Hz", r->src.fmt.rate);
    const size_t ntaps = r->taps->n;
    const int why = r->why[0] != '\0';
    const char *kind = !r->taps->h ? " (mean)"
                       : r->taps->filters > 1
                           ? (o->ir ? " (impulse response, per channel)" : " (per channel)")
                       : o->ir ? " (impulse response)"
                               : "";
    char method[48] = "direct";
    if (gf_engine_method(r->e) == GF_METHOD_FFT)
        snprintf(method, sizeof method, "fft (partition %zu)", gf_engine_partition(r->e));
    char backend[640];
    backend_summary(r, backend, sizeof backend);
    gf_cli_say("%s -> %s: %lld frames x %d ch%s, %zu tap%s%s, %s, %s, %s, %s"
               "%s%s%s, %.3f s",
               o->in_path, o->out_path, (long long)r->src.frames_read, r->src.fmt.channels, rate,
               ntaps, ntaps == 1 ? "" : "s", kind, mode_name(o->mode),
               o->precision == GF_PRECISION_F32 ? "f32" : "f64", method, backend, why ? " (" : "",
               r->why, why ? ")" : "", gf_now() - r->t_start);
    gf_cli_say("output format %s", out_format);
}

/* --json-summary: what the run did, whatever its outcome. */
static int write_json(const run *r, int rc)
{
    const gf_cli_options *o = r->o;
    const gf_taps *t = r->taps;
    gf_run_summary s = {
        .exit_code = rc,
        .input = o->in_path,
        .output = o->out_path,
        .output_format = r->sink.written_as[0] ? r->sink.written_as : NULL,
        .frames_in = r->src.frames_read,
        .frames_out = r->sink.frames_written,
        .channels = r->src.fmt.channels,
        .rate = r->src.fmt.rate,
        .taps = t->n,
        .filter = gf_design_cli_any(&o->design) && o->design.stages ? "design"
                  : !t->h                                           ? "mean"
                  : o->ir                                           ? "impulse response"
                                                                    : "coefficients",
        .per_channel = t->filters > 1,
        .mode = mode_name(o->mode),
        .precision = o->precision == GF_PRECISION_F32 ? "f32" : "f64",
        .why = r->why,
        .handoff_frame = -1,
        .handoff_error = "",
        .seconds = gf_now() - r->t_start,
        .engine_seconds = r->t_engine,
        .clipped = r->sink.clipped,
    };
    if (r->e) {
        const int fft = gf_engine_method(r->e) == GF_METHOD_FFT;
        s.method = fft ? "fft" : "direct";
        s.partition = fft ? gf_engine_partition(r->e) : 0;
        s.backend = gf_engine_backend(r->e);
        if (r->handoff != GF_DEVICE_AUTO) {
            s.handoff_to = "cuda";
            s.handoff_frame = gf_engine_handoff_frame(r->e);
            s.handoff_error = gf_engine_handoff_error(r->e);
        }
    }
    if (r->ref) {
        s.verify = 1;
        s.compared = r->verify.compared;
        s.differ = r->verify.differ;
        s.max_ulp = r->verify.max_ulp;
        s.max_abs_error = r->verify.max_abs;
        s.reference_seconds = r->t_ref;
    } else if (r->exact) {
        const gf_verify_exact_result x = gf_verify_exact_get(r->exact);
        s.verify = 2;
        s.compared = x.checked;
        s.all_checked = x.all;
        s.max_abs_error = x.max_err;
        s.bound = x.bound;
        s.ratio = x.ratio;
        s.reference_seconds = x.seconds;
    }
    const int jrc = gf_summary_json_write(o->json_summary, &s);
    return rc ? rc : jrc;
}

static void cleanup(run *r)
{
    gf_stages_abort(&r->stages); /* no-op once finished */
    gf_sink_abort(&r->sink);     /* no-op after a commit */
    gf_source_close(&r->src);
    gf_engine_destroy(r->e);
    gf_engine_destroy(r->ref);
    gf_verify_exact_destroy(r->exact);
    gf_verify_free(&r->verify);
    gf_hist_verify_free(&r->hv);
    gf_hist_out_abort(&r->hout); /* no-op after a commit */
    free(r->ref_out);
}

int gf_filter_run(const gf_cli_options *o, gf_taps *t, volatile sig_atomic_t *stop)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.taps = t;
    r.stop = stop;
    r.t_start = gf_now();
    r.sink.out.fd = -1;
    int rc = open_input(&r);
    if (!rc)
        rc = setup_engines(&r);
    if (!rc)
        rc = open_outputs(&r);
    if (!rc)
        rc = stream(&r);
    if (!rc)
        rc = finish_stream(&r);
    if (!rc && (r.ref || r.exact))
        rc = check_verify(&r);
    if (!rc) {
        rc = commit(&r);
        /* After a commit the run happened: say what it did, whatever it adds. */
        if ((rc == GF_EXIT_OK || rc == GF_EXIT_PARTIAL || rc == GF_EXIT_INTERRUPTED) && !o->quiet)
            report(&r, r.sink.written_as);
    }
    if (o->json_summary)
        rc = write_json(&r, rc);
    cleanup(&r);
    return rc;
}
