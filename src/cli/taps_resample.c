/*
 * An impulse response at another rate than the stream's, resampled once,
 * in double precision, by libsoxr at its very high quality (28 bits, 175
 * dB of alias rejection, linear phase): a resampler that is someone's
 * whole job, not one of ours.
 *
 * Gain. A sampled impulse response is h[n] = T h(nT): the continuous
 * response times the sample period, so that sum h[n] (the gain at DC) and
 * the gain at every frequency are the system's. Resampling keeps a
 * waveform's amplitude (as `sox -r R ... rate` does: a constant stays that
 * constant), so the resampled taps sum to out/in times the gain. They are
 * scaled by in/out here, so that the filter's gain at every frequency
 * below both Nyquist frequencies is the response's: a 44.1 kHz response
 * sounds as loud on 48 kHz input as on 44.1 kHz input.
 */
#include "cli.h"

#include <float.h>
#include <math.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>

int gf_taps_resample(gf_taps *t, int rate, gf_precision p, char *err, size_t n)
{
    const double in = t->rate, out = rate;
    /* Rounded to the nearest whole tap: the duration of the response. */
    const double len = floor((double)t->n * out / in + 0.5);
    if (len > (double)GF_MAX_FFT_TAPS) {
        snprintf(err, n,
                 "impulse response '%s' resampled from %d Hz to %d Hz would have %.0f taps: at "
                 "most %zu taps are supported",
                 t->source, t->rate, rate, len, GF_MAX_FFT_TAPS);
        return GF_EXIT_USAGE;
    }
    const size_t m = len < 1 ? 1 : (size_t)len, F = (size_t)t->filters;
    double *h = calloc(F * m, sizeof *h);
    if (!h) {
        snprintf(err, n, "out of memory");
        return GF_EXIT_INTERNAL;
    }
    const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT64_I, SOXR_FLOAT64_I);
    const soxr_quality_spec_t q = soxr_quality_spec(SOXR_VHQ, SOXR_LINEAR_PHASE);
    const soxr_runtime_spec_t rt = soxr_runtime_spec(1);
    for (size_t f = 0; f < F; f++) {
        size_t used = 0, made = 0;
        /* soxr_oneshot flushes the resampler: the output is the whole
         * resampled response, its filter's delay taken out, cut at m. */
        const soxr_error_t e = soxr_oneshot(in, out, 1, t->h + f * t->n, t->n, &used, h + f * m, m,
                                            &made, &io, &q, &rt);
        if (e) {
            snprintf(err, n, "resampling impulse response '%s' from %d Hz to %d Hz: %s", t->source,
                     t->rate, rate, e);
            free(h);
            return GF_EXIT_INTERNAL;
        }
    }
    for (size_t i = 0; i < F * m; i++) {
        h[i] *= in / out;
        if (!isfinite(h[i]) || (p == GF_PRECISION_F32 && isinf((float)h[i]))) {
            snprintf(err, n,
                     "impulse response '%s' resampled to %d Hz: tap %zu of channel %zu is beyond "
                     "the range of %s arithmetic",
                     t->source, rate, i % m + 1, i / m + 1, p == GF_PRECISION_F32 ? "f32" : "f64");
            free(h);
            return GF_EXIT_USAGE;
        }
    }
    free(t->h);
    t->h = h;
    t->resampled_from = t->rate;
    t->taps_from = t->n;
    t->n = m;
    t->rate = rate;
    return GF_EXIT_OK;
}
