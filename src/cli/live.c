/*
 * gpufilt --live: capture -> filter -> playback through PortAudio.
 *
 *   audio callback ──in ring──► worker ──out ring──► audio callback
 *   (PortAudio's      (SPSC,      (engine, causal:     (primed with
 *    thread)           lock-free)  push, submit,        silence: the
 *                                  wait, pull)          added latency)
 *
 * The callback only copies frames and counts (C11 atomics); it wakes the
 * worker with sem_post, which is async-signal-safe and on Linux (glibc,
 * futex) an atomic increment plus, only when the worker sleeps, one
 * non-blocking FUTEX_WAKE: no lock, no allocation. Waking at once instead of
 * polling gives the worker the whole priming time as its budget.
 *
 * Everything else (PortAudio set-up, device choice, the engine, stats) runs
 * on the calling thread. See docs/live.md.
 */
#include "live.h"

#include "hist_out.h"
#include "ring.h"

#include <portaudio.h>
#ifdef GPUFILT_HAVE_PA_JACK
#include <pa_jack.h>
#endif
#ifdef GPUFILT_HAVE_ALSA_LIB
#include <alsa/asoundlib.h>
#endif
#ifdef GPUFILT_HAVE_JACK_LIB
#include <jack/jack.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE_DEFAULT_FRAMES 256
#define LIVE_PRIME_BLOCKS   2    /* blocks of silence primed into the output ring */
#define LIVE_RING_MIN       8192 /* frames; rings hold at least 16 blocks */
#define LIVE_PROBE_TIMEOUT  20   /* seconds for PortAudio to initialise in the probe */
#define LIVE_WORKER_PRIO    5    /* SCHED_FIFO priority tried for the worker */

/* ---------------------------------------------------------------------- */
/* Counters: written by the callback or the worker, read by the main thread. */

typedef struct live_counts {
    /* callbacks whose status flags carried each PortAudio xrun */
    atomic_ullong pa_in_underflow, pa_in_overflow, pa_out_underflow, pa_out_overflow;
    atomic_ullong in_full, in_dropped;     /* input ring full: frames dropped */
    atomic_ullong out_empty, out_silence;  /* output ring short: silence played */
    atomic_ullong late_events, late_drops; /* frames that came too late, dropped */
    atomic_ullong out_full, out_lost;      /* worker found the output ring full */
    atomic_ullong frames_in, frames_out;   /* frames captured / played from the ring */
    atomic_ullong raised;                  /* latency added during start-up, frames */
    atomic_int warm;                       /* start-up phase over */
} live_counts;

typedef struct live {
    int C;        /* channels */
    size_t F;     /* frames per block (callback and engine chunk) */
    double rate;  /* Hz */
    size_t prime; /* frames of silence primed into the output ring */
    /* Output callback's own state (no other thread touches it once started): */
    size_t hold;    /* most frames the output ring holds at a callback */
    size_t warmup;  /* frames of output still in the start-up phase */
    size_t pending; /* frames of extra silence still to play (latency margin) */
    gf_ring in, out;
    void *in_store, *out_store;
    sem_t wake;
    int sem_ok;
    atomic_int quit;
    /* worker */
    gf_engine *e;
    gf_precision prec;
    double *stage;  /* f64: F frames of doubles */
    float *scratch; /* F frames: output that does not fit the ring */
    pthread_t thread;
    int thread_started, realtime;
    atomic_int failed; /* set (release) after err is written */
    char err[512];
    atomic_ullong blocks, busy_ns_total, busy_ns_max;
    live_counts n;
    /* --hist: records go to the files from the worker (never the callback) */
    gf_hist_config hc;
    gf_hist_out *hout;
    int hist_failed; /* worker only; read after it is joined */
    char hist_err[512];
} live;

static void bump(atomic_ullong *c, unsigned long long v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static unsigned long long get(atomic_ullong *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* ---------------------------------------------------------------------- */
/* The real-time side: copies and counts, nothing else. */

static int on_audio(const void *input, void *output, unsigned long frames,
                    const PaStreamCallbackTimeInfo *time_info, PaStreamCallbackFlags flags,
                    void *user)
{
    live *L = user;
    (void)time_info;
    if (flags & paInputUnderflow)
        bump(&L->n.pa_in_underflow, 1);
    if (flags & paInputOverflow)
        bump(&L->n.pa_in_overflow, 1);
    if (flags & paOutputUnderflow)
        bump(&L->n.pa_out_underflow, 1);
    if (flags & paOutputOverflow)
        bump(&L->n.pa_out_overflow, 1);
    /* Output first: once the input is posted, the worker may finish that
     * block before this callback returns, and its output must not count
     * as late. */
    if (output) {
        float *out = output;
        const size_t C = (size_t)L->C;
        /* Extra start-up silence: played without taking from the ring. */
        size_t quiet = L->pending < frames ? L->pending : frames;
        if (quiet) {
            memset(out, 0, quiet * C * sizeof(float));
            L->pending -= quiet;
        }
        /* After the ring ran empty, the frames that were late arrive on
         * top of the primed level: drop them to keep the latency fixed. */
        const size_t avail = gf_ring_read_available(&L->out);
        if (avail > L->hold) {
            gf_ring_read(&L->out, NULL, avail - L->hold);
            bump(&L->n.late_events, 1);
            bump(&L->n.late_drops, avail - L->hold);
        }
        const size_t want = frames - quiet;
        const size_t r = gf_ring_read(&L->out, out + quiet * C, want);
        if (r < want) {
            memset(out + (quiet + r) * C, 0, (want - r) * C * sizeof(float));
            if (L->warmup > 0 && L->hold + (want - r) + 2 * L->F <= L->out.size / 2) {
                /* Start-up: the host delivers blocks in bursts (a period
                 * longer than a block) or the first blocks were slow. Keep
                 * the silence as latency, plus one block of margin (up to
                 * half the ring: a worker that is simply too slow for the
                 * stream shows as xruns instead). */
                L->hold += want - r + L->F;
                L->pending += L->F;
                bump(&L->n.raised, want - r + L->F);
            } else {
                bump(&L->n.out_empty, 1);
                bump(&L->n.out_silence, want - r);
            }
        }
        bump(&L->n.frames_out, r);
        if (L->warmup > 0) {
            L->warmup -= L->warmup < frames ? L->warmup : frames;
            if (L->warmup == 0)
                atomic_store_explicit(&L->n.warm, 1, memory_order_release);
        }
    }
    if (input) {
        const size_t w = gf_ring_write(&L->in, input, frames);
        if (w < frames) {
            bump(&L->n.in_full, 1);
            bump(&L->n.in_dropped, frames - w);
        }
        bump(&L->n.frames_in, w);
        sem_post(&L->wake);
    }
    return paContinue;
}

/* ---------------------------------------------------------------------- */
/* The worker: input ring -> engine -> output ring. */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int worker_fail(live *L, gf_status st, const char *what)
{
    const char *detail = gf_engine_error(L->e);
    snprintf(L->err, sizeof L->err, "%s backend failed (%s): %s%s%s", gf_engine_backend(L->e), what,
             gf_strerror(st), *detail ? ": " : "", detail);
    atomic_store_explicit(&L->failed, 1, memory_order_release);
    return -1;
}

static int push_all(live *L, const void *p, size_t n)
{
    size_t used = 0;
    gf_status st = gf_engine_push(L->e, p, n, &used);
    if (st != GF_OK)
        return worker_fail(L, st, "push");
    if (used != n) /* the chunk is one block and every slot is free here */
        return worker_fail(L, GF_ERR_STATE, "push took part of a block");
    return 0;
}

static int pull_exact(live *L, void *dst, size_t n)
{
    unsigned char *d = dst;
    const size_t fb = (size_t)L->C * (L->prec == GF_PRECISION_F32 ? 4 : 8);
    while (n > 0) {
        size_t got = 0;
        gf_status st = gf_engine_pull(L->e, d, n, &got);
        if (st != GF_OK)
            return worker_fail(L, st, "pull");
        if (got == 0)
            return worker_fail(L, GF_ERR_STATE, "fewer frames out than in");
        d += got * fb;
        n -= got;
    }
    return 0;
}

/* Completed histogram records to their files: off the audio thread, after
 * the block's output is in the ring. A failed write stops the histograms,
 * not the audio; it is reported at the end. */
static void write_hist(live *L)
{
    gf_hist_record rec;
    while (L->hout && !L->hist_failed && gf_engine_hist_next(L->e, &rec))
        if (gf_hist_out_write(L->hout, &rec, L->hist_err, sizeof L->hist_err) != 0)
            L->hist_failed = 1;
}

/* Filter n (<= F) frames from the input ring into the output ring. */
static int process_block(live *L, size_t n)
{
    const size_t C = (size_t)L->C;
    void *p1, *p2;
    size_t n1, n2;
    gf_ring_read_regions(&L->in, n, &p1, &n1, &p2, &n2);
    if (L->prec == GF_PRECISION_F32) {
        if (push_all(L, p1, n1) || (n2 && push_all(L, p2, n2)))
            return -1;
    } else {
        const float *a = p1, *b = p2;
        for (size_t i = 0; i < n1 * C; i++)
            L->stage[i] = a[i];
        for (size_t i = 0; i < n2 * C; i++)
            L->stage[n1 * C + i] = b[i];
        if (push_all(L, L->stage, n))
            return -1;
    }
    gf_ring_read_advance(&L->in, n);

    gf_status st = gf_engine_submit(L->e);
    if (st == GF_OK)
        st = gf_engine_wait(L->e);
    if (st != GF_OK)
        return worker_fail(L, st, "submit");

    const size_t granted = gf_ring_write_regions(&L->out, n, &p1, &n1, &p2, &n2);
    if (L->prec == GF_PRECISION_F32) {
        if ((n1 && pull_exact(L, p1, n1)) || (n2 && pull_exact(L, p2, n2)) ||
            (granted < n && pull_exact(L, L->scratch, n - granted)))
            return -1;
    } else {
        if (pull_exact(L, L->stage, n))
            return -1;
        float *a = p1, *b = p2;
        for (size_t i = 0; i < n1 * C; i++)
            a[i] = (float)L->stage[i];
        for (size_t i = 0; i < n2 * C; i++)
            b[i] = (float)L->stage[n1 * C + i];
    }
    gf_ring_write_advance(&L->out, granted);
    write_hist(L);
    if (granted < n) {
        bump(&L->n.out_full, 1);
        bump(&L->n.out_lost, n - granted);
    }
    return 0;
}

/* After the worker has stopped: end the stream so that the last, short
 * block is complete, write its records and put the files in place. */
static int finish_hist(live *L)
{
    gf_status st = gf_engine_flush(L->e);
    size_t got = 1;
    void *buf = L->prec == GF_PRECISION_F32 ? (void *)L->scratch : (void *)L->stage;
    while (st == GF_OK && got > 0)
        st = gf_engine_pull(L->e, buf, L->F, &got);
    if (st != GF_OK) {
        gf_cli_error("histograms: the filter failed at the end: %s", gf_strerror(st));
        return GF_EXIT_DEVICE;
    }
    write_hist(L);
    int rc = 0;
    if (L->hist_failed || (rc = gf_hist_out_commit(&L->hout, L->hist_err, sizeof L->hist_err))) {
        gf_cli_error("%s", L->hist_err);
        return rc ? rc : GF_EXIT_OUTPUT;
    }
    return GF_EXIT_OK;
}

static void *worker_main(void *arg)
{
    live *L = arg;
    while (!atomic_load(&L->quit)) {
        if (sem_wait(&L->wake) != 0)
            continue; /* EINTR: a signal; quit is checked above */
        size_t n;
        while (!atomic_load(&L->quit) && (n = gf_ring_read_available(&L->in)) > 0) {
            if (n > L->F)
                n = L->F;
            const uint64_t t0 = now_ns();
            if (process_block(L, n) != 0)
                return NULL;
            const uint64_t dt = now_ns() - t0;
            bump(&L->blocks, 1);
            bump(&L->busy_ns_total, dt);
            unsigned long long m = get(&L->busy_ns_max);
            while (dt > m && !atomic_compare_exchange_weak(&L->busy_ns_max, &m, dt)) {
            }
        }
    }
    return NULL;
}

/* Start the worker, at a modest real-time priority where allowed (below
 * JACK's own threads), so a busy desktop does not delay it. */
static int start_worker(live *L)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) == 0) {
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = LIVE_WORKER_PRIO;
        if (pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
            pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0 &&
            pthread_attr_setschedparam(&attr, &sp) == 0 &&
            pthread_create(&L->thread, &attr, worker_main, L) == 0) {
            L->realtime = 1;
            L->thread_started = 1;
        }
        pthread_attr_destroy(&attr);
    }
    if (!L->thread_started && pthread_create(&L->thread, NULL, worker_main, L) == 0)
        L->thread_started = 1;
    return L->thread_started ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* PortAudio start-up: quiet libraries, a probe for aborting backends. */

#ifdef GPUFILT_HAVE_ALSA_LIB
static void alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt,
                       ...)
{
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}
#endif
#ifdef GPUFILT_HAVE_JACK_LIB
static void jack_quiet(const char *msg)
{
    (void)msg;
}
#endif

/* ALSA and JACK print every device they fail to open (dozens of lines on a
 * machine without a sound card). GPUFILT_AUDIO_DEBUG=1 keeps them. */
static void quiet_audio_libraries(void)
{
    const char *dbg = getenv("GPUFILT_AUDIO_DEBUG");
    if (dbg && *dbg && strcmp(dbg, "0") != 0)
        return;
#ifdef GPUFILT_HAVE_ALSA_LIB
    snd_lib_error_set_handler(alsa_quiet);
#endif
#ifdef GPUFILT_HAVE_JACK_LIB
    jack_set_error_function(jack_quiet);
    jack_set_info_function(jack_quiet);
#endif
}

/*
 * Run Pa_Initialize in a child process first: PortAudio 19.6's ALSA backend
 * aborts (assert in BuildDeviceList, PortAudio issue #294) where no ALSA
 * configuration is installed, and an abort cannot be caught in-process.
 * Returns 0 when the child initialised and exited normally; otherwise -1
 * with a reason in why (the child's last line, e.g. the failed assertion).
 */
static int probe_initialize(char *why, size_t why_size)
{
    int fds[2];
    why[0] = '\0';
    if (pipe(fds) != 0)
        return 0; /* cannot probe: let the real call take its chance */
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        const int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0)
            dup2(nul, STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (Pa_Initialize() == paNoError)
            Pa_Terminate();
        _exit(0);
    }
    close(fds[1]);
    /* Keep the tail of what the child says; give up after a while. */
    char buf[2048];
    size_t len = 0;
    int timed_out = 0;
    const double deadline = gf_now() + LIVE_PROBE_TIMEOUT;
    for (;;) {
        const double left = deadline - gf_now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        const int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            timed_out = pr == 0;
            break;
        }
        char tmp[512];
        const ssize_t r = read(fds[0], tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r; i++) {
            if (len == sizeof buf - 1) {
                memmove(buf, buf + sizeof buf / 2, len - sizeof buf / 2);
                len -= sizeof buf / 2;
            }
            buf[len++] = tmp[i];
        }
    }
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        snprintf(why, why_size, "PortAudio did not finish initialising within %d s",
                 LIVE_PROBE_TIMEOUT);
        return -1;
    }
    if (!WIFSIGNALED(status))
        return 0;
    /* The last non-empty line, e.g. "...: BuildDeviceList: Assertion `...' failed." */
    buf[len] = '\0';
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = '\0';
    const char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    const char *src = strstr(line, "pa_linux_"); /* drop "prog: src/hostapi/alsa/" */
    if (src)
        line = src;
    if (*line)
        snprintf(why, why_size, "%.400s (signal %d)", line, WTERMSIG(status));
    else
        snprintf(why, why_size, "signal %d", WTERMSIG(status));
    return -1;
}

/* Where the ALSA backend would abort, this stand-in configuration (one
 * default PCM that never opens) lets it list no devices and return, so
 * that JACK stays usable. */
static const char alsa_stand_in[] = "# gpufilt: stand-in while no ALSA configuration exists\n"
                                    "pcm.default {\n"
                                    "    type hw\n"
                                    "    card 99999\n"
                                    "}\n";

typedef struct pa_session {
    int initialised;
    char stand_in[256]; /* path of the stand-in ALSA configuration, or "" */
} pa_session;

static int write_stand_in(pa_session *pa)
{
    const char *dir = getenv("TMPDIR");
    snprintf(pa->stand_in, sizeof pa->stand_in, "%s/gpufilt-alsa-XXXXXX",
             dir && *dir ? dir : "/tmp");
    const int fd = mkstemp(pa->stand_in);
    if (fd < 0) {
        pa->stand_in[0] = '\0';
        return -1;
    }
    const ssize_t w = write(fd, alsa_stand_in, sizeof alsa_stand_in - 1);
    close(fd);
    if (w != (ssize_t)(sizeof alsa_stand_in - 1) ||
        setenv("ALSA_CONFIG_PATH", pa->stand_in, 1) != 0) {
        unlink(pa->stand_in);
        pa->stand_in[0] = '\0';
        return -1;
    }
    return 0;
}

/* Initialise PortAudio, surviving an aborting ALSA backend. Returns 0 or an
 * exit code after a one-line error. */
static int pa_begin(pa_session *pa)
{
    memset(pa, 0, sizeof *pa);
    quiet_audio_libraries();
#ifdef GPUFILT_HAVE_PA_JACK
    PaJack_SetClientName("gpufilt"); /* JACK ports "gpufilt:in_1" ..., not "PortAudio:..." */
#endif
    char why[512];
    if (probe_initialize(why, sizeof why) != 0) {
        if (strstr(why, "within")) {
            gf_cli_error("audio: %s", why);
            return GF_EXIT_DEVICE;
        }
        const int alsa = strstr(why, "alsa") != NULL || strstr(why, "ALSA") != NULL;
        char why2[512] = "";
        if (alsa && write_stand_in(pa) == 0 && probe_initialize(why2, sizeof why2) == 0) {
            gf_cli_warn("no usable ALSA configuration: PortAudio's ALSA backend aborts (%s); "
                        "going on without ALSA devices (JACK works: --host-api JACK; install "
                        "libasound2-data or set ALSA_CONFIG_PATH to fix)",
                        why);
        } else {
            if (pa->stand_in[0]) {
                unsetenv("ALSA_CONFIG_PATH");
                unlink(pa->stand_in);
                pa->stand_in[0] = '\0';
            }
            if (alsa)
                gf_cli_error("PortAudio's ALSA backend aborted while listing devices (%s): no "
                             "ALSA configuration found (set ALSA_CONFIG_PATH or install "
                             "libasound2-data); with a JACK server, use --host-api JACK",
                             why);
            else
                gf_cli_error("PortAudio aborted while initialising (%s)", why);
            return GF_EXIT_DEVICE;
        }
    }
    const PaError err = Pa_Initialize();
    if (err != paNoError) {
        gf_cli_error("PortAudio: cannot initialise: %s", Pa_GetErrorText(err));
        return GF_EXIT_DEVICE;
    }
    pa->initialised = 1;
    return 0;
}

static void pa_end(pa_session *pa)
{
    if (pa->initialised)
        Pa_Terminate();
    pa->initialised = 0;
    if (pa->stand_in[0]) {
        unlink(pa->stand_in);
        pa->stand_in[0] = '\0';
    }
}

/* ---------------------------------------------------------------------- */
/* Host APIs and devices. */

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int equals_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* Append to a string buffer, truncating quietly. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
appendf(char *buf, size_t size, const char *fmt, ...)
{
    const size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

static const char *api_name(PaHostApiIndex a)
{
    const PaHostApiInfo *h = Pa_GetHostApiInfo(a);
    return h ? h->name : "?";
}

/* The host API whose name contains `name`, or an exit code (< 0 as -code)
 * after an error listing the choices. */
static int find_host_api(const char *name, PaHostApiIndex *out)
{
    const PaHostApiIndex n = Pa_GetHostApiCount();
    char list[512] = "", matches[512] = "";
    int found = 0;
    PaHostApiIndex exact = -1;
    for (PaHostApiIndex a = 0; a < n; a++) {
        const char *an = api_name(a);
        appendf(list, sizeof list, "%s'%s'", list[0] ? ", " : "", an);
        if (equals_ci(an, name))
            exact = a;
        if (contains_ci(an, name)) {
            appendf(matches, sizeof matches, "%s'%s'", matches[0] ? ", " : "", an);
            *out = a;
            found++;
        }
    }
    if (exact >= 0) {
        *out = exact;
        return 0;
    }
    if (found == 1)
        return 0;
    if (found > 1)
        gf_cli_error("--host-api '%s' is ambiguous: it matches %s", name, matches);
    else
        gf_cli_error("--host-api '%s': no such host API; PortAudio has %s%s", name,
                     list[0] ? list : "none",
                     contains_ci("jack", name) || contains_ci(name, "jack")
                         ? " (JACK is listed only while a JACK server runs)"
                         : "");
    return GF_EXIT_DEVICE;
}

static int dev_channels(const PaDeviceInfo *d, int input)
{
    return input ? d->maxInputChannels : d->maxOutputChannels;
}

/* Pick the input (input = 1) or output device: by index, by name substring
 * (case-insensitive; an exact name wins), or the default of the host API.
 * api < 0: any host API. Returns 0 or an exit code after an error. */
static int find_device(const char *spec, int input, PaHostApiIndex api, PaDeviceIndex *out)
{
    const char *dir = input ? "input" : "output";
    const char *opt = input ? "--in" : "--out";
    const PaDeviceIndex n = Pa_GetDeviceCount();
    if (!spec) {
        PaDeviceIndex d = paNoDevice;
        if (api >= 0) {
            const PaHostApiInfo *h = Pa_GetHostApiInfo(api);
            d = h ? (input ? h->defaultInputDevice : h->defaultOutputDevice) : paNoDevice;
        } else {
            d = input ? Pa_GetDefaultInputDevice() : Pa_GetDefaultOutputDevice();
        }
        if (d == paNoDevice || d < 0) {
            if (api >= 0)
                gf_cli_error("no audio %s device in host API '%s' (see gpufilt --list-devices)",
                             dir, api_name(api));
            else
                gf_cli_error("no audio %s device found (PortAudio sees %d device%s; see gpufilt "
                             "--list-devices; with a JACK server, use --host-api JACK)",
                             dir, (int)(n > 0 ? n : 0), n == 1 ? "" : "s");
            return GF_EXIT_DEVICE;
        }
        *out = d;
        return 0;
    }
    /* A whole number is an index. */
    char *end = NULL;
    const long idx = strtol(spec, &end, 10);
    if (*spec && end && *end == '\0') {
        const PaDeviceInfo *d = idx >= 0 && idx < n ? Pa_GetDeviceInfo((PaDeviceIndex)idx) : NULL;
        if (!d) {
            gf_cli_error("%s %s: no device with that index (PortAudio has %d; see gpufilt "
                         "--list-devices)",
                         opt, spec, (int)(n > 0 ? n : 0));
            return GF_EXIT_DEVICE;
        }
        if (dev_channels(d, input) < 1) {
            gf_cli_error("%s %s: '%s' has no %s channels", opt, spec, d->name, dir);
            return GF_EXIT_DEVICE;
        }
        if (api >= 0 && d->hostApi != api) {
            gf_cli_error("%s %s: '%s' belongs to host API '%s', not '%s'", opt, spec, d->name,
                         api_name(d->hostApi), api_name(api));
            return GF_EXIT_DEVICE;
        }
        *out = (PaDeviceIndex)idx;
        return 0;
    }
    char matches[1024] = "";
    int found = 0, exact_found = 0;
    PaDeviceIndex pick = paNoDevice, exact = paNoDevice;
    for (PaDeviceIndex i = 0; i < n; i++) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (!d || dev_channels(d, input) < 1 || (api >= 0 && d->hostApi != api))
            continue;
        if (equals_ci(d->name, spec)) {
            exact = i;
            exact_found++;
        }
        if (contains_ci(d->name, spec)) {
            appendf(matches, sizeof matches, "%s%d: '%s' (%s)", matches[0] ? ", " : "", (int)i,
                    d->name, api_name(d->hostApi));
            pick = i;
            found++;
        }
    }
    if (exact_found == 1) {
        *out = exact;
        return 0;
    }
    if (found == 1) {
        *out = pick;
        return 0;
    }
    if (found == 0)
        gf_cli_error("%s '%s': no %s device has that in its name%s%s (see gpufilt --list-devices)",
                     opt, spec, dir, api >= 0 ? " in host API " : "",
                     api >= 0 ? api_name(api) : "");
    else
        gf_cli_error("%s '%s' is ambiguous: %s; give more of the name or the index", opt, spec,
                     matches);
    return GF_EXIT_DEVICE;
}

static const double common_rates[] = {8000,  11025, 16000, 22050, 24000,  32000,
                                      44100, 48000, 88200, 96000, 176400, 192000};

static PaStreamParameters stream_params(PaDeviceIndex d, int channels, int input)
{
    PaStreamParameters p;
    memset(&p, 0, sizeof p);
    const PaDeviceInfo *info = Pa_GetDeviceInfo(d);
    p.device = d;
    p.channelCount = channels;
    p.sampleFormat = paFloat32;
    p.suggestedLatency = input ? info->defaultLowInputLatency : info->defaultLowOutputLatency;
    p.hostApiSpecificStreamInfo = NULL;
    return p;
}

/* Whether one stream (duplex) or each half alone supports the format. */
static int supported(PaDeviceIndex in, PaDeviceIndex out, int C, double rate, int duplex)
{
    const PaStreamParameters pi = stream_params(in, C, 1), po = stream_params(out, C, 0);
    if (duplex)
        return Pa_IsFormatSupported(&pi, &po, rate) == paFormatIsSupported;
    return Pa_IsFormatSupported(&pi, NULL, rate) == paFormatIsSupported &&
           Pa_IsFormatSupported(NULL, &po, rate) == paFormatIsSupported;
}

/* An error naming what the devices do support: rates (with C channels, or
 * with 1 when none works with C) and channel counts (at the default rate). */
static void explain_unsupported(PaDeviceIndex in, PaDeviceIndex out, int C, double rate, int duplex)
{
    const PaDeviceInfo *di = Pa_GetDeviceInfo(in), *dout = Pa_GetDeviceInfo(out);
    char rates[256] = "", chans[256] = "";
    int cr = C;
    for (int pass = 0; pass < 2 && !rates[0]; pass++) {
        cr = pass == 0 ? C : 1;
        for (size_t i = 0; i < sizeof common_rates / sizeof common_rates[0]; i++)
            if (supported(in, out, cr, common_rates[i], duplex))
                appendf(rates, sizeof rates, "%s%.0f", rates[0] ? ", " : "", common_rates[i]);
    }
    const double at = dout->defaultSampleRate;
    int maxc = di->maxInputChannels < dout->maxOutputChannels ? di->maxInputChannels
                                                              : dout->maxOutputChannels;
    if (maxc > 64)
        maxc = 64;
    int run_start = 0;
    for (int c = 1; c <= maxc + 1; c++) {
        const int ok = c <= maxc && supported(in, out, c, at, duplex);
        if (ok && !run_start)
            run_start = c;
        if (!ok && run_start) {
            if (run_start == c - 1)
                appendf(chans, sizeof chans, "%s%d", chans[0] ? ", " : "", run_start);
            else
                appendf(chans, sizeof chans, "%s%d-%d", chans[0] ? ", " : "", run_start, c - 1);
            run_start = 0;
        }
    }
    gf_cli_error("input '%s' / output '%s' (%s) do not support %d channel%s of float samples at "
                 "%.0f Hz; supported rates: %s%s; channels at %.0f Hz: %s (devices report "
                 "at most %d in, %d out)",
                 di->name, dout->name, api_name(dout->hostApi), C, C == 1 ? "" : "s", rate,
                 rates[0] ? rates : "none of 8000..192000", cr != C && rates[0] ? " (mono)" : "",
                 at, chans[0] ? chans : "none", di->maxInputChannels, dout->maxOutputChannels);
}

int gf_live_list_devices(void)
{
    pa_session pa;
    int rc = pa_begin(&pa);
    if (rc)
        return rc;
    const PaHostApiIndex na = Pa_GetHostApiCount();
    const PaDeviceIndex nd = Pa_GetDeviceCount();
    printf("host APIs (--host-api NAME, any part of the name):\n");
    for (PaHostApiIndex a = 0; a < na; a++) {
        const PaHostApiInfo *h = Pa_GetHostApiInfo(a);
        printf("  %s: %d device%s", h->name, h->deviceCount, h->deviceCount == 1 ? "" : "s");
        if (h->defaultInputDevice >= 0 || h->defaultOutputDevice >= 0)
            printf(" (default input %d, output %d)", (int)h->defaultInputDevice,
                   (int)h->defaultOutputDevice);
        printf("\n");
    }
    printf("devices (--in / --out INDEX or any part of the name):\n");
    for (PaDeviceIndex i = 0; i < nd; i++) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (!d)
            continue;
        const int din = i == Pa_GetDefaultInputDevice(), dout = i == Pa_GetDefaultOutputDevice();
        printf("  %3d: %s [%s] in %d, out %d, default rate %.0f Hz%s\n", (int)i, d->name,
               api_name(d->hostApi), d->maxInputChannels, d->maxOutputChannels,
               d->defaultSampleRate,
               din && dout ? ", default input and output"
               : din       ? ", default input"
               : dout      ? ", default output"
                           : "");
    }
    if (nd <= 0)
        printf("  (none; a JACK server's ports appear here while it runs)\n");
    fflush(stdout);
    pa_end(&pa);
    return GF_EXIT_OK;
}

/* ---------------------------------------------------------------------- */
/* gf_live_run */

/* The engine, as main.c's make_engine, but causal with one block per chunk,
 * and run once over a block of silence so that lazy start-up work (CUDA
 * module loading, first launches) is done before the stream starts. */
static int live_engine(const gf_cli_options *o, live *L, const double *taps, size_t ntaps)
{
    gf_config c = gf_cli_engine_config(o, L->C, taps, ntaps);
    c.mode = GF_MODE_CAUSAL;
    c.chunk_frames = L->F;
    /* auto: no cost model here; the GPU whenever one is usable. */
    if (c.device == GF_DEVICE_AUTO)
        c.device = gf_cuda_available() ? GF_DEVICE_CUDA : GF_DEVICE_CPU;
    if (o->hist_path || o->hist_png) {
        L->hc = gf_cli_hist_config(o, (int)L->rate);
        c.hist = &L->hc;
    }
    int rc = gf_cli_engine_create(&c, &L->e);
    if (rc)
        return rc;
    const size_t ss = o->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    void *zeros = calloc(L->F * (size_t)L->C, ss);
    if (!zeros) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }
    size_t used = 0, got = 0;
    gf_status st = gf_engine_push(L->e, zeros, L->F, &used);
    if (st == GF_OK)
        st = gf_engine_submit(L->e);
    if (st == GF_OK)
        st = gf_engine_wait(L->e);
    while (st == GF_OK && (st = gf_engine_pull(L->e, zeros, L->F, &got)) == GF_OK && got > 0) {
    }
    if (st == GF_OK)
        st = gf_engine_reset(L->e);
    free(zeros);
    return st == GF_OK ? 0 : gf_cli_engine_failed(L->e, st);
}

static int live_buffers(live *L)
{
    size_t cap = gf_ring_pow2(L->F * 16 > LIVE_RING_MIN ? L->F * 16 : LIVE_RING_MIN);
    const size_t fb = (size_t)L->C * sizeof(float);
    L->in_store = calloc(cap, fb);
    L->out_store = calloc(cap, fb);
    L->scratch = calloc(L->F, fb);
    if (L->prec == GF_PRECISION_F64)
        L->stage = calloc(L->F * (size_t)L->C, sizeof(double));
    if (!cap || !L->in_store || !L->out_store || !L->scratch ||
        (L->prec == GF_PRECISION_F64 && !L->stage) ||
        gf_ring_init(&L->in, fb, cap, L->in_store) != 0 ||
        gf_ring_init(&L->out, fb, cap, L->out_store) != 0)
        return -1;
    /* The output starts with silence: the worker's time budget. */
    L->prime = LIVE_PRIME_BLOCKS * L->F;
    void *p1, *p2;
    size_t n1, n2;
    gf_ring_write_regions(&L->out, L->prime, &p1, &n1, &p2, &n2);
    gf_ring_write_advance(&L->out, L->prime); /* the storage is zeroed */
    return 0;
}

static unsigned long long xrun_total(live *L)
{
    return get(&L->n.pa_in_underflow) + get(&L->n.pa_in_overflow) + get(&L->n.pa_out_underflow) +
           get(&L->n.pa_out_overflow) + get(&L->n.in_full) + get(&L->n.out_empty) +
           get(&L->n.late_events) + get(&L->n.out_full);
}

static void print_counts(live *L, const char *prefix)
{
    fprintf(stderr,
            "gpufilt: live: %sxruns %llu (PortAudio: input underflow %llu, input overflow %llu, "
            "output underflow %llu, output overflow %llu; input ring full %llu [%llu frames "
            "dropped], output ring empty %llu [%llu frames of silence], late output dropped "
            "%llu [%llu frames], worker found output full %llu [%llu frames])\n",
            prefix, xrun_total(L), get(&L->n.pa_in_underflow), get(&L->n.pa_in_overflow),
            get(&L->n.pa_out_underflow), get(&L->n.pa_out_overflow), get(&L->n.in_full),
            get(&L->n.in_dropped), get(&L->n.out_empty), get(&L->n.out_silence),
            get(&L->n.late_events), get(&L->n.late_drops), get(&L->n.out_full),
            get(&L->n.out_lost));
}

/* One line, once the start-up phase is over: what gpufilt adds (priming,
 * plus what start-up added), and what PortAudio reports for the host's side
 * (which includes its own buffering: one block on the output side where it
 * adapts the host's buffer size, as for JACK). */
static void tell_latency(live *L, double lat_in, double lat_out)
{
    const size_t raised = (size_t)get(&L->n.raised), total = L->prime + raised;
    char extra[96] = "";
    if (raised)
        snprintf(extra, sizeof extra, " + %zu found needed at start-up", raised);
    fprintf(stderr,
            "gpufilt: live: latency %zu frames (%.3f ms) added by gpufilt (%zu frames of "
            "priming%s), plus PortAudio's input %.3f ms and output %.3f ms\n",
            total, 1e3 * (double)total / L->rate, L->prime, extra, 1e3 * lat_in, 1e3 * lat_out);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

static int pa_failed(const char *what, PaError err)
{
    if (err == paUnanticipatedHostError) {
        const PaHostErrorInfo *h = Pa_GetLastHostErrorInfo();
        gf_cli_error("PortAudio: %s: %s%s%s", what, Pa_GetErrorText(err),
                     h && h->errorText && *h->errorText ? ": " : "",
                     h && h->errorText ? h->errorText : "");
    } else {
        gf_cli_error("PortAudio: %s: %s", what, Pa_GetErrorText(err));
    }
    return GF_EXIT_DEVICE;
}

int gf_live_run(const gf_cli_options *o, const double *taps, size_t ntaps,
                volatile sig_atomic_t *stop)
{
    /* Validated by gf_cli_parse: one of taps/coeffs; channels, rate, frames
     * and duration in range (0 = not given). o->mode and o->chunk do not
     * apply: live filtering is causal with one chunk per block. */
    int rc = GF_EXIT_OK;
    pa_session pa;
    memset(&pa, 0, sizeof pa);
    PaStream *duplex = NULL, *s_in = NULL, *s_out = NULL;
    int started = 0, lost = 0;
    live *L = calloc(1, sizeof *L);
    if (!L) {
        gf_cli_error("out of memory");
        return GF_EXIT_INTERNAL;
    }

    if ((rc = pa_begin(&pa)) != 0)
        goto done;

    /* Devices: from the chosen host API, or anywhere. */
    PaHostApiIndex api = -1;
    PaDeviceIndex din = paNoDevice, dout = paNoDevice;
    if (o->host_api && (rc = find_host_api(o->host_api, &api)) != 0)
        goto done;
    if ((rc = find_device(o->live_in, 1, api, &din)) != 0 ||
        (rc = find_device(o->live_out, 0, api, &dout)) != 0)
        goto done;
    const PaDeviceInfo *di = Pa_GetDeviceInfo(din), *dO = Pa_GetDeviceInfo(dout);

    /* Channels, rate, block size. */
    int maxc =
        di->maxInputChannels < dO->maxOutputChannels ? di->maxInputChannels : dO->maxOutputChannels;
    L->C = o->channels ? o->channels : (maxc < 2 ? 1 : 2);
    if (L->C > di->maxInputChannels || L->C > dO->maxOutputChannels) {
        gf_cli_error("--channels %d: input '%s' has %d channel%s, output '%s' has %d", L->C,
                     di->name, di->maxInputChannels, di->maxInputChannels == 1 ? "" : "s", dO->name,
                     dO->maxOutputChannels);
        rc = GF_EXIT_DEVICE;
        goto done;
    }
    L->rate = o->rate ? (double)o->rate : dO->defaultSampleRate;
    L->F = o->live_frames ? o->live_frames : LIVE_DEFAULT_FRAMES;
    L->prec = o->precision;
    /* One full-duplex stream where the host API allows it (same API); two
     * half streams otherwise. */
    const int want_duplex = di->hostApi == dO->hostApi;
    int use_duplex = want_duplex && supported(din, dout, L->C, L->rate, 1);
    if (!use_duplex && !supported(din, dout, L->C, L->rate, 0)) {
        explain_unsupported(din, dout, L->C, L->rate, want_duplex);
        rc = GF_EXIT_DEVICE;
        goto done;
    }

    if ((rc = live_engine(o, L, taps, ntaps)) != 0)
        goto done;
    if ((o->hist_path || o->hist_png) &&
        (rc = gf_hist_out_open(&L->hout, o->hist_path, o->hist_png, &L->hc, L->C, (int)L->rate,
                               L->hist_err, sizeof L->hist_err)) != 0) {
        gf_cli_error("%s", L->hist_err);
        goto done;
    }
    if (live_buffers(L) != 0) {
        gf_cli_error("out of memory");
        rc = GF_EXIT_INTERNAL;
        goto done;
    }
    if (sem_init(&L->wake, 0, 0) != 0) {
        gf_cli_error("cannot create a semaphore: %s", strerror(errno));
        rc = GF_EXIT_INTERNAL;
        goto done;
    }
    L->sem_ok = 1;
    if (start_worker(L) != 0) {
        gf_cli_error("cannot start the worker thread");
        rc = GF_EXIT_INTERNAL;
        goto done;
    }

    const PaStreamParameters pin = stream_params(din, L->C, 1), pout = stream_params(dout, L->C, 0);
    PaError err;
    if (use_duplex) {
        L->hold = L->prime;
        err = Pa_OpenStream(&duplex, &pin, &pout, L->rate, (unsigned long)L->F, paNoFlag, on_audio,
                            L);
        if (err != paNoError && err != paBadIODeviceCombination) {
            rc = pa_failed("cannot open the full-duplex stream", err);
            goto done;
        }
        if (err != paNoError) {
            duplex = NULL;
            use_duplex = 0;
        }
    }
    if (!use_duplex) {
        /* Two callbacks on two clocks: allow one block of phase between them. */
        L->hold = L->prime + L->F;
        err = Pa_OpenStream(&s_in, &pin, NULL, L->rate, (unsigned long)L->F, paNoFlag, on_audio, L);
        if (err != paNoError) {
            s_in = NULL;
            rc = pa_failed("cannot open the input stream", err);
            goto done;
        }
        err =
            Pa_OpenStream(&s_out, NULL, &pout, L->rate, (unsigned long)L->F, paNoFlag, on_audio, L);
        if (err != paNoError) {
            s_out = NULL;
            rc = pa_failed("cannot open the output stream", err);
            goto done;
        }
    }
    /* Half a second of start-up in which a short output becomes latency. */
    L->warmup = (size_t)(L->rate / 2) > 8 * L->F ? (size_t)(L->rate / 2) : 8 * L->F;
    if (use_duplex)
        err = Pa_StartStream(duplex);
    else if ((err = Pa_StartStream(s_out)) == paNoError)
        err = Pa_StartStream(s_in);
    if (err != paNoError) {
        rc = pa_failed("cannot start the stream", err);
        goto done;
    }
    started = 1;
    const double t_start = gf_now();

    if (!o->quiet) {
        fprintf(stderr,
                "gpufilt: live: %s: in %d '%s', out %d '%s'%s, %d ch, %.0f Hz, %zu frames per "
                "block, %zu tap%s%s, causal, %s, %s backend\n",
                api_name(dO->hostApi), (int)din, di->name, (int)dout, dO->name,
                use_duplex ? "" : " (two streams)", L->C, L->rate, L->F, ntaps,
                ntaps == 1 ? "" : "s", o->coeffs ? "" : " (mean)",
                L->prec == GF_PRECISION_F32 ? "f32" : "f64", gf_engine_backend(L->e));
        if (o->stats)
            fprintf(stderr, "gpufilt: live: worker thread at %s priority\n",
                    L->realtime ? "real-time (SCHED_FIFO)" : "normal");
    }
    const PaStreamInfo *si_in = Pa_GetStreamInfo(use_duplex ? duplex : s_in);
    const PaStreamInfo *si_out = Pa_GetStreamInfo(use_duplex ? duplex : s_out);
    const double lat_in = si_in ? si_in->inputLatency : 0.0;
    const double lat_out = si_out ? si_out->outputLatency : 0.0;
    int latency_told = 0;
    /* Wait for the end: duration, signal, a failed worker or a lost stream. */
    double next_stats = t_start + 1.0;
    for (;;) {
        if (*stop)
            break;
        const double t = gf_now();
        if (o->duration > 0 && t - t_start >= o->duration)
            break;
        if (atomic_load_explicit(&L->failed, memory_order_acquire)) {
            gf_cli_error("%s", L->err);
            rc = GF_EXIT_DEVICE;
            break;
        }
        if ((use_duplex ? Pa_IsStreamActive(duplex)
                        : Pa_IsStreamActive(s_in) == 1 && Pa_IsStreamActive(s_out) == 1) != 1) {
            gf_cli_error("the audio stream stopped by itself (device lost, or the JACK server "
                         "went away)");
            rc = GF_EXIT_DEVICE;
            lost = 1;
            break;
        }
        if (!latency_told && atomic_load_explicit(&L->n.warm, memory_order_acquire)) {
            latency_told = 1;
            if (!o->quiet)
                tell_latency(L, lat_in, lat_out);
        }
        if (o->stats && t >= next_stats) {
            const unsigned long long b = get(&L->blocks);
            const double mx = 1e-6 * (double)atomic_exchange(&L->busy_ns_max, 0);
            const double mean = b ? 1e-6 * (double)get(&L->busy_ns_total) / (double)b : 0.0;
            const double period_ms = 1e3 * (double)L->F / L->rate;
            char prefix[256];
            snprintf(prefix, sizeof prefix,
                     "%.0f s: %llu frames in, worker per block mean %.3f ms, max %.3f ms "
                     "(%.1f%% of %.3f ms), rings in %zu out %zu frames; ",
                     t - t_start, get(&L->n.frames_in), mean, mx, 100.0 * mx / period_ms, period_ms,
                     gf_ring_read_available(&L->in), gf_ring_read_available(&L->out));
            print_counts(L, prefix);
            next_stats += 1.0;
            if (next_stats < t)
                next_stats = t + 1.0;
        }
        sleep_ms(20);
    }
    {
        char prefix[128];
        snprintf(prefix, sizeof prefix, "stopped after %.1f s (%llu frames in, %llu out)%s; ",
                 gf_now() - t_start, get(&L->n.frames_in), get(&L->n.frames_out),
                 *stop ? " by a signal" : "");
        if (!latency_told && !o->quiet)
            tell_latency(L, lat_in, lat_out);
        if (!lost) {
            if (use_duplex)
                Pa_StopStream(duplex);
            else {
                Pa_StopStream(s_in);
                Pa_StopStream(s_out);
            }
            started = 0;
        }
        print_counts(L, prefix);
    }

done:
    if (lost) {
        /* PortAudio 19.6 waits 10 s and then asserts when a stream whose
         * JACK server died is stopped or closed: leave it (and the memory
         * its callback used) to the process exit. */
        if (L->thread_started) {
            atomic_store(&L->quit, 1);
            sem_post(&L->wake);
            pthread_join(L->thread, NULL);
        }
        if (pa.stand_in[0])
            unlink(pa.stand_in);
        return rc;
    }
    if (started) {
        if (duplex)
            Pa_AbortStream(duplex);
        if (s_in)
            Pa_AbortStream(s_in);
        if (s_out)
            Pa_AbortStream(s_out);
    }
    if (L->thread_started) {
        atomic_store(&L->quit, 1);
        sem_post(&L->wake);
        pthread_join(L->thread, NULL);
    }
    if (L->hout && rc == GF_EXIT_OK)
        rc = finish_hist(L);
    gf_hist_out_abort(&L->hout); /* no-op after a commit */
    if (duplex)
        Pa_CloseStream(duplex);
    if (s_in)
        Pa_CloseStream(s_in);
    if (s_out)
        Pa_CloseStream(s_out);
    pa_end(&pa);
    if (L->sem_ok)
        sem_destroy(&L->wake);
    gf_engine_destroy(L->e);
    free(L->in_store);
    free(L->out_store);
    free(L->scratch);
    free(L->stage);
    free(L);
    return rc;
}
