/*
 * The pictures' PNG writer (src/cli/draw/png_write.h) on its own:
 *   - a 7 x 5 picture given in bands of 2 rows (the last band reaching past
 *     the picture) is asked for at rows 0, 2, 4 and decodes (libpng's
 *     reader) to exactly the pixels given, RGB 8-bit, with the text chunk
 *     "Software: gpufilt";
 *   - the same picture given whole writes the same bytes;
 *   - a full disk (/dev/full, unbuffered) fails with GF_EXIT_OUTPUT,
 *     libpng's "Write Error" and ENOSPC; rows that never come (a count of
 *     0) fail with "no rows to write" and no errno.
 *
 * Usage: test_png_write WORKDIR
 */
#include "cli.h"
#include "draw/png_write.h"

#include <errno.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../check.h"

enum { W = 7, H = 5, BAND = 2 };

/* Pixel (x, y) of the test picture: every byte different within a row. */
static uint8_t value(int x, int y, int c)
{
    return (uint8_t)(40 * y + 3 * x + c + 1);
}

typedef struct source {
    uint8_t band[BAND * W * 3];
    uint8_t whole[H * W * 3];
    int asked[8]; /* the rows asked for, in order */
    int calls;
    int count; /* rows handed out each call (0: none, an error) */
} source;

static const uint8_t *bands(void *ctx, int y, int *count)
{
    source *s = ctx;
    if (s->calls < 8)
        s->asked[s->calls] = y;
    s->calls++;
    for (int r = 0; r < BAND; r++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++) /* rows past H too: the writer must stop at H */
                s->band[(r * W + x) * 3 + c] = value(x, y + r, c);
    *count = s->count;
    return s->band;
}

static const uint8_t *whole(void *ctx, int y, int *count)
{
    source *s = ctx;
    *count = H - y;
    return s->whole + (size_t)y * W * 3;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *b = malloc(1 << 16);
    *len = b ? fread(b, 1, 1 << 16, f) : 0;
    fclose(f);
    return b;
}

static int write_file(const char *path, gf_png_rows_fn rows, source *s, gf_png_error *e)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    const int rc = gf_png_write(f, W, H, rows, s, e);
    return fclose(f) != 0 ? -1 : rc;
}

static void check_bands(const char *dir)
{
    char path[1024], path2[1024];
    snprintf(path, sizeof path, "%s/bands.png", dir);
    snprintf(path2, sizeof path2, "%s/whole.png", dir);
    source s = {.count = BAND};
    gf_png_error e;
    int rc = write_file(path, bands, &s, &e);
    CHECK(rc == 0, "bands: returned %d (%s)", rc, e.libpng);
    CHECK(s.calls == 3 && s.asked[0] == 0 && s.asked[1] == 2 && s.asked[2] == 4,
          "bands: asked %d times (rows %d %d %d), not at rows 0 2 4", s.calls, s.asked[0],
          s.asked[1], s.asked[2]);

    png_image img = {.version = PNG_IMAGE_VERSION};
    uint8_t got[H * W * 3];
    memset(got, 0, sizeof got);
    const int ok = png_image_begin_read_from_file(&img, path) && img.width == W &&
                   img.height == H && (img.format = PNG_FORMAT_RGB, 1) &&
                   png_image_finish_read(&img, NULL, got, W * 3, NULL);
    CHECK(ok, "bands: not read back as a %d x %d PNG: %s", W, H, img.message);
    png_image_free(&img);
    int wrong = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++) {
                s.whole[(y * W + x) * 3 + c] = value(x, y, c);
                wrong += ok && got[(y * W + x) * 3 + c] != value(x, y, c);
            }
    CHECK(wrong == 0, "bands: %d bytes of the pixels differ from those given", wrong);

    size_t len = 0;
    unsigned char *b = read_file(path, &len);
    static const char text[] = "tEXtSoftware\0gpufilt";
    int found = 0;
    for (size_t i = 0; b && i + sizeof text - 1 <= len && !found; i++)
        found = memcmp(b + i, text, sizeof text - 1) == 0;
    CHECK(found, "bands: no text chunk \"Software: gpufilt\"");

    rc = write_file(path2, whole, &s, &e);
    size_t len2 = 0;
    unsigned char *b2 = read_file(path2, &len2);
    CHECK(rc == 0 && b && b2 && len2 == len && memcmp(b, b2, len) == 0,
          "whole: returned %d, %zu bytes, not the %zu bytes of the bands", rc, len2, len);
    free(b);
    free(b2);
}

static void check_errors(void)
{
    FILE *f = fopen("/dev/full", "wb");
    if (f) {
        setvbuf(f, NULL, _IONBF, 0); /* the first write fails, not a flush after it */
        source s = {.count = BAND};
        gf_png_error e;
        const int rc = gf_png_write(f, W, H, bands, &s, &e);
        CHECK(rc == GF_EXIT_OUTPUT && strcmp(e.libpng, "Write Error") == 0 && e.errnum == ENOSPC,
              "/dev/full: returned %d, libpng '%s', errno %d, not %d, 'Write Error', ENOSPC", rc,
              e.libpng, e.errnum, GF_EXIT_OUTPUT);
        fclose(f);
    } else {
        fprintf(stderr, "test_png_write: note: no /dev/full, the full disk not checked\n");
    }

    f = tmpfile();
    CHECK(f != NULL, "tmpfile: %s", strerror(errno));
    if (!f)
        return;
    source s = {.count = 0};
    gf_png_error e;
    const int rc = gf_png_write(f, W, H, bands, &s, &e);
    CHECK(rc == GF_EXIT_OUTPUT && strcmp(e.libpng, "no rows to write") == 0 && e.errnum == 0,
          "no rows: returned %d, libpng '%s', errno %d", rc, e.libpng, e.errnum);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_png_write WORKDIR\n");
        return 2;
    }
    mkdir(argv[1], 0777);
    check_bands(argv[1]);
    check_errors();
    if (failures) {
        fprintf(stderr, "test_png_write: %d FAILED\n", failures);
        return 1;
    }
    printf("test_png_write: bands and whole pictures give the same exact pixels; a full disk "
           "and missing rows fail with their messages\n");
    return 0;
}
