/*
 * gpufilt-mpi: one file filtered by many processes (mpirun -np N
 * gpufilt-mpi IN OUT FILTER [options]), with the bytes of one gpufilt run.
 *
 * Rank r owns a contiguous range [a, b) of the output frames. Every output
 * frame is a frame of the causal filter (same mode: shifted by (T-1)/2;
 * full mode: the input followed by T-1 zeros), so a rank runs a causal
 * engine over the input from a start s before its range and discards the
 * first outputs: s = a - (T-1) for the direct method (the halo), and for
 * the FFT method the partition boundary K partitions before the one that
 * holds a, so that every block it keeps sees the same input blocks as one
 * run does (the partition, like the method and the device, is chosen from
 * the filter and the whole job, as gpufilt chooses it). The input is read
 * from the file itself: a pipe is refused.
 *
 * Writing, through the CLI's own sinks (so quantisation, clipping, headers
 * and metadata are gpufilt's):
 *   uncompressed containers (WAV, W64, RF64, AIFF, CAF with PCM or float
 *   samples) and --out-raw: rank 0 writes OUT's temporary file through the
 *   ordinary sink with the final length, its own frames and zeros for the
 *   others' (with the float containers' peaks put where they are, so the
 *   PEAK chunk is one run's); every other rank encodes its range through
 *   the same sink into a scratch file under TMPDIR and writes its data
 *   bytes at their offset with MPI-IO (MPI_File_write_at_all); rank 0 then
 *   finishes the header and renames the file into place.
 *   other outputs (FLAC, Ogg, ...): every rank filters its range at once
 *   (ranks above 0 into a scratch file of samples), then sends it to rank 0
 *   in rank order, which writes it through the ordinary sink.
 * Every phase ends with an MPI_Allreduce of the ranks' status: a failure on
 * any rank ends the job on every rank with that exit code, one line from
 * rank 0 naming the rank and the reason, and no file under OUT's name.
 */
#include "filter_run.h"
#include "io/sndfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK  ((size_t)65536)   /* frames per read, push and write */
#define PIECE  ((size_t)4 << 20) /* bytes per MPI message and MPI-IO call */
#define ERRLEN 512

typedef struct peak {
    double abs;  /* |x| as the container keeps it (float: |(float)x|) */
    double x;    /* the sample */
    int64_t pos; /* output frame; -1: none */
} peak;

typedef struct mrun {
    int rank, size;
    gf_cli_options o; /* the options; out_path is the scratch file's on ranks above 0 */
    const char *out_path;
    gf_taps *taps;
    volatile sig_atomic_t stop;
    gf_run r; /* the CLI's run: its source and sink */
    int C;
    size_t ss, fb;       /* bytes per sample and per frame, in the engine's precision */
    int64_t n_in, total; /* input and output frames */
    int64_t a, b;        /* this rank's output frames */
    int gathered;        /* the output is compressed: gathered by rank 0 */
    size_t out_fb;       /* bytes per frame in the output's data (uncompressed) */
    int peaks_on;        /* float container: PEAK chunk */
    int peak_float;      /* ... of float samples */
    peak *pk;            /* per channel */
    int64_t data_start;  /* offset of this sink's first frame */
    int64_t written;     /* frames of the range emitted so far */
    char scratch_dir[PATH_MAX];
    int sfd; /* gathered: the scratch file of samples, or -1 */
    gf_engine *e;
    void *in, *out;
    char err[ERRLEN];
    int rc;
} mrun;

/* ---- errors: one status per rank, settled at phase boundaries ---- */

static int fail(mrun *m, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(mrun *m, int rc, const char *fmt, ...)
{
    if (!m->rc) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->err, sizeof m->err, fmt, ap);
        va_end(ap);
        m->rc = rc;
    }
    return rc;
}

/* A CLI function failed with rc after printing (kept) one line. */
static int failed_cli(mrun *m, int rc)
{
    const char *msg = NULL;
    for (size_t i = 0; gf_cli_kept_message(1, i); i++)
        msg = gf_cli_kept_message(1, i);
    return fail(m, rc, "%s", msg ? msg : "failed");
}

/* Every rank's status: the first failed rank's exit code and message on
 * every rank (0 when all succeeded). */
static int settle(mrun *m)
{
    int mine = m->rc ? m->rank : m->size, first = m->size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == m->size)
        return 0;
    int rc = m->rc;
    char err[ERRLEN];
    memcpy(err, m->err, sizeof err);
    MPI_Bcast(&rc, 1, MPI_INT, first, MPI_COMM_WORLD);
    MPI_Bcast(err, sizeof err, MPI_CHAR, first, MPI_COMM_WORLD);
    err[sizeof err - 1] = 0;
    /* Rank 0's one line names the rank that failed. */
    m->rc = rc;
    snprintf(m->err, sizeof m->err, "rank %d: %.*s", first, ERRLEN - 32, err);
    return rc;
}

/* ---- the input: frames [from, to) of the input followed by zeros ---- */

/* Frames [off, out) of m->out to emit, at most *keep of them. */
static int pass(mrun *m, size_t off, size_t out, int64_t *keep,
                int (*emit)(mrun *, const void *, size_t))
{
    size_t n = off < out ? out - off : 0;
    if ((int64_t)n > *keep)
        n = (size_t)*keep;
    *keep -= (int64_t)n;
    return n ? emit(m, (unsigned char *)m->out + off * m->fb, n) : 0;
}

/* Read frames [from, to) of the input extended by zeros into the engine,
 * pulling as it goes. The source is read from its start (frames before
 * `from` are decoded and dropped). */
static int run_range(mrun *m, int64_t from, int64_t to, int64_t skip, int64_t keep,
                     int (*emit)(mrun *, const void *, size_t))
{
    gf_source *src = &m->r.src;
    int64_t pos = 0;
    int rc;
    /* Drop what comes before the range (and count what is dropped). */
    while (pos < from && pos < m->n_in) {
        const int64_t want = from - pos < (int64_t)BLOCK ? from - pos : (int64_t)BLOCK;
        const int64_t got =
            src->ops->read(src, m->o.precision, m->in, (size_t)want, m->err, sizeof m->err);
        if (got < 0)
            return fail(m, GF_EXIT_INPUT, "%s", m->err);
        if (got == 0)
            return fail(m, GF_EXIT_INPUT, "input '%s' ended at frame %lld, before its %lld frames",
                        m->o.in_path, (long long)pos, (long long)m->n_in);
        pos += got;
    }
    pos = from;
    while (pos < to) {
        int64_t want = to - pos < (int64_t)BLOCK ? to - pos : (int64_t)BLOCK, got = want;
        if (pos < m->n_in) {
            if (want > m->n_in - pos)
                want = m->n_in - pos;
            got = src->ops->read(src, m->o.precision, m->in, (size_t)want, m->err, sizeof m->err);
            if (got < 0)
                return fail(m, GF_EXIT_INPUT, "%s", m->err);
            if (got == 0)
                return fail(m, GF_EXIT_INPUT,
                            "input '%s' ended at frame %lld, before its %lld frames", m->o.in_path,
                            (long long)pos, (long long)m->n_in);
        } else {
            memset(m->in, 0, (size_t)want * m->fb);
        }
        const unsigned char *p = m->in;
        size_t left = (size_t)got;
        while (left > 0) {
            size_t used = 0;
            gf_status st = gf_engine_push(m->e, p, left, &used);
            if (st != GF_OK)
                return failed_cli(m, gf_cli_engine_failed(m->e, st));
            p += used * m->fb;
            left -= used;
            for (;;) {
                size_t out = 0;
                if ((st = gf_engine_pull(m->e, m->out, BLOCK, &out)) != GF_OK)
                    return failed_cli(m, gf_cli_engine_failed(m->e, st));
                if (out == 0)
                    break;
                size_t off = 0;
                if (skip > 0) {
                    off = (int64_t)out < skip ? out : (size_t)skip;
                    skip -= (int64_t)off;
                }
                if ((rc = pass(m, off, out, &keep, emit)) != 0)
                    return rc;
            }
        }
        pos += got;
    }
    gf_status st = gf_engine_flush(m->e);
    if (st != GF_OK)
        return failed_cli(m, gf_cli_engine_failed(m->e, st));
    for (;;) {
        size_t out = 0;
        if ((st = gf_engine_pull(m->e, m->out, BLOCK, &out)) != GF_OK)
            return failed_cli(m, gf_cli_engine_failed(m->e, st));
        if (out == 0)
            break;
        size_t off = 0;
        if (skip > 0) {
            off = (int64_t)out < skip ? out : (size_t)skip;
            skip -= (int64_t)off;
        }
        if ((rc = pass(m, off, out, &keep, emit)) != 0)
            return rc;
    }
    return 0;
}

/* ---- where filtered frames go ---- */

static double sample(const mrun *m, const void *frames, size_t i)
{
    return m->o.precision == GF_PRECISION_F32 ? ((const float *)frames)[i]
                                              : ((const double *)frames)[i];
}

/* The float containers' peaks as libsndfile finds them: per channel the
 * first frame of the largest |x| (of x as stored). */
static void track_peaks(mrun *m, const void *frames, size_t n)
{
    for (size_t f = 0; f < n; f++)
        for (int c = 0; c < m->C; c++) {
            const double x = sample(m, frames, f * (size_t)m->C + (size_t)c);
            const double v = m->peak_float ? fabs((double)(float)x) : fabs(x);
            if (m->pk[c].pos < 0 || v > m->pk[c].abs)
                m->pk[c] = (peak){.abs = v, .x = x, .pos = m->a + m->written + (int64_t)f};
        }
}

static int sink_write(mrun *m, const void *frames, size_t n)
{
    gf_sink *k = &m->r.sink;
    int rc = k->ops->write(k, m->o.precision, frames, n, m->err, sizeof m->err);
    if (rc)
        return fail(m, rc, "%s", m->err);
    return 0;
}

/* Into this rank's sink (uncompressed: rank 0's OUT, or a scratch file);
 * the first frame alone, to learn where the data starts. */
static int emit_sink(mrun *m, const void *frames, size_t n)
{
    if (m->peaks_on)
        track_peaks(m, frames, n);
    int rc;
    if (m->written == 0) {
        if ((rc = sink_write(m, frames, 1)) != 0)
            return rc;
        const off_t at = lseek(m->r.sink.out.fd, 0, SEEK_CUR);
        if (at < 0)
            return fail(m, GF_EXIT_OUTPUT, "output '%s': %s", m->out_path, strerror(errno));
        m->data_start = (int64_t)at - (int64_t)m->out_fb;
        m->written = 1;
        frames = (const unsigned char *)frames + m->fb;
        n--;
    }
    if (n > 0 && (rc = sink_write(m, frames, n)) != 0)
        return rc;
    m->written += (int64_t)n;
    return 0;
}

static int write_fd(int fd, const void *b, size_t len)
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
static int emit_scratch(mrun *m, const void *frames, size_t n)
{
    if (write_fd(m->sfd, frames, n * m->fb) != 0)
        return fail(m, GF_EXIT_OUTPUT, "scratch file under '%s': %s", m->scratch_dir,
                    strerror(errno));
    m->written += (int64_t)n;
    return 0;
}

/* ---- the phases ---- */

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

/* Open the input (a regular file: ranks read it at their offsets) and the
 * filter. */
static int open_input(mrun *m)
{
    struct stat st;
    if (strcmp(m->o.in_path, "-") == 0 || (stat(m->o.in_path, &st) == 0 && !S_ISREG(st.st_mode)))
        return fail(m, GF_EXIT_USAGE,
                    "input '%s' is not a regular file: gpufilt-mpi reads each rank's part from "
                    "the file itself (filter a pipe with gpufilt)",
                    m->o.in_path);
    int rc = gf_run_open_input(&m->r);
    if (rc)
        return failed_cli(m, rc);
    if (m->r.src.streaming || m->r.src.fmt.frames < 0)
        return fail(m, GF_EXIT_USAGE,
                    "input '%s' has no known length: gpufilt-mpi needs a file (filter a pipe "
                    "with gpufilt)",
                    m->o.in_path);
    m->C = m->r.src.fmt.channels;
    m->n_in = m->r.src.fmt.frames;
    if ((rc = gf_taps_ready(&m->o, m->taps, m->C, m->r.src.fmt.rate)) != 0)
        return failed_cli(m, rc);
    m->total = m->n_in + (m->o.mode == GF_MODE_FULL ? (int64_t)m->taps->n - 1 : 0);
    const int64_t q = m->total / m->size, rem = m->total % m->size;
    m->a = m->rank * q + (m->rank < rem ? m->rank : rem);
    m->b = m->a + q + (m->rank < rem ? 1 : 0);
    m->ss = m->o.precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    m->fb = (size_t)m->C * m->ss;
    return 0;
}

/* The engine: the device, method and partition one run over the whole
 * file would use, in causal mode, no hand-off. */
static int setup_engine(mrun *m)
{
    const gf_job job = {.frames = m->n_in, .channels = m->C, .taps = m->taps->n};
    gf_device handoff = GF_DEVICE_NONE;
    char why[160];
    const gf_device device = gf_cli_choose_device(&m->o, &job, &handoff, why, sizeof why);
    gf_config c = gf_cli_engine_config(&m->o, m->C, m->taps, device, GF_DEVICE_NONE);
    c.mode = GF_MODE_CAUSAL;
    int rc = gf_cli_engine_create(&c, m->o.device == GF_DEVICE_AUTO, &m->e);
    if (rc)
        return failed_cli(m, rc);
    if (!(m->in = malloc(BLOCK * m->fb)) || !(m->out = malloc(BLOCK * m->fb)) ||
        !(m->pk = calloc((size_t)m->C, sizeof *m->pk)))
        return fail(m, GF_EXIT_INTERNAL, "out of memory");
    for (int ch = 0; ch < m->C; ch++)
        m->pk[ch].pos = -1;
    return 0;
}

/* Rank 0: OUT through the ordinary sink (its temporary file beside OUT),
 * and what kind of writing it takes, for every rank. */
static int open_output(mrun *m)
{
    int kind[3] = {0, 0, 0};
    if (m->rank == 0) {
        struct stat st;
        if (strcmp(m->out_path, "-") == 0 ||
            (stat(m->out_path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)))
            fail(m, GF_EXIT_USAGE,
                 "output '%s' is not a regular file: gpufilt-mpi writes a file (write a pipe "
                 "with gpufilt)",
                 m->out_path);
        else if ((kind[0] = gf_run_open_outputs(&m->r)) != 0)
            failed_cli(m, kind[0]);
        else if (m->r.sink.out.stream)
            fail(m, GF_EXIT_USAGE,
                 "output '%s' is not a regular file: gpufilt-mpi writes a file (write a pipe "
                 "with gpufilt)",
                 m->out_path);
        if (!m->rc) {
            kind[0] = !fixed_frames(&m->r.sink);
            kind[1] = kind[0] ? 0 : out_frame_bytes(&m->r.sink);
            /* A float container's PEAK chunk: 1 for float, 2 for double. */
            const int sub = m->r.sink.fmt.container & SF_FORMAT_SUBMASK;
            if (!kind[0] && m->r.sink.fmt.container)
                kind[2] = sub == SF_FORMAT_FLOAT ? 1 : sub == SF_FORMAT_DOUBLE ? 2 : 0;
        }
    }
    if (settle(m))
        return m->rc;
    MPI_Bcast(kind, 3, MPI_INT, 0, MPI_COMM_WORLD);
    m->gathered = kind[0];
    m->out_fb = (size_t)kind[1];
    m->peaks_on = kind[2] != 0; /* on every rank: merging them is collective */
    m->peak_float = kind[2] == 1;
    return 0;
}

/* Ranks above 0: where their part waits (TMPDIR, else /tmp). */
static int open_scratch(mrun *m)
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
        return fail(m, GF_EXIT_OUTPUT, "cannot make a scratch directory in '%s': %s", tmp,
                    strerror(e));
    }
    char path[PATH_MAX + 64];
    if (m->gathered) {
        snprintf(path, sizeof path, "%s/samples", m->scratch_dir);
        if ((m->sfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
            return fail(m, GF_EXIT_OUTPUT, "scratch file '%s': %s", path, strerror(errno));
        unlink(path);
        return 0;
    }
    /* The same sink as OUT's, named as OUT is (its extension picks the
     * container), with the same length. */
    const char *slash = strrchr(m->out_path, '/');
    snprintf(path, sizeof path, "%s/%s", m->scratch_dir, slash ? slash + 1 : m->out_path);
    char *copy = strdup(path);
    if (!copy)
        return fail(m, GF_EXIT_INTERNAL, "out of memory");
    m->o.out_path = copy;
    const int rc = gf_run_open_outputs(&m->r);
    return rc ? failed_cli(m, rc) : 0;
}

/* Filter this rank's range into its sink or scratch file. */
static int filter_range(mrun *m)
{
    if (m->a == m->b)
        return 0;
    const size_t T = m->taps->n;
    const int64_t D = m->o.mode == GF_MODE_SAME ? (int64_t)(T - 1) / 2 : 0;
    const int64_t ca = m->a + D, cb = m->b + D;
    int64_t s, end = cb;
    if (gf_engine_method(m->e) == GF_METHOD_FFT) {
        /* Whole partitions, as one run feeds them: from K before the one
         * holding ca (the delay line's warm-up, output dropped) to the end
         * of the one holding cb - 1 (an FFT block mixes every frame of its
         * partition, so the frames after cb are fed as one run has them,
         * and their outputs dropped). */
        const int64_t P = (int64_t)gf_engine_partition(m->e);
        const int64_t K = ((int64_t)T + P - 1) / P;
        s = (ca / P - K) * P;
        end = (cb + P - 1) / P * P;
    } else {
        s = ca - (int64_t)(T - 1);
    }
    if (s < 0)
        s = 0;
    return run_range(m, s, end, ca - s, cb - ca,
                     m->gathered && m->rank > 0 ? emit_scratch : emit_sink);
}

/* The peaks of every rank, merged in stream order (the first of the
 * largest), where rank 0 needs them. */
static int merge_peaks(mrun *m, peak *all)
{
    const int n = m->C * 3;
    double *mine = malloc((size_t)n * sizeof *mine), *every = NULL;
    if (m->rank == 0)
        every = malloc((size_t)n * (size_t)m->size * sizeof *every);
    if (!mine || (m->rank == 0 && !every)) {
        free(mine);
        free(every);
        return -1;
    }
    for (int c = 0; c < m->C; c++) {
        mine[3 * c] = m->pk[c].abs;
        mine[3 * c + 1] = m->pk[c].x;
        mine[3 * c + 2] = (double)m->pk[c].pos; /* exact below 2^53 frames */
    }
    MPI_Gather(mine, n, MPI_DOUBLE, every, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (m->rank == 0)
        for (int c = 0; c < m->C; c++) {
            all[c].pos = -1;
            for (int r = 0; r < m->size; r++) {
                const double *v = every + (size_t)r * (size_t)n + 3 * (size_t)c;
                if (v[2] >= 0 && (all[c].pos < 0 || v[0] > all[c].abs))
                    all[c] = (peak){.abs = v[0], .x = v[1], .pos = (int64_t)v[2]};
            }
        }
    free(mine);
    free(every);
    return 0;
}

/* Rank 0, fixed-size frames: the rest of OUT's frames as zeros (the
 * peaks in place), so that the sink's header counts them all. */
static int write_rest(mrun *m, const peak *all)
{
    memset(m->out, 0, BLOCK * m->fb);
    for (int64_t f = m->b; f < m->total;) {
        const size_t n = m->total - f < (int64_t)BLOCK ? (size_t)(m->total - f) : BLOCK;
        for (int c = 0; all && c < m->C; c++)
            if (all[c].pos >= f && all[c].pos < f + (int64_t)n) {
                const size_t i = (size_t)(all[c].pos - f) * (size_t)m->C + (size_t)c;
                if (m->o.precision == GF_PRECISION_F32)
                    ((float *)m->out)[i] = (float)all[c].x;
                else
                    ((double *)m->out)[i] = all[c].x;
            }
        const int rc = sink_write(m, m->out, n);
        if (rc)
            return rc;
        memset(m->out, 0, n * m->fb);
        f += (int64_t)n;
    }
    return 0;
}

/* Every rank's data bytes at their offset in OUT's temporary file. */
static int write_parts(mrun *m)
{
    /* Rank 0's temporary file and where its data starts. */
    char tmp[PATH_MAX + 64];
    int64_t start = m->data_start;
    memset(tmp, 0, sizeof tmp);
    if (m->rank == 0)
        snprintf(tmp, sizeof tmp, "%s", m->r.sink.out.tmp ? m->r.sink.out.tmp : "");
    MPI_Bcast(tmp, sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&start, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    /* Ranks above 0: their scratch sink finished, its data read back. */
    uint64_t bytes = 0;
    int64_t from = 0;
    unsigned char *buf = NULL;
    if (m->rank > 0 && m->a < m->b) {
        gf_sink *k = &m->r.sink;
        if (k->ops->finish && k->ops->finish(k, m->err, sizeof m->err) != 0)
            fail(m, GF_EXIT_OUTPUT, "%s", m->err);
        bytes = (uint64_t)(m->b - m->a) * m->out_fb;
        from = m->data_start;
        if (!(buf = malloc(PIECE)))
            fail(m, GF_EXIT_INTERNAL, "out of memory");
    }
    if (settle(m)) {
        free(buf);
        return m->rc;
    }
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        free(buf);
        char why[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, why, &len);
        fail(m, GF_EXIT_OUTPUT, "MPI-IO cannot open output '%s': %s", m->out_path, why);
        return settle(m);
    }
    uint64_t rounds = (bytes + PIECE - 1) / PIECE, most = 0;
    MPI_Allreduce(&rounds, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    const int64_t at = start + (m->a) * (int64_t)m->out_fb;
    for (uint64_t i = 0; i < most; i++) {
        size_t len = 0;
        if (i * PIECE < bytes && !m->rc) {
            len = bytes - i * PIECE < PIECE ? (size_t)(bytes - i * PIECE) : PIECE;
            const ssize_t got =
                pread(m->r.sink.out.fd, buf, len, (off_t)(from + (int64_t)(i * PIECE)));
            if (got != (ssize_t)len) {
                fail(m, GF_EXIT_OUTPUT, "reading back the scratch file: %s",
                     got < 0 ? strerror(errno) : "short read");
                len = 0;
            }
        }
        MPI_Status st;
        if (MPI_File_write_at_all(fh, (MPI_Offset)(at + (int64_t)(i * PIECE)), buf, (int)len,
                                  MPI_BYTE, &st) != MPI_SUCCESS)
            fail(m, GF_EXIT_OUTPUT, "writing output '%s' at its offset: MPI-IO failed",
                 m->out_path);
    }
    free(buf);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        fail(m, GF_EXIT_OUTPUT, "closing output '%s' (MPI-IO) failed", m->out_path);
    return settle(m);
}

/* Gathered output: each rank's samples to rank 0 in order, through OUT's
 * sink. */
static int gather_parts(mrun *m)
{
    for (int r = 1; r < m->size; r++) {
        int64_t frames = m->rank == r ? m->written : 0;
        if (m->rank == r)
            MPI_Send(&frames, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
        else if (m->rank == 0)
            MPI_Recv(&frames, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (m->rank != r && m->rank != 0)
            continue;
        const size_t per = PIECE / m->fb ? PIECE / m->fb : 1;
        for (int64_t f = 0; f < frames; f += (int64_t)per) {
            const size_t n = frames - f < (int64_t)per ? (size_t)(frames - f) : per;
            const size_t len = n * m->fb;
            unsigned char *buf = m->rank == 0 ? m->out : m->in;
            if (m->rank == r) {
                if (pread(m->sfd, buf, len, (off_t)(f * (int64_t)m->fb)) != (ssize_t)len)
                    memset(buf, 0, len); /* cannot happen after a good write; rank 0 checks count */
                MPI_Send(buf, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, (int)len, MPI_BYTE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (!m->rc)
                    sink_write(m, buf, n);
            }
        }
    }
    return settle(m);
}

static int run(mrun *m)
{
    m->r.o = &m->o;
    m->r.taps = m->taps;
    m->r.stop = &m->stop;
    m->r.sink.out.fd = -1;
    m->sfd = -1;
    open_input(m);
    if (settle(m))
        return m->rc;
    setup_engine(m);
    if (settle(m))
        return m->rc;
    if (open_output(m))
        return m->rc;
    /* Buffers of the gathered path hold PIECE bytes. */
    if (m->gathered && PIECE > BLOCK * m->fb) {
        void *in = realloc(m->in, PIECE), *out = in ? realloc(m->out, PIECE) : NULL;
        if (in)
            m->in = in;
        if (out)
            m->out = out;
        if (!in || !out)
            fail(m, GF_EXIT_INTERNAL, "out of memory");
    }
    open_scratch(m);
    if (settle(m))
        return m->rc;
    filter_range(m);
    if (settle(m))
        return m->rc;
    if (m->gathered) {
        if (gather_parts(m))
            return m->rc;
    } else {
        peak *all = m->rank == 0 ? calloc((size_t)m->C, sizeof *all) : NULL;
        if ((m->rank == 0 && !all) || (m->peaks_on && merge_peaks(m, all) != 0))
            fail(m, GF_EXIT_INTERNAL, "out of memory");
        if (!m->peaks_on && m->rank == 0)
            for (int c = 0; c < m->C; c++)
                all[c].pos = -1;
        if (m->rank == 0 && !m->rc)
            write_rest(m, all);
        free(all);
        if (settle(m))
            return m->rc;
        if (write_parts(m))
            return m->rc;
    }
    /* Rank 0 finishes the header and renames OUT into place. */
    uint64_t clipped = m->r.sink.clipped, all_clipped = 0;
    if (m->rank > 0)
        gf_sink_abort(&m->r.sink);
    MPI_Reduce(&clipped, &all_clipped, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (m->rank == 0) {
        m->r.sink.clipped = all_clipped;
        const int rc = gf_run_commit(&m->r);
        if (rc)
            failed_cli(m, rc);
    }
    return settle(m);
}

static void cleanup(mrun *m)
{
    gf_sink_abort(&m->r.sink);
    gf_source_close(&m->r.src);
    gf_engine_destroy(m->e);
    if (m->sfd >= 0)
        close(m->sfd);
    if (m->scratch_dir[0])
        rmdir(m->scratch_dir);
    if (m->o.out_path != m->out_path)
        free((char *)m->o.out_path);
    free(m->in);
    free(m->out);
    free(m->pk);
}

/* stderr to /dev/null; returns the saved descriptor, or -1. */
static int quiet_stderr(void)
{
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0)
        return -1;
    const int saved = dup(STDERR_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
    return saved;
}

/* What gpufilt-mpi does not do (yet): refused before any work. */
static const char *refused(const gf_cli_options *o)
{
    if (o->action == GF_ACTION_BATCH)
        return "--out-dir (a batch) is not supported by gpufilt-mpi yet: run gpufilt --out-dir";
    if (o->action != GF_ACTION_FILTER)
        return "gpufilt-mpi filters one file: IN OUT and a filter (--live, --list-devices and "
               "design-only runs are gpufilt's)";
    if (o->hist_path || o->hist_png)
        return "--hist and --hist-png are not supported by gpufilt-mpi yet: run gpufilt for "
               "histograms";
    if (o->verify)
        return "--verify is not supported by gpufilt-mpi: run gpufilt --verify";
    if (o->json_summary)
        return "--json-summary is not supported by gpufilt-mpi";
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    mrun m;
    memset(&m, 0, sizeof m);
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.size);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    /* One voice: while the job runs every rank's messages are kept, not
     * printed; in the end rank 0 prints its warnings and, on failure, the
     * one line naming the rank that failed. Usage errors come first, from
     * rank 0. */
    int saved_err = -1;
    gf_cli_options o;
    if (m.rank > 0)
        saved_err = quiet_stderr();
    int rc = gf_cli_parse(argc, argv, &o);
    if (rc || o.action == GF_ACTION_DONE) {
        MPI_Finalize();
        return rc;
    }
    const char *no = refused(&o);
    if (no) {
        if (m.rank == 0)
            fprintf(stderr, "gpufilt-mpi: error: %s\n", no);
        MPI_Finalize();
        return GF_EXIT_USAGE;
    }
    o.quiet = 1;
    m.o = o;
    gf_cli_keep_messages();
    if (m.rank == 0)
        saved_err = quiet_stderr();
    m.out_path = o.out_path;
    gf_taps taps;
    memset(&taps, 0, sizeof taps);
    if ((rc = gf_taps_load(&o, &taps)) != 0)
        failed_cli(&m, rc);
    m.taps = &taps;
    rc = m.rc ? settle(&m) : run(&m);
    cleanup(&m);
    gf_taps_free(&taps);
    if (saved_err >= 0) {
        dup2(saved_err, STDERR_FILENO);
        close(saved_err);
    }
    if (m.rank == 0) {
        for (size_t i = 0; gf_cli_kept_message(0, i); i++)
            fprintf(stderr, "gpufilt-mpi: warning: %s\n", gf_cli_kept_message(0, i));
        if (rc)
            fprintf(stderr, "gpufilt-mpi: error: %s\n", m.err);
    }
    MPI_Finalize();
    return rc;
}
