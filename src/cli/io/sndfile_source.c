/* Audio files (and containers on standard input) through libsndfile. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* tee */
#endif
#include "io/sndfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct sf_source {
    SNDFILE *sf;
    int sf_format;
    int pcm; /* integer PCM: read with sf_readf_int and scaled exactly */
    int32_t *ibuf;
    int failed; /* a read failed after delivering frames: the next one reports it */
} sf_source;

/* On a pipe libsndfile waits until a read's request is filled: ask for the
 * complete frames that have arrived (at least one) so a slow stream is not
 * held back. */
static size_t frames_waiting(const gf_source *s, size_t frames)
{
    const sf_source *f = s->state;
    const size_t fb = gf_sf_sample_bytes(f->sf_format) * (size_t)s->fmt.channels;
    int avail = 0;
    if (fb == 0)
        return frames < 1024 ? frames : 1024;
    if (ioctl(STDIN_FILENO, FIONREAD, &avail) != 0 || avail < 0)
        return frames;
    const size_t k = (size_t)avail / fb;
    return k == 0 ? 1 : k < frames ? k : frames;
}

/* The data size a header gave, from libsndfile's log ("data : 4099"), or 0. */
static uint64_t logged_data_size(SNDFILE *sf)
{
    char log[8192];
    sf_command(sf, SFC_GET_LOG_INFO, log, sizeof log);
    char *save = NULL;
    for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long said;
        line += strspn(line, " ");
        if (strncmp(line, "data :", 6) == 0 && sscanf(line + 6, "%llu", &said) == 1)
            return said;
    }
    return 0;
}

/* The end of a WAV on a pipe: a data size that is not whole frames, every
 * whole frame of it read, leaves a partial frame (dropped, exit 7, as for
 * headerless input). A stream's "length unknown" (0xFFFFFFFF) says
 * nothing: libsndfile does not tell what it left at the end. */
static void stream_trailing(gf_source *s, SNDFILE *sf)
{
    const uint64_t fb = s->frame_bytes, said = fb ? logged_data_size(sf) : 0;
    if (said && said != 0xFFFFFFFF && said % fb && (uint64_t)s->frames_read == said / fb)
        s->trailing = said % fb;
}

/* A decoder that fails before the frames its header promised (a cut FLAC:
 * "the FLAC decoder lost sync") has met a truncated or damaged file: the
 * stream ends there and header_note says why (--allow-truncated decides).
 * Anything else, a system error included, is a read error. */
static int64_t read_failed(gf_source *s, sf_source *f, char *err, size_t n)
{
    char why[256];
    gf_sf_why(f->sf, why, sizeof why);
    if (!s->streaming && s->fmt.frames > s->frames_read && sf_error(f->sf) != SF_ERR_SYSTEM) {
        snprintf(s->header_note, sizeof s->header_note,
                 "decoding stopped after %lld of %lld frames: %s", (long long)s->frames_read,
                 (long long)s->fmt.frames, why);
        return 0;
    }
    snprintf(err, n, "reading input '%s': %s", s->path, why);
    return -1;
}

static int64_t sf_read(gf_source *s, gf_precision p, void *out, size_t frames, char *err, size_t n)
{
    sf_source *f = s->state;
    sf_count_t got;
    if (f->failed)
        return read_failed(s, f, err, n);
    const size_t C = (size_t)s->fmt.channels;
    if (s->streaming && s->is_stdin)
        frames = frames_waiting(s, frames);
    if (f->pcm) {
        got = sf_readf_int(f->sf, f->ibuf, (sf_count_t)frames);
        /* Exact: |v| <= 2^31 and a power-of-two scale. */
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < (size_t)got * C; i++)
                ((float *)out)[i] = (float)f->ibuf[i] * 0x1p-31f;
        else
            for (size_t i = 0; i < (size_t)got * C; i++)
                ((double *)out)[i] = (double)f->ibuf[i] * 0x1p-31;
    } else if (p == GF_PRECISION_F32) {
        got = sf_readf_float(f->sf, out, (sf_count_t)frames);
    } else {
        got = sf_readf_double(f->sf, out, (sf_count_t)frames);
    }
    /* The frames decoded before an error go out first. */
    f->failed = got < 0 || sf_error(f->sf) != SF_ERR_NO_ERROR;
    if (f->failed && got > 0) {
        s->frames_read += got;
        return got;
    }
    if (f->failed)
        return read_failed(s, f, err, n);
    if (got == 0 && s->streaming)
        stream_trailing(s, f->sf);
    s->frames_read += got;
    return got;
}

static void sf_source_close(gf_source *s)
{
    sf_source *f = s->state;
    if (!f)
        return;
    gf_meta_free(s->meta);
    s->meta = NULL;
    if (f->sf)
        sf_close(f->sf);
    free(f->ibuf);
    free(f);
    s->state = NULL;
}

static int sf_seek_to(gf_source *s, int64_t frame, char *err, size_t n)
{
    sf_source *f = s->state;
    if (sf_seek(f->sf, (sf_count_t)frame, SEEK_SET) != (sf_count_t)frame) {
        snprintf(err, n, "cannot seek to frame %lld of %s: %s", (long long)frame, s->path,
                 sf_strerror(f->sf));
        return -1;
    }
    s->frames_read = frame;
    return 0;
}

static const gf_source_ops sndfile_source_ops = {
    .read = sf_read,
    .seek = NULL,
    .interrupt = NULL, /* libsndfile's read cannot be woken: the stages cancel it */
    .close = sf_source_close,
};

/* Files whose samples a seek finds exactly: PCM, float, FLAC. */
static const gf_source_ops sndfile_seekable_ops = {
    .read = sf_read,
    .seek = sf_seek_to,
    .interrupt = NULL,
    .close = sf_source_close,
};

static int seeks_exactly(int format)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    return gf_sf_pcm_bits(format) > 0 || sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE ||
           (format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC;
}

/* Refuse what cannot be opened as a file before libsndfile tries. */
static int check_path(gf_source *s, const char *path, struct stat *st, char *err, size_t n)
{
    if (s->is_stdin) {
        if (fstat(STDIN_FILENO, st) != 0) {
            snprintf(err, n, "cannot read standard input: %s", strerror(errno));
            return GF_EXIT_INPUT;
        }
    } else {
        if (stat(path, st) != 0) {
            snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
            return GF_EXIT_INPUT;
        }
        if (S_ISDIR(st->st_mode)) {
            snprintf(err, n, "input '%s' is a directory", path);
            return GF_EXIT_INPUT;
        }
        const int fd = open(path, O_RDONLY);
        if (fd < 0) {
            snprintf(err, n, "cannot open input '%s': %s", path, strerror(errno));
            return GF_EXIT_INPUT;
        }
        close(fd);
    }
    if (S_ISREG(st->st_mode) && st->st_size == 0) {
        snprintf(err, n, "input '%s' is empty", s->path);
        return GF_EXIT_INPUT;
    }
    return 0;
}

/* libsndfile's message when it cannot open the input. */
static void explain_open_failure(const gf_source *s, const char *path, char *err, size_t n)
{
    char why[256];
    gf_sf_why(NULL, why, sizeof why);
    if (s->is_stdin && strstr(sf_strerror(NULL), "flac"))
        snprintf(err, n,
                 "libsndfile cannot decode FLAC from a pipe (%s); decode it first, e.g. "
                 "sox in.flac -t f32 - | gpufilt - OUT --raw f32le -c CHANNELS ...",
                 why);
    else if (s->is_stdin)
        snprintf(err, n,
                 "standard input is not audio libsndfile can read from a pipe (%s); "
                 "for headerless samples give --raw FMT --channels N",
                 why);
    else
        snprintf(err, n, "input '%s' is not an audio file libsndfile can read (%s)", path, why);
}

/* libsndfile opens a truncated file with the frames that exist and notes
 * the mismatch in its log, e.g. "data : 192000 (should be 99956)": for the
 * containers gf_container_scan does not know. */
static void find_header_note(gf_source *s, SNDFILE *sf)
{
    char log[8192];
    sf_command(sf, SFC_GET_LOG_INFO, log, sizeof log);
    char *save = NULL;
    for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long said, is;
        line += strspn(line, " ");
        if ((strncmp(line, "data", 4) == 0 || strncmp(line, "SSND", 4) == 0) &&
            sscanf(line, "%*4s : %llu (should be %llu)", &said, &is) == 2 && said > is) {
            snprintf(s->header_note, sizeof s->header_note,
                     "its header gives %llu bytes of samples, the file holds %llu", said, is);
            return;
        }
    }
}

/* A WAV or AIFF file, scanned: a header cut short, the streaming length
 * 0xFFFFFFFF (read to the end, not truncated), bytes of a partial last
 * frame (dropped, exit 7, as for headerless input), stray bytes after the
 * samples the header gives. */
static void check_extent(gf_source *s, const char *path, int format)
{
    gf_extent x;
    struct stat st;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    const int scanned =
        fd >= 0 && fstat(fd, &st) == 0 && gf_container_scan(fd, (uint64_t)st.st_size, &x) == 0;
    if (fd >= 0)
        close(fd);
    if (!scanned) {
        find_header_note(s, ((sf_source *)s->state)->sf);
        return;
    }
    const uint64_t fb = gf_sf_sample_bytes(format) * (uint64_t)s->fmt.channels;
    if (fb == 0)
        return;
    if (x.declared > x.present && !x.unknown)
        snprintf(s->header_note, sizeof s->header_note,
                 "its header promises %llu frames, the file holds %llu",
                 (unsigned long long)(x.declared / fb), (unsigned long long)(x.present / fb));
    s->trailing = x.present % fb;
    s->stray = x.stray;
}

/* The most a chunk before the samples of a WAV or AIFF stream on a pipe
 * may declare: libsndfile skips a chunk on a pipe by reading it into its
 * header buffer, so a few bytes that declare a LIST of a gigabyte make it
 * allocate (and on a short stream, loop over) that much. Real header
 * chunks (LIST/INFO, bext, iXML, cue, an ID3 tag with a picture) are far
 * smaller. */
#define PIPE_CHUNK_MAX ((uint64_t)16 << 20)
/* The most bytes of a pipe looked at before libsndfile reads it. */
#define PIPE_PEEK 16384

static uint64_t peek32(const unsigned char *b, int big)
{
    return big ? (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3]
               : (uint64_t)b[3] << 24 | (uint64_t)b[2] << 16 | (uint64_t)b[1] << 8 | b[0];
}

typedef enum { WALK_OTHER, WALK_SAMPLES, WALK_OVERSIZED, WALK_MORE } walk_end;

/* The chunks of a WAV or AIFF header in the n bytes of b, walked up to
 * the samples' chunk: WALK_OTHER (not such a header), WALK_SAMPLES (every
 * chunk before the samples is small enough), WALK_OVERSIZED (one declares
 * more than PIPE_CHUNK_MAX: its id into id, its size into *size) or
 * WALK_MORE (b ends first). */
static walk_end walk_header(const unsigned char *b, size_t n, char id[5], uint64_t *size)
{
    if (n < 12)
        return n >= 4 && memcmp(b, "RIFF", 4) != 0 && memcmp(b, "RIFX", 4) != 0 &&
                       memcmp(b, "RF64", 4) != 0 && memcmp(b, "FORM", 4) != 0
                   ? WALK_OTHER
                   : WALK_MORE;
    const int riff =
        (memcmp(b, "RIFF", 4) == 0 || memcmp(b, "RF64", 4) == 0) && memcmp(b + 8, "WAVE", 4) == 0;
    const int rifx = memcmp(b, "RIFX", 4) == 0 && memcmp(b + 8, "WAVE", 4) == 0;
    const int aiff = memcmp(b, "FORM", 4) == 0 &&
                     (memcmp(b + 8, "AIFF", 4) == 0 || memcmp(b + 8, "AIFC", 4) == 0);
    if (!riff && !rifx && !aiff)
        return WALK_OTHER;
    for (uint64_t pos = 12; pos + 8 <= n;) {
        *size = peek32(b + pos + 4, rifx || aiff);
        if (memcmp(b + pos, aiff ? "SSND" : "data", 4) == 0)
            return WALK_SAMPLES;
        /* (0xFFFFFFFF: RF64's sizes live in its ds64 chunk) */
        if (*size > PIPE_CHUNK_MAX && *size != 0xFFFFFFFFu) {
            for (int i = 0; i < 4; i++)
                id[i] = b[pos + (size_t)i] >= 0x20 && b[pos + (size_t)i] < 0x7F
                            ? (char)b[pos + (size_t)i]
                            : '?';
            id[4] = '\0';
            return WALK_OVERSIZED;
        }
        pos += 8 + *size + (*size & 1);
    }
    return WALK_MORE;
}

/* Up to n of the first bytes of a pipe on standard input, left in the pipe
 * (tee(2)): how many, or -1 where that cannot be known (not a pipe, no
 * tee, a signal). It waits (up to 5 s) for n bytes, or the end of the
 * stream (*ended), or until walk_header can decide. */
static ssize_t peek_stdin(unsigned char *buf, size_t n, int *ended)
{
    *ended = 0;
#ifdef __linux__
    int p[2];
    if (pipe(p) != 0)
        return -1;
    ssize_t got = -1;
    for (int waits = 0; waits < 5000; waits++) {
        /* (a signal, even one that stops the run, must not make the
         * checks below be skipped: EINTR is retried) */
        do
            got = tee(STDIN_FILENO, p[1], n, 0); /* waits for the first byte */
        while (got < 0 && errno == EINTR);
        if (got <= 0)
            break;
        ssize_t r;
        do
            r = read(p[0], buf, (size_t)got);
        while (r < 0 && errno == EINTR);
        if (r != got) {
            got = -1;
            break;
        }
        struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
        *ended = (size_t)got < n && poll(&in, 1, 0) == 1 && (in.revents & POLLHUP);
        char id[5];
        uint64_t size;
        if ((size_t)got >= n || *ended || walk_header(buf, (size_t)got, id, &size) != WALK_MORE)
            break;
        /* Fewer than n bytes so far, and not enough to decide: the copy is
         * dropped; wait a little, again. */
        const struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    close(p[0]);
    close(p[1]);
    return got;
#else
    (void)buf;
    (void)n;
    return -1;
#endif
}

/* What libsndfile 1.2 does not read safely from a pipe, refused there
 * (as a file it is read as usual): MPEG audio, which it reads out of
 * bounds (its first frame, replayed to libmpg123, is taken from before
 * its header buffer) -- a stream that starts like MP3 (an ID3v2 tag or an
 * MPEG frame sync); a WAV or AIFF header chunk larger than PIPE_CHUNK_MAX
 * before the samples; and a stream that ends inside its header (a chunk
 * size cut short is read as whatever libsndfile's buffer held). */
static int refuse_pipe_input(char *err, size_t n)
{
    struct stat st;
    static unsigned char b[PIPE_PEEK];
    int ended;
    ssize_t got;
    if (fstat(STDIN_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode) ||
        (got = peek_stdin(b, sizeof b, &ended)) < 2)
        return 0;
    if ((got >= 3 && memcmp(b, "ID3", 3) == 0) || (b[0] == 0xFF && (b[1] & 0xE0) == 0xE0)) {
        snprintf(err, n,
                 "standard input looks like MPEG audio (MP3), which libsndfile 1.2 does not read "
                 "safely from a pipe: give it as a file, or decode it first, e.g. "
                 "sox in.mp3 -t wav - | gpufilt - ...");
        return GF_EXIT_INPUT;
    }
    char id[5];
    uint64_t size = 0;
    const walk_end w = walk_header(b, (size_t)got, id, &size);
    if (w == WALK_OVERSIZED) {
        snprintf(err, n,
                 "standard input: its header declares a '%s' chunk of %llu bytes before the "
                 "samples, more than gpufilt reads from a pipe (%llu MiB): give it as a file",
                 id, (unsigned long long)size, (unsigned long long)(PIPE_CHUNK_MAX >> 20));
        return GF_EXIT_INPUT;
    }
    if (w == WALK_MORE && ended) {
        snprintf(err, n, "standard input ends inside its header, before any samples");
        return GF_EXIT_INPUT;
    }
    char why[160];
    if (gf_header_probe(-1, b, (size_t)got, why, sizeof why)) {
        snprintf(err, n, "standard input: %s", why);
        return GF_EXIT_INPUT;
    }
    return 0;
}

/* A file (or standard input redirected from one) whose header libsndfile
 * would never finish reading, or would crash on (gf_header_probe),
 * refused. */
static int refuse_unreadable(const gf_source *s, const char *path, char *err, size_t n)
{
    const int fd = s->is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    char why[160];
    const int bad = fd >= 0 && gf_header_probe(fd, NULL, 0, why, sizeof why);
    if (fd >= 0 && !s->is_stdin)
        close(fd);
    if (!bad)
        return 0;
    if (s->is_stdin)
        snprintf(err, n, "standard input: %s", why);
    else
        snprintf(err, n, "input '%s': %s", path, why);
    return GF_EXIT_INPUT;
}

int gf_sndfile_source_open(gf_source *s, const char *path, size_t max_block, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->is_stdin = strcmp(path, "-") == 0;
    s->path = s->is_stdin ? "standard input" : path;
    struct stat st;
    int rc = check_path(s, path, &st, err, n);
    if (rc)
        return rc;
    s->streaming = !S_ISREG(st.st_mode);
    if (s->is_stdin && (rc = refuse_pipe_input(err, n)) != 0)
        return rc;
    if (!s->streaming && (rc = refuse_unreadable(s, path, err, n)) != 0)
        return rc;
    sf_source *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    s->ops = &sndfile_source_ops;
    s->state = f;
    SF_INFO info;
    memset(&info, 0, sizeof info);
    /* The open and its failure's reason as one step (gf_sf_open_lock). */
    gf_sf_open_lock();
    f->sf = s->is_stdin ? sf_open_fd(STDIN_FILENO, SFM_READ, &info, SF_FALSE)
                        : sf_open(path, SFM_READ, &info);
    if (!f->sf)
        explain_open_failure(s, path, err, n);
    gf_sf_open_unlock();
    if (!f->sf) {
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    /* libsndfile 1.2's G.721/G.723 decoders never reach the end of a pipe:
     * they go on returning frames after the data (fuzz_container found a
     * 139-byte WAV giving millions). As a file they stop where they should. */
    const int sub = info.format & SF_FORMAT_SUBMASK;
    if (s->streaming &&
        (sub == SF_FORMAT_G721_32 || sub == SF_FORMAT_G723_24 || sub == SF_FORMAT_G723_40)) {
        snprintf(err, n,
                 "%s holds G.72x ADPCM, which libsndfile 1.2 does not read correctly from a "
                 "pipe (it never ends): give it as a file",
                 s->path);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    f->sf_format = info.format;
    s->frame_bytes = gf_sf_sample_bytes(info.format) * (size_t)info.channels;
    s->fmt = (gf_format){
        .channels = info.channels,
        .rate = info.samplerate,
        /* a pipe's header cannot be trusted for the length */
        .frames = s->streaming ? -1 : (int64_t)info.frames,
        .sample = gf_sf_raw_for(info.format),
        .container = info.format,
    };
    if (s->fmt.frames == 0) {
        snprintf(err, n, "input '%s' holds no audio frames", s->path);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    if (info.channels < 1 || info.channels > GF_MAX_CHANNELS) {
        snprintf(err, n, "input '%s' has %d channels (at most %d are supported)", s->path,
                 info.channels, GF_MAX_CHANNELS);
        gf_source_close(s);
        return GF_EXIT_INPUT;
    }
    if (!s->streaming)
        check_extent(s, path, info.format);
    f->pcm = gf_sf_pcm_bits(info.format) > 0;
    if (!s->streaming && info.seekable && seeks_exactly(info.format))
        s->ops = &sndfile_seekable_ops;
    if (gf_meta_read(f->sf, info.channels, &s->meta) != 0 ||
        (f->pcm && !(f->ibuf = malloc(max_block * (size_t)info.channels * sizeof(int32_t))))) {
        snprintf(err, n, "out of memory");
        gf_source_close(s);
        return GF_EXIT_INTERNAL;
    }
    return 0;
}
