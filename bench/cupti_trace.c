/*
 * A GPU activity trace without Nsight Systems: loaded into any program
 * with LD_PRELOAD, it records every kernel and every copy (host to device,
 * device to host, device to device, peer) through CUPTI's activity API
 * and writes them, one line each, when the program exits:
 *
 *   GPUFILT_TRACE=trace.csv LD_PRELOAD=build/bench/libgpufilt_trace.so prog ...
 *   bench/timeline.py trace.csv
 *
 * Columns: device, stream, kind (K kernel, U upload, D download, C copy on
 * one device, P peer), start and end (ns, CUPTI's clock), bytes (copies),
 * and the kernel's name. Collection starts when the library is loaded, so
 * it sees everything the program does on its GPUs; records are buffered
 * and written only at exit, so the program's timing is barely touched.
 * Errors are printed to stderr and the program runs on untraced.
 */
#include <cupti.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_BYTES (8u << 20)

static FILE *out;

static void warn(const char *what, CUptiResult r)
{
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    fprintf(stderr, "gpufilt trace: %s: %s\n", what, msg);
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

static char copy_letter(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return 'U';
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return 'D';
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return 'P';
    default:
        return 'C';
    }
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    while (out && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            fprintf(out, "%u,%u,K,%llu,%llu,0,%s\n", k->deviceId, k->streamId,
                    (unsigned long long)k->start, (unsigned long long)k->end,
                    k->name ? k->name : "");
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            fprintf(out, "%u,%u,%c,%llu,%llu,%llu,\n", m->deviceId, m->streamId,
                    copy_letter(m->copyKind), (unsigned long long)m->start,
                    (unsigned long long)m->end, (unsigned long long)m->bytes);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
            const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
            fprintf(out, "%u,%u,P,%llu,%llu,%llu,\n", m->deviceId, m->streamId,
                    (unsigned long long)m->start, (unsigned long long)m->end,
                    (unsigned long long)m->bytes);
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        fprintf(stderr, "gpufilt trace: %zu records dropped\n", dropped);
    free(buffer);
}

static void stop(void)
{
    if (!out)
        return;
    const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS)
        warn("cannot flush activity records", r);
    fclose(out);
    out = NULL;
}

__attribute__((constructor)) static void start(void)
{
    const char *path = getenv("GPUFILT_TRACE");
    if (!path || !*path)
        return;
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        return;
    }
    fprintf(out, "device,stream,kind,start,end,bytes,name\n");
    CUptiResult r = cuptiActivityRegisterCallbacks(requested, completed);
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2};
    for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++)
        r = cuptiActivityEnable(kinds[i]);
    if (r != CUPTI_SUCCESS) {
        warn("cannot enable activity records", r);
        fclose(out);
        out = NULL;
        return;
    }
    atexit(stop); /* as CUPTI's injection sample does: before the libraries unload */
}
