/*
 * Configurations: the defaults, and gf_config_check, where every rule the
 * rest of the library relies on is checked once (backend.h restates what
 * backends may then assume).
 */
#include "engine_internal.h"

#include <math.h>
#include <string.h>

gf_config gf_config_default(void)
{
    gf_config c;
    memset(&c, 0, sizeof c);
    c.channels = 1;
    c.num_taps = 1;
    c.mode = GF_MODE_SAME;
    c.precision = GF_PRECISION_F32;
    c.device = GF_DEVICE_AUTO;
    c.handoff = GF_DEVICE_NONE;
    return c;
}

/* The histogram settings (c->hist). */
static gf_status check_hist(const gf_hist_config *h, char *detail, size_t n)
{
    if (h->bins < 1 || h->bins > GF_HIST_MAX_BINS) {
        gf_detail(detail, n, "hist.bins %zu out of range 1..%zu", h->bins, GF_HIST_MAX_BINS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (h->block_frames < 1 || h->block_frames > GF_HIST_MAX_BLOCK) {
        gf_detail(detail, n, "hist.block_frames %zu out of range 1..%zu", h->block_frames,
                  GF_HIST_MAX_BLOCK);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(h->lo) || !isfinite(h->hi)) {
        gf_detail(detail, n, "hist.lo (%g) and hist.hi (%g) must both be finite", h->lo, h->hi);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (!(h->lo < h->hi)) {
        gf_detail(detail, n, "hist.lo (%g) must be below hist.hi (%g)", h->lo, h->hi);
        return GF_ERR_INVALID_ARGUMENT;
    }
    /* The bin rule needs hi - lo and bins / (hi - lo) as finite doubles. */
    if (!isfinite(h->hi - h->lo) || !isfinite((double)h->bins / (h->hi - h->lo))) {
        gf_detail(detail, n,
                  "hist.lo..hist.hi (%g..%g) with %zu bins: hi - lo or bins / (hi - lo) "
                  "is not a finite double",
                  h->lo, h->hi, h->bins);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (h->of_input != 0 && h->of_input != 1) {
        gf_detail(detail, n, "hist.of_input %d is not 0 or 1", h->of_input);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (h->mix != 0 && h->mix != 1) {
        gf_detail(detail, n, "hist.mix %d is not 0 or 1", h->mix);
        return GF_ERR_INVALID_ARGUMENT;
    }
    return GF_OK;
}

/* Every coefficient finite in the precision. It reads all channels x num_taps
 * (or num_taps) values: that the array holds them is the caller's obligation
 * (gpufilt.h, gf_config.taps), since a pointer carries no length. */
static gf_status check_taps(const gf_config *c, char *detail, size_t n)
{
    const size_t filters = c->outputs            ? (size_t)c->channels * (size_t)c->outputs
                           : c->taps_per_channel ? (size_t)c->channels
                                                 : 1;
    const size_t total = c->num_taps * filters;
    for (size_t k = 0; k < total; k++) {
        double h = c->taps[k];
        if (!isfinite(h) || (c->precision == GF_PRECISION_F32 && !isfinite((float)h))) {
            if (c->outputs)
                gf_detail(detail, n,
                          "coefficient %zu of filter %zu (input %zu to output %zu) (%g) is not "
                          "finite in the precision",
                          k % c->num_taps + 1, k / c->num_taps + 1,
                          k / c->num_taps / (size_t)c->outputs + 1,
                          k / c->num_taps % (size_t)c->outputs + 1, h);
            else if (c->taps_per_channel)
                gf_detail(detail, n,
                          "coefficient %zu of channel %zu (%g) is not finite in the precision",
                          k % c->num_taps + 1, k / c->num_taps + 1, h);
            else
                gf_detail(detail, n, "coefficient %zu (%g) is not finite in the precision", k + 1,
                          h);
            return GF_ERR_INVALID_ARGUMENT;
        }
    }
    return GF_OK;
}

/* Several GPUs: 0 .. GF_MAX_DEVICES ordinals, each >= 0 (whether they
 * exist is the backend's to say). */
static gf_status check_devices(const gf_config *c, char *detail, size_t n)
{
    if (c->cuda_device_count < 0 || c->cuda_device_count > GF_MAX_DEVICES ||
        (c->cuda_device_count > 0 && !c->cuda_devices)) {
        gf_detail(detail, n, "cuda_device_count %d: 0 .. %d ordinals in cuda_devices",
                  c->cuda_device_count, GF_MAX_DEVICES);
        return GF_ERR_INVALID_ARGUMENT;
    }
    for (int d = 0; d < c->cuda_device_count; d++)
        if (c->cuda_devices[d] < 0) {
            gf_detail(detail, n, "cuda_devices[%d] is %d, not a device ordinal", d,
                      c->cuda_devices[d]);
            return GF_ERR_INVALID_ARGUMENT;
        }
    return GF_OK;
}

/* A matrix (c->outputs): its size, explicit taps, and what cannot go with
 * it (which method can is create's to say). */
static gf_status check_matrix(const gf_config *c, char *detail, size_t n)
{
    if (c->outputs < 0 || c->outputs > GF_MAX_CHANNELS) {
        gf_detail(detail, n, "outputs %d out of range 0..%d", c->outputs, GF_MAX_CHANNELS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->outputs && !c->taps) {
        gf_detail(detail, n, "a matrix (outputs %d) needs explicit taps", c->outputs);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->outputs && c->hist) {
        gf_detail(detail, n, "a matrix (outputs %d) takes no histograms", c->outputs);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->outputs && c->handoff != GF_DEVICE_NONE) {
        gf_detail(detail, n, "a matrix (outputs %d) takes no hand-off", c->outputs);
        return GF_ERR_INVALID_ARGUMENT;
    }
    return GF_OK;
}

gf_status gf_config_check(const gf_config *c, char *detail, size_t n)
{
    if (c->channels < 1 || c->channels > GF_MAX_CHANNELS) {
        gf_detail(detail, n, "channels %d out of range 1..%d", c->channels, GF_MAX_CHANNELS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->method != GF_METHOD_AUTO && !gf_method_ops_of(c->method)) {
        gf_detail(detail, n, "unknown method %d", (int)c->method);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->method == GF_METHOD_DIRECT && (c->num_taps < 1 || c->num_taps > GF_MAX_TAPS)) {
        gf_detail(detail, n, "taps %zu out of range 1..%d for the direct method", c->num_taps,
                  GF_MAX_TAPS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->num_taps < 1 || c->num_taps > GF_MAX_FFT_TAPS) {
        gf_detail(detail, n, "taps %zu out of range 1..%zu", c->num_taps, GF_MAX_FFT_TAPS);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->partition && (c->partition < GF_MIN_PARTITION || c->partition > GF_MAX_PARTITION ||
                         (c->partition & (c->partition - 1)))) {
        gf_detail(detail, n, "partition %zu is not a power of two in %zu..%zu", c->partition,
                  GF_MIN_PARTITION, GF_MAX_PARTITION);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->mode != GF_MODE_SAME && c->mode != GF_MODE_CAUSAL && c->mode != GF_MODE_FULL) {
        gf_detail(detail, n, "unknown mode %d", (int)c->mode);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->taps_per_channel != 0 && c->taps_per_channel != 1) {
        gf_detail(detail, n, "taps_per_channel %d is not 0 or 1", c->taps_per_channel);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->taps_per_channel && !c->taps) {
        gf_detail(detail, n, "taps_per_channel needs explicit taps");
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (check_matrix(c, detail, n) != GF_OK)
        return GF_ERR_INVALID_ARGUMENT;
    if (c->precision != GF_PRECISION_F32 && c->precision != GF_PRECISION_F64) {
        gf_detail(detail, n, "unknown precision %d", (int)c->precision);
        return GF_ERR_INVALID_ARGUMENT;
    }
    /* Device kinds are the registry's (a kind this build lacks included:
     * create then says what is missing). */
    if (c->device != GF_DEVICE_AUTO && !gf_backend_entry_of(c->device)) {
        gf_detail(detail, n, "unknown device %d", (int)c->device);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->handoff == GF_DEVICE_AUTO) {
        gf_detail(detail, n, "hand-off device auto is not a device: GF_DEVICE_NONE for none");
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->handoff != GF_DEVICE_NONE && !gf_backend_entry_of(c->handoff)) {
        gf_detail(detail, n, "unknown hand-off device %d", (int)c->handoff);
        return GF_ERR_INVALID_ARGUMENT;
    }
    /* A hand-off starts on a backend that finishes chunks in submit. */
    const gf_backend_ops *first = gf_backend_of(c->device);
    if (c->handoff != GF_DEVICE_NONE && (!first || first->slots != 1)) {
        gf_detail(detail, n, "a hand-off starts on the cpu or ref device, not device %d",
                  (int)c->device);
        return GF_ERR_INVALID_ARGUMENT;
    }
    const size_t widest = (size_t)(c->outputs > c->channels ? c->outputs : c->channels);
    if (c->chunk_frames > GF_MAX_CHUNK_FRAMES || c->chunk_frames * widest > GF_MAX_CHUNK_SAMPLES) {
        gf_detail(detail, n, "chunk of %zu frames too large (at most %zu frames, %zu samples)",
                  c->chunk_frames, GF_MAX_CHUNK_FRAMES, GF_MAX_CHUNK_SAMPLES);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (check_devices(c, detail, n) != GF_OK)
        return GF_ERR_INVALID_ARGUMENT;
    if (c->threads < 0) {
        gf_detail(detail, n, "threads %d is negative", c->threads);
        return GF_ERR_INVALID_ARGUMENT;
    }
    if (c->hist && check_hist(c->hist, detail, n) != GF_OK)
        return GF_ERR_INVALID_ARGUMENT;
    return c->taps ? check_taps(c, detail, n) : GF_OK;
}
