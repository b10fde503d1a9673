/*
 * The one PNG writer of the CLI's pictures (the histogram picture,
 * hist_out/png.c; the response picture, design/response_png.c): 8-bit RGB,
 * not interlaced, with a "Software: gpufilt" text chunk, encoded by libpng
 * row by row into a stdio stream. The caller owns the stream: it writes on
 * an output file (io/outfile.h), which gives the temporary name and the
 * rename on success.
 *
 * The rows come from the caller in bands, so a picture need not be held
 * whole: a band may be drawn on a canvas (draw/canvas.h) when it is asked
 * for. libpng's errors (a failed write, out of memory inside libpng) end
 * the write through its longjmp and are returned, never printed.
 */
#ifndef GF_DRAW_PNG_WRITE_H
#define GF_DRAW_PNG_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The picture's rows, asked for in order from y = 0: fill *count (>= 1) and
 * return rows [y, y + *count) of the picture, w * 3 bytes a row (RGB), one
 * row after the other. The pointer need stay valid only until the next
 * call. Rows past the picture's height are not written.
 */
typedef const uint8_t *(*gf_png_rows_fn)(void *ctx, int y, int *count);

/* Why a write failed. */
typedef struct gf_png_error {
    char libpng[200]; /* libpng's message ("" when memory ran out before it began) */
    int errnum;       /* errno when libpng gave up, e.g. ENOSPC from the stream; 0: none */
} gf_png_error;

/*
 * Write the w x h picture (w, h >= 1) whose rows `rows` gives to f. Returns
 * 0; GF_EXIT_INTERNAL (cli.h) when memory for libpng's structures ran out,
 * before anything was written; or GF_EXIT_OUTPUT when libpng failed, with
 * *e filled (part of the file may have been written). f is not closed.
 */
int gf_png_write(FILE *f, int w, int h, gf_png_rows_fn rows, void *ctx, gf_png_error *e);

#endif /* GF_DRAW_PNG_WRITE_H */
