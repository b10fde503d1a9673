#include "stages.h"

#include <stdlib.h>
#include <string.h>

static void q_init(gf_blockq *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
}

static void q_destroy(gf_blockq *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

/* Queues never overflow: each holds at most its pool and the end marker. */
static void q_push(gf_blockq *q, gf_block *b)
{
    pthread_mutex_lock(&q->mu);
    q->items[(q->head + q->count) % (GF_STAGE_BLOCKS + 1)] = b;
    q->count++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* Wait for a block; NULL once the queue is closed. */
static gf_block *q_pop(gf_blockq *q)
{
    gf_block *b = NULL;
    pthread_mutex_lock(&q->mu);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->cv, &q->mu);
    if (!q->closed) {
        b = q->items[q->head];
        q->head = (q->head + 1) % (GF_STAGE_BLOCKS + 1);
        q->count--;
    }
    pthread_mutex_unlock(&q->mu);
    return b;
}

static void q_close(gf_blockq *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void *reader_main(void *arg)
{
    gf_stages *st = arg;
    for (;;) {
        gf_block *b = q_pop(&st->in_free);
        if (!b)
            return NULL; /* aborted */
        int64_t n = gf_source_read(st->src, st->precision, b->data, st->capacity, st->read_err,
                                   sizeof st->read_err);
        if (n < 0) {
            st->read_failed = 1;
            n = 0;
        }
        b->frames = (size_t)n;
        q_push(&st->in_full, b);
        if (n == 0)
            return NULL;
    }
}

static void *writer_main(void *arg)
{
    gf_stages *st = arg;
    for (;;) {
        gf_block *b = q_pop(&st->out_full);
        if (!b || b->frames == 0)
            return NULL;
        if (!st->write_failed && gf_sink_write(st->sink, st->precision, b->data, b->frames,
                                               st->write_err, sizeof st->write_err) != 0) {
            st->write_failed = 1;
            /* Tell the engine side at once: it waits on out_free. */
            q_close(&st->out_free);
        }
        q_push(&st->out_free, b);
    }
}

static void free_blocks(gf_stages *st)
{
    for (int i = 0; i < GF_STAGE_BLOCKS; i++) {
        free(st->in_blocks[i].data);
        free(st->out_blocks[i].data);
        st->in_blocks[i].data = st->out_blocks[i].data = NULL;
    }
    q_destroy(&st->in_free);
    q_destroy(&st->in_full);
    q_destroy(&st->out_free);
    q_destroy(&st->out_full);
}

int gf_stages_start(gf_stages *st, gf_source *src, gf_sink *sink, gf_precision p, size_t capacity)
{
    memset(st, 0, sizeof *st);
    st->src = src;
    st->sink = sink;
    st->precision = p;
    st->capacity = capacity;
    q_init(&st->in_free);
    q_init(&st->in_full);
    q_init(&st->out_free);
    q_init(&st->out_full);
    const size_t bytes = capacity * (size_t)src->info.channels * (p == GF_PRECISION_F32 ? 4 : 8);
    for (int i = 0; i < GF_STAGE_BLOCKS; i++) {
        st->in_blocks[i].data = malloc(bytes);
        st->out_blocks[i].data = malloc(bytes);
        if (!st->in_blocks[i].data || !st->out_blocks[i].data) {
            free_blocks(st);
            return -1;
        }
        q_push(&st->in_free, &st->in_blocks[i]);
        q_push(&st->out_free, &st->out_blocks[i]);
    }
    if (pthread_create(&st->reader, NULL, reader_main, st) != 0) {
        free_blocks(st);
        return -1;
    }
    if (pthread_create(&st->writer, NULL, writer_main, st) != 0) {
        q_close(&st->in_free);
        pthread_join(st->reader, NULL);
        free_blocks(st);
        return -1;
    }
    st->started = 1;
    return 0;
}

gf_block *gf_stages_input(gf_stages *st)
{
    return q_pop(&st->in_full);
}

void gf_stages_done_input(gf_stages *st, gf_block *b)
{
    q_push(&st->in_free, b);
}

gf_block *gf_stages_output(gf_stages *st)
{
    gf_block *b = q_pop(&st->out_free);
    if (b)
        b->frames = 0;
    return b;
}

void gf_stages_write(gf_stages *st, gf_block *b)
{
    q_push(&st->out_full, b);
}

static void join_and_free(gf_stages *st)
{
    pthread_join(st->reader, NULL);
    pthread_join(st->writer, NULL);
    st->started = 0;
    free_blocks(st);
}

int gf_stages_finish(gf_stages *st)
{
    static gf_block end = {NULL, 0};
    q_push(&st->out_full, &end);
    pthread_join(st->writer, NULL);
    q_close(&st->in_free); /* the reader has stopped at EOF; in case not */
    pthread_join(st->reader, NULL);
    st->started = 0;
    const int failed = st->write_failed;
    free_blocks(st);
    return failed ? -1 : 0;
}

void gf_stages_abort(gf_stages *st)
{
    if (!st->started)
        return;
    q_close(&st->in_free);
    q_close(&st->in_full);
    q_close(&st->out_free);
    q_close(&st->out_full);
    join_and_free(st);
}
