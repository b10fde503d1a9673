/*
 * Per-block histograms on the ref and cpu backends:
 *   - golden records computed with numpy (tests/golden/gen_hist.py), every
 *     field exact, for many chunk sizes and push / pull / submit / process
 *     patterns;
 *   - long random streams: every chunk size, call pattern, backend and
 *     thread count gives the records of ref over the whole stream in one
 *     chunk, bit for bit;
 *   - same mode: input histograms count real input only (not the flush
 *     zeros, not the halo), output histograms are those of the output
 *     stream; mix against each; a block of one frame; the last short block;
 *   - when records appear; reset; bounded chunk; invalid configs.
 *
 * Usage: test_hist HIST_GOLDEN_DIR
 */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHOLE SIZE_MAX

/* ---- goldens ---- */

typedef struct hgold {
    char name[33];
    gf_config cfg;
    gf_hist_config hc;
    double *taps;
    void *x;
    size_t frames;
    tu_recs want;
} hgold;

/* The header of a golden (format: gen_hist.py) into g; *records gets the
 * number of records that follow the samples. */
static int read_gold_header(tu_reader *r, const char *path, const char *name, size_t size, hgold *g,
                            uint32_t *records)
{
    unsigned char magic[8];
    tu_read_bytes(r, magic, sizeof magic);
    if (size < 96 || memcmp(magic, "GFHIST01", 8) != 0)
        return TU_FAIL("%s: not a GFHIST01 file", path);
    const uint32_t prec = (uint32_t)tu_read_uint(r, 4), mode = (uint32_t)tu_read_uint(r, 4),
                   C = (uint32_t)tu_read_uint(r, 4), T = (uint32_t)tu_read_uint(r, 4),
                   N = (uint32_t)tu_read_uint(r, 4), bins = (uint32_t)tu_read_uint(r, 4),
                   block = (uint32_t)tu_read_uint(r, 4), flags = (uint32_t)tu_read_uint(r, 4);
    const double lo = tu_read_f64(r), hi = tu_read_f64(r);
    *records = (uint32_t)tu_read_uint(r, 4);
    tu_read_uint(r, 4);
    tu_read_bytes(r, g->name, 32);
    g->name[32] = '\0';
    if (strcmp(g->name, name) != 0 || prec > 1 || mode > 1 || C < 1 || C > 64 || T < 1 ||
        T > 1024 || bins < 1 || bins > 65536 || block < 1)
        return TU_FAIL("%s: bad header (name '%s', manifest '%s')", path, g->name, name);
    g->cfg = tu_config((int)C, T, NULL, mode ? GF_MODE_CAUSAL : GF_MODE_SAME,
                       prec ? GF_PRECISION_F64 : GF_PRECISION_F32, GF_DEVICE_AUTO);
    g->hc = (gf_hist_config){.bins = bins,
                             .block_frames = block,
                             .lo = lo,
                             .hi = hi,
                             .of_input = (flags & 1) != 0,
                             .mix = (flags & 2) != 0};
    g->frames = N;
    return 0;
}

/* n records into g->want; each lists its non-zero bins as (bin, count). */
static int read_gold_records(tu_reader *r, uint32_t n, hgold *g)
{
    const size_t bins = g->hc.bins;
    uint64_t *tmp = calloc(bins, sizeof *tmp);
    if (!tmp)
        return TU_FAIL("out of memory");
    int bad = 0;
    for (uint32_t i = 0; i < n && !r->bad && !bad; i++) {
        gf_hist_record rec;
        memset(&rec, 0, sizeof rec);
        rec.block = tu_read_uint(r, 8);
        rec.first_frame = tu_read_uint(r, 8);
        rec.frames = tu_read_uint(r, 8);
        rec.channel = (int)(int64_t)tu_read_uint(r, 8);
        rec.below = tu_read_uint(r, 8);
        rec.above = tu_read_uint(r, 8);
        rec.nan = tu_read_uint(r, 8);
        rec.min = tu_read_f64(r);
        rec.max = tu_read_f64(r);
        rec.rms = tu_read_f64(r);
        const uint64_t K = tu_read_uint(r, 8);
        memset(tmp, 0, bins * sizeof *tmp);
        for (uint64_t k = 0; k < K && !r->bad; k++) {
            const uint64_t b = tu_read_uint(r, 8), c = tu_read_uint(r, 8);
            if (b >= bins)
                r->bad = 1;
            else
                tmp[b] = c;
        }
        rec.bins = tmp;
        bad = tu_recs_add(&g->want, &rec, bins);
    }
    free(tmp);
    return bad;
}

/* Load one golden; g holds freeable buffers (or none) even when it fails. */
static int load_gold(const char *dir, const char *file, const char *name, hgold *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    memset(g, 0, sizeof *g);
    size_t size = 0;
    unsigned char *d = tu_read_file(path, &size);
    if (!d)
        return TU_FAIL("hist golden: cannot read %s", path);
    tu_reader r = {d, size, 0};
    uint32_t records = 0;
    int bad = read_gold_header(&r, path, name, size, g, &records);
    const size_t ss = tu_sample_size(g->cfg.precision), ns = g->frames * (size_t)g->cfg.channels;
    if (!bad) {
        g->taps = malloc(g->cfg.num_taps * sizeof(double));
        g->x = malloc(ns * ss + 1);
        if (!g->taps || !g->x)
            bad = TU_FAIL("out of memory");
    }
    if (!bad) {
        tu_read_samples(&r, g->taps, g->cfg.num_taps, 8);
        tu_read_samples(&r, g->x, ns, ss);
        bad = read_gold_records(&r, records, g);
        if (!bad && (r.bad || r.left != 0))
            bad = TU_FAIL("%s: truncated or too long (%zu bytes left)", path, r.left);
    }
    free(d);
    return bad;
}

static void free_gold(hgold *g)
{
    free(g->taps);
    free(g->x);
    tu_recs_free(&g->want);
}

/* The goldens' numbers the C side can check on its own: records cover the
 * stream, every sample counted once. */
static int gold_sanity(const hgold *g)
{
    const size_t per = g->hc.mix ? (size_t)g->cfg.channels : 1;
    uint64_t frames = 0;
    int bad = 0;
    for (size_t i = 0; i < g->want.n && !bad; i++) {
        const gf_hist_record *r = &g->want.r[i];
        uint64_t s = r->below + r->above + r->nan;
        for (size_t k = 0; k < g->hc.bins; k++)
            s += tu_recs_bins(&g->want, i)[k];
        bad += TU_CHECK(s == r->frames * per, "%s: golden record %zu counts %llu samples", g->name,
                        i, (unsigned long long)s);
        if (r->channel <= 0)
            frames += r->frames;
    }
    bad += TU_CHECK(frames == g->frames, "%s: golden records cover %llu of %zu frames", g->name,
                    (unsigned long long)frames, g->frames);
    return bad;
}

/* A golden through ref and cpu with many chunk sizes and call patterns. */
static int gold_runs(hgold *g, const char *file, size_t *runs)
{
    g->cfg.taps = g->taps;
    g->cfg.hist = &g->hc;
    const gf_device devs[] = {GF_DEVICE_REF, GF_DEVICE_CPU};
    const size_t N = g->frames;
    const tu_run_spec specs[] = {
        {TU_RUN_PUSHPULL, 0, 0, 0, 0, 0, 1, 0},    {TU_RUN_PUSHPULL, 1, 13, 5, 0, 1, 2, 0},
        {TU_RUN_PUSHPULL, 7, 97, 61, 1, 2, 3, 0},  {TU_RUN_SUBMIT, 4096, 333, 0, 1, 3, 4, 0},
        {TU_RUN_PROCESS, WHOLE, 0, 0, 0, 0, 5, 0}, {TU_RUN_PROCESS, 7, 500, 0, 1, 2, 6, 0},
        {TU_RUN_SUBMIT, 1000, 1, 0, 0, 1, 7, 0},   {TU_RUN_PUSHPULL, N + 3, 1000, 1, 1, 4, 8, 0},
    };
    int bad = 0;
    for (size_t d = 0; d < 2 && !bad; d++)
        for (size_t k = 0; k < sizeof specs / sizeof specs[0] && !bad; k++) {
            if (specs[k].chunk == 1 && specs[k].a == 1 && N > 3000)
                continue;
            char label[256];
            snprintf(label, sizeof label, "golden %s (%s) on %s, chunk %zu, %s %zu/%zu%s", g->name,
                     file, tu_device_name(devs[d]), specs[k].chunk, tu_run_kind_name(specs[k].kind),
                     specs[k].a, specs[k].b, specs[k].rnd ? " random" : "");
            g->cfg.device = devs[d];
            tu_recs got = {0};
            bad = tu_run_hist(label, &g->cfg, g->x, N, &specs[k], &got, NULL);
            if (!bad)
                bad = tu_recs_compare(label, &g->want, &got);
            tu_recs_free(&got);
            ++*runs;
        }
    return bad;
}

/* What the goldens cover, and the runs they took. */
typedef struct gold_tally {
    int seen_bins[5], seen_flags[4], seen_prec[2];
    size_t runs;
} gold_tally;

static int gold_case(const char *dir, const char *file, const char *name, void *ctx)
{
    gold_tally *t = ctx;
    hgold g;
    int bad = load_gold(dir, file, name, &g);
    if (!bad)
        bad = gold_sanity(&g);
    t->seen_bins[0] |= g.hc.bins == 1;
    t->seen_bins[1] |= g.hc.bins == 256;
    t->seen_bins[2] |= g.hc.bins == 4096;
    t->seen_bins[3] |= g.hc.bins == 65536;
    t->seen_bins[4] |= g.hc.block_frames == 1;
    t->seen_flags[g.hc.of_input | g.hc.mix << 1] = 1;
    t->seen_prec[g.cfg.precision] = 1;
    if (!bad)
        bad = gold_runs(&g, file, &t->runs);
    free_gold(&g);
    return bad;
}

static const char *hist_golden_dir; /* HIST_GOLDEN_DIR */

static int test_goldens(void)
{
    const double t0 = tu_now();
    gold_tally t;
    memset(&t, 0, sizeof t);
    size_t cases = 0;
    int bad = tu_manifest_each("hist golden", hist_golden_dir, gold_case, &t, &cases);
    bad += TU_CHECK(cases >= 10, "only %zu histogram goldens", cases);
    bad += TU_CHECK(t.seen_bins[0] && t.seen_bins[1] && t.seen_bins[2] && t.seen_bins[3] &&
                        t.seen_bins[4],
                    "goldens miss bins 1, 256, 4096 or 65536, or a 1-frame block");
    bad += TU_CHECK(t.seen_flags[0] && t.seen_flags[1] && t.seen_flags[2] && t.seen_flags[3],
                    "goldens miss one of each/mix x output/input");
    bad += TU_CHECK(t.seen_prec[0] && t.seen_prec[1], "goldens miss f32 or f64");
    printf("goldens: %zu cases, %zu runs on ref and cpu, all records exact, %.2f s\n", cases,
           t.runs, tu_now() - t0);
    return bad;
}

/* ---- random streams: everything against ref in one chunk ---- */

/* The ref oracle's records of xc, over the whole stream in one chunk: every
 * sample in exactly one count, records in stream order. */
static int check_oracle(const tu_hist_case *xc, const tu_recs *want)
{
    const size_t per = xc->mix ? (size_t)xc->channels : 1;
    const size_t nblocks = (xc->frames + xc->block - 1) / xc->block;
    int bad = TU_CHECK(want->n == nblocks * (xc->mix ? 1 : (size_t)xc->channels),
                       "%s: %zu records for %zu blocks", xc->name, want->n, nblocks);
    for (size_t i = 0; i < want->n && !bad; i++) {
        const gf_hist_record *r = &want->r[i];
        const uint64_t b = i / (xc->mix ? 1 : (size_t)xc->channels);
        uint64_t s = r->below + r->above + r->nan;
        for (size_t k = 0; k < xc->bins; k++)
            s += tu_recs_bins(want, i)[k];
        const uint64_t fr = b + 1 < nblocks ? xc->block : xc->frames - b * xc->block;
        bad += TU_CHECK(
            r->block == b && r->first_frame == b * xc->block && r->frames == fr &&
                r->channel == (xc->mix ? -1 : (int)(i % (size_t)xc->channels)) && s == fr * per,
            "%s: record %zu: block %llu first %llu frames %llu channel %d, %llu "
            "samples counted",
            xc->name, i, (unsigned long long)r->block, (unsigned long long)r->first_frame,
            (unsigned long long)r->frames, r->channel, (unsigned long long)s);
    }
    return bad;
}

/* The frames a run of xc takes, or 0 when it is skipped. */
static size_t cross_frames(const tu_hist_case *xc, const tu_run_spec *rs, gf_device dev)
{
    /* Serial ref at chunk 1 and the 1-frame pushes: a prefix is plenty. */
    size_t frames = xc->frames;
    if ((rs->chunk == 1 || (rs->a == 1 && rs->rnd)) && frames > 20000)
        frames = 20000;
    if (dev == GF_DEVICE_REF && rs->chunk != 1 && rs->chunk != 7)
        return 0; /* ref: the small chunks only (the oracle is ref already) */
    /* Each chunk merges nrec x bins counts: skip what would take long. */
    const size_t step = rs->kind == TU_RUN_SUBMIT && rs->a < rs->chunk ? rs->a : rs->chunk;
    if (step != 0 && step != WHOLE && frames / step * xc->bins > ((size_t)1 << 27))
        return 0;
    return frames;
}

/* One run of xc on dev as rs says over frames frames of in, against want
 * (the whole stream's records) or ref over that prefix. */
static int cross_run(const tu_hist_case *xc, const gf_config *c0, const void *in,
                     const tu_recs *want, gf_device dev, const tu_run_spec *rs, size_t frames)
{
    gf_config c = *c0;
    tu_recs ref_pre = {0}, got = {0};
    const tu_recs *oracle = want;
    char label[256];
    int bad = 0;
    if (frames != xc->frames) {
        c.device = GF_DEVICE_REF;
        snprintf(label, sizeof label, "%s: ref, one chunk, first %zu frames", xc->name, frames);
        bad = tu_run_hist(label, &c, in, frames, &tu_whole_stream, &ref_pre, NULL);
        oracle = &ref_pre;
    }
    c.device = dev;
    snprintf(label, sizeof label, "%s: %s, chunk %zu, %s %zu/%zu%s, %d threads, %zu frames",
             xc->name, tu_device_name(dev), rs->chunk, tu_run_kind_name(rs->kind), rs->a, rs->b,
             rs->rnd ? " random" : "", rs->threads, frames);
    if (!bad)
        bad = tu_run_hist(label, &c, in, frames, rs, &got, NULL);
    if (!bad)
        bad = tu_recs_compare(label, oracle, &got);
    tu_recs_free(&ref_pre);
    tu_recs_free(&got);
    return bad;
}

static int cross_case(const tu_hist_case *xc)
{
    const double t0 = tu_now();
    tu_input in;
    gf_hist_config hc;
    gf_config c;
    if (tu_hist_case_setup(xc, 0x5eed0000u + xc->frames + xc->taps, 77 + xc->taps, GF_DEVICE_REF,
                           &in, &hc, &c))
        return 1;
    tu_recs want = {0};
    char label[256];
    snprintf(label, sizeof label, "%s: ref, one chunk", xc->name);
    int bad = tu_run_hist(label, &c, in.x, xc->frames, &tu_whole_stream, &want, NULL);
    if (!bad)
        bad = check_oracle(xc, &want);
    const tu_run_spec specs[] = {
        {TU_RUN_PUSHPULL, 1, 0, 0, 0, 1, 11, 0},
        {TU_RUN_PUSHPULL, 7, 50, 30, 1, 2, 12, 0},
        {TU_RUN_PUSHPULL, 4096, 5000, 3000, 1, 3, 13, 0},
        {TU_RUN_PROCESS, 4096, 9000, 0, 1, 0, 14, 0},
        {TU_RUN_SUBMIT, 4096, 2000, 0, 1, 2, 15, 0},
        {TU_RUN_PROCESS, 0, 0, 0, 0, 0, 16, 0},
        {TU_RUN_PUSHPULL, WHOLE, 1, 1, 1, 4, 17, 0},
        {TU_RUN_SUBMIT, 7, 3, 0, 1, 1, 18, 0},
        {TU_RUN_PROCESS, 1000, 777, 0, 1, 3, 19, 0},
    };
    const gf_device devs[] = {GF_DEVICE_CPU, GF_DEVICE_REF};
    size_t runs = 0;
    for (size_t d = 0; d < 2 && !bad; d++)
        for (size_t k = 0; k < sizeof specs / sizeof specs[0] && !bad; k++) {
            const size_t frames = cross_frames(xc, &specs[k], devs[d]);
            if (frames == 0)
                continue;
            bad = cross_run(xc, &c, in.x, &want, devs[d], &specs[k], frames);
            runs++;
        }
    tu_recs_free(&want);
    tu_input_free(&in);
    printf("%-44s %zu frames x %d ch: %zu runs identical to ref, %.2f s\n", xc->name, xc->frames,
           xc->channels, runs, tu_now() - t0);
    return bad;
}

static int test_cross(void)
{
    const tu_hist_case cases[] = {
        {"T=5 same f32 stereo 256 bins each", 2, 150000, 5, GF_MODE_SAME, GF_PRECISION_F32, 256,
         48000, 0, 0},
        {"T=63 same f32 stereo 256 bins input", 2, 100000, 63, GF_MODE_SAME, GF_PRECISION_F32, 256,
         4096, 1, 0},
        {"T=63 same f64 3ch 4096 bins mix", 3, 60000, 63, GF_MODE_SAME, GF_PRECISION_F64, 4096,
         10000, 0, 1},
        {"T=4 causal f64 mono 1 bin, block 7", 1, 30000, 4, GF_MODE_CAUSAL, GF_PRECISION_F64, 1, 7,
         0, 0},
        {"T=25 same f32 5ch 100 bins, block 1", 5, 3000, 25, GF_MODE_SAME, GF_PRECISION_F32, 100, 1,
         0, 0},
        {"T=2 same f32 mono 65536 bins input mix", 1, 70000, 2, GF_MODE_SAME, GF_PRECISION_F32,
         65536, 65536, 1, 1},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !bad; i++)
        bad += cross_case(&cases[i]);
    return bad;
}

/* ---- same mode: what input and output histograms count ---- */

/* tu_config with histograms. */
static gf_config hist_cfg(int C, size_t T, const double *taps, gf_mode mode, gf_precision p,
                          gf_device dev, const gf_hist_config *hc)
{
    gf_config c = tu_config(C, T, taps, mode, p, dev);
    c.hist = hc;
    return c;
}

/*
 * In same mode with T taps: the input histograms equal those of the input
 * itself run through the identity filter (so neither the halo nor the
 * flush zeros are counted: the input here is non-zero everywhere, a zero
 * counted would change bin counts), and the output histograms equal those
 * of the output stream run through the identity filter.
 */
static int test_same_mode(void)
{
    int bad = 0;
    const size_t Ts[] = {5, 63};
    const size_t N = 20011, B = 1000;
    const int C = 2;
    for (size_t ti = 0; ti < 2 && !bad; ti++) {
        const size_t T = Ts[ti];
        float *in = malloc(N * C * sizeof(float)), *out = malloc(N * C * sizeof(float));
        double taps[63];
        if (!in || !out) {
            free(in);
            free(out);
            return TU_FAIL("out of memory");
        }
        tu_rng r = {T};
        for (size_t i = 0; i < N * C; i++)
            in[i] = (float)(0.25 + 0.5 * (tu_rng_sym(&r) + 1.0) / 2.0); /* in [0.25, 0.75) */
        tu_fill_taps(taps, T, 3);
        for (int dev = 0; dev < 2 && !bad; dev++) {
            const gf_device d = dev ? GF_DEVICE_CPU : GF_DEVICE_REF;
            for (int of_input = 0; of_input < 2 && !bad; of_input++) {
                /* Zero lies in bin 4 of [-1, 1] in 8 bins, the input in bins 5
                 * and 6: a counted flush zero or halo zero would show. */
                gf_hist_config hc = {8, B, -1.0, 1.0, of_input, 0};
                gf_config c = hist_cfg(C, T, taps, GF_MODE_SAME, GF_PRECISION_F32, d, &hc);
                tu_recs got = {0}, want = {0};
                char label[256];
                snprintf(label, sizeof label, "same mode T=%zu on %s, %s histograms", T,
                         tu_device_name(d), of_input ? "input" : "output");
                const tu_run_spec rs = {TU_RUN_PUSHPULL, 777, 1234, 999, 1, 2, T, 0};
                bad = tu_run_hist(label, &c, in, N, &rs, &got, out);
                /* The stream histogrammed, through the identity. */
                gf_hist_config hid = hc;
                hid.of_input = 1 - of_input; /* either way: input == output there */
                gf_config ci =
                    hist_cfg(C, 1, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_REF, &hid);
                char l2[300];
                snprintf(l2, sizeof l2, "%s: identity over the %s", label,
                         of_input ? "input" : "output");
                if (!bad)
                    bad =
                        tu_run_hist(l2, &ci, of_input ? in : out, N, &tu_whole_stream, &want, NULL);
                if (!bad)
                    bad = tu_recs_compare(label, &want, &got);
                if (!bad && of_input) {
                    for (size_t i = 0; i < got.n; i++)
                        bad += TU_CHECK(tu_recs_bins(&got, i)[4] == 0 && got.r[i].below == 0,
                                        "%s: record %zu counts a zero or a negative", label, i);
                    const gf_hist_record *last = &got.r[got.n - 1];
                    bad += TU_CHECK(got.n == 2 * ((N + B - 1) / B) && last->frames == N % B &&
                                        last->first_frame == N - N % B,
                                    "%s: last record frames %llu at %llu, %zu records", label,
                                    (unsigned long long)last->frames,
                                    (unsigned long long)last->first_frame, got.n);
                }
                tu_recs_free(&got);
                tu_recs_free(&want);
            }
        }
        free(in);
        free(out);
        printf("same mode T=%zu: input histograms count input only, output ones the output\n", T);
    }
    return bad;
}

/* Mix against each over the same stream: counts add up, min/max are the
 * extremes of the channels' (in the order -0.0 < +0.0). */
static int key_less(double a, double b)
{
    if (a < b)
        return 1;
    if (a > b)
        return 0;
    return signbit(a) && !signbit(b);
}

static int test_mix_vs_each(void)
{
    const size_t N = 30000, B = 4096, BINS = 64;
    const int C = 3;
    double *in = malloc(N * C * sizeof(double));
    if (!in)
        return TU_FAIL("out of memory");
    tu_fill_hist_signal(in, N * C, sizeof(double), 4242, -1.0, 1.0);
    int bad = 0;
    tu_recs each = {0}, mix = {0};
    gf_hist_config he = {BINS, B, -1.0, 1.0, 0, 0}, hm = {BINS, B, -1.0, 1.0, 0, 1};
    gf_config ce = hist_cfg(C, 7, NULL, GF_MODE_SAME, GF_PRECISION_F64, GF_DEVICE_CPU, &he);
    gf_config cm = hist_cfg(C, 7, NULL, GF_MODE_SAME, GF_PRECISION_F64, GF_DEVICE_CPU, &hm);
    const tu_run_spec rs = {TU_RUN_PUSHPULL, 5000, 3000, 2000, 1, 2, 99, 0};
    bad = tu_run_hist("mix vs each: each", &ce, in, N, &rs, &each, NULL);
    if (!bad)
        bad = tu_run_hist("mix vs each: mix", &cm, in, N, &rs, &mix, NULL);
    if (!bad)
        bad = TU_CHECK(each.n == mix.n * C, "%zu each records, %zu mix", each.n, mix.n);
    for (size_t b = 0; b < mix.n && !bad; b++) {
        const gf_hist_record *m = &mix.r[b];
        uint64_t below = 0, above = 0, nan = 0, bins[64] = {0};
        double mn = NAN, mx = NAN;
        for (int ch = 0; ch < C; ch++) {
            const gf_hist_record *e = &each.r[b * C + (size_t)ch];
            below += e->below;
            above += e->above;
            nan += e->nan;
            for (size_t k = 0; k < BINS; k++)
                bins[k] += tu_recs_bins(&each, b * C + (size_t)ch)[k];
            if (!isnan(e->min) && (isnan(mn) || key_less(e->min, mn)))
                mn = e->min;
            if (!isnan(e->max) && (isnan(mx) || key_less(mx, e->max)))
                mx = e->max;
            bad += TU_CHECK(e->block == m->block && e->frames == m->frames && e->channel == ch,
                            "each record %zu does not match mix block %zu", b * C + ch, b);
        }
        bad += TU_CHECK(m->channel == -1 && m->below == below && m->above == above &&
                            m->nan == nan && memcmp(bins, tu_recs_bins(&mix, b), sizeof bins) == 0,
                        "mix block %zu: counts are not the sum of the channels'", b);
        bad += TU_CHECK(tu_same_double(m->min, mn) && tu_same_double(m->max, mx),
                        "mix block %zu: min/max %a/%a, channels' extremes %a/%a", b, m->min, m->max,
                        mn, mx);
    }
    printf("mix vs each: %zu blocks, counts and extremes agree\n", mix.n);
    tu_recs_free(&each);
    tu_recs_free(&mix);
    free(in);
    return bad;
}

/* Record i of a stream with one frame per block must be exactly sample i. */
static int check_single(size_t i, const gf_hist_record *r, double x, int C)
{
    uint64_t s = 0;
    size_t where = 65536;
    for (size_t k = 0; k < 65536; k++)
        if (r->bins[k]) {
            s += r->bins[k];
            where = k;
        }
    const int in_range = x >= -1.0 && x <= 1.0;
    /* The bin of x by the edges lo + k * step (exact here), hi in the last. */
    size_t want = 65536;
    if (in_range) {
        want = (size_t)((x + 1.0) / (2.0 / 65536));
        if (want > 65535)
            want = 65535;
    }
    int bad = TU_CHECK(r->block == i / (size_t)C && r->frames == 1 &&
                           r->channel == (int)(i % (size_t)C) && s == (uint64_t)in_range &&
                           where == want && r->below == (x < -1.0) && r->above == (x > 1.0) &&
                           r->nan == (uint64_t)(x != x),
                       "tiny blocks: record %zu (x = %a): bin %zu (want %zu), below %llu above "
                       "%llu nan %llu",
                       i, x, where, want, (unsigned long long)r->below,
                       (unsigned long long)r->above, (unsigned long long)r->nan);
    if (x == x)
        bad += TU_CHECK(tu_same_double(r->min, x) && tu_same_double(r->max, x),
                        "tiny blocks: record %zu: min/max %a/%a of %a", i, r->min, r->max, x);
    else
        bad += TU_CHECK(isnan(r->min) && isnan(r->max) && isnan(r->rms),
                        "tiny blocks: record %zu: NaN sample, min/max/rms not NaN", i);
    return bad;
}

/* One frame per block, 8 channels, 65536 bins: the chunk is shortened to
 * bound the partials, and every record is exactly its one sample (checked
 * as they come: they are 512 KiB each). */
static int test_tiny_blocks(void)
{
    enum { N = 200, C = 8 };
    static float in[N * C], out[N * C + 4096];
    tu_fill_hist_signal(in, N * C, sizeof(float), 777, -1.0, 1.0);
    gf_hist_config hc = {65536, 1, -1.0, 1.0, 0, 0};
    int bad = 0;
    for (int d = 0; d < 2 && !bad; d++) {
        gf_config c = hist_cfg(C, 1, NULL, GF_MODE_SAME, GF_PRECISION_F32,
                               d ? GF_DEVICE_CPU : GF_DEVICE_REF, &hc);
        c.chunk_frames = 100000;
        gf_engine *e = NULL;
        gf_status st = gf_engine_create(&c, &e, NULL, 0);
        if (st != GF_OK)
            return TU_FAIL("tiny blocks: create: %s", gf_strerror(st));
        /* One slot; a segment is 8 partials of 48 + 2 * 65536 bytes (16-bit
         * counts: a partial counts one sample), 1,048,960 bytes: 64 MiB hold
         * 63 segments, so chunks of 63 frames (1 frame a block). */
        const size_t L = gf_engine_chunk_frames(e);
        bad += TU_CHECK(L == 63, "tiny blocks: chunk of %zu frames, expected 63", L);
        size_t off = 0, n = 0, got = 0;
        gf_hist_record r;
        tu_rng rng = {5};
        while (!bad && off < N) {
            size_t k = 1 + tu_rng_below(&rng, 45);
            if (k > N - off)
                k = N - off;
            st = gf_engine_process(e, in + off * C, k, out, &got);
            bad += TU_CHECK(st == GF_OK, "tiny blocks: process: %s", gf_strerror(st));
            off += k;
            while (!bad && gf_engine_hist_next(e, &r) == GF_OK)
                bad += check_single(n, &r, in[n], C), n++;
        }
        if (!bad)
            gf_engine_flush(e);
        while (!bad && gf_engine_hist_next(e, &r) == GF_OK)
            bad += check_single(n, &r, in[n], C), n++;
        bad += TU_CHECK(bad || n == N * C, "tiny blocks: %zu records for %d samples", n, N * C);
        gf_engine_destroy(e);
    }
    printf("blocks of one frame: chunk bounded, every record its own sample\n");
    return bad;
}

/* test_lifecycle's stream: blocks (and chunks) of LIFE_B frames, LIFE_C
 * channels. */
enum { LIFE_B = 100, LIFE_C = 2 };

/* Two full blocks and one frame in: the full blocks' records come before
 * flush, the short last block's after it. */
static int life_blocks(gf_engine *e, const char *dn, const float *in, float *out)
{
    enum { B = LIFE_B, C = LIFE_C };
    gf_hist_record rec;
    size_t used = 0, got = 0, off = 0, total = 0;
    int bad =
        TU_CHECK(gf_engine_hist_next(e, &rec) == GF_NO_RECORD, "%s: record before any input", dn);
    while (off < 2 * B + 1 && !bad) {
        bad += TU_CHECK(gf_engine_push(e, in + off * C, 2 * B + 1 - off, &used) == GF_OK,
                        "%s: push", dn);
        bad += TU_CHECK(gf_engine_pull(e, out + total * C, 3 * B - total, &got) == GF_OK,
                        "%s: pull", dn);
        off += used;
        total += got;
    }
    bad += TU_CHECK(total == 2 * B, "%s: %zu frames out of 2 full chunks", dn, total);
    int n = 0;
    while (gf_engine_hist_next(e, &rec) == GF_OK) {
        bad += TU_CHECK(rec.block == (uint64_t)(n / C) && rec.frames == B && rec.channel == n % C &&
                            rec.bins != NULL,
                        "%s: record %d before flush: block %llu frames %llu", dn, n,
                        (unsigned long long)rec.block, (unsigned long long)rec.frames);
        n++;
    }
    bad += TU_CHECK(n == 2 * C, "%s: %d records before flush, expected %d", dn, n, 2 * C);
    /* The third block has 1 of its frames: nothing until flush. */
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: flush", dn);
    n = 0;
    while (gf_engine_hist_next(e, &rec) == GF_OK) {
        bad += TU_CHECK(rec.block == 2 && rec.frames == 1 && rec.first_frame == 2 * B,
                        "%s: last record block %llu frames %llu", dn, (unsigned long long)rec.block,
                        (unsigned long long)rec.frames);
        n++;
    }
    bad += TU_CHECK(n == C, "%s: %d records after flush, expected %d", dn, n, C);
    return bad;
}

/* Reset: a partial stream's records are forgotten; a new one starts at block 0. */
static int life_reset(gf_engine *e, const char *dn, const float *in, float *out)
{
    enum { B = LIFE_B };
    gf_hist_record rec;
    size_t used = 0, got = 0;
    int bad = TU_CHECK(gf_engine_reset(e) == GF_OK, "%s: reset", dn);
    bad += TU_CHECK(gf_engine_push(e, in, B + 50, &used) == GF_OK, "%s: push", dn);
    bad += TU_CHECK(gf_engine_pull(e, out, 3 * B, &got) == GF_OK, "%s: pull", dn);
    bad += TU_CHECK(gf_engine_reset(e) == GF_OK, "%s: reset", dn);
    bad += TU_CHECK(gf_engine_hist_next(e, &rec) == GF_NO_RECORD, "%s: a record after reset", dn);
    bad += TU_CHECK(gf_engine_push(e, in, B, &used) == GF_OK, "%s: push", dn);
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "%s: flush", dn);
    bad += TU_CHECK(gf_engine_hist_next(e, &rec) == GF_OK && rec.block == 0 && rec.frames == B &&
                        rec.channel == 0,
                    "%s: after reset, first record block %llu frames %llu", dn,
                    (unsigned long long)rec.block, (unsigned long long)rec.frames);
    /* Its counts are of this stream only: B samples in [0, 0.2). */
    uint64_t s = rec.below + rec.above + rec.nan;
    for (int k = 0; k < 16; k++)
        s += rec.bins[k];
    bad += TU_CHECK(s == B, "%s: after reset the first record counts %llu samples", dn,
                    (unsigned long long)s);
    return bad;
}

/* An empty stream has no records; histograms off: none either. */
static int life_empty_and_off(gf_config c, const char *dn, const float *in, float *out)
{
    enum { B = LIFE_B };
    gf_hist_record rec;
    size_t used = 0, got = 0;
    gf_engine *e = NULL;
    int bad = 0;
    if (gf_engine_create(&c, &e, NULL, 0) == GF_OK) {
        bad += TU_CHECK(gf_engine_flush(e) == GF_OK && gf_engine_hist_next(e, &rec) == GF_NO_RECORD,
                        "%s: a record from an empty stream", dn);
        gf_engine_destroy(e);
    }
    c.hist = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) == GF_OK) {
        gf_engine_push(e, in, 2 * B, &used);
        gf_engine_flush(e);
        gf_engine_pull(e, out, 3 * B, &got);
        bad += TU_CHECK(gf_engine_hist_next(e, &rec) == GF_ERR_STATE,
                        "%s: a record with histograms off", dn);
        bad += TU_CHECK(gf_engine_hist_next(e, NULL) == GF_ERR_INVALID_ARGUMENT,
                        "%s: NULL record accepted", dn);
        gf_engine_destroy(e);
    }
    return bad;
}

/* Records appear as soon as their blocks are filtered, before flush; the
 * last short block after flush; reset forgets everything. */
static int test_lifecycle(void)
{
    enum { B = LIFE_B, C = LIFE_C };
    float in[(3 * B + 1) * C];
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        in[i] = (float)i / 1000.0f;
    float out[(3 * B + 1) * C];
    gf_hist_config hc = {16, B, 0.0, 1.0, 0, 0};
    int bad = 0;
    for (int d = 0; d < 2; d++) {
        const char *dn = d ? "cpu" : "ref";
        gf_config c = hist_cfg(C, 3, NULL, GF_MODE_CAUSAL, GF_PRECISION_F32,
                               d ? GF_DEVICE_CPU : GF_DEVICE_REF, &hc);
        c.chunk_frames = B;
        gf_engine *e = NULL;
        if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
            return TU_FAIL("lifecycle: create on %s", dn);
        bad += life_blocks(e, dn, in, out);
        bad += life_reset(e, dn, in, out);
        gf_engine_destroy(e);
        bad += life_empty_and_off(c, dn, in, out);
    }
    gf_hist_record rec;
    bad += TU_CHECK(gf_engine_hist_next(NULL, &rec) == GF_ERR_INVALID_ARGUMENT,
                    "NULL engine accepted");
    printf("lifecycle: records before flush, the short last block, reset, empty and off\n");
    return bad;
}

/* ---- validation ---- */

static int expect_bad(const char *what, const gf_hist_config *hc, const char *sub)
{
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_REF;
    c.hist = hc;
    gf_engine *e = (gf_engine *)&e;
    char detail[256] = "";
    const gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    int bad =
        TU_CHECK(st == GF_ERR_INVALID_ARGUMENT && e == NULL,
                 "%s: status %d (%s), expected invalid argument", what, (int)st, gf_strerror(st));
    bad += TU_CHECK(strstr(detail, sub) != NULL, "%s: detail '%s' does not name '%s'", what, detail,
                    sub);
    if (st == GF_OK)
        gf_engine_destroy(e);
    return bad;
}

static int expect_good(const char *what, const gf_hist_config *hc)
{
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_REF;
    c.hist = hc;
    gf_engine *e = NULL;
    char detail[256] = "";
    const gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    gf_engine_destroy(e);
    return TU_CHECK(st == GF_OK, "%s: refused: %s (%s)", what, gf_strerror(st), detail);
}

static int test_invalid(void)
{
    const gf_hist_config ok = {256, 4800, -1.0, 1.0, 0, 0};
    gf_hist_config h;
    int bad = expect_good("a plain config", &ok);
    h = ok;
    h.bins = 0;
    bad += expect_bad("bins 0", &h, "hist.bins");
    h.bins = 65537;
    bad += expect_bad("bins 65537", &h, "hist.bins");
    h.bins = 65536;
    bad += expect_good("bins 65536", &h);
    h.bins = 1;
    bad += expect_good("bins 1", &h);
    h = ok;
    h.block_frames = 0;
    bad += expect_bad("block 0", &h, "hist.block_frames");
    h.block_frames = ((size_t)1 << 28) + 1;
    bad += expect_bad("block 2^28 + 1", &h, "hist.block_frames");
    h.block_frames = (size_t)1 << 28;
    bad += expect_good("block 2^28", &h);
    h = ok;
    h.lo = NAN;
    bad += expect_bad("lo NaN", &h, "hist.lo");
    h = ok;
    h.hi = INFINITY;
    bad += expect_bad("hi inf", &h, "hist.hi");
    h = ok;
    h.lo = -INFINITY;
    bad += expect_bad("lo -inf", &h, "finite");
    h = ok;
    h.lo = 1.0;
    bad += expect_bad("lo == hi", &h, "below hist.hi");
    h.lo = 2.0;
    bad += expect_bad("lo > hi", &h, "below hist.hi");
    h = ok;
    h.lo = -1e308;
    h.hi = 1e308;
    bad += expect_bad("hi - lo overflows", &h, "hi - lo");
    h = ok;
    h.lo = 0.0;
    h.hi = 1e-320;
    bad += expect_bad("bins / (hi - lo) overflows", &h, "bins / (hi - lo)");
    h = ok;
    h.of_input = 2;
    bad += expect_bad("of_input 2", &h, "hist.of_input");
    h = ok;
    h.mix = -1;
    bad += expect_bad("mix -1", &h, "hist.mix");
    printf("validation: bad histogram configs refused with the field named\n");
    return bad;
}

/* A record's bins stay valid, unchanged, while the engine queues many more
 * records (the queue grows; count buffers move between the accumulator,
 * the queue and the caller, never copied), and every later record is
 * whole: each block's counts add up to its samples. */
static int test_record_lifetime(void)
{
    enum { B = 10, NB = 300 };
    static float in[NB * B], out[NB * B];
    for (size_t i = 0; i < NB * B; i++)
        in[i] = (float)((i * 7919) % 1000) / 1000.0f;
    gf_hist_config hc = {8, B, 0.0, 1.0, 0, 0};
    gf_config c = hist_cfg(1, 1, NULL, GF_MODE_CAUSAL, GF_PRECISION_F32, GF_DEVICE_REF, &hc);
    c.chunk_frames = 3 * B + 3;
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return TU_FAIL("record lifetime: create");
    int bad = 0;
    size_t got = 0;
    gf_hist_record held;
    uint64_t copy[8];
    for (int round = 0; round < 2 && !bad; round++) {
        bad += TU_CHECK(gf_engine_reset(e) == GF_OK, "record lifetime: reset");
        bad += TU_CHECK(gf_engine_process(e, in, 5 * B, out, &got) == GF_OK,
                        "record lifetime: process");
        bad += TU_CHECK(gf_engine_hist_next(e, &held) == GF_OK, "record lifetime: no first record");
        if (bad)
            break;
        memcpy(copy, held.bins, sizeof copy);
        bad += TU_CHECK(gf_engine_process(e, in + 5 * B, (NB - 5) * B, out, &got) == GF_OK,
                        "record lifetime: process");
        bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "record lifetime: flush");
        bad += TU_CHECK(memcmp(copy, held.bins, sizeof copy) == 0,
                        "record lifetime: a held record's bins changed while %d blocks queued", NB);
        gf_hist_record rec;
        size_t n = 1;
        while (!bad && gf_engine_hist_next(e, &rec) == GF_OK) {
            uint64_t sum = rec.below + rec.above + rec.nan, want[8] = {0};
            for (int k = 0; k < 8; k++)
                sum += rec.bins[k];
            for (size_t f = rec.first_frame; f < rec.first_frame + rec.frames; f++)
                want[(int)(in[f] * 8.0)]++; /* in[f] < 1; edges k/8 exact */
            bad += TU_CHECK(rec.block == n && sum == B && memcmp(want, rec.bins, sizeof want) == 0,
                            "record lifetime: round %d record %zu (block %llu) counts %llu", round,
                            n, (unsigned long long)rec.block, (unsigned long long)sum);
            n++;
        }
        bad += TU_CHECK(bad || n == NB, "record lifetime: %zu records, expected %d", n, NB);
    }
    gf_engine_destroy(e);
    if (!bad)
        printf("record lifetime: held bins unchanged over %d queued blocks, all counts whole\n",
               NB);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s HIST_GOLDEN_DIR\n", argv[0]);
        return 1;
    }
    hist_golden_dir = argv[1];
    static const tu_step steps[] = {test_invalid,     test_lifecycle,   test_record_lifetime,
                                    test_goldens,     test_tiny_blocks, test_same_mode,
                                    test_mix_vs_each, test_cross};
    return tu_run_steps("test_hist", "all records exact", steps, sizeof steps / sizeof steps[0]);
}
