#define _GNU_SOURCE /* MCL_ONFAULT, syscall(SYS_gettid) */
#include "live/rt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int gf_live_lock_memory(char *why, size_t n)
{
    struct rlimit rl;
    /* Without the privilege to exceed it, a finite limit would make later
     * allocations fail once reached (MCL_FUTURE): leave memory unlocked. */
    if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        snprintf(why, n, "the memlock limit is %llu KiB (ulimit -l unlimited, or limits.conf)",
                 (unsigned long long)rl.rlim_cur / 1024);
        return 0;
    }
    /* Only as pages are touched (MCL_ONFAULT): locking every mapping now
     * would populate the GPU driver's (or a sanitizer's) huge reserved
     * ranges. Without it (kernels before 4.4) memory stays unlocked. */
#ifdef MCL_ONFAULT
    if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0)
        return 1;
    snprintf(why, n, "mlockall: %s",
             errno == EINVAL ? "this kernel has no MCL_ONFAULT" : strerror(errno));
#else
    snprintf(why, n, "this C library has no MCL_ONFAULT");
#endif
    return 0;
}

int gf_live_tid(void)
{
    return (int)syscall(SYS_gettid);
}

int gf_live_thread_faults(int tid, unsigned long long *minor, unsigned long long *major)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    const int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    /* "tid (comm) state ppid ...": the name may hold spaces and parentheses;
     * the fields after its last ')' are 3 (state) onwards: minflt is field
     * 10, majflt 12 (proc(5)). */
    const char *p = got ? strrchr(line, ')') : NULL;
    unsigned long long field[9];
    if (!p ||
        sscanf(p + 1, " %*c %llu %llu %llu %llu %llu %llu %llu %llu %llu", &field[0], &field[1],
               &field[2], &field[3], &field[4], &field[5], &field[6], &field[7], &field[8]) != 9)
        return -1;
    *minor = field[6]; /* fields 4..12: ppid pgrp session tty tpgid flags minflt cminflt majflt */
    *major = field[8];
    return 0;
}
