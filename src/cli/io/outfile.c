#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* flock */
#endif
#include "io/outfile.h"

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file's name: "." + NAME (cut to fit NAME_MAX) + TEMP_TAG +
 * six characters from mkstemp. */
#define TEMP_TAG    ".gpufilt-"
#define TEMP_SUFFIX TEMP_TAG "XXXXXX"

/* Links followed at most, as the kernel's own limit for a path (ELOOP). */
#define MAX_LINKS 40

/* The descriptor a path names by itself ("/dev/fd/3"), or -1. */
static int fd_path(const char *p)
{
    if (strcmp(p, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(p, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *num = strncmp(p, "/dev/fd/", 8) == 0          ? p + 8
                      : strncmp(p, "/proc/self/fd/", 14) == 0 ? p + 14
                                                              : NULL;
    if (!num || *num < '0' || *num > '9')
        return -1;
    char *end;
    errno = 0;
    const long v = strtol(num, &end, 10);
    return *end == '\0' && errno == 0 && v <= INT_MAX ? (int)v : -1;
}

/*
 * Follow symbolic links at the end of `path` until a file that is not a
 * link, a name that does not exist, or a descriptor path. Directories along
 * the way are left as they are (rename works through them). Returns the
 * malloc'd result with *fd set to the named descriptor or -1, or NULL with
 * errno set.
 */
static char *resolve(const char *path, int *fd)
{
    char *p = strdup(path);
    for (int hops = 0; p; hops++) {
        if ((*fd = fd_path(p)) >= 0)
            return p;
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
            return p; /* not there yet, or the file itself */
        if (hops == MAX_LINKS) {
            free(p);
            errno = ELOOP;
            return NULL;
        }
        char link[PATH_MAX];
        const ssize_t len = readlink(p, link, sizeof link - 1);
        if (len < 0) {
            free(p);
            return NULL;
        }
        link[len] = '\0';
        /* A relative link is relative to the directory holding it. */
        const char *slash = strrchr(p, '/');
        const size_t dirlen = link[0] != '/' && slash ? (size_t)(slash - p) + 1 : 0;
        char *next = malloc(dirlen + (size_t)len + 1);
        if (next) {
            memcpy(next, p, dirlen);
            memcpy(next + dirlen, link, (size_t)len + 1);
        }
        free(p);
        p = next;
    }
    errno = ENOMEM;
    return NULL;
}

static int fail(gf_outfile *f, int code)
{
    gf_outfile_abort(f);
    return code;
}

/* Write in place to descriptor `fd`, which the path named. */
static int open_descriptor(gf_outfile *f, int fd, char *err, size_t n)
{
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
        snprintf(err, n, "%s '%s': descriptor %d is not open for writing", f->what, f->name, fd);
        return fail(f, GF_EXIT_OUTPUT);
    }
    if ((f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
        snprintf(err, n, "%s '%s': %s", f->what, f->name, strerror(errno));
        return fail(f, GF_EXIT_OUTPUT);
    }
    f->own_fd = 1;
    return 0;
}

static void notice(const gf_outfile_opts *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void notice(const gf_outfile_opts *o, const char *fmt, ...)
{
    if (!o->notice)
        return;
    char msg[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->notice(msg);
}

/*
 * Temporary files of this output left by a run that was killed (SIGKILL, a
 * crash, a power loss): every run holds an exclusive flock on its own until
 * it ends, so a temporary file whose lock can be taken belongs to no
 * running gpufilt and is removed. dir is the directory part of the target
 * ("" or ending in '/'), prefix the temporary name up to its random part.
 */
static void remove_stale(const char *dir, const char *prefix, const gf_outfile_opts *o)
{
    DIR *d = opendir(*dir ? dir : ".");
    if (!d)
        return;
    const size_t plen = strlen(prefix), dlen = strlen(dir);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, plen) != 0 || strlen(e->d_name) != plen + 6)
            continue;
        char path[PATH_MAX];
        if (dlen + strlen(e->d_name) >= sizeof path)
            continue;
        snprintf(path, sizeof path, "%s%s", dir, e->d_name);
        const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st, now;
        if (fd < 0)
            continue;
        /* Still the same file when the lock is ours: mkstemp cannot reuse
         * the name before it is unlinked. */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            lstat(path, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev &&
            unlink(path) == 0) {
            char size[32];
            notice(o, "removed '%s' (%s), left by a gpufilt run that was killed", path,
                   gf_cli_bytes(size, sizeof size, (uint64_t)st.st_size));
        }
        close(fd);
    }
    closedir(d);
}

/* An existing file that is read-only (no write permission for anyone, or
 * not for us) is replaced only with --force, as cp and sox refuse it. */
static int check_writable(gf_outfile *f, const struct stat *st, const gf_outfile_opts *o, char *err,
                          size_t n)
{
    if (o->force)
        return 0;
    const int denied = access(f->target, W_OK) != 0 && errno != EROFS;
    if (!denied && (st->st_mode & 0222) != 0)
        return 0;
    snprintf(err, n, "%s '%s' is %s (mode %04o): not replacing it (--force does)", f->what, f->name,
             denied ? "not writable" : "read-only", (unsigned)(st->st_mode & 07777));
    return fail(f, GF_EXIT_OUTPUT);
}

/* The replaced file's permissions for the new one (its group and, for
 * root, its owner where they can be given), else a plain create's. */
static void set_mode(int fd, const struct stat *st)
{
    if (st) {
        if (fchown(fd, geteuid() == 0 ? st->st_uid : (uid_t)-1, st->st_gid) != 0) {
            /* not a member of its group: the file keeps ours */
        }
        fchmod(fd, st->st_mode & 0777);
        return;
    }
    /* mkstemp makes 0600; give the file the mode a plain create would. */
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
}

/* mkstemp on f->tmp, locked against remove_stale and checked to be still
 * the file of that name once locked. */
static int make_locked(gf_outfile *f, const char *pattern, size_t size)
{
    for (int tries = 0; tries < 100; tries++) {
        memcpy(f->tmp, pattern, size);
        const int fd = mkstemp(f->tmp);
        if (fd < 0)
            return -1;
        struct stat mine, named;
        if (flock(fd, LOCK_EX) == 0 && fstat(fd, &mine) == 0 && stat(f->tmp, &named) == 0 &&
            mine.st_ino == named.st_ino && mine.st_dev == named.st_dev)
            return fd;
        close(fd); /* removed by another run's remove_stale before we locked it */
    }
    errno = EAGAIN;
    return -1;
}

/* The temporary file ".NAME.gpufilt-XXXXXX" beside f->target, NAME cut (at
 * a UTF-8 character) so that the whole stays within NAME_MAX; st is the
 * file it replaces, or NULL. */
static int open_temp(gf_outfile *f, const struct stat *st, const gf_outfile_opts *o, char *err,
                     size_t n)
{
    const char *t = f->target;
    const char *slash = strrchr(t, '/');
    const size_t dirlen = slash ? (size_t)(slash - t) + 1 : 0;
    size_t keep = strlen(t + dirlen);
    const size_t room = NAME_MAX - 1 - strlen(TEMP_SUFFIX);
    if (keep > room)
        for (keep = room; keep > 0 && ((unsigned char)t[dirlen + keep] & 0xC0) == 0x80; keep--)
            ;
    const size_t size = dirlen + keep + strlen(TEMP_SUFFIX) + 2;
    char *pattern = malloc(size);
    if (!pattern || !(f->tmp = malloc(size))) {
        free(pattern);
        snprintf(err, n, "out of memory");
        return fail(f, GF_EXIT_INTERNAL);
    }
    snprintf(pattern, size, "%.*s.%.*s" TEMP_SUFFIX, (int)dirlen, t, (int)keep, t + dirlen);
    char *dir = strndup(t, dirlen);
    pattern[size - 7] = '\0'; /* the prefix, without XXXXXX */
    if (dir)
        remove_stale(dir, pattern + dirlen, o);
    free(dir);
    pattern[size - 7] = 'X';
    f->fd = make_locked(f, pattern, size);
    free(pattern);
    if (f->fd < 0) {
        const int e = errno;
        if (e == ENOENT)
            snprintf(err, n, "cannot create %s '%s': directory '%.*s' does not exist", f->what,
                     f->name, dirlen > 1 ? (int)dirlen - 1 : 1, dirlen ? t : ".");
        else
            snprintf(err, n, "cannot create %s '%s': %s", f->what, f->name, strerror(e));
        free(f->tmp);
        f->tmp = NULL;
        return fail(f, GF_EXIT_OUTPUT);
    }
    f->own_fd = 1;
    f->seekable = 1;
    set_mode(f->fd, st);
    return 0;
}

int gf_outfile_open(gf_outfile *f, const char *what, const char *path, const gf_outfile_opts *o,
                    char *err, size_t n)
{
    static const gf_outfile_opts defaults = {0};
    if (!o)
        o = &defaults;
    const char *in_path = o->in_path;
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->what = what;
    const int is_stdout = strcmp(path, "-") == 0;
    if (!(f->name = strdup(is_stdout ? "standard output" : path))) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    int fd = is_stdout ? STDOUT_FILENO : -1;
    char *resolved = NULL;
    if (!is_stdout && !(resolved = resolve(path, &fd))) {
        const int e = errno;
        snprintf(err, n, "cannot create %s '%s': %s", what, path, strerror(e));
        return fail(f, e == ENOMEM ? GF_EXIT_INTERNAL : GF_EXIT_OUTPUT);
    }
    struct stat st, in_st;
    const int exists = fd >= 0 ? fstat(fd, &st) == 0 : stat(resolved, &st) == 0;
    if (exists && in_path && stat(in_path, &in_st) == 0 && in_st.st_dev == st.st_dev &&
        in_st.st_ino == st.st_ino) {
        snprintf(err, n, "%s '%s' is the input file", what, path);
        free(resolved);
        return fail(f, GF_EXIT_OUTPUT);
    }
    int rc = 0;
    if (is_stdout) {
        f->fd = STDOUT_FILENO; /* standard output stays open */
    } else if (fd >= 0) {
        rc = open_descriptor(f, fd, err, n);
    } else if (!exists || S_ISREG(st.st_mode)) {
        f->target = resolved;
        resolved = NULL;
        rc = exists ? check_writable(f, &st, o, err, n) : 0;
        if (!rc)
            rc = open_temp(f, exists ? &st : NULL, o, err, n);
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        /* A FIFO waits here for its reader, as `cat > FIFO` would. */
        f->fd = open(resolved, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        f->own_fd = f->fd >= 0;
        if (f->fd < 0) {
            snprintf(err, n, "cannot open %s '%s': %s", what, path, strerror(errno));
            rc = fail(f, GF_EXIT_OUTPUT);
        }
    } else {
        snprintf(err, n, "%s '%s' is a %s", what, path,
                 S_ISDIR(st.st_mode)   ? "directory"
                 : S_ISBLK(st.st_mode) ? "block device: refusing to write audio over it"
                 : S_ISSOCK(st.st_mode)
                     ? "socket: connect to it with another program and write to standard output"
                     : "special file gpufilt cannot write");
        rc = fail(f, GF_EXIT_OUTPUT);
    }
    free(resolved);
    if (rc != 0 || f->target)
        return rc;
    /* A stream. */
    f->stream = 1;
    if (fstat(f->fd, &st) == 0)
        f->seekable = S_ISREG(st.st_mode);
    if (!is_stdout && isatty(f->fd)) {
        snprintf(err, n, "%s '%s' is a terminal: redirect it to a file or a pipe", what, path);
        return fail(f, GF_EXIT_USAGE);
    }
    return 0;
}

int gf_outfile_close(gf_outfile *f, int sync, char *err, size_t n)
{
    if (!f->own_fd || f->fd < 0)
        return 0;
    /* Both, whatever the first gives. */
    const int sync_failed = sync && f->tmp && fsync(f->fd) != 0;
    const int close_failed = close(f->fd) != 0;
    const int failed = sync_failed || close_failed;
    const int e = errno;
    f->fd = -1;
    f->own_fd = 0;
    if (failed) {
        snprintf(err, n, "writing %s '%s': %s", f->what, f->name, strerror(e));
        gf_outfile_abort(f);
        return -1;
    }
    return 0;
}

int gf_outfile_commit(gf_outfile *f, int sync, char *err, size_t n)
{
    if (gf_outfile_close(f, sync, err, n) != 0)
        return -1;
    if (f->tmp && rename(f->tmp, f->target) != 0) {
        snprintf(err, n, "cannot rename %s into '%s': %s", f->what, f->target, strerror(errno));
        gf_outfile_abort(f);
        return -1;
    }
    free(f->tmp);
    f->tmp = NULL;
    gf_outfile_abort(f);
    return 0;
}

void gf_outfile_abort(gf_outfile *f)
{
    if (f->own_fd && f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->own_fd = 0;
    if (f->tmp)
        unlink(f->tmp);
    free(f->tmp);
    free(f->target);
    free(f->name);
    f->tmp = f->target = f->name = NULL;
}
