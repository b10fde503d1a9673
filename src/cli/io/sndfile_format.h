/*
 * libsndfile's format codes, for the sndfile handlers only: bit depths, the
 * headerless format that carries a subtype, names.
 */
#ifndef GF_SNDFILE_FORMAT_H
#define GF_SNDFILE_FORMAT_H

#include "io.h"

#include <sndfile.h>
#include <stddef.h>

/* Bits of an integer PCM subtype (read and written as integers), 0 for
 * anything else. */
int gf_sf_pcm_bits(int sf_format);

/* The headerless format that carries a subtype without loss (f32le for
 * encodings that are not plain PCM or float). */
gf_raw_format gf_sf_raw_for(int sf_format);

/* libsndfile's subtype | endianness of a headerless format. */
int gf_sf_format_for_raw(gf_raw_format f);

/* A short human name of a format: "WAV (Microsoft) / Signed 16 bit PCM". */
void gf_sf_format_name(int sf_format, char *buf, size_t n);

/* libsndfile's message (sf_strerror) as a phrase inside gpufilt's own: no
 * "System error : " or "Error : " prefix, no final period, lower case
 * where it is not an acronym, its vaguest phrases made plain ("not a format
 * libsndfile knows"). */
void gf_sf_reason(const char *msg, char *buf, size_t n);
/* gf_sf_reason of sf_strerror(sf) (sf NULL: the last failed open) into buf;
 * returns buf. */
const char *gf_sf_why(SNDFILE *sf, char *buf, size_t n);

#endif /* GF_SNDFILE_FORMAT_H */
