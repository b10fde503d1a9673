#include "hist_out.h"

#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The picture's layout; docs/hist-output.md ("The picture") gives the same
 * numbers, and tests/hist/test_hist_out.c checks pixels against them. */
enum {
    ROWS_MAX = 512,     /* cell rows per panel, at most ... */
    ROWS_MIN = 256,     /* ... and (scaled up) at least, for few bins */
    ROWS_TOTAL = 8192,  /* cell rows over all panels, before ROWS_FLOOR */
    ROWS_FLOOR = 16,    /* cell rows per panel never fewer than this (bins allowing) */
    COLS_MAX = 4096,    /* columns at most; more merge pairwise */
    MAP_MIN_W = 512,    /* blocks are widened until the map is this wide */
    MARGIN = 8,         /* outer margin */
    LEFT = 72,          /* x of the map's first column */
    RIGHT = 8,          /* right of the map */
    HEADER_H = 24,      /* title band */
    PANEL_EXTRA = 44,   /* a panel's height beyond its map */
    FOOTER_H = 80,      /* axis, colour bar and legend band */
    PANEL_ABOVE_Y = 12, /* "above hi" strip, in the panel band */
    PANEL_MAP_Y = 20,   /* first map row, in the panel band */
    STRIP_H = 7,        /* height of each mark strip */
    GLYPH_ADVANCE = 6,  /* 5x7 glyphs, one column apart */
    LABEL_GAP = 4,      /* between a left-margin label and the map */
    COLOUR_BAR_W = 256, /* legend colour bar width */
    LINE_PER_BIN = 21,  /* ",18446744073709551615" */
    LINE_FIXED = 1024   /* bytes of a line besides its bins */
};

/* Column data is bounded by this many bytes (see gf_hist_out_png_memory). */
#define PNG_MEMORY_MAX ((size_t)32 << 20)

enum { MARK_ABOVE = 1, MARK_BELOW = 2, MARK_NAN = 4 };

/* One output under a temporary name: ".NAME.gpufilt-XXXXXX". */
typedef struct out_file {
    const char *what; /* "histogram file", "histogram image" */
    char *path, *tmp; /* tmp is NULL once renamed into place */
    FILE *f;
} out_file;

struct gf_hist_out {
    gf_hist_config hc;
    int channels, rate;

    /* --hist: CSV or JSON lines, one line built in `line` per record. */
    out_file csv;
    int json;
    char *line;

    /* --hist-png: counts per cell (a run of m bins, over a column of bpc
     * blocks), laid out [column][panel][row], row 0 = lo. */
    out_file png;
    int panels;
    size_t m, rows, k;   /* bins per row, rows per panel, pixel rows per row */
    size_t cap;          /* columns at most (even) */
    size_t ncols, alloc; /* columns in use and allocated */
    uint64_t bpc;        /* blocks per column */
    float *cells;
    uint8_t *marks; /* [column][panel] MARK_* */

    /* Stream position, for order checks and the picture's axis. */
    int have_block, last_channel;
    uint64_t last_block, end_frame;
};

/* --- temporary files --- */

static int file_create(out_file *o, const char *what, const char *path, char *err, size_t n)
{
    o->what = what;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, n, "%s '%s' is a directory", what, path);
        return GF_EXIT_OUTPUT;
    }
    const char *slash = strrchr(path, '/');
    const size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const size_t size = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp = malloc(size);
    if (!o->path || !o->tmp) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    snprintf(o->tmp, size, "%.*s.%s.gpufilt-XXXXXX", (int)dirlen, path, path + dirlen);
    const int fd = mkstemp(o->tmp);
    if (fd < 0) {
        const int e = errno;
        if (e == ENOENT)
            snprintf(err, n, "cannot create %s '%s': directory '%.*s' does not exist", what, path,
                     dirlen ? (int)dirlen - 1 : 1, dirlen ? path : ".");
        else
            snprintf(err, n, "cannot create %s '%s': %s", what, path, strerror(e));
        free(o->tmp);
        o->tmp = NULL;
        return GF_EXIT_OUTPUT;
    }
    /* mkstemp makes 0600; give the file the mode a plain create would. */
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        snprintf(err, n, "cannot create %s '%s': %s", what, path, strerror(errno));
        close(fd);
        return GF_EXIT_OUTPUT;
    }
    return 0;
}

static int file_fail(out_file *o, int e, char *err, size_t n)
{
    snprintf(err, n, "writing %s '%s': %s", o->what, o->path, strerror(e ? e : EIO));
    return GF_EXIT_OUTPUT;
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

static int file_close(out_file *o, char *err, size_t n)
{
    errno = 0;
    const int bad = fflush(o->f) != 0 || ferror(o->f);
    const int e = errno;
    const int closed = fclose(o->f);
    o->f = NULL;
    if (bad || closed != 0)
        return file_fail(o, bad ? e : errno, err, n);
    return 0;
}

static int file_rename(out_file *o, char *err, size_t n)
{
    if (rename(o->tmp, o->path) != 0) {
        snprintf(err, n, "cannot rename %s into '%s': %s", o->what, o->path, strerror(errno));
        return GF_EXIT_OUTPUT;
    }
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}

/* Close, remove what was not renamed into place, free. */
static void file_drop(out_file *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
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

/* --- text: CSV and JSON lines --- */

static char *put_str(char *p, const char *s)
{
    const size_t len = strlen(s);
    memcpy(p, s, len);
    return p + len;
}

static char *put_u64(char *p, uint64_t v)
{
    char buf[24];
    int i = (int)sizeof buf;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, buf + i, sizeof buf - (size_t)i);
    return p + (sizeof buf - (size_t)i);
}

/* A double that reads back exactly: the first of %.15g, %.16g, %.17g that
 * does (so 0.1 stays "0.1"). Non-finite: JSON null, or CSV nan/inf/-inf;
 * -0 is "-0.0" in JSON. */
static char *put_double(char *p, double x, int json)
{
    if (isnan(x))
        return put_str(p, json ? "null" : "nan");
    if (isinf(x))
        return put_str(p, json ? "null" : x < 0 ? "-inf" : "inf");
    if (x == 0 && signbit(x) && json)
        return put_str(p, "-0.0"); /* "-0" would read as the integer 0 in some parsers */
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return put_str(p, buf);
}

/* The first line of both formats: the parameters needed to read the rest. */
static char *put_meta(char *p, const gf_hist_out *h)
{
    const gf_hist_config *c = &h->hc;
    const char *of = c->of_input ? "input" : "output", *mix = c->mix ? "true" : "false";
    if (h->json) {
        p = put_str(p, "{\"gpufilt_hist\":1,\"bins\":");
        p = put_u64(p, c->bins);
        p = put_str(p, ",\"lo\":");
        p = put_double(p, c->lo, 1);
        p = put_str(p, ",\"hi\":");
        p = put_double(p, c->hi, 1);
        p = put_str(p, ",\"block_frames\":");
        p = put_u64(p, c->block_frames);
        p = put_str(p, ",\"rate\":");
        p = put_u64(p, (uint64_t)h->rate);
        p = put_str(p, ",\"channels\":");
        p = put_u64(p, (uint64_t)h->channels);
        p = put_str(p, ",\"of\":\"");
        p = put_str(p, of);
        p = put_str(p, "\",\"mix\":");
        p = put_str(p, mix);
        return put_str(p, "}\n");
    }
    p = put_str(p, "# gpufilt_hist=1 bins=");
    p = put_u64(p, c->bins);
    p = put_str(p, " lo=");
    p = put_double(p, c->lo, 0);
    p = put_str(p, " hi=");
    p = put_double(p, c->hi, 0);
    p = put_str(p, " block_frames=");
    p = put_u64(p, c->block_frames);
    p = put_str(p, " rate=");
    p = put_u64(p, (uint64_t)h->rate);
    p = put_str(p, " channels=");
    p = put_u64(p, (uint64_t)h->channels);
    p = put_str(p, " of=");
    p = put_str(p, of);
    p = put_str(p, " mix=");
    p = put_str(p, mix);
    p = put_str(p, "\nblock,first_frame,frames,channel,below,above,nan,min,max,rms");
    for (size_t i = 0; i < c->bins; i++) {
        p = put_str(p, ",bin");
        p = put_u64(p, i);
    }
    return put_str(p, "\n");
}

static char *put_record(char *p, const gf_hist_out *h, const gf_hist_record *r)
{
    const int json = h->json;
    p = put_str(p, json ? "{\"block\":" : "");
    p = put_u64(p, r->block);
    p = put_str(p, json ? ",\"first_frame\":" : ",");
    p = put_u64(p, r->first_frame);
    p = put_str(p, json ? ",\"frames\":" : ",");
    p = put_u64(p, r->frames);
    p = put_str(p, json ? ",\"channel\":" : ",");
    if (r->channel < 0)
        p = put_str(p, json ? "\"mix\"" : "mix");
    else
        p = put_u64(p, (uint64_t)r->channel);
    p = put_str(p, json ? ",\"below\":" : ",");
    p = put_u64(p, r->below);
    p = put_str(p, json ? ",\"above\":" : ",");
    p = put_u64(p, r->above);
    p = put_str(p, json ? ",\"nan\":" : ",");
    p = put_u64(p, r->nan);
    p = put_str(p, json ? ",\"min\":" : ",");
    p = put_double(p, r->min, json);
    p = put_str(p, json ? ",\"max\":" : ",");
    p = put_double(p, r->max, json);
    p = put_str(p, json ? ",\"rms\":" : ",");
    p = put_double(p, r->rms, json);
    p = put_str(p, json ? ",\"bins\":[" : ",");
    for (size_t i = 0; i < h->hc.bins; i++) {
        if (i)
            *p++ = ',';
        p = put_u64(p, r->bins[i]);
    }
    return put_str(p, json ? "]}\n" : "\n");
}

static int ends_with_ci(const char *s, const char *suffix)
{
    const size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

/* --- picture: accumulation --- */

static size_t stride(const gf_hist_out *h)
{
    return (size_t)h->panels * h->rows;
}

size_t gf_hist_out_png_memory(const gf_hist_out *h)
{
    if (!h)
        return 0;
    return h->alloc * (stride(h) * sizeof(float) + (size_t)h->panels);
}

/* Rows, bins per row and pixel rows per row for a panel; the column cap. */
static void png_plan(gf_hist_out *h)
{
    const size_t B = h->hc.bins, panels = (size_t)h->panels;
    size_t rmax = ROWS_TOTAL / panels;
    rmax = rmax > ROWS_MAX ? ROWS_MAX : rmax < ROWS_FLOOR ? ROWS_FLOOR : rmax;
    const size_t rmin = rmax < ROWS_MIN ? rmax : ROWS_MIN;
    if (B > rmax) {
        h->m = (B + rmax - 1) / rmax;
        h->rows = (B + h->m - 1) / h->m;
        h->k = 1;
    } else {
        h->m = 1;
        h->rows = B;
        h->k = B < rmin ? rmin / B : 1;
    }
    /* Largest power of two of columns that fits the memory bound. */
    const size_t per_col = panels * (h->rows * sizeof(float) + 1);
    size_t cap = 2;
    while (cap * 2 <= COLS_MAX && cap * 2 * per_col <= PNG_MEMORY_MAX)
        cap *= 2;
    h->cap = cap;
    h->bpc = 1;
}

/* Halve the time resolution: column i = columns 2i and 2i+1. */
static void png_merge(gf_hist_out *h)
{
    const size_t s = stride(h), P = (size_t)h->panels, half = (h->ncols + 1) / 2;
    for (size_t i = 0; i < half; i++) {
        float *d = h->cells + i * s;
        const float *a = h->cells + 2 * i * s;
        uint8_t *dm = h->marks + i * P;
        const uint8_t *am = h->marks + 2 * i * P;
        const int pair = 2 * i + 1 < h->ncols;
        for (size_t j = 0; j < s; j++)
            d[j] = a[j] + (pair ? a[s + j] : 0.0f);
        for (size_t j = 0; j < P; j++)
            dm[j] = (uint8_t)(am[j] | (pair ? am[P + j] : 0));
    }
    memset(h->cells + half * s, 0, (h->ncols - half) * s * sizeof(float));
    memset(h->marks + half * P, 0, (h->ncols - half) * P);
    h->ncols = half;
    h->bpc *= 2;
}

static int png_add(gf_hist_out *h, const gf_hist_record *r, char *err, size_t n)
{
    uint64_t col = r->block / h->bpc;
    while (col >= h->cap) {
        png_merge(h);
        col = r->block / h->bpc;
    }
    const size_t s = stride(h), P = (size_t)h->panels;
    if (col >= h->alloc) {
        size_t want = h->alloc ? h->alloc : 16;
        while (want <= col)
            want *= 2;
        if (want > h->cap)
            want = h->cap;
        float *cells = realloc(h->cells, want * s * sizeof(float));
        if (cells)
            h->cells = cells;
        uint8_t *marks = cells ? realloc(h->marks, want * P) : NULL;
        if (!cells || !marks) {
            snprintf(err, n, "out of memory");
            return GF_EXIT_INTERNAL;
        }
        h->marks = marks;
        memset(h->cells + h->alloc * s, 0, (want - h->alloc) * s * sizeof(float));
        memset(h->marks + h->alloc * P, 0, (want - h->alloc) * P);
        h->alloc = want;
    }
    if (col >= h->ncols)
        h->ncols = (size_t)col + 1;
    const size_t panel = r->channel < 0 ? 0 : (size_t)r->channel;
    float *cell = h->cells + (size_t)col * s + panel * h->rows;
    for (size_t i = 0, row = 0; i < h->hc.bins; row++) {
        const size_t end = i + h->m < h->hc.bins ? i + h->m : h->hc.bins;
        double sum = 0;
        for (; i < end; i++)
            sum += (double)r->bins[i];
        cell[row] += (float)sum;
    }
    h->marks[(size_t)col * P + panel] |=
        (uint8_t)((r->above ? MARK_ABOVE : 0) | (r->below ? MARK_BELOW : 0) |
                  (r->nan ? MARK_NAN : 0));
    return 0;
}

/* --- picture: drawing --- */

typedef struct rgb {
    uint8_t r, g, b;
} rgb;

/* The background is white (see clear_band). */
static const rgb FG = {0, 0, 0}, STRIP_BG = {220, 220, 220}, CLIP = {255, 0, 0},
                 NAN_MARK = {255, 0, 255};

/* viridis (matplotlib), 10 evenly spaced stops, interpolated linearly. */
static rgb viridis(double t)
{
    static const rgb stops[10] = {{68, 1, 84},    {72, 40, 120},  {62, 74, 137},  {49, 104, 142},
                                  {38, 130, 142}, {31, 158, 137}, {53, 183, 121}, {109, 205, 89},
                                  {180, 222, 44}, {253, 231, 37}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const double x = t * 9;
    const int i = x >= 9 ? 8 : (int)x;
    const double f = x - i;
    const rgb a = stops[i], b = stops[i + 1];
    return (rgb){(uint8_t)lround(a.r + (b.r - a.r) * f), (uint8_t)lround(a.g + (b.g - a.g) * f),
                 (uint8_t)lround(a.b + (b.b - a.b) * f)};
}

/* A 5x7 font: digits, capitals (lower case is drawn as capitals) and the
 * punctuation the labels use. */
static const struct glyph {
    char c;
    const char *rows[7];
} font[] = {
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'D', {"####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
    {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
    {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
    {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
    {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
    {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
    {'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
    {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
    {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
    {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
    {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
    {'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."}},
    {'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."}},
    {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
    {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
};

/* One horizontal band of the picture (rows [0, h) of it), RGB. */
typedef struct canvas {
    uint8_t *px;
    int w, h;
} canvas;

static void fill(canvas *c, int x, int y, int w, int hgt, rgb col)
{
    const int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    const int x1 = x + w > c->w ? c->w : x + w, y1 = y + hgt > c->h ? c->h : y + hgt;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++) {
            uint8_t *p = c->px + ((size_t)yy * (size_t)c->w + (size_t)xx) * 3;
            p[0] = col.r;
            p[1] = col.g;
            p[2] = col.b;
        }
}

static int text_width(const char *s)
{
    const int len = (int)strlen(s);
    return len ? len * GLYPH_ADVANCE - 1 : 0;
}

/* Text with its top-left corner at (x, y). */
static void text(canvas *c, int x, int y, const char *s, rgb col)
{
    for (; *s; s++, x += GLYPH_ADVANCE) {
        const char ch = (char)toupper((unsigned char)*s);
        const struct glyph *g = NULL;
        for (size_t i = 0; i < sizeof font / sizeof font[0] && !g; i++)
            if (font[i].c == ch)
                g = &font[i];
        if (!g)
            continue; /* space */
        for (int gy = 0; gy < 7; gy++)
            for (int gx = 0; gx < 5; gx++)
                if (g->rows[gy][gx] == '#')
                    fill(c, x + gx, y + gy, 1, 1, col);
    }
}

static void text_right(canvas *c, int right, int y, const char *s, rgb col)
{
    text(c, right - text_width(s), y, s, col);
}

static void text_centre(canvas *c, int centre, int y, const char *s, rgb col)
{
    text(c, centre - text_width(s) / 2, y, s, col);
}

/* Seconds as "12.5 s", "1:02.5" or "1:02:03". */
static void format_time(char *buf, size_t n, double s)
{
    if (s < 60) {
        snprintf(buf, n, "%.4g s", s);
    } else if (s < 3600) {
        const long long tenths = llround(s * 10);
        snprintf(buf, n, "%lld:%02lld.%lld", tenths / 600, tenths / 10 % 60, tenths % 10);
    } else {
        const long long secs = (long long)s;
        snprintf(buf, n, "%lld:%02lld:%02lld", secs / 3600, secs / 60 % 60, secs % 60);
    }
}

typedef struct layout {
    int wcol, map_w, map_h, width, height, panel_h;
    double lmax; /* log1p of the largest cell */
} layout;

static layout png_layout(const gf_hist_out *h)
{
    layout L;
    L.wcol = h->ncols == 0           ? 0
             : h->ncols >= MAP_MIN_W ? 1
                                     : (int)((MAP_MIN_W + h->ncols - 1) / h->ncols);
    L.map_w = h->ncols ? (int)h->ncols * L.wcol : MAP_MIN_W;
    L.map_h = (int)(h->rows * h->k);
    L.panel_h = L.map_h + PANEL_EXTRA;
    L.width = LEFT + L.map_w + RIGHT;
    L.height = HEADER_H + h->panels * L.panel_h + FOOTER_H;
    float top = 0;
    for (size_t i = 0; i < h->ncols * stride(h); i++)
        top = h->cells[i] > top ? h->cells[i] : top;
    L.lmax = log1p((double)top);
    return L;
}

static void draw_header(const gf_hist_out *h, canvas *c)
{
    char buf[256];
    snprintf(buf, sizeof buf, "Histogram of %s, %zu bins from %.6g to %.6g, %zu frames per block",
             h->hc.of_input ? "input" : "output", h->hc.bins, h->hc.lo, h->hc.hi,
             h->hc.block_frames);
    text(c, MARGIN, MARGIN, buf, FG);
}

static void draw_panel(const gf_hist_out *h, const layout *L, int panel, canvas *c)
{
    char buf[64];
    const int map_y = PANEL_MAP_Y, below_y = map_y + L->map_h + 1, nan_y = below_y + STRIP_H + 1;
    const int lx = LEFT - LABEL_GAP;
    if (h->hc.mix)
        snprintf(buf, sizeof buf, "all channels (mix)");
    else
        snprintf(buf, sizeof buf, "channel %d", panel);
    text(c, LEFT, 2, buf, FG);
    text_right(c, lx, PANEL_ABOVE_Y, "above", FG);
    text_right(c, lx, below_y, "below", FG);
    text_right(c, lx, nan_y, "nan", FG);
    snprintf(buf, sizeof buf, "%.4g", h->hc.hi);
    text_right(c, lx - 2, map_y, buf, FG);
    snprintf(buf, sizeof buf, "%.4g", h->hc.lo);
    text_right(c, lx - 2, map_y + L->map_h - 7, buf, FG);
    if (L->map_h >= 64) { /* the middle amplitude, with ticks at the three labels */
        snprintf(buf, sizeof buf, "%.4g", h->hc.lo + (h->hc.hi - h->hc.lo) / 2);
        text_right(c, lx - 2, map_y + L->map_h / 2 - 3, buf, FG);
        fill(c, LEFT - 3, map_y + L->map_h / 2, 3, 1, FG);
    }
    fill(c, LEFT - 3, map_y, 3, 1, FG);
    fill(c, LEFT - 3, map_y + L->map_h - 1, 3, 1, FG);

    fill(c, LEFT, PANEL_ABOVE_Y, L->map_w, STRIP_H, STRIP_BG);
    fill(c, LEFT, below_y, L->map_w, STRIP_H, STRIP_BG);
    fill(c, LEFT, nan_y, L->map_w, STRIP_H, STRIP_BG);
    if (h->ncols == 0) {
        fill(c, LEFT, map_y, L->map_w, L->map_h, STRIP_BG);
        text_centre(c, LEFT + L->map_w / 2, map_y + L->map_h / 2 - 3, "no blocks", FG);
        return;
    }
    const size_t s = stride(h), P = (size_t)h->panels;
    for (size_t col = 0; col < h->ncols; col++) {
        const int x = LEFT + (int)col * L->wcol;
        const float *cell = h->cells + col * s + (size_t)panel * h->rows;
        for (size_t row = 0; row < h->rows; row++) {
            const double t = L->lmax > 0 ? log1p((double)cell[row]) / L->lmax : 0;
            const int y = map_y + (int)((h->rows - 1 - row) * h->k);
            fill(c, x, y, L->wcol, (int)h->k, viridis(t));
        }
        const uint8_t mk = h->marks[col * P + (size_t)panel];
        if (mk & MARK_ABOVE)
            fill(c, x, PANEL_ABOVE_Y, L->wcol, STRIP_H, CLIP);
        if (mk & MARK_BELOW)
            fill(c, x, below_y, L->wcol, STRIP_H, CLIP);
        if (mk & MARK_NAN)
            fill(c, x, nan_y, L->wcol, STRIP_H, NAN_MARK);
    }
}

static void draw_footer(const gf_hist_out *h, const layout *L, canvas *c)
{
    char buf[128];
    const int right = LEFT + L->map_w, centre = LEFT + L->map_w / 2;
    if (h->have_block) {
        text(c, LEFT, 2, "block 0", FG);
        snprintf(buf, sizeof buf, "block %llu", (unsigned long long)h->last_block);
        text_right(c, right, 2, buf, FG);
        if (h->bpc > 1)
            snprintf(buf, sizeof buf, "blocks (%llu per column)", (unsigned long long)h->bpc);
        else
            snprintf(buf, sizeof buf, "blocks");
        text_centre(c, centre, 2, buf, FG);
        if (h->rate > 0) {
            text(c, LEFT, 12, "0 s", FG);
            format_time(buf, sizeof buf, (double)h->end_frame / h->rate);
            text_right(c, right, 12, buf, FG);
            snprintf(buf, sizeof buf, "time at %d Hz", h->rate);
            text_centre(c, centre, 12, buf, FG);
        }
    }

    /* Colour bar: colour = log(1 + count) / log(1 + largest count). */
    text_right(c, LEFT - LABEL_GAP, 28, "count", FG);
    for (int i = 0; i < COLOUR_BAR_W; i++)
        fill(c, LEFT + i, 28, 1, STRIP_H, viridis(i / (double)(COLOUR_BAR_W - 1)));
    text(c, LEFT, 38, "0", FG);
    const double top = expm1(L->lmax);
    if (top < 1e9)
        snprintf(buf, sizeof buf, "%.0f", top);
    else
        snprintf(buf, sizeof buf, "%.3g", top);
    text_right(c, LEFT + COLOUR_BAR_W, 38, buf, FG);
    text_centre(c, LEFT + COLOUR_BAR_W / 2, 38, "log scale", FG);

    /* Marks. */
    static const char clip[] = "clipping: above hi / below lo";
    fill(c, LEFT, 52, STRIP_H, STRIP_H, CLIP);
    text(c, LEFT + STRIP_H + 4, 52, clip, FG);
    const int nx = LEFT + STRIP_H + 4 + text_width(clip) + 12;
    fill(c, nx, 52, STRIP_H, STRIP_H, NAN_MARK);
    text(c, nx + STRIP_H + 4, 52, "nan", FG);

    /* Bins per row. */
    const double width = (h->hc.hi - h->hc.lo) / (double)h->hc.bins;
    if (h->m > 1) {
        const size_t last = h->hc.bins - (h->rows - 1) * h->m;
        int len = snprintf(buf, sizeof buf, "bin width %.4g, %zu bins per row", width, h->m);
        if (last != h->m && len > 0 && (size_t)len < sizeof buf)
            snprintf(buf + len, sizeof buf - (size_t)len, " (top row %zu)", last);
    } else {
        snprintf(buf, sizeof buf, "bin width %.4g", width);
    }
    text(c, LEFT, 64, buf, FG);
}

/* libpng reports errors by longjmp; everything it touches lives here, not
 * in locals of the function that calls setjmp. */
typedef struct png_job {
    gf_hist_out *h;
    layout L;
    png_structp png;
    png_infop info;
    canvas band;
    char msg[200];
} png_job;

static void png_on_error(png_structp png, png_const_charp msg)
{
    png_job *j = png_get_error_ptr(png);
    snprintf(j->msg, sizeof j->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void emit_band(png_job *j, int rows)
{
    for (int y = 0; y < rows; y++)
        png_write_row(j->png, j->band.px + (size_t)y * (size_t)j->band.w * 3);
}

static void clear_band(png_job *j, int rows)
{
    j->band.h = rows;
    memset(j->band.px, 0xff, (size_t)rows * (size_t)j->band.w * 3); /* BG is white */
}

/* Runs under setjmp: only j's members survive a longjmp. */
static void png_emit(png_job *j)
{
    gf_hist_out *h = j->h;
    png_init_io(j->png, h->png.f);
    png_set_IHDR(j->png, j->info, (png_uint_32)j->L.width, (png_uint_32)j->L.height, 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_text t = {.compression = PNG_TEXT_COMPRESSION_NONE,
                  .key = (png_charp) "Software",
                  .text = (png_charp) "gpufilt"};
    png_set_text(j->png, j->info, &t, 1);
    png_write_info(j->png, j->info);
    clear_band(j, HEADER_H);
    draw_header(h, &j->band);
    emit_band(j, HEADER_H);
    for (int p = 0; p < h->panels; p++) {
        clear_band(j, j->L.panel_h);
        draw_panel(h, &j->L, p, &j->band);
        emit_band(j, j->L.panel_h);
    }
    clear_band(j, FOOTER_H);
    draw_footer(h, &j->L, &j->band);
    emit_band(j, FOOTER_H);
    png_write_end(j->png, j->info);
}

static int render_png(gf_hist_out *h, char *err, size_t n)
{
    png_job *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    j->h = h;
    j->L = png_layout(h);
    int rows = j->L.panel_h > HEADER_H ? j->L.panel_h : HEADER_H;
    rows = rows > FOOTER_H ? rows : FOOTER_H;
    j->band.w = j->L.width;
    j->band.px = malloc((size_t)rows * (size_t)j->L.width * 3);
    j->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, j, png_on_error, png_on_warning);
    j->info = j->png ? png_create_info_struct(j->png) : NULL;
    int rc = 0;
    if (!j->band.px || !j->png || !j->info) {
        snprintf(err, n, "out of memory");
        rc = GF_EXIT_INTERNAL;
    } else if (setjmp(png_jmpbuf(j->png))) {
        if (errno == ENOSPC || errno == EIO || errno == EDQUOT || errno == EFBIG)
            snprintf(err, n, "writing %s '%s': %s (libpng: %s)", h->png.what, h->png.path,
                     strerror(errno), j->msg);
        else
            snprintf(err, n, "writing %s '%s': libpng: %s", h->png.what, h->png.path, j->msg);
        rc = GF_EXIT_OUTPUT;
    } else {
        errno = 0;
        png_emit(j);
    }
    png_destroy_write_struct(j->png ? &j->png : NULL, j->info ? &j->info : NULL);
    free(j->band.px);
    free(j);
    return rc;
}

/* --- the API --- */

int gf_hist_out_open(gf_hist_out **out, const char *csv_path, const char *png_path,
                     const gf_hist_config *hc, int channels, int rate, char *err, size_t n)
{
    *out = NULL;
    if (!csv_path && !png_path)
        return 0;
    if (!hc || hc->bins < 1 || hc->bins > GF_CLI_MAX_HIST_BINS || hc->block_frames < 1 ||
        !isfinite(hc->lo) || !isfinite(hc->hi) || !(hc->lo < hc->hi) || channels < 1 ||
        channels > GF_MAX_CHANNELS || rate < 0) {
        snprintf(err, n, "histogram output: invalid configuration");
        return GF_EXIT_INTERNAL;
    }
    const char *paths[2] = {csv_path, png_path}, *opts[2] = {"--hist", "--hist-png"};
    for (int i = 0; i < 2; i++)
        if (paths[i] && (!paths[i][0] || strcmp(paths[i], "-") == 0)) {
            snprintf(err, n, "%s: give a file name ('%s' is not one)", opts[i], paths[i]);
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
        rc = file_create(&h->csv, "histogram file", csv_path, err, n);
        if (rc)
            goto fail;
        const char *end = put_meta(h->line, h);
        rc = file_write(&h->csv, h->line, (size_t)(end - h->line), err, n);
        if (!rc)
            rc = file_flush(&h->csv, err, n);
        if (rc)
            goto fail;
    }
    if (png_path) {
        png_plan(h);
        rc = file_create(&h->png, "histogram image", png_path, err, n);
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
        snprintf(err, n, "histogram record (block %llu, channel %d) %s",
                 (unsigned long long)r->block, r->channel,
                 bad_channel    ? "has no such channel"
                 : out_of_order ? "is out of order"
                                : "has no bins");
        return GF_EXIT_INTERNAL;
    }
    h->have_block = 1;
    h->last_block = r->block;
    h->last_channel = r->channel;
    h->end_frame = r->first_frame + r->frames;
    if (h->png.tmp) {
        const int rc = png_add(h, r, err, n);
        if (rc)
            return rc;
    }
    if (h->csv.tmp) {
        const char *end = put_record(h->line, h, r);
        int rc = file_write(&h->csv, h->line, (size_t)(end - h->line), err, n);
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
        rc = render_png(h, err, n);
        if (!rc)
            rc = file_close(&h->png, err, n);
    }
    if (!rc && h->csv.tmp)
        rc = file_rename(&h->csv, err, n);
    if (!rc && h->png.tmp)
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
