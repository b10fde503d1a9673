#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#endif
#include "raw_io.h"

#include "sample_conv.h"
#include "sndfile_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_io.c assumes a little-endian host"
#endif

size_t gf_raw_sample_bytes(gf_raw_format f)
{
    switch (f) {
    case GF_RAW_U8:
    case GF_RAW_S8:
        return 1;
    case GF_RAW_S16LE:
    case GF_RAW_S16BE:
        return 2;
    case GF_RAW_S24LE:
        return 3;
    case GF_RAW_S32LE:
    case GF_RAW_F32LE:
        return 4;
    case GF_RAW_F64LE:
        return 8;
    case GF_RAW_NONE:
        break;
    }
    return 0;
}

/* One sample as a double: exact for every integer format. */
static double decode(gf_raw_format f, const unsigned char *b)
{
    switch (f) {
    case GF_RAW_U8:
        return ((int)b[0] - 128) * 0x1p-7;
    case GF_RAW_S8:
        return (int8_t)b[0] * 0x1p-7;
    case GF_RAW_S16LE:
        return (int16_t)(uint16_t)(b[0] | b[1] << 8) * 0x1p-15;
    case GF_RAW_S16BE:
        return (int16_t)(uint16_t)(b[1] | b[0] << 8) * 0x1p-15;
    case GF_RAW_S24LE: {
        int32_t v = (int32_t)((uint32_t)b[0] << 8 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 24);
        return (v >> 8) * 0x1p-23;
    }
    case GF_RAW_S32LE: {
        int32_t v;
        memcpy(&v, b, 4);
        return v * 0x1p-31;
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
    return 0;
}

/* Convert ns samples to the engine's precision. A 32-bit integer in f32
 * rounds once (as the libsndfile source does: (float)v * 2^-31). */
static void decode_block(gf_raw_format f, const unsigned char *in, size_t ns, gf_precision p,
                         void *out)
{
    const size_t sb = gf_raw_sample_bytes(f);
    if (p == GF_PRECISION_F32 && f == GF_RAW_F32LE) {
        memcpy(out, in, ns * 4);
    } else if (p == GF_PRECISION_F64 && f == GF_RAW_F64LE) {
        memcpy(out, in, ns * 8);
    } else if (p == GF_PRECISION_F32 && f == GF_RAW_S32LE) {
        for (size_t i = 0; i < ns; i++) {
            int32_t v;
            memcpy(&v, in + 4 * i, 4);
            ((float *)out)[i] = (float)v * 0x1p-31f;
        }
    } else if (p == GF_PRECISION_F32) {
        for (size_t i = 0; i < ns; i++)
            ((float *)out)[i] = (float)decode(f, in + sb * i);
    } else {
        for (size_t i = 0; i < ns; i++)
            ((double *)out)[i] = decode(f, in + sb * i);
    }
}

/* The name of a container whose file starts with these bytes, or NULL. */
static const char *container_magic(const unsigned char *b, size_t n)
{
    static const struct {
        const char *magic, *name;
    } m[] = {{"RIFF", "WAV"},  {"RIFX", "WAV"}, {"RF64", "WAV"}, {"FORM", "AIFF"},
             {"fLaC", "FLAC"}, {".snd", "AU"},  {"OggS", "Ogg"}, {"caff", "CAF"}};
    for (size_t i = 0; n >= 4 && i < sizeof m / sizeof m[0]; i++)
        if (memcmp(b, m[i].magic, 4) == 0)
            return m[i].name;
    return NULL;
}

/* Wait until fd is readable (1) or the wake pipe fires (0); -1 on error. */
static int wait_readable(gf_source *s)
{
    struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN}, {.fd = s->wake[0], .events = POLLIN}};
    for (;;) {
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (p[1].revents)
            return 0;
        return 1;
    }
}

static int readable_now(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static int64_t raw_read(gf_source *s, gf_precision p, void *out, size_t frames, char *err, size_t n)
{
    const size_t fbytes = (size_t)s->info.channels * gf_raw_sample_bytes(s->raw);
    const size_t want = frames * fbytes;
    for (;;) {
        const size_t whole = s->rbuf_have / fbytes;
        /* Deliver when the request is met, at the end, or (streaming) when
         * complete frames are here and nothing more is waiting. */
        if (s->rbuf_have >= want || (s->eof && whole > 0) ||
            (s->streaming && whole > 0 && !readable_now(s->fd))) {
            const size_t k = whole < frames ? whole : frames;
            decode_block(s->raw, s->rbuf, k * (size_t)s->info.channels, p, out);
            s->rbuf_have -= k * fbytes;
            memmove(s->rbuf, s->rbuf + k * fbytes, s->rbuf_have);
            s->frames_read += (int64_t)k;
            return (int64_t)k;
        }
        if (s->eof) {
            s->trailing = s->rbuf_have;
            return 0;
        }
        if (s->streaming) {
            const int r = wait_readable(s);
            if (r == 0)
                return 0; /* interrupted */
            if (r < 0) {
                snprintf(err, n, "reading %s: %s", s->path, strerror(errno));
                return -1;
            }
        }
        const ssize_t got = read(s->fd, s->rbuf + s->rbuf_have, s->rbuf_size - s->rbuf_have);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(err, n, "reading %s: %s", s->path, strerror(errno));
            return -1;
        }
        if (got == 0) {
            s->eof = 1;
            continue;
        }
        /* The first four bytes of the stream, however they arrive. */
        for (size_t i = 0; s->magic_n < 4 && i < (size_t)got; i++) {
            s->magic[s->magic_n++] = s->rbuf[s->rbuf_have + i];
            const char *c = s->magic_n == 4 ? container_magic(s->magic, 4) : NULL;
            if (c)
                gf_cli_warn("%s starts like a %s file, but --raw %s reads every byte as "
                            "samples, header included (leave out --raw to read the %s file)",
                            s->path, c, gf_raw_name(s->raw), c);
        }
        s->rbuf_have += (size_t)got;
    }
}

/* A larger pipe buffer means fewer, larger reads and writes and fewer
 * context switches; failing is harmless (another size, not a pipe). */
static void widen_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
    (void)fd;
#endif
}

static void raw_interrupt(gf_source *s)
{
    if (s->wake_open) {
        const char c = 1;
        if (write(s->wake[1], &c, 1) < 0) {
            /* the pipe is full: a wake-up is already pending */
        }
    }
}

static void raw_close(gf_source *s)
{
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->wake_open) {
        close(s->wake[0]);
        close(s->wake[1]);
        s->wake_open = 0;
    }
    free(s->rbuf);
    s->rbuf = NULL;
}

int gf_raw_source_open(gf_source *s, const char *path, gf_raw_format f, int channels, int rate,
                       size_t max_block, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->raw = f;
    s->read = raw_read;
    s->interrupt = raw_interrupt;
    s->close = raw_close;
    s->info.channels = channels;
    s->info.samplerate = rate;
    s->info.format = SF_FORMAT_RAW | gf_format_for_raw(f);
    s->info.frames = -1;
    struct stat st;
    if (strcmp(path, "-") == 0) {
        s->path = "standard input";
        s->is_stdin = 1;
        s->fd = STDIN_FILENO;
        widen_pipe(s->fd);
    } else {
        s->path = path;
        s->fd = open(path, O_RDONLY);
        if (s->fd < 0) {
            snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
            return GF_EXIT_INPUT;
        }
        s->own_fd = 1;
    }
    if (fstat(s->fd, &st) != 0) {
        snprintf(err, n, "cannot read %s: %s", s->path, strerror(errno));
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, n, "input '%s' is a directory", path);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    const size_t fbytes = (size_t)channels * gf_raw_sample_bytes(f);
    s->streaming = !S_ISREG(st.st_mode);
    if (S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            snprintf(err, n, "input '%s' is empty", s->path);
            gf_source_close(s);
            return GF_EXIT_INPUT;
        }
        s->info.frames = (sf_count_t)((size_t)st.st_size / fbytes);
    }
    s->rbuf_size = max_block * fbytes;
    s->rbuf = malloc(s->rbuf_size);
    if (!s->rbuf || pipe(s->wake) != 0) {
        snprintf(err, n, "out of memory");
        gf_source_close(s);
        return GF_EXIT_INTERNAL;
    }
    s->wake_open = 1;
    return 0;
}

/* --- sink --- */

static int write_all(gf_sink *k, const unsigned char *b, size_t len, char *err, size_t n)
{
    while (len > 0) {
        const ssize_t w = write(k->out.fd, b, len);
        if (w < 0) {
            if (errno == EINTR && !k->stop_writes)
                continue;
            k->broken_pipe = errno == EPIPE;
            snprintf(err, n, "writing %s: %s", k->out.name, strerror(errno));
            return -1;
        }
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

static void encode_block(gf_sink *k, gf_precision p, const void *in, size_t ns)
{
    const gf_raw_format f = k->raw;
    const size_t sb = gf_raw_sample_bytes(f);
    unsigned char *o = k->rbuf; /* same-format output never gets here: see raw_write */
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
        const uint32_t v =
            (uint32_t)gf_quantise(x, (double)((int64_t)1 << (bits - 1)), &k->clipped);
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

static int raw_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                     size_t n)
{
    const size_t C = (size_t)k->info.channels, sb = gf_raw_sample_bytes(k->raw);
    if ((p == GF_PRECISION_F32 && k->raw == GF_RAW_F32LE) ||
        (p == GF_PRECISION_F64 && k->raw == GF_RAW_F64LE)) { /* no conversion */
        if (write_all(k, frames, count * C * sb, err, n) != 0)
            return -1;
        k->frames_written += (int64_t)count;
        return 0;
    }
    const size_t per = k->rbuf_size / (C * sb); /* frames per conversion */
    const unsigned char *src = frames;
    const size_t ss = p == GF_PRECISION_F32 ? 4 : 8;
    while (count > 0) {
        const size_t m = count < per ? count : per;
        encode_block(k, p, src, m * C);
        if (write_all(k, k->rbuf, m * C * sb, err, n) != 0)
            return -1;
        src += m * C * ss;
        count -= m;
        k->frames_written += (int64_t)m;
    }
    return 0;
}

int gf_raw_sink_open(gf_sink *k, const char *path, gf_raw_format f, int channels, int rate,
                     const char *in_path, size_t max_block, char *err, size_t n)
{
    memset(k, 0, sizeof *k);
    k->out.fd = -1;
    k->raw = f;
    k->write = raw_write;
    k->info.channels = channels;
    k->info.samplerate = rate;
    k->info.format = SF_FORMAT_RAW | gf_format_for_raw(f);
    const int rc = gf_outfile_open(&k->out, "output", path, in_path, err, n);
    if (rc)
        return rc;
    if (k->out.stream)
        widen_pipe(k->out.fd);
    k->rbuf_size = max_block * (size_t)channels * gf_raw_sample_bytes(f);
    k->rbuf = malloc(k->rbuf_size);
    if (!k->rbuf) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    return 0;
}
