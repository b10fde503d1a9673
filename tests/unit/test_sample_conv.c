/*
 * Integer PCM at the clipping boundaries: gf_quantise (src/cli/io/
 * sample_conv.h) on its own, then the bytes the raw sink and the libsndfile
 * sink (WAV) write, and the clip counts they keep, for every integer output
 * type: u8, s8, s16 (both byte orders), s24, s32.
 *
 * With S = 2^(bits-1) and v = x * S, the contract (sample_conv.h) is: round
 * to nearest, ties to even, clip to [-S, S-1], NaN is 0; a sample counts as
 * clipped exactly when v >= S - 0.5, v < -S - 0.5 or v is NaN. So the cases
 * are v = S - 0.5 and -S - 0.5 themselves and the doubles next to them, plus
 * ties inside the range and the specials. Each case states its integer and
 * whether it clips, as the contract gives them (not as the code computes
 * them); the expected bytes are those integers encoded here, independently
 * of the sinks. Last, the sinks' length contract (io.h): one write of more
 * frames than the sink's buffer gives the bytes of a sink opened for all.
 *
 * Usage: test_sample_conv WORKDIR
 */
#include "io/io.h"
#include "io/sample_conv.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../check.h"

/* One input sample and what the contract makes of it at `bits`. */
typedef struct qcase {
    const char *what;
    double x;
    int64_t want; /* the integer written */
    int clips;    /* counts as clipped */
} qcase;

#define MAX_CASES 32

/* The cases at `bits` (8, 16, 24 or 32) into c; returns their number. */
static size_t make_cases(int bits, qcase *c)
{
    const double S = ldexp(1.0, bits - 1), u = ldexp(1.0, -bits); /* u: half a step, as x */
    const int64_t top = (int64_t)S - 1, bottom = -(int64_t)S;
    const double hi = 1.0 - u, lo = -1.0 - u; /* v = S - 0.5 and v = -S - 0.5 */
    size_t n = 0;
#define ADD(w, xv, q, cl) (c[n++] = (qcase){w, xv, q, cl})
    /* The positive edge: S - 0.5 rounds to the even S, one past the top. */
    ADD("S-0.5", hi, top, 1);
    ADD("S-0.5 - 1 ulp", nextafter(hi, 0.0), top, 0);
    ADD("S-0.5 + 1 ulp", nextafter(hi, 2.0), top, 1);
    ADD("S-1 (top)", 1.0 - 2 * u, top, 0);
    ADD("S-1.5 (tie to even S-2)", 1.0 - 3 * u, top - 1, 0);
    ADD("1.0", 1.0, top, 1);
    ADD("+inf", INFINITY, top, 1);
    ADD("1e300", 1e300, top, 1);
    /* The negative edge: -S - 0.5 rounds to the even -S, in range. */
    ADD("-S-0.5", lo, bottom, 0);
    ADD("-S-0.5 + 1 ulp", nextafter(lo, 0.0), bottom, 0);
    ADD("-S-0.5 - 1 ulp", nextafter(lo, -2.0), bottom, 1);
    ADD("-1.0 (-S)", -1.0, bottom, 0);
    ADD("-S+0.5 (tie to even -S)", -1.0 + u, bottom, 0);
    ADD("-S+1.5 (tie to even -S+2)", -1.0 + 3 * u, bottom + 2, 0);
    ADD("-inf", -INFINITY, bottom, 1);
    ADD("-1e300", -1e300, bottom, 1);
    /* Inside: ties to even, signed zeros, NaN. */
    ADD("0.5 (tie to 0)", u, 0, 0);
    ADD("1.5 (tie to 2)", 3 * u, 2, 0);
    ADD("2.5 (tie to 2)", 5 * u, 2, 0);
    ADD("-0.5 (tie to 0)", -u, 0, 0);
    ADD("-2.5 (tie to -2)", -5 * u, -2, 0);
    ADD("0.5 + 1 ulp", nextafter(u, 1.0), 1, 0);
    ADD("+0", 0.0, 0, 0);
    ADD("-0", -0.0, 0, 0);
    ADD("NaN", NAN, 0, 1);
#undef ADD
    return n;
}

/* ---- gf_quantise on its own ---- */

static void check_quantise(void)
{
    static const int bits[] = {8, 16, 24, 32};
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        qcase c[MAX_CASES];
        const size_t n = make_cases(bits[b], c);
        const double S = ldexp(1.0, bits[b] - 1);
        for (size_t i = 0; i < n; i++) {
            uint64_t clipped = 0;
            const int64_t q = gf_quantise(c[i].x, S, &clipped);
            CHECK(q == c[i].want && clipped == (uint64_t)c[i].clips,
                  "gf_quantise, %d bits, %s (x = %a): %lld, %s; want %lld, %s", bits[b], c[i].what,
                  c[i].x, (long long)q, clipped ? "clipped" : "not clipped", (long long)c[i].want,
                  c[i].clips ? "clipped" : "not clipped");
        }
    }
    /* The headline case: the float just below 1 as s16 is 32767, not the
     * wrapped -32768. */
    uint64_t clipped = 0;
    CHECK(gf_quantise(1.0 - 0x1p-16, 32768.0, &clipped) == 32767 && clipped == 1,
          "1 - 2^-16 as s16: not 32767 with one clip");
}

/* ---- the sinks' bytes ---- */

/* An output format under test: a raw format, or a WAV subtype. */
typedef struct outfmt {
    const char *name;
    gf_raw_format raw;      /* GF_RAW_NONE: a WAV file */
    const char *wav_format; /* --out-format of the WAV case */
    int bits, big_endian, offset_binary;
} outfmt;

static const outfmt formats[] = {
    {"raw u8", GF_RAW_U8, NULL, 8, 0, 1},
    {"raw s8", GF_RAW_S8, NULL, 8, 0, 0},
    {"raw s16le", GF_RAW_S16LE, NULL, 16, 0, 0},
    {"raw s16be", GF_RAW_S16BE, NULL, 16, 1, 0},
    {"raw s24le", GF_RAW_S24LE, NULL, 24, 0, 0},
    {"raw s32le", GF_RAW_S32LE, NULL, 32, 0, 0},
    {"wav pcm_u8", GF_RAW_NONE, "wav:pcm_u8", 8, 0, 1},
    {"wav pcm_16", GF_RAW_NONE, "wav:pcm_16", 16, 0, 0},
    {"wav pcm_24", GF_RAW_NONE, "wav:pcm_24", 24, 0, 0},
    {"wav pcm_32", GF_RAW_NONE, "wav:pcm_32", 32, 0, 0},
};

/* q as the format stores it: two's complement (or offset binary for u8) in
 * bits/8 bytes of the format's byte order. */
static void encode(const outfmt *f, int64_t q, unsigned char *o)
{
    const int nb = f->bits / 8;
    uint64_t u = (uint64_t)q;
    if (f->offset_binary)
        u += (uint64_t)1 << (f->bits - 1);
    for (int j = 0; j < nb; j++)
        o[f->big_endian ? nb - 1 - j : j] = (unsigned char)(u >> (8 * j));
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    unsigned char *b = NULL;
    long sz = -1;
    if (fp && fseek(fp, 0, SEEK_END) == 0 && (sz = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)sz + 1)) && fread(b, 1, (size_t)sz, fp) == (size_t)sz) {
        fclose(fp);
        *len = (size_t)sz;
        return b;
    }
    if (fp)
        fclose(fp);
    free(b);
    return NULL;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The samples of a RIFF/WAVE file: the payload of its "data" chunk. */
static const unsigned char *wav_data(const unsigned char *b, size_t len, size_t *n)
{
    if (len < 12 || memcmp(b, "RIFF", 4) != 0 || memcmp(b + 8, "WAVE", 4) != 0)
        return NULL;
    for (size_t at = 12; at + 8 <= len;) {
        const size_t sz = le32(b + at + 4);
        if (memcmp(b + at, "data", 4) == 0 && at + 8 + sz <= len) {
            *n = sz;
            return b + at + 8;
        }
        at += 8 + sz + (sz & 1);
    }
    return NULL;
}

/* Write the cases' samples (mono, precision p) through the sink for f to
 * path; the clip count into *clipped. Returns 0, or -1 after a message. */
static int write_through_sink(const outfmt *f, gf_precision p, const double *x, size_t n,
                              const char *path, uint64_t *clipped)
{
    const gf_format in = {.channels = 1, .rate = 48000, .frames = -1, .sample = GF_RAW_F64LE};
    gf_sink k;
    char err[512] = "";
    const gf_sink_opts so = {.frames = (int64_t)n};
    int rc = f->raw != GF_RAW_NONE
                 ? gf_raw_sink_open(&k, path, f->raw, &in, &so, n, err, sizeof err)
                 : gf_sndfile_sink_open(&k, path, &in, f->wav_format, &so, n, err, sizeof err);
    if (rc == 0) {
        float xf[MAX_CASES];
        for (size_t i = 0; i < n; i++)
            xf[i] = (float)x[i];
        rc = k.ops->write(&k, p, p == GF_PRECISION_F32 ? (const void *)xf : (const void *)x, n, err,
                          sizeof err);
        *clipped = k.clipped;
        if (rc == 0)
            rc = gf_sink_commit(&k, err, sizeof err);
        else
            gf_sink_abort(&k);
    }
    CHECK(rc == 0, "%s: writing %s failed (%d): %s", f->name, path, rc, err);
    return rc == 0 ? 0 : -1;
}

/* The bytes written for f in precision p (the cases whose x a float holds
 * exactly, for f32) against the contract's, and the clip count. */
static void check_sink(const char *dir, const outfmt *f, gf_precision p)
{
    qcase all[MAX_CASES], c[MAX_CASES];
    const size_t na = make_cases(f->bits, all);
    size_t n = 0, clips = 0;
    double x[MAX_CASES];
    for (size_t i = 0; i < na; i++)
        if (p == GF_PRECISION_F64 || isnan(all[i].x) || (double)(float)all[i].x == all[i].x) {
            c[n] = all[i];
            x[n] = c[n].x;
            clips += (size_t)c[n].clips;
            n++;
        }
    const char *pn = p == GF_PRECISION_F32 ? "f32" : "f64";
    char path[1024];
    snprintf(path, sizeof path, "%s/%s_%s.%s", dir, f->raw ? "raw" : "wav", pn,
             f->raw ? gf_raw_name(f->raw) : f->wav_format + 4);
    if (f->raw == GF_RAW_NONE)
        strcat(path, ".wav");
    uint64_t clipped = 0;
    if (write_through_sink(f, p, x, n, path, &clipped) != 0)
        return;
    CHECK(clipped == clips, "%s from %s: %llu samples counted as clipped, want %zu", f->name, pn,
          (unsigned long long)clipped, clips);
    size_t len = 0, dn = 0;
    unsigned char *file = read_file(path, &len);
    const unsigned char *data = !file ? NULL : f->raw ? file : wav_data(file, len, &dn);
    if (f->raw)
        dn = len;
    const size_t nb = (size_t)f->bits / 8;
    CHECK(data && dn == n * nb, "%s from %s: %zu data bytes, want %zu", f->name, pn, dn, n * nb);
    for (size_t i = 0; data && dn == n * nb && i < n; i++) {
        unsigned char want[4];
        encode(f, c[i].want, want);
        CHECK(memcmp(data + i * nb, want, nb) == 0,
              "%s from %s: %s (x = %a) written as %02x%02x%02x%02x.., want %02x%02x%02x%02x..",
              f->name, pn, c[i].what, c[i].x, data[i * nb], nb > 1 ? data[i * nb + 1] : 0,
              nb > 2 ? data[i * nb + 2] : 0, nb > 3 ? data[i * nb + 3] : 0, want[0],
              nb > 1 ? want[1] : 0, nb > 2 ? want[2] : 0, nb > 3 ? want[3] : 0);
    }
    free(file);
}

/* The sink contract (io.h): a write of any count, whatever `block` the sink
 * was opened with. n frames of stereo in one write through sinks opened
 * for 7 frames at a time give the same file as through sinks opened for
 * all n, and count every frame, for every kind of conversion: integer
 * PCM, FLAC, the companded encodings libsndfile converts from float,
 * float itself, and raw integers. */
static void check_pieces(const char *dir)
{
    static const struct {
        const char *format; /* --out-format, or NULL for raw s16le */
        const char *ext;
    } kinds[] = {
        {"wav:pcm_16", "wav"}, {"wav:pcm_24", "wav"}, {"flac:pcm_16", "flac"}, {"wav:ulaw", "wav"},
        {"wav:alaw", "wav"},   {"wav:float", "wav"},  {NULL, "s16le"},
    };
    enum { N = 1000, C = 2 };
    static double x[N * C];
    static float xf[N * C];
    for (size_t i = 0; i < N * C; i++) {
        x[i] = ldexp((double)((int)(i * 7919 % 65536) - 32768), -15) * 1.25; /* some clip */
        xf[i] = (float)x[i];
    }
    const gf_format in = {.channels = C, .rate = 48000, .frames = -1, .sample = GF_RAW_F64LE};
    for (size_t t = 0; t < sizeof kinds / sizeof kinds[0]; t++) {
        for (int prec = 0; prec < 2; prec++) {
            const gf_precision p = prec ? GF_PRECISION_F64 : GF_PRECISION_F32;
            unsigned char *file[2] = {NULL, NULL};
            size_t len[2] = {0, 0};
            for (int v = 0; v < 2; v++) {
                const size_t block = v ? 7 : N;
                char path[1024], err[512] = "";
                snprintf(path, sizeof path, "%s/pieces%zu_%d_%zu.%s", dir, t, prec, block,
                         kinds[t].ext);
                gf_sink k;
                const gf_sink_opts so = {.frames = N};
                int rc = kinds[t].format ? gf_sndfile_sink_open(&k, path, &in, kinds[t].format, &so,
                                                                block, err, sizeof err)
                                         : gf_raw_sink_open(&k, path, GF_RAW_S16LE, &in, &so, block,
                                                            err, sizeof err);
                if (rc == 0) {
                    rc = k.ops->write(&k, p, prec ? (const void *)x : (const void *)xf, N, err,
                                      sizeof err);
                    CHECK(rc != 0 || k.frames_written == N,
                          "%s, block %zu: %lld frames written of %d", path, block,
                          (long long)k.frames_written, N);
                    if (rc == 0)
                        rc = gf_sink_commit(&k, err, sizeof err);
                    else
                        gf_sink_abort(&k);
                }
                CHECK(rc == 0, "%s, block %zu: %s", path, block, err);
                file[v] = read_file(path, &len[v]);
            }
            CHECK(file[0] && file[1] && len[0] == len[1] && memcmp(file[0], file[1], len[0]) == 0,
                  "%s from %s: %d frames in one write differ between a sink opened for 7 frames "
                  "and one opened for %d (%zu and %zu bytes)",
                  kinds[t].format ? kinds[t].format : "raw s16le", prec ? "f64" : "f32", N, N,
                  len[1], len[0]);
            free(file[0]);
            free(file[1]);
        }
    }
}

/* The bytes of the headline case spelled out, so that the encoder above
 * cannot share a mistake with the sinks: 1 - 2^-16 as s16le is ff 7f. */
static void check_literal(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/literal.s16le", dir);
    const double x[2] = {1.0 - 0x1p-16, -1.0 - 0x1p-16};
    uint64_t clipped = 0;
    if (write_through_sink(&formats[2], GF_PRECISION_F64, x, 2, path, &clipped) != 0)
        return;
    size_t len = 0;
    unsigned char *b = read_file(path, &len);
    static const unsigned char want[4] = {0xff, 0x7f, 0x00, 0x80};
    CHECK(b && len == 4 && memcmp(b, want, 4) == 0 && clipped == 1,
          "1 - 2^-16 and -1 - 2^-16 as s16le: not ff 7f 00 80 with one clip");
    free(b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_sample_conv WORKDIR\n");
        return 2;
    }
    mkdir(argv[1], 0777);
    check_quantise();
    check_literal(argv[1]);
    check_pieces(argv[1]);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        check_sink(argv[1], &formats[i], GF_PRECISION_F64);
        check_sink(argv[1], &formats[i], GF_PRECISION_F32);
    }
    if (failures) {
        fprintf(stderr, "test_sample_conv: %d FAILED\n", failures);
        return 1;
    }
    printf("test_sample_conv: the clipping boundaries of u8, s8, s16, s24, s32 exact (values, "
           "bytes of the raw and WAV sinks, clip counts)\n");
    return 0;
}
