/* bench_gpu: the small helpers every section uses. */
#include "bench_gpu.h"

#include <time.h>

std::vector<row> g_rows;
int g_wrong = 0;

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bench_gpu: out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_ERROR);
    }
    return p;
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

row make_row(const char *sec, const std::string &name)
{
    row r;
    r.sec = sec;
    r.name = name;
    r.mb = r.ms = r.ms_min = r.ms_max = r.gbs = r.pct = r.speedup = r.maxerr = NAN;
    r.check = "-";
    return r;
}

std::string size_name(size_t bytes)
{
    char b[64];
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(b, sizeof b, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(b, sizeof b, "%zu MiB", bytes >> 20);
    else
        snprintf(b, sizeof b, "%.1f MB", (double)bytes / 1e6);
    return b;
}

stats summarise(std::vector<double> t, int inner)
{
    stats s;
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    s.med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.min = t.front();
    s.max = t.back();
    s.reps = (int)n;
    s.inner = inner;
    return s;
}

void fill_stats(row *r, const stats &s)
{
    r->ms = s.med;
    r->ms_min = s.min;
    r->ms_max = s.max;
    r->gbs = r->mb / s.med; /* 1e6 bytes per 1e-3 s = 1e9 bytes/s */
}

void note_best(best *b, const row &r)
{
    if (r.check == "exact" && r.pct > b->pct) {
        b->pct = r.pct;
        b->name = r.name;
    }
}

gf_engine *create_engine(const gf_config *cfg, const char *what)
{
    gf_engine *e = NULL;
    char detail[256];
    const gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "bench_gpu: gf_engine_create%s failed: %s: %s\n", what, gf_strerror(st),
                detail);
        exit(EXIT_ERROR);
    }
    return e;
}

/* ----------------------------------------------------------- random data */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1), every sample a different non-zero-ish value. */
void fill_random_f64(double *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(splitmix64(&seed) >> 11) * 0x1.0p-52 - 1.0;
}

void fill_random_f32(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(splitmix64(&seed) >> 40) * 0x1.0p-23f - 1.0f;
}

void fill_random_bytes(void *p, size_t bytes, uint64_t seed)
{
    unsigned char *c = (unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t v = splitmix64(&seed);
        memcpy(c + i, &v, 8);
    }
    for (; i < bytes; i++)
        c[i] = (unsigned char)splitmix64(&seed);
}
