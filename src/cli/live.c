/* Placeholder while live audio is being written. */
#include "live.h"

int gf_live_list_devices(void)
{
    gf_cli_error("--list-devices: not implemented");
    return GF_EXIT_INTERNAL;
}

int gf_live_run(const gf_cli_options *o, const double *taps, size_t ntaps,
                volatile sig_atomic_t *stop)
{
    (void)o;
    (void)taps;
    (void)ntaps;
    (void)stop;
    gf_cli_error("--live: not implemented");
    return GF_EXIT_INTERNAL;
}
