/* --json-summary: the run as one line of JSON (summary_json.h). */
#include "summary_json.h"

#include "cli.h"
#include "io/outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A JSON string: the text as the terminal would show it (gf_cli_escape:
 * valid UTF-8, control characters and stray bytes as \xNN), with '"' and
 * '\' escaped for JSON; NULL is null. */
static void put_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    const size_t n = gf_cli_escape(NULL, 0, s) + 1;
    char *e = malloc(n);
    if (e)
        gf_cli_escape(e, n, s);
    fputc('"', f);
    for (const char *p = e ? e : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', f);
        fputc(*p, f);
    }
    fputc('"', f);
    free(e);
}

static void put_key(FILE *f, const char *key)
{
    fprintf(f, ",\"%s\":", key);
}

/* A number, or null when it is not finite (JSON has no NaN). */
static void put_number(FILE *f, const char *key, double v)
{
    put_key(f, key);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void put_messages(FILE *f, const char *key, int errors)
{
    put_key(f, key);
    fputc('[', f);
    const char *m;
    for (size_t i = 0; (m = gf_cli_kept_message(errors, i)) != NULL; i++) {
        if (i)
            fputc(',', f);
        put_string(f, m);
    }
    fputc(']', f);
}

static void put_verify(FILE *f, const gf_run_summary *s)
{
    put_key(f, "verify");
    if (!s->verify) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"against\":\"%s\",\"compared\":%llu",
            s->verify == 1 ? "serial reference" : "exact sums", (unsigned long long)s->compared);
    if (s->verify == 1) {
        fprintf(f, ",\"differ\":%llu,\"max_ulp\":%llu", (unsigned long long)s->differ,
                (unsigned long long)s->max_ulp);
        put_number(f, "max_abs_error", s->max_abs_error);
        put_number(f, "reference_seconds", s->reference_seconds);
    } else {
        fprintf(f, ",\"all\":%s", s->all_checked ? "true" : "false");
        put_number(f, "max_abs_error", s->max_abs_error);
        put_number(f, "bound", s->bound);
        put_number(f, "ratio", s->ratio);
        fprintf(f, ",\"nonfinite_differ\":%llu", (unsigned long long)s->differ);
        put_number(f, "exact_seconds", s->reference_seconds);
    }
    fputc('}', f);
}

static void put_backend(FILE *f, const gf_run_summary *s)
{
    put_key(f, "backend");
    put_string(f, s->backend);
    put_key(f, "why");
    put_string(f, s->why && *s->why ? s->why : NULL);
    /* "gpus": [{"gpu": N, "chunks": C, "frames": F, "channels": [A, B]},
     * ...], or null; channels A to B, 0-based like "data" in --hist. */
    put_key(f, "gpus");
    if (!s->ngpus)
        fputs("null", f);
    for (int i = 0; i < s->ngpus; i++)
        fprintf(f, "%s{\"gpu\":%d,\"chunks\":%llu,\"frames\":%llu,\"channels\":[%d,%d]}%s",
                i ? "," : "[", s->gpu[i], (unsigned long long)s->gpu_chunks[i],
                (unsigned long long)s->gpu_frames[i], s->gpu_first[i],
                s->gpu_first[i] + s->gpu_channels[i] - 1, i + 1 == s->ngpus ? "]" : "");
    put_key(f, "handoff");
    if (!s->handoff_to) {
        fputs("null", f);
        return;
    }
    fputs("{\"to\":", f);
    put_string(f, s->handoff_to);
    if (s->handoff_frame >= 0)
        fprintf(f, ",\"frame\":%lld", (long long)s->handoff_frame);
    else
        fputs(",\"frame\":null", f);
    put_key(f, "error");
    put_string(f, *s->handoff_error ? s->handoff_error : NULL);
    fputc('}', f);
}

/* "gain_db", "filter_normalization", "mix", "normalize": null where not asked. */
static void put_levels(FILE *f, const gf_run_summary *s)
{
    put_number(f, "gain_db", s->gain_db);
    put_key(f, "filter_normalization");
    if (s->norm_by) {
        fputs("{\"by\":", f);
        put_string(f, s->norm_by);
        put_number(f, "measure", s->norm_measure);
        put_number(f, "factor", s->norm_factor);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    put_key(f, "mix");
    if (s->mix) {
        fputc('{', f);
        fprintf(f, "\"dry\":%.17g", s->dry);
        put_number(f, "wet", s->wet);
        fprintf(f, ",\"dry_tap\":%zu}", s->dry_tap);
    } else {
        fputs("null", f);
    }
    put_key(f, "normalize");
    if (s->normalize_by) {
        fputs("{\"by\":", f);
        put_string(f, s->normalize_by);
        put_number(f, "level_db", s->normalize_level_db);
        put_number(f, "measured_db", s->normalize_measured_db);
        put_number(f, "gain_db", s->normalize_gain_db);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
}

static void put_summary(FILE *f, const gf_run_summary *s)
{
    fprintf(f, "{\"gpufilt\":\"%s\",\"exit_code\":%d", GPUFILT_VERSION, s->exit_code);
    put_key(f, "input");
    put_string(f, s->input);
    put_key(f, "output");
    put_string(f, s->output);
    put_key(f, "output_format");
    put_string(f, s->output_format);
    fprintf(f, ",\"frames_in\":%lld,\"frames_out\":%lld", (long long)s->frames_in,
            (long long)s->frames_out);
    /* What a run that failed early never learned is null, not 0. */
    put_key(f, "channels");
    s->channels > 0 ? fprintf(f, "%d", s->channels) : fputs("null", f);
    put_key(f, "rate");
    s->rate > 0 ? fprintf(f, "%d", s->rate) : fputs("null", f);
    put_key(f, "taps");
    s->taps > 0 ? fprintf(f, "%zu", s->taps) : fputs("null", f);
    put_key(f, "filter");
    put_string(f, s->filter);
    fprintf(f, ",\"per_channel\":%s", s->taps_per_channel ? "true" : "false");
    if (s->matrix_out)
        fprintf(f, ",\"ir_layout\":\"matrix %dx%d\",\"channels_out\":%d,\"matrix_sums\":\"%s\"",
                s->matrix_in, s->matrix_out, s->matrix_out,
                s->matrix_spectra ? "spectra" : "samples");
    else {
        fprintf(f, ",\"ir_layout\":\"%s\"", s->taps_per_channel ? "per channel" : "single");
        put_key(f, "channels_out");
        s->channels > 0 ? fprintf(f, "%d", s->channels) : fputs("null", f);
        fputs(",\"matrix_sums\":null", f);
    }
    put_key(f, "ir_resampled");
    if (s->ir_from)
        fprintf(f, "{\"from\":%d,\"to\":%d,\"taps_from\":%zu}", s->ir_from, s->ir_to,
                s->ir_taps_from);
    else
        fputs("null", f);
    put_key(f, "mode");
    put_string(f, s->mode);
    put_key(f, "precision");
    put_string(f, s->precision);
    put_key(f, "method");
    put_string(f, s->method);
    put_key(f, "partition");
    s->partition ? fprintf(f, "%zu", s->partition) : fputs("null", f);
    put_key(f, "fft_wisdom");
    s->fft_wisdom ? put_string(f, s->fft_wisdom) : (void)fputs("null", f);
    put_backend(f, s);
    put_number(f, "seconds", s->seconds);
    put_number(f, "engine_seconds", s->method ? s->engine_seconds : NAN);
    put_number(f, "frames_per_second", s->seconds > 0 ? (double)s->frames_in / s->seconds : NAN);
    fprintf(f, ",\"clipped\":%llu", (unsigned long long)s->clipped);
    put_levels(f, s);
    put_key(f, "dither");
    if (s->dither)
        fprintf(f, "{\"kind\":\"%s\",\"seed\":%llu}", s->dither, (unsigned long long)s->seed);
    else
        fputs("null", f);
    put_verify(f, s);
    put_messages(f, "warnings", 0);
    put_messages(f, "errors", 1);
    fputs("}\n", f);
}

int gf_summary_json_write(const char *path, const gf_run_summary *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) {
        gf_cli_error("out of memory for --json-summary");
        return GF_EXIT_INTERNAL;
    }
    put_summary(m, s);
    if (fclose(m) != 0 || !text) {
        free(text);
        gf_cli_error("out of memory for --json-summary");
        return GF_EXIT_INTERNAL;
    }
    char err[512] = "";
    int rc = GF_EXIT_OK;
    gf_outfile of;
    memset(&of, 0, sizeof of);
    of.fd = -1;
    const int to_stdout = strcmp(path, "-") == 0;
    const int fd = to_stdout ? STDOUT_FILENO : -1;
    if (!to_stdout && gf_outfile_open(&of, "JSON summary", path, NULL, err, sizeof err) != 0)
        rc = GF_EXIT_OUTPUT;
    for (size_t at = 0; !rc && at < len;) {
        const ssize_t w = write(to_stdout ? fd : of.fd, text + at, len - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, sizeof err, "writing JSON summary '%s': %s",
                     to_stdout ? "standard output" : path, strerror(errno));
            rc = GF_EXIT_OUTPUT;
        } else {
            at += (size_t)w;
        }
    }
    if (!to_stdout && !rc && gf_outfile_commit(&of, 0, err, sizeof err) != 0)
        rc = GF_EXIT_OUTPUT;
    if (!to_stdout && rc)
        gf_outfile_abort(&of);
    free(text);
    if (rc)
        gf_cli_error("%s", err);
    return rc;
}
