/*
 * The device policy (gf_cli_choose_device, cli.h) for a batch's worker on
 * a GPU (gf_cli_options.gpu_warm): a file whose method is direct on both
 * devices goes to the worker's GPU from 0.02 s of CPU work, where alone it
 * would need 0.6 s; an FFT file, whose bytes depend on the device, is
 * judged as alone. Without a usable GPU the answer is the CPU with "no
 * usable GPU", which only a GPU wanted reaches (alone, the same file says
 * it is too little to repay starting one); with one, the GPU and why.
 */
#include "cli.h"
#include "test_util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* The options of `gpufilt in.wav out.wav ARGS...`, parsed. */
static int options(gf_cli_options *o, const char *const *args, int nargs)
{
    char *argv[16] = {"gpufilt", "in.wav", "out.wav", "--taps", "5"};
    for (int i = 0; i < nargs; i++)
        argv[5 + i] = (char *)args[i];
    optind = 0; /* getopt_long starts afresh */
    return gf_cli_parse(5 + nargs, argv, o);
}

/* The policy's answer for `frames` frames of 2 channels at `taps` taps with
 * ARGS (4 threads), alone or in a GPU worker: device and why. */
static int decide(const char *label, int64_t frames, size_t taps, const char *method, int warm,
                  gf_device want, const char *why_want)
{
    const char *args[] = {"--threads", "4", "--method", method};
    gf_cli_options o;
    if (options(&o, args, 4) != 0)
        return TU_FAIL("%s: the options do not parse", label);
    o.gpu_warm = warm;
    const gf_job j = {.frames = frames, .channels = 2, .taps = taps};
    char why[160];
    gf_device handoff = GF_DEVICE_NONE;
    const gf_device d = gf_cli_choose_device(&o, &j, &handoff, why, sizeof why);
    return TU_CHECK(d == want && !strcmp(why, why_want) && handoff == GF_DEVICE_NONE,
                    "%s: %s (%s), expected %s (%s)", label, gf_device_name(d), why,
                    gf_device_name(want), why_want);
}

static int batch_worker(void)
{
    const int gpu = gf_cuda_available();
    int bad = 0;
    /* 150000 frames x 2 ch x 4095 taps on 4 threads: 0.154 s of CPU work */
    bad += decide("alone, direct", 150000, 4095, "direct", 0, GF_DEVICE_CPU,
                  "auto: about 0.154 s of work, too little to repay starting a GPU");
    bad += decide("GPU worker, direct", 150000, 4095, "direct", 1,
                  gpu ? GF_DEVICE_CUDA : GF_DEVICE_CPU,
                  gpu ? "auto: about 0.154 s of work on the CPU, for this batch's worker, whose "
                        "GPU is started"
                      : "auto: no usable GPU");
    /* 15000 frames: 0.0154 s, below 0.02 s */
    bad += decide("GPU worker, direct, smaller", 15000, 4095, "direct", 1, GF_DEVICE_CPU,
                  "auto: about 0.0154 s of work on the CPU, too little to repay even a started "
                  "GPU");
    /* the FFT method's bytes depend on the device: as alone */
    bad += decide("GPU worker, FFT", 150000, 20000, "fft", 1, GF_DEVICE_CPU,
                  "auto: about 0.00735 s of work, too little to repay starting a GPU");
    return bad;
}

int main(void)
{
    static const tu_step steps[] = {batch_worker};
    return tu_run_steps("test_policy", "the device policy of a batch's GPU worker", steps,
                        sizeof steps / sizeof steps[0]);
}
