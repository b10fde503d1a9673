/*
 * Histogram output, inside: the handle shared by the API (hist_out.c), the
 * text serialisers (text.c) and the picture (png.c, drawn with
 * draw/canvas.h, written by draw/png_write.h).
 */
#ifndef GF_HIST_OUT_INTERNAL_H
#define GF_HIST_OUT_INTERNAL_H

#include "cli.h"
#include "hist_out/hist_out.h"
#include "io/outfile.h"

#include <stdint.h>
#include <stdio.h>

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
    LABEL_GAP = 4,      /* between a left-margin label and the map */
    COLOUR_BAR_W = 256, /* legend colour bar width */
    LINE_PER_BIN = 21,  /* ",18446744073709551615" */
    LINE_FIXED = 1024   /* bytes of a line besides its bins */
};

/* Column data is bounded by this many bytes (see gf_hist_out_png_memory). */
#define PNG_MEMORY_MAX ((size_t)32 << 20)

enum { MARK_ABOVE = 1, MARK_BELOW = 2, MARK_NAN = 4 };

/* One output file (outfile.h), written through stdio. */
typedef struct out_file {
    gf_outfile of;
    FILE *f;  /* on a duplicate of of.fd */
    int open; /* created and not yet committed or dropped */
} out_file;

struct gf_hist_out {
    gf_hist_config hc;
    int channels, rate;

    /* --hist: CSV or JSON lines, one line built in `line` per record. */
    out_file csv;
    int json;
    char *line;
    uint64_t csv_bytes, csv_limit; /* written so far; the limit (0: none) */

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

/* text.c: one line into p (large enough: LINE_FIXED + LINE_PER_BIN * bins);
 * each returns the end of what it wrote. */
char *gf_hout_meta(char *p, const gf_hist_out *h);
char *gf_hout_record(char *p, const gf_hist_out *h, const gf_hist_record *r);

/* png.c: the picture's column data and its rendering into h->png.f. */
void gf_hout_png_plan(gf_hist_out *h);
int gf_hout_png_add(gf_hist_out *h, const gf_hist_record *r, char *err, size_t n);
int gf_hout_png_render(gf_hist_out *h, char *err, size_t n);

#endif /* GF_HIST_OUT_INTERNAL_H */
