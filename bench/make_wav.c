/*
 * bench_makewav: writes a deterministic test signal, a tone per channel
 * plus uniform noise, as WAV (RF64 past 4 GiB) of the given length, rate,
 * channels and sample format. Same arguments, same bytes, on any machine:
 * samples are quantised here (round to nearest, ties away from zero, then
 * clamped) and written with sf_writef_int, so libsndfile's own float
 * conversion plays no part (for float files they are written as float).
 *
 * usage: bench_makewav OUT [--seconds S] [--rate R] [--channels C]
 *                          [--bits 16|24|32|float] [--seed N]
 * Defaults: 600 s, 48000 Hz, 2 channels, 16 bits (the CLI benchmark's file).
 * Exit status: 0 written, 1 an I/O error, 2 bad usage.
 */
#include <sndfile.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_FRAMES    65536
#define TONE_AMPLITUDE  0.5
#define NOISE_AMPLITUDE 0.1

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_makewav OUT [--seconds S] [--rate R] [--channels C]\n"
               "                         [--bits 16|24|32|float] [--seed N]\n"
               "defaults: 600 s, 48000 Hz, 2 channels, 16-bit PCM, seed 1\n");
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    const long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "bench_makewav: %s needs an integer in %ld..%ld\n", opt, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

/* xorshift64*: the noise, one generator per channel. */
static double noise(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    const uint64_t v = *s * 0x2545F4914F6CDD1Dull;
    return (double)(v >> 11) * 0x1.0p-52 - 1.0; /* [-1, 1) */
}

/* What to write. */
typedef struct wav_args {
    const char *path;
    long seconds, rate, channels, seed;
    int format; /* SF_FORMAT_PCM_16, _24, _32 or _FLOAT */
} wav_args;

static int parse_bits(const char *v, int *format)
{
    if (v && !strcmp(v, "16"))
        *format = SF_FORMAT_PCM_16;
    else if (v && !strcmp(v, "24"))
        *format = SF_FORMAT_PCM_24;
    else if (v && !strcmp(v, "32"))
        *format = SF_FORMAT_PCM_32;
    else if (v && !strcmp(v, "float"))
        *format = SF_FORMAT_FLOAT;
    else {
        fprintf(stderr, "bench_makewav: --bits takes 16, 24, 32 or float\n");
        return 0;
    }
    return 1;
}

/* Returns -1 to go on, else the exit status (after --help or a message). */
static int parse_args(int argc, char **argv, wav_args *w)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--seconds"))
            ok = parse_long(a, v, 1, 86400, &w->seconds), i++;
        else if (!strcmp(a, "--rate"))
            ok = parse_long(a, v, 1, 1000000, &w->rate), i++;
        else if (!strcmp(a, "--channels"))
            ok = parse_long(a, v, 1, 1024, &w->channels), i++;
        else if (!strcmp(a, "--seed"))
            ok = parse_long(a, v, 0, 1000000000, &w->seed), i++;
        else if (!strcmp(a, "--bits"))
            ok = parse_bits(v, &w->format), i++;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!w->path && a[0] != '-')
            w->path = a;
        else {
            fprintf(stderr, "bench_makewav: unexpected argument '%s'\n", a);
            ok = 0;
        }
        if (!ok) {
            usage(stderr);
            return 2;
        }
    }
    if (!w->path) {
        usage(stderr);
        return 2;
    }
    return -1;
}

static int format_bits(int format)
{
    return format == SF_FORMAT_PCM_16 ? 16 : format == SF_FORMAT_PCM_24 ? 24 : 32;
}

/* v at full scale of a 32-bit int, rounded and clamped to `bits` bits
 * first; libsndfile keeps the top bits. */
static int quantise(double v, int bits)
{
    const double scale = ldexp(1.0, bits - 1);
    double q = round(v * scale);
    if (q > scale - 1)
        q = scale - 1;
    if (q < -scale)
        q = -scale;
    return (int)((int64_t)q * ((int64_t)1 << (32 - bits)));
}

/* Frames f0 .. f0+nf-1 of the signal into ibuf (PCM) or fbuf (float). */
static void make_block(const wav_args *w, sf_count_t f0, sf_count_t nf, uint64_t *state, int *ibuf,
                       float *fbuf)
{
    const double two_pi = 6.283185307179586;
    const long channels = w->channels, rate = w->rate;
    for (sf_count_t j = 0; j < nf; j++) {
        const sf_count_t t = f0 + j;
        for (long c = 0; c < channels; c++) {
            /* 440 Hz, 660 Hz, ...: a different tone per channel. The
             * phase is reduced exactly first so sin sees a small argument. */
            const long hz = 440 + 220 * (c % 16);
            const double ph = (double)((t * hz) % rate) / (double)rate;
            const double v = TONE_AMPLITUDE * sin(two_pi * ph) + NOISE_AMPLITUDE * noise(&state[c]);
            const size_t k = (size_t)j * (size_t)channels + (size_t)c;
            if (w->format == SF_FORMAT_FLOAT)
                fbuf[k] = (float)v;
            else
                ibuf[k] = quantise(v, format_bits(w->format));
        }
    }
}

/* Create the file: WAV, or RF64 where the data would pass 4 GiB. Returns
 * NULL after a message, with the exit status in *rc. */
static SNDFILE *create_wav(const wav_args *w, sf_count_t frames, int *rc)
{
    const int bytes_per_sample = format_bits(w->format) / 8;
    const double data_bytes = (double)frames * (double)w->channels * bytes_per_sample;
    SF_INFO info;
    memset(&info, 0, sizeof info);
    info.samplerate = (int)w->rate;
    info.channels = (int)w->channels;
    info.format = (data_bytes >= 4294967295.0 - 1024 ? SF_FORMAT_RF64 : SF_FORMAT_WAV) | w->format;
    if (!sf_format_check(&info)) {
        fprintf(stderr, "bench_makewav: libsndfile refuses this format\n");
        *rc = 2;
        return NULL;
    }
    SNDFILE *f = sf_open(w->path, SFM_WRITE, &info);
    if (!f) {
        fprintf(stderr, "bench_makewav: cannot create %s: %s\n", w->path, sf_strerror(NULL));
        *rc = 1;
    }
    return f;
}

/* The whole signal into f, block by block. Returns 0 or 1 (after a
 * message). */
static int write_signal(SNDFILE *f, const wav_args *w, sf_count_t frames)
{
    const size_t n = (size_t)BLOCK_FRAMES * (size_t)w->channels;
    int *ibuf = malloc(n * sizeof *ibuf);
    float *fbuf = malloc(n * sizeof *fbuf);
    uint64_t *state = malloc((size_t)w->channels * sizeof *state);
    int rc = 0;
    if (!ibuf || !fbuf || !state) {
        fprintf(stderr, "bench_makewav: out of memory\n");
        rc = 1;
    } else {
        for (long c = 0; c < w->channels; c++)
            state[c] = 0x9E3779B97F4A7C15ull * (uint64_t)(w->seed * 1024 + c + 1);
    }
    for (sf_count_t f0 = 0; f0 < frames && rc == 0; f0 += BLOCK_FRAMES) {
        const sf_count_t nf = frames - f0 < BLOCK_FRAMES ? frames - f0 : BLOCK_FRAMES;
        make_block(w, f0, nf, state, ibuf, fbuf);
        const sf_count_t got = w->format == SF_FORMAT_FLOAT ? sf_writef_float(f, fbuf, nf)
                                                            : sf_writef_int(f, ibuf, nf);
        if (got != nf) {
            fprintf(stderr, "bench_makewav: error writing %s: %s\n", w->path, sf_strerror(f));
            rc = 1;
        }
    }
    free(ibuf);
    free(fbuf);
    free(state);
    return rc;
}

int main(int argc, char **argv)
{
    wav_args w = {NULL, 600, 48000, 2, 1, SF_FORMAT_PCM_16};
    const int done = parse_args(argc, argv, &w);
    if (done >= 0)
        return done;
    const sf_count_t frames = (sf_count_t)w.seconds * w.rate;
    int rc = 0;
    SNDFILE *f = create_wav(&w, frames, &rc);
    if (!f)
        return rc;
    rc = write_signal(f, &w, frames);
    if (sf_close(f) != 0 && rc == 0) {
        fprintf(stderr, "bench_makewav: error closing %s\n", w.path);
        rc = 1;
    }
    return rc;
}
