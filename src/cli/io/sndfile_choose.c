/*
 * Which format an audio file is written in (sndfile_choose.h): the
 * extension or --out-format to a container, a sample type that container
 * takes, and the refusals with what to do instead.
 */
#include "io/sndfile_choose.h"
#include "io/sndfile_format.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Containers whose sizes are 32-bit fields (AIFF, WAV's own, ...) describe
 * at most this many bytes, GF_SF_HEADROOM of them kept free. AU writes
 * "unknown length" past 2 GiB and is read to its end, as are headerless
 * samples. */
#define SIZE_LIMIT_32 ((uint64_t)0xFFFFFFFF)

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

uint64_t gf_sf_size_limit(int format)
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
int gf_sf_rf64_subtype(int format)
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
uint64_t gf_sf_data_bytes(const SF_INFO *info, int64_t frames)
{
    return frames < 0
               ? 0
               : (uint64_t)frames * (uint64_t)info->channels * gf_sf_sample_bytes(info->format);
}

/* The name of a format's container: "AIFF (Apple/SGI)". */
void gf_sf_container_name(int format, char *buf, size_t n)
{
    gf_sf_format_name(format, buf, n);
    char *slash = strstr(buf, " / ");
    if (slash)
        *slash = '\0';
}

/* Where a container's sizes would wrap: refused before anything is written
 * when the length is known. A WAV that may grow past 2 GiB becomes RF64 at
 * open (sndfile_sink.c's open_encoder); other WAV encodings stop at the limit like AIFF. */
static int check_size(const char *path, const SF_INFO *info, int64_t frames, char *err, size_t n)
{
    const uint64_t limit = gf_sf_size_limit(info->format), bytes = gf_sf_data_bytes(info, frames);
    const int wav = (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV ||
                    (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAVEX;
    if (!limit || (wav && gf_sf_rf64_subtype(info->format)) || bytes + GF_SF_HEADROOM <= limit)
        return 0;
    char name[128], size[32];
    gf_sf_container_name(info->format, name, sizeof name);
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

int gf_sf_choose_format(const char *path, const gf_format *in_fmt, const char *out_format,
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
            gf_sf_container_name(info->format, name, sizeof name);
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
