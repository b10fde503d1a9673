/*
 * The histogram picture (--hist-png): column data accumulated as records
 * arrive, bounded in memory, then drawn band by band on a canvas
 * (draw/canvas.h) and written by the PNG writer (draw/png_write.h) at
 * commit. docs/hist-output.md ("The picture") specifies it.
 */
#include "draw/canvas.h"
#include "draw/png_write.h"
#include "hist_out/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void gf_hout_png_plan(gf_hist_out *h)
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

int gf_hout_png_add(gf_hist_out *h, const gf_hist_record *r, char *err, size_t n)
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

/* The background is white (see clear_band). */
static const gf_rgb FG = {0, 0, 0}, STRIP_BG = {220, 220, 220}, CLIP = {255, 0, 0},
                    NAN_MARK = {255, 0, 255};

/* viridis (matplotlib), 10 evenly spaced stops, interpolated linearly. */
static gf_rgb viridis(double t)
{
    static const gf_rgb stops[10] = {{68, 1, 84},    {72, 40, 120},  {62, 74, 137},  {49, 104, 142},
                                     {38, 130, 142}, {31, 158, 137}, {53, 183, 121}, {109, 205, 89},
                                     {180, 222, 44}, {253, 231, 37}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const double x = t * 9;
    const int i = x >= 9 ? 8 : (int)x;
    const double f = x - i;
    const gf_rgb a = stops[i], b = stops[i + 1];
    return (gf_rgb){(uint8_t)lround(a.r + (b.r - a.r) * f), (uint8_t)lround(a.g + (b.g - a.g) * f),
                    (uint8_t)lround(a.b + (b.b - a.b) * f)};
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

static void draw_header(const gf_hist_out *h, gf_canvas *c)
{
    char buf[256];
    snprintf(buf, sizeof buf, "Histogram of %s, %zu bins from %.6g to %.6g, %zu frames per block",
             h->hc.of_input ? "input" : "output", h->hc.bins, h->hc.lo, h->hc.hi,
             h->hc.block_frames);
    gf_canvas_text(c, MARGIN, MARGIN, buf, FG);
}

static void draw_panel(const gf_hist_out *h, const layout *L, int panel, gf_canvas *c)
{
    char buf[64];
    const int map_y = PANEL_MAP_Y, below_y = map_y + L->map_h + 1, nan_y = below_y + STRIP_H + 1;
    const int lx = LEFT - LABEL_GAP;
    if (h->hc.mix)
        snprintf(buf, sizeof buf, "all channels (mix)");
    else
        snprintf(buf, sizeof buf, "channel %d", panel + 1); /* from 1, as messages say */
    gf_canvas_text(c, LEFT, 2, buf, FG);
    gf_canvas_text_right(c, lx, PANEL_ABOVE_Y, "above", FG);
    gf_canvas_text_right(c, lx, below_y, "below", FG);
    gf_canvas_text_right(c, lx, nan_y, "nan", FG);
    snprintf(buf, sizeof buf, "%.4g", h->hc.hi);
    gf_canvas_text_right(c, lx - 2, map_y, buf, FG);
    snprintf(buf, sizeof buf, "%.4g", h->hc.lo);
    gf_canvas_text_right(c, lx - 2, map_y + L->map_h - 7, buf, FG);
    if (L->map_h >= 64) { /* the middle amplitude, with ticks at the three labels */
        snprintf(buf, sizeof buf, "%.4g", h->hc.lo + (h->hc.hi - h->hc.lo) / 2);
        gf_canvas_text_right(c, lx - 2, map_y + L->map_h / 2 - 3, buf, FG);
        gf_canvas_fill(c, LEFT - 3, map_y + L->map_h / 2, 3, 1, FG);
    }
    gf_canvas_fill(c, LEFT - 3, map_y, 3, 1, FG);
    gf_canvas_fill(c, LEFT - 3, map_y + L->map_h - 1, 3, 1, FG);

    gf_canvas_fill(c, LEFT, PANEL_ABOVE_Y, L->map_w, STRIP_H, STRIP_BG);
    gf_canvas_fill(c, LEFT, below_y, L->map_w, STRIP_H, STRIP_BG);
    gf_canvas_fill(c, LEFT, nan_y, L->map_w, STRIP_H, STRIP_BG);
    if (h->ncols == 0) {
        gf_canvas_fill(c, LEFT, map_y, L->map_w, L->map_h, STRIP_BG);
        gf_canvas_text_centre(c, LEFT + L->map_w / 2, map_y + L->map_h / 2 - 3, "no blocks", FG);
        return;
    }
    const size_t s = stride(h), P = (size_t)h->panels;
    for (size_t col = 0; col < h->ncols; col++) {
        const int x = LEFT + (int)col * L->wcol;
        const float *cell = h->cells + col * s + (size_t)panel * h->rows;
        for (size_t row = 0; row < h->rows; row++) {
            const double t = L->lmax > 0 ? log1p((double)cell[row]) / L->lmax : 0;
            const int y = map_y + (int)((h->rows - 1 - row) * h->k);
            gf_canvas_fill(c, x, y, L->wcol, (int)h->k, viridis(t));
        }
        const uint8_t mk = h->marks[col * P + (size_t)panel];
        if (mk & MARK_ABOVE)
            gf_canvas_fill(c, x, PANEL_ABOVE_Y, L->wcol, STRIP_H, CLIP);
        if (mk & MARK_BELOW)
            gf_canvas_fill(c, x, below_y, L->wcol, STRIP_H, CLIP);
        if (mk & MARK_NAN)
            gf_canvas_fill(c, x, nan_y, L->wcol, STRIP_H, NAN_MARK);
    }
}

static void draw_footer(const gf_hist_out *h, const layout *L, gf_canvas *c)
{
    char buf[128];
    const int right = LEFT + L->map_w, centre = LEFT + L->map_w / 2;
    if (h->have_block) {
        gf_canvas_text(c, LEFT, 2, "block 0", FG);
        snprintf(buf, sizeof buf, "block %llu", (unsigned long long)h->last_block);
        gf_canvas_text_right(c, right, 2, buf, FG);
        if (h->bpc > 1)
            snprintf(buf, sizeof buf, "blocks (%llu per column)", (unsigned long long)h->bpc);
        else
            snprintf(buf, sizeof buf, "blocks");
        gf_canvas_text_centre(c, centre, 2, buf, FG);
        if (h->rate > 0) {
            gf_canvas_text(c, LEFT, 12, "0 s", FG);
            format_time(buf, sizeof buf, (double)h->end_frame / h->rate);
            gf_canvas_text_right(c, right, 12, buf, FG);
            snprintf(buf, sizeof buf, "time at %d Hz", h->rate);
            gf_canvas_text_centre(c, centre, 12, buf, FG);
        }
    }

    /* Colour bar: colour = log(1 + count) / log(1 + largest count). */
    gf_canvas_text_right(c, LEFT - LABEL_GAP, 28, "count", FG);
    for (int i = 0; i < COLOUR_BAR_W; i++)
        gf_canvas_fill(c, LEFT + i, 28, 1, STRIP_H, viridis(i / (double)(COLOUR_BAR_W - 1)));
    gf_canvas_text(c, LEFT, 38, "0", FG);
    const double top = expm1(L->lmax);
    if (top < 1e9)
        snprintf(buf, sizeof buf, "%.0f", top);
    else
        snprintf(buf, sizeof buf, "%.3g", top);
    gf_canvas_text_right(c, LEFT + COLOUR_BAR_W, 38, buf, FG);
    gf_canvas_text_centre(c, LEFT + COLOUR_BAR_W / 2, 38, "log scale", FG);

    /* Marks. */
    static const char clip[] = "clipping: above hi / below lo";
    gf_canvas_fill(c, LEFT, 52, STRIP_H, STRIP_H, CLIP);
    gf_canvas_text(c, LEFT + STRIP_H + 4, 52, clip, FG);
    const int nx = LEFT + STRIP_H + 4 + gf_canvas_text_width(clip) + 12;
    gf_canvas_fill(c, nx, 52, STRIP_H, STRIP_H, NAN_MARK);
    gf_canvas_text(c, nx + STRIP_H + 4, 52, "nan", FG);

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
    gf_canvas_text(c, LEFT, 64, buf, FG);
}

/* The picture in bands (header, one per panel, footer), each drawn on a
 * white canvas when the PNG writer asks for its rows. */
typedef struct band_job {
    gf_hist_out *h;
    layout L;
    gf_canvas band; /* as many rows as the tallest band */
} band_job;

static const uint8_t *next_band(void *ctx, int y, int *count)
{
    band_job *j = ctx;
    const int panels_end = HEADER_H + j->h->panels * j->L.panel_h;
    const int rows = y < HEADER_H ? HEADER_H : y < panels_end ? j->L.panel_h : FOOTER_H;
    j->band.h = rows;
    memset(j->band.px, 0xff, (size_t)rows * (size_t)j->band.w * 3); /* BG is white */
    if (y < HEADER_H)
        draw_header(j->h, &j->band);
    else if (y < panels_end)
        draw_panel(j->h, &j->L, (y - HEADER_H) / j->L.panel_h, &j->band);
    else
        draw_footer(j->h, &j->L, &j->band);
    *count = rows;
    return j->band.px;
}

int gf_hout_png_render(gf_hist_out *h, char *err, size_t n)
{
    band_job j = {.h = h, .L = png_layout(h)};
    int rows = j.L.panel_h > HEADER_H ? j.L.panel_h : HEADER_H;
    rows = rows > FOOTER_H ? rows : FOOTER_H;
    j.band.w = j.L.width;
    j.band.px = malloc((size_t)rows * (size_t)j.L.width * 3);
    gf_png_error e;
    int rc = j.band.px ? gf_png_write(h->png.f, j.L.width, j.L.height, next_band, &j, &e)
                       : GF_EXIT_INTERNAL;
    if (rc == GF_EXIT_INTERNAL) {
        snprintf(err, n, "out of memory");
    } else if (rc) {
        if (e.errnum == ENOSPC || e.errnum == EIO || e.errnum == EDQUOT || e.errnum == EFBIG)
            snprintf(err, n, "writing %s '%s': %s (libpng: %s)", h->png.of.what, h->png.of.name,
                     strerror(e.errnum), e.libpng);
        else
            snprintf(err, n, "writing %s '%s': libpng: %s", h->png.of.what, h->png.of.name,
                     e.libpng);
    }
    free(j.band.px);
    return rc;
}
