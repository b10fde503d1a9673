/*
 * --normalize LEVEL (filter_run.h): the output's peak (or RMS) set to
 * LEVEL dBFS, as `sox --norm` does it. The filtered output goes to a
 * scratch file of raw samples in the run's precision beside OUT (a second
 * temporary name, removed at the end) while it is measured; then one pass
 * scales it into OUT through an engine of one tap, the gain, on the CPU,
 * which also counts the output's histograms, so they describe the final
 * output.
 *
 * Why a scratch file rather than filtering twice: the second pass then
 * costs a write and a read of 4 bytes per sample, never a second decoding
 * and filtering (3 minutes of stereo FLAC on two cores: 5.1 s against 6.9 s
 * with 1024 taps; within noise of each other for short filters and long
 * impulse responses by FFT).
 */
#include "filter_run.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_FRAMES GF_RUN_BLOCK_FRAMES

void gf_run_measure(gf_run *r, const void *frames, size_t count)
{
    const size_t n = count * (size_t)r->out_ch;
    double peak = r->peak, top = r->peak_pos, sumsq = 0;
    if (r->o->precision == GF_PRECISION_F32) {
        const float *y = frames;
        for (size_t i = 0; i < n; i++) {
            const double v = y[i];
            peak = fmax(peak, fabs(v));
            top = fmax(top, v);
            sumsq += v * v;
        }
    } else {
        const double *y = frames;
        for (size_t i = 0; i < n; i++) {
            peak = fmax(peak, fabs(y[i]));
            top = fmax(top, y[i]);
            sumsq += y[i] * y[i];
        }
    }
    r->peak = peak;
    r->peak_pos = top;
    r->sumsq += sumsq;
    r->samples += n;
}

/* The largest positive sample OUT holds without clipping: the largest
 * code of integer PCM (32767/32768 for 16 bits), as f32 holds it for f32
 * arithmetic; 1 for float and for encodings clipped to [-1, 1]. */
static double largest_positive(const gf_run *r)
{
    int bits = 0;
    switch (r->sink.fmt.sample) {
    case GF_RAW_U8:
    case GF_RAW_S8:
        bits = 8;
        break;
    case GF_RAW_S16LE:
    case GF_RAW_S16BE:
        bits = 16;
        break;
    case GF_RAW_S24LE:
        bits = 24;
        break;
    case GF_RAW_S32LE:
        bits = 32;
        break;
    default:
        return 1;
    }
    if (bits > 24 && r->o->precision == GF_PRECISION_F32)
        bits = 25; /* 1 - 2^-24: the largest float below 1 */
    return 1 - ldexp(1, 1 - bits);
}

double gf_run_norm_gain(gf_run *r)
{
    const gf_cli_options *o = r->o;
    const double level = pow(10, o->normalize_db / 20);
    const double rms = r->samples ? sqrt(r->sumsq / (double)r->samples) : 0;
    const double measure = o->normalize_rms ? rms : r->peak;
    r->norm_measured_db = 20 * log10(measure);
    if (!(measure > 0)) {
        gf_cli_warn("--normalize: the output is silent: written as it is");
        return 1;
    }
    double g = level / measure;
    const double peak_limit = o->normalize_rms ? 1 : level, top = largest_positive(r);
    if (g * r->peak > peak_limit)
        g = peak_limit / r->peak;
    if (r->peak_pos > 0 && g * r->peak_pos > top)
        g = top / r->peak_pos;
    if (o->normalize_rms && g < level / measure)
        gf_cli_warn("--normalize-by rms: %.2f dBFS RMS would clip; %.2f dBFS RMS, the peak at "
                    "full scale",
                    o->normalize_db, 20 * log10(g * rms));
    if (o->precision == GF_PRECISION_F32) {
        float gf = g < FLT_MAX ? (float)g : FLT_MAX;
        while (gf > 0 && (double)gf > g)
            gf = nextafterf(gf, 0);
        g = gf;
    }
    return g;
}

/* Every histogram record e has ready, to the files. */
static int take_records(gf_run *r, gf_engine *e)
{
    gf_hist_record rec;
    gf_status st;
    while ((st = gf_engine_hist_next(e, &rec)) == GF_OK) {
        r->hist_blocks++;
        const int rc = gf_hist_out_write(r->hout, &rec, r->err, sizeof r->err);
        if (rc) {
            gf_cli_error("%s", r->err);
            return rc;
        }
    }
    return st == GF_NO_RECORD ? GF_EXIT_OK : gf_cli_engine_failed(e, st);
}

/* The scratch file, scaled by g, into the sink, through engine e. */
static int scale_into_sink(gf_run *r, gf_engine *e, gf_source *in, void *buf, void *out)
{
    const gf_precision p = r->o->precision;
    int rc = GF_EXIT_OK;
    for (int64_t got; !rc;) {
        /* A file is all or nothing; a stream's frames so far are written,
         * as without --normalize (gf_run_commit then says so, exit 130). */
        if (*r->stop && !r->src.streaming) {
            gf_cli_error("interrupted by signal %d; no output written", (int)*r->stop);
            return GF_EXIT_INTERRUPTED;
        }
        if ((got = in->ops->read(in, p, buf, BLOCK_FRAMES, r->err, sizeof r->err)) < 0) {
            gf_cli_error("reading back the scratch file beside '%s': %s", r->o->out_path, r->err);
            return GF_EXIT_OUTPUT;
        }
        size_t made = 0;
        gf_status st =
            got ? gf_engine_process(e, buf, (size_t)got, out, &made) : gf_engine_flush(e);
        /* After the flush: what the engine holds (nothing, for one tap). */
        for (int more = !got; st == GF_OK && more;)
            if ((st = gf_engine_pull(e, out, BLOCK_FRAMES, &made)) == GF_OK)
                more = made == BLOCK_FRAMES;
        if (st != GF_OK)
            return gf_cli_engine_failed(e, st);
        if (made && (rc = r->sink.ops->write(&r->sink, p, out, made, r->err, sizeof r->err)) != 0)
            gf_cli_error("%s", r->err);
        if (!rc && r->hist_late)
            rc = take_records(r, e);
        if (!got)
            break;
    }
    return rc;
}

int gf_run_normalize(gf_run *r)
{
    const gf_cli_options *o = r->o;
    const int C = r->out_ch;
    const double g = gf_run_norm_gain(r);
    r->norm_gain_db = 20 * log10(g);
    gf_sink *s = &r->scratch;
    if (s->ops->finish && s->ops->finish(s, r->err, sizeof r->err) != 0) {
        gf_cli_error("%s", r->err);
        return GF_EXIT_OUTPUT;
    }
    const gf_taps one = {.h = (double *)&g, .n = 1, .filters = 1};
    gf_config c = gf_cli_engine_config(o, C, &one, GF_DEVICE_CPU, GF_DEVICE_NONE);
    c.mode = GF_MODE_CAUSAL;
    c.method = GF_METHOD_DIRECT;
    c.partition = 0;
    c.hist = r->hist_late ? &r->hc : NULL;
    gf_engine *e = NULL;
    gf_source in;
    memset(&in, 0, sizeof in);
    const gf_raw_format raw = o->precision == GF_PRECISION_F32 ? GF_RAW_F32LE : GF_RAW_F64LE;
    int rc = gf_cli_engine_create(&c, 0, &e);
    if (!rc && (rc = gf_raw_source_open(&in, s->out.tmp, raw, C, r->src.fmt.rate, BLOCK_FRAMES,
                                        r->err, sizeof r->err)) != 0)
        gf_cli_error("reading back the scratch file beside '%s': %s", o->out_path, r->err);
    const size_t fb = (size_t)C * (o->precision == GF_PRECISION_F32 ? 4 : 8);
    void *buf = NULL, *out = NULL;
    if (!rc && (!(buf = malloc(BLOCK_FRAMES * fb)) ||
                !(out = malloc((BLOCK_FRAMES + gf_engine_max_pending(e)) * fb)))) {
        gf_cli_error("out of memory");
        rc = GF_EXIT_INTERNAL;
    }
    if (!rc)
        rc = scale_into_sink(r, e, &in, buf, out);
    free(buf);
    free(out);
    gf_source_close(&in);
    gf_engine_destroy(e);
    const int64_t measured = s->frames_written;
    gf_sink_abort(s); /* the scratch file goes */
    if (!rc && r->sink.frames_written != measured) {
        gf_cli_error("internal error: %lld frames measured, %lld written", (long long)measured,
                     (long long)r->sink.frames_written);
        rc = GF_EXIT_INTERNAL;
    }
    return rc;
}
