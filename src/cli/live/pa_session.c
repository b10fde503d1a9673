/*
 * PortAudio start-up: quiet libraries, and a probe in a child process for
 * backends that abort (pa_session.h).
 */
#include "live/pa_session.h"

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

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_TIMEOUT 20 /* seconds for PortAudio to initialise in the probe */

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

/* Keep the tail of what fd says (up to cap - 1 bytes in buf, *len of
 * them) until it closes; give up after PROBE_TIMEOUT. Non-zero when it
 * timed out. */
static int read_tail(int fd, char *buf, size_t cap, size_t *len)
{
    const double deadline = gf_now() + PROBE_TIMEOUT;
    for (;;) {
        const double left = deadline - gf_now();
        if (left <= 0)
            return 1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        const int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return pr == 0;
        char tmp[512];
        const ssize_t r = read(fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        for (ssize_t i = 0; i < r; i++) {
            if (*len == cap - 1) {
                memmove(buf, buf + cap / 2, *len - cap / 2);
                *len -= cap / 2;
            }
            buf[(*len)++] = tmp[i];
        }
    }
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
    char buf[2048];
    size_t len = 0;
    const int timed_out = read_tail(fds[0], buf, sizeof buf, &len);
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        snprintf(why, why_size, "PortAudio did not finish initialising within %d s", PROBE_TIMEOUT);
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

static int write_stand_in(gf_pa_session *pa)
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

int gf_pa_begin(gf_pa_session *pa)
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

void gf_pa_end(gf_pa_session *pa)
{
    if (pa->initialised)
        Pa_Terminate();
    pa->initialised = 0;
    if (pa->stand_in[0]) {
        unlink(pa->stand_in);
        pa->stand_in[0] = '\0';
    }
}
