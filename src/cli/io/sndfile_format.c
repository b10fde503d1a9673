#define _DEFAULT_SOURCE /* CMSG_SPACE, SCM_RIGHTS */
#include "io/sndfile_format.h"

#include <ctype.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int gf_sf_pcm_bits(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_DPCM_8:
        return 8;
    case SF_FORMAT_DWVW_12:
        return 12;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_DPCM_16:
    case SF_FORMAT_DWVW_16:
    case SF_FORMAT_ALAC_16:
        return 16;
    case SF_FORMAT_ALAC_20:
        return 20;
    case SF_FORMAT_PCM_24:
    case SF_FORMAT_DWVW_24:
    case SF_FORMAT_ALAC_24:
        return 24;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_ALAC_32:
        return 32;
    }
    return 0;
}

size_t gf_sf_sample_bytes(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
    case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW:
        return 1;
    case SF_FORMAT_PCM_16:
        return 2;
    case SF_FORMAT_PCM_24:
        return 3;
    case SF_FORMAT_PCM_32:
    case SF_FORMAT_FLOAT:
        return 4;
    case SF_FORMAT_DOUBLE:
        return 8;
    }
    return 0;
}

static const struct {
    gf_raw_format raw;
    int format;
} raw_map[] = {
    {GF_RAW_U8, SF_FORMAT_PCM_U8},
    {GF_RAW_S8, SF_FORMAT_PCM_S8},
    {GF_RAW_S16LE, SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE},
    {GF_RAW_S16BE, SF_FORMAT_PCM_16 | SF_ENDIAN_BIG},
    {GF_RAW_S24LE, SF_FORMAT_PCM_24 | SF_ENDIAN_LITTLE},
    {GF_RAW_S32LE, SF_FORMAT_PCM_32 | SF_ENDIAN_LITTLE},
    {GF_RAW_F32LE, SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE},
    {GF_RAW_F64LE, SF_FORMAT_DOUBLE | SF_ENDIAN_LITTLE},
};

gf_raw_format gf_sf_raw_for(int sf_format)
{
    const int sub = sf_format & SF_FORMAT_SUBMASK;
    const int big = (sf_format & SF_FORMAT_ENDMASK) == SF_ENDIAN_BIG;
    if (sub == SF_FORMAT_PCM_16 && big)
        return GF_RAW_S16BE;
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if ((raw_map[i].format & SF_FORMAT_SUBMASK) == sub)
            return raw_map[i].raw;
    const int bits = gf_sf_pcm_bits(sf_format);
    return bits > 24   ? GF_RAW_S32LE
           : bits > 16 ? GF_RAW_S24LE
           : bits > 8  ? GF_RAW_S16LE
           : bits > 0  ? GF_RAW_S8
                       : GF_RAW_F32LE;
}

int gf_sf_format_for_raw(gf_raw_format f)
{
    for (size_t i = 0; i < sizeof raw_map / sizeof raw_map[0]; i++)
        if (raw_map[i].raw == f)
            return raw_map[i].format;
    return SF_FORMAT_FLOAT;
}

void gf_sf_format_name(int format, char *buf, size_t n)
{
    SF_FORMAT_INFO major = {.format = format & SF_FORMAT_TYPEMASK};
    SF_FORMAT_INFO sub = {.format = format & SF_FORMAT_SUBMASK};
    sf_command(NULL, SFC_GET_FORMAT_INFO, &major, sizeof major);
    sf_command(NULL, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
    snprintf(buf, n, "%s / %s", major.name ? major.name : "?", sub.name ? sub.name : "?");
}

/* The first character of s, lower-cased unless s starts an acronym ("WAV"). */
static char lower_first(const char *s)
{
    if (!s[0])
        return '\0';
    return isupper((unsigned char)s[0]) && !isupper((unsigned char)s[1])
               ? (char)tolower((unsigned char)s[0])
               : s[0];
}

/* libsndfile's messages that read badly inside ours, and what to say. */
static const struct {
    const char *theirs, *ours;
} reasons[] = {
    {"No Error", "no reason given"},
    {"Format not recognised", "not a format libsndfile knows"},
    {"File contains data in an unknown format", "not a format libsndfile knows"},
    {"Supported file format but file is malformed", "the file is malformed"},
    {"Supported file format but unsupported encoding", "an encoding libsndfile cannot decode"},
    {"File contains data in an unimplemented format", "an encoding libsndfile cannot decode"},
    {"this file format does not support pipe write", "the format cannot be written to a pipe"},
    {"flac decoder lost sync", "the FLAC decoder lost sync"},
    {"Internal malloc () failed", "out of memory"},
};

void gf_sf_reason(const char *msg, char *buf, size_t n)
{
    if (!msg)
        msg = "";
    char t[512];
    snprintf(t, sizeof t, "%s", msg);
    for (char *c = t; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    size_t len = strlen(t);
    while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '.'))
        t[--len] = '\0';
    const char *s = t;
    /* The system's own message (strerror's), as gpufilt prints it elsewhere. */
    if (strncmp(s, "System error : ", 15) == 0) {
        snprintf(buf, n, "%s", s + 15);
        return;
    }
    static const char *const prefixes[] = {"Error : ", "Error: ", "Error. "};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
            s += strlen(prefixes[i]);
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(s, reasons[i].theirs) == 0) {
            snprintf(buf, n, "%s", reasons[i].ours);
            return;
        }
    /* "Error in WAV file. No 'data' chunk marker" -> "WAV file: no 'data' chunk marker" */
    char kind[64];
    int used = 0;
    if (sscanf(s, "Error in %63[^.,]%*[.,] %n", kind, &used) == 1 && used > 0) {
        const char *rest = s + used;
        snprintf(buf, n, "%s: %c%s", kind, lower_first(rest), *rest ? rest + 1 : "");
        return;
    }
    snprintf(buf, n, "%c%s", lower_first(s), *s ? s + 1 : "");
}

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;

void gf_sf_open_lock(void)
{
    pthread_mutex_lock(&open_mu);
}

void gf_sf_open_unlock(void)
{
    pthread_mutex_unlock(&open_mu);
}

const char *gf_sf_why(SNDFILE *sf, char *buf, size_t n)
{
    gf_sf_reason(sf_strerror(sf), buf, n);
    return buf;
}

/* ---- what a file says besides its samples ---- */

/* A bext (broadcast) and a cart chunk of any size libsndfile keeps. */
typedef SF_BROADCAST_INFO_VAR(16384) gf_bext;
typedef SF_CART_INFO_VAR(16384) gf_cart;

enum { NSTR = SF_STR_LAST - SF_STR_FIRST + 1 };

struct gf_meta {
    int channels;
    int *map;            /* channel layout (SF_CHANNEL_MAP_*), or NULL */
    char *strings[NSTR]; /* by SF_STR_* - SF_STR_FIRST, NULL where absent */
    gf_bext *bext;       /* or NULL */
    gf_cart *cart;       /* or NULL */
    void *cues;          /* SF_CUES_VAR(ncues), or NULL */
    uint32_t ncues;
    SF_INSTRUMENT *inst; /* or NULL */
};

/* The strings' names, for messages; NULL for codes libsndfile leaves out. */
static const char *string_name(int code)
{
    switch (code) {
    case SF_STR_TITLE:
        return "title";
    case SF_STR_COPYRIGHT:
        return "copyright";
    case SF_STR_SOFTWARE:
        return "software";
    case SF_STR_ARTIST:
        return "artist";
    case SF_STR_COMMENT:
        return "comment";
    case SF_STR_DATE:
        return "date";
    case SF_STR_ALBUM:
        return "album";
    case SF_STR_LICENSE:
        return "license";
    case SF_STR_TRACKNUMBER:
        return "track number";
    case SF_STR_GENRE:
        return "genre";
    }
    return NULL;
}

/* *p = a copy of what command cmd reads into `size` bytes, or NULL when
 * the file has none; -1 when out of memory. */
static int get_block(SNDFILE *sf, int cmd, size_t size, void **p)
{
    *p = calloc(1, size);
    if (!*p)
        return -1;
    if (sf_command(sf, cmd, *p, (int)size) != SF_TRUE) {
        free(*p);
        *p = NULL;
    }
    return 0;
}

/* Sizes that libsndfile read are within its own limits; a file's own
 * field could still claim more than the structure holds. */
static void clamp_sizes(gf_meta *m)
{
    if (m->bext && m->bext->coding_history_size > sizeof m->bext->coding_history - 1)
        m->bext->coding_history_size = sizeof m->bext->coding_history - 1;
    if (m->cart && m->cart->tag_text_size > sizeof m->cart->tag_text - 1)
        m->cart->tag_text_size = sizeof m->cart->tag_text - 1;
}

int gf_meta_read(SNDFILE *sf, int channels, gf_meta **out)
{
    gf_meta *m = *out = calloc(1, sizeof *m);
    if (!m)
        return -1;
    m->channels = channels;
    int rc =
        get_block(sf, SFC_GET_CHANNEL_MAP_INFO, (size_t)channels * sizeof(int), (void **)&m->map);
    for (int i = 0; !rc && i < NSTR; i++) {
        const char *v = string_name(SF_STR_FIRST + i) ? sf_get_string(sf, SF_STR_FIRST + i) : NULL;
        if (v && *v && !(m->strings[i] = strdup(v)))
            rc = -1;
    }
    if (!rc)
        rc = get_block(sf, SFC_GET_BROADCAST_INFO, sizeof(gf_bext), (void **)&m->bext);
    if (!rc)
        rc = get_block(sf, SFC_GET_CART_INFO, sizeof(gf_cart), (void **)&m->cart);
    if (!rc)
        rc = get_block(sf, SFC_GET_INSTRUMENT, sizeof(SF_INSTRUMENT), (void **)&m->inst);
    if (!rc && sf_command(sf, SFC_GET_CUE_COUNT, &m->ncues, sizeof m->ncues) == SF_TRUE &&
        m->ncues > 0)
        rc = get_block(sf, SFC_GET_CUE, sizeof(uint32_t) + m->ncues * sizeof(SF_CUE_POINT),
                       &m->cues);
    if (rc) {
        gf_meta_free(m);
        *out = NULL;
        return rc;
    }
    clamp_sizes(m);
    return 0;
}

int gf_meta_has_layout(const gf_meta *m)
{
    return m && m->map;
}

/* ", what" onto the list in buf. */
static void add_lost(char *buf, size_t n, const char *what)
{
    const size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s%s", used ? ", " : "", what);
}

void gf_meta_write(SNDFILE *sf, const gf_meta *m, char *lost, size_t n)
{
    lost[0] = '\0';
    if (!m)
        return;
    if (m->map &&
        sf_command(sf, SFC_SET_CHANNEL_MAP_INFO, m->map, m->channels * (int)sizeof(int)) != SF_TRUE)
        add_lost(lost, n, "channel layout");
    for (int i = 0; i < NSTR; i++)
        if (m->strings[i] && sf_set_string(sf, SF_STR_FIRST + i, m->strings[i]) != 0)
            add_lost(lost, n, string_name(SF_STR_FIRST + i));
    /* libsndfile takes these at their own size, not its largest. */
    if (m->bext && sf_command(sf, SFC_SET_BROADCAST_INFO, m->bext,
                              (int)(offsetof(gf_bext, coding_history) +
                                    m->bext->coding_history_size)) != SF_TRUE)
        add_lost(lost, n, "broadcast (bext) chunk");
    if (m->cart &&
        sf_command(sf, SFC_SET_CART_INFO, m->cart,
                   (int)(offsetof(gf_cart, tag_text) + m->cart->tag_text_size)) != SF_TRUE)
        add_lost(lost, n, "cart chunk");
    if (m->cues && sf_command(sf, SFC_SET_CUE, m->cues,
                              (int)(sizeof(uint32_t) + m->ncues * sizeof(SF_CUE_POINT))) != SF_TRUE)
        add_lost(lost, n, "cue points");
    if (m->inst && sf_command(sf, SFC_SET_INSTRUMENT, m->inst, sizeof(SF_INSTRUMENT)) != SF_TRUE)
        add_lost(lost, n, "instrument (sampler) data");
}

void gf_meta_missing(SNDFILE *written, const gf_meta *m, char *lost, size_t n)
{
    lost[0] = '\0';
    if (!m)
        return;
    gf_meta *w = NULL;
    if (gf_meta_read(written, m->channels, &w) != 0)
        return; /* out of memory: nothing to say */
    if (m->map && (!w->map || memcmp(m->map, w->map, (size_t)m->channels * sizeof(int)) != 0))
        add_lost(lost, n, "channel layout");
    for (int i = 0; i < NSTR; i++)
        if (m->strings[i] && !w->strings[i])
            add_lost(lost, n, string_name(SF_STR_FIRST + i));
    if (m->bext && !w->bext)
        add_lost(lost, n, "broadcast (bext) chunk");
    if (m->cart && !w->cart)
        add_lost(lost, n, "cart chunk");
    if (m->ncues > w->ncues)
        add_lost(lost, n, "cue points");
    if (m->inst && !w->inst)
        add_lost(lost, n, "instrument (sampler) data");
    gf_meta_free(w);
}

void gf_meta_free(gf_meta *m)
{
    if (!m)
        return;
    free(m->map);
    for (int i = 0; i < NSTR; i++)
        free(m->strings[i]);
    free(m->bext);
    free(m->cart);
    free(m->cues);
    free(m->inst);
    free(m);
}

/* ---- where a WAV or AIFF file's samples are ---- */

/* Chunks looked at, at most: a file with more is not scanned further. */
#define MAX_CHUNKS 100000
/* Bytes after the data read to tell zero padding from stray bytes. */
#define PAD_PROBE 65536

typedef struct scan {
    int fd;                   /* the file, read with pread; or -1 and: */
    const unsigned char *buf; /* its first size bytes (a pipe's, peeked) */
    uint64_t size;            /* of the file, or of buf */
    int big;                  /* big-endian sizes (RIFX, AIFF) */
} scan;

static int read_at(const scan *c, uint64_t pos, void *buf, size_t len)
{
    if (pos > c->size || c->size - pos < len)
        return -1;
    if (c->buf) {
        memcpy(buf, c->buf + pos, len);
        return 0;
    }
    return pread(c->fd, buf, len, (off_t)pos) == (ssize_t)len ? 0 : -1;
}

static uint64_t get32(const scan *c, const unsigned char *b)
{
    return c->big ? (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3]
                  : (uint64_t)b[3] << 24 | (uint64_t)b[2] << 16 | (uint64_t)b[1] << 8 | b[0];
}

static uint64_t get64le(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* A chunk id as writers make them: four printable ASCII characters. */
static int is_chunk_id(const unsigned char *id)
{
    for (int i = 0; i < 4; i++)
        if (id[i] < 0x20 || id[i] > 0x7E)
            return 0;
    return 1;
}

/* Bytes from pos to the end that are not well-formed chunks (a final pad
 * byte, and zero padding as recorders leave it, are not counted). */
static uint64_t stray_bytes(const scan *c, uint64_t pos)
{
    for (int k = 0; k < MAX_CHUNKS && pos + 8 <= c->size; k++) {
        unsigned char h[8];
        if (read_at(c, pos, h, 8) != 0 || !is_chunk_id(h))
            break;
        const uint64_t len = get32(c, h + 4);
        if (len > c->size - pos - 8)
            break;
        pos += 8 + len + (len & 1);
    }
    if (pos + 1 >= c->size) /* the end, or a final pad byte */
        return 0;
    unsigned char probe[4096];
    const uint64_t rest = c->size - pos;
    for (uint64_t at = 0; at < rest && at < PAD_PROBE; at += sizeof probe) {
        const size_t len = rest - at < sizeof probe ? (size_t)(rest - at) : sizeof probe;
        if (read_at(c, pos + at, probe, len) != 0)
            return rest;
        for (size_t i = 0; i < len; i++)
            if (probe[i])
                return rest;
    }
    return 0;
}

/* The data chunk's place and declared size: WAV's "data" (its size from
 * ds64 in RF64), AIFF's "SSND" (past its offset field). */
static int find_data(const scan *c, int rf64, int aiff, gf_extent *x)
{
    uint64_t pos = 12, ds64_data = 0;
    for (int k = 0; k < MAX_CHUNKS && pos + 8 <= c->size; k++) {
        unsigned char h[16];
        if (read_at(c, pos, h, 8) != 0)
            return -1;
        const uint64_t len = get32(c, h + 4);
        if (rf64 && memcmp(h, "ds64", 4) == 0 && len >= 16 && read_at(c, pos + 8, h, 16) == 0)
            ds64_data = get64le(h + 8);
        else if (!aiff && memcmp(h, "data", 4) == 0) {
            x->offset = pos + 8;
            x->declared = rf64 && len == 0xFFFFFFFF ? ds64_data : len;
            x->unknown = !rf64 && len == 0xFFFFFFFF;
            return 0;
        } else if (aiff && memcmp(h, "SSND", 4) == 0 && len >= 8 &&
                   read_at(c, pos + 8, h + 8, 4) == 0) {
            const uint64_t skip = get32(c, h + 8);
            x->offset = pos + 16 + skip;
            x->declared = len >= 8 + skip ? len - 8 - skip : 0;
            return 0;
        }
        if (!is_chunk_id(h))
            return -1;
        pos += 8 + len + (len & 1);
    }
    return -1;
}

/* The CPU time, in milliseconds, libsndfile may spend on a header in the
 * probe's child before it is taken to loop for ever: a real header, even
 * one with a 16 MiB LIST chunk, is read in milliseconds. */
static long probe_cpu_ms = 2000;

void gf_header_probe_limit(long ms)
{
    probe_cpu_ms = ms > 0 ? ms : 1;
}

/* The probe's bytes as libsndfile's virtual I/O: a file read with pread
 * (its descriptor's offset, shared with the parent, untouched) or a
 * buffer. */
typedef struct probe_io {
    int fd;
    const unsigned char *buf;
    sf_count_t size, pos;
} probe_io;

static sf_count_t probe_len(void *u)
{
    return ((probe_io *)u)->size;
}

static sf_count_t probe_seek(sf_count_t offset, int whence, void *u)
{
    probe_io *io = u;
    const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? io->pos : io->size;
    if ((offset < 0 && -offset > base) || (offset > 0 && offset > io->size - base))
        return -1;
    return io->pos = base + offset;
}

static sf_count_t probe_read(void *ptr, sf_count_t count, void *u)
{
    probe_io *io = u;
    if (count <= 0 || io->pos >= io->size)
        return 0;
    const size_t len = (size_t)(count < io->size - io->pos ? count : io->size - io->pos);
    ssize_t got = (ssize_t)len;
    if (io->buf)
        memcpy(ptr, io->buf + io->pos, len);
    else if ((got = pread(io->fd, ptr, len, (off_t)io->pos)) < 0)
        return 0;
    io->pos += got;
    return got;
}

static sf_count_t probe_tell(void *u)
{
    return ((probe_io *)u)->pos;
}

/* The child: libsndfile's open of the bytes, ended by SIGPROF where it
 * spends more CPU time than the limit; no core file. */
static void probe_child(probe_io *io)
{
    const struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    signal(SIGPROF, SIG_DFL);
    const struct itimerval cpu = {{0, 0}, {probe_cpu_ms / 1000, probe_cpu_ms % 1000 * 1000}};
    setitimer(ITIMER_PROF, &cpu, NULL);
    SF_VIRTUAL_IO vio = {probe_len, probe_seek, probe_read, NULL, probe_tell};
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open_virtual(&vio, SFM_READ, &info, io);
    if (sf)
        sf_close(sf);
    _exit(0);
}

/* The probe's child, forked and waited for: its wait status, or -1 where
 * it could not be started. */
static int probe_run(probe_io *io)
{
    const pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        probe_child(io);
    int status;
    pid_t w;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    return w == pid ? status : -1;
}

/*
 * The probe server (gf_header_probe_start): a process forked while the
 * program has one thread, which forks each probe's child in turn. A child
 * forked from a program with several threads may inherit a lock another
 * thread held at that moment -- an allocator's, as AddressSanitizer's is
 * -- and wait on it for ever; the server has one thread, so its children
 * start clean. A request is one message: a probe_req, then the bytes (a
 * pipe's peek), or with the file's descriptor attached (SCM_RIGHTS); the
 * answer is the child's wait status (int).
 */
#define PROBE_MAX_BYTES 65536

typedef struct probe_req {
    int64_t size; /* of the file, or of the bytes that follow */
    int32_t has_fd;
    int32_t limit_ms;
} probe_req;

static int probe_sock = -1; /* this process's end; -1: no server */
static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;

static void probe_server(int sock)
{
    static unsigned char msg[sizeof(probe_req) + PROBE_MAX_BYTES];
    for (;;) {
        struct iovec iov = {msg, sizeof msg};
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } ctl;
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = ctl.buf,
                            .msg_controllen = sizeof ctl.buf};
        const ssize_t got = recvmsg(sock, &mh, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < (ssize_t)sizeof(probe_req))
            _exit(0); /* the program is gone (or spoke nonsense) */
        probe_req rq;
        memcpy(&rq, msg, sizeof rq);
        int fd = -1;
        const struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        int status = -1;
        if (rq.has_fd ? fd >= 0 : (size_t)got == sizeof rq + (size_t)rq.size) {
            probe_io io = {.fd = fd, .buf = rq.has_fd ? NULL : msg + sizeof rq, .size = rq.size};
            probe_cpu_ms = rq.limit_ms;
            status = probe_run(&io);
        }
        if (fd >= 0)
            close(fd);
        if (send(sock, &status, sizeof status, MSG_NOSIGNAL) != (ssize_t)sizeof status)
            _exit(0);
    }
}

int gf_header_probe_start(void)
{
    if (probe_sock >= 0)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    const pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the program */
#endif
        /* No stake in the program's streams (a reader of its output must
         * see the end when the program ends) nor in its signals. */
        const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        probe_server(sv[1]);
    }
    close(sv[1]);
    probe_sock = sv[0];
    return 0;
}

/* A probe through the server: its child's wait status, or -1 where the
 * server cannot be asked (none, gone, or too many bytes). */
static int probe_ask(const probe_io *io)
{
    if (probe_sock < 0 || (!io->buf ? 0 : io->size > PROBE_MAX_BYTES))
        return -1;
    const probe_req rq = {.size = io->size, .has_fd = !io->buf, .limit_ms = (int32_t)probe_cpu_ms};
    struct iovec iov[2] = {{(void *)&rq, sizeof rq},
                           {(void *)io->buf, io->buf ? (size_t)io->size : 0}};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = io->buf ? 2 : 1};
    if (!io->buf) {
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &io->fd, sizeof io->fd);
    }
    int status = -1;
    pthread_mutex_lock(&probe_mu);
    ssize_t r;
    while ((r = sendmsg(probe_sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (r == (ssize_t)(sizeof rq + (io->buf ? (size_t)io->size : 0)))
        while ((r = recv(probe_sock, &status, sizeof status, 0)) < 0 && errno == EINTR)
            ;
    if (r != (ssize_t)sizeof status)
        status = -1;
    pthread_mutex_unlock(&probe_mu);
    return status;
}

int gf_header_probe(int fd, const unsigned char *buf, size_t buf_len, char *why, size_t n)
{
    probe_io io = {.fd = -1, .buf = buf, .size = (sf_count_t)buf_len};
    if (!buf) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        io.fd = fd;
        io.size = (sf_count_t)st.st_size;
    }
    int status = probe_ask(&io);
    if (status == -1) /* (no server: a child of this process) */
        status = probe_run(&io);
    const int sig = status != -1 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (sig == SIGPROF) {
        snprintf(why, n,
                 "libsndfile does not finish reading its header (stopped after %g s of CPU "
                 "time: a malformed header it loops on)",
                 (double)probe_cpu_ms / 1000);
        return 1;
    }
    /* (an end by any other signal, SIGINT say, is not the header's doing) */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP};
    for (size_t i = 0; sig && i < sizeof faults / sizeof faults[0]; i++)
        if (sig == faults[i]) {
            snprintf(why, n, "libsndfile crashes reading its header (%s)", strsignal(sig));
            return 1;
        }
    return 0;
}

int gf_container_scan(int fd, uint64_t size, gf_extent *x)
{
    memset(x, 0, sizeof *x);
    scan c = {.fd = fd, .size = size};
    unsigned char h[12];
    if (read_at(&c, 0, h, 12) != 0)
        return -1;
    const int riff = memcmp(h, "RIFF", 4) == 0, rifx = memcmp(h, "RIFX", 4) == 0,
              rf64 = memcmp(h, "RF64", 4) == 0, form = memcmp(h, "FORM", 4) == 0;
    const int wave = (riff || rifx || rf64) && memcmp(h + 8, "WAVE", 4) == 0;
    const int aiff = form && (memcmp(h + 8, "AIFF", 4) == 0 || memcmp(h + 8, "AIFC", 4) == 0);
    if (!wave && !aiff)
        return -1;
    c.big = rifx || aiff;
    if (find_data(&c, rf64, aiff, x) != 0 || x->offset > size)
        return -1;
    const uint64_t avail = size - x->offset;
    x->present = x->unknown || x->declared > avail ? avail : x->declared;
    if (!x->unknown && x->declared < avail)
        x->stray = stray_bytes(&c, x->offset + x->declared + (x->declared & 1));
    return 0;
}
