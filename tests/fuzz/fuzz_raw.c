/*
 * Headerless samples (--raw): every format, 1..8 channels, f32 or f64,
 * from a file or from a pipe written in odd pieces, read in blocks of
 * 1..64 frames. The bytes: [format, channels, flags, seed] + samples.
 * Every complete frame must come out exactly as an independent decoder
 * gives it (integers scaled by 2^-(bits-1), u8 offset by 128, floats as
 * they are), in order, and the bytes of a partial last frame must be
 * counted as trailing.
 */
#include "feed.h"
#include "io/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gf_raw_format formats[] = {GF_RAW_U8,    GF_RAW_S8,    GF_RAW_S16LE, GF_RAW_S16BE,
                                        GF_RAW_S24LE, GF_RAW_S32LE, GF_RAW_F32LE, GF_RAW_F64LE};

/* The sample at b, written out from the format's definition. */
static double oracle(gf_raw_format f, const uint8_t *b)
{
    switch (f) {
    case GF_RAW_U8:
        return ((double)b[0] - 128) / 128;
    case GF_RAW_S8:
        return (double)(b[0] < 128 ? b[0] : b[0] - 256) / 128;
    case GF_RAW_S16LE:
    case GF_RAW_S16BE: {
        const long u = f == GF_RAW_S16LE ? b[0] + 256L * b[1] : b[1] + 256L * b[0];
        return (double)(u < 32768 ? u : u - 65536) / 32768;
    }
    case GF_RAW_S24LE: {
        const long u = b[0] + 256L * b[1] + 65536L * b[2];
        return (double)(u < 8388608 ? u : u - 16777216) / 8388608;
    }
    case GF_RAW_S32LE: {
        const long long u = b[0] + 256LL * b[1] + 65536LL * b[2] + 16777216LL * b[3];
        return (double)(u < 2147483648LL ? u : u - 4294967296LL) / 2147483648.0;
    }
    case GF_RAW_F32LE: {
        float v;
        memcpy(&v, b, 4);
        return v;
    }
    case GF_RAW_F64LE: {
        double v;
        memcpy(&v, b, 8);
        return v;
    }
    case GF_RAW_NONE:
        break;
    }
    abort();
}

static int same(double want, double got)
{
    return (isnan(want) && isnan(got)) || want == got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    const gf_raw_format fmt = formats[data[0] % 8];
    const int C = 1 + data[1] % 8;
    const gf_precision p = data[2] & 1 ? GF_PRECISION_F64 : GF_PRECISION_F32;
    const size_t block = 1 + (size_t)(data[2] >> 2) % 64;
    const uint8_t *in = data + 4;
    const size_t n = size - 4, sb = gf_raw_sample_bytes(fmt), fb = sb * (size_t)C;
    feed fd;
    if (feed_start(&fd, in, n, data[2] & 2, data[3]) != 0)
        return 0;
    gf_source s;
    char err[512];
    void *out = malloc(block * (size_t)C * 8);
    if (!out || gf_raw_source_open(&s, fd.path, fmt, C, 0, block, err, sizeof err) != 0) {
        /* only an empty file is refused */
        if (out && !(n == 0 && !(data[2] & 2)))
            abort();
        free(out);
        feed_stop(&fd);
        return 0;
    }
    size_t frame = 0;
    for (int64_t got; (got = s.ops->read(&s, p, out, block, err, sizeof err)) != 0;) {
        if (got < 0 || (size_t)got > block)
            abort();
        for (size_t k = 0; k < (size_t)got; k++, frame++)
            for (int c = 0; c < C; c++) {
                const double w = oracle(fmt, in + frame * fb + (size_t)c * sb);
                const size_t i = k * (size_t)C + (size_t)c;
                const double g = p == GF_PRECISION_F32 ? ((float *)out)[i] : ((double *)out)[i];
                if (!same(p == GF_PRECISION_F32 ? (double)(float)w : w, g))
                    abort();
            }
    }
    if (frame != n / fb || s.frames_read != (int64_t)frame || s.trailing != n % fb)
        abort();
    gf_source_close(&s);
    feed_stop(&fd);
    free(out);
    return 0;
}
