/*
 * gf_host_alloc / gf_host_free, gf_host_register / gf_host_unregister,
 * gf_cuda_available and the CUDA device
 * queries: the public entry points that work with or without CUDA compiled
 * in, and with or without the CUDA module (gf_cuda.h) on this machine.
 *
 * Each block starts with a 64-byte header recording how it was allocated,
 * so gf_host_free needs no lookup and the user's pointer stays 64-byte
 * aligned.
 */
#include "gpufilt.h"

#include "backends/backend.h"
#include "gf_cuda.h" /* the module's interface: plain C, no CUDA */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_HEADER 64
enum { HOST_PLAIN = 0x67667031, HOST_PINNED = 0x67667032 };

/* The CUDA module, or NULL when this build or this machine has none. */
static const gf_cuda_module *cuda(void)
{
#ifdef GPUFILT_HAVE_CUDA
    return gf_cuda_module_load(NULL);
#else
    return NULL;
#endif
}

int gf_cuda_available(void)
{
    return gf_backend_available(GF_DEVICE_CUDA);
}

gf_status gf_cuda_device_count(int *count)
{
    if (!count)
        return GF_ERR_INVALID_ARGUMENT;
    const gf_cuda_module *m = cuda();
    *count = m ? m->count() : 0;
    return GF_OK;
}

gf_status gf_cuda_device_info(int index, gf_cuda_device *info)
{
    if (!info)
        return GF_ERR_INVALID_ARGUMENT;
    memset(info, 0, sizeof *info);
    int count = 0;
    gf_cuda_device_count(&count);
    if (index < 0 || index >= count)
        return GF_ERR_NO_DEVICE;
    const gf_status st = cuda()->describe(index, info); /* a device is counted: a module */
    if (st != GF_OK)
        memset(info, 0, sizeof *info);
    return st;
}

void *gf_host_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - HOST_HEADER)
        return NULL;
    unsigned char *p = NULL;
    uint32_t kind = HOST_PLAIN;
    const gf_cuda_module *m = cuda();
    if (m && m->probe()) {
        p = m->pinned_alloc(bytes + HOST_HEADER);
        kind = HOST_PINNED;
    }
    if (!p) {
        void *q = NULL;
        if (posix_memalign(&q, HOST_HEADER, bytes + HOST_HEADER) != 0)
            return NULL;
        p = q;
        kind = HOST_PLAIN;
    }
    *(uint32_t *)p = kind;
    return p + HOST_HEADER;
}

void gf_host_free(void *user)
{
    if (!user)
        return;
    unsigned char *p = (unsigned char *)user - HOST_HEADER;
    if (*(uint32_t *)p == HOST_PINNED) { /* only where the module allocated it */
        cuda()->pinned_free(p);
        return;
    }
    free(p);
}

gf_status gf_host_register(void *p, size_t bytes, char *detail, size_t detail_len)
{
    char why[256] = "";
    if (!p || !bytes)
        return GF_ERR_INVALID_ARGUMENT;
    const gf_cuda_module *m = cuda();
    const gf_status st = m && m->probe() ? m->host_register(p, bytes, why, sizeof why) : GF_OK;
    if (detail && detail_len)
        snprintf(detail, detail_len, "%s", why);
    return st;
}

void gf_host_unregister(void *p)
{
    const gf_cuda_module *m = cuda();
    if (p && m && m->probe())
        m->host_unregister(p);
}

size_t gf_host_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kib = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    if (f)
        fclose(f);
    if (found)
        return kib > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kib * 1024;
#ifdef _SC_AVPHYS_PAGES
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        return (size_t)pages * (size_t)page;
#endif
    return SIZE_MAX;
}
