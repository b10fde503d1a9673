/*
 * Containers, as gpufilt reads them: any bytes from a file or from a pipe
 * (standard input, written in odd pieces), through libsndfile and
 * gpufilt's own scan of WAV and AIFF headers. The first two bytes pick the
 * way in, the precision and the block. A source either refuses the input
 * with a message or delivers frames until its end or an error; the scan's
 * numbers stay within the file.
 */
#include "feed.h"
#include "io/io.h"
#include "io/sndfile_format.h"

#include <stdlib.h>
#include <string.h>

/* gf_container_scan on the file: offsets and sizes within it. */
static void check_scan(int fd, uint64_t size)
{
    gf_extent x;
    if (gf_container_scan(fd, size, &x) != 0)
        return;
    if (x.offset > size || x.present > size - x.offset || x.stray > size)
        abort();
    if (!x.unknown && x.present > x.declared)
        abort();
    if (x.unknown && x.present != size - x.offset)
        abort();
}

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
    if (size < 2)
        return 0;
    const int as_pipe = data[0] & 1;
    const gf_precision p = data[0] & 2 ? GF_PRECISION_F64 : GF_PRECISION_F32;
    const size_t block = 1 + (size_t)data[1] * 16;
    const uint8_t *in = data + 2;
    const size_t n = size - 2;
    feed fd;
    if (feed_start(&fd, in, n, as_pipe, data[0] >> 2) != 0)
        return 0;
    if (!as_pipe)
        check_scan(fd.fd, n);
    const int saved = dup(STDIN_FILENO);
    if (as_pipe)
        dup2(fd.fd, STDIN_FILENO);
    gf_source s;
    char err[512] = "";
    const int rc = gf_sndfile_source_open(&s, as_pipe ? "-" : fd.path, block, err, sizeof err);
    if (rc != 0 && !err[0])
        abort();
    if (rc == 0) {
        void *out = malloc(block * (size_t)s.fmt.channels * 8);
        if (!out)
            abort();
        int64_t got;
        while ((got = s.ops->read(&s, p, out, block, err, sizeof err)) > 0)
            if ((size_t)got > block)
                abort();
        if (got < 0 && !err[0])
            abort();
        if (s.frames_read < 0 || (!as_pipe && s.fmt.frames < 0))
            abort();
        free(out);
        gf_source_close(&s);
    }
    if (as_pipe) {
        dup2(saved, STDIN_FILENO);
    }
    close(saved);
    feed_stop(&fd);
    return 0;
}
