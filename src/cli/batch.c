/*
 * gpufilt [options] --out-dir DIR IN... [--in-list FILE]: many files in one
 * command (README, "Many files"). Each input is filtered to DIR/its name
 * (with --out-format MAJOR, the extension becomes MAJOR) by the same run a
 * single file gets (gf_filter_run), one after another, each with the whole
 * machine (the CPU backend's threads, or the GPU); a file's failure is
 * reported with its name and the batch goes on; nothing half-written is
 * ever left under a final name. One progress line for the batch on a
 * terminal, one summary line at the end.
 */
#include "batch.h"
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int gf_batch_run(const gf_cli_options *o, int nin, char **in, const gf_taps *t,
                 volatile sig_atomic_t *stop)
{
    batch b = {0};
    int rc = gf_batch_plan(o, nin, in, &b);
    const double t0 = gf_now();
    size_t done = 0, skipped = 0, failed = 0;
    int first_rc = GF_EXIT_OK;
    gf_progress bar;
    gf_progress_init(&bar, rc ? 0 : (int64_t)b.n, o->quiet);
    for (size_t i = 0; !rc && i < b.n && !*stop; i++) {
        int skip = 0;
        const int frc = gf_batch_file(o, t, &b, i, stop, &skip);
        if (frc == GF_EXIT_INTERRUPTED)
            break;
        if (frc != GF_EXIT_OK) {
            failed++;
            first_rc = first_rc ? first_rc : frc;
        } else if (skip) {
            skipped++;
        } else {
            done++;
        }
        gf_progress_update(&bar, (int64_t)(i + 1));
    }
    gf_progress_end(&bar);
    if (!rc && *stop) {
        gf_cli_error("interrupted by signal %d after %zu of %zu files; the file being filtered "
                     "was not written",
                     (int)*stop, done + skipped + failed, b.n);
        rc = GF_EXIT_INTERRUPTED;
    }
    if (!rc && !o->quiet)
        gf_cli_say("batch: %zu file%s to '%s': %zu filtered, %zu skipped (existing), %zu failed, "
                   "%.3f s",
                   b.n, b.n == 1 ? "" : "s", o->out_dir, done, skipped, failed, gf_now() - t0);
    gf_batch_free(&b);
    return rc ? rc : first_rc;
}
