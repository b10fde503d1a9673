#include "sndfile_format.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int gf_sf_pcm_bits(int format)
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

gf_raw_format gf_sf_raw_for(int sf_format)
{
    const int sub = sf_format & SF_FORMAT_SUBMASK;
    const int big = (sf_format & SF_FORMAT_ENDMASK) == SF_ENDIAN_BIG;
    if (sub == SF_FORMAT_PCM_16 && big)
        return GF_RAW_S16BE;
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if ((raw_map[i].format & SF_FORMAT_SUBMASK) == sub)
            return raw_map[i].raw;
    const int bits = gf_sf_pcm_bits(sf_format);
    return bits > 24   ? GF_RAW_S32LE
           : bits > 16 ? GF_RAW_S24LE
           : bits > 8  ? GF_RAW_S16LE
           : bits > 0  ? GF_RAW_S8
                       : GF_RAW_F32LE;
}

int gf_sf_format_for_raw(gf_raw_format f)
{
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if (raw_map[i].raw == f)
            return raw_map[i].format;
    return SF_FORMAT_FLOAT;
}

void gf_sf_format_name(int format, char *buf, size_t n)
{
    SF_FORMAT_INFO major = {.format = format & SF_FORMAT_TYPEMASK};
    SF_FORMAT_INFO sub = {.format = format & SF_FORMAT_SUBMASK};
    sf_command(NULL, SFC_GET_FORMAT_INFO, &major, sizeof major);
    sf_command(NULL, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
    snprintf(buf, n, "%s / %s", major.name ? major.name : "?", sub.name ? sub.name : "?");
}

/* The first character of s, lower-cased unless s starts an acronym ("WAV"). */
static char lower_first(const char *s)
{
    if (!s[0])
        return '\0';
    return isupper((unsigned char)s[0]) && !isupper((unsigned char)s[1])
               ? (char)tolower((unsigned char)s[0])
               : s[0];
}

/* libsndfile's messages that read badly inside ours, and what to say. */
static const struct {
    const char *theirs, *ours;
} reasons[] = {
    {"No Error", "no reason given"},
    {"Format not recognised", "not a format libsndfile knows"},
    {"File contains data in an unknown format", "not a format libsndfile knows"},
    {"Supported file format but file is malformed", "the file is malformed"},
    {"Supported file format but unsupported encoding", "an encoding libsndfile cannot decode"},
    {"File contains data in an unimplemented format", "an encoding libsndfile cannot decode"},
    {"this file format does not support pipe write", "the format cannot be written to a pipe"},
    {"flac decoder lost sync", "the FLAC decoder lost sync"},
    {"Internal malloc () failed", "out of memory"},
};

void gf_sf_reason(const char *msg, char *buf, size_t n)
{
    if (!msg)
        msg = "";
    char t[512];
    snprintf(t, sizeof t, "%s", msg);
    for (char *c = t; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    size_t len = strlen(t);
    while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '.'))
        t[--len] = '\0';
    const char *s = t;
    /* The system's own message (strerror's), as gpufilt prints it elsewhere. */
    if (strncmp(s, "System error : ", 15) == 0) {
        snprintf(buf, n, "%s", s + 15);
        return;
    }
    static const char *const prefixes[] = {"Error : ", "Error: ", "Error. "};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
            s += strlen(prefixes[i]);
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(s, reasons[i].theirs) == 0) {
            snprintf(buf, n, "%s", reasons[i].ours);
            return;
        }
    /* "Error in WAV file. No 'data' chunk marker" -> "WAV file: no 'data' chunk marker" */
    char kind[64];
    int used = 0;
    if (sscanf(s, "Error in %63[^.,]%*[.,] %n", kind, &used) == 1 && used > 0) {
        const char *rest = s + used;
        snprintf(buf, n, "%s: %c%s", kind, lower_first(rest), *rest ? rest + 1 : "");
        return;
    }
    snprintf(buf, n, "%c%s", lower_first(s), *s ? s + 1 : "");
}

const char *gf_sf_why(SNDFILE *sf, char *buf, size_t n)
{
    gf_sf_reason(sf_strerror(sf), buf, n);
    return buf;
}
