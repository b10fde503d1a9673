/*
 * Test helper for the CLI tests, independent of gpufilt's own I/O code:
 *
 *   sftool gen FILE FORMAT CHANNELS RATE FRAMES PATTERN
 *       FORMAT: wav16 wav24 wav32 wavu8 wavf wavd aiff16 flac16 flac24 mp3
 *       PATTERN: noise (deterministic, full scale / 2), ramp (every 16-bit value
 *       once per channel, frames must be 65536), impulse:N (1/2 at frame N),
 *       nan:N (NaN at frame N, else 1/4: for float formats), value:X (every
 *       sample X, written as a double: for float formats)
 *   sftool cmp A B     exit 0 when both hold the same frames, channels and
 *                      sample values (integers for PCM, bits for float), else 1
 *   sftool dump FILE   one line per frame: samples as %.17g (exact doubles)
 *   sftool frames FILE print the frame count
 *   sftool format FILE print "MAJOR / SUBTYPE" as libsndfile names them
 *   sftool genmeta FILE
 *       a 6-channel 16-bit WAVE_FORMAT_EXTENSIBLE file (1000 frames of noise)
 *       with a 5.1 side layout, every string WAV keeps, a bext chunk, two
 *       cue points and instrument data
 *   sftool meta FILE   what the file says besides its samples, one item a line
 *   sftool version     libsndfile's version string ("libsndfile-1.2.0")
 */
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int format_of(const char *name)
{
    static const struct {
        const char *name;
        int format;
    } t[] = {
        {"wav16", SF_FORMAT_WAV | SF_FORMAT_PCM_16},
        {"wav24", SF_FORMAT_WAV | SF_FORMAT_PCM_24},
        {"wav32", SF_FORMAT_WAV | SF_FORMAT_PCM_32},
        {"wavu8", SF_FORMAT_WAV | SF_FORMAT_PCM_U8},
        {"wavf", SF_FORMAT_WAV | SF_FORMAT_FLOAT},
        {"wavd", SF_FORMAT_WAV | SF_FORMAT_DOUBLE},
        {"aiff16", SF_FORMAT_AIFF | SF_FORMAT_PCM_16},
        {"flac16", SF_FORMAT_FLAC | SF_FORMAT_PCM_16},
        {"flac24", SF_FORMAT_FLAC | SF_FORMAT_PCM_24},
        {"mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(name, t[i].name) == 0)
            return t[i].format;
    return 0;
}

static int gen(int argc, char **argv)
{
    if (argc != 8)
        return 2;
    SF_INFO info = {
        .format = format_of(argv[3]), .channels = atoi(argv[4]), .samplerate = atoi(argv[5])};
    const long frames = atol(argv[6]);
    const char *pattern = argv[7];
    if (!info.format || info.channels < 1 || frames < 0) {
        fprintf(stderr, "sftool: bad gen arguments\n");
        return 2;
    }
    SNDFILE *f = sf_open(argv[2], SFM_WRITE, &info);
    if (!f) {
        fprintf(stderr, "sftool: %s\n", sf_strerror(NULL));
        return 1;
    }
    const int C = info.channels;
    int32_t *buf = malloc((size_t)C * sizeof *buf);
    uint64_t state = 0x9e3779b97f4a7c15u;
    long impulse = -1;
    if (strncmp(pattern, "impulse:", 8) == 0)
        impulse = atol(pattern + 8);
    const int nan = strncmp(pattern, "nan:", 4) == 0, value = strncmp(pattern, "value:", 6) == 0;
    if (nan || value) {
        const long at = nan ? atol(pattern + 4) : -1;
        const double v = value ? strtod(pattern + 6, NULL) : 0.25;
        double *row = malloc((size_t)C * sizeof *row);
        for (long i = 0; i < frames; i++) {
            for (int c = 0; c < C; c++)
                row[c] = i == at ? NAN : v;
            if (sf_writef_double(f, row, 1) != 1)
                return fprintf(stderr, "sftool: write failed: %s\n", sf_strerror(f)), 1;
        }
        free(row);
        free(buf);
        return sf_close(f) == 0 ? 0 : 1;
    }
    for (long i = 0; i < frames; i++) {
        for (int c = 0; c < C; c++) {
            int32_t v;
            if (strcmp(pattern, "ramp") == 0) {
                v = (int32_t)((((i + 4099L * c) & 0xffff) - 32768) * 65536L);
            } else if (impulse >= 0) {
                v = i == impulse ? 0x40000000 : 0;
            } else {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                v = (int32_t)(state >> 32) / 2;
            }
            buf[c] = v;
        }
        if (sf_writef_int(f, buf, 1) != 1) {
            fprintf(stderr, "sftool: write failed: %s\n", sf_strerror(f));
            return 1;
        }
    }
    free(buf);
    return sf_close(f) == 0 ? 0 : 1;
}

static SNDFILE *open_read(const char *path, SF_INFO *info)
{
    memset(info, 0, sizeof *info);
    SNDFILE *f = sf_open(path, SFM_READ, info);
    if (!f)
        fprintf(stderr, "sftool: %s: %s\n", path, sf_strerror(NULL));
    return f;
}

static int is_float(const SF_INFO *i)
{
    const int s = i->format & SF_FORMAT_SUBMASK;
    return s == SF_FORMAT_FLOAT || s == SF_FORMAT_DOUBLE;
}

static int cmp(const char *a, const char *b)
{
    SF_INFO ia, ib;
    SNDFILE *fa = open_read(a, &ia), *fb = open_read(b, &ib);
    if (!fa || !fb)
        return 2;
    if (ia.frames != ib.frames || ia.channels != ib.channels || ia.samplerate != ib.samplerate) {
        fprintf(stderr, "sftool: %s: %lld frames x %d ch @ %d, %s: %lld frames x %d ch @ %d\n", a,
                (long long)ia.frames, ia.channels, ia.samplerate, b, (long long)ib.frames,
                ib.channels, ib.samplerate);
        return 1;
    }
    const int C = ia.channels;
    const int floats = is_float(&ia) || is_float(&ib);
    double da[1024], db[1024];
    int32_t xa[1024], xb[1024];
    const sf_count_t step = 1024 / C;
    for (sf_count_t i = 0; i < ia.frames; i += step) {
        sf_count_t na, nb;
        size_t bytes;
        const void *pa, *pb;
        if (floats) {
            na = sf_readf_double(fa, da, step);
            nb = sf_readf_double(fb, db, step);
            pa = da, pb = db, bytes = (size_t)na * C * sizeof(double);
        } else {
            na = sf_readf_int(fa, xa, step);
            nb = sf_readf_int(fb, xb, step);
            pa = xa, pb = xb, bytes = (size_t)na * C * sizeof(int32_t);
        }
        if (na != nb || memcmp(pa, pb, bytes) != 0) {
            fprintf(stderr, "sftool: %s and %s differ in frames %lld..%lld\n", a, b, (long long)i,
                    (long long)(i + step - 1));
            return 1;
        }
    }
    sf_close(fa);
    sf_close(fb);
    return 0;
}

static int dump(const char *path)
{
    SF_INFO info;
    SNDFILE *f = open_read(path, &info);
    if (!f)
        return 2;
    double *frame = malloc((size_t)info.channels * sizeof *frame);
    while (sf_readf_double(f, frame, 1) == 1)
        for (int c = 0; c < info.channels; c++)
            printf("%.17g%c", frame[c], c + 1 == info.channels ? '\n' : ' ');
    free(frame);
    sf_close(f);
    return 0;
}

static const char *const string_names[] = {
    "title", "copyright", "software", "artist", "comment", "date", "album", "license",
    "track", NULL,        NULL,       NULL,     NULL,      NULL,   NULL,    "genre"};

static int genmeta(const char *path)
{
    SF_INFO info = {
        .format = SF_FORMAT_WAVEX | SF_FORMAT_PCM_16, .channels = 6, .samplerate = 48000};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        return fprintf(stderr, "sftool: %s\n", sf_strerror(NULL)), 1;
    int map[6] = {SF_CHANNEL_MAP_LEFT, SF_CHANNEL_MAP_RIGHT,     SF_CHANNEL_MAP_CENTER,
                  SF_CHANNEL_MAP_LFE,  SF_CHANNEL_MAP_SIDE_LEFT, SF_CHANNEL_MAP_SIDE_RIGHT};
    sf_command(f, SFC_SET_CHANNEL_MAP_INFO, map, sizeof map);
    static const int strings[] = {SF_STR_TITLE,  SF_STR_COPYRIGHT,   SF_STR_SOFTWARE,
                                  SF_STR_ARTIST, SF_STR_COMMENT,     SF_STR_DATE,
                                  SF_STR_ALBUM,  SF_STR_TRACKNUMBER, SF_STR_GENRE};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "the %s", string_names[strings[i] - SF_STR_FIRST]);
        sf_set_string(f, strings[i], v);
    }
    SF_BROADCAST_INFO b;
    memset(&b, 0, sizeof b);
    snprintf(b.description, sizeof b.description, "a test recording");
    snprintf(b.originator, sizeof b.originator, "sftool");
    b.time_reference_low = 48000u * 3600u;
    sf_command(f, SFC_SET_BROADCAST_INFO, &b, sizeof b);
    SF_CUES c;
    memset(&c, 0, sizeof c);
    c.cue_count = 2;
    for (uint32_t i = 0; i < 2; i++) {
        c.cue_points[i].indx = (int32_t)i + 1;
        c.cue_points[i].position = c.cue_points[i].sample_offset = 100 + 400 * i;
        c.cue_points[i].fcc_chunk = 0x61746164; /* "data" */
    }
    sf_command(f, SFC_SET_CUE, &c, sizeof c);
    SF_INSTRUMENT inst;
    memset(&inst, 0, sizeof inst);
    inst.basenote = 60;
    inst.velocity_hi = inst.key_hi = 127;
    inst.loop_count = 1;
    inst.loops[0].mode = SF_LOOP_FORWARD;
    inst.loops[0].start = 200;
    inst.loops[0].end = 800;
    sf_command(f, SFC_SET_INSTRUMENT, &inst, sizeof inst);
    short frame[6];
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 1000; i++) {
        for (int k = 0; k < 6; k++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            frame[k] = (short)(state >> 49);
        }
        sf_writef_short(f, frame, 1);
    }
    return sf_close(f) == 0 ? 0 : 1;
}

static int meta(const char *path)
{
    SF_INFO info;
    SNDFILE *f = open_read(path, &info);
    if (!f)
        return 2;
    int map[1024];
    if (info.channels <= 1024 &&
        sf_command(f, SFC_GET_CHANNEL_MAP_INFO, map, info.channels * (int)sizeof(int))) {
        printf("layout:");
        for (int c = 0; c < info.channels; c++)
            printf(" %d", map[c]);
        printf("\n");
    }
    for (int s = SF_STR_FIRST; s <= SF_STR_LAST; s++) {
        const char *v = string_names[s - SF_STR_FIRST] ? sf_get_string(f, s) : NULL;
        if (v)
            printf("%s: %s\n", string_names[s - SF_STR_FIRST], v);
    }
    SF_BROADCAST_INFO b;
    if (sf_command(f, SFC_GET_BROADCAST_INFO, &b, sizeof b))
        printf("bext: %.256s, %.32s, time reference %u\n", b.description, b.originator,
               b.time_reference_low);
    uint32_t cues = 0;
    SF_CUES c;
    if (sf_command(f, SFC_GET_CUE_COUNT, &cues, sizeof cues) && cues > 0 && cues <= 100 &&
        sf_command(f, SFC_GET_CUE, &c, sizeof c))
        for (uint32_t i = 0; i < c.cue_count; i++)
            printf("cue %d at %u\n", c.cue_points[i].indx, c.cue_points[i].sample_offset);
    SF_INSTRUMENT inst;
    if (sf_command(f, SFC_GET_INSTRUMENT, &inst, sizeof inst))
        printf("instrument: note %d, %d loop(s), first %u..%u\n", inst.basenote, inst.loop_count,
               inst.loops[0].start, inst.loops[0].end);
    sf_close(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "genmeta") == 0)
        return genmeta(argv[2]);
    if (argc == 3 && strcmp(argv[1], "meta") == 0)
        return meta(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "gen") == 0)
        return gen(argc, argv);
    if (argc == 4 && strcmp(argv[1], "cmp") == 0)
        return cmp(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "dump") == 0)
        return dump(argv[2]);
    if (argc == 3 && strcmp(argv[1], "frames") == 0) {
        SF_INFO info;
        SNDFILE *f = open_read(argv[2], &info);
        if (!f)
            return 2;
        printf("%lld\n", (long long)info.frames);
        sf_close(f);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "format") == 0) {
        SF_INFO info;
        SNDFILE *f = open_read(argv[2], &info);
        if (!f)
            return 2;
        SF_FORMAT_INFO major = {.format = info.format & SF_FORMAT_TYPEMASK};
        SF_FORMAT_INFO sub = {.format = info.format & SF_FORMAT_SUBMASK};
        sf_command(NULL, SFC_GET_FORMAT_INFO, &major, sizeof major);
        sf_command(NULL, SFC_GET_FORMAT_INFO, &sub, sizeof sub);
        printf("%s / %s\n", major.name, sub.name);
        sf_close(f);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        puts(sf_version_string());
        return 0;
    }
    fprintf(stderr, "usage: sftool gen|cmp|dump|frames|format|genmeta|meta|version ...\n");
    return 2;
}
