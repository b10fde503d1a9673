/* What every source and sink shares: closing, committing, truncation, pipes. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#endif
#include "io/io.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

int gf_source_truncated(const gf_source *s)
{
    return s->header_note[0] != '\0' || (s->fmt.frames >= 0 && s->frames_read < s->fmt.frames);
}

void gf_source_close(gf_source *s)
{
    if (s->ops && s->ops->close)
        s->ops->close(s);
    s->ops = NULL;
    s->state = NULL;
}

int gf_sink_commit(gf_sink *k, char *err, size_t n)
{
    /* Every write was checked (an earlier ENOSPC is not reported again by
     * the encoder's close), and so are finish, fsync and close. */
    int rc = k->ops && k->ops->finish ? k->ops->finish(k, err, n) : 0;
    if (rc == 0 && k->ops && k->ops->describe)
        k->ops->describe(k, k->written_as, sizeof k->written_as);
    if (rc == 0 && gf_outfile_commit(&k->out, k->sync, err, n) != 0)
        rc = GF_EXIT_OUTPUT;
    gf_sink_abort(k);
    return rc;
}

void gf_sink_abort(gf_sink *k)
{
    if (k->ops && k->ops->close)
        k->ops->close(k);
    k->ops = NULL;
    k->state = NULL;
    gf_dither_close(&k->dither);
    gf_outfile_abort(&k->out);
}

/* A larger pipe buffer means fewer, larger reads and writes and fewer
 * context switches; failing is harmless (another size, not a pipe). */
void gf_widen_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
    (void)fd;
#endif
}
