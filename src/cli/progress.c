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

void gf_progress_update(gf_progress *p, int64_t done)
{
    if (!p->enabled)
        return;
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
    fprintf(stderr, "\rgpufilt: [%s] %3d%%", bar, (int)(frac * 100));
    fflush(stderr);
}

void gf_progress_end(gf_progress *p)
{
    if (p->enabled && p->drawn)
        fprintf(stderr, "\r%60s\r", "");
}
