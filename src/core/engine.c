/*
 * The engine's lifecycle: gf_engine_create in its steps (taps, backend,
 * method, chunks, backend state, buffers, hand-off), gf_engine_destroy and
 * gf_engine_reset, and the calls that reach the backend of a slot's chunk.
 * engine_internal.h describes the engine as a whole.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The backend of slot s's chunk. */
gf_status gf_eng_submit(gf_engine *e, int s, const gf_chunk *c)
{
    e->err_owner = e->owner[s];
    if ((e->owner[s] ? e->handoff_ops : e->ops)->device == GF_DEVICE_CUDA || e->multi_cpu) {
        /* by time the slot's device; by channel every device, its channels */
        const int all = !e->owner[s] && e->split == GF_SPLIT_CHANNELS;
        const int d0 = all ? 0 : s % e->ndev, d1 = all ? e->ndev : d0 + 1;
        for (int d = d0; d < d1; d++) {
            e->dev_chunks[d]++;
            e->dev_frames[d] += c->frames;
        }
    }
    return e->owner[s] ? e->handoff_ops->submit(e->handoff_backend, s, c)
                       : e->ops->submit(e->backend, s, c);
}

gf_status gf_eng_query(gf_engine *e, int s, int *done)
{
    e->err_owner = e->owner[s];
    return e->owner[s] ? e->handoff_ops->query(e->handoff_backend, s, done)
                       : e->ops->query(e->backend, s, done);
}

gf_status gf_eng_wait(gf_engine *e, int s)
{
    e->err_owner = e->owner[s];
    return e->owner[s] ? e->handoff_ops->wait(e->handoff_backend, s) : e->ops->wait(e->backend, s);
}

gf_status gf_eng_fail(gf_engine *e, gf_status st)
{
    e->failed = st;
    snprintf(e->err, sizeof e->err, "%s",
             e->err_owner ? e->handoff_ops->error(e->handoff_backend) : e->ops->error(e->backend));
    return st;
}

/* Step 1: the config's plain facts, and the taps rounded to the precision;
 * the mean filter's 1/T is a correctly rounded division in that precision. */
static gf_status take_taps(gf_engine *e, const gf_config *c, char *detail, size_t n)
{
    e->cfg = *c;
    e->cfg.taps = NULL;
    e->cfg.hist = NULL;
    e->channels = (size_t)c->channels;
    e->out_channels = c->outputs ? (size_t)c->outputs : e->channels;
    e->num_taps = c->num_taps;
    e->filters = c->outputs ? e->channels * e->out_channels : c->taps_per_channel ? e->channels : 1;
    e->sample_bytes = c->precision == GF_PRECISION_F32 ? sizeof(float) : sizeof(double);
    e->latency = c->mode == GF_MODE_SAME ? (e->num_taps - 1) / 2 : 0;
    e->handoff_frame = -1;
    /* The CUDA devices: the list, or cuda_device alone. For tests without
     * a GPU, GPUFILT_CPU_INSTANCES=N (2 .. GF_MAX_DEVICES) with the cpu
     * device named runs N cpu instances by time through multi.c, as N GPUs
     * would be (the bytes must be one instance's). */
    e->ndev = c->cuda_device_count > 0 ? c->cuda_device_count : 1;
    for (int d = 0; d < e->ndev; d++)
        e->devices[d] = c->cuda_device_count > 0 ? c->cuda_devices[d] : c->cuda_device;
    const char *inst = getenv("GPUFILT_CPU_INSTANCES");
    if (inst && c->device == GF_DEVICE_CPU && c->cuda_device_count == 0) {
        const int k = atoi(inst);
        if (k >= 2 && k <= GF_MAX_DEVICES) {
            e->ndev = k;
            for (int d = 0; d < k; d++)
                e->devices[d] = d;
            e->multi_cpu = 1;
        }
    }
    const char *seg = getenv("GPUFILT_SEGMENTS"); /* engine_bulk.c's segment_chunk */
    e->no_segments = seg && !strcmp(seg, "0");
    e->cfg.cuda_devices = c->cuda_device_count > 0 ? e->devices : NULL;
    e->taps_d = malloc(e->filters * e->num_taps * sizeof(double));
    e->taps = malloc(e->filters * e->num_taps * e->sample_bytes);
    if (!e->taps_d || !e->taps) {
        gf_detail(detail, n, "cannot allocate %zu taps", e->filters * e->num_taps);
        return GF_ERR_NO_MEMORY;
    }
    for (size_t k = 0; k < e->filters * e->num_taps; k++) {
        if (c->precision == GF_PRECISION_F32) {
            float h = c->taps ? (float)c->taps[k] : 1.0f / (float)e->num_taps;
            ((float *)e->taps)[k] = h;
            e->taps_d[k] = h;
        } else {
            double h = c->taps ? c->taps[k] : 1.0 / (double)e->num_taps;
            ((double *)e->taps)[k] = h;
            e->taps_d[k] = h;
        }
    }
    return GF_OK;
}

/* ops itself, or with several CUDA devices (or GPUFILT_CPU_INSTANCES) its
 * instances dealt chunks in turn (multi.c), in the table `multi`. */
static const gf_backend_ops *on_devices(gf_engine *e, const gf_backend_ops *ops,
                                        gf_backend_ops *multi)
{
    if (!ops || ops->device != (e->multi_cpu ? GF_DEVICE_CPU : GF_DEVICE_CUDA) || e->ndev == 1)
        return ops;
    e->multi_inner = ops;
    gf_multi_ops(ops, e->ndev, GF_SPLIT_TIME, multi); /* pick_method may choose channels */
    return multi;
}

/* Step 2: the backend, from the registry: the device kind's, or
 * GF_DEVICE_AUTO's choice. */
static gf_status pick_backend(gf_engine *e, const gf_config *c, char *detail, size_t n)
{
    if (c->device == GF_DEVICE_AUTO) {
        const gf_backend_ops *o = gf_backend_auto();
        /* A method asked for that the choice lacks: the fallback's, which
         * has every method. */
        const unsigned can = !o                                 ? 0
                             : c->precision == GF_PRECISION_F32 ? o->methods_f32
                                                                : o->methods_f64;
        if (c->method != GF_METHOD_AUTO && !(can & GF_METHOD_BIT(c->method)))
            o = gf_backend_of(GF_DEVICE_CPU);
        e->ops = on_devices(e, o, &e->multi_ops);
        return e->ops ? GF_OK : GF_ERR_NO_DEVICE; /* the cpu is always there */
    }
    const gf_backend_entry *b = gf_backend_entry_of(c->device); /* known: gf_config_check */
    const char *why = "";
    e->ops = on_devices(e, gf_backend_entry_ops(b, &why), &e->multi_ops);
    if (!e->ops) {
        gf_detail(detail, n, "%s", why);
        return GF_ERR_NO_DEVICE;
    }
    return GF_OK;
}

/* Step 3: the method and its framing: the config's, or the cost model's;
 * one the backend can run in the precision. Then the hand-off's backend,
 * if this build has it and the engine can hand over: the direct method,
 * from a backend that finishes chunks in submit (one slot). */
static gf_status pick_method(gf_engine *e, const gf_config *c, char *detail, size_t n)
{
    const unsigned can =
        c->precision == GF_PRECISION_F32 ? e->ops->methods_f32 : e->ops->methods_f64;
    e->method = c->method;
    if (c->outputs && e->method == GF_METHOD_AUTO) /* a matrix sums on spectra */
        e->method = GF_METHOD_FFT;
    if (e->method == GF_METHOD_AUTO) {
        e->method =
            gf_method_choose(e->num_taps, c->channels, c->precision, e->ops->device, c->partition);
        if (!(can & GF_METHOD_BIT(e->method)) && e->num_taps <= GF_MAX_TAPS)
            e->method = GF_METHOD_DIRECT;
    }
    e->mth = gf_method_ops_of(e->method);
    if (!(can & GF_METHOD_BIT(e->method))) {
        gf_detail(detail, n, "the %s backend of this build has no %s method in %s%s", e->ops->name,
                  e->mth->name, c->precision == GF_PRECISION_F32 ? "f32" : "f64",
                  e->num_taps > GF_MAX_TAPS ? " (needed beyond 8192 taps)" : "");
        return GF_ERR_UNSUPPORTED;
    }
    if (c->outputs && (e->method != GF_METHOD_FFT || !e->ops->matrix)) {
        if (e->method != GF_METHOD_FFT)
            gf_detail(detail, n, "a matrix (outputs %d) needs the FFT method, not the %s method",
                      c->outputs, e->mth->name);
        else
            gf_detail(detail, n, "the %s backend of this build has no matrix (outputs %d)",
                      e->ops->name, c->outputs);
        return GF_ERR_UNSUPPORTED;
    }
    if (e->ops == &e->multi_ops) { /* several devices: by time or by channel */
        /* (cpu instances have no channel window: by time) */
        e->split = e->multi_cpu ? GF_SPLIT_TIME
                                : gf_multi_split(e->method, c->channels, e->sample_bytes,
                                                 c->hist != NULL || c->outputs, e->ndev);
        gf_multi_ops(e->multi_inner, e->ndev, e->split, &e->multi_ops);
    }
    e->mth->frame(e, c->partition);
    e->cfg.method = e->method;
    e->cfg.partition = e->partition;
    if (e->method == GF_METHOD_DIRECT && e->ops->slots == 1)
        e->handoff_ops = on_devices(e, gf_backend_of(c->handoff), &e->multi_handoff_ops);
    e->nslots = e->handoff_ops && e->handoff_ops->slots > e->ops->slots ? e->handoff_ops->slots
                                                                        : e->ops->slots;
    e->zero_tail = e->ops->zero_tail && !e->handoff_ops; /* a hand-off reads the host's input */
    return GF_OK;
}

/* A multiple of quantum: rounded up or down, at least one quantum. */
static size_t round_to(size_t frames, size_t quantum, int up)
{
    const size_t whole =
        up ? (frames + quantum - 1) / quantum * quantum : frames / quantum * quantum;
    return whole < quantum ? quantum : whole;
}

/* Step 4: the chunk: the config's, or the backend's default (at least the
 * method's least); histograms may shorten it to bound their partials'
 * memory. */
static gf_status plan_chunks(gf_engine *e, const gf_config *config, char *detail, size_t n)
{
    e->chunk = config->chunk_frames;
    if (e->chunk == 0) {
        size_t samples = e->ops->chunk_samples;
        if (e->handoff_ops &&
            e->handoff_ops->chunk_samples > samples) /* the hand-off's: it does the most */
            samples = e->handoff_ops->chunk_samples;
        e->chunk = samples / (e->out_channels > e->channels ? e->out_channels : e->channels);
        if (e->chunk == 0)
            e->chunk = 1;
        if (e->chunk < e->min_chunk)
            e->chunk = e->min_chunk;
    }
    e->chunk = round_to(e->chunk, e->quantum, 1);
    if (config->hist) {
        e->hist_config = *config->hist;
        e->cfg.hist = &e->hist_config;
        gf_hist_plan_make(&e->hist_config, config->channels, e->nslots, &e->chunk, &e->hist_plan);
        if (e->quantum > 1) { /* a chunk holds whole blocks, whatever that costs */
            e->chunk = round_to(e->chunk, e->quantum, 0);
            e->hist_plan.max_segs = gf_hist_segs_for(e->chunk, e->hist_plan.block);
        }
        e->hist = gf_hist_state_create(&e->hist_plan);
        if (!e->hist) {
            gf_detail(detail, n, "cannot allocate histograms of %zu bins x %d records",
                      e->hist_plan.bins, e->hist_plan.nrec);
            return GF_ERR_NO_MEMORY;
        }
    }
    e->cfg.chunk_frames = e->chunk;
    e->cfg.device = e->ops->device;
    return GF_OK;
}

/* Step 5: the backend's state, with the parameters the hand-off's gets too. */
static gf_status start_backend(gf_engine *e, const gf_config *c, gf_backend_params *p, char *detail,
                               size_t n)
{
    *p = (gf_backend_params){
        .channels = c->channels,
        .num_taps = e->num_taps,
        .taps = e->taps,
        .taps_per_channel = c->taps_per_channel,
        .outputs = c->outputs,
        .method = e->method,
        .partition = e->partition,
        .max_partition = e->max_partition,
        .precision = c->precision,
        .chunk_frames = e->chunk,
        .threads = c->threads,
        .cuda_device = e->devices[0],
        .hist = e->hist ? &e->hist_plan : NULL,
    };
    if (e->ops == &e->multi_ops || e->handoff_ops == &e->multi_handoff_ops) {
        memcpy(p->cuda_devices, e->devices, sizeof e->devices);
        p->cuda_device_count = e->ndev;
        p->multi_inner = e->multi_inner;
        p->history_frames = e->mth->halo_primes ? e->halo_samples / e->channels : 0;
        p->split = e->ops == &e->multi_ops ? e->split : GF_SPLIT_TIME;
    }
    const gf_status st = e->ops->create(p, &e->backend, detail, n);
    if (st != GF_OK)
        e->backend = NULL;
    return st;
}

/* Step 6: every slot's staging buffers (and partial histograms), the
 * history and the carry. */
static gf_status alloc_buffers(gf_engine *e, char *detail, size_t n)
{
    const size_t part_bytes =
        e->hist_plan.max_segs * (size_t)e->hist_plan.nrec * e->hist_plan.part_bytes;
    for (int s = 0; s < e->nslots; s++) {
        gf_slot *sl = &e->slot[s];
        sl->in = e->ops->host_alloc(e->backend,
                                    (e->halo_samples + e->chunk * e->channels) * e->sample_bytes);
        sl->out = e->ops->host_alloc(e->backend, e->chunk * e->out_channels * e->sample_bytes);
        if (!sl->in || !sl->out) {
            gf_detail(detail, n, "cannot allocate %zu-frame staging buffers", e->chunk);
            return GF_ERR_NO_MEMORY;
        }
        if (e->hist && !(sl->hparts = e->ops->host_alloc(e->backend, part_bytes))) {
            gf_detail(detail, n, "cannot allocate %zu bytes of partial histograms", part_bytes);
            return GF_ERR_NO_MEMORY;
        }
    }
    e->history = e->ops->host_alloc(e->backend, e->halo_samples * e->sample_bytes);
    if (e->quantum > 1)
        e->carry = e->ops->host_alloc(e->backend, e->quantum * e->channels * e->sample_bytes);
    return e->history && (e->quantum == 1 || e->carry) ? GF_OK : GF_ERR_NO_MEMORY;
}

/* Step 7: set up the hand-off backend in the background, with the slot
 * buffers to register. */
static gf_status start_handoff(gf_engine *e, const gf_backend_params *p, char *detail, size_t n)
{
    void *bufs[3 * GF_MAX_SLOTS];
    size_t sizes[3 * GF_MAX_SLOTS];
    const size_t part_bytes =
        e->hist_plan.max_segs * (size_t)e->hist_plan.nrec * e->hist_plan.part_bytes;
    int k = 0;
    for (int s = 0; s < e->nslots; s++) {
        bufs[k] = e->slot[s].in;
        sizes[k++] = (e->halo_samples + e->chunk * e->channels) * e->sample_bytes;
        bufs[k] = e->slot[s].out;
        sizes[k++] = e->chunk * e->out_channels * e->sample_bytes;
        bufs[k] = e->slot[s].hparts; /* NULL without histograms: skipped */
        sizes[k++] = part_bytes;
    }
    const gf_status st = gf_handoff_start(&e->handoff, e->handoff_ops, p, bufs, sizes, k);
    if (st != GF_OK)
        gf_detail(detail, n, "cannot start the hand-off's set-up thread");
    return st;
}

/* Step 8: staging copies to and from page-locked slots, split over threads
 * where a backend asks for it (one thread does a fraction of PCIe's rate),
 * and so is the widening of histogram counts, as many bytes again at 4096
 * bins, which would otherwise hold up the submission of the next chunk. */
static void start_copies(gf_engine *e)
{
    if (e->ops->split_copies || (e->handoff_ops && e->handoff_ops->split_copies)) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        e->copies = gf_copy_pool_create(cpus < 8 ? (int)cpus : 8);
        if (e->hist)
            gf_hist_state_use_pool(e->hist, e->copies);
    }
}

gf_status gf_engine_create(const gf_config *config, gf_engine **out, char *detail,
                           size_t detail_size)
{
    gf_detail(detail, detail_size, "%s", "");
    if (!out)
        return GF_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!config) {
        gf_detail(detail, detail_size, "config is NULL");
        return GF_ERR_INVALID_ARGUMENT;
    }
    gf_status st = gf_config_check(config, detail, detail_size);
    if (st != GF_OK)
        return st;
    /* From here on the config holds every rule gf_config_check checks. */
    gf_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GF_ERR_NO_MEMORY;
    gf_backend_params p;
    if ((st = take_taps(e, config, detail, detail_size)) != GF_OK ||
        (st = pick_backend(e, config, detail, detail_size)) != GF_OK ||
        (st = pick_method(e, config, detail, detail_size)) != GF_OK ||
        (st = plan_chunks(e, config, detail, detail_size)) != GF_OK ||
        (st = start_backend(e, config, &p, detail, detail_size)) != GF_OK ||
        (st = alloc_buffers(e, detail, detail_size)) != GF_OK ||
        (e->handoff_ops && (st = start_handoff(e, &p, detail, detail_size)) != GF_OK)) {
        gf_engine_destroy(e);
        return st;
    }
    start_copies(e);
    gf_eng_reset_state(e);
    *out = e;
    return GF_OK;
}

void gf_engine_destroy(gf_engine *e)
{
    if (!e)
        return;
    if (e->backend) {
        for (int s = 0; s < e->nslots; s++)
            gf_eng_wait(e, s);          /* nothing may still read or write host buffers */
        gf_handoff_destroy(e->handoff); /* joins its thread, unregisters the buffers */
        gf_copy_pool_destroy(e->copies);
        if (e->handoff_backend)
            e->handoff_ops->destroy(e->handoff_backend);
        for (int s = 0; s < e->nslots; s++) {
            e->ops->host_free(e->backend, e->slot[s].in);
            e->ops->host_free(e->backend, e->slot[s].out);
            e->ops->host_free(e->backend, e->slot[s].hparts);
        }
        e->ops->host_free(e->backend, e->history);
        e->ops->host_free(e->backend, e->carry);
        e->ops->destroy(e->backend);
    }
    gf_hist_state_destroy(e->hist);
    free(e->taps_d);
    free(e->taps);
    free(e);
}

void gf_eng_reset_state(gf_engine *e)
{
    e->head = 0;
    e->nsub = 0;
    e->filling = 0;
    e->filled = 0;
    e->carried = 0;
    e->history_slot = -1;
    e->skip_left = e->latency;
    e->zeros_left = 0;
    e->flushed = 0;
    e->in_real = e->in_submitted = e->out_submitted = 0;
    memset(e->dev_chunks, 0, sizeof e->dev_chunks);
    memset(e->dev_frames, 0, sizeof e->dev_frames);
    if (e->hist)
        gf_hist_state_reset(e->hist);
    for (int s = 0; s < e->nslots; s++) {
        e->slot[s].frames = e->slot[s].out_frames = e->slot[s].out_pos = 0;
        e->slot[s].ready = 0;
        e->slot[s].zero_from = SIZE_MAX;
    }
}

gf_status gf_engine_reset(gf_engine *e)
{
    if (!e)
        return GF_ERR_INVALID_ARGUMENT;
    for (int s = 0; s < e->nslots; s++)
        gf_eng_wait(e, s);
    if (e->ops->reset)
        e->ops->reset(e->backend);
    if (e->handoff_backend && e->handoff_ops->reset)
        e->handoff_ops->reset(e->handoff_backend);
    gf_eng_reset_state(e);
    e->failed = GF_OK;
    e->err[0] = '\0';
    return GF_OK;
}
