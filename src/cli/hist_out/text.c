/* Histogram records as CSV or JSON lines (docs/hist-output.md). */
#include "hist_out/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *put_str(char *p, const char *s)
{
    const size_t len = strlen(s);
    memcpy(p, s, len);
    return p + len;
}

static char *put_u64(char *p, uint64_t v)
{
    char buf[24];
    int i = (int)sizeof buf;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, buf + i, sizeof buf - (size_t)i);
    return p + (sizeof buf - (size_t)i);
}

/* A double that reads back exactly: the first of %.15g, %.16g, %.17g that
 * does (so 0.1 stays "0.1"). Non-finite: JSON null, or CSV nan/inf/-inf;
 * -0 is "-0.0" in JSON. */
static char *put_double(char *p, double x, int json)
{
    if (isnan(x))
        return put_str(p, json ? "null" : "nan");
    if (isinf(x))
        return put_str(p, json ? "null" : x < 0 ? "-inf" : "inf");
    if (x == 0 && signbit(x) && json)
        return put_str(p, "-0.0"); /* "-0" would read as the integer 0 in some parsers */
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return put_str(p, buf);
}

/* The header's fields, as JSON members or CSV "# key=value" words: a
 * number, a double, a string (quoted in JSON) or a bare word (true/false). */
typedef struct meta_field {
    const char *name;
    enum { META_U64, META_DOUBLE, META_STRING, META_WORD } kind;
    uint64_t u;
    double d;
    const char *s;
} meta_field;

static char *put_meta(char *p, const meta_field *f, int json)
{
    p = put_str(p, json ? "\"" : "");
    p = put_str(p, f->name);
    p = put_str(p, json ? "\":" : "=");
    const int quote = json && f->kind == META_STRING;
    switch (f->kind) {
    case META_U64:
        return put_u64(p, f->u);
    case META_DOUBLE:
        return put_double(p, f->d, json);
    default:
        p = put_str(p, quote ? "\"" : "");
        p = put_str(p, f->s);
        return put_str(p, quote ? "\"" : "");
    }
}

/* A record's fields before the bins, in order: the CSV columns and the JSON
 * members' names. */
static const char *const record_fields[] = {"block", "first_frame", "frames", "channel", "below",
                                            "above", "nan",         "min",    "max",     "rms"};
enum { R_BLOCK, R_FIRST_FRAME, R_FRAMES, R_CHANNEL, R_BELOW, R_ABOVE, R_NAN, R_MIN, R_MAX, R_RMS };

/* What goes before record field i: in JSON its name ({"block": first, then
 * ,"name":), in CSV a comma (nothing before the first). */
static char *put_field(char *p, int i, int json)
{
    if (!json)
        return i ? put_str(p, ",") : p;
    p = put_str(p, i ? ",\"" : "{\"");
    p = put_str(p, record_fields[i]);
    return put_str(p, "\":");
}

/* The first line of both formats: the parameters needed to read the rest
 * (one list of fields); CSV then names its columns. */
char *gf_hout_meta(char *p, const gf_hist_out *h)
{
    const gf_hist_config *c = &h->hc;
    const int json = h->json;
    const meta_field fields[] = {
        {"gpufilt_hist", META_U64, .u = 1},
        {"bins", META_U64, .u = c->bins},
        {"lo", META_DOUBLE, .d = c->lo},
        {"hi", META_DOUBLE, .d = c->hi},
        {"block_frames", META_U64, .u = c->block_frames},
        {"rate", META_U64, .u = (uint64_t)h->rate},
        {"channels", META_U64, .u = (uint64_t)h->channels},
        {"of", META_STRING, .s = c->of_input ? "input" : "output"},
        {"mix", META_WORD, .s = c->mix ? "true" : "false"},
    };
    p = put_str(p, json ? "{" : "# ");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (i)
            p = put_str(p, json ? "," : " ");
        p = put_meta(p, &fields[i], json);
    }
    if (json)
        return put_str(p, "}\n");
    p = put_str(p, "\n");
    for (int i = R_BLOCK; i <= R_RMS; i++) {
        p = put_field(p, i, 0);
        p = put_str(p, record_fields[i]);
    }
    for (size_t i = 0; i < c->bins; i++) {
        p = put_str(p, ",bin");
        p = put_u64(p, i);
    }
    return put_str(p, "\n");
}

char *gf_hout_record(char *p, const gf_hist_out *h, const gf_hist_record *r)
{
    const int json = h->json;
    p = put_u64(put_field(p, R_BLOCK, json), r->block);
    p = put_u64(put_field(p, R_FIRST_FRAME, json), r->first_frame);
    p = put_u64(put_field(p, R_FRAMES, json), r->frames);
    p = put_field(p, R_CHANNEL, json);
    if (r->channel < 0)
        p = put_str(p, json ? "\"mix\"" : "mix");
    else
        p = put_u64(p, (uint64_t)r->channel);
    p = put_u64(put_field(p, R_BELOW, json), r->below);
    p = put_u64(put_field(p, R_ABOVE, json), r->above);
    p = put_u64(put_field(p, R_NAN, json), r->nan);
    p = put_double(put_field(p, R_MIN, json), r->min, json);
    p = put_double(put_field(p, R_MAX, json), r->max, json);
    p = put_double(put_field(p, R_RMS, json), r->rms, json);
    p = put_str(p, json ? ",\"bins\":[" : ",");
    for (size_t i = 0; i < h->hc.bins; i++) {
        if (i)
            *p++ = ',';
        p = put_u64(p, r->bins[i]);
    }
    return put_str(p, json ? "]}\n" : "\n");
}
