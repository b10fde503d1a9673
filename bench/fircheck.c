/*
 * bench_fircheck: a benchmark's output against the exact FIR filter of its
 * input, so that no benchmark times a program that computes the wrong thing.
 *
 *   bench_fircheck IN OUT (--taps T | --coeffs FILE) [--mode same|causal]
 *                  [--raw-f32 CHANNELS] [--frames N] [--slack STEPS]
 *
 * IN and OUT: audio files (libsndfile), or with --raw-f32 headerless f32le
 * of CHANNELS channels. Taps as gpufilt takes them at its default precision
 * (f32): --taps T the mean filter 1.0f/T, --coeffs a file of one number a
 * line ('#' starts a comment), rounded to float. --taps 1 checks a copy.
 * Mode same (default; also SoX's fir): y[i] = sum_k h[k] x[i + (T-1)/2 - k];
 * causal: y[i] = sum_k h[k] x[i - k]; x outside the input is 0.
 *
 * Checked: OUT has as many frames and channels as IN; then at N frames
 * (default 20000: the first and last 100, the rest seeded; 0: every frame),
 * every channel, |out - exact| within
 *     half a step of OUT's integer PCM (0 for float)
 *   + STEPS steps (default 0; a peer's dither: SoX's is one step)
 *   + 2^-24 (T + 2 log2(2T) + 8) sum|h| max|x|
 * with the exact sum in long double, clipped to OUT's range for integer PCM
 * (gpufilt clips to [-1, 1 - step]). The last term bounds both gpufilt's
 * direct-form round-off (T terms) and its FFT method's (gpufilt.h:
 * eps (2 log2(2P) + K + 4) sum|h| max|x|, with P <= T and K <= T).
 *
 * Prints one line: frames checked, largest error as a fraction of what is
 * allowed. Exit 0 when every checked sample is within, 1 when one is not or
 * the shapes differ, 2 on bad usage or an unreadable file.
 */
#include <sndfile.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct audio {
    float *x; /* frames x channels */
    long frames;
    int channels;
    double step; /* one step of its integer PCM, 0 for float */
} audio;

static int pcm_bits(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
        return 8;
    case SF_FORMAT_PCM_16:
        return 16;
    case SF_FORMAT_PCM_24:
        return 24;
    case SF_FORMAT_PCM_32:
        return 32;
    default:
        return 0;
    }
}

static int load_sndfile(const char *path, audio *a)
{
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    if (!f) {
        fprintf(stderr, "bench_fircheck: %s: %s\n", path, sf_strerror(NULL));
        return -1;
    }
    const int bits = pcm_bits(info.format);
    a->frames = (long)info.frames;
    a->channels = info.channels;
    a->step = bits ? ldexp(1.0, 1 - bits) : 0.0;
    a->x = malloc((size_t)a->frames * (size_t)a->channels * sizeof(float) + 1);
    const int ok = a->x && sf_readf_float(f, a->x, info.frames) == info.frames;
    sf_close(f);
    if (!ok)
        fprintf(stderr, "bench_fircheck: %s: cannot read %ld frames\n", path, a->frames);
    return ok ? 0 : -1;
}

static int load_raw(const char *path, int channels, audio *a)
{
    FILE *f = fopen(path, "rb");
    long bytes = -1;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (bytes = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "bench_fircheck: cannot read %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    const size_t fb = (size_t)channels * sizeof(float);
    a->frames = (long)((size_t)bytes / fb);
    a->channels = channels;
    a->step = 0.0;
    a->x = malloc((size_t)bytes + 1);
    const int ok = a->x && (size_t)bytes % fb == 0 &&
                   fread(a->x, 1, (size_t)bytes, f) == (size_t)bytes; /* little-endian host */
    fclose(f);
    if (!ok)
        fprintf(stderr, "bench_fircheck: %s: not whole f32le frames of %d channels\n", path,
                channels);
    return ok ? 0 : -1;
}

static int load_coeffs(const char *path, float **h, long *T)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_fircheck: cannot read %s\n", path);
        return -1;
    }
    long n = 0, cap = 4096;
    float *v = malloc((size_t)cap * sizeof *v);
    char line[256];
    while (v && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#'), *end;
        if (hash)
            *hash = '\0';
        const double d = strtod(line, &end);
        if (end == line)
            continue; /* blank or comment */
        if (n == cap)
            v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        if (v)
            v[n++] = (float)d;
    }
    fclose(f);
    if (!v || n == 0) {
        fprintf(stderr, "bench_fircheck: no taps in %s\n", path);
        free(v);
        return -1;
    }
    *h = v;
    *T = n;
    return 0;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Frame number q of the n checked out of F (n == 0: every frame). */
static long frame_at(long q, long n, long F)
{
    if (n == 0 || n >= F)
        return q;
    if (q < 100)
        return q < F ? q : F - 1;
    if (q < 200)
        return F - 200 + q >= 0 ? F - 200 + q : 0;
    return (long)(mix64((uint64_t)q) % (uint64_t)F);
}

typedef struct opts {
    const char *in, *out, *coeffs;
    long taps, frames;
    int causal, raw_channels;
    double slack;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->frames = 20000;
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--taps") == 0 && v)
            o->taps = atol(argv[++i]);
        else if (strcmp(a, "--coeffs") == 0 && v)
            o->coeffs = argv[++i];
        else if (strcmp(a, "--mode") == 0 && v)
            o->causal = strcmp(argv[++i], "causal") == 0;
        else if (strcmp(a, "--raw-f32") == 0 && v)
            o->raw_channels = atoi(argv[++i]);
        else if (strcmp(a, "--frames") == 0 && v)
            o->frames = atol(argv[++i]);
        else if (strcmp(a, "--slack") == 0 && v)
            o->slack = atof(argv[++i]);
        else if (a[0] != '-' && pos < 2)
            *(pos++ ? &o->out : &o->in) = a;
        else
            return -1;
    }
    return pos == 2 && (o->taps > 0) != (o->coeffs != NULL) && o->frames >= 0 ? 0 : -1;
}

/* The largest error over the checked samples, as a fraction of what is
 * allowed (> 1: a sample outside). */
static double worst_error(const opts *o, const audio *in, const audio *out, const float *h, long T)
{
    double sum_h = 0, max_x = 0;
    for (long k = 0; k < T; k++)
        sum_h += fabs((double)h[k]);
    for (long i = 0; i < in->frames * in->channels; i++)
        max_x = fmax(max_x, fabs((double)in->x[i]));
    const double allowed = out->step * (0.5 + o->slack) +
                           0x1p-24 * ((double)T + 2 * log2(2.0 * (double)T) + 8) * sum_h * max_x;
    const double top = out->step > 0 ? 1.0 - out->step : INFINITY, bottom = -1.0;
    const long F = in->frames, C = in->channels, off = o->causal ? 0 : (T - 1) / 2;
    const long n = o->frames == 0 || o->frames > F ? F : o->frames;
    double worst = 0;
    for (long q = 0; q < n; q++) {
        const long i = frame_at(q, o->frames, F);
        for (long c = 0; c < C; c++) {
            long double e = 0;
            for (long k = 0; k < T; k++) {
                const long j = i + off - k;
                if (j >= 0 && j < F)
                    e += (long double)h[k] * (long double)in->x[j * C + c];
            }
            double want = (double)e;
            if (out->step > 0)
                want = want > top ? top : want < bottom ? bottom : want;
            const double err = fabs((double)out->x[i * C + c] - want);
            worst = fmax(worst, isnan(err) ? INFINITY : err / (allowed > 0 ? allowed : 1e-300));
        }
    }
    return worst;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_fircheck IN OUT (--taps T | --coeffs FILE) "
                        "[--mode same|causal] [--raw-f32 CHANNELS] [--frames N] [--slack STEPS]\n");
        return 2;
    }
    float *h = NULL;
    long T = o.taps;
    if (o.coeffs ? load_coeffs(o.coeffs, &h, &T) != 0 : !(h = malloc((size_t)T * sizeof *h)))
        return 2;
    if (!o.coeffs)
        for (long k = 0; k < T; k++)
            h[k] = 1.0f / (float)T;
    audio in = {0}, out = {0};
    const int rc_in =
        o.raw_channels ? load_raw(o.in, o.raw_channels, &in) : load_sndfile(o.in, &in);
    const int rc_out = rc_in            ? -1
                       : o.raw_channels ? load_raw(o.out, o.raw_channels, &out)
                                        : load_sndfile(o.out, &out);
    int rc = 2;
    if (rc_in == 0 && rc_out == 0) {
        if (in.frames != out.frames || in.channels != out.channels) {
            printf("bench_fircheck: %s: %ld frames x %d channels, want %ld x %d: WRONG\n", o.out,
                   out.frames, out.channels, in.frames, in.channels);
            rc = 1;
        } else {
            const double w = worst_error(&o, &in, &out, h, T);
            const long n = o.frames == 0 || o.frames > in.frames ? in.frames : o.frames;
            printf("bench_fircheck: %s: %ld of %ld frames x %d channels checked against the exact "
                   "%ld-tap filter: largest error %.3g of the allowed: %s\n",
                   o.out, n, in.frames, in.channels, T, w, w <= 1.0 ? "ok" : "WRONG");
            rc = w <= 1.0 ? 0 : 1;
        }
    }
    free(h);
    free(in.x);
    free(out.x);
    return rc;
}
