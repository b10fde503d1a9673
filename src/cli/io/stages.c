#include "io/stages.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Timed waits run on the monotonic clock (gf_now's). */
static void q_init(gf_blockq *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &a);
    pthread_condattr_destroy(&a);
}

static void q_destroy(gf_blockq *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

/* Wait on q's condition (q->mu held) for `step` seconds at most from now. */
static void q_wait_for(gf_blockq *q, double now, double step)
{
    const double until = now + step;
    struct timespec t = {.tv_sec = (time_t)until};
    t.tv_nsec = (long)((until - (double)t.tv_sec) * 1e9);
    pthread_cond_timedwait(&q->cv, &q->mu, &t);
}

/* 1 once *stop has been set for `grace` seconds (*since: when it was first
 * seen set, -1 before; now: the clock). */
static int stop_held(const volatile sig_atomic_t *stop, double *since, double now, double grace)
{
    if (!*stop)
        return 0;
    if (*since < 0)
        *since = now;
    return now - *since >= grace;
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

/* q_pop that gives up (NULL) once *stop has been set for `grace` seconds,
 * looking every 50 ms (the signal handler cannot wake a condition
 * variable), or after `timeout` seconds when timeout >= 0. */
static gf_block *q_pop_or_stop(gf_blockq *q, const volatile sig_atomic_t *stop, double grace,
                               double timeout)
{
    gf_block *b = NULL;
    double since = -1, start = -1;
    pthread_mutex_lock(&q->mu);
    while (q->count == 0 && !q->closed) {
        const double now = gf_now();
        if (start < 0)
            start = now;
        if ((timeout >= 0 && now - start >= timeout) || stop_held(stop, &since, now, grace))
            break;
        double step = 0.05;
        if (timeout >= 0 && timeout - (now - start) < step)
            step = timeout - (now - start) + 1e-9;
        q_wait_for(q, now, step);
    }
    if (!q->closed && q->count > 0) {
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

/* The reader may be cancelled only inside the source's read (a container
 * on a pipe, read by libsndfile, cannot be woken otherwise). */
static void *reader_main(void *arg)
{
    gf_stages *st = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    for (;;) {
        gf_block *b = q_pop(&st->in_free);
        if (!b)
            return NULL; /* aborted */
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        int64_t n = st->src->ops->read(st->src, st->precision, b->data, st->capacity, st->read_err,
                                       sizeof st->read_err);
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
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

static void on_wake(int sig)
{
    (void)sig; /* only to interrupt a blocked write(2) */
}

/* The signal that interrupts the writer's write(2) on abort: SIGURG, which
 * is ignored by default, so that none a user sends (SIGUSR1 is one that
 * stops a run) is taken for it. */
#define WAKE_SIGNAL SIGURG

static void *writer_main(void *arg)
{
    gf_stages *st = arg;
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, WAKE_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
    for (;;) {
        gf_block *b = q_pop(&st->out_full);
        if (!b || b->frames == 0) {
            /* Told under out_free's lock, on its condition: wait_writer. */
            pthread_mutex_lock(&st->out_free.mu);
            atomic_store(&st->writer_done, 1);
            pthread_cond_broadcast(&st->out_free.cv);
            pthread_mutex_unlock(&st->out_free.mu);
            return NULL;
        }
        if (!st->write_failed &&
            (st->write_rc = st->sink->ops->write(st->sink, st->precision, b->data, b->frames,
                                                 st->write_err, sizeof st->write_err)) != 0) {
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

int gf_stages_start(gf_stages *st, gf_source *src, gf_sink *sink, gf_precision p, size_t capacity,
                    size_t out_capacity)
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
    st->out_capacity = out_capacity;
    /* The output may have other channels than the input (a matrix filter). */
    const size_t ss = p == GF_PRECISION_F32 ? 4 : 8;
    const size_t fb = (size_t)src->fmt.channels * ss, ofb = (size_t)sink->fmt.channels * ss;
    for (int i = 0; i < GF_STAGE_BLOCKS; i++) {
        st->in_blocks[i].data = malloc(capacity * fb);
        st->out_blocks[i].data = malloc(out_capacity * ofb);
        if (!st->in_blocks[i].data || !st->out_blocks[i].data) {
            free_blocks(st);
            return GF_EXIT_INTERNAL;
        }
        q_push(&st->in_free, &st->in_blocks[i]);
        q_push(&st->out_free, &st->out_blocks[i]);
    }
    /* WAKE_SIGNAL without SA_RESTART interrupts the writer's write(2) on
     * abort (a pipe whose reader stopped reading). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_wake;
    sigemptyset(&sa.sa_mask);
    sigaction(WAKE_SIGNAL, &sa, NULL);
    /* Signals go to the main thread, which watches for them: the threads
     * block every one but the faults. */
    sigset_t block, old;
    sigfillset(&block);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&block, faults[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = GF_EXIT_INTERNAL;
    if (pthread_create(&st->reader, NULL, reader_main, st) != 0) {
        free_blocks(st);
        goto out;
    }
    if (pthread_create(&st->writer, NULL, writer_main, st) != 0) {
        q_close(&st->in_free);
        pthread_join(st->reader, NULL);
        free_blocks(st);
        goto out;
    }
    st->started = 1;
    rc = 0;
out:
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

gf_block *gf_stages_input(gf_stages *st, const volatile sig_atomic_t *stop, double timeout)
{
    return q_pop_or_stop(&st->in_full, stop, 0, timeout);
}

void gf_stages_done_input(gf_stages *st, gf_block *b)
{
    q_push(&st->in_free, b);
}

gf_block *gf_stages_output(gf_stages *st, const volatile sig_atomic_t *stop)
{
    gf_block *b = q_pop_or_stop(&st->out_free, stop, 2.0, -1);
    if (b)
        b->frames = 0;
    return b;
}

void gf_stages_write(gf_stages *st, gf_block *b)
{
    q_push(&st->out_full, b);
}

static void stop_reader(gf_stages *st)
{
    q_close(&st->in_free);
    if (st->src->ops->interrupt)
        st->src->ops->interrupt(st->src);
    else if (st->src->streaming)
        pthread_cancel(st->reader);
}

static void join_and_free(gf_stages *st)
{
    pthread_join(st->reader, NULL);
    pthread_join(st->writer, NULL);
    st->started = 0;
    free_blocks(st);
}

/* Wait until the writer has returned; 0 once *stop has been set for
 * `grace` seconds first. The writer says so on out_free's condition; *stop
 * (a signal handler's, which cannot wake it) is looked at every 50 ms. */
static int wait_writer(gf_stages *st, const volatile sig_atomic_t *stop, double grace)
{
    gf_blockq *q = &st->out_free;
    double since = -1;
    pthread_mutex_lock(&q->mu);
    while (!atomic_load(&st->writer_done)) {
        const double now = gf_now();
        if (stop_held(stop, &since, now, grace))
            break;
        q_wait_for(q, now, 0.05);
    }
    const int done = atomic_load(&st->writer_done);
    pthread_mutex_unlock(&q->mu);
    return done;
}

int gf_stages_finish(gf_stages *st, const volatile sig_atomic_t *stop)
{
    static gf_block end = {NULL, 0};
    q_push(&st->out_full, &end);
    /* Wait for the writer; after a signal, for 2 s at most. */
    if (!wait_writer(st, stop, 2.0)) {
        gf_stages_abort(st);
        return GF_EXIT_INTERRUPTED;
    }
    pthread_join(st->writer, NULL);
    stop_reader(st); /* it has stopped at EOF, unless a signal ended the stream */
    pthread_join(st->reader, NULL);
    st->started = 0;
    const int rc = st->write_failed ? st->write_rc : 0;
    free_blocks(st);
    return rc;
}

void gf_stages_abort(gf_stages *st)
{
    if (!st->started)
        return;
    q_close(&st->in_free);
    q_close(&st->in_full);
    q_close(&st->out_free);
    q_close(&st->out_full);
    stop_reader(st);
    /* A writer blocked on a stalled pipe: interrupt its write until it
     * notices (the sink gives up on EINTR once told to stop). */
    st->sink->stop_writes = 1;
    while (!atomic_load(&st->writer_done)) {
        pthread_kill(st->writer, WAKE_SIGNAL);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    join_and_free(st);
}
