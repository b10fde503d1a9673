/*
 * jack_feed: plays a known signal into gpufilt --live through JACK and
 * records what comes back, frame-accurately.
 *
 *   jack_feed [--target NAME] [--channels C] [--seconds S] [--rate-check R]
 *             [--timeout S] [--started FILE] [--hold FILE] [--loop L.f32]
 *             --signal X.f32 --record Y.f32
 *
 * --started FILE: FILE is created once the signal's first frame has been
 * played (a script waits for it to act on gpufilt while the signal plays).
 * --hold FILE: once the recording is complete, FILE is created and the
 * clients stay in the graph (playing silence) until FILE is removed (or
 * --timeout seconds pass): a script stops gpufilt first, so that neither
 * the clients' leaving nor the writing of the files (after it) is counted
 * as gpufilt's. A second line then says how many xruns JACK reported until
 * the clients left ("xruns by the close N").
 *
 * Two JACK clients, so that the graph has no cycle and JACK runs them in
 * order within each period: "gf_play" (outputs) -> gpufilt -> "gf_rec"
 * (inputs). gpufilt's ports are found by name (client NAME, default
 * "gpufilt", then "PortAudio"; ports in_N / out_N); their other connections
 * (PortAudio connects them to the device's ports) are removed from its
 * inputs so that nothing is summed into the signal.
 *
 * The player starts the signal at the first frame of some period; both
 * clients index their frames by jack_last_frame_time, so recording index 0
 * is the frame at which x[0] was played. Output files: the signal and the
 * recording (signal length + 32768 frames), raw interleaved float32.
 *
 * The signal: per channel a linear chirp (100 Hz .. 8 kHz, amplitude 0.3)
 * plus uniform noise (+-0.25) from a fixed LCG seed, never exactly zero.
 *
 * The player's first channel also goes straight to the recorder (port
 * loop_1): the plain JACK connection that gpufilt stands in for, recorded
 * in the same run. Its offset (where x[0..63] first appears in it) is the
 * graph's own latency, against which gpufilt's is measured. --loop L.f32
 * writes that recording too (one channel, as long as the recording): where
 * it is not the signal, the JACK graph itself was disturbed (a period the
 * server ran late, a client it skipped), which live_check tells apart from
 * gpufilt's own errors.
 *
 * Prints one line "jack_feed: ..." with the period, rate, the loopback's
 * offset ("loopback N frames", -1: not found) and the number of xruns JACK
 * reported until the recording was complete. Exit 0 on success, 1 on failure, 77 when
 * no JACK server can be reached.
 */
#include <jack/jack.h>

#include <math.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GF_PI      3.14159265358979323846
#define MAX_CH     8
#define REC_EXTRA  32768
#define STATE_IDLE 0
#define STATE_PLAY 1
#define STATE_DONE 2

typedef struct feed {
    jack_client_t *play, *rec;
    jack_port_t *out[MAX_CH], *in[MAX_CH];
    int C;
    size_t N, R;          /* signal frames, recording frames */
    float *x, *y;         /* N*C, R*C interleaved */
    jack_port_t *loop_in; /* the player's first channel, straight */
    float *loop;          /* R frames of it */
    atomic_int state;
    atomic_int started;           /* start frame time is valid */
    _Atomic jack_nframes_t start; /* frame time of x[0] */
    atomic_size_t recorded;       /* highest recording index written + 1 */
    atomic_int xruns;
} feed;

static int on_play(jack_nframes_t n, void *arg)
{
    feed *f = arg;
    float *buf[MAX_CH];
    for (int c = 0; c < f->C; c++)
        buf[c] = jack_port_get_buffer(f->out[c], n);
    const jack_nframes_t t = jack_last_frame_time(f->play);
    if (atomic_load(&f->state) == STATE_PLAY && !atomic_load(&f->started)) {
        atomic_store(&f->start, t);
        atomic_store(&f->started, 1);
    }
    const int on = atomic_load(&f->started);
    const jack_nframes_t t0 = atomic_load(&f->start);
    for (jack_nframes_t j = 0; j < n; j++) {
        const size_t i = (size_t)(jack_nframes_t)(t + j - t0);
        for (int c = 0; c < f->C; c++)
            buf[c][j] = on && i < f->N ? f->x[i * (size_t)f->C + (size_t)c] : 0.0f;
    }
    return 0;
}

static int on_rec(jack_nframes_t n, void *arg)
{
    feed *f = arg;
    if (!atomic_load(&f->started))
        return 0;
    const float *buf[MAX_CH], *lb = jack_port_get_buffer(f->loop_in, n);
    for (int c = 0; c < f->C; c++)
        buf[c] = jack_port_get_buffer(f->in[c], n);
    const jack_nframes_t t = jack_last_frame_time(f->rec), t0 = atomic_load(&f->start);
    size_t hi = atomic_load(&f->recorded);
    for (jack_nframes_t j = 0; j < n; j++) {
        const jack_nframes_t d = t + j - t0; /* wraps to huge before the start */
        if (d >= f->R)
            continue;
        for (int c = 0; c < f->C; c++)
            f->y[(size_t)d * (size_t)f->C + (size_t)c] = buf[c][j];
        f->loop[d] = lb[j];
        if ((size_t)d + 1 > hi)
            hi = (size_t)d + 1;
    }
    atomic_store(&f->recorded, hi);
    if (hi >= f->R)
        atomic_store(&f->state, STATE_DONE);
    return 0;
}

static int on_xrun(void *arg)
{
    feed *f = arg;
    atomic_fetch_add(&f->xruns, 1);
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void make_signal(feed *f, double rate)
{
    uint32_t s = 12345u;
    const double T = (double)f->N / rate, f0 = 100.0, f1 = 8000.0;
    for (size_t i = 0; i < f->N; i++) {
        const double t = (double)i / rate;
        for (int c = 0; c < f->C; c++) {
            const double ph = 2.0 * GF_PI * (f0 * t + 0.5 * (f1 - f0) * t * t / T) + 0.7 * c;
            s = s * 1664525u + 1013904223u;
            const double noise = ((double)(s >> 8) / 16777216.0 - 0.5) * 0.5;
            float v = (float)(0.3 * sin(ph) + noise);
            if (v == 0.0f)
                v = 1e-3f;
            f->x[i * (size_t)f->C + (size_t)c] = v;
        }
    }
}

/* Numeric suffix of a port name ("gpufilt:in_12" -> 12). */
static long port_num(const char *name)
{
    const char *u = strrchr(name, '_');
    return u ? strtol(u + 1, NULL, 10) : 0;
}

static int cmp_ports(const void *a, const void *b)
{
    const long x = port_num(*(const char *const *)a), y = port_num(*(const char *const *)b);
    return (x > y) - (x < y);
}

/* gpufilt's ports "CLIENT:in_N" (in = 1) or "CLIENT:out_N", sorted by N.
 * Returns the count (and *list, to be freed with jack_free) or 0. */
static int find_ports(jack_client_t *cl, const char *client, int in, const char ***list)
{
    char pattern[300];
    snprintf(pattern, sizeof pattern, "^%s(-[0-9]+)?:%s_[0-9]+$", client, in ? "in" : "out");
    const char **p = jack_get_ports(cl, pattern, JACK_DEFAULT_AUDIO_TYPE, 0);
    if (!p)
        return 0;
    int n = 0;
    while (p[n])
        n++;
    qsort(p, (size_t)n, sizeof *p, cmp_ports);
    *list = p;
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: jack_feed [--target NAME] [--channels C] [--seconds S] "
                    "[--timeout S] [--started FILE] [--hold FILE] [--loop L.f32] --signal X.f32 "
                    "--record Y.f32\n");
}

static int write_file(const char *path, const float *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(p, sizeof *p, n, fp) != n) {
        if (fp)
            fclose(fp);
        return -1;
    }
    return fclose(fp);
}

typedef struct args {
    const char *target, *sig_path, *rec_path, *started_path, *hold_path, *loop_path;
    int C;
    double seconds, timeout;
} args;

/* Returns 0, or 1 after printing the usage. */
static int parse_args(int argc, char **argv, args *a)
{
    *a = (args){.C = 2, .seconds = 2.0, .timeout = 30.0};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 1;
        }
        if (strcmp(o, "--target") == 0)
            a->target = v;
        else if (strcmp(o, "--channels") == 0)
            a->C = atoi(v);
        else if (strcmp(o, "--seconds") == 0)
            a->seconds = atof(v);
        else if (strcmp(o, "--timeout") == 0)
            a->timeout = atof(v);
        else if (strcmp(o, "--signal") == 0)
            a->sig_path = v;
        else if (strcmp(o, "--record") == 0)
            a->rec_path = v;
        else if (strcmp(o, "--started") == 0)
            a->started_path = v;
        else if (strcmp(o, "--hold") == 0)
            a->hold_path = v;
        else if (strcmp(o, "--loop") == 0)
            a->loop_path = v;
        else {
            usage();
            return 1;
        }
        i++;
    }
    if (!a->sig_path || !a->rec_path || a->C < 1 || a->C > MAX_CH || !(a->seconds > 0)) {
        usage();
        return 1;
    }
    return 0;
}

/* Open the two clients and make the signal for the server's rate. Returns
 * 0, 1 on failure, 77 when no JACK server can be reached. */
static int open_clients(feed *f, double seconds, double *rate, jack_nframes_t *period)
{
    jack_status_t st;
    f->play = jack_client_open("gf_play", JackNoStartServer, &st);
    if (!f->play) {
        fprintf(stderr, "jack_feed: no JACK server (status 0x%x)\n", (unsigned)st);
        return 77;
    }
    f->rec = jack_client_open("gf_rec", JackNoStartServer, &st);
    if (!f->rec) {
        fprintf(stderr, "jack_feed: cannot open a second client (status 0x%x)\n", (unsigned)st);
        jack_client_close(f->play);
        return 1;
    }
    *rate = jack_get_sample_rate(f->play);
    *period = jack_get_buffer_size(f->play);
    f->N = (size_t)(seconds * *rate);
    f->R = f->N + REC_EXTRA;
    f->x = malloc(f->N * (size_t)f->C * sizeof(float));
    f->y = calloc(f->R * (size_t)f->C, sizeof(float));
    f->loop = calloc(f->R, sizeof(float));
    if (!f->x || !f->y || !f->loop) {
        fprintf(stderr, "jack_feed: out of memory\n");
        return 1;
    }
    make_signal(f, *rate);
    return 0;
}

/* Our ports and callbacks, then both clients running. */
static int start_clients(feed *f)
{
    for (int c = 0; c < f->C; c++) {
        char name[32];
        snprintf(name, sizeof name, "play_%d", c + 1);
        f->out[c] = jack_port_register(f->play, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
        snprintf(name, sizeof name, "rec_%d", c + 1);
        f->in[c] = jack_port_register(f->rec, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        if (!f->out[c] || !f->in[c]) {
            fprintf(stderr, "jack_feed: cannot register ports\n");
            return 1;
        }
    }
    f->loop_in = jack_port_register(f->rec, "loop_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    if (!f->loop_in) {
        fprintf(stderr, "jack_feed: cannot register ports\n");
        return 1;
    }
    jack_set_process_callback(f->play, on_play, f);
    jack_set_process_callback(f->rec, on_rec, f);
    jack_set_xrun_callback(f->play, on_xrun, f);
    if (jack_activate(f->play) || jack_activate(f->rec)) {
        fprintf(stderr, "jack_feed: cannot activate\n");
        return 1;
    }
    return 0;
}

/* Wait until t_end for C input and C output ports of gpufilt. Returns 1
 * with them in *ins and *outs (free with jack_free), or 0 after printing. */
static int wait_for_ports(feed *f, const args *a, double t_end, const char ***ins,
                          const char ***outs)
{
    const char *names[] = {a->target ? a->target : "gpufilt", "PortAudio"};
    int nin = 0, nout = 0;
    *ins = *outs = NULL;
    while (now_s() < t_end) {
        for (int k = 0; k < (a->target ? 1 : 2) && (nin < a->C || nout < a->C); k++) {
            if (*ins)
                jack_free(*ins);
            if (*outs)
                jack_free(*outs);
            *ins = *outs = NULL;
            nin = find_ports(f->play, names[k], 1, ins);
            nout = find_ports(f->play, names[k], 0, outs);
        }
        if (nin >= a->C && nout >= a->C)
            return 1;
        sleep_ms(50);
    }
    fprintf(stderr, "jack_feed: gpufilt's ports did not appear within %.0f s (%d in, %d out)\n",
            a->timeout, nin, nout);
    if (*ins)
        jack_free(*ins);
    if (*outs)
        jack_free(*outs);
    return 0;
}

/* Our player alone into gpufilt's inputs (its other connections removed),
 * its outputs into our recorder. */
static int connect_ports(feed *f, const char **ins, const char **outs)
{
    for (int c = 0; c < f->C; c++) {
        const char **conn =
            jack_port_get_all_connections(f->play, jack_port_by_name(f->play, ins[c]));
        for (int k = 0; conn && conn[k]; k++)
            jack_disconnect(f->play, conn[k], ins[c]);
        if (conn)
            jack_free(conn);
        if ((c == 0 &&
             jack_connect(f->play, jack_port_name(f->out[0]), jack_port_name(f->loop_in))) ||
            jack_connect(f->play, jack_port_name(f->out[c]), ins[c]) ||
            jack_connect(f->rec, outs[c], jack_port_name(f->in[c]))) {
            fprintf(stderr, "jack_feed: cannot connect to %s / %s\n", ins[c], outs[c]);
            return 1;
        }
    }
    return 0;
}

/* gpufilt's ports found by t_end and connected. */
static int connect_gpufilt(feed *f, const args *a, double t_end)
{
    const char **ins = NULL, **outs = NULL;
    if (!wait_for_ports(f, a, t_end, &ins, &outs))
        return 1;
    const int rc = connect_ports(f, ins, outs);
    jack_free(ins);
    jack_free(outs);
    return rc;
}

/* Play the signal and wait for the whole recording (until the ports'
 * deadline t_end plus the recording's length). */
static int play_and_record(feed *f, double rate, double t_end, const char *started_path)
{
    sleep_ms(200); /* let the graph settle in its new order */
    atomic_store(&f->state, STATE_PLAY);
    while (atomic_load(&f->state) != STATE_DONE && now_s() < t_end + (double)f->R / rate) {
        if (started_path && atomic_load(&f->started)) {
            FILE *m = fopen(started_path, "w");
            if (m)
                fclose(m);
            started_path = NULL;
        }
        sleep_ms(20);
    }
    if (atomic_load(&f->state) != STATE_DONE) {
        fprintf(stderr, "jack_feed: recording did not complete (%zu of %zu frames)\n",
                atomic_load(&f->recorded), f->R);
        return 1;
    }
    return 0;
}

/* Create `path`, then wait until it is gone or `timeout` seconds pass. */
static void hold(const char *path, double timeout)
{
    FILE *m = fopen(path, "w");
    if (!m) {
        fprintf(stderr, "jack_feed: cannot create %s\n", path);
        return;
    }
    fclose(m);
    const double t_end = now_s() + timeout;
    while (access(path, F_OK) == 0 && now_s() < t_end)
        sleep_ms(20);
}

/* Where x[0..63] (first channel) first stands in the loopback recording;
 * -1 if nowhere. */
static long loopback_offset(const feed *f)
{
    const size_t L = f->N < 64 ? f->N : 64;
    for (size_t o = 0; o + L <= f->R; o++) {
        size_t k = 0;
        while (k < L && f->loop[o + k] == f->x[k * (size_t)f->C])
            k++;
        if (k == L)
            return (long)o;
    }
    return -1;
}

int main(int argc, char **argv)
{
    args a;
    if (parse_args(argc, argv, &a))
        return 1;
    static feed f;
    f.C = a.C;
    double rate = 0;
    jack_nframes_t period = 0;
    const int open_rc = open_clients(&f, a.seconds, &rate, &period);
    if (open_rc)
        return open_rc;
    int rc = 1;
    if (start_clients(&f) == 0) {
        const double t_end = now_s() + a.timeout;
        if (connect_gpufilt(&f, &a, t_end) == 0 &&
            play_and_record(&f, rate, t_end, a.started_path) == 0)
            rc = 0;
    }
    /* The recording is complete (the recorder writes nothing more): its
     * xruns, then the hold; the files only once the clients have left (a
     * 600 s recording is 460 MB: written while gpufilt played, on a 2-CPU
     * machine, they starved the server and gpufilt, and their xruns were
     * counted as gpufilt's). */
    const int xruns = atomic_load(&f.xruns);
    if (rc == 0 && a.hold_path)
        hold(a.hold_path, a.timeout);
    jack_deactivate(f.play);
    jack_deactivate(f.rec);
    const int xruns_closed = atomic_load(&f.xruns);
    if (rc == 0 && (write_file(a.sig_path, f.x, f.N * (size_t)a.C) != 0 ||
                    write_file(a.rec_path, f.y, f.R * (size_t)a.C) != 0 ||
                    (a.loop_path && write_file(a.loop_path, f.loop, f.R) != 0))) {
        fprintf(stderr, "jack_feed: cannot write %s / %s%s%s\n", a.sig_path, a.rec_path,
                a.loop_path ? " / " : "", a.loop_path ? a.loop_path : "");
        rc = 1;
    }
    printf("jack_feed: played %zu frames x %d ch, recorded %zu; rate %.0f Hz, period %u frames, "
           "loopback %ld frames, JACK xruns %d\n",
           f.N, a.C, f.R, rate, (unsigned)period, rc == 0 ? loopback_offset(&f) : -1L, xruns);
    if (a.hold_path)
        printf("jack_feed: xruns by the close %d\n", xruns_closed);
    jack_client_close(f.play);
    jack_client_close(f.rec);
    free(f.x);
    free(f.y);
    free(f.loop);
    return rc;
}
