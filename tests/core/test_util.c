/* Helpers shared by the core tests (see test_util.h). */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tu_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: FAIL: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    return 1;
}

double tu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int tu_run_steps(const char *prog, const char *summary, const tu_step *steps, size_t n)
{
    const double t0 = tu_now();
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++)
        bad += steps[i]();
    if (bad) {
        fprintf(stderr, "%s: FAILED\n", prog);
        return 1;
    }
    printf("%s: %s, %.1f s\n", prog, summary, tu_now() - t0);
    return 0;
}

uint64_t tu_rng_next(tu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t tu_rng_below(tu_rng *r, size_t n)
{
    return (size_t)(tu_rng_next(r) % n);
}

double tu_rng_sym(tu_rng *r)
{
    /* 53 random bits: exact in a double. */
    return (double)(tu_rng_next(r) >> 11) * 0x1p-52 - 1.0;
}

void tu_fill_signal(void *dst, size_t n, size_t ss, uint64_t seed)
{
    tu_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        double v = tu_rng_sym(&r);
        if (tu_rng_below(&r, 100) == 0)
            v *= 1000.0;
        if (ss == sizeof(float))
            ((float *)dst)[i] = (float)v;
        else
            ((double *)dst)[i] = v;
    }
}

void tu_fill_taps(double *taps, size_t n, uint64_t seed)
{
    tu_rng r = {seed};
    for (size_t k = 0; k < n; k++)
        taps[k] = tu_rng_sym(&r) * 2.0 / (double)n;
}

size_t tu_sample_size(gf_precision p)
{
    return p == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
}

gf_config tu_config(int channels, size_t num_taps, const double *taps, gf_mode mode,
                    gf_precision precision, gf_device device)
{
    gf_config c = gf_config_default();
    c.channels = channels;
    c.num_taps = num_taps;
    c.taps = taps;
    c.mode = mode;
    c.precision = precision;
    c.device = device;
    c.method = GF_METHOD_DIRECT;
    return c;
}

int tu_input_alloc(tu_input *in, const char *label, size_t samples, size_t ss, size_t num_taps)
{
    in->x = malloc(samples * ss);
    in->taps = malloc(num_taps * sizeof(double));
    if (in->x && in->taps)
        return 0;
    tu_input_free(in);
    return TU_FAIL("%s: out of memory", label);
}

void tu_input_free(tu_input *in)
{
    free(in->x);
    free(in->taps);
    in->x = NULL;
    in->taps = NULL;
}

int tu_create(const char *label, const gf_config *cfg, gf_engine **e)
{
    char detail[256];
    const gf_status st = gf_engine_create(cfg, e, detail, sizeof detail);
    if (st != GF_OK)
        return TU_FAIL("%s: create: %s (%s)", label, gf_strerror(st), detail);
    return 0;
}

size_t tu_first_diff(const void *a, const void *b, size_t n, size_t ss)
{
    const unsigned char *pa = a, *pb = b;
    /* Large blocks first, then the sample that differs. */
    size_t i = 0;
    const size_t block = 4096;
    while (i + block <= n && memcmp(pa + i * ss, pb + i * ss, block * ss) == 0)
        i += block;
    for (; i < n; i++)
        if (memcmp(pa + i * ss, pb + i * ss, ss) != 0)
            return i;
    return n;
}

static void describe(char *buf, size_t size, const unsigned char *p, size_t ss)
{
    if (ss == sizeof(float)) {
        float f;
        uint32_t u;
        memcpy(&f, p, sizeof f);
        memcpy(&u, p, sizeof u);
        snprintf(buf, size, "%.9g (%a, bits 0x%08lx)", (double)f, (double)f, (unsigned long)u);
    } else {
        double d;
        uint64_t u;
        memcpy(&d, p, sizeof d);
        memcpy(&u, p, sizeof u);
        snprintf(buf, size, "%.17g (%a, bits 0x%016llx)", d, d, (unsigned long long)u);
    }
}

int tu_compare(const char *what, const void *expected, const void *actual, size_t n, size_t ss,
               size_t channels)
{
    if (memcmp(expected, actual, n * ss) == 0)
        return 0;
    const size_t i = tu_first_diff(expected, actual, n, ss);
    size_t count = 0;
    for (size_t j = i; j < n; j++)
        count += memcmp((const unsigned char *)expected + j * ss,
                        (const unsigned char *)actual + j * ss, ss) != 0;
    char e[96], a[96];
    describe(e, sizeof e, (const unsigned char *)expected + i * ss, ss);
    describe(a, sizeof a, (const unsigned char *)actual + i * ss, ss);
    return TU_FAIL("%s: first mismatch at sample %zu (frame %zu, channel %zu): expected %s, "
                   "got %s; %zu of %zu samples differ",
                   what, i, i / channels, i % channels, e, a, count, n);
}

/* ---- golden files ---- */

unsigned char *tu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

uint64_t tu_read_uint(tu_reader *r, int bytes)
{
    if (r->left < (size_t)bytes) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += bytes;
    r->left -= (size_t)bytes;
    return v;
}

double tu_read_f64(tu_reader *r)
{
    const uint64_t u = tu_read_uint(r, 8);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

void tu_read_bytes(tu_reader *r, void *dst, size_t n)
{
    if (r->left < n) {
        r->bad = 1;
        if (dst)
            memset(dst, 0, n);
        return;
    }
    if (dst)
        memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
}

void tu_read_samples(tu_reader *r, void *dst, size_t n, size_t ss)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        const uint64_t u = tu_read_uint(r, (int)ss);
        if (ss == 4) {
            const uint32_t u32 = (uint32_t)u;
            memcpy(d + 4 * i, &u32, 4);
        } else
            memcpy(d + 8 * i, &u, 8);
    }
}

int tu_manifest_each(const char *what, const char *dir, tu_case_fn each, void *ctx, size_t *cases)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return TU_FAIL("%s: cannot open %s", what, path);
    char line[512];
    int bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        char file[128], name[128];
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%127s %127s", file, name) != 2) {
            bad = TU_FAIL("%s: %s: bad line '%s'", what, path, line);
            break;
        }
        bad = each(dir, file, name, ctx);
        ++*cases;
    }
    fclose(f);
    return bad;
}

/* A golden case's header into g, checked, and against the file's size. */
static int read_case_header(tu_reader *r, const char *path, const char *name, size_t size,
                            tu_golden *g)
{
    unsigned char magic[8];
    tu_read_bytes(r, magic, sizeof magic);
    if (size < 64 || memcmp(magic, "GFGOLD01", 8) != 0)
        return TU_FAIL("golden: %s: not a GFGOLD01 file", path);
    const uint32_t prec = (uint32_t)tu_read_uint(r, 4), mode = (uint32_t)tu_read_uint(r, 4),
                   C = (uint32_t)tu_read_uint(r, 4), T = (uint32_t)tu_read_uint(r, 4),
                   N = (uint32_t)tu_read_uint(r, 4), kind = (uint32_t)tu_read_uint(r, 4);
    tu_read_bytes(r, g->name, 32);
    g->name[32] = '\0';
    if (prec > 1 || mode > 1 || C < 1 || C > GF_MAX_CHANNELS || T < 1 || T > GF_MAX_TAPS ||
        kind > 1)
        return TU_FAIL("golden: %s: bad header (precision %lu mode %lu channels %lu taps %lu "
                       "kind %lu)",
                       path, (unsigned long)prec, (unsigned long)mode, (unsigned long)C,
                       (unsigned long)T, (unsigned long)kind);
    if (strcmp(g->name, name) != 0)
        return TU_FAIL("golden: %s: header names case '%s', MANIFEST.txt '%s'", path, g->name,
                       name);
    g->precision = prec ? GF_PRECISION_F64 : GF_PRECISION_F32;
    g->mode = mode ? GF_MODE_CAUSAL : GF_MODE_SAME;
    g->channels = (int)C;
    g->num_taps = T;
    g->frames = N;
    g->mean = (int)kind;
    g->ss = tu_sample_size(g->precision);
    const size_t want = 64 + 8 * (size_t)T + 2 * (size_t)N * C * g->ss;
    if (size != want)
        return TU_FAIL("golden: %s: %zu bytes, header says %zu", path, size, want);
    return 0;
}

/* Load one case; g holds freeable buffers (or none) even when it fails. */
static int load_case(const char *dir, const char *file, const char *name, tu_golden *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    memset(g, 0, sizeof *g);
    snprintf(g->file, sizeof g->file, "%s", file);
    size_t size = 0;
    unsigned char *d = tu_read_file(path, &size);
    if (!d)
        return TU_FAIL("golden: cannot read %s", path);
    tu_reader r = {d, size, 0};
    int bad = read_case_header(&r, path, name, size, g);
    const size_t ns = g->frames * (size_t)g->channels;
    if (!bad) {
        g->taps = malloc(g->num_taps * sizeof(double));
        g->x = malloc(ns ? ns * g->ss : 1);
        g->y = malloc(ns ? ns * g->ss : 1);
        if (!g->taps || !g->x || !g->y)
            bad = TU_FAIL("golden: out of memory");
    }
    if (!bad) {
        tu_read_samples(&r, g->taps, g->num_taps, 8);
        tu_read_samples(&r, g->x, ns, g->ss);
        tu_read_samples(&r, g->y, ns, g->ss);
    }
    free(d);
    return bad;
}

void tu_golden_free(tu_golden *cases, size_t n)
{
    if (!cases)
        return;
    for (size_t i = 0; i < n; i++) {
        free(cases[i].taps);
        free(cases[i].x);
        free(cases[i].y);
    }
    free(cases);
}

typedef struct golden_list {
    tu_golden *cases;
    size_t n, cap;
} golden_list;

static int add_case(const char *dir, const char *file, const char *name, void *ctx)
{
    golden_list *l = ctx;
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 64;
        tu_golden *nl = realloc(l->cases, cap * sizeof *nl);
        if (!nl)
            return TU_FAIL("golden: out of memory");
        l->cases = nl;
        l->cap = cap;
    }
    return load_case(dir, file, name, &l->cases[l->n++]);
}

size_t tu_golden_load(const char *dir, tu_golden **cases)
{
    golden_list l = {NULL, 0, 0};
    size_t lines = 0;
    int bad = tu_manifest_each("golden", dir, add_case, &l, &lines);
    if (!bad && l.n == 0)
        bad = TU_FAIL("golden: %s/MANIFEST.txt lists no cases", dir);
    if (bad) {
        tu_golden_free(l.cases, l.n);
        *cases = NULL;
        return 0;
    }
    *cases = l.cases;
    return l.n;
}

gf_config tu_golden_config(const tu_golden *g, gf_device dev, size_t chunk)
{
    gf_config c =
        tu_config(g->channels, g->num_taps, g->mean ? NULL : g->taps, g->mode, g->precision, dev);
    c.chunk_frames = chunk;
    return c;
}

/* ---- stream drivers ---- */

static size_t next_size(tu_pattern *p, tu_rng *r, size_t left)
{
    size_t n;
    if (!p->random)
        n = p->fixed ? p->fixed : left;
    else {
        const size_t pick = tu_rng_below(r, 16);
        if (pick == 0)
            n = 1;
        else if (pick == 1)
            n = left; /* everything at once */
        else
            n = 1 + tu_rng_below(r, p->max ? p->max : 1);
    }
    if (n > left)
        n = left;
    return n;
}

int tu_run_stream(gf_engine *e, const void *in, size_t frames, void *out, size_t cap, size_t fb,
                  tu_pattern push, tu_pattern pull, size_t *produced)
{
    return tu_run_stream_io(e, in, frames, fb, out, cap, fb, push, pull, produced);
}

int tu_run_stream_io(gf_engine *e, const void *in, size_t frames, size_t fb, void *out, size_t cap,
                     size_t fbo, tu_pattern push, tu_pattern pull, size_t *produced)
{
    tu_rng rpush = {push.seed}, rpull = {pull.seed ^ 0x5555u};
    const unsigned char *src = in;
    unsigned char *dst = out;
    size_t off = 0, total = 0;
    int stalls = 0;
    gf_status st;
    *produced = 0;
    while (off < frames) {
        size_t n = next_size(&push, &rpush, frames - off), used = 0, got = 0;
        if ((st = gf_engine_push(e, src + off * fb, n, &used)) != GF_OK)
            return TU_FAIL("push(%zu) at frame %zu: %s (%s)", n, off, gf_strerror(st),
                           gf_engine_error(e));
        if (used > n)
            return TU_FAIL("push(%zu) consumed %zu", n, used);
        off += used;
        size_t m = next_size(&pull, &rpull, cap - total);
        if ((st = gf_engine_pull(e, dst + total * fbo, m, &got)) != GF_OK)
            return TU_FAIL("pull(%zu) after %zu frames in: %s (%s)", m, off, gf_strerror(st),
                           gf_engine_error(e));
        if (got > m)
            return TU_FAIL("pull(%zu) returned %zu", m, got);
        total += got;
        /* A pull may retire chunks that produce nothing (same-mode look-ahead),
         * so allow a few empty rounds, but not a stall. */
        stalls = used == 0 && got == 0 ? stalls + 1 : 0;
        if (stalls > 8)
            return TU_FAIL("push/pull stalled at frame %zu of %zu (%zu out)", off, frames, total);
    }
    if ((st = gf_engine_flush(e)) != GF_OK)
        return TU_FAIL("flush: %s (%s)", gf_strerror(st), gf_engine_error(e));
    size_t dummy = 1;
    unsigned char *one = calloc(1, fb); /* a frame of any width */
    if (!one)
        return TU_FAIL("calloc(%zu)", fb);
    st = gf_engine_push(e, one, 1, &dummy);
    free(one);
    if (st != GF_ERR_STATE)
        return TU_FAIL("push after flush returned %d (%s), expected GF_ERR_STATE", (int)st,
                       gf_strerror(st));
    if (dummy != 0)
        return TU_FAIL("push after flush consumed %zu frames", dummy);
    for (;;) {
        size_t got = 0, m = next_size(&pull, &rpull, cap - total);
        if (m == 0)
            m = 1; /* the output buffer is full: one more frame would be a bug anyway */
        if (total + m > cap)
            return TU_FAIL("more than %zu output frames for %zu input frames", cap, frames);
        if ((st = gf_engine_pull(e, dst + total * fbo, m, &got)) != GF_OK)
            return TU_FAIL("pull(%zu) after flush: %s (%s)", m, gf_strerror(st),
                           gf_engine_error(e));
        if (got > m)
            return TU_FAIL("pull(%zu) returned %zu", m, got);
        if (got == 0)
            break;
        total += got;
    }
    *produced = total;
    return 0;
}

int tu_run_process(gf_engine *e, const void *in, size_t frames, void *out, size_t cap, size_t fb,
                   tu_pattern pieces, size_t *produced)
{
    tu_rng r = {pieces.seed};
    const unsigned char *src = in;
    unsigned char *dst = out;
    const size_t pending = gf_engine_max_pending(e);
    size_t off = 0, total = 0;
    gf_status st;
    *produced = 0;
    while (off < frames) {
        size_t n = next_size(&pieces, &r, frames - off), got = 0;
        if (cap - total < n + pending)
            return TU_FAIL("test bug: output room %zu < %zu + max_pending %zu", cap - total, n,
                           pending);
        if ((st = gf_engine_process(e, src + off * fb, n, dst + total * fb, &got)) != GF_OK)
            return TU_FAIL("process(%zu) at frame %zu: %s (%s)", n, off, gf_strerror(st),
                           gf_engine_error(e));
        if (got > n + pending)
            return TU_FAIL("process(%zu) produced %zu > frames + max_pending %zu", n, got,
                           n + pending);
        off += n;
        total += got;
        if (total > off)
            return TU_FAIL("process: %zu frames out after %zu in", total, off);
    }
    if ((st = gf_engine_flush(e)) != GF_OK)
        return TU_FAIL("flush: %s (%s)", gf_strerror(st), gf_engine_error(e));
    size_t dummy = 1;
    const unsigned char one[64] = {0};
    if (fb <= sizeof one &&
        (st = gf_engine_process(e, one, 1, dst + total * fb, &dummy)) != GF_ERR_STATE)
        return TU_FAIL("process after flush returned %d, expected GF_ERR_STATE", (int)st);
    for (;;) {
        size_t got = 0;
        if ((st = gf_engine_pull(e, dst + total * fb, cap - total, &got)) != GF_OK)
            return TU_FAIL("pull after flush: %s (%s)", gf_strerror(st), gf_engine_error(e));
        if (got > cap - total)
            return TU_FAIL("pull(%zu) returned %zu", cap - total, got);
        if (got == 0)
            break;
        total += got;
    }
    *produced = total;
    return 0;
}

const char *tu_device_name(gf_device dev)
{
    switch (dev) {
    case GF_DEVICE_REF:
        return "ref";
    case GF_DEVICE_CPU:
        return "cpu";
    case GF_DEVICE_CUDA:
        return "cuda";
    case GF_DEVICE_NONE:
        return "none";
    case GF_DEVICE_AUTO:
        break;
    }
    return "auto";
}

#define TU_GUARD 0xA5

int tu_filter_into(const char *label, const gf_config *cfg, const void *in, size_t frames,
                   int use_process, tu_pattern a, tu_pattern b, void *out, size_t out_cap)
{
    const size_t fb = (size_t)cfg->channels * tu_sample_size(cfg->precision);
    gf_engine *e = NULL;
    if (tu_create(label, cfg, &e))
        return 1;
    int bad = 0;
    if (cfg->device != GF_DEVICE_AUTO &&
        strcmp(gf_engine_backend(e), tu_device_name(cfg->device)) != 0) {
        bad = TU_FAIL("%s: backend is '%s', asked for '%s'", label, gf_engine_backend(e),
                      tu_device_name(cfg->device));
        goto done;
    }
    const size_t need = frames + 1 + (use_process ? gf_engine_max_pending(e) : 0);
    if (out_cap < need) {
        bad = TU_FAIL("%s: test bug: output buffer of %zu frames, need %zu", label, out_cap, need);
        goto done;
    }
    memset(out, TU_GUARD, out_cap * fb);
    size_t produced = 0;
    bad = use_process ? tu_run_process(e, in, frames, out, out_cap, fb, a, &produced)
                      : tu_run_stream(e, in, frames, out, out_cap, fb, a, b, &produced);
    if (bad) {
        TU_FAIL("%s: the run above failed", label);
        goto done;
    }
    if (produced != frames) {
        bad = TU_FAIL("%s: %zu frames in, %zu out", label, frames, produced);
        goto done;
    }
    const unsigned char *tail = (const unsigned char *)out + frames * fb;
    for (size_t i = 0; i < (out_cap - frames) * fb; i++)
        if (tail[i] != TU_GUARD) {
            bad = TU_FAIL("%s: byte %zu past the %zu output frames was overwritten", label, i,
                          frames);
            goto done;
        }
done:
    gf_engine_destroy(e);
    return bad;
}

void *tu_filter(const char *label, const gf_config *cfg, const void *in, size_t frames,
                int use_process, tu_pattern a, tu_pattern b)
{
    const size_t fb = (size_t)cfg->channels * tu_sample_size(cfg->precision);
    /* Process needs room for frames + max_pending, known once an engine exists. */
    size_t cap = frames + 64;
    if (use_process) {
        gf_engine *probe = NULL;
        if (gf_engine_create(cfg, &probe, NULL, 0) == GF_OK)
            cap += gf_engine_max_pending(probe);
        gf_engine_destroy(probe);
    }
    void *out = malloc(cap * fb);
    if (!out) {
        TU_FAIL("%s: cannot allocate %zu output frames", label, cap);
        return NULL;
    }
    if (tu_filter_into(label, cfg, in, frames, use_process, a, b, out, cap)) {
        free(out);
        return NULL;
    }
    return out;
}

int tu_check_run(const char *label, const gf_config *cfg, const void *in, size_t frames,
                 const void *expected, int use_process, tu_pattern a, tu_pattern b)
{
    void *out = tu_filter(label, cfg, in, frames, use_process, a, b);
    if (!out)
        return 1;
    const size_t ss = tu_sample_size(cfg->precision);
    int bad =
        tu_compare(label, expected, out, frames * (size_t)cfg->channels, ss, (size_t)cfg->channels);
    free(out);
    return bad;
}

/* ---- the golden matrix ---- */

static int check_taps(const tu_golden *g, gf_device dev)
{
    gf_config cfg = tu_golden_config(g, dev, 0);
    gf_engine *e = NULL;
    if (tu_create(g->name, &cfg, &e))
        return 1;
    double *got = malloc(g->num_taps * sizeof(double));
    int bad = 0;
    if (!got) {
        gf_engine_destroy(e);
        return TU_FAIL("out of memory");
    }
    gf_engine_taps(e, got, g->num_taps);
    for (size_t k = 0; k < g->num_taps && !bad; k++) {
        double want = g->taps[k];
        if (!g->mean && g->precision == GF_PRECISION_F32)
            want = (float)want;
        if (memcmp(&want, &got[k], sizeof want) != 0)
            bad = TU_FAIL("%s: gf_engine_taps[%zu] = %a, expected %a", g->name, k, got[k], want);
    }
    if (gf_engine_latency(e) != (g->mode == GF_MODE_SAME ? (g->num_taps - 1) / 2 : 0))
        bad |= TU_FAIL("%s: latency %zu", g->name, gf_engine_latency(e));
    free(got);
    gf_engine_destroy(e);
    return bad;
}

int tu_golden_check_all(const tu_golden *cases, size_t n, gf_device dev, size_t *runs)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const tu_golden *g = &cases[i];
        const size_t N = g->frames;
        const size_t chunks[] = {0, 1, 7, 64, 1000, N ? N : 1, N + 3};
        bad += check_taps(g, dev);
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            gf_config cfg = tu_golden_config(g, dev, chunks[c]);
            cfg.threads = (int)(c % 4); /* 0 = auto; 1..3 workers elsewhere */
            /* push/pull: all at once, fixed odd sizes, random sizes */
            const tu_pattern push[] = {TU_ALL, TU_FIXED(13), TU_RANDOM(97, 11 + c), TU_FIXED(1)};
            const tu_pattern pull[] = {TU_ALL, TU_FIXED(5), TU_RANDOM(61, 29 + c),
                                       TU_RANDOM(300, 7 + c)};
            const size_t v = (c + i) % 4;
            char label[256];
            snprintf(label, sizeof label, "%s (%s) on %s, chunk %zu, push/pull variant %zu",
                     g->name, g->file, tu_device_name(dev), chunks[c], v);
            bad += tu_check_run(label, &cfg, g->x, N, g->y, 0, push[v], pull[v]);
            snprintf(label, sizeof label, "%s (%s) on %s, chunk %zu, process in pieces", g->name,
                     g->file, tu_device_name(dev), chunks[c]);
            bad += tu_check_run(label, &cfg, g->x, N, g->y, 1,
                                c % 2 ? TU_RANDOM(200, 3 + i) : TU_ALL, TU_ALL);
            *runs += 2;
            if (bad)
                return bad; /* the first mismatch says it all */
        }
    }
    return bad;
}

/* ---- histogram records ---- */

void tu_recs_free(tu_recs *l)
{
    free(l->r);
    free(l->bins);
    memset(l, 0, sizeof *l);
}

int tu_recs_add(tu_recs *l, const gf_hist_record *rec, size_t nbins)
{
    if (l->n == 0)
        l->nbins = nbins;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        gf_hist_record *r = realloc(l->r, cap * sizeof *r);
        if (!r)
            return TU_FAIL("out of memory");
        l->r = r;
        uint64_t *b = realloc(l->bins, cap * nbins * sizeof *b);
        if (!b)
            return TU_FAIL("out of memory");
        l->bins = b;
        l->cap = cap;
    }
    l->r[l->n] = *rec;
    l->r[l->n].bins = NULL; /* the engine's; the copy is tu_recs_bins(l, n) */
    if (rec->bins)
        memcpy(l->bins + l->n * nbins, rec->bins, nbins * sizeof(uint64_t));
    else
        memset(l->bins + l->n * nbins, 0, nbins * sizeof(uint64_t));
    l->n++;
    return 0;
}

uint64_t *tu_recs_bins(const tu_recs *l, size_t i)
{
    return l->bins + i * l->nbins;
}

/* Take every record the engine has ready. */
int tu_recs_drain(tu_recs *l, gf_engine *e, size_t nbins)
{
    gf_hist_record rec;
    gf_status st;
    while ((st = gf_engine_hist_next(e, &rec)) == GF_OK)
        if (tu_recs_add(l, &rec, nbins))
            return 1;
    if (st != GF_NO_RECORD)
        return TU_FAIL("gf_engine_hist_next: %s: %s", gf_strerror(st), gf_engine_error(e));
    return 0;
}

int tu_same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every field of every record, doubles bitwise. */
int tu_recs_compare(const char *label, const tu_recs *want, const tu_recs *got)
{
    if (want->n != got->n)
        return TU_FAIL("%s: %zu records, expected %zu", label, got->n, want->n);
    for (size_t i = 0; i < want->n; i++) {
        const gf_hist_record *a = &want->r[i], *b = &got->r[i];
        char where[64];
        snprintf(where, sizeof where, "record %zu (block %llu, channel %d)", i,
                 (unsigned long long)a->block, a->channel);
        if (a->block != b->block || a->first_frame != b->first_frame || a->frames != b->frames ||
            a->channel != b->channel)
            return TU_FAIL(
                "%s: %s: got block %llu first_frame %llu frames %llu channel %d, "
                "expected %llu %llu %llu %d",
                label, where, (unsigned long long)b->block, (unsigned long long)b->first_frame,
                (unsigned long long)b->frames, b->channel, (unsigned long long)a->block,
                (unsigned long long)a->first_frame, (unsigned long long)a->frames, a->channel);
        if (a->below != b->below || a->above != b->above || a->nan != b->nan)
            return TU_FAIL("%s: %s: below/above/nan %llu/%llu/%llu, expected %llu/%llu/%llu", label,
                           where, (unsigned long long)b->below, (unsigned long long)b->above,
                           (unsigned long long)b->nan, (unsigned long long)a->below,
                           (unsigned long long)a->above, (unsigned long long)a->nan);
        if (!tu_same_double(a->min, b->min) || !tu_same_double(a->max, b->max) ||
            !tu_same_double(a->rms, b->rms))
            return TU_FAIL("%s: %s: min/max/rms %a/%a/%a, expected %a/%a/%a", label, where, b->min,
                           b->max, b->rms, a->min, a->max, a->rms);
        const uint64_t *wa = tu_recs_bins(want, i), *wb = tu_recs_bins(got, i);
        for (size_t k = 0; k < want->nbins; k++)
            if (wa[k] != wb[k])
                return TU_FAIL("%s: %s: bin %zu holds %llu, expected %llu", label, where, k,
                               (unsigned long long)wb[k], (unsigned long long)wa[k]);
    }
    return 0;
}

/* ---- running a stream with histograms ---- */

static size_t hist_pick(tu_rng *r, size_t fixed, int rnd, size_t left)
{
    size_t n = fixed;
    if (rnd)
        n = tu_rng_below(r, 8) == 0 ? 1 : 1 + tu_rng_below(r, fixed ? fixed : 1);
    if (n == 0 || n > left)
        n = left;
    return n;
}

const tu_run_spec tu_whole_stream = {TU_RUN_PROCESS, SIZE_MAX, 0, 0, 0, 0, 1, 0};

const char *tu_run_kind_name(tu_run_kind k)
{
    return k == TU_RUN_PUSHPULL ? "push/pull"
           : k == TU_RUN_SUBMIT ? "push/submit/wait/pull"
                                : "process";
}

int tu_signal_case_setup(const tu_signal_case *sc, uint64_t seed, uint64_t taps_seed, gf_device dev,
                         tu_input *in, gf_config *c)
{
    const size_t ss = tu_sample_size(sc->precision), ns = sc->frames * (size_t)sc->channels;
    if (tu_input_alloc(in, sc->name, ns, ss, sc->num_taps))
        return 1;
    tu_fill_signal(in->x, ns, ss, seed);
    tu_fill_taps(in->taps, sc->num_taps, taps_seed);
    *c = tu_config(sc->channels, sc->num_taps, sc->mean ? NULL : in->taps, sc->mode, sc->precision,
                   dev);
    return 0;
}

int tu_hist_case_setup(const tu_hist_case *hc, uint64_t seed, uint64_t taps_seed, gf_device dev,
                       tu_input *in, gf_hist_config *h, gf_config *c)
{
    const size_t ss = tu_sample_size(hc->precision), ns = hc->frames * (size_t)hc->channels;
    if (tu_input_alloc(in, hc->name, ns, ss, hc->taps))
        return 1;
    tu_fill_hist_signal(in->x, ns, ss, seed, -1.0, 1.0);
    tu_fill_taps(in->taps, hc->taps, taps_seed);
    *h = (gf_hist_config){hc->bins, hc->block, -1.0, 1.0, hc->of_input, hc->mix};
    *c = tu_config(hc->channels, hc->taps, in->taps, hc->mode, hc->precision, dev);
    c->hist = h;
    return 0;
}

/* One stream of tu_run_hist: the engine, its buffers and how far it is. */
typedef struct hist_stream {
    const char *label;
    const tu_run_spec *rs;
    gf_engine *e;
    tu_recs *recs;
    const unsigned char *src;
    unsigned char *dst;
    size_t fb, cap, nbins, total;
    tu_rng r;
} hist_stream;

/* The input through the engine as rs says, taking records at random moments. */
static int hist_feed(hist_stream *s, size_t frames)
{
    const tu_run_spec *rs = s->rs;
    size_t off = 0;
    int bad = 0;
    while (off < frames && !bad) {
        size_t n = hist_pick(&s->r, rs->a, rs->rnd, frames - off), used = 0, got = 0;
        gf_status st;
        if (rs->kind == TU_RUN_PROCESS) {
            st = gf_engine_process(s->e, s->src + off * s->fb, n, s->dst + s->total * s->fb, &got);
            used = n;
            s->total += got;
        } else {
            st = gf_engine_push(s->e, s->src + off * s->fb, n, &used);
            if (st == GF_OK && rs->kind == TU_RUN_SUBMIT) {
                st = gf_engine_submit(s->e);
                if (st == GF_OK)
                    st = gf_engine_wait(s->e);
            }
            if (st == GF_OK) {
                const size_t m = rs->kind == TU_RUN_SUBMIT
                                     ? s->cap - s->total
                                     : hist_pick(&s->r, rs->b, rs->rnd, s->cap - s->total);
                st = gf_engine_pull(s->e, s->dst + s->total * s->fb, m, &got);
                s->total += got;
            }
        }
        if (st != GF_OK)
            return TU_FAIL("%s: %s at frame %zu: %s (%s)", s->label, tu_run_kind_name(rs->kind),
                           off, gf_strerror(st), gf_engine_error(s->e));
        off += used;
        if (tu_rng_below(&s->r, 3) == 0)
            bad = tu_recs_drain(s->recs, s->e, s->nbins);
    }
    return bad;
}

/* Flush, then take the rest of the output and of the records. */
static int hist_finish(hist_stream *s, size_t frames)
{
    gf_status st = gf_engine_flush(s->e);
    if (st != GF_OK)
        return TU_FAIL("%s: flush: %s (%s)", s->label, gf_strerror(st), gf_engine_error(s->e));
    if (tu_rng_below(&s->r, 2) == 0 && tu_recs_drain(s->recs, s->e, s->nbins))
        return 1; /* records taken before the output is pulled */
    for (;;) {
        const size_t m = hist_pick(&s->r, s->rs->b, s->rs->rnd, s->cap - s->total);
        size_t got = 0;
        if ((st = gf_engine_pull(s->e, s->dst + s->total * s->fb, m ? m : 1, &got)) != GF_OK)
            return TU_FAIL("%s: pull after flush: %s", s->label, gf_strerror(st));
        if (got == 0)
            break;
        s->total += got;
    }
    if (tu_recs_drain(s->recs, s->e, s->nbins))
        return 1;
    if (s->total != frames)
        return TU_FAIL("%s: %zu frames in, %zu out", s->label, frames, s->total);
    return 0;
}

int tu_run_hist(const char *label, const gf_config *cfg0, const void *in, size_t frames,
                const tu_run_spec *rs, tu_recs *recs, void *out)
{
    gf_config cfg = *cfg0;
    cfg.chunk_frames = rs->chunk == SIZE_MAX ? (frames ? frames : 1) : rs->chunk;
    cfg.threads = rs->threads;
    hist_stream s = {label, rs, NULL, recs, in, NULL, 0, 0, cfg.hist->bins, 0, {rs->seed}};
    s.fb = (size_t)cfg.channels * tu_sample_size(cfg.precision);
    if (tu_create(label, &cfg, &s.e))
        return 1;
    s.cap = frames + gf_engine_max_pending(s.e) + 64;
    s.dst = rs->pinned ? gf_host_alloc(s.cap * s.fb) : malloc(s.cap * s.fb);
    unsigned char *pin = rs->pinned ? gf_host_alloc(frames * s.fb + 1) : NULL;
    if (pin) {
        memcpy(pin, in, frames * s.fb);
        s.src = pin;
    }
    int bad = 0;
    if (!s.dst || (rs->pinned && !pin))
        bad = TU_FAIL("%s: out of memory", label);
    if (!bad)
        bad = hist_feed(&s, frames);
    if (!bad)
        bad = hist_finish(&s, frames);
    if (!bad && out)
        memcpy(out, s.dst, frames * s.fb);
    /* Nothing more once drained. */
    gf_hist_record extra;
    if (!bad && gf_engine_hist_next(s.e, &extra) != GF_NO_RECORD)
        bad = TU_FAIL("%s: a record after the stream was drained", label);
    gf_engine_destroy(s.e);
    if (rs->pinned) {
        gf_host_free(s.dst);
        gf_host_free(pin);
    } else
        free(s.dst);
    return bad;
}

void tu_fill_hist_signal(void *x, size_t n, size_t ss, uint64_t seed, double lo, double hi)
{
    tu_fill_signal(x, n, ss, seed);
    tu_rng r = {seed ^ 0xabcdefu};
    const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 5000.0, lo, hi, -1e-300};
    for (size_t k = 0; k < n / 50 + 1; k++) {
        const size_t i = tu_rng_below(&r, n);
        const double v = sp[tu_rng_below(&r, sizeof sp / sizeof sp[0])];
        if (ss == 4)
            ((float *)x)[i] = (float)v;
        else
            ((double *)x)[i] = v;
    }
}
