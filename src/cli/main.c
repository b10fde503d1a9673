/*
 * gpufilt IN OUT (--taps N | --coeffs FILE) [options]
 *
 * A reader thread decodes blocks, this thread pushes them through the engine
 * and pulls the filtered frames straight into blocks for a writer thread
 * (stages.c), so reading, filtering and writing overlap. With --verify the
 * serial reference runs over the same blocks here and the two output
 * streams are compared.
 *
 * Streams (pipes, terminals) are filtered as they arrive: whenever input
 * pauses (2 ms), the engine submits the short chunk it holds and everything
 * the input so far determines is written out at once.
 */
#include "cli.h"
#include "hist_out.h"
#include "live.h"
#include "progress.h"
#include "raw_io.h"
#include "sndfile_io.h"
#include "stages.h"
#include "verify.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_FRAMES 65536

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

typedef struct run {
    const gf_cli_options *o;
    gf_engine *e, *ref;
    gf_sink sink;
    gf_stages stages;
    gf_block *cur; /* output block being filled, or NULL */
    size_t fb;     /* bytes per frame */
    gf_verify verify;
    void *out;       /* BLOCK_FRAMES frames for the reference's output */
    double t_engine; /* seconds inside the backend engine's calls */
    double t_ref;    /* seconds inside the reference engine's calls */
    gf_hist_config hc;
    int hist;             /* histograms asked for */
    gf_hist_out *hout;    /* their files */
    gf_hist_verify hv;    /* --verify of the histograms */
    uint64_t hist_blocks; /* records written (backend) */
    char err[512];
} run;

/* The writer failed: a closed pipe ends the run quietly (like SIGPIPE
 * would, without the noise); anything else is an error. */
static int output_failed(run *r)
{
    if (r->sink.broken_pipe)
        return GF_EXIT_PIPE;
    gf_cli_error("%s", r->stages.write_err);
    return GF_EXIT_OUTPUT;
}

/* Take every completed histogram record: the backend's to the files, and
 * with --verify both sides' to the comparison. */
static int collect_hist(run *r, gf_engine *e, int side)
{
    gf_hist_record rec;
    while (r->hist && gf_engine_hist_next(e, &rec)) {
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
    return 0;
}

/* Pull everything the engine has ready (or, after flush, everything): the
 * backend's output goes straight into blocks for the writer. */
static int drain(run *r, gf_engine *e, int side)
{
    for (;;) {
        unsigned char *dst = r->out;
        size_t cap = BLOCK_FRAMES, got = 0;
        if (side == 0) {
            if (!r->cur && !(r->cur = gf_stages_output(&r->stages, &g_signal)))
                return g_signal && !r->stages.write_failed ? GF_EXIT_INTERRUPTED : output_failed(r);
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
        if (r->ref && gf_verify_feed(&r->verify, side, dst, got) != 0) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        if (side == 0 && (r->cur->frames += got) == BLOCK_FRAMES) {
            gf_stages_write(&r->stages, r->cur);
            r->cur = NULL;
        }
    }
}

/* Push n frames into engine e (side 0: backend, 1: reference). */
static int feed(run *r, gf_engine *e, int side, const unsigned char *in, size_t n, size_t fb)
{
    while (n > 0) {
        size_t used = 0;
        const double t0 = gf_now();
        gf_status st = gf_engine_push(e, in, n, &used);
        *(side ? &r->t_ref : &r->t_engine) += gf_now() - t0;
        if (st != GF_OK)
            return gf_cli_engine_failed(e, st);
        in += used * fb;
        n -= used;
        int rc = drain(r, e, side);
        if (rc)
            return rc;
    }
    return 0;
}

static int finish(run *r, gf_engine *e, int side)
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
    return 0;
}

static int make_engine(const gf_cli_options *o, int channels, const double *taps, size_t ntaps,
                       gf_device device, const gf_hist_config *hc, gf_engine **e)
{
    gf_config c = gf_cli_engine_config(o, channels, taps, ntaps);
    c.device = device;
    c.hist = hc;
    return gf_cli_engine_create(&c, e);
}

/*
 * --device auto: the GPU only where it repays starting it. Starting CUDA
 * costs about 0.3 s (measured on an H200 machine, bench/NOTES.md), while the
 * CPU backend does at least 2e9 multiply-adds a second per core. Deciding
 * needs no CUDA call, since asking CUDA whether a GPU exists is itself most
 * of that start-up.
 */
static gf_device choose_device(int64_t frames, int channels, size_t taps, int threads, char *why,
                               size_t why_size)
{
    const double gpu_startup_s = 0.3, cpu_macs_per_core = 2e9;
    const int unknown = frames < 0;
    if (unknown)
        frames = (int64_t)1 << 24; /* a stream: judge it as about six minutes at 48 kHz */
    long cores = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    const double cpu_s = (double)frames * channels * (double)taps / (cores * cpu_macs_per_core);
    if (cpu_s < 2 * gpu_startup_s) {
        snprintf(why, why_size, "auto: about %.3g s of work%s, less than starting a GPU", cpu_s,
                 unknown ? " per 2^24 frames" : "");
        return GF_DEVICE_CPU;
    }
    if (!gf_cuda_available()) {
        snprintf(why, why_size, "auto: no usable GPU");
        return GF_DEVICE_CPU;
    }
    snprintf(why, why_size, "auto: about %.3g s of work on the CPU%s", cpu_s,
             unknown ? " per 2^24 frames" : "");
    return GF_DEVICE_CUDA;
}

static void report_verify(const run *r)
{
    const double speedup = r->t_engine > 0 ? r->t_ref / r->t_engine : 0;
    fprintf(stderr, "verify: reference (serial) %.3f s, %s %.3f s, speedup %.1fx\n", r->t_ref,
            gf_engine_backend(r->e), r->t_engine, speedup);
    if (r->verify.differ == 0)
        fprintf(stderr,
                "verify: %llu samples, max |error| 0, max ulp 0: bit-exact with the reference\n",
                (unsigned long long)r->verify.compared);
    else
        fprintf(stderr,
                "verify: MISMATCH: %llu of %llu samples differ, max |error| %.3g, max ulp %llu\n",
                (unsigned long long)r->verify.differ, (unsigned long long)r->verify.compared,
                r->verify.max_abs, (unsigned long long)r->verify.max_ulp);
}

int main(int argc, char **argv)
{
    gf_cli_options o;
    int rc = gf_cli_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A file-size limit must surface as a write error, not kill us with a
     * temporary file left behind; a closed output pipe as EPIPE. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);

    run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.sink.out.fd = -1;
    gf_source src;
    memset(&src, 0, sizeof src);
    double *taps = NULL;
    size_t ntaps = o.taps;
    double t_start = gf_now();

    if (o.coeffs && gf_coeffs_load(o.coeffs, &taps, &ntaps, r.err, sizeof r.err) != 0) {
        gf_cli_error("%s", r.err);
        return GF_EXIT_USAGE;
    }
    if (o.live || o.list_devices) {
#ifdef GPUFILT_HAVE_LIVE
        rc = o.live ? gf_live_run(&o, taps, ntaps, &g_signal) : gf_live_list_devices();
#else
        gf_cli_error("this gpufilt was built without PortAudio: --live and --list-devices "
                     "are not available");
        rc = GF_EXIT_DEVICE;
#endif
        free(taps);
        return rc;
    }
    const int in_stdin = strcmp(o.in_path, "-") == 0, out_stdout = strcmp(o.out_path, "-") == 0;
    if (in_stdin && isatty(STDIN_FILENO)) {
        gf_cli_error("standard input is a terminal: pipe samples in, e.g. "
                     "sox in.wav -t f32 - | gpufilt - out.wav --raw f32le -c 2 --taps 5");
        rc = GF_EXIT_USAGE;
        goto done;
    }
    if (out_stdout && isatty(STDOUT_FILENO)) {
        gf_cli_error("standard output is a terminal: redirect it to a file or a pipe");
        rc = GF_EXIT_USAGE;
        goto done;
    }
    rc = o.raw ? gf_raw_source_open(&src, o.in_path, o.raw, o.channels, o.rate, BLOCK_FRAMES, r.err,
                                    sizeof r.err)
               : gf_sndfile_source_open(&src, o.in_path, BLOCK_FRAMES, r.err, sizeof r.err);
    if (rc != 0) {
        gf_cli_error("%s", r.err);
        goto done;
    }
    if (o.rate && !o.raw && o.rate != src.info.samplerate)
        gf_cli_warn("--rate %d ignored: %s says %d Hz", o.rate, src.path, src.info.samplerate);
    const int C = src.info.channels;
    if (src.header_note[0] && !o.allow_truncated) {
        gf_cli_error("input '%s' is truncated: header and data disagree (%s); "
                     "--allow-truncated filters the %lld frames that exist",
                     o.in_path, src.header_note, (long long)src.info.frames);
        rc = GF_EXIT_INPUT;
        goto done;
    }
    char why[96] = "";
    const gf_device device = o.device == GF_DEVICE_AUTO ? choose_device(src.info.frames, C, ntaps,
                                                                        o.threads, why, sizeof why)
                                                        : o.device;
    if (o.hist_path || o.hist_png) {
        r.hist = 1;
        r.hc = gf_cli_hist_config(&o, src.info.samplerate);
    }
    const gf_hist_config *hc = r.hist ? &r.hc : NULL;
    if ((rc = make_engine(&o, C, taps, ntaps, device, hc, &r.e)) != 0)
        goto done;
    if (o.verify && (rc = make_engine(&o, C, taps, ntaps, GF_DEVICE_REF, hc, &r.ref)) != 0)
        goto done;
    gf_verify_init(&r.verify, o.precision, (size_t)C);
    gf_hist_verify_init(&r.hv, r.hc.bins);
    if (r.hist) {
        const char *paths[] = {o.hist_path, o.hist_png};
        for (int i = 0; i < 2; i++)
            if (paths[i] &&
                (strcmp(paths[i], o.out_path) == 0 || strcmp(paths[i], o.in_path) == 0)) {
                gf_cli_error("%s '%s' is also the %s", i ? "--hist-png" : "--hist", paths[i],
                             strcmp(paths[i], o.out_path) == 0 ? "output" : "input");
                rc = GF_EXIT_USAGE;
                goto done;
            }
        if ((rc = gf_hist_out_open(&r.hout, o.hist_path, o.hist_png, &r.hc, C,
                                   src.info.samplerate > 0 ? src.info.samplerate : 0, r.err,
                                   sizeof r.err)) != 0) {
            gf_cli_error("%s", r.err);
            goto done;
        }
    }
    /* Standard output without a container asked for: raw samples in the
     * input's sample format (a WAV header cannot be finished on a pipe). */
    gf_raw_format out_raw = o.out_raw;
    if (out_stdout && !out_raw && !o.out_format)
        out_raw = o.raw ? o.raw : gf_raw_for_format(src.info.format);
    rc = out_raw
             ? gf_raw_sink_open(&r.sink, o.out_path, out_raw, C, src.info.samplerate,
                                src.is_stdin ? NULL : o.in_path, BLOCK_FRAMES, r.err, sizeof r.err)
             : gf_sndfile_sink_open(&r.sink, o.out_path, &src, o.out_format, BLOCK_FRAMES, r.err,
                                    sizeof r.err);
    if (rc != 0) {
        gf_cli_error("%s", r.err);
        goto done;
    }
    r.sink.sync = o.sync;
    r.fb = (size_t)C * (o.precision == GF_PRECISION_F32 ? 4 : 8);
    r.out = malloc(BLOCK_FRAMES * r.fb);
    if (!r.out || gf_stages_start(&r.stages, &src, &r.sink, o.precision, BLOCK_FRAMES) != 0) {
        gf_cli_error("out of memory");
        rc = GF_EXIT_INTERNAL;
        goto done;
    }

    gf_progress bar;
    gf_progress_init(&bar, src.info.frames, o.quiet);
    int64_t frames_in = 0;
    /* A stream: when input pauses for CATCH_UP_S, everything it determines
     * goes out. Waiting that long first, rather than at the first empty
     * queue, keeps chunks large while data flows. */
    const double CATCH_UP_S = 0.002;
    int owed = 0; /* input fed since the last catch-up */
    for (;;) {
        gf_block *b = gf_stages_input(&r.stages, &g_signal, owed ? CATCH_UP_S : -1);
        if (!b && owed && !g_signal) {
            if ((rc = catch_up(&r)) != 0)
                goto failed;
            owed = 0;
            continue;
        }
        if (!b)
            break; /* a signal */
        if (b->frames == 0) {
            if (r.stages.read_failed) {
                gf_progress_end(&bar);
                gf_cli_error("%s", r.stages.read_err);
                rc = GF_EXIT_INPUT;
                goto done;
            }
            break;
        }
        if ((rc = feed(&r, r.e, 0, b->data, b->frames, r.fb)) != 0 ||
            (r.ref && (rc = feed(&r, r.ref, 1, b->data, b->frames, r.fb)) != 0)) {
            gf_progress_end(&bar);
            goto failed;
        }
        frames_in += (int64_t)b->frames;
        gf_stages_done_input(&r.stages, b);
        gf_progress_update(&bar, frames_in);
        owed = src.streaming;
    }
    gf_progress_end(&bar);
    if (g_signal) {
        /* A file is all or nothing. A stream (or standard output, which
         * cannot be taken back) ends here: what was filtered so far is
         * written, and an output file completed. */
        if (!src.streaming && !r.sink.out.stream) {
            gf_cli_error("interrupted by signal %d; no output written", (int)g_signal);
            rc = GF_EXIT_INTERRUPTED;
            goto done;
        }
        if ((rc = catch_up(&r)) != 0)
            goto failed;
    } else {
        if (gf_source_truncated(&src)) {
            if (!o.allow_truncated) {
                gf_cli_error(
                    "input '%s' is truncated: header promises %lld frames, data holds %lld",
                    o.in_path, (long long)src.info.frames, (long long)src.frames_read);
                rc = GF_EXIT_INPUT;
                goto done;
            }
            gf_cli_warn("input '%s' is truncated (%s); filtered the %lld frames that exist",
                        o.in_path, src.header_note[0] ? src.header_note : "short read",
                        (long long)src.frames_read);
        }
        if ((rc = finish(&r, r.e, 0)) != 0 || (r.ref && (rc = finish(&r, r.ref, 1)) != 0))
            goto done;
    }
    if (r.cur && r.cur->frames > 0)
        gf_stages_write(&r.stages, r.cur);
    r.cur = NULL;
    const int fin = gf_stages_finish(&r.stages, &g_signal);
    if (fin != 0) {
        rc = fin == -2 ? GF_EXIT_INTERRUPTED : output_failed(&r);
        goto failed;
    }
    const int64_t expect_out = g_signal ? r.sink.frames_written : src.frames_read;
    if (r.sink.frames_written != expect_out) {
        gf_cli_error("internal error: %lld frames in, %lld frames out", (long long)src.frames_read,
                     (long long)r.sink.frames_written);
        rc = GF_EXIT_INTERNAL;
        goto done;
    }
    if (r.hist && !g_signal) {
        /* One record per block (per channel unless mixed): the last block
         * may be short, none may be missing. */
        const uint64_t blocks = ((uint64_t)r.sink.frames_written + r.hc.block_frames - 1) /
                                r.hc.block_frames * (r.hc.mix ? 1 : (uint64_t)C);
        if (r.hist_blocks != blocks) {
            gf_cli_error("internal error: %llu histogram records, expected %llu",
                         (unsigned long long)r.hist_blocks, (unsigned long long)blocks);
            rc = GF_EXIT_INTERNAL;
            goto done;
        }
    }
    if (r.ref) {
        report_verify(&r);
        int bad = r.verify.differ != 0 ||
                  r.verify.compared != (uint64_t)r.sink.frames_written * (size_t)C;
        if (r.hist) {
            if (r.hv.differ)
                fprintf(
                    stderr, "verify: histograms: MISMATCH in %llu of %llu records (first: %s)\n",
                    (unsigned long long)r.hv.differ, (unsigned long long)r.hv.compared, r.hv.first);
            else
                fprintf(stderr, "verify: histograms: %llu records identical to the reference\n",
                        (unsigned long long)r.hv.compared);
            bad |= r.hv.differ != 0 || r.hv.compared != r.hist_blocks;
        }
        if (bad) {
            rc = GF_EXIT_VERIFY;
            gf_cli_error("verification failed; no output written");
            goto done;
        }
    }
    if (gf_hist_out_commit(&r.hout, r.err, sizeof r.err) != 0) {
        gf_cli_error("%s", r.err);
        rc = GF_EXIT_OUTPUT;
        goto done;
    }
    const uint64_t clipped = r.sink.clipped;
    if (gf_sink_commit(&r.sink, r.err, sizeof r.err) != 0) {
        gf_cli_error("%s", r.err);
        rc = GF_EXIT_OUTPUT;
        goto done;
    }
    if (clipped)
        gf_cli_warn("%llu samples clipped in %s%s%s", (unsigned long long)clipped,
                    out_stdout ? "" : "'", out_stdout ? "standard output" : o.out_path,
                    out_stdout ? "" : "'");
    rc = GF_EXIT_OK;
    if (src.trailing) {
        const size_t fbytes = (size_t)C * gf_raw_sample_bytes(src.raw);
        gf_cli_warn("input ended inside a frame: dropped the last %llu byte%s (a frame is %zu "
                    "bytes); filtered the %lld complete frames",
                    (unsigned long long)src.trailing, src.trailing == 1 ? "" : "s", fbytes,
                    (long long)src.frames_read);
        rc = GF_EXIT_PARTIAL;
    }
    if (g_signal) {
        gf_cli_error("interrupted by signal %d; wrote the %lld frames filtered so far",
                     (int)g_signal, (long long)r.sink.frames_written);
        rc = GF_EXIT_INTERRUPTED;
    }
    if (!o.quiet) {
        char fmt[128];
        if (r.sink.raw)
            snprintf(fmt, sizeof fmt, "raw %s", gf_raw_name(r.sink.raw));
        else
            gf_format_name(r.sink.info.format, fmt, sizeof fmt);
        char rate[32] = "";
        if (src.info.samplerate > 0)
            snprintf(rate, sizeof rate, " at %d Hz", src.info.samplerate);
        fprintf(stderr,
                "gpufilt: %s -> %s: %lld frames x %d ch%s, %zu tap%s%s, %s, %s, %s backend"
                "%s%s%s, %.3f s\n",
                o.in_path, o.out_path, (long long)src.frames_read, C, rate, ntaps,
                ntaps == 1 ? "" : "s", o.coeffs ? "" : " (mean)",
                o.mode == GF_MODE_SAME ? "same" : "causal",
                o.precision == GF_PRECISION_F32 ? "f32" : "f64", gf_engine_backend(r.e),
                *why ? " (" : "", why, *why ? ")" : "", gf_now() - t_start);
        fprintf(stderr, "gpufilt: output format %s\n", fmt);
    }

    goto done;

failed:
    if (rc == GF_EXIT_INTERRUPTED) {
        /* A signal while the output's reader took nothing (a stalled pipe):
         * stop now rather than wait for it. */
        gf_stages_abort(&r.stages);
        gf_cli_error("interrupted by signal %d; %s was not being read: wrote %lld frames",
                     (int)g_signal, r.sink.out.name ? r.sink.out.name : "the output",
                     (long long)r.sink.frames_written);
    }
done:
    gf_stages_abort(&r.stages); /* no-op once finished */
    gf_sink_abort(&r.sink);     /* no-op after a commit */
    gf_source_close(&src);
    gf_engine_destroy(r.e);
    gf_engine_destroy(r.ref);
    gf_verify_free(&r.verify);
    gf_hist_verify_free(&r.hv);
    gf_hist_out_abort(&r.hout); /* no-op after a commit */
    free(r.out);
    free(taps);
    return rc;
}
