#include "sndfile_format.h"

#include <stdio.h>

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
