/*
 * bench_sfcopy: the plain libsndfile copy, the baseline the gpufilt CLI is
 * measured against. Opens IN, creates OUT with the same SF_INFO (format,
 * rate, channels) and copies every frame in 64K-frame blocks, as float
 * (sf_readf_float / sf_writef_float) or, with --int, as int
 * (sf_readf_int / sf_writef_int). Every count is checked; nothing else is
 * done to the samples.
 *
 * Note: libsndfile's normalised float path is not bit-transparent for
 * integer PCM (it reads 16-bit samples as s / 32768 and writes f * 32767,
 * libsndfile FAQ Q10), so the default float copy changes about half the
 * samples of a loud 16-bit file by one step; --no-norm turns normalisation
 * off on both files and makes the float copy exact. The cost is the same.
 *
 * usage: bench_sfcopy [--int | --no-norm] IN OUT
 * Exit status: 0 copied, 1 an I/O error, 2 bad usage.
 */
#include <sndfile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_FRAMES 65536

static int fail(const char *what, const char *path, SNDFILE *f)
{
    fprintf(stderr, "bench_sfcopy: %s %s: %s\n", what, path, sf_strerror(f));
    return 1;
}

int main(int argc, char **argv)
{
    int as_int = 0, no_norm = 0;
    const char *paths[2];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--int"))
            as_int = 1;
        else if (!strcmp(argv[i], "--no-norm"))
            no_norm = 1;
        else if (np < 2 && (argv[i][0] != '-' || argv[i][1] == '\0'))
            paths[np++] = argv[i];
        else {
            np = -1;
            break;
        }
    }
    if (np != 2) {
        fprintf(stderr, "usage: bench_sfcopy [--int | --no-norm] IN OUT\n");
        return 2;
    }

    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *in = sf_open(paths[0], SFM_READ, &info);
    if (!in)
        return fail("cannot open", paths[0], NULL);
    SF_INFO oinfo = info;
    SNDFILE *out = sf_open(paths[1], SFM_WRITE, &oinfo);
    if (!out) {
        fail("cannot create", paths[1], NULL);
        sf_close(in);
        return 1;
    }

    if (no_norm) {
        sf_command(in, SFC_SET_NORM_FLOAT, NULL, SF_FALSE);
        sf_command(out, SFC_SET_NORM_FLOAT, NULL, SF_FALSE);
    }

    const size_t samples = (size_t)BLOCK_FRAMES * (size_t)info.channels;
    void *buf = malloc(samples * (as_int ? sizeof(int) : sizeof(float)));
    if (!buf) {
        fprintf(stderr, "bench_sfcopy: out of memory\n");
        sf_close(in);
        sf_close(out);
        return 1;
    }

    int rc = 0;
    sf_count_t total = 0;
    for (;;) {
        const sf_count_t n = as_int ? sf_readf_int(in, (int *)buf, BLOCK_FRAMES)
                                    : sf_readf_float(in, (float *)buf, BLOCK_FRAMES);
        if (n < 0 || (n == 0 && sf_error(in) != SF_ERR_NO_ERROR)) {
            rc = fail("error reading", paths[0], in);
            break;
        }
        if (n == 0)
            break;
        const sf_count_t w = as_int ? sf_writef_int(out, (const int *)buf, n)
                                    : sf_writef_float(out, (const float *)buf, n);
        if (w != n) {
            rc = fail("error writing", paths[1], out);
            break;
        }
        total += n;
    }
    /* A file that states its length must have given all of it. */
    if (rc == 0 && info.seekable && total != info.frames) {
        fprintf(stderr, "bench_sfcopy: %s: read %lld of %lld frames\n", paths[0], (long long)total,
                (long long)info.frames);
        rc = 1;
    }
    free(buf);
    if (sf_close(in) != 0 && rc == 0)
        rc = fail("error closing", paths[0], NULL);
    if (sf_close(out) != 0 && rc == 0)
        rc = fail("error closing", paths[1], NULL);
    return rc;
}
