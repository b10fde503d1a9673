/* Helpers shared by the core tests (see test_util.h). */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- golden vectors ---- */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Decode n little-endian samples of ss bytes into host floats/doubles. */
static void decode(void *dst, const unsigned char *src, size_t n, size_t ss)
{
    for (size_t i = 0; i < n; i++) {
        if (ss == 4) {
            uint32_t u = le32(src + 4 * i);
            memcpy((unsigned char *)dst + 4 * i, &u, 4);
        } else {
            uint64_t u = le64(src + 8 * i);
            memcpy((unsigned char *)dst + 8 * i, &u, 8);
        }
    }
}

static unsigned char *read_file(const char *path, size_t *size)
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

static int load_case(const char *dir, const char *file, const char *name, tu_golden *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    size_t size = 0;
    unsigned char *d = read_file(path, &size);
    if (!d)
        return TU_FAIL("golden: cannot read %s", path);
    int bad = 0;
    memset(g, 0, sizeof *g);
    snprintf(g->file, sizeof g->file, "%s", file);
    if (size < 64 || memcmp(d, "GFGOLD01", 8) != 0) {
        bad = TU_FAIL("golden: %s: not a GFGOLD01 file", path);
        goto done;
    }
    const uint32_t prec = le32(d + 8), mode = le32(d + 12), C = le32(d + 16), T = le32(d + 20),
                   N = le32(d + 24), kind = le32(d + 28);
    memcpy(g->name, d + 32, 32);
    g->name[32] = '\0';
    if (prec > 1 || mode > 1 || C < 1 || C > GF_MAX_CHANNELS || T < 1 || T > GF_MAX_TAPS ||
        kind > 1) {
        bad = TU_FAIL("golden: %s: bad header (precision %lu mode %lu channels %lu taps %lu "
                      "kind %lu)",
                      path, (unsigned long)prec, (unsigned long)mode, (unsigned long)C,
                      (unsigned long)T, (unsigned long)kind);
        goto done;
    }
    if (strcmp(g->name, name) != 0) {
        bad = TU_FAIL("golden: %s: header names case '%s', MANIFEST.txt '%s'", path, g->name, name);
        goto done;
    }
    g->precision = prec ? GF_PRECISION_F64 : GF_PRECISION_F32;
    g->mode = mode ? GF_MODE_CAUSAL : GF_MODE_SAME;
    g->channels = (int)C;
    g->num_taps = T;
    g->frames = N;
    g->mean = (int)kind;
    g->ss = tu_sample_size(g->precision);
    const size_t ns = (size_t)N * C;
    if (size != 64 + 8 * (size_t)T + 2 * ns * g->ss) {
        bad = TU_FAIL("golden: %s: %zu bytes, header says %zu", path, size,
                      64 + 8 * (size_t)T + 2 * ns * g->ss);
        goto done;
    }
    g->taps = malloc(T * sizeof(double));
    g->x = malloc(ns ? ns * g->ss : 1);
    g->y = malloc(ns ? ns * g->ss : 1);
    if (!g->taps || !g->x || !g->y) {
        bad = TU_FAIL("golden: out of memory");
        goto done;
    }
    decode(g->taps, d + 64, T, 8);
    decode(g->x, d + 64 + 8 * (size_t)T, ns, g->ss);
    decode(g->y, d + 64 + 8 * (size_t)T + ns * g->ss, ns, g->ss);
done:
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

size_t tu_golden_load(const char *dir, tu_golden **cases)
{
    *cases = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        TU_FAIL("golden: cannot open %s", path);
        return 0;
    }
    tu_golden *list = NULL;
    size_t n = 0, cap = 0;
    char line[512];
    int bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        char file[64], name[64];
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%63s %63s", file, name) != 2) {
            bad = TU_FAIL("golden: %s: bad line '%s'", path, line);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            tu_golden *nl = realloc(list, cap * sizeof *nl);
            if (!nl) {
                bad = TU_FAIL("golden: out of memory");
                break;
            }
            list = nl;
        }
        bad = load_case(dir, file, name, &list[n]);
        n++; /* a failed case still holds (freeable) buffers */
    }
    fclose(f);
    if (!bad && n == 0)
        bad = TU_FAIL("golden: %s lists no cases", path);
    if (bad) {
        tu_golden_free(list, n);
        return 0;
    }
    *cases = list;
    return n;
}

gf_config tu_golden_config(const tu_golden *g, gf_device dev, size_t chunk)
{
    gf_config c = gf_config_default();
    c.channels = g->channels;
    c.num_taps = g->num_taps;
    c.taps = g->mean ? NULL : g->taps;
    c.mode = g->mode;
    c.precision = g->precision;
    c.chunk_frames = chunk;
    c.device = dev;
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
        if ((st = gf_engine_pull(e, dst + total * fb, m, &got)) != GF_OK)
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
    const unsigned char one[64] = {0};
    if (fb <= sizeof one && (st = gf_engine_push(e, one, 1, &dummy)) != GF_ERR_STATE)
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
        if ((st = gf_engine_pull(e, dst + total * fb, m, &got)) != GF_OK)
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
    char detail[256];
    gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    if (st != GF_OK)
        return TU_FAIL("%s: create: %s (%s)", label, gf_strerror(st), detail);
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
    char detail[256];
    gf_status st = gf_engine_create(&cfg, &e, detail, sizeof detail);
    if (st != GF_OK)
        return TU_FAIL("%s: create: %s (%s)", g->name, gf_strerror(st), detail);
    double *got = malloc(g->num_taps * sizeof(double));
    int bad = 0;
    if (!got) {
        gf_engine_destroy(e);
        return TU_FAIL("out of memory");
    }
    gf_engine_taps(e, got);
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
    while (gf_engine_hist_next(e, &rec))
        if (tu_recs_add(l, &rec, nbins))
            return 1;
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

const char *tu_run_kind_name(tu_run_kind k)
{
    return k == TU_RUN_PUSHPULL ? "push/pull"
           : k == TU_RUN_SUBMIT ? "push/submit/wait/pull"
                                : "process";
}

int tu_run_hist(const char *label, const gf_config *cfg0, const void *in, size_t frames,
                const tu_run_spec *rs, tu_recs *recs, void *out)
{
    gf_config cfg = *cfg0;
    cfg.chunk_frames = rs->chunk == SIZE_MAX ? (frames ? frames : 1) : rs->chunk;
    cfg.threads = rs->threads;
    const size_t ss = tu_sample_size(cfg.precision), fb = (size_t)cfg.channels * ss;
    const size_t nbins = cfg.hist->bins;
    gf_engine *e = NULL;
    char detail[256];
    gf_status st = gf_engine_create(&cfg, &e, detail, sizeof detail);
    if (st != GF_OK)
        return TU_FAIL("%s: create: %s (%s)", label, gf_strerror(st), detail);
    const size_t cap = frames + gf_engine_max_pending(e) + 64;
    unsigned char *dst = rs->pinned ? gf_host_alloc(cap * fb) : malloc(cap * fb);
    unsigned char *pin = rs->pinned ? gf_host_alloc(frames * fb + 1) : NULL;
    const unsigned char *src = in;
    if (pin) {
        memcpy(pin, in, frames * fb);
        src = pin;
    }
    tu_rng r = {rs->seed};
    size_t off = 0, total = 0, got = 0;
    int bad = 0;
    if (!dst || (rs->pinned && !pin)) {
        bad = TU_FAIL("%s: out of memory", label);
        goto done;
    }
    while (off < frames && !bad) {
        size_t n = hist_pick(&r, rs->a, rs->rnd, frames - off), used = 0;
        if (rs->kind == TU_RUN_PROCESS) {
            st = gf_engine_process(e, src + off * fb, n, dst + total * fb, &got);
            used = n;
            total += got;
        } else {
            st = gf_engine_push(e, src + off * fb, n, &used);
            if (st == GF_OK && rs->kind == TU_RUN_SUBMIT) {
                st = gf_engine_submit(e);
                if (st == GF_OK)
                    st = gf_engine_wait(e);
            }
            if (st == GF_OK) {
                const size_t m = rs->kind == TU_RUN_SUBMIT
                                     ? cap - total
                                     : hist_pick(&r, rs->b, rs->rnd, cap - total);
                st = gf_engine_pull(e, dst + total * fb, m, &got);
                total += got;
            }
        }
        if (st != GF_OK) {
            bad = TU_FAIL("%s: %s at frame %zu: %s (%s)", label, tu_run_kind_name(rs->kind), off,
                          gf_strerror(st), gf_engine_error(e));
            break;
        }
        off += used;
        if (tu_rng_below(&r, 3) == 0)
            bad = tu_recs_drain(recs, e, nbins);
    }
    if (!bad && (st = gf_engine_flush(e)) != GF_OK)
        bad = TU_FAIL("%s: flush: %s (%s)", label, gf_strerror(st), gf_engine_error(e));
    if (!bad && tu_rng_below(&r, 2) == 0)
        bad = tu_recs_drain(recs, e, nbins); /* before the output is pulled */
    while (!bad) {
        const size_t m = hist_pick(&r, rs->b, rs->rnd, cap - total);
        if ((st = gf_engine_pull(e, dst + total * fb, m ? m : 1, &got)) != GF_OK) {
            bad = TU_FAIL("%s: pull after flush: %s", label, gf_strerror(st));
            break;
        }
        if (got == 0)
            break;
        total += got;
    }
    if (!bad)
        bad = tu_recs_drain(recs, e, nbins);
    if (!bad && total != frames)
        bad = TU_FAIL("%s: %zu frames in, %zu out", label, frames, total);
    if (!bad && out)
        memcpy(out, dst, frames * fb);
    /* Nothing more once drained. */
    gf_hist_record extra;
    if (!bad && gf_engine_hist_next(e, &extra))
        bad = TU_FAIL("%s: a record after the stream was drained", label);
done:
    gf_engine_destroy(e);
    if (rs->pinned) {
        gf_host_free(dst);
        gf_host_free(pin);
    } else
        free(dst);
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
