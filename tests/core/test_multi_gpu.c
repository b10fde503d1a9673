/*
 * Several CUDA devices in one engine (gf_config.cuda_devices): the output
 * is the bytes one device gives, for the direct and the FFT method, every
 * mode, f32 and f64, one filter and per-channel taps, through push/pull of
 * random sizes, gf_engine_process with page-locked buffers (zero-copy),
 * gf_engine_filter (the whole signal, its look-ahead too, zero-copy) and
 * gf_engine_submit's short chunks (fewer frames than the FFT's history,
 * where a device restarts from the stream's start); histograms record for
 * record; a second stream after gf_engine_reset; chunks dealt in turn
 * (gf_engine_device_chunks), or for the FFT method through
 * gf_engine_process each device a segment of the call (engine_bulk.c). FFT jobs of at least 64
 * bytes of channels per device (and no histograms) are shared by channel instead: every chunk to
 * each device, each its channels (gf_engine_device_channels), with odd
 * shares and per-channel taps. The lists are {0, 0} (two instances on one
 * GPU: the same code paths on any machine with a GPU) and, where there are
 * two GPUs, {0, 1} and {1, 0}. An argument runs only the cases whose name
 * holds it (tests/gpu/sanitize.sh: "segments").
 *
 * Exits 77 (skipped) where no CUDA device is usable.
 */
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mcase {
    const char *name;
    int channels;
    size_t taps;
    int per_channel;
    gf_mode mode;
    gf_method method;
    size_t partition;
    gf_precision prec;
    size_t chunk;  /* gf_config.chunk_frames; 0: the engine's */
    size_t frames; /* input */
    int way;  /* 0 push/pull, 1 process (page-locked), 2 push + gf_engine_submit, 3 gf_engine_filter
               * (page-locked: the look-ahead's chunks straight to the devices too) */
    int hist; /* 0 none, 1 output (each), 2 input (mix) */
    int by_channel; /* the split expected: 1 by channel, 0 by time */
    int outputs;    /* a matrix (gf_config.outputs), here as many as channels; 0: none */
} mcase;

static const mcase cases[] = {
    {"direct f32 same", 2, 257, 0, GF_MODE_SAME, GF_METHOD_DIRECT, 0, GF_PRECISION_F32, 4096,
     100003, 0, 1, 0, 0},
    {"direct f64 full per-channel", 3, 100, 1, GF_MODE_FULL, GF_METHOD_DIRECT, 0, GF_PRECISION_F64,
     5000, 60001, 1, 2, 0, 0},
    {"fft f32 causal", 3, 5000, 0, GF_MODE_CAUSAL, GF_METHOD_FFT, 512, GF_PRECISION_F32, 20480,
     300007, 0, 1, 0, 0},
    {"fft f32 same pinned", 2, 20000, 0, GF_MODE_SAME, GF_METHOD_FFT, 2048, GF_PRECISION_F32, 0,
     2500000, 1, 0, 0, 0},
    {"fft f64 full per-channel", 2, 3000, 1, GF_MODE_FULL, GF_METHOD_FFT, 256, GF_PRECISION_F64,
     7000, 120001, 0, 2, 0, 0},
    {"fft f32 short chunks", 1, 1200, 0, GF_MODE_SAME, GF_METHOD_FFT, 256, GF_PRECISION_F32, 512,
     20000, 2, 1, 0, 0},
    /* Shared by channel: 20 + 20 channels of 4 bytes (80-byte rows), 9 + 8
     * of 8 bytes (the least: 64), 17 + 16 through short chunks. */
    {"fft f32 40 ch causal by channel", 40, 3000, 0, GF_MODE_CAUSAL, GF_METHOD_FFT, 256,
     GF_PRECISION_F32, 0, 50001, 0, 0, 1, 0},
    {"fft f64 17 ch full per-channel by channel", 17, 1500, 1, GF_MODE_FULL, GF_METHOD_FFT, 512,
     GF_PRECISION_F64, 0, 30011, 1, 0, 1, 0},
    {"fft f32 33 ch same short chunks by channel", 33, 2000, 0, GF_MODE_SAME, GF_METHOD_FFT, 256,
     GF_PRECISION_F32, 512, 9001, 2, 0, 1, 0},
    /* Too narrow (8 + 8 bytes) or with histograms: by time. */
    {"fft f32 4 ch by time", 4, 2000, 0, GF_MODE_SAME, GF_METHOD_FFT, 256, GF_PRECISION_F32, 8192,
     40000, 0, 0, 0, 0},
    {"fft f32 40 ch histograms by time", 40, 1000, 0, GF_MODE_SAME, GF_METHOD_FFT, 256,
     GF_PRECISION_F32, 8192, 30000, 0, 1, 0, 0},
    /* A matrix (its inputs primed from the other GPU): by time, even where
     * rows are wide enough to share by channel (32 x 8 bytes). */
    {"fft f32 matrix 2x2 by time", 2, 3000, 0, GF_MODE_CAUSAL, GF_METHOD_FFT, 256, GF_PRECISION_F32,
     4096, 40000, 0, 0, 0, 2},
    {"fft f64 matrix 32x32 full by time", 32, 500, 0, GF_MODE_FULL, GF_METHOD_FFT, 256,
     GF_PRECISION_F64, 0, 9001, 2, 0, 0, 32},
    /* gf_engine_filter: segments ending in the look-ahead, by channel, a
     * matrix, the direct method's chunks in turn. */
    {"filter fft f32 same segments", 2, 20000, 0, GF_MODE_SAME, GF_METHOD_FFT, 2048,
     GF_PRECISION_F32, 0, 2500001, 3, 0, 0, 0},
    {"filter fft f64 full per-channel", 3, 3000, 1, GF_MODE_FULL, GF_METHOD_FFT, 256,
     GF_PRECISION_F64, 7000, 120001, 3, 0, 0, 0},
    {"filter fft f32 40 ch same by channel", 40, 3000, 0, GF_MODE_SAME, GF_METHOD_FFT, 256,
     GF_PRECISION_F32, 0, 50001, 3, 0, 1, 0},
    {"filter fft f32 matrix 2x2 full", 2, 3000, 0, GF_MODE_FULL, GF_METHOD_FFT, 256,
     GF_PRECISION_F32, 4096, 40000, 3, 0, 0, 2},
    {"filter direct f32 same", 2, 257, 0, GF_MODE_SAME, GF_METHOD_DIRECT, 0, GF_PRECISION_F32, 4096,
     100003, 3, 0, 0, 0},
};

/* FNV-1a over bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* Every record still queued, hashed field by field (and its counts). */
static uint64_t hist_hash(gf_engine *e, size_t bins, size_t *records)
{
    uint64_t h = 1469598103934665603u;
    gf_hist_record r;
    *records = 0;
    while (gf_engine_hist_next(e, &r) == GF_OK) {
        h = fnv(h, &r.block, sizeof r.block);
        h = fnv(h, &r.frames, sizeof r.frames);
        h = fnv(h, &r.channel, sizeof r.channel);
        h = fnv(h, &r.below, sizeof r.below);
        h = fnv(h, &r.above, sizeof r.above);
        h = fnv(h, &r.nan, sizeof r.nan);
        h = fnv(h, &r.min, sizeof r.min);
        h = fnv(h, &r.max, sizeof r.max);
        h = fnv(h, &r.rms, sizeof r.rms);
        h = fnv(h, r.bins, bins * sizeof r.bins[0]);
        (*records)++;
    }
    return h;
}

/* Push in pieces of up to 700 frames, submitting each piece at once (the
 * way live audio does: chunks far shorter than the engine's), then flush. */
static int run_submit(gf_engine *e, const unsigned char *in, size_t frames, unsigned char *out,
                      size_t cap, size_t fb, size_t *produced)
{
    tu_rng r = {7};
    size_t off = 0;
    *produced = 0;
    for (;;) {
        size_t n = 1 + tu_rng_below(&r, 700), used = 0, got = 0;
        if (n > frames - off)
            n = frames - off;
        if (n && gf_engine_push(e, in + off * fb, n, &used) != GF_OK)
            return TU_FAIL("push");
        off += used;
        if (gf_engine_submit(e) != GF_OK || gf_engine_wait(e) != GF_OK)
            return TU_FAIL("submit/wait");
        if (off == frames && gf_engine_flush(e) != GF_OK)
            return TU_FAIL("flush");
        do {
            if (gf_engine_pull(e, out + *produced * fb, cap - *produced, &got) != GF_OK)
                return TU_FAIL("pull");
            *produced += got;
        } while (got);
        if (off == frames)
            return 0;
    }
}

typedef struct result {
    unsigned char *out;
    size_t produced;
    uint64_t hist;
    size_t records;
    uint64_t chunks[GF_MAX_DEVICES], frames[GF_MAX_DEVICES];
    int first[GF_MAX_DEVICES], channels[GF_MAX_DEVICES];
    int ndev;
} result;

/* gf_engine_filter: the mode's whole output, of its exact length. */
static int run_filter(gf_engine *e, const mcase *m, const unsigned char *in, unsigned char *out,
                      size_t *produced, const char *label)
{
    const gf_status st = gf_engine_filter(e, in, m->frames, out, produced);
    const size_t n = m->mode == GF_MODE_FULL ? m->frames + m->taps - 1 : m->frames;
    return TU_CHECK(st == GF_OK, "%s: gf_engine_filter: %s: %s", label, gf_strerror(st),
                    gf_engine_error(e)) +
           TU_CHECK(*produced == n, "%s: gf_engine_filter gave %zu frames, not %zu", label,
                    *produced, n);
}

static int run_case(const mcase *m, const int *devs, int ndev, const void *x, const double *taps,
                    int second, result *res)
{
    char label[160];
    snprintf(label, sizeof label, "%s on %d device(s)%s", m->name, ndev,
             second ? ", after a reset" : "");
    gf_config cfg = tu_config(m->channels, m->taps, taps, m->mode, m->prec, GF_DEVICE_CUDA);
    cfg.taps_per_channel = m->per_channel;
    cfg.outputs = m->outputs;
    cfg.method = m->method;
    cfg.partition = m->partition;
    cfg.chunk_frames = m->chunk;
    if (ndev > 1) {
        cfg.cuda_devices = devs;
        cfg.cuda_device_count = ndev;
    } else {
        cfg.cuda_device = devs[0];
    }
    gf_hist_config hc = {.bins = 64, .block_frames = 3001, .lo = -1.5, .hi = 1.5};
    hc.of_input = m->hist == 2;
    hc.mix = m->hist == 2;
    if (m->hist)
        cfg.hist = &hc;
    gf_engine *e = NULL;
    if (tu_create(label, &cfg, &e))
        return 1;
    const size_t fb = (size_t)m->channels * tu_sample_size(m->prec);
    const size_t cap = m->frames + m->taps + gf_engine_max_pending(e) + 1;
    unsigned char *in = gf_host_alloc(m->frames * fb);
    res->out = gf_host_alloc(cap * fb);
    int bad = !in || !res->out ? TU_FAIL("%s: gf_host_alloc", label) : 0;
    if (!bad)
        memcpy(in, x, m->frames * fb);
    for (int pass = 0; !bad && pass <= second; pass++) {
        if (pass && gf_engine_reset(e) != GF_OK)
            bad = TU_FAIL("%s: reset", label);
        else if (m->way == 0)
            bad = tu_run_stream(e, in, m->frames, res->out, cap, fb, TU_RANDOM(9000, 11 + pass),
                                TU_RANDOM(7000, 5), &res->produced);
        else if (m->way == 1)
            bad = tu_run_process(e, in, m->frames, res->out, cap, fb, TU_FIXED(m->frames / 3 + 1),
                                 &res->produced);
        else if (m->way == 3)
            bad = run_filter(e, m, in, res->out, &res->produced, label);
        else
            bad = run_submit(e, in, m->frames, res->out, cap, fb, &res->produced);
        if (!bad && m->hist)
            res->hist = hist_hash(e, hc.bins, &res->records);
    }
    res->ndev = gf_engine_cuda_devices(e, NULL, 0);
    for (int i = 0; i < res->ndev && i < GF_MAX_DEVICES; i++) {
        res->chunks[i] = gf_engine_device_chunks(e, i, &res->frames[i]);
        res->channels[i] = gf_engine_device_channels(e, i, &res->first[i]);
    }
    gf_host_free(in);
    gf_engine_destroy(e);
    return bad;
}

/* How the devices shared case m's job (what the engine reports of each),
 * against one device's. */
static int check_sharing(const mcase *m, const result *one, const result *many, int ndev,
                         const char *what)
{
    int bad =
        TU_CHECK(many->ndev == ndev && one->ndev == 1, "%s: %d devices reported", what, many->ndev);
    if (m->by_channel) {
        /* Every chunk to each device; the channels split with the
         * first device taking the odd one. */
        const int c0 = (m->channels + 1) / 2;
        bad += TU_CHECK(many->chunks[0] == one->chunks[0] && many->chunks[1] == one->chunks[0] &&
                            many->frames[0] == one->frames[0] && many->frames[1] == one->frames[0],
                        "%s: by channel, chunks %llu and %llu vs %llu", what,
                        (unsigned long long)many->chunks[0], (unsigned long long)many->chunks[1],
                        (unsigned long long)one->chunks[0]);
        bad += TU_CHECK(many->first[0] == 0 && many->channels[0] == c0 && many->first[1] == c0 &&
                            many->channels[1] == m->channels - c0 && one->first[0] == 0 &&
                            one->channels[0] == m->channels,
                        "%s: channels %d from %d and %d from %d", what, many->channels[0],
                        many->first[0], many->channels[1], many->first[1]);
    } else if ((m->way == 1 || m->way == 3) && m->method == GF_METHOD_FFT) {
        /* gf_engine_process by time, the FFT method: each device a
         * segment of each call in one-device chunks (engine_bulk.c):
         * every device takes chunks, the frames add up. */
        bad += TU_CHECK(many->chunks[0] >= 1 && many->chunks[1] >= 1 &&
                            many->frames[0] + many->frames[1] == one->frames[0],
                        "%s: segments, chunks %llu + %llu (frames %llu + %llu) vs %llu", what,
                        (unsigned long long)many->chunks[0], (unsigned long long)many->chunks[1],
                        (unsigned long long)many->frames[0], (unsigned long long)many->frames[1],
                        (unsigned long long)one->frames[0]);
    } else {
        bad += TU_CHECK(many->first[1] == 0 && many->channels[1] == m->channels,
                        "%s: by time, device 1 has %d channels from %d", what, many->channels[1],
                        many->first[1]);
        /* Chunks in turn, from the first device: the counts differ
         * by at most one, and the frames add up to one device's. */
        bad += TU_CHECK(many->chunks[1] >= 1 && many->chunks[0] >= many->chunks[1] &&
                            many->chunks[0] - many->chunks[1] <= 1 &&
                            many->frames[0] + many->frames[1] == one->frames[0],
                        "%s: chunks %llu + %llu (frames %llu + %llu) vs %llu (%llu)", what,
                        (unsigned long long)many->chunks[0], (unsigned long long)many->chunks[1],
                        (unsigned long long)many->frames[0], (unsigned long long)many->frames[1],
                        (unsigned long long)one->chunks[0], (unsigned long long)one->frames[0]);
    }
    return bad;
}

static const char *g_only; /* argv[1]: only the cases whose name holds it */

static int check_list(const int *devs, int ndev)
{
    int bad = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const mcase *m = &cases[ci];
        if (g_only && !strstr(m->name, g_only))
            continue;
        const size_t ss = tu_sample_size(m->prec);
        const size_t nt = m->outputs       ? m->taps * (size_t)m->channels * (size_t)m->outputs
                          : m->per_channel ? m->taps * (size_t)m->channels
                                           : m->taps;
        tu_input t;
        if (tu_input_alloc(&t, m->name, m->frames * (size_t)m->channels, ss, nt))
            return bad + 1;
        tu_fill_signal(t.x, m->frames * (size_t)m->channels, ss, 100 + ci);
        tu_fill_taps(t.taps, nt, 200 + ci);
        result one = {0}, many = {0};
        const int second = ci % 2; /* every other case: a second stream after a reset */
        if (run_case(m, devs, 1, t.x, t.taps, second, &one) ||
            run_case(m, devs, ndev, t.x, t.taps, second, &many)) {
            bad++;
        } else {
            char what[160];
            snprintf(what, sizeof what, "%s: devices {%d, %d} vs %d alone", m->name, devs[0],
                     devs[1], devs[0]);
            bad += TU_CHECK(one.produced == many.produced, "%s: %zu frames vs %zu", what,
                            many.produced, one.produced);
            if (one.produced == many.produced)
                bad += tu_compare(what, one.out, many.out, one.produced * (size_t)m->channels, ss,
                                  (size_t)m->channels);
            bad += TU_CHECK(one.hist == many.hist && one.records == many.records,
                            "%s: histograms differ (%zu vs %zu records)", what, many.records,
                            one.records);
            bad += check_sharing(m, &one, &many, ndev, what);
        }
        gf_host_free(one.out);
        gf_host_free(many.out);
        tu_input_free(&t);
    }
    return bad;
}

int main(int argc, char **argv)
{
    g_only = argc > 1 ? argv[1] : NULL;
    int n = 0;
    if (gf_cuda_device_count(&n) != GF_OK || n == 0 || !gf_backend_available(GF_DEVICE_CUDA)) {
        printf("test_multi_gpu: SKIP: no usable CUDA device\n");
        return 77;
    }
    /* A bad list is refused before any device is touched. */
    int bad = 0;
    {
        const int neg[2] = {0, -1};
        gf_config c = tu_config(1, 3, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CUDA);
        c.cuda_devices = neg;
        c.cuda_device_count = 2;
        gf_engine *e = NULL;
        char why[256];
        bad += TU_CHECK(gf_engine_create(&c, &e, why, sizeof why) == GF_ERR_INVALID_ARGUMENT &&
                            !strcmp(why, "cuda_devices[1] is -1, not a device ordinal"),
                        "a negative ordinal: '%s'", why);
        c.cuda_device_count = GF_MAX_DEVICES + 1;
        bad += TU_CHECK(gf_engine_create(&c, &e, why, sizeof why) == GF_ERR_INVALID_ARGUMENT,
                        "%d devices accepted", GF_MAX_DEVICES + 1);
        const int absent[2] = {0, n};
        c.cuda_devices = absent;
        c.cuda_device_count = 2;
        char want[128];
        snprintf(want, sizeof want, "CUDA device %d: CUDA device %d does not exist (%d present)", n,
                 n, n);
        bad += TU_CHECK(gf_engine_create(&c, &e, why, sizeof why) == GF_ERR_NO_DEVICE &&
                            !strcmp(why, want),
                        "an absent device: '%s', want '%s'", why, want);
    }
    const int same[2] = {0, 0}, two[2] = {0, 1}, swapped[2] = {1, 0};
    bad += check_list(same, 2);
    if (n >= 2) {
        bad += check_list(two, 2);
        bad += check_list(swapped, 2);
    }
    printf("test_multi_gpu: %s (%d GPU%s)\n", bad ? "FAILED" : "all equal to one device", n,
           n == 1 ? "" : "s");
    return bad ? 1 : 0;
}
