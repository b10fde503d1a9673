/* bench_gpu: the command line. */
#include "bench_gpu.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_gpu [--quick] [--hist-only] [--reps N] [--pipe-reps N] [--pipe-mib N]\n"
            "                 [--device N]\n"
            "                 [--json PATH] [--csv PATH]\n"
            "  --quick       small sizes and few repetitions (a smoke run, not a measurement)\n"
            "  --hist-only   only section h (histograms)\n"
            "  --reps N      timed repetitions of each GPU measurement (default 20; quick 5)\n"
            "  --pipe-reps N timed runs of each pipeline configuration (default 5; quick 2)\n"
            "  --pipe-mib N  MiB of f32 samples through the pipeline (default 1024; quick 64)\n"
            "  --device N    CUDA device ordinal (default 0)\n"
            "  --json PATH   also write the table (and device, targets) as JSON\n"
            "  --csv PATH    also write the table as CSV\n"
            "Exit status: 0 ok (also when a target is missed), 1 wrong results,\n"
            "2 CUDA or library error, 77 no CUDA device.\n");
}

static long long parse_num(const char *opt, const char *s, long long lo, long long hi)
{
    char *end = NULL;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || *s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "bench_gpu: %s needs an integer in %lld..%lld\n", opt, lo, hi);
        exit(EXIT_ERROR);
    }
    return v;
}

options parse_options(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int reps = -1, pipe_reps = -1;
    long long pipe_mib = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* The value of an option that takes one. */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--reps"))
            reps = (int)parse_num(a, v, 1, 100000);
        else if (!strcmp(a, "--pipe-reps"))
            pipe_reps = (int)parse_num(a, v, 1, 1000);
        else if (!strcmp(a, "--pipe-mib"))
            pipe_mib = parse_num(a, v, 1, 16384);
        else if (!strcmp(a, "--device"))
            o.device = (int)parse_num(a, v, 0, 1023);
        else if (!strcmp(a, "--json") || !strcmp(a, "--csv")) {
            if (!v) {
                fprintf(stderr, "bench_gpu: %s needs a path\n", a);
                exit(EXIT_ERROR);
            }
            *(a[2] == 'j' ? &o.json : &o.csv) = v;
        } else {
            takes = 0;
            if (!strcmp(a, "--quick"))
                o.quick = 1;
            else if (!strcmp(a, "--hist-only"))
                o.hist_only = 1;
            else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                usage(stdout);
                exit(0);
            } else {
                fprintf(stderr, "bench_gpu: unknown argument '%s'\n", a);
                usage(stderr);
                exit(EXIT_ERROR);
            }
        }
        i += takes;
    }
    const size_t MiB = (size_t)1 << 20;
    o.n = o.quick ? 1000000 : 10000000;
    o.pcie_bytes = o.quick ? 64 * MiB : 1024 * MiB;
    o.d2d_big_bytes = o.quick ? 256 * MiB : 1024 * MiB;
    o.pipe_bytes = (size_t)(pipe_mib > 0 ? pipe_mib : o.quick ? 64 : 1024) * MiB;
    o.reps = reps > 0 ? reps : o.quick ? 5 : 20;
    o.pipe_reps = pipe_reps > 0 ? pipe_reps : o.quick ? 2 : 5;
    return o;
}
