/*
 * The pictures' canvas (the histogram picture, hist_out/png.c; the response
 * picture, design/response_png.c): a band of RGB pixels, rectangles and 5x7
 * text, clipped to the band. Written out by draw/png_write.h.
 */
#ifndef GF_DRAW_CANVAS_H
#define GF_DRAW_CANVAS_H

#include <stdint.h>

/* Advance of one 5x7 glyph (one empty column between glyphs). */
#define GF_CANVAS_ADVANCE 6

typedef struct gf_rgb {
    uint8_t r, g, b;
} gf_rgb;

/* One horizontal band of the picture (rows [0, h) of it), RGB. */
typedef struct gf_canvas {
    uint8_t *px;
    int w, h;
} gf_canvas;

/* A w x hgt rectangle at (x, y), clipped to the band. */
void gf_canvas_fill(gf_canvas *c, int x, int y, int w, int hgt, gf_rgb col);
/* Width in pixels of s in the 5x7 font. */
int gf_canvas_text_width(const char *s);
/* Text with its top-left corner at (x, y); right-aligned to `right`;
 * centred on `centre`. Lower case is drawn as capitals. */
void gf_canvas_text(gf_canvas *c, int x, int y, const char *s, gf_rgb col);
void gf_canvas_text_right(gf_canvas *c, int right, int y, const char *s, gf_rgb col);
void gf_canvas_text_centre(gf_canvas *c, int centre, int y, const char *s, gf_rgb col);

#endif /* GF_DRAW_CANVAS_H */
