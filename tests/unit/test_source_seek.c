/*
 * The sources' seek (io.h): frames [a, b) read after seek(a) are the bytes
 * frames [a, b) have when the file is read from its start, for WAV 16-bit,
 * WAV float, FLAC and headerless s16le files, at frames inside a FLAC
 * block, on block boundaries, 0 and the end, and again backwards after
 * reads; frames_read follows the seek.
 * A pipe has no seek.
 *
 * Usage: test_source_seek WORKDIR
 */
#include "io/io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"

#define C     2
#define N     20011 /* frames: several FLAC blocks of 4096, an odd end */
#define BLOCK 4096  /* the largest read */

/* Deterministic samples in [-1, 1) that 16 bits hold exactly. */
static void make_samples(double *x)
{
    uint32_t s = 12345;
    for (size_t i = 0; i < (size_t)N * C; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (double)(int16_t)(s >> 16) / 32768.0;
    }
}

static int write_file(const char *path, const char *out_format, gf_raw_format raw, const double *x)
{
    const gf_format in = {.channels = C, .rate = 48000, .frames = N, .sample = GF_RAW_F64LE};
    const gf_sink_opts so = {.frames = N};
    gf_sink k;
    char err[512] = "";
    int rc = raw != GF_RAW_NONE
                 ? gf_raw_sink_open(&k, path, raw, &in, &so, 0, err, sizeof err)
                 : gf_sndfile_sink_open(&k, path, &in, out_format, &so, 0, err, sizeof err);
    if (rc == 0) {
        rc = k.ops->write(&k, GF_PRECISION_F64, x, N, err, sizeof err);
        rc = rc ? (gf_sink_abort(&k), rc) : gf_sink_commit(&k, err, sizeof err);
    }
    CHECK(rc == 0, "writing %s failed (%d): %s", path, rc, err);
    return rc;
}

static int open_source(gf_source *s, const char *path, gf_raw_format raw)
{
    char err[512] = "";
    const int rc = raw != GF_RAW_NONE
                       ? gf_raw_source_open(s, path, raw, C, 48000, BLOCK, err, sizeof err)
                       : gf_sndfile_source_open(s, path, BLOCK, err, sizeof err);
    CHECK(rc == 0, "opening %s failed (%d): %s", path, rc, err);
    return rc;
}

/* Frames [from, to) from s, at its current place, into out. */
static int64_t read_span(gf_source *s, double *out, int64_t from, int64_t to)
{
    char err[512] = "";
    int64_t pos = from;
    while (pos < to) {
        const int64_t want = to - pos < BLOCK ? to - pos : BLOCK;
        const int64_t got = s->ops->read(s, GF_PRECISION_F64, out + (pos - from) * C, (size_t)want,
                                         err, sizeof err);
        if (got <= 0)
            break;
        pos += got;
    }
    return pos - from;
}

static void check_file(const char *dir, const char *name, const char *out_format, gf_raw_format raw,
                       const double *x)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (write_file(path, out_format, raw, x) != 0)
        return;
    gf_source s;
    double *whole = malloc(sizeof(double) * N * C), *part = malloc(sizeof(double) * N * C);
    if (!whole || !part || open_source(&s, path, raw) != 0) {
        free(whole);
        free(part);
        return;
    }
    CHECK(read_span(&s, whole, 0, N) == N, "%s: %d frames not read from the start", name, N);
    CHECK(memcmp(whole, x, sizeof(double) * N * C) == 0, "%s: not the samples written", name);
    gf_source_close(&s);
    static const int64_t spans[][2] = {{0, 10},      {1, 4097},      {4095, 4100},
                                       {4096, 8192}, {12345, N},     {N - 1, N},
                                       {7, 8},       {19999, 20005}, {8191, 12289}};
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        const int64_t a = spans[i][0], b = spans[i][1];
        if (open_source(&s, path, raw) != 0)
            break;
        char err[512] = "";
        CHECK(s.ops->seek != NULL, "%s: no seek", name);
        if (s.ops->seek) {
            const int rc = s.ops->seek(&s, a, err, sizeof err);
            CHECK(rc == 0, "%s: seek to %lld failed: %s", name, (long long)a, err);
            CHECK(s.frames_read == a, "%s: frames_read %lld after a seek to %lld", name,
                  (long long)s.frames_read, (long long)a);
            const int64_t got = read_span(&s, part, a, b);
            CHECK(got == b - a, "%s: %lld frames read after a seek to %lld, not %lld", name,
                  (long long)got, (long long)a, (long long)(b - a));
            CHECK(memcmp(part, whole + a * C, sizeof(double) * (size_t)(b - a) * C) == 0,
                  "%s: frames [%lld, %lld) after a seek differ from a read from the start", name,
                  (long long)a, (long long)b);
            CHECK(read_span(&s, part, b, b + 1) == (b == N ? 0 : 1), "%s: after frame %lld", name,
                  (long long)b);
            /* Back, after reads (what they left buffered is dropped). */
            const int64_t c = a / 2, d = c + 3;
            CHECK(s.ops->seek(&s, c, err, sizeof err) == 0 && read_span(&s, part, c, d) == 3 &&
                      memcmp(part, whole + c * C, sizeof(double) * 3 * C) == 0,
                  "%s: frames [%lld, %lld) after a seek back from %lld differ", name, (long long)c,
                  (long long)d, (long long)b);
        }
        gf_source_close(&s);
    }
    free(whole);
    free(part);
}

/* Headerless samples from a pipe: no seek. */
static void check_pipe(void)
{
    int p[2];
    if (pipe(p) != 0) {
        CHECK(0, "pipe failed");
        return;
    }
    const int saved = dup(STDIN_FILENO);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    gf_source s;
    if (open_source(&s, "-", GF_RAW_S16LE) == 0) {
        CHECK(s.ops->seek == NULL, "standard input (a pipe) has a seek");
        gf_source_close(&s);
    }
    dup2(saved, STDIN_FILENO);
    close(saved);
    close(p[1]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_source_seek WORKDIR\n");
        return 2;
    }
    mkdir(argv[1], 0777);
    double *x = malloc(sizeof(double) * N * C);
    if (!x)
        return 1;
    make_samples(x);
    check_file(argv[1], "s16.wav", "wav:pcm_16", GF_RAW_NONE, x);
    check_file(argv[1], "f32.wav", "wav:float", GF_RAW_NONE, x);
    check_file(argv[1], "s16.flac", "flac:pcm_16", GF_RAW_NONE, x);
    check_file(argv[1], "s16.raw", NULL, GF_RAW_S16LE, x);
    check_pipe();
    free(x);
    if (failures) {
        fprintf(stderr, "test_source_seek: %d FAILED\n", failures);
        return 1;
    }
    printf("test_source_seek: frames after a seek equal those read from the start (WAV s16, "
           "WAV float, FLAC, raw s16le); a pipe has no seek\n");
    return 0;
}
