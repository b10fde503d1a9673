/* bench_gpu: the table on stdout and its copies as CSV and JSON. */
#include "bench_gpu.h"

static std::string fmt(const char *f, double v)
{
    if (isnan(v))
        return "-";
    char b[64];
    snprintf(b, sizeof b, f, v);
    return b;
}

static const char *const k_cols[] = {"sec",   "case",    "MB moved", "ms",       "GB/s",
                                     "%ceil", "ceiling", "speedup",  "max|err|", "check"};
enum { NCOLS = 10 };

static std::vector<std::string> row_cells(const row &r)
{
    std::vector<std::string> c;
    c.push_back(r.sec);
    c.push_back(r.name);
    c.push_back(fmt("%.1f", r.mb));
    c.push_back(fmt(r.ms < 1 ? "%.4f" : r.ms < 100 ? "%.3f" : "%.1f", r.ms));
    c.push_back(fmt(r.gbs < 10 ? "%.3f" : "%.1f", r.gbs));
    c.push_back(fmt("%.1f%%", r.pct));
    c.push_back(r.ceiling);
    c.push_back(fmt(r.speedup < 10 ? "%.2fx" : "%.0fx", r.speedup));
    c.push_back(isnan(r.maxerr) ? "-" : r.maxerr == 0 ? "0" : fmt("%.3g", r.maxerr));
    c.push_back(r.check);
    return c;
}

void print_table(FILE *f)
{
    std::vector<std::vector<std::string>> cells;
    size_t w[NCOLS];
    for (int j = 0; j < NCOLS; j++)
        w[j] = strlen(k_cols[j]);
    for (size_t i = 0; i < g_rows.size(); i++) {
        cells.push_back(row_cells(g_rows[i]));
        for (int j = 0; j < NCOLS; j++)
            w[j] = std::max(w[j], cells.back()[j].size());
    }
    /* Text columns left-aligned, numbers right-aligned. */
    const bool left[NCOLS] = {true, true, false, false, false, false, true, false, false, true};
    size_t total = 0;
    for (int j = 0; j < NCOLS; j++)
        total += w[j] + (j ? 2 : 0);
    for (int j = 0; j < NCOLS; j++)
        fprintf(f, "%s%-*s", j ? "  " : "", (int)w[j], k_cols[j]);
    fprintf(f, "\n%s\n", std::string(total, '-').c_str());
    for (size_t i = 0; i < cells.size(); i++) {
        if (i > 0 && g_rows[i].sec != g_rows[i - 1].sec)
            fprintf(f, "\n");
        for (int j = 0; j < NCOLS; j++)
            fprintf(f, left[j] ? "%s%-*s" : "%s%*s", j ? "  " : "", (int)w[j], cells[i][j].c_str());
        fprintf(f, "\n");
    }
}

static std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (size_t i = 0; i < s.size(); i++) {
        const unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            o += '\\';
            o += (char)ch;
        } else if (ch < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", ch);
            o += b;
        } else
            o += (char)ch;
    }
    return o + "\"";
}

static std::string json_num(double v)
{
    if (!isfinite(v))
        return "null";
    char b[64];
    snprintf(b, sizeof b, "%.9g", v);
    return b;
}

static std::string csv_str(const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string o = "\"";
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '"')
            o += '"';
        o += s[i];
    }
    return o + "\"";
}

static std::string csv_num(double v)
{
    return isfinite(v) ? json_num(v) : "";
}

void write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        exit(EXIT_ERROR);
    }
    fprintf(f, "section,case,mb_moved,ms_median,ms_min,ms_max,gb_per_s,pct_of_ceiling,ceiling,"
               "speedup,max_abs_err,check\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const row &r = g_rows[i];
        fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.sec.c_str(), csv_str(r.name).c_str(),
                csv_num(r.mb).c_str(), csv_num(r.ms).c_str(), csv_num(r.ms_min).c_str(),
                csv_num(r.ms_max).c_str(), csv_num(r.gbs).c_str(), csv_num(r.pct).c_str(),
                csv_str(r.ceiling).c_str(), csv_num(r.speedup).c_str(),
                isnan(r.maxerr)   ? ""
                : isinf(r.maxerr) ? "inf"
                                  : json_num(r.maxerr).c_str(),
                csv_str(r.check).c_str());
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: error writing %s\n", path);
        exit(EXIT_ERROR);
    }
}

void write_json(const char *path, const options &o, const device_info &d,
                const std::vector<target> &tg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        exit(EXIT_ERROR);
    }
    fprintf(f, "{\n  \"program\": \"bench_gpu\",\n  \"gpufilt\": %s,\n  \"quick\": %s,\n",
            json_str(gf_version()).c_str(), o.quick ? "true" : "false");
    fprintf(f,
            "  \"device\": {\"name\": %s, \"compute_capability\": \"%d.%d\", \"sms\": %d, "
            "\"sm_clock_khz\": %d, \"mem_clock_khz\": %d, \"bus_bits\": %d, \"peak_gb_s\": %s, "
            "\"l2_bytes\": %d, \"total_mem\": %zu, \"ecc\": %d, \"pci\": %s, \"driver\": %d, "
            "\"runtime\": %d},\n",
            json_str(d.name).c_str(), d.cc_major, d.cc_minor, d.sms, d.sm_clock_khz,
            d.mem_clock_khz, d.bus_bits, json_num(d.peak_gbs).c_str(), d.l2_bytes, d.total_mem,
            d.ecc, json_str(d.pci).c_str(), d.driver, d.runtime);
    fprintf(f,
            "  \"params\": {\"samples\": %lld, \"taps\": 5, \"reps\": %d, \"pipe_reps\": %d, "
            "\"pcie_bytes\": %zu, \"d2d_big_bytes\": %zu, \"pipe_bytes\": %zu},\n",
            o.n, o.reps, o.pipe_reps, o.pcie_bytes, o.d2d_big_bytes, o.pipe_bytes);
    fprintf(f, "  \"units\": {\"mb_moved\": \"1e6 bytes counted for GB/s\", \"gb_per_s\": \"1e9 "
               "bytes/s\", \"ms\": \"median per operation\"},\n");
    fprintf(f, "  \"rows\": [\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const row &r = g_rows[i];
        fprintf(f,
                "    {\"section\": %s, \"case\": %s, \"mb_moved\": %s, \"ms_median\": %s, "
                "\"ms_min\": %s, \"ms_max\": %s, \"gb_per_s\": %s, \"pct_of_ceiling\": %s, "
                "\"ceiling\": %s, \"speedup\": %s, \"max_abs_err\": %s, \"check\": %s}%s\n",
                json_str(r.sec).c_str(), json_str(r.name).c_str(), json_num(r.mb).c_str(),
                json_num(r.ms).c_str(), json_num(r.ms_min).c_str(), json_num(r.ms_max).c_str(),
                json_num(r.gbs).c_str(), json_num(r.pct).c_str(), json_str(r.ceiling).c_str(),
                json_num(r.speedup).c_str(),
                isinf(r.maxerr) ? "\"inf\"" : json_num(r.maxerr).c_str(), json_str(r.check).c_str(),
                i + 1 < g_rows.size() ? "," : "");
    }
    fprintf(f, "  ],\n  \"targets\": [\n");
    for (size_t i = 0; i < tg.size(); i++)
        fprintf(f,
                "    {\"target\": %s, \"best\": %s, \"ratio\": %s, \"goal\": %s, \"pass\": "
                "%s}%s\n",
                json_str(tg[i].name).c_str(), json_str(tg[i].what).c_str(),
                json_num(tg[i].ratio).c_str(), json_num(tg[i].goal).c_str(),
                tg[i].ratio >= tg[i].goal ? "true" : "false", i + 1 < tg.size() ? "," : "");
    fprintf(f, "  ],\n  \"results_exact\": %s\n}\n", g_wrong ? "false" : "true");
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: error writing %s\n", path);
        exit(EXIT_ERROR);
    }
}
