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
 * input; set up the engines; open the outputs; start the stages; stream;
 * finish the stream; verify; commit; report. One cleanup path releases
 * what was opened. The files are opened and committed in filter_io.c, and
 * what the run says at the end is report.c's; the state they share is
 * filter_run.h's, where the run's engines are an array: the backend's, and
 * with --verify (direct) the serial reference's.
 *
 * A matrix response (C x O filters on C channels: true stereo, mono to
 * stereo) is this file's alone: the engines run C x O channels, fed each
 * input block expanded (matrix_expand), and every frame they give is summed
 * into O outputs (matrix_sum) before anything else sees it, the serial
 * reference's the same way, so every backend and method takes it and the
 * direct method stays bit-exact against the reference.
 */
#include "filter_run.h"
#include "progress.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_FRAMES GF_RUN_BLOCK_FRAMES
/* A stream: when input pauses this long, everything it determines goes
 * out. Waiting rather than catching up at the first empty queue keeps
 * chunks large while data flows. */
#define CATCH_UP_S 0.002

/* ---- a matrix response ---- */

/* n input frames of C channels into n engine frames of C x O: input i's
 * sample into engine channels i*O .. i*O + O-1. */
static void matrix_expand(const gf_run *r, const void *in, void *out, size_t n)
{
    const size_t O = (size_t)r->out_ch, C = (size_t)r->src.fmt.channels;
    if (r->o->precision == GF_PRECISION_F32) {
        const float *x = in;
        float *y = out;
        for (size_t f = 0; f < n; f++, x += C)
            for (size_t i = 0; i < C; i++)
                for (size_t o = 0; o < O; o++)
                    *y++ = x[i];
    } else {
        const double *x = in;
        double *y = out;
        for (size_t f = 0; f < n; f++, x += C)
            for (size_t i = 0; i < C; i++)
                for (size_t o = 0; o < O; o++)
                    *y++ = x[i];
    }
}

/* n engine frames of C x O into n output frames of O: output o is the sum
 * of engine channels i*O + o, i ascending, in double, rounded once to the
 * precision. The same order for every engine: the reference's output is
 * summed exactly as the backend's. */
static void matrix_sum(const gf_run *r, const void *in, void *out, size_t n)
{
    const size_t O = (size_t)r->out_ch, C = (size_t)r->src.fmt.channels;
    for (size_t f = 0; f < n; f++)
        for (size_t o = 0; o < O; o++) {
            double s = 0;
            if (r->o->precision == GF_PRECISION_F32) {
                const float *y = (const float *)in + f * C * O;
                for (size_t i = 0; i < C; i++)
                    s += (double)y[i * O + o];
                ((float *)out)[f * O + o] = (float)s;
            } else {
                const double *y = (const double *)in + f * C * O;
                for (size_t i = 0; i < C; i++)
                    s += y[i * O + o];
                ((double *)out)[f * O + o] = s;
            }
        }
}

/* ---- moving frames ---- */

/* A file in and a file out is all or nothing: after a signal nothing more
 * is worth computing or writing. A stream (or a stream output, which
 * cannot be taken back) ends with every frame filtered so far written. */
static int abandoned(const gf_run *r)
{
    const int stream = r->normalize ? r->scratch.out.stream : r->sink.out.stream;
    return *r->stop && !r->src.streaming && !stream;
}

/* The writer failed: a closed pipe ends the run quietly (like SIGPIPE
 * would, without the noise); anything else is an error. */
static int output_failed(gf_run *r)
{
    if (r->stages.write_rc == GF_EXIT_PIPE)
        return GF_EXIT_PIPE;
    gf_cli_error("%s", r->stages.write_err);
    return GF_EXIT_OUTPUT;
}

/* A signal while the output's reader took nothing (a stalled pipe): stop
 * now rather than wait for it. */
static int stalled(gf_run *r)
{
    gf_stages_abort(&r->stages);
    gf_cli_error("interrupted by signal %d; %s was not being read: wrote %lld frames",
                 (int)*r->stop, r->sink.out.name ? r->sink.out.name : "the output",
                 (long long)r->sink.frames_written);
    return GF_EXIT_INTERRUPTED;
}

/* Take every completed histogram record from engine i: the backend's to
 * the files, and with --verify both engines' to the comparison. */
static int collect_hist(gf_run *r, int i)
{
    gf_hist_record rec;
    gf_status st = GF_NO_RECORD;
    /* Records can be many per chunk (small blocks, many bins): a signal is
     * looked at before each. */
    /* With hist_late the records come from the scaling pass (normalize.c). */
    while (r->hist && !r->hist_late && !abandoned(r) &&
           (st = gf_engine_hist_next(r->e[i], &rec)) == GF_OK) {
        if (i == GF_RUN_MAIN) {
            r->hist_blocks++;
            int rc = gf_hist_out_write(r->hout, &rec, r->err, sizeof r->err);
            if (rc) {
                gf_cli_error("%s", r->err);
                return rc;
            }
        }
        if (r->e[GF_RUN_REF] && gf_hist_verify_feed(&r->hv, i, &rec) != 0) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
    }
    if (st != GF_OK && st != GF_NO_RECORD)
        return gf_cli_engine_failed(r->e[i], st);
    return GF_EXIT_OK;
}

/* An output block in r->cur for the writer (the one being filled, or a
 * new one). */
static int out_block(gf_run *r)
{
    if (!r->cur && !(r->cur = gf_stages_output(&r->stages, r->stop)))
        return *r->stop && !r->stages.write_failed ? stalled(r) : output_failed(r);
    return GF_EXIT_OK;
}

/* The output block being filled to the writer, if it holds any frames. */
static void pass_block(gf_run *r)
{
    if (r->cur && r->cur->frames > 0) {
        gf_stages_write(&r->stages, r->cur);
        r->cur = NULL;
    }
}

/* got filtered frames from engine i: to --verify's comparisons. */
static int checked(gf_run *r, int i, const void *frames, size_t got)
{
    if (r->e[GF_RUN_REF] && gf_verify_feed(&r->verify, i, frames, got) != 0) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    if (r->exact && i == GF_RUN_MAIN && !r->mx_out) /* a matrix: drain's */
        gf_verify_exact_output(r->exact, frames, got);
    if (r->normalize && i == GF_RUN_MAIN)
        gf_run_measure(r, frames, got);
    return GF_EXIT_OK;
}

/* Pull everything engine i has ready (or, after flush, everything): the
 * backend's output goes straight into blocks for the writer. */
static int drain(gf_run *r, int i)
{
    for (;;) {
        unsigned char *dst = r->ref_out;
        size_t cap = BLOCK_FRAMES, got = 0;
        if (i == GF_RUN_MAIN) {
            const int rc = out_block(r);
            if (rc)
                return rc;
            dst = (unsigned char *)r->cur->data + r->cur->frames * r->fb;
            cap = BLOCK_FRAMES - r->cur->frames;
        }
        /* A matrix: the engine's frames are summed into the output's. */
        void *pulled = r->mx_out ? r->mx_out : dst;
        const double t0 = gf_now();
        gf_status st = gf_engine_pull(r->e[i], pulled, cap, &got);
        r->t[i] += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(r->e[i], st);
        if (got == 0)
            return collect_hist(r, i);
        if (r->mx_out) {
            /* --verify of the FFT method checks the engine's own channels. */
            if (r->exact && i == GF_RUN_MAIN)
                gf_verify_exact_output(r->exact, pulled, got);
            matrix_sum(r, pulled, dst, got);
        }
        int rc = checked(r, i, dst, got);
        if (rc)
            return rc;
        if (i == GF_RUN_MAIN && (r->cur->frames += got) == BLOCK_FRAMES) {
            gf_stages_write(&r->stages, r->cur);
            r->cur = NULL;
        }
    }
}

/* The backend filters n frames from `in` straight into an output block
 * of their own (gf_engine_process), handed to the writer. */
static int feed_in_place(gf_run *r, const unsigned char *in, size_t n)
{
    pass_block(r); /* what a catch-up left */
    int rc = out_block(r);
    if (rc)
        return rc;
    gf_engine *e = r->e[GF_RUN_MAIN];
    size_t got = 0;
    const double t0 = gf_now();
    gf_status st = gf_engine_process(e, in, n, r->cur->data, &got);
    r->t[GF_RUN_MAIN] += gf_now() - t0;
    if (st != GF_OK)
        return gf_cli_engine_failed(e, st);
    if ((rc = checked(r, GF_RUN_MAIN, r->cur->data, got)) != 0)
        return rc;
    r->cur->frames = got;
    pass_block(r);
    return collect_hist(r, GF_RUN_MAIN);
}

/* Push n frames into engine i. */
static int feed(gf_run *r, int i, const unsigned char *in, size_t n)
{
    if (i == GF_RUN_MAIN && r->in_place)
        return feed_in_place(r, in, n);
    while (n > 0 && !abandoned(r)) {
        size_t used = 0;
        const double t0 = gf_now();
        gf_status st = gf_engine_push(r->e[i], in, n, &used);
        r->t[i] += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(r->e[i], st);
        in += used * r->efb;
        n -= used;
        int rc = drain(r, i);
        if (rc)
            return rc;
    }
    return GF_EXIT_OK;
}

/* The input is idle: the short chunk an engine holds goes in now. */
static gf_status submit_and_wait(gf_engine *e)
{
    gf_status st = gf_engine_submit(e);
    return st == GF_OK ? gf_engine_wait(e) : st;
}

/* `step` (flush at the end of the input, or submit_and_wait) on every
 * engine of the run, the backend's first, each drained after it. */
static int step_engines(gf_run *r, gf_status (*step)(gf_engine *))
{
    for (int i = 0; i < GF_RUN_ENGINES; i++) {
        if (!r->e[i])
            continue;
        const double t0 = gf_now();
        gf_status st = step(r->e[i]);
        r->t[i] += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(r->e[i], st);
        int rc = drain(r, i);
        if (rc)
            return rc;
    }
    return GF_EXIT_OK;
}

/* The input is idle: everything it determines to the writer now. */
static int catch_up(gf_run *r)
{
    const int rc = step_engines(r, submit_and_wait);
    if (!rc)
        pass_block(r);
    return rc;
}

/* ---- the phases ---- */

/* --verify's checker of the backend: for the direct method the serial
 * reference, an engine of c's filter on the reference device over the same
 * stream; for the FFT and NUPC methods the exact sums. */
static int setup_verify(gf_run *r, gf_config c)
{
    gf_engine *e = r->e[GF_RUN_MAIN];
    if (gf_engine_method(e) != GF_METHOD_DIRECT) {
        /* The engines may hold this many input frames before their output. */
        const size_t slack = gf_engine_max_pending(e) + BLOCK_FRAMES + gf_engine_latency(e);
        if (!(r->exact = gf_verify_exact_create(e, r->src.fmt.frames, slack))) {
            gf_cli_error("out of memory for --verify's exact sums (%zu taps)", r->taps->n);
            return GF_EXIT_INTERNAL;
        }
        return GF_EXIT_OK;
    }
    c.device = GF_DEVICE_REF;
    c.handoff = GF_DEVICE_NONE;
    c.method = GF_METHOD_DIRECT;
    return gf_cli_engine_create(&c, 0, &r->e[GF_RUN_REF]);
}

/* A matrix response with the FFT method (asked for, or the cost model's
 * choice for its C x O channels): the library's matrix, C channels in and
 * O out, summed on spectra, where the backend has it (1, the engine made).
 * 0: the engines filter C x O channels and the command sums them. */
static int try_lib_matrix(gf_run *r, const gf_config *c, int C)
{
    const gf_cli_options *o = r->o;
    const gf_method m =
        o->method != GF_METHOD_AUTO
            ? o->method
            : gf_method_choose(c->num_taps, c->channels, c->precision,
                               c->device == GF_DEVICE_AUTO ? GF_DEVICE_CPU : c->device,
                               c->partition);
    if (m != GF_METHOD_FFT || c->handoff != GF_DEVICE_NONE || c->hist)
        return 0;
    gf_config mc = *c;
    mc.channels = C;
    mc.outputs = r->taps->outputs;
    mc.taps_per_channel = 0;
    mc.method = GF_METHOD_FFT;
    r->lib_matrix = gf_engine_create(&mc, &r->e[GF_RUN_MAIN], NULL, 0) == GF_OK;
    return r->lib_matrix;
}

/* --verify's checker, then the comparisons' and histograms' state. */
static int setup_verify_of(gf_run *r, gf_config c)
{
    int rc;
    if (r->o->verify && (rc = setup_verify(r, c)) != 0)
        return rc;
    gf_verify_init(&r->verify, r->o->precision, (size_t)r->out_ch);
    gf_hist_verify_init(&r->hv, r->hc.bins);
    return GF_EXIT_OK;
}

static int setup_engines(gf_run *r)
{
    const gf_cli_options *o = r->o;
    const int C = r->src.fmt.channels;
    int rc = gf_taps_ready(o, r->taps, C, r->src.fmt.rate);
    if (rc)
        return rc;
    /* A matrix response: C x O channels in the engines, O out. */
    const int O = r->taps->outputs;
    r->out_ch = O ? O : C;
    const int EC = O ? C * O : C;
    if (O && (o->hist_path || o->hist_png)) {
        gf_cli_error("%s with a matrix response ('%s', %d x %d): not supported (the engine's "
                     "histograms are of its %d channels before they are summed)",
                     o->hist_path ? "--hist" : "--hist-png", r->taps->source, C, O, EC);
        return GF_EXIT_USAGE;
    }
    const gf_job job = {.frames = r->src.fmt.frames, .channels = EC, .taps = r->taps->n};
    const gf_device device = gf_cli_choose_device(o, &job, &r->handoff, r->why, sizeof r->why);
    if (o->hist_path || o->hist_png) {
        r->hist = 1;
        r->hc = gf_cli_hist_config(o, r->src.fmt.rate);
    }
    /* --normalize: the output's histograms are the scaled output's. */
    r->normalize = !isnan(o->normalize_db);
    r->hist_late = r->hist && r->normalize && !r->hc.of_input;
    gf_config c = gf_cli_engine_config(o, EC, r->taps, device, r->handoff);
    c.hist = r->hist && !r->hist_late ? &r->hc : NULL;
    int gpus[GF_MAX_DEVICES];
    if (device == GF_DEVICE_CUDA || r->handoff == GF_DEVICE_CUDA) {
        c.cuda_device_count = gf_cli_choose_gpus(o, &job, gpus);
        c.cuda_devices = gpus;
    }
    if (O && try_lib_matrix(r, &c, C))
        return setup_verify_of(r, c);
    if (!gf_cli_engine_take(o->keep, &c, &r->e[GF_RUN_MAIN]) &&
        (rc = gf_cli_engine_create(&c, o->device == GF_DEVICE_AUTO, &r->e[GF_RUN_MAIN])) != 0)
        return rc;
    r->made_with = c;
    if (c.cuda_device_count) {
        memcpy(r->made_gpus, gpus, (size_t)c.cuda_device_count * sizeof *gpus);
        r->made_with.cuda_devices = r->made_gpus;
    }
    r->made = 1;
    if (device == GF_DEVICE_CUDA && gf_engine_device(r->e[GF_RUN_MAIN]) != GF_DEVICE_CUDA)
        snprintf(r->why, sizeof r->why, "auto: the GPU could not take the filter");
    return setup_verify_of(r, c);
}

/* Start the reader and writer threads, with output blocks sized for the
 * backend's way of filtering. */
static int start_stages(gf_run *r)
{
    const gf_cli_options *o = r->o;
    const size_t ss = o->precision == GF_PRECISION_F32 ? 4 : 8;
    r->fb = (size_t)r->out_ch * ss;
    const int expand = r->taps->outputs && !r->lib_matrix;
    r->efb = expand          ? (size_t)r->src.fmt.channels * r->fb
             : r->lib_matrix ? (size_t)r->src.fmt.channels * ss
                             : r->fb;
    if (expand && (!(r->mx_in = malloc(BLOCK_FRAMES * r->efb)) ||
                   !(r->mx_out = malloc(BLOCK_FRAMES * r->efb)))) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    /* A backend on the host filters each input block straight into an
     * output block (gf_engine_process: no copies into and out of its own
     * buffers), which then holds up to max_pending frames more than it was
     * given. The GPU keeps its own page-locked buffers, and the push/pull
     * loop keeps its transfers overlapping the reading and writing. */
    r->in_place = r->handoff == GF_DEVICE_NONE && !r->mx_out &&
                  gf_engine_device(r->e[GF_RUN_MAIN]) != GF_DEVICE_CUDA;
    const size_t out_cap =
        BLOCK_FRAMES + (r->in_place ? gf_engine_max_pending(r->e[GF_RUN_MAIN]) : 0);
    if (!(r->ref_out = malloc(BLOCK_FRAMES * r->fb)) ||
        gf_stages_start(&r->stages, &r->src, gf_run_stage_sink(r), o->precision, BLOCK_FRAMES,
                        out_cap) != 0) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

/* Input to the engines until the end of the input or a signal. */
static int stream(gf_run *r)
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
        const void *in = b->data;
        if (r->mx_in) {
            matrix_expand(r, b->data, r->mx_in, b->frames);
            in = r->mx_in;
        }
        if (r->exact)
            gf_verify_exact_input(r->exact, in, b->frames);
        for (int i = 0; i < GF_RUN_ENGINES && !rc; i++)
            if (r->e[i])
                rc = feed(r, i, in, b->frames);
        if (rc)
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
static int finish_stream(gf_run *r)
{
    const gf_cli_options *o = r->o;
    int rc;
    if (*r->stop) {
        /* A file is all or nothing. A stream (or a stream output, which
         * cannot be taken back) ends here: what was filtered so far is
         * written, and an output file completed. */
        if (!r->src.streaming && !gf_run_stage_sink(r)->out.stream) {
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
        if ((rc = step_engines(r, gf_engine_flush)) != 0)
            return rc;
    }
    pass_block(r);
    r->cur = NULL;
    if ((rc = gf_stages_finish(&r->stages, r->stop)) != 0)
        return rc == GF_EXIT_INTERRUPTED ? stalled(r) : output_failed(r);
    const int64_t tail = r->o->mode == GF_MODE_FULL ? (int64_t)r->taps->n - 1 : 0;
    const gf_sink *out = gf_run_stage_sink(r);
    const int64_t expect_out = *r->stop ? out->frames_written : r->src.frames_read + tail;
    if (out->frames_written != expect_out) {
        gf_cli_error("internal error: %lld frames in, %lld frames out",
                     (long long)r->src.frames_read, (long long)out->frames_written);
        return GF_EXIT_INTERNAL;
    }
    return r->hist_late ? GF_EXIT_OK : gf_run_check_hist(r);
}

int gf_run_check_hist(gf_run *r)
{
    if (!r->hist || *r->stop)
        return GF_EXIT_OK;
    /* One record per block (per channel unless mixed) of the stream the
     * histograms count, the input or the output (longer in full mode): the
     * last block may be short, none may be missing. */
    const uint64_t counted =
        (uint64_t)(r->hc.of_input ? r->src.frames_read : r->sink.frames_written);
    const uint64_t blocks = (counted + r->hc.block_frames - 1) / r->hc.block_frames *
                            (r->hc.mix ? 1 : (uint64_t)r->src.fmt.channels);
    if (r->hist_blocks != blocks) {
        gf_cli_error("internal error: %llu histogram records, expected %llu",
                     (unsigned long long)r->hist_blocks, (unsigned long long)blocks);
        return GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

static void cleanup(gf_run *r, int rc)
{
    if (r->made && rc == GF_EXIT_OK) { /* for the batch worker's next file, or destroyed */
        gf_cli_engine_keep(r->o->keep, &r->made_with, r->e[GF_RUN_MAIN]);
        r->e[GF_RUN_MAIN] = NULL;
    }
    gf_stages_abort(&r->stages); /* no-op once finished */
    gf_sink_abort(&r->sink);     /* no-op after a commit */
    gf_sink_abort(&r->scratch);  /* no-op once removed */
    gf_source_close(&r->src);
    for (int i = 0; i < GF_RUN_ENGINES; i++)
        gf_engine_destroy(r->e[i]);
    gf_verify_exact_destroy(r->exact);
    gf_verify_free(&r->verify);
    gf_hist_verify_free(&r->hv);
    gf_hist_out_abort(&r->hout); /* no-op after a commit */
    free(r->ref_out);
    free(r->mx_in);
    free(r->mx_out);
}

int gf_filter_run(const gf_cli_options *o, gf_taps *t, volatile sig_atomic_t *stop)
{
    gf_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.taps = t;
    r.stop = stop;
    r.t_start = gf_now();
    r.sink.out.fd = -1;
    r.scratch.out.fd = -1;
    r.norm_measured_db = r.norm_gain_db = NAN;
    int rc = gf_run_open_input(&r);
    if (!rc)
        rc = setup_engines(&r);
    if (!rc)
        rc = gf_run_open_outputs(&r);
    if (!rc)
        rc = start_stages(&r);
    if (!rc)
        rc = stream(&r);
    if (!rc)
        rc = finish_stream(&r);
    if (!rc && (r.e[GF_RUN_REF] || r.exact))
        rc = gf_report_verify(&r);
    if (!rc && r.normalize && (rc = gf_run_normalize(&r)) == 0 && r.hist_late)
        rc = gf_run_check_hist(&r);
    if (!rc) {
        rc = gf_run_commit(&r);
        /* After a commit the run happened: say what it did, whatever it adds. */
        if ((rc == GF_EXIT_OK || rc == GF_EXIT_PARTIAL || rc == GF_EXIT_INTERRUPTED) && !o->quiet)
            gf_report_summary(&r);
    }
    if (o->json_summary)
        rc = gf_report_json(&r, rc);
    cleanup(&r, rc);
    return rc;
}
