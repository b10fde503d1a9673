/* Host APIs and devices: lookup by index or name, formats, listing. */
#include "live/devices.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int equals_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* Append to a string buffer, truncating quietly. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
appendf(char *buf, size_t size, const char *fmt, ...)
{
    const size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

const char *gf_pa_api_name(int a)
{
    const PaHostApiInfo *h = Pa_GetHostApiInfo(a);
    return h ? h->name : "?";
}

int gf_pa_find_host_api(const char *name, int *out)
{
    const PaHostApiIndex n = Pa_GetHostApiCount();
    char list[512] = "", matches[512] = "";
    int found = 0;
    PaHostApiIndex exact = -1;
    for (PaHostApiIndex a = 0; a < n; a++) {
        const char *an = gf_pa_api_name(a);
        appendf(list, sizeof list, "%s'%s'", list[0] ? ", " : "", an);
        if (equals_ci(an, name))
            exact = a;
        if (contains_ci(an, name)) {
            appendf(matches, sizeof matches, "%s'%s'", matches[0] ? ", " : "", an);
            *out = a;
            found++;
        }
    }
    if (exact >= 0) {
        *out = exact;
        return 0;
    }
    if (found == 1)
        return 0;
    if (found > 1)
        gf_cli_error("--host-api '%s' is ambiguous: it matches %s", name, matches);
    else
        gf_cli_error("--host-api '%s': no such host API; PortAudio has %s%s", name,
                     list[0] ? list : "none",
                     contains_ci("jack", name) || contains_ci(name, "jack")
                         ? " (JACK is listed only while a JACK server runs)"
                         : "");
    return GF_EXIT_DEVICE;
}

static int dev_channels(const PaDeviceInfo *d, int input)
{
    return input ? d->maxInputChannels : d->maxOutputChannels;
}

/* The default device of the direction (in host API `api`, or PortAudio's). */
static int find_default(int input, int api, int *out)
{
    const char *dir = input ? "input" : "output";
    const PaDeviceIndex n = Pa_GetDeviceCount();
    PaDeviceIndex d = paNoDevice;
    if (api >= 0) {
        const PaHostApiInfo *h = Pa_GetHostApiInfo(api);
        d = h ? (input ? h->defaultInputDevice : h->defaultOutputDevice) : paNoDevice;
    } else {
        d = input ? Pa_GetDefaultInputDevice() : Pa_GetDefaultOutputDevice();
    }
    if (d == paNoDevice || d < 0) {
        if (api >= 0)
            gf_cli_error("no audio %s device in host API '%s' (see gpufilt --list-devices)", dir,
                         gf_pa_api_name(api));
        else
            gf_cli_error("no audio %s device found (PortAudio sees %d device%s; see gpufilt "
                         "--list-devices; with a JACK server, use --host-api JACK)",
                         dir, (int)(n > 0 ? n : 0), n == 1 ? "" : "s");
        return GF_EXIT_DEVICE;
    }
    *out = d;
    return 0;
}

int gf_pa_find_device(const char *spec, int input, int api, int *out)
{
    const char *dir = input ? "input" : "output";
    const char *opt = input ? "--in" : "--out";
    const PaDeviceIndex n = Pa_GetDeviceCount();
    if (!spec)
        return find_default(input, api, out);
    /* A whole number is an index. */
    char *end = NULL;
    const long idx = strtol(spec, &end, 10);
    if (*spec && end && *end == '\0') {
        const PaDeviceInfo *d = idx >= 0 && idx < n ? Pa_GetDeviceInfo((PaDeviceIndex)idx) : NULL;
        if (!d) {
            gf_cli_error("%s %s: no device with that index (PortAudio has %d; see gpufilt "
                         "--list-devices)",
                         opt, spec, (int)(n > 0 ? n : 0));
            return GF_EXIT_DEVICE;
        }
        if (dev_channels(d, input) < 1) {
            gf_cli_error("%s %s: '%s' has no %s channels", opt, spec, d->name, dir);
            return GF_EXIT_DEVICE;
        }
        if (api >= 0 && d->hostApi != api) {
            gf_cli_error("%s %s: '%s' belongs to host API '%s', not '%s'", opt, spec, d->name,
                         gf_pa_api_name(d->hostApi), gf_pa_api_name(api));
            return GF_EXIT_DEVICE;
        }
        *out = (PaDeviceIndex)idx;
        return 0;
    }
    char matches[1024] = "";
    int found = 0, exact_found = 0;
    PaDeviceIndex pick = paNoDevice, exact = paNoDevice;
    for (PaDeviceIndex i = 0; i < n; i++) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (!d || dev_channels(d, input) < 1 || (api >= 0 && d->hostApi != api))
            continue;
        if (equals_ci(d->name, spec)) {
            exact = i;
            exact_found++;
        }
        if (contains_ci(d->name, spec)) {
            appendf(matches, sizeof matches, "%s%d: '%s' (%s)", matches[0] ? ", " : "", (int)i,
                    d->name, gf_pa_api_name(d->hostApi));
            pick = i;
            found++;
        }
    }
    if (exact_found == 1) {
        *out = exact;
        return 0;
    }
    if (found == 1) {
        *out = pick;
        return 0;
    }
    if (found == 0)
        gf_cli_error("%s '%s': no %s device has that in its name%s%s (see gpufilt --list-devices)",
                     opt, spec, dir, api >= 0 ? " in host API " : "",
                     api >= 0 ? gf_pa_api_name(api) : "");
    else
        gf_cli_error("%s '%s' is ambiguous: %s; give more of the name or the index", opt, spec,
                     matches);
    return GF_EXIT_DEVICE;
}

static const double common_rates[] = {8000,  11025, 16000, 22050, 24000,  32000,
                                      44100, 48000, 88200, 96000, 176400, 192000};

PaStreamParameters gf_pa_stream_params(int d, int channels, int input)
{
    PaStreamParameters p;
    memset(&p, 0, sizeof p);
    const PaDeviceInfo *info = Pa_GetDeviceInfo(d);
    p.device = d;
    p.channelCount = channels;
    p.sampleFormat = paFloat32;
    p.suggestedLatency = input ? info->defaultLowInputLatency : info->defaultLowOutputLatency;
    p.hostApiSpecificStreamInfo = NULL;
    return p;
}

int gf_pa_supported(int in, int out, int C, double rate, int duplex)
{
    const PaStreamParameters pi = gf_pa_stream_params(in, C, 1),
                             po = gf_pa_stream_params(out, C, 0);
    if (duplex)
        return Pa_IsFormatSupported(&pi, &po, rate) == paFormatIsSupported;
    return Pa_IsFormatSupported(&pi, NULL, rate) == paFormatIsSupported &&
           Pa_IsFormatSupported(NULL, &po, rate) == paFormatIsSupported;
}

void gf_pa_explain_unsupported(int in, int out, int C, double rate, int duplex)
{
    const PaDeviceInfo *di = Pa_GetDeviceInfo(in), *dout = Pa_GetDeviceInfo(out);
    char rates[256] = "", chans[256] = "";
    int cr = C;
    for (int pass = 0; pass < 2 && !rates[0]; pass++) {
        cr = pass == 0 ? C : 1;
        for (size_t i = 0; i < sizeof common_rates / sizeof common_rates[0]; i++)
            if (gf_pa_supported(in, out, cr, common_rates[i], duplex))
                appendf(rates, sizeof rates, "%s%.0f", rates[0] ? ", " : "", common_rates[i]);
    }
    const double at = dout->defaultSampleRate;
    int maxc = di->maxInputChannels < dout->maxOutputChannels ? di->maxInputChannels
                                                              : dout->maxOutputChannels;
    if (maxc > 64)
        maxc = 64;
    int run_start = 0;
    for (int c = 1; c <= maxc + 1; c++) {
        const int ok = c <= maxc && gf_pa_supported(in, out, c, at, duplex);
        if (ok && !run_start)
            run_start = c;
        if (!ok && run_start) {
            if (run_start == c - 1)
                appendf(chans, sizeof chans, "%s%d", chans[0] ? ", " : "", run_start);
            else
                appendf(chans, sizeof chans, "%s%d-%d", chans[0] ? ", " : "", run_start, c - 1);
            run_start = 0;
        }
    }
    gf_cli_error("input '%s' / output '%s' (%s) do not support %d channel%s of float samples at "
                 "%.0f Hz; supported rates: %s%s; channels at %.0f Hz: %s (devices report "
                 "at most %d in, %d out)",
                 di->name, dout->name, gf_pa_api_name(dout->hostApi), C, C == 1 ? "" : "s", rate,
                 rates[0] ? rates : "none of 8000..192000", cr != C && rates[0] ? " (mono)" : "",
                 at, chans[0] ? chans : "none", di->maxInputChannels, dout->maxOutputChannels);
}

void gf_pa_print_devices(void)
{
    const PaHostApiIndex na = Pa_GetHostApiCount();
    const PaDeviceIndex nd = Pa_GetDeviceCount();
    printf("host APIs (--host-api NAME, any part of the name):\n");
    for (PaHostApiIndex a = 0; a < na; a++) {
        const PaHostApiInfo *h = Pa_GetHostApiInfo(a);
        printf("  %s: %d device%s", h->name, h->deviceCount, h->deviceCount == 1 ? "" : "s");
        if (h->defaultInputDevice >= 0 || h->defaultOutputDevice >= 0)
            printf(" (default input %d, output %d)", (int)h->defaultInputDevice,
                   (int)h->defaultOutputDevice);
        printf("\n");
    }
    printf("devices (--in / --out INDEX or any part of the name):\n");
    for (PaDeviceIndex i = 0; i < nd; i++) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (!d)
            continue;
        const int din = i == Pa_GetDefaultInputDevice(), dout = i == Pa_GetDefaultOutputDevice();
        printf("  %3d: %s [%s] in %d, out %d, default rate %.0f Hz%s\n", (int)i, d->name,
               gf_pa_api_name(d->hostApi), d->maxInputChannels, d->maxOutputChannels,
               d->defaultSampleRate,
               din && dout ? ", default input and output"
               : din       ? ", default input"
               : dout      ? ", default output"
                           : "");
    }
    if (nd <= 0)
        printf("  (none; a JACK server's ports appear here while it runs)\n");
    fflush(stdout);
}
