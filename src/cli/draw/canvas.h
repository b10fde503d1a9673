/* A band of RGB pixels for the histogram picture: rectangles and 5x7 text. */
#ifndef GF_HIST_OUT_CANVAS_H
#define GF_HIST_OUT_CANVAS_H

#include <stdint.h>

/* Advance of one 5x7 glyph (one empty column between glyphs). */
#define GF_GLYPH_ADVANCE 6

typedef struct rgb {
    uint8_t r, g, b;
} rgb;

/* One horizontal band of the picture (rows [0, h) of it), RGB. */
typedef struct canvas {
    uint8_t *px;
    int w, h;
} canvas;

/* A w x hgt rectangle at (x, y), clipped to the band. */
void gf_fill(canvas *c, int x, int y, int w, int hgt, rgb col);
/* Width in pixels of s in the 5x7 font. */
int gf_text_width(const char *s);
/* Text with its top-left corner at (x, y); right-aligned to `right`;
 * centred on `centre`. Lower case is drawn as capitals. */
void gf_text(canvas *c, int x, int y, const char *s, rgb col);
void gf_text_right(canvas *c, int right, int y, const char *s, rgb col);
void gf_text_centre(canvas *c, int centre, int y, const char *s, rgb col);

#endif /* GF_HIST_OUT_CANVAS_H */
