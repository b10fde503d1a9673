/*
 * The --hist-range parser, through the option parser: any string as the
 * value. Accepted ranges are two finite numbers, LO < HI, and the range
 * written back with %.17g parses to the same two numbers.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *range, double *lo, double *hi)
{
    char *argv[] = {"gpufilt", "in.wav", "out.wav",      "--taps",      "1",
                    "--hist",  "h.csv",  "--hist-range", (char *)range, NULL};
    optind = 0;
    gf_cli_options o;
    const int rc = gf_cli_parse(9, argv, &o);
    *lo = o.hist_lo;
    *hi = o.hist_hi;
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    double lo, hi;
    const int rc = parse(s, &lo, &hi);
    if (rc == GF_EXIT_OK) {
        if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
            abort();
        char again[64];
        snprintf(again, sizeof again, "%.17g:%.17g", lo, hi);
        double lo2, hi2;
        if (parse(again, &lo2, &hi2) != GF_EXIT_OK || lo2 != lo || hi2 != hi)
            abort();
    } else if (rc != GF_EXIT_USAGE) {
        abort();
    }
    free(s);
    return 0;
}
