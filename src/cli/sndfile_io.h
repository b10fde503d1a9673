/*
 * Audio files through libsndfile: a source that reads frames as float or
 * double, and a sink that writes them to a temporary file in the output's
 * directory and renames it into place only on success.
 *
 * Integer PCM (8..32 bit) is read as integers and scaled by 2^-(bits-1)
 * exactly; on output it is rounded to nearest (ties to even) and clipped to
 * the type's range, counting clipped samples. So an identity filter gives back
 * the input bit for bit. Other encodings use libsndfile's float conversion.
 */
#ifndef GF_SNDFILE_IO_H
#define GF_SNDFILE_IO_H

#include "gpufilt.h"

#include <sndfile.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gf_source {
    const char *path;
    SNDFILE *sf;
    SF_INFO info;
    int pcm; /* non-zero: integer PCM, read with sf_readf_int */
    int64_t frames_read;
    int32_t *ibuf;
    size_t ibuf_frames;
    char header_note[160]; /* libsndfile's note of a length mismatch, or "" */
} gf_source;

/* Open and check an input file. Returns 0, or an exit code with err set. */
int gf_source_open(gf_source *s, const char *path, size_t max_block, char *err, size_t n);
/* Read up to `frames` frames (<= max_block) into out; returns the count
 * (0 at the end) or -1 with err set. */
int64_t gf_source_read(gf_source *s, gf_precision p, void *out, size_t frames, char *err, size_t n);
/* Non-zero when the header promised more frames than the data holds. */
int gf_source_truncated(const gf_source *s);
void gf_source_close(gf_source *s);

typedef struct gf_sink {
    char *path, *tmp_path;
    int fd;
    SNDFILE *sf;
    SF_INFO info;
    int pcm_bits;    /* > 0: integer PCM of that many bits, written with sf_readf_int */
    int float_clips; /* encodings libsndfile converts from float with clipping */
    int32_t *ibuf;
    size_t ibuf_frames;
    uint64_t clipped;
    int64_t frames_written;
    int sync;        /* fsync before the rename (set by the caller) */
    size_t unsynced; /* samples written since writeback was last started */
} gf_sink;

/*
 * Create the temporary output for `path` with the input's rate and channels.
 * Format: the input's, unless the extension of `path` names another major
 * format or out_format ("MAJOR[:SUBTYPE]") is given. Refuses an output that
 * is the input file. Returns 0, or an exit code with err set.
 */
int gf_sink_open(gf_sink *k, const char *path, const gf_source *in, const char *out_format,
                 size_t max_block, char *err, size_t n);
/* Write frames; returns 0 or -1 with err set. */
int gf_sink_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                  size_t n);
/* Close (and with k->sync, fsync) and rename into place; returns 0 or -1
 * with err set (the temporary file is removed then). */
int gf_sink_commit(gf_sink *k, char *err, size_t n);
/* Close and remove the temporary file (safe after commit or failed open). */
void gf_sink_abort(gf_sink *k);

/* A short human name of a format: "WAV (Microsoft) / Signed 16 bit PCM". */
void gf_format_name(int format, char *buf, size_t n);

#endif /* GF_SNDFILE_IO_H */
