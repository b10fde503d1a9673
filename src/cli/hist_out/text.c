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

/* The first line of both formats: the parameters needed to read the rest. */
char *gf_hout_meta(char *p, const gf_hist_out *h)
{
    const gf_hist_config *c = &h->hc;
    const char *of = c->of_input ? "input" : "output", *mix = c->mix ? "true" : "false";
    if (h->json) {
        p = put_str(p, "{\"gpufilt_hist\":1,\"bins\":");
        p = put_u64(p, c->bins);
        p = put_str(p, ",\"lo\":");
        p = put_double(p, c->lo, 1);
        p = put_str(p, ",\"hi\":");
        p = put_double(p, c->hi, 1);
        p = put_str(p, ",\"block_frames\":");
        p = put_u64(p, c->block_frames);
        p = put_str(p, ",\"rate\":");
        p = put_u64(p, (uint64_t)h->rate);
        p = put_str(p, ",\"channels\":");
        p = put_u64(p, (uint64_t)h->channels);
        p = put_str(p, ",\"of\":\"");
        p = put_str(p, of);
        p = put_str(p, "\",\"mix\":");
        p = put_str(p, mix);
        return put_str(p, "}\n");
    }
    p = put_str(p, "# gpufilt_hist=1 bins=");
    p = put_u64(p, c->bins);
    p = put_str(p, " lo=");
    p = put_double(p, c->lo, 0);
    p = put_str(p, " hi=");
    p = put_double(p, c->hi, 0);
    p = put_str(p, " block_frames=");
    p = put_u64(p, c->block_frames);
    p = put_str(p, " rate=");
    p = put_u64(p, (uint64_t)h->rate);
    p = put_str(p, " channels=");
    p = put_u64(p, (uint64_t)h->channels);
    p = put_str(p, " of=");
    p = put_str(p, of);
    p = put_str(p, " mix=");
    p = put_str(p, mix);
    p = put_str(p, "\nblock,first_frame,frames,channel,below,above,nan,min,max,rms");
    for (size_t i = 0; i < c->bins; i++) {
        p = put_str(p, ",bin");
        p = put_u64(p, i);
    }
    return put_str(p, "\n");
}

char *gf_hout_record(char *p, const gf_hist_out *h, const gf_hist_record *r)
{
    const int json = h->json;
    p = put_str(p, json ? "{\"block\":" : "");
    p = put_u64(p, r->block);
    p = put_str(p, json ? ",\"first_frame\":" : ",");
    p = put_u64(p, r->first_frame);
    p = put_str(p, json ? ",\"frames\":" : ",");
    p = put_u64(p, r->frames);
    p = put_str(p, json ? ",\"channel\":" : ",");
    if (r->channel < 0)
        p = put_str(p, json ? "\"mix\"" : "mix");
    else
        p = put_u64(p, (uint64_t)r->channel);
    p = put_str(p, json ? ",\"below\":" : ",");
    p = put_u64(p, r->below);
    p = put_str(p, json ? ",\"above\":" : ",");
    p = put_u64(p, r->above);
    p = put_str(p, json ? ",\"nan\":" : ",");
    p = put_u64(p, r->nan);
    p = put_str(p, json ? ",\"min\":" : ",");
    p = put_double(p, r->min, json);
    p = put_str(p, json ? ",\"max\":" : ",");
    p = put_double(p, r->max, json);
    p = put_str(p, json ? ",\"rms\":" : ",");
    p = put_double(p, r->rms, json);
    p = put_str(p, json ? ",\"bins\":[" : ",");
    for (size_t i = 0; i < h->hc.bins; i++) {
        if (i)
            *p++ = ',';
        p = put_u64(p, r->bins[i]);
    }
    return put_str(p, json ? "]}\n" : "\n");
}
