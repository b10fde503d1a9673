/*
 * A PortAudio session: Pa_Initialize, surviving an aborting backend.
 *
 * Pa_Initialize first runs in a forked child, because PortAudio 19.6's ALSA
 * backend aborts (an assertion in BuildDeviceList, PortAudio issue #294)
 * where no ALSA configuration is installed, and an abort cannot be caught
 * in-process. Where it aborts, a stand-in ALSA configuration (one default
 * PCM that never opens) lets ALSA list no devices so JACK stays usable,
 * with a warning. ALSA's and JACK's device-probing chatter is silenced
 * (GPUFILT_AUDIO_DEBUG=1 keeps it). Call before the process starts any
 * thread.
 */
#ifndef GF_PA_SESSION_H
#define GF_PA_SESSION_H

#include "cli.h"

typedef struct gf_pa_session {
    int initialised;
    char stand_in[256]; /* path of the stand-in ALSA configuration, or "" */
} gf_pa_session;

/* Initialise PortAudio. Returns 0, or GF_EXIT_DEVICE after a one-line error. */
int gf_pa_begin(gf_pa_session *pa);
/* Terminate PortAudio and remove the stand-in; safe on a zeroed session. */
void gf_pa_end(gf_pa_session *pa);

#endif /* GF_PA_SESSION_H */
