/*
 * Audio files (or containers on standard output) through libsndfile,
 * written through an outfile: a temporary file renamed into place on
 * commit, or a stream (io.h).
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sync_file_range */
#endif
#include "io/sample_conv.h"
#include "io/sndfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sf_sink {
    SNDFILE *sf;
    int sf_format;        /* as written (after close: RF64, or the WAVEX it became) */
    int pcm_bits;         /* > 0: integer PCM of that many bits, written with sf_writef_int */
    int float_clips;      /* an encoding libsndfile converts from float: clipped first */
    size_t piece;         /* frames ibuf or fbuf holds: a write converts in pieces of this */
    int32_t *ibuf;        /* piece frames of quantised samples (integer PCM) */
    void *fbuf;           /* piece frames of clipped samples (float_clips) */
    size_t unsynced;      /* samples written since writeback was last started */
    struct pipe_vio *vio; /* FLAC on a pipe (below) */
    uint64_t limit;       /* bytes the container can describe; 0: no limit */
    int rf64_auto;        /* RF64 that libsndfile writes as WAV while under 4 GiB */
    const gf_meta *meta;  /* the input's, to check against the file written */
    char lost[256];       /* what of meta libsndfile refused ("" for nothing) */
} sf_sink;

/* Containers whose sizes are 32-bit fields (AIFF, WAV's own, ...) describe
 * at most this many bytes; HEADROOM is kept free for what is written at
 * close (header, strings, cue points). AU writes "unknown length" past 2
 * GiB and is read to its end, as are headerless samples. */
#define SIZE_LIMIT_32 ((uint64_t)0xFFFFFFFF)
#define HEADROOM      ((uint64_t)1 << 20)
/* A WAV whose data may pass 2 GiB (or whose length is unknown) is written
 * as RF64 with libsndfile's automatic downgrade: a WAV (with
 * WAVE_FORMAT_EXTENSIBLE) when it ends under 4 GiB, RF64 past that. */
#define RF64_FROM ((uint64_t)1 << 31)

static const struct {
    const char *name;
    int subtype;
} subtypes[] = {
    {"pcm_s8", SF_FORMAT_PCM_S8}, {"pcm_u8", SF_FORMAT_PCM_U8}, {"pcm_16", SF_FORMAT_PCM_16},
    {"pcm_24", SF_FORMAT_PCM_24}, {"pcm_32", SF_FORMAT_PCM_32}, {"float", SF_FORMAT_FLOAT},
    {"double", SF_FORMAT_DOUBLE}, {"ulaw", SF_FORMAT_ULAW},     {"alaw", SF_FORMAT_ALAW},
    {"vorbis", SF_FORMAT_VORBIS}, {"opus", SF_FORMAT_OPUS},
};

/* Major format whose extension (or alias) is `ext`, or 0. libsndfile
 * lists MPEG audio (MP3) as "m1a", and only when it was built with an
 * MPEG encoder. */
static int major_for_extension(const char *ext)
{
    static const struct {
        const char *alias, *ext;
    } aliases[] = {{"aif", "aiff"}, {"snd", "au"}, {"ogg", "oga"}, {"opus", "oga"}, {"mp3", "m1a"}};
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

/* Audio containers libsndfile has no writer for (MP3: when built without
 * an MPEG encoder), by extension: a name ending so is refused, never
 * written in the input's container. */
static const char *unwritable_container(const char *ext)
{
    static const struct {
        const char *ext, *name;
    } t[] = {{"mp3", "MP3"},  {"mp2", "MP2"},      {"m4a", "M4A"},  {"mp4", "MP4"},
             {"aac", "AAC"},  {"wma", "WMA"},      {"ape", "APE"},  {"wv", "WavPack"},
             {"ac3", "AC-3"}, {"mka", "Matroska"}, {"webm", "WebM"}};
    for (size_t i = 0; ext && i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(ext, t[i].ext) == 0)
            return t[i].name;
    return NULL;
}

/* path with its extension replaced by ext ("o.mp3" -> "o.flac"). */
static void renamed(const char *path, const char *ext, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    const int stem =
        dot && dot != (slash ? slash + 1 : path) ? (int)(dot - path) : (int)strlen(path);
    snprintf(buf, n, "%.*s.%s", stem, path, ext);
}

/* "cannot write MP3 ...", and what to do instead. named: by --out-format
 * (a usage error), else by the extension of path. */
static int refuse_container(const char *what, const char *path, int named, char *err, size_t n)
{
    char version[64] = "libsndfile", other[512];
    sf_command(NULL, SFC_GET_LIB_VERSION, version, sizeof version);
    if (named) {
        snprintf(err, n,
                 "--out-format: %s cannot write %s; write FLAC or WAV (e.g. --out-format flac) "
                 "and convert that, e.g. with ffmpeg",
                 version, what);
        return GF_EXIT_USAGE;
    }
    renamed(path, "flac", other, sizeof other);
    snprintf(err, n,
             "cannot write %s to '%s': %s cannot write %s; write FLAC or WAV (e.g. '%s') and "
             "convert that, e.g. with ffmpeg",
             what, path, version, what, other);
    return GF_EXIT_OUTPUT;
}

/* A subtype that `major` accepts, for a given input format. */
static int fit_subtype(int major, const SF_INFO *in)
{
    SF_INFO t = *in;
    const int bits = gf_sf_pcm_bits(in->format);
    /* The input's own subtype first, if it is plain samples: libsndfile's
     * format check passes codecs it reads in a container but cannot write
     * there (MP3 in WAV). */
    const int plain = gf_sf_sample_bytes(in->format) > 0 || gf_sf_pcm_bits(in->format) > 0;
    const int tries[] = {
        plain ? in->format & SF_FORMAT_SUBMASK : SF_FORMAT_FLOAT,
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
        SF_FORMAT_MPEG_LAYER_III, /* the MPEG layer libsndfile encodes */
    };
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        t.format = major | tries[i];
        if (sf_format_check(&t))
            return tries[i];
    }
    return 0;
}

/* WAV, WAVEX (WAVE_FORMAT_EXTENSIBLE, e.g. a channel layout) and RF64 are
 * one family: a name ending in .wav keeps whichever the input is. */
static int wav_family(int major)
{
    return major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX || major == SF_FORMAT_RF64;
}

/* The container and sample type: the input's, unless out_format or the
 * extension of path names another container. *implied is set when the
 * sample type was chosen here for a new container, not named. */
static int pick_format(const char *path, const SF_INFO *in, const char *out_format, int *format,
                       int *implied, char *err, size_t n)
{
    int major = in->format & SF_FORMAT_TYPEMASK;
    int subtype = in->format & SF_FORMAT_SUBMASK;
    int endian = in->format & SF_FORMAT_ENDMASK;
    char buf[64];
    const char *name = NULL, *sub = NULL;
    *implied = 0;
    if (out_format) {
        snprintf(buf, sizeof buf, "%s", out_format);
        char *colon = strchr(buf, ':');
        if (colon) {
            *colon = '\0';
            sub = colon + 1;
        }
        name = buf;
    } else {
        const char *slash = strrchr(path, '/');
        const char *dot = strrchr(slash ? slash : path, '.');
        name = dot ? dot + 1 : NULL;
    }
    const int m = name ? major_for_extension(name) : 0;
    const char *foreign = m ? NULL : unwritable_container(name);
    if (foreign)
        return refuse_container(foreign, path, out_format != NULL, err, n);
    if (out_format && !m) {
        snprintf(err, n, "--out-format: unknown major format '%s'", buf);
        return GF_EXIT_USAGE;
    }
    if (m && m != major && !(m == SF_FORMAT_WAV && wav_family(major))) {
        major = m;
        endian = 0;
        subtype = fit_subtype(major, in);
        *implied = 1;
    }
    /* "opus" names the codec too: Ogg is Vorbis unless it is Opus (whose
     * rates, 8 to 48 kHz, libsndfile checks when the file is opened). */
    if (m == SF_FORMAT_OGG && !sub && strcasecmp(name, "opus") == 0) {
        major = SF_FORMAT_OGG;
        subtype = SF_FORMAT_OPUS;
        endian = 0;
        *implied = 1;
    }
    if (sub) {
        subtype = 0;
        for (size_t i = 0; i < sizeof subtypes / sizeof subtypes[0]; i++)
            if (strcasecmp(sub, subtypes[i].name) == 0)
                subtype = subtypes[i].subtype;
        if (!subtype) {
            snprintf(err, n, "--out-format: unknown sample type '%s'", sub);
            return GF_EXIT_USAGE;
        }
        *implied = 0;
    }
    *format = major | subtype | endian;
    return 0;
}

/* Bits of precision a subtype keeps (float: its 24-bit significand, with
 * a range integers lack), 0 for encodings that are not plain samples. */
static int sample_bits(int format, int *is_float)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    *is_float = sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE;
    return sub == SF_FORMAT_DOUBLE ? 53 : sub == SF_FORMAT_FLOAT ? 24 : gf_sf_pcm_bits(format);
}

/* A container that cannot hold the input's samples as they are: say so
 * once, when the sample type was not asked for. */
static void warn_narrower(const char *path, int in_format, int out_format)
{
    int in_float, out_float;
    const int in_bits = sample_bits(in_format, &in_float);
    const int out_bits = sample_bits(out_format, &out_float);
    if (!in_bits || !out_bits || out_float || (!in_float && in_bits <= out_bits))
        return;
    char name[128];
    gf_sf_format_name(out_format, name, sizeof name);
    char *slash = strstr(name, " / ");
    if (slash)
        *slash = '\0';
    char what[32];
    if (in_float)
        snprintf(what, sizeof what, "%d-bit float", in_bits > 24 ? 64 : 32);
    else
        snprintf(what, sizeof what, "%d-bit", in_bits);
    const int dash = strcmp(path, "-") == 0;
    gf_cli_warn("%s%s%s is written as %d-bit PCM: %s cannot hold the input's %s samples%s",
                dash ? "standard output" : "output '", dash ? "" : path, dash ? "" : "'", out_bits,
                name, what, in_float ? " (beyond +-1 they clip)" : "");
}

static uint64_t size_limit(int format)
{
    switch (format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_RAW:
    case SF_FORMAT_AU:
    case SF_FORMAT_W64:
    case SF_FORMAT_CAF:
    case SF_FORMAT_RF64:
    case SF_FORMAT_FLAC:
    case SF_FORMAT_OGG:
    case SF_FORMAT_IRCAM:
    case SF_FORMAT_PAF:
        return 0;
    }
    return SIZE_LIMIT_32;
}

/* RF64 takes these subtypes (libsndfile 1.2's rf64.c). */
static int rf64_subtype(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
    case SF_FORMAT_DOUBLE:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        return 1;
    }
    return 0;
}

/* Bytes of samples for `frames` frames of info's format, or 0 when
 * unknown (a stream, an encoding that is not plain samples). */
static uint64_t data_bytes(const SF_INFO *info, int64_t frames)
{
    return frames < 0
               ? 0
               : (uint64_t)frames * (uint64_t)info->channels * gf_sf_sample_bytes(info->format);
}

/* The name of a format's container: "AIFF (Apple/SGI)". */
static void container_name(int format, char *buf, size_t n)
{
    gf_sf_format_name(format, buf, n);
    char *slash = strstr(buf, " / ");
    if (slash)
        *slash = '\0';
}

/* Where a container's sizes would wrap: refused before anything is written
 * when the length is known. A WAV that may grow past 2 GiB becomes RF64 at
 * open (open_encoder); other WAV encodings stop at the limit like AIFF. */
static int check_size(const char *path, const SF_INFO *info, int64_t frames, char *err, size_t n)
{
    const uint64_t limit = size_limit(info->format), bytes = data_bytes(info, frames);
    const int wav = (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV ||
                    (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAVEX;
    if (!limit || (wav && rf64_subtype(info->format)) || bytes + HEADROOM <= limit)
        return 0;
    char name[128], size[32];
    container_name(info->format, name, sizeof name);
    snprintf(err, n,
             "output '%s' would hold %s of samples: %s cannot describe more than 4 GiB; write "
             "W64, CAF or RF64 instead (e.g. --out-format caf)",
             path, gf_cli_bytes(size, sizeof size, bytes), name);
    return GF_EXIT_OUTPUT;
}

/* The most channels info's container takes with a sample type it would
 * be given for `in` (its own, else one fit_subtype picks), when fewer
 * than info asks for; else 0 (the channels are not what it refuses). */
static int most_channels(const SF_INFO *info, const SF_INFO *in)
{
    const int major = info->format & SF_FORMAT_TYPEMASK;
    SF_INFO t = *info;
    for (int c = info->channels - 1; c >= 1; c--) {
        t.channels = c;
        SF_INFO tin = *in;
        tin.channels = c;
        t.format =
            info->format & SF_FORMAT_SUBMASK ? info->format : major | fit_subtype(major, &tin);
        if ((t.format & SF_FORMAT_SUBMASK) && sf_format_check(&t))
            return c;
    }
    return 0;
}

static int choose_format(const char *path, const gf_format *in_fmt, const char *out_format,
                         const gf_sink_opts *o, SF_INFO *info, char *err, size_t n)
{
    /* The input's container, or headerless samples as libsndfile's RAW. */
    const SF_INFO in = {
        .samplerate = in_fmt->rate,
        .channels = in_fmt->channels,
        .format = in_fmt->container ? in_fmt->container
                                    : SF_FORMAT_RAW | gf_sf_format_for_raw(in_fmt->sample),
    };
    *info = (SF_INFO){.samplerate = in.samplerate, .channels = in.channels};
    int implied;
    int rc = pick_format(path, &in, out_format, &info->format, &implied, err, n);
    if (rc)
        return rc;
    /* A channel layout needs WAVE_FORMAT_EXTENSIBLE. */
    if ((info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV && gf_meta_has_layout(o->meta))
        info->format = (info->format & ~SF_FORMAT_TYPEMASK) | SF_FORMAT_WAVEX;
    const int major = info->format & SF_FORMAT_TYPEMASK;
    if (info->samplerate <= 0) {
        if (major != SF_FORMAT_RAW) {
            char name[128];
            gf_sf_format_name(info->format, name, sizeof name);
            snprintf(err, n,
                     "writing %s to '%s' needs a sample rate: give --rate (raw input "
                     "carries none)",
                     name, path);
            return GF_EXIT_USAGE;
        }
        info->samplerate = 48000; /* headerless: not stored anywhere */
    }
    if (!(info->format & SF_FORMAT_SUBMASK) || !sf_format_check(info)) {
        char name[128];
        const int most = most_channels(info, &in);
        if (most > 0) {
            container_name(info->format, name, sizeof name);
            char w64[512], other[520] = "--out-format w64";
            if (!out_format) {
                renamed(path, "w64", w64, sizeof w64);
                snprintf(other, sizeof other, "'%s'", w64);
            }
            snprintf(err, n,
                     "cannot write %d channels to '%s': %s holds at most %d; write WAV, W64, CAF "
                     "or RF64 (e.g. %s)",
                     info->channels, path, name, most, other);
        } else {
            gf_sf_format_name(info->format, name, sizeof name);
            snprintf(err, n, "cannot write %s with %d channels at %d Hz to '%s'", name,
                     info->channels, info->samplerate, path);
        }
        return out_format ? GF_EXIT_USAGE : GF_EXIT_OUTPUT;
    }
    if (implied)
        warn_narrower(path, in.format, info->format);
    return check_size(path, info, o->frames, err, n);
}

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

static int is_float_subtype(int format)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    return sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE;
}

/* A container with 32-bit sizes stops short of them rather than wrap: the
 * file so far and `count` more frames (2 bytes a sample for encodings that
 * compress) must leave HEADROOM. */
static int past_limit(gf_sink *k, const sf_sink *f, size_t count, char *err, size_t n)
{
    struct stat st;
    if (!f->limit || fstat(k->out.fd, &st) != 0)
        return 0;
    const size_t sb = gf_sf_sample_bytes(f->sf_format);
    const uint64_t more = (uint64_t)count * (uint64_t)k->fmt.channels * (sb ? sb : 2);
    if ((uint64_t)st.st_size + more + HEADROOM <= f->limit)
        return 0;
    char name[128];
    container_name(f->sf_format, name, sizeof name);
    snprintf(err, n,
             "output '%s': %s cannot describe more than 4 GiB; stopped after %lld frames (write "
             "W64, CAF or RF64 instead, e.g. --out-format caf)",
             k->out.name, name, (long long)k->frames_written);
    return GF_EXIT_OUTPUT;
}

/* Convert `count` frames (at most f->piece when they need converting) and
 * hand them to libsndfile; returns what sf_writef_* wrote. */
static sf_count_t write_piece(gf_sink *k, sf_sink *f, gf_precision p, const void *frames,
                              size_t count)
{
    const size_t ns = count * (size_t)k->fmt.channels;
    if (f->pcm_bits) {
        const double scale = ldexp(1.0, f->pcm_bits - 1), shift = ldexp(1.0, 32 - f->pcm_bits);
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                f->ibuf[i] = quantise(((const float *)frames)[i], scale, shift, &k->clipped);
        else
            for (size_t i = 0; i < ns; i++)
                f->ibuf[i] = quantise(((const double *)frames)[i], scale, shift, &k->clipped);
        return sf_writef_int(f->sf, f->ibuf, (sf_count_t)count);
    }
    if (f->float_clips) {
        /* libsndfile indexes its mu-law and A-law tables with the scaled
         * sample unchecked (SFC_SET_CLIPPING does not cover them): a sample
         * beyond +-1 or NaN would read far outside them. Clip here, for
         * every encoding converted from float: +-1 at most, NaN as 0. */
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                ((float *)f->fbuf)[i] = (float)clip_unit(((const float *)frames)[i], &k->clipped);
        else
            for (size_t i = 0; i < ns; i++)
                ((double *)f->fbuf)[i] = clip_unit(((const double *)frames)[i], &k->clipped);
        return p == GF_PRECISION_F32 ? sf_writef_float(f->sf, f->fbuf, (sf_count_t)count)
                                     : sf_writef_double(f->sf, f->fbuf, (sf_count_t)count);
    }
    return p == GF_PRECISION_F32 ? sf_writef_float(f->sf, frames, (sf_count_t)count)
                                 : sf_writef_double(f->sf, frames, (sf_count_t)count);
}

/* Any count (io.h): samples that need converting go through the sink's own
 * buffer a piece at a time; float and double go to libsndfile as they
 * are. */
static int sf_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                    size_t n)
{
    sf_sink *f = k->state;
    const size_t C = (size_t)k->fmt.channels;
    const size_t fb = C * (p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double));
    const int converts = f->pcm_bits || f->float_clips;
    if (past_limit(k, f, count, err, n))
        return GF_EXIT_OUTPUT;
    const unsigned char *src = frames;
    while (count > 0) {
        const size_t m = converts && count > f->piece ? f->piece : count;
        const sf_count_t wrote = write_piece(k, f, p, src, m);
        if (wrote != (sf_count_t)m || sf_error(f->sf) != SF_ERR_NO_ERROR) {
            const int pipe_closed = k->out.stream && errno == EPIPE;
            char why[256];
            snprintf(err, n, "writing output '%s': %s", k->out.name,
                     gf_sf_why(f->sf, why, sizeof why));
            return pipe_closed ? GF_EXIT_PIPE : GF_EXIT_OUTPUT;
        }
        k->frames_written += (int64_t)m;
        src += m * fb;
        count -= m;
#ifdef SYNC_FILE_RANGE_WRITE
        /* With --sync, start writeback as we go so the fsync before the
         * rename finds little left to do; it does not wait, and a failure
         * here is only a hint (the fsync reports). */
        f->unsynced += m * C;
        if (k->sync && k->out.tmp && f->unsynced >= ((size_t)8 << 20) / sizeof(float)) {
            sync_file_range(k->out.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
            f->unsynced = 0;
        }
#endif
    }
    return 0;
}

/* The file as written, read back where it can be: its format (an RF64
 * written as WAV under 4 GiB is WAVEX), and what of the input's metadata
 * its container kept (libsndfile accepts some it then drops). */
static void check_written(gf_sink *k, sf_sink *f)
{
    const int fd = k->out.seekable ? dup(k->out.fd) : -1;
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = NULL;
    if (fd >= 0 &&
        (lseek(fd, 0, SEEK_SET) != 0 || !(sf = sf_open_fd(fd, SFM_READ, &info, SF_TRUE))))
        close(fd); /* e.g. standard output opened write-only: libsndfile's word stands */
    if (sf) {
        f->sf_format = info.format;
        gf_meta_missing(sf, f->meta, f->lost, sizeof f->lost);
        sf_close(sf);
    }
    if (f->lost[0]) {
        char name[128];
        if (f->rf64_auto)
            snprintf(name, sizeof name,
                     "RF64, as a WAV of unknown length or past 2 GiB is "
                     "written,");
        else
            container_name(f->sf_format, name, sizeof name);
        const int dash = !k->out.target && strcmp(k->out.name, "standard output") == 0;
        gf_cli_warn("%s%s%s: %s does not keep the input's %s", dash ? "" : "output '", k->out.name,
                    dash ? "" : "'", name, f->lost);
    }
}

/* sf_close rewrites the header. */
static int sf_finish(gf_sink *k, char *err, size_t n)
{
    sf_sink *f = k->state;
    const int rc = sf_close(f->sf);
    f->sf = NULL;
    if (rc != 0) {
        char why[256];
        gf_sf_reason(sf_error_number(rc), why, sizeof why);
        snprintf(err, n, "writing output '%s': %s", k->out.name, why);
        return GF_EXIT_OUTPUT;
    }
    check_written(k, f);
    return 0;
}

static void sf_sink_close(gf_sink *k)
{
    sf_sink *f = k->state;
    if (!f)
        return;
    if (f->sf)
        sf_close(f->sf);
    free(f->ibuf);
    free(f->fbuf);
    free(f->vio);
    free(f);
    k->state = NULL;
}

static void sf_describe(const gf_sink *k, char *buf, size_t n)
{
    gf_sf_format_name(((const sf_sink *)k->state)->sf_format, buf, n);
}

static const gf_sink_ops sndfile_sink_ops = {
    .write = sf_write,
    .finish = sf_finish,
    .close = sf_sink_close,
    .describe = sf_describe,
};

/*
 * FLAC on a pipe through libsndfile's virtual I/O. At the end the FLAC
 * encoder seeks back to rewrite its STREAMINFO block; on a plain pipe
 * libsndfile then appends those bytes to the stream, which decoders reject.
 * Here a backward seek is accepted and what is written until the position
 * is back at the end is dropped: the stream stays valid, with STREAMINFO
 * saying "length unknown", as a streamed FLAC must.
 */
typedef struct pipe_vio {
    int fd;
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
            const ssize_t w = write(v->fd, b, (size_t)left);
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

/* Open the encoder on the sink's outfile; a WAV that may pass 2 GiB (or
 * whose length is unknown) as RF64 that libsndfile writes as WAV while it
 * stays under 4 GiB. */
static int open_encoder(gf_sink *k, sf_sink *f, const char *path, SF_INFO *info, int64_t frames,
                        char *err, size_t n)
{
    const int major = info->format & SF_FORMAT_TYPEMASK;
    if (k->out.seekable && (major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX) &&
        rf64_subtype(info->format) && (frames < 0 || data_bytes(info, frames) > RF64_FROM)) {
        info->format = (info->format & ~SF_FORMAT_TYPEMASK) | SF_FORMAT_RF64;
        f->rf64_auto = 1;
    }
    if (!k->out.seekable && (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC) {
        static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
        if (!(f->vio = calloc(1, sizeof *f->vio))) {
            snprintf(err, n, "out of memory");
            return GF_EXIT_INTERNAL;
        }
        f->vio->fd = k->out.fd;
        f->sf = sf_open_virtual(&vio, SFM_WRITE, info, f->vio);
    } else {
        f->sf = sf_open_fd(k->out.fd, SFM_WRITE, info, SF_FALSE);
    }
    char why[256];
    if (!f->sf && k->out.stream) {
        /* A format that must seek back to finish its header (WAV, AIFF,
         * ...) works only on a regular file; libsndfile refuses it on a
         * pipe before writing anything. */
        char name[128];
        gf_sf_format_name(info->format, name, sizeof name);
        if (strcmp(path, "-") == 0)
            snprintf(err, n,
                     "cannot write %s to standard output (%s); use --out-raw FMT, or "
                     "--out-format au or flac",
                     name, gf_sf_why(NULL, why, sizeof why));
        else
            snprintf(err, n,
                     "cannot write %s to '%s' (%s); use --out-raw FMT, or --out-format au or "
                     "flac",
                     name, path, gf_sf_why(NULL, why, sizeof why));
        return GF_EXIT_USAGE;
    }
    if (!f->sf) {
        snprintf(err, n, "cannot write output '%s': %s", path, gf_sf_why(NULL, why, sizeof why));
        return GF_EXIT_OUTPUT;
    }
    if (f->rf64_auto)
        sf_command(f->sf, SFC_RF64_AUTO_DOWNGRADE, NULL, SF_TRUE);
    f->sf_format = info->format;
    f->limit = size_limit(info->format);
    return 0;
}

int gf_sndfile_sink_open(gf_sink *k, const char *path, const gf_format *in, const char *out_format,
                         const gf_sink_opts *o, size_t block, char *err, size_t n)
{
    memset(k, 0, sizeof *k);
    k->out.fd = -1;
    SF_INFO info;
    int rc = choose_format(path, in, out_format, o, &info, err, n);
    if (rc)
        return rc;
    if ((rc = gf_outfile_open(&k->out, "output", path, &o->out, err, n)) != 0)
        return rc;
    sf_sink *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    k->ops = &sndfile_sink_ops;
    k->state = f;
    f->meta = o->meta;
    if ((rc = open_encoder(k, f, path, &info, o->frames, err, n)) != 0) {
        gf_sink_abort(k);
        return rc;
    }
    k->fmt = (gf_format){
        .channels = info.channels,
        .rate = info.samplerate,
        .frames = -1,
        .sample = gf_sf_raw_for(info.format),
        .container = info.format,
    };
    gf_meta_write(f->sf, o->meta, f->lost, sizeof f->lost);
    /* The conversion buffer holds `block` frames; a write of more is
     * converted in pieces (io.h). */
    f->piece = block ? block : GF_SINK_BLOCK;
    const size_t samples = f->piece * (size_t)info.channels;
    f->pcm_bits = gf_sf_pcm_bits(info.format);
    /* Lossy and companded encodings are converted from float by
     * libsndfile: clip first (sf_write) and count. */
    f->float_clips = !f->pcm_bits && !is_float_subtype(info.format);
    if ((f->pcm_bits && !(f->ibuf = malloc(samples * sizeof(int32_t)))) ||
        (f->float_clips && !(f->fbuf = malloc(samples * sizeof(double))))) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    return 0;
}
