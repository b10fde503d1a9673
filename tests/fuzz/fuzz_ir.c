/*
 * The impulse response reader (--ir): any bytes as a file libsndfile may
 * read (through a memfd, named /proc/self/fd/N). The first byte picks the
 * precision. A load either fails with a message or gives finite taps
 * (within f32's range in f32), 1..GF_MAX_FFT_TAPS per channel.
 */
#define _GNU_SOURCE /* memfd_create */
#include "cli.h"
#include "io/sndfile_format.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A header libsndfile loops on costs the probe's CPU limit: 0.1 s here.
 * The probes' server starts while the harness has one thread. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    gf_header_probe_limit(100);
    gf_header_probe_start();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const gf_precision p = data[0] & 1 ? GF_PRECISION_F64 : GF_PRECISION_F32;
    const int fd = memfd_create("fuzz_ir", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gf_taps t = {0};
    char err[512] = "";
    const int rc = gf_ir_load(path, p, &t, err, sizeof err);
    close(fd);
    if (rc != 0 && !err[0])
        abort();
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
