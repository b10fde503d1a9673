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

/* One whole stream through the engine: reset, process, flush, drain.
 * Returns wall seconds; *total receives the frames written to out. */
static double run_stream(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                         size_t *total)
{
    GF_CK(e, gf_engine_reset(e));
    const double t0 = now_s();
    size_t produced = 0, got = 0;
    GF_CK(e, gf_engine_process(e, in, frames, out, &produced));
    GF_CK(e, gf_engine_flush(e));
    do {
        GF_CK(e, gf_engine_pull(e, out + produced, cap - produced, &got));
        produced += got;
    } while (got > 0 && produced < cap);
    const double t = now_s() - t0;
    *total = produced;
    return t;
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
    gf_engine *e = NULL;
    char detail[256];
    const gf_status st = gf_engine_create(&cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_engine_create(%s, chunk %zu) failed: %s: %s\n",
                dev == GF_DEVICE_CPU ? "cpu" : "cuda", chunk_frames, gf_strerror(st), detail);
        exit(EXIT_ERROR);
    }
    return e;
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

void bench_pipeline(const options &o, const ceilings &ce, best *best_pipe)
{
    const size_t frames = o.pipe_bytes / sizeof(float);
    const size_t chunks[] = {0, (size_t)1 << 20, (size_t)1 << 22, (size_t)1 << 24};
    size_t max_chunk = (size_t)1 << 21;
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        max_chunk = std::max(max_chunk, chunks[i]);
    /* Output capacity: frames + the engine's latency bound (4 chunks). */
    const size_t cap = frames + 4 * max_chunk;
    const double in_mb = (double)frames * sizeof(float) / 1e6;
    best_pipe->pct = -1;

    fprintf(stderr, "bench_gpu: pipeline: %zu f32 frames (%s)\n", frames,
            size_name(frames * sizeof(float)).c_str());
    float *in_p = (float *)gf_host_alloc(frames * sizeof(float));
    float *out_p = (float *)gf_host_alloc(cap * sizeof(float));
    float *ref = (float *)xmalloc(cap * sizeof(float));
    if (!in_p || !out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name(frames * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    fill_random_f32(in_p, frames, 2028);

    /* The oracle: the CPU backend over the whole stream, itself checked
     * against the serial loop at both ends. */
    memset(ref, 0xFF, cap * sizeof(float));
    gf_engine *cpu = make_engine(o, GF_DEVICE_CPU, 0);
    size_t total = 0;
    const double t_cpu = run_stream(cpu, in_p, frames, ref, cap, &total);
    if (total != frames) {
        fprintf(stderr, "bench_gpu: cpu backend produced %zu of %zu frames\n", total, frames);
        exit(EXIT_WRONG);
    }
    {
        double hd[8];
        gf_engine_taps(cpu, hd);
        float h[5];
        for (int k = 0; k < 5; k++)
            h[k] = (float)hd[k];
        const long long F = (long long)frames;
        const long long P = std::min(F, 1LL << 20), Q = std::min(F, 1LL << 16);
        float *y = (float *)xmalloc((size_t)P * sizeof(float));
        double m1 = 0, m2 = 0;
        serial_fir(in_p, F, h, 5, 0, P, y);
        size_t bad = compare(ref, y, (size_t)P, &m1);
        serial_fir(in_p, F, h, 5, F - Q, F, y);
        bad += compare(ref + (F - Q), y, (size_t)Q, &m2);
        free(y);
        row r = make_row("c", "cpu backend f32 (oracle)");
        r.mb = in_mb;
        r.ms = r.ms_min = r.ms_max = t_cpu * 1e3;
        r.gbs = in_mb / r.ms;
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
    gf_engine_destroy(cpu);

    float *in_m = NULL, *out_m = NULL; /* pageable copies, made on first use */
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
        if (chunks[ci] > frames)
            continue;
        gf_engine *e = make_engine(o, GF_DEVICE_CUDA, chunks[ci]);
        const size_t L = gf_engine_chunk_frames(e);
        if (strcmp(gf_engine_backend(e), "cuda") != 0) {
            fprintf(stderr, "bench_gpu: asked for cuda, got backend %s\n", gf_engine_backend(e));
            exit(EXIT_ERROR);
        }
        for (int pageable = 0; pageable < 2; pageable++) {
            if (pageable && !in_m) {
                in_m = (float *)xmalloc(frames * sizeof(float));
                out_m = (float *)xmalloc(cap * sizeof(float));
                memcpy(in_m, in_p, frames * sizeof(float)); /* faults the pages in too */
                memset(out_m, 0, cap * sizeof(float));
            }
            const float *in = pageable ? in_m : in_p;
            float *out = pageable ? out_m : out_p;
            char name[128];
            snprintf(name, sizeof name, "cuda %s chunk %s%s",
                     pageable ? "pageable (staged)" : "pinned (zero-copy)", pow2_name(L).c_str(),
                     chunks[ci] == 0 ? " (default)" : "");
            row r = make_row("c", name);
            r.mb = in_mb;
            /* Warm-up on a poisoned output, checked. */
            memset(out, 0xFF, cap * sizeof(float));
            run_stream(e, in, frames, out, cap, &total);
            check_stream(out, total, ref, frames, &r, "warm-up");
            std::vector<double> t;
            for (int k = 0; k < o.pipe_reps; k++)
                t.push_back(run_stream(e, in, frames, out, cap, &total) * 1e3);
            check_stream(out, total, ref, frames, &r, "last timed run");
            fill_stats(&r, summarise(t, 1));
            r.pct = 100.0 * r.gbs / ce.both_each_gbs;
            r.ceiling = "PCIe both-dir each way";
            r.speedup = t_cpu * 1e3 / r.ms;
            g_rows.push_back(r);
            if (r.pct > best_pipe->pct) {
                best_pipe->pct = r.pct;
                best_pipe->name = name;
            }
        }
        gf_engine_destroy(e);
    }
    free(in_m);
    free(out_m);
    free(ref);
    gf_host_free(in_p);
    gf_host_free(out_p);
}
