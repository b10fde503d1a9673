/* Callbacks shared by backends that finish every chunk inside submit. */
#include "backend.h"

#include <stdlib.h>

int gf_sync_available(void)
{
    return 1; /* the CPU is always there */
}

void *gf_sync_host_alloc(void *state, size_t bytes)
{
    (void)state;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0)
        return NULL;
    return p;
}

void gf_sync_host_free(void *state, void *p)
{
    (void)state;
    free(p);
}

int gf_sync_direct_ok(void *state, const void *p, size_t bytes)
{
    (void)state;
    (void)p;
    (void)bytes;
    return 1;
}

gf_status gf_sync_query(void *state, int slot, int *done)
{
    (void)state;
    (void)slot;
    *done = 1;
    return GF_OK;
}

gf_status gf_sync_wait(void *state, int slot)
{
    (void)state;
    (void)slot;
    return GF_OK;
}

const char *gf_sync_error(void *state)
{
    (void)state;
    return "";
}
