/* Headerless sample formats: names (FFmpeg's, and SoX's short ones) and sizes. */
#include "io/io.h"

#include <string.h>

static const struct {
    const char *name, *sox; /* FFmpeg's name, SoX's short type */
    gf_raw_format f;
} raw_formats[] = {
    {"u8", "u8", GF_RAW_U8},        {"s8", "s8", GF_RAW_S8},        {"s16le", "s16", GF_RAW_S16LE},
    {"s16be", NULL, GF_RAW_S16BE},  {"s24le", "s24", GF_RAW_S24LE}, {"s32le", "s32", GF_RAW_S32LE},
    {"f32le", "f32", GF_RAW_F32LE}, {"f64le", "f64", GF_RAW_F64LE},
};

const char *gf_raw_name(gf_raw_format f)
{
    for (size_t i = 0; i < sizeof raw_formats / sizeof raw_formats[0]; i++)
        if (raw_formats[i].f == f)
            return raw_formats[i].name;
    return "none";
}

gf_raw_format gf_raw_parse(const char *s)
{
    for (size_t i = 0; i < sizeof raw_formats / sizeof raw_formats[0]; i++)
        if (strcmp(s, raw_formats[i].name) == 0 ||
            (raw_formats[i].sox && strcmp(s, raw_formats[i].sox) == 0))
            return raw_formats[i].f;
    return GF_RAW_NONE;
}

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
