/*
 * The option parser: any argv (arguments separated by NUL bytes, at most
 * 40). Parsing either fails (exit code 2) or leaves the options valid by
 * gf_cli_parse's own promise, checked here: paths for a filter run (a
 * --make-fft-wisdom run only its file), at
 * most one of --taps/--coeffs/--ir and a filter (one of them or a design),
 * the rate a design needs, values in range, LO < HI.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 40 };

static void check(const gf_cli_options *o)
{
    if (o->action == GF_ACTION_DONE || o->action == GF_ACTION_LIST_DEVICES)
        return;
    /* --make-fft-wisdom FILE: nothing to filter, only (at most) --partition */
    if (o->action == GF_ACTION_WISDOM) {
        if (!o->make_wisdom || (o->partition & (o->partition - 1)) || o->in_path)
            abort();
        return;
    }
    const int filters = (o->taps > 0) + (o->coeffs != NULL) + (o->ir != NULL);
    if (filters > 1 || (filters == 0 && o->design.sections == 0) || o->taps > GF_MAX_FFT_TAPS)
        abort();
    if (o->design.sections > GF_DESIGN_MAX_SECTIONS)
        abort();
    if (o->action == GF_ACTION_DESIGN && (o->in_path || (o->design.sections && o->rate < 1) ||
                                          (!o->design.design_out && !o->design.response_png)))
        abort();
    if (o->action == GF_ACTION_FILTER && (!o->in_path || !o->out_path))
        abort();
    if (!isfinite(o->hist_lo) || !isfinite(o->hist_hi) || !(o->hist_lo < o->hist_hi))
        abort();
    if (o->hist_bins < 1 || o->hist_bins > GF_HIST_MAX_BINS || o->hist_limit == 0)
        abort();
    if (o->partition & (o->partition - 1))
        abort();
    if (o->raw && o->channels < 1)
        abort();
    /* Levels: finite gains within +-200 dB (dry and wet may be -inf), a
     * mix in 0..1 and not with --dry/--wet, a level of 0 dBFS or less. */
    if (!isfinite(o->gain_db) || fabs(o->gain_db) > 200 || (o->mix < 0 || o->mix > 1) ||
        (!isnan(o->mix) && (!isnan(o->dry_db) || !isnan(o->wet_db))) || o->dry_db > 200 ||
        o->wet_db > 200 || o->normalize_db > 0 || o->normalize_db < -200)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "gpufilt";
    for (size_t i = 0; i <= size && argc <= MAX_ARGS; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    argv[argc] = NULL;
    optind = 0; /* glibc: start getopt afresh */
    gf_cli_options o;
    const int rc = gf_cli_parse(argc, argv, &o);
    if (rc != GF_EXIT_OK && rc != GF_EXIT_USAGE)
        abort();
    if (rc == GF_EXIT_OK)
        check(&o);
    free(buf);
    return 0;
}
