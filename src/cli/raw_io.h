/*
 * Headerless sample streams (--raw, --out-raw) on files, pipes and standard
 * input/output.
 *
 * Integer formats are scaled to [-1, 1) exactly on input (v * 2^-(bits-1);
 * u8 is offset by 128) and on output rounded to nearest (ties to even) and
 * clipped, counting clipped samples, with the same arithmetic as the
 * libsndfile sink: a raw stream gives the same samples as the same data in
 * a WAV file, so the filtered bytes are identical.
 *
 * Reading is done with read(2) rather than libsndfile, whose reads wait
 * until the whole request is filled: on a pipe a source hands on whatever
 * complete frames have arrived, so a trickle of input is not held back.
 */
#ifndef GF_RAW_IO_H
#define GF_RAW_IO_H

#include "io.h"

/* Bytes per sample of a raw format. */
size_t gf_raw_sample_bytes(gf_raw_format f);

/*
 * Open path ("-": standard input) as raw samples of format f with `channels`
 * channels and rate (0 if unknown). Warns when the data starts like a
 * container file. Returns 0, or an exit code with err set.
 */
int gf_raw_source_open(gf_source *s, const char *path, gf_raw_format f, int channels, int rate,
                       size_t max_block, char *err, size_t n);

/*
 * Write raw samples of format f to path ("-": standard output, else a
 * temporary file renamed on commit). in_path (may be NULL) is refused as the
 * output. Returns 0, or an exit code with err set.
 */
int gf_raw_sink_open(gf_sink *k, const char *path, gf_raw_format f, int channels, int rate,
                     const char *in_path, size_t max_block, char *err, size_t n);

#endif /* GF_RAW_IO_H */
