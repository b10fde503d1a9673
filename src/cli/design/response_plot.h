/*
 * The response picture's parts (response_png.c): its layout, and the
 * curves reduced to pixel columns with their axes, computed from the
 * library's responses in response_curves.c and drawn in response_png.c.
 */
#ifndef GF_RESPONSE_PLOT_H
#define GF_RESPONSE_PLOT_H

#include "design/response_png.h"

#include <math.h>
#include <stddef.h>

/* Layout, in pixels. */
enum {
    WIDTH = 1000,
    LEFT = 76,                 /* first plot column */
    RIGHT = 28,                /* after the last */
    PW = WIDTH - LEFT - RIGHT, /* plot width */
    MARGIN = 8,                /* around the picture */
    LINE_H = 11,               /* a line of text */
    TITLE_H = 14,              /* a panel's title above its plot */
    AXIS_H = 16,               /* frequency labels below a plot */
    MAG_H = 340,               /* the gain plot */
    DETAIL_H = 110,            /* the passband plot */
    DELAY_H = 130,             /* the group delay plot */
    LEGEND_H = 24,             /* the legend at the bottom */
    MAX_FILTERS = 8,           /* filters drawn */
    HEADER_SECTIONS = 4,       /* designs listed in the header */
    DASH = 4                   /* dash length of marked lines */
};
/* Group delay is drawn where the gain is within this of its peak. */
#define DELAY_RANGE_DB 40.0

/* One filter's response reduced to pixel columns. */
typedef struct columns {
    double mn[PW], mx[PW];   /* lowest and highest gain, dB */
    double dmn[PW], dmx[PW]; /* group delay, ms, where the gain is high; NAN elsewhere */
    double vmn[PW], vmx[PW]; /* gain less the EQ curves, dB; NAN without them */
} columns;

typedef struct plot {
    const gf_response_plot *p;
    int filters;            /* drawn: at most MAX_FILTERS */
    columns *col;           /* one per filter drawn */
    signed char state[PW];  /* 1 in every design's passband, -1 in a stopband, else 0 */
    signed char inside[PW]; /* 1 when the whole column lies in every design's passband */
    double eq[PW];          /* the EQ curves' sum (dB), or NAN */
    double f_lo, f_hi;
    double db_top, db_bot, db_step;
    double bound_db;   /* the passband plot's ripple bound; 0: no passband plot */
    double dev_db;     /* EQ curves alone: the deviation plot's range (+-); 0: none */
    int bands;         /* band designs among the sections */
    int has_eq;        /* EQ curves among them */
    double d_lo, d_hi; /* ms */
    int header_h, y_mag, y_detail, y_delay, height;
} plot;

/* The frequency at x columns from the plot's left edge (log axis). */
static inline double col_freq(const plot *s, double x)
{
    return s->f_lo * pow(s->f_hi / s->f_lo, x / PW);
}

/* Everything the picture shows but its pixels, for s->p and s->filters
 * with s->col allocated: the frequency axis, each column's bands and EQ
 * curves, each filter's columns, the gain and delay axes. Returns 0, or an
 * exit code with err set. */
int gf_response_curves(plot *s, char *err, size_t n);

#endif /* GF_RESPONSE_PLOT_H */
