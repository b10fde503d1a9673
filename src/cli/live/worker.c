/* The live worker: capture source -> engine -> playback sink (worker.h). */
#include "live/worker.h"
#include "live/rt.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define WORKER_PRIO 5 /* SCHED_FIFO priority tried for the worker */

static int worker_fail(gf_live *lv, gf_engine *e, gf_status st, const char *what)
{
    const char *detail = gf_engine_error(e);
    snprintf(lv->err, sizeof lv->err, "%s backend failed (%s): %s%s%s", gf_engine_backend(e), what,
             gf_strerror(st), *detail ? ": " : "", detail);
    atomic_store_explicit(&lv->failed, 1, memory_order_release);
    return -1;
}

/* Completed histogram records to their files: off the audio thread, after
 * the block's output is on its way. A failed write stops the histograms,
 * not the audio; it is reported at the end. */
static void write_hist(gf_live *lv)
{
    gf_hist_record rec;
    while (lv->hout && !lv->hist_failed && gf_engine_hist_next(lv->e, &rec) == GF_OK)
        if (gf_hist_out_write(lv->hout, &rec, lv->hist_err, sizeof lv->hist_err) != 0)
            lv->hist_failed = 1;
}

/* Filter the n (<= period_frames) frames in lv->in through e into out. */
static int run_engine(gf_live *lv, gf_engine *e, void *out, size_t n)
{
    size_t used = 0;
    gf_status st = gf_engine_push(e, lv->in, n, &used);
    if (st != GF_OK)
        return worker_fail(lv, e, st, "push");
    if (used != n) /* the chunk is one block and every slot is free here */
        return worker_fail(lv, e, GF_ERR_STATE, "push took part of a block");
    st = gf_engine_submit(e);
    if (st == GF_OK)
        st = gf_engine_wait(e);
    if (st != GF_OK)
        return worker_fail(lv, e, st, "submit");
    const size_t fb = (size_t)lv->channels * (lv->prec == GF_PRECISION_F32 ? 4 : 8);
    for (size_t got = 0, done = 0; done < n; done += got) {
        st = gf_engine_pull(e, (unsigned char *)out + done * fb, n - done, &got);
        if (st != GF_OK)
            return worker_fail(lv, e, st, "pull");
        if (got == 0)
            return worker_fail(lv, e, GF_ERR_STATE, "fewer frames out than in");
    }
    return 0;
}

/* A change of filter at this block (worker.h): take a posted one, feed the
 * incoming engine, fade, and hand over once the fade is complete. */
static int switch_block(gf_live *lv, size_t n)
{
    gf_live_switch *sw = &lv->sw;
    int state = atomic_load_explicit(&sw->state, memory_order_acquire);
    if (state == GF_SWITCH_POSTED) {
        gf_live_zero *z = lv->head.taps ? gf_pa_zero_of(lv->link) : NULL;
        if (z) { /* --latency zero: where the callback chose (head.h) */
            if (atomic_load_explicit(&z->head_state, memory_order_acquire) != GF_HEAD_CHOSEN)
                return 0;
            sw->fade_from = z->fade_at - lv->head.taps;
        } else {
            sw->fade_from = lv->frames + sw->warm_blocks * lv->period_frames;
        }
        sw->warm_from = lv->frames;
        atomic_store_explicit(&sw->state, state = GF_SWITCH_TAKEN, memory_order_release);
    }
    if (state != GF_SWITCH_TAKEN)
        return 0;
    if (run_engine(lv, sw->e, lv->out2, n) != 0)
        return -1;
    if (lv->frames + n <= sw->fade_from)
        return 0; /* warming up: its output is not heard yet */
    gf_live_crossfade(lv->out, lv->out2, n, lv->channels, lv->prec == GF_PRECISION_F64, lv->frames,
                      sw->fade_from, sw->fade);
    if (lv->frames + n >= sw->fade_from + sw->fade) {
        sw->old = lv->e;
        lv->e = sw->e;
        atomic_store_explicit(&sw->state, GF_SWITCH_DONE, memory_order_release);
    }
    return 0;
}

/* Filter the n (<= period_frames) frames in lv->in and play them. */
static int process_block(gf_live *lv, size_t n)
{
    gf_engine *e = lv->e;
    if (run_engine(lv, e, lv->out, n) != 0 || switch_block(lv, n) != 0)
        return -1;
    char err[16];
    lv->playback.ops->write(&lv->playback, lv->prec, lv->out, n, err, sizeof err);
    lv->frames += n;
    write_hist(lv);
    return 0;
}

static void *worker_main(void *arg)
{
    gf_live *lv = arg;
    char err[16];
    atomic_store_explicit(&lv->worker_tid, gf_live_tid(), memory_order_relaxed);
    for (;;) {
        const int64_t n = lv->capture.ops->read(&lv->capture, lv->prec, lv->in, lv->period_frames,
                                                err, sizeof err);
        if (n <= 0)
            return NULL; /* interrupted */
        const double t0 = gf_now();
        if (process_block(lv, (size_t)n) != 0)
            return NULL;
        const unsigned long long dt = (unsigned long long)((gf_now() - t0) * 1e9);
        atomic_fetch_add_explicit(&lv->blocks, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&lv->busy_ns_total, dt, memory_order_relaxed);
        unsigned long long m = atomic_load_explicit(&lv->busy_ns_max, memory_order_relaxed);
        while (dt > m && !atomic_compare_exchange_weak(&lv->busy_ns_max, &m, dt)) {
        }
    }
}

int gf_live_worker_start(gf_live *lv)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) == 0) {
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = WORKER_PRIO;
        if (pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
            pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0 &&
            pthread_attr_setschedparam(&attr, &sp) == 0 &&
            pthread_create(&lv->thread, &attr, worker_main, lv) == 0) {
            lv->realtime = 1;
            lv->thread_started = 1;
        }
        pthread_attr_destroy(&attr);
    }
    if (!lv->thread_started && pthread_create(&lv->thread, NULL, worker_main, lv) == 0)
        lv->thread_started = 1;
    if (!lv->thread_started) {
        gf_cli_error("cannot start the worker thread");
        return GF_EXIT_INTERNAL;
    }
    return GF_EXIT_OK;
}

void gf_live_worker_stop(gf_live *lv)
{
    if (!lv->thread_started)
        return;
    lv->capture.ops->interrupt(&lv->capture);
    pthread_join(lv->thread, NULL);
    lv->thread_started = 0;
}

int gf_live_finish_hist(gf_live *lv)
{
    gf_status st = gf_engine_flush(lv->e);
    size_t got = 1;
    while (st == GF_OK && got > 0)
        st = gf_engine_pull(lv->e, lv->out, lv->period_frames, &got);
    if (st != GF_OK) {
        gf_cli_error("histograms: the filter failed at the end: %s", gf_strerror(st));
        return GF_EXIT_DEVICE;
    }
    write_hist(lv);
    int rc = 0;
    if (lv->hist_failed ||
        (rc = gf_hist_out_commit(&lv->hout, lv->hist_err, sizeof lv->hist_err)) != 0) {
        gf_cli_error("%s", lv->hist_err);
        return rc ? rc : GF_EXIT_OUTPUT;
    }
    return GF_EXIT_OK;
}
