/*
 * gpufilt [options] --out-dir DIR IN... [--in-list FILE]: many files in one
 * command (README, "Many files"). Each input is filtered to DIR/its name
 * (with --out-format MAJOR, the extension becomes MAJOR) by the same run a
 * single file gets (gf_filter_run); a file's failure is reported with its
 * name and the batch goes on; nothing half-written is ever left under a
 * final name. One progress line for the batch on a terminal (files and
 * bytes), one summary line at the end.
 *
 * Workers. The files are sorted by size, largest first (equal sizes in
 * the batch's order), and workers take the next one from a shared counter:
 *   - the GPU in play (--device cuda, --gpus, or --device auto when the
 *     policy gives the largest file to the GPU): --jobs workers, at least
 *     one per GPU (the --gpus list, "0,0" being two on GPU 0; else every
 *     GPU present), dealt over the GPUs in turn, each file of a worker on
 *     its one GPU. A file the policy gives the CPU runs in whichever worker
 *     takes it, on that worker's share of the threads;
 *   - else --jobs N workers (default 1) on the CPU: more helps many short
 *     files (a file's decoding and encoding use one thread), but a worker's
 *     file gets only its share of the threads, which slows a batch that
 *     one long file dominates (README gives the measurements).
 * Every file gets --threads / workers threads (at least 1), but the device
 * policy counts the whole --threads (policy_threads), so each file gives
 * the bytes the single-file run would: on its device, or for a file whose
 * method is direct on both (the same bytes on either), on a GPU worker's
 * GPU from less work than a single file needs to start one (gpu_warm).
 *
 * Messages. A worker's lines for a file are held back (gf_cli_capture) and
 * printed whole once that file and every one before it in the batch's
 * order (the command line's, then --in-list's) are done: the lines are
 * those of a run of one file after another, whatever the workers. The
 * exit status is the first failed file's in that order. A signal stops
 * every worker (each file being filtered is abandoned, and left nowhere).
 */
#include "batch.h"
#include "io/sndfile_format.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef gf_batch batch;

static int add_input(batch *b, char *path)
{
    if (b->n == b->cap) {
        const size_t cap = b->cap ? 2 * b->cap : 64;
        char **in = realloc(b->in, cap * sizeof *in);
        if (!in)
            return GF_EXIT_INTERNAL;
        b->in = in;
        b->cap = cap;
    }
    b->in[b->n++] = path;
    return GF_EXIT_OK;
}

/* --in-list FILE: one path per line, blank lines (nothing but spaces and
 * tabs) and '#' lines skipped; a path is taken as it is, blanks and all. */
static int read_list(batch *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gf_cli_error("cannot open --in-list '%s': %s", path, strerror(errno));
        return GF_EXIT_INPUT;
    }
    size_t cap = 0, len = 0;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *t = realloc(b->list_text, cap);
            if (!t) {
                fclose(f);
                gf_cli_error("out of memory reading --in-list '%s'", path);
                return GF_EXIT_INTERNAL;
            }
            b->list_text = t;
        }
        memcpy(b->list_text + len, buf, got);
        len += got;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        gf_cli_error("cannot read --in-list '%s'", path);
        return GF_EXIT_INPUT;
    }
    if (!b->list_text)
        return GF_EXIT_OK;
    b->list_text[len] = '\0';
    for (char *line = b->list_text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[l - 1] = '\0';
        if (line[strspn(line, " \t")] && *line != '#' && add_input(b, line) != GF_EXIT_OK) {
            gf_cli_error("out of memory reading --in-list '%s'", path);
            return GF_EXIT_INTERNAL;
        }
    }
    return GF_EXIT_OK;
}

/* DIR/the input's name; with --out-format MAJOR[:SUB], its extension MAJOR. */
static char *output_name(const gf_cli_options *o, const char *in)
{
    const char *slash = strrchr(in, '/');
    const char *base = slash ? slash + 1 : in;
    char major[32] = "";
    if (o->out_format)
        snprintf(major, sizeof major, "%.*s", (int)strcspn(o->out_format, ":"), o->out_format);
    const char *dot = strrchr(base, '.');
    const int stem = *major && dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    const size_t n = strlen(o->out_dir) + strlen(base) + sizeof major + 3;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%.*s%s%s", o->out_dir, stem, base, *major ? "." : "", major);
    return out;
}

/* Every input is a file with an output of its own. */
static int plan(const gf_cli_options *o, batch *b)
{
    if (b->n == 0) {
        gf_cli_error("--out-dir: no input files (give them after the options, or --in-list FILE)");
        return GF_EXIT_USAGE;
    }
    if (!(b->out = calloc(b->n, sizeof *b->out))) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->in[i], "-") == 0) {
            gf_cli_error("--out-dir filters files: standard input ('-') is not one");
            return GF_EXIT_USAGE;
        }
        if (!(b->out[i] = output_name(o, b->in[i]))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(b->out[i], b->out[j]) == 0) {
                gf_cli_error("'%s' and '%s' would both be written to '%s': filter them in two "
                             "batches or rename one",
                             b->in[j], b->in[i], b->out[i]);
                return GF_EXIT_USAGE;
            }
    }
    if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        gf_cli_error("cannot create --out-dir '%s': %s", o->out_dir, strerror(errno));
        return GF_EXIT_OUTPUT;
    }
    struct stat st;
    if (stat(o->out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        gf_cli_error("--out-dir '%s' is not a directory", o->out_dir);
        return GF_EXIT_OUTPUT;
    }
    return GF_EXIT_OK;
}

/* One file, with a copy of the taps (designs are cascaded at each file's
 * rate, into the copy). */
static int run_one(const gf_cli_options *o, const gf_taps *t, const char *in, const char *out,
                   volatile sig_atomic_t *stop)
{
    gf_cli_options one = *o;
    one.in_path = in;
    one.out_path = out;
    one.quiet = 1;
    gf_taps copy = *t;
    if (t->h) {
        const size_t bytes = t->n * (size_t)t->filters * sizeof *t->h;
        if (!(copy.h = malloc(bytes))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        memcpy(copy.h, t->h, bytes);
    }
    const int rc = gf_filter_run(&one, &copy, stop);
    free(copy.h);
    return rc;
}

int gf_batch_plan(const gf_cli_options *o, int nin, char **in, gf_batch *b)
{
    int rc = GF_EXIT_OK;
    for (int i = 0; !rc && i < nin; i++)
        if (add_input(b, in[i]) != GF_EXIT_OK) {
            gf_cli_error("out of memory");
            rc = GF_EXIT_INTERNAL;
        }
    if (!rc && o->in_list)
        rc = read_list(b, o->in_list);
    if (!rc)
        rc = plan(o, b);
    return rc;
}

void gf_batch_free(gf_batch *b)
{
    for (size_t i = 0; b->out && i < b->n; i++)
        free(b->out[i]);
    free(b->out);
    free(b->in);
    free(b->list_text);
    memset(b, 0, sizeof *b);
}

int gf_batch_file(const gf_cli_options *o, const gf_taps *t, const gf_batch *b, size_t i,
                  volatile sig_atomic_t *stop, int *skipped)
{
    struct stat st;
    *skipped = 0;
    if (o->skip_existing && stat(b->out[i], &st) == 0) {
        *skipped = 1; /* outputs appear only complete (renamed into place) */
        return GF_EXIT_OK;
    }
    const int frc = run_one(o, t, b->in[i], b->out[i], stop);
    if (frc == GF_EXIT_INTERRUPTED || *stop)
        return GF_EXIT_INTERRUPTED;
    if (frc != GF_EXIT_OK)
        gf_cli_error("'%s' was not filtered (exit %d); going on with the rest", b->in[i], frc);
    return frc;
}

/* ---- the workers ---- */

typedef struct pool {
    const gf_taps *t;
    const gf_batch *b;
    volatile sig_atomic_t *stop;
    size_t *order;  /* the inputs, largest first */
    uint64_t *size; /* each input's bytes (0 when it cannot be read) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Under mu: */
    size_t next;         /* order[next] is the next file to take */
    int running;         /* workers not yet ended */
    char *state;         /* per input: 1 once done (rc, skipped, lines set) */
    int *rc;             /* per input: gf_batch_file's result */
    int *skipped;        /* per input */
    gf_cli_lines *lines; /* per input: its lines, until printed */
    size_t finished;     /* files done */
    uint64_t bytes;      /* their input bytes */
    int sync_made;       /* mu and cv exist */
} pool;

typedef struct worker {
    pool *p;
    gf_cli_options o;    /* the batch's options, with this worker's GPU and threads */
    gf_engine_keep keep; /* its last file's engine (o.keep) */
    pthread_t thread;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    pool *p = w->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        const size_t i = p->next < p->b->n && !*p->stop ? p->order[p->next++] : SIZE_MAX;
        pthread_mutex_unlock(&p->mu);
        if (i == SIZE_MAX)
            break;
        gf_cli_lines l = {0};
        int skip = 0;
        gf_cli_capture(&l);
        const int rc = gf_batch_file(&w->o, p->t, p->b, i, p->stop, &skip);
        gf_cli_capture(NULL);
        pthread_mutex_lock(&p->mu);
        p->rc[i] = rc;
        p->skipped[i] = skip;
        p->lines[i] = l;
        p->state[i] = 1;
        p->finished++;
        p->bytes += p->size[i];
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (rc == GF_EXIT_INTERRUPTED)
            break;
    }
    gf_cli_engine_keep_free(&w->keep);
    pthread_mutex_lock(&p->mu);
    p->running--;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Largest first; equal sizes in the batch's order. */
static const uint64_t *sort_size;
static int by_size(const void *a, const void *b)
{
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (sort_size[i] != sort_size[j])
        return sort_size[i] > sort_size[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The header of path into *info: 0, or -1 where it cannot be read (a
 * header libsndfile would loop on is refused by the file's own run). */
static int probe_info(const char *path, SF_INFO *info)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    char why[160];
    if (fd < 0 || gf_header_probe(fd, NULL, 0, why, sizeof why)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memset(info, 0, sizeof *info);
    SNDFILE *sf = sf_open_fd(fd, SFM_READ, info, SF_TRUE);
    if (!sf)
        return -1;
    sf_close(sf);
    return 0;
}

/* (Only the number of workers and gpu_warm depend on this guess, never a
 * file's bytes, which its own run decides.) */
int gf_batch_gpu_in_play(const gf_cli_options *o, const gf_taps *t, const char *largest)
{
    if (o->device == GF_DEVICE_CUDA || o->ngpus != 0)
        return 1;
    if (o->device != GF_DEVICE_AUTO || !gf_backend_built(GF_DEVICE_CUDA))
        return 0;
    SF_INFO info;
    if (probe_info(largest, &info))
        return 0;
    const gf_job job = {.frames = info.frames, .channels = info.channels, .taps = t->n ? t->n : 1};
    gf_device handoff = GF_DEVICE_NONE;
    return gf_cli_choose_device(o, &job, &handoff, NULL, 0) == GF_DEVICE_CUDA ||
           handoff == GF_DEVICE_CUDA;
}

/* Workers a GPU without --jobs: two where the filter takes the direct
 * method (by the cost model for the largest file's channels), whose engine
 * holds no more than its chunk buffers on the GPU, so that one worker
 * decodes or encodes its file while the other's is on the GPU (two H200s,
 * 64 files at 4095 taps: two workers on one GPU 1.35x one, a worker on
 * each of two GPUs 1.01x: docs/scaling.md); one
 * for the FFT method, whose engines each hold a filter's spectra and
 * delay line there. */
static int workers_per_gpu(const gf_cli_options *o, const gf_taps *t, const char *largest)
{
    gf_method m = o->method;
    SF_INFO info;
    if (o->jobs > 0)
        return 1;
    if (m == GF_METHOD_AUTO)
        m = probe_info(largest, &info)
                ? GF_METHOD_FFT
                : gf_method_choose(t->n ? t->n : 1, info.channels, o->precision, GF_DEVICE_CUDA,
                                   o->partition);
    return m == GF_METHOD_DIRECT ? 2 : 1;
}

/* The workers' GPUs into gpus (at most GF_MAX_DEVICES): their count, or 0
 * for workers on the CPU. */
static int worker_gpus(const gf_cli_options *o, const gf_taps *t, const char *largest, int *gpus)
{
    return gf_batch_gpu_in_play(o, t, largest) ? gf_cli_gpu_list(o, gpus) : 0;
}

/* Print the lines of the files done, in the batch's order, from *printed
 * up to the first not done (all done ones with `all`), the progress line
 * erased first (the next update draws it again). Under p->mu, which it
 * lets go while printing. */
static void print_done(pool *p, size_t *printed, int all, gf_progress *bar)
{
    for (size_t i = *printed; i < p->b->n; i++) {
        if (!p->state[i]) {
            if (!all)
                break;
            continue;
        }
        if (i == *printed)
            ++*printed;
        if (!p->lines[i].len)
            continue;
        gf_cli_lines l = p->lines[i];
        memset(&p->lines[i], 0, sizeof p->lines[i]);
        pthread_mutex_unlock(&p->mu);
        gf_progress_end(bar);
        gf_cli_print_lines(&l);
        pthread_mutex_lock(&p->mu);
    }
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* The pool's arrays, and the inputs in the order they are taken (largest
 * first); their bytes in all into *total. */
static int pool_make(pool *p, uint64_t *total)
{
    const size_t n = p->b->n;
    if (!(p->order = malloc(n * sizeof *p->order)) || !(p->size = malloc(n * sizeof *p->size)) ||
        !(p->state = calloc(n, 1)) || !(p->rc = calloc(n, sizeof *p->rc)) ||
        !(p->skipped = calloc(n, sizeof *p->skipped)) ||
        !(p->lines = calloc(n, sizeof *p->lines))) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    *total = 0;
    for (size_t i = 0; i < n; i++) {
        p->order[i] = i;
        *total += p->size[i] = file_size(p->b->in[i]);
    }
    sort_size = p->size;
    qsort(p->order, n, sizeof *p->order, by_size);
    if (pthread_mutex_init(&p->mu, NULL) == 0 && pthread_cond_init(&p->cv, NULL) == 0) {
        p->sync_made = 1;
        return GF_EXIT_OK;
    }
    gf_cli_error("cannot start the batch's workers");
    return GF_EXIT_INTERNAL;
}

static void pool_free(pool *p)
{
    if (p->sync_made) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
    }
    for (size_t i = 0; p->lines && i < p->b->n; i++)
        free(p->lines[i].text);
    free(p->lines);
    free(p->skipped);
    free(p->rc);
    free(p->state);
    free(p->size);
    free(p->order);
}

/* The workers, *nw of them: --jobs (default 1), and with the GPU in play
 * at least one per GPU, dealt over the GPUs in turn (a file's decoding and
 * encoding run on its worker's thread: short files want more workers than
 * GPUs); never more than files. Each gets its share of the threads (the
 * device policy still counts them all) and its GPU. */
static worker *make_workers(const gf_cli_options *o, pool *p, int *nw)
{
    int gpus[GF_MAX_DEVICES];
    const char *largest = p->b->in[p->order[0]];
    const int ngpus = worker_gpus(o, p->t, largest, gpus);
    const int jobs = o->jobs > 0 ? o->jobs : 1;
    /* at least one a --gpus entry ("0,0": two on GPU 0), and by default
     * workers_per_gpu for each GPU named */
    int distinct = 0;
    for (int i = 0; i < ngpus; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= gpus[j] == gpus[i];
        distinct += !seen;
    }
    const int per = ngpus ? distinct * workers_per_gpu(o, p->t, largest) : 0;
    const int on_gpus = per > ngpus ? per : ngpus;
    int n = jobs > on_gpus ? jobs : on_gpus;
    n = (size_t)n < p->b->n ? n : (int)p->b->n;
    long threads = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
    threads = threads > 0 ? threads : 1;
    worker *w = calloc((size_t)n, sizeof *w);
    for (int k = 0; w && k < n; k++) {
        w[k].p = p;
        w[k].o = *o;
        w[k].o.threads = threads / n > 1 ? (int)(threads / n) : 1;
        w[k].o.policy_threads = (int)threads;
        w[k].o.keep = &w[k].keep;
        if (ngpus) {
            w[k].o.ngpus = 1;
            w[k].o.gpus[0] = gpus[k % ngpus];
            w[k].o.gpu_warm = 1;
        }
    }
    *nw = n;
    return w;
}

/* Start the workers; how many started. Signals go to this thread, which
 * watches for them (as the reader and writer of each file do); the faults
 * stay with their thread. */
static int start_workers(pool *p, worker *w, int nw)
{
    sigset_t block, old;
    sigfillset(&block);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++)
        sigdelset(&block, faults[k]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pthread_mutex_lock(&p->mu);
    int started = 0;
    for (; started < nw; started++) {
        p->running++;
        if (pthread_create(&w[started].thread, NULL, worker_main, &w[started]) != 0) {
            p->running--;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* Until every worker has ended: each file's lines in the batch's order as
 * soon as the files before it are done, and the progress line (files,
 * bytes); then the workers joined and the rest printed. */
static void watch(pool *p, worker *w, int started, uint64_t total, int quiet)
{
    gf_progress bar;
    gf_progress_init(&bar, (int64_t)total, quiet);
    size_t printed = 0;
    pthread_mutex_lock(&p->mu);
    while (p->running > 0) {
        print_done(p, &printed, 0, &bar);
        const size_t files = p->finished;
        const uint64_t bytes = p->bytes;
        pthread_mutex_unlock(&p->mu);
        gf_progress_files(&bar, (int64_t)bytes, files, p->b->n);
        pthread_mutex_lock(&p->mu);
        if (p->running == 0)
            break;
        /* A signal need not wake the wait: look at *stop's effect (the
         * workers ending) ten times a second. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &until);
    }
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < started; k++)
        pthread_join(w[k].thread, NULL);
    gf_progress_end(&bar);
    pthread_mutex_lock(&p->mu);
    print_done(p, &printed, 1, &bar);
    pthread_mutex_unlock(&p->mu);
}

/* The outcome: the interrupt's line, or the summary line; the exit code
 * (the first failed file's in the batch's order, or 130). */
static int summarize(const gf_cli_options *o, const pool *p, int nw, double t0)
{
    size_t done = 0, skipped = 0, failed = 0;
    uint64_t read = 0, written = 0;
    int first_rc = GF_EXIT_OK;
    for (size_t i = 0; i < p->b->n; i++) {
        if (!p->state[i] || p->rc[i] == GF_EXIT_INTERRUPTED)
            continue;
        if (p->rc[i] != GF_EXIT_OK) {
            failed++;
            first_rc = first_rc ? first_rc : p->rc[i];
        } else if (p->skipped[i]) {
            skipped++;
        } else {
            done++;
            read += p->size[i];
            written += file_size(p->b->out[i]);
        }
    }
    if (*p->stop) {
        gf_cli_error("interrupted by signal %d after %zu of %zu files; the file%s being filtered "
                     "%s not written",
                     (int)*p->stop, done + skipped + failed, p->b->n, nw > 1 ? "s" : "",
                     nw > 1 ? "were" : "was");
        return GF_EXIT_INTERRUPTED;
    }
    if (!o->quiet)
        gf_cli_say("batch: %zu file%s to '%s' on %d worker%s: %zu filtered, %zu skipped "
                   "(existing), %zu failed; %llu bytes read, %llu bytes written, %.3f s",
                   p->b->n, p->b->n == 1 ? "" : "s", o->out_dir, nw, nw == 1 ? "" : "s", done,
                   skipped, failed, (unsigned long long)read, (unsigned long long)written,
                   gf_now() - t0);
    return first_rc;
}

int gf_batch_run(const gf_cli_options *o, int nin, char **in, const gf_taps *t,
                 volatile sig_atomic_t *stop)
{
    batch b = {0};
    pool p = {.t = t, .b = &b, .stop = stop};
    worker *w = NULL;
    int nw = 0, started = 0;
    uint64_t total = 0;
    const double t0 = gf_now();
    int rc = gf_batch_plan(o, nin, in, &b);
    if (!rc)
        rc = pool_make(&p, &total);
    if (!rc && !(w = make_workers(o, &p, &nw))) {
        gf_cli_error("out of memory");
        rc = GF_EXIT_INTERNAL;
    }
    if (!rc && (started = start_workers(&p, w, nw)) == 0) {
        gf_cli_error("cannot start the batch's workers");
        rc = GF_EXIT_INTERNAL;
    }
    if (!rc) {
        watch(&p, w, started, total, o->quiet);
        rc = summarize(o, &p, nw, t0);
    }
    pool_free(&p);
    free(w);
    gf_batch_free(&b);
    return rc;
}
