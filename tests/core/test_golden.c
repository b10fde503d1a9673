/*
 * Golden vectors: every case in tests/golden (computed with numpy in the
 * contract's order and cross-checked against scipy by gen_golden.py) through
 * the ref and cpu backends, bit for bit, with several chunk sizes and call
 * patterns.
 *
 * Usage: test_golden GOLDEN_DIR
 */
#include "test_util.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 1;
    }
    tu_golden *cases = NULL;
    const size_t n = tu_golden_load(argv[1], &cases);
    if (n == 0)
        return 1;

    /* The set must cover what gen_golden.py promises; a truncated manifest
     * would otherwise pass quietly. */
    int bad = 0, seen_taps[256] = {0}, seen_ch[9] = {0}, seen_mode[2] = {0}, seen_prec[2] = {0};
    int seen_kind[2] = {0};
    for (size_t i = 0; i < n; i++) {
        if (cases[i].num_taps < 256)
            seen_taps[cases[i].num_taps] = 1;
        if (cases[i].channels <= 8)
            seen_ch[cases[i].channels] = 1;
        seen_mode[cases[i].mode] = seen_prec[cases[i].precision] = seen_kind[cases[i].mean] = 1;
    }
    bad += TU_CHECK(n >= 40, "only %zu golden cases", n);
    bad += TU_CHECK(seen_taps[1] && seen_taps[2] && seen_taps[5] && seen_taps[25] && seen_taps[255],
                    "golden cases miss one of T = 1, 2, 5, 25, 255");
    for (int c = 1; c <= 8; c++)
        bad += TU_CHECK(seen_ch[c], "no golden case with %d channels", c);
    bad += TU_CHECK(seen_mode[0] && seen_mode[1] && seen_prec[0] && seen_prec[1] && seen_kind[0] &&
                        seen_kind[1],
                    "golden cases miss a mode, precision or tap kind");

    const gf_device devs[] = {GF_DEVICE_REF, GF_DEVICE_CPU};
    size_t runs = 0;
    for (size_t d = 0; d < 2 && !bad; d++) {
        size_t r = 0;
        bad += tu_golden_check_all(cases, n, devs[d], &r);
        printf("%s: %zu golden cases, %zu runs compared bit for bit\n", tu_device_name(devs[d]), n,
               r);
        runs += r;
    }
    tu_golden_free(cases, n);
    if (bad) {
        fprintf(stderr, "test_golden: FAILED\n");
        return 1;
    }
    printf("test_golden: %zu cases, %zu runs, all bit-exact\n", n, runs);
    return 0;
}
