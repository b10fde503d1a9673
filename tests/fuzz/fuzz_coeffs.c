/*
 * The coefficient file parser (--coeffs): any bytes. The first byte picks
 * the precision; the rest is the file. A parse either fails with a message
 * or gives taps that are finite (and within f32's range in f32), at most
 * GF_MAX_FFT_TAPS of them in one or more columns.
 */
#define _GNU_SOURCE /* fmemopen */
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const gf_precision p = data[0] & 1 ? GF_PRECISION_F64 : GF_PRECISION_F32;
    static const char empty[1] = "";
    FILE *f =
        size > 1 ? fmemopen((void *)(data + 1), size - 1, "r") : fmemopen((void *)empty, 1, "r");
    if (!f)
        return 0;
    gf_taps t = {0};
    char err[512] = "";
    const int rc = gf_coeffs_parse(f, "fuzz.txt", p, &t, err, sizeof err);
    fclose(f);
    if (rc != 0 && !err[0])
        abort(); /* every failure says why */
    if (rc == 0) {
        if (!t.h || t.n < 1 || t.n > GF_MAX_FFT_TAPS || t.filters < 1)
            abort();
        for (size_t i = 0; i < t.n * (size_t)t.filters; i++)
            if (!isfinite(t.h[i]) || (p == GF_PRECISION_F32 && isinf((float)t.h[i])))
                abort();
    }
    gf_taps_free(&t);
    return 0;
}
