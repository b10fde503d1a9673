/*
 * The registry: every backend the library knows, in one table. The engine
 * (which backend runs a device kind, which one GF_DEVICE_AUTO picks, where a
 * hand-off goes), gf_config_check (which device kinds exist), gf_version
 * (the backends built in) and gf_backend_available read it; nothing else
 * names a backend. PortAudio's paHostApiInitializers[] is the model.
 *
 * The registry names the device kinds: gf_device_name, gf_device_from_name
 * and gf_device_kinds answer from it, so the command line, the reports and
 * the error messages spell a kind as its line here does.
 *
 * A backend is one file defining a gf_backend_ops (backend.h: its name,
 * device kind, slots, methods per precision, histograms, availability
 * probe and functions) and one line here. A kind this build lacks keeps its
 * line with ops NULL, so that asking for it says what is missing rather
 * than "unknown device".
 */
#include "backend.h"

#include <string.h>

extern const gf_backend_ops gf_backend_ref;
extern const gf_backend_ops gf_backend_cpu;
#ifdef GPUFILT_HAVE_CUDA
/* The CUDA backend is a module, loaded when first asked for (gf_cuda.h). */
#include "gf_cuda.h"
#define GF_BACKEND_CUDA_LOAD gf_cuda_backend_load
#else
#define GF_BACKEND_CUDA_LOAD NULL
#endif

/* The cost models come from measurements of each backend (bench/NOTES.md,
 * "Long filters"); method.c says what they mean. The partition cap: on
 * cuda 2^19, since 2^22 taps took 9.04 ms of device time at P = 2^19
 * against 10.18 at 2^18 and 11.87 at 2^20 (one H200, 2^27 samples); on
 * the CPU 2^18, where a 10-minute stereo file took 1.16-1.20 s at 2^22
 * taps against 1.35-1.40 at 2^19 and 1.81-1.84 at 2^17 (2 cores). */
static const gf_backend_entry registry[] = {
    {GF_DEVICE_REF,
     "ref",
     "this gpufilt was built without the ref backend",
     {.a = 8, .b = 10, .f = 0, .floor_t = 0, .k0 = 4, .max_p = 1 << 18, .direct_only = 1},
     &gf_backend_ref,
     NULL},
    {GF_DEVICE_CPU,
     "cpu",
     "this gpufilt was built without the cpu backend",
     {.a = 8, .b = 10, .f = 0, .floor_t = 0, .k0 = 8, .max_p = 1 << 18},
     &gf_backend_cpu,
     NULL},
    {GF_DEVICE_CUDA,
     "cuda",
     "this gpufilt was built without CUDA",
     {.a = 24, .b = 8, .f = 64, .floor_t = 1024, .k0 = 8, .max_p = 1 << 19},
     NULL,
     GF_BACKEND_CUDA_LOAD},
};

const gf_backend_entry *gf_backends(size_t *count)
{
    *count = sizeof registry / sizeof registry[0];
    return registry;
}

const gf_backend_entry *gf_backend_entry_of(gf_device device)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (registry[i].device == device)
            return &registry[i];
    return NULL;
}

const gf_backend_ops *gf_backend_entry_ops(const gf_backend_entry *b, const char **why)
{
    if (b->ops)
        return b->ops;
    const char *reason = b->absent;
    const gf_backend_ops *o = b->load ? b->load(&reason) : NULL;
    if (!o && why)
        *why = reason;
    return o;
}

const gf_backend_ops *gf_backend_of(gf_device device)
{
    const gf_backend_entry *b = gf_backend_entry_of(device);
    return b ? gf_backend_entry_ops(b, NULL) : NULL;
}

const gf_backend_ops *gf_backend_auto(void)
{
    const gf_backend_ops *best = NULL;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        const gf_backend_ops *o = gf_backend_entry_ops(&registry[i], NULL);
        if (o && o->auto_rank > 0 && (!best || o->auto_rank > best->auto_rank) && o->available())
            best = o;
    }
    return best;
}

int gf_backend_built(gf_device device)
{
    return gf_backend_of(device) != NULL;
}

int gf_backend_available(gf_device device)
{
    const gf_backend_ops *o = gf_backend_of(device);
    return o && o->available() ? 1 : 0;
}

const char *gf_device_name(gf_device device)
{
    if (device == GF_DEVICE_AUTO)
        return "auto";
    if (device == GF_DEVICE_NONE)
        return "none";
    const gf_backend_entry *b = gf_backend_entry_of(device);
    return b ? b->name : NULL;
}

gf_status gf_device_from_name(const char *name, gf_device *out)
{
    if (!name || !out)
        return GF_ERR_INVALID_ARGUMENT;
    gf_device d = GF_DEVICE_NONE;
    if (strcmp(name, "auto") == 0)
        d = GF_DEVICE_AUTO;
    else if (strcmp(name, "none") != 0) {
        const gf_backend_entry *b = NULL;
        for (size_t i = 0; i < sizeof registry / sizeof registry[0] && !b; i++)
            if (strcmp(name, registry[i].name) == 0)
                b = &registry[i];
        if (!b)
            return GF_ERR_INVALID_ARGUMENT;
        d = b->device;
    }
    *out = d;
    return GF_OK;
}

/* In ascending gf_device value, not in the table's order (which is
 * gf_version's): the order stays the same whatever the table's layout, and
 * a new kind, with the next value, comes last. */
size_t gf_device_kinds(gf_device *out, size_t cap)
{
    size_t count = 0;
    const gf_backend_entry *last = NULL;
    for (;;) {
        const gf_backend_entry *next = NULL;
        for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
            if ((!last || registry[i].device > last->device) &&
                (!next || registry[i].device < next->device))
                next = &registry[i];
        if (!next)
            return count;
        if (out && count < cap)
            out[count] = next->device;
        count++;
        last = next;
    }
}
