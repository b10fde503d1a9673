/*
 * Loading the CUDA module, libgpufilt-cuda.so (gf_cuda.h), on first use:
 * the CUDA backend and everything that needs the CUDA runtime or cuFFT
 * live there, so libgpufilt itself needs neither and one build serves
 * machines with and without them. PortAudio's host APIs and FFmpeg's
 * dynamically loaded NVIDIA headers are the models.
 *
 * Where the module is looked for, first found wins:
 *   1. $GPUFILT_CUDA_MODULE, a file name: that file and no other;
 *   2. the folder of the object holding this code (libgpufilt.so, or a
 *      program linked with libgpufilt.a), found with dladdr;
 *   3. the dynamic loader's search from here: this object's RUNPATH (an
 *      installed gpufilt's $ORIGIN/../lib, a build tree's top folder),
 *      LD_LIBRARY_PATH, the loader's cache;
 *   4. the library folder of the installation this was configured for.
 * A module that is found but fails to load (cuFFT missing, another
 * version's module) is reported, not passed over.
 */
#define _GNU_SOURCE /* dladdr */
#include "gf_cuda.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const gf_cuda_module *module;
static char why[512];

/* why = "the CUDA module PATH could not be loaded: REASON", without the
 * "PATH: " dlerror puts in front of its own message. */
static void failed(const char *path, const char *reason)
{
    const size_t n = strlen(path);
    if (!reason)
        reason = "unknown error";
    if (strncmp(reason, path, n) == 0 && strncmp(reason + n, ": ", 2) == 0)
        reason += n + 2;
    /* (a path of PATH_MAX would not fit: the message keeps its first 300) */
    snprintf(why, sizeof why, "the CUDA module %.300s could not be loaded: %s", path, reason);
}

/* The module in handle h, opened from path, if it is one of ours. */
static void adopt(void *h, const char *path)
{
    const gf_cuda_module *(*entry)(void) = NULL;
    void *sym = dlsym(h, GF_CUDA_MODULE_SYMBOL);
    if (!sym) {
        failed(path, "it has no " GF_CUDA_MODULE_SYMBOL);
        dlclose(h);
        return;
    }
    memcpy(&entry, &sym, sizeof entry); /* POSIX: dlsym's object pointer is the function */
    const gf_cuda_module *m = entry();
    if (!m || m->interface != GF_CUDA_MODULE_INTERFACE || m->ops_size != sizeof(gf_backend_ops) ||
        m->params_size != sizeof(gf_backend_params)) {
        char reason[128];
        snprintf(reason, sizeof reason, "it was built for interface %d, this library needs %d",
                 m ? m->interface : -1, GF_CUDA_MODULE_INTERFACE);
        failed(path, reason);
        dlclose(h);
        return;
    }
    module = m; /* kept loaded for the life of the process */
}

static void open_path(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h)
        adopt(h, path);
    else
        failed(path, dlerror());
}

/* path = the folder of the object holding this code + "/" + file; 0 when
 * it cannot be known (a program run by a bare name from $PATH). */
static int beside_self(char *path, size_t n)
{
    Dl_info info;
    if (!dladdr(&module, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return 0;
    const int len = snprintf(path, n, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                             GF_CUDA_MODULE_FILE);
    return len > 0 && (size_t)len < n;
}

static void load(void)
{
    const char *env = getenv("GPUFILT_CUDA_MODULE");
    if (env && *env) {
        open_path(env);
        return;
    }
    char path[PATH_MAX];
    if (beside_self(path, sizeof path) && access(path, F_OK) == 0) {
        open_path(path);
        return;
    }
    void *h = dlopen(GF_CUDA_MODULE_FILE, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        adopt(h, GF_CUDA_MODULE_FILE);
        return;
    }
    /* Not found, or found and broken (then the message names another file,
     * or comes after the module's name without "cannot open"). */
    const char *err = dlerror();
    static const char not_found[] = GF_CUDA_MODULE_FILE ": cannot open shared object file";
    if (err && strncmp(err, not_found, sizeof not_found - 1) != 0) {
        failed(GF_CUDA_MODULE_FILE, err);
        return;
    }
#ifdef GPUFILT_INSTALL_LIBDIR
    snprintf(path, sizeof path, "%s/%s", GPUFILT_INSTALL_LIBDIR, GF_CUDA_MODULE_FILE);
    if (access(path, F_OK) == 0) {
        open_path(path);
        return;
    }
#endif
    snprintf(why, sizeof why, "the CUDA module %s is not installed", GF_CUDA_MODULE_FILE);
}

const gf_cuda_module *gf_cuda_module_load(const char **reason)
{
    pthread_once(&load_once, load);
    if (!module && reason)
        *reason = why;
    return module;
}

const gf_backend_ops *gf_cuda_backend_load(const char **reason)
{
    const gf_cuda_module *m = gf_cuda_module_load(reason);
    return m ? m->ops : NULL;
}
