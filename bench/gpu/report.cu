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

/* The rows' fields in the CSV and JSON files, in this order. */
static const char *const k_keys[] = {"section", "case",    "mb_moved",    "ms_median",
                                     "ms_min",  "ms_max",  "gb_per_s",    "pct_of_ceiling",
                                     "ceiling", "speedup", "max_abs_err", "check"};
enum { NKEYS = 12 };

/* A row's fields in k_keys' order, written as JSON values or as CSV cells.
 * A number that is not finite is null in JSON and empty in CSV, except
 * max_abs_err, infinite where an output was NaN or missing: "inf". */
static std::vector<std::string> row_fields(const row &r, bool json)
{
    std::string (*text)(const std::string &) = json ? json_str : csv_str;
    std::string (*num)(double) = json ? json_num : csv_num;
    const std::string err = isinf(r.maxerr) ? (json ? "\"inf\"" : "inf") : num(r.maxerr);
    const std::string f[NKEYS] = {text(r.sec),     text(r.name),   num(r.mb),  num(r.ms),
                                  num(r.ms_min),   num(r.ms_max),  num(r.gbs), num(r.pct),
                                  text(r.ceiling), num(r.speedup), err,        text(r.check)};
    return std::vector<std::string>(f, f + NKEYS);
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        exit(EXIT_ERROR);
    }
    return f;
}

static void close_out(FILE *f, const char *path)
{
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: error writing %s\n", path);
        exit(EXIT_ERROR);
    }
}

void write_csv(const char *path)
{
    FILE *f = open_out(path);
    for (int j = 0; j < NKEYS; j++)
        fprintf(f, "%s%s", j ? "," : "", k_keys[j]);
    fprintf(f, "\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const std::vector<std::string> v = row_fields(g_rows[i], false);
        for (int j = 0; j < NKEYS; j++)
            fprintf(f, "%s%s", j ? "," : "", v[j].c_str());
        fprintf(f, "\n");
    }
    close_out(f, path);
}

static void json_rows(FILE *f)
{
    fprintf(f, "  \"rows\": [\n");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const std::vector<std::string> v = row_fields(g_rows[i], true);
        fprintf(f, "    {");
        for (int j = 0; j < NKEYS; j++)
            fprintf(f, "%s\"%s\": %s", j ? ", " : "", k_keys[j], v[j].c_str());
        fprintf(f, "}%s\n", i + 1 < g_rows.size() ? "," : "");
    }
    fprintf(f, "  ],\n");
}

void write_json(const char *path, const options &o, const device_info &d,
                const std::vector<target> &tg)
{
    FILE *f = open_out(path);
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
    json_rows(f);
    fprintf(f, "  \"targets\": [\n");
    for (size_t i = 0; i < tg.size(); i++)
        fprintf(f,
                "    {\"target\": %s, \"best\": %s, \"ratio\": %s, \"goal\": %s, \"pass\": "
                "%s}%s\n",
                json_str(tg[i].name).c_str(), json_str(tg[i].what).c_str(),
                json_num(tg[i].ratio).c_str(), json_num(tg[i].goal).c_str(),
                o.quick                     ? "null"
                : tg[i].ratio >= tg[i].goal ? "true"
                                            : "false",
                i + 1 < tg.size() ? "," : "");
    fprintf(f, "  ],\n  \"results_exact\": %s\n}\n", g_wrong ? "false" : "true");
    close_out(f, path);
}
