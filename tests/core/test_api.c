/*
 * The public API's edges: config validation and its detail strings, NULL
 * handling, status strings, latency, taps, exact special values through a
 * 1-tap filter, impulse responses, device selection without a GPU, the typed
 * device queries and host memory.
 */
#include "test_util.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gf_device cpu_devs[] = {GF_DEVICE_REF, GF_DEVICE_CPU};

/* Expect create to refuse cfg with GF_ERR_INVALID_ARGUMENT and a detail
 * containing every one of the (up to two) given substrings. */
static int expect_invalid(const char *what, const gf_config *cfg, const char *sub1,
                          const char *sub2)
{
    gf_engine *e = (gf_engine *)&e; /* must be overwritten with NULL */
    char detail[256];
    memset(detail, 'x', sizeof detail);
    gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    int bad = 0;
    bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT, "%s: status %d (%s), expected invalid argument",
                    what, (int)st, gf_strerror(st));
    bad += TU_CHECK(e == NULL, "%s: *out not NULL after a failed create", what);
    bad += TU_CHECK(memchr(detail, '\0', sizeof detail) != NULL, "%s: detail not terminated", what);
    if (memchr(detail, '\0', sizeof detail)) {
        bad += TU_CHECK(strstr(detail, sub1) != NULL, "%s: detail '%s' does not mention '%s'", what,
                        detail, sub1);
        if (sub2)
            bad += TU_CHECK(strstr(detail, sub2) != NULL, "%s: detail '%s' does not mention '%s'",
                            what, detail, sub2);
    }
    if (st == GF_OK)
        gf_engine_destroy(e);
    return bad;
}

static int expect_valid(const char *what, const gf_config *cfg)
{
    gf_engine *e = NULL;
    char detail[256] = "not cleared";
    gf_status st = gf_engine_create(cfg, &e, detail, sizeof detail);
    int bad = TU_CHECK(st == GF_OK && e != NULL, "%s: create failed: %s (%s)", what,
                       gf_strerror(st), detail);
    bad +=
        TU_CHECK(st != GF_OK || detail[0] == '\0', "%s: detail '%s' after success", what, detail);
    gf_engine_destroy(e);
    return bad;
}

/* Channel and tap counts: the limits accepted, beyond them refused. */
static int validation_counts(const gf_config *base)
{
    gf_config c = *base;
    int bad = 0;
    c.device = GF_DEVICE_REF;
    c.channels = GF_MAX_CHANNELS;
    bad += expect_valid("1024 channels", &c);
    c = *base;
    c.device = GF_DEVICE_REF;
    c.num_taps = GF_MAX_TAPS;
    bad += expect_valid("GF_MAX_TAPS taps", &c);

    c = *base;
    c.channels = 0;
    bad += expect_invalid("channels 0", &c, "channels", "0");
    c.channels = GF_MAX_CHANNELS + 1;
    bad += expect_invalid("channels 1025", &c, "channels", "1025");
    c.channels = -3;
    bad += expect_invalid("channels -3", &c, "channels", NULL);

    c = *base;
    c.num_taps = 0;
    bad += expect_invalid("taps 0", &c, "taps", "0");
    c.num_taps = GF_MAX_TAPS + 1;
    c.method = GF_METHOD_DIRECT;
    bad += expect_invalid("direct taps GF_MAX_TAPS+1", &c, "taps", "8193");
    c.method = GF_METHOD_AUTO;
    c.num_taps = GF_MAX_FFT_TAPS + 1;
    bad += expect_invalid("taps GF_MAX_FFT_TAPS+1", &c, "taps", "4194305");
    return bad;
}

/* Coefficients that are not finite in the precision. */
static int validation_coefficients(const gf_config *base)
{
    double taps[8] = {0.25, 0.5, 0.25, 0, 0, 0, 0, 0};
    gf_config c = *base;
    int bad = 0;
    c.num_taps = 3;
    c.taps = taps;
    taps[2] = NAN;
    bad += expect_invalid("NaN coefficient", &c, "coefficient", "nan");
    taps[2] = -INFINITY;
    bad += expect_invalid("-Inf coefficient", &c, "coefficient", "inf");
    taps[2] = 1e39; /* finite as a double, not as a float */
    bad += expect_invalid("coefficient overflowing f32", &c, "coefficient", NULL);
    c.precision = GF_PRECISION_F64;
    bad += expect_valid("1e39 coefficient in f64", &c);
    return bad;
}

/* Enumerations out of range, chunks too large, negative threads. */
static int validation_fields(const gf_config *base)
{
    gf_config c = *base;
    int bad = 0;
    c.mode = (gf_mode)3;
    bad += expect_invalid("mode 3", &c, "mode", NULL);
    c.mode = (gf_mode)-1;
    bad += expect_invalid("mode -1", &c, "mode", NULL);
    c = *base;
    c.precision = (gf_precision)2;
    bad += expect_invalid("precision 2", &c, "precision", NULL);
    c = *base;
    c.device = (gf_device)4;
    bad += expect_invalid("device 4", &c, "device", NULL);
    c.device = (gf_device)-1;
    bad += expect_invalid("device -1", &c, "device", NULL);

    c = *base;
    c.chunk_frames = ((size_t)1 << 28) + 1;
    bad += expect_invalid("chunk 2^28+1 frames", &c, "chunk", NULL);
    c.chunk_frames = (size_t)1 << 28;
    c.channels = 8; /* 2^31 samples */
    bad += expect_invalid("chunk of 2^31 samples", &c, "chunk", NULL);
    c.chunk_frames = SIZE_MAX;
    c.channels = 2;
    bad += expect_invalid("chunk SIZE_MAX", &c, "chunk", NULL);

    c = *base;
    c.threads = -1;
    bad += expect_invalid("threads -1", &c, "threads", NULL);

    /* Several GPUs: the list is checked before any device is asked. */
    const int devs[GF_MAX_DEVICES + 1] = {0, 1, -2};
    c = *base;
    c.cuda_devices = devs;
    c.cuda_device_count = 3;
    bad += expect_invalid("cuda_devices {0, 1, -2}", &c, "cuda_devices[2] is -2", NULL);
    c.cuda_device_count = GF_MAX_DEVICES + 1;
    bad += expect_invalid("9 CUDA devices", &c, "cuda_device_count 9", NULL);
    c.cuda_device_count = -1;
    bad += expect_invalid("-1 CUDA devices", &c, "cuda_device_count -1", NULL);
    c.cuda_devices = NULL;
    c.cuda_device_count = 2;
    bad += expect_invalid("2 CUDA devices, no list", &c, "cuda_device_count 2", NULL);
    /* On the CPU a list is not used, and no GPU is reported. */
    c = *base;
    c.device = GF_DEVICE_CPU;
    c.cuda_devices = devs;
    c.cuda_device_count = 2;
    bad += expect_valid("cuda_devices on the cpu", &c);
    gf_engine *e = NULL;
    int got[GF_MAX_DEVICES] = {-7};
    uint64_t frames = 7;
    if (gf_engine_create(&c, &e, NULL, 0) == GF_OK) {
        bad += TU_CHECK(gf_engine_cuda_devices(e, got, GF_MAX_DEVICES) == 0 && got[0] == -7,
                        "a cpu engine reports CUDA devices");
        bad += TU_CHECK(gf_engine_device_chunks(e, 0, &frames) == 0 && frames == 0,
                        "a cpu engine counts chunks of a GPU");
    }
    gf_engine_destroy(e);
    bad += TU_CHECK(gf_engine_cuda_devices(NULL, got, 1) == 0 &&
                        gf_engine_device_chunks(NULL, 0, NULL) == 0,
                    "NULL engine: devices or chunks reported");
    return bad;
}

/* NULL config, NULL out, NULL or tiny detail buffers. */
static int validation_arguments(const gf_config *base)
{
    int bad = 0;
    gf_engine *e = (gf_engine *)&e;
    char detail[64] = "";
    bad += TU_CHECK(gf_engine_create(NULL, &e, detail, sizeof detail) == GF_ERR_INVALID_ARGUMENT,
                    "NULL config accepted");
    bad += TU_CHECK(e == NULL, "NULL config: *out not NULL");
    bad += TU_CHECK(strstr(detail, "config") != NULL, "NULL config: detail '%s'", detail);
    bad += TU_CHECK(gf_engine_create(base, NULL, detail, sizeof detail) == GF_ERR_INVALID_ARGUMENT,
                    "NULL out accepted");
    gf_config c = *base;
    c.channels = 0;
    bad += TU_CHECK(gf_engine_create(&c, &e, NULL, 0) == GF_ERR_INVALID_ARGUMENT && e == NULL,
                    "bad config with NULL detail");
    char small[8];
    memset(small, 'x', sizeof small);
    bad += TU_CHECK(gf_engine_create(&c, &e, small, sizeof small) == GF_ERR_INVALID_ARGUMENT,
                    "bad config with small detail");
    bad += TU_CHECK(memchr(small, '\0', sizeof small) != NULL && strlen(small) == 7,
                    "small detail buffer not truncated and terminated");
    bad += TU_CHECK(gf_engine_create(&c, &e, small, 0) == GF_ERR_INVALID_ARGUMENT,
                    "bad config with detail_size 0");
    return bad;
}

static int test_validation(void)
{
    const gf_config base = gf_config_default();
    int bad = expect_valid("default config", &base);
    bad += validation_counts(&base);
    bad += validation_coefficients(&base);
    bad += validation_fields(&base);
    bad += validation_arguments(&base);
    return bad;
}

static int test_strings_and_nulls(void)
{
    int bad = 0;
    gf_engine_destroy(NULL); /* no-op */

    const gf_status all[] = {
        GF_OK,        GF_ERR_INVALID_ARGUMENT, GF_ERR_NO_MEMORY,   GF_ERR_NO_DEVICE, GF_ERR_CUDA,
        GF_ERR_STATE, GF_ERR_THREAD,           GF_ERR_UNSUPPORTED, GF_NO_RECORD};
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = gf_strerror(all[i]);
        bad += TU_CHECK(s != NULL && s[0] != '\0', "gf_strerror(%d) empty", (int)all[i]);
        for (size_t j = 0; s && j < i; j++)
            bad += TU_CHECK(strcmp(s, gf_strerror(all[j])) != 0,
                            "gf_strerror(%d) == gf_strerror(%d)", (int)all[i], (int)all[j]);
    }
    const char *u = gf_strerror((gf_status)1234);
    bad += TU_CHECK(u != NULL && u[0] != '\0', "gf_strerror(unknown) empty");

    const char *v = gf_version();
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", GPUFILT_VERSION_MAJOR, GPUFILT_VERSION_MINOR,
             GPUFILT_VERSION_PATCH);
    bad += TU_CHECK(v && strncmp(v, want, strlen(want)) == 0 && strstr(v, "cpu"), "gf_version '%s'",
                    v ? v : "(null)");

    /* NULL engines: errors or neutral values, never a crash. */
    size_t k = 99;
    float buf[4] = {0};
    bad += TU_CHECK(gf_engine_push(NULL, buf, 1, &k) == GF_ERR_INVALID_ARGUMENT, "push(NULL)");
    bad += TU_CHECK(gf_engine_pull(NULL, buf, 1, &k) == GF_ERR_INVALID_ARGUMENT, "pull(NULL)");
    bad += TU_CHECK(gf_engine_process(NULL, buf, 1, buf, &k) == GF_ERR_INVALID_ARGUMENT,
                    "process(NULL)");
    bad += TU_CHECK(gf_engine_flush(NULL) == GF_ERR_INVALID_ARGUMENT, "flush(NULL)");
    bad += TU_CHECK(gf_engine_reset(NULL) == GF_ERR_INVALID_ARGUMENT, "reset(NULL)");
    bad += TU_CHECK(gf_engine_latency(NULL) == 0, "latency(NULL)");
    bad += TU_CHECK(gf_engine_max_pending(NULL) == 0, "max_pending(NULL)");
    bad += TU_CHECK(gf_engine_chunk_frames(NULL) == 0, "chunk_frames(NULL)");
    bad += TU_CHECK(gf_engine_backend(NULL) && !gf_engine_backend(NULL)[0], "backend(NULL)");
    bad += TU_CHECK(gf_engine_error(NULL) && !gf_engine_error(NULL)[0], "error(NULL)");
    bad += TU_CHECK(gf_engine_taps(NULL, NULL, 0) == GF_ERR_INVALID_ARGUMENT, "taps(NULL)");
    bad += TU_CHECK(isnan(gf_engine_error_bound(NULL, 0, 1.0)), "error_bound(NULL)");

    /* A live engine with bad arguments. */
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_CPU;
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return bad + TU_FAIL("create default cpu engine");
    bad += TU_CHECK(gf_engine_push(e, NULL, 1, &k) == GF_ERR_INVALID_ARGUMENT, "push NULL in");
    bad +=
        TU_CHECK(gf_engine_push(e, buf, 1, NULL) == GF_ERR_INVALID_ARGUMENT, "push NULL consumed");
    bad += TU_CHECK(gf_engine_push(e, NULL, 0, &k) == GF_OK && k == 0, "push 0 frames of NULL");
    bad += TU_CHECK(gf_engine_pull(e, NULL, 1, &k) == GF_ERR_INVALID_ARGUMENT, "pull NULL out");
    bad += TU_CHECK(gf_engine_pull(e, buf, 1, NULL) == GF_ERR_INVALID_ARGUMENT, "pull NULL got");
    bad += TU_CHECK(gf_engine_pull(e, NULL, 0, &k) == GF_OK && k == 0, "pull 0 frames");
    bad += TU_CHECK(gf_engine_process(e, NULL, 1, buf, &k) == GF_ERR_INVALID_ARGUMENT,
                    "process NULL in");
    bad += TU_CHECK(gf_engine_process(e, buf, 1, NULL, &k) == GF_ERR_INVALID_ARGUMENT,
                    "process NULL out");
    bad += TU_CHECK(gf_engine_process(e, buf, 1, buf + 2, NULL) == GF_ERR_INVALID_ARGUMENT,
                    "process NULL produced");
    bad += TU_CHECK(gf_engine_process(e, NULL, 0, NULL, &k) == GF_OK && k == 0, "process 0 frames");
    bad += TU_CHECK(strcmp(gf_engine_error(e), "") == 0, "error '%s' on a fresh engine",
                    gf_engine_error(e));
    gf_engine_destroy(e);
    return bad;
}

static int test_latency_and_chunks(void)
{
    int bad = 0;
    const size_t ts[] = {1, 2, 3, 4, 5, 8, 25, 254, 255, GF_MAX_TAPS};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (int m = 0; m < 2; m++) {
            gf_config c = gf_config_default();
            c.device = GF_DEVICE_REF;
            c.num_taps = ts[i];
            c.mode = m ? GF_MODE_CAUSAL : GF_MODE_SAME;
            gf_engine *e = NULL;
            if (gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
                bad += TU_FAIL("create T=%zu", ts[i]);
                continue;
            }
            const size_t want = m ? 0 : (ts[i] - 1) / 2;
            bad += TU_CHECK(gf_engine_latency(e) == want, "T=%zu %s: latency %zu, expected %zu",
                            ts[i], m ? "causal" : "same", gf_engine_latency(e), want);
            bad += TU_CHECK(gf_engine_max_pending(e) >= gf_engine_chunk_frames(e),
                            "max_pending %zu < chunk %zu", gf_engine_max_pending(e),
                            gf_engine_chunk_frames(e));
            gf_engine_destroy(e);
        }

    /* Explicit chunk sizes are used as given; the default is positive. */
    for (size_t d = 0; d < 2; d++) {
        const size_t chunks[] = {0, 1, 7, 4096, 1000000};
        for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
            gf_config c = gf_config_default();
            c.device = cpu_devs[d];
            c.channels = 2;
            c.chunk_frames = chunks[i];
            gf_engine *e = NULL;
            if (gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
                bad += TU_FAIL("create chunk %zu", chunks[i]);
                continue;
            }
            const size_t got = gf_engine_chunk_frames(e);
            bad += TU_CHECK(chunks[i] ? got == chunks[i] : got > 0, "%s chunk %zu: in use %zu",
                            tu_device_name(cpu_devs[d]), chunks[i], got);
            bad += TU_CHECK(strcmp(gf_engine_backend(e), tu_device_name(cpu_devs[d])) == 0,
                            "backend '%s', asked for %s", gf_engine_backend(e),
                            tu_device_name(cpu_devs[d]));
            gf_engine_destroy(e);
        }
    }
    return bad;
}

static int test_taps(void)
{
    int bad = 0;
    const size_t ts[] = {1, 2, 3, 5, 7, 10, 25, 255, 1000};
    double got[1000];
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (int p = 0; p < 2; p++) {
            const size_t T = ts[i];
            gf_config c = gf_config_default();
            c.device = GF_DEVICE_REF;
            c.num_taps = T;
            c.precision = p ? GF_PRECISION_F64 : GF_PRECISION_F32;
            gf_engine *e = NULL;
            if (gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
                bad += TU_FAIL("create T=%zu", T);
                continue;
            }
            /* 1/T correctly rounded in the precision (a division is). */
            volatile float tf = (float)T;
            volatile double td = (double)T;
            const double want = p ? 1.0 / td : (double)(1.0f / tf);
            gf_engine_taps(e, got, sizeof got / sizeof got[0]);
            for (size_t k = 0; k < T; k++)
                if (memcmp(&got[k], &want, sizeof want) != 0) {
                    bad += TU_FAIL("mean T=%zu %s: tap %zu = %a, expected %a", T, p ? "f64" : "f32",
                                   k, got[k], want);
                    break;
                }
            gf_engine_destroy(e);
        }

    /* Explicit taps: rounded to the precision, copied at create. */
    double taps[5] = {0.1, -0.2, 1.0 / 3.0, 1e-30, -7.0};
    for (int p = 0; p < 2; p++) {
        gf_config c = gf_config_default();
        c.device = GF_DEVICE_CPU;
        c.num_taps = 5;
        c.taps = taps;
        c.precision = p ? GF_PRECISION_F64 : GF_PRECISION_F32;
        gf_engine *e = NULL;
        if (gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
            bad += TU_FAIL("create explicit taps");
            continue;
        }
        double saved[5];
        memcpy(saved, taps, sizeof taps);
        for (size_t k = 0; k < 5; k++)
            taps[k] = 99.0; /* the engine must have its own copy */
        gf_engine_taps(e, got, sizeof got / sizeof got[0]);
        for (size_t k = 0; k < 5; k++) {
            const double want = p ? saved[k] : (double)(float)saved[k];
            bad += TU_CHECK(memcmp(&got[k], &want, sizeof want) == 0,
                            "explicit %s tap %zu = %a, expected %a", p ? "f64" : "f32", k, got[k],
                            want);
        }
        /* And filtering uses the copy: an impulse gives the saved taps. */
        if (p) {
            double x[8] = {1, 0, 0, 0, 0, 0, 0, 0}, y[8];
            size_t n = 0;
            gf_status st = gf_engine_process(e, x, 8, y, &n);
            size_t more = 0;
            if (st == GF_OK)
                st = gf_engine_flush(e);
            if (st == GF_OK)
                st = gf_engine_pull(e, y + n, 8 - n, &more);
            bad += TU_CHECK(st == GF_OK && n + more == 8, "impulse through explicit taps");
            /* same mode, T = 5: y[i] = h[i + 2] */
            for (size_t i = 0; i < 3 && st == GF_OK; i++)
                bad += TU_CHECK(y[i] == saved[i + 2], "y[%zu] = %g, expected tap %g", i, y[i],
                                saved[i + 2]);
        }
        memcpy(taps, saved, sizeof taps);
        gf_engine_destroy(e);
    }
    return bad;
}

/* The calls that take a channel: each channel's own taps and bound, and a
 * status (or NAN) with nothing written for a channel that does not exist.
 * The per-channel taps are a heap block of exactly channels x taps values,
 * so a read past it shows under ASan or valgrind. */
static int test_channel_arguments(void)
{
    enum { C = 3, T = 5 };
    int bad = 0;
    double *h = malloc(C * T * sizeof *h);
    if (!h)
        return TU_FAIL("out of memory");
    for (size_t c = 0; c < C; c++)
        for (size_t k = 0; k < T; k++)
            h[c * T + k] = (double)((k + 1) * (c + 1)) / 8; /* sum |h| = 15 (c + 1) / 8, exact */
    const int bad_channels[] = {-1, C, C + 1, INT_MAX, INT_MIN};
    for (int fft = 0; fft < 2; fft++) {
        gf_config cfg = gf_config_default();
        cfg.device = GF_DEVICE_CPU;
        cfg.precision = GF_PRECISION_F64;
        cfg.channels = C;
        cfg.num_taps = T;
        cfg.taps = h;
        cfg.taps_per_channel = 1;
        cfg.method = fft ? GF_METHOD_FFT : GF_METHOD_DIRECT;
        cfg.partition = fft ? 16 : 0;
        const char *m = fft ? "fft" : "direct";
        gf_engine *e = NULL;
        char detail[256];
        if (gf_engine_create(&cfg, &e, detail, sizeof detail) != GF_OK) {
            bad += TU_FAIL("%s: create %d channels of per-channel taps: %s", m, C, detail);
            continue;
        }
        double got[T + 1];
        for (int c = 0; c < C; c++) {
            got[T] = 42.0; /* one past the taps: never written */
            const gf_status st = gf_engine_channel_taps(e, c, got, T);
            bad += TU_CHECK(st == GF_OK && memcmp(got, h + c * T, sizeof(double) * T) == 0,
                            "%s: channel_taps(%d): status %d, taps %g %g ..., expected %g %g ...",
                            m, c, (int)st, got[0], got[1], h[c * T], h[c * T + 1]);
            bad += TU_CHECK(got[T] == 42.0, "%s: channel_taps(%d) wrote past %d taps", m, c, T);
            /* eps (2 log2(2P) + K + 4) sum|h| max|x|: P = 16, K = 1 */
            const double want = fft ? 0x1p-53 * 15.0 * (15.0 * (c + 1) / 8) : 0.0;
            const double b = gf_engine_error_bound(e, c, 1.0);
            bad += TU_CHECK(b == want, "%s: error_bound(%d) = %a, expected %a", m, c, b, want);
        }
        for (size_t i = 0; i < sizeof bad_channels / sizeof bad_channels[0]; i++) {
            const int c = bad_channels[i];
            for (size_t k = 0; k <= T; k++)
                got[k] = 42.0;
            const gf_status st = gf_engine_channel_taps(e, c, got, T);
            bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT,
                            "%s: channel_taps(%d) of %d channels: status %d, expected %d", m, c, C,
                            (int)st, (int)GF_ERR_INVALID_ARGUMENT);
            for (size_t k = 0; k <= T; k++)
                bad += TU_CHECK(got[k] == 42.0, "%s: channel_taps(%d) wrote taps[%zu] = %g", m, c,
                                k, got[k]);
            const double b = gf_engine_error_bound(e, c, 1.0);
            bad += TU_CHECK(isnan(b), "%s: error_bound(%d) of %d channels = %g, expected NAN", m, c,
                            C, b);
        }
        const gf_status st = gf_engine_taps(e, got, T);
        bad += TU_CHECK(st == GF_OK && memcmp(got, h, sizeof(double) * T) == 0,
                        "%s: gf_engine_taps: status %d, not channel 0's taps", m, (int)st);
        bad +=
            TU_CHECK(gf_engine_taps(e, NULL, T) == GF_ERR_INVALID_ARGUMENT, "%s: taps(e, NULL)", m);
        bad += TU_CHECK(gf_engine_channel_taps(e, 0, NULL, T) == GF_ERR_INVALID_ARGUMENT,
                        "%s: channel_taps(e, 0, NULL)", m);
        bad += TU_CHECK(gf_engine_channel_taps(NULL, 0, got, T) == GF_ERR_INVALID_ARGUMENT,
                        "%s: channel_taps(NULL)", m);
        bad += TU_CHECK(isnan(gf_engine_error_bound(e, 0, -1.0)), "%s: error_bound max|x| -1", m);
        bad += TU_CHECK(isnan(gf_engine_error_bound(e, 0, NAN)), "%s: error_bound max|x| NAN", m);
        gf_engine_destroy(e);
    }
    free(h);
    return bad;
}

/* The taps' capacity (since 0.3): an array shorter than num_taps is
 * refused with nothing written; exactly num_taps is enough. */
static int test_taps_capacity(void)
{
    enum { T = 7, C = 2 };
    double h[C * T];
    for (int i = 0; i < C * T; i++)
        h[i] = (double)(i + 1);
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_REF;
    c.precision = GF_PRECISION_F64;
    c.channels = C;
    c.num_taps = T;
    c.taps = h;
    c.taps_per_channel = 1;
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return TU_FAIL("taps capacity: create");
    int bad = 0;
    double got[T + 1];
    const size_t caps[] = {0, 1, T - 1};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        for (int k = 0; k <= T; k++)
            got[k] = 42.0;
        const gf_status st = gf_engine_taps(e, got, caps[i]);
        const gf_status cst = gf_engine_channel_taps(e, 1, got, caps[i]);
        bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT && cst == GF_ERR_INVALID_ARGUMENT,
                        "taps into room for %zu of %d: status %d and %d, expected %d", caps[i], T,
                        (int)st, (int)cst, (int)GF_ERR_INVALID_ARGUMENT);
        for (int k = 0; k <= T; k++)
            bad += TU_CHECK(got[k] == 42.0, "taps into room for %zu: taps[%d] = %g written",
                            caps[i], k, got[k]);
    }
    got[T] = 42.0;
    bad += TU_CHECK(
        gf_engine_taps(e, got, T) == GF_OK && got[0] == 1.0 && got[T - 1] == 7.0 && got[T] == 42.0,
        "taps into room for exactly %d: %g .. %g, then %g", T, got[0], got[T - 1], got[T]);
    bad += TU_CHECK(gf_engine_channel_taps(e, 1, got, T + 1) == GF_OK && got[0] == 8.0 &&
                        got[T - 1] == 14.0 && got[T] == 42.0,
                    "channel 1's taps into room for %d: %g .. %g, then %g", T + 1, got[0],
                    got[T - 1], got[T]);
    gf_engine_destroy(e);
    printf("taps capacity: short arrays refused, nothing written\n");
    return bad;
}

/* gf_engine_hist_next's statuses (since 0.3): a record, none ready, no
 * histograms, bad arguments, each told apart. */
static int test_hist_next_status(void)
{
    enum { B = 4 };
    gf_hist_config hc = {.bins = 2, .block_frames = B, .lo = -1.0, .hi = 1.0};
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_CPU;
    c.mode = GF_MODE_CAUSAL;
    c.chunk_frames = B;
    c.hist = &hc;
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return TU_FAIL("hist_next: create");
    int bad = 0;
    gf_hist_record rec = {.block = 77};
    gf_status st = gf_engine_hist_next(e, &rec);
    bad += TU_CHECK(st == GF_NO_RECORD && rec.block == 77,
                    "hist_next before any input: status %d (expected GF_NO_RECORD, %d), block %llu",
                    (int)st, (int)GF_NO_RECORD, (unsigned long long)rec.block);
    const float x[B + 1] = {0.5f, -0.5f, 0.25f, 2.0f, 0.0f};
    float y[B + 1];
    size_t got = 0;
    bad += TU_CHECK(gf_engine_process(e, x, B + 1, y, &got) == GF_OK, "hist_next: process");
    st = gf_engine_hist_next(e, &rec);
    bad += TU_CHECK(st == GF_OK && rec.block == 0 && rec.frames == B && rec.above == 1 &&
                        rec.bins[0] == 1 && rec.bins[1] == 2,
                    "hist_next, first block: status %d, block %llu, frames %llu, above %llu",
                    (int)st, (unsigned long long)rec.block, (unsigned long long)rec.frames,
                    (unsigned long long)rec.above);
    st = gf_engine_hist_next(e, &rec);
    bad +=
        TU_CHECK(st == GF_NO_RECORD, "hist_next, the short block before flush: status %d", (int)st);
    bad += TU_CHECK(gf_engine_flush(e) == GF_OK, "hist_next: flush");
    st = gf_engine_hist_next(e, &rec);
    bad += TU_CHECK(st == GF_OK && rec.block == 1 && rec.frames == 1,
                    "hist_next, the short block after flush: status %d, block %llu", (int)st,
                    (unsigned long long)rec.block);
    st = gf_engine_hist_next(e, &rec);
    bad += TU_CHECK(st == GF_NO_RECORD, "hist_next, drained: status %d", (int)st);
    st = gf_engine_hist_next(e, NULL);
    bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT, "hist_next(e, NULL): status %d", (int)st);
    gf_engine_destroy(e);
    st = gf_engine_hist_next(NULL, &rec);
    bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT, "hist_next(NULL): status %d", (int)st);
    c.hist = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) != GF_OK)
        return bad + TU_FAIL("hist_next: create without histograms");
    st = gf_engine_hist_next(e, &rec);
    bad += TU_CHECK(st == GF_ERR_STATE, "hist_next with histograms off: status %d", (int)st);
    gf_engine_destroy(e);
    printf("hist_next: a record, none ready, off and bad arguments told apart\n");
    return bad;
}

/* The hand-off's "none" is GF_DEVICE_NONE (since 0.3): the default, and
 * what an engine reports; GF_DEVICE_AUTO, which used to mean none, is
 * refused with a message that names the way. */
static int test_handoff_none(void)
{
    int bad = 0;
    gf_config c = gf_config_default();
    bad += TU_CHECK(c.handoff == GF_DEVICE_NONE && (int)GF_DEVICE_NONE != (int)GF_DEVICE_AUTO,
                    "default hand-off %d, expected GF_DEVICE_NONE (%d)", (int)c.handoff,
                    (int)GF_DEVICE_NONE);
    c.device = GF_DEVICE_CPU;
    gf_engine *e = NULL;
    char detail[256] = "";
    gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    if (st == GF_OK) {
        gf_config got;
        gf_engine_get_config(e, &got);
        bad += TU_CHECK(got.handoff == GF_DEVICE_NONE && gf_engine_handoff_frame(e) == -1 &&
                            !gf_engine_handoff_error(e)[0],
                        "no hand-off: config %d, frame %lld, error '%s'", (int)got.handoff,
                        (long long)gf_engine_handoff_frame(e), gf_engine_handoff_error(e));
        gf_engine_destroy(e);
    } else
        bad += TU_FAIL("create with no hand-off: %s", detail);
    c.handoff = GF_DEVICE_AUTO;
    e = NULL;
    st = gf_engine_create(&c, &e, detail, sizeof detail);
    bad += TU_CHECK(st == GF_ERR_INVALID_ARGUMENT && !e &&
                        strcmp(detail, "hand-off device auto is not a device: GF_DEVICE_NONE for "
                                       "none") == 0,
                    "hand-off GF_DEVICE_AUTO: status %d, detail '%s'", (int)st, detail);
    gf_engine_destroy(e);
    bad += TU_CHECK(!gf_backend_available(GF_DEVICE_NONE) && !gf_backend_built(GF_DEVICE_NONE),
                    "GF_DEVICE_NONE is not a backend");
    printf("hand-off: none is GF_DEVICE_NONE; auto refused\n");
    return bad;
}

/* Run n frames through a fresh engine and collect all output. */
static int run_all(const gf_config *c, const void *in, size_t frames, void *out, const char *what)
{
    return tu_filter_into(what, c, in, frames, 0, TU_FIXED(3), TU_FIXED(2), out, frames + 1);
}

/* Special values for the identity: 16 frames of 3 channels, a frame a line. */
enum { ID_N = 16, ID_C = 3 };
/* clang-format off */
static const float identity_in[ID_N * ID_C] = {
    0.0f,            -0.0f,       NAN,
    -NAN,            INFINITY,    -INFINITY,
    FLT_MAX,         -FLT_MAX,    FLT_MIN,
    -FLT_MIN,        1e-45f,      -1e-45f,
    1.0f,            -1.0f,       0.1f,
    3.14159274f,     -2.5e-39f,   7.0e37f,
    -0.0f,           -0.0f,       -0.0f,
    NAN,             NAN,         NAN,
    1.5f,            -1.5f,       65504.0f,
    16777217.0f,     -1e30f,      1e-30f,
    0.0f,            0.0f,        0.0f,
    -0.0f,           -0.0f,       -0.0f,
    1.17549421e-38f, 2.0f,        -3.0f,
    4.0f,            -5.0f,       6.0f,
    INFINITY,        NAN,         -INFINITY,
    0.5f,            -0.25f,      0.125f,
};
/* clang-format on */

static int test_identity(void)
{
    enum { C = ID_C, N = ID_N };
    const float *fin = identity_in;
    double din[N * C];
    for (size_t i = 0; i < N * C; i++)
        din[i] = (double)fin[i];
    din[5] = DBL_MAX;
    din[6] = 4.9406564584124654e-324; /* smallest subnormal */
    din[7] = -4.9406564584124654e-324;
    din[8] = DBL_MIN;
    const double one = 1.0;
    int bad = 0;
    for (size_t d = 0; d < 2; d++)
        for (int p = 0; p < 2; p++)
            for (int m = 0; m < 2; m++)
                for (int explicit_tap = 0; explicit_tap < 2; explicit_tap++) {
                    gf_config c = tu_config(C, 1, explicit_tap ? &one : NULL,
                                            m ? GF_MODE_CAUSAL : GF_MODE_SAME,
                                            p ? GF_PRECISION_F64 : GF_PRECISION_F32, cpu_devs[d]);
                    c.chunk_frames = 5;
                    char what[128];
                    snprintf(what, sizeof what, "identity %s %s %s %s", tu_device_name(cpu_devs[d]),
                             p ? "f64" : "f32", m ? "causal" : "same",
                             explicit_tap ? "taps {1}" : "mean T=1");
                    double out[(N + 1) * C];
                    const void *in = p ? (const void *)din : (const void *)fin;
                    if (run_all(&c, in, N, out, what)) {
                        bad++;
                        continue;
                    }
                    bad += tu_compare(what, in, out, N * C, p ? 8 : 4, C);
                }
    return bad;
}

/* NaN and Inf are not masked: an output whose window holds NaN is NaN, and
 * the others are untouched by it. */
static int test_nan_propagation(void)
{
    int bad = 0;
    enum { N = 40, T = 5 };
    for (size_t d = 0; d < 2; d++) {
        float x[N], y[N + 1];
        for (size_t i = 0; i < N; i++)
            x[i] = (float)i;
        x[20] = NAN;
        x[30] = INFINITY;
        gf_config c = gf_config_default();
        c.device = cpu_devs[d];
        c.num_taps = T;
        c.mode = GF_MODE_CAUSAL;
        if (run_all(&c, x, N, y, "nan propagation")) {
            bad++;
            continue;
        }
        for (size_t i = 0; i < N; i++) {
            const int has_nan = i >= 20 && i < 20 + T;
            const int has_inf = i >= 30 && i < 30 + T;
            if (has_nan)
                bad += TU_CHECK(isnan(y[i]), "%s: y[%zu] = %g, expected NaN",
                                tu_device_name(cpu_devs[d]), i, (double)y[i]);
            else if (has_inf)
                bad += TU_CHECK(isinf(y[i]) && y[i] > 0, "%s: y[%zu] = %g, expected +Inf",
                                tu_device_name(cpu_devs[d]), i, (double)y[i]);
            else
                bad += TU_CHECK(isfinite(y[i]), "%s: y[%zu] = %g, expected finite",
                                tu_device_name(cpu_devs[d]), i, (double)y[i]);
        }
    }
    return bad;
}

/* The contract evaluated here, independently of the library: mono, in the
 * precision (the type of acc), out-of-range inputs read as +0.0 and used. */
#define NAIVE_FIR(acc_type, h, T, x, n, lat, y)                                         \
    for (size_t i = 0; i < (n); i++) {                                                  \
        const ptrdiff_t j = (ptrdiff_t)(i + (lat));                                     \
        acc_type acc = (h)[0] * (j < (ptrdiff_t)(n) ? (x)[j] : (acc_type)0);            \
        for (size_t k = 1; k < (T); k++) {                                              \
            const ptrdiff_t m = j - (ptrdiff_t)k;                                       \
            acc = acc + (h)[k] * (m >= 0 && m < (ptrdiff_t)(n) ? (x)[m] : (acc_type)0); \
        }                                                                               \
        (y)[i] = acc;                                                                   \
    }

static void naive_f32(const float *h, size_t T, const float *x, size_t n, size_t lat, float *y)
{
    NAIVE_FIR(float, h, T, x, n, lat, y)
}

static void naive_f64(const double *h, size_t T, const double *x, size_t n, size_t lat, double *y)
{
    NAIVE_FIR(double, h, T, x, n, lat, y)
}

/* Signed zeros in the taps survive: a -0.0 tap is not a +0.0 tap (a sum of
 * zeros is -0.0 only when every product is), bit for bit. */
static int test_signed_zero_taps(void)
{
    int bad = 0;
    enum { N = 64 };
    static const double tapsets[][4] = {
        {-0.0, -0.0, -0.0, -0.0}, {-0.0, 0.0, 0.0, 0.0},    {0.0, -0.0, -0.0, -0.0},
        {2.0, -0.0, 0.5, -0.0},   {-1.0, -0.0, -0.0, -1.0},
    };
    double xd[N];
    float xf[N];
    tu_rng r = {2024};
    for (size_t i = 0; i < N; i++) {
        const size_t pick = tu_rng_below(&r, 4);
        xd[i] = pick == 0 ? 0.0 : pick == 1 ? -0.0 : tu_rng_sym(&r);
        if (i < N / 4)
            xd[i] = pick < 2 ? 0.0 : 1.0 + (double)i; /* a stretch of +0 and positives */
        xf[i] = (float)xd[i];
    }
    for (size_t t = 0; t < sizeof tapsets / sizeof tapsets[0]; t++)
        for (size_t T = 1; T <= 4; T++)
            for (size_t d = 0; d < 2; d++)
                for (int p = 0; p < 2; p++)
                    for (int m = 0; m < 2; m++) {
                        gf_config c =
                            tu_config(1, T, tapsets[t], m ? GF_MODE_CAUSAL : GF_MODE_SAME,
                                      p ? GF_PRECISION_F64 : GF_PRECISION_F32, cpu_devs[d]);
                        c.chunk_frames = 10;
                        const size_t lat = m ? 0 : (T - 1) / 2;
                        char what[160];
                        snprintf(what, sizeof what, "signed-zero taps set %zu, T=%zu, %s %s %s", t,
                                 T, tu_device_name(cpu_devs[d]), p ? "f64" : "f32",
                                 m ? "causal" : "same");
                        double want[N], got[N + 1];
                        if (p) {
                            naive_f64(tapsets[t], T, xd, N, lat, want);
                        } else {
                            float hf[4];
                            for (size_t k = 0; k < 4; k++)
                                hf[k] = (float)tapsets[t][k];
                            naive_f32(hf, T, xf, N, lat, (float *)want);
                        }
                        if (run_all(&c, p ? (const void *)xd : (const void *)xf, N, got, what)) {
                            bad++;
                            continue;
                        }
                        bad += tu_compare(what, want, got, N, p ? 8 : 4, 1);
                    }
    /* The all -0.0 filter over the leading +0 / positive stretch gives -0.0. */
    double h0[4] = {-0.0, -0.0, -0.0, -0.0}, y[N + 1];
    for (size_t d = 0; d < 2; d++) {
        gf_config c = tu_config(1, 4, h0, GF_MODE_CAUSAL, GF_PRECISION_F64, cpu_devs[d]);
        if (run_all(&c, xd, N, y, "all -0.0 taps")) {
            bad++;
            continue;
        }
        for (size_t i = 0; i < N / 4; i++)
            bad += TU_CHECK(y[i] == 0.0 && signbit(y[i]), "%s all -0.0 taps: y[%zu] = %a",
                            tu_device_name(cpu_devs[d]), i, y[i]);
    }
    return bad;
}

/* An impulse returns the taps: y[i] = h[i + c - p] in same mode, h[i - p] in
 * causal mode, zero elsewhere; a silent channel stays zero. */
static int test_impulse(void)
{
    int bad = 0;
    enum { N = 50, C = 2 };
    const size_t ts[] = {1, 2, 7, 8, 25};
    const size_t pos[] = {0, 3, 20, N - 1};
    for (size_t d = 0; d < 2; d++)
        for (size_t ti = 0; ti < sizeof ts / sizeof ts[0]; ti++)
            for (int m = 0; m < 2; m++)
                for (int p = 0; p < 2; p++)
                    for (size_t pi = 0; pi < sizeof pos / sizeof pos[0]; pi++) {
                        const size_t T = ts[ti], P = pos[pi];
                        double taps[25];
                        tu_fill_taps(taps, T, 100 + T);
                        gf_config c =
                            tu_config(C, T, taps, m ? GF_MODE_CAUSAL : GF_MODE_SAME,
                                      p ? GF_PRECISION_F64 : GF_PRECISION_F32, cpu_devs[d]);
                        c.chunk_frames = 9;
                        double xd[N * C] = {0}, yd[(N + 1) * C];
                        float xf[N * C] = {0}, yf[(N + 1) * C];
                        xd[P * C + 1] = 1.0;
                        xf[P * C + 1] = 1.0f;
                        char what[128];
                        snprintf(what, sizeof what, "impulse %s T=%zu %s %s at %zu",
                                 tu_device_name(cpu_devs[d]), T, m ? "causal" : "same",
                                 p ? "f64" : "f32", P);
                        if (run_all(&c, p ? (void *)xd : (void *)xf, N, p ? (void *)yd : (void *)yf,
                                    what)) {
                            bad++;
                            continue;
                        }
                        const ptrdiff_t lat = m ? 0 : (ptrdiff_t)(T - 1) / 2;
                        for (ptrdiff_t i = 0; i < N; i++) {
                            const ptrdiff_t k = i + lat - (ptrdiff_t)P;
                            double want = 0.0;
                            if (k >= 0 && k < (ptrdiff_t)T)
                                want = p ? taps[k] : (double)(float)taps[k];
                            const double got1 = p ? yd[i * C + 1] : (double)yf[i * C + 1];
                            const double got0 = p ? yd[i * C] : (double)yf[i * C];
                            if (got1 != want || got0 != 0.0) {
                                bad += TU_FAIL("%s: y[%td] = (%a, %a), expected (0, %a)", what, i,
                                               got0, got1, want);
                                break;
                            }
                        }
                    }
    return bad;
}

static int test_devices(void)
{
    int bad = 0;
    const int have_cuda = gf_cuda_available();
    bad += TU_CHECK(have_cuda == 0 || have_cuda == 1, "gf_cuda_available() = %d", have_cuda);
    bad += TU_CHECK(gf_cuda_available() == have_cuda, "gf_cuda_available() changed");

    gf_config c = gf_config_default();
    c.device = GF_DEVICE_AUTO;
    gf_engine *e = NULL;
    gf_status st = gf_engine_create(&c, &e, NULL, 0);
    bad += TU_CHECK(st == GF_OK, "auto device: %s", gf_strerror(st));
    if (e)
        bad += TU_CHECK(strcmp(gf_engine_backend(e), have_cuda ? "cuda" : "cpu") == 0,
                        "auto picked '%s' with cuda %savailable", gf_engine_backend(e),
                        have_cuda ? "" : "not ");
    gf_engine_destroy(e);

    if (have_cuda) {
        printf("test_api: a CUDA device is usable; GF_ERR_NO_DEVICE check skipped\n");
        return bad;
    }
    c.device = GF_DEVICE_CUDA;
    e = (gf_engine *)&e;
    char detail[256] = "";
    st = gf_engine_create(&c, &e, detail, sizeof detail);
    bad += TU_CHECK(st == GF_ERR_NO_DEVICE, "cuda without a GPU: %d (%s), expected no device",
                    (int)st, gf_strerror(st));
    bad += TU_CHECK(e == NULL, "cuda without a GPU: *out not NULL");
    bad += TU_CHECK(detail[0] != '\0', "cuda without a GPU: empty detail");
    if (st == GF_OK)
        gf_engine_destroy(e);
    return bad;
}

/* The names of device values, from the library's registry: every kind
 * round-trips name <-> value, in ascending value; "auto" and "none" are
 * names too; anything else is refused (NULL, GF_ERR_INVALID_ARGUMENT). An
 * engine reports its backend by the same name. */
static int test_device_names(void)
{
    int bad = 0;
    static const gf_device want[] = {GF_DEVICE_CPU, GF_DEVICE_CUDA, GF_DEVICE_REF};
    static const char *const want_names[] = {"cpu", "cuda", "ref"};
    gf_device kinds[8] = {GF_DEVICE_NONE, GF_DEVICE_NONE, GF_DEVICE_NONE, GF_DEVICE_NONE};
    bad += TU_CHECK(gf_device_kinds(NULL, 0) == 3, "%zu kinds, want 3", gf_device_kinds(NULL, 0));
    bad += TU_CHECK(gf_device_kinds(kinds, 1) == 3 && kinds[0] == GF_DEVICE_CPU &&
                        kinds[1] == GF_DEVICE_NONE,
                    "cap 1: kinds %d %d", (int)kinds[0], (int)kinds[1]);
    const size_t n = gf_device_kinds(kinds, 8);
    bad += TU_CHECK(n == 3 && kinds[3] == GF_DEVICE_NONE, "%zu kinds into 8", n);
    for (size_t i = 0; i < 3 && i < n; i++) {
        const char *name = gf_device_name(kinds[i]);
        gf_device back = GF_DEVICE_NONE;
        bad += TU_CHECK(kinds[i] == want[i], "kind %zu is %d, want %d", i, (int)kinds[i],
                        (int)want[i]);
        bad += TU_CHECK(name && strcmp(name, want_names[i]) == 0, "kind %d named '%s', want '%s'",
                        (int)kinds[i], name ? name : "(null)", want_names[i]);
        bad +=
            TU_CHECK(name && gf_device_from_name(name, &back) == GF_OK && back == kinds[i],
                     "'%s' back to %d, want %d", name ? name : "(null)", (int)back, (int)kinds[i]);
    }
    const struct {
        gf_device d;
        const char *name;
    } policies[] = {{GF_DEVICE_AUTO, "auto"}, {GF_DEVICE_NONE, "none"}};
    for (size_t i = 0; i < 2; i++) {
        const char *name = gf_device_name(policies[i].d);
        gf_device back = GF_DEVICE_CPU;
        bad += TU_CHECK(name && strcmp(name, policies[i].name) == 0, "device %d named '%s'",
                        (int)policies[i].d, name ? name : "(null)");
        bad +=
            TU_CHECK(gf_device_from_name(policies[i].name, &back) == GF_OK && back == policies[i].d,
                     "'%s' back to %d", policies[i].name, (int)back);
    }
    bad += TU_CHECK(gf_device_name((gf_device)4) == NULL && gf_device_name((gf_device)-2) == NULL &&
                        gf_device_name((gf_device)INT_MAX) == NULL,
                    "a name for devices 4, -2 or INT_MAX");
    static const char *const unknown[] = {"", "CPU", "Cuda", "cuda ", " ref", "tpu", "cpu0", "gpu"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        gf_device back = (gf_device)77;
        bad += TU_CHECK(gf_device_from_name(unknown[i], &back) == GF_ERR_INVALID_ARGUMENT &&
                            back == (gf_device)77,
                        "'%s' taken as device %d", unknown[i], (int)back);
    }
    gf_device back = (gf_device)77;
    bad += TU_CHECK(gf_device_from_name(NULL, &back) == GF_ERR_INVALID_ARGUMENT &&
                        back == (gf_device)77,
                    "NULL name taken");
    bad += TU_CHECK(gf_device_from_name("cpu", NULL) == GF_ERR_INVALID_ARGUMENT, "NULL out taken");

    /* The backends this build has report themselves by the same names. */
    for (size_t i = 0; i < n && i < 8; i++) {
        if (!gf_backend_available(kinds[i]))
            continue;
        gf_config c = gf_config_default();
        c.device = kinds[i];
        gf_engine *e = NULL;
        if (gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
            bad += TU_FAIL("%s engine: create failed", gf_device_name(kinds[i]));
            continue;
        }
        bad += TU_CHECK(strcmp(gf_engine_backend(e), gf_device_name(gf_engine_device(e))) == 0,
                        "engine backend '%s', device %d", gf_engine_backend(e),
                        (int)gf_engine_device(e));
        gf_engine_destroy(e);
    }
    return bad;
}

/* The typed queries: the device kind of an engine (engine_devices),
 * whether a backend is built and available (backend_queries), and the CUDA
 * devices present, without an engine (cuda_device_queries). */
static int engine_devices(int have_cuda)
{
    int bad = 0;
    bad += TU_CHECK(gf_engine_device(NULL) == GF_DEVICE_AUTO, "gf_engine_device(NULL) = %d",
                    (int)gf_engine_device(NULL));
    const gf_device kinds[] = {GF_DEVICE_REF, GF_DEVICE_CPU};
    const char *names[] = {"ref", "cpu"};
    for (int i = 0; i < 2; i++) {
        gf_config c = gf_config_default();
        c.device = kinds[i];
        gf_engine *e = NULL;
        gf_status st = gf_engine_create(&c, &e, NULL, 0);
        bad += TU_CHECK(st == GF_OK, "%s engine: %s", names[i], gf_strerror(st));
        if (e) {
            bad += TU_CHECK(gf_engine_device(e) == kinds[i], "%s engine: device %d, want %d",
                            names[i], (int)gf_engine_device(e), (int)kinds[i]);
            bad += TU_CHECK(strcmp(gf_engine_backend(e), names[i]) == 0, "%s engine: backend '%s'",
                            names[i], gf_engine_backend(e));
        }
        gf_engine_destroy(e);
    }
    gf_config c = gf_config_default();
    gf_engine *e = NULL;
    if (gf_engine_create(&c, &e, NULL, 0) == GF_OK)
        bad += TU_CHECK(gf_engine_device(e) == (have_cuda ? GF_DEVICE_CUDA : GF_DEVICE_CPU),
                        "auto engine: device %d with cuda %savailable", (int)gf_engine_device(e),
                        have_cuda ? "" : "not ");
    else
        bad += TU_FAIL("auto engine: create failed");
    gf_engine_destroy(e);
    return bad;
}

static int backend_queries(int have_cuda, int built_cuda)
{
    int bad = 0;
    bad += TU_CHECK(gf_backend_available(GF_DEVICE_REF) == 1, "ref available = %d",
                    gf_backend_available(GF_DEVICE_REF));
    bad += TU_CHECK(gf_backend_available(GF_DEVICE_CPU) == 1, "cpu available = %d",
                    gf_backend_available(GF_DEVICE_CPU));
    bad += TU_CHECK(gf_backend_available(GF_DEVICE_CUDA) == have_cuda,
                    "cuda available = %d, gf_cuda_available() = %d",
                    gf_backend_available(GF_DEVICE_CUDA), have_cuda);
    bad += TU_CHECK(gf_backend_available(GF_DEVICE_AUTO) == 0, "auto available = %d",
                    gf_backend_available(GF_DEVICE_AUTO));
    bad += TU_CHECK(gf_backend_available((gf_device)4) == 0 &&
                        gf_backend_available((gf_device)-1) == 0,
                    "devices 4 and -1 available");

    bad += TU_CHECK(gf_backend_built(GF_DEVICE_REF) == 1 && gf_backend_built(GF_DEVICE_CPU) == 1,
                    "ref and cpu not built in");
    bad += TU_CHECK(gf_backend_built(GF_DEVICE_CUDA) == built_cuda, "cuda built = %d, want %d",
                    gf_backend_built(GF_DEVICE_CUDA), built_cuda);
    bad += TU_CHECK(gf_backend_built(GF_DEVICE_AUTO) == 0 && gf_backend_built((gf_device)4) == 0,
                    "auto or device 4 built");
    return bad;
}

static int cuda_device_queries(int have_cuda, int built_cuda)
{
    int bad = 0, count = -7;
    bad += TU_CHECK(gf_cuda_device_count(NULL) == GF_ERR_INVALID_ARGUMENT,
                    "gf_cuda_device_count(NULL)");
    gf_status st = gf_cuda_device_count(&count);
    bad += TU_CHECK(st == GF_OK, "gf_cuda_device_count: %s", gf_strerror(st));
    if (!built_cuda || !have_cuda)
        bad += TU_CHECK(count == 0, "%d CUDA devices counted %s", count,
                        built_cuda ? "where none is usable" : "in a build without CUDA");
    else
        bad += TU_CHECK(count >= 1, "%d CUDA devices counted where one is usable", count);

    gf_cuda_device info;
    bad += TU_CHECK(gf_cuda_device_info(0, NULL) == GF_ERR_INVALID_ARGUMENT,
                    "gf_cuda_device_info(0, NULL)");
    const int out_of_range[] = {-1, count, count + 1, INT_MAX, INT_MIN};
    for (int i = 0; i < 5; i++) {
        memset(&info, 0x55, sizeof info);
        st = gf_cuda_device_info(out_of_range[i], &info);
        bad += TU_CHECK(st == GF_ERR_NO_DEVICE, "gf_cuda_device_info(%d) of %d: %d (%s)",
                        out_of_range[i], count, (int)st, gf_strerror(st));
        bad += TU_CHECK(info.name[0] == '\0' && info.total_bytes == 0 && info.free_bytes == 0 &&
                            info.major == 0 && info.multiprocessors == 0,
                        "gf_cuda_device_info(%d): *info not zeroed", out_of_range[i]);
    }
    for (int i = 0; i < count; i++) {
        memset(&info, 0x55, sizeof info);
        st = gf_cuda_device_info(i, &info);
        bad += TU_CHECK(st == GF_OK, "gf_cuda_device_info(%d): %s", i, gf_strerror(st));
        bad += TU_CHECK(memchr(info.name, '\0', sizeof info.name) && info.name[0] != '\0',
                        "device %d: name", i);
        bad += TU_CHECK(info.total_bytes > 0 && info.free_bytes <= info.total_bytes &&
                            info.major >= 1 && info.multiprocessors >= 1,
                        "device %d: total %zu free %zu cc %d.%d sms %d", i, info.total_bytes,
                        info.free_bytes, info.major, info.minor, info.multiprocessors);
        printf("test_api: CUDA device %d: %.64s, %zu MiB (%zu free), cc %d.%d\n", i, info.name,
               info.total_bytes >> 20, info.free_bytes >> 20, info.major, info.minor);
    }
    return bad;
}

static int test_device_queries(void)
{
    const int have_cuda = gf_cuda_available();
    const int built_cuda = strstr(gf_version(), "cuda") != NULL;
    return engine_devices(have_cuda) + backend_queries(have_cuda, built_cuda) +
           cuda_device_queries(have_cuda, built_cuda);
}

static int test_host_memory(void)
{
    int bad = 0;
    const size_t sizes[] = {0, 1, 63, 4096, (size_t)3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = gf_host_alloc(sizes[i]);
        if (!p) {
            bad += TU_FAIL("gf_host_alloc(%zu) returned NULL", sizes[i]);
            continue;
        }
        bad += TU_CHECK((uintptr_t)p % 64 == 0, "gf_host_alloc(%zu) = %p not 64-byte aligned",
                        sizes[i], (void *)p);
        for (size_t j = 0; j < sizes[i]; j++)
            p[j] = (unsigned char)(j * 31 + 7);
        size_t wrong = 0;
        for (size_t j = 0; j < sizes[i]; j++)
            wrong += p[j] != (unsigned char)(j * 31 + 7);
        bad += TU_CHECK(wrong == 0, "gf_host_alloc(%zu): %zu bytes did not hold", sizes[i], wrong);
        gf_host_free(p);
    }
    gf_host_free(NULL);
    bad += TU_CHECK(gf_host_alloc(SIZE_MAX) == NULL, "gf_host_alloc(SIZE_MAX) succeeded");

    /* gf_host_register: arguments checked; the caller's memory registered
     * (a no-op without CUDA), still its own, and released. */
    char why[256] = "x";
    unsigned char *m = malloc(1 << 20);
    bad += TU_CHECK(gf_host_register(NULL, 64, why, sizeof why) == GF_ERR_INVALID_ARGUMENT,
                    "gf_host_register(NULL) was taken");
    bad += TU_CHECK(m && gf_host_register(m, 0, NULL, 0) == GF_ERR_INVALID_ARGUMENT,
                    "gf_host_register of 0 bytes was taken");
    if (m) {
        const gf_status st = gf_host_register(m, 1 << 20, why, sizeof why);
        bad += TU_CHECK(st == GF_OK && why[0] == '\0', "gf_host_register: %s (%s)", gf_strerror(st),
                        why);
        memset(m, 9, 1 << 20);
        bad += TU_CHECK(m[0] == 9 && m[(1 << 20) - 1] == 9, "registered memory did not hold");
        gf_host_unregister(m);
        free(m);
    }
    gf_host_unregister(NULL);

    /* Host buffers work as engine input and output, with the same result. */
    enum { N = 5000, C = 2 };
    float *in = gf_host_alloc(N * C * sizeof(float));
    float *out = gf_host_alloc((N + 64) * C * sizeof(float) + 1 * sizeof(float));
    gf_config c = gf_config_default();
    c.device = GF_DEVICE_CPU;
    c.channels = C;
    c.num_taps = 9;
    c.chunk_frames = 1000;
    if (!in || !out) {
        bad += TU_FAIL("gf_host_alloc for buffers");
    } else {
        tu_fill_signal(in, N * C, sizeof(float), 5);
        void *ref = tu_filter("host buffers: malloc'd", &c, in, N, 0, TU_ALL, TU_ALL);
        gf_engine *e = NULL;
        size_t n = 0, more = 0;
        if (!ref || gf_engine_create(&c, &e, NULL, 0) != GF_OK) {
            bad += TU_FAIL("host buffers: setup");
        } else {
            gf_status st = gf_engine_process(e, in, N, out, &n);
            if (st == GF_OK)
                st = gf_engine_flush(e);
            if (st == GF_OK)
                st = gf_engine_pull(e, out + n * C, 64, &more);
            bad += TU_CHECK(st == GF_OK && n + more == N, "host buffers: %s, %zu + %zu frames",
                            gf_strerror(st), n, more);
            if (st == GF_OK && n + more == N)
                bad += tu_compare("host buffers vs malloc'd", ref, out, N * C, sizeof(float), C);
        }
        gf_engine_destroy(e);
        free(ref);
    }
    gf_host_free(in);
    gf_host_free(out);
    return bad;
}

int main(void)
{
    int bad = 0;
    bad += test_validation();
    bad += test_strings_and_nulls();
    bad += test_latency_and_chunks();
    bad += test_taps();
    bad += test_taps_capacity();
    bad += test_hist_next_status();
    bad += test_handoff_none();
    bad += test_channel_arguments();
    bad += test_identity();
    bad += test_nan_propagation();
    bad += test_impulse();
    bad += test_signed_zero_taps();
    bad += test_devices();
    bad += test_device_queries();
    bad += test_device_names();
    bad += test_host_memory();
    if (bad) {
        fprintf(stderr, "test_api: %d check(s) FAILED\n", bad);
        return 1;
    }
    printf("test_api: all checks passed\n");
    return 0;
}
