/*
 * Sources and sinks: one interface for every kind of input and output.
 *
 * A source delivers interleaved frames as float or double; a sink takes
 * them. Each kind is a handler: a table of operations and its own private
 * state, in one file (or a pair, source and sink):
 *
 *   sndfile_source.c, sndfile_sink.c   audio files through libsndfile, and
 *                                      containers on standard input/output
 *                                      (sndfile_choose.c: the output format)
 *   raw_source.c, raw_sink.c           headerless samples on files, pipes
 *                                      and terminals
 *   portaudio_io.c                     capture and playback (--live)
 *
 * The stages (stages.c) drive a source and a sink from their own threads;
 * for files and pipes filter_io.c opens them and commits the sink, and
 * filter.c runs the stages (live/ has its own). A sink writes through an
 * outfile (outfile.h): a temporary file renamed into place on commit, or a
 * stream written in place. Nothing here includes libsndfile's header.
 *
 * Who sizes what. A source is opened with the largest read it will be
 * asked for (max_block) and sizes its buffers for that; its caller never
 * asks for more. A sink is the other way round: it takes any count of
 * frames in one write, however large, and sizes its own buffers. What it
 * must convert (quantise, clip, encode) goes through a buffer of its own a
 * piece at a time; the `block` it is opened with only says how large that
 * buffer is, and bounds nothing. A caller's blocks may then be as long as
 * its engine makes them (filter.c's in-place path hands over up to
 * BLOCK_FRAMES + gf_engine_max_pending() frames at once, a whole FFT chunk)
 * without the sink having to know.
 */
#ifndef GF_IO_H
#define GF_IO_H

#include "cli.h"
#include "io/dither.h"
#include "io/outfile.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* What a stream holds, in gpufilt's own terms. */
typedef struct gf_format {
    int channels;   /* 1 .. GF_MAX_CHANNELS */
    int rate;       /* Hz; 0 when unknown (headerless input without --rate) */
    int64_t frames; /* < 0 when unknown (pipes) */
    /* The headerless sample format that holds these samples without loss
     * (f32le for encodings that are neither plain PCM nor float). */
    gf_raw_format sample;
    /* For a container, libsndfile's format code (major | subtype |
     * endianness), which only the sndfile handlers read; 0 for headerless
     * samples. */
    int container;
} gf_format;

typedef struct gf_source gf_source;
typedef struct gf_sink gf_sink;
/* What a file says besides its samples (channel layout, strings, ...): the
 * sndfile handlers' own (sndfile_format.h). */
typedef struct gf_meta gf_meta;

typedef struct gf_source_ops {
    /* Read up to `frames` frames into out as float or double (p): at least
     * one (waiting for it), or fewer than asked when a streaming source has
     * no more right now. Returns the count, 0 at the end, or -1 with err
     * set. */
    int64_t (*read)(gf_source *s, gf_precision p, void *out, size_t frames, char *err, size_t n);
    /* Move to frame `frame` (0 <= frame <= fmt.frames), so that the next
     * read delivers the very samples a read from the start would deliver
     * there; frames_read becomes `frame`. Returns 0, or -1 with err set.
     * NULL where that cannot be done: pipes and terminals, and encodings
     * whose decoder may not land on the same samples (lossy ones: Vorbis,
     * Opus, MPEG; ADPCM, GSM, G.72x). Files of PCM or float samples and
     * FLAC (libsndfile's sf_seek) and headerless files (lseek) have it. */
    int (*seek)(gf_source *s, int64_t frame, char *err, size_t n);
    /* Make a read blocked in another thread return 0 soon; NULL when the
     * stages must cancel the reading thread instead. */
    void (*interrupt)(gf_source *s);
    /* Release the handler's state. */
    void (*close)(gf_source *s);
} gf_source_ops;

struct gf_source {
    const gf_source_ops *ops; /* NULL once closed */
    void *state;              /* the handler's own */
    const char *path;         /* for messages: the file name, or "standard input" */
    gf_format fmt;
    int is_stdin;          /* reading standard input */
    int streaming;         /* input arrives over time (pipe, terminal): pass on what is there */
    int64_t frames_read;   /* frames delivered so far */
    size_t frame_bytes;    /* bytes a frame takes in the input; 0 for encodings that compress */
    uint64_t trailing;     /* bytes of an incomplete last frame, dropped */
    uint64_t stray;        /* bytes after the samples a WAV or AIFF header gives that are
                              neither chunks nor padding: the header may say too little */
    char header_note[512]; /* why the input is truncated (header and data disagree, or
                              decoding stopped early), or "" */
    gf_meta *meta;         /* what the file says besides its samples; NULL: nothing */
};

/* Non-zero when the header promised more frames than the data holds. */
int gf_source_truncated(const gf_source *s);
/* Close any kind of source; safe on a zeroed or closed one. */
void gf_source_close(gf_source *s);

typedef struct gf_sink_ops {
    /* Write `count` frames: any count, whatever `block` the sink was opened
     * with (see "Who sizes what" above). Returns 0, or an exit code with
     * err set: GF_EXIT_PIPE when the reader of a pipe went away, else
     * GF_EXIT_OUTPUT; frames_written then counts what went out before. */
    int (*write)(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err, size_t n);
    /* Finish the encoding (headers, trailers) before the file is committed;
     * 0 or GF_EXIT_OUTPUT with err set. */
    int (*finish)(gf_sink *k, char *err, size_t n);
    /* Release the handler's state (after finish, or instead of it). */
    void (*close)(gf_sink *k);
    /* A short human name of what is written: "WAV (Microsoft) / Signed 16
     * bit PCM", "raw s16le". */
    void (*describe)(const gf_sink *k, char *buf, size_t n);
} gf_sink_ops;

struct gf_sink {
    const gf_sink_ops *ops; /* NULL once committed or aborted */
    void *state;            /* the handler's own */
    gf_outfile out;         /* where it goes */
    gf_format fmt;
    uint64_t clipped; /* samples clipped (or NaN) on the way out */
    gf_dither dither; /* integer PCM: what is added before rounding (dither.h) */
    int64_t frames_written;
    int sync;                          /* fsync before the rename (set by the caller) */
    char written_as[128];              /* after a commit: describe's words for what was written */
    volatile sig_atomic_t stop_writes; /* abort: give up a write interrupted by a signal */
};

/* Finish, close (with k->sync, fsync) and rename into place; written_as
 * then names the format as written. Returns 0, or GF_EXIT_OUTPUT with err
 * set and the temporary file removed. */
int gf_sink_commit(gf_sink *k, char *err, size_t n);
/* Close and remove the temporary file; safe after commit, after a failed
 * open and on a zeroed sink. */
void gf_sink_abort(gf_sink *k);

/* How a sink is opened; all zero but frames: the defaults. */
typedef struct gf_sink_opts {
    gf_outfile_opts out;   /* the input (refused), --force, notices (outfile.h) */
    int64_t frames;        /* frames the output will hold; < 0: unknown (a stream) */
    const gf_meta *meta;   /* the input's, carried where the container takes it; or NULL */
    gf_dither_opts dither; /* integer PCM outputs (zero: none, plain rounding) */
} gf_sink_opts;

/* ---- the handlers ---- */

/* A sink's conversion buffer, in frames, when it is opened with block 0. */
#define GF_SINK_BLOCK ((size_t)65536)

/*
 * An audio file, or standard input for "-" (a container libsndfile can read
 * from a pipe: WAV, AU, ...). Integer PCM (8..32 bit) is read as integers
 * and scaled by 2^-(bits-1) exactly. Returns 0, or an exit code with err
 * set.
 */
int gf_sndfile_source_open(gf_source *s, const char *path, size_t max_block, char *err, size_t n);

/*
 * Headerless samples of format f from path ("-": standard input), with
 * `channels` channels and rate (0 if unknown). Warns when the data starts
 * like a container file. Returns 0, or an exit code with err set.
 */
int gf_raw_source_open(gf_source *s, const char *path, gf_raw_format f, int channels, int rate,
                       size_t max_block, char *err, size_t n);

/*
 * An audio file (or standard output for "-") for the stream `in` (channels
 * and rate), opened as `o` says (o->out.in_path is refused). The format is
 * the input's, unless the extension of `path` names another container or
 * out_format ("MAJOR[:SUBTYPE]") is given. Integer PCM is dithered as
 * o->dither says (dither.h), rounded to nearest (ties to even) and clipped;
 * encodings libsndfile converts from float (mu-law, A-law, ADPCM, Vorbis,
 * ...) get samples clipped to [-1, 1] first; NaN is written as 0. Clipped
 * samples are counted. `block` (0: GF_SINK_BLOCK) sizes the conversion
 * buffer; writes of any count are taken. Returns 0, or an exit code with
 * err set.
 */
int gf_sndfile_sink_open(gf_sink *k, const char *path, const gf_format *in, const char *out_format,
                         const gf_sink_opts *o, size_t block, char *err, size_t n);

/*
 * Headerless samples of format f to path ("-": standard output), with the
 * same dither, rounding and clipping as the sndfile sink. `block` (0:
 * GF_SINK_BLOCK) sizes the conversion buffer; writes of any count are
 * taken. Returns 0, or an exit code with err set.
 */
int gf_raw_sink_open(gf_sink *k, const char *path, gf_raw_format f, const gf_format *in,
                     const gf_sink_opts *o, size_t block, char *err, size_t n);

/* Bytes per sample of a raw format, 0 for GF_RAW_NONE (raw_format.c). */
size_t gf_raw_sample_bytes(gf_raw_format f);

/* A larger pipe buffer (1 MiB) where fd is a pipe: fewer, larger reads and
 * writes; harmless otherwise (io.c). */
void gf_widen_pipe(int fd);

#endif /* GF_IO_H */
