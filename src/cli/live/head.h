/*
 * --latency zero: the head of the filter, computed in the audio callback.
 *
 * The taps h[0..H) filter each callback's own input in the same callback,
 * by the direct method's arithmetic (gpufilt.h: acc = h[0] x[i], then
 * acc = acc + h[k] x[i-k], each operation rounded on its own, in the
 * engine's precision), so an output frame needs no input later than its
 * own; the tail h[H..T) is the worker's engine, whose output is delayed by
 * H frames in the output ring (portaudio_io.c). Real-time safe: gf_live_head_run
 * allocates nothing, takes no lock and makes no system call.
 */
#ifndef GF_LIVE_HEAD_H
#define GF_LIVE_HEAD_H

#include "cli.h"
#include "live/ring.h"

#include <stdatomic.h>

typedef struct gf_live_head {
    int channels, filters, f64;
    size_t taps;       /* H */
    size_t max_frames; /* the most frames one callback may bring */
    void *h;           /* filters x taps, the engine's precision */
    void *x;           /* channels x (taps - 1 + max_frames): the history, then the block */
    void *y;           /* max_frames x channels, interleaved: the last run's output */
    void *acc;         /* max_frames: one channel's sums */
    /* During a change of filter: the incoming head (filters2 x taps), run on
     * the same history into y2; NULL otherwise. */
    void *h2;
    int filters2;
    void *y2;
} gf_live_head;

/* The first H (<= t->n) taps of t (the mean filter's 1/T where t->h is
 * NULL) for `channels` channels in precision p. 0, or -1 out of memory. */
int gf_live_head_init(gf_live_head *hd, const gf_taps *t, size_t H, int channels, gf_precision p,
                      size_t max_frames);

/* The taps [0, H) of t, zeros past t->n, as hd keeps them (*filters x H in
 * its precision, malloc'ed) for a head to change to. 0, or -1 out of
 * memory. */
int gf_live_head_taps(const gf_live_head *hd, const gf_taps *t, void **h, int *filters);

/* The head's output for the next F (<= max_frames) frames of input (in,
 * interleaved float) into hd->y (and, with h2, the incoming head's into
 * y2), interleaved in the engine's precision. */
void gf_live_head_run(gf_live_head *hd, const float *in, size_t F);

void gf_live_head_free(gf_live_head *hd);

/*
 * The callback's side of --latency zero: each period plays head + tail,
 * the tail read from `tail`, the worker's output ring, whose frames stand
 * H frames behind (primed with H frames of silence). Every frame played is
 * right or silent:
 *   - a tail frame not in the ring yet makes its frame silent, and is
 *     skipped when it comes (skip), so the frames after it line up again;
 *   - input the worker missed (gf_live_zero_dropped) leaves the ring that
 *     many frames short (hole: played silent without reading) and the
 *     tail wrong while it may depend on them: `mute` frames silent.
 */
enum { GF_HEAD_IDLE = 0, GF_HEAD_CHOSEN, GF_HEAD_DONE };

typedef struct gf_live_zero {
    gf_live_head *head;
    gf_ring *tail;     /* frames of the engine's precision; NULL with no tail */
    void *tail_buf;    /* head->max_frames frames */
    size_t tail_taps;  /* T - H */
    size_t skip, hole; /* ring frames owed; output frames the ring will never hold */
    unsigned long long mute;
    /*
     * A change of filter (control.c), the callback choosing when: next_h
     * and next_filters (the new head, gf_live_head_taps), fade and warm
     * (the new tail's frames of warm-up) are set before the switch is
     * posted (*switch_state, GF_SWITCH_POSTED). The callback, seeing it,
     * picks fade_at, the output frame where the crossfade starts: past all
     * input the worker may have had, plus warm, plus H (the tail's delay);
     * it runs both heads from then on and sets head_state GF_HEAD_CHOSEN
     * (release). The worker fades its tail from fade_at - H with the same
     * weights (worker.c), so each output is old * (1 - w) + new * w, head
     * and tail alike. After the fade the callback plays the new head
     * alone, leaves the old taps in old_h and sets GF_HEAD_DONE; the
     * control thread frees them and sets GF_HEAD_IDLE.
     */
    const atomic_int *switch_state; /* gf_live_switch's state, or NULL */
    int switch_posted;              /* its value for a posted switch */
    void *next_h;
    int next_filters;
    size_t fade, warm;
    unsigned long long fade_at;
    atomic_int head_state;
    void *old_h;
    unsigned long long played; /* the callback's: output frames */
} gf_live_zero;

/* One period of F frames: in (interleaved float) filtered into out
 * (interleaved float). Returns the frames it played silent. Real-time safe. */
size_t gf_live_zero_play(gf_live_zero *z, const float *in, float *out, size_t F);

/* The worker missed n frames of input (its ring was full). */
void gf_live_zero_dropped(gf_live_zero *z, size_t n);

/* The host's input of the period about to play (F frames) is suspect (an
 * xrun: a period skipped or repeated), though the worker gets it too: it
 * and the filter's length after it play silent. */
void gf_live_zero_suspect(gf_live_zero *z, size_t F);

/* t as n taps per filter, zeros past its end (the mean filter's 1/T
 * written out); unchanged when it has n or more. 0, or -1 out of memory. */
int gf_live_pad_taps(gf_taps *t, size_t n);

/* The crossfade of a change of filter over `frames` interleaved frames of
 * `channels` (f64: doubles, else floats), the first at frame `first` of
 * its count: before fade_from `old` as it is, from p = frame - fade_from
 * = fade on `incoming`, between them old * (1 - w) + incoming * w with
 * w = (p + 1) / (fade + 1), in double, rounded once to the precision (the
 * weights sum to 1: equal gain). Into old. The worker fades the tail with
 * it, the callback the head (--latency zero). */
void gf_live_crossfade(void *old, const void *incoming, size_t frames, int channels, int f64,
                       unsigned long long first, unsigned long long fade_from, size_t fade);

/* The taps t->h[H..T) (filter by filter) as taps of their own, T - H per
 * filter, for the worker's engine: 0, or -1 out of memory. */
int gf_live_tail_taps(const gf_taps *t, size_t H, gf_taps *tail);

#endif /* GF_LIVE_HEAD_H */
