/*
 * libsndfile for the sndfile handlers only: format codes (bit depths, the
 * headerless format that carries a subtype, names), libsndfile's messages
 * in gpufilt's words, and what a file says besides its samples (gf_meta).
 */
#ifndef GF_SNDFILE_FORMAT_H
#define GF_SNDFILE_FORMAT_H

#include "io/io.h"

#include <sndfile.h>
#include <stddef.h>

/* Bits of an integer PCM subtype (read and written as integers), 0 for
 * anything else. */
int gf_sf_pcm_bits(int sf_format);

/* Bytes per sample of an uncompressed subtype (PCM, float, mu-law, A-law),
 * 0 for anything else. */
size_t gf_sf_sample_bytes(int sf_format);

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
/* libsndfile's opens share globals (the last failed open's error, its
 * log): where threads open files at once (a batch's workers), every open,
 * and the reading of its failure (gf_sf_why(NULL, ...)), is one step
 * under this lock. */
void gf_sf_open_lock(void);
void gf_sf_open_unlock(void);
/* gf_sf_reason of sf_strerror(sf) (sf NULL: the last failed open) into buf;
 * returns buf. */
const char *gf_sf_why(SNDFILE *sf, char *buf, size_t n);

/*
 * What a file says besides its samples, carried from input to output: the
 * channel layout (e.g. a WAVE_FORMAT_EXTENSIBLE mask), the strings (title,
 * artist, comment, ...), the bext (Broadcast WAVE) and cart chunks, cue
 * points and instrument data. The type is declared in io.h.
 */
/* Read sf's; 0 with *m set (possibly holding nothing), -1 out of memory. */
int gf_meta_read(SNDFILE *sf, int channels, gf_meta **m);
/* Non-zero when m holds a channel layout. */
int gf_meta_has_layout(const gf_meta *m);
/* Give sf (open for writing, nothing written yet) everything m holds (m
 * may be NULL); what libsndfile refuses is listed in lost ("" for
 * nothing). libsndfile accepts some that its container then drops: where
 * the file can be read back, gf_meta_missing tells the truth. */
void gf_meta_write(SNDFILE *sf, const gf_meta *m, char *lost, size_t n);
/* What of m the file `written` (now open for reading) does not hold, as a
 * list ("channel layout, license, cue points") in lost; "" for nothing. */
void gf_meta_missing(SNDFILE *written, const gf_meta *m, char *lost, size_t n);
void gf_meta_free(gf_meta *m);

/* Where a WAV (RIFF, RIFX, RF64) or AIFF file's samples are, as its
 * header says and as the file holds: what libsndfile does not tell. */
typedef struct gf_extent {
    uint64_t offset;   /* of the first byte of samples */
    uint64_t declared; /* bytes of samples the header declares */
    int unknown;       /* WAV's "length unknown" (0xFFFFFFFF, as streams write it) */
    uint64_t present;  /* bytes of samples the file holds (to its end when unknown) */
    uint64_t stray;    /* bytes after the declared data that are neither chunks nor
                          zero padding: the header may say too little */
} gf_extent;
/* Scan the file open on fd (size bytes); 0 with *x set, -1 when it is not
 * a WAV or AIFF file with a data chunk. Reads with pread only. */
int gf_container_scan(int fd, uint64_t size, gf_extent *x);

/* Whether libsndfile's own open of the input's header goes wrong: it is
 * run in a child process under a CPU limit, so that a header libsndfile
 * would loop on for ever (libsndfile 1.2's LIST sub-chunk walk jumps
 * backwards on a size that wraps its bounds check: fuzz findings in
 * tests/fuzz/corpus) or crash on is refused rather than hanging or
 * killing the run. 1 with the reason in why ("libsndfile does not finish
 * reading its header ...", "libsndfile crashes ..."), else 0 (also where
 * no child can be started, or it ends by another signal: an interrupt).
 * The bytes are buf's buf_len where buf is not NULL (a pipe's first bytes),
 * else the file open on fd (read with pread; not a regular file: 0). */
int gf_header_probe(int fd, const unsigned char *buf, size_t buf_len, char *why, size_t n);
/* The probe's CPU limit in milliseconds (2000 unless set; the fuzz
 * harnesses set 100). */
void gf_header_probe_limit(long ms);
/* Start the process that forks the probes' children, while the program
 * has one thread (main does, first): a child forked from a program with
 * several threads may inherit a lock (AddressSanitizer's allocator's)
 * that it then waits on for ever. Without it, gf_header_probe forks its
 * child itself. 0, or -1 (no server: probes fork themselves). */
int gf_header_probe_start(void);

#endif /* GF_SNDFILE_FORMAT_H */
