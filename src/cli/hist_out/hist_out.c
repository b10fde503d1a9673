/*
 * Histogram output: the API of hist_out.h, the files (outfile.h: a
 * temporary name renamed on commit, or a stream) and the order checks.
 */
#include "hist_out/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- files --- */

static int file_fail(out_file *o, int e, char *err, size_t n)
{
    snprintf(err, n, "writing %s '%s': %s", o->of.what, o->of.name, strerror(e ? e : EIO));
    return GF_EXIT_OUTPUT;
}

static int file_create(out_file *o, const char *what, const char *path, const gf_outfile_opts *oo,
                       char *err, size_t n)
{
    const int rc = gf_outfile_open(&o->of, what, path, oo, err, n);
    if (rc)
        return rc;
    o->open = 1;
    const int fd = fcntl(o->of.fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        const int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(err, n, "cannot create %s '%s': %s", what, path, strerror(e));
        return GF_EXIT_OUTPUT;
    }
    return 0;
}

static int file_write(out_file *o, const char *buf, size_t len, char *err, size_t n)
{
    errno = 0;
    if (fwrite(buf, 1, len, o->f) != len)
        return file_fail(o, errno, err, n);
    return 0;
}

static int file_flush(out_file *o, char *err, size_t n)
{
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        return file_fail(o, errno, err, n);
    return 0;
}

/* Flush and close, but leave the file under its temporary name. */
static int file_close(out_file *o, char *err, size_t n)
{
    errno = 0;
    const int bad = fflush(o->f) != 0 || ferror(o->f);
    const int e = errno;
    const int closed = fclose(o->f);
    o->f = NULL;
    if (bad || closed != 0)
        return file_fail(o, bad ? e : errno, err, n);
    return gf_outfile_close(&o->of, 0, err, n) == 0 ? 0 : GF_EXIT_OUTPUT;
}

static int file_rename(out_file *o, char *err, size_t n)
{
    o->open = 0;
    return gf_outfile_commit(&o->of, 0, err, n) == 0 ? 0 : GF_EXIT_OUTPUT;
}

/* Close, remove what was not renamed into place, free. */
static void file_drop(out_file *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    o->open = 0;
    gf_outfile_abort(&o->of);
}

static void destroy(gf_hist_out *h)
{
    file_drop(&h->csv);
    file_drop(&h->png);
    free(h->line);
    free(h->cells);
    free(h->marks);
    free(h);
}

static int ends_with_ci(const char *s, const char *suffix)
{
    const size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

/* --- the API --- */

/* One line to the CSV/JSON file, within its limit. */
static int csv_write(gf_hist_out *h, const char *end, char *err, size_t n)
{
    const size_t len = (size_t)(end - h->line);
    if (h->csv_limit && h->csv_bytes + len > h->csv_limit) {
        char limit[32];
        gf_cli_bytes(limit, sizeof limit, h->csv_limit);
        snprintf(err, n,
                 "histogram file '%s' would grow past --hist-limit %s at block %llu: raise the "
                 "limit (--hist-limit SIZE, or none), or use fewer bins or longer blocks",
                 h->csv.of.name, limit, (unsigned long long)h->last_block);
        return GF_EXIT_OUTPUT;
    }
    h->csv_bytes += len;
    return file_write(&h->csv, h->line, len, err, n);
}

uint64_t gf_hist_out_min_bytes(uint64_t records, size_t bins)
{
    /* The header's ",binN" names, and per record ",0" per bin besides the
     * fixed fields ("0,0,1,0,0,0,0,0,0,0"). */
    const uint64_t header = 128 + (uint64_t)bins * 6;
    const uint64_t per = 20 + 2 * (uint64_t)bins;
    return records > (UINT64_MAX - header) / per ? UINT64_MAX : header + records * per;
}

int gf_hist_out_open(gf_hist_out **out, const char *csv_path, const char *png_path,
                     const gf_hist_config *hc, int channels, int rate, char *err, size_t n)
{
    return gf_hist_out_create(out, csv_path, png_path, hc, channels, rate, NULL, err, n);
}

int gf_hist_out_create(gf_hist_out **out, const char *csv_path, const char *png_path,
                       const gf_hist_config *hc, int channels, int rate,
                       const gf_hist_out_opts *opts, char *err, size_t n)
{
    static const gf_hist_out_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    *out = NULL;
    if (!csv_path && !png_path)
        return 0;
    if (!hc || hc->bins < 1 || hc->bins > GF_HIST_MAX_BINS || hc->block_frames < 1 ||
        !isfinite(hc->lo) || !isfinite(hc->hi) || !(hc->lo < hc->hi) || channels < 1 ||
        channels > GF_MAX_CHANNELS || rate < 0) {
        snprintf(err, n, "histogram output: invalid configuration");
        return GF_EXIT_INTERNAL;
    }
    const char *paths[2] = {csv_path, png_path}, *names[2] = {"--hist", "--hist-png"};
    for (int i = 0; i < 2; i++)
        if (paths[i] && (!paths[i][0] || strcmp(paths[i], "-") == 0)) {
            snprintf(err, n, "%s: give a file name ('%s' is not one)", names[i], paths[i]);
            return GF_EXIT_USAGE;
        }
    if (csv_path && png_path) {
        struct stat a, b;
        if (strcmp(csv_path, png_path) == 0 ||
            (stat(csv_path, &a) == 0 && stat(png_path, &b) == 0 && a.st_dev == b.st_dev &&
             a.st_ino == b.st_ino)) {
            snprintf(err, n, "--hist and --hist-png name the same file '%s'", csv_path);
            return GF_EXIT_USAGE;
        }
    }

    gf_hist_out *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    h->hc = *hc;
    h->channels = channels;
    h->rate = rate;
    h->panels = hc->mix ? 1 : channels;
    h->csv_limit = opts->csv_limit;
    int rc = 0;
    if (csv_path) {
        h->json = ends_with_ci(csv_path, ".json") || ends_with_ci(csv_path, ".jsonl") ||
                  ends_with_ci(csv_path, ".ndjson");
        h->line = malloc(hc->bins * LINE_PER_BIN + LINE_FIXED);
        if (!h->line) {
            snprintf(err, n, "out of memory");
            rc = GF_EXIT_INTERNAL;
            goto fail;
        }
        rc = file_create(&h->csv, "histogram file", csv_path, &opts->out, err, n);
        if (rc)
            goto fail;
        rc = csv_write(h, gf_hout_meta(h->line, h), err, n);
        if (!rc)
            rc = file_flush(&h->csv, err, n);
        if (rc)
            goto fail;
    }
    if (png_path) {
        gf_hout_png_plan(h);
        rc = file_create(&h->png, "histogram image", png_path, &opts->out, err, n);
        if (rc)
            goto fail;
    }
    *out = h;
    return 0;
fail:
    destroy(h);
    return rc;
}

int gf_hist_out_write(gf_hist_out *h, const gf_hist_record *r, char *err, size_t n)
{
    if (!h)
        return 0;
    const int bad_channel =
        h->hc.mix ? r->channel != -1 : r->channel < 0 || r->channel >= h->channels;
    const int out_of_order =
        h->have_block &&
        (r->block < h->last_block || (r->block == h->last_block && r->channel <= h->last_channel));
    if (bad_channel || out_of_order || !r->bins) {
        char which[32] = "all channels"; /* channels from 1, as every message numbers them */
        if (r->channel >= 0)
            snprintf(which, sizeof which, "channel %d", r->channel + 1);
        snprintf(err, n, "histogram record (block %llu, %s) %s", (unsigned long long)r->block,
                 which,
                 bad_channel    ? "has no such channel"
                 : out_of_order ? "is out of order"
                                : "has no bins");
        return GF_EXIT_INTERNAL;
    }
    h->have_block = 1;
    h->last_block = r->block;
    h->last_channel = r->channel;
    h->end_frame = r->first_frame + r->frames;
    if (h->png.open) {
        const int rc = gf_hout_png_add(h, r, err, n);
        if (rc)
            return rc;
    }
    if (h->csv.open) {
        int rc = csv_write(h, gf_hout_record(h->line, h, r), err, n);
        if (!rc && (r->channel < 0 || r->channel == h->channels - 1))
            rc = file_flush(&h->csv, err, n);
        if (rc)
            return rc;
    }
    return 0;
}

int gf_hist_out_commit(gf_hist_out **hp, char *err, size_t n)
{
    gf_hist_out *h = hp ? *hp : NULL;
    if (!h)
        return 0;
    *hp = NULL;
    /* Everything that can fail before any rename, so that a failure leaves
     * neither file in place. */
    int rc = 0;
    if (h->csv.f)
        rc = file_close(&h->csv, err, n);
    if (!rc && h->png.f) {
        rc = gf_hout_png_render(h, err, n);
        if (!rc)
            rc = file_close(&h->png, err, n);
    }
    if (!rc && h->csv.open)
        rc = file_rename(&h->csv, err, n);
    if (!rc && h->png.open)
        rc = file_rename(&h->png, err, n);
    destroy(h);
    return rc;
}

void gf_hist_out_abort(gf_hist_out **hp)
{
    if (!hp || !*hp)
        return;
    destroy(*hp);
    *hp = NULL;
}

const char *gf_hist_out_tmp_name(const gf_hist_out *h, int png)
{
    if (!h)
        return NULL;
    const out_file *o = png ? &h->png : &h->csv;
    return o->open ? o->of.tmp : NULL;
}
