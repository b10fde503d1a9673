#include "progress.h"

#include "cli.h"

#include <stdio.h>
#include <unistd.h>

void gf_progress_init(gf_progress *p, int64_t total_frames, int quiet)
{
    p->enabled = !quiet && total_frames > 0 && isatty(STDERR_FILENO);
    p->total = total_frames;
    p->last = 0;
    p->drawn = 0;
}

/* The bar at done / total, then `tail`. */
static void draw(gf_progress *p, int64_t done, const char *tail)
{
    const double t = gf_now();
    if (p->drawn && t - p->last < 0.1)
        return;
    p->last = t;
    p->drawn = 1;
    enum { WIDTH = 40 };
    double frac = (double)done / (double)p->total;
    if (frac > 1)
        frac = 1;
    char bar[WIDTH + 1];
    const int fill = (int)(frac * WIDTH);
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\rgpufilt: [%s] %3d%%%s", bar, (int)(frac * 100), tail);
    fflush(stderr);
}

void gf_progress_update(gf_progress *p, int64_t done)
{
    if (p->enabled)
        draw(p, done, "");
}

void gf_progress_files(gf_progress *p, int64_t done_bytes, size_t files, size_t total_files)
{
    if (!p->enabled)
        return;
    char tail[96], a[32], b[32];
    snprintf(tail, sizeof tail, " %zu/%zu files, %s of %s", files, total_files,
             gf_cli_bytes(a, sizeof a, (uint64_t)done_bytes),
             gf_cli_bytes(b, sizeof b, (uint64_t)p->total));
    draw(p, done_bytes, tail);
}

void gf_progress_end(gf_progress *p)
{
    if (p->enabled && p->drawn)
        fprintf(stderr, "\r%100s\r", "");
}
