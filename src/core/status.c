/* Status messages, the version string (with the registry's backends) and
 * failure details. */
#include "backends/backend.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gf_detail(char *detail, size_t size, const char *fmt, ...)
{
    if (!detail || size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, size, fmt, ap);
    va_end(ap);
}

const char *gf_strerror(gf_status status)
{
    switch (status) {
    case GF_OK:
        return "success";
    case GF_ERR_INVALID_ARGUMENT:
        return "invalid argument";
    case GF_ERR_NO_MEMORY:
        return "out of memory";
    case GF_ERR_NO_DEVICE:
        return "no usable CUDA device";
    case GF_ERR_CUDA:
        return "CUDA error";
    case GF_ERR_STATE:
        return "call not allowed in the engine's current state";
    case GF_ERR_THREAD:
        return "cannot start worker thread";
    case GF_ERR_UNSUPPORTED:
        return "not supported";
    case GF_NO_RECORD:
        return "no histogram record ready";
    }
    return "unknown status";
}

#define GF_STR2(x) #x
#define GF_STR(x)  GF_STR2(x)
static char version[128];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

/* "MAJOR.MINOR.PATCH (name, name, ...)": the backends of this build, in
 * the registry's order. */
static void make_version(void)
{
    size_t count, len;
    const gf_backend_entry *b = gf_backends(&count);
    len = (size_t)snprintf(version, sizeof version, "%s (",
                           GF_STR(GPUFILT_VERSION_MAJOR) "." GF_STR(
                               GPUFILT_VERSION_MINOR) "." GF_STR(GPUFILT_VERSION_PATCH));
    const char *sep = "";
    for (size_t i = 0; i < count && len < sizeof version; i++) {
        const gf_backend_ops *o = gf_backend_entry_ops(&b[i], NULL); /* a module: if it loads */
        if (!o)
            continue;
        len += (size_t)snprintf(version + len, sizeof version - len, "%s%s", sep, o->name);
        sep = ", ";
    }
    if (len < sizeof version)
        snprintf(version + len, sizeof version - len, ")");
}

const char *gf_version(void)
{
    pthread_once(&version_once, make_version);
    return version;
}
