/*
 * Histogram glue (hist.h): which frames of the histogrammed stream each
 * chunk holds, merging each chunk's partials in stream order as its slot is
 * seen ready, the last short block after flush, and gf_engine_hist_next.
 */
#include "engine_internal.h"

#include <stdio.h>

void gf_eng_hist_chunk(gf_engine *e, gf_slot *sl, gf_chunk *c, size_t frames, size_t out_frames)
{
    if (e->hist) {
        uint64_t pos = e->out_submitted;
        size_t n = out_frames;
        if (e->hist_plan.of_input) {
            /* Flush zeros come after every real frame: only real ones count,
             * and a chunk of zeros sits at the end of the input stream. */
            const uint64_t real = e->in_real > e->in_submitted ? e->in_real - e->in_submitted : 0;
            pos = e->in_submitted < e->in_real ? e->in_submitted : e->in_real;
            n = real < frames ? (size_t)real : frames;
        }
        c->hist = sl->hparts;
        c->hist_pos = sl->hpos = pos;
        c->hist_frames = sl->hframes = n;
    }
    e->in_submitted += frames;
    e->out_submitted += out_frames;
}

static gf_status hist_fail(gf_engine *e, gf_status st)
{
    e->failed = st;
    snprintf(e->err, sizeof e->err, "%s",
             st == GF_ERR_NO_MEMORY ? "histograms: cannot grow the queue of records"
                                    : "histograms: chunk merged out of stream order");
    return st;
}

gf_status gf_eng_hist_merge(gf_engine *e, gf_slot *sl)
{
    if (!e->hist)
        return GF_OK;
    gf_status st = gf_hist_merge(e->hist, sl->hparts, sl->hpos, sl->hframes);
    return st == GF_OK ? GF_OK : hist_fail(e, st);
}

gf_status gf_eng_set_ready(gf_engine *e, int s)
{
    e->slot[s].ready = 1;
    return gf_eng_hist_merge(e, &e->slot[s]);
}

gf_status gf_eng_hist_check_end(gf_engine *e)
{
    if (!e->hist || e->failed || !e->flushed || e->zeros_left > 0 || (e->filling && e->filled > 0))
        return GF_OK;
    for (int i = 0; i < e->nsub; i++)
        if (!e->slot[(e->head + i) % e->nslots].ready)
            return GF_OK;
    gf_status st = gf_hist_finish(e->hist);
    return st == GF_OK ? GF_OK : hist_fail(e, st);
}

/* Mark the slots the backend has finished, oldest first, without waiting. */
static void hist_poll(gf_engine *e)
{
    for (int i = 0; i < e->nsub; i++) {
        const int s = (e->head + i) % e->nslots;
        if (e->slot[s].ready)
            continue;
        int done = 0;
        gf_status st = gf_eng_query(e, s, &done);
        if (st != GF_OK) {
            gf_eng_fail(e, st);
            return;
        }
        if (!done || gf_eng_set_ready(e, s) != GF_OK)
            return;
    }
    gf_eng_hist_check_end(e);
}

gf_status gf_engine_hist_next(gf_engine *e, gf_hist_record *rec)
{
    if (!e || !rec)
        return GF_ERR_INVALID_ARGUMENT;
    if (!e->hist)
        return GF_ERR_STATE;
    if (!e->failed)
        hist_poll(e);
    /* Records completed before a failure are sound: they go out first. */
    if (gf_hist_pop(e->hist, rec))
        return GF_OK;
    return e->failed ? e->failed : GF_NO_RECORD;
}
