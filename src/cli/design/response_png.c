/*
 * The response picture (response_png.h): the curves in pixel columns
 * (response_curves.c, response_plot.h) drawn on a canvas (draw/canvas.h)
 * and written by the PNG writer (draw/png_write.h).
 */
#include "design/response_plot.h"

#include "cli.h"
#include "draw/canvas.h"
#include "draw/png_write.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint8_t gf_response_curve_rgb[3] = {31, 119, 180};
const uint8_t gf_response_target_rgb[3] = {200, 0, 0};

static const gf_rgb FG = {0, 0, 0}, GRID = {226, 226, 226}, FRAME = {140, 140, 140},
                    PASS_BG = {222, 244, 222}, STOP_BG = {250, 226, 226}, TARGET = {200, 0, 0},
                    EQ_CURVE = {230, 120, 0};
static const gf_rgb PALETTE[MAX_FILTERS] = {{31, 119, 180}, {44, 160, 44},   {148, 103, 189},
                                            {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                            {188, 189, 34}, {23, 190, 207}};

/* ---- drawing ---- */

static int y_of(double v, double top, double bot, int y0, int h)
{
    const double t = (top - v) / (top - bot) * (h - 1);
    return y0 + (int)lround(t < 0 ? 0 : t > h - 1 ? h - 1 : t);
}

/* "20", "500", "1k", "20k". */
static void format_hz(char *buf, size_t n, double f)
{
    if (f >= 1000)
        snprintf(buf, n, "%gk", f / 1000);
    else
        snprintf(buf, n, "%g", f);
}

/* The plot's background: band tints, frequency grid, frame; labels below. */
static void draw_frame(const plot *s, gf_canvas *c, int y0, int h)
{
    for (int x = 0; x < PW; x++)
        if (s->state[x])
            gf_canvas_fill(c, LEFT + x, y0, 1, h, s->state[x] > 0 ? PASS_BG : STOP_BG);
    int label_end = 0;
    for (double dec = s->f_lo; dec <= s->f_hi; dec *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) { /* 1, 2, 5 */
            const double f = dec * m;
            if (f < s->f_lo || f > s->f_hi)
                continue;
            const int x = LEFT + (int)lround(log(f / s->f_lo) / log(s->f_hi / s->f_lo) * PW);
            gf_canvas_fill(c, x, y0, 1, h, GRID);
            char buf[16];
            format_hz(buf, sizeof buf, f);
            const int w = gf_canvas_text_width(buf);
            if (x - w / 2 > label_end + 4 && x + w / 2 < LEFT + PW + RIGHT) {
                gf_canvas_text_centre(c, x, y0 + h + 4, buf, FG);
                label_end = x + w / 2;
            }
        }
    gf_canvas_fill(c, LEFT, y0, PW, 1, FRAME);
    gf_canvas_fill(c, LEFT, y0 + h - 1, PW, 1, FRAME);
    gf_canvas_fill(c, LEFT, y0, 1, h, FRAME);
    gf_canvas_fill(c, LEFT + PW - 1, y0, 1, h, FRAME);
}

/* A value axis: lines and labels at every `step` from bot to top; signed:
 * labels with their sign and two digits (the passband's). */
static void draw_values(gf_canvas *c, int y0, int h, double top, double bot, double step, int sign)
{
    for (double v = ceil(bot / step) * step; v <= top + step * 1e-9; v += step) {
        const int y = y_of(v, top, bot, y0, h);
        gf_canvas_fill(c, LEFT + 1, y, PW - 2, 1, GRID);
        char buf[32];
        const double u = fabs(v) < step * 1e-9 ? 0.0 : v;
        if (sign)
            snprintf(buf, sizeof buf, "%+.2g", u);
        else
            snprintf(buf, sizeof buf, "%g", u);
        gf_canvas_text_right(c, LEFT - 4, y - 3, buf, FG);
    }
}

/* A horizontal dashed line across the columns where `where` holds. */
static void dashed(gf_canvas *c, int y, const signed char *state, int want, gf_rgb col)
{
    for (int x = 0; x < PW; x++)
        if ((want == 2 || state[x] == want) && (x / DASH) % 2 == 0)
            gf_canvas_fill(c, LEFT + x, y, 1, 2, col);
}

/* A curve given per column as [lo, hi] (NAN: none), joined across columns. */
static void draw_curve(gf_canvas *c, const double *lo, const double *hi, double top, double bot,
                       int y0, int h, gf_rgb col, const signed char *only)
{
    int prev_a = -1, prev_b = -1;
    for (int x = 0; x < PW; x++) {
        if (isnan(lo[x]) || isnan(hi[x]) || (only && only[x] <= 0)) {
            prev_a = prev_b = -1;
            continue;
        }
        int a = y_of(hi[x], top, bot, y0, h), b = y_of(lo[x], top, bot, y0, h);
        if (prev_a >= 0 && b < prev_a) /* entirely above the last column: reach down */
            b = prev_a;
        if (prev_a >= 0 && a > prev_b) /* entirely below: reach up */
            a = prev_b;
        gf_canvas_fill(c, LEFT + x, a, 1, b - a + 1, col);
        prev_a = y_of(hi[x], top, bot, y0, h);
        prev_b = y_of(lo[x], top, bot, y0, h);
    }
}

static void draw_gain(const plot *s, gf_canvas *c)
{
    const gf_response_plot *p = s->p;
    const int y0 = s->y_mag;
    gf_canvas_text(c, LEFT, y0 - TITLE_H + 3, "gain (dB)", FG);
    draw_frame(s, c, y0, MAG_H);
    draw_values(c, y0, MAG_H, s->db_top, s->db_bot, s->db_step, 0);
    for (int i = 0; i < p->nsections; i++) {
        const gf_design_info *in = p->sections[i].info;
        if (p->sections[i].spec->band == GF_BAND_EQ)
            continue;
        signed char mine[PW];
        for (int x = 0; x < PW; x++) {
            const double f = col_freq(s, x + 0.5);
            mine[x] = 0;
            for (int b = 0; b < in->nstop; b++)
                mine[x] |= f >= in->stop[b][0] && f <= in->stop[b][1];
        }
        const int y = y_of(-in->atten, s->db_top, s->db_bot, y0, MAG_H);
        dashed(c, y, mine, 1, TARGET);
        char buf[48];
        snprintf(buf, sizeof buf, "-%g", in->atten);
        gf_canvas_text(c, LEFT + PW + 2, y - 3, buf, TARGET);
    }
    for (int f = s->filters - 1; f >= 0; f--)
        draw_curve(c, s->col[f].mn, s->col[f].mx, s->db_top, s->db_bot, y0, MAG_H, PALETTE[f],
                   NULL);
    for (int x = 0; x < PW; x++)
        if (!isnan(s->eq[x]) && (x / DASH) % 2 == 0)
            gf_canvas_fill(c, LEFT + x, y_of(s->eq[x], s->db_top, s->db_bot, y0, MAG_H) - 1, 1, 3,
                           EQ_CURVE);
}

static void draw_passband(const plot *s, gf_canvas *c)
{
    const int y0 = s->y_detail;
    const double b = s->bound_db, top = 2 * b, bot = -2 * b;
    char buf[96];
    snprintf(buf, sizeof buf, "passband (dB), Kaiser ripple bound +-%.3g dB dashed", b);
    gf_canvas_text(c, LEFT, y0 - TITLE_H + 3, buf, FG);
    draw_frame(s, c, y0, DETAIL_H);
    draw_values(c, y0, DETAIL_H, top, bot, b, 1);
    dashed(c, y_of(b, top, bot, y0, DETAIL_H), s->state, 1, TARGET);
    dashed(c, y_of(-b, top, bot, y0, DETAIL_H), s->state, 1, TARGET);
    for (int f = s->filters - 1; f >= 0; f--)
        draw_curve(c, s->col[f].mn, s->col[f].mx, top, bot, y0, DETAIL_H, PALETTE[f], s->inside);
}

/* EQ curves alone: the filter's gain less the curve. */
static void draw_deviation(const plot *s, gf_canvas *c)
{
    const int y0 = s->y_detail;
    const double r = s->dev_db;
    gf_canvas_text(c, LEFT, y0 - TITLE_H + 3, "gain less the EQ curve (dB)", FG);
    draw_frame(s, c, y0, DETAIL_H);
    draw_values(c, y0, DETAIL_H, r, -r, r / 2, 1);
    for (int f = s->filters - 1; f >= 0; f--)
        draw_curve(c, s->col[f].vmn, s->col[f].vmx, r, -r, y0, DETAIL_H, PALETTE[f], NULL);
}

static void draw_delay(const plot *s, gf_canvas *c)
{
    const int y0 = s->y_delay;
    char buf[96];
    snprintf(buf, sizeof buf, "group delay (ms), where the gain is within %.0f dB of its peak",
             DELAY_RANGE_DB);
    gf_canvas_text(c, LEFT, y0 - TITLE_H + 3, buf, FG);
    draw_frame(s, c, y0, DELAY_H);
    double step = pow(10, floor(log10((s->d_hi - s->d_lo) / 2)));
    if ((s->d_hi - s->d_lo) / step > 5)
        step *= (s->d_hi - s->d_lo) / step > 10 ? 5 : 2;
    draw_values(c, y0, DELAY_H, s->d_hi, s->d_lo, step, 0);
    for (int f = s->filters - 1; f >= 0; f--)
        draw_curve(c, s->col[f].dmn, s->col[f].dmx, s->d_hi, s->d_lo, y0, DELAY_H, PALETTE[f],
                   NULL);
}

/* Title, the taps, and a line per design (the first HEADER_SECTIONS). */
static void draw_header(const plot *s, gf_canvas *c)
{
    const gf_response_plot *p = s->p;
    char buf[256];
    snprintf(buf, sizeof buf, "gpufilt response: %.180s", p->title ? p->title : "filter");
    gf_canvas_text(c, MARGIN, MARGIN, buf, FG);
    int minimum = 0;
    for (int i = 0; i < p->nsections; i++)
        minimum |= p->sections[i].spec->phase == GF_PHASE_MINIMUM;
    snprintf(buf, sizeof buf, "%zu taps%s at %g Hz%s", p->n, p->filters > 1 ? " per channel" : "",
             p->rate, minimum ? ", minimum-phase designs" : "");
    gf_canvas_text(c, MARGIN, MARGIN + LINE_H, buf, FG);
    for (int i = 0; i < p->nsections && i < HEADER_SECTIONS; i++) {
        const gf_design_info *in = p->sections[i].info;
        if (p->sections[i].spec->band == GF_BAND_EQ)
            snprintf(buf, sizeof buf,
                     "%.60s: %zu taps, resolution %.4g Hz, within %.2g dB of "
                     "the curve at its points",
                     p->sections[i].label, in->taps, in->transition, in->eq_error_db);
        else
            snprintf(buf, sizeof buf,
                     "%.60s: %zu taps, transition %.4g Hz, stopband %.2f dB "
                     "(target -%g), passband +-%.2g dB",
                     p->sections[i].label, in->taps, in->transition, in->stop_db, in->atten,
                     20 * log10(1 + in->ripple));
        gf_canvas_text(c, MARGIN, MARGIN + (2 + i) * LINE_H, buf, FG);
    }
}

static void legend_item(gf_canvas *c, int *x, int y, gf_rgb col, int h, const char *text)
{
    gf_canvas_fill(c, *x, y + (7 - h) / 2, 14, h, col);
    gf_canvas_text(c, *x + 18, y, text, FG);
    *x += 18 + gf_canvas_text_width(text) + 16;
}

static void draw_legend(const plot *s, gf_canvas *c)
{
    const int y = s->height - MARGIN - 8;
    int x = LEFT;
    char buf[32];
    for (int f = 0; f < s->filters; f++) {
        snprintf(buf, sizeof buf, "channel %d", f + 1);
        legend_item(c, &x, y, PALETTE[f], 3, s->filters > 1 ? buf : "filter");
    }
    if (s->p->filters > s->filters) {
        snprintf(buf, sizeof buf, "(%d more not drawn)", s->p->filters - s->filters);
        gf_canvas_text(c, x, y, buf, FG);
        x += gf_canvas_text_width(buf) + 16;
    }
    if (s->bands) {
        legend_item(c, &x, y, PASS_BG, 7, "passband");
        legend_item(c, &x, y, STOP_BG, 7, "stopband");
        legend_item(c, &x, y, TARGET, 2, "attenuation target");
    }
    for (int i = 0; i < s->p->nsections; i++)
        if (s->p->sections[i].spec->band == GF_BAND_EQ) {
            legend_item(c, &x, y, EQ_CURVE, 3, "EQ curve");
            break;
        }
}

/* ---- the picture ---- */

static void layout(plot *s)
{
    const int sections = s->p->nsections < HEADER_SECTIONS ? s->p->nsections : HEADER_SECTIONS;
    s->header_h = MARGIN + (2 + sections) * LINE_H + 6;
    s->y_mag = s->header_h + TITLE_H;
    int y = s->y_mag + MAG_H + AXIS_H;
    if (s->bound_db > 0 || s->dev_db > 0) {
        s->y_detail = y + TITLE_H;
        y = s->y_detail + DETAIL_H + AXIS_H;
    }
    s->y_delay = y + TITLE_H;
    s->height = s->y_delay + DELAY_H + AXIS_H + LEGEND_H + MARGIN;
}

int gf_response_render(const gf_response_plot *p, gf_response_image *img, char *err, size_t n)
{
    memset(img, 0, sizeof *img);
    plot *s = calloc(1, sizeof *s);
    const int filters = p->filters < MAX_FILTERS ? p->filters : MAX_FILTERS;
    if (!s || !(s->col = calloc((size_t)filters, sizeof *s->col))) {
        free(s);
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    s->p = p;
    s->filters = filters;
    int rc = gf_response_curves(s, err, n);
    if (!rc) {
        layout(s);
        img->px = malloc((size_t)WIDTH * (size_t)s->height * 3);
        if (!img->px) {
            snprintf(err, n, "out of memory");
            rc = GF_EXIT_INTERNAL;
        }
    }
    if (!rc) {
        memset(img->px, 0xff, (size_t)WIDTH * (size_t)s->height * 3);
        gf_canvas c = {img->px, WIDTH, s->height};
        draw_header(s, &c);
        draw_gain(s, &c);
        if (s->bound_db > 0)
            draw_passband(s, &c);
        else if (s->dev_db > 0)
            draw_deviation(s, &c);
        draw_delay(s, &c);
        draw_legend(s, &c);
        *img = (gf_response_image){img->px, WIDTH,   s->height, LEFT,      PW,       s->y_mag,
                                   MAG_H,   s->f_lo, s->f_hi,   s->db_top, s->db_bot};
    }
    free(s->col);
    free(s);
    return rc;
}

void gf_response_image_free(gf_response_image *img)
{
    free(img->px);
    img->px = NULL;
}

int gf_response_x(const gf_response_image *img, double f)
{
    return img->plot_x + (int)floor(log(f / img->f_lo) / log(img->f_hi / img->f_lo) * img->plot_w);
}

int gf_response_y(const gf_response_image *img, double db)
{
    return y_of(db, img->db_top, img->db_bot, img->mag_y, img->mag_h);
}

/* The whole picture as one band. */
static const uint8_t *image_rows(void *ctx, int y, int *count)
{
    const gf_response_image *img = ctx;
    *count = img->h - y;
    return img->px + (size_t)y * (size_t)img->w * 3;
}

int gf_response_png_write(FILE *f, const gf_response_plot *p, char *err, size_t n)
{
    gf_response_image img;
    int rc = gf_response_render(p, &img, err, n);
    if (rc)
        return rc;
    gf_png_error e;
    rc = gf_png_write(f, img.w, img.h, image_rows, &img, &e);
    if (rc == GF_EXIT_INTERNAL)
        snprintf(err, n, "out of memory");
    else if (rc)
        snprintf(err, n, "libpng: %s%s%s", e.libpng, e.errnum ? ": " : "",
                 e.errnum ? strerror(e.errnum) : "");
    gf_response_image_free(&img);
    return rc;
}
