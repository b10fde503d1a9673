/* bench_gpu section a: the transfer ceilings (device copy, PCIe). */
#include "bench_gpu.h"

/* Section a's buffers: two on the device, large enough for the big copy,
 * and two pinned on the host for PCIe, all holding random bytes. */
typedef struct xfer_bufs {
    void *da, *db, *ha, *hb;
} xfer_bufs;

static xfer_bufs xfer_alloc(const options &o)
{
    const size_t big = std::max(o.d2d_big_bytes, o.pcie_bytes);
    xfer_bufs b = {NULL, NULL, NULL, NULL};
    CK(cudaMalloc(&b.da, big));
    CK(cudaMalloc(&b.db, big));
    CK(cudaHostAlloc(&b.ha, o.pcie_bytes, cudaHostAllocDefault));
    CK(cudaHostAlloc(&b.hb, o.pcie_bytes, cudaHostAllocDefault));
    fill_random_bytes(b.ha, o.pcie_bytes, 11);
    fill_random_bytes(b.hb, o.pcie_bytes, 12);
    CK(cudaMemcpy(b.da, b.ha, o.pcie_bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.db, b.hb, o.pcie_bytes, cudaMemcpyHostToDevice));
    return b;
}

static void xfer_free(const xfer_bufs &b)
{
    CK(cudaFree(b.da));
    CK(cudaFree(b.db));
    CK(cudaFreeHost(b.ha));
    CK(cudaFreeHost(b.hb));
}

/* The large device-to-device copy, against DRAM's peak. */
static void bench_d2d_big(const options &o, const device_info &d, cudaStream_t st,
                          const xfer_bufs &b)
{
    const size_t bytes = o.d2d_big_bytes;
    row r = make_row("a", "D2D copy " + size_name(bytes));
    r.mb = 2.0 * (double)bytes / 1e6; /* read + written */
    const stats s = time_op(st, o.reps, 2, [&](long long) {
        CK(cudaMemcpyAsync(b.db, b.da, bytes, cudaMemcpyDeviceToDevice, st));
    });
    fill_stats(&r, s);
    r.pct = 100.0 * r.gbs / d.peak_gbs;
    r.ceiling = "DRAM peak (clock x bus)";
    g_rows.push_back(r);
}

/* One PCIe direction alone ("H2D" or "D2H"), pinned memory. */
static void bench_one_way(const options &o, cudaStream_t st, const char *dir, void *dst,
                          const void *src, cudaMemcpyKind kind)
{
    const size_t pb = o.pcie_bytes;
    row r = make_row("a", std::string(dir) + " pinned " + size_name(pb));
    r.mb = (double)pb / 1e6;
    fill_stats(&r, time_op(st, o.reps, 1,
                           [&](long long) { CK(cudaMemcpyAsync(dst, src, pb, kind, st)); }));
    g_rows.push_back(r);
}

/* Both directions at once: H2D on one stream, D2H on another, both
 * starting at one event; each direction timed to its own end. A warm-up
 * first, then o.reps timed pairs: each direction's ms and the pair's. */
static void time_both_ways(const options &o, const xfer_bufs &b, std::vector<double> *t_up,
                           std::vector<double> *t_down, std::vector<double> *t_both)
{
    const size_t pb = o.pcie_bytes;
    cudaStream_t up, down;
    cudaEvent_t e0, e_up, e_down;
    CK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e_up));
    CK(cudaEventCreate(&e_down));
    for (int r = -1; r < o.reps; r++) { /* r == -1: warm-up */
        CK(cudaEventRecord(e0, up));
        CK(cudaStreamWaitEvent(down, e0, 0));
        CK(cudaMemcpyAsync(b.da, b.ha, pb, cudaMemcpyHostToDevice, up));
        CK(cudaMemcpyAsync(b.hb, b.db, pb, cudaMemcpyDeviceToHost, down));
        CK(cudaEventRecord(e_up, up));
        CK(cudaEventRecord(e_down, down));
        CK(cudaEventSynchronize(e_up));
        CK(cudaEventSynchronize(e_down));
        float mu = 0, md = 0;
        CK(cudaEventElapsedTime(&mu, e0, e_up));
        CK(cudaEventElapsedTime(&md, e0, e_down));
        if (r >= 0) {
            t_up->push_back(mu);
            t_down->push_back(md);
            t_both->push_back(std::max(mu, md));
        }
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e_up));
    CK(cudaEventDestroy(e_down));
    CK(cudaStreamDestroy(up));
    CK(cudaStreamDestroy(down));
}

static row pcie_row(const std::string &name, double bytes, const std::vector<double> &t)
{
    row r = make_row("a", name);
    r.mb = bytes / 1e6;
    fill_stats(&r, summarise(t, 1));
    return r;
}

/* The rows of both directions at once; the "each way" rate is the
 * pipeline's ceiling. */
static void bench_both_ways(const options &o, const xfer_bufs &b, ceilings *ce)
{
    const size_t pb = o.pcie_bytes;
    const std::string pn = size_name(pb);
    std::vector<double> t_up, t_down, t_both;
    time_both_ways(o, b, &t_up, &t_down, &t_both);
    g_rows.push_back(pcie_row("H2D while D2H " + pn, (double)pb, t_up));
    g_rows.push_back(pcie_row("D2H while H2D " + pn, (double)pb, t_down));
    g_rows.push_back(pcie_row("H2D+D2H at once, total", 2.0 * (double)pb, t_both));
    /* The pipeline moves its input up while its output comes down: its
     * ceiling is one direction's share of the pair, bytes / max time. */
    row re = pcie_row("H2D+D2H at once, each way", (double)pb, t_both);
    re.ceiling = "= pipeline ceiling";
    ce->both_each_gbs = re.gbs;
    g_rows.push_back(re);
}

void bench_transfers(const options &o, const device_info &d, cudaStream_t st, ceilings *ce)
{
    const xfer_bufs b = xfer_alloc(o);
    bench_d2d_big(o, d, st, b);
    bench_one_way(o, st, "H2D", b.da, b.ha, cudaMemcpyHostToDevice);
    bench_one_way(o, st, "D2H", b.hb, b.db, cudaMemcpyDeviceToHost);
    bench_both_ways(o, b, ce);
    xfer_free(b);
}
