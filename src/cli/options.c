/*
 * Command-line parsing: every option is validated here, once. Options are
 * a table (name, kind, field, range or choices); parse_value turns one
 * value into its field, check_options checks the options against each
 * other.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum arg_kind {
    ARG_FLAG,    /* int field set to 1 */
    ARG_SIZE,    /* size_t in [lo, hi] */
    ARG_INT,     /* int in [lo, hi] */
    ARG_STRING,  /* const char * (a path, a name) */
    ARG_CHOICE,  /* an enum field, by name */
    ARG_DEVICE,  /* gf_device: "auto" or a kind the library names (gf_device_kinds) */
    ARG_GPUS,    /* --gpus all|N[,M...] */
    ARG_RAW,     /* gf_raw_format */
    ARG_RANGE,   /* --hist-range LO:HI */
    ARG_SECONDS, /* --duration */
    ARG_BYTES,   /* --hist-limit: a size with an optional K/M/G/T suffix, or "none" */
    ARG_ACTION,  /* --live, --list-devices: the action lo */
    ARG_DESIGN,  /* a filter design option (design_cli.h), in command-line order */
    ARG_DB,      /* double: dB (lo: DB_OFF takes -inf, DB_LEVEL dBFS <= 0), or 0..1 (DB_FRACTION) */
    ARG_HELP,
    ARG_VERSION
} arg_kind;

typedef struct choice {
    const char *name;
    int value;
} choice;

typedef struct opt_spec {
    const char *name;
    char short_name; /* 0: none */
    arg_kind kind;
    size_t field;          /* offsetof(gf_cli_options, ...) */
    size_t lo, hi;         /* ARG_SIZE, ARG_INT */
    const choice *choices; /* ARG_CHOICE: ends with a NULL name */
} opt_spec;

/* The enum fields ARG_CHOICE and ARG_RAW write are int-sized. */
_Static_assert(sizeof(gf_mode) == sizeof(int) && sizeof(gf_precision) == sizeof(int) &&
                   sizeof(gf_device) == sizeof(int) && sizeof(gf_raw_format) == sizeof(int) &&
                   sizeof(gf_method) == sizeof(int) && sizeof(gf_norm_filter) == sizeof(int) &&
                   sizeof(gf_dither_kind) == sizeof(int) && sizeof(gf_live_latency) == sizeof(int),
               "enum options are written as int");

static const choice modes[] = {
    {"same", GF_MODE_SAME}, {"causal", GF_MODE_CAUSAL}, {"full", GF_MODE_FULL}, {NULL, 0}};
static const choice methods[] = {{"auto", GF_METHOD_AUTO},
                                 {"direct", GF_METHOD_DIRECT},
                                 {"fft", GF_METHOD_FFT},
                                 {"nupc", GF_METHOD_NUPC},
                                 {NULL, 0}};
static const choice precisions[] = {
    {"f32", GF_PRECISION_F32}, {"f64", GF_PRECISION_F64}, {NULL, 0}};
static const choice ir_rates[] = {{"resample", 0}, {"strict", 1}, {NULL, 0}};
static const choice dithers[] = {
    {"none", GF_DITHER_NONE}, {"tpdf", GF_DITHER_TPDF}, {"shaped", GF_DITHER_SHAPED}, {NULL, 0}};
static const choice latencies[] = {
    {"block", GF_LATENCY_BLOCK}, {"zero", GF_LATENCY_ZERO}, {"auto", GF_LATENCY_AUTO}, {NULL, 0}};
static const choice hist_of[] = {{"output", 0}, {"input", 1}, {NULL, 0}};
static const choice hist_channels[] = {{"each", 0}, {"mix", 1}, {NULL, 0}};
static const choice norm_filters[] = {
    {"peak", GF_NORM_PEAK}, {"dc", GF_NORM_DC}, {"l1", GF_NORM_L1}, {"l2", GF_NORM_L2}, {NULL, 0}};
static const choice normalize_by[] = {{"peak", 0}, {"rms", 1}, {NULL, 0}};
/* ARG_DB's lo. */
enum { DB_GAIN = 0, DB_OFF = 1, DB_LEVEL = 2, DB_FRACTION = 3 };
/* The largest gain in dB, either way. */
#define MAX_DB 200.0

#define F(x) offsetof(gf_cli_options, x)
static const opt_spec specs[] = {
    {"taps", 't', ARG_SIZE, F(taps), 1, GF_MAX_FFT_TAPS, NULL},
    {"coeffs", 'k', ARG_STRING, F(coeffs), 0, 0, NULL},
    {"ir", 0, ARG_STRING, F(ir), 0, 0, NULL},
    {"ir-rate", 0, ARG_CHOICE, F(ir_strict), 0, 0, ir_rates},
    {"mode", 'm', ARG_CHOICE, F(mode), 0, 0, modes},
    {"method", 0, ARG_CHOICE, F(method), 0, 0, methods},
    {"partition", 0, ARG_SIZE, F(partition), GF_MIN_PARTITION, GF_MAX_PARTITION, NULL},
    {"precision", 'p', ARG_CHOICE, F(precision), 0, 0, precisions},
    {"device", 'd', ARG_DEVICE, F(device), 0, 0, NULL},
    {"chunk", 0, ARG_SIZE, F(chunk), 1, GF_MAX_CHUNK_FRAMES, NULL},
    {"threads", 0, ARG_INT, F(threads), 1, GF_MAX_THREADS, NULL},
    {"gpus", 0, ARG_GPUS, 0, 0, 0, NULL},
    {"out-format", 0, ARG_STRING, F(out_format), 0, 0, NULL},
    {"dither", 0, ARG_CHOICE, F(dither), 0, 0, dithers},
    {"seed", 0, ARG_SIZE, F(seed), 0, SIZE_MAX, NULL},
    {"verify", 0, ARG_FLAG, F(verify), 0, 0, NULL},
    {"allow-truncated", 0, ARG_FLAG, F(allow_truncated), 0, 0, NULL},
    {"sync", 0, ARG_FLAG, F(sync), 0, 0, NULL},
    {"force", 0, ARG_FLAG, F(force), 0, 0, NULL},
    {"raw", 0, ARG_RAW, F(raw), 0, 0, NULL},
    {"out-raw", 0, ARG_RAW, F(out_raw), 0, 0, NULL},
    {"channels", 'c', ARG_INT, F(channels), 1, GF_MAX_CHANNELS, NULL},
    {"rate", 'r', ARG_INT, F(rate), 1, 10000000, NULL},
    {"hist", 0, ARG_STRING, F(hist_path), 0, 0, NULL},
    {"hist-png", 0, ARG_STRING, F(hist_png), 0, 0, NULL},
    {"hist-bins", 0, ARG_SIZE, F(hist_bins), 1, GF_HIST_MAX_BINS, NULL},
    {"hist-block", 0, ARG_SIZE, F(hist_block), 1, GF_HIST_MAX_BLOCK, NULL},
    {"hist-range", 0, ARG_RANGE, 0, 0, 0, NULL},
    {"hist-of", 0, ARG_CHOICE, F(hist_of_input), 0, 0, hist_of},
    {"hist-channels", 0, ARG_CHOICE, F(hist_mix), 0, 0, hist_channels},
    {"hist-limit", 0, ARG_BYTES, F(hist_limit), 0, 0, NULL},
    {"lowpass", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"highpass", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"bandpass", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"bandreject", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"eq", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"atten", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"transition", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"design-taps", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"phase", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"design-out", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"response-png", 0, ARG_DESIGN, 0, 0, 0, NULL},
    {"gain", 0, ARG_DB, F(gain_db), DB_GAIN, 0, NULL},
    {"normalize-filter", 0, ARG_CHOICE, F(norm_filter), 0, 0, norm_filters},
    {"mix", 0, ARG_DB, F(mix), DB_FRACTION, 0, NULL},
    {"dry", 0, ARG_DB, F(dry_db), DB_OFF, 0, NULL},
    {"wet", 0, ARG_DB, F(wet_db), DB_OFF, 0, NULL},
    {"normalize", 0, ARG_DB, F(normalize_db), DB_LEVEL, 0, NULL},
    {"normalize-by", 0, ARG_CHOICE, F(normalize_rms), 0, 0, normalize_by},
    {"live", 0, ARG_ACTION, 0, GF_ACTION_LIVE, 0, NULL},
    {"list-devices", 0, ARG_ACTION, 0, GF_ACTION_LIST_DEVICES, 0, NULL},
    {"in", 0, ARG_STRING, F(live_in), 0, 0, NULL},
    {"out", 0, ARG_STRING, F(live_out), 0, 0, NULL},
    {"host-api", 0, ARG_STRING, F(host_api), 0, 0, NULL},
    {"frames", 0, ARG_SIZE, F(live_frames), 1, 65536, NULL},
    {"duration", 0, ARG_SECONDS, F(duration), 0, 0, NULL},
    {"stats", 0, ARG_FLAG, F(stats), 0, 0, NULL},
    {"no-mlock", 0, ARG_FLAG, F(no_mlock), 0, 0, NULL},
    {"control", 0, ARG_STRING, F(control), 0, 0, NULL},
    {"crossfade", 0, ARG_SIZE, F(crossfade_ms), 0, 10000, NULL},
    {"latency", 0, ARG_CHOICE, F(latency), 0, 0, latencies},
    {"quiet", 'q', ARG_FLAG, F(quiet), 0, 0, NULL},
    {"json-summary", 0, ARG_STRING, F(json_summary), 0, 0, NULL},
    {"fft-wisdom", 0, ARG_STRING, F(fft_wisdom), 0, 0, NULL},
    {"make-fft-wisdom", 0, ARG_STRING, F(make_wisdom), 0, 0, NULL},
    {"out-dir", 0, ARG_STRING, F(out_dir), 0, 0, NULL},
    {"in-list", 0, ARG_STRING, F(in_list), 0, 0, NULL},
    {"skip-existing", 0, ARG_FLAG, F(skip_existing), 0, 0, NULL},
    {"jobs", 'j', ARG_INT, F(jobs), 1, GF_MAX_THREADS, NULL},
    {"help", 'h', ARG_HELP, 0, 0, 0, NULL},
    {"version", 'V', ARG_VERSION, 0, 0, 0, NULL},
};
#undef F
enum { NSPECS = sizeof specs / sizeof specs[0] };

/* A whole number in [lo, hi]; GF_EXIT_USAGE with a message otherwise. */
static int parse_size(const char *opt, const char *s, size_t lo, size_t hi, size_t *out)
{
    char *end = NULL;
    errno = 0;
    if (*s == '-' || *s == '+' || *s == '\0') {
        if (*s == '-') {
            strtoll(s, &end, 10);
            if (end != s && *end == '\0') {
                gf_cli_error("%s: '%s' is out of range %zu..%zu", opt, s, lo, hi);
                return GF_EXIT_USAGE;
            }
        }
        gf_cli_error("%s: '%s' is not a whole number", opt, s);
        return GF_EXIT_USAGE;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0') {
        gf_cli_error("%s: '%s' is not a whole number", opt, s);
        return GF_EXIT_USAGE;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        gf_cli_error("%s: '%s' is out of range %zu..%zu", opt, s, lo, hi);
        return GF_EXIT_USAGE;
    }
    *out = (size_t)v;
    return GF_EXIT_OK;
}

/* LO:HI, two finite numbers. */
static int parse_range(const char *s, double *lo, double *hi)
{
    char *end = NULL;
    errno = 0;
    *lo = strtod(s, &end);
    if (end != s && *end == ':') {
        const char *h = end + 1;
        *hi = strtod(h, &end);
        if (end != h && *end == '\0' && errno != ERANGE && isfinite(*lo) && isfinite(*hi))
            return GF_EXIT_OK;
    }
    gf_cli_error("--hist-range: '%s' is not LO:HI with two finite numbers", s);
    return GF_EXIT_USAGE;
}

/* A size in bytes: a whole number with an optional binary suffix K, M, G
 * or T (any case, an optional trailing B or iB), or "none" (no limit). */
static int parse_bytes(const char *opt, const char *s, uint64_t *out)
{
    if (strcmp(s, "none") == 0) {
        *out = UINT64_MAX;
        return GF_EXIT_OK;
    }
    static const char units[] = "kmgt";
    char *end = NULL;
    errno = 0;
    const unsigned long long v = *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
    int shift = -1;
    if (end && end != s) {
        const char *u = *end ? strchr(units, *end | 0x20) : NULL;
        const char *rest = u ? end + 1 : end;
        if (*rest == '\0' || (u && (strcmp(rest, "B") == 0 || strcmp(rest, "iB") == 0)))
            shift = u ? 10 * (int)(u - units + 1) : 0;
    }
    if (shift < 0 || errno == ERANGE || v == 0 || v > (UINT64_MAX >> shift)) {
        gf_cli_error("%s: '%s' is not a size in bytes (e.g. 500M or 20G: K, M, G and T are "
                     "powers of 1024) or none",
                     opt, s);
        return GF_EXIT_USAGE;
    }
    *out = (uint64_t)v << shift;
    return GF_EXIT_OK;
}

/* A gain in dB ("-6", "-6dB"; with DB_OFF also "-inf": off), a level in
 * dBFS ("-1", "-1dB", "-1dBFS"; 0 at most) or a fraction 0..1. */
static int parse_db(const char *opt, const char *s, size_t kind, double *out)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    const int unit =
        kind != DB_FRACTION && end != s &&
        (strcasecmp(end, "dB") == 0 || (kind == DB_LEVEL && strcasecmp(end, "dBFS") == 0));
    const int number = end != s && (*end == '\0' || unit) && errno != ERANGE && !isnan(v);
    if (kind == DB_FRACTION && (!number || !(v >= 0 && v <= 1))) {
        gf_cli_error("%s: '%s' is not a number from 0 to 1 (the wet part; the dry part is 1 - "
                     "WET)",
                     opt, s);
        return GF_EXIT_USAGE;
    }
    if (!number || (isinf(v) && !(kind == DB_OFF && v < 0))) {
        gf_cli_error("%s: '%s' is not a %s (%s)", opt, s, kind == DB_LEVEL ? "level" : "gain",
                     kind == DB_LEVEL ? "dBFS: e.g. -1, -1dB or -1dBFS"
                     : kind == DB_OFF ? "dB: e.g. -6 or -6dB, or -inf for none"
                                      : "dB: e.g. -6 or -6dB");
        return GF_EXIT_USAGE;
    }
    if (kind == DB_LEVEL && v > 0) {
        gf_cli_error("%s: '%s' is above 0 dBFS, which would clip: give 0 or less (e.g. -1dBFS)",
                     opt, s);
        return GF_EXIT_USAGE;
    }
    if (fabs(v) > MAX_DB && !isinf(v)) {
        gf_cli_error("%s: '%s' is out of range %g..%g dB", opt, s, -MAX_DB,
                     kind == DB_LEVEL ? 0.0 : MAX_DB);
        return GF_EXIT_USAGE;
    }
    *out = v;
    return GF_EXIT_OK;
}

static int parse_choice(const char *opt, const choice *c, const char *s, int *out)
{
    char names[128] = "";
    for (const choice *i = c; i->name; i++) {
        if (strcmp(s, i->name) == 0) {
            *out = i->value;
            return GF_EXIT_OK;
        }
        const size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", i->name);
    }
    gf_cli_error("%s: '%s' is not one of %s", opt, s, names);
    return GF_EXIT_USAGE;
}

/* --device: "auto", then the kinds the library knows, by the library's
 * names (a kind this build lacks is named too: asking for it says what is
 * missing). GF_DEVICE_NONE is no choice here. */
static int parse_device(const char *opt, const char *s, gf_device *out)
{
    enum { MAX_KINDS = 16 };
    gf_device kinds[MAX_KINDS];
    const size_t n = gf_device_kinds(kinds, MAX_KINDS);
    choice c[MAX_KINDS + 2] = {{gf_device_name(GF_DEVICE_AUTO), GF_DEVICE_AUTO}};
    for (size_t i = 0; i < n && i < MAX_KINDS; i++)
        c[i + 1] = (choice){gf_device_name(kinds[i]), kinds[i]};
    int v = GF_DEVICE_AUTO;
    const int rc = parse_choice(opt, c, s, &v);
    if (rc == GF_EXIT_OK)
        *out = (gf_device)v;
    return rc;
}

/* One option's value into its field of o. */
/* --gpus all, or up to GF_MAX_DEVICES ordinals separated by commas (one
 * may repeat: two engines' worth of work on one GPU). */
static int parse_gpus(const char *opt, const char *arg, gf_cli_options *o)
{
    if (!strcmp(arg, "all")) {
        o->ngpus = GF_GPUS_ALL;
        return GF_EXIT_OK;
    }
    o->ngpus = 0;
    for (const char *p = arg;;) {
        char *end = NULL;
        errno = 0;
        const long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (v < 0 || v > 1023 || errno || (*end != ',' && *end != '\0') ||
            o->ngpus == GF_MAX_DEVICES) {
            gf_cli_error("%s: '%s' is not 'all' or 1 to %d GPU numbers separated by commas", opt,
                         arg, GF_MAX_DEVICES);
            return GF_EXIT_USAGE;
        }
        o->gpus[o->ngpus++] = (int)v;
        if (*end == '\0')
            return GF_EXIT_OK;
        p = end + 1;
    }
}

static int parse_value(const opt_spec *sp, const char *arg, gf_cli_options *o)
{
    char opt[40];
    snprintf(opt, sizeof opt, "--%s", sp->name);
    void *field = (char *)o + sp->field;
    size_t v = 0;
    int rc = GF_EXIT_OK;
    switch (sp->kind) {
    case ARG_FLAG:
        *(int *)field = 1;
        break;
    case ARG_SIZE:
        rc = parse_size(opt, arg, sp->lo, sp->hi, (size_t *)field);
        break;
    case ARG_INT:
        if ((rc = parse_size(opt, arg, sp->lo, sp->hi, &v)) == GF_EXIT_OK)
            *(int *)field = (int)v;
        break;
    case ARG_STRING:
        *(const char **)field = arg;
        break;
    case ARG_CHOICE:
        rc = parse_choice(opt, sp->choices, arg, (int *)field);
        break;
    case ARG_DEVICE:
        rc = parse_device(opt, arg, (gf_device *)field);
        break;
    case ARG_GPUS:
        rc = parse_gpus(opt, arg, o);
        break;
    case ARG_RAW:
        if ((*(gf_raw_format *)field = gf_raw_parse(arg)) == GF_RAW_NONE) {
            gf_cli_error("%s: '%s' is not one of u8 s8 s16le s16be s24le s32le f32le f64le", opt,
                         arg);
            rc = GF_EXIT_USAGE;
        }
        break;
    case ARG_RANGE:
        rc = parse_range(arg, &o->hist_lo, &o->hist_hi);
        break;
    case ARG_BYTES:
        rc = parse_bytes(opt, arg, (uint64_t *)field);
        break;
    case ARG_SECONDS: {
        char *end = NULL;
        errno = 0;
        const double d = strtod(arg, &end);
        if (end == arg || *end != '\0' || errno == ERANGE || !(d > 0) || d > 1e7) {
            gf_cli_error("%s: '%s' is not a number of seconds in (0, 1e7]", opt, arg);
            rc = GF_EXIT_USAGE;
        }
        *(double *)field = d;
        break;
    }
    case ARG_DESIGN:
        rc = gf_design_cli_option(&o->design, sp->name, arg);
        break;
    case ARG_DB:
        rc = parse_db(opt, arg, sp->lo, (double *)field);
        break;
    case ARG_ACTION:
    case ARG_HELP:
    case ARG_VERSION:
        break;
    }
    return rc;
}

/* The positional arguments, for the action. */
static int check_positionals(int npos, char **pos, gf_cli_options *o)
{
    if (o->action != GF_ACTION_FILTER) {
        if (npos > 0) {
            gf_cli_error("unexpected argument '%s' (--%s takes no IN or OUT)", pos[0],
                         o->action == GF_ACTION_LIVE ? "live" : "list-devices");
            return GF_EXIT_USAGE;
        }
        return GF_EXIT_OK;
    }
    if (o->out_dir) { /* every argument is an input */
        o->action = GF_ACTION_BATCH;
        o->inputs = pos;
        o->ninputs = npos;
        return GF_EXIT_OK;
    }
    if (npos == 0 && (o->design.design_out || o->design.response_png)) {
        o->action = GF_ACTION_DESIGN; /* the files only */
        return GF_EXIT_OK;
    }
    if (npos < 2) {
        gf_cli_error("expected IN and OUT (files, or - for standard input/output; see "
                     "gpufilt --help)");
        return GF_EXIT_USAGE;
    }
    if (npos > 2) {
        gf_cli_error("unexpected argument '%s' (expected only IN and OUT)", pos[2]);
        return GF_EXIT_USAGE;
    }
    o->in_path = pos[0];
    o->out_path = pos[1];
    return GF_EXIT_OK;
}

/* The first of `names` (a NULL-terminated list) that was given, or NULL. */
static const char *first_given(const char *const *given, const char *const *names)
{
    for (; *names; names++)
        for (int i = 0; i < NSPECS; i++)
            if (given[i] && strcmp(specs[i].name, *names) == 0)
                return *names;
    return NULL;
}

/* Options that would be silently ignored: the histograms' parameters
 * without a histogram file, those of IN and OUT with --live. */
static int check_given(const gf_cli_options *o, const char *const *given)
{
    static const char *const hist_params[] = {
        "hist-bins", "hist-block", "hist-range", "hist-of", "hist-channels", "hist-limit", NULL};
    static const char *const not_live[] = {
        "chunk",      "verify",       "allow-truncated", "sync",    "force",         "out-format",
        "hist-limit", "json-summary", "out-dir",         "in-list", "skip-existing", "gpus",
        "jobs",       "normalize",    "normalize-by",    NULL};
    /* Live audio plays float samples: nothing is rounded to dither. */
    static const char *const quantise[] = {"dither", "seed", NULL};
    const char *name;
    if (!o->hist_path && !o->hist_png && (name = first_given(given, hist_params))) {
        gf_cli_error("--%s needs --hist FILE or --hist-png FILE (it sets their histograms)", name);
        return GF_EXIT_USAGE;
    }
    if (o->action == GF_ACTION_LIVE &&
        ((name = first_given(given, not_live)) || (name = first_given(given, quantise)))) {
        gf_cli_error("--%s is for IN and OUT, not --live", name);
        return GF_EXIT_USAGE;
    }
    if (first_given(given, (const char *const[]){"normalize-by", NULL}) && isnan(o->normalize_db)) {
        gf_cli_error("--normalize-by needs --normalize LEVEL (it says what LEVEL measures)");
        return GF_EXIT_USAGE;
    }
    if (!o->ir && first_given(given, (const char *const[]){"ir-rate", NULL})) {
        gf_cli_error("--ir-rate is for --ir (the rate of an impulse response file)");
        return GF_EXIT_USAGE;
    }
    if (o->dither == GF_DITHER_NONE && first_given(given, (const char *const[]){"seed", NULL})) {
        gf_cli_error("--seed sets the dither's noise: it does nothing with --dither none");
        return GF_EXIT_USAGE;
    }
    static const char *const live_only[] = {"control", "crossfade", "latency", "no-mlock", NULL};
    if (o->action != GF_ACTION_LIVE && (name = first_given(given, live_only))) {
        gf_cli_error("--%s is for --live (it needs a stream that plays)", name);
        return GF_EXIT_USAGE;
    }
    if (o->latency == GF_LATENCY_ZERO && (o->hist_path || o->hist_png)) {
        gf_cli_error("--latency zero: --hist and --hist-png record the worker's engine, which "
                     "filters only the tail (use --latency block)");
        return GF_EXIT_USAGE;
    }
    if (o->control && (o->hist_path || o->hist_png)) {
        gf_cli_error("--control: the filter cannot change while --hist or --hist-png records it");
        return GF_EXIT_USAGE;
    }
    if (o->ngpus && o->device != GF_DEVICE_AUTO && o->device != GF_DEVICE_CUDA) {
        gf_cli_error("--gpus names GPUs: it goes with --device cuda or auto, not %s",
                     gf_device_name(o->device));
        return GF_EXIT_USAGE;
    }
    return GF_EXIT_OK;
}

/* --partition's message (into buf) where it is not a power of two, else
 * NULL. */
static const char *partition_not_pow2(const gf_cli_options *o, char *buf, size_t n)
{
    if (!(o->partition & (o->partition - 1)))
        return NULL;
    snprintf(buf, n, "--partition: '%zu' is not a power of two (%zu, %zu, ... %zu)", o->partition,
             GF_MIN_PARTITION, 2 * GF_MIN_PARTITION, GF_MAX_PARTITION);
    return buf;
}

/* --make-fft-wisdom FILE: only --partition (a power of two) and --quiet
 * beside it, no IN or OUT; then the action is GF_ACTION_WISDOM. */
static int check_wisdom(gf_cli_options *o, const char *const *given, int npos, char **pos)
{
    for (size_t i = 0; i < NSPECS; i++)
        if (given[i] && strcmp(specs[i].name, "make-fft-wisdom") != 0 &&
            strcmp(specs[i].name, "partition") != 0 && strcmp(specs[i].name, "quiet") != 0) {
            gf_cli_error("--make-fft-wisdom takes only --partition and --quiet (not --%s)",
                         specs[i].name);
            return GF_EXIT_USAGE;
        }
    char buf[128];
    if (npos > 0) {
        gf_cli_error("unexpected argument '%s' (--make-fft-wisdom takes no IN or OUT)", pos[0]);
        return GF_EXIT_USAGE;
    }
    if (partition_not_pow2(o, buf, sizeof buf)) {
        gf_cli_error("%s", buf);
        return GF_EXIT_USAGE;
    }
    o->action = GF_ACTION_WISDOM;
    return GF_EXIT_OK;
}

/* The filter's options against each other; a message (in buf, or a
 * constant) or NULL. */
static const char *check_filter(const gf_cli_options *o, char *buf, size_t n)
{
    const int filters = (o->taps > 0) + (o->coeffs != NULL) + (o->ir != NULL);
    if (filters > 1)
        return "use one of --taps, --coeffs and --ir, not several";
    if (filters == 0 && o->design.sections == 0)
        return "a filter is required: --taps N, --coeffs FILE, --ir FILE or a design "
               "(--lowpass F, --highpass F, --bandpass F1:F2, --bandreject F1:F2, --eq FILE)";
    if (partition_not_pow2(o, buf, n))
        return buf;
    if (o->method == GF_METHOD_DIRECT && o->partition)
        return "--partition sets the FFT method's block size: it does nothing with --method direct";
    if (o->method == GF_METHOD_DIRECT && o->taps > GF_MAX_TAPS)
        return "--method direct takes at most 8192 taps (the FFT method up to 4194304)";
    return NULL;
}

/* Live audio, streams and histograms: the options against each other. */
static const char *check_io(const gf_cli_options *o)
{
    const int live = o->action == GF_ACTION_LIVE;
    if (live && o->mode_given && o->mode == GF_MODE_SAME)
        return "--live filters causally: --mode same needs input from the future";
    if (live && o->mode == GF_MODE_FULL)
        return "--live filters causally: --mode full would need the end of a stream that has none";
    if (live && o->partition)
        return "--partition is for IN and OUT: --live's FFT partition is its block (--frames)";
    if (live && (o->raw || o->out_raw))
        return "--raw and --out-raw are for IN and OUT, not --live";
    if (!live &&
        (o->live_in || o->live_out || o->host_api || o->live_frames || o->duration > 0 || o->stats))
        return "--in, --out, --host-api, --frames, --duration and --stats need --live";
    if (o->out_raw && o->out_format)
        return "use either --out-raw or --out-format, not both";
    if (o->json_summary && strcmp(o->json_summary, "-") == 0 && o->out_path &&
        strcmp(o->out_path, "-") == 0)
        return "--json-summary -: standard output is OUT already (give the summary a file)";
    if (o->json_summary && o->out_path && strcmp(o->json_summary, o->out_path) == 0)
        return "--json-summary names OUT: give the summary its own file";
    if (o->raw && !o->channels)
        return "--raw needs --channels (raw samples carry no channel count)";
    if (!o->raw && !live && o->channels)
        return "--channels is for --raw input or --live (a file's header says its own)";
    if (o->hist_lo >= o->hist_hi)
        return "--hist-range: LO must be below HI";
    if (!isnan(o->mix) && (!isnan(o->dry_db) || !isnan(o->wet_db)))
        return "--mix sets both the dry and the wet part: use --mix or --dry/--wet, not both";
    if (!isnan(o->normalize_db) && o->out_path && strcmp(o->out_path, "-") == 0)
        return "--normalize writes OUT once the whole output is measured: OUT must be a file, "
               "not standard output";
    return NULL;
}

/* The design options against the rest: the sample rate they need. */
static int check_design(const gf_cli_options *o)
{
    if (o->action == GF_ACTION_DESIGN) {
        if (o->live_in || o->live_out || o->hist_path || o->hist_png || o->raw || o->out_raw ||
            o->json_summary || o->gain_db != 0 || o->norm_filter || !isnan(o->mix) ||
            !isnan(o->dry_db) || !isnan(o->wet_db) || !isnan(o->normalize_db)) {
            gf_cli_error("without IN and OUT only the design's files are written: give IN and "
                         "OUT to filter");
            return GF_EXIT_USAGE;
        }
        return gf_design_cli_check(&o->design, o->rate > 0,
                                   "give --rate (there is no IN to take it from)");
    }
    const int have_rate = o->action == GF_ACTION_LIVE || !o->raw || o->rate > 0;
    return gf_design_cli_check(&o->design, have_rate,
                               "give --rate (headerless input carries none)");
}

/* --out-dir and what goes with it. */
static const char *check_batch(const gf_cli_options *o)
{
    if (o->action != GF_ACTION_BATCH)
        return (o->in_list || o->skip_existing) ? "--in-list and --skip-existing need --out-dir"
               : o->jobs ? "--jobs needs --out-dir (it filters that many files at once)"
                         : NULL;
    if (o->hist_path || o->hist_png)
        return "--out-dir: --hist and --hist-png would name one file for every input";
    if (o->json_summary)
        return "--out-dir: --json-summary would name one file for every input";
    if (o->design.design_out || o->design.response_png)
        return "--out-dir: --design-out and --response-png would be written for every input; "
               "design once without IN and OUT";
    if (o->out_raw || o->raw)
        return "--out-dir filters audio files: --raw and --out-raw are for IN and OUT";
    return NULL;
}

/* The options against each other (values are in range by now). */
static int check_options(const gf_cli_options *o, const char *const *given)
{
    char buf[200];
    const char *bad = check_filter(o, buf, sizeof buf);
    if (!bad)
        bad = check_io(o);
    if (!bad)
        bad = check_batch(o);
    if (bad) {
        gf_cli_error("%s", bad);
        return GF_EXIT_USAGE;
    }
    const int rc = check_design(o);
    return rc ? rc : check_given(o, given);
}

static void set_defaults(gf_cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->action = GF_ACTION_FILTER;
    o->mode = GF_MODE_SAME;
    o->precision = GF_PRECISION_F32;
    o->device = GF_DEVICE_AUTO;
    o->gpu_rank = -1;
    o->dither = GF_DITHER_AUTO;
    o->hist_bins = 256;
    o->hist_lo = -1.0;
    o->hist_hi = 1.0;
    o->hist_limit = GF_HIST_DEFAULT_LIMIT;
    o->mix = o->dry_db = o->wet_db = o->normalize_db = NAN;
    o->crossfade_ms = 20;
}

int gf_cli_parse(int argc, char **argv, gf_cli_options *o)
{
    set_defaults(o);
    struct option longopts[NSPECS + 1];
    char shortopts[2 * NSPECS + 2] = ":";
    size_t ns = 1;
    for (int i = 0; i < NSPECS; i++) {
        const arg_kind k = specs[i].kind;
        const int has_arg = k == ARG_FLAG || k == ARG_ACTION || k == ARG_HELP || k == ARG_VERSION
                                ? no_argument
                                : required_argument;
        longopts[i] = (struct option){specs[i].name, has_arg, NULL, 256 + i};
        if (specs[i].short_name) {
            shortopts[ns++] = specs[i].short_name;
            if (has_arg == required_argument)
                shortopts[ns++] = ':';
        }
    }
    longopts[NSPECS] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns] = '\0';
    opterr = 0; /* our own one-line messages */
    int live = 0, list = 0, c;
    const char *given[NSPECS] = {NULL}; /* each option's value ("" for a flag) once given */
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const opt_spec *sp = NULL;
        for (int i = 0; i < NSPECS && !sp; i++)
            if (c == 256 + i || (specs[i].short_name && c == specs[i].short_name))
                sp = &specs[i];
        if (c == ':') {
            gf_cli_error("option '%s' needs a value", argv[optind - 1]);
            return GF_EXIT_USAGE;
        }
        if (!sp) {
            gf_cli_error("unknown option '%s' (see gpufilt --help)", argv[optind - 1]);
            return GF_EXIT_USAGE;
        }
        if (sp->kind == ARG_HELP || sp->kind == ARG_VERSION) {
            if (sp->kind == ARG_HELP)
                gf_cli_help(stdout);
            else
                printf("gpufilt %s, library %s\n", GPUFILT_VERSION, gf_version());
            o->action = GF_ACTION_DONE;
            return GF_EXIT_OK;
        }
        const int takes_value = sp->kind != ARG_FLAG && sp->kind != ARG_ACTION;
        /* Design options repeat (--lowpass twice cascades); design_cli.c
         * refuses a setting given twice for one design. */
        if (takes_value && sp->kind != ARG_DESIGN && given[sp - specs]) {
            gf_cli_error("--%s given twice ('%s' and '%s'): give it once", sp->name,
                         given[sp - specs], optarg);
            return GF_EXIT_USAGE;
        }
        given[sp - specs] = takes_value ? optarg : "";
        live |= sp->kind == ARG_ACTION && sp->lo == GF_ACTION_LIVE;
        list |= sp->kind == ARG_ACTION && sp->lo == GF_ACTION_LIST_DEVICES;
        o->mode_given |= sp->field == offsetof(gf_cli_options, mode) && sp->kind == ARG_CHOICE;
        const int rc = parse_value(sp, optarg, o);
        if (rc)
            return rc;
    }
    if (live && list) {
        gf_cli_error("use either --live or --list-devices, not both");
        return GF_EXIT_USAGE;
    }
    o->action = live ? GF_ACTION_LIVE : list ? GF_ACTION_LIST_DEVICES : GF_ACTION_FILTER;
    if (o->make_wisdom)
        return check_wisdom(o, given, argc - optind, argv + optind);
    int rc = check_positionals(argc - optind, argv + optind, o);
    if (rc || o->action == GF_ACTION_LIST_DEVICES)
        return rc;
    if (o->design.phase == GF_PHASE_MINIMUM && !o->mode_given)
        o->mode = GF_MODE_CAUSAL; /* its delay is what minimum phase saves */
    return check_options(o, given);
}
