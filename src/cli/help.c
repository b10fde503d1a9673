/* The --help text: the short form of the README's usage. */
#include "cli.h"

#include <stdio.h>

static void help_filter(FILE *f)
{
    fprintf(f,
            "usage: gpufilt IN OUT FILTER [options]\n"
            "       gpufilt FILTER [options] --out-dir DIR IN... [--in-list FILE]\n"
            "       gpufilt --live FILTER [live options]\n"
            "       gpufilt FILTER --rate HZ (--design-out FILE | --response-png FILE)\n"
            "       gpufilt --list-devices\n"
            "FILTER: --taps N, --coeffs FILE or --ir FILE, and/or design options\n"
            "(--lowpass F, ...), cascaded\n"
            "\n"
            "Filter audio with an FIR filter on the GPU (or CPU): bit-exact in direct form,\n"
            "fast for long filters (impulse responses up to 2^22 taps) by FFT.\n"
            "IN is any file libsndfile reads (WAV, AIFF, FLAC, Ogg, ...). OUT gets the same\n"
            "format and sample type unless its extension or --out-format says otherwise.\n"
            "Integer output is dithered (below 24 bits: --dither), rounded and clipped;\n"
            "clipped samples are counted.\n"
            "IN or OUT '-' is standard input/output: raw samples with --raw/--out-raw, or a\n"
            "container (WAV/AU in; AU/FLAC out with --out-format). Writing '-' without\n"
            "either gives raw samples in the input's sample format. Streams are filtered\n"
            "as they arrive.\n"
            "\n"
            "filter:\n"
            "  -t, --taps N          mean filter of N taps (h[k] = 1/N), 1..%zu\n"
            "  -k, --coeffs FILE     taps from FILE: a number per line (a column per channel,\n"
            "                        or one for all, or a matrix), '#' comments\n"
            "      --ir FILE         taps from an impulse response (any audio file: a channel\n"
            "                        per channel, or one for all, or a matrix: C x O\n"
            "                        channels on C input channels make O outputs, channel\n"
            "                        i*O+o from input i into output o; true stereo is LL,\n"
            "                        LR, RL, RR; 2 channels on a mono input: mono to\n"
            "                        stereo)\n"
            "      --ir-rate R       resample (default): a response at another rate than IN\n"
            "                        is resampled (libsoxr, very high quality, its gain\n"
            "                        kept), with a notice; strict: refused\n"
            "  -m, --mode MODE       same (default): centred, output as long as input\n"
            "                        causal: y[i] = sum h[k] x[i-k], no look-ahead\n"
            "                        full: causal plus the T-1 frames of tail\n"
            "      --method M        auto (default: the cost model), direct (bit-exact, up\n"
            "                        to %d taps), fft (partitioned overlap-save) or nupc\n"
            "                        (non-uniform partitions: latency B; cpu, IN and OUT)\n"
            "      --partition P     FFT partition in frames, a power of two %zu..%zu\n"
            "                        (default: from the taps and device; --live: --frames;\n"
            "                        nupc: its first partition B, default 256)\n"
            "      --fft-wisdom FILE the cpu FFT's plans from FFTW wisdom FILE (faster;\n"
            "                        the same FILE gives the same bytes)\n"
            "      --make-fft-wisdom FILE  measure FFTW's plans (32 .. 262144 points, or\n"
            "                        2 x --partition) into FILE, once per machine\n"
            "  -p, --precision P     f32 (default) or f64 arithmetic\n"
            "\n"
            "execution:\n"
            "  -d, --device D        auto (default): cuda if a GPU is usable and the job is\n"
            "                        big enough to repay starting it (~0.3 s), else cpu;\n"
            "                        or cuda, cpu, ref (the serial reference)\n"
            "      --chunk FRAMES    frames per processing chunk (output never depends on it)\n"
            "      --threads N       cpu backend worker threads (default: all CPUs)\n"
            "      --gpus all|N[,M]  the GPUs to deal chunks to, same bytes as one (default:\n"
            "                        all for a direct-method file of over ~1 s of GPU work,\n"
            "                        else GPU 0); --list-devices lists them\n"
            "\n",
            GF_MAX_FFT_TAPS, GF_MAX_TAPS, GF_MIN_PARTITION, GF_MAX_PARTITION);
}

static void help_levels(FILE *f)
{
    fprintf(f, "levels (all but --normalize are folded into the taps in double, in this\n"
               "order: free, and --verify stays bit-exact):\n"
               "      --normalize-filter peak|dc|l1|l2   scale the filter to 0 dB: its\n"
               "                        largest gain, DC gain, sum |h| (never clips), or\n"
               "                        sqrt(sum h^2);"
               " per-channel filters share one factor\n"
               "                        (the largest filter's)\n"
               "      --mix WET         y = (1-WET) x + WET h*x, WET 0..1; the dry path at the\n"
               "                        mode's delay (tap 0; same mode: tap (T-1)/2)\n"
               "      --dry DB, --wet DB  the same with levels in dB (-inf: none; defaults:\n"
               "                        no dry, wet 0 dB)\n"
               "      --gain DB         a final gain in dB (e.g. -6 or -6dB)\n"
               "      --normalize LEVEL OUT's peak set to LEVEL dBFS (-1, -1dB, -1dBFS; <= 0)\n"
               "                        by a second pass over a temporary float file beside\n"
               "                        OUT; never clips. Files only (not OUT '-', --live)\n"
               "      --normalize-by peak|rms  what LEVEL sets (default peak; rms is lowered\n"
               "                        where the peak would clip)\n"
               "\n");
}

static void help_streams(FILE *f)
{
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
            "      --hist-bins B     bins (default 256, up to %zu)\n"
            "      --hist-block N    frames per block (default: one second at the rate,\n"
            "                        65536 when the rate is unknown)\n"
            "      --hist-range LO:HI  amplitude range (default -1:1)\n"
            "      --hist-of output|input   (default output)\n"
            "      --hist-channels each|mix (default each)\n"
            "      --hist-limit SIZE largest --hist FILE (default 1G; K/M/G/T, or none)\n"
            "\n"
            "live audio (PortAudio; causal mode):\n"
            "      --live            capture -> filter -> playback until Ctrl-C\n"
            "      --list-devices    host APIs and devices, with indexes\n"
            "      --in DEV, --out DEV  device by index or name substring\n"
            "      --host-api NAME   e.g. ALSA, JACK\n"
            "      --frames F        frames per audio buffer (default 256)\n"
            "      --duration S      stop after S seconds\n"
            "      --stats           print xrun counts every second\n"
            "      --control FILE    change the filter while playing: commands from FILE (a\n"
            "                        FIFO, or - for standard input), one a line: ir PATH,\n"
            "                        coeffs PATH, taps N, design options (lowpass 1000),\n"
            "                        gain DB, bypass on|off, reload; SIGHUP reloads too\n"
            "      --crossfade MS    fade to a new filter over MS ms, 0..10000 (default 20)\n"
            "      --latency block   one block of output priming instead of two (the worker\n"
            "                        then has one period per block)\n"
            "      --latency zero    nothing added: the first 2 x --frames taps filtered in\n"
            "                        the audio callback, the rest by the worker ahead\n"
            "\n",
            GF_HIST_MAX_BINS);
}

static void help_output(FILE *f)
{
    fprintf(
        f,
        "output:\n"
        "      --out-format F    MAJOR[:SUBTYPE], e.g. wav, flac:pcm_24, wav:float;\n"
        "                        subtypes: pcm_s8 pcm_u8 pcm_16 pcm_24 pcm_32 float double\n"
        "                        ulaw alaw vorbis opus\n"
        "      --dither D        for integer PCM OUT: tpdf (triangular, +-1 LSB), shaped\n"
        "                        (TPDF noise-shaped to high frequencies; 44.1/48 kHz) or\n"
        "                        none; default as SoX: tpdf below 24 bits, else none.\n"
        "                        Never on float OUT or a 1-tap unity copy\n"
        "      --seed N          the dither's noise (default 0): same seed, same bytes\n"
        "      --verify          also run the serial reference over the same stream,\n"
        "                        report max |error|, max ulp, both times and the speedup,\n"
        "                        and fail on any difference (FFT method: against the exact\n"
        "                        sum, within the stated bound)\n"
        "      --allow-truncated filter the frames a truncated input holds (a warning)\n"
        "                        instead of refusing it\n"
        "      --force           replace an OUT (or histogram file) that is read-only\n"
        "      --sync            flush the output to disk (fsync) before renaming it\n"
        "                        into place, so it survives a power loss\n"
        "  -q, --quiet           no progress bar or summary (errors still shown)\n"
        "      --json-summary F  the run as one JSON object in F ('-': standard output)\n"

        "  -h, --help            this text\n"
        "  -V, --version         version and compiled-in backends\n"
        "\n"
        "many files:\n"
        "      --out-dir DIR     filter each IN (and --in-list's) to DIR/its name, largest\n"
        "                        first; a file that fails is named and the rest go on\n"
        "      --in-list FILE    more inputs, one path per line ('#' comments)\n"
        "  -j, --jobs N          files at once on the CPU (default 1; on GPUs: one per GPU)\n"
        "      --skip-existing   leave outputs already in DIR alone (resume a batch)\n"
        "\n"
        "examples:\n"
        "  gpufilt in.wav out.wav --taps 5\n"
        "  gpufilt in.flac out.wav --coeffs lowpass.txt --precision f64 --verify\n"
        "  gpufilt in.wav out.flac --taps 31 --mode causal --device cpu\n"
        "  gpufilt dry.wav wet.wav --ir hall.wav --mode full      # convolution reverb\n"
        "  gpufilt dry.wav mix.wav --ir hall.wav --mode full --normalize-filter peak \\\n"
        "          --mix 0.3 --normalize -1dBFS                 # mixed, peak at -1 dBFS\n"
        "  sox in.flac -t f32 - | gpufilt - - --raw f32le -c 2 --taps 5 | aplay -f FLOAT_LE -c 2\n"
        "  gpufilt in.wav out.wav --taps 63 --hist levels.csv --hist-png levels.png\n"
        "  gpufilt --live --taps 63 --host-api JACK\n"
        "  gpufilt --live --ir room.wav --frames 128\n"
        "  gpufilt in.wav out.wav --highpass 20 --lowpass 18k --response-png resp.png\n"
        "\n"
        "exit codes:\n"
        "  0 success            1 internal error       2 usage error\n"
        "  3 input error        4 output error         5 device/backend error\n"
        "  6 verify mismatch    7 input ended inside a frame (trailing bytes dropped)\n"
        "  130 interrupted by a signal (INT, TERM, HUP, ...; with --live HUP reloads)\n"
        "  141 output pipe closed\n"
        "On any failure no output file is left behind: output is written to a\n"
        "temporary file in the same directory and renamed only on success.\n");
}

void gf_cli_help(FILE *f)
{
    help_filter(f);
    gf_design_cli_help(f);
    help_levels(f);
    help_streams(f);
    help_output(f);
}
