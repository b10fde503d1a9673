/*
 * The --eq file parser (design_options.c): any bytes, as a file. A parse
 * either fails (with a message on stderr, its exit code) or gives at least
 * one point, frequencies >= 0 and strictly increasing, gains within
 * GF_DESIGN_MIN_GAIN_DB..GF_DESIGN_MAX_GAIN_DB.
 */
#define _GNU_SOURCE /* memfd_create */
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const int fd = memfd_create("eq", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    double *freq = NULL, *gain = NULL;
    size_t n = 0;
    const int rc = gf_design_cli_read_eq(path, &freq, &gain, &n);
    close(fd);
    if (rc != 0 && (freq || gain || n))
        abort(); /* a failure leaves nothing */
    if (rc == 0) {
        if (!freq || !gain || n < 1)
            abort();
        for (size_t i = 0; i < n; i++) {
            if (!(freq[i] >= 0) || !isfinite(freq[i]) || (i > 0 && !(freq[i] > freq[i - 1])))
                abort();
            if (!(gain[i] >= GF_DESIGN_MIN_GAIN_DB && gain[i] <= GF_DESIGN_MAX_GAIN_DB))
                abort();
        }
    }
    free(freq);
    free(gain);
    return 0;
}
