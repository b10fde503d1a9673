/*
 * Histogram output for the CLI: the engine's per-block records
 * (gf_hist_record, see gpufilt.h) written as
 *
 *   --hist FILE      CSV, or JSON lines when FILE ends in .json, .jsonl or
 *                    .ndjson (any case); streamed: each block's records are
 *                    written and flushed as soon as the block's last record
 *                    arrives;
 *   --hist-png FILE  a heat map over time (blocks across, amplitude bins up,
 *                    colour = log(1 + count)), rendered at commit.
 *
 * The formats and the picture's layout are specified in docs/hist-output.md.
 *
 * Both files are written under a temporary name in their own directory,
 * ".NAME.gpufilt-XXXXXX", and renamed into place by gf_hist_out_commit; a
 * failed or interrupted run leaves nothing that looks complete (while the run
 * lasts, `tail -f` the temporary name). Commit may be called at any point of
 * the stream (e.g. after an interrupted live run): the files then hold the
 * records written so far.
 *
 * Memory is bounded on endless streams: the CSV/JSON writer keeps one line
 * buffer (about 21 bytes per bin), the picture at most 32 MiB of column data
 * (columns merge pairwise, halving the time resolution, beyond a cap).
 *
 * Not thread-safe: one handle is used by one thread at a time.
 */
#ifndef GF_HIST_OUT_H
#define GF_HIST_OUT_H

#include "gpufilt.h"
#include "io/outfile.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gf_hist_out gf_hist_out;

/*
 * Create the temporary file(s). csv_path (--hist) and/or png_path
 * (--hist-png) may be NULL; with both NULL, *out is NULL and 0 is returned
 * (and the other calls accept that NULL as "nothing to do"). hc is copied
 * and must be valid (bins 1..65536, block_frames >= 1, finite lo < hi);
 * channels 1..GF_MAX_CHANNELS; rate in Hz, 0 = unknown.
 * Returns 0 with *out set, or an exit code with *out NULL and a one-line
 * message naming the file in err[0..n):
 *   GF_EXIT_USAGE    a path is "" or "-", or both paths name the same file;
 *   GF_EXIT_OUTPUT   a path is a directory, its directory does not exist,
 *                    or the temporary file cannot be created;
 *   GF_EXIT_INTERNAL out of memory, or an invalid hc/channels.
 */
int gf_hist_out_open(gf_hist_out **out, const char *csv_path, const char *png_path,
                     const gf_hist_config *hc, int channels, int rate, char *err, size_t n);

/* What gf_hist_out_open leaves at its defaults (all zero). */
typedef struct gf_hist_out_opts {
    /* How both files are opened: the input refused, --force, notices
     * (outfile.h). */
    gf_outfile_opts out;
    /* Bytes the CSV/JSON file may reach, 0 for no limit: a record that
     * would take it further fails gf_hist_out_write with GF_EXIT_OUTPUT
     * and a message naming --hist-limit. */
    uint64_t csv_limit;
} gf_hist_out_opts;

/* gf_hist_out_open with options; opts may be NULL (the defaults). */
int gf_hist_out_create(gf_hist_out **out, const char *csv_path, const char *png_path,
                       const gf_hist_config *hc, int channels, int rate,
                       const gf_hist_out_opts *opts, char *err, size_t n);

/* The least bytes a --hist file takes for `records` records of `bins`
 * bins (every count written as one digit), header included: for warning
 * about, or refusing, a file that would be huge before writing it. */
uint64_t gf_hist_out_min_bytes(uint64_t records, size_t bins);

/*
 * Take one record, in stream order: by block, then by channel (channel -1
 * when hc->mix, else 0..channels-1, and r->bins holds hc->bins counts).
 * The record is copied; r may be reused at once. After a block's last
 * record (channel -1 or channels-1) the CSV/JSON file is flushed.
 * Returns 0, or an exit code with err set: GF_EXIT_OUTPUT when writing
 * failed (e.g. disk full), GF_EXIT_INTERNAL for a record that breaks the
 * order or the config. After an error only gf_hist_out_abort is useful.
 */
int gf_hist_out_write(gf_hist_out *h, const gf_hist_record *r, char *err, size_t n);

/*
 * Finish: close the CSV/JSON file, render and write the PNG, then rename
 * both into place. Always frees the handle and sets *h to NULL (NULL or
 * *h == NULL: returns 0). On failure the temporaries are removed and an exit
 * code (GF_EXIT_OUTPUT, GF_EXIT_INTERNAL) is returned with err set; a file
 * already renamed into place before a later rename failed stays (it is
 * complete).
 */
int gf_hist_out_commit(gf_hist_out **h, char *err, size_t n);

/*
 * Give up: remove the temporary files, free the handle, set *h to NULL.
 * h == NULL or *h == NULL is a no-op, so it is safe after commit.
 */
void gf_hist_out_abort(gf_hist_out **h);

/*
 * The temporary name the --hist file (png 0) or the --hist-png picture
 * (png 1) is written under, or NULL (none, or committed): for a program
 * that must remove it when it is killed (gpufilt-mpi's signal handler).
 */
const char *gf_hist_out_tmp_name(const gf_hist_out *h, int png);

/*
 * Bytes of memory the handle holds for the picture's columns (for tests
 * and statistics); bounded by 32 MiB whatever the stream's length.
 */
size_t gf_hist_out_png_memory(const gf_hist_out *h);

#endif /* GF_HIST_OUT_H */
