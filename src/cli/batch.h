/*
 * --out-dir's parts (batch.c), shared by gpufilt's batch, which filters the
 * files one after another, and gpufilt-mpi's, which deals them to ranks:
 * the plan (the inputs, their outputs under DIR, DIR made) and one file's
 * step, so that every file is filtered, skipped or failed the same way.
 */
#ifndef GF_BATCH_H
#define GF_BATCH_H

#include "cli.h"

#include <signal.h>
#include <stddef.h>

typedef struct gf_batch {
    char **in;  /* inputs: argv's and --in-list's */
    char **out; /* their outputs under DIR */
    size_t n, cap;
    char *list_text; /* --in-list's contents, which in[] points into */
} gf_batch;

/* The inputs (in[0..nin) and o->in_list's), each with its output under
 * o->out_dir, which is made if missing: 0, or an exit code after one line
 * (no inputs, '-', two inputs with one output, DIR not a directory). *b
 * must be zeroed; gf_batch_free releases it either way. */
int gf_batch_plan(const gf_cli_options *o, int nin, char **in, gf_batch *b);
void gf_batch_free(gf_batch *b);

/* File i: with --skip-existing an output already there is skipped
 * (*skipped = 1, returns 0); else it is filtered as gpufilt IN OUT does
 * (quiet, with its own copy of t). Returns 0 when done, GF_EXIT_INTERRUPTED
 * after a signal (the file not written, nothing more said), else the
 * file's exit code after its own line(s) and one saying the batch goes
 * on. */
int gf_batch_file(const gf_cli_options *o, const gf_taps *t, const gf_batch *b, size_t i,
                  volatile sig_atomic_t *stop, int *skipped);

/* Whether the GPU is in play for a batch whose largest input is `largest`:
 * --device cuda, --gpus, or for --device auto the policy's answer for that
 * file (its header read here). Its workers (gpufilt-mpi: its ranks) then
 * run on a started GPU (gf_cli_options.gpu_warm). */
int gf_batch_gpu_in_play(const gf_cli_options *o, const gf_taps *t, const char *largest);

#endif /* GF_BATCH_H */
