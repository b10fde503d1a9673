/*
 * PortAudio host APIs and devices (devices.c). Every lookup prints a
 * one-line error that lists what there is when it fails. PortAudio must be
 * initialised (pa_session.h).
 */
#ifndef GF_DEVICES_H
#define GF_DEVICES_H

#include "cli.h"

#include <portaudio.h>

/* The name of host API a, or "?". */
const char *gf_pa_api_name(int a);

/* The host API whose name contains `name` (case-insensitive; an exact name
 * wins). Returns 0, or GF_EXIT_DEVICE after an error listing the choices. */
int gf_pa_find_host_api(const char *name, int *out);

/* The input (input = 1) or output device: by index, by name substring
 * (case-insensitive; an exact name wins), or the default of the host API
 * (api < 0: any host API). Returns 0, or GF_EXIT_DEVICE after an error. */
int gf_pa_find_device(const char *spec, int input, int api, int *out);

/* Stream parameters for C float channels of device d, at its low latency. */
PaStreamParameters gf_pa_stream_params(int d, int channels, int input);

/* Whether one stream (duplex) or each half alone supports the format. */
int gf_pa_supported(int in, int out, int C, double rate, int duplex);

/* An error naming what the devices do support: rates (with C channels, or
 * with 1 when none works with C) and channel counts (at the default rate). */
void gf_pa_explain_unsupported(int in, int out, int C, double rate, int duplex);

/* Host APIs and devices (index, name, host API, channels, default rate) on
 * standard output. */
void gf_pa_print_devices(void);

#endif /* GF_DEVICES_H */
