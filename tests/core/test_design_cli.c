/*
 * The command line's side of filter design (src/cli/design_cli.c,
 * response_png.c), without the option table:
 *   - option values and their rules (settings before the first design
 *     option apply to all, after one to it; given twice; both --transition
 *     and --design-taps; no rate), each error's exact message;
 *   - --eq files: separators, comments, extra columns; unsorted, empty,
 *     unreadable and malformed files with their line numbers;
 *   - the cascade: designs in order, with the mean filter and with
 *     per-channel taps, equal to gf_design's taps convolved;
 *   - --design-out: text read back exactly, a WAV of doubles read back
 *     exactly;
 *   - the mean filter of --taps (no taps array) written and drawn; a
 *     --response-png that cannot be made is a warning while filtering;
 *   - --response-png: the picture of a 1 kHz low-pass at 120 dB has its
 *     curve at 0 dB in the passband, nothing above the -120 dB target in
 *     the stopband, the target drawn there; a 40 dB design's curve does
 *     cross a 120 dB-high line (the check can fail); the file is a PNG.
 * Usage: test_design_cli WORK_DIR
 */
#include "cli.h"
#include "design/design_cli.h"
#include "design/response_png.h"
#include "test_util.h"

#include <sndfile.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_dir;
static char g_err[4096]; /* stderr, captured */

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

/* Between capture_begin and capture_end, stderr goes to a file, whose
 * text capture_end puts into g_err. */
static int g_saved_fd = -1;

static void capture_begin(void)
{
    char path[4096];
    path_in(path, sizeof path, "stderr.txt");
    fflush(stderr);
    g_saved_fd = dup(2);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (g_saved_fd < 0 || fd < 0 || dup2(fd, 2) < 0)
        abort();
    close(fd);
}

static const char *capture_end(void)
{
    fflush(stderr);
    dup2(g_saved_fd, 2);
    close(g_saved_fd);
    char path[4096];
    path_in(path, sizeof path, "stderr.txt");
    FILE *f = fopen(path, "r");
    const size_t got = f ? fread(g_err, 1, sizeof g_err - 1, f) : 0;
    g_err[got] = '\0';
    if (f)
        fclose(f);
    return g_err;
}

/* ---- option values ---- */

/* Parse (name, value) pairs, NULL-ended, into a fresh r until one fails;
 * its exit code (0: all parsed), the messages in g_err. */
static int parse_all(gf_design_request *r, const char *const *args)
{
    memset(r, 0, sizeof *r);
    int rc = 0;
    capture_begin();
    for (; !rc && args[0]; args += 2)
        rc = gf_design_cli_option(r, args[0], args[1]);
    capture_end();
    return rc;
}

#define E "gpufilt: error: "
static const struct {
    const char *args[12];
    const char *message;
} bad_options[] = {
    {{"lowpass", "0"}, E "--lowpass 0: frequencies must be above 0 Hz\n"},
    {{"highpass", "1k2"}, E "--highpass: '1k2' is not a frequency in Hz (e.g. 1000 or 1k)\n"},
    {{"bandpass", "300"},
     E "--bandpass: '300' is not F1:F2, two frequencies in Hz (e.g. 300:3400 or 1k:2k)\n"},
    {{"bandreject", "4k:1k"},
     E "--bandreject 4k:1k: the first frequency must be below the second\n"},
    {{"bandpass", "1k:-2"}, E "--bandpass 1k:-2: frequencies must be above 0 Hz\n"},
    {{"atten", "19"}, E "--atten: '19' is not an attenuation from 20 to 200 dB\n"},
    {{"atten", "200.5"}, E "--atten: '200.5' is not an attenuation from 20 to 200 dB\n"},
    {{"transition", "-3"}, E "--transition: '-3' is not a width in Hz above 0 (e.g. 100 or 1k)\n"},
    {{"design-taps", "4194305"},
     E "--design-taps: '4194305' is not a whole number in 1..4194304\n"},
    {{"design-taps", "-1"}, E "--design-taps: '-1' is not a whole number in 1..4194304\n"},
    {{"lowpass", "1k", "atten", "80", "atten", "90"}, E "--atten given twice for --lowpass 1k\n"},
    {{"transition", "5", "transition", "9"}, E "--transition given twice for every design\n"},
    {{"phase", "maximum"}, E "--phase: 'maximum' is not one of linear, minimum\n"},
    {{"phase", "linear", "phase", "minimum"}, E "--phase given twice\n"},
    {{"design-out", ""}, E "--design-out needs a file name\n"},
    {{"response-png", "a.png", "response-png", "b.png"}, E "--response-png given twice\n"},
};

static int test_options(void)
{
    int bad = 0;
    gf_design_request r;
    for (size_t i = 0; i < sizeof bad_options / sizeof bad_options[0]; i++) {
        const int rc = parse_all(&r, bad_options[i].args);
        bad += TU_CHECK(rc == GF_EXIT_USAGE && strcmp(g_err, bad_options[i].message) == 0,
                        "options %zu: exit %d, message\n  %s  wanted\n  %s", i, rc, g_err,
                        bad_options[i].message);
    }
    /* Settings before the first design option are everyone's; after one,
     * its own. */
    const char *const good[] = {"atten", "80",       "lowpass",     "18.5k", "transition",
                                "500",   "highpass", "20",          "eq",    "room.txt",
                                "phase", "minimum",  "design-taps", "301",   NULL};
    bad += TU_CHECK(parse_all(&r, good) == 0 && r.sections == 3 && r.atten == 80 &&
                        r.section[0].band == GF_BAND_LOWPASS && r.section[0].f1 == 18500 &&
                        r.section[0].transition == 500 && r.section[1].f1 == 20 &&
                        r.section[1].transition == 0 && r.section[2].band == GF_BAND_EQ &&
                        strcmp(r.section[2].eq_path, "room.txt") == 0 && r.section[2].taps == 301 &&
                        r.phase == GF_PHASE_MINIMUM &&
                        strcmp(r.section[0].label, "--lowpass 18.5k") == 0,
                    "good options: %s", g_err);
    const char *many[2 * GF_DESIGN_MAX_SECTIONS + 3];
    for (int i = 0; i <= GF_DESIGN_MAX_SECTIONS; i++) {
        many[2 * i] = "lowpass";
        many[2 * i + 1] = "1k";
    }
    many[2 * GF_DESIGN_MAX_SECTIONS + 2] = NULL;
    bad +=
        TU_CHECK(parse_all(&r, many) == GF_EXIT_USAGE &&
                     strcmp(g_err, E "--lowpass: at most 16 design options in one command\n") == 0,
                 "17 design options: %s", g_err);
    return bad;
}

/* gf_design_cli_check: its rules and messages. */
static int check_case(const char *const *args, int have_rate, int want, const char *message)
{
    gf_design_request r;
    if (parse_all(&r, args) != 0)
        return TU_FAIL("check case: parse: %s", g_err);
    capture_begin();
    const int rc =
        gf_design_cli_check(&r, have_rate, "give --rate (headerless input carries none)");
    capture_end();
    return TU_CHECK(rc == want && strcmp(g_err, message) == 0,
                    "check: exit %d (wanted %d), message\n  %s  wanted\n  %s", rc, want, g_err,
                    message);
}

static int test_check(void)
{
    static const char *const settings[] = {"atten", "100", NULL};
    static const char *const both[] = {"lowpass",     "1k",  "transition", "50",
                                       "design-taps", "101", NULL};
    static const char *const own[] = {"design-taps", "101",      "lowpass", "1k", "transition",
                                      "50",          "highpass", "20",      NULL};
    static const char *const lp[] = {"lowpass", "1k", NULL};
    static const char *const text[] = {"design-out", "t.txt", NULL};
    static const char *const wav[] = {"design-out", "t.WAV", NULL};
    return check_case(settings, 1, GF_EXIT_USAGE,
                      E "--atten, --transition, --design-taps and --phase shape a design: give "
                        "--lowpass, --highpass, --bandpass, --bandreject or --eq too\n") +
           check_case(both, 1, GF_EXIT_USAGE,
                      E "--lowpass 1k: give --transition or --design-taps, not both\n") +
           check_case(own, 1, 0, "") +
           check_case(lp, 0, GF_EXIT_USAGE,
                      E "--lowpass 1k needs the sample rate: give --rate (headerless input "
                        "carries none)\n") +
           check_case(text, 0, 0, "") +
           check_case(wav, 0, GF_EXIT_USAGE,
                      E "--design-out (a WAV file) needs the sample rate: give --rate (headerless "
                        "input carries none)\n");
}

/* ---- --eq files ---- */

static void write_file(const char *name, const char *text, char *path, size_t n)
{
    path_in(path, n, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* tmpl with its '@' replaced by path. */
static void expand(char *out, size_t n, const char *tmpl, const char *path)
{
    const char *at = strchr(tmpl, '@');
    snprintf(out, n, "%.*s%s%s", at ? (int)(at - tmpl) : (int)strlen(tmpl), tmpl, at ? path : "",
             at ? at + 1 : "");
}

/* A bad --eq file's text and its message, '@' standing for its path. */
static int eq_bad(const char *text, const char *message)
{
    char path[4096], want[8192];
    write_file("bad_eq.txt", text, path, sizeof path);
    expand(want, sizeof want, message, path);
    double *f = NULL, *g = NULL;
    size_t n = 9;
    capture_begin();
    const int rc = gf_design_cli_read_eq(path, &f, &g, &n);
    capture_end();
    return TU_CHECK(rc == GF_EXIT_USAGE && !f && !g && n == 0 && strcmp(g_err, want) == 0,
                    "EQ file %s: exit %d, message\n  %s  wanted\n  %s", text, rc, g_err, want);
}

static int test_eq_files(void)
{
    char path[4096];
    write_file("eq.txt",
               "# a curve\n* Freq(Hz) SPL(dB) Phase(degrees)\n0, -30\n20, -4.0, 12\n40;2.5\n\n"
               "63\t-6 # dip\n  1e3 60\n",
               path, sizeof path);
    double *f = NULL, *g = NULL;
    size_t n = 0;
    int bad = TU_CHECK(gf_design_cli_read_eq(path, &f, &g, &n) == 0 && n == 5 && f[0] == 0 &&
                           g[0] == -30 && f[1] == 20 && g[1] == -4 && f[2] == 40 && g[2] == 2.5 &&
                           f[3] == 63 && g[3] == -6 && f[4] == 1000 && g[4] == 60,
                       "EQ file: %zu points", n);
    free(f);
    free(g);
    bad += eq_bad("100 0\n50 3\n", E "@:2: frequency 50 Hz is not above the previous line's "
                                     "100 Hz: the curve must be sorted by frequency, each "
                                     "frequency once\n");
    bad += eq_bad("100 0\n100 3\n", E "@:2: frequency 100 Hz is not above the previous line's "
                                      "100 Hz: the curve must be sorted by frequency, each "
                                      "frequency once\n");
    bad += eq_bad("", E "EQ file '@' holds no points (lines of \"frequency gain_dB\")\n");
    bad += eq_bad("# only\n\n", E "EQ file '@' holds no points (lines of \"frequency gain_dB\")\n");
    bad += eq_bad("100 0\n200\n", E "@:2: expected a frequency (Hz) and a gain (dB)\n");
    bad += eq_bad("100 abc\n", E "@:1: 'abc' is not a number\n");
    bad += eq_bad("100 61\n", E "@:1: gain 61 dB is outside -200 .. 60 dB\n");
    bad += eq_bad("-5 0\n", E "@:1: frequency -5 Hz is below 0\n");
    path_in(path, sizeof path, "no_such_eq.txt");
    capture_begin();
    const int rc = gf_design_cli_read_eq(path, &f, &g, &n);
    capture_end();
    char want[8192];
    snprintf(want, sizeof want, E "cannot open EQ file '%s': No such file or directory\n", path);
    bad += TU_CHECK(rc == GF_EXIT_USAGE && strcmp(g_err, want) == 0, "missing EQ file: %s", g_err);
    capture_begin();
    const int rc2 = gf_design_cli_read_eq(g_dir, &f, &g, &n);
    capture_end();
    snprintf(want, sizeof want, E "cannot read EQ file '%s': Is a directory\n", g_dir);
    bad += TU_CHECK(rc2 == GF_EXIT_USAGE && strcmp(g_err, want) == 0, "EQ directory: %s", g_err);
    return bad;
}

/* ---- cascades ---- */

static void taps_free(gf_taps *t)
{
    free(t->h);
    t->h = NULL;
}

static void convolve_ld(const double *a, size_t na, const double *b, size_t nb, double *out)
{
    for (size_t k = 0; k < na + nb - 1; k++) {
        long double acc = 0;
        for (size_t i = k + 1 > nb ? k + 1 - nb : 0; i < na && i <= k; i++)
            acc += (long double)a[i] * b[k - i];
        out[k] = (double)acc;
    }
}

/* t's filter f against want[0..n), within 1e-13 of max|want|. */
static int same_taps(const char *what, const gf_taps *t, int f, const double *want, size_t n)
{
    if (t->n != n)
        return TU_FAIL("%s: %zu taps, wanted %zu", what, t->n, n);
    double err = 0, m = 0;
    for (size_t k = 0; k < n; k++) {
        err = fmax(err, fabs(t->h[(size_t)f * n + k] - want[k]));
        m = fmax(m, fabs(want[k]));
    }
    return TU_CHECK(err <= 1e-13 * m, "%s: differs by %.3g (max %.3g)", what, err, m);
}

static int apply_quiet(const gf_design_request *r, int rate, gf_taps *t)
{
    capture_begin();
    const int rc = gf_design_cli_apply(r, rate, t, 1, 0);
    capture_end();
    return rc;
}

static int test_cascade(void)
{
    static const char *const args[] = {"atten", "60",         "lowpass", "2k", "highpass",
                                       "100",   "transition", "40",      NULL};
    gf_design_request r;
    parse_all(&r, args);
    const gf_design_spec lp = {.band = GF_BAND_LOWPASS, .rate = 16000, .f1 = 2000, .atten = 60};
    const gf_design_spec hp = {
        .band = GF_BAND_HIGHPASS, .rate = 16000, .f1 = 100, .atten = 60, .transition = 40};
    double *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (gf_design(&lp, &a, &na, NULL, NULL, 0) || gf_design(&hp, &b, &nb, NULL, NULL, 0))
        return TU_FAIL("cascade: designs");
    const size_t nd = na + nb - 1;
    double *d = malloc((nd + 8) * sizeof *d), *w = malloc((nd + 8) * sizeof *w);
    convolve_ld(a, na, b, nb, d);
    gf_taps t = {0};
    int bad = TU_CHECK(apply_quiet(&r, 16000, &t) == 0, "designs alone: %s", g_err);
    bad += same_taps("lowpass then highpass", &t, 0, d, nd);
    taps_free(&t);
    const double mean[5] = {0.2, 0.2, 0.2, 0.2, 0.2}, two[2][3] = {{1, 0, 0}, {0, 0.5, 0.5}};
    t = (gf_taps){.n = 5, .filters = 1};
    bad += TU_CHECK(apply_quiet(&r, 16000, &t) == 0, "with the mean filter: %s", g_err);
    convolve_ld(d, nd, mean, 5, w);
    bad += same_taps("with the mean filter of 5", &t, 0, w, nd + 4);
    taps_free(&t);
    t = (gf_taps){.h = malloc(6 * sizeof(double)), .n = 3, .filters = 2, .source = "two.txt"};
    memcpy(t.h, two, sizeof two);
    bad += TU_CHECK(apply_quiet(&r, 16000, &t) == 0 && t.filters == 2, "per channel: %s", g_err);
    for (int c = 0; c < 2; c++) {
        convolve_ld(d, nd, two[c], 3, w);
        bad += same_taps(c ? "channel 2" : "channel 1", &t, c, w, nd + 2);
    }
    taps_free(&t);
    free(a);
    free(b);
    free(d);
    free(w);
    return bad;
}

/* A design whose cascade would pass the limit. */
static int test_cascade_limit(void)
{
    static const char *const args[] = {"lowpass", "1k", NULL};
    gf_design_request r;
    parse_all(&r, args);
    gf_taps t = {.h = calloc(GF_MAX_FFT_TAPS - 100, sizeof(double)),
                 .n = GF_MAX_FFT_TAPS - 100,
                 .filters = 1,
                 .source = "big.txt"};
    if (!t.h)
        return TU_FAIL("out of memory");
    t.h[0] = 1;
    const int rc = apply_quiet(&r, 48000, &t);
    const char *want = E "--lowpass 1k (3805 taps) cascaded with big.txt (4194204 taps) would have "
                         "4198008 taps, more than the 4194304 a filter may have\n";
    const int bad = TU_CHECK(rc == GF_EXIT_USAGE && strcmp(g_err, want) == 0,
                             "limit: exit %d, message\n  %s  wanted\n  %s", rc, g_err, want);
    taps_free(&t);
    return bad;
}

/* ---- --design-out ---- */

static int test_write(void)
{
    double h[2][7];
    tu_rng rng = {3};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 7; k++)
            h[c][k] = tu_rng_sym(&rng) * pow(10, -3 * k); /* down to 1e-18: all digits count */
    char txt[4096], wav[4096];
    path_in(txt, sizeof txt, "taps.txt");
    path_in(wav, sizeof wav, "taps.Wav");
    capture_begin();
    int rc = gf_design_cli_write_taps(txt, &h[0][0], 7, 2, 44100, "first line\nsecond line");
    rc += gf_design_cli_write_taps(wav, &h[0][0], 7, 2, 44100, "ignored");
    capture_end();
    int bad = TU_CHECK(rc == 0, "write taps: %s", g_err);
    FILE *f = fopen(txt, "r");
    char line[256];
    bad += TU_CHECK(f && fgets(line, sizeof line, f) && strcmp(line, "# first line\n") == 0 &&
                        fgets(line, sizeof line, f) && strcmp(line, "# second line\n") == 0,
                    "text header");
    for (int k = 0; f && k < 7; k++) {
        double a = 0, b = 0;
        bad += TU_CHECK(fscanf(f, "%lf %lf", &a, &b) == 2 && a == h[0][k] && b == h[1][k],
                        "text row %d: %.17g %.17g, wrote %.17g %.17g", k, a, b, h[0][k], h[1][k]);
    }
    if (f)
        fclose(f);
    SF_INFO info = {0};
    SNDFILE *sf = sf_open(wav, SFM_READ, &info);
    double frames[14] = {0};
    bad += TU_CHECK(sf && info.channels == 2 && info.frames == 7 && info.samplerate == 44100 &&
                        (info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV &&
                        (info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_DOUBLE &&
                        sf_readf_double(sf, frames, 7) == 7,
                    "WAV: %d channels, %lld frames at %d Hz", info.channels, (long long)info.frames,
                    info.samplerate);
    for (int k = 0; k < 7; k++)
        bad += TU_CHECK(frames[2 * k] == h[0][k] && frames[2 * k + 1] == h[1][k],
                        "WAV frame %d differs", k);
    if (sf)
        sf_close(sf);
    char nodir[4096];
    path_in(nodir, sizeof nodir, "no/such/dir/taps.txt");
    capture_begin();
    rc = gf_design_cli_write_taps(nodir, &h[0][0], 7, 1, 44100, "x");
    capture_end();
    char want[8400], dir[4096];
    path_in(dir, sizeof dir, "no/such/dir");
    snprintf(want, sizeof want, E "cannot create design file '%s': directory '%s' does not exist\n",
             nodir, dir);
    return bad + TU_CHECK(rc == GF_EXIT_OUTPUT && strcmp(g_err, want) == 0,
                          "unwritable design file: exit %d, message\n  %s  wanted\n  %s", rc, g_err,
                          want);
}

/* ---- --response-png ---- */

static int is_rgb(const gf_response_image *img, int x, int y, const uint8_t *c)
{
    const uint8_t *p = img->px + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
    return p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
}

/* Pixels of colour c above (higher gain than) db, in the columns from f0
 * to f1 Hz of the magnitude plot. */
static int count_above(const gf_response_image *img, double f0, double f1, double db,
                       const uint8_t *c)
{
    int count = 0;
    for (int x = gf_response_x(img, f0); x <= gf_response_x(img, f1); x++)
        for (int y = img->mag_y; y < gf_response_y(img, db); y++)
            count += is_rgb(img, x, y, c);
    return count;
}

/* A picture of spec's design, its marks from info_of (which may claim
 * more than the design does: the negative check). */
static int render(const gf_design_spec *spec, const gf_design_spec *marks_of,
                  gf_response_image *img)
{
    double *h = NULL, *unused = NULL;
    size_t n = 0, m = 0;
    gf_design_info info, marks;
    if (gf_design(spec, &h, &n, &info, NULL, 0) ||
        gf_design(marks_of, &unused, &m, &marks, NULL, 0))
        return TU_FAIL("picture: design");
    const gf_response_section st = {marks_of, &marks, "--lowpass 1000"};
    const gf_response_plot p = {.h = h,
                                .n = n,
                                .filters = 1,
                                .rate = spec->rate,
                                .sections = &st,
                                .nsections = 1,
                                .title = "--lowpass 1000"};
    char err[256];
    const int rc = gf_response_render(&p, img, err, sizeof err);
    gf_design_free(h);
    gf_design_free(unused);
    return TU_CHECK(rc == 0, "render: %s", err);
}

static int test_picture(void)
{
    const gf_design_spec lp = {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000};
    gf_response_image img;
    if (render(&lp, &lp, &img))
        return 1;
    const uint8_t *curve = gf_response_curve_rgb, *target = gf_response_target_rgb;
    int at_0db = 0, dashes = 0;
    for (int dy = -1; dy <= 1; dy++)
        at_0db += is_rgb(&img, gf_response_x(&img, 100), gf_response_y(&img, 0) + dy, curve);
    for (int x = gf_response_x(&img, 1100); x <= gf_response_x(&img, 23000); x++)
        dashes += is_rgb(&img, x, gf_response_y(&img, -120), target);
    const int above = count_above(&img, 1060, 23900, -120, curve);
    int bad = TU_CHECK(at_0db > 0 && above == 0 && dashes > 100,
                       "picture: curve at 0 dB at 100 Hz %d, curve pixels above -120 dB in the "
                       "stopband %d, target pixels %d",
                       at_0db, above, dashes);
    bad += TU_CHECK(img.db_top == 10 && img.db_bot == -160 && img.f_lo == 10 && img.f_hi == 24000,
                    "picture axes: %g .. %g dB, %g .. %g Hz", img.db_bot, img.db_top, img.f_lo,
                    img.f_hi);
    gf_response_image_free(&img);
    /* A 40 dB design drawn against 120 dB marks crosses the target. */
    const gf_design_spec weak = {.band = GF_BAND_LOWPASS, .rate = 48000, .f1 = 1000, .atten = 40};
    if (render(&weak, &lp, &img))
        return bad + 1;
    const int crossing = count_above(&img, 1060, 23900, -120, curve);
    gf_response_image_free(&img);
    return bad +
           TU_CHECK(crossing > 1000, "a 40 dB design shows %d pixels above -120 dB", crossing);
}

/* --response-png through gf_design_cli_apply: a PNG of the picture's size. */
static int test_png_file(void)
{
    static const char *const args[] = {"bandpass", "300:3400", NULL};
    gf_design_request r;
    parse_all(&r, args);
    char png[4096];
    path_in(png, sizeof png, "bp.png");
    r.response_png = png;
    gf_taps t = {0};
    const int rc = apply_quiet(&r, 8000, &t);
    taps_free(&t);
    unsigned char head[24] = {0};
    FILE *f = fopen(png, "rb");
    const size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    const unsigned w =
        (unsigned)head[16] << 24 | (unsigned)head[17] << 16 | head[18] << 8 | head[19];
    return TU_CHECK(rc == 0 && got == 24 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0 && w == 1000,
                    "PNG file: exit %d (%s), %zu bytes read, width %u", rc, g_err, got, w);
}

/* The mean filter (t->h NULL) with --design-out and --response-png: 1/T
 * written, and a PNG of it; a picture that cannot be made while filtering
 * is a warning, without IN and OUT an error. */
static int test_mean(void)
{
    gf_design_request r;
    memset(&r, 0, sizeof r);
    char txt[4096], png[4096], bad_png[4096], dir[4096];
    path_in(txt, sizeof txt, "mean.txt");
    path_in(png, sizeof png, "mean.png");
    path_in(bad_png, sizeof bad_png, "no/mean.png");
    path_in(dir, sizeof dir, "no");
    r.design_out = txt;
    r.response_png = png;
    gf_taps t = {.n = 7, .filters = 1};
    int rc = apply_quiet(&r, 48000, &t);
    int bad = TU_CHECK(rc == 0 && !t.h, "mean filter: exit %d (%s)", rc, g_err);
    FILE *f = fopen(txt, "r");
    char line[256];
    int rows = 0;
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '#')
            bad += TU_CHECK(strcmp(line, "0.14285714285714285\n") == 0 && ++rows,
                            "mean filter: row '%s'", line);
    if (f)
        fclose(f);
    bad += TU_CHECK(rows == 7, "mean filter: %d rows, wanted 7", rows);
    unsigned char head[8] = {0};
    f = fopen(png, "rb");
    const size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    bad += TU_CHECK(got == 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0,
                    "mean filter: no PNG (%zu bytes)", got);
    r.design_out = NULL;
    r.response_png = bad_png;
    char want[8400];
    snprintf(want, sizeof want,
             "gpufilt: warning: cannot create response picture '%s': directory '%s' does not "
             "exist; filtering without it\n",
             bad_png, dir);
    capture_begin();
    rc = gf_design_cli_apply(&r, 48000, &t, 1, 1);
    capture_end();
    bad +=
        TU_CHECK(rc == 0 && strcmp(g_err, want) == 0,
                 "picture while filtering: exit %d, message\n  %s  wanted\n  %s", rc, g_err, want);
    snprintf(want, sizeof want,
             E "cannot create response picture '%s': directory '%s' does not exist\n", bad_png,
             dir);
    rc = apply_quiet(&r, 48000, &t);
    bad += TU_CHECK(rc == GF_EXIT_OUTPUT && strcmp(g_err, want) == 0,
                    "picture alone: exit %d, message\n  %s  wanted\n  %s", rc, g_err, want);
    taps_free(&t);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_design_cli WORK_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    static const tu_step steps[] = {test_options, test_check,    test_eq_files,
                                    test_cascade, test_write,    test_cascade_limit,
                                    test_picture, test_png_file, test_mean};
    return tu_run_steps("test_design_cli", "passed", steps, sizeof steps / sizeof steps[0]);
}
