/*
 * The CLI's three stages: a reader thread (decode and convert to samples),
 * the engine on the calling thread, and a writer thread (quantise, encode,
 * write). Blocks circulate through bounded queues, so reading, filtering and
 * writing overlap and memory stays bounded.
 */
#ifndef GF_STAGES_H
#define GF_STAGES_H

#include "gpufilt.h"
#include "io/io.h"

#include <signal.h>
#include <stdatomic.h>

#include <pthread.h>
#include <stddef.h>

#define GF_STAGE_BLOCKS 4

typedef struct gf_block {
    void *data;    /* capacity frames */
    size_t frames; /* frames held; 0 marks the end of the stream */
} gf_block;

/* A bounded queue of blocks (single producer, single consumer): a pool's
 * blocks plus the end marker. */
typedef struct gf_blockq {
    gf_block *items[GF_STAGE_BLOCKS + 1];
    int head, count, closed;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} gf_blockq;

typedef struct gf_stages {
    gf_source *src;
    gf_sink *sink;
    gf_precision precision;
    size_t capacity;     /* frames per input block */
    size_t out_capacity; /* frames per output block (>= capacity) */
    gf_block in_blocks[GF_STAGE_BLOCKS], out_blocks[GF_STAGE_BLOCKS];
    gf_blockq in_free, in_full, out_free, out_full;
    pthread_t reader, writer;
    int started;
    atomic_int writer_done; /* the writer thread has returned */
    /* Set by the stage that failed, read after its queue says so. */
    int read_failed, write_failed;
    int write_rc; /* the failed write's exit code */
    char read_err[512], write_err[512];
} gf_stages;

/* Allocate blocks (input: capacity frames, output: out_capacity) and start
 * both threads. Returns 0, or GF_EXIT_INTERNAL (out of memory or no
 * thread) with nothing left running. */
int gf_stages_start(gf_stages *st, gf_source *src, gf_sink *sink, gf_precision p, size_t capacity,
                    size_t out_capacity);

/* Next block of input; frames == 0 at the end (read_failed tells an error
 * from EOF). NULL when *stop became non-zero while waiting (checked every
 * 50 ms), or after `timeout` seconds when timeout >= 0. Give it back with
 * gf_stages_done_input. */
gf_block *gf_stages_input(gf_stages *st, const volatile sig_atomic_t *stop, double timeout);
void gf_stages_done_input(gf_stages *st, gf_block *b);

/* An empty output block to fill, and handing it to the writer. NULL from
 * gf_stages_output when the writer has failed, or when *stop has been set
 * for 2 s and the writer still holds every block (a stalled pipe). */
gf_block *gf_stages_output(gf_stages *st, const volatile sig_atomic_t *stop);
void gf_stages_write(gf_stages *st, gf_block *b);

/* End the stream: the writer writes what it was given and stops.
 * Returns 0; the write's exit code (GF_EXIT_OUTPUT, or GF_EXIT_PIPE when
 * the reader of a pipe went away; write_err says why) when a write failed;
 * or GF_EXIT_INTERRUPTED when *stop was set and the writer could not finish
 * within 2 s (a stalled pipe: the stages are aborted). */
int gf_stages_finish(gf_stages *st, const volatile sig_atomic_t *stop);

/* Stop both threads at once (after an error or a signal) and free. A reader
 * blocked on a pipe is interrupted. */
void gf_stages_abort(gf_stages *st);

#endif /* GF_STAGES_H */
