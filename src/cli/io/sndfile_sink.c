/*
 * Audio files (or containers on standard output) through libsndfile,
 * written through an outfile: a temporary file renamed into place on
 * commit, or a stream (io.h). Which format is written is chosen in
 * sndfile_choose.c.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sync_file_range */
#endif
#include "io/quantise.h"
#include "io/sample_conv.h"
#include "io/sndfile_choose.h"
#include "io/sndfile_format.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sf_sink {
    SNDFILE *sf;
    int sf_format;        /* as written (after close: RF64, or the WAVEX it became) */
    int pcm_bits;         /* > 0: integer PCM of that many bits, written with sf_writef_int */
    int float_clips;      /* an encoding libsndfile converts from float: clipped first */
    size_t piece;         /* frames ibuf or fbuf holds: a write converts in pieces of this */
    int32_t *ibuf;        /* piece frames of quantised samples (integer PCM) */
    void *fbuf;           /* piece frames of clipped samples (float_clips) */
    size_t unsynced;      /* samples written since writeback was last started */
    struct pipe_vio *vio; /* FLAC on a pipe (below) */
    uint64_t limit;       /* bytes the container can describe; 0: no limit */
    int rf64_auto;        /* RF64 that libsndfile writes as WAV while under 4 GiB */
    const gf_meta *meta;  /* the input's, to check against the file written */
    char lost[256];       /* what of meta libsndfile refused ("" for nothing) */
} sf_sink;

/* A WAV whose data may pass 2 GiB (or whose length is unknown) is written
 * as RF64 with libsndfile's automatic downgrade: a WAV (with
 * WAVE_FORMAT_EXTENSIBLE) when it ends under 4 GiB, RF64 past that. */
#define RF64_FROM ((uint64_t)1 << 31)

/* Round and clip to a left-justified 32-bit integer for sf_writef_int,
 * dithered (dither.h): every sample in order. (Without dither, or with
 * TPDF, a block at a time: quantise.h.) */
static int32_t dithered(gf_dither *d, double x, double scale, double shift, uint64_t *clipped)
{
    return (int32_t)((double)gf_dither_quantise(d, x, scale, clipped) * shift);
}

/* x clipped to [-1, 1], NaN as 0; counts what it changes. */
static double clip_unit(double x, uint64_t *clipped)
{
    if (fabs(x) <= 1.0)
        return x;
    ++*clipped;
    return x > 1.0 ? 1.0 : x < -1.0 ? -1.0 : 0.0;
}

static int is_float_subtype(int format)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    return sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE;
}

/* A container with 32-bit sizes stops short of them rather than wrap: the
 * file so far and `count` more frames (2 bytes a sample for encodings that
 * compress) must leave GF_SF_HEADROOM. */
static int past_limit(gf_sink *k, const sf_sink *f, size_t count, char *err, size_t n)
{
    struct stat st;
    if (!f->limit || fstat(k->out.fd, &st) != 0)
        return 0;
    const size_t sb = gf_sf_sample_bytes(f->sf_format);
    const uint64_t more = (uint64_t)count * (uint64_t)k->fmt.channels * (sb ? sb : 2);
    if ((uint64_t)st.st_size + more + GF_SF_HEADROOM <= f->limit)
        return 0;
    char name[128];
    gf_sf_container_name(f->sf_format, name, sizeof name);
    snprintf(err, n,
             "output '%s': %s cannot describe more than 4 GiB; stopped after %lld frames (write "
             "W64, CAF or RF64 instead, e.g. --out-format caf)",
             k->out.name, name, (long long)k->frames_written);
    return GF_EXIT_OUTPUT;
}

/* Convert `count` frames (at most f->piece when they need converting) and
 * hand them to libsndfile; returns what sf_writef_* wrote. */
static sf_count_t write_piece(gf_sink *k, sf_sink *f, gf_precision p, const void *frames,
                              size_t count)
{
    const size_t ns = count * (size_t)k->fmt.channels;
    if (f->pcm_bits) {
        const double scale = ldexp(1.0, f->pcm_bits - 1), shift = ldexp(1.0, 32 - f->pcm_bits);
        gf_dither *d = &k->dither;
        if (d->kind == GF_DITHER_SHAPED && p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                f->ibuf[i] = dithered(d, ((const float *)frames)[i], scale, shift, &k->clipped);
        else if (d->kind == GF_DITHER_SHAPED)
            for (size_t i = 0; i < ns; i++)
                f->ibuf[i] = dithered(d, ((const double *)frames)[i], scale, shift, &k->clipped);
        else { /* none or TPDF: the vectorised loops; 16 bits as shorts, which
                * libsndfile writes without converting them again */
            const int tpdf = d->kind == GF_DITHER_TPDF;
            int16_t *s16 = (int16_t *)f->ibuf;
            k->clipped += f->pcm_bits == 16
                              ? gf_quantise_block16(p, frames, ns, tpdf, d->key, d->index, s16)
                              : gf_quantise_block(p, frames, ns, scale, shift, tpdf, d->key,
                                                  d->index, f->ibuf);
            if (tpdf)
                d->index += ns;
            if (f->pcm_bits == 16)
                return sf_writef_short(f->sf, s16, (sf_count_t)count);
        }
        return sf_writef_int(f->sf, f->ibuf, (sf_count_t)count);
    }
    if (f->float_clips) {
        /* libsndfile indexes its mu-law and A-law tables with the scaled
         * sample unchecked (SFC_SET_CLIPPING does not cover them): a sample
         * beyond +-1 or NaN would read far outside them. Clip here, for
         * every encoding converted from float: +-1 at most, NaN as 0. */
        if (p == GF_PRECISION_F32)
            for (size_t i = 0; i < ns; i++)
                ((float *)f->fbuf)[i] = (float)clip_unit(((const float *)frames)[i], &k->clipped);
        else
            for (size_t i = 0; i < ns; i++)
                ((double *)f->fbuf)[i] = clip_unit(((const double *)frames)[i], &k->clipped);
        return p == GF_PRECISION_F32 ? sf_writef_float(f->sf, f->fbuf, (sf_count_t)count)
                                     : sf_writef_double(f->sf, f->fbuf, (sf_count_t)count);
    }
    return p == GF_PRECISION_F32 ? sf_writef_float(f->sf, frames, (sf_count_t)count)
                                 : sf_writef_double(f->sf, frames, (sf_count_t)count);
}

/* Any count (io.h): samples that need converting go through the sink's own
 * buffer a piece at a time; float and double go to libsndfile as they
 * are. */
static int sf_write(gf_sink *k, gf_precision p, const void *frames, size_t count, char *err,
                    size_t n)
{
    sf_sink *f = k->state;
    const size_t C = (size_t)k->fmt.channels;
    const size_t fb = C * (p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double));
    const int converts = f->pcm_bits || f->float_clips;
    if (past_limit(k, f, count, err, n))
        return GF_EXIT_OUTPUT;
    const unsigned char *src = frames;
    while (count > 0) {
        const size_t m = converts && count > f->piece ? f->piece : count;
        const sf_count_t wrote = write_piece(k, f, p, src, m);
        if (wrote != (sf_count_t)m || sf_error(f->sf) != SF_ERR_NO_ERROR) {
            const int pipe_closed = k->out.stream && errno == EPIPE;
            char why[256];
            snprintf(err, n, "writing output '%s': %s", k->out.name,
                     gf_sf_why(f->sf, why, sizeof why));
            return pipe_closed ? GF_EXIT_PIPE : GF_EXIT_OUTPUT;
        }
        k->frames_written += (int64_t)m;
        src += m * fb;
        count -= m;
#ifdef SYNC_FILE_RANGE_WRITE
        /* With --sync, start writeback as we go so the fsync before the
         * rename finds little left to do; it does not wait, and a failure
         * here is only a hint (the fsync reports). */
        f->unsynced += m * C;
        if (k->sync && k->out.tmp && f->unsynced >= ((size_t)8 << 20) / sizeof(float)) {
            sync_file_range(k->out.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
            f->unsynced = 0;
        }
#endif
    }
    return 0;
}

/* The file as written, read back where it can be: its format (an RF64
 * written as WAV under 4 GiB is WAVEX), and what of the input's metadata
 * its container kept (libsndfile accepts some it then drops). */
static void check_written(gf_sink *k, sf_sink *f)
{
    const int fd = k->out.seekable ? dup(k->out.fd) : -1;
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = NULL;
    gf_sf_open_lock();
    if (fd >= 0 &&
        (lseek(fd, 0, SEEK_SET) != 0 || !(sf = sf_open_fd(fd, SFM_READ, &info, SF_TRUE))))
        close(fd); /* e.g. standard output opened write-only: libsndfile's word stands */
    gf_sf_open_unlock();
    if (sf) {
        f->sf_format = info.format;
        gf_meta_missing(sf, f->meta, f->lost, sizeof f->lost);
        sf_close(sf);
    }
    if (f->lost[0]) {
        char name[128];
        if (f->rf64_auto)
            snprintf(name, sizeof name,
                     "RF64, as a WAV of unknown length or past 2 GiB is "
                     "written,");
        else
            gf_sf_container_name(f->sf_format, name, sizeof name);
        const int dash = !k->out.target && strcmp(k->out.name, "standard output") == 0;
        gf_cli_warn("%s%s%s: %s does not keep the input's %s", dash ? "" : "output '", k->out.name,
                    dash ? "" : "'", name, f->lost);
    }
}

/* sf_close rewrites the header. */
static int sf_finish(gf_sink *k, char *err, size_t n)
{
    sf_sink *f = k->state;
    const int rc = sf_close(f->sf);
    f->sf = NULL;
    if (rc != 0) {
        char why[256];
        gf_sf_reason(sf_error_number(rc), why, sizeof why);
        snprintf(err, n, "writing output '%s': %s", k->out.name, why);
        return GF_EXIT_OUTPUT;
    }
    check_written(k, f);
    return 0;
}

static void sf_sink_close(gf_sink *k)
{
    sf_sink *f = k->state;
    if (!f)
        return;
    if (f->sf)
        sf_close(f->sf);
    free(f->ibuf);
    free(f->fbuf);
    free(f->vio);
    free(f);
    k->state = NULL;
}

static void sf_describe(const gf_sink *k, char *buf, size_t n)
{
    gf_sf_format_name(((const sf_sink *)k->state)->sf_format, buf, n);
}

static const gf_sink_ops sndfile_sink_ops = {
    .write = sf_write,
    .finish = sf_finish,
    .close = sf_sink_close,
    .describe = sf_describe,
};

/*
 * FLAC on a pipe through libsndfile's virtual I/O. At the end the FLAC
 * encoder seeks back to rewrite its STREAMINFO block; on a plain pipe
 * libsndfile then appends those bytes to the stream, which decoders reject.
 * Here a backward seek is accepted and what is written until the position
 * is back at the end is dropped: the stream stays valid, with STREAMINFO
 * saying "length unknown", as a streamed FLAC must.
 */
typedef struct pipe_vio {
    int fd;
    sf_count_t pos, end; /* position as the encoder sees it; bytes really written */
} pipe_vio;

static sf_count_t vio_len(void *u)
{
    return ((pipe_vio *)u)->end;
}

static sf_count_t vio_seek(sf_count_t off, int whence, void *u)
{
    pipe_vio *v = u;
    v->pos = whence == SEEK_SET ? off : whence == SEEK_CUR ? v->pos + off : v->end + off;
    return v->pos;
}

static sf_count_t vio_read(void *ptr, sf_count_t count, void *u)
{
    (void)ptr;
    (void)count;
    (void)u;
    return 0;
}

static sf_count_t vio_write(const void *ptr, sf_count_t count, void *u)
{
    pipe_vio *v = u;
    if (v->pos == v->end) {
        const unsigned char *b = ptr;
        sf_count_t left = count;
        while (left > 0) {
            const ssize_t w = write(v->fd, b, (size_t)left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return count - left;
            b += w;
            left -= w;
        }
        v->end += count;
    }
    v->pos += count; /* a rewrite of earlier bytes: dropped */
    if (v->pos > v->end)
        v->end = v->pos;
    return count;
}

static sf_count_t vio_tell(void *u)
{
    return ((pipe_vio *)u)->pos;
}

/* Open the encoder on the sink's outfile; a WAV that may pass 2 GiB (or
 * whose length is unknown) as RF64 that libsndfile writes as WAV while it
 * stays under 4 GiB. */
static int open_encoder(gf_sink *k, sf_sink *f, const char *path, SF_INFO *info, int64_t frames,
                        char *err, size_t n)
{
    const int major = info->format & SF_FORMAT_TYPEMASK;
    if (k->out.seekable && (major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX) &&
        gf_sf_rf64_subtype(info->format) &&
        (frames < 0 || gf_sf_data_bytes(info, frames) > RF64_FROM)) {
        info->format = (info->format & ~SF_FORMAT_TYPEMASK) | SF_FORMAT_RF64;
        f->rf64_auto = 1;
    }
    static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    if (!k->out.seekable && (info->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC) {
        if (!(f->vio = calloc(1, sizeof *f->vio))) {
            snprintf(err, n, "out of memory");
            return GF_EXIT_INTERNAL;
        }
        f->vio->fd = k->out.fd;
    }
    /* The open and its failure's reason as one step (gf_sf_open_lock). */
    char why[256] = "";
    gf_sf_open_lock();
    f->sf = f->vio ? sf_open_virtual(&vio, SFM_WRITE, info, f->vio)
                   : sf_open_fd(k->out.fd, SFM_WRITE, info, SF_FALSE);
    if (!f->sf)
        gf_sf_why(NULL, why, sizeof why);
    gf_sf_open_unlock();
    if (!f->sf && k->out.stream) {
        /* A format that must seek back to finish its header (WAV, AIFF,
         * ...) works only on a regular file; libsndfile refuses it on a
         * pipe before writing anything. */
        char name[128];
        gf_sf_format_name(info->format, name, sizeof name);
        if (strcmp(path, "-") == 0)
            snprintf(err, n,
                     "cannot write %s to standard output (%s); use --out-raw FMT, or "
                     "--out-format au or flac",
                     name, why);
        else
            snprintf(err, n,
                     "cannot write %s to '%s' (%s); use --out-raw FMT, or --out-format au or "
                     "flac",
                     name, path, why);
        return GF_EXIT_USAGE;
    }
    if (!f->sf) {
        snprintf(err, n, "cannot write output '%s': %s", path, why);
        return GF_EXIT_OUTPUT;
    }
    if (f->rf64_auto)
        sf_command(f->sf, SFC_RF64_AUTO_DOWNGRADE, NULL, SF_TRUE);
    f->sf_format = info->format;
    f->limit = gf_sf_size_limit(info->format);
    return 0;
}

int gf_sndfile_sink_open(gf_sink *k, const char *path, const gf_format *in, const char *out_format,
                         const gf_sink_opts *o, size_t block, char *err, size_t n)
{
    memset(k, 0, sizeof *k);
    k->out.fd = -1;
    SF_INFO info;
    int rc = gf_sf_choose_format(path, in, out_format, o, &info, err, n);
    if (rc)
        return rc;
    if ((rc = gf_outfile_open(&k->out, "output", path, &o->out, err, n)) != 0)
        return rc;
    sf_sink *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    k->ops = &sndfile_sink_ops;
    k->state = f;
    f->meta = o->meta;
    if ((rc = open_encoder(k, f, path, &info, o->frames, err, n)) != 0) {
        gf_sink_abort(k);
        return rc;
    }
    k->fmt = (gf_format){
        .channels = info.channels,
        .rate = info.samplerate,
        .frames = -1,
        .sample = gf_sf_raw_for(info.format),
        .container = info.format,
    };
    gf_meta_write(f->sf, o->meta, f->lost, sizeof f->lost);
    /* The conversion buffer holds `block` frames; a write of more is
     * converted in pieces (io.h). */
    f->piece = block ? block : GF_SINK_BLOCK;
    const size_t samples = f->piece * (size_t)info.channels;
    f->pcm_bits = gf_sf_pcm_bits(info.format);
    /* Lossy and companded encodings are converted from float by
     * libsndfile: clip first (sf_write) and count. */
    f->float_clips = !f->pcm_bits && !is_float_subtype(info.format);
    if ((f->pcm_bits && !(f->ibuf = malloc(samples * sizeof(int32_t)))) ||
        (f->float_clips && !(f->fbuf = malloc(samples * sizeof(double))))) {
        snprintf(err, n, "out of memory");
        gf_sink_abort(k);
        return GF_EXIT_INTERNAL;
    }
    if ((rc = gf_dither_open(&k->dither, &o->dither, f->pcm_bits, info.channels, info.samplerate,
                             err, n)) != 0)
        gf_sink_abort(k);
    return rc;
}
