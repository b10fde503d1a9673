/* Status messages, the version string and failure details: no state. */
#include "backends/backend.h"

#include <stdarg.h>
#include <stdio.h>

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
    }
    return "unknown status";
}

#define GF_STR2(x) #x
#define GF_STR(x)  GF_STR2(x)
const char *gf_version(void)
{
    return GF_STR(GPUFILT_VERSION_MAJOR) "." GF_STR(GPUFILT_VERSION_MINOR) "." GF_STR(
        GPUFILT_VERSION_PATCH)
#ifdef GPUFILT_HAVE_CUDA
        " (ref, cpu, cuda)";
#else
        " (ref, cpu)";
#endif
}
