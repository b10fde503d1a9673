/*
 * bench_gpu: gpufilt's GPU benchmark. One run prints one table:
 *
 *   a. ceilings measured in the same process: device-to-device copy (bytes
 *      read + written), pinned host-to-device, device-to-host, and both at
 *      once on two streams;
 *   b. the seeds' experiment: 10,000,000 doubles through a 5-tap mean filter
 *      (same mode) on the CPU (serial reference) and with five kernels, from
 *      the textbook basic kernel to gpufilt's production gf::fir_tiled, each
 *      checked bit for bit against the serial reference; plus gpufilt in f32;
 *   c. the host-to-host pipeline: gf_engine_process on the CUDA backend over
 *      1 GiB of f32, pinned (zero-copy path), pageable (staging path) and
 *      the same pageable buffers registered once (gf_host_register: its
 *      cost is a row of its own), at several chunk sizes, checked bit for
 *      bit against the CPU backend;
 *   d. the targets: gpufilt's fir_tiled f64 against the device copy, the
 *      best pinned pipeline and the best pageable one (staged or
 *      registered) against PCIe with both directions busy; only rows
 *      checked exact count (a row that differs is no result), and under
 *      --quick nothing is judged (a smoke run's ratios are not
 *      measurements); the best of every kernel, textbook ones included,
 *      is shown for comparison;
 *   h. per-block histograms (hist_kernels.cuh) over 100M f32 samples
 *      (2 channels x 50M frames, 5 taps, blocks of 48000 frames): the filter
 *      alone against filter + histogram at 256 and 4096 bins, on the device
 *      (chunk by chunk as the engine runs them, 3 streams, captured in a
 *      CUDA graph so launch gaps do not count) and through the engine
 *      (pinned host to host); the histogram kernel alone in GB/s against a
 *      textbook 256-bin shared-atomic histogram and a same-size D2D copy;
 *      PASS/FAIL for "the histogram adds <= 10% at 256 bins".
 *
 * Every CUDA call is checked (CK); kernel times are medians of event-timed
 * batches over rotating buffer sets several times the size of L2, on
 * random data. Exit status: 0 (targets missed included), 1 wrong results,
 * 2 CUDA or library error or bad usage, 77 no CUDA device.
 *
 * Files: bench_gpu.h (what the parts share), options.cu, common.cu,
 * transfers.cu (a), seeds.cu (b), pipeline.cu (c), hist.cu (h), report.cu
 * (the table, CSV and JSON) and this one (the device, the run, the targets).
 */
#include "bench_gpu.h"

static device_info query_device(int dev)
{
    device_info d;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sms = p.multiProcessorCount;
    d.total_mem = p.totalGlobalMem;
    d.ecc = p.ECCEnabled;
    CK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, dev));
    CK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
    CK(cudaDeviceGetAttribute(&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
    CK(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, dev));
    CK(cudaDriverGetVersion(&d.driver));
    CK(cudaRuntimeGetVersion(&d.runtime));
    CK(cudaDeviceGetPCIBusId(d.pci, (int)sizeof d.pci, dev));
    d.peak_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.bus_bits / 8.0) / 1e9;
    return d;
}

/* Make o.device current and check gpufilt can use it. Returns 0, or the
 * exit status after a message. */
static int open_device(const options &o)
{
    int ndev = 0;
    const cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        fprintf(stderr, "bench_gpu: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none present");
        return EXIT_NO_DEVICE;
    }
    if (o.device >= ndev) {
        fprintf(stderr, "bench_gpu: device %d does not exist (%d present)\n", o.device, ndev);
        return EXIT_ERROR;
    }
    CK(cudaSetDevice(o.device));
    CK(cudaFree(0)); /* create the context now, outside any timing */
    if (!gf_cuda_available()) {
        fprintf(stderr, "bench_gpu: gpufilt sees no usable CUDA device\n");
        return EXIT_NO_DEVICE;
    }
    return 0;
}

static void print_header(const options &o, const device_info &d)
{
    printf("bench_gpu: gpufilt %s%s\n", gf_version(), o.quick ? "  [--quick: smoke run]" : "");
    printf("device %d: %s (sm_%d%d), %d SMs at %.0f MHz, %.1f GiB, L2 %.0f MiB, ECC %s, PCI %s\n",
           o.device, d.name.c_str(), d.cc_major, d.cc_minor, d.sms, d.sm_clock_khz / 1e3,
           (double)d.total_mem / (1 << 30), d.l2_bytes / 1048576.0, d.ecc ? "on" : "off", d.pci);
    printf("memory: %.0f MHz x %d-bit bus = %.0f GB/s peak; driver %d.%d, runtime %d.%d\n",
           d.mem_clock_khz / 1e3, d.bus_bits, d.peak_gbs, d.driver / 1000, (d.driver % 1000) / 10,
           d.runtime / 1000, (d.runtime % 1000) / 10);
    printf("method: medians of %d event-timed batches (batch ~%.0f ms, back-to-back ops over "
           "rotating buffer sets >= 4x L2), random data, outputs poisoned then checked bit for "
           "bit; pipeline: wall clock, median of %d runs\n",
           o.reps, BATCH_MS, o.pipe_reps);
    printf("units: MB = 1e6 bytes counted (copies and kernels: read + written; PCIe rows: bytes "
           "transferred; pipeline: input bytes), GB/s = 1e9 bytes/s\n\n");
    fflush(stdout);
}

/* Sections a, b, c (unless --hist-only) and h, each adding its rows. */
static void run_sections(const options &o, const device_info &d, kernel_best *kb, best *best_pipe,
                         best *best_pageable, hist_result *hr)
{
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ceilings ce;
    if (!o.hist_only) {
        fprintf(stderr, "bench_gpu: a. transfer ceilings\n");
        bench_transfers(o, d, st, &ce);
        fprintf(stderr, "bench_gpu: b. kernels\n");
        bench_seeds(o, d, st, &ce, kb);
        fprintf(stderr, "bench_gpu: c. pipeline\n");
        bench_pipeline(o, ce, best_pipe, best_pageable);
    }
    fprintf(stderr, "bench_gpu: h. histograms\n");
    bench_hist(o, d, st, hr);
    CK(cudaStreamDestroy(st));
}

static target make_target(const char *name, const std::string &what, double ratio, double goal)
{
    target t;
    t.name = name;
    t.what = what;
    t.ratio = ratio;
    t.goal = goal;
    return t;
}

/* "PASS" or "MISS" for ratio against goal (higher is better); "info"
 * under --quick. A target without a row checked exact is missed. */
static const char *verdict(const options &o, double ratio, double goal, bool exact)
{
    if (o.quick)
        return "info";
    return exact && ratio >= goal ? "PASS" : "MISS";
}

/* The kernel and pipeline targets (not with --hist-only), printed. */
static std::vector<target> speed_targets(const options &o, const kernel_best &kb,
                                         const best &best_pipe, const best &best_pageable)
{
    std::vector<target> tg;
    if (o.hist_only)
        return tg;
    tg.push_back(make_target("gpufilt fir_tiled f64 >= 85% of same-size D2D copy", kb.gpufilt.name,
                             kb.gpufilt.pct / 100, 0.85));
    tg.push_back(make_target("pipeline >= 80% of PCIe both-directions each-way rate",
                             best_pipe.name, best_pipe.pct / 100, 0.80));
    tg.push_back(make_target("pageable buffers >= 80% of PCIe (staged or registered)",
                             best_pageable.name, best_pageable.pct / 100, 0.80));
    printf("\ntargets (rows checked exact only)%s:\n",
           o.quick ? " -- not judged: --quick is a smoke run" : "");
    for (size_t i = 0; i < tg.size(); i++) {
        const bool have = !tg[i].what.empty();
        if (have)
            printf("  %-4s %-54s %s at %.3f (%.1f%%)\n", verdict(o, tg[i].ratio, tg[i].goal, true),
                   tg[i].name, tg[i].what.c_str(), tg[i].ratio, 100 * tg[i].ratio);
        else
            printf("  %-4s %-54s no row checked exact\n", verdict(o, 0, 1, false), tg[i].name);
    }
    if (!kb.any.name.empty())
        printf("  info fastest kernel checked exact (textbook ones included): %s at %.1f%% of "
               "the copy\n",
               kb.any.name.c_str(), kb.any.pct);
    return tg;
}

/* Histograms: the cost they add, against the filter without them, printed
 * and added to tg; a ratio counts only where the histograms were checked
 * (partials against the host's, records against the cpu backend's).
 * Targets: <= 10% at 256 bins, kernel and pipeline, and at 4096 bins in
 * the pipeline; the 4096-bin kernel is shown for information. */
static void hist_targets(const options &o, const hist_result &hr, std::vector<target> *tg)
{
    printf("\nhistograms (2 ch x %s frames f32, 5 taps, blocks of 48000 frames, each channel)%s:\n",
           o.quick ? "2.5M" : "50M", o.quick ? " -- not judged: --quick is a smoke run" : "");
    const char *what[2] = {"kernel: device time of filter + hist vs filter, per engine chunk",
                           "pipeline: engine wall time, pinned host to host, hist on vs off"};
    for (int w = 0; w < 2; w++)
        for (int b = 0; b < 2; b++) {
            const double ratio = w ? hr.pipe_ratio[b] : hr.kernel_ratio[b];
            const bool exact = w ? hr.pipe_exact[b] : hr.kernel_exact[b];
            const char *note = exact ? "" : " (histograms NOT checked exact: no result)";
            const bool judged = b == 0 || w == 1;
            if (judged)
                printf("  %-4s histogram adds <= 10%% at %d bins (%s): %.3fx%s\n",
                       verdict(o, 1.10, ratio, exact), b ? 4096 : 256, what[w], ratio, note);
            else
                printf("  info histogram at 4096 bins (%s): %.3fx%s\n", what[w], ratio, note);
            const char *name =
                w ? (b ? "pipeline hist 4096 bins adds <= 10%: hist off time / hist on time"
                       : "pipeline hist 256 bins adds <= 10%: hist off time / hist on time")
                  : (b ? "kernel hist 4096 bins: filter time / filter+hist time (info)"
                       : "kernel hist 256 bins adds <= 10%: filter time / filter+hist time");
            tg->push_back(
                make_target(name, what[w], exact ? 1.0 / ratio : NAN, judged ? 1.0 / 1.10 : 0.0));
        }
}

int main(int argc, char **argv)
{
    const options o = parse_options(argc, argv);
    const int rc = open_device(o);
    if (rc != 0)
        return rc;
    const device_info d = query_device(o.device);
    print_header(o, d);

    kernel_best kb;
    best best_pipe, best_pageable;
    hist_result hr = hist_result();
    run_sections(o, d, &kb, &best_pipe, &best_pageable, &hr);

    /* a-rows first (the same-size copies were measured during b). */
    std::stable_sort(g_rows.begin(), g_rows.end(),
                     [](const row &x, const row &y) { return x.sec < y.sec; });
    print_table(stdout);
    std::vector<target> tg = speed_targets(o, kb, best_pipe, best_pageable);
    hist_targets(o, hr, &tg);
    printf("results: %s\n", g_wrong ? "WRONG (some outputs differ; see stderr)"
                                    : "every output bit-identical to its reference");
    if (o.csv)
        write_csv(o.csv);
    if (o.json)
        write_json(o.json, o, d, tg);
    return g_wrong ? EXIT_WRONG : 0;
}
