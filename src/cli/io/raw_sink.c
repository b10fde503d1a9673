/*
 * Headerless samples (--out-raw, or standard output) to files and pipes.
 * Integer formats are dithered (dither.h), rounded to nearest (ties to
 * even) and clipped, counting clipped samples, with the arithmetic of the
 * libsndfile sink: the same samples give the same integers either way.
 */
#include "io/io.h"
#include "io/sample_conv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_sink.c assumes a little-endian host"
#endif

typedef struct raw_sink {
    gf_raw_format raw;
    unsigned char *buf; /* encoded samples: a write converts in pieces of this */
    size_t size;        /* its bytes */
} raw_sink;

static int write_all(gf_sink *k, const unsigned char *b, size_t len, char *err, size_t n)
{
    while (len > 0) {
        const ssize_t w = write(k->out.fd, b, len);
        if (w < 0) {
            if (errno == EINTR && !k->stop_writes)
                continue;
            const int e = errno;
            snprintf(err, n, "writing %s: %s", k->out.name, strerror(e));
            return e == EPIPE ? GF_EXIT_PIPE : GF_EXIT_OUTPUT;
        }
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

static void encode_block(gf_sink *k, gf_precision p, const void *in, size_t ns)
{
    raw_sink *r = k->state;
    const gf_raw_format f = r->raw;
    const size_t sb = gf_raw_sample_bytes(f);
    unsigned char *o = r->buf; /* same-format output never gets here: see raw_write */
    for (size_t i = 0; i < ns; i++, o += sb) {
        const double x = p == GF_PRECISION_F32 ? ((const float *)in)[i] : ((const double *)in)[i];
        if (f == GF_RAW_F32LE) {
            const float v = (float)x;
            memcpy(o, &v, 4);
            continue;
        }
        if (f == GF_RAW_F64LE) {
            memcpy(o, &x, 8);
            continue;
        }
        const int bits = (int)sb * 8;
        const uint32_t v = (uint32_t)gf_dither_quantise(
            &k->dither, x, (double)((int64_t)1 << (bits - 1)), &k->clipped);
        switch (f) {
        case GF_RAW_U8:
            o[0] = (unsigned char)(v + 128);
            break;
        case GF_RAW_S16BE:
            o[0] = (unsigned char)(v >> 8);
            o[1] = (unsigned char)v;
            break;
        default: /* little-endian integers */
            for (size_t j = 0; j < sb; j++)
                o[j] = (unsigned char)(v >> (8 * j));
        }
    }
}

/* Any count (io.h): samples that need converting go through the sink's own
 * buffer a piece at a time; same-format samples are written as they are. */
static int raw_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                     size_t n)
{
    raw_sink *r = k->state;
    const size_t C = (size_t)k->fmt.channels, sb = gf_raw_sample_bytes(r->raw);
    int rc;
    if ((p == GF_PRECISION_F32 && r->raw == GF_RAW_F32LE) ||
        (p == GF_PRECISION_F64 && r->raw == GF_RAW_F64LE)) { /* no conversion */
        if ((rc = write_all(k, frames, count * C * sb, err, n)) != 0)
            return rc;
        k->frames_written += (int64_t)count;
        return 0;
    }
    const size_t per = r->size / (C * sb); /* frames per conversion */
    const unsigned char *src = frames;
    const size_t ss = p == GF_PRECISION_F32 ? 4 : 8;
    while (count > 0) {
        const size_t m = count < per ? count : per;
        encode_block(k, p, src, m * C);
        if ((rc = write_all(k, r->buf, m * C * sb, err, n)) != 0)
            return rc;
        src += m * C * ss;
        count -= m;
        k->frames_written += (int64_t)m;
    }
    return 0;
}

static void raw_sink_close(gf_sink *k)
{
    raw_sink *r = k->state;
    if (!r)
        return;
    free(r->buf);
    free(r);
    k->state = NULL;
}

static void raw_describe(const gf_sink *k, char *buf, size_t n)
{
    snprintf(buf, n, "raw %s", gf_raw_name(((const raw_sink *)k->state)->raw));
}

static const gf_sink_ops raw_sink_ops = {
    .write = raw_write,
    .finish = NULL,
    .close = raw_sink_close,
    .describe = raw_describe,
};

int gf_raw_sink_open(gf_sink *k, const char *path, gf_raw_format f, const gf_format *in,
                     const gf_sink_opts *o, size_t block, char *err, size_t n)
{
    memset(k, 0, sizeof *k);
    k->out.fd = -1;
    k->fmt = (gf_format){.channels = in->channels, .rate = in->rate, .frames = -1, .sample = f};
    int rc = gf_outfile_open(&k->out, "output", path, &o->out, err, n);
    if (rc)
        return rc;
    if (k->out.stream)
        gf_widen_pipe(k->out.fd);
    raw_sink *r = calloc(1, sizeof *r);
    if (r) {
        k->ops = &raw_sink_ops;
        k->state = r;
        r->raw = f;
        r->size = (block ? block : GF_SINK_BLOCK) * (size_t)in->channels * gf_raw_sample_bytes(f);
        r->buf = malloc(r->size);
    }
    if (!r || !r->buf) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    const int ints = f != GF_RAW_F32LE && f != GF_RAW_F64LE;
    if ((rc = gf_dither_open(&k->dither, &o->dither, ints ? (int)gf_raw_sample_bytes(f) * 8 : 0,
                             in->channels, in->rate, err, n)) != 0)
        gf_sink_abort(k);
    return rc;
}
