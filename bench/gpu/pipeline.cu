/* bench_gpu section c: the host-to-host pipeline through the engine. */
#include "bench_gpu.h"

static std::string pow2_name(size_t v)
{
    char b[64];
    if (v && (v & (v - 1)) == 0) {
        int e = 0;
        while (((size_t)1 << e) != v)
            e++;
        snprintf(b, sizeof b, "2^%d", e);
    } else
        snprintf(b, sizeof b, "%zu", v);
    return b;
}

/* One whole stream through the engine (see run_stream_with). */
static double run_stream(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                         size_t *total)
{
    return run_stream_with(e, in, frames, out, cap, total, [](gf_engine *) {});
}

static gf_engine *make_engine(const options &o, gf_device dev, size_t chunk_frames)
{
    gf_config cfg = gf_config_default();
    cfg.channels = 1;
    cfg.num_taps = 5; /* taps NULL: the mean filter 1/5 */
    cfg.mode = GF_MODE_SAME;
    cfg.precision = GF_PRECISION_F32;
    cfg.device = dev;
    cfg.chunk_frames = chunk_frames;
    cfg.cuda_device = o.device;
    char what[64];
    snprintf(what, sizeof what, "(%s, chunk %zu)", gf_device_name(dev), chunk_frames);
    return create_engine(&cfg, what);
}

/* Check a pipeline output against the CPU backend's; record it in r. */
static void check_stream(const float *got, size_t total, const float *want, size_t frames, row *r,
                         const char *when)
{
    double m = 0;
    size_t bad = total == frames ? compare(got, want, frames, &m) : frames;
    if (total != frames)
        m = INFINITY;
    r->maxerr = std::max(isnan(r->maxerr) ? 0.0 : r->maxerr, m);
    if (bad == 0) {
        if (r->check == "-")
            r->check = "exact";
        return; /* else an earlier failure stays */
    }
    char b[96];
    snprintf(b, sizeof b, "DIFF %zu", bad);
    r->check = b;
    g_wrong = 1;
    fprintf(stderr,
            "bench_gpu: %s (%s): %zu of %zu frames differ from the cpu backend (%zu produced)\n",
            r->name.c_str(), when, bad, frames, total);
}

/* Chunk sizes of the cuda engines, in frames; 0: the backend's default. */
static const size_t k_chunks[] = {0, (size_t)1 << 20, (size_t)1 << 22, (size_t)1 << 24};
static const size_t NCHUNKS = sizeof k_chunks / sizeof k_chunks[0];

/* The pipeline's host buffers: pinned input (random) and output, the
 * oracle's output, and pageable copies of input and output, made on first
 * use. */
typedef struct pipe_bufs {
    size_t frames, cap;
    double in_mb; /* input MB, what the rows' GB/s count */
    float *in_p, *out_p, *ref, *in_m, *out_m;
} pipe_bufs;

static pipe_bufs pipe_alloc(const options &o)
{
    pipe_bufs b;
    b.frames = o.pipe_bytes / sizeof(float);
    size_t max_chunk = (size_t)1 << 21;
    for (size_t i = 0; i < NCHUNKS; i++)
        max_chunk = std::max(max_chunk, k_chunks[i]);
    /* Output capacity: frames + the engine's latency bound (4 chunks). */
    b.cap = b.frames + 4 * max_chunk;
    b.in_mb = (double)b.frames * sizeof(float) / 1e6;
    fprintf(stderr, "bench_gpu: pipeline: %zu f32 frames (%s)\n", b.frames,
            size_name(b.frames * sizeof(float)).c_str());
    b.in_p = (float *)gf_host_alloc(b.frames * sizeof(float));
    b.out_p = (float *)gf_host_alloc(b.cap * sizeof(float));
    b.ref = (float *)xmalloc(b.cap * sizeof(float));
    if (!b.in_p || !b.out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name(b.frames * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    fill_random_f32(b.in_p, b.frames, 2028);
    b.in_m = b.out_m = NULL;
    return b;
}

static void pipe_make_pageable(pipe_bufs *b)
{
    b->in_m = (float *)xmalloc(b->frames * sizeof(float));
    b->out_m = (float *)xmalloc(b->cap * sizeof(float));
    memcpy(b->in_m, b->in_p, b->frames * sizeof(float)); /* faults the pages in too */
    memset(b->out_m, 0, b->cap * sizeof(float));
}

static void pipe_free(pipe_bufs *b)
{
    free(b->in_m);
    free(b->out_m);
    free(b->ref);
    gf_host_free(b->in_p);
    gf_host_free(b->out_p);
}

/* The oracle's row: its output checked against the serial loop over the
 * stream's first 2^20 and last 2^16 frames, with the cpu engine's taps. */
static void oracle_row(const ceilings &ce, gf_engine *cpu, const pipe_bufs &b, double t_cpu)
{
    double hd[8];
    gf_engine_taps(cpu, hd, 8);
    float h[5];
    for (int k = 0; k < 5; k++)
        h[k] = (float)hd[k];
    const long long F = (long long)b.frames;
    const long long P = std::min(F, 1LL << 20), Q = std::min(F, 1LL << 16);
    float *y = (float *)xmalloc((size_t)P * sizeof(float));
    double m1 = 0, m2 = 0;
    serial_fir(b.in_p, F, h, 5, 0, P, y);
    size_t bad = compare(b.ref, y, (size_t)P, &m1);
    serial_fir(b.in_p, F, h, 5, F - Q, F, y);
    bad += compare(b.ref + (F - Q), y, (size_t)Q, &m2);
    free(y);
    row r = make_row("c", "cpu backend f32 (oracle)");
    r.mb = b.in_mb;
    r.ms = r.ms_min = r.ms_max = t_cpu * 1e3;
    r.gbs = b.in_mb / r.ms;
    r.pct = 100.0 * r.gbs / ce.both_each_gbs;
    r.ceiling = "PCIe both-dir each way";
    r.speedup = 1.0;
    r.maxerr = std::max(m1, m2);
    r.check = bad ? "DIFF vs serial" : "ref (1 run)";
    if (bad) {
        g_wrong = 1;
        fprintf(stderr,
                "bench_gpu: the cpu backend differs from the serial loop in %zu of "
                "the %lld frames checked\n",
                bad, P + Q);
    }
    g_rows.push_back(r);
}

/* The oracle: the CPU backend over the whole stream into b->ref, itself
 * checked against the serial loop at both ends. Returns its wall seconds. */
static double pipe_oracle(const options &o, const ceilings &ce, pipe_bufs *b)
{
    memset(b->ref, 0xFF, b->cap * sizeof(float));
    gf_engine *cpu = make_engine(o, GF_DEVICE_CPU, 0);
    size_t total = 0;
    const double t_cpu = run_stream(cpu, b->in_p, b->frames, b->ref, b->cap, &total);
    if (total != b->frames) {
        fprintf(stderr, "bench_gpu: cpu backend produced %zu of %zu frames\n", total, b->frames);
        exit(EXIT_WRONG);
    }
    oracle_row(ce, cpu, *b, t_cpu);
    gf_engine_destroy(cpu);
    return t_cpu;
}

/* The pageable buffers registered with gf_host_register (made first where
 * needed): a row of what that costs, once. Returns 0, or 1 when the driver
 * refuses (said on stderr: the registered rows are left out). */
static int pipe_register(pipe_bufs *b)
{
    if (!b->in_m)
        pipe_make_pageable(b);
    char why[256];
    const double t0 = now_s();
    gf_status st = gf_host_register(b->in_m, b->frames * sizeof(float), why, sizeof why);
    if (st == GF_OK &&
        (st = gf_host_register(b->out_m, b->cap * sizeof(float), why, sizeof why)) != GF_OK)
        gf_host_unregister(b->in_m);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_host_register: %s (%s): no registered rows\n",
                gf_strerror(st), why);
        return 1;
    }
    row r = make_row("c", "gf_host_register of the pageable in + out, once");
    r.mb = (double)(b->frames + b->cap) * sizeof(float) / 1e6;
    r.ms = r.ms_min = r.ms_max = (now_s() - t0) * 1e3;
    r.gbs = r.mb / r.ms;
    g_rows.push_back(r);
    return 0;
}

static void pipe_unregister(pipe_bufs *b)
{
    gf_host_unregister(b->in_m);
    gf_host_unregister(b->out_m);
}

/* How a pipeline row's buffers are held. */
enum { PINNED, PAGEABLE, REGISTERED, KINDS };
static const char *const k_kind_name[KINDS] = {"pinned (zero-copy)", "pageable (staged)",
                                               "pageable, registered"};

/* One cuda engine on pinned or pageable buffers: a warm-up on a poisoned
 * output, checked; o.pipe_reps timed runs, the last one checked. */
static row pipe_case(const options &o, const ceilings &ce, gf_engine *e, bool pageable,
                     const char *name, pipe_bufs *b, double t_cpu)
{
    if (pageable && !b->in_m)
        pipe_make_pageable(b);
    const float *in = pageable ? b->in_m : b->in_p;
    float *out = pageable ? b->out_m : b->out_p;
    const size_t frames = b->frames, cap = b->cap;
    row r = make_row("c", name);
    r.mb = b->in_mb;
    size_t total = 0;
    memset(out, 0xFF, cap * sizeof(float));
    run_stream(e, in, frames, out, cap, &total);
    check_stream(out, total, b->ref, frames, &r, "warm-up");
    std::vector<double> t;
    for (int k = 0; k < o.pipe_reps; k++)
        t.push_back(run_stream(e, in, frames, out, cap, &total) * 1e3);
    check_stream(out, total, b->ref, frames, &r, "last timed run");
    fill_stats(&r, summarise(t, 1));
    r.pct = 100.0 * r.gbs / ce.both_each_gbs;
    r.ceiling = "PCIe both-dir each way";
    r.speedup = t_cpu * 1e3 / r.ms;
    return r;
}

void bench_pipeline(const options &o, const ceilings &ce, best *best_pipe, best *best_pageable)
{
    pipe_bufs b = pipe_alloc(o);
    const double t_cpu = pipe_oracle(o, ce, &b);
    /* Staged rows first, then the same buffers registered. */
    static const int order[KINDS] = {PINNED, PAGEABLE, REGISTERED};
    int registered = 0;
    for (int k = 0; k < KINDS; k++) {
        const int kind = order[k];
        if (kind == REGISTERED && !(registered = pipe_register(&b) == 0))
            break;
        for (size_t ci = 0; ci < NCHUNKS; ci++) {
            if (k_chunks[ci] > b.frames)
                continue;
            gf_engine *e = make_engine(o, GF_DEVICE_CUDA, k_chunks[ci]);
            const size_t L = gf_engine_chunk_frames(e);
            if (gf_engine_device(e) != GF_DEVICE_CUDA) {
                fprintf(stderr, "bench_gpu: asked for cuda, got backend %s\n",
                        gf_engine_backend(e));
                exit(EXIT_ERROR);
            }
            char name[128];
            snprintf(name, sizeof name, "cuda %s chunk %s%s", k_kind_name[kind],
                     pow2_name(L).c_str(), k_chunks[ci] == 0 ? " (default)" : "");
            g_rows.push_back(pipe_case(o, ce, e, kind != PINNED, name, &b, t_cpu));
            note_best(kind == PINNED ? best_pipe : best_pageable, g_rows.back());
            gf_engine_destroy(e);
        }
    }
    if (registered)
        pipe_unregister(&b);
    pipe_free(&b);
}
