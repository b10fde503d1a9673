/*
 * Which format an audio file is written in (sndfile_choose.c): the
 * container and sample type from the input, the output's extension and
 * --out-format, refused with the reason when libsndfile cannot write it or
 * the container cannot describe its size. The sink (sndfile_sink.c) writes
 * what was chosen.
 */
#ifndef GF_SNDFILE_CHOOSE_H
#define GF_SNDFILE_CHOOSE_H

#include "io/io.h"

#include <sndfile.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes kept free below a container's size limit for what is written at
 * close (header, strings, cue points). */
#define GF_SF_HEADROOM ((uint64_t)1 << 20)

/* The SF_INFO to write `path` with, for the stream `in_fmt`: its container
 * and sample type, unless out_format ("MAJOR[:SUBTYPE]") or the extension
 * of path names another; a channel layout in o->meta makes a WAV a WAVEX.
 * Warns once when a container chosen here holds fewer bits than the input.
 * Returns 0, or an exit code with err set (GF_EXIT_USAGE for what
 * out_format or the options asked, GF_EXIT_OUTPUT for what path asked). */
int gf_sf_choose_format(const char *path, const gf_format *in_fmt, const char *out_format,
                        const gf_sink_opts *o, SF_INFO *info, char *err, size_t n);

/* Bytes a format's container can describe; 0: no limit. */
uint64_t gf_sf_size_limit(int sf_format);
/* Non-zero when RF64 takes the format's subtype. */
int gf_sf_rf64_subtype(int sf_format);
/* Bytes of samples for `frames` frames of info's format, or 0 when unknown
 * (a stream, an encoding that is not plain samples). */
uint64_t gf_sf_data_bytes(const SF_INFO *info, int64_t frames);
/* The name of a format's container: "AIFF (Apple/SGI)". */
void gf_sf_container_name(int sf_format, char *buf, size_t n);

#endif /* GF_SNDFILE_CHOOSE_H */
