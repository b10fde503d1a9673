/* bench_gpu section h: per-block histograms. */
#include "bench_gpu.h"

/* The workload: C channels of f32 through the T-tap mean filter,
 * histograms per block of one second at 48 kHz, at 256 and 4096 bins. */
static const int C = 2, T = 5;
static const size_t k_block = 48000;
static const size_t k_bins[2] = {256, 4096};

/*
 * The textbook histogram (the CUDA samples' idea): 256 bins privatised in
 * shared memory, a grid-stride loop of shared atomics, then one global
 * atomic per bin and block. Float arithmetic, no edge correction, no
 * min/max/rms: the floor of what a 256-bin histogram can cost.
 */
__global__ void k_hist256_textbook(const float *__restrict__ x, long long n, float lo, float hi,
                                   float scale, unsigned *bins)
{
    __shared__ unsigned s[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        s[i] = 0;
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float v = __ldg(x + i);
        if (v >= lo && v <= hi)
            atomicAdd(&s[min((int)__fmul_rn(__fsub_rn(v, lo), scale), 255)], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (s[i])
            atomicAdd(&bins[i], s[i]);
}

/* Capture one pass over nchunks chunks as a graph: chunk k runs body(k,
 * stream) on side[k % 3] (as the engine's three slots do), all forked from
 * and joined back to st. Launches inside are checked as usual. */
template <class Body>
static cudaGraphExec_t capture_pass(cudaStream_t st, const cudaStream_t side[3], long long nchunks,
                                    Body body)
{
    cudaEvent_t fork, join[3];
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    for (int i = 0; i < 3; i++)
        CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    CK(cudaEventRecord(fork, st));
    for (int i = 0; i < 3; i++)
        CK(cudaStreamWaitEvent(side[i], fork, 0));
    for (long long k = 0; k < nchunks; k++)
        body(k, side[k % 3]);
    for (int i = 0; i < 3; i++) {
        CK(cudaEventRecord(join[i], side[i]));
        CK(cudaStreamWaitEvent(st, join[i], 0));
    }
    cudaGraph_t g;
    CK(cudaStreamEndCapture(st, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(fork));
    for (int i = 0; i < 3; i++)
        CK(cudaEventDestroy(join[i]));
    return ge;
}

/* A histogram plan as the engine makes it for C channels of f32. */
static gf_hist_plan hist_plan(size_t bins, size_t chunk_frames)
{
    gf_hist_config hc;
    memset(&hc, 0, sizeof hc);
    hc.bins = bins;
    hc.block_frames = k_block;
    hc.lo = -1.0;
    hc.hi = 1.0;
    gf_hist_plan p;
    size_t L = chunk_frames;
    gf_hist_plan_make(&hc, C, 3, &L, &p);
    if (L != chunk_frames) {
        fprintf(stderr, "bench_gpu: histogram plan shortened the chunk (%zu -> %zu)\n",
                chunk_frames, L);
        exit(EXIT_ERROR);
    }
    return p;
}

/* Drain the engine's ready records; keep them (header, then counts) when
 * recs is not NULL. */
static void take_records(gf_engine *e, size_t nbins, std::vector<gf_hist_record> *recs,
                         std::vector<uint64_t> *counts)
{
    gf_hist_record r;
    while (gf_engine_hist_next(e, &r) == GF_OK) {
        if (recs) {
            recs->push_back(r);
            counts->insert(counts->end(), r.bins, r.bins + nbins);
        }
    }
}

/* One stream through an engine with histograms: process (pinned, zero
 * copy), flush, pull, records taken as they come (as the CLI does).
 * Returns wall seconds. */
static double run_hist_stream(gf_engine *e, const float *in, size_t frames, float *out, size_t cap,
                              size_t nbins, std::vector<gf_hist_record> *recs,
                              std::vector<uint64_t> *counts)
{
    size_t produced = 0;
    const double t = run_stream_with(e, in, frames, out, cap, &produced,
                                     [&](gf_engine *en) { take_records(en, nbins, recs, counts); });
    if (produced != frames) {
        fprintf(stderr, "bench_gpu: histogram pipeline produced %zu of %zu frames\n", produced,
                frames);
        exit(EXIT_WRONG);
    }
    return t;
}

/*
 * Section h's data: the input on the host (hx); on the device the input
 * with its halo and padding (buf), the filtered output (y) and a copy
 * target (y2); the filter's plan, the histogram kernels' shared-memory cap
 * and three streams standing for the engine's slots. The device work goes
 * in chunks of Lf frames, the engine's default cuda chunk.
 */
typedef struct hist_work {
    long long frames, n, Lf, nchunks, hs;
    double mb_in; /* input MB */
    float *hx;
    float *buf, *y, *y2;
    gf::fir_plan plan;
    size_t smem_cap;
    cudaStream_t side[3];
} hist_work;

static void hist_setup(const options &o, hist_work *w)
{
    w->frames = o.quick ? 2500000 : 50000000;
    w->n = w->frames * C;    /* samples */
    w->Lf = (1LL << 21) / C; /* the engine's default cuda chunk, in frames */
    w->nchunks = (w->frames + w->Lf - 1) / w->Lf;
    w->hs = (long long)(T - 1) * C;
    w->mb_in = (double)w->n * sizeof(float) / 1e6;
    fprintf(stderr, "bench_gpu: histograms: %lld f32 samples (%d ch x %lld frames), %lld chunks\n",
            w->n, C, w->frames, w->nchunks);
    w->hx = (float *)xmalloc((size_t)w->n * sizeof(float));
    fill_random_f32(w->hx, (size_t)w->n, 2029);
    for (long long i = 0; i < w->n; i++)
        w->hx[i] *= 1.2f; /* about 1/6 of the samples fall outside [-1, 1] */
    const size_t buf_bytes = (size_t)(w->hs + w->n + GF_DEVICE_PAD_SAMPLES) * sizeof(float);
    CK(cudaMalloc(&w->buf, buf_bytes));
    CK(cudaMalloc(&w->y, (size_t)w->n * sizeof(float)));
    CK(cudaMalloc(&w->y2, (size_t)w->n * sizeof(float)));
    CK(cudaMemset(w->buf, 0, buf_bytes));
    CK(cudaMemcpy(w->buf + w->hs, w->hx, (size_t)w->n * sizeof(float), cudaMemcpyHostToDevice));
    float hf[T];
    for (int k = 0; k < T; k++)
        hf[k] = 1.0f / (float)T;
    CK(cudaDeviceSynchronize());
    w->plan = gpufilt_plan(hf, T, C);
    /* The backend's shared-memory cap for histogram blocks (backend_cuda.cu). */
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, o.device));
    w->smem_cap = std::min((size_t)optin, (size_t)96 * 1024);
    char err[256];
    if (gf::hist_allow_smem<float>(w->smem_cap, err, sizeof err) != GF_OK) {
        fprintf(stderr, "bench_gpu: histogram kernel set-up: %s\n", err);
        exit(EXIT_ERROR);
    }
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 3; i++)
        CK(cudaStreamCreateWithFlags(&w->side[i], cudaStreamNonBlocking));
}

static void hist_free_device(const hist_work &w)
{
    CK(cudaFree(w.buf));
    CK(cudaFree(w.y));
    CK(cudaFree(w.y2));
    for (int i = 0; i < 3; i++)
        CK(cudaStreamDestroy(w.side[i]));
}

/* Chunk k: outputs [k*Lf*C, ...) from buf + k*Lf*C (its halo right before). */
static void filter_chunk(const hist_work &w, long long k, cudaStream_t s)
{
    const long long f0 = k * w.Lf, nf = std::min(w.Lf, w.frames - f0);
    launch_gpufilt<float>(w.plan, s, w.buf + f0 * C, w.y + f0 * C, 0, nf * C);
}

/* 1. The filter alone, chunk by chunk, captured in *graph: the row the
 *    histogram rows are timed against. */
static row hist_filter_alone(const options &o, cudaStream_t st, const hist_work &w,
                             cudaGraphExec_t *graph)
{
    const cudaGraphExec_t g = capture_pass(
        st, w.side, w.nchunks, [&](long long k, cudaStream_t s) { filter_chunk(w, k, s); });
    row rf = make_row("h", "filter alone, 2^21-sample chunks x3 streams");
    rf.mb = 2.0 * w.mb_in;
    fill_stats(&rf, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g, st)); }));
    rf.pct = 100.0;
    rf.ceiling = "= this row";
    g_rows.push_back(rf);
    *graph = g;
    return rf;
}

/* One bins setting over the stream: the plan, each chunk's geometry, and a
 * device buffer with room for every chunk's partials. */
typedef struct hist_parts {
    gf_hist_plan p;
    size_t per_chunk; /* bytes of one chunk's partials */
    std::vector<gf::hist_geometry> geo;
    unsigned char *d_parts;
} hist_parts;

static void hist_parts_make(const device_info &d, const hist_work &w, size_t bins, hist_parts *hp)
{
    hp->p = hist_plan(bins, (size_t)w.Lf);
    hp->per_chunk = hp->p.max_segs * (size_t)hp->p.nrec * hp->p.part_bytes;
    hp->d_parts = NULL;
    CK(cudaMalloc(&hp->d_parts, hp->per_chunk * (size_t)w.nchunks));
    hp->geo.resize((size_t)w.nchunks);
    for (long long k = 0; k < w.nchunks; k++) {
        hp->geo[(size_t)k] =
            gf::hist_geometry_for(&hp->p, (uint64_t)(k * w.Lf),
                                  (size_t)std::min(w.Lf, w.frames - k * w.Lf), d.sms, w.smem_cap);
    }
}

/* The last chunk's partials against the host's, from its filtered output. */
static void check_last_chunk(const hist_work &w, const hist_parts &hp, row *r)
{
    const long long k = w.nchunks - 1, f0 = k * w.Lf, nf = w.frames - f0;
    const gf::hist_geometry &g = hp.geo[(size_t)k];
    std::vector<float> yk((size_t)(nf * C));
    std::vector<unsigned char> want(g.bytes), got(g.bytes);
    CK(cudaMemcpy(yk.data(), w.y + f0 * C, yk.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), hp.d_parts + (size_t)k * hp.per_chunk, g.bytes,
                  cudaMemcpyDeviceToHost));
    size_t first;
    gf_hist_segments(&hp.p, (uint64_t)f0, (size_t)nf, &first);
    gf_hist_count_parts(&hp.p, yk.data(), sizeof(float), (size_t)nf, first, want.data(), 0,
                        g.nseg * (size_t)hp.p.nrec);
    r->check = want == got ? "exact" : "DIFF vs host";
    if (want != got) {
        g_wrong = 1;
        fprintf(stderr, "bench_gpu: %s: partials of the last chunk differ from the host's\n",
                r->name.c_str());
    }
}

/* 2. Filter + histogram of the output, per chunk, against the filter alone
 *    (rf); returns the time ratio. */
static double hist_filter_plus(const options &o, cudaStream_t st, const hist_work &w,
                               const hist_parts &hp, size_t bins, const row &rf)
{
    cudaGraphExec_t g_both = capture_pass(st, w.side, w.nchunks, [&](long long k, cudaStream_t s) {
        filter_chunk(w, k, s);
        const gf::hist_geometry &g = hp.geo[(size_t)k];
        unsigned char *pk = hp.d_parts + (size_t)k * hp.per_chunk;
        CK(cudaMemsetAsync(pk, 0, g.bytes, s));
        gf::hist_launch<float>(g, false, w.y + k * w.Lf * C, pk, s);
        CK(cudaGetLastError());
    });
    char name[128];
    snprintf(name, sizeof name, "filter + hist %zu bins (each), same chunks", bins);
    row r = make_row("h", name);
    r.mb = 2.0 * w.mb_in;
    fill_stats(&r, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g_both, st)); }));
    r.pct = 100.0 * rf.ms / r.ms;
    r.ceiling = "filter alone (time ratio)";
    CK(cudaStreamSynchronize(st));
    check_last_chunk(w, hp, &r);
    g_rows.push_back(r);
    CK(cudaGraphExecDestroy(g_both));
    return r.ms / rf.ms;
}

/* 3. The histogram kernel alone, one launch over the whole stream (its
 *    input comes from DRAM, not from L2 after the filter). */
static void hist_alone(const options &o, const device_info &d, cudaStream_t st, const hist_work &w,
                       const hist_parts &hp, size_t bins)
{
    const gf::hist_geometry gw =
        gf::hist_geometry_for(&hp.p, 0, (size_t)w.frames, d.sms, w.smem_cap);
    unsigned char *d_whole = NULL;
    CK(cudaMalloc(&d_whole, gw.bytes));
    char name[128];
    snprintf(name, sizeof name, "hist %zu bins alone, one launch (read GB/s)", bins);
    row rh = make_row("h", name);
    rh.mb = w.mb_in;
    fill_stats(&rh, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemsetAsync(d_whole, 0, gw.bytes, st));
        gf::hist_launch<float>(gw, false, w.y, d_whole, st);
        CK(cudaGetLastError());
    }));
    g_rows.push_back(rh);
    CK(cudaFree(d_whole));
}

/* 4. The textbook 256-bin histogram and the same-size copy, same data; the
 *    "hist ... alone" rows are expressed against both. */
static void hist_textbook(const options &o, const device_info &d, cudaStream_t st,
                          const hist_work &w)
{
    unsigned *d_tb = NULL;
    CK(cudaMalloc(&d_tb, 256 * sizeof(unsigned)));
    row rt = make_row("h", "textbook 256-bin shared-atomic hist (read GB/s)");
    rt.mb = w.mb_in;
    const unsigned tgrid = (unsigned)(8 * d.sms);
    fill_stats(&rt, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemsetAsync(d_tb, 0, 256 * sizeof(unsigned), st));
        k_hist256_textbook<<<tgrid, 256, 0, st>>>(w.y, w.n, -1.0f, 1.0f, 128.0f, d_tb);
        CK(cudaGetLastError());
    }));
    g_rows.push_back(rt);
    CK(cudaFree(d_tb));
    const double textbook_gbs = rt.gbs;
    row rc = make_row("h", "D2D copy of the same samples");
    rc.mb = 2.0 * w.mb_in; /* read + written, as in section a */
    fill_stats(&rc, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemcpyAsync(w.y2, w.y, (size_t)w.n * sizeof(float), cudaMemcpyDeviceToDevice, st));
    }));
    g_rows.push_back(rc);
    for (size_t i = 0; i < g_rows.size(); i++) {
        row &r = g_rows[i];
        if (r.sec == "h" && r.name.compare(0, 5, "hist ") == 0) {
            r.pct = 100.0 * r.gbs / textbook_gbs;
            r.ceiling = "textbook 256 (read GB/s)";
            r.speedup = rc.ms / r.ms; /* > 1: faster than copying the samples */
        }
    }
}

/* The engine's configuration: cuda, C channels of f32, T taps; with
 * histograms of k_bins[bi] bins, described in *hc, unless bi < 0. */
static gf_config hist_engine_config(const options &o, int bi, gf_hist_config *hc)
{
    memset(hc, 0, sizeof *hc);
    gf_config cfg = gf_config_default();
    cfg.channels = C;
    cfg.num_taps = T;
    cfg.precision = GF_PRECISION_F32;
    cfg.device = GF_DEVICE_CUDA;
    cfg.cuda_device = o.device;
    if (bi >= 0) {
        hc->bins = k_bins[bi];
        hc->block_frames = k_block;
        hc->lo = -1.0;
        hc->hi = 1.0;
        cfg.hist = hc;
    }
    return cfg;
}

static bool same_record(const gf_hist_record &a, const gf_hist_record &b)
{
    return a.block == b.block && a.frames == b.frames && a.channel == b.channel &&
           a.below == b.below && a.above == b.above && a.nan == b.nan &&
           memcmp(&a.min, &b.min, sizeof a.min) == 0 && memcmp(&a.max, &b.max, sizeof a.max) == 0 &&
           memcmp(&a.rms, &b.rms, sizeof a.rms) == 0;
}

/* The cuda engine e's records against a cpu engine's of the same
 * configuration, every field; the verdict goes to r. */
static void check_records(gf_engine *e, const gf_config &cfg, const hist_work &w, const float *in,
                          float *out, size_t cap, row *r)
{
    const size_t nbins = cfg.hist->bins, frames = (size_t)w.frames;
    const size_t want_rec = (size_t)((w.frames + (long long)k_block - 1) / (long long)k_block) * C;
    std::vector<gf_hist_record> recs, crecs;
    std::vector<uint64_t> counts, ccounts;
    run_hist_stream(e, in, frames, out, cap, nbins, &recs, &counts);
    gf_config cc = cfg;
    cc.device = GF_DEVICE_CPU;
    gf_engine *ec = create_engine(&cc, " (histograms)");
    run_hist_stream(ec, in, frames, out, cap, nbins, &crecs, &ccounts);
    gf_engine_destroy(ec);
    bool same = recs.size() == want_rec && crecs.size() == want_rec && counts == ccounts;
    for (size_t i = 0; same && i < recs.size(); i++)
        same = same_record(recs[i], crecs[i]);
    r->check = same ? "records = cpu" : "DIFF records";
    if (!same) {
        g_wrong = 1;
        fprintf(stderr,
                "bench_gpu: %s: cuda records (%zu) differ from the cpu backend's (%zu), "
                "%zu expected\n",
                r->name.c_str(), recs.size(), crecs.size(), want_rec);
    }
}

/* 5. Through the engine, pinned host to host, histograms off (bi < 0) or
 *    of k_bins[bi] bins, records taken as they come: a warm-up, then
 *    o.pipe_reps timed runs; with histograms, against t_off (ms, off) and
 *    the records checked once against the cpu backend's. */
static row hist_engine_case(const options &o, const hist_work &w, int bi, const float *in,
                            float *out, size_t cap, double t_off, hist_result *res)
{
    gf_hist_config hc;
    const gf_config cfg = hist_engine_config(o, bi, &hc);
    gf_engine *e = create_engine(&cfg, " (histograms)");
    const size_t frames = (size_t)w.frames;
    run_hist_stream(e, in, frames, out, cap, hc.bins, NULL, NULL);
    std::vector<double> t;
    for (int k = 0; k < o.pipe_reps; k++)
        t.push_back(run_hist_stream(e, in, frames, out, cap, hc.bins, NULL, NULL) * 1e3);
    char name[128];
    if (bi < 0)
        snprintf(name, sizeof name, "engine pinned, histograms off");
    else
        snprintf(name, sizeof name, "engine pinned, hist %zu bins (each)", hc.bins);
    row r = make_row("h", name);
    r.mb = w.mb_in;
    fill_stats(&r, summarise(t, 1));
    if (bi < 0) {
        r.pct = 100.0;
        r.ceiling = "= this row";
    } else {
        r.pct = 100.0 * t_off / r.ms;
        r.ceiling = "hist off (time ratio)";
        res->pipe_ratio[bi] = r.ms / t_off;
        check_records(e, cfg, w, in, out, cap, &r);
        res->pipe_exact[bi] = r.check == "records = cpu";
    }
    gf_engine_destroy(e);
    return r;
}

static void hist_engine_rows(const options &o, const hist_work &w, hist_result *res)
{
    const size_t cap = (size_t)w.frames + 8 * (size_t)w.Lf;
    float *in_p = (float *)gf_host_alloc((size_t)w.n * sizeof(float));
    float *out_p = (float *)gf_host_alloc(cap * C * sizeof(float));
    if (!in_p || !out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name((size_t)w.n * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    memcpy(in_p, w.hx, (size_t)w.n * sizeof(float));
    double t_off = 0;
    for (int bi = -1; bi < 2; bi++) {
        const row r = hist_engine_case(o, w, bi, in_p, out_p, cap, t_off, res);
        if (bi < 0)
            t_off = r.ms;
        g_rows.push_back(r);
    }
    gf_host_free(in_p);
    gf_host_free(out_p);
}

void bench_hist(const options &o, const device_info &d, cudaStream_t st, hist_result *res)
{
    hist_work w;
    hist_setup(o, &w);
    cudaGraphExec_t g_filter;
    const row rf = hist_filter_alone(o, st, w, &g_filter);
    for (int bi = 0; bi < 2; bi++) {
        hist_parts hp;
        hist_parts_make(d, w, k_bins[bi], &hp);
        res->kernel_ratio[bi] = hist_filter_plus(o, st, w, hp, k_bins[bi], rf);
        res->kernel_exact[bi] = g_rows.back().check == "exact";
        hist_alone(o, d, st, w, hp, k_bins[bi]);
        CK(cudaFree(hp.d_parts));
    }
    CK(cudaGraphExecDestroy(g_filter));
    hist_textbook(o, d, st, w);
    hist_free_device(w);
    hist_engine_rows(o, w, res);
    free(w.hx);
}
