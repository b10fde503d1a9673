/*
 * The tests' one check: CHECK(cond, fmt, ...) prints "FILE:LINE: " and the
 * message when cond is false, counts it in `failures` and goes on, so a
 * test reports every failure before it returns non-zero. One test program
 * includes it once.
 */
#ifndef GF_TEST_CHECK_H
#define GF_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                   \
            fputc('\n', stderr);                            \
            failures++;                                     \
        }                                                   \
    } while (0)

#endif /* GF_TEST_CHECK_H */
