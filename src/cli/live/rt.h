/*
 * What live audio does so that its threads are not held up by the memory
 * system: the process's memory locked (no page of the callback's or the
 * worker's buffers swapped out), and each thread's page faults counted
 * from the outside (/proc), so that --stats can show there are none once
 * the stream runs, without a system call on the audio thread.
 */
#ifndef GF_LIVE_RT_H
#define GF_LIVE_RT_H

#include <stddef.h>

/* Lock the process's memory, now and later, as pages are first touched
 * (mlockall with MCL_ONFAULT: the GPU driver's large reserved mappings
 * cost nothing). Returns 1, or 0 with the reason in why (a finite memlock
 * limit, no MCL_ONFAULT, or mlockall's error). */
int gf_live_lock_memory(char *why, size_t n);

/* The calling thread's id, for gf_live_thread_faults (one system call). */
int gf_live_tid(void);

/* Thread tid's page faults so far (this process's): minor and major.
 * Returns 0, or -1 where the thread is gone or /proc cannot say. */
int gf_live_thread_faults(int tid, unsigned long long *minor, unsigned long long *major);

#endif /* GF_LIVE_RT_H */
