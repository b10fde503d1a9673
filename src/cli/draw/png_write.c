/* The PNG writer (png_write.h): libpng, with its errors caught by setjmp. */
#include "draw/png_write.h"

#include "cli.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* libpng reports errors by longjmp: everything it touches lives here, not
 * in locals of the function that calls setjmp. */
typedef struct png_job {
    png_structp png;
    png_infop info;
    FILE *f;
    int w, h;
    gf_png_rows_fn rows;
    void *ctx;
    char msg[200];
} png_job;

static void on_error(png_structp png, png_const_charp msg)
{
    png_job *j = png_get_error_ptr(png);
    snprintf(j->msg, sizeof j->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Runs under setjmp: only j's members survive a longjmp. */
static void emit(png_job *j)
{
    png_init_io(j->png, j->f);
    png_set_IHDR(j->png, j->info, (png_uint_32)j->w, (png_uint_32)j->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text t = {.compression = PNG_TEXT_COMPRESSION_NONE,
                  .key = (png_charp) "Software",
                  .text = (png_charp) "gpufilt"};
    png_set_text(j->png, j->info, &t, 1);
    png_write_info(j->png, j->info);
    const size_t row_bytes = (size_t)j->w * 3;
    for (int y = 0; y < j->h;) {
        int count = 0;
        const uint8_t *px = j->rows(j->ctx, y, &count);
        if (!px || count < 1)
            png_error(j->png, "no rows to write");
        for (int i = 0; i < count && y < j->h; i++, y++)
            png_write_row(j->png, px + (size_t)i * row_bytes);
    }
    png_write_end(j->png, j->info);
}

int gf_png_write(FILE *f, int w, int h, gf_png_rows_fn rows, void *ctx, gf_png_error *e)
{
    memset(e, 0, sizeof *e);
    png_job *j = calloc(1, sizeof *j);
    if (j) {
        *j = (png_job){.f = f, .w = w, .h = h, .rows = rows, .ctx = ctx};
        j->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, j, on_error, on_warning);
        j->info = j->png ? png_create_info_struct(j->png) : NULL;
    }
    int rc = 0;
    if (!j || !j->png || !j->info) {
        rc = GF_EXIT_INTERNAL;
    } else if (setjmp(png_jmpbuf(j->png))) {
        e->errnum = errno; /* before anything else can change it */
        snprintf(e->libpng, sizeof e->libpng, "%s", j->msg);
        rc = GF_EXIT_OUTPUT;
    } else {
        errno = 0;
        emit(j);
    }
    if (j)
        png_destroy_write_struct(j->png ? &j->png : NULL, j->info ? &j->info : NULL);
    free(j);
    return rc;
}
