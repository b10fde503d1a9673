/* bench_gpu section h: per-block histograms. */
#include "bench_gpu.h"

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
static cudaGraphExec_t capture_pass(cudaStream_t st, cudaStream_t side[3], long long nchunks,
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
static gf_hist_plan hist_plan(size_t bins, size_t block, int C, size_t chunk_frames)
{
    gf_hist_config hc;
    memset(&hc, 0, sizeof hc);
    hc.bins = bins;
    hc.block_frames = block;
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

/* Take the engine's ready records: count them, and keep them (header,
 * then counts) when recs is not NULL. */
static void take_records(gf_engine *e, size_t nbins, size_t *nrec,
                         std::vector<gf_hist_record> *recs, std::vector<uint64_t> *counts)
{
    gf_hist_record r;
    while (gf_engine_hist_next(e, &r)) {
        ++*nrec;
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
                              size_t nbins, size_t *nrec, std::vector<gf_hist_record> *recs,
                              std::vector<uint64_t> *counts)
{
    GF_CK(e, gf_engine_reset(e));
    const double t0 = now_s();
    size_t produced = 0, got = 0;
    *nrec = 0;
    GF_CK(e, gf_engine_process(e, in, frames, out, &produced));
    take_records(e, nbins, nrec, recs, counts);
    GF_CK(e, gf_engine_flush(e));
    do {
        GF_CK(e, gf_engine_pull(e, out + produced, cap - produced, &got));
        produced += got;
    } while (got > 0 && produced < cap);
    take_records(e, nbins, nrec, recs, counts);
    const double t = now_s() - t0;
    if (produced != frames) {
        fprintf(stderr, "bench_gpu: histogram pipeline produced %zu of %zu frames\n", produced,
                frames);
        exit(EXIT_WRONG);
    }
    return t;
}

static gf_engine *make_hist_engine(const gf_config *cfg)
{
    gf_engine *e = NULL;
    char detail[256];
    const gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_engine_create (histograms) failed: %s: %s\n",
                gf_strerror(st), detail);
        exit(EXIT_ERROR);
    }
    return e;
}

void bench_hist(const options &o, const device_info &d, cudaStream_t st, hist_result *res)
{
    const int C = 2, T = 5;
    const long long frames = o.quick ? 2500000 : 50000000;
    const long long n = frames * C;       /* samples */
    const size_t block = 48000;           /* one second at 48 kHz */
    const long long Lf = (1LL << 21) / C; /* the engine's default cuda chunk, in frames */
    const long long nchunks = (frames + Lf - 1) / Lf;
    const long long hs = (long long)(T - 1) * C;
    const size_t bins_list[2] = {256, 4096};
    const double mb_in = (double)n * sizeof(float) / 1e6;
    fprintf(stderr, "bench_gpu: histograms: %lld f32 samples (%d ch x %lld frames), %lld chunks\n",
            n, C, frames, nchunks);

    float *hx = (float *)xmalloc((size_t)n * sizeof(float));
    fill_random_f32(hx, (size_t)n, 2029);
    for (long long i = 0; i < n; i++)
        hx[i] *= 1.2f; /* about 1/6 of the samples fall outside [-1, 1] */
    float *buf = NULL, *y = NULL, *y2 = NULL;
    CK(cudaMalloc(&buf, (size_t)(hs + n + GF_DEVICE_PAD_SAMPLES) * sizeof(float)));
    CK(cudaMalloc(&y, (size_t)n * sizeof(float)));
    CK(cudaMalloc(&y2, (size_t)n * sizeof(float)));
    CK(cudaMemset(buf, 0, (size_t)(hs + n + GF_DEVICE_PAD_SAMPLES) * sizeof(float)));
    CK(cudaMemcpy(buf + hs, hx, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    float hf[T];
    for (int k = 0; k < T; k++)
        hf[k] = 1.0f / (float)T;
    CK(cudaDeviceSynchronize());
    const gf::fir_plan plan = gpufilt_plan(hf, T, C);
    /* The backend's shared-memory cap for histogram blocks (backend_cuda.cu). */
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, o.device));
    const size_t smem_cap = std::min((size_t)optin, (size_t)96 * 1024);
    CK(gf::hist_allow_smem<float>(smem_cap));
    CK(cudaDeviceSynchronize());
    cudaStream_t side[3];
    for (int i = 0; i < 3; i++)
        CK(cudaStreamCreateWithFlags(&side[i], cudaStreamNonBlocking));

    /* Chunk k: outputs [k*Lf*C, ...) from buf + k*Lf*C (its halo right before). */
    auto filter_chunk = [&](long long k, cudaStream_t s) {
        const long long f0 = k * Lf, nf = std::min(Lf, frames - f0);
        launch_gpufilt<float>(plan, s, buf + f0 * C, y + f0 * C, 0, nf * C);
    };

    /* 1. The filter alone, chunk by chunk. */
    cudaGraphExec_t g_filter = capture_pass(st, side, nchunks, filter_chunk);
    row rf = make_row("h", "filter alone, 2^21-sample chunks x3 streams");
    rf.mb = 2.0 * mb_in;
    fill_stats(&rf, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g_filter, st)); }));
    rf.pct = 100.0;
    rf.ceiling = "= this row";
    g_rows.push_back(rf);

    /* 2. Filter + histogram of the output, per chunk, at 256 and 4096 bins. */
    for (int bi = 0; bi < 2; bi++) {
        const size_t bins = bins_list[bi];
        const gf_hist_plan p = hist_plan(bins, block, C, (size_t)Lf);
        const size_t per_chunk = p.max_segs * (size_t)p.nrec * p.part_bytes;
        unsigned char *d_parts = NULL;
        CK(cudaMalloc(&d_parts, per_chunk * (size_t)nchunks));
        std::vector<gf::hist_geometry> geo((size_t)nchunks);
        for (long long k = 0; k < nchunks; k++) {
            geo[(size_t)k] = gf::hist_geometry_for(
                &p, (uint64_t)(k * Lf), (size_t)std::min(Lf, frames - k * Lf), d.sms, smem_cap);
        }
        cudaGraphExec_t g_both = capture_pass(st, side, nchunks, [&](long long k, cudaStream_t s) {
            filter_chunk(k, s);
            const gf::hist_geometry &g = geo[(size_t)k];
            unsigned char *pk = d_parts + (size_t)k * per_chunk;
            CK(cudaMemsetAsync(pk, 0, g.bytes, s));
            gf::hist_launch<float>(g, false, y + k * Lf * C, pk, s);
            CK(cudaGetLastError());
        });
        char name[128];
        snprintf(name, sizeof name, "filter + hist %zu bins (each), same chunks", bins);
        row r = make_row("h", name);
        r.mb = 2.0 * mb_in;
        fill_stats(&r, time_op(st, o.reps, 2, [&](long long) { CK(cudaGraphLaunch(g_both, st)); }));
        r.pct = 100.0 * rf.ms / r.ms;
        r.ceiling = "filter alone (time ratio)";
        res->kernel_ratio[bi] = r.ms / rf.ms;
        /* The last chunk's partials against the host's, from its filtered output. */
        CK(cudaStreamSynchronize(st));
        {
            const long long k = nchunks - 1, f0 = k * Lf, nf = frames - f0;
            const gf::hist_geometry &g = geo[(size_t)k];
            std::vector<float> yk((size_t)(nf * C));
            std::vector<unsigned char> want(g.bytes), got(g.bytes);
            CK(cudaMemcpy(yk.data(), y + f0 * C, yk.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(got.data(), d_parts + (size_t)k * per_chunk, g.bytes,
                          cudaMemcpyDeviceToHost));
            size_t first;
            gf_hist_segments(&p, (uint64_t)f0, (size_t)nf, &first);
            gf_hist_count_parts(&p, yk.data(), sizeof(float), (size_t)nf, first, want.data(), 0,
                                g.nseg * (size_t)p.nrec);
            r.check = want == got ? "exact" : "DIFF vs host";
            if (want != got) {
                g_wrong = 1;
                fprintf(stderr,
                        "bench_gpu: %s: partials of the last chunk differ from the host's\n", name);
            }
        }
        g_rows.push_back(r);
        CK(cudaGraphExecDestroy(g_both));

        /* 3. The histogram kernel alone, one launch over the whole stream
         *    (its input comes from DRAM, not from L2 after the filter). */
        const gf::hist_geometry gw = gf::hist_geometry_for(&p, 0, (size_t)frames, d.sms, smem_cap);
        unsigned char *d_whole = NULL;
        CK(cudaMalloc(&d_whole, gw.bytes));
        snprintf(name, sizeof name, "hist %zu bins alone, one launch (read GB/s)", bins);
        row rh = make_row("h", name);
        rh.mb = mb_in;
        fill_stats(&rh, time_op(st, o.reps, 2, [&](long long) {
            CK(cudaMemsetAsync(d_whole, 0, gw.bytes, st));
            gf::hist_launch<float>(gw, false, y, d_whole, st);
            CK(cudaGetLastError());
        }));
        g_rows.push_back(rh);
        CK(cudaFree(d_whole));
        CK(cudaFree(d_parts));
    }
    CK(cudaGraphExecDestroy(g_filter));

    /* 4. The textbook 256-bin histogram and the same-size copy, same data. */
    unsigned *d_tb = NULL;
    CK(cudaMalloc(&d_tb, 256 * sizeof(unsigned)));
    row rt = make_row("h", "textbook 256-bin shared-atomic hist (read GB/s)");
    rt.mb = mb_in;
    const unsigned tgrid = (unsigned)(8 * d.sms);
    fill_stats(&rt, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemsetAsync(d_tb, 0, 256 * sizeof(unsigned), st));
        k_hist256_textbook<<<tgrid, 256, 0, st>>>(y, n, -1.0f, 1.0f, 128.0f, d_tb);
        CK(cudaGetLastError());
    }));
    g_rows.push_back(rt);
    CK(cudaFree(d_tb));
    const double textbook_gbs = rt.gbs;
    row rc = make_row("h", "D2D copy of the same samples");
    rc.mb = 2.0 * mb_in; /* read + written, as in section a */
    fill_stats(&rc, time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemcpyAsync(y2, y, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, st));
    }));
    g_rows.push_back(rc);
    /* Express the histogram rows against the textbook and the copy. */
    for (size_t i = 0; i < g_rows.size(); i++) {
        row &r = g_rows[i];
        if (r.sec == "h" && r.name.compare(0, 5, "hist ") == 0) {
            r.pct = 100.0 * r.gbs / textbook_gbs;
            r.ceiling = "textbook 256 (read GB/s)";
            r.speedup = rc.ms / r.ms; /* > 1: faster than copying the samples */
        }
    }
    CK(cudaFree(buf));
    CK(cudaFree(y));
    CK(cudaFree(y2));
    for (int i = 0; i < 3; i++)
        CK(cudaStreamDestroy(side[i]));

    /* 5. Through the engine: pinned host to host, histograms off / 256 / 4096,
     *    records taken as they come; the cuda records checked once against
     *    the cpu backend's, every field. */
    const size_t cap = (size_t)frames + 8 * (size_t)Lf;
    float *in_p = (float *)gf_host_alloc((size_t)n * sizeof(float));
    float *out_p = (float *)gf_host_alloc(cap * C * sizeof(float));
    if (!in_p || !out_p) {
        fprintf(stderr, "bench_gpu: gf_host_alloc of %s failed\n",
                size_name((size_t)n * sizeof(float)).c_str());
        exit(EXIT_ERROR);
    }
    memcpy(in_p, hx, (size_t)n * sizeof(float));
    double t_off = 0;
    for (int bi = -1; bi < 2; bi++) {
        gf_hist_config hc;
        memset(&hc, 0, sizeof hc);
        gf_config cfg = gf_config_default();
        cfg.channels = C;
        cfg.num_taps = T;
        cfg.precision = GF_PRECISION_F32;
        cfg.device = GF_DEVICE_CUDA;
        cfg.cuda_device = o.device;
        if (bi >= 0) {
            hc.bins = bins_list[bi];
            hc.block_frames = block;
            hc.lo = -1.0;
            hc.hi = 1.0;
            cfg.hist = &hc;
        }
        gf_engine *e = make_hist_engine(&cfg);
        size_t nrec = 0;
        std::vector<gf_hist_record> recs, crecs;
        std::vector<uint64_t> counts, ccounts;
        run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, NULL, NULL);
        std::vector<double> t;
        for (int k = 0; k < o.pipe_reps; k++)
            t.push_back(
                run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, NULL, NULL) *
                1e3);
        char name[128];
        if (bi < 0)
            snprintf(name, sizeof name, "engine pinned, histograms off");
        else
            snprintf(name, sizeof name, "engine pinned, hist %zu bins (each)", hc.bins);
        row r = make_row("h", name);
        r.mb = mb_in;
        fill_stats(&r, summarise(t, 1));
        if (bi < 0) {
            t_off = r.ms;
            r.pct = 100.0;
            r.ceiling = "= this row";
        } else {
            r.pct = 100.0 * t_off / r.ms;
            r.ceiling = "hist off (time ratio)";
            res->pipe_ratio[bi] = r.ms / t_off;
            /* Records: cuda against cpu, every field. */
            const size_t want_rec =
                (size_t)((frames + (long long)block - 1) / (long long)block) * C;
            run_hist_stream(e, in_p, (size_t)frames, out_p, cap, hc.bins, &nrec, &recs, &counts);
            gf_config cc = cfg;
            cc.device = GF_DEVICE_CPU;
            gf_engine *ec = make_hist_engine(&cc);
            size_t cn = 0;
            run_hist_stream(ec, in_p, (size_t)frames, out_p, cap, hc.bins, &cn, &crecs, &ccounts);
            gf_engine_destroy(ec);
            bool same = recs.size() == want_rec && crecs.size() == want_rec && counts == ccounts;
            for (size_t i = 0; same && i < recs.size(); i++) {
                const gf_hist_record &a = recs[i], &b = crecs[i];
                same = a.block == b.block && a.frames == b.frames && a.channel == b.channel &&
                       a.below == b.below && a.above == b.above && a.nan == b.nan &&
                       memcmp(&a.min, &b.min, sizeof a.min) == 0 &&
                       memcmp(&a.max, &b.max, sizeof a.max) == 0 &&
                       memcmp(&a.rms, &b.rms, sizeof a.rms) == 0;
            }
            r.check = same ? "records = cpu" : "DIFF records";
            if (!same) {
                g_wrong = 1;
                fprintf(stderr,
                        "bench_gpu: %s: cuda records (%zu) differ from the cpu backend's (%zu), "
                        "%zu expected\n",
                        name, recs.size(), crecs.size(), want_rec);
            }
        }
        g_rows.push_back(r);
        gf_engine_destroy(e);
    }
    gf_host_free(in_p);
    gf_host_free(out_p);
    free(hx);
}
