/* Engines and histogram settings from the options, shared by files, pipes
 * and live audio. */
#include "cli.h"

static const char *device_name(gf_device d)
{
    return d == GF_DEVICE_CUDA  ? "cuda"
           : d == GF_DEVICE_CPU ? "cpu"
           : d == GF_DEVICE_REF ? "ref"
                                : "auto";
}

gf_config gf_cli_engine_config(const gf_cli_options *o, int channels, const double *taps,
                               size_t ntaps)
{
    gf_config c = gf_config_default();
    c.channels = channels;
    c.num_taps = ntaps;
    c.taps = taps;
    c.mode = o->mode;
    c.precision = o->precision;
    c.chunk_frames = o->chunk;
    c.device = o->device;
    c.threads = o->threads;
    return c;
}

int gf_cli_engine_create(const gf_config *c, gf_engine **e)
{
    char detail[256];
    gf_status st = gf_engine_create(c, e, detail, sizeof detail);
    if (st == GF_OK)
        return 0;
    if (st == GF_ERR_NO_DEVICE) {
        gf_cli_error("--device %s: %s", device_name(c->device), detail);
        return GF_EXIT_DEVICE;
    }
    gf_cli_error("cannot set up the %s filter: %s%s%s", device_name(c->device), gf_strerror(st),
                 *detail ? ": " : "", detail);
    return st == GF_ERR_INVALID_ARGUMENT ? GF_EXIT_USAGE
           : st == GF_ERR_NO_MEMORY      ? GF_EXIT_INTERNAL
                                         : GF_EXIT_DEVICE;
}

gf_hist_config gf_cli_hist_config(const gf_cli_options *o, int rate)
{
    return (gf_hist_config){
        .bins = o->hist_bins,
        .block_frames = o->hist_block ? o->hist_block
                        : rate > 0    ? (size_t)rate
                                      : 65536,
        .lo = o->hist_lo,
        .hi = o->hist_hi,
        .of_input = o->hist_of_input,
        .mix = o->hist_mix,
    };
}

int gf_cli_engine_failed(gf_engine *e, gf_status st)
{
    const char *detail = gf_engine_error(e);
    gf_cli_error("%s backend failed: %s%s%s", gf_engine_backend(e), gf_strerror(st),
                 *detail ? ": " : "", detail);
    return st == GF_ERR_NO_MEMORY ? GF_EXIT_INTERNAL : GF_EXIT_DEVICE;
}
