/*
 * Embedding gpufilt: filter a generated stereo signal through the streaming
 * API in small, uneven blocks, as a host application's audio loop would.
 *
 *   embed_example [cpu|cuda|ref]
 *
 * Prints the RMS of the noisy input and of the filtered output per channel.
 */
#include "gpufilt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES   48000
#define CHANNELS 2

int main(int argc, char **argv)
{
    gf_config cfg = gf_config_default();
    cfg.channels = CHANNELS;
    cfg.num_taps = 31; /* taps == NULL: a 31-tap mean filter */
    cfg.mode = GF_MODE_SAME;
    cfg.precision = GF_PRECISION_F32;
    if (argc > 1)
        cfg.device = strcmp(argv[1], "cuda") == 0  ? GF_DEVICE_CUDA
                     : strcmp(argv[1], "ref") == 0 ? GF_DEVICE_REF
                                                   : GF_DEVICE_CPU;

    char detail[256];
    gf_engine *e = NULL;
    gf_status st = gf_engine_create(&cfg, &e, detail, sizeof detail);
    if (st != GF_OK) {
        fprintf(stderr, "embed_example: %s: %s\n", gf_strerror(st), detail);
        return 1;
    }

    float *in = malloc(sizeof(float) * FRAMES * CHANNELS);
    float *out = malloc(sizeof(float) * FRAMES * CHANNELS);
    if (!in || !out)
        return 1;
    unsigned seed = 1;
    for (int i = 0; i < FRAMES; i++)
        for (int c = 0; c < CHANNELS; c++) {
            seed = seed * 1103515245u + 12345u;
            const float noise = ((float)(seed >> 9) / 8388608.0f - 0.5f) * 0.4f;
            in[i * CHANNELS + c] =
                0.5f * sinf(2.0f * 3.14159265f * 220.0f * (float)i / 48000.0f) + noise;
        }

    /* Push in uneven blocks; pull whatever is ready after each push. */
    size_t pushed = 0, pulled = 0, block = 1;
    while (pushed < FRAMES) {
        size_t n = FRAMES - pushed < block ? FRAMES - pushed : block, used = 0, got = 0;
        if ((st = gf_engine_push(e, in + pushed * CHANNELS, n, &used)) != GF_OK)
            goto fail;
        pushed += used;
        if ((st = gf_engine_pull(e, out + pulled * CHANNELS, FRAMES - pulled, &got)) != GF_OK)
            goto fail;
        pulled += got;
        block = block * 3 % 1021 + 1;
    }
    if ((st = gf_engine_flush(e)) != GF_OK)
        goto fail;
    for (;;) {
        size_t got = 0;
        if ((st = gf_engine_pull(e, out + pulled * CHANNELS, FRAMES - pulled, &got)) != GF_OK)
            goto fail;
        if (got == 0)
            break;
        pulled += got;
    }

    printf("backend %s, %zu frames in, %zu frames out, latency %zu frames\n", gf_engine_backend(e),
           pushed, pulled, gf_engine_latency(e));
    for (int c = 0; c < CHANNELS; c++) {
        double si = 0, so = 0;
        for (int i = 0; i < FRAMES; i++) {
            si += (double)in[i * CHANNELS + c] * in[i * CHANNELS + c];
            so += (double)out[i * CHANNELS + c] * out[i * CHANNELS + c];
        }
        printf("channel %d: RMS in %.4f, out %.4f\n", c, sqrt(si / FRAMES), sqrt(so / FRAMES));
    }
    gf_engine_destroy(e);
    free(in);
    free(out);
    return pulled == FRAMES ? 0 : 1;

fail:
    fprintf(stderr, "embed_example: %s %s\n", gf_strerror(st), gf_engine_error(e));
    gf_engine_destroy(e);
    free(in);
    free(out);
    return 1;
}
