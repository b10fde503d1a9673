/*
 * The CUDA backend, bit for bit: the golden vectors, and the ref backend over
 * long signals with chunk sizes 1, 7, 4096, 1,000,000 and whole, through
 * push/pull and through gf_engine_process with malloc'd and with page-locked
 * (gf_host_alloc, zero-copy) buffers; long filters that need the
 * large-shared-memory and the global-memory kernels; several engines alive
 * at once with different taps (they share the constant-memory bank).
 * Histograms: the cuda backend's records equal the cpu backend's (itself
 * checked against ref and numpy by test_hist), every field bit for bit,
 * with chunk sizes 1 to whole, staged and zero-copy, each and mix, input
 * and output, f32 and f64, and the kernel's three ways of holding partials
 * (shared memory, shared memory above 48 KiB, global memory).
 *
 * Exits 77 (skipped) where no CUDA device is usable.
 *
 * Usage: test_cuda GOLDEN_DIR
 */
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHOLE SIZE_MAX

/* The buffers of check_pinned: both page-locked (gf_host_alloc), the
 * output malloc'd, or both malloc'd and registered (gf_host_register). */
enum { BOTH_PINNED, PLAIN_OUT, REGISTERED };

static void *buffer(size_t bytes, int pinned)
{
    void *p = NULL;
    if (pinned)
        return gf_host_alloc(bytes);
    /* Pages of its own: registrations may not share one. */
    return posix_memalign(&p, 4096, (bytes + 4095) / 4096 * 4096) == 0 ? p : NULL;
}

static void buffer_free(void *p, int pinned)
{
    if (pinned)
        gf_host_free(p);
    else
        free(p);
}

/* Process the input through a CUDA engine with the buffers of `how` and
 * compare with expected. */
static int check_pinned(const char *label, const gf_config *cfg, const void *in, size_t frames,
                        const void *expected, tu_pattern pieces, int how)
{
    const size_t fb = (size_t)cfg->channels * tu_sample_size(cfg->precision);
    gf_engine *probe = NULL;
    if (tu_create(label, cfg, &probe))
        return 1;
    const size_t cap = frames + gf_engine_max_pending(probe) + 1;
    gf_engine_destroy(probe);
    const int pin_in = how != REGISTERED, pin_out = how == BOTH_PINNED;
    void *pin = buffer(frames * fb + 1, pin_in), *pout = buffer(cap * fb, pin_out);
    int bad = 0, registered = 0;
    if (!pin || !pout) {
        bad = TU_FAIL("%s: cannot allocate %zu + %zu frames", label, frames, cap);
    } else if (how == REGISTERED) {
        char why[256];
        gf_status st = gf_host_register(pin, frames * fb + 1, why, sizeof why);
        if (st == GF_OK && (st = gf_host_register(pout, cap * fb, why, sizeof why)) != GF_OK)
            gf_host_unregister(pin);
        registered = st == GF_OK;
        bad = TU_CHECK(registered, "%s: gf_host_register: %s (%s)", label, gf_strerror(st), why);
    }
    if (!bad) {
        memcpy(pin, in, frames * fb);
        bad = tu_filter_into(label, cfg, pin, frames, 1, pieces, TU_ALL, pout, cap);
        if (!bad)
            bad = tu_compare(label, expected, pout, frames * (size_t)cfg->channels,
                             tu_sample_size(cfg->precision), (size_t)cfg->channels);
    }
    if (registered) {
        gf_host_unregister(pin);
        gf_host_unregister(pout);
    }
    buffer_free(pin, pin_in);
    buffer_free(pout, pin_out);
    return bad;
}

/* Golden cases again, with page-locked buffers (the zero-copy path). */
static int golden_pinned(const tu_golden *cases, size_t n, size_t *runs)
{
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        const tu_golden *g = &cases[i];
        const size_t chunks[] = {0, 7, 1000};
        for (size_t c = 0; c < 3 && !bad; c++) {
            gf_config cfg = tu_golden_config(g, GF_DEVICE_CUDA, chunks[c]);
            char label[256];
            snprintf(label, sizeof label, "%s (%s) on cuda, chunk %zu, pinned process", g->name,
                     g->file, chunks[c]);
            bad += check_pinned(label, &cfg, g->x, g->frames, g->y,
                                c == 1 ? TU_RANDOM(150, i) : TU_ALL, BOTH_PINNED);
            ++*runs;
        }
    }
    return bad;
}

/* Frames run at a given chunk size: chunk 1 and 7 cost one round trip per
 * chunk, so they see a prefix of the signal. */
static size_t frames_for_chunk(size_t chunk, size_t frames)
{
    size_t limit = chunk == 1 ? 20000 : chunk == 7 ? 150000 : frames;
    return limit < frames ? limit : frames;
}

static int run_signal(const tu_signal_case *sc)
{
    const double t0 = tu_now();
    tu_input input;
    gf_config c;
    if (tu_signal_case_setup(sc, 0xc0da0000u + sc->num_taps, 555 + sc->num_taps, GF_DEVICE_AUTO,
                             &input, &c))
        return 1;
    const void *in = input.x;

    const size_t chunks[] = {1, 7, 4096, 1000000, WHOLE};
    int bad = 0;
    size_t runs = 0, oracle_frames = 0;
    void *oracle = NULL;
    char label[256];
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0] && !bad; i++) {
        const size_t chunk = chunks[i] == WHOLE ? sc->frames : chunks[i];
        const size_t frames = frames_for_chunk(chunk, sc->frames);
        if (frames != oracle_frames) {
            /* ref over exactly these frames: the oracle. */
            free(oracle);
            gf_config r = c;
            r.device = GF_DEVICE_REF;
            r.chunk_frames = frames;
            snprintf(label, sizeof label, "%s: ref over %zu frames", sc->name, frames);
            oracle = tu_filter(label, &r, in, frames, 1, TU_ALL, TU_ALL);
            oracle_frames = frames;
            if (!oracle) {
                bad++;
                break;
            }
        }
        c.device = GF_DEVICE_CUDA;
        c.chunk_frames = chunk;
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, push/pull", sc->name, chunk,
                 frames);
        bad += tu_check_run(label, &c, in, frames, oracle, 0, TU_RANDOM(3 * chunk + 5, i),
                            TU_RANDOM(2 * chunk + 3, i + 1));
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, process in pieces", sc->name,
                 chunk, frames);
        bad += tu_check_run(label, &c, in, frames, oracle, 1, TU_RANDOM(5 * chunk + 11, i + 2),
                            TU_ALL);
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, pinned process whole",
                 sc->name, chunk, frames);
        bad += check_pinned(label, &c, in, frames, oracle, TU_ALL, BOTH_PINNED);
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, pinned process pieces",
                 sc->name, chunk, frames);
        bad += check_pinned(label, &c, in, frames, oracle, TU_RANDOM(3 * chunk + 1, i + 3),
                            BOTH_PINNED);
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, pinned in, malloc'd out",
                 sc->name, chunk, frames);
        bad += check_pinned(label, &c, in, frames, oracle, TU_ALL, PLAIN_OUT);
        snprintf(label, sizeof label, "%s: cuda chunk %zu, %zu frames, registered process pieces",
                 sc->name, chunk, frames);
        bad += check_pinned(label, &c, in, frames, oracle, TU_RANDOM(4 * chunk + 3, i + 4),
                            REGISTERED);
        runs += 6;
    }
    free(oracle);
    tu_input_free(&input);
    printf("%-36s %zu frames x %d ch: %zu cuda runs identical to ref, %.2f s\n", sc->name,
           sc->frames, sc->channels, runs, tu_now() - t0);
    return bad;
}

/* One long filter: cuda against the cpu over the whole signal (and the cpu
 * against ref over a prefix), chunks from short to whole. */
static int long_taps_case(const tu_signal_case *sc, size_t i)
{
    const double t0 = tu_now();
    tu_input input;
    gf_config c;
    /* The cpu is bit-identical to ref (test_golden, test_seams), and faster. */
    if (tu_signal_case_setup(sc, 0x10a6u + i, 0x7a95u + i, GF_DEVICE_CPU, &input, &c))
        return 1;
    const void *in = input.x;
    c.chunk_frames = sc->frames;
    char label[256];
    snprintf(label, sizeof label, "%s: cpu oracle", sc->name);
    void *oracle = tu_filter(label, &c, in, sc->frames, 1, TU_ALL, TU_ALL);
    int bad = 0;
    if (!oracle)
        bad++;
    /* ref agrees with the oracle on a prefix (ref is serial: keep it short). */
    const size_t pre = sc->frames < 3000 ? sc->frames : 3000;
    void *oracle_pre = NULL;
    if (!bad) {
        c.chunk_frames = pre;
        snprintf(label, sizeof label, "%s: cpu oracle prefix", sc->name);
        oracle_pre = tu_filter(label, &c, in, pre, 1, TU_ALL, TU_ALL);
        c.device = GF_DEVICE_REF;
        snprintf(label, sizeof label, "%s: ref prefix vs cpu", sc->name);
        bad += oracle_pre ? tu_check_run(label, &c, in, pre, oracle_pre, 1, TU_ALL, TU_ALL) : 1;
    }
    const size_t chunks[] = {0, 1000, 4093, WHOLE};
    c.device = GF_DEVICE_CUDA;
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0] && !bad; k++) {
        c.chunk_frames = chunks[k] == WHOLE ? sc->frames : chunks[k];
        snprintf(label, sizeof label, "%s: cuda chunk %zu, push/pull", sc->name, c.chunk_frames);
        bad += tu_check_run(label, &c, in, sc->frames, oracle, 0, TU_RANDOM(7000, k),
                            TU_RANDOM(5000, k + 1));
        snprintf(label, sizeof label, "%s: cuda chunk %zu, pinned process", sc->name,
                 c.chunk_frames);
        bad += check_pinned(label, &c, in, sc->frames, oracle, TU_RANDOM(9000, k + 2),
                            k % 2 ? REGISTERED : BOTH_PINNED);
    }
    /* A chunk shorter than the halo: the halo spans several chunks. */
    if (!bad) {
        c.chunk_frames = 7;
        snprintf(label, sizeof label, "%s: cuda chunk 7 over %zu frames", sc->name, pre);
        bad +=
            tu_check_run(label, &c, in, pre, oracle_pre, 0, TU_RANDOM(100, 9), TU_RANDOM(100, 10));
    }
    free(oracle_pre);
    free(oracle);
    tu_input_free(&input);
    printf("%-36s %zu frames x %d ch: %s, %.2f s\n", sc->name, sc->frames, sc->channels,
           bad ? "FAILED" : "identical", tu_now() - t0);
    return bad;
}

/* Long filters: T = 255 with 8 channels (tiled kernel), T = 8192 mono f64
 * (more than 48 KiB of shared memory), T = 8192 f64 x 4 and f32 x 8 (halo
 * too large for shared memory: the global-memory kernel). */
static int long_taps(void)
{
    const tu_signal_case cases[] = {
        {"long taps: T=255 8ch f32 same", 8, 60000, GF_PRECISION_F32, GF_MODE_SAME, 255, 0},
        {"long taps: T=8192 mono f64 same", 1, 40000, GF_PRECISION_F64, GF_MODE_SAME, 8192, 0},
        {"long taps: T=8192 mono f64 causal", 1, 30000, GF_PRECISION_F64, GF_MODE_CAUSAL, 8192, 1},
        {"long taps: T=8192 4ch f64 same", 4, 8000, GF_PRECISION_F64, GF_MODE_SAME, 8192, 0},
        {"long taps: T=8192 8ch f32 causal", 8, 6000, GF_PRECISION_F32, GF_MODE_CAUSAL, 8192, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !bad; i++)
        bad += long_taps_case(&cases[i], i);
    return bad;
}

/* Several engines alive at once, with different taps: the first takes the
 * whole constant bank (8192 f64 taps), so the others fall back to taps in
 * global memory; after it is destroyed a new engine gets constant memory.
 * Their chunks are interleaved so kernels of different engines run
 * together. */
enum { MULTI = 4 };

typedef struct multi_engine {
    gf_config cfg;
    double taps[8192];
    void *in, *out, *expected;
    size_t frames, fb, off, total, cap;
    gf_engine *e;
    int flushed, done;
} multi_engine;

static int multi_setup(multi_engine *m, int channels, size_t T, gf_precision p, gf_mode mode,
                       size_t frames, size_t chunk, uint64_t seed)
{
    m->cfg = tu_config(channels, T, m->taps, mode, p, GF_DEVICE_AUTO);
    m->cfg.chunk_frames = chunk;
    m->frames = frames;
    m->fb = (size_t)channels * tu_sample_size(p);
    tu_fill_taps(m->taps, T, seed);
    m->in = malloc(frames * m->fb);
    if (!m->in)
        return TU_FAIL("out of memory");
    tu_fill_signal(m->in, frames * (size_t)channels, tu_sample_size(p), seed + 1);
    gf_config c = m->cfg;
    c.device = GF_DEVICE_CPU;
    c.chunk_frames = frames;
    m->expected = tu_filter("multi-engine oracle (cpu)", &c, m->in, frames, 1, TU_ALL, TU_ALL);
    if (!m->expected)
        return 1;
    c = m->cfg;
    c.device = GF_DEVICE_CUDA;
    char detail[256];
    gf_status st = gf_engine_create(&c, &m->e, detail, sizeof detail);
    if (st != GF_OK)
        return TU_FAIL("multi-engine: create T=%zu: %s (%s)", T, gf_strerror(st), detail);
    m->cap = frames + 1;
    m->out = malloc(m->cap * m->fb);
    return m->out ? 0 : TU_FAIL("out of memory");
}

static void multi_free(multi_engine *m)
{
    gf_engine_destroy(m->e);
    free(m->in);
    free(m->out);
    free(m->expected);
    memset(m, 0, sizeof *m);
}

/* One round: push a little and pull a little on every engine in turn. */
static int multi_run(multi_engine *ms, int n, const char *what)
{
    tu_rng r = {12345};
    int bad = 0, left = n;
    for (int i = 0; i < n; i++)
        ms[i].off = ms[i].total = 0, ms[i].flushed = ms[i].done = 0;
    while (left > 0 && !bad) {
        for (int i = 0; i < n && !bad; i++) {
            multi_engine *m = &ms[i];
            if (m->done)
                continue;
            size_t used = 0, got = 0;
            gf_status st = GF_OK;
            if (m->off < m->frames) {
                size_t k = 1 + tu_rng_below(&r, 3000);
                if (k > m->frames - m->off)
                    k = m->frames - m->off;
                st = gf_engine_push(m->e, (unsigned char *)m->in + m->off * m->fb, k, &used);
                m->off += used;
            } else if (!m->flushed) {
                st = gf_engine_flush(m->e);
                m->flushed = 1;
            }
            if (st == GF_OK)
                st = gf_engine_pull(m->e, (unsigned char *)m->out + m->total * m->fb,
                                    m->cap - m->total, &got);
            if (st != GF_OK) {
                bad += TU_FAIL("%s: engine %d: %s (%s)", what, i, gf_strerror(st),
                               gf_engine_error(m->e));
                break;
            }
            m->total += got;
            if (m->flushed && got == 0) {
                m->done = 1;
                left--;
                char label[128];
                snprintf(label, sizeof label, "%s: engine %d (T=%zu, %d ch)", what, i,
                         m->cfg.num_taps, m->cfg.channels);
                bad += TU_CHECK(m->total == m->frames, "%s: %zu frames in, %zu out", label,
                                m->frames, m->total);
                if (!bad)
                    bad +=
                        tu_compare(label, m->expected, m->out, m->frames * (size_t)m->cfg.channels,
                                   tu_sample_size(m->cfg.precision), (size_t)m->cfg.channels);
            }
        }
    }
    return bad;
}

static int multi_engines(void)
{
    const double t0 = tu_now();
    static multi_engine ms[MULTI];
    memset(ms, 0, sizeof ms);
    int bad = 0;
    bad += multi_setup(&ms[0], 1, 8192, GF_PRECISION_F64, GF_MODE_SAME, 30000, 4096, 1);
    bad += multi_setup(&ms[1], 2, 255, GF_PRECISION_F32, GF_MODE_SAME, 200000, 8192, 2);
    bad += multi_setup(&ms[2], 1, 5, GF_PRECISION_F32, GF_MODE_CAUSAL, 300000, 1000, 3);
    bad += multi_setup(&ms[3], 3, 100, GF_PRECISION_F64, GF_MODE_CAUSAL, 100000, 3000, 4);
    if (!bad)
        bad += multi_run(ms, MULTI, "4 engines at once");
    /* The constant bank is free again: a new engine, with the others alive
     * (and reset for a new stream). */
    if (!bad) {
        multi_free(&ms[0]);
        for (int i = 1; i < MULTI && !bad; i++)
            bad += TU_CHECK(gf_engine_reset(ms[i].e) == GF_OK, "reset engine %d", i);
        bad += multi_setup(&ms[0], 2, 1000, GF_PRECISION_F64, GF_MODE_SAME, 50000, 5000, 5);
        if (!bad)
            bad += multi_run(ms, MULTI, "after replacing engine 0");
        for (int i = 0; i < MULTI && !bad; i++)
            bad += TU_CHECK(gf_engine_reset(ms[i].e) == GF_OK, "reset engine %d", i);
        if (!bad)
            bad += multi_run(ms, MULTI, "after reset");
    }
    for (int i = 0; i < MULTI; i++)
        multi_free(&ms[i]);
    printf("%-36s %s, %.2f s\n", "several engines at once", bad ? "FAILED" : "identical",
           tu_now() - t0);
    return bad;
}

/* ---- histograms ---- */

/* The cpu's records over the first frames frames, for the runs that take
 * that prefix; kept in *pre until a run takes another. */
static int hist_prefix_oracle(const tu_hist_case *hc, gf_config c, const void *in, size_t frames,
                              tu_recs *pre, size_t *pre_frames)
{
    if (frames == *pre_frames)
        return 0;
    tu_recs_free(pre);
    c.device = GF_DEVICE_CPU;
    char label[256];
    snprintf(label, sizeof label, "%s: cpu, one chunk, %zu frames", hc->name, frames);
    *pre_frames = frames;
    return tu_run_hist(label, &c, in, frames, &tu_whole_stream, pre, NULL);
}

/* One run on cuda as rs says, against want. */
static int hist_cuda_run(const tu_hist_case *hc, gf_config c, const void *in, size_t frames,
                         const tu_run_spec *rs, const tu_recs *want)
{
    c.device = GF_DEVICE_CUDA;
    char label[256];
    snprintf(label, sizeof label, "%s: cuda chunk %zu, %s%s, %zu frames", hc->name, rs->chunk,
             tu_run_kind_name(rs->kind), rs->pinned ? " (pinned)" : "", frames);
    tu_recs got = {0};
    int bad = tu_run_hist(label, &c, in, frames, rs, &got, NULL);
    if (!bad)
        bad = tu_recs_compare(label, want, &got);
    tu_recs_free(&got);
    return bad;
}

/* cuda with chunks from 1 to whole, staged and zero-copy, against the cpu. */
static int hist_cuda_runs(const tu_hist_case *hc, const gf_config *c, const void *in, size_t *runs)
{
    const tu_run_spec specs[] = {
        {TU_RUN_PUSHPULL, 0, 100000, 70000, 1, 0, 1, 0}, /* the default chunk */
        {TU_RUN_PROCESS, 0, 0, 0, 0, 0, 2, 1},           /* zero-copy, whole */
        {TU_RUN_PUSHPULL, 1, 5, 3, 1, 0, 3, 0},
        {TU_RUN_PUSHPULL, 7, 50, 40, 1, 0, 4, 0},
        {TU_RUN_PROCESS, 4096, 30000, 0, 1, 0, 5, 1}, /* zero-copy, pieces */
        {TU_RUN_SUBMIT, 4096, 9000, 0, 1, 0, 6, 0},
        {TU_RUN_PROCESS, 1000000, 300000, 0, 1, 0, 7, 0},
        {TU_RUN_PUSHPULL, WHOLE, 0, 0, 0, 0, 8, 0},
    };
    tu_recs oracle = {0}, oracle_pre = {0};
    size_t pre_frames = 0;
    gf_config cpu = *c;
    cpu.device = GF_DEVICE_CPU;
    char label[256];
    snprintf(label, sizeof label, "%s: cpu, one chunk", hc->name);
    int bad = tu_run_hist(label, &cpu, in, hc->frames, &tu_whole_stream, &oracle, NULL);
    for (size_t k = 0; k < sizeof specs / sizeof specs[0] && !bad; k++) {
        const tu_run_spec *rs = &specs[k];
        const size_t frames = frames_for_chunk(rs->chunk, hc->frames);
        /* Each chunk brings back nrec x bins counts: keep the small-chunk runs short. */
        if (rs->chunk != 0 && rs->chunk != WHOLE &&
            frames / rs->chunk * hc->bins * (hc->mix ? 1 : (size_t)hc->channels) >
                ((size_t)1 << 28))
            continue;
        const tu_recs *want = &oracle;
        if (frames != hc->frames) {
            bad = hist_prefix_oracle(hc, *c, in, frames, &oracle_pre, &pre_frames);
            want = &oracle_pre;
        }
        if (!bad)
            bad = hist_cuda_run(hc, *c, in, frames, rs, want);
        ++*runs;
    }
    tu_recs_free(&oracle);
    tu_recs_free(&oracle_pre);
    return bad;
}

/* ref too, over a prefix (it is serial). */
static int hist_vs_ref(const tu_hist_case *hc, gf_config c, const void *in)
{
    const size_t frames = hc->frames < 50000 ? hc->frames : 50000;
    tu_recs r = {0}, g = {0};
    char label[256];
    c.device = GF_DEVICE_REF;
    snprintf(label, sizeof label, "%s: ref, %zu frames", hc->name, frames);
    int bad = tu_run_hist(label, &c, in, frames, &tu_whole_stream, &r, NULL);
    c.device = GF_DEVICE_CUDA;
    snprintf(label, sizeof label, "%s: cuda vs ref, %zu frames", hc->name, frames);
    const tu_run_spec rs = {TU_RUN_PUSHPULL, 4093, 6000, 5000, 1, 0, 9, 0};
    if (!bad)
        bad = tu_run_hist(label, &c, in, frames, &rs, &g, NULL);
    if (!bad)
        bad = tu_recs_compare(label, &r, &g);
    tu_recs_free(&r);
    tu_recs_free(&g);
    return bad;
}

static int hist_run_case(const tu_hist_case *hc)
{
    const double t0 = tu_now();
    tu_input in;
    gf_hist_config h;
    gf_config c;
    if (tu_hist_case_setup(hc, 0x4157u + hc->frames, 0x7a9u + hc->taps, GF_DEVICE_CPU, &in, &h, &c))
        return 1;
    size_t runs = 0;
    int bad = hist_cuda_runs(hc, &c, in.x, &runs);
    if (!bad) {
        bad = hist_vs_ref(hc, c, in.x);
        runs++;
    }
    tu_input_free(&in);
    printf("%-44s %zu frames x %d ch: %zu cuda runs, records identical, %.2f s\n", hc->name,
           hc->frames, hc->channels, runs, tu_now() - t0);
    return bad;
}

static int hist_cuda(void)
{
    const tu_hist_case cases[] = {
        {"hist f32 stereo T=5 256 bins each", 2, 1200000, 5, GF_MODE_SAME, GF_PRECISION_F32, 256,
         48000, 0, 0},
        {"hist f32 stereo T=5 4096 bins mix", 2, 1200000, 5, GF_MODE_SAME, GF_PRECISION_F32, 4096,
         48000, 0, 1},
        {"hist f64 stereo T=5 4096 bins each", 2, 600000, 5, GF_MODE_SAME, GF_PRECISION_F64, 4096,
         65536, 0, 0},
        {"hist f64 mono T=25 256 bins input", 1, 700000, 25, GF_MODE_SAME, GF_PRECISION_F64, 256,
         10000, 1, 0},
        {"hist f32 3ch T=63 causal 256 bins", 3, 300000, 63, GF_MODE_CAUSAL, GF_PRECISION_F32, 256,
         4096, 0, 0},
        {"hist f32 stereo T=63 256 bins input mix", 2, 300000, 63, GF_MODE_SAME, GF_PRECISION_F32,
         256, 3000, 1, 1},
        {"hist f32 8ch 64 bins, block 1", 8, 20000, 5, GF_MODE_SAME, GF_PRECISION_F32, 64, 1, 0, 0},
        {"hist f32 37ch 4096 bins (channel groups)", 37, 30000, 3, GF_MODE_SAME, GF_PRECISION_F32,
         4096, 1000, 0, 0},
        {"hist f64 stereo 16384 bins (big shared)", 2, 200000, 4, GF_MODE_SAME, GF_PRECISION_F64,
         16384, 100000, 0, 0},
        {"hist f32 mono 65536 bins mix (global)", 1, 300000, 2, GF_MODE_SAME, GF_PRECISION_F32,
         65536, 65536, 0, 1},
        {"hist f32 5ch 1 bin, block 7", 5, 50000, 5, GF_MODE_CAUSAL, GF_PRECISION_F32, 1, 7, 0, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !bad; i++)
        bad += hist_run_case(&cases[i]);
    return bad;
}

/* A device that does not exist is refused with GF_ERR_NO_DEVICE, and leaves
 * nothing behind that breaks the next engine. */
static int device_errors(void)
{
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_CUDA;
    c.cuda_device = 999;
    gf_engine *e = (gf_engine *)&e;
    char detail[256] = "";
    gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    int bad =
        TU_CHECK(st == GF_ERR_NO_DEVICE && e == NULL && detail[0] != '\0',
                 "cuda_device 999: status %d (%s), detail '%s'", (int)st, gf_strerror(st), detail);
    if (st == GF_OK)
        gf_engine_destroy(e);

    enum { N = 5000 };
    static float in[N], expected[N];
    tu_fill_signal(in, N, sizeof(float), 99);
    c.cuda_device = 0;
    c.num_taps = 5;
    c.device = GF_DEVICE_CPU;
    float *cpu = tu_filter("after a bad device: cpu", &c, in, N, 1, TU_ALL, TU_ALL);
    if (!cpu)
        return bad + 1;
    memcpy(expected, cpu, sizeof expected);
    free(cpu);
    c.device = GF_DEVICE_CUDA;
    bad += tu_check_run("cuda device 0 after a failed create on device 999", &c, in, N, expected, 0,
                        TU_RANDOM(700, 1), TU_RANDOM(900, 2));
    return bad;
}

static const char *golden_dir; /* GOLDEN_DIR */

/* The golden vectors on cuda, as on ref and cpu, and with page-locked buffers. */
static int cuda_goldens(void)
{
    const double t0 = tu_now();
    tu_golden *cases = NULL;
    const size_t n = tu_golden_load(golden_dir, &cases);
    if (n == 0)
        return 1;
    size_t runs = 0;
    int bad = tu_golden_check_all(cases, n, GF_DEVICE_CUDA, &runs);
    if (!bad)
        bad += golden_pinned(cases, n, &runs);
    tu_golden_free(cases, n);
    printf("cuda: %zu golden cases, %zu runs compared bit for bit, %.2f s\n", n, runs,
           tu_now() - t0);
    return bad;
}

/* Long signals against ref, every chunk size and call pattern. */
static int long_signals(void)
{
    const tu_signal_case signals[] = {
        {"f32 stereo T=5 same", 2, 1200000, GF_PRECISION_F32, GF_MODE_SAME, 5, 0},
        {"f32 stereo T=255 causal mean", 2, 1200000, GF_PRECISION_F32, GF_MODE_CAUSAL, 255, 1},
        {"f64 mono T=25 same", 1, 1100000, GF_PRECISION_F64, GF_MODE_SAME, 25, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof signals / sizeof signals[0] && !bad; i++)
        bad += run_signal(&signals[i]);
    return bad;
}

int main(int argc, char **argv)
{
    if (!gf_cuda_available()) {
        printf("test_cuda: no usable CUDA device, skipped\n");
        return 77;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 1;
    }
    golden_dir = argv[1];
    static const tu_step steps[] = {cuda_goldens,  long_signals, long_taps,
                                    multi_engines, hist_cuda,    device_errors};
    return tu_run_steps("test_cuda", "all bit-exact", steps, sizeof steps / sizeof steps[0]);
}
