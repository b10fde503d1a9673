/*
 * Where an output goes (the filtered audio, the histogram files), and the
 * guarantee that a failure never leaves a file that looks complete.
 *
 * A regular file, or a name that does not exist yet, is written under a
 * temporary name ".NAME.gpufilt-XXXXXX" in the directory of the file it will
 * replace and renamed into place by gf_outfile_commit (see gf_outfile_open
 * for permissions, read-only files and temporary files left by a killed
 * run). Symbolic links are
 * followed first: the link stays and the file it points to is what gets
 * replaced (or created, for a dangling link).
 *
 * Everything else is written in place, as a stream, and never replaced:
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *       the descriptor itself (a pipe, a socket, a terminal is refused, or a
 *       regular file the shell opened, e.g. `> x.wav`);
 *   an existing FIFO or character device (/dev/null, a named pipe)
 *       opened for writing, as `cat > FIFO` would.
 * A block device, socket or directory is refused.
 */
#ifndef GF_OUTFILE_H
#define GF_OUTFILE_H

#include <stddef.h>

typedef struct gf_outfile {
    const char *what; /* "output", "histogram file", ...: for messages */
    char *name;       /* the path as given, or "standard output" for "-" */
    char *target;     /* the file renamed into place; NULL for a stream */
    char *tmp;        /* the temporary file; NULL for a stream and after commit */
    int fd;           /* -1 when closed */
    int own_fd;       /* fd is ours to close ("-" is not) */
    int stream;       /* written in place (see above) */
    int seekable;     /* fd is a regular file: a container can finish its header */
} gf_outfile;

/* How an output is opened; all zero: the defaults. */
typedef struct gf_outfile_opts {
    const char *in_path; /* refused as the output; may be NULL */
    int force;           /* replace an existing file that is read-only */
    /* One-line notices (a stale temporary file removed), or NULL: none. */
    void (*notice)(const char *msg);
} gf_outfile_opts;

/*
 * Open the output `path` ("-": standard output). `what` names it in messages
 * and must outlive the handle; o may be NULL. Returns 0, or an exit code
 * (GF_EXIT_OUTPUT, GF_EXIT_USAGE for a terminal, GF_EXIT_INTERNAL) with a
 * one-line message in err[0..n) and nothing left open or created.
 *
 * A regular file being replaced: refused when read-only (no write
 * permission for anyone, or not for us) unless o->force; the new file gets
 * its permission bits (and its group, and as root its owner, where they can
 * be given); a new file gets 0666 less the umask. The temporary file
 * ".NAME.gpufilt-XXXXXX" (NAME cut to keep it within NAME_MAX) is locked
 * (flock) while the run lasts; those of the same output whose lock is free
 * were left by a killed run and are removed first (with a notice).
 */
int gf_outfile_open(gf_outfile *f, const char *what, const char *path, const gf_outfile_opts *o,
                    char *err, size_t n);

/*
 * Close the descriptor (if it is ours), after flushing a temporary file to
 * disk when `sync` (fsync); the temporary file keeps its name. Returns 0,
 * or -1 with err set and the temporary file removed.
 */
int gf_outfile_close(gf_outfile *f, int sync, char *err, size_t n);

/*
 * Finish: gf_outfile_close if not done yet, then a temporary file is
 * renamed into place. Returns 0, or -1 with err set and the temporary file
 * removed. Either way the handle is released.
 */
int gf_outfile_commit(gf_outfile *f, int sync, char *err, size_t n);

/* Close what is ours and remove the temporary file; safe after commit,
 * after a failed open and on a zeroed handle. */
void gf_outfile_abort(gf_outfile *f);

#endif /* GF_OUTFILE_H */
