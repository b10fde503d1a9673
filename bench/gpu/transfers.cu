/* bench_gpu section a: the transfer ceilings (device copy, PCIe). */
#include "bench_gpu.h"

void bench_transfers(const options &o, const device_info &d, cudaStream_t st, ceilings *ce)
{
    const size_t big = std::max(o.d2d_big_bytes, o.pcie_bytes);
    void *da = NULL, *db = NULL, *ha = NULL, *hb = NULL;
    CK(cudaMalloc(&da, big));
    CK(cudaMalloc(&db, big));
    CK(cudaHostAlloc(&ha, o.pcie_bytes, cudaHostAllocDefault));
    CK(cudaHostAlloc(&hb, o.pcie_bytes, cudaHostAllocDefault));
    fill_random_bytes(ha, o.pcie_bytes, 11);
    fill_random_bytes(hb, o.pcie_bytes, 12);
    CK(cudaMemcpy(da, ha, o.pcie_bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, o.pcie_bytes, cudaMemcpyHostToDevice));

    {
        const size_t bytes = o.d2d_big_bytes;
        row r = make_row("a", "D2D copy " + size_name(bytes));
        r.mb = 2.0 * (double)bytes / 1e6; /* read + written */
        const stats s = time_op(st, o.reps, 2, [&](long long) {
            CK(cudaMemcpyAsync(db, da, bytes, cudaMemcpyDeviceToDevice, st));
        });
        fill_stats(&r, s);
        r.pct = 100.0 * r.gbs / d.peak_gbs;
        r.ceiling = "DRAM peak (clock x bus)";
        g_rows.push_back(r);
    }

    const size_t pb = o.pcie_bytes;
    const std::string pn = size_name(pb);
    {
        row r = make_row("a", "H2D pinned " + pn);
        r.mb = (double)pb / 1e6;
        fill_stats(&r, time_op(st, o.reps, 1, [&](long long) {
            CK(cudaMemcpyAsync(da, ha, pb, cudaMemcpyHostToDevice, st));
        }));
        g_rows.push_back(r);
    }
    {
        row r = make_row("a", "D2H pinned " + pn);
        r.mb = (double)pb / 1e6;
        fill_stats(&r, time_op(st, o.reps, 1, [&](long long) {
            CK(cudaMemcpyAsync(hb, db, pb, cudaMemcpyDeviceToHost, st));
        }));
        g_rows.push_back(r);
    }
    {
        /* Both directions at once: H2D on one stream, D2H on another, both
         * starting at one event; each direction timed to its own end. */
        cudaStream_t up, down;
        cudaEvent_t e0, e_up, e_down;
        CK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e_up));
        CK(cudaEventCreate(&e_down));
        std::vector<double> t_up, t_down, t_both;
        for (int r = -1; r < o.reps; r++) { /* r == -1: warm-up */
            CK(cudaEventRecord(e0, up));
            CK(cudaStreamWaitEvent(down, e0, 0));
            CK(cudaMemcpyAsync(da, ha, pb, cudaMemcpyHostToDevice, up));
            CK(cudaMemcpyAsync(hb, db, pb, cudaMemcpyDeviceToHost, down));
            CK(cudaEventRecord(e_up, up));
            CK(cudaEventRecord(e_down, down));
            CK(cudaEventSynchronize(e_up));
            CK(cudaEventSynchronize(e_down));
            float mu = 0, md = 0;
            CK(cudaEventElapsedTime(&mu, e0, e_up));
            CK(cudaEventElapsedTime(&md, e0, e_down));
            if (r >= 0) {
                t_up.push_back(mu);
                t_down.push_back(md);
                t_both.push_back(std::max(mu, md));
            }
        }
        row ru = make_row("a", "H2D while D2H " + pn);
        ru.mb = (double)pb / 1e6;
        fill_stats(&ru, summarise(t_up, 1));
        row rd = make_row("a", "D2H while H2D " + pn);
        rd.mb = (double)pb / 1e6;
        fill_stats(&rd, summarise(t_down, 1));
        row rb = make_row("a", "H2D+D2H at once, total");
        rb.mb = 2.0 * (double)pb / 1e6;
        fill_stats(&rb, summarise(t_both, 1));
        /* The pipeline moves its input up while its output comes down: its
         * ceiling is one direction's share of the pair, bytes / max time. */
        row re = make_row("a", "H2D+D2H at once, each way");
        re.mb = (double)pb / 1e6;
        fill_stats(&re, summarise(t_both, 1));
        re.ceiling = "= pipeline ceiling";
        ce->both_each_gbs = re.gbs;
        g_rows.push_back(ru);
        g_rows.push_back(rd);
        g_rows.push_back(rb);
        g_rows.push_back(re);
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e_up));
        CK(cudaEventDestroy(e_down));
        CK(cudaStreamDestroy(up));
        CK(cudaStreamDestroy(down));
    }
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFreeHost(ha));
    CK(cudaFreeHost(hb));
}
