/* The control thread: commands and SIGHUP -> a new engine -> the worker's
 * crossfade (control.h). */
#include "live/control.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 1024
#define MAX_WORDS      32
#define LOG_MAX        64 /* changes kept for the exit summary */
#define GAIN_MIN_DB    -120.0
#define GAIN_MAX_DB    40.0
#define POLL_MS        20

typedef struct change {
    unsigned long long frame; /* first frame of the fade */
    char command[64];
} change;

/* The filter as the commands have set it. base NULL: the command line's. */
typedef struct filter_state {
    char *base; /* a filter line (owned), or NULL */
    double gain_db;
    int bypass;
} filter_state;

struct gf_live_control {
    gf_live *lv;
    volatile sig_atomic_t *reload;
    int fd; /* -1: none (or closed at its end) */
    int is_stdin;
    pthread_t thread;
    int started;
    atomic_int stop;
    filter_state now;
    unsigned long lineno;
    char buf[LINE_MAX_BYTES];
    size_t len;
    int overlong; /* discarding the rest of a line that was too long */
    /* the log: the control thread writes, the main thread reads */
    pthread_mutex_t lock;
    change log[LOG_MAX];
    int changes;
};

static void sleep_ms(long ms)
{
    const struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* "control: WHERE: WHAT (the filter is unchanged)" */
static void refuse(const char *where, const char *what)
{
    gf_cli_say("control: %s: %s (the filter is unchanged)", where, what);
}

/* The first error a parse or load printed (captured), without its prefix. */
static const char *first_error(gf_cli_lines *l, char *buf, size_t n)
{
    static const char prefix[] = "gpufilt: error: ";
    const char *p = l->text ? strstr(l->text, prefix) : NULL;
    if (!p) {
        snprintf(buf, n, "%s", l->text && *l->text ? l->text : "failed");
    } else {
        p += sizeof prefix - 1;
        const char *end = strchr(p, '\n');
        snprintf(buf, n, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
    }
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    return buf;
}

/* The filter options a control line may give (all take one value). */
static int filter_option(const char *name)
{
    static const char *const names[] = {"taps",        "coeffs",     "ir", "lowpass", "highpass",
                                        "bandpass",    "bandreject", "eq", "atten",   "transition",
                                        "design-taps", "phase",      NULL};
    for (const char *const *n = names; *n; n++)
        if (strcmp(name, *n) == 0)
            return 1;
    return 0;
}

/*
 * The taps of the filter line `line` (NAME VALUE pairs), through the
 * command line's parser: the other options are the command line's. Errors
 * are printed (the caller captures them). words holds the line's copy,
 * which t->source may point into until the caller is done.
 */
static int line_taps(gf_live_control *c, const char *line, char *words, gf_taps *t)
{
    const gf_cli_options *o = c->lv->o;
    char *argv[MAX_WORDS + 3] = {"gpufilt", "--live"};
    char names[MAX_WORDS][32];
    int argc = 2, nw = 0;
    snprintf(words, LINE_MAX_BYTES, "%s", line);
    for (char *save = NULL, *w = strtok_r(words, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save), nw++) {
        if (nw >= MAX_WORDS) {
            gf_cli_error("more than %d words", MAX_WORDS);
            return GF_EXIT_USAGE;
        }
        if (nw % 2 == 0) { /* a name */
            const char *name = strncmp(w, "--", 2) == 0 ? w + 2 : w;
            if (!filter_option(name)) {
                gf_cli_error("unknown command '%s' (ir, coeffs, taps, a design option such as "
                             "lowpass, gain, bypass, reload)",
                             w);
                return GF_EXIT_USAGE;
            }
            snprintf(names[nw / 2], sizeof names[0], "--%s", name);
            argv[argc++] = names[nw / 2];
        } else
            argv[argc++] = w;
    }
    argv[argc] = NULL;
    gf_cli_options lo;
    optind = 0; /* a fresh scan (GNU getopt) */
    int rc = gf_cli_parse(argc, argv, &lo);
    if (rc)
        return rc;
    const char *file = lo.coeffs ? lo.coeffs : lo.ir;
    if (file && strcmp(file, "-") == 0) {
        gf_cli_error("--%s -: standard input holds no filter here (name a file)",
                     lo.coeffs ? "coeffs" : "ir");
        return GF_EXIT_USAGE;
    }
    gf_cli_options on = *o;
    on.taps = lo.taps;
    on.coeffs = lo.coeffs;
    on.ir = lo.ir;
    on.design = lo.design;
    if ((rc = gf_taps_load(&on, t)) != 0)
        return rc;
    return gf_taps_ready(&on, t, c->lv->channels, (int)c->lv->rate);
}

/* The taps of filter state f, into *t (zeroed by the caller). */
static int state_taps(gf_live_control *c, const filter_state *f, gf_taps *t)
{
    char *words = NULL;
    int rc = GF_EXIT_OK;
    if (f->bypass) {
        if (!(t->h = malloc(sizeof *t->h))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        t->h[0] = 1.0;
        t->n = 1;
        t->filters = 1;
        return GF_EXIT_OK;
    }
    if (f->base) {
        if (!(words = malloc(LINE_MAX_BYTES))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        rc = line_taps(c, f->base, words, t);
    } else if ((rc = gf_taps_load(c->lv->o, t)) == 0)
        rc = gf_taps_ready(c->lv->o, t, c->lv->channels, (int)c->lv->rate);
    t->source = NULL; /* may point into words */
    free(words);
    if (rc || f->gain_db == 0.0)
        return rc;
    if (!t->h) { /* the mean filter, spelled out to be scaled */
        if (!(t->h = malloc(t->n * sizeof *t->h))) {
            gf_cli_error("out of memory");
            return GF_EXIT_INTERNAL;
        }
        for (size_t k = 0; k < t->n; k++)
            t->h[k] = 1.0 / (double)t->n;
    }
    const double g = pow(10.0, f->gain_db / 20.0);
    for (size_t k = 0; k < t->n * (size_t)t->filters; k++)
        t->h[k] *= g;
    return GF_EXIT_OK;
}

/* Hand engine e to the worker and wait until it plays; then destroy the
 * old one and log. Returns 0, or -1 when stopping first. */
static int hand_over(gf_live_control *c, gf_engine *e, size_t taps, const char *command)
{
    gf_live *lv = c->lv;
    gf_live_switch *sw = &lv->sw;
    const size_t P = lv->period_frames;
    size_t warm = (taps - 1 + P - 1) / P;
    const size_t second = ((size_t)lv->rate + P - 1) / P;
    if (warm > second)
        warm = second;
    sw->e = e;
    sw->old = NULL;
    sw->warm_blocks = warm;
    /* before it plays: a gap's outputs are muted for the longest filter's length */
    if (taps > atomic_load(&lv->most_taps))
        atomic_store(&lv->most_taps, taps);
    sw->fade = (size_t)llround((double)lv->o->crossfade_ms * lv->rate / 1000.0);
    snprintf(sw->command, sizeof sw->command, "%s", command);
    gf_live_zero *z = lv->head.taps ? gf_pa_zero_of(lv->link) : NULL;
    if (z) { /* --latency zero: the callback chooses the frame (head.h) */
        z->fade = sw->fade;
        z->warm = warm * P;
    }
    atomic_store_explicit(&sw->state, GF_SWITCH_POSTED, memory_order_release);
    while (atomic_load_explicit(&sw->state, memory_order_acquire) != GF_SWITCH_DONE ||
           (z && atomic_load_explicit(&z->head_state, memory_order_acquire) != GF_HEAD_DONE)) {
        if (atomic_load(&c->stop) || atomic_load_explicit(&lv->failed, memory_order_acquire))
            return -1; /* gf_live_control_destroy cleans up */
        sleep_ms(2);
    }
    if (z) { /* the old head's taps, which the callback has let go */
        free(z->old_h);
        z->old_h = NULL;
        atomic_store_explicit(&z->head_state, GF_HEAD_IDLE, memory_order_release);
    }
    gf_engine_destroy(sw->old);
    sw->old = NULL;
    sw->e = NULL;
    pthread_mutex_lock(&c->lock);
    const int n = ++c->changes;
    if (n <= LOG_MAX) {
        c->log[n - 1].frame = sw->fade_from;
        snprintf(c->log[n - 1].command, sizeof c->log[0].command, "%s", command);
    }
    pthread_mutex_unlock(&c->lock);
    if (!lv->o->quiet)
        gf_cli_say("live: filter %d from frame %llu (crossfade over frames %llu..%llu, heard "
                   "from frame %llu): %s",
                   n, sw->fade_from, sw->fade_from, sw->fade_from + (sw->fade ? sw->fade : 1) - 1,
                   sw->warm_from, command);
    atomic_store_explicit(&sw->state, GF_SWITCH_IDLE, memory_order_release);
    return 0;
}

/* --latency zero: the new filter t's head (its first H taps, zeros past
 * its end) for the callback, and its tail (at least one tap, zero for a
 * filter of H taps or fewer) as t for the worker's engine. */
static int zero_split(gf_live *lv, gf_taps *t)
{
    const size_t H = lv->head.taps;
    gf_live_zero *z = gf_pa_zero_of(lv->link);
    if (gf_live_pad_taps(t, H + 1) != 0) { /* the tail engine keeps its place, silent */
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    gf_taps tail;
    if (gf_live_head_taps(&lv->head, t, &z->next_h, &z->next_filters) != 0 ||
        gf_live_tail_taps(t, H, &tail) != 0) {
        free(z->next_h);
        z->next_h = NULL;
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    gf_taps_free(t);
    *t = tail;
    return GF_EXIT_OK;
}

/* Make filter state f play: taps, an engine, the hand-over. On failure one
 * line and the state stays as it was. Takes ownership of f->base. */
static void apply(gf_live_control *c, const char *where, const char *command, filter_state *f,
                  int notes)
{
    gf_cli_lines lines;
    memset(&lines, 0, sizeof lines);
    gf_taps t;
    memset(&t, 0, sizeof t);
    gf_engine *e = NULL;
    if (c->lv->head.taps && !c->lv->e) { /* no tail: nothing to fade it with */
        refuse(where, "with --latency zero a filter of at most 2 x --frames taps plays whole "
                      "in the audio callback, and cannot change without --control or a filter "
                      "file (--coeffs, --ir) to re-read (with them, the worker keeps a silent "
                      "tail to fade with)");
        free(f->base);
        return;
    }
    if (c->lv->hout) { /* the records would change engine mid-block */
        refuse(where, "the filter cannot change while --hist or --hist-png records it");
        free(f->base);
        return;
    }
    gf_cli_capture(&lines);
    int rc = state_taps(c, f, &t);
    if (!rc && c->lv->head.taps)
        rc = zero_split(c->lv, &t);
    if (!rc)
        rc = gf_live_make_engine(c->lv, &t, c->lv->device, 0, NULL, &e);
    if (rc && c->lv->head.taps) { /* the new head's taps, never posted */
        gf_live_zero *z = gf_pa_zero_of(c->lv->link);
        free(z->next_h);
        z->next_h = NULL;
    }
    gf_cli_capture(NULL);
    const size_t taps = t.n;
    gf_taps_free(&t);
    if (rc) {
        char msg[512];
        refuse(where, first_error(&lines, msg, sizeof msg));
        free(f->base);
    } else {
        if (notes && lines.text) /* the design's notes, for a new filter */
            gf_cli_print_lines(&lines);
        if (f->base != c->now.base)
            free(c->now.base);
        c->now = *f;
        hand_over(c, e, taps, command);
    }
    free(lines.text);
}

/* One command line (no newline). */
static void command(gf_live_control *c, char *line)
{
    char where[48];
    snprintf(where, sizeof where, "line %lu", c->lineno);
    char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        p[--n] = '\0';
    if (!*p || *p == '#')
        return;
    int notes = 0;
    filter_state f = c->now;
    f.base = c->now.base ? strdup(c->now.base) : NULL;
    if ((c->now.base && !f.base)) {
        refuse(where, "out of memory");
        return;
    }
    char word[16] = "", rest[LINE_MAX_BYTES] = "";
    const char *sp = p + strcspn(p, " \t");
    snprintf(word, sizeof word, "%.*s", (int)(sp - p), p);
    sp += strspn(sp, " \t");
    snprintf(rest, sizeof rest, "%s", sp);
    if (strcmp(word, "gain") == 0) {
        char *end = NULL;
        errno = 0;
        const double db = strtod(rest, &end);
        if (!*rest || end == rest || *end || errno == ERANGE || !(db >= GAIN_MIN_DB) ||
            !(db <= GAIN_MAX_DB)) {
            char msg[LINE_MAX_BYTES + 64];
            snprintf(msg, sizeof msg, "gain: '%s' is not a number of dB in %g..%g", rest,
                     GAIN_MIN_DB, GAIN_MAX_DB);
            refuse(where, msg);
            free(f.base);
            return;
        }
        f.gain_db = db;
    } else if (strcmp(word, "bypass") == 0) {
        if (strcmp(rest, "on") && strcmp(rest, "off")) {
            char msg[LINE_MAX_BYTES + 64];
            snprintf(msg, sizeof msg, "bypass: '%s' is not on or off", rest);
            refuse(where, msg);
            free(f.base);
            return;
        }
        f.bypass = strcmp(rest, "on") == 0;
    } else if (strcmp(word, "reload") == 0 && !*rest) {
        free(f.base);
        f.base = NULL;
        notes = 1;
    } else {
        free(f.base);
        if (!(f.base = strdup(p))) {
            refuse(where, "out of memory");
            return;
        }
        f.bypass = 0; /* a new filter is heard */
        notes = 1;
    }
    apply(c, where, p, &f, notes);
}

/* Read what the file has; run each complete line. At its end (a regular
 * file, standard input) the file is closed; a FIFO never ends (held open
 * for writing too, so writers may come and go). */
static void read_commands(gf_live_control *c)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    const int pr = poll(&pfd, 1, POLL_MS);
    if (pr <= 0)
        return;
    const ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) { /* the end: a last line without a newline still counts */
        if (c->len && !c->overlong) {
            c->buf[c->len] = '\0';
            c->lineno++;
            command(c, c->buf);
        }
        if (!c->is_stdin)
            close(c->fd);
        c->fd = -1;
        c->len = 0;
        return;
    }
    c->len += (size_t)r;
    char *start = c->buf, *nl;
    while ((nl = memchr(start, '\n', c->len - (size_t)(start - c->buf))) != NULL) {
        *nl = '\0';
        c->lineno++;
        if (c->overlong) {
            char where[48];
            snprintf(where, sizeof where, "line %lu", c->lineno);
            refuse(where, "longer than 1023 bytes");
            c->overlong = 0;
        } else
            command(c, start);
        start = nl + 1;
    }
    c->len -= (size_t)(start - c->buf);
    memmove(c->buf, start, c->len);
    if (c->len == sizeof c->buf - 1) { /* no newline in a whole buffer */
        c->overlong = 1;
        c->len = 0;
    }
}

static void *control_main(void *arg)
{
    gf_live_control *c = arg;
    while (!atomic_load(&c->stop)) {
        if (*c->reload) {
            *c->reload = 0;
            filter_state f = c->now;
            f.base = NULL;
            apply(c, "SIGHUP", "reload (SIGHUP)", &f, 1);
            continue;
        }
        if (c->fd >= 0)
            read_commands(c);
        else
            sleep_ms(POLL_MS);
    }
    return NULL;
}

int gf_live_control_start(gf_live_control **out, gf_live *lv, volatile sig_atomic_t *reload)
{
    *out = NULL;
    gf_live_control *c = calloc(1, sizeof *c);
    if (!c) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    c->lv = lv;
    c->reload = reload;
    c->fd = -1;
    pthread_mutex_init(&c->lock, NULL);
    const char *path = lv->o->control;
    if (path && strcmp(path, "-") == 0) {
        c->fd = STDIN_FILENO;
        c->is_stdin = 1;
    } else if (path) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            gf_cli_error("--control '%s' is a directory", path);
            pthread_mutex_destroy(&c->lock);
            free(c);
            return GF_EXIT_INPUT;
        }
        /* A FIFO opened for reading and writing opens at once and never
         * reads an end: writers may come and go. */
        const int fifo = stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
        c->fd = open(path, (fifo ? O_RDWR | O_NONBLOCK : O_RDONLY) | O_CLOEXEC);
        if (c->fd < 0) {
            gf_cli_error("--control '%s': cannot open: %s", path, strerror(errno));
            pthread_mutex_destroy(&c->lock);
            free(c);
            return GF_EXIT_INPUT;
        }
    }
    if (pthread_create(&c->thread, NULL, control_main, c) != 0) {
        gf_cli_error("cannot start the control thread");
        gf_live_control_destroy(c);
        return GF_EXIT_INTERNAL;
    }
    c->started = 1;
    *out = c;
    return GF_EXIT_OK;
}

void gf_live_control_stop(gf_live_control *c)
{
    if (!c || !c->started)
        return;
    atomic_store(&c->stop, 1);
    pthread_join(c->thread, NULL);
    c->started = 0;
}

void gf_live_control_destroy(gf_live_control *c)
{
    if (!c)
        return;
    gf_live_control_stop(c);
    gf_live_switch *sw = &c->lv->sw;
    const int state = atomic_load(&sw->state);
    if (state == GF_SWITCH_POSTED || state == GF_SWITCH_TAKEN)
        gf_engine_destroy(sw->e); /* never played */
    else if (state == GF_SWITCH_DONE)
        gf_engine_destroy(sw->old);
    sw->e = sw->old = NULL;
    atomic_store(&sw->state, GF_SWITCH_IDLE);
    gf_live_zero *z = c->lv->head.taps ? gf_pa_zero_of(c->lv->link) : NULL;
    if (z) { /* the callback has stopped: what a change left */
        free(z->next_h);
        free(z->old_h);
        z->next_h = z->old_h = NULL;
    }
    if (c->fd >= 0 && !c->is_stdin)
        close(c->fd);
    free(c->now.base);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void gf_live_control_now(gf_live_control *c, char *buf, size_t n)
{
    pthread_mutex_lock(&c->lock);
    const int k = c->changes;
    if (k == 0)
        snprintf(buf, n, "filter 0");
    else
        snprintf(buf, n, "filter %d (from frame %llu)", k,
                 k <= LOG_MAX ? c->log[k - 1].frame : 0ULL);
    pthread_mutex_unlock(&c->lock);
}

void gf_live_control_summary(gf_live_control *c)
{
    if (!c || c->changes == 0)
        return;
    char line[2048];
    size_t used = (size_t)snprintf(line, sizeof line, "live: %d filter change%s:", c->changes,
                                   c->changes == 1 ? "" : "s");
    for (int i = 0; i < c->changes && i < LOG_MAX && used < sizeof line; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s frame %llu '%s'",
                                 i ? "," : "", c->log[i].frame, c->log[i].command);
    gf_cli_say("%s", line);
}
