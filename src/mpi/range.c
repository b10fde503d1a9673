/* gpufilt-mpi: the input, the engine, and the frames of this rank's range
 * (with its halo or FFT warm-up) fed through it. */
#include "mpi.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gf_mpi_open_input(gf_mpi *m)
{
    struct stat st;
    if (strcmp(m->o.in_path, "-") == 0 || (stat(m->o.in_path, &st) == 0 && !S_ISREG(st.st_mode)))
        return gf_mpi_fail(
            m, GF_EXIT_USAGE,
            "input '%s' is not a regular file: gpufilt-mpi reads each rank's part from "
            "the file itself (filter a pipe with gpufilt)",
            m->o.in_path);
    int rc = gf_run_open_input(&m->r);
    if (rc)
        return gf_mpi_failed_cli(m, rc);
    if (m->r.src.streaming || m->r.src.fmt.frames < 0)
        return gf_mpi_fail(
            m, GF_EXIT_USAGE,
            "input '%s' has no known length: gpufilt-mpi needs a file (filter a pipe "
            "with gpufilt)",
            m->o.in_path);
    m->C = m->r.src.fmt.channels;
    m->n_in = m->r.src.fmt.frames;
    if ((rc = gf_taps_ready(&m->o, m->taps, m->C, m->r.src.fmt.rate)) != 0)
        return gf_mpi_failed_cli(m, rc);
    if (m->taps->outputs)
        return gf_mpi_fail(m, GF_EXIT_USAGE,
                           "'%s' is a %d x %d matrix response: gpufilt-mpi filters each channel "
                           "into itself (filter it with gpufilt)",
                           m->taps->source, m->C, m->taps->outputs);
    m->total = m->n_in + (m->o.mode == GF_MODE_FULL ? (int64_t)m->taps->n - 1 : 0);
    if (m->hist) {
        /* Ranges on block boundaries; rank 0 writes the files. */
        m->hc = gf_cli_hist_config(&m->o, m->r.src.fmt.rate);
        m->r.hc = m->hc;
        m->r.hist = m->rank == 0;
        gf_mpi_hist_split(m);
    } else {
        const int64_t q = m->total / m->size, rem = m->total % m->size;
        m->a = m->rank * q + (m->rank < rem ? m->rank : rem);
        m->b = m->a + q + (m->rank < rem ? 1 : 0);
    }
    m->ss = m->o.precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    m->fb = (size_t)m->C * m->ss;
    return 0;
}

/* The engine: the device, method and partition one run over the whole
 * file would use, in causal mode, no hand-off. */
int gf_mpi_setup_engine(gf_mpi *m)
{
    const gf_job job = {.frames = m->n_in, .channels = m->C, .taps = m->taps->n};
    gf_device handoff = GF_DEVICE_NONE;
    char why[160];
    const gf_device device = gf_cli_choose_device(&m->o, &job, &handoff, why, sizeof why);
    gf_config c = gf_cli_engine_config(&m->o, m->C, m->taps, device, GF_DEVICE_NONE);
    c.mode = GF_MODE_CAUSAL;
    int gpus[GF_MAX_DEVICES];
    if (device == GF_DEVICE_CUDA) { /* this rank's GPU */
        c.cuda_device_count = gf_cli_choose_gpus(&m->o, &job, gpus);
        c.cuda_devices = gpus;
    }
    int rc = gf_cli_engine_create(&c, m->o.device == GF_DEVICE_AUTO, &m->e);
    if (rc)
        return gf_mpi_failed_cli(m, rc);
    if (!(m->in = malloc(BLOCK * m->fb)) || !(m->out = malloc(BLOCK * m->fb)) ||
        !(m->pk = calloc((size_t)m->C, sizeof *m->pk)))
        return gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    for (int ch = 0; ch < m->C; ch++)
        m->pk[ch].pos = -1;
    return m->hist ? gf_mpi_hist_setup(m) : 0;
}

/* ---- frames [from, to) of the input, followed by zeros, through the
 * engine ---- */

/* Which of a range's outputs are kept: the first `skip` are dropped, the
 * next `keep` emitted, the rest dropped; `at` is the next kept one's
 * output frame. */
typedef struct window {
    int64_t skip, keep, at;
    gf_mpi_emit emit;
} window;

/* Pull every output the engine has ready through the window. */
static int drain(gf_mpi *m, window *w)
{
    for (;;) {
        size_t out = 0, off = 0;
        const gf_status st = gf_engine_pull(m->e, m->out, BLOCK, &out);
        if (st != GF_OK)
            return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->e, st));
        if (out == 0)
            return 0;
        if (w->skip > 0) {
            off = (int64_t)out < w->skip ? out : (size_t)w->skip;
            w->skip -= (int64_t)off;
        }
        size_t n = out - off;
        if ((int64_t)n > w->keep)
            n = (size_t)w->keep;
        w->keep -= (int64_t)n;
        if (n > 0) {
            const unsigned char *kept = (unsigned char *)m->out + off * m->fb;
            int rc = w->emit(m, kept, n);
            if (!rc && m->hist && !m->hc.of_input)
                rc = gf_mpi_hist_feed(m, w->at, kept, n);
            if (rc)
                return rc;
            w->at += (int64_t)n;
        }
    }
}

/* Push n frames of m->in, draining as the engine fills. */
static int push(gf_mpi *m, size_t n, window *w)
{
    const unsigned char *p = m->in;
    while (n > 0) {
        size_t used = 0;
        const gf_status st = gf_engine_push(m->e, p, n, &used);
        if (st != GF_OK)
            return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->e, st));
        p += used * m->fb;
        n -= used;
        const int rc = drain(m, w);
        if (rc)
            return rc;
    }
    return 0;
}

/* Read `want` frames (at most BLOCK) of the input, which is at frame pos,
 * into m->in: the count read, or -1 after gf_mpi_fail. */
static int64_t read_frames(gf_mpi *m, int64_t pos, int64_t want)
{
    gf_source *src = &m->r.src;
    const int64_t got =
        src->ops->read(src, m->o.precision, m->in, (size_t)want, m->err, sizeof m->err);
    if (got < 0)
        gf_mpi_fail(m, GF_EXIT_INPUT, "%s", m->err);
    else if (got == 0)
        gf_mpi_fail(m, GF_EXIT_INPUT, "input '%s' ended at frame %lld, before its %lld frames",
                    m->o.in_path, (long long)pos, (long long)m->n_in);
    return got > 0 ? got : -1;
}

/* Bring the source (at its start) to frame `from`: a seek where the
 * source has one, else it decodes what comes before and drops it. */
static int skip_to(gf_mpi *m, int64_t from)
{
    gf_source *src = &m->r.src;
    if (from > m->n_in)
        from = m->n_in;
    if (from > 0 && src->ops->seek) {
        if (src->ops->seek(src, from, m->err, sizeof m->err) != 0)
            return gf_mpi_fail(m, GF_EXIT_INPUT, "%s", m->err);
        return 0;
    }
    for (int64_t pos = 0; pos < from;) {
        const int64_t want = from - pos < (int64_t)BLOCK ? from - pos : (int64_t)BLOCK;
        const int64_t got = read_frames(m, pos, want);
        if (got < 0)
            return m->rc;
        pos += got;
    }
    return 0;
}

/* Feed frames [from, to) of the input extended by zeros to the engine and
 * flush it, the outputs through the window. */
static int run_range(gf_mpi *m, int64_t from, int64_t to, window *w)
{
    int rc = skip_to(m, from);
    for (int64_t pos = from; !rc && pos < to;) {
        int64_t want = to - pos < (int64_t)BLOCK ? to - pos : (int64_t)BLOCK, got = want;
        if (pos < m->n_in) {
            got = read_frames(m, pos, want < m->n_in - pos ? want : m->n_in - pos);
            if (got < 0)
                return m->rc;
            if (m->hist && m->hc.of_input && (rc = gf_mpi_hist_feed(m, pos, m->in, (size_t)got)))
                return rc;
        } else {
            memset(m->in, 0, (size_t)want * m->fb);
        }
        rc = push(m, (size_t)got, w);
        pos += got;
    }
    if (rc)
        return rc;
    const gf_status st = gf_engine_flush(m->e);
    if (st != GF_OK)
        return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->e, st));
    return drain(m, w);
}

/* --normalize's first pass: the output measured, not kept. */
static int emit_measure(gf_mpi *m, const void *frames, size_t n)
{
    gf_run_measure(&m->r, frames, n);
    return 0;
}

/* --normalize's second pass: the output times the gain, rounded once to
 * the precision (gpufilt's one-tap engine computes the same product), on
 * to its sink or scratch file. */
static int emit_scaled(gf_mpi *m, const void *frames, size_t n)
{
    const size_t count = n * (size_t)m->C;
    if (n > m->scaled_cap) {
        void *p = realloc(m->scaled, n * m->fb);
        if (!p)
            return gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
        m->scaled = p;
        m->scaled_cap = n;
    }
    if (m->o.precision == GF_PRECISION_F32) {
        const float g = (float)m->gain, *y = frames;
        float *z = m->scaled;
        for (size_t i = 0; i < count; i++)
            z[i] = g * y[i];
    } else {
        const double *y = frames;
        double *z = m->scaled;
        for (size_t i = 0; i < count; i++)
            z[i] = m->gain * y[i];
    }
    return m->gathered && m->rank > 0 ? gf_mpi_emit_scratch(m, m->scaled, n)
                                      : gf_mpi_emit_sink(m, m->scaled, n);
}

static int filter_with(gf_mpi *m, gf_mpi_emit emit);

int gf_mpi_normalize(gf_mpi *m)
{
    m->r.out_ch = m->C;
    int rc = filter_with(m, emit_measure);
    struct {
        double peak, top;
    } mine = {m->r.peak, m->r.peak_pos}, all;
    double sums[2] = {m->r.sumsq, (double)m->r.samples}, total[2];
    if (!rc) {
        /* (the ranks' sums of squares are added in rank order: an RMS may
         * differ from one process's in its last bits; a peak does not) */
        MPI_Allreduce(&mine, &all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        m->r.peak = all.peak;
        m->r.peak_pos = all.top;
        m->r.sumsq = total[0];
        m->r.samples = (uint64_t)total[1];
        m->gain = m->rank == 0 ? gf_run_norm_gain(&m->r) : 0;
        MPI_Bcast(&m->gain, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else {
        /* the other ranks wait in the reductions: take part, then settle */
        MPI_Allreduce(&mine, &all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(&m->gain, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return rc;
    }
    /* The second pass from the start: the engine emptied, the source
     * rewound (seek, or opened again where it cannot seek). */
    const gf_status st = gf_engine_reset(m->e);
    if (st != GF_OK)
        return gf_mpi_failed_cli(m, gf_cli_engine_failed(m->e, st));
    gf_source *src = &m->r.src;
    if (src->ops->seek)
        return src->ops->seek(src, 0, m->err, sizeof m->err) != 0
                   ? gf_mpi_fail(m, GF_EXIT_INPUT, "%s", m->err)
                   : 0;
    gf_source_close(src);
    if ((rc = gf_run_open_input(&m->r)) != 0)
        return gf_mpi_failed_cli(m, rc);
    return 0;
}

/* Filter this rank's range into its sink or scratch file (with
 * --normalize, scaled by the gain gf_mpi_normalize chose). */
int gf_mpi_filter_range(gf_mpi *m)
{
    return filter_with(m, !isnan(m->o.normalize_db)    ? emit_scaled
                          : m->gathered && m->rank > 0 ? gf_mpi_emit_scratch
                                                       : gf_mpi_emit_sink);
}

static int filter_with(gf_mpi *m, gf_mpi_emit emit)
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
    window w = {.skip = ca - s, .keep = cb - ca, .at = m->a, .emit = emit};
    const int rc = run_range(m, s, end, &w);
    return rc || !m->hist ? rc : gf_mpi_hist_finish(m);
}
