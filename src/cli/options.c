/* Command-line parsing: every option is validated here, once. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gf_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpufilt: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void gf_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpufilt: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpufilt IN OUT (--taps N | --coeffs FILE) [options]\n"
            "\n"
            "Filter an audio file with an FIR filter on the GPU (or CPU), bit-exact.\n"
            "IN is any file libsndfile reads (WAV, AIFF, FLAC, Ogg, ...). OUT gets the same\n"
            "format and sample type unless its extension or --out-format says otherwise.\n"
            "Integer output is rounded and clipped; clipped samples are counted.\n"
            "\n"
            "filter:\n"
            "  -t, --taps N          mean filter of N taps (h[k] = 1/N), 1..%d\n"
            "  -k, --coeffs FILE     taps from FILE: one number per line, '#' comments\n"
            "  -m, --mode MODE       same (default): centred, output as long as input\n"
            "                        causal: y[i] = sum h[k] x[i-k], no look-ahead\n"
            "  -p, --precision P     f32 (default) or f64 arithmetic\n"
            "\n"
            "execution:\n"
            "  -d, --device D        auto (default): cuda if a GPU is usable and the job is\n"
            "                        big enough to repay starting it (~0.3 s), else cpu;\n"
            "                        or cuda, cpu, ref (the serial reference)\n"
            "      --chunk FRAMES    frames per processing chunk (output never depends on it)\n"
            "      --threads N       cpu backend worker threads (default: all CPUs)\n"
            "\n"
            "output:\n"
            "      --out-format F    MAJOR[:SUBTYPE], e.g. wav, flac:pcm_24, wav:float;\n"
            "                        subtypes: pcm_s8 pcm_u8 pcm_16 pcm_24 pcm_32 float double\n"
            "                        ulaw alaw vorbis opus\n"
            "      --verify          also run the serial reference over the same stream,\n"
            "                        report max |error|, max ulp, both times and the speedup,\n"
            "                        and fail on any difference\n"
            "      --allow-truncated filter the frames a truncated input holds (a warning)\n"
            "                        instead of refusing it\n"
            "      --sync            flush the output to disk (fsync) before renaming it\n"
            "                        into place, so it survives a power loss\n"
            "  -q, --quiet           no progress bar or summary (errors still shown)\n"
            "  -h, --help            this text\n"
            "  -V, --version         version and compiled-in backends\n"
            "\n"
            "examples:\n"
            "  gpufilt in.wav out.wav --taps 5\n"
            "  gpufilt in.flac out.wav --coeffs lowpass.txt --precision f64 --verify\n"
            "  gpufilt in.wav out.flac --taps 31 --mode causal --device cpu\n"
            "\n"
            "exit codes:\n"
            "  0 success            1 internal error       2 usage error\n"
            "  3 input error        4 output error         5 device/backend error\n"
            "  6 verify mismatch    130 interrupted (SIGINT/SIGTERM)\n"
            "On any failure no output file is left behind: output is written to a\n"
            "temporary file in the same directory and renamed only on success.\n",
            GF_MAX_TAPS);
}

/* A whole number in [lo, hi]; -1 with a message otherwise. */
static int parse_size(const char *opt, const char *s, size_t lo, size_t hi, size_t *out)
{
    char *end = NULL;
    errno = 0;
    if (*s == '-' || *s == '+' || *s == '\0') {
        if (*s == '-') {
            strtoll(s, &end, 10);
            if (end != s && *end == '\0') {
                gf_cli_error("%s: '%s' is out of range %zu..%zu", opt, s, lo, hi);
                return -1;
            }
        }
        gf_cli_error("%s: '%s' is not a whole number", opt, s);
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0') {
        gf_cli_error("%s: '%s' is not a whole number", opt, s);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        gf_cli_error("%s: '%s' is out of range %zu..%zu", opt, s, lo, hi);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

int gf_cli_parse(int argc, char **argv, gf_cli_options *o)
{
    enum { OPT_CHUNK = 256, OPT_THREADS, OPT_OUT_FORMAT, OPT_VERIFY, OPT_ALLOW_TRUNC, OPT_SYNC };
    static const struct option longopts[] = {
        {"taps", required_argument, NULL, 't'},
        {"coeffs", required_argument, NULL, 'k'},
        {"mode", required_argument, NULL, 'm'},
        {"precision", required_argument, NULL, 'p'},
        {"device", required_argument, NULL, 'd'},
        {"chunk", required_argument, NULL, OPT_CHUNK},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"out-format", required_argument, NULL, OPT_OUT_FORMAT},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"allow-truncated", no_argument, NULL, OPT_ALLOW_TRUNC},
        {"sync", no_argument, NULL, OPT_SYNC},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->mode = GF_MODE_SAME;
    o->precision = GF_PRECISION_F32;
    o->device = GF_DEVICE_AUTO;
    opterr = 0; /* our own one-line messages */
    int c;
    size_t v;
    while ((c = getopt_long(argc, argv, ":t:k:m:p:d:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (parse_size("--taps", optarg, 1, GF_MAX_TAPS, &o->taps) != 0)
                return GF_EXIT_USAGE;
            break;
        case 'k':
            o->coeffs = optarg;
            break;
        case 'm':
            if (strcmp(optarg, "same") == 0)
                o->mode = GF_MODE_SAME;
            else if (strcmp(optarg, "causal") == 0)
                o->mode = GF_MODE_CAUSAL;
            else {
                gf_cli_error("--mode: '%s' is not one of same, causal", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        case 'p':
            if (strcmp(optarg, "f32") == 0)
                o->precision = GF_PRECISION_F32;
            else if (strcmp(optarg, "f64") == 0)
                o->precision = GF_PRECISION_F64;
            else {
                gf_cli_error("--precision: '%s' is not one of f32, f64", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        case 'd':
            if (strcmp(optarg, "auto") == 0)
                o->device = GF_DEVICE_AUTO;
            else if (strcmp(optarg, "cpu") == 0)
                o->device = GF_DEVICE_CPU;
            else if (strcmp(optarg, "cuda") == 0)
                o->device = GF_DEVICE_CUDA;
            else if (strcmp(optarg, "ref") == 0)
                o->device = GF_DEVICE_REF;
            else {
                gf_cli_error("--device: '%s' is not one of auto, cpu, cuda, ref", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        case OPT_CHUNK:
            if (parse_size("--chunk", optarg, 1, (size_t)1 << 28, &o->chunk) != 0)
                return GF_EXIT_USAGE;
            break;
        case OPT_THREADS:
            if (parse_size("--threads", optarg, 1, 64, &v) != 0)
                return GF_EXIT_USAGE;
            o->threads = (int)v;
            break;
        case OPT_OUT_FORMAT:
            o->out_format = optarg;
            break;
        case OPT_VERIFY:
            o->verify = 1;
            break;
        case OPT_ALLOW_TRUNC:
            o->allow_truncated = 1;
            break;
        case OPT_SYNC:
            o->sync = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return GF_EXIT_OK;
        case 'V':
            printf("gpufilt %s, library %s\n", GPUFILT_VERSION, gf_version());
            return GF_EXIT_OK;
        case ':':
            gf_cli_error("option '%s' needs a value", argv[optind - 1]);
            return GF_EXIT_USAGE;
        default:
            gf_cli_error("unknown option '%s' (see gpufilt --help)", argv[optind - 1]);
            return GF_EXIT_USAGE;
        }
    }
    const int npos = argc - optind;
    if (npos != 2) {
        if (npos < 2)
            gf_cli_error("expected IN and OUT files (see gpufilt --help)");
        else
            gf_cli_error("unexpected argument '%s' (expected only IN and OUT)", argv[optind + 2]);
        return GF_EXIT_USAGE;
    }
    o->in_path = argv[optind];
    o->out_path = argv[optind + 1];
    if (o->taps && o->coeffs) {
        gf_cli_error("use either --taps or --coeffs, not both");
        return GF_EXIT_USAGE;
    }
    if (!o->taps && !o->coeffs) {
        gf_cli_error("one of --taps N or --coeffs FILE is required");
        return GF_EXIT_USAGE;
    }
    if (strcmp(o->in_path, "-") == 0 || strcmp(o->out_path, "-") == 0) {
        gf_cli_error("standard input/output ('-') is not supported yet: give file names");
        return GF_EXIT_USAGE;
    }
    return -1;
}
