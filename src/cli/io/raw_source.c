/*
 * Headerless samples (--raw) from files, pipes and standard input.
 *
 * Integer formats are scaled to [-1, 1) exactly (v * 2^-(bits-1); u8 is
 * offset by 128), as the libsndfile source scales PCM: the same samples in
 * a raw stream and in a WAV file filter to the same bytes.
 *
 * Reading is done with read(2) rather than libsndfile, whose reads wait
 * until the whole request is filled: on a pipe the source hands on whatever
 * complete frames have arrived, so a trickle of input is not held back.
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_source.c assumes a little-endian host"
#endif

typedef struct raw_source {
    gf_raw_format raw;
    int fd, own_fd;
    int wake[2], wake_open; /* interrupt pipe */
    unsigned char *buf;     /* bytes read, not yet delivered */
    size_t size, have;
    int eof;
    unsigned char magic[4]; /* the stream's first bytes, to spot a container */
    size_t magic_n;
} raw_source;

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

/* The first four bytes of the stream, however they arrive: a container's
 * magic gets a warning. */
static void note_magic(gf_source *s, const unsigned char *b, size_t got)
{
    raw_source *r = s->state;
    for (size_t i = 0; r->magic_n < 4 && i < got; i++) {
        r->magic[r->magic_n++] = b[i];
        const char *c = r->magic_n == 4 ? container_magic(r->magic, 4) : NULL;
        if (c)
            gf_cli_warn("%s starts like a %s file, but --raw %s reads every byte as "
                        "samples, header included (leave out --raw to read the %s file)",
                        s->path, c, gf_raw_name(r->raw), c);
    }
}

/* Wait until fd is readable (1) or the wake pipe fires (0); -1 on error. */
static int wait_readable(const raw_source *r)
{
    struct pollfd p[2] = {{.fd = r->fd, .events = POLLIN}, {.fd = r->wake[0], .events = POLLIN}};
    for (;;) {
        const int got = poll(p, 2, -1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
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
    raw_source *r = s->state;
    const size_t C = (size_t)s->fmt.channels;
    const size_t fbytes = C * gf_raw_sample_bytes(r->raw);
    const size_t want = frames * fbytes;
    /* Samples already in the engine's format are read straight into `out`
     * (what a previous read left, a partial frame, goes first); others
     * gather in r->buf and are decoded on delivery. */
    const int native = (p == GF_PRECISION_F32 && r->raw == GF_RAW_F32LE) ||
                       (p == GF_PRECISION_F64 && r->raw == GF_RAW_F64LE);
    unsigned char *acc = native ? out : r->buf;
    const size_t room = native ? want : r->size;
    if (native && r->have > 0)
        memcpy(acc, r->buf, r->have); /* less than a frame */
    for (;;) {
        const size_t whole = r->have / fbytes;
        /* Deliver when the request is met, at the end, or (streaming) when
         * complete frames are here and nothing more is waiting. */
        if (r->have >= want || (r->eof && whole > 0) ||
            (s->streaming && whole > 0 && !readable_now(r->fd))) {
            const size_t k = whole < frames ? whole : frames;
            r->have -= k * fbytes;
            if (native) /* a partial frame's bytes wait in r->buf */
                memcpy(r->buf, acc + k * fbytes, r->have);
            else {
                decode_block(r->raw, r->buf, k * C, p, out);
                memmove(r->buf, r->buf + k * fbytes, r->have);
            }
            s->frames_read += (int64_t)k;
            return (int64_t)k;
        }
        if (r->eof) {
            s->trailing = r->have;
            return 0;
        }
        if (s->streaming) {
            const int ready = wait_readable(r);
            if (ready == 0) { /* interrupted: what was read stays for a next call */
                if (native)
                    memcpy(r->buf, acc, r->have);
                return 0;
            }
            if (ready < 0) {
                snprintf(err, n, "reading %s: %s", s->path, strerror(errno));
                return -1;
            }
        }
        const ssize_t got = read(r->fd, acc + r->have, room - r->have);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(err, n, "reading %s: %s", s->path, strerror(errno));
            return -1;
        }
        if (got == 0) {
            r->eof = 1;
            continue;
        }
        note_magic(s, acc + r->have, (size_t)got);
        r->have += (size_t)got;
    }
}

static void raw_interrupt(gf_source *s)
{
    raw_source *r = s->state;
    if (r->wake_open) {
        const char c = 1;
        if (write(r->wake[1], &c, 1) < 0) {
            /* the pipe is full: a wake-up is already pending */
        }
    }
}

static void raw_close(gf_source *s)
{
    raw_source *r = s->state;
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    if (r->wake_open) {
        close(r->wake[0]);
        close(r->wake[1]);
    }
    free(r->buf);
    free(r);
    s->state = NULL;
}

static int raw_seek(gf_source *s, int64_t frame, char *err, size_t n)
{
    raw_source *r = s->state;
    const off_t at = (off_t)frame * (off_t)s->frame_bytes;
    if (lseek(r->fd, at, SEEK_SET) != at) {
        snprintf(err, n, "cannot seek to frame %lld of %s: %s", (long long)frame, s->path,
                 strerror(errno));
        return -1;
    }
    r->have = 0;
    r->eof = 0;
    r->magic_n = sizeof r->magic; /* only the stream's first bytes are sniffed */
    s->frames_read = frame;
    return 0;
}

static const gf_source_ops raw_source_ops = {
    .read = raw_read,
    .seek = NULL,
    .interrupt = raw_interrupt,
    .close = raw_close,
};

/* A regular file: seekable. */
static const gf_source_ops raw_file_ops = {
    .read = raw_read,
    .seek = raw_seek,
    .interrupt = raw_interrupt,
    .close = raw_close,
};

/* Open path (or take standard input) into r->fd and check what it is. */
static int open_input(gf_source *s, raw_source *r, const char *path, size_t fbytes, char *err,
                      size_t n)
{
    if (s->is_stdin) {
        r->fd = STDIN_FILENO;
        gf_widen_pipe(r->fd);
    } else if ((r->fd = open(path, O_RDONLY)) < 0) {
        snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
        return GF_EXIT_INPUT;
    } else {
        r->own_fd = 1;
    }
    struct stat st;
    if (fstat(r->fd, &st) != 0) {
        snprintf(err, n, "cannot read %s: %s", s->path, strerror(errno));
        return GF_EXIT_INPUT;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, n, "input '%s' is a directory", path);
        return GF_EXIT_INPUT;
    }
    s->streaming = !S_ISREG(st.st_mode);
    if (S_ISREG(st.st_mode)) {
        s->ops = &raw_file_ops;
        if (st.st_size == 0) {
            snprintf(err, n, "input '%s' is empty", s->path);
            return GF_EXIT_INPUT;
        }
        s->fmt.frames = (int64_t)((size_t)st.st_size / fbytes);
    }
    return 0;
}

int gf_raw_source_open(gf_source *s, const char *path, gf_raw_format f, int channels, int rate,
                       size_t max_block, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->is_stdin = strcmp(path, "-") == 0;
    s->path = s->is_stdin ? "standard input" : path;
    s->fmt = (gf_format){.channels = channels, .rate = rate, .frames = -1, .sample = f};
    raw_source *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    r->raw = f;
    r->fd = -1;
    s->ops = &raw_source_ops;
    s->state = r;
    const size_t fbytes = s->frame_bytes = (size_t)channels * gf_raw_sample_bytes(f);
    int rc = open_input(s, r, path, fbytes, err, n);
    if (rc == 0) {
        r->size = max_block * fbytes;
        if (!(r->buf = malloc(r->size)) || pipe(r->wake) != 0) {
            snprintf(err, n, "out of memory");
            rc = GF_EXIT_INTERNAL;
        } else {
            r->wake_open = 1;
        }
    }
    if (rc)
        gf_source_close(s);
    return rc;
}
