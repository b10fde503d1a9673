/* gpufilt-mpi: OUT's sink on rank 0, the scratch files of the others, and
 * the emitters that take filtered frames to them. */
#include "io/sndfile_format.h"
#include "mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- where filtered frames go ---- */

static double sample(const gf_mpi *m, const void *frames, size_t i)
{
    return m->o.precision == GF_PRECISION_F32 ? ((const float *)frames)[i]
                                              : ((const double *)frames)[i];
}

/* The float containers' peaks as libsndfile finds them: per channel the
 * first frame of the largest |x| (of x as stored). */
static void track_peaks(gf_mpi *m, const void *frames, size_t n)
{
    for (size_t f = 0; f < n; f++)
        for (int c = 0; c < m->C; c++) {
            const double x = sample(m, frames, f * (size_t)m->C + (size_t)c);
            const double v = m->peak_float ? fabs((double)(float)x) : fabs(x);
            if (m->pk[c].pos < 0 || v > m->pk[c].abs)
                m->pk[c] = (gf_mpi_peak){.abs = v, .x = x, .pos = m->a + m->written + (int64_t)f};
        }
}

int gf_mpi_sink_write(gf_mpi *m, const void *frames, size_t n)
{
    gf_sink *k = &m->r.sink;
    int rc = k->ops->write(k, m->o.precision, frames, n, m->err, sizeof m->err);
    if (rc)
        return gf_mpi_fail(m, rc, "%s", m->err);
    return 0;
}

/* Into this rank's sink (uncompressed: rank 0's OUT, or a scratch file);
 * the first frame alone, to learn where the data starts. */
int gf_mpi_emit_sink(gf_mpi *m, const void *frames, size_t n)
{
    if (m->peaks_on)
        track_peaks(m, frames, n);
    int rc;
    if (m->written == 0) {
        if ((rc = gf_mpi_sink_write(m, frames, 1)) != 0)
            return rc;
        const off_t at = lseek(m->r.sink.out.fd, 0, SEEK_CUR);
        if (at < 0)
            return gf_mpi_fail(m, GF_EXIT_OUTPUT, "output '%s': %s", m->out_path, strerror(errno));
        m->data_start = (int64_t)at - (int64_t)m->out_fb;
        m->written = 1;
        frames = (const unsigned char *)frames + m->fb;
        n--;
    }
    if (n > 0 && (rc = gf_mpi_sink_write(m, frames, n)) != 0)
        return rc;
    m->written += (int64_t)n;
    return 0;
}

int gf_mpi_write_fd(int fd, const void *b, size_t len)
{
    const unsigned char *p = b;
    while (len > 0) {
        const ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Gathered output on ranks above 0: the samples to a scratch file. */
int gf_mpi_emit_scratch(gf_mpi *m, const void *frames, size_t n)
{
    if (gf_mpi_write_fd(m->sfd, frames, n * m->fb) != 0)
        return gf_mpi_fail(m, GF_EXIT_OUTPUT, "scratch file under '%s': %s", m->scratch_dir,
                           strerror(errno));
    m->written += (int64_t)n;
    return 0;
}

/* Uncompressed containers whose samples lie in one run of fixed-size
 * frames, which ranks can write at their offsets. */
static int fixed_frames(const gf_sink *k)
{
    if (!k->fmt.container)
        return 1; /* headerless */
    const int major = k->fmt.container & SF_FORMAT_TYPEMASK;
    const int sub = k->fmt.container & SF_FORMAT_SUBMASK;
    const int ok_major = major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX ||
                         major == SF_FORMAT_W64 || major == SF_FORMAT_RF64 ||
                         major == SF_FORMAT_AIFF || major == SF_FORMAT_CAF;
    return ok_major && (gf_sf_pcm_bits(k->fmt.container) > 0 || sub == SF_FORMAT_FLOAT ||
                        sub == SF_FORMAT_DOUBLE);
}

static int out_frame_bytes(const gf_sink *k)
{
    const size_t sb = k->fmt.container ? gf_sf_sample_bytes(k->fmt.container)
                                       : gf_raw_sample_bytes(k->fmt.sample);
    return (int)(sb * (size_t)k->fmt.channels);
}

/* Rank 0: OUT through the ordinary sink (its temporary file beside OUT),
 * and what kind of writing it takes, for every rank. */
int gf_mpi_open_output(gf_mpi *m)
{
    int kind[3] = {0, 0, 0};
    if (m->rank == 0) {
        struct stat st;
        if (strcmp(m->out_path, "-") == 0 ||
            (stat(m->out_path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)))
            gf_mpi_fail(
                m, GF_EXIT_USAGE,
                "output '%s' is not a regular file: gpufilt-mpi writes a file (write a pipe "
                "with gpufilt)",
                m->out_path);
        else if ((kind[0] = gf_run_open_outputs(&m->r)) != 0)
            gf_mpi_failed_cli(m, kind[0]);
        else if (m->r.sink.out.stream)
            gf_mpi_fail(
                m, GF_EXIT_USAGE,
                "output '%s' is not a regular file: gpufilt-mpi writes a file (write a pipe "
                "with gpufilt)",
                m->out_path);
        if (!m->rc) {
            kind[0] = !fixed_frames(&m->r.sink);
            /* Shaped dither carries each sample's error to the next: a
             * rank starting its range afresh would not write gpufilt's
             * bytes (TPDF's noise depends on the frame alone). */
            if (!kind[0] && m->size > 1 && m->r.sink.dither.kind == GF_DITHER_SHAPED)
                gf_mpi_fail(m, GF_EXIT_USAGE,
                            "--dither shaped carries each sample's error to the next, which "
                            "ranks writing their own ranges of '%s' cannot: use --dither tpdf, "
                            "or one rank",
                            m->out_path);
            kind[1] = kind[0] ? 0 : out_frame_bytes(&m->r.sink);
            /* A float container's PEAK chunk: 1 for float, 2 for double. */
            const int sub = m->r.sink.fmt.container & SF_FORMAT_SUBMASK;
            if (!kind[0] && m->r.sink.fmt.container)
                kind[2] = sub == SF_FORMAT_FLOAT ? 1 : sub == SF_FORMAT_DOUBLE ? 2 : 0;
        }
    }
    if (gf_mpi_settle(m))
        return m->rc;
    MPI_Bcast(kind, 3, MPI_INT, 0, MPI_COMM_WORLD);
    /* Rank 0's temporary files, which any rank removes if the job is
     * killed (reap.c): a rank killed cannot remove its own. */
    char tmp[3][PATH_MAX + 64];
    memset(tmp, 0, sizeof tmp);
    if (m->rank == 0) {
        const char *name[3] = {m->r.sink.out.tmp, gf_hist_out_tmp_name(m->r.hout, 0),
                               gf_hist_out_tmp_name(m->r.hout, 1)};
        for (int i = 0; i < 3; i++)
            if (name[i] && strlen(name[i]) < sizeof tmp[i])
                memcpy(tmp[i], name[i], strlen(name[i]) + 1);
    }
    MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        gf_mpi_reap_file(tmp[i]);
    m->gathered = kind[0];
    m->out_fb = (size_t)kind[1];
    m->peaks_on = kind[2] != 0; /* on every rank: merging them is collective */
    m->peak_float = kind[2] == 1;
    return 0;
}

/* Ranks above 0: where their part waits (TMPDIR, else /tmp). */
int gf_mpi_open_scratch(gf_mpi *m)
{
    if (m->rank == 0 || m->a == m->b)
        return 0;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    snprintf(m->scratch_dir, sizeof m->scratch_dir, "%s/gpufilt-mpi-XXXXXX", tmp);
    if (!mkdtemp(m->scratch_dir)) {
        const int e = errno;
        snprintf(m->scratch_dir, sizeof m->scratch_dir, "%s", tmp);
        m->scratch_dir[0] = 0;
        return gf_mpi_fail(m, GF_EXIT_OUTPUT, "cannot make a scratch directory in '%s': %s", tmp,
                           strerror(e));
    }
    gf_mpi_reap_dir(m->scratch_dir);
    char path[PATH_MAX + 64];
    if (m->gathered) {
        snprintf(path, sizeof path, "%s/samples", m->scratch_dir);
        if ((m->sfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
            return gf_mpi_fail(m, GF_EXIT_OUTPUT, "scratch file '%s': %s", path, strerror(errno));
        unlink(path);
        return 0;
    }
    /* The same sink as OUT's, named as OUT is (its extension picks the
     * container), with the same length. */
    const char *slash = strrchr(m->out_path, '/');
    snprintf(path, sizeof path, "%s/%s", m->scratch_dir, slash ? slash + 1 : m->out_path);
    char *copy = strdup(path);
    if (!copy)
        return gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    m->o.out_path = copy;
    const int rc = gf_run_open_outputs(&m->r);
    if (rc)
        return gf_mpi_failed_cli(m, rc);
    gf_mpi_reap_file(m->r.sink.out.tmp);
    /* The dither's noise is that of the range's frames in OUT. */
    m->r.sink.dither.index = (uint64_t)m->a * (uint64_t)m->C;
    return 0;
}
