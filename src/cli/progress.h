/* A progress bar on stderr, drawn only when stderr is a terminal. */
#ifndef GF_PROGRESS_H
#define GF_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gf_progress {
    int enabled;
    int64_t total; /* frames, or <= 0 when unknown */
    double last;   /* time of the last redraw */
    int drawn;
} gf_progress;

/* Enabled when !quiet, stderr is a terminal and the total is known. */
void gf_progress_init(gf_progress *p, int64_t total_frames, int quiet);
/* Redraw at most ten times a second. */
void gf_progress_update(gf_progress *p, int64_t done_frames);
/* A batch's bar (total: bytes of input): the bytes of the files done,
 * and "N/M files". Redrawn at most ten times a second. */
void gf_progress_files(gf_progress *p, int64_t done_bytes, size_t files, size_t total_files);
/* Erase the bar. */
void gf_progress_end(gf_progress *p);

#endif /* GF_PROGRESS_H */
