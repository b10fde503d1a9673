/* Command-line parsing: every option is validated here, once. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
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
            "       gpufilt --live (--taps N | --coeffs FILE) [live options]\n"
            "       gpufilt --list-devices\n"
            "\n"
            "Filter audio with an FIR filter on the GPU (or CPU), bit-exact.\n"
            "IN is any file libsndfile reads (WAV, AIFF, FLAC, Ogg, ...). OUT gets the same\n"
            "format and sample type unless its extension or --out-format says otherwise.\n"
            "Integer output is rounded and clipped; clipped samples are counted.\n"
            "IN or OUT '-' is standard input/output: raw samples with --raw/--out-raw, or a\n"
            "container (WAV/AU in; AU/FLAC out with --out-format). Writing '-' without\n"
            "either gives raw samples in the input's sample format. Streams are filtered\n"
            "as they arrive.\n"
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
            "\n",
            GF_MAX_TAPS);
    fprintf(f,
            "streams:\n"
            "      --raw FMT         IN is headerless samples: u8 s8 s16le s16be s24le s32le\n"
            "                        f32le f64le (also SoX's f32, s16, ...); needs --channels\n"
            "      --out-raw FMT     write OUT as headerless samples of FMT\n"
            "  -c, --channels N      channels of --raw input (or of --live)\n"
            "  -r, --rate HZ         sample rate of --raw input (needed to write a container)\n"
            "\n"
            "histograms (per block of the stream, computed while filtering):\n"
            "      --hist FILE       CSV, or JSON lines when FILE ends in .json\n"
            "      --hist-png FILE   heat map over time (log counts, clipping marked)\n"
            "      --hist-bins B     bins (default 256, up to %d)\n"
            "      --hist-block N    frames per block (default: one second at the rate,\n"
            "                        65536 when the rate is unknown)\n"
            "      --hist-range LO:HI  amplitude range (default -1:1)\n"
            "      --hist-of output|input   (default output)\n"
            "      --hist-channels each|mix (default each)\n"
            "\n"
            "live audio (PortAudio; causal mode):\n"
            "      --live            capture -> filter -> playback until Ctrl-C\n"
            "      --list-devices    host APIs and devices, with indexes\n"
            "      --in DEV, --out DEV  device by index or name substring\n"
            "      --host-api NAME   e.g. ALSA, JACK\n"
            "      --frames F        frames per audio buffer (default 256)\n"
            "      --duration S      stop after S seconds\n"
            "      --stats           print xrun counts every second\n"
            "\n",
            GF_CLI_MAX_HIST_BINS);
    fprintf(
        f,
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
        "  sox in.flac -t f32 - | gpufilt - - --raw f32le -c 2 --taps 5 | aplay -f FLOAT_LE -c 2\n"
        "  gpufilt in.wav out.wav --taps 63 --hist levels.csv --hist-png levels.png\n"
        "  gpufilt --live --taps 63 --host-api JACK\n"
        "\n"
        "exit codes:\n"
        "  0 success            1 internal error       2 usage error\n"
        "  3 input error        4 output error         5 device/backend error\n"
        "  6 verify mismatch    7 input ended inside a frame (trailing bytes dropped)\n"
        "  130 interrupted (SIGINT/SIGTERM)   141 output pipe closed by its reader\n"
        "On any failure no output file is left behind: output is written to a\n"
        "temporary file in the same directory and renamed only on success.\n");
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

static const struct {
    const char *name, *sox; /* FFmpeg's name, SoX's short type */
    gf_raw_format f;
} raw_formats[] = {
    {"u8", "u8", GF_RAW_U8},        {"s8", "s8", GF_RAW_S8},        {"s16le", "s16", GF_RAW_S16LE},
    {"s16be", NULL, GF_RAW_S16BE},  {"s24le", "s24", GF_RAW_S24LE}, {"s32le", "s32", GF_RAW_S32LE},
    {"f32le", "f32", GF_RAW_F32LE}, {"f64le", "f64", GF_RAW_F64LE},
};

const char *gf_raw_name(gf_raw_format f)
{
    for (size_t i = 0; i < sizeof raw_formats / sizeof raw_formats[0]; i++)
        if (raw_formats[i].f == f)
            return raw_formats[i].name;
    return "none";
}

/* FFmpeg's names, and SoX's short types (f32 = f32le, s16 = s16le, ...). */
static int parse_raw(const char *opt, const char *s, gf_raw_format *out)
{
    for (size_t i = 0; i < sizeof raw_formats / sizeof raw_formats[0]; i++)
        if (strcmp(s, raw_formats[i].name) == 0 ||
            (raw_formats[i].sox && strcmp(s, raw_formats[i].sox) == 0)) {
            *out = raw_formats[i].f;
            return 0;
        }
    gf_cli_error("%s: '%s' is not one of u8 s8 s16le s16be s24le s32le f32le f64le", opt, s);
    return -1;
}

/* LO:HI, two finite numbers. */
static int parse_range(const char *s, double *lo, double *hi)
{
    char *end = NULL;
    errno = 0;
    *lo = strtod(s, &end);
    if (end != s && *end == ':') {
        const char *h = end + 1;
        *hi = strtod(h, &end);
        if (end != h && *end == '\0' && errno != ERANGE && isfinite(*lo) && isfinite(*hi))
            return 0;
    }
    gf_cli_error("--hist-range: '%s' is not LO:HI with two finite numbers", s);
    return -1;
}

int gf_cli_parse(int argc, char **argv, gf_cli_options *o)
{
    enum {
        OPT_CHUNK = 256,
        OPT_THREADS,
        OPT_OUT_FORMAT,
        OPT_VERIFY,
        OPT_ALLOW_TRUNC,
        OPT_SYNC,
        OPT_RAW,
        OPT_OUT_RAW,
        OPT_HIST,
        OPT_HIST_PNG,
        OPT_HIST_BINS,
        OPT_HIST_BLOCK,
        OPT_HIST_RANGE,
        OPT_HIST_OF,
        OPT_HIST_CHANNELS,
        OPT_LIVE,
        OPT_LIST_DEVICES,
        OPT_IN_DEV,
        OPT_OUT_DEV,
        OPT_HOST_API,
        OPT_FRAMES,
        OPT_DURATION,
        OPT_STATS
    };
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
        {"raw", required_argument, NULL, OPT_RAW},
        {"out-raw", required_argument, NULL, OPT_OUT_RAW},
        {"channels", required_argument, NULL, 'c'},
        {"rate", required_argument, NULL, 'r'},
        {"hist", required_argument, NULL, OPT_HIST},
        {"hist-png", required_argument, NULL, OPT_HIST_PNG},
        {"hist-bins", required_argument, NULL, OPT_HIST_BINS},
        {"hist-block", required_argument, NULL, OPT_HIST_BLOCK},
        {"hist-range", required_argument, NULL, OPT_HIST_RANGE},
        {"hist-of", required_argument, NULL, OPT_HIST_OF},
        {"hist-channels", required_argument, NULL, OPT_HIST_CHANNELS},
        {"live", no_argument, NULL, OPT_LIVE},
        {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
        {"in", required_argument, NULL, OPT_IN_DEV},
        {"out", required_argument, NULL, OPT_OUT_DEV},
        {"host-api", required_argument, NULL, OPT_HOST_API},
        {"frames", required_argument, NULL, OPT_FRAMES},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"stats", no_argument, NULL, OPT_STATS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->mode = GF_MODE_SAME;
    o->precision = GF_PRECISION_F32;
    o->device = GF_DEVICE_AUTO;
    o->hist_bins = 256;
    o->hist_lo = -1.0;
    o->hist_hi = 1.0;
    opterr = 0; /* our own one-line messages */
    int c;
    size_t v;
    while ((c = getopt_long(argc, argv, ":t:k:m:p:d:c:r:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (parse_size("--taps", optarg, 1, GF_MAX_TAPS, &o->taps) != 0)
                return GF_EXIT_USAGE;
            break;
        case 'k':
            o->coeffs = optarg;
            break;
        case 'm':
            o->mode_given = 1;
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
        case OPT_RAW:
        case OPT_OUT_RAW:
            if (parse_raw(c == OPT_RAW ? "--raw" : "--out-raw", optarg,
                          c == OPT_RAW ? &o->raw : &o->out_raw) != 0)
                return GF_EXIT_USAGE;
            break;
        case 'c':
            if (parse_size("--channels", optarg, 1, GF_MAX_CHANNELS, &v) != 0)
                return GF_EXIT_USAGE;
            o->channels = (int)v;
            break;
        case 'r':
            if (parse_size("--rate", optarg, 1, 10000000, &v) != 0)
                return GF_EXIT_USAGE;
            o->rate = (int)v;
            break;
        case OPT_HIST:
            o->hist_path = optarg;
            break;
        case OPT_HIST_PNG:
            o->hist_png = optarg;
            break;
        case OPT_HIST_BINS:
            if (parse_size("--hist-bins", optarg, 1, GF_CLI_MAX_HIST_BINS, &o->hist_bins) != 0)
                return GF_EXIT_USAGE;
            break;
        case OPT_HIST_BLOCK:
            if (parse_size("--hist-block", optarg, 1, (size_t)1 << 28, &o->hist_block) != 0)
                return GF_EXIT_USAGE;
            break;
        case OPT_HIST_RANGE:
            if (parse_range(optarg, &o->hist_lo, &o->hist_hi) != 0)
                return GF_EXIT_USAGE;
            break;
        case OPT_HIST_OF:
            if (strcmp(optarg, "output") == 0 || strcmp(optarg, "input") == 0)
                o->hist_of_input = optarg[0] == 'i';
            else {
                gf_cli_error("--hist-of: '%s' is not one of output, input", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        case OPT_HIST_CHANNELS:
            if (strcmp(optarg, "each") == 0 || strcmp(optarg, "mix") == 0)
                o->hist_mix = optarg[0] == 'm';
            else {
                gf_cli_error("--hist-channels: '%s' is not one of each, mix", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        case OPT_LIVE:
            o->live = 1;
            break;
        case OPT_LIST_DEVICES:
            o->list_devices = 1;
            break;
        case OPT_IN_DEV:
            o->live_in = optarg;
            break;
        case OPT_OUT_DEV:
            o->live_out = optarg;
            break;
        case OPT_HOST_API:
            o->host_api = optarg;
            break;
        case OPT_FRAMES:
            if (parse_size("--frames", optarg, 1, 65536, &o->live_frames) != 0)
                return GF_EXIT_USAGE;
            break;
        case OPT_DURATION: {
            char *end = NULL;
            errno = 0;
            o->duration = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno == ERANGE || !(o->duration > 0) ||
                o->duration > 1e7) {
                gf_cli_error("--duration: '%s' is not a number of seconds in (0, 1e7]", optarg);
                return GF_EXIT_USAGE;
            }
            break;
        }
        case OPT_STATS:
            o->stats = 1;
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
    if (o->list_devices || o->live) {
        if (o->list_devices && o->live) {
            gf_cli_error("use either --live or --list-devices, not both");
            return GF_EXIT_USAGE;
        }
        if (npos > 0) {
            gf_cli_error("unexpected argument '%s' (--%s takes no IN or OUT)", argv[optind],
                         o->live ? "live" : "list-devices");
            return GF_EXIT_USAGE;
        }
        if (o->list_devices)
            return -1;
    } else if (npos != 2) {
        if (npos < 2)
            gf_cli_error("expected IN and OUT (files, or - for standard input/output; see "
                         "gpufilt --help)");
        else
            gf_cli_error("unexpected argument '%s' (expected only IN and OUT)", argv[optind + 2]);
        return GF_EXIT_USAGE;
    } else {
        o->in_path = argv[optind];
        o->out_path = argv[optind + 1];
    }
    if (o->taps && o->coeffs) {
        gf_cli_error("use either --taps or --coeffs, not both");
        return GF_EXIT_USAGE;
    }
    if (!o->taps && !o->coeffs) {
        gf_cli_error("one of --taps N or --coeffs FILE is required");
        return GF_EXIT_USAGE;
    }
    if (o->live) {
        if (o->mode_given && o->mode == GF_MODE_SAME) {
            gf_cli_error("--live filters causally: --mode same needs input from the future");
            return GF_EXIT_USAGE;
        }
        if (o->raw || o->out_raw) {
            gf_cli_error("--raw and --out-raw are for IN and OUT, not --live");
            return GF_EXIT_USAGE;
        }
    } else if (o->live_in || o->live_out || o->host_api || o->live_frames || o->duration > 0 ||
               o->stats) {
        gf_cli_error("--in, --out, --host-api, --frames, --duration and --stats need --live");
        return GF_EXIT_USAGE;
    }
    if (o->out_raw && o->out_format) {
        gf_cli_error("use either --out-raw or --out-format, not both");
        return GF_EXIT_USAGE;
    }
    if (o->raw && !o->channels) {
        gf_cli_error("--raw needs --channels (raw samples carry no channel count)");
        return GF_EXIT_USAGE;
    }
    if (!o->raw && !o->live && o->channels) {
        gf_cli_error("--channels is for --raw input or --live (a file's header says its own)");
        return GF_EXIT_USAGE;
    }
    if (o->hist_lo >= o->hist_hi) {
        gf_cli_error("--hist-range: LO must be below HI");
        return GF_EXIT_USAGE;
    }
    return -1;
}
