/*
 * Hand-off (gf_config.handoff): an engine that starts on the cpu backend
 * and hands the stream to another backend at a chunk boundary gives the
 * same bytes and histogram records as the cpu alone.
 *
 *   test_handoff TARGET     TARGET: ref (any machine) or cuda (exit 77
 *                           without a usable GPU)
 *
 * With cuda, also to several GPUs (gf_config.cuda_devices {0, 0}: two
 * instances on one GPU). Also: the FFT method makes no hand-off (and says
 * why); the rules of the config are checked.
 */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static gf_device g_target;

/* The stream through cfg, push/pull in random sizes; histogram records to
 * recs when cfg has histograms. Returns the output (malloc'd) or NULL. */
static void *run(const char *label, const gf_config *cfg, const void *in, size_t frames,
                 tu_recs *recs, gf_engine **keep)
{
    const size_t fb = (size_t)cfg->channels * tu_sample_size(cfg->precision);
    const size_t cap = frames + (cfg->mode == GF_MODE_FULL ? cfg->num_taps : 0) + 1;
    void *out = malloc(cap * fb);
    gf_engine *e = NULL;
    size_t produced = 0;
    int bad = !out || tu_create(label, cfg, &e);
    bad = bad || tu_run_stream(e, in, frames, out, cap, fb, TU_RANDOM(70000, 7),
                               TU_RANDOM(90000, 8), &produced);
    bad = bad || TU_CHECK(produced == frames, "%s: %zu frames out of %zu", label, produced, frames);
    if (!bad && recs && cfg->hist)
        bad = tu_recs_drain(recs, e, cfg->hist->bins);
    if (bad) {
        gf_engine_destroy(e);
        free(out);
        return NULL;
    }
    if (keep)
        *keep = e;
    else
        gf_engine_destroy(e);
    return out;
}

/* cpu alone, and cpu handing off to the target: equal bytes and records;
 * the hand-off happened (backend, frame) for a stream long enough. */
static int same_as_cpu(const char *label, gf_config c, size_t frames, uint64_t seed)
{
    const size_t ss = tu_sample_size(c.precision), n = frames * (size_t)c.channels;
    void *in = malloc(n * ss);
    if (!in)
        return TU_FAIL("%s: out of memory", label);
    tu_fill_signal(in, n, ss, seed);
    tu_recs want = {0}, got = {0};
    gf_engine *e = NULL;
    c.device = GF_DEVICE_CPU;
    void *a = run(label, &c, in, frames, &want, NULL);
    c.handoff = g_target;
    void *b = a ? run(label, &c, in, frames, &got, &e) : NULL;
    int bad = !a || !b;
    if (!bad) {
        bad += tu_compare(label, a, b, n, ss, c.channels);
        bad += tu_recs_compare(label, &want, &got);
        const int64_t at = gf_engine_handoff_frame(e);
        bad += TU_CHECK(at >= 0 && at < (int64_t)frames &&
                            at % (int64_t)gf_engine_chunk_frames(e) == 0,
                        "%s: handed off at frame %lld (chunks of %zu)", label, (long long)at,
                        gf_engine_chunk_frames(e));
        bad += TU_CHECK(strcmp(gf_engine_backend(e), tu_device_name(g_target)) == 0,
                        "%s: backend '%s' after the hand-off", label, gf_engine_backend(e));
        if (c.cuda_device_count > 1) { /* dealt to every GPU after the hand-off */
            uint64_t k0 = gf_engine_device_chunks(e, 0, NULL),
                     k1 = gf_engine_device_chunks(e, 1, NULL);
            bad += TU_CHECK(gf_engine_cuda_devices(e, NULL, 0) == c.cuda_device_count && k0 > 0 &&
                                k1 > 0,
                            "%s: chunks %llu and %llu on the two GPUs", label,
                            (unsigned long long)k0, (unsigned long long)k1);
        }
        printf("%s: handed off to %s at frame %lld of %zu\n", label, gf_engine_backend(e),
               (long long)gf_engine_handoff_frame(e), frames);
    }
    gf_engine_destroy(e);
    tu_recs_free(&want);
    tu_recs_free(&got);
    free(a);
    free(b);
    free(in);
    return bad;
}

static int test_direct(void)
{
    double taps[255];
    tu_fill_taps(taps, 255, 3);
    /* Long enough that the target's set-up (a CUDA context: tenths of a
     * second) ends mid-stream. */
    const size_t frames = g_target == GF_DEVICE_CUDA ? (size_t)1 << 24 : (size_t)1 << 21;
    gf_config c = tu_config(2, 255, taps, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
    c.chunk_frames = 1 << 16;
    int bad = same_as_cpu("f32, 255 taps, same", c, frames, 11);
    c = tu_config(3, 31, NULL, GF_MODE_CAUSAL, GF_PRECISION_F64, GF_DEVICE_CPU);
    c.chunk_frames = 5000;
    bad += same_as_cpu("f64, 31-tap mean, causal", c, frames / 4, 12);
    if (g_target == GF_DEVICE_CUDA) { /* to several GPUs: two instances on GPU 0 */
        static const int two[2] = {0, 0};
        c = tu_config(2, 255, taps, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
        c.chunk_frames = 1 << 16;
        c.cuda_devices = two;
        c.cuda_device_count = 2;
        bad += same_as_cpu("f32, 255 taps, same, to GPUs {0, 0}", c, frames, 14);
    }
    return bad;
}

static int test_histograms(void)
{
    const gf_hist_config h = {.bins = 64, .block_frames = 48000, .lo = -1, .hi = 1};
    gf_config c = tu_config(2, 63, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
    c.hist = &h;
    c.chunk_frames = 1 << 15;
    return same_as_cpu("f32, 63 taps, histograms", c, (size_t)1 << 21, 13);
}

/* The FFT method stays on its backend, and says so. */
static int test_fft_stays(void)
{
    gf_config c = tu_config(1, 4095, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CPU);
    c.method = GF_METHOD_FFT;
    c.handoff = g_target;
    gf_engine *e = NULL;
    int bad = tu_create("fft", &c, &e);
    if (bad)
        return bad;
    bad += TU_CHECK(gf_engine_handoff_frame(e) == -1, "fft: hand-off frame %lld",
                    (long long)gf_engine_handoff_frame(e));
    bad += TU_CHECK(strstr(gf_engine_handoff_error(e), "needs the direct method") != NULL,
                    "fft: hand-off error '%s'", gf_engine_handoff_error(e));
    gf_engine_destroy(e);
    return bad;
}

static int expect_invalid(const char *label, const gf_config *c, const char *needle)
{
    gf_engine *e = (gf_engine *)&e;
    char detail[256] = "";
    const gf_status st = gf_engine_create(c, &e, detail, sizeof detail);
    int bad = TU_CHECK(st == GF_ERR_INVALID_ARGUMENT && e == NULL, "%s: status %d", label, st);
    bad += TU_CHECK(strstr(detail, needle) != NULL, "%s: detail '%s'", label, detail);
    if (st == GF_OK)
        gf_engine_destroy(e);
    return bad;
}

static int test_config(void)
{
    gf_config c = tu_config(1, 5, NULL, GF_MODE_SAME, GF_PRECISION_F32, GF_DEVICE_CUDA);
    c.handoff = GF_DEVICE_CUDA;
    int bad = expect_invalid("hand-off from cuda", &c,
                             "a hand-off starts on the cpu or ref device, not device 2");
    c.device = GF_DEVICE_CPU;
    c.handoff = (gf_device)9;
    bad += expect_invalid("hand-off device 9", &c, "unknown hand-off device 9");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "ref") != 0 && strcmp(argv[1], "cuda") != 0)) {
        fprintf(stderr, "usage: test_handoff ref|cuda\n");
        return 2;
    }
    g_target = strcmp(argv[1], "cuda") == 0 ? GF_DEVICE_CUDA : GF_DEVICE_REF;
    if (g_target == GF_DEVICE_CUDA && !gf_cuda_available()) {
        printf("test_handoff: no usable CUDA device: skipped\n");
        return 77;
    }
    const tu_step steps[] = {test_config, test_fft_stays, test_direct, test_histograms};
    return tu_run_steps("test_handoff", "cpu and hand-off give the same bytes", steps,
                        sizeof steps / sizeof steps[0]);
}
