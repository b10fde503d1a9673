/*
 * The CLI's histogram output (src/cli/hist_out/): exact CSV and JSON-lines
 * text, the PNG's size and pixels against the layout in docs/hist-output.md,
 * column merging with bounded memory, error paths that leave nothing
 * behind, and how --verify names the first record that differs.
 *
 * Usage: test_hist_out WORKDIR. The files it commits stay in WORKDIR for
 * hist_out_parse.sh (JSON and CSV parsed by Python) and for looking at.
 * test_hist_out --read-only WORKDIR: a directory the user cannot write,
 * checked as an unprivileged user (as root: as "nobody", which CI needs,
 * since CI runs as root).
 */
#define _DEFAULT_SOURCE /* setgroups */
#include "hist_out/hist_out.h"

#include "draw/canvas.h"
#include "cli.h"
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <png.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

static const char *work;

/* --- layout, from docs/hist-output.md ("The picture") --- */
enum {
    LEFT = 72,
    WIDTH_EXTRA = 80,
    HEADER_H = 24,
    PANEL_EXTRA = 44,
    FOOTER_H = 80,
    ABOVE_Y = 12,
    MAP_Y = 20,
    STRIP_H = 7
};

static const unsigned char RED[3] = {255, 0, 0}, MAGENTA[3] = {255, 0, 255},
                           GREY[3] = {220, 220, 220}, V_LOW[3] = {68, 1, 84},
                           V_HIGH[3] = {253, 231, 37};

/* --- helpers --- */

static char *path_in(const char *dir, const char *name)
{
    static char buf[8][4096];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* A fresh, empty directory WORKDIR/name. */
static char *fresh_dir(const char *name)
{
    static char buf[8][4096];
    static int next;
    char *d = buf[next++ % 8];
    snprintf(d, sizeof buf[0], "%s/%s", work, name);
    mkdir(d, 0777);
    chmod(d, 0777);
    DIR *dp = opendir(d);
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                if (unlink(path_in(d, e->d_name)) != 0)
                    rmdir(path_in(d, e->d_name));
        closedir(dp);
    }
    return d;
}

/* Entries of a directory other than . and ..; the first one's name in first. */
static int dir_count(const char *d, char *first, size_t n)
{
    int count = 0;
    DIR *dp = opendir(d);
    if (!dp)
        return -1;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (count++ == 0 && first)
                snprintf(first, n, "%s", e->d_name);
        }
    closedir(dp);
    return count;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len - 1 == 0) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[len] = '\0';
    return s;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

typedef struct image {
    unsigned w, h;
    unsigned char *px; /* RGB */
} image;

static int png_load(const char *path, image *im)
{
    png_image p;
    memset(&p, 0, sizeof p);
    p.version = PNG_IMAGE_VERSION;
    im->px = NULL;
    if (!png_image_begin_read_from_file(&p, path))
        return -1;
    p.format = PNG_FORMAT_RGB;
    im->w = p.width;
    im->h = p.height;
    im->px = malloc(PNG_IMAGE_SIZE(p));
    if (!im->px || !png_image_finish_read(&p, NULL, im->px, 0, NULL)) {
        png_image_free(&p);
        free(im->px);
        im->px = NULL;
        return -1;
    }
    return 0;
}

static const unsigned char *pixel(const image *im, unsigned x, unsigned y)
{
    static const unsigned char outside[3] = {1, 2, 3};
    if (x >= im->w || y >= im->h)
        return outside;
    return im->px + ((size_t)y * im->w + x) * 3;
}

static int is(const unsigned char *p, const unsigned char *c)
{
    return p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
}

/* Width and height from the IHDR chunk, without decoding. */
static int png_dims(const char *path, unsigned *w, unsigned *h)
{
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    const size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got != sizeof b || memcmp(b + 12, "IHDR", 4) != 0)
        return -1;
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    return 0;
}

static gf_hist_config config(size_t bins, size_t block_frames, int mix)
{
    return (gf_hist_config){
        .bins = bins, .block_frames = block_frames, .lo = -1, .hi = 1, .mix = mix};
}

static gf_hist_record record(uint64_t block, uint64_t frames, size_t block_frames, int channel,
                             const uint64_t *bins)
{
    return (gf_hist_record){.block = block,
                            .first_frame = block * block_frames,
                            .frames = frames,
                            .channel = channel,
                            .min = -0.5,
                            .max = 0.5,
                            .rms = 0.25,
                            .bins = bins};
}

/* Pixel rows of a panel's map, from the documented rule. */
static unsigned map_rows(size_t bins, int panels)
{
    size_t rmax = 8192 / (size_t)panels;
    rmax = rmax > 512 ? 512 : rmax < 16 ? 16 : rmax;
    const size_t rmin = rmax < 256 ? rmax : 256;
    if (bins > rmax) {
        const size_t m = (bins + rmax - 1) / rmax;
        return (unsigned)((bins + m - 1) / m);
    }
    return (unsigned)(bins < rmin ? bins * (rmin / bins) : bins);
}

static unsigned map_width(size_t cols)
{
    return cols == 0     ? 512
           : cols >= 512 ? (unsigned)cols
                         : (unsigned)(cols * ((511 + cols) / cols));
}

/* --- exact text --- */

/* Six records over three blocks of two channels, the last block short,
 * with NaN, infinities, -0, tiny and huge values. */
static void write_exact(gf_hist_out *h)
{
    static const uint64_t b[6][4] = {{1, 1, 0, 1}, {0, 1, 0, 0}, {0, 0, 0, 0},
                                     {0, 0, 1, 0}, {0, 0, 1, 0}, {0, 0, 0, UINT64_MAX}};
    gf_hist_record r[6];
    for (int i = 0; i < 6; i++)
        r[i] = record((uint64_t)i / 2, i < 4 ? 3 : 1, 3, i % 2, b[i]);
    r[0].rms = 0.1;
    r[1] = (gf_hist_record){0, 0, 3, 1, 1, 1, 0, -2, 1.5, 0.1 + 0.2, b[1]};
    r[2].nan = 3;
    r[2].min = r[2].max = NAN;
    r[2].rms = -NAN;
    r[3].below = r[3].above = 1;
    r[3].min = -INFINITY;
    r[3].max = r[3].rms = INFINITY;
    r[4].min = r[4].max = -0.0;
    r[4].rms = 0;
    r[5].min = r[5].max = r[5].rms = 1e-300;
    r[5].max = 1.0 / 3;
    char err[256];
    for (int i = 0; i < 6; i++) {
        const int rc = gf_hist_out_write(h, &r[i], err, sizeof err);
        CHECK(rc == 0, "write record %d: %d %s", i, rc, err);
    }
}

static const char exact_csv[] =
    "# gpufilt_hist=1 bins=4 lo=-1 hi=1 block_frames=3 rate=48000 channels=2 of=output mix=false\n"
    "block,first_frame,frames,channel,below,above,nan,min,max,rms,bin0,bin1,bin2,bin3\n"
    "0,0,3,0,0,0,0,-0.5,0.5,0.1,1,1,0,1\n"
    "0,0,3,1,1,1,0,-2,1.5,0.30000000000000004,0,1,0,0\n"
    "1,3,3,0,0,0,3,nan,nan,nan,0,0,0,0\n"
    "1,3,3,1,1,1,0,-inf,inf,inf,0,0,1,0\n"
    "2,6,1,0,0,0,0,-0,-0,0,0,0,1,0\n"
    "2,6,1,1,0,0,0,1e-300,0.3333333333333333,1e-300,0,0,0,18446744073709551615\n";

static const char exact_json[] =
    "{\"gpufilt_hist\":1,\"bins\":4,\"lo\":-1,\"hi\":1,\"block_frames\":3,\"rate\":48000,"
    "\"channels\":2,\"of\":\"output\",\"mix\":false}\n"
    "{\"block\":0,\"first_frame\":0,\"frames\":3,\"channel\":0,\"below\":0,\"above\":0,\"nan\":0,"
    "\"min\":-0.5,\"max\":0.5,\"rms\":0.1,\"bins\":[1,1,0,1]}\n"
    "{\"block\":0,\"first_frame\":0,\"frames\":3,\"channel\":1,\"below\":1,\"above\":1,\"nan\":0,"
    "\"min\":-2,\"max\":1.5,\"rms\":0.30000000000000004,\"bins\":[0,1,0,0]}\n"
    "{\"block\":1,\"first_frame\":3,\"frames\":3,\"channel\":0,\"below\":0,\"above\":0,\"nan\":3,"
    "\"min\":null,\"max\":null,\"rms\":null,\"bins\":[0,0,0,0]}\n"
    "{\"block\":1,\"first_frame\":3,\"frames\":3,\"channel\":1,\"below\":1,\"above\":1,\"nan\":0,"
    "\"min\":null,\"max\":null,\"rms\":null,\"bins\":[0,0,1,0]}\n"
    "{\"block\":2,\"first_frame\":6,\"frames\":1,\"channel\":0,\"below\":0,\"above\":0,\"nan\":0,"
    "\"min\":-0.0,\"max\":-0.0,\"rms\":0,\"bins\":[0,0,1,0]}\n"
    "{\"block\":2,\"first_frame\":6,\"frames\":1,\"channel\":1,\"below\":0,\"above\":0,\"nan\":0,"
    "\"min\":1e-300,\"max\":0.3333333333333333,\"rms\":1e-300,\"bins\":[0,0,0,"
    "18446744073709551615]}\n";

static void test_exact(const char *name, const char *expected)
{
    const char *d = fresh_dir("exact");
    static char keep[4096];
    snprintf(keep, sizeof keep, "%s/%s", work, name);
    const char *path = path_in(d, name);
    gf_hist_config hc = config(4, 3, 0);
    gf_hist_out *h = NULL;
    char err[256] = "";
    int rc = gf_hist_out_open(&h, path, NULL, &hc, 2, 48000, err, sizeof err);
    CHECK(rc == 0 && h, "%s: open: %d %s", name, rc, err);
    if (!h)
        return;
    write_exact(h);
    CHECK(!exists(path), "%s: final name exists before commit", name);
    rc = gf_hist_out_commit(&h, err, sizeof err);
    CHECK(rc == 0 && !h, "%s: commit: %d %s", name, rc, err);
    char *got = slurp(path);
    CHECK(got && strcmp(got, expected) == 0, "%s: text differs:\n--- got\n%s--- expected\n%s", name,
          got ? got : "(none)", expected);
    free(got);
    CHECK(dir_count(d, NULL, 0) == 1, "%s: files other than the output remain", name);
    rename(path, keep); /* for hist_out_parse.sh */
}

/* Records are on disk once their block is complete, under the temporary name. */
static void test_streaming(void)
{
    const char *d = fresh_dir("stream");
    const char *path = path_in(d, "h.csv");
    gf_hist_config hc = config(2, 10, 0);
    gf_hist_out *h = NULL;
    char err[256] = "", tmp[256] = "";
    CHECK(gf_hist_out_open(&h, path, NULL, &hc, 2, 0, err, sizeof err) == 0, "open: %s", err);
    if (!h)
        return;
    const uint64_t bins[2] = {7, 3};
    for (int c = 0; c < 2; c++) {
        gf_hist_record r = record(0, 10, 10, c, bins);
        CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
    }
    CHECK(dir_count(d, tmp, sizeof tmp) == 1, "one temporary file while streaming");
    CHECK(strncmp(tmp, ".h.csv.gpufilt-", 15) == 0 && strlen(tmp) == 21,
          "temporary name '%s' is not .h.csv.gpufilt-XXXXXX", tmp);
    char *got = slurp(path_in(d, tmp));
    static const char want[] =
        "# gpufilt_hist=1 bins=2 lo=-1 hi=1 block_frames=10 rate=0 channels=2 of=output mix=false\n"
        "block,first_frame,frames,channel,below,above,nan,min,max,rms,bin0,bin1\n"
        "0,0,10,0,0,0,0,-0.5,0.5,0.25,7,3\n"
        "0,0,10,1,0,0,0,-0.5,0.5,0.25,7,3\n";
    CHECK(got && strcmp(got, want) == 0, "block 0 not flushed to the temporary file:\n%s",
          got ? got : "(none)");
    free(got);
    gf_hist_out_abort(&h);
    CHECK(!h, "abort sets the handle to NULL");
    CHECK(dir_count(d, NULL, 0) == 0, "abort leaves nothing behind");
}

/* Mix, one bin, input side, JSON by a capitalised extension. */
static void test_mix_one_bin(void)
{
    const char *d = fresh_dir("mix");
    const char *names[] = {"h.JSON", "h.jsonl", "h.ndjson", "h.txt"};
    for (int i = 0; i < 4; i++) {
        const char *path = path_in(d, names[i]);
        gf_hist_config hc = config(1, 5, 1);
        hc.of_input = 1;
        hc.lo = -0.5;
        hc.hi = 0.25;
        gf_hist_out *h = NULL;
        char err[256] = "";
        CHECK(gf_hist_out_open(&h, path, NULL, &hc, 3, 44100, err, sizeof err) == 0, "open: %s",
              err);
        const uint64_t bins[1] = {15};
        gf_hist_record r = record(0, 5, 5, -1, bins);
        CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
        CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
        char *got = slurp(path);
        const char *want =
            i < 3 ? "{\"gpufilt_hist\":1,\"bins\":1,\"lo\":-0.5,\"hi\":0.25,\"block_frames\":5,"
                    "\"rate\":44100,\"channels\":3,\"of\":\"input\",\"mix\":true}\n"
                    "{\"block\":0,\"first_frame\":0,\"frames\":5,\"channel\":\"mix\",\"below\":0,"
                    "\"above\":0,\"nan\":0,\"min\":-0.5,\"max\":0.5,\"rms\":0.25,\"bins\":[15]}\n"
                  : "# gpufilt_hist=1 bins=1 lo=-0.5 hi=0.25 block_frames=5 rate=44100 channels=3 "
                    "of=input mix=true\n"
                    "block,first_frame,frames,channel,below,above,nan,min,max,rms,bin0\n"
                    "0,0,5,mix,0,0,0,-0.5,0.5,0.25,15\n";
        CHECK(got && strcmp(got, want) == 0, "%s differs:\n%s", names[i], got ? got : "(none)");
        free(got);
    }
}

/* --- sizes: bins 1 .. 65536, mix and per channel, CSV + JSON + PNG --- */

static size_t count_char(const char *s, char c, const char **end_of_line)
{
    size_t n = 0;
    for (; *s && *s != '\n'; s++)
        n += *s == c;
    if (end_of_line)
        *end_of_line = *s ? s + 1 : s;
    return n;
}

/* blocks records of B bins each (per channel, or mixed) into CSV and PNG
 * together, and into JSON. Returns 0, or 1 when the files cannot be opened. */
static int sizes_write(const char *csv, const char *json, const char *png, size_t B, int mix,
                       int channels, size_t blocks)
{
    gf_hist_config hc = config(B, 100, mix);
    gf_hist_out *hc_out = NULL, *hj = NULL;
    char err[256] = "";
    int rc = gf_hist_out_open(&hc_out, csv, png, &hc, channels, 0, err, sizeof err);
    rc |= gf_hist_out_open(&hj, json, NULL, &hc, channels, 0, err, sizeof err);
    CHECK(rc == 0, "bins %zu mix %d: open: %s", B, mix, err);
    if (rc) {
        gf_hist_out_abort(&hc_out);
        gf_hist_out_abort(&hj);
        return 1;
    }
    uint64_t *bins = calloc(B, sizeof *bins);
    for (size_t b = 0; b < blocks; b++)
        for (int c = mix ? -1 : 0; c < (mix ? 0 : channels); c++) {
            for (size_t i = 0; i < B; i++)
                bins[i] = (i * 7 + b + (size_t)c) % 5 == 0 ? 100 + i % 3 : 0;
            gf_hist_record r = record(b, 100, 100, c, bins);
            r.above = b == 1;
            rc = gf_hist_out_write(hc_out, &r, err, sizeof err);
            rc |= gf_hist_out_write(hj, &r, err, sizeof err);
            CHECK(rc == 0, "write: %s", err);
        }
    free(bins);
    rc = gf_hist_out_commit(&hc_out, err, sizeof err);
    rc |= gf_hist_out_commit(&hj, err, sizeof err);
    CHECK(rc == 0, "bins %zu mix %d: commit: %s", B, mix, err);
    return 0;
}

/* CSV: a comment, the header, one line per record, 10 + B fields. */
static void sizes_check_csv(const char *csv, size_t B, int mix, size_t records)
{
    char *text = slurp(csv);
    const char *p = text ? text : "";
    size_t lines = 0;
    int ok = p[0] == '#';
    count_char(p, ',', &p);
    while (*p) {
        const size_t commas = count_char(p, ',', &p);
        ok &= commas == 9 + B;
        lines++;
    }
    CHECK(ok && lines == 1 + records, "bins %zu mix %d: CSV has %zu lines of the wrong shape", B,
          mix, lines);
    char last_field[32];
    snprintf(last_field, sizeof last_field, ",bin%zu\n", B - 1);
    CHECK(text && strstr(text, last_field), "bins %zu: no %s column", B, last_field);
    free(text);
}

/* JSON lines: one record a line. */
static void sizes_check_json(const char *json, size_t B, int mix, size_t records)
{
    char *text = slurp(json);
    const char *p = text ? text : "";
    size_t lines = 0;
    while (*p) {
        const char *start = p;
        count_char(p, ',', &p);
        lines += strncmp(start, "{\"block\":", 9) == 0;
    }
    CHECK(lines == records, "bins %zu mix %d: JSON has %zu records", B, mix, lines);
    free(text);
}

/* The PNG's size by the layout rule (rows: the rule worked out by hand). */
static void sizes_check_png(const char *png, size_t B, int mix, int panels, size_t blocks,
                            unsigned rows_by_hand)
{
    unsigned w = 0, hgt = 0;
    CHECK(png_dims(png, &w, &hgt) == 0, "bins %zu: no PNG", B);
    const unsigned rows = map_rows(B, panels);
    CHECK(rows == rows_by_hand, "rule vs table: %u %u", rows, rows_by_hand);
    const unsigned want_w = WIDTH_EXTRA + map_width(blocks),
                   want_h = HEADER_H + (unsigned)panels * (rows + PANEL_EXTRA) + FOOTER_H;
    CHECK(w == want_w && hgt == want_h, "bins %zu mix %d: PNG %ux%u, expected %ux%u", B, mix, w,
          hgt, want_w, want_h);
}

static void test_sizes(void)
{
    static const struct {
        size_t bins;
        unsigned rows; /* pixel rows of a panel's map, by hand from the rule */
    } cases[] = {{1, 256}, {3, 255}, {4, 256}, {256, 256}, {513, 257}, {4096, 512}, {65536, 512}};
    const size_t blocks = 5;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int mix = 0; mix <= 1; mix++) {
            const size_t B = cases[ci].bins;
            const int channels = 2, panels = mix ? 1 : channels;
            const char *d = fresh_dir("sizes");
            char csv[4096], json[4096], png[4096];
            snprintf(csv, sizeof csv, "%s", path_in(d, "h.csv"));
            snprintf(json, sizeof json, "%s", path_in(d, "h.json"));
            snprintf(png, sizeof png, "%s", path_in(d, "h.png"));
            if (sizes_write(csv, json, png, B, mix, channels, blocks))
                continue;
            sizes_check_csv(csv, B, mix, blocks * (size_t)panels);
            sizes_check_json(json, B, mix, blocks * (size_t)panels);
            sizes_check_png(png, B, mix, panels, blocks, cases[ci].rows);
            CHECK(dir_count(d, NULL, 0) == 3, "bins %zu: stray files", B);
        }
}

/* --- PNG pixels --- */
/* (test_png_pixels, 85 lines: one picture and the pixel assertions on it,
 * read in the order the picture is drawn.) */

static void test_png_pixels(void)
{
    const char *d = fresh_dir("pixels");
    const char *path = path_in(d, "h.png");
    const size_t B = 16, blocks = 8;
    const int channels = 2;
    gf_hist_config hc = config(B, 480, 0);
    gf_hist_out *h = NULL;
    char err[256] = "";
    CHECK(gf_hist_out_open(&h, NULL, path, &hc, channels, 48000, err, sizeof err) == 0, "open: %s",
          err);
    if (!h)
        return;
    uint64_t bins[16];
    for (size_t b = 0; b < blocks; b++)
        for (int c = 0; c < channels; c++) {
            memset(bins, 0, sizeof bins);
            bins[(b + (size_t)c) % B] = 100;
            gf_hist_record r = record(b, 480, 480, c, bins);
            r.above = c == 0 && (b == 1 || b == 5) ? 3 : 0;
            r.below = c == 1 && b == 3 ? 1 : 0;
            r.nan = c == 0 && b == 6 ? 2 : 0;
            CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
        }
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
    image im;
    CHECK(png_load(path, &im) == 0, "PNG does not decode");
    if (!im.px)
        return;
    const unsigned rows = map_rows(B, channels), k = rows / (unsigned)B,
                   wcol = map_width(blocks) / (unsigned)blocks;
    CHECK(rows == 256 && k == 16 && wcol == 64, "layout rule: rows %u k %u wcol %u", rows, k, wcol);
    CHECK(im.w == WIDTH_EXTRA + 512 && im.h == HEADER_H + 2 * (rows + PANEL_EXTRA) + FOOTER_H,
          "size %ux%u", im.w, im.h);
    for (int c = 0; c < channels; c++) {
        const unsigned top = HEADER_H + (unsigned)c * (rows + PANEL_EXTRA);
        const unsigned above_y = top + ABOVE_Y + STRIP_H / 2, below_y = top + MAP_Y + rows + 1 + 3,
                       nan_y = below_y + STRIP_H + 1;
        for (size_t b = 0; b < blocks; b++) {
            const unsigned x = LEFT + (unsigned)b * wcol + wcol / 2;
            const int above = c == 0 && (b == 1 || b == 5), below = c == 1 && b == 3,
                      nan = c == 0 && b == 6;
            CHECK(is(pixel(&im, x, above_y), above ? RED : GREY),
                  "channel %d block %zu: above mark %s", c, b, above ? "missing" : "unexpected");
            CHECK(is(pixel(&im, x, below_y), below ? RED : GREY),
                  "channel %d block %zu: below mark %s", c, b, below ? "missing" : "unexpected");
            CHECK(is(pixel(&im, x, nan_y), nan ? MAGENTA : GREY),
                  "channel %d block %zu: nan mark %s", c, b, nan ? "missing" : "unexpected");
            /* The one full bin is the top colour; the others the bottom one. */
            const size_t full = (b + (size_t)c) % B;
            for (size_t bin = 0; bin < B; bin++) {
                const unsigned y = top + MAP_Y + (unsigned)(B - 1 - bin) * k + k / 2;
                CHECK(is(pixel(&im, x, y), bin == full ? V_HIGH : V_LOW),
                      "channel %d block %zu bin %zu: wrong colour", c, b, bin);
            }
        }
    }
    /* Each panel is labelled with its channel numbered from 1, as every
     * message numbers channels: "CHANNEL 1" in black at (LEFT, 2) of its
     * band, exactly the glyphs of the picture's font. */
    for (int c = 0; c < channels; c++) {
        char label[32];
        snprintf(label, sizeof label, "channel %d", c + 1);
        const int w = gf_canvas_text_width(label) + GF_CANVAS_ADVANCE, hgt = 7;
        uint8_t want[128 * 7 * 3] = {0};
        gf_canvas cv = {want, w, hgt};
        gf_canvas_fill(&cv, 0, 0, w, hgt, (gf_rgb){255, 255, 255});
        gf_canvas_text(&cv, 0, 0, label, (gf_rgb){0, 0, 0});
        const unsigned top = HEADER_H + (unsigned)c * (rows + PANEL_EXTRA) + 2;
        int differ = 0;
        for (int y = 0; y < hgt; y++)
            for (int x = 0; x < w; x++) {
                const int ink = want[((size_t)y * (size_t)w + (size_t)x) * 3] == 0;
                const int got = is(pixel(&im, LEFT + (unsigned)x, top + (unsigned)y),
                                   (const unsigned char[3]){0, 0, 0});
                differ += ink != got;
            }
        CHECK(differ == 0, "panel %d is not labelled '%s' (%d pixels differ)", c, label, differ);
    }
    /* Text is drawn in the margins (the labels are black). */
    size_t black = 0;
    for (unsigned y = 0; y < im.h; y++)
        for (unsigned x = 0; x < LEFT; x++)
            black += is(pixel(&im, x, y), (const unsigned char[3]){0, 0, 0});
    CHECK(black > 100, "no labels in the left margin");
    free(im.px);
}

/* --- --verify of the records (src/cli/verify.c) --- */

/* The first record that differs from the reference's is named as messages
 * name channels, from 1 (the block as the files number it). */
static void test_verify_first(void)
{
    uint64_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
    gf_hist_verify v;
    gf_hist_verify_init(&v, 4);
    gf_hist_record r = record(3, 480, 480, 0, a);
    CHECK(gf_hist_verify_feed(&v, 0, &r) == 0 && gf_hist_verify_feed(&v, 1, &r) == 0,
          "verify: feed");
    r.channel = 1;
    CHECK(gf_hist_verify_feed(&v, 0, &r) == 0, "verify: feed");
    r.bins = b;
    CHECK(gf_hist_verify_feed(&v, 1, &r) == 0, "verify: feed");
    CHECK(v.compared == 2 && v.differ == 1 && strcmp(v.first, "block 3, channel 2") == 0,
          "verify: %llu compared, %llu differ, first '%s'", (unsigned long long)v.compared,
          (unsigned long long)v.differ, v.first);
    gf_hist_verify_free(&v);
    gf_hist_verify_init(&v, 4);
    r = record(0, 480, 480, -1, a);
    CHECK(gf_hist_verify_feed(&v, 1, &r) == 0, "verify: feed");
    r.bins = b;
    CHECK(gf_hist_verify_feed(&v, 0, &r) == 0, "verify: feed");
    CHECK(v.differ == 1 && strcmp(v.first, "block 0, all channels (mix)") == 0,
          "verify, mix: first '%s'", v.first);
    gf_hist_verify_free(&v);
}

/* --- merging columns, bounded memory --- */

static void test_merging(void)
{
    const char *d = fresh_dir("merge");
    const char *path = path_in(d, "h.png");
    const size_t B = 256;
    gf_hist_config hc = config(B, 1024, 1);
    gf_hist_out *h = NULL;
    char err[256] = "";
    CHECK(gf_hist_out_open(&h, NULL, path, &hc, 1, 48000, err, sizeof err) == 0, "open: %s", err);
    if (!h)
        return;
    uint64_t bins[256] = {0};
    size_t peak = 0;
    const size_t total = 110000, bound = (size_t)4096 * (B * sizeof(float) + 1);
    for (size_t b = 0; b < total; b++) {
        bins[b % B] = 1;
        gf_hist_record r = record(b, 1024, 1024, -1, bins);
        r.above = b == 7777;
        if (gf_hist_out_write(h, &r, err, sizeof err) != 0) {
            CHECK(0, "write block %zu: %s", b, err);
            break;
        }
        bins[b % B] = 0;
        const size_t mem = gf_hist_out_png_memory(h);
        peak = mem > peak ? mem : peak;
        if (b == 4095)
            CHECK(mem <= bound, "memory %zu after 4096 blocks", mem);
    }
    CHECK(peak <= bound && peak <= ((size_t)32 << 20), "memory grew to %zu (bound %zu)", peak,
          bound);
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
    /* 110000 blocks over at most 4096 columns: 32 blocks per column. */
    const unsigned cols = (unsigned)((total + 31) / 32);
    image im;
    CHECK(png_load(path, &im) == 0, "merged PNG does not decode");
    if (!im.px)
        return;
    CHECK(im.w == WIDTH_EXTRA + cols && im.h == HEADER_H + 256 + PANEL_EXTRA + FOOTER_H,
          "merged size %ux%u, expected %ux%u", im.w, im.h, WIDTH_EXTRA + cols,
          HEADER_H + 256 + PANEL_EXTRA + FOOTER_H);
    const unsigned above_y = HEADER_H + ABOVE_Y + 3;
    for (unsigned col = 0; col < cols; col++) {
        const int want = col == 7777 / 32;
        if (is(pixel(&im, LEFT + col, above_y), RED) != want) {
            CHECK(0, "merged column %u: clipping mark %s", col, want ? "missing" : "unexpected");
            break;
        }
    }
    free(im.px);

    /* Many channels: rows and columns shrink to keep the bound. */
    d = fresh_dir("merge-wide");
    path = path_in(d, "h.png");
    hc = config(256, 64, 0);
    CHECK(gf_hist_out_open(&h, NULL, path, &hc, GF_MAX_CHANNELS, 0, err, sizeof err) == 0,
          "open: %s", err);
    if (!h)
        return;
    peak = 0;
    for (size_t b = 0; b < 600 && h; b++)
        for (int c = 0; c < GF_MAX_CHANNELS; c++) {
            bins[(b + (size_t)c) % B] = 1;
            gf_hist_record r = record(b, 64, 64, c, bins);
            bins[(b + (size_t)c) % B] = 0;
            if (gf_hist_out_write(h, &r, err, sizeof err) != 0) {
                CHECK(0, "write: %s", err);
                gf_hist_out_abort(&h);
                break;
            }
        }
    peak = gf_hist_out_png_memory(h);
    CHECK(peak <= ((size_t)32 << 20), "1024 channels: memory %zu", peak);
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
    unsigned w = 0, hgt = 0;
    CHECK(png_dims(path, &w, &hgt) == 0, "1024 channels: no PNG");
    /* 16 rows per panel; a cap of 256 columns: 600 blocks -> 4 per column. */
    CHECK(w == WIDTH_EXTRA + map_width(150) &&
              hgt == HEADER_H + GF_MAX_CHANNELS * (16 + PANEL_EXTRA) + FOOTER_H,
          "1024 channels: PNG %ux%u", w, hgt);
}

/* --- errors --- */

/* Opens that fail on the file system: one-line messages, no handle, no
 * temporary left behind. */
static void errors_paths(const char *d, const gf_hist_config *hc)
{
    gf_hist_out *h = (gf_hist_out *)&h; /* must come back NULL */
    char err[4096] = "", want[4096], path[1024], png[1024];

    snprintf(path, sizeof path, "%s/nodir/h.csv", d);
    int rc = gf_hist_out_open(&h, path, NULL, hc, 1, 0, err, sizeof err);
    snprintf(want, sizeof want,
             "cannot create histogram file '%s': directory '%s/nodir' does not exist", path, d);
    CHECK(rc == GF_EXIT_OUTPUT && !h && strcmp(err, want) == 0, "missing dir: %d '%s'", rc, err);

    /* The CSV's temporary is removed when the PNG cannot be created. */
    snprintf(path, sizeof path, "%s/h.csv", d);
    snprintf(png, sizeof png, "%s/nodir/h.png", d);
    rc = gf_hist_out_open(&h, path, png, hc, 1, 0, err, sizeof err);
    snprintf(want, sizeof want,
             "cannot create histogram image '%s': directory '%s/nodir' does not exist", png, d);
    CHECK(rc == GF_EXIT_OUTPUT && !h && strcmp(err, want) == 0, "missing png dir: %d '%s'", rc,
          err);
    CHECK(dir_count(d, NULL, 0) == 0, "a temporary was left behind");

    snprintf(path, sizeof path, "%s/adir", d);
    mkdir(path, 0777);
    rc = gf_hist_out_open(&h, NULL, path, hc, 1, 0, err, sizeof err);
    snprintf(want, sizeof want, "histogram image '%s' is a directory", path);
    CHECK(rc == GF_EXIT_OUTPUT && !h && strcmp(err, want) == 0, "directory: %d '%s'", rc, err);
    rmdir(path);
}

/* A histogram file in a directory the user may not write: refused with
 * EACCES, nothing left behind. Meaningful only when not root (root may
 * write anywhere): see read_only_test. */
static void errors_read_only(const char *d, const gf_hist_config *hc)
{
    gf_hist_out *h = NULL;
    char err[4096] = "", want[4096], path[1024];
    snprintf(path, sizeof path, "%s/ro", d);
    CHECK(mkdir(path, 0555) == 0, "mkdir %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/ro/h.json", d);
    const int rc = gf_hist_out_open(&h, path, NULL, hc, 1, 0, err, sizeof err);
    snprintf(want, sizeof want, "cannot create histogram file '%s': %s", path, strerror(EACCES));
    CHECK(rc == GF_EXIT_OUTPUT && !h && strcmp(err, want) == 0, "read-only dir: %d '%s'", rc, err);
    snprintf(path, sizeof path, "%s/ro", d);
    CHECK(dir_count(path, NULL, 0) == 0, "read-only dir not empty");
    rmdir(path);
}

/* Opens refused for their arguments; no paths at all is a no-op. */
static void errors_arguments(const char *d, const gf_hist_config *hc)
{
    gf_hist_out *h = NULL;
    char err[4096] = "", want[4096], path[1024];
    int rc = gf_hist_out_open(&h, "-", NULL, hc, 1, 0, err, sizeof err);
    CHECK(rc == GF_EXIT_USAGE && !h &&
              strcmp(err, "--hist: give a file name ('-' is not one)") == 0,
          "'-': %d '%s'", rc, err);
    snprintf(path, sizeof path, "%s/same", d);
    rc = gf_hist_out_open(&h, path, path, hc, 1, 0, err, sizeof err);
    snprintf(want, sizeof want, "--hist and --hist-png name the same file '%s'", path);
    CHECK(rc == GF_EXIT_USAGE && !h && strcmp(err, want) == 0, "same file: %d '%s'", rc, err);
    gf_hist_config bad = config(8, 10, 0);
    bad.lo = 2;
    rc = gf_hist_out_open(&h, path, NULL, &bad, 1, 0, err, sizeof err);
    CHECK(rc == GF_EXIT_INTERNAL && !h, "lo > hi accepted");
    CHECK(gf_hist_out_open(&h, NULL, NULL, hc, 1, 0, err, sizeof err) == 0 && !h,
          "no paths: not a no-op");
    CHECK(dir_count(d, NULL, 0) == 0, "failed opens left files behind");
}

/* d/h.csv and d/h.png (their paths into path and png, n bytes each) opened
 * for two channels. */
static gf_hist_out *open_csv_png(const char *d, const gf_hist_config *hc, char *path, char *png,
                                 size_t n)
{
    gf_hist_out *h = NULL;
    char err[4096] = "";
    snprintf(path, n, "%s/h.csv", d);
    snprintf(png, n, "%s/h.png", d);
    CHECK(gf_hist_out_open(&h, path, png, hc, 2, 0, err, sizeof err) == 0, "open: %s", err);
    return h;
}

/* Records that break the order or the config; abort leaves nothing, abort
 * after commit and on NULL are no-ops. */
static void errors_records(const char *d, const gf_hist_config *hc)
{
    char err[4096] = "", path[1024], png[1024];
    gf_hist_out *h = open_csv_png(d, hc, path, png, sizeof path);
    uint64_t bins[8] = {1};
    gf_hist_record r = record(0, 10, 10, 0, bins);
    CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
    int rc = gf_hist_out_write(h, &r, err, sizeof err);
    CHECK(rc == GF_EXIT_INTERNAL &&
              strcmp(err, "histogram record (block 0, channel 1) is out of order") == 0,
          "repeated record: %d '%s'", rc, err);
    r.channel = 2;
    rc = gf_hist_out_write(h, &r, err, sizeof err);
    CHECK(rc == GF_EXIT_INTERNAL &&
              strcmp(err, "histogram record (block 0, channel 3) has no such channel") == 0,
          "bad channel: %d '%s'", rc, err);
    r.channel = -1;
    rc = gf_hist_out_write(h, &r, err, sizeof err);
    CHECK(rc == GF_EXIT_INTERNAL &&
              strcmp(err, "histogram record (block 0, all channels) has no such channel") == 0,
          "mix record accepted without mix: %d '%s'", rc, err);

    CHECK(dir_count(d, NULL, 0) == 2, "two temporaries while open");
    gf_hist_out_abort(&h);
    CHECK(!h && dir_count(d, NULL, 0) == 0, "abort left files behind");
    gf_hist_out_abort(&h);
    gf_hist_out_abort(NULL);
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit(NULL) is not a no-op");
}

/* An empty stream commits a header-only CSV and a "no blocks" picture. */
static void errors_empty_stream(const char *d, const gf_hist_config *hc)
{
    char err[4096] = "", path[1024], png[1024];
    gf_hist_out *h = open_csv_png(d, hc, path, png, sizeof path);
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
    gf_hist_out_abort(&h);
    CHECK(exists(path) && exists(png) && dir_count(d, NULL, 0) == 2, "empty stream: files");
    char *text = slurp(path);
    const char *nl = text ? strchr(text, '\n') : NULL;
    CHECK(nl && strchr(nl + 1, '\n') && strchr(nl + 1, '\n')[1] == '\0',
          "empty stream: CSV is not two lines");
    free(text);
    image im;
    CHECK(png_load(png, &im) == 0 && im.w == WIDTH_EXTRA + 512 &&
              im.h == HEADER_H + 2 * (256 + PANEL_EXTRA) + FOOTER_H,
          "empty stream: PNG %ux%u", im.w, im.h);
    free(im.px);
}

static void test_errors(void)
{
    const char *d = fresh_dir("errors");
    const gf_hist_config hc = config(8, 10, 0);
    errors_paths(d, &hc);
    errors_arguments(d, &hc);
    errors_records(d, &hc);
    errors_empty_stream(d, &hc);
}

/* Write failures (a file-size limit stands in for a full disk): a one-line
 * message naming the file, and nothing left behind. */
static void test_write_failures(void)
{
    struct rlimit saved;
    if (getrlimit(RLIMIT_FSIZE, &saved) != 0)
        return;
    signal(SIGXFSZ, SIG_IGN);
    const char *d = fresh_dir("full");
    char path[1024], err[4096] = "", want[4096];
    snprintf(path, sizeof path, "%s/h.json", d);
    gf_hist_config hc = config(65536, 10, 1);
    gf_hist_out *h = NULL;
    CHECK(gf_hist_out_open(&h, path, NULL, &hc, 1, 0, err, sizeof err) == 0, "open: %s", err);
    uint64_t *bins = calloc(65536, sizeof *bins);
    struct rlimit lim = saved;
    lim.rlim_cur = 100000;
    setrlimit(RLIMIT_FSIZE, &lim);
    int rc = 0;
    for (uint64_t b = 0; b < 3 && h && bins && !rc; b++) {
        gf_hist_record r = record(b, 10, 10, -1, bins);
        rc = gf_hist_out_write(h, &r, err, sizeof err);
    }
    snprintf(want, sizeof want, "writing histogram file '%s': %s", path, strerror(EFBIG));
    CHECK(rc == GF_EXIT_OUTPUT && strcmp(err, want) == 0, "file too large: %d '%s'", rc, err);
    gf_hist_out_abort(&h);
    CHECK(dir_count(d, NULL, 0) == 0, "a failed write left files behind");

    /* The picture fails while libpng writes it, at commit. */
    setrlimit(RLIMIT_FSIZE, &saved);
    snprintf(path, sizeof path, "%s/h.png", d);
    hc = config(512, 10, 1);
    CHECK(gf_hist_out_open(&h, NULL, path, &hc, 1, 0, err, sizeof err) == 0, "open: %s", err);
    for (uint64_t b = 0; b < 2000 && h && bins; b++) {
        for (size_t i = 0; i < 512; i++)
            bins[i] = (b * 2654435761u + i * 40503u) % 1000;
        gf_hist_record r = record(b, 10, 10, -1, bins);
        CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
    }
    lim.rlim_cur = 20000;
    setrlimit(RLIMIT_FSIZE, &lim);
    rc = gf_hist_out_commit(&h, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &saved);
    snprintf(want, sizeof want, "writing histogram image '%s': %s", path, strerror(EFBIG));
    CHECK(rc == GF_EXIT_OUTPUT && !h && strncmp(err, want, strlen(want)) == 0,
          "picture too large: %d '%s'", rc, err);
    CHECK(dir_count(d, NULL, 0) == 0, "a failed picture left files behind");
    free(bins);
    signal(SIGXFSZ, SIG_DFL);
}

/* --- a picture to look at: two channels, a drifting distribution --- */

static void demo(const char *name, size_t B, size_t blocks, int mix, int rate)
{
    const char *path = path_in(work, name);
    const int channels = 2;
    gf_hist_config hc = config(B, (size_t)rate / 10, mix);
    gf_hist_out *h = NULL;
    char err[256] = "";
    CHECK(gf_hist_out_open(&h, NULL, path, &hc, channels, rate, err, sizeof err) == 0, "open: %s",
          err);
    uint64_t *bins = calloc(B, sizeof *bins);
    for (size_t b = 0; h && bins && b < blocks; b++)
        for (int c = mix ? -1 : 0; c < (mix ? 0 : channels); c++) {
            const double t = (double)b / (double)blocks;
            const double mean = 0.6 * sin(6.28 * t * (c == 1 ? 3 : 1.5)), sd = 0.05 + 0.3 * t;
            gf_hist_record r = record(b, hc.block_frames, hc.block_frames, c, bins);
            for (size_t i = 0; i < B; i++) {
                const double x = -1 + (i + 0.5) * 2.0 / (double)B, z = (x - mean) / sd;
                bins[i] = (uint64_t)(4800.0 * 2 / (double)B / sd * exp(-0.5 * z * z));
            }
            r.above = mean + 2 * sd > 1 ? 5 : 0;
            r.below = mean - 2 * sd < -1 ? 5 : 0;
            r.nan = b % 97 == 50 ? 1 : 0;
            CHECK(gf_hist_out_write(h, &r, err, sizeof err) == 0, "write: %s", err);
        }
    free(bins);
    CHECK(gf_hist_out_commit(&h, err, sizeof err) == 0, "commit: %s", err);
}

/* As an unprivileged user, in a directory of its own under the temporary
 * directory (the work directory may be out of its reach). */
static int read_only_as(const struct passwd *pw)
{
    const char *tmp = getenv("TMPDIR");
    char d[1024];
    snprintf(d, sizeof d, "%s/test_hist_out.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d) || chown(d, pw->pw_uid, pw->pw_gid) != 0) {
        fprintf(stderr, "test_hist_out: a directory for user %s: %s\n", pw->pw_name,
                strerror(errno));
        return 1;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0 ||
            setuid(0) == 0) {
            fprintf(stderr, "test_hist_out: cannot become user %s\n", pw->pw_name);
            _exit(3);
        }
        const gf_hist_config hc = config(8, 10, 0);
        errors_read_only(d, &hc);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        status = -1;
    char ro[1100];
    snprintf(ro, sizeof ro, "%s/ro", d);
    rmdir(ro);
    rmdir(d);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "test_hist_out: the read-only check as user %s failed\n", pw->pw_name);
        return 1;
    }
    printf("test_hist_out: read-only directory refused (as user %s)\n", pw->pw_name);
    return 0;
}

/* test_hist_out --read-only WORKDIR: errors_read_only as this user, or as
 * root as "nobody" (a forked child drops root); 77 (skipped) where root
 * cannot become an unprivileged user. */
static int read_only_test(void)
{
    if (geteuid() != 0) {
        const gf_hist_config hc = config(8, 10, 0);
        errors_read_only(fresh_dir("read-only"), &hc);
        return failures ? 1 : 0;
    }
    const struct passwd *pw = getpwnam("nobody");
    if (!pw || pw->pw_uid == 0) {
        printf("test_hist_out: SKIP: running as root and there is no user 'nobody' to check "
               "permissions as\n");
        return 77;
    }
    return read_only_as(pw);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--read-only") == 0) {
        work = argv[2];
        mkdir(work, 0777);
        return read_only_test();
    }
    if (argc != 2) {
        fprintf(stderr, "usage: test_hist_out [--read-only] WORKDIR\n");
        return 2;
    }
    work = argv[1];
    mkdir(work, 0777);
    test_exact("exact.csv", exact_csv);
    test_exact("exact.json", exact_json);
    test_streaming();
    test_mix_one_bin();
    test_sizes();
    test_png_pixels();
    test_verify_first();
    test_merging();
    test_errors();
    test_write_failures();
    demo("demo.png", 256, 600, 0, 48000);
    demo("demo-mix.png", 4096, 9000, 1, 44100);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
