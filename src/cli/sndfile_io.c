#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sync_file_range */
#endif
#include "sndfile_io.h"

#include "cli.h"
#include "sample_conv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bits of an integer PCM subtype, 0 for anything else. */
static int pcm_bits(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_DPCM_8:
        return 8;
    case SF_FORMAT_DWVW_12:
        return 12;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_DPCM_16:
    case SF_FORMAT_DWVW_16:
    case SF_FORMAT_ALAC_16:
        return 16;
    case SF_FORMAT_ALAC_20:
        return 20;
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_DWVW_24:
    case SF_FORMAT_ALAC_24:
        return 24;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_ALAC_32:
        return 32;
    }
    return 0;
}

static int is_float_subtype(int format)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    return sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE;
}

/* --- source --- */

/* Bytes per sample of an uncompressed subtype, 0 for anything else. */
static size_t plain_sample_bytes(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        return 1;
    case SF_FORMAT_PCM_16:
        return 2;
    case SF_FORMAT_PCM_24:
        return 3;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
        return 4;
    case SF_FORMAT_DOUBLE:
        return 8;
    }
    return 0;
}

/* On a pipe libsndfile waits until a read's request is filled: ask for the
 * complete frames that have arrived (at least one) so a slow stream is not
 * held back. */
static size_t frames_waiting(const gf_source *s, size_t frames)
{
    const size_t fb = plain_sample_bytes(s->info.format) * (size_t)s->info.channels;
    int avail = 0;
    if (fb == 0)
        return frames < 1024 ? frames : 1024;
    if (ioctl(STDIN_FILENO, FIONREAD, &avail) != 0 || avail < 0)
        return frames;
    const size_t k = (size_t)avail / fb;
    return k == 0 ? 1 : k < frames ? k : frames;
}

static int64_t sndfile_read(gf_source *s, gf_precision p, void *out, size_t frames, char *err,
                            size_t n)
{
    sf_count_t got;
    const size_t C = (size_t)s->info.channels;
    if (s->streaming && s->is_stdin)
        frames = frames_waiting(s, frames);
    if (s->pcm) {
        got = sf_readf_int(s->sf, s->ibuf, (sf_count_t)frames);
        /* Exact: |v| <= 2^31 and a power-of-two scale. */
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < (size_t)got * C; i++)
                ((float *)out)[i] = (float)s->ibuf[i] * 0x1p-31f;
        else
            for (size_t i = 0; i < (size_t)got * C; i++)
                ((double *)out)[i] = (double)s->ibuf[i] * 0x1p-31;
    } else if (p == GF_PRECISION_F32) {
        got = sf_readf_float(s->sf, out, (sf_count_t)frames);
    } else {
        got = sf_readf_double(s->sf, out, (sf_count_t)frames);
    }
    if (got < 0 || sf_error(s->sf) != SF_ERR_NO_ERROR) {
        snprintf(err, n, "reading input '%s': %s", s->path, sf_strerror(s->sf));
        return -1;
    }
    s->frames_read += got;
    return got;
}

static void sndfile_close(gf_source *s)
{
    if (s->sf)
        sf_close(s->sf);
    s->sf = NULL;
    free(s->ibuf);
    s->ibuf = NULL;
}

int gf_sndfile_source_open(gf_source *s, const char *path, size_t max_block, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->path = path;
    s->read = sndfile_read;
    s->close = sndfile_close;
    struct stat st;
    const int is_stdin = strcmp(path, "-") == 0;
    if (is_stdin) {
        s->path = "standard input";
        s->is_stdin = 1;
        if (fstat(STDIN_FILENO, &st) != 0) {
            snprintf(err, n, "cannot read standard input: %s", strerror(errno));
            return GF_EXIT_INPUT;
        }
    } else {
        if (stat(path, &st) != 0) {
            snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
            return GF_EXIT_INPUT;
        }
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, n, "input '%s' is a directory", path);
            return GF_EXIT_INPUT;
        }
        int fd = open(path, O_RDONLY);
        if (fd < 0) {
            snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
            return GF_EXIT_INPUT;
        }
        close(fd);
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        snprintf(err, n, "input '%s' is empty", s->path);
        return GF_EXIT_INPUT;
    }
    s->streaming = !S_ISREG(st.st_mode);
    s->sf = is_stdin ? sf_open_fd(STDIN_FILENO, SFM_READ, &s->info, SF_FALSE)
                     : sf_open(path, SFM_READ, &s->info);
    if (!s->sf) {
        if (is_stdin && strstr(sf_strerror(NULL), "flac"))
            snprintf(err, n,
                     "libsndfile cannot decode FLAC from a pipe (%s); decode it first, e.g. "
                     "sox in.flac -t f32 - | gpufilt - OUT --raw f32le -c CHANNELS ...",
                     sf_strerror(NULL));
        else if (is_stdin)
            snprintf(err, n,
                     "standard input is not audio libsndfile can read from a pipe (%s); "
                     "for headerless samples give --raw FMT --channels N",
                     sf_strerror(NULL));
        else
            snprintf(err, n, "input '%s' is not an audio file libsndfile can read (%s)", path,
                     sf_strerror(NULL));
        return GF_EXIT_INPUT;
    }
    if (s->streaming)
        s->info.frames = -1; /* a pipe's header cannot be trusted for the length */
    if (s->info.frames == 0) {
        snprintf(err, n, "input '%s' holds no audio frames", s->path);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    if (s->info.channels < 1 || s->info.channels > GF_MAX_CHANNELS) {
        snprintf(err, n, "input '%s' has %d channels (at most %d are supported)", s->path,
                 s->info.channels, GF_MAX_CHANNELS);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    /* libsndfile opens a truncated file with the frames that exist and notes
     * the mismatch in its log, e.g. "data : 192000 (should be 99956)". */
    char log[8192];
    sf_command(s->sf, SFC_GET_LOG_INFO, log, sizeof log);
    for (char *line = strtok(log, "\n"); line && !s->streaming; line = strtok(NULL, "\n")) {
        line += strspn(line, " ");
        if ((strncmp(line, "data", 4) == 0 || strncmp(line, "SSND", 4) == 0) &&
            strstr(line, "should be")) {
            snprintf(s->header_note, sizeof s->header_note, "%s", line);
            break;
        }
    }
    s->pcm = pcm_bits(s->info.format) > 0;
    if (s->pcm) {
        s->ibuf_frames = max_block;
        s->ibuf = malloc(max_block * (size_t)s->info.channels * sizeof(int32_t));
        if (!s->ibuf) {
            snprintf(err, n, "out of memory");
            gf_source_close(s);
            return GF_EXIT_INTERNAL;
        }
    }
    return 0;
}

int gf_source_truncated(const gf_source *s)
{
    return s->header_note[0] != '\0' || (s->info.frames >= 0 && s->frames_read < s->info.frames);
}

void gf_source_close(gf_source *s)
{
    if (s->close)
        s->close(s);
    s->close = NULL;
}

static const struct {
    gf_raw_format raw;
    int format;
} raw_map[] = {
    {GF_RAW_U8, SF_FORMAT_PCM_U8},
    {GF_RAW_S8, SF_FORMAT_PCM_S8},
    {GF_RAW_S16LE, SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE},
    {GF_RAW_S16BE, SF_FORMAT_PCM_16 | SF_ENDIAN_BIG},
    {GF_RAW_S24LE, SF_FORMAT_PCM_24 | SF_ENDIAN_LITTLE},
    {GF_RAW_S32LE, SF_FORMAT_PCM_32 | SF_ENDIAN_LITTLE},
    {GF_RAW_F32LE, SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE},
    {GF_RAW_F64LE, SF_FORMAT_DOUBLE | SF_ENDIAN_LITTLE},
};

gf_raw_format gf_raw_for_format(int sf_format)
{
    const int sub = sf_format & SF_FORMAT_SUBMASK;
    const int big = (sf_format & SF_FORMAT_ENDMASK) == SF_ENDIAN_BIG;
    if (sub == SF_FORMAT_PCM_16 && big)
        return GF_RAW_S16BE;
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if ((raw_map[i].format & SF_FORMAT_SUBMASK) == sub)
            return raw_map[i].raw;
    const int bits = pcm_bits(sf_format);
    return bits > 24   ? GF_RAW_S32LE
           : bits > 16 ? GF_RAW_S24LE
           : bits > 8  ? GF_RAW_S16LE
           : bits > 0  ? GF_RAW_S8
                       : GF_RAW_F32LE;
}

int gf_format_for_raw(gf_raw_format f)
{
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if (raw_map[i].raw == f)
            return raw_map[i].format;
    return SF_FORMAT_FLOAT;
}

/* --- output format --- */

static const struct {
    const char *name;
    int subtype;
} subtypes[] = {
    {"pcm_s8", SF_FORMAT_PCM_S8}, {"pcm_u8", SF_FORMAT_PCM_U8}, {"pcm_16", SF_FORMAT_PCM_16},
    {"pcm_24", SF_FORMAT_PCM_24}, {"pcm_32", SF_FORMAT_PCM_32}, {"float", SF_FORMAT_FLOAT},
    {"double", SF_FORMAT_DOUBLE}, {"ulaw", SF_FORMAT_ULAW},     {"alaw", SF_FORMAT_ALAW},
    {"vorbis", SF_FORMAT_VORBIS}, {"opus", SF_FORMAT_OPUS},
};

/* Major format whose extension (or alias) is `ext`, or 0. */
static int major_for_extension(const char *ext)
{
    static const struct {
        const char *alias, *ext;
    } aliases[] = {{"aif", "aiff"}, {"snd", "au"}, {"ogg", "oga"}, {"opus", "oga"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(ext, aliases[i].alias) == 0)
            ext = aliases[i].ext;
    int count = 0;
    sf_command(NULL, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof count);
    for (int i = 0; i < count; i++) {
        SF_FORMAT_INFO fi = {.format = i};
        sf_command(NULL, SFC_GET_FORMAT_MAJOR, &fi, sizeof fi);
        if (fi.extension && strcasecmp(fi.extension, ext) == 0)
            return fi.format & SF_FORMAT_TYPEMASK;
    }
    return 0;
}

void gf_format_name(int format, char *buf, size_t n)
{
    SF_FORMAT_INFO major = {.format = format & SF_FORMAT_TYPEMASK};
    SF_FORMAT_INFO sub = {.format = format & SF_FORMAT_SUBMASK};
    sf_command(NULL, SFC_GET_FORMAT_INFO, &major, sizeof major);
    sf_command(NULL, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
    snprintf(buf, n, "%s / %s", major.name ? major.name : "?", sub.name ? sub.name : "?");
}

/* A subtype that `major` accepts, for a given input format. */
static int fit_subtype(int major, const SF_INFO *in)
{
    SF_INFO t = *in;
    const int bits = pcm_bits(in->format);
    const int tries[] = {
        in->format & SF_FORMAT_SUBMASK,
        bits > 24   ? SF_FORMAT_PCM_32
        : bits > 16 ? SF_FORMAT_PCM_24
        : bits > 8  ? SF_FORMAT_PCM_16
        : bits > 0  ? SF_FORMAT_PCM_S8
                    : SF_FORMAT_FLOAT,
        SF_FORMAT_PCM_U8, /* 8-bit WAV is unsigned */
        SF_FORMAT_PCM_24,
        SF_FORMAT_PCM_16,
        SF_FORMAT_VORBIS,
        SF_FORMAT_OPUS,
    };
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        t.format = major | tries[i];
        if (sf_format_check(&t))
            return tries[i];
    }
    return 0;
}

static int choose_format(const char *path, const gf_source *in, const char *out_format,
                         SF_INFO *info, char *err, size_t n)
{
    *info = (SF_INFO){.samplerate = in->info.samplerate, .channels = in->info.channels};
    int major = in->info.format & SF_FORMAT_TYPEMASK;
    int subtype = in->info.format & SF_FORMAT_SUBMASK;
    int endian = in->info.format & SF_FORMAT_ENDMASK;
    if (out_format) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", out_format);
        char *colon = strchr(buf, ':');
        if (colon)
            *colon = '\0';
        int m = major_for_extension(buf);
        if (!m) {
            snprintf(err, n, "--out-format: unknown major format '%s'", buf);
            return GF_EXIT_USAGE;
        }
        if (m != major) {
            major = m;
            endian = 0;
            subtype = fit_subtype(major, &in->info);
        }
        if (colon) {
            subtype = 0;
            for (size_t i = 0; i < sizeof subtypes / sizeof subtypes[0]; i++)
                if (strcasecmp(colon + 1, subtypes[i].name) == 0)
                    subtype = subtypes[i].subtype;
            if (!subtype) {
                snprintf(err, n, "--out-format: unknown sample type '%s'", colon + 1);
                return GF_EXIT_USAGE;
            }
        }
    } else {
        const char *slash = strrchr(path, '/');
        const char *dot = strrchr(slash ? slash : path, '.');
        int m = dot ? major_for_extension(dot + 1) : 0;
        if (m && m != major) {
            major = m;
            endian = 0;
            subtype = fit_subtype(major, &in->info);
        }
    }
    info->format = major | subtype | endian;
    if (info->samplerate <= 0) {
        if (major != SF_FORMAT_RAW) {
            char name[128];
            gf_format_name(major | subtype, name, sizeof name);
            snprintf(err, n,
                     "writing %s to '%s' needs a sample rate: give --rate (raw input "
                     "carries none)",
                     name, path);
            return GF_EXIT_USAGE;
        }
        info->samplerate = 48000; /* headerless: not stored anywhere */
    }
    if (!subtype || !sf_format_check(info)) {
        char name[128];
        gf_format_name(major | subtype, name, sizeof name);
        snprintf(err, n, "cannot write %s with %d channels at %d Hz to '%s'", name, info->channels,
                 info->samplerate, path);
        return out_format ? GF_EXIT_USAGE : GF_EXIT_OUTPUT;
    }
    return 0;
}

/* --- sink --- */

/* Round and clip to a left-justified 32-bit integer for sf_writef_int. */
static int32_t quantise(double x, double scale, double shift, uint64_t *clipped)
{
    return (int32_t)((double)gf_quantise(x, scale, clipped) * shift);
}

/* x clipped to [-1, 1], NaN as 0; counts what it changes. */
static double clip_unit(double x, uint64_t *clipped)
{
    if (fabs(x) <= 1.0)
        return x;
    ++*clipped;
    return x > 1.0 ? 1.0 : x < -1.0 ? -1.0 : 0.0;
}

static int sndfile_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                         size_t n)
{
    const size_t C = (size_t)k->info.channels, ns = count * C;
    sf_count_t wrote;
    if (k->pcm_bits) {
        const double scale = ldexp(1.0, k->pcm_bits - 1), shift = ldexp(1.0, 32 - k->pcm_bits);
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                k->ibuf[i] = quantise(((const float *)frames)[i], scale, shift, &k->clipped);
        else
            for (size_t i = 0; i < ns; i++)
                k->ibuf[i] = quantise(((const double *)frames)[i], scale, shift, &k->clipped);
        wrote = sf_writef_int(k->sf, k->ibuf, (sf_count_t)count);
    } else if (k->float_clips) {
        /* libsndfile indexes its mu-law and A-law tables with the scaled
         * sample unchecked (SFC_SET_CLIPPING does not cover them): a sample
         * beyond +-1 or NaN would read far outside them. Clip here, for
         * every encoding converted from float: +-1 at most, NaN as 0. */
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                ((float *)k->fbuf)[i] = (float)clip_unit(((const float *)frames)[i], &k->clipped);
        else
            for (size_t i = 0; i < ns; i++)
                ((double *)k->fbuf)[i] = clip_unit(((const double *)frames)[i], &k->clipped);
        wrote = p == GF_PRECISION_F32 ? sf_writef_float(k->sf, k->fbuf, (sf_count_t)count)
                                      : sf_writef_double(k->sf, k->fbuf, (sf_count_t)count);
    } else {
        wrote = p == GF_PRECISION_F32 ? sf_writef_float(k->sf, frames, (sf_count_t)count)
                                      : sf_writef_double(k->sf, frames, (sf_count_t)count);
    }
    if (wrote != (sf_count_t)count || sf_error(k->sf) != SF_ERR_NO_ERROR) {
        k->broken_pipe = k->out.stream && errno == EPIPE;
        snprintf(err, n, "writing output '%s': %s", k->out.name, sf_strerror(k->sf));
        return -1;
    }
    k->frames_written += (int64_t)count;
#ifdef SYNC_FILE_RANGE_WRITE
    /* With --sync, start writeback as we go so the fsync before the rename
     * finds little left to do; it does not wait, and a failure here is only
     * a hint (the fsync reports). */
    k->unsynced += ns;
    if (k->sync && k->out.tmp && k->unsynced >= ((size_t)8 << 20) / sizeof(float)) {
        sync_file_range(k->out.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        k->unsynced = 0;
    }
#endif
    return 0;
}

/*
 * FLAC on a pipe through libsndfile's virtual I/O. At the end the FLAC
 * encoder seeks back to rewrite its STREAMINFO block; on a plain pipe
 * libsndfile then appends those bytes to the stream, which decoders reject.
 * Here a backward seek is accepted and what is written until the position
 * is back at the end is dropped: the stream stays valid, with STREAMINFO
 * saying "length unknown", as a streamed FLAC must.
 */
typedef struct pipe_vio {
    gf_sink *k;
    sf_count_t pos, end; /* position as the encoder sees it; bytes really written */
} pipe_vio;

static sf_count_t vio_len(void *u)
{
    return ((pipe_vio *)u)->end;
}

static sf_count_t vio_seek(sf_count_t off, int whence, void *u)
{
    pipe_vio *v = u;
    v->pos = whence == SEEK_SET ? off : whence == SEEK_CUR ? v->pos + off : v->end + off;
    return v->pos;
}

static sf_count_t vio_read(void *ptr, sf_count_t count, void *u)
{
    (void)ptr;
    (void)count;
    (void)u;
    return 0;
}

static sf_count_t vio_write(const void *ptr, sf_count_t count, void *u)
{
    pipe_vio *v = u;
    if (v->pos == v->end) {
        const unsigned char *b = ptr;
        sf_count_t left = count;
        while (left > 0) {
            const ssize_t w = write(v->k->out.fd, b, (size_t)left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return count - left;
            b += w;
            left -= w;
        }
        v->end += count;
    }
    v->pos += count; /* a rewrite of earlier bytes: dropped */
    if (v->pos > v->end)
        v->end = v->pos;
    return count;
}

static sf_count_t vio_tell(void *u)
{
    return ((pipe_vio *)u)->pos;
}

int gf_sndfile_sink_open(gf_sink *k, const char *path, const gf_source *in, const char *out_format,
                         size_t max_block, char *err, size_t n)
{
    memset(k, 0, sizeof *k);
    k->out.fd = -1;
    k->write = sndfile_write;
    int rc = choose_format(path, in, out_format, &k->info, err, n);
    if (rc)
        return rc;
    if ((rc = gf_outfile_open(&k->out, "output", path, in->is_stdin ? NULL : in->path, err, n)) !=
        0)
        return rc;
    if (!k->out.seekable && (k->info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC) {
        static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
        k->vio = calloc(1, sizeof(pipe_vio));
        if (!k->vio) {
            snprintf(err, n, "out of memory");
            gf_sink_abort(k);
            return GF_EXIT_INTERNAL;
        }
        ((pipe_vio *)k->vio)->k = k;
        k->sf = sf_open_virtual(&vio, SFM_WRITE, &k->info, k->vio);
    } else {
        k->sf = sf_open_fd(k->out.fd, SFM_WRITE, &k->info, SF_FALSE);
    }
    if (!k->sf && k->out.stream) {
        /* A format that must seek back to finish its header (WAV, AIFF,
         * ...) works only on a regular file; libsndfile refuses it on a
         * pipe before writing anything. */
        char name[128];
        gf_format_name(k->info.format, name, sizeof name);
        if (strcmp(path, "-") == 0)
            snprintf(err, n,
                     "cannot write %s to standard output (%s); use --out-raw FMT, or "
                     "--out-format au or flac",
                     name, sf_strerror(NULL));
        else
            snprintf(err, n,
                     "cannot write %s to '%s' (%s); use --out-raw FMT, or --out-format au or "
                     "flac",
                     name, path, sf_strerror(NULL));
        gf_sink_abort(k);
        return GF_EXIT_USAGE;
    }
    if (!k->sf) {
        snprintf(err, n, "cannot write output '%s': %s", path, sf_strerror(NULL));
        gf_sink_abort(k);
        return GF_EXIT_OUTPUT;
    }
    k->pcm_bits = pcm_bits(k->info.format);
    if (!k->pcm_bits && !is_float_subtype(k->info.format)) {
        /* Lossy and companded encodings are converted from float by
         * libsndfile: clip first (sndfile_write) and count. */
        k->float_clips = 1;
        k->fbuf = malloc(max_block * (size_t)k->info.channels * sizeof(double));
        if (!k->fbuf) {
            snprintf(err, n, "out of memory");
            gf_sink_abort(k);
            return GF_EXIT_INTERNAL;
        }
    }
    if (k->pcm_bits) {
        k->ibuf_frames = max_block;
        k->ibuf = malloc(max_block * (size_t)k->info.channels * sizeof(int32_t));
        if (!k->ibuf) {
            snprintf(err, n, "out of memory");
            gf_sink_abort(k);
            return GF_EXIT_INTERNAL;
        }
    }
    return 0;
}

int gf_sink_commit(gf_sink *k, char *err, size_t n)
{
    /* sf_close rewrites the header; an earlier ENOSPC is not reported by it,
     * so every write was checked, and fsync/close are checked too. */
    if (k->sf) {
        int rc = sf_close(k->sf);
        k->sf = NULL;
        if (rc != 0) {
            snprintf(err, n, "writing output '%s': %s", k->out.name, sf_error_number(rc));
            gf_sink_abort(k);
            return -1;
        }
    }
    const int rc = gf_outfile_commit(&k->out, k->sync, err, n);
    gf_sink_abort(k);
    return rc;
}

void gf_sink_abort(gf_sink *k)
{
    if (k->sf)
        sf_close(k->sf);
    k->sf = NULL;
    gf_outfile_abort(&k->out);
    free(k->ibuf);
    k->ibuf = NULL;
    free(k->fbuf);
    k->fbuf = NULL;
    free(k->rbuf);
    k->rbuf = NULL;
    free(k->vio);
    k->vio = NULL;
    if (k->wake_open) {
        close(k->wake[0]);
        close(k->wake[1]);
        k->wake_open = 0;
    }
}
