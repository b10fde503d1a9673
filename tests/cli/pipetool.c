/*
 * Test and benchmark helper for gpufilt on pipes, independent of gpufilt's
 * own I/O code:
 *
 *   pipetool feed SEED MAXCHUNK MAXDELAY_US < IN > OUT
 *       copy stdin to stdout in pieces of 1..MAXCHUNK bytes with a pause of
 *       0..MAXDELAY_US microseconds after each, both drawn from SEED
 *   pipetool trickle IN EXPECTED FRAME_BYTES LOOKAHEAD[/Q] PAUSE_MS BOUND_MS -- CMD ARGS...
 *       start CMD with pipes for its stdin and stdout; write IN one frame
 *       (FRAME_BYTES bytes) at a time, PAUSE_MS apart. After frame j
 *       (0-based) exactly max(0, floor((j + 1) / Q) Q - LOOKAHEAD) frames
 *       of output (Q: the quantum output comes in, 1 by default) must
 *       arrive, the missing ones within BOUND_MS, never more; after the last
 *       frame, stdin is closed and the rest must arrive. The whole output
 *       must equal EXPECTED byte for byte and CMD must exit 0. Prints the
 *       largest latency seen; exits 1 with a one-line reason on failure.
 *   pipetool rss FILE -- CMD ARGS...
 *       run CMD (stdin, stdout, stderr inherited), write its peak resident
 *       set size in KiB (ru_maxrss) to FILE and exit with its status
 *       (128 + N when it was killed by signal N)
 *   pipetool zeros BYTES        write BYTES zero bytes to stdout
 *   pipetool noise BYTES SEED   write BYTES of f32le noise in [-0.5, 0.5) to stdout
 *   pipetool count [--zero]     read stdin to the end and print the byte count;
 *                               with --zero, exit 1 if any byte is not zero
 *   pipetool sf2raw FILE f32le|f64le
 *       the samples of an audio file, read with libsndfile as float or double
 *       (unchanged for float and double files), as raw little-endian samples
 *
 * BYTES may end in K, M or G (powers of 1024).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((format(printf, 1, 2))) static int die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pipetool: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* A byte count with an optional K, M or G suffix; -1 when malformed. */
static long long parse_bytes(const char *s)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || errno)
        return -1;
    if (*end == 'K')
        v <<= 10, end++;
    else if (*end == 'M')
        v <<= 20, end++;
    else if (*end == 'G')
        v <<= 30, end++;
    return *end ? -1 : v;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *b = buf;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int feed(int argc, char **argv)
{
    if (argc != 5)
        return die("usage: feed SEED MAXCHUNK MAXDELAY_US");
    rng_state = strtoull(argv[2], NULL, 10) * 0x9e3779b97f4a7c15u + 1;
    const long maxchunk = atol(argv[3]), maxdelay = atol(argv[4]);
    if (maxchunk < 1 || maxdelay < 0)
        return die("feed: bad MAXCHUNK or MAXDELAY_US");
    size_t cap = (size_t)maxchunk + 65536, have = 0;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return die("out of memory");
    int eof = 0;
    for (;;) {
        const size_t piece = 1 + (size_t)(rng() % (uint64_t)maxchunk);
        while (!eof && have < piece) {
            ssize_t r = read(STDIN_FILENO, buf + have, cap - have);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return die("feed: reading stdin: %s", strerror(errno));
            if (r == 0)
                eof = 1;
            have += (size_t)r;
        }
        const size_t n = piece < have ? piece : have;
        if (n == 0)
            break;
        if (write_all(STDOUT_FILENO, buf, n) != 0)
            return die("feed: writing stdout: %s", strerror(errno));
        memmove(buf, buf + n, have - n);
        have -= n;
        const long delay = (long)(rng() % (uint64_t)(maxdelay + 1));
        if (delay > 0)
            sleep_us(delay);
    }
    free(buf);
    return 0;
}

/* The whole of a file; NULL on failure. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, have = 0;
    unsigned char *b = malloc(cap);
    for (;;) {
        if (!b)
            break;
        have += fread(b + have, 1, cap - have, f);
        if (have < cap)
            break;
        unsigned char *nb = realloc(b, cap *= 2);
        if (!nb) {
            free(b);
            b = NULL;
        }
        b = nb;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return NULL;
    }
    *n = have;
    return b;
}

typedef struct trickle_out {
    int fd, eof;
    unsigned char *buf;
    size_t cap, got;
} trickle_out;

/* Wait up to `ms` for output (ms < 0: no limit) and read what is there.
 * Returns 1 when something was read or EOF seen, 0 on timeout, -1 on error. */
static int read_some(trickle_out *o, double ms)
{
    struct pollfd p = {.fd = o->fd, .events = POLLIN};
    int r = poll(&p, 1, ms < 0 ? -1 : (int)(ms + 0.999));
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    if (r == 0)
        return 0;
    if (o->got == o->cap) {
        o->cap *= 2;
        unsigned char *nb = realloc(o->buf, o->cap);
        if (!nb)
            return -1;
        o->buf = nb;
    }
    ssize_t n = read(o->fd, o->buf + o->got, o->cap - o->got);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : -1;
    if (n == 0)
        o->eof = 1;
    o->got += (size_t)n;
    return 1;
}

/* Like read_some, with the wait bounded by ms after t0 (seconds, now_s).
 * Returns 1 to go on, 0 once the time is up, -1 on error. */
static int read_until(trickle_out *o, double t0, double ms)
{
    const double left = ms - (now_s() - t0) * 1e3;
    if (left <= 0)
        return 0;
    return read_some(o, left) < 0 ? -1 : 1;
}

static int child_status(pid_t pid, char *what, size_t n)
{
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) {
        snprintf(what, n, "waitpid: %s", strerror(errno));
        return -1;
    }
    if (WIFEXITED(st)) {
        snprintf(what, n, "exit status %d", WEXITSTATUS(st));
        return WEXITSTATUS(st);
    }
    snprintf(what, n, "killed by signal %d", WTERMSIG(st));
    return 128 + WTERMSIG(st);
}

/* Start cmd (argv style) with pipes for its stdin (*to, ours to write) and
 * stdout (*from, ours to read). Returns its pid, or -1 after printing. */
static pid_t spawn_piped(char **cmd, int *to, int *from)
{
    int tp[2], fp[2];
    if (pipe(tp) != 0 || pipe(fp) != 0) {
        die("pipe: %s", strerror(errno));
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    const pid_t pid = fork();
    if (pid < 0) {
        die("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        dup2(tp[0], STDIN_FILENO);
        dup2(fp[1], STDOUT_FILENO);
        close(tp[0]);
        close(tp[1]);
        close(fp[0]);
        close(fp[1]);
        execvp(cmd[0], cmd);
        fprintf(stderr, "pipetool: cannot run %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    close(tp[0]);
    close(fp[1]);
    *to = tp[1];
    *from = fp[0];
    return pid;
}

/* A trickle run: the input, the rules, the command's pipes, what was seen. */
typedef struct trickle_job {
    const unsigned char *in;
    size_t fb; /* bytes a frame */
    long frames, look, quantum;
    double pause_ms, bound_ms;
    int to;        /* the command's stdin */
    trickle_out o; /* its stdout */
    double max_lat;
    long worst_frame;
    char why[256]; /* the first failure, empty while there is none */
} trickle_job;

/* Input frame j; then the frames it completes must arrive within the bound,
 * and nothing more during the pause. */
static void trickle_frame(trickle_job *t, long j)
{
    trickle_out *o = &t->o;
    if (write_all(t->to, t->in + (size_t)j * t->fb, t->fb) != 0) {
        snprintf(t->why, sizeof t->why, "writing frame %ld: %s", j, strerror(errno));
        return;
    }
    const double t0 = now_s();
    const long whole = (j + 1) / t->quantum * t->quantum;
    const long want_frames = whole - t->look > 0 ? whole - t->look : 0;
    const size_t want = (size_t)want_frames * t->fb;
    /* The frames this one completes, within the bound. */
    int r = 1;
    while (o->got < want && !o->eof && (r = read_until(o, t0, t->bound_ms)) > 0) {
    }
    if (r < 0) {
        snprintf(t->why, sizeof t->why, "reading output: %s", strerror(errno));
        return;
    }
    const double lat = (now_s() - t0) * 1e3;
    if (o->got < want) {
        snprintf(t->why, sizeof t->why,
                 "after input frame %ld: %.3g output frames within %.0f ms, expected %ld%s", j,
                 (double)o->got / (double)t->fb, t->bound_ms, want_frames,
                 o->eof ? " (output closed)" : "");
        return;
    }
    if (want_frames > 0 && lat > t->max_lat) {
        t->max_lat = lat;
        t->worst_frame = j;
    }
    /* The pause: nothing more may arrive. */
    for (;;) {
        if (o->got > want) {
            snprintf(t->why, sizeof t->why,
                     "after input frame %ld: %.3g output frames, expected only %ld (output "
                     "ahead of the input)",
                     j, (double)o->got / (double)t->fb, want_frames);
            return;
        }
        if (o->eof) {
            snprintf(t->why, sizeof t->why, "output closed after input frame %ld", j);
            return;
        }
        if ((r = read_until(o, t0, t->pause_ms)) <= 0)
            break;
    }
    if (r < 0)
        snprintf(t->why, sizeof t->why, "reading output: %s", strerror(errno));
}

/* The rest (the look-ahead's frames) after the end of input, within 10 s. */
static void trickle_rest(trickle_job *t)
{
    const double t_end = now_s();
    while (!t->why[0] && !t->o.eof) {
        const int r = read_until(&t->o, t_end, 10000);
        if (r == 0)
            snprintf(t->why, sizeof t->why, "no end of output within 10 s of closing its input");
        else if (r < 0)
            snprintf(t->why, sizeof t->why, "reading output: %s", strerror(errno));
    }
}

/* The whole output against EXPECTED, byte for byte. */
static void trickle_compare(trickle_job *t, const unsigned char *expect, size_t exp_n)
{
    if (t->why[0])
        return;
    if (t->o.got != exp_n) {
        snprintf(t->why, sizeof t->why, "%zu output bytes in all, expected %zu", t->o.got, exp_n);
        return;
    }
    for (size_t i = 0; i < exp_n; i++)
        if (t->o.buf[i] != expect[i]) {
            snprintf(t->why, sizeof t->why, "output differs from EXPECTED at byte %zu (frame %zu)",
                     i, i / t->fb);
            return;
        }
}

static int trickle(int argc, char **argv)
{
    if (argc < 10 || strcmp(argv[8], "--") != 0)
        return die("usage: trickle IN EXPECTED FRAME_BYTES LOOKAHEAD[/Q] PAUSE_MS BOUND_MS -- CMD "
                   "ARGS...");
    size_t in_n = 0, exp_n = 0;
    unsigned char *in = slurp(argv[2], &in_n), *expect = slurp(argv[3], &exp_n);
    const long fb = atol(argv[4]), look = atol(argv[5]);
    const char *slash = strchr(argv[5], '/');
    const long quantum = slash ? atol(slash + 1) : 1;
    if (!in || !expect)
        return die("trickle: cannot read IN or EXPECTED");
    if (quantum < 1)
        return die("trickle: the quantum must be at least 1");
    if (fb < 1 || look < 0 || in_n % (size_t)fb != 0 || exp_n != in_n)
        return die("trickle: IN and EXPECTED must hold the same whole number of frames");
    trickle_job t = {.in = in,
                     .fb = (size_t)fb,
                     .frames = (long)(in_n / (size_t)fb),
                     .look = look,
                     .quantum = quantum,
                     .pause_ms = atof(argv[6]),
                     .bound_ms = atof(argv[7]),
                     .worst_frame = -1};
    int from = -1;
    const pid_t pid = spawn_piped(argv + 9, &t.to, &from);
    if (pid < 0)
        return 1;
    t.o = (trickle_out){.fd = from, .cap = in_n + 4096};
    t.o.buf = malloc(t.o.cap);
    if (!t.o.buf)
        return die("out of memory");
    for (long j = 0; j < t.frames && !t.why[0]; j++)
        trickle_frame(&t, j);
    close(t.to);
    trickle_rest(&t);
    close(t.o.fd);
    char st_text[64];
    const int st = child_status(pid, st_text, sizeof st_text);
    trickle_compare(&t, expect, exp_n);
    if (!t.why[0] && st != 0)
        snprintf(t.why, sizeof t.why, "%s: %s", argv[9], st_text);
    if (t.why[0]) {
        fprintf(stderr, "pipetool: trickle: %s\n", t.why);
        return 1;
    }
    printf("trickle: %ld frames, look-ahead %ld: every output within %.1f ms of the input "
           "frame that completes it (max at input frame %ld; bound %.0f ms)\n",
           t.frames, look, t.max_lat, t.worst_frame, t.bound_ms);
    free(t.o.buf);
    free(in);
    free(expect);
    return 0;
}

static int rss(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--") != 0)
        return die("usage: rss FILE -- CMD ARGS...");
    const pid_t pid = fork();
    if (pid < 0)
        return die("fork: %s", strerror(errno));
    if (pid == 0) {
        execvp(argv[4], argv + 4);
        fprintf(stderr, "pipetool: cannot run %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }
    /* Our own signals go to the child (it is in our process group). */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return die("wait4: %s", strerror(errno));
    FILE *f = fopen(argv[2], "w");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0)
        return die("cannot write %s", argv[2]);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int produce(long long bytes, int noise)
{
    enum { N = 1 << 20 };
    static float buf[N / 4];
    if (noise)
        for (size_t i = 0; i < N / 4; i++)
            buf[i] = (float)((double)(rng() >> 11) * 0x1p-53 - 0.5);
    signal(SIGPIPE, SIG_IGN);
    while (bytes > 0) {
        if (noise) /* not one period: shift the buffer by a few samples */
            for (size_t i = 0; i < 7; i++)
                buf[rng() % (N / 4)] = (float)((double)(rng() >> 11) * 0x1p-53 - 0.5);
        const size_t n = bytes < N ? (size_t)bytes : N;
        if (write_all(STDOUT_FILENO, buf, n) != 0)
            return die("writing stdout: %s", strerror(errno));
        bytes -= (long long)n;
    }
    return 0;
}

static int count(int argc, char **argv)
{
    const int zero = argc == 3 && strcmp(argv[2], "--zero") == 0;
    if (argc != 2 && !zero)
        return die("usage: count [--zero]");
    enum { N = 1 << 20 };
    static unsigned char buf[N];
    unsigned long long total = 0, first_nonzero = 0;
    int nonzero = 0;
    for (;;) {
        ssize_t r = read(STDIN_FILENO, buf, N);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return die("reading stdin: %s", strerror(errno));
        if (r == 0)
            break;
        if (zero && !nonzero)
            for (ssize_t i = 0; i < r; i++)
                if (buf[i]) {
                    nonzero = 1;
                    first_nonzero = total + (unsigned long long)i;
                    break;
                }
        total += (unsigned long long)r;
    }
    printf("%llu\n", total);
    if (nonzero) {
        fprintf(stderr, "pipetool: count: byte %llu is not zero\n", first_nonzero);
        return 1;
    }
    return 0;
}

static int sf2raw(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "f32le") != 0 && strcmp(argv[3], "f64le") != 0))
        return die("usage: sf2raw FILE f32le|f64le");
    const int dbl = argv[3][1] == '6';
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *f = sf_open(argv[2], SFM_READ, &info);
    if (!f)
        return die("sf2raw: %s", sf_strerror(NULL));
    const size_t C = (size_t)info.channels, step = 4096;
    double *d = malloc(step * C * sizeof *d);
    float *x = malloc(step * C * sizeof *x);
    if (!d || !x)
        return die("out of memory");
    for (;;) {
        sf_count_t n =
            dbl ? sf_readf_double(f, d, (sf_count_t)step) : sf_readf_float(f, x, (sf_count_t)step);
        if (n <= 0)
            break;
        const size_t bytes = (size_t)n * C * (dbl ? 8 : 4);
        if (write_all(STDOUT_FILENO, dbl ? (void *)d : (void *)x, bytes) != 0)
            return die("writing stdout: %s", strerror(errno));
    }
    sf_close(f);
    free(d);
    free(x);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "feed") == 0)
        return feed(argc, argv);
    if (strcmp(cmd, "trickle") == 0)
        return trickle(argc, argv);
    if (strcmp(cmd, "rss") == 0)
        return rss(argc, argv);
    if (strcmp(cmd, "count") == 0)
        return count(argc, argv);
    if (strcmp(cmd, "sf2raw") == 0)
        return sf2raw(argc, argv);
    if ((strcmp(cmd, "zeros") == 0 && argc == 3) || (strcmp(cmd, "noise") == 0 && argc == 4)) {
        const long long bytes = parse_bytes(argv[2]);
        if (bytes < 0)
            return die("bad byte count '%s'", argv[2]);
        rng_state = argc == 4 ? strtoull(argv[3], NULL, 10) * 0x9e3779b97f4a7c15u + 1 : 1;
        return produce(bytes, argc == 4);
    }
    fprintf(stderr, "usage: pipetool feed|trickle|rss|zeros|noise|count|sf2raw ... (see "
                    "tests/cli/pipetool.c)\n");
    return 2;
}
