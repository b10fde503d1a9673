/*
 * gpufilt-mpi, a batch (FILTER --out-dir DIR IN...): whole files dealt to
 * ranks as they become free, largest first, each filtered by gpufilt's own
 * per-file step (batch.h), so every output is gpufilt --out-dir's, and
 * failures and --skip-existing are its too.
 *
 * The deal: rank 0 orders the files by size (largest first, ties in the
 * order given) and every rank takes the next one from a counter in a
 * window on rank 0 with MPI_Fetch_and_op, an atomic fetch-and-add. Rank 0
 * filters files like any other rank, and no rank waits on another to hand
 * it work: the counter is the only state they share (within a node and on
 * networks with remote atomics no rank's progress is needed; elsewhere the
 * MPI library may wait for rank 0's next MPI call).
 *
 * What a file's run says (its errors and warnings, gpufilt's lines) is
 * caught per file; at the end every rank sends its files' outcomes to rank
 * 0, which says them in the batch's order, then one summary line. The exit
 * code is gpufilt's: the first failed file's (in the batch's order), else 0.
 */
#include "batch.h"
#include "mpi.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEXT_MAX 4096 /* bytes of one file's messages kept */

/* One file's outcome, as ranks send it to rank 0 (one build on every
 * rank), followed by `len` bytes of its messages. */
typedef struct outcome {
    int64_t file;
    int32_t rc, skipped;
    uint64_t in_bytes, out_bytes; /* filtered files: input and output sizes */
    uint32_t len;
    uint32_t pad;
} outcome;

typedef struct results {
    unsigned char *p;
    size_t len, cap;
} results;

static int add(results *r, const void *b, size_t n)
{
    if (r->len + n > r->cap) {
        const size_t cap = 2 * (r->len + n) + 4096;
        unsigned char *p = realloc(r->p, cap);
        if (!p)
            return -1;
        r->p = p;
        r->cap = cap;
    }
    memcpy(r->p + r->len, b, n);
    r->len += n;
    return 0;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Largest first; ties in the order given. */
static const uint64_t *g_sizes;
static int by_size(const void *pa, const void *pb)
{
    const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    if (g_sizes[a] != g_sizes[b])
        return g_sizes[a] < g_sizes[b] ? 1 : -1;
    return a < b ? -1 : a > b;
}

/* Rank 0: the order of the files. */
static int order_files(const gf_batch *b, int64_t *order)
{
    uint64_t *sizes = malloc(b->n * sizeof *sizes);
    if (!sizes)
        return -1;
    for (size_t i = 0; i < b->n; i++) {
        sizes[i] = file_size(b->in[i]);
        order[i] = (int64_t)i;
    }
    g_sizes = sizes;
    qsort(order, b->n, sizeof *order, by_size);
    free(sizes);
    return 0;
}

/* A descriptor standing in for stderr while a file runs: an unlinked
 * file in TMPDIR. */
static int catcher(gf_mpi *m)
{
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/gpufilt-mpi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0)
        return gf_mpi_fail(m, GF_EXIT_OUTPUT, "cannot make a scratch file in '%s': %s",
                           tmp && *tmp ? tmp : "/tmp", strerror(errno)),
               -1;
    unlink(path);
    return fd;
}

/* File i, its messages caught in fd: its outcome into r. */
static int one_file(gf_mpi *m, const gf_batch *b, int64_t i, int fd, results *r)
{
    char text[TEXT_MAX];
    outcome oc = {.file = i};
    int skipped = 0;
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
        return gf_mpi_fail(m, GF_EXIT_OUTPUT, "scratch file: %s", strerror(errno));
    const int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    oc.rc = gf_batch_file(&m->o, m->taps, b, (size_t)i, &m->stop, &skipped);
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
    oc.skipped = skipped;
    if (oc.rc == 0 && !skipped) {
        oc.in_bytes = file_size(b->in[i]);
        oc.out_bytes = file_size(b->out[i]);
    }
    const ssize_t got = pread(fd, text, sizeof text, 0);
    oc.len = got > 0 ? (uint32_t)got : 0;
    /* Each outcome starts 8-aligned: the text padded with zeros. */
    const size_t pad = (8 - oc.len % 8) % 8;
    if (add(r, &oc, sizeof oc) != 0 || add(r, text, oc.len) != 0 ||
        add(r, "\0\0\0\0\0\0\0", pad) != 0)
        return gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    return 0;
}

/* Every file, as the counter on rank 0 deals them. */
static int deal(gf_mpi *m, const gf_batch *b, const int64_t *order, results *r)
{
    int64_t *counter = NULL;
    MPI_Win win;
    MPI_Win_allocate(m->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0, sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &counter, &win);
    if (m->rank == 0) {
        const int64_t zero = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&zero, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int fd = catcher(m);
    gf_engine_keep keep = {0}; /* one file's engine for the next (gf_cli_options.keep) */
    m->o.keep = &keep;
    /* A rank's GPU, as a batch worker's, starts once for all its files. */
    m->o.gpu_warm = b->n > 0 && gf_batch_gpu_in_play(&m->o, m->taps, b->in[order[0]]);
    MPI_Win_lock_all(0, win);
    for (;;) {
        const int64_t one = 1;
        int64_t k = 0;
        MPI_Fetch_and_op(&one, &k, MPI_INT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        /* A rank that cannot go on takes no more files. */
        if (k >= (int64_t)b->n || fd < 0 || m->rc || m->stop)
            break;
        one_file(m, b, order[k], fd, r);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    m->o.keep = NULL;
    m->o.gpu_warm = 0;
    gf_cli_engine_keep_free(&keep);
    if (fd >= 0)
        close(fd);
    return m->rc;
}

/* Rank 0: a run's line as gpufilt-mpi says it ("gpufilt: " becomes
 * "gpufilt-mpi: "), onto the report. */
static int say_lines(results *rep, const char *text, size_t len)
{
    static const char from[] = "gpufilt: ", to[] = "gpufilt-mpi: ";
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        const size_t end = nl ? (size_t)(nl - text) + 1 : len;
        if (end - at >= sizeof from - 1 && memcmp(text + at, from, sizeof from - 1) == 0) {
            if (add(rep, to, sizeof to - 1) != 0)
                return -1;
            at += sizeof from - 1;
        }
        if (add(rep, text + at, end - at) != 0 || (!nl && add(rep, "\n", 1) != 0))
            return -1;
        at = end;
    }
    return 0;
}

/* Collective: every rank's outcomes to rank 0, which puts the report
 * together and returns the batch's exit code. */
static int report(gf_mpi *m, const gf_batch *b, const results *r, int summary, double t0)
{
    int mine = (int)r->len, *lens = NULL, *at = NULL;
    unsigned char *all = NULL;
    if (m->rank == 0 && (!(lens = calloc((size_t)m->size, sizeof *lens)) ||
                         !(at = calloc((size_t)m->size, sizeof *at))))
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (gf_mpi_settle(m))
        goto failed;
    MPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    for (int i = 0; m->rank == 0 && i < m->size; i++) {
        at[i] = (int)total;
        total += (size_t)lens[i];
    }
    if (m->rank == 0 && !(all = malloc(total ? total : 1)))
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (gf_mpi_settle(m))
        goto failed;
    MPI_Gatherv(r->p, mine, MPI_BYTE, all, lens, at, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (m->rank > 0)
        goto out;
    /* Each file's outcome, by its place in the batch. */
    const outcome **of = calloc(b->n, sizeof *of);
    results rep = {0};
    if (!of) {
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
        goto out;
    }
    for (size_t p = 0; p < total;) {
        const outcome *oc = (const outcome *)(void *)(all + p);
        of[oc->file] = oc;
        p += sizeof *oc + (oc->len + 7) / 8 * 8;
    }
    size_t done = 0, skipped = 0, failed = 0;
    uint64_t in = 0, out = 0;
    int first = 0;
    for (size_t i = 0; i < b->n; i++) {
        const outcome *oc = of[i];
        if (!oc) {
            gf_mpi_fail(m, GF_EXIT_INTERNAL, "internal error: '%s' was dealt to no rank", b->in[i]);
            break;
        }
        if (say_lines(&rep, (const char *)(oc + 1), oc->len) != 0)
            gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
        failed += oc->rc != 0;
        skipped += oc->rc == 0 && oc->skipped;
        done += oc->rc == 0 && !oc->skipped;
        in += oc->in_bytes;
        out += oc->out_bytes;
        first = first ? first : oc->rc;
    }
    char line[PATH_MAX + 512];
    snprintf(line, sizeof line,
             "gpufilt-mpi: batch: %zu file%s to '%s' on %d rank%s: %zu filtered, %zu skipped "
             "(existing), %zu failed; %llu bytes read, %llu bytes written, %.3f s\n",
             b->n, b->n == 1 ? "" : "s", m->o.out_dir, m->size, m->size == 1 ? "" : "s", done,
             skipped, failed, (unsigned long long)in, (unsigned long long)out, gf_now() - t0);
    if (!m->rc && summary && add(&rep, line, strlen(line)) != 0)
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (!m->rc && add(&rep, "", 1) == 0) {
        m->report = (char *)rep.p;
        m->batch_rc = first;
    } else {
        free(rep.p);
    }
    free(of);
out:
    free(lens);
    free(at);
    free(all);
    if (gf_mpi_settle(m))
        return m->rc;
    MPI_Bcast(&m->batch_rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return m->batch_rc;
failed:
    free(lens);
    free(at);
    return m->rc;
}

int gf_mpi_batch(gf_mpi *m, int summary)
{
    const double t0 = gf_now();
    gf_batch b;
    memset(&b, 0, sizeof b);
    int64_t *order = NULL, n = 0;
    results r = {0};
    /* Rank 0 plans first (it makes DIR) and speaks for the batch as gpufilt
     * does; the others then find the same files. */
    int rc = m->rank == 0 ? gf_batch_plan(&m->o, m->o.ninputs, m->o.inputs, &b) : 0;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc) {
        if (m->rank == 0)
            gf_mpi_failed_cli(m, rc);
        m->rc = rc;
        goto out;
    }
    if (m->rank > 0 && (rc = gf_batch_plan(&m->o, m->o.ninputs, m->o.inputs, &b)) != 0)
        gf_mpi_failed_cli(m, rc);
    n = (int64_t)b.n;
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (!m->rc && n != (int64_t)b.n)
        gf_mpi_fail(m, GF_EXIT_INPUT, "found %zu files to filter, rank 0 %lld", b.n, (long long)n);
    if (!m->rc && !(order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order)))
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (m->rank == 0 && !m->rc && order_files(&b, order) != 0)
        gf_mpi_fail(m, GF_EXIT_INTERNAL, "out of memory");
    if (gf_mpi_settle(m))
        goto out;
    MPI_Bcast(order, (int)n, MPI_INT64_T, 0, MPI_COMM_WORLD);
    deal(m, &b, order, &r);
    if (m->stop)
        gf_mpi_fail(m, GF_EXIT_INTERRUPTED,
                    "interrupted by signal %d; the file being filtered was not written",
                    (int)m->stop);
    rc = report(m, &b, &r, summary, t0);
out:
    free(order);
    free(r.p);
    gf_batch_free(&b);
    return m->rc ? m->rc : rc;
}
