/*
 * The CUDA module (libgpufilt-cuda.so), as libgpufilt finds and loads it:
 *
 *   test_cuda_module found           the build tree's module, through the
 *                                    test's RUNPATH: the backend is built,
 *                                    "cuda" is in gf_version; without a GPU
 *                                    --device cuda says "no usable CUDA
 *                                    device", with one it filters exactly
 *   test_cuda_module missing PATH    GPUFILT_CUDA_MODULE=PATH (no file)
 *   test_cuda_module foreign PATH    GPUFILT_CUDA_MODULE=PATH (a shared
 *                                    object that is not the module)
 *   test_cuda_module none LIBDIR     no module anywhere (built without the
 *                                    RUNPATH; skipped where LIBDIR holds an
 *                                    installed one)
 *   test_cuda_module off             a build without CUDA
 *
 * In every case but "found" the CUDA backend is absent with a one-line
 * reason, GF_DEVICE_AUTO runs on the cpu and the public queries say no
 * device. Each case is its own process: the module is loaded once.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Frames 1, 2, 3, 4 through h = {1, 2}, causal: exactly 1, 4, 7, 10. */
/* On `device`; the engine must run on `expect`. */
static int filter_exact(const char *what, gf_device device, gf_device expect)
{
    const double taps[] = {1, 2};
    const float in[] = {1, 2, 3, 4}, want[] = {1, 4, 7, 10};
    float out[64] = {0};
    gf_config c = gf_config_default();
    c.channels = 1;
    c.num_taps = 2;
    c.taps = taps;
    c.mode = GF_MODE_CAUSAL;
    c.precision = GF_PRECISION_F32;
    c.device = device;
    gf_engine *e = NULL;
    if (tu_create(what, &c, &e))
        return 1;
    size_t got = 0, more = 0;
    int bad = 0;
    gf_status st = gf_engine_process(e, in, 4, out, &got);
    bad += TU_CHECK(st == GF_OK, "%s: process: %s", what, gf_strerror(st));
    st = gf_engine_flush(e);
    bad += TU_CHECK(st == GF_OK, "%s: flush: %s", what, gf_strerror(st));
    st = gf_engine_pull(e, out + got, sizeof out / sizeof out[0] - got, &more);
    bad += TU_CHECK(st == GF_OK, "%s: pull: %s", what, gf_strerror(st));
    bad += TU_CHECK(got + more == 4, "%s: %zu frames out of 4", what, got + more);
    bad += TU_CHECK(memcmp(out, want, sizeof want) == 0, "%s: %g %g %g %g, not 1 4 7 10", what,
                    out[0], out[1], out[2], out[3]);
    bad += TU_CHECK(gf_engine_device(e) == expect, "%s: device %d, not %d", what,
                    (int)gf_engine_device(e), (int)expect);
    gf_engine_destroy(e);
    return bad;
}

/* --device cuda refused with exactly `reason`, GF_ERR_NO_DEVICE. */
static int cuda_refused(const char *what, const char *reason)
{
    const double taps[] = {1, 2};
    gf_config c = gf_config_default();
    c.channels = 1;
    c.num_taps = 2;
    c.taps = taps;
    c.device = GF_DEVICE_CUDA;
    gf_engine *e = (gf_engine *)&c;
    char detail[512];
    const gf_status st = gf_engine_create(&c, &e, detail, sizeof detail);
    int bad = 0;
    bad += TU_CHECK(st == GF_ERR_NO_DEVICE, "%s: status %d (%s), not no device", what, (int)st,
                    gf_strerror(st));
    bad += TU_CHECK(e == NULL, "%s: *out not NULL", what);
    if (st != GF_OK)
        bad += TU_CHECK(strcmp(detail, reason) == 0, "%s: detail\n  '%s', not\n  '%s'", what,
                        detail, reason);
    if (st == GF_OK)
        gf_engine_destroy(e);
    return bad;
}

/* The backend absent for `reason`: every query says so, auto runs on the cpu. */
static int absent(const char *what, const char *reason)
{
    int bad = 0, count = -1;
    bad += TU_CHECK(gf_backend_built(GF_DEVICE_CUDA) == 0, "%s: gf_backend_built(cuda) = 1", what);
    bad += TU_CHECK(gf_backend_available(GF_DEVICE_CUDA) == 0, "%s: cuda available", what);
    bad += TU_CHECK(gf_cuda_available() == 0, "%s: gf_cuda_available() = 1", what);
    bad += TU_CHECK(gf_cuda_device_count(&count) == GF_OK && count == 0, "%s: %d devices", what,
                    count);
    bad += TU_CHECK(strstr(gf_version(), "cuda") == NULL, "%s: version '%s' lists cuda", what,
                    gf_version());
    bad += TU_CHECK(strstr(gf_version(), "(ref, cpu)") != NULL, "%s: version '%s'", what,
                    gf_version());
    /* Host memory is plain, and still works. */
    unsigned char *p = gf_host_alloc(100);
    bad += TU_CHECK(p != NULL && ((size_t)p & 63) == 0, "%s: gf_host_alloc(100) = %p", what,
                    (void *)p);
    if (p) {
        memset(p, 7, 100);
        bad += TU_CHECK(gf_host_register(p, 100, NULL, 0) == GF_OK,
                        "%s: gf_host_register is not a no-op", what);
        gf_host_unregister(p);
        gf_host_free(p);
    }
    bad += cuda_refused(what, reason);
    bad += filter_exact(what, GF_DEVICE_AUTO, GF_DEVICE_CPU);
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    char reason[1024];
    int bad = 0;
    if (strcmp(mode, "found") == 0) {
        bad += TU_CHECK(gf_backend_built(GF_DEVICE_CUDA) == 1, "found: the module was not loaded");
        bad += TU_CHECK(strstr(gf_version(), "(ref, cpu, cuda)") != NULL, "found: version '%s'",
                        gf_version());
        if (gf_backend_available(GF_DEVICE_CUDA)) {
            int count = 0;
            bad += TU_CHECK(gf_cuda_device_count(&count) == GF_OK && count > 0,
                            "found: available, but %d devices", count);
            bad += filter_exact("found, on the GPU", GF_DEVICE_CUDA, GF_DEVICE_CUDA);
        } else {
            bad += cuda_refused("found, no GPU", "no usable CUDA device");
            bad += filter_exact("found, no GPU, auto", GF_DEVICE_AUTO, GF_DEVICE_CPU);
        }
    } else if (strcmp(mode, "missing") == 0 && argc == 3) {
        snprintf(reason, sizeof reason,
                 "the CUDA module %s could not be loaded: cannot open shared object file: No such "
                 "file or directory",
                 argv[2]);
        bad += absent("missing", reason);
    } else if (strcmp(mode, "foreign") == 0 && argc == 3) {
        snprintf(reason, sizeof reason,
                 "the CUDA module %s could not be loaded: it has no gf_cuda_module_entry", argv[2]);
        bad += absent("foreign", reason);
    } else if (strcmp(mode, "none") == 0 && argc == 3) {
        snprintf(reason, sizeof reason, "%s/libgpufilt-cuda.so", argv[2]);
        if (access(reason, F_OK) == 0) {
            printf("test_cuda_module: SKIP: %s is installed\n", reason);
            return 77;
        }
        bad += absent("none", "the CUDA module libgpufilt-cuda.so is not installed");
    } else if (strcmp(mode, "off") == 0) {
        bad += absent("off", "this gpufilt was built without CUDA");
    } else {
        fprintf(stderr, "usage: test_cuda_module found | missing PATH | foreign PATH | none LIBDIR "
                        "| off\n");
        return 2;
    }
    printf("test_cuda_module %s: %s\n", mode, bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}
