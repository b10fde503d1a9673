/*
 * What an engine is and does: the getters of gpufilt.h (backend and device
 * kind in use, method, partition, chunk, latency, taps, errors, hand-off,
 * the FFT method's error bound).
 */
#include "engine_internal.h"

#include <math.h>
#include <string.h>

size_t gf_engine_max_pending(const gf_engine *e)
{
    /* The slots, the one being filled, and an incomplete partition carried. */
    return e ? ((size_t)e->nslots + 1) * e->chunk + e->partition : 0;
}

size_t gf_engine_latency(const gf_engine *e)
{
    return e ? e->latency : 0;
}

const char *gf_engine_backend(const gf_engine *e)
{
    return !e ? "" : e->handoff_backend ? e->handoff_ops->name : e->ops->name;
}

gf_device gf_engine_device(const gf_engine *e)
{
    return !e ? GF_DEVICE_AUTO : e->handoff_backend ? e->handoff_ops->device : e->ops->device;
}

size_t gf_engine_chunk_frames(const gf_engine *e)
{
    return e ? e->chunk : 0;
}

const char *gf_engine_error(const gf_engine *e)
{
    return e ? e->err : "";
}

int64_t gf_engine_handoff_frame(const gf_engine *e)
{
    return e ? e->handoff_frame : -1;
}

const char *gf_engine_handoff_error(const gf_engine *e)
{
    if (!e || !e->handoff)
        return e && e->cfg.handoff != GF_DEVICE_NONE && !e->handoff_ops
                   ? "no hand-off: it needs the direct method, and a backend this build has"
                   : "";
    return gf_handoff_poll(e->handoff) < 0 ? gf_handoff_error(e->handoff) : "";
}

gf_status gf_engine_taps(const gf_engine *e, double *taps, size_t capacity)
{
    return gf_engine_channel_taps(e, 0, taps, capacity);
}

gf_status gf_engine_channel_taps(const gf_engine *e, int channel, double *taps, size_t capacity)
{
    if (!e || !taps || capacity < e->num_taps || channel < 0 ||
        (size_t)channel >= (e->cfg.outputs ? e->filters : e->channels))
        return GF_ERR_INVALID_ARGUMENT;
    memcpy(taps, e->taps_d + (e->filters == 1 ? 0 : (size_t)channel * e->num_taps),
           e->num_taps * sizeof(double));
    return GF_OK;
}

void gf_engine_get_config(const gf_engine *e, gf_config *config)
{
    if (!e || !config)
        return;
    *config = e->cfg;
    config->taps = NULL;
    config->hist = NULL;
}

gf_method gf_engine_method(const gf_engine *e)
{
    return e ? e->method : GF_METHOD_AUTO;
}

size_t gf_engine_partition(const gf_engine *e)
{
    return e ? e->partition : 0;
}

double gf_engine_error_bound(const gf_engine *e, int channel, double max_abs_x)
{
    if (!e || channel < 0 || (size_t)channel >= e->out_channels || !(max_abs_x >= 0))
        return NAN;
    return e->mth->error_bound(e, e->taps_d + (e->filters == 1 ? 0 : (size_t)channel * e->num_taps),
                               max_abs_x);
}

int gf_engine_cuda_devices(const gf_engine *e, int *out, int cap)
{
    if (!e || (gf_engine_device(e) != GF_DEVICE_CUDA && !e->multi_cpu)) /* (or the test's) */
        return 0;
    for (int d = 0; d < e->ndev && d < cap; d++)
        out[d] = e->devices[d];
    return e->ndev;
}

uint64_t gf_engine_device_chunks(const gf_engine *e, int i, uint64_t *frames)
{
    const int ok = e && i >= 0 && i < gf_engine_cuda_devices(e, NULL, 0);
    if (frames)
        *frames = ok ? e->dev_frames[i] : 0;
    return ok ? e->dev_chunks[i] : 0;
}

int gf_engine_device_channels(const gf_engine *e, int i, int *first)
{
    int from = 0, count = 0;
    if (e && i >= 0 && i < gf_engine_cuda_devices(e, NULL, 0))
        count = e->ops == &e->multi_ops && e->split == GF_SPLIT_CHANNELS
                    ? gf_multi_share((int)e->channels, e->ndev, i, &from)
                    : (int)e->channels;
    if (first)
        *first = from;
    return count;
}
