/*
 * Audio files through libsndfile: a source that reads frames as float or
 * double, and a sink that writes them to a temporary file in the output's
 * directory and renames it into place only on success (see io.h).
 *
 * Integer PCM (8..32 bit) is read as integers and scaled by 2^-(bits-1)
 * exactly; on output it is rounded to nearest (ties to even) and clipped to
 * the type's range, counting clipped samples. So an identity filter gives back
 * the input bit for bit. Other encodings use libsndfile's float conversion.
 */
#ifndef GF_SNDFILE_IO_H
#define GF_SNDFILE_IO_H

#include "io.h"

#include <sndfile.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open an input file, or standard input for "-" (a container libsndfile can
 * read from a pipe: WAV, AU, FLAC, ...). Returns 0, or an exit code with err
 * set.
 */
int gf_sndfile_source_open(gf_source *s, const char *path, size_t max_block, char *err, size_t n);

/*
 * Create the temporary output for `path` with the input's rate and channels,
 * or write to standard output for "-" (only formats libsndfile can write to
 * a pipe, such as AU or FLAC, unless standard output is a regular file).
 * Format: the input's, unless the extension of `path` names another major
 * format or out_format ("MAJOR[:SUBTYPE]") is given. Refuses an output that
 * is the input file. Returns 0, or an exit code with err set.
 */
int gf_sndfile_sink_open(gf_sink *k, const char *path, const gf_source *in, const char *out_format,
                         size_t max_block, char *err, size_t n);

/* The raw format that carries a libsndfile subtype without loss (f32le for
 * encodings that are not plain PCM or float). */
gf_raw_format gf_raw_for_format(int sf_format);

/* The libsndfile subtype | endianness of a raw format. */
int gf_format_for_raw(gf_raw_format f);

/* A short human name of a format: "WAV (Microsoft) / Signed 16 bit PCM". */
void gf_format_name(int format, char *buf, size_t n);

#endif /* GF_SNDFILE_IO_H */
