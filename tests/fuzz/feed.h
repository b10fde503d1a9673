/*
 * For the reader harnesses: the fuzz input as a file (a memfd) or as a
 * pipe fed by a thread in pieces chosen by a seed, with a yield between
 * pieces so that reads meet the input split anywhere: 1..64 bytes over the
 * first SMALL_SPAN bytes (headers, the first frames), 1..2048 after.
 */
#ifndef GF_FUZZ_FEED_H
#define GF_FUZZ_FEED_H

#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SMALL_SPAN = 512 };

typedef struct feed {
    int fd;  /* the reading end (pipe) or the memfd */
    int wfd; /* the pipe's writing end while the thread owns it, else -1 */
    pthread_t thread;
    int threaded;
    const uint8_t *data;
    size_t size;
    uint32_t seed;
    char path[64]; /* /proc/self/fd/N of fd */
} feed;

static void *feed_main(void *arg)
{
    feed *f = arg;
    uint32_t x = f->seed | 1;
    for (size_t at = 0; at < f->size;) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        size_t len = 1 + x % (at < SMALL_SPAN ? 64 : 2048);
        if (len > f->size - at)
            len = f->size - at;
        const ssize_t w = write(f->wfd, f->data + at, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* the reader is gone */
        at += (size_t)w;
        sched_yield();
    }
    close(f->wfd);
    return NULL;
}

/* 0, or -1 when the system refuses (then nothing is open). */
static int feed_start(feed *f, const uint8_t *data, size_t size, int as_pipe, uint32_t seed)
{
    signal(SIGPIPE, SIG_IGN);
    f->data = data;
    f->size = size;
    f->seed = seed;
    f->threaded = 0;
    f->wfd = -1;
    if (as_pipe) {
        int p[2];
        if (pipe(p) != 0)
            return -1;
        f->fd = p[0];
        f->wfd = p[1];
        if (pthread_create(&f->thread, NULL, feed_main, f) != 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
        f->threaded = 1;
    } else {
        f->fd = memfd_create("fuzz", MFD_CLOEXEC);
        if (f->fd < 0)
            return -1;
        if (size && write(f->fd, data, size) != (ssize_t)size) {
            close(f->fd);
            return -1;
        }
        lseek(f->fd, 0, SEEK_SET);
    }
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return 0;
}

/* Close the reading end (a writer still going gets EPIPE) and join. */
static void feed_stop(feed *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->threaded)
        pthread_join(f->thread, NULL);
    f->threaded = 0;
}

#endif /* GF_FUZZ_FEED_H */
