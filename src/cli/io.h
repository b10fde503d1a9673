/*
 * Sources and sinks: one interface for every kind of input and output.
 *
 * A source delivers interleaved frames as float or double; a sink takes
 * them. sndfile_io.c implements audio files (and containers on standard
 * input/output) through libsndfile; raw_io.c implements headerless sample
 * streams on files, pipes and terminals. The stages (stages.c) drive them
 * from their own threads; main.c opens and commits them.
 */
#ifndef GF_IO_H
#define GF_IO_H

#include "cli.h"
#include "outfile.h"

#include <signal.h>
#include <sndfile.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gf_source gf_source;
typedef struct gf_sink gf_sink;

struct gf_source {
    const char *path; /* for messages: the file name, or "standard input" */
    /* channels, samplerate (0 when unknown), format (SF_FORMAT_RAW | subtype
     * for raw streams) and frames (< 0 when unknown: pipes) */
    SF_INFO info;
    int is_stdin;        /* reading standard input */
    int streaming;       /* input arrives over time (pipe, terminal): pass on what is there */
    int64_t frames_read; /* frames delivered so far */

    /* Read up to `frames` frames into out: at least one (waiting for it),
     * or fewer than asked when a streaming source has no more right now.
     * Returns the count, 0 at the end, or -1 with err set. */
    int64_t (*read)(gf_source *s, gf_precision p, void *out, size_t frames, char *err, size_t n);
    /* Make a read blocked in another thread return 0 soon; may be NULL. */
    void (*interrupt)(gf_source *s);
    void (*close)(gf_source *s);

    /* libsndfile */
    SNDFILE *sf;
    int pcm; /* non-zero: integer PCM, read with sf_readf_int */
    int32_t *ibuf;
    size_t ibuf_frames;
    char header_note[160]; /* libsndfile's note of a length mismatch, or "" */

    /* raw */
    int fd, own_fd;
    int wake[2], wake_open; /* interrupt pipe */
    gf_raw_format raw;
    unsigned char *rbuf; /* bytes read, not yet delivered */
    size_t rbuf_size, rbuf_have;
    int eof;
    uint64_t trailing;      /* bytes of an incomplete last frame, dropped */
    unsigned char magic[4]; /* the stream's first bytes, to spot a container */
    size_t magic_n;
};

/* Non-zero when the header promised more frames than the data holds. */
int gf_source_truncated(const gf_source *s);
/* Close any kind of source; safe on a zeroed or closed one. */
void gf_source_close(gf_source *s);

struct gf_sink {
    gf_outfile out; /* where it goes: a temporary file renamed on commit, or a stream */
    SF_INFO info;   /* channels, samplerate, format (SF_FORMAT_RAW | subtype for raw) */
    uint64_t clipped;
    int64_t frames_written;
    int sync;                          /* fsync before the rename (set by the caller) */
    int broken_pipe;                   /* the reader of a pipe went away (EPIPE) */
    volatile sig_atomic_t stop_writes; /* abort: give up a write interrupted by a signal */

    /* Returns 0, or -1 with err set (broken_pipe tells EPIPE). */
    int (*write)(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err, size_t n);
    void (*interrupt)(gf_sink *k);

    /* libsndfile */
    SNDFILE *sf;
    int pcm_bits;    /* > 0: integer PCM of that many bits, written with sf_writef_int */
    int float_clips; /* encodings libsndfile converts from float: clipped first */
    void *fbuf;      /* max_block frames of clipped samples for them */
    int32_t *ibuf;
    size_t ibuf_frames;
    size_t unsynced; /* samples written since writeback was last started */
    void *vio;       /* state of a FLAC stream on a pipe (sndfile_io.c) */

    /* raw */
    gf_raw_format raw;
    unsigned char *rbuf;
    size_t rbuf_size;
    int wake[2], wake_open; /* interrupt pipe */
};

/* Close (with k->sync, fsync) and rename into place; returns 0 or -1 with
 * err set (the temporary file is removed then). */
int gf_sink_commit(gf_sink *k, char *err, size_t n);
/* Close and remove the temporary file (safe after commit, after a failed
 * open and on a zeroed sink). */
void gf_sink_abort(gf_sink *k);

#endif /* GF_IO_H */
