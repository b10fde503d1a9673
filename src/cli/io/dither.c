/* Dither for integer PCM outputs (dither.h). */
#include "io/dither.h"

#include <stdio.h>
#include <stdlib.h>

/* Lipshitz, Vanderkooy and Wannamaker, "Minimally audible noise shaping",
 * J. Audio Eng. Soc. 39(11), 1991: the 5-tap E-weighted error filter
 * (SoX's "lipshitz"). Its noise transfer function 1 - sum c_j z^-j is
 * -16.6 dB at DC, -27 dB at 4 kHz and +19 dB at 22.05 kHz (at 44.1 kHz). */
const double gf_dither_shape[GF_SHAPE_TAPS] = {2.033, -2.165, 1.959, -1.590, 0.6149};

const char *gf_dither_name(gf_dither_kind k)
{
    return k == GF_DITHER_TPDF ? "tpdf" : k == GF_DITHER_SHAPED ? "shaped" : "none";
}

int gf_dither_open(gf_dither *d, const gf_dither_opts *o, int bits, int channels, int rate,
                   char *err, size_t n)
{
    *d = (gf_dither){.kind = GF_DITHER_NONE, .channels = (size_t)channels};
    if (!o)
        return 0;
    gf_dither_kind k = o->kind;
    if (k == GF_DITHER_AUTO) /* SoX's default: dither below 24 bits */
        k = bits > 0 && bits < 24 ? GF_DITHER_TPDF : GF_DITHER_NONE;
    if (bits <= 0 || (o->unchanged_bits > 0 && o->unchanged_bits <= bits))
        k = GF_DITHER_NONE;
    /* The curve is 44.1 kHz's; 48 kHz is near enough (notches 9% up). */
    if (k == GF_DITHER_SHAPED && rate != 44100 && rate != 48000) {
        if (rate)
            gf_cli_warn("--dither shaped has no curve for %d Hz (44100 and 48000 Hz only): "
                        "TPDF dither instead",
                        rate);
        else
            gf_cli_warn("--dither shaped needs the sample rate (give --rate): TPDF dither "
                        "instead");
        k = GF_DITHER_TPDF;
    }
    if (k == GF_DITHER_NONE)
        return 0;
    uint64_t z = o->seed + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    d->key = z ^ (z >> 31);
    if (k == GF_DITHER_SHAPED &&
        !(d->err = calloc((size_t)channels * GF_SHAPE_TAPS, sizeof *d->err))) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    d->kind = k;
    return 0;
}

void gf_dither_close(gf_dither *d)
{
    free(d->err); /* kind stays: what was written, for the run's summary */
    d->err = NULL;
}
