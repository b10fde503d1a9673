/*
 * What a run of IN -> OUT says when it is over: the --verify report, the
 * summary lines and the --json-summary object (report.h).
 */
#include "report.h"

#include "summary_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* --verify failed: a file is not committed, but a stream (a pipe,
 * standard output, a device) has its frames already. */
static void verify_failed(const gf_run *r)
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

int gf_report_verify(const gf_run *r)
{
    const char *backend = gf_engine_backend(r->e[GF_RUN_MAIN]);
    if (r->exact) {
        const int rc = gf_verify_exact_report(r->exact, backend, r->t[GF_RUN_MAIN]);
        if (rc)
            verify_failed(r);
        return rc;
    }
    const gf_verify *v = &r->verify;
    const double speedup = r->t[GF_RUN_MAIN] > 0 ? r->t[GF_RUN_REF] / r->t[GF_RUN_MAIN] : 0;
    gf_cli_print("verify: reference (serial) %.3f s, %s %.3f s, speedup %.1fx\n", r->t[GF_RUN_REF],
                 backend, r->t[GF_RUN_MAIN], speedup);
    if (v->differ == 0)
        gf_cli_print(
            "verify: %llu samples, max |error| 0, max ulp 0: bit-exact with the reference\n",
            (unsigned long long)v->compared);
    else
        gf_cli_print(
            "verify: MISMATCH: %llu of %llu samples differ, max |error| %.3g, max ulp %llu\n",
            (unsigned long long)v->differ, (unsigned long long)v->compared, v->max_abs,
            (unsigned long long)v->max_ulp);
    /* With --normalize the filtered output is the scratch file's; its
     * histograms come later, from the scaling pass (not compared). */
    const gf_sink *out = r->normalize ? &r->scratch : &r->sink;
    int bad = v->differ != 0 || v->compared != (uint64_t)out->frames_written * (size_t)r->out_ch;
    if (r->hist && !r->hist_late) {
        if (r->hv.differ)
            gf_cli_print("verify: histograms: MISMATCH in %llu of %llu records (first: %s)\n",
                         (unsigned long long)r->hv.differ, (unsigned long long)r->hv.compared,
                         r->hv.first);
        else
            gf_cli_print("verify: histograms: %llu records identical to the reference\n",
                         (unsigned long long)r->hv.compared);
        bad |= r->hv.differ != 0 || r->hv.compared != r->hist_blocks;
    }
    if (bad) {
        verify_failed(r);
        return GF_EXIT_VERIFY;
    }
    return GF_EXIT_OK;
}

static const char *mode_name(gf_mode m)
{
    return m == GF_MODE_SAME ? "same" : m == GF_MODE_CAUSAL ? "causal" : "full";
}

/* Which backend filtered how many frames: "cpu backend", or after a
 * hand-off "cpu backend for N frames, then cuda for M"; a hand-off that did
 * not happen says why ("cpu backend for all N frames: the GPU could not
 * take over (no usable CUDA device)"); on several GPUs, each one's chunks. */
static void backend_summary(const gf_run *r, char *buf, size_t n)
{
    gf_engine *e = r->e[GF_RUN_MAIN];
    const int64_t at = gf_engine_handoff_frame(e), total = r->src.frames_read;
    const char *err = gf_engine_handoff_error(e);
    /* A hand-off starts on the CPU (the device policy, cli.h). */
    const char *from = gf_device_name(GF_DEVICE_CPU), *to = gf_device_name(r->handoff);
    if (r->handoff == GF_DEVICE_NONE)
        snprintf(buf, n, "%s backend", gf_engine_backend(e));
    else if (at >= 0)
        snprintf(buf, n, "%s backend for %lld frames, then %s for %lld", from, (long long)at, to,
                 (long long)(total - at));
    else if (*err)
        snprintf(buf, n, "%s backend for all %lld frames: the GPU could not take over (%s)", from,
                 (long long)total, err);
    else
        snprintf(buf, n, "%s backend for all %lld frames: done before the GPU had started", from,
                 (long long)total);
    /* Several GPUs: which took how many chunks, e.g. " on GPUs 0 (33
     * chunks), 1 (32)", or which channels, " on GPUs 0 (channels 1-64), 1
     * (65-128)" (numbered from 1, as a person reads them). */
    int gpus[GF_MAX_DEVICES];
    const int ng = gf_engine_cuda_devices(e, gpus, GF_MAX_DEVICES);
    int first = 0;
    gf_engine_device_channels(e, 1, &first);
    const int by_channel = first > 0; /* by time, every GPU's channels start at 0 */
    for (int i = 0; ng > 1 && i < ng; i++) {
        const size_t len = strlen(buf);
        const int count = gf_engine_device_channels(e, i, &first);
        if (by_channel)
            snprintf(buf + len, n - len, "%s%d (%s%d-%d)", i ? ", " : " on GPUs ", gpus[i],
                     i ? "" : "channels ", first + 1, first + count);
        else
            snprintf(buf + len, n - len, "%s%d (%llu%s)", i ? ", " : " on GPUs ", gpus[i],
                     (unsigned long long)gf_engine_device_chunks(e, i, NULL), i ? "" : " chunks");
    }
}

void gf_report_summary(const gf_run *r)
{
    const gf_cli_options *o = r->o;
    char rate[32] = "";
    if (r->src.fmt.rate > 0)
        snprintf(rate, sizeof rate, " at %d Hz", r->src.fmt.rate);
    const size_t ntaps = r->taps->n;
    const int why = r->why[0] != '\0';
    char matrix[96];
    if (r->taps->outputs)
        snprintf(matrix, sizeof matrix, " (%smatrix %dx%d%s: %d ch out)",
                 o->ir ? "impulse response, " : "", r->src.fmt.channels, r->taps->outputs,
                 r->lib_matrix ? ", summed on spectra" : "", r->taps->outputs);
    const char *kind = !r->taps->h || r->taps->shape.mean ? " (mean)"
                       : r->taps->outputs                 ? matrix
                       : r->taps->filters > 1
                           ? (o->ir ? " (impulse response, per channel)" : " (per channel)")
                       : o->ir ? " (impulse response)"
                               : "";
    char method[48] = "direct";
    gf_engine *e = r->e[GF_RUN_MAIN];
    if (gf_engine_method(e) != GF_METHOD_DIRECT)
        snprintf(method, sizeof method, "%s (partition %zu)",
                 gf_engine_method(e) == GF_METHOD_NUPC ? "nupc" : "fft", gf_engine_partition(e));
    char backend[640];
    backend_summary(r, backend, sizeof backend);
    gf_cli_say("%s -> %s: %lld frames x %d ch%s, %zu tap%s%s, %s, %s, %s, %s"
               "%s%s%s, %.3f s",
               o->in_path, o->out_path, (long long)r->src.frames_read, r->src.fmt.channels, rate,
               ntaps, ntaps == 1 ? "" : "s", kind, mode_name(o->mode),
               o->precision == GF_PRECISION_F32 ? "f32" : "f64", method, backend, why ? " (" : "",
               r->why, why ? ")" : "", gf_now() - r->t_start);
    gf_cli_say("output format %s", r->sink.written_as);
    if (r->taps->shape.shaped)
        gf_report_levels(o, r->taps);
    if (r->normalize)
        gf_cli_say("normalised: %s %.2f dBFS, gain %+.2f dB (to %g dBFS)",
                   o->normalize_rms ? "RMS" : "peak", r->norm_measured_db, r->norm_gain_db,
                   o->normalize_db);
}

void gf_report_levels(const gf_cli_options *o, const gf_taps *t)
{
    static const char *const norms[] = {"", "peak", "dc", "l1", "l2"};
    char norm[96] = "", mix[96] = "", gain[48] = "";
    if (o->norm_filter)
        snprintf(norm, sizeof norm, "filter normalised by %s (x%.6g, %+.4g dB), ",
                 norms[o->norm_filter], t->shape.norm, 20 * log10(t->shape.norm));
    if (!isnan(o->mix) || !isnan(o->dry_db) || !isnan(o->wet_db))
        snprintf(mix, sizeof mix, "wet x%.6g + dry x%.6g at tap %zu, ", t->shape.wet, t->shape.dry,
                 t->shape.dry_tap);
    snprintf(gain, sizeof gain, "gain %+.4g dB", o->gain_db);
    gf_cli_say("levels: %s%s%s (folded into the taps)", norm, mix, gain);
}

/* The summary's engine fields: method, partition, backend, GPUs, hand-off. */
static void summary_engine(gf_run_summary *s, const gf_run *r)
{
    gf_engine *e = r->e[GF_RUN_MAIN];
    if (e) {
        const gf_method m = gf_engine_method(e);
        s->method = m == GF_METHOD_NUPC ? "nupc" : m == GF_METHOD_FFT ? "fft" : "direct";
        s->partition = gf_engine_partition(e);
        s->backend = gf_engine_backend(e);
        s->ngpus = gf_engine_cuda_devices(e, s->gpu, GF_MAX_DEVICES);
        for (int i = 0; i < s->ngpus; i++) {
            s->gpu_chunks[i] = gf_engine_device_chunks(e, i, &s->gpu_frames[i]);
            s->gpu_channels[i] = gf_engine_device_channels(e, i, &s->gpu_first[i]);
        }
        if (r->handoff != GF_DEVICE_NONE) {
            s->handoff_to = gf_device_name(r->handoff);
            s->handoff_frame = gf_engine_handoff_frame(e);
            s->handoff_error = gf_engine_handoff_error(e);
        }
    }
}

/* The summary's --verify fields: against the reference, or the exact sums. */
static void summary_verify(gf_run_summary *s, const gf_run *r)
{
    if (r->e[GF_RUN_REF]) {
        s->verify = 1;
        s->compared = r->verify.compared;
        s->differ = r->verify.differ;
        s->max_ulp = r->verify.max_ulp;
        s->max_abs_error = r->verify.max_abs;
        s->reference_seconds = r->t[GF_RUN_REF];
    } else if (r->exact) {
        const gf_verify_exact_result x = gf_verify_exact_get(r->exact);
        s->verify = 2;
        s->compared = x.checked;
        s->all_checked = x.all;
        s->max_abs_error = x.max_err;
        s->bound = x.bound;
        s->ratio = x.ratio;
        s->differ = x.unlike;
        s->reference_seconds = x.seconds;
    }
}

/* The summary's levels: --gain, --normalize-filter, the mix, --normalize. */
static void summary_levels(gf_run_summary *s, const gf_run *r)
{
    const gf_cli_options *o = r->o;
    const gf_taps *t = r->taps;
    static const char *const norms[] = {NULL, "peak", "dc", "l1", "l2"};
    s->gain_db = o->gain_db;
    s->norm_by = norms[o->norm_filter];
    s->norm_measure = t->shape.measure;
    s->norm_factor = t->shape.norm;
    s->mix = t->shape.shaped && (!isnan(o->mix) || !isnan(o->dry_db) || !isnan(o->wet_db));
    s->dry = t->shape.dry;
    s->wet = t->shape.wet;
    s->dry_tap = t->shape.dry_tap;
    if (!isnan(o->normalize_db)) {
        s->normalize_by = o->normalize_rms ? "rms" : "peak";
        s->normalize_level_db = o->normalize_db;
        s->normalize_measured_db = r->norm_measured_db;
        s->normalize_gain_db = r->norm_gain_db;
    }
}

int gf_report_json(const gf_run *r, int rc)
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
        .filter = gf_design_cli_any(&o->design) && o->design.sections ? "design"
                  : !t->h || t->shape.mean                            ? "mean"
                  : o->ir                                             ? "impulse response"
                                                                      : "coefficients",
        .taps_per_channel = t->filters > 1,
        .matrix_in = t->outputs ? r->src.fmt.channels : 0,
        .matrix_out = t->outputs,
        .matrix_spectra = r->lib_matrix,
        .mode = mode_name(o->mode),
        .precision = o->precision == GF_PRECISION_F32 ? "f32" : "f64",
        .why = r->why,
        .handoff_frame = -1,
        .handoff_error = "",
        .seconds = gf_now() - r->t_start,
        .engine_seconds = r->t[GF_RUN_MAIN],
        .clipped = r->sink.clipped,
        .ir_from = t->resampled_from,
        .ir_to = t->resampled_from ? t->rate : 0,
        .ir_taps_from = t->taps_from,
        .dither = r->sink.dither.kind == GF_DITHER_TPDF || r->sink.dither.kind == GF_DITHER_SHAPED
                      ? gf_dither_name(r->sink.dither.kind)
                      : NULL,
        .seed = o->seed,
    };
    summary_engine(&s, r);
    s.fft_wisdom = o->fft_wisdom;
    summary_verify(&s, r);
    summary_levels(&s, r);
    const int jrc = gf_summary_json_write(o->json_summary, &s);
    return rc ? rc : jrc;
}
